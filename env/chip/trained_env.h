// The chip environment a checkpoint's policy was trained in, from what the checkpoint carries
// (the training run's config text and its policy's action feature names), and its
// reconciliation with what the user asks for: `place --checkpoint` (experiments/lib/torch/
// trained_chip_env.h reads the checkpoint) and the Python module's Policy.make_env. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "datasets/proto/chip_placement.pb.h"

namespace placerl {

// The chip environment a checkpoint's policy was trained in, for `place`: the ChipEnvConfig of
// the training run's config that the checkpoint carries (agents/checkpoint_extras.h
// kRunConfigExtra) with the design fields (netlist, plc, synthetic_seed) taken from `base`, and
// whether the per-cell maps were on. A checkpoint without it (written before it existed, e.g.
// experiments/pretrained/chip) gets `base` — the defaults such runs were made with — and the
// cost map its policy's action features name. Throws ConfigError naming the file (not a chip
// policy's checkpoint, unreadable, damaged).
struct TrainedChipEnv {
  config::ChipEnvConfig chip;
  bool maps = true;
  bool recorded = false;  // from the checkpoint's config (false: base + the layout's cost map)
  // The training designs: netlist and .plc ("" = none: the default grid), absolute paths.
  std::vector<std::pair<std::string, std::string>> designs;
};
// From what the checkpoint holds: the training run's config text (its kRunConfigExtra extra;
// nullptr when it has none) and its policy's action feature names. Reading those two needs
// LibTorch: experiments/lib/torch/trained_chip_env.h ReadTrainedChipEnv (the binaries) and
// placerl._policy (Python) read them and call this.
TrainedChipEnv TrainedChipEnvOf(const std::string& checkpoint, const std::string* run_config,
                                const std::vector<std::string>& action_feature_names,
                                const config::ChipEnvConfig& base);
// `used` is what `place` resolved over trained.chip (the user's --config, flags, --set): its cost
// map becomes the trained one (part of the policy's inputs; a warning when another was asked
// for), every other setting that differs from the training run's is a warning, and so is a
// netlist the policy was trained on placed with another .plc (canvas and grid) than in training
// (env/trained_settings.h kTrainedSettingChanged; none for a checkpoint without its config).
// Returns the differences for result.json.
nlohmann::json ReconcileTrainedChipEnv(const TrainedChipEnv& trained, const std::string& checkpoint,
                                       config::ChipEnvConfig* used);

}  // namespace placerl
