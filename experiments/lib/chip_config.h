// The chip placement binaries' shared pieces: the configs (datasets/proto/chip_placement.proto): their defaults — the one
// place they are written — their checks, and what they turn into (the baselines' options). The
// chip environment's config (DefaultChipEnvConfig, CheckChipEnvConfig, MakeChipEnv) is
// env/chip/chip_env_config.h, shared with the Python module.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/proto/chip_placement.pb.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_env_config.h"
#include "experiments/lib/run_dir.h"
#include "search/chip/baselines.h"

namespace placerl {

config::PlaceBaselineConfig DefaultPlaceBaselineConfig();
// `sa-soft` (docs/chip_leaderboard.md): SA from the input placement with its hard macros snapped to
// legal cells, no force-directed steps, and half of the proposals moving one soft macro by up to
// one grid cell per axis. The one place these settings are written (`place-baseline --method
// sa-soft`, train-proposer's runs, the experiment scripts).
void ApplySaSoftPreset(config::SaConfig* sa);
// `sa-soft` whose schedule and acceptance controller come from the shipped learned proposer, frozen
// (place-baseline --method learned-sa, place --refine learned-sa; docs/learned_sa.md).
void ApplyLearnedSaPreset(config::SaConfig* sa);

// Throws ConfigError naming the field and the value when a setting cannot be used.
void CheckPlaceBaselineConfig(const config::PlaceBaselineConfig& c);

search::ChipBaselineOptions BaselineOptionsFromConfig(const config::PlaceBaselineConfig& c);
// train-proposer (search/chip/proposer_es.h): the defaults — every run with `sa-soft`'s settings
// (snapped input, no FD, half the proposals soft shifts of ±1 cell) and the learned proposer,
// frozen —, the checks (one-line ConfigError), and the searched feature list parsed.
config::TrainProposerConfig DefaultTrainProposerConfig();
void CheckTrainProposerConfig(const config::TrainProposerConfig& c);
std::vector<int> ProposerEsFeatures(const std::string& list);

// Writes DIR/<stem>.plc (costs in its header) and its picture; returns what was written and
// the costs, for result.json.
nlohmann::json WriteBestPlacement(const run::RunDirectory& dir, const env::ChipEnv& env,
                                  const env::ChipSolution& best, const std::string& stem,
                                  const std::string& title);

}  // namespace placerl
