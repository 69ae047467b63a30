// What `group-netlist` reports (docs/grouping.md): the grouping's numbers and the .plc files
// scored on its result, as one JSON summary or as text lines. The grouping itself is datasets/chip/grouping.h
// and grouping_setup.h; the scores cost_models/chip/plc_scoring.h.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cost_models/chip/plc_scoring.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/grouping_setup.h"

namespace placerl::group_netlist {

// A .plc file (read from `path`) scored on the clustered netlist.
struct ScoredPlc {
  std::string path;
  chip::PlcFile plc;
  chip::PlcScore score;
};

// `plc` (read from plc_path, when given) and then every file of `score_paths` scored on `grouped`.
std::vector<ScoredPlc> ScorePlcs(const chip::Netlist& grouped, const std::string& plc_path, const chip::PlcFile& plc,
                                 const std::vector<std::string>& score_paths, const chip::CostWeights& weights);

// Where the grid came from, as the summary says it ("--grid", "the .plc header", …).
std::string GridSourceText(const chip::GroupingCanvas& cg);

// The grouping's numbers into the JSON summary `json`: node counts (and the .plc header's),
// canvas and grid, nets dropped, cells grouped, METIS's report (when `use_metis`).
void AddGroupingJson(const chip::NodeTypeCounts& ours, const std::optional<chip::NodeTypeCounts>& header_counts,
                     const std::string& count_diff, const chip::GroupingCanvas& cg, const chip::GroupingReport& report,
                     bool use_metis, const chip::MetisGroupingReport& metis_report, nlohmann::json* json);
nlohmann::json ScoredJson(const std::vector<ScoredPlc>& scored);

// The same as text lines: the flat netlist, canvas and grid, METIS, grouping, the result; the
// header's counts against ours; each scored .plc.
void PrintGrouping(const std::string& input, const chip::Netlist& flat, const chip::GroupingCanvas& cg,
                   const chip::GroupingOptions& gopt, bool use_metis, const chip::MetisGroupingReport& metis_report,
                   const chip::GroupingReport& report, const std::string& out_netlist, const chip::Netlist& grouped,
                   const chip::NodeTypeCounts& ours);
void PrintHeaderCounts(const std::string& plc_path, const std::optional<chip::NodeTypeCounts>& header_counts,
                       const std::string& count_diff);
void PrintScored(const std::vector<ScoredPlc>& scored, const chip::CostWeights& weights);

}  // namespace placerl::group_netlist
