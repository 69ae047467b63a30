// Grouping of flat netlists into Circuit Training clustered netlists: the group-file reader
// (file:line errors), the clustered netlist of a small hand-made design node by node, the
// four real tilos_flows designs against the canvas, grid, node counts and costs in CT's .plc
// headers, and
// the METIS grouping (placeable result, deterministic).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/bookshelf.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("placerl_grouping_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// ---------------------------------------------------------------- group files

void ExpectGroupError(const std::string& text, int32_t nodes, int line, const std::string& what) {
  try {
    ParseGroupText(text, "g.txt", nodes);
    ADD_FAILURE() << "no error for '" << text << "'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "g.txt");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("g.txt:" + std::to_string(line) + ": ", 0), 0u) << e.what();
  }
}

TEST(GroupFile, ReadsOneIdPerNode) {
  EXPECT_EQ(ParseGroupText("0\n-1\n7\n", "g", 3), (std::vector<int32_t>{0, -1, 7}));
  EXPECT_EQ(ParseGroupText("0\r\n -1 \r\n7\r\n", "g", 3), (std::vector<int32_t>{0, -1, 7}));  // CRLF, blanks
}

// A group file cut in its last id ("7" from "71") had the right line count and was read:
// a last line without a newline is refused at its line.
TEST(GroupFile, CutLastIdIsRefused) {
  ExpectGroupError("0\n-1\n7", 3, 3, "no newline at end of file: the last line ('7') may be truncated");
}

TEST(GroupFile, MalformedFilesGiveFileLineErrors) {
  ExpectGroupError("0\n1\n", 3, 2, "has 2 group ids but the netlist has 3 nodes");
  ExpectGroupError("", 3, 0, "has 0 group ids");
  ExpectGroupError("0\n1\n2\n3\n", 3, 4, "more lines than the netlist's 3 nodes");
  ExpectGroupError("0\nx\n2\n", 3, 2, "'x' is not a whole number");
  ExpectGroupError("0\n1.5\n2\n", 3, 2, "'1.5' is not a whole number");
  ExpectGroupError("0\n1 2\n2\n", 3, 2, "'1 2' is not a whole number");
  ExpectGroupError("0\n-2\n2\n", 3, 2, "negative group id -2");
  ExpectGroupError("0\n\n2\n", 3, 2, "empty line");
  ExpectGroupError("0\n1\n99999999999\n", 3, 3, "too large");
}

TEST(GroupFile, MissingFileIsAnIoError) {
  EXPECT_THROW(ReadGroupFile("/nonexistent/groups.final", 3), IoError);
}

TEST(PlcCounts, ParsesBothHeaderLayouts) {
  const std::string one_per_line =
      "# Counts of node types:\n# HARD_MACROs     :       136\n# HARD_MACRO_PINs :      8024\n"
      "# MACROs          :       908\n# MACRO_PINs      :     18324\n# PORTs           :       495\n"
      "# SOFT_MACROs     :       772\n# SOFT_MACRO_PINs :     10300\n# STDCELLs        :         0\n0 1 2 - 1\n";
  const auto a = ParsePlcNodeCounts(one_per_line, "a.plc");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->hard_macros, 136);
  EXPECT_EQ(a->soft_macro_pins, 10300);
  EXPECT_EQ(a->macros, 908);
  const std::string two_lines =
      "# HARD_MACROs : 133  HARD_MACRO_PINs : 7847  MACROs : 943  MACRO_PINs : 19658\n"
      "# PORTs : 495  SOFT_MACROs : 810  SOFT_MACRO_PINs : 11811  STDCELLs : 0\n";
  const auto b = ParsePlcNodeCounts(two_lines, "b.plc");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->hard_macro_pins, 7847);
  EXPECT_EQ(b->ports, 495);
  EXPECT_EQ(b->soft_macros, 810);
  EXPECT_FALSE(ParsePlcNodeCounts("# Columns : 2  Rows : 2\n", "c.plc"));
  EXPECT_THROW(ParsePlcNodeCounts("# PORTs : many\n", "d.plc"), ParseError);
  EXPECT_EQ(DescribeCountDifferences(*a, *a), "");
  NodeTypeCounts c = *a;
  c.soft_macros = 771;
  EXPECT_EQ(DescribeCountDifferences(c, *a), "SOFT_MACROs 771 vs 772");
}

// ---------------------------------------------------------------- a small design, node by node

