#include "experiments/lib/chip_input.h"

#include "datasets/chip/design.h"

#include <cstdio>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/synthetic.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl {

using namespace chip;

ChipInput LoadChipInput(const std::string& netlist_path, const std::string& plc_path, uint64_t seed) {
  return LoadChipDesign(netlist_path, plc_path, seed);
}

nlohmann::json ChipInputJson(const ChipInput& in, const std::string& netlist_path, const std::string& plc_path) {
  const PlacementSettings& s = in.settings;
  nlohmann::json j;
  j["netlist"] = netlist_path.empty() ? in.label : netlist_path;
  j["plc"] = plc_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(plc_path);
  j["canvas"] = {{"width", s.canvas_width}, {"height", s.canvas_height}};
  j["grid"] = {{"cols", s.cols}, {"rows", s.rows}};
  j["routes_per_micron"] = {{"hor", s.h_routes_per_micron}, {"ver", s.v_routes_per_micron}};
  j["macro_routing_allocation"] = {{"hor", s.h_macro_alloc}, {"ver", s.v_macro_alloc}};
  j["smoothing"] = s.smooth_range;
  j["smoothing_range_used"] = EffectiveSmoothingRange(s);
  j["overlap_threshold"] = s.overlap_threshold;
  j["blockages"] = s.blockages.size();
  const auto& n = in.netlist;
  j["counts"] = {{"nodes", n.num_nodes()}, {"nets", n.num_nets()}, {"hard_macros", n.hard_macros.size()},
                 {"soft_macros", n.soft_macros.size()}, {"ports", n.ports.size()}, {"std_cells", n.stdcells.size()}};
  nlohmann::json h = nlohmann::json::object();
  const PlcFile& p = in.plc;
  if (p.header_wirelength) h["wirelength"] = *p.header_wirelength;
  if (p.header_wirelength_cost) h["wirelength_cost"] = *p.header_wirelength_cost;
  if (p.header_density_cost) h["density_cost"] = *p.header_density_cost;
  if (p.header_congestion_cost) h["congestion_cost"] = *p.header_congestion_cost;
  if (p.header_area) h["area"] = *p.header_area;
  if (!h.empty()) j["plc_header_costs"] = h;
  return j;
}

std::string NoCompletePlacementHint(const ChipInput& in) {
  const PlacementSettings& s = in.settings;
  const bool from_header = in.plc.settings.has_grid();
  const std::string grid = std::to_string(s.cols) + " x " + std::to_string(s.rows);
  return "on the " + grid + " grid (" +
         (from_header ? std::string("from the .plc header") : std::string("the default: no .plc gives Columns and Rows")) +
         ") for " + std::to_string(in.netlist.hard_macros.size()) +
         " hard macros; a larger grid is set by the .plc header line '# Columns : C  Rows : R' "
         "(bookshelf-to-ct and group-netlist write one that fits the macros)";
}

void CheckEvaluationBudget(const PlacementSettings& s, double evaluations, bool allow_slow) {
  const EvaluationEstimate e = EstimateEvaluation(s);
  const double seconds = e.seconds * evaluations;
  char what[256];
  std::snprintf(what, sizeof(what), "grid %d x %d with smoothing range %d: %s about %.3g s and %.3g GiB",
                s.cols, s.rows, e.smoothing_range,
                evaluations > 1 ? (std::to_string(static_cast<long long>(evaluations)) + " full evaluations take").c_str()
                                : "a full evaluation takes",
                seconds, e.bytes / double(1ull << 30));
  if (!allow_slow && (seconds > kMaxEstimatedSeconds || e.bytes > kMaxEstimatedBytes)) {
    char limits[160];
    std::snprintf(limits, sizeof(limits), " (limits %.0f s, %.0f GiB; --allow-slow runs it anyway)",
                  kMaxEstimatedSeconds, kMaxEstimatedBytes / double(1ull << 30));
    throw ConfigError(std::string(what) + limits);
  }
  if (seconds > kAnnounceSeconds) Warn(warning_id::kSlowEvaluation, what);
}

}  // namespace placerl
