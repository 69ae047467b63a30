// The chip placement configs (datasets/proto/chip_placement.proto): their defaults — the one
// place they are written — their checks, and what they turn into (a chip environment, the
// baselines' options).
#pragma once

#include <memory>

#include "datasets/proto/chip_placement.pb.h"
#include "env/chip/chip_env.h"
#include "search/chip/baselines.h"

namespace placerl {

config::ChipEnvConfig DefaultChipEnvConfig();
config::PlaceBaselineConfig DefaultPlaceBaselineConfig();

// Throws ConfigError naming the field and the value when a setting cannot be used.
void CheckChipEnvConfig(const config::ChipEnvConfig& c);
void CheckPlaceBaselineConfig(const config::PlaceBaselineConfig& c);

// Loads the design and builds the environment. `maps`: per-cell feature maps (learning only).
std::unique_ptr<env::ChipEnv> MakeChipEnv(const config::ChipEnvConfig& c, bool maps);
search::ChipBaselineOptions BaselineOptionsFromConfig(const config::PlaceBaselineConfig& c);

}  // namespace placerl
