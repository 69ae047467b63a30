// group-netlist: turns a flat (standard-cell) netlist into a Circuit Training clustered
// netlist with soft macros, as Circuit Training's grouper does (docs/grouping.md).
//   group-netlist --netlist FLAT.pb.txt.gz --groups groups.final.gz [--plc initial.plc]
//                 [--score legalized.plc ...] -o DIR [--json]
//   group-netlist --netlist FLAT.pb.txt --metis [--groups-count 500] [--grid C,R] -o DIR
//   group-netlist --aux ibm01.aux --metis -o DIR
// Writes DIR/netlist.pb.txt (DIR created; the outputs are checked before the inputs are
// read, and written all or nothing once everything, scoring included, succeeded). With
// --plc: canvas and grid come from its header, the node counts are checked against the
// header's and the .plc is scored on the result (and every --score file). Without --plc the
// canvas is CT's default square and the grid CT's grid selection, and DIR/initial.plc is
// written too (canvas, grid, soft macros at their cells' centre); with --metis also
// DIR/groups.final.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/bookshelf.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/warnings.h"
#include "datasets/chip/design.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"

using namespace placerl;
using namespace placerl::chip;

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// "A,B" → two positive numbers.
void ParsePair(const std::string& s, const char* option, double* a, double* b) {
  const auto parts = SplitCommaList(s);
  char* e0 = nullptr;
  char* e1 = nullptr;
  if (parts.size() == 2) {
    *a = std::strtod(parts[0].c_str(), &e0);
    *b = std::strtod(parts[1].c_str(), &e1);
  }
  if (parts.size() != 2 || e0 != parts[0].c_str() + parts[0].size() || e1 != parts[1].c_str() + parts[1].size() ||
      !std::isfinite(*a) || !std::isfinite(*b) || !(*a > 0) || !(*b > 0)) {
    throw ConfigError(std::string(option) + " wants two positive numbers A,B (got '" + s + "')");
  }
}


// The .plc header's settings over the defaults (as every chip binary reads them).
PlacementSettings SettingsFromPlc(const PlcFile& plc, const Netlist& nl) {
  return ResolveDefaults(OverlayPlcSettings(plc.settings, PlacementSettings{}), nl);
}

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

// The canvas (microns) and grid of the clustered netlist, and where the grid came from.
struct CanvasGrid {
  double canvas_w = 0, canvas_h = 0;
  int cols = 0, rows = 0;
  std::string grid_source;
};

// --canvas / --grid, else the .plc header (`plc`, read from `plc_path` when given), else the
// Bookshelf rows' canvas, else CT's defaults (a square at 60 % use; CT's grid selection).
CanvasGrid ChooseCanvasAndGrid(const Netlist& flat, const std::string& plc_path, const PlcFile& plc,
                               const std::string& canvas_str, const std::string& grid_str,
                               const PlacementSettings& bookshelf_settings) {
  CanvasGrid cg;
  double& canvas_w = cg.canvas_w;
  double& canvas_h = cg.canvas_h;
  int& cols = cg.cols;
  int& rows = cg.rows;
  if (!plc_path.empty()) {
    canvas_w = plc.settings.canvas_width;
    canvas_h = plc.settings.canvas_height;
    cols = plc.settings.cols;
    rows = plc.settings.rows;
  }
  if (!canvas_str.empty()) ParsePair(canvas_str, "--canvas", &canvas_w, &canvas_h);
  if (!grid_str.empty()) {
    double c = 0, r = 0;
    ParsePair(grid_str, "--grid", &c, &r);
    if (c != std::floor(c) || r != std::floor(r) || c > 100000 || r > 100000) throw ConfigError("--grid wants whole numbers COLS,ROWS");
    cols = static_cast<int>(c);
    rows = static_cast<int>(r);
  }
  if (!(canvas_w > 0 && canvas_h > 0) && bookshelf_settings.has_canvas()) {
    canvas_w = bookshelf_settings.canvas_width;
    canvas_h = bookshelf_settings.canvas_height;
  }
  if (!(canvas_w > 0 && canvas_h > 0)) {
    // CT's placement-cost default for a netlist without a canvas: a square at 60 % use.
    canvas_w = canvas_h = std::max(1e-3, std::sqrt(flat.TotalArea() / 0.6));
  }
  cg.grid_source = plc_path.empty() ? "--grid" : "the .plc header";
  if (cols <= 0 || rows <= 0) {
    // CT's grid selection on the hard macros; a netlist without any gets CT's 10 × 10.
    if (const auto choice = SelectGrid(flat, canvas_w, canvas_h)) {
      cols = choice->cols;
      rows = choice->rows;
      cg.grid_source = "CT's grid selection (" + std::to_string(choice->candidates) + " grids fit the macros)";
    } else {
      cols = rows = 10;
      cg.grid_source = "default (no grid fits the hard macros, or there are none)";
    }
  } else if (!grid_str.empty()) {
    cg.grid_source = "--grid";
  }
  return cg;
}