// Two macros with two pins each, three ports, five standard cells (2×1 µm).
const char* kFlat = R"(
node { name: "P0" input: "S0" input: "M0/a"
  attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 0 } } attr { key: "y" value { f: 50 } } }
node { name: "P1"
  attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 100 } } attr { key: "y" value { f: 50 } } }
node { name: "P2" input: "S0" input: "S1" input: "S2" input: "S3"
  attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 50 } } attr { key: "y" value { f: 0 } } }
node { name: "M0" attr { key: "type" value { placeholder: "macro" } }
  attr { key: "width" value { f: 20 } } attr { key: "height" value { f: 20 } }
  attr { key: "x" value { f: 30 } } attr { key: "y" value { f: 30 } } }
node { name: "M0/a" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M0" } }
  attr { key: "x_offset" value { f: -10 } } attr { key: "y_offset" value { f: 0 } } }
node { name: "M0/b" input: "S1" input: "S2" input: "S4"
  attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M0" } }
  attr { key: "x_offset" value { f: 10 } } attr { key: "y_offset" value { f: 0 } } }
node { name: "M1" attr { key: "type" value { placeholder: "macro" } }
  attr { key: "width" value { f: 20 } } attr { key: "height" value { f: 20 } }
  attr { key: "x" value { f: 70 } } attr { key: "y" value { f: 70 } } }
node { name: "M1/a" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M1" } }
  attr { key: "x_offset" value { f: -10 } } attr { key: "y_offset" value { f: 0 } } }
node { name: "M1/b" input: "P1"
  attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M1" } }
  attr { key: "x_offset" value { f: 10 } } attr { key: "y_offset" value { f: 0 } } }
node { name: "S0" input: "S1" input: "S2" attr { key: "type" value { placeholder: "stdcell" } }
  attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 10 } } attr { key: "y" value { f: 10 } } }
node { name: "S1" input: "S3" input: "S3" input: "M1/a" attr { key: "type" value { placeholder: "stdcell" } }
  attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 20 } } attr { key: "y" value { f: 40 } } }
node { name: "S2" input: "S0" attr { key: "type" value { placeholder: "stdcell" } }
  attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 80 } } attr { key: "y" value { f: 20 } } }
node { name: "S3" input: "S0" attr { key: "type" value { placeholder: "stdcell" } }
  attr { key: "width" value { f: 4 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 90 } } attr { key: "y" value { f: 30 } } }
node { name: "S4" input: "S2" attr { key: "type" value { placeholder: "stdcell" } }
  attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 50 } } attr { key: "y" value { f: 50 } } }
)";

// Sinks of the net driven by `driver` (empty if it drives none), by name.
std::vector<std::string> SinksOf(const Netlist& nl, const std::string& driver) {
  const int32_t d = nl.index_of.at(driver);
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    if (nl.net_pins[nl.net_start[k]] != d) continue;
    std::vector<std::string> s;
    for (int32_t j = nl.net_start[k] + 1; j < nl.net_start[k + 1]; ++j) s.push_back(nl.name[nl.net_pins[j]]);
    return s;
  }
  return {};
}

double NetWeightOf(const Netlist& nl, const std::string& driver) {
  const int32_t d = nl.index_of.at(driver);
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    if (nl.net_pins[nl.net_start[k]] == d) return nl.net_weight[k];
  }
  return -1;
}

