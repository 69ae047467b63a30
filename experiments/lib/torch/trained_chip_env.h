// `place` on a chip checkpoint: the environment settings its policy was trained with, read from
// the checkpoint. What it does with them (TrainedChipEnv, TrainedChipEnvOf,
// ReconcileTrainedChipEnv) is env/chip/trained_env.h, shared with the Python module.
// Torch-free header.
#pragma once

#include <string>

#include "datasets/proto/chip_placement.pb.h"
#include "env/chip/trained_env.h"

namespace placerl {

// TrainedChipEnvOf over what the checkpoint file holds: the training run's config (its
// training_state.h kRunConfigExtra extra), else its policy's action feature names (LibTorch
// reads both). Throws ConfigError naming the file (not a chip policy's checkpoint, unreadable,
// damaged).
TrainedChipEnv ReadTrainedChipEnv(const std::string& checkpoint, const config::ChipEnvConfig& base);

}  // namespace placerl