// The flat netlist: --netlist's, or --aux's Bookshelf design (its rows' canvas into *bookshelf).
Netlist ReadFlatNetlist(const std::string& netlist_path, const std::string& aux_path, PlacementSettings* bookshelf) {
  if (!netlist_path.empty()) return ReadNetlist(netlist_path);
  BookshelfDesign d = ReadBookshelf(aux_path);
  *bookshelf = d.settings;
  return ToCircuitTrainingNets(d.netlist);
}

// Scoring evaluates the proxy cost `evaluations` times on this grid: a grid far beyond the
// machine is refused up front (unless allow_slow).
void CheckScoringBudget(const Netlist& flat, const CanvasGrid& cg, const PlcFile* plc, double evaluations,
                        bool allow_slow) {
  PlacementSettings est;
  est.canvas_width = cg.canvas_w;
  est.canvas_height = cg.canvas_h;
  est.cols = cg.cols;
  est.rows = cg.rows;
  if (plc) est = OverlayPlcSettings(plc->settings, est);
  CheckEvaluationBudget(ResolveDefaults(est, flat), evaluations, allow_slow);
}

// CT's grouper expects placed standard cells (centroids, break-up): a warning when they all
// lie piled up in one spot (unplaced).
void WarnIfUnplaced(const Netlist& flat, double canvas_w, double canvas_h) {
  if (flat.stdcells.size() <= 1) return;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (int32_t c : flat.stdcells) {
    x0 = std::min(x0, flat.x[c]);
    x1 = std::max(x1, flat.x[c]);
    y0 = std::min(y0, flat.y[c]);
    y1 = std::max(y1, flat.y[c]);
  }
  if (x1 - x0 <= 0.01 * canvas_w && y1 - y0 <= 0.01 * canvas_h) {
    char what[320];
    std::snprintf(what, sizeof what,
                  "all %zu standard cells lie within %.3g x %.3g um near (%g, %g): the netlist looks unplaced; "
                  "soft macros start there and the break-up of spread groups does nothing (Circuit Training's "
                  "grouper expects placed cells)",
                  flat.stdcells.size(), x1 - x0, y1 - y0, x0, y0);
    Warn(warning_id::kGroupUnplacedCells, what);
  }
}

// A .plc file scored on the clustered netlist.
struct Scored {
  std::string path;
  CostBreakdown c;
  PlcFile plc;
  double max_soft_shift = 0;  // largest |Δx|+|Δy| between our soft-macro centres and the file's
  double google_congestion = 0;  // nets with a pin off the canvas left out (Google's rule)
  int32_t off_canvas_nets = 0;
  int32_t rows = 0, placeable = 0;  // .plc rows; ports + macros of the clustered netlist
};

