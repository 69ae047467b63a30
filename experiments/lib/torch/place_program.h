// The `place` program on chips (docs/chip_zero_shot.md), called by experiments/torch/place_main.cc once
// its flags are parsed: the config (the checkpoint's training environment under what the user
// asks, training_state.h / trained_chip_env.h), the policy and the input placement, then the
// stages — zero-shot (greedy + K samples), optional PPO fine-tuning (agents/chip_training.h
// TrainChip), optional refinement by SA or CD (search/chip/baselines.h) —, best.plc, pictures,
// result.json and the summary lines. `place --env device` is device_programs.h. Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/proto/chip_placement.pb.h"
#include "experiments/lib/run_dir.h"

namespace placerl::place {

// The flags (-1 / 0 / "" = not given: the config's value).
struct Options {
  std::string checkpoint, netlist, plc, refine, clock;
  int samples = -1;
  double finetune_minutes = -1, refine_minutes = 0;
  int64_t seed = -1;
  bool json = false, verbose = false, keep_better = false;
  run::RunDirFlags dir;
  // The process's command line, recorded in the run directory.
  int argc = 0;
  char** argv = nullptr;
};

// place's defaults (what --help-config prints).
config::PlaceConfig DefaultConfig();

// Runs what the flags ask for. Returns the exit code (2: no complete placement); throws
// ConfigError / IoError / Error for bad input and failures (RunMain prints them).
int Run(const Options& o);

}  // namespace placerl::place
