// nas-search's run (docs/nas.md): a search on a table, a synthetic quality, Brainformer's or
// trained ENAS cells over one or many seeds (environments → estimate → run directory → the
// seeds' searches with checkpoints → best.pbtxt, curves, result.json, the summary line), or ENAS
// weight sharing on Fashion-MNIST handed to its own run (experiments/lib/torch/enas_programs.h).
#pragma once

#include <string>

#include "experiments/lib/nas/nas_search_config.h"

namespace placerl::nas_search {

// Runs what the flags ask for; `command_line` is recorded in the run directory. Returns the exit
// code; throws ConfigError / UsageError / IoError for bad input (RunMain prints them).
int NasSearch(const Options& o, const std::string& command_line);

}  // namespace placerl::nas_search