// Scores `plc` (read from plc_path, when given) and the --score files on `grouped`.
std::vector<Scored> ScorePlcs(const Netlist& grouped, const std::string& plc_path, const PlcFile& plc,
                              const std::vector<std::string>& score_paths, const CostWeights& weights) {
  std::vector<Scored> scored;
  std::vector<std::string> to_score;
  if (!plc_path.empty()) to_score.push_back(plc_path);
  for (const auto& s : score_paths) to_score.push_back(s);
  for (const std::string& path : to_score) {
    Scored s;
    s.path = path;
    s.plc = path == plc_path ? plc : ReadPlc(path);
    Netlist placed = grouped;
    ApplyPlc(s.plc, &placed, path);
    for (int32_t m : grouped.soft_macros) {
      s.max_soft_shift = std::max(s.max_soft_shift, std::abs(placed.x[m] - grouped.x[m]) + std::abs(placed.y[m] - grouped.y[m]));
    }
    const PlacementSettings settings = SettingsFromPlc(s.plc, placed);
    s.c = EvaluateProxyCost(placed, settings, weights);
    const Netlist routed = WithoutOffCanvasNets(placed, settings.canvas_width, settings.canvas_height, &s.off_canvas_nets);
    s.google_congestion = EvaluateProxyCost(routed, settings, weights).congestion_cost;
    s.rows = static_cast<int32_t>(s.plc.rows.size());
    s.placeable = static_cast<int32_t>(grouped.ports.size() + grouped.macros.size());
    scored.push_back(std::move(s));
  }
  return scored;
}

nlohmann::json ScoredJson(const std::vector<Scored>& scored) {
  nlohmann::json sj = nlohmann::json::array();
  for (const Scored& s : scored) {
    nlohmann::json e{{"plc", s.path}, {"hpwl", s.c.hpwl}, {"wirelength_cost", s.c.wirelength_cost},
                     {"density_cost", s.c.density_cost}, {"congestion_cost", s.c.congestion_cost},
                     {"proxy_cost", s.c.proxy_cost}, {"max_soft_macro_shift", s.max_soft_shift},
                     {"congestion_cost_off_canvas_nets_unrouted", s.google_congestion},
                     {"off_canvas_nets", s.off_canvas_nets}, {"plc_rows", s.rows},
                     {"ports_and_macros", s.placeable}};
    if (s.plc.header_wirelength) e["header_hpwl"] = *s.plc.header_wirelength;
    if (s.plc.header_wirelength_cost) e["header_wirelength_cost"] = *s.plc.header_wirelength_cost;
    if (s.plc.header_density_cost) e["header_density_cost"] = *s.plc.header_density_cost;
    if (s.plc.header_congestion_cost) e["header_congestion_cost"] = *s.plc.header_congestion_cost;
    sj.push_back(e);
  }
  return sj;
}

void PrintScored(const std::vector<Scored>& scored, const CostWeights& weights) {
  for (const Scored& s : scored) {
    std::printf("score %s\n", s.path.c_str());
    std::printf("  hpwl             %.3f   header %s\n", s.c.hpwl, Opt(s.plc.header_wirelength, "%.3f").c_str());
    std::printf("  wirelength_cost  %.6f   header %s\n", s.c.wirelength_cost, Opt(s.plc.header_wirelength_cost, "%.4f").c_str());
    std::printf("  density_cost     %.6f   header %s\n", s.c.density_cost, Opt(s.plc.header_density_cost, "%.4f").c_str());
    std::printf("  congestion_cost  %.6f   header %s\n", s.c.congestion_cost, Opt(s.plc.header_congestion_cost, "%.4f").c_str());
    std::printf("  congestion_cost  %.6f   with the %d nets that have a pin off the canvas unrouted (Google's rule)\n",
                s.google_congestion, s.off_canvas_nets);
    std::printf("  proxy_cost       %.6f   (= %g*wl + %g*density + %g*congestion)\n", s.c.proxy_cost,
                weights.wirelength, weights.density, weights.congestion);
    std::printf("  rows %d for %d ports and macros; soft macros moved by the .plc: up to %.4g um (|dx|+|dy|) from their cells' centre\n",
                s.rows, s.placeable, s.max_soft_shift);
  }
}