TEST(GroupedNetlist, SmallDesignAsCircuitTrainingWritesIt) {
  const Netlist flat = ParseNetlistText(kFlat, "flat.pb.txt");
  // S0, S1 → group 0; S2, S3 → group 1; S4 ungrouped; pins and ports carry ids CT gives them
  // (they do not matter for the clustered netlist).
  std::vector<int32_t> groups(flat.num_nodes(), -1);
  for (const char* n : {"S0", "S1"}) groups[flat.index_of.at(n)] = 0;
  for (const char* n : {"S2", "S3"}) groups[flat.index_of.at(n)] = 1;
  groups[flat.index_of.at("M0/a")] = 5;
  GroupingOptions opt;
  opt.canvas_width = 100;
  opt.cols = 10;
  opt.cell_area_utilization = 0.5;
  opt.max_fanout = 3;  // P2 drives 4 distinct cells: dropped
  GroupingReport rep;
  const Netlist nl = BuildGroupedNetlist(flat, groups, opt, &rep);
  EXPECT_EQ(rep.dropped_high_fanout_nets, 1);
  EXPECT_EQ(rep.grouped_stdcells, 4);
  EXPECT_EQ(rep.ungrouped_stdcells, 1);

  const std::vector<std::string> order = {
      "P0", "P1", "P2", "M0", "M0/a", "M0/b", "M1", "M1/a", "M1/b", "S4",
      "Grp_0", "Grp_0/Poutput_multi_0", "Grp_0/Poutput_single_0", "Grp_0/Pinput",
      "Grp_1", "Grp_1/Poutput_single_0", "Grp_1/Pinput"};
  ASSERT_EQ(nl.num_nodes(), static_cast<int32_t>(order.size()));
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(nl.name[i], order[i]) << i;
  EXPECT_EQ(nl.type[nl.index_of.at("Grp_0")], NodeType::kSoftMacro);
  EXPECT_EQ(nl.type[nl.index_of.at("Grp_1/Pinput")], NodeType::kSoftMacroPin);
  EXPECT_EQ(nl.type[nl.index_of.at("S4")], NodeType::kStdCell);
  EXPECT_EQ(nl.metadata.at("soft_macro_area_bloating_ratio"), 2.0);

  // Group sinks first (CT keys −g−1, ascending → highest group first), then nodes.
  EXPECT_EQ(SinksOf(nl, "P0"), (std::vector<std::string>{"Grp_0/Pinput", "M0/a"}));
  EXPECT_TRUE(SinksOf(nl, "P2").empty());  // high fan-out net dropped
  // S4 is ungrouped: a sink CT drops; S1/S2 become their groups.
  EXPECT_EQ(SinksOf(nl, "M0/b"), (std::vector<std::string>{"Grp_1/Pinput", "Grp_0/Pinput"}));
  EXPECT_EQ(SinksOf(nl, "M1/b"), (std::vector<std::string>{"P1"}));
  EXPECT_EQ(SinksOf(nl, "S4"), (std::vector<std::string>{"Grp_1/Pinput"}));
  // S1 drives S3 (twice, deduplicated) and M1/a: one multi-output pin.
  EXPECT_EQ(SinksOf(nl, "Grp_0/Poutput_multi_0"), (std::vector<std::string>{"Grp_1/Pinput", "M1/a"}));
  // S0 drives S1 (same group: dropped) and S2: a single-output pin.
  EXPECT_EQ(SinksOf(nl, "Grp_0/Poutput_single_0"), (std::vector<std::string>{"Grp_1/Pinput"}));
  EXPECT_EQ(NetWeightOf(nl, "Grp_0/Poutput_single_0"), 1.0);
  // S2 and S3 both drive S0: one single-output pin carrying both wires.
  EXPECT_EQ(SinksOf(nl, "Grp_1/Poutput_single_0"), (std::vector<std::string>{"Grp_0/Pinput"}));
  EXPECT_EQ(NetWeightOf(nl, "Grp_1/Poutput_single_0"), 2.0);
  EXPECT_TRUE(SinksOf(nl, "Grp_0/Pinput").empty());

  // Soft macro: width = canvas/cols, area = cell area / utilization, centre of cell area.
  const int32_t g1 = nl.index_of.at("Grp_1");
  EXPECT_DOUBLE_EQ(nl.width[g1], 10.0);
  EXPECT_DOUBLE_EQ(nl.height[g1], (2.0 + 4.0) / 0.5 / 10.0);
  EXPECT_DOUBLE_EQ(nl.x[g1], (80.0 * 2 + 90.0 * 4) / 6);
  EXPECT_DOUBLE_EQ(nl.y[g1], (20.0 * 2 + 30.0 * 4) / 6);
  const int32_t pin = nl.index_of.at("Grp_1/Pinput");
  EXPECT_EQ(nl.parent[pin], g1);
  EXPECT_EQ(nl.pin_dx[pin], 0.0);
  EXPECT_EQ(CountNodeTypes(nl).soft_macro_pins, 5);

  // The written file reads back to the same netlist.
  const std::string path = TempPath("small_grouped.pb.txt");
  WriteNetlist(nl, path);
  const Netlist back = ReadNetlist(path);
  ASSERT_EQ(back.num_nodes(), nl.num_nodes());
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    EXPECT_EQ(back.name[i], nl.name[i]);
    EXPECT_EQ(back.type[i], nl.type[i]) << nl.name[i];
  }
  EXPECT_EQ(back.net_pins, nl.net_pins);
  EXPECT_EQ(back.net_weight, nl.net_weight);
  EXPECT_EQ(back.metadata, nl.metadata);
}

