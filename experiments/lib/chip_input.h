// How every chip binary gets its input: a netlist (or the built-in synthetic one), an
// optional .plc applied to it, and the resolved placement settings (the .plc header's
// values where it gives them, then the synthetic design's, then the defaults).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/design.h"
#include "datasets/chip/plc.h"

namespace placerl {

// The chip design every binary loads (datasets/chip/design.h).
using ChipInput = chip::ChipDesign;

// `netlist_path` empty → the synthetic default with `seed` (binaries refuse `--netlist ""`
// with cli::NonEmpty: only leaving the option out selects the synthetic netlist). Warns
// (PLC-0001, PLC-0002) about a .plc that places only some macros and macros off the canvas.
ChipInput LoadChipInput(const std::string& netlist_path, const std::string& plc_path, uint64_t seed);

// What a run read, for --json: netlist (path, or "synthetic (seed N)"), plc (path or null),
// canvas, grid, routing, smoothing (given and the range used) and, where the .plc header
// states them, its costs.
nlohmann::json ChipInputJson(const ChipInput& in, const std::string& netlist_path, const std::string& plc_path);

// Why no complete placement may have been found and what to do, for the "no complete
// placement" message: the grid, where it came from (the .plc header, or the 10 × 10 default
// when the .plc gives none) and the number of hard macros, and how to give a larger grid (a
// .plc header's "# Columns : C  Rows : R" line; bookshelf-to-ct and group-netlist write one
// chosen by Circuit Training's grid selection). Starts with "on the ".
std::string NoCompletePlacementHint(const ChipInput& in);

// Refuses (ConfigError, with the estimate) `evaluations` full proxy-cost evaluations under
// `settings` that are estimated to take more than kMaxEstimatedSeconds or a single one more
// than kMaxEstimatedBytes, unless `allow_slow`; announces (warning COST-0001) work
// estimated above kAnnounceSeconds. `what` names the work ("one evaluation").
inline constexpr double kMaxEstimatedSeconds = 60;
inline constexpr double kMaxEstimatedBytes = 8.0 * (1ull << 30);
inline constexpr double kAnnounceSeconds = 3;
void CheckEvaluationBudget(const chip::PlacementSettings& settings, double evaluations, bool allow_slow);

}  // namespace placerl
