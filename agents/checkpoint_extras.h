// Names of the extras a training checkpoint carries besides the learner (agents/learner.h
// SaveCheckpoint's `extras`), shared by the binaries and the Python module.
#pragma once

namespace placerl::agents {

// The resolved config of the run that wrote the checkpoint (config.pbtxt's text without its
// header): what a checkpoint was trained with travels with the file.
inline constexpr const char* kRunConfigExtra = "run_config";

}  // namespace placerl::agents