TEST(GroupedNetlist, SparseAndHugeGroupIdsAreNames) {
  const Netlist flat = ParseNetlistText(kFlat, "flat.pb.txt");
  std::vector<int32_t> groups(flat.num_nodes(), -1);
  for (const char* n : {"S0", "S1", "S4"}) groups[flat.index_of.at(n)] = 2147483647;
  for (const char* n : {"S2", "S3"}) groups[flat.index_of.at(n)] = 40000;
  GroupingOptions opt;
  opt.canvas_width = 100;
  opt.cols = 10;
  const Netlist nl = BuildGroupedNetlist(flat, groups, opt);
  EXPECT_EQ(nl.soft_macros.size(), 2u);
  EXPECT_EQ(nl.name[nl.soft_macros[0]], "Grp_40000");  // ascending id
  EXPECT_EQ(nl.name[nl.soft_macros[1]], "Grp_2147483647");
  EXPECT_EQ(SinksOf(nl, "P0"), (std::vector<std::string>{"Grp_2147483647/Pinput", "M0/a"}));
}

TEST(GroupedNetlist, RejectsUnusableInput) {
  const Netlist flat = ParseNetlistText(kFlat, "flat.pb.txt");
  GroupingOptions opt;
  opt.canvas_width = 100;
  opt.cols = 10;
  EXPECT_THROW(BuildGroupedNetlist(flat, std::vector<int32_t>(3, 0), opt), ConfigError);
  opt.cols = 0;
  EXPECT_THROW(BuildGroupedNetlist(flat, std::vector<int32_t>(flat.num_nodes(), -1), opt), ConfigError);
}

// ---------------------------------------------------------------- the real designs

struct Design {
  const char* folder;
  bool legalized_complete;  // ng45_mempool_tile's legalized.plc lacks 219 soft-macro rows
};

PlacementSettings HeaderSettings(const PlcFile& plc, const Netlist& nl) {
  PlacementSettings s;
  const PlacementSettings& h = plc.settings;
  s.canvas_width = h.canvas_width;
  s.canvas_height = h.canvas_height;
  s.cols = h.cols;
  s.rows = h.rows;
  s.h_routes_per_micron = h.h_routes_per_micron;
  s.v_routes_per_micron = h.v_routes_per_micron;
  s.h_macro_alloc = h.h_macro_alloc;
  s.v_macro_alloc = h.v_macro_alloc;
  s.smooth_range = h.smooth_range;
  return ResolveDefaults(s, nl);
}

// Scores `plc_path` on the clustered netlist and checks the header's 4-digit costs.
void ExpectHeaderCosts(const Netlist& grouped, const std::string& plc_path) {
  const PlcFile plc = ReadPlc(plc_path);
  Netlist placed = grouped;
  ApplyPlc(plc, &placed, plc_path);
  const PlacementSettings s = HeaderSettings(plc, placed);
  const CostBreakdown c = EvaluateProxyCost(placed, s);
  const CostBreakdown google = EvaluateProxyCost(WithoutOffCanvasNets(placed, s.canvas_width, s.canvas_height), s);
  ASSERT_TRUE(plc.header_wirelength_cost && plc.header_density_cost && plc.header_congestion_cost && plc.header_wirelength);
  // Costs are printed with 4 decimals, the HPWL with 3 (from rounded positions: 1e-6 relative).
  EXPECT_NEAR(c.wirelength_cost, *plc.header_wirelength_cost, 0.5e-4) << plc_path;
  EXPECT_NEAR(c.density_cost, *plc.header_density_cost, 0.5e-4) << plc_path;
  EXPECT_NEAR(google.congestion_cost, *plc.header_congestion_cost, 0.5e-4) << plc_path;
  EXPECT_NEAR(c.hpwl, *plc.header_wirelength, 1e-6 * *plc.header_wirelength) << plc_path;
}

