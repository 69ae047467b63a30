// The chip environment from its config (datasets/proto/chip_placement.proto ChipEnvConfig, the
// `chip { … }` block of place-train, place and place-baseline): the defaults — the one place
// they are written —, the checks, and the environment they make. Shared by the binaries
// (experiments/lib/chip_config.h) and the Python module (Policy.make_env).
#pragma once

#include <memory>
#include <string>

#include "datasets/proto/chip_placement.pb.h"
#include "env/chip/chip_env.h"

namespace placerl {

config::ChipEnvConfig DefaultChipEnvConfig();

// Throws ConfigError naming the field and the value when a setting cannot be used.
void CheckChipEnvConfig(const config::ChipEnvConfig& c);
// Throws ConfigError "<name> must be a finite number >= 0 (got <v>)" unless 0 <= v < inf.
void CheckNonNegativeSetting(double v, const std::string& name);

// Loads the design and builds the environment. `maps`: per-cell feature maps (learning only).
std::unique_ptr<env::ChipEnv> MakeChipEnv(const config::ChipEnvConfig& c, bool maps);

}  // namespace placerl
