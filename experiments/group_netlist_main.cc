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
// DIR/groups.final. The grouping is datasets/chip/grouping.h (CT's grouper, METIS) and
// grouping_setup.h (the flat netlist, canvas and grid); the scoring cost_models/chip/
// plc_scoring.h; the report experiments/lib/group_netlist_report.h.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/chip/plc_scoring.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/grouping_setup.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/group_netlist_report.h"

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


// --canvas W,H and --grid COLS,ROWS (when given) into `asked`.
void ParseCanvasAndGrid(const std::string& canvas_str, const std::string& grid_str, GroupingCanvasRequest* asked) {
  if (!canvas_str.empty()) ParsePair(canvas_str, "--canvas", &asked->canvas_width, &asked->canvas_height);
  if (!grid_str.empty()) {
    double c = 0, r = 0;
    ParsePair(grid_str, "--grid", &c, &r);
    if (c != std::floor(c) || r != std::floor(r) || c > 100000 || r > 100000) throw ConfigError("--grid wants whole numbers COLS,ROWS");
    asked->cols = static_cast<int>(c);
    asked->rows = static_cast<int>(r);
  }
}

// Scoring evaluates the proxy cost `evaluations` times on this grid: a grid far beyond the
// machine is refused up front (unless allow_slow).
void CheckScoringBudget(const Netlist& flat, const GroupingCanvas& cg, const PlcFile* plc, double evaluations,
                        bool allow_slow) {
  PlacementSettings est;
  est.canvas_width = cg.canvas_width;
  est.canvas_height = cg.canvas_height;
  est.cols = cg.cols;
  est.rows = cg.rows;
  if (plc) est = OverlayPlcSettings(plc->settings, est);
  CheckEvaluationBudget(ResolveDefaults(est, flat), evaluations, allow_slow);
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
    GroupingCanvasRequest asked;
    const Netlist flat = ReadFlatNetlist(netlist_path, aux_path, &asked.bookshelf);
    const auto t1 = std::chrono::steady_clock::now();

    // Canvas and grid: --canvas/--grid, else the .plc header, else the defaults.
    PlcFile plc;
    std::optional<NodeTypeCounts> header_counts;
    if (!plc_path.empty()) {
      const std::string text = ReadFile(plc_path);
      plc = ParsePlcText(text, plc_path);
      header_counts = ParsePlcNodeCounts(text, plc_path);
      asked.plc = &plc;
    }
    ParseCanvasAndGrid(canvas_str, grid_str, &asked);
    const GroupingCanvas cg = ChooseGroupingCanvas(flat, asked);
    // Scoring evaluates the proxy cost on this grid: refuse a grid far beyond the machine up front.
    CheckScoringBudget(flat, cg, plc_path.empty() ? nullptr : &plc, 1.0 + 2.0 * (score_paths.size() + !plc_path.empty()),
                       allow_slow);
    gopt.canvas_width = cg.canvas_width;
    gopt.cols = cg.cols;
    mopt.canvas_height = cg.canvas_height;
    mopt.rows = cg.rows;

    // CT's grouper expects placed standard cells (centroids, break-up); say so when they
    // are all piled up in one spot (unplaced).
    WarnIfUnplacedCells(flat, cg.canvas_width, cg.canvas_height);
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
    if (use_metis) outputs.push_back({out_groups, GroupFileText(groups)});
    if (plc_path.empty())
      outputs.push_back({out_plc, InitialPlcText(grouped, cg.canvas_width, cg.canvas_height, cg.cols, cg.rows, weights, out_plc)});
    const auto t4 = std::chrono::steady_clock::now();

    const NodeTypeCounts ours = CountNodeTypes(grouped);
    std::string count_diff;
    if (header_counts) count_diff = DescribeCountDifferences(ours, *header_counts);

    // Score the .plc files on the clustered netlist.
    const std::vector<group_netlist::ScoredPlc> scored = group_netlist::ScorePlcs(grouped, plc_path, plc, score_paths, weights);
    WriteFilesAtomic(outputs, wo);
    const auto t5 = std::chrono::steady_clock::now();

    if (json) {
      nlohmann::json j;
      j["netlist"] = out_netlist;
      group_netlist::AddGroupingJson(ours, header_counts, count_diff, cg, report, use_metis, metis_report, &j);
      j["scored"] = group_netlist::ScoredJson(scored);
      j["seconds"] = {{"read", Seconds(t0, t1)}, {"groups", Seconds(t1, t2)}, {"build", Seconds(t2, t3)},
                      {"write", Seconds(t3, t4)}, {"score", Seconds(t4, t5)}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      group_netlist::PrintGrouping(netlist_path.empty() ? aux_path : netlist_path, flat, cg, gopt, use_metis,
                                   metis_report, report, out_netlist, grouped, ours);
      group_netlist::PrintHeaderCounts(plc_path, header_counts, count_diff);
      group_netlist::PrintScored(scored, weights);
      std::printf("time             read %.2f s, groups %.2f s, build %.2f s, write %.2f s, score %.2f s\n",
                  Seconds(t0, t1), Seconds(t1, t2), Seconds(t2, t3), Seconds(t3, t4), Seconds(t4, t5));
    }
    return kExitOk;
  });
}