TEST(GroupedNetlist, TilosFlowsCountsAndCostsEqualCircuitTrainingHeaders) {
  const Design designs[] = {{"ng45_ariane136", true}, {"ng45_mempool_tile", false},
                            {"asap7_ariane136", true}, {"sky130hd_ariane133", true}};
  for (const Design& d : designs) {
    SCOPED_TRACE(d.folder);
    const std::string dir = std::string("../shared/datasets/chip/tilos_flows/") + d.folder + "/";
    const Netlist flat = ReadNetlist(dir + "netlist_flat.pb.txt.gz");
    const std::vector<int32_t> groups = ReadGroupFile(dir + "groups.final.gz", flat.num_nodes());
    const std::string plc_text = ReadFile(dir + "initial.plc");
    const PlcFile plc = ParsePlcText(plc_text, dir + "initial.plc");
    // Without the .plc: CT's default canvas (a square at 60 % use) and its grid selection
    // give the header's canvas and grid.
    const double side = std::sqrt(flat.TotalArea() / 0.6);
    EXPECT_NEAR(side, plc.settings.canvas_width, 1e-3);
    EXPECT_NEAR(side, plc.settings.canvas_height, 1e-3);
    const auto grid = SelectGrid(flat, side, side);
    ASSERT_TRUE(grid);
    EXPECT_EQ(grid->cols, plc.settings.cols);
    EXPECT_EQ(grid->rows, plc.settings.rows);
    GroupingOptions opt;
    opt.canvas_width = plc.settings.canvas_width;
    opt.cols = plc.settings.cols;
    const Netlist grouped = BuildGroupedNetlist(flat, groups, opt);
    const auto header = ParsePlcNodeCounts(plc_text, "initial.plc");
    ASSERT_TRUE(header);
    const NodeTypeCounts ours = CountNodeTypes(grouped);
    EXPECT_TRUE(ours == *header) << DescribeCountDifferences(ours, *header);
    // CT wrote each soft macro at its cells' centre: initial.plc has them there (rounded).
    Netlist placed = grouped;
    ApplyPlc(plc, &placed, "initial.plc");
    double shift = 0;
    for (int32_t m : grouped.soft_macros) {
      shift = std::max(shift, std::abs(placed.x[m] - grouped.x[m]) + std::abs(placed.y[m] - grouped.y[m]));
    }
    EXPECT_LT(shift, 0.02);
    ExpectHeaderCosts(grouped, dir + "initial.plc");
    if (d.legalized_complete) ExpectHeaderCosts(grouped, dir + "legalized.plc");
  }
}

TEST(GroupedNetlist, OffCanvasNetsAreLeftOutOfCongestionOnly) {
  Netlist nl = ParseNetlistText(kFlat, "flat.pb.txt");
  nl.x[nl.index_of.at("S3")] = 120;  // off a 100×100 canvas; S3 is a sink of S1 and P2 and drives S0
  int32_t dropped = 0;
  const Netlist kept = WithoutOffCanvasNets(nl, 100, 100, &dropped);
  EXPECT_EQ(dropped, 3);
  EXPECT_EQ(kept.num_nets(), nl.num_nets() - 3);
  EXPECT_EQ(kept.num_nodes(), nl.num_nodes());
  EXPECT_EQ(WithoutOffCanvasNets(nl, 200, 100).num_nets(), nl.num_nets());
}

// ---------------------------------------------------------------- METIS grouping

void ExpectPlaceable(const Netlist& flat, const std::vector<int32_t>& groups, const GroupingOptions& opt,
                     double canvas_height, int rows) {
  ASSERT_EQ(static_cast<int32_t>(groups.size()), flat.num_nodes());
  for (int32_t c : flat.stdcells) EXPECT_GE(groups[c], 0) << flat.name[c];
  const Netlist nl = BuildGroupedNetlist(flat, groups, opt);
  EXPECT_EQ(nl.CountType(NodeType::kStdCell), 0);
  EXPECT_GT(nl.soft_macros.size(), 0u);
  EXPECT_EQ(nl.hard_macros.size(), flat.hard_macros.size());
  EXPECT_EQ(nl.ports.size(), flat.ports.size());
  // Total soft-macro area = cell area / utilization.
  double soft = 0, cells = 0;
  for (int32_t m : nl.soft_macros) soft += nl.width[m] * nl.height[m];
  for (int32_t c : flat.stdcells) cells += flat.width[c] * flat.height[c];
  EXPECT_NEAR(soft, cells / opt.cell_area_utilization, 1e-6 * soft);
  PlacementSettings s;
  s.canvas_width = opt.canvas_width;
  s.canvas_height = canvas_height;
  s.cols = opt.cols;
  s.rows = rows;
  s = ResolveDefaults(s, nl);
  const CostBreakdown c = EvaluateProxyCost(nl, s);
  EXPECT_TRUE(std::isfinite(c.proxy_cost));
  EXPECT_GT(c.hpwl, 0);
  // Round trip through the file format.
  const std::string path = TempPath("metis_grouped.pb.txt");
  WriteNetlist(nl, path);
  const Netlist back = ReadNetlist(path);
  EXPECT_EQ(back.num_nodes(), nl.num_nodes());
  EXPECT_EQ(back.soft_macros.size(), nl.soft_macros.size());
  EXPECT_NEAR(EvaluateProxyCost(back, s).proxy_cost, c.proxy_cost, 1e-9);
}