// The grouping's numbers in the JSON summary (`j`): node counts (and the .plc header's),
// canvas and grid, nets dropped, cells grouped, METIS's report.
void AddGroupingJson(const NodeTypeCounts& ours, const std::optional<NodeTypeCounts>& header_counts,
                     const std::string& count_diff, const CanvasGrid& cg, const GroupingReport& report, bool use_metis,
                     const MetisGroupingReport& metis_report, nlohmann::json* json) {
  nlohmann::json& j = *json;
  j["counts"] = CountsJson(ours);
  if (header_counts) {
    j["header_counts"] = CountsJson(*header_counts);
    j["counts_match"] = count_diff.empty();
  }
  j["canvas"] = {cg.canvas_w, cg.canvas_h};
  j["grid"] = {cg.cols, cg.rows};
  j["grid_source"] = cg.grid_source;
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

// The same as text lines: the flat netlist, canvas and grid, METIS, grouping, the result.
void PrintGrouping(const std::string& input, const Netlist& flat, const CanvasGrid& cg, const GroupingOptions& gopt,
                   bool use_metis, const MetisGroupingReport& metis_report, const GroupingReport& report,
                   const std::string& out_netlist, const Netlist& grouped, const NodeTypeCounts& ours) {
  std::printf("flat netlist     %s: %d nodes (%zu std cells, %zu hard macros, %zu ports), %d nets\n",
              input.c_str(), flat.num_nodes(), flat.stdcells.size(),
              flat.hard_macros.size(), flat.ports.size(), flat.num_nets());
  std::printf("canvas           %.6g x %.6g um, grid %d x %d from %s (soft-macro width %.6g um), utilization %g\n",
              cg.canvas_w, cg.canvas_h, cg.cols, cg.rows, cg.grid_source.c_str(), cg.canvas_w / cg.cols, gopt.cell_area_utilization);
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

// Whether the clustered netlist's node counts equal the .plc header's.
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

}  // namespace

int main(int argc, char** argv) {
  return RunMain("group-netlist", [&] {
    CLI::App app{"Groups the standard cells of a flat netlist into soft macros as Circuit Training's grouper "
                 "does, from a group file (groups.final) or from a METIS partition, and writes the clustered "
                 "netlist.pb.txt."};
    std::string netlist_path, aux_path, groups_path, plc_path, out_dir, canvas_str, grid_str, weights_str = "1,0.5,0.5";
    std::vector<std::string> score_paths;
    bool use_metis = false, json = false, no_breakup = false, allow_slow = false;
    GroupingOptions gopt;
    MetisGroupingOptions mopt;
    app.add_option("--netlist", netlist_path, "flat netlist.pb.txt (gzip ok; several files comma-separated)");
    app.add_option("--aux", aux_path, "a Bookshelf design (.aux) instead of --netlist (needs --metis)");
    app.add_option("--groups", groups_path, "group file: one group id per node, file order (CT's groups.final; gzip ok)");
    app.add_flag("--metis", use_metis, "no group file: CT's fixed groups + METIS k-way on the other standard cells + CT's break-up/merge");
    app.add_option("--plc", plc_path, ".plc of the clustered netlist (CT's initial.plc): canvas and grid from its header; counts checked; scored");
    app.add_option("--score", score_paths, "more .plc files to score on the result (e.g. legalized.plc)");
    app.add_option("-o,--out", out_dir, "output directory (created)")->required();
    app.add_option("--canvas", canvas_str, "canvas W,H in microns (default: the --plc header, else the Bookshelf rows, else CT's square of side sqrt(area/0.6))");
    app.add_option("--grid", grid_str, "grid COLS,ROWS (default: the --plc header, else CT's grid selection on the hard macros)");
    app.add_option("--utilization", gopt.cell_area_utilization, "cell area utilization: soft-macro area = cell area / this")
        ->capture_default_str()->check(cli::FiniteRange(1e-3, 1));
    app.add_option("--max-fanout", gopt.max_fanout, "nets with more distinct sinks are dropped before grouping")
        ->capture_default_str()->check(cli::IntRange(1, cli::kMaxCount));
    app.add_option("--groups-count", mopt.num_groups, "METIS: number of parts of the free standard cells")
        ->capture_default_str()->check(cli::IntRange(1, 1000000));
    app.add_option("--imbalance", mopt.imbalance, "METIS: allowed part size above average (0.05 = 5 %)")
        ->capture_default_str()->check(cli::FiniteRange(0, 10));
    app.add_option("--fixed-logic-levels", mopt.fixed_logic_levels, "METIS: levels of logic pulled into the macro-pin/IO groups")
        ->capture_default_str()->check(cli::IntRange(0, 100));
    app.add_flag("--no-breakup", no_breakup, "METIS: skip CT's break-up of spread groups and merge of small ones");
    app.add_flag("--fixed-vertices", mopt.fixed_group_vertices,
                 "METIS: fixed groups join the graph as one vertex each and add their count to the parts (as CT's hMETIS call)");
    app.add_option("--seed", mopt.seed, "METIS seed")->capture_default_str()->check(cli::IntRange(0, 1000000000));
    app.add_option("--weights", weights_str, "wirelength,density,congestion weights for scoring")->capture_default_str();
    app.add_flag("--json", json, "print one JSON summary instead of text");
    app.add_flag("--allow-slow", allow_slow, "run even when scoring is estimated above 60 s or 8 GiB (huge grid or smoothing)");
    cli::Parse(app, argc, argv);
    mopt.breakup = !no_breakup;
    const CostWeights weights = ParseCostWeights(weights_str);
    if (netlist_path.empty() == aux_path.empty()) throw ConfigError("give exactly one of --netlist and --aux");
    if (groups_path.empty() == !use_metis) throw ConfigError("give exactly one of --groups FILE and --metis");
    if (!aux_path.empty() && !use_metis) throw ConfigError("--aux needs --metis (Bookshelf designs come without a group file)");
    // The outputs, checked before the work (a path through a file, a device, a folder that
    // cannot be made): a run does not read an 11 MB netlist and then refuse.
    WriteOptions wo;
    wo.create_parent_dirs = true;
    const std::string out_prefix = out_dir.empty() || out_dir.back() == '/' ? out_dir : out_dir + "/";
    const std::string out_netlist = out_prefix + "netlist.pb.txt", out_groups = out_prefix + "groups.final",
                      out_plc = out_prefix + "initial.plc";
    CheckOutputPath(out_netlist, wo);
    if (use_metis) CheckOutputPath(out_groups, wo);
    if (plc_path.empty()) CheckOutputPath(out_plc, wo);

    const auto t0 = std::chrono::steady_clock::now();
    PlacementSettings bookshelf_settings;
    const Netlist flat = ReadFlatNetlist(netlist_path, aux_path, &bookshelf_settings);
    const auto t1 = std::chrono::steady_clock::now();

    // Canvas and grid: --canvas/--grid, else the .plc header, else the defaults.
    PlcFile plc;
    std::optional<NodeTypeCounts> header_counts;
    if (!plc_path.empty()) {
      const std::string text = ReadFile(plc_path);
      plc = ParsePlcText(text, plc_path);
      header_counts = ParsePlcNodeCounts(text, plc_path);
    }
    const CanvasGrid cg = ChooseCanvasAndGrid(flat, plc_path, plc, canvas_str, grid_str, bookshelf_settings);
    const double canvas_w = cg.canvas_w, canvas_h = cg.canvas_h;
    const int cols = cg.cols, rows = cg.rows;
    const std::string& grid_source = cg.grid_source;
    // Scoring evaluates the proxy cost on this grid: refuse a grid far beyond the machine up front.
    CheckScoringBudget(flat, cg, plc_path.empty() ? nullptr : &plc, 1.0 + 2.0 * (score_paths.size() + !plc_path.empty()),
                       allow_slow);
    gopt.canvas_width = canvas_w;
    gopt.cols = cols;
    mopt.canvas_height = canvas_h;
    mopt.rows = rows;

    // CT's grouper expects placed standard cells (centroids, break-up); say so when they
    // are all piled up in one spot (unplaced).
    WarnIfUnplaced(flat, canvas_w, canvas_h);
    std::vector<int32_t> groups;
    MetisGroupingReport metis_report;
    if (use_metis) {
      groups = MetisGroups(flat, gopt, mopt, &metis_report);
    } else {
      groups = ReadGroupFile(groups_path, flat.num_nodes());
    }
    const auto t2 = std::chrono::steady_clock::now();
    GroupingReport report;
    Netlist grouped = BuildGroupedNetlist(flat, groups, gopt, &report);
    const auto t3 = std::chrono::steady_clock::now();

    // The files to write, written all or nothing once the scoring below succeeded too (a .plc
    // row that does not fit the clustered netlist leaves no output behind).
    std::vector<FileToWrite> outputs{{out_netlist, NetlistToText(grouped)}};
    if (use_metis) {
      std::string text;
      for (int32_t g : groups) text += std::to_string(g) + "\n";
      outputs.push_back({out_groups, std::move(text)});
    }
    if (plc_path.empty()) {
      PlacementSettings s;
      s.canvas_width = canvas_w;
      s.canvas_height = canvas_h;
      s.cols = cols;
      s.rows = rows;
      s = ResolveDefaults(s, grouped);
      const CostBreakdown c = EvaluateProxyCost(grouped, s, weights);
      const PlcCosts pc{c.hpwl, c.wirelength_cost, c.congestion_cost, c.density_cost};
      const std::string src = grouped.sources.empty() ? std::string("(generated)") : grouped.sources.front();
      outputs.push_back({out_plc, PlcToText(grouped, s, &pc, src, out_plc)});
    }
    const auto t4 = std::chrono::steady_clock::now();

    const NodeTypeCounts ours = CountNodeTypes(grouped);
    std::string count_diff;
    if (header_counts) count_diff = DescribeCountDifferences(ours, *header_counts);

    // Score the .plc files on the clustered netlist.
    const std::vector<Scored> scored = ScorePlcs(grouped, plc_path, plc, score_paths, weights);
    WriteFilesAtomic(outputs, wo);
    const auto t5 = std::chrono::steady_clock::now();

    if (json) {
      nlohmann::json j;
      j["netlist"] = out_netlist;
      AddGroupingJson(ours, header_counts, count_diff, cg, report, use_metis, metis_report, &j);
      j["scored"] = ScoredJson(scored);
      j["seconds"] = {{"read", Seconds(t0, t1)}, {"groups", Seconds(t1, t2)}, {"build", Seconds(t2, t3)},
                      {"write", Seconds(t3, t4)}, {"score", Seconds(t4, t5)}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      PrintGrouping(netlist_path.empty() ? aux_path : netlist_path, flat, cg, gopt, use_metis, metis_report, report,
                    out_netlist, grouped, ours);
      PrintHeaderCounts(plc_path, header_counts, count_diff);
      PrintScored(scored, weights);
      std::printf("time             read %.2f s, groups %.2f s, build %.2f s, write %.2f s, score %.2f s\n",
                  Seconds(t0, t1), Seconds(t1, t2), Seconds(t2, t3), Seconds(t3, t4), Seconds(t4, t5));
    }
    return kExitOk;
  });
}
