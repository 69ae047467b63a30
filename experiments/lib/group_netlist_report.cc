#include "experiments/lib/group_netlist_report.h"

#include <cstdio>

namespace placerl::group_netlist {

using namespace placerl::chip;

namespace {

nlohmann::json CountsJson(const NodeTypeCounts& c) {
  return {{"HARD_MACROs", c.hard_macros}, {"HARD_MACRO_PINs", c.hard_macro_pins}, {"MACROs", c.macros},
          {"MACRO_PINs", c.macro_pins},   {"PORTs", c.ports},                     {"SOFT_MACROs", c.soft_macros},
          {"SOFT_MACRO_PINs", c.soft_macro_pins}, {"STDCELLs", c.stdcells}};
}

std::string Opt(const std::optional<double>& v, const char* fmt) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

}  // namespace

std::vector<ScoredPlc> ScorePlcs(const Netlist& grouped, const std::string& plc_path, const PlcFile& plc,
                                 const std::vector<std::string>& score_paths, const CostWeights& weights) {
  std::vector<ScoredPlc> scored;
  std::vector<std::string> to_score;
  if (!plc_path.empty()) to_score.push_back(plc_path);
  for (const auto& s : score_paths) to_score.push_back(s);
  for (const std::string& path : to_score) {
    ScoredPlc s;
    s.path = path;
    s.plc = path == plc_path ? plc : ReadPlc(path);
    s.score = ScorePlc(grouped, s.plc, path, weights);
    scored.push_back(std::move(s));
  }
  return scored;
}

std::string GridSourceText(const GroupingCanvas& cg) {
  switch (cg.grid_source) {
    case GroupingGridSource::kAsked: return "--grid";
    case GroupingGridSource::kPlcHeader: return "the .plc header";
    case GroupingGridSource::kSelection:
      return "CT's grid selection (" + std::to_string(cg.candidates) + " grids fit the macros)";
    case GroupingGridSource::kDefault: break;
  }
  return "default (no grid fits the hard macros, or there are none)";
}

void AddGroupingJson(const NodeTypeCounts& ours, const std::optional<NodeTypeCounts>& header_counts,
                     const std::string& count_diff, const GroupingCanvas& cg, const GroupingReport& report, bool use_metis,
                     const MetisGroupingReport& metis_report, nlohmann::json* json) {
  nlohmann::json& j = *json;
  j["counts"] = CountsJson(ours);
  if (header_counts) {
    j["header_counts"] = CountsJson(*header_counts);
    j["counts_match"] = count_diff.empty();
  }
  j["canvas"] = {cg.canvas_width, cg.canvas_height};
  j["grid"] = {cg.cols, cg.rows};
  j["grid_source"] = GridSourceText(cg);
  j["dropped_high_fanout_nets"] = report.dropped_high_fanout_nets;
  j["grouped_stdcells"] = report.grouped_stdcells;
  j["ungrouped_stdcells"] = report.ungrouped_stdcells;
  if (use_metis) {
    j["metis"] = {{"fixed_groups", metis_report.fixed_groups}, {"fixed_stdcells", metis_report.fixed_stdcells},
                  {"free_stdcells", metis_report.free_stdcells}, {"parts", metis_report.metis_parts},
                  {"graph_edges", metis_report.graph_edges}, {"edgecut", metis_report.metis_edgecut},
                  {"groups_after_breakup", metis_report.groups_after_breakup}, {"groups_final", metis_report.groups_final}};
  }
}

nlohmann::json ScoredJson(const std::vector<ScoredPlc>& scored) {
  nlohmann::json sj = nlohmann::json::array();
  for (const ScoredPlc& sp : scored) {
    const PlcScore& s = sp.score;
    nlohmann::json e{{"plc", sp.path}, {"hpwl", s.cost.hpwl}, {"wirelength_cost", s.cost.wirelength_cost},
                     {"density_cost", s.cost.density_cost}, {"congestion_cost", s.cost.congestion_cost},
                     {"proxy_cost", s.cost.proxy_cost}, {"max_soft_macro_shift", s.max_soft_shift},
                     {"congestion_cost_off_canvas_nets_unrouted", s.google_congestion},
                     {"off_canvas_nets", s.off_canvas_nets}, {"plc_rows", s.rows},
                     {"ports_and_macros", s.placeable}};
    if (sp.plc.header_wirelength) e["header_hpwl"] = *sp.plc.header_wirelength;
    if (sp.plc.header_wirelength_cost) e["header_wirelength_cost"] = *sp.plc.header_wirelength_cost;
    if (sp.plc.header_density_cost) e["header_density_cost"] = *sp.plc.header_density_cost;
    if (sp.plc.header_congestion_cost) e["header_congestion_cost"] = *sp.plc.header_congestion_cost;
    sj.push_back(e);
  }
  return sj;
}

void PrintGrouping(const std::string& input, const Netlist& flat, const GroupingCanvas& cg, const GroupingOptions& gopt,
                   bool use_metis, const MetisGroupingReport& metis_report, const GroupingReport& report,
                   const std::string& out_netlist, const Netlist& grouped, const NodeTypeCounts& ours) {
  std::printf("flat netlist     %s: %d nodes (%zu std cells, %zu hard macros, %zu ports), %d nets\n",
              input.c_str(), flat.num_nodes(), flat.stdcells.size(),
              flat.hard_macros.size(), flat.ports.size(), flat.num_nets());
  std::printf("canvas           %.6g x %.6g um, grid %d x %d from %s (soft-macro width %.6g um), utilization %g\n",
              cg.canvas_width, cg.canvas_height, cg.cols, cg.rows, GridSourceText(cg).c_str(), cg.canvas_width / cg.cols,
              gopt.cell_area_utilization);
  if (use_metis) {
    std::printf("metis            %d fixed groups (%d std cells), %d free std cells in %d parts (%lld edges, cut %lld), "
                "%d groups after break-up, %d after merge\n",
                metis_report.fixed_groups, metis_report.fixed_stdcells, metis_report.free_stdcells,
                metis_report.metis_parts, (long long)metis_report.graph_edges, (long long)metis_report.metis_edgecut,
                metis_report.groups_after_breakup, metis_report.groups_final);
  }
  std::printf("grouping         %d std cells grouped, %d left as std cells, %d nets over %d sinks dropped\n",
              report.grouped_stdcells, report.ungrouped_stdcells, report.dropped_high_fanout_nets, gopt.max_fanout);
  std::printf("clustered        %s: %d nodes, %d nets\n", out_netlist.c_str(), grouped.num_nodes(), grouped.num_nets());
  std::printf("counts           HARD_MACROs %lld  HARD_MACRO_PINs %lld  MACROs %lld  MACRO_PINs %lld  PORTs %lld  "
              "SOFT_MACROs %lld  SOFT_MACRO_PINs %lld  STDCELLs %lld\n",
              (long long)ours.hard_macros, (long long)ours.hard_macro_pins, (long long)ours.macros,
              (long long)ours.macro_pins, (long long)ours.ports, (long long)ours.soft_macros,
              (long long)ours.soft_macro_pins, (long long)ours.stdcells);
}

void PrintHeaderCounts(const std::string& plc_path, const std::optional<NodeTypeCounts>& header_counts,
                       const std::string& count_diff) {
  if (plc_path.empty()) return;
  if (!header_counts) {
    std::printf("header counts    %s has no node counts\n", plc_path.c_str());
  } else if (count_diff.empty()) {
    std::printf("header counts    all equal to %s\n", plc_path.c_str());
  } else {
    std::printf("header counts    DIFFER from %s (ours vs header): %s\n", plc_path.c_str(), count_diff.c_str());
  }
}

void PrintScored(const std::vector<ScoredPlc>& scored, const CostWeights& weights) {
  for (const ScoredPlc& sp : scored) {
    const PlcScore& s = sp.score;
    std::printf("score %s\n", sp.path.c_str());
    std::printf("  hpwl             %.3f   header %s\n", s.cost.hpwl, Opt(sp.plc.header_wirelength, "%.3f").c_str());
    std::printf("  wirelength_cost  %.6f   header %s\n", s.cost.wirelength_cost, Opt(sp.plc.header_wirelength_cost, "%.4f").c_str());
    std::printf("  density_cost     %.6f   header %s\n", s.cost.density_cost, Opt(sp.plc.header_density_cost, "%.4f").c_str());
    std::printf("  congestion_cost  %.6f   header %s\n", s.cost.congestion_cost, Opt(sp.plc.header_congestion_cost, "%.4f").c_str());
    std::printf("  congestion_cost  %.6f   with the %d nets that have a pin off the canvas unrouted (Google's rule)\n",
                s.google_congestion, s.off_canvas_nets);
    std::printf("  proxy_cost       %.6f   (= %g*wl + %g*density + %g*congestion)\n", s.cost.proxy_cost,
                weights.wirelength, weights.density, weights.congestion);
    std::printf("  rows %d for %d ports and macros; soft macros moved by the .plc: up to %.4g um (|dx|+|dy|) from their cells' centre\n",
                s.rows, s.placeable, s.max_soft_shift);
  }
}

}  // namespace placerl::group_netlist