TEST(MetisGrouping, ToyNetlistBecomesPlaceableAndIsDeterministic) {
  const Netlist flat = ReadNetlist("../shared/datasets/chip/circuit_training/toy_macro_stdcell/netlist.pb.txt");
  ASSERT_GT(flat.stdcells.size(), 4u);
  GroupingOptions opt;
  opt.canvas_width = 200;
  opt.cols = 20;
  MetisGroupingOptions m;
  m.num_groups = 3;
  m.canvas_height = 100;
  m.rows = 10;
  MetisGroupingReport rep;
  const std::vector<int32_t> level1 = MetisGroups(flat, opt, m, &rep);
  EXPECT_GT(rep.fixed_groups, 0);  // macro pins and port clusters
  EXPECT_EQ(rep.fixed_stdcells + rep.free_stdcells, static_cast<int32_t>(flat.stdcells.size()));
  EXPECT_EQ(rep.free_stdcells, 0);  // one level of logic reaches every cell of this toy
  ExpectPlaceable(flat, level1, opt, 100, 10);
  // With no logic level pulled in, METIS partitions all cells.
  m.fixed_logic_levels = 0;
  const std::vector<int32_t> groups = MetisGroups(flat, opt, m, &rep);
  EXPECT_EQ(rep.fixed_stdcells, 0);
  EXPECT_EQ(rep.metis_parts, 3);
  EXPECT_EQ(MetisGroups(flat, opt, m), groups);
  ExpectPlaceable(flat, groups, opt, 100, 10);
  // Before break-up (which may cut a group spanning more than a quarter of the canvas, pins
  // included), the pins of one macro share a group.
  m.breakup = false;
  const std::vector<int32_t> unbroken = MetisGroups(flat, opt, m);
  for (int32_t mac : flat.hard_macros) {
    for (int32_t j = flat.macro_pin_start[mac] + 1; j < flat.macro_pin_start[mac + 1]; ++j) {
      EXPECT_EQ(unbroken[flat.macro_pins[j]], unbroken[flat.macro_pins[flat.macro_pin_start[mac]]]);
    }
  }
  ExpectPlaceable(flat, unbroken, opt, 100, 10);
  // Fixed groups as vertices of the partitioned graph (as CT's hMETIS sees them).
  m.breakup = true;
  m.fixed_group_vertices = true;
  MetisGroupingReport with_fixed;
  const std::vector<int32_t> g2 = MetisGroups(flat, opt, m, &with_fixed);
  EXPECT_EQ(with_fixed.metis_parts, 3 + with_fixed.fixed_groups);
  ExpectPlaceable(flat, g2, opt, 100, 10);
}

TEST(MetisGrouping, Ibm01BookshelfBecomesPlaceable) {
  const BookshelfDesign d = ReadBookshelf("../shared/datasets/chip/ibm01_bookshelf/ibm01.aux");
  const Netlist flat = ToCircuitTrainingNets(d.netlist);
  GroupingOptions opt;
  opt.canvas_width = d.settings.canvas_width;
  opt.cols = 20;
  MetisGroupingOptions m;
  m.canvas_height = d.settings.canvas_height;
  m.rows = 20;
  MetisGroupingReport rep;
  const std::vector<int32_t> groups = MetisGroups(flat, opt, m, &rep);
  EXPECT_EQ(rep.metis_parts, 500);
  EXPECT_GE(rep.groups_after_breakup, rep.groups_final);
  EXPECT_GT(rep.groups_final, 100);
  ExpectPlaceable(flat, groups, opt, d.settings.canvas_height, 20);
}

TEST(MetisGrouping, RejectsMissingCanvas) {
  const Netlist flat = ParseNetlistText(kFlat, "flat.pb.txt");
  GroupingOptions opt;
  MetisGroupingOptions m;
  EXPECT_THROW(MetisGroups(flat, opt, m), ConfigError);
}

}  // namespace
}  // namespace placerl::chip
