// The `place-train` program on chips (docs/learning.md), called by experiments/torch/
// place_train_main.cc once its flags are parsed: the resolved config of a new or resumed run,
// the designs' environments, the policy and learner, the chip task on the one trainer
// (agents/chip_training.h TrainChip) with checkpoints that carry the run's progress
// (training_state.h), the best placements gathered over the ranks, result.json and the summary
// line; with --workers N the ranks re-executed from this binary (c10d Gloo, agents/workers.h)
// or started by the user (MASTER_ADDR etc.). `place-train --env device` is device_programs.h.
// Torch-free header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/proto/chip_placement.pb.h"
#include "experiments/lib/run_dir.h"

namespace placerl::place_train {

// The flags (0 / -1 / "" = not given: the config's value).
struct Options {
  std::vector<std::string> netlists, plcs;
  double minutes = 0, checkpoint_minutes = 0;
  int64_t seed = -1;
  std::string algorithm, clock;
  int workers = 1;
  int64_t max_updates = 0;
  double worker_timeout = 120;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
  // Hidden: a rank started by the launcher, and failure injection for tests.
  int rank = -1, world = 0;
  std::string rendezvous;
  int test_fail_rank = -1, test_hang_rank = -1;
  int test_kill_after_checkpoints = 0;
  // The process's command line: recorded in the run directory; the launcher re-executes it once
  // per rank with the hidden rank arguments added.
  int argc = 0;
  char** argv = nullptr;
};

// place-train's defaults (what --help-config prints; the chip protocol's learner settings).
config::PlaceTrainConfig DefaultConfig();

// Runs what the flags ask for: one process, the launcher of --workers N, or one rank. Returns
// the exit code (2: a design without a complete placement); throws ConfigError / IoError / Error
// for bad input and failures (RunMain prints them).
int Run(const Options& o);

}  // namespace placerl::place_train
