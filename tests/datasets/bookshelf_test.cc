// Tests of the Bookshelf reader (ibm01 counts, small hand-made designs, malformed files)
// and of the conversion to Circuit Training nets (round trip through netlist.pb.txt).
#include "datasets/chip/bookshelf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

const char* kIbm01 = "../shared/datasets/chip/ibm01_bookshelf/ibm01.aux";

std::string MakeTempDir() {
  char tmpl[] = "/tmp/placerl_bookshelf_XXXXXX";
  const char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? std::string(d) : std::string("/tmp");
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// A small valid design: 2 pads, 1 fixed macro terminal, 1 movable macro, 3 std cells.
std::map<std::string, std::string> SmallDesign() {
  std::map<std::string, std::string> f;
  f["nodes"] =
      "UCLA nodes 1.0\n"
      "# a comment\n"
      "\n"
      "NumNodes : 7\n"
      "NumTerminals : 3\n"
      "  pa 0 0 terminal\n"
      "  pb 2 2 terminal_NI\n"
      "  fixm 40 40 terminal\n"
      "  mac 20 30\n"
      "  c1 4 10\n"
      "  c2 6 10\n"
      "  c3 2 10\n";
  f["nets"] =
      "UCLA nets 1.0\n"
      "NumNets : 3\n"
      "NumPins : 8\n"
      "NetDegree : 3 netA\n"
      "  c1 I\n"
      "  mac O : 2.5 -3\n"
      "  pa I\n"
      "NetDegree : 2 netB\n"
      "  c2 B\n"
      "  c3 B\n"
      "NetDegree : 3   # unnamed → n2\n"
      "  fixm I : 1 1\n"
      "  mac I : -1 0\n"
      "  pb O\n";
  f["wts"] = "UCLA wts 1.0\n netB 3\n c1 7\n";
  f["pl"] =
      "UCLA pl 1.0\n"
      "pa 100 -5 : N /FIXED\n"
      "pb -4 50 : N /FIXED\n"
      "fixm 150 150 : N /FIXED\n"
      "mac 30 40 : N\n"
      "c1 10 10 : N\n"
      "c2 20 20 : FS\n"
      "c3 60 0 : N\n";
  f["scl"] =
      "UCLA scl 1.0\n"
      "NumRows : 2\n"
      "CoreRow Horizontal\n Coordinate : 10\n Height : 10\n Sitewidth : 1\n Sitespacing : 1\n"
      " Siteorient : N\n Sitesymmetry : Y\n SubrowOrigin : 5 Numsites : 200\nEnd\n"
      "CoreRow Horizontal\n Coordinate : 20\n Height : 10\n Sitewidth : 1\n Sitespacing : 1\n"
      " SubrowOrigin : 5 Numsites : 200\nEnd\n";
  return f;
}

std::string WriteDesign(const std::map<std::string, std::string>& files, const std::string& dir) {
  std::string aux = "RowBasedPlacement :";
  for (const auto& [ext, text] : files) {
    WriteText(dir + "/d." + ext, text);
    aux += " d." + ext;
  }
  WriteText(dir + "/d.aux", aux + "\n");
  return dir + "/d.aux";
}

double Hpwl(const Netlist& nl, const PlacementSettings& s) {
  ProxyCost cost(nl, ResolveDefaults(s, nl));
  return cost.EvaluateFull().hpwl;
}

TEST(Bookshelf, SmallDesignMapping) {
  const std::string dir = MakeTempDir();
  const BookshelfDesign d = ReadBookshelf(WriteDesign(SmallDesign(), dir));
  const Netlist& nl = d.netlist;
  EXPECT_EQ(d.bookshelf_nodes, 7);
  EXPECT_EQ(d.bookshelf_terminals, 3);
  EXPECT_EQ(d.bookshelf_pins, 8);
  EXPECT_EQ(d.num_rows, 2);
  EXPECT_DOUBLE_EQ(d.row_height, 10);
  EXPECT_DOUBLE_EQ(d.origin_x, 5);
  EXPECT_DOUBLE_EQ(d.origin_y, 10);
  EXPECT_DOUBLE_EQ(d.settings.canvas_width, 200);
  EXPECT_DOUBLE_EQ(d.settings.canvas_height, 20);
  // Types.
  EXPECT_EQ(nl.type[nl.index_of.at("pa")], NodeType::kPort);
  EXPECT_EQ(nl.type[nl.index_of.at("pb")], NodeType::kPort);
  EXPECT_EQ(nl.type[nl.index_of.at("fixm")], NodeType::kHardMacro);
  EXPECT_EQ(nl.fixed[nl.index_of.at("fixm")], 1);
  EXPECT_EQ(nl.type[nl.index_of.at("mac")], NodeType::kHardMacro);
  EXPECT_EQ(nl.fixed[nl.index_of.at("mac")], 0);
  EXPECT_EQ(nl.type[nl.index_of.at("c1")], NodeType::kStdCell);
  EXPECT_EQ(d.movable_macros, 1);
  EXPECT_EQ(d.fixed_macros, 1);
  // Lower-left → centre, minus the core origin (5, 10).
  const int32_t mac = nl.index_of.at("mac");
  EXPECT_DOUBLE_EQ(nl.x[mac], 30 + 10 - 5);
  EXPECT_DOUBLE_EQ(nl.y[mac], 40 + 15 - 10);
  EXPECT_DOUBLE_EQ(nl.width[mac], 20);
  EXPECT_DOUBLE_EQ(nl.height[mac], 30);
  EXPECT_EQ(nl.side[nl.index_of.at("pa")], Side::kBottom);
  EXPECT_EQ(nl.side[nl.index_of.at("pb")], Side::kLeft);
  // Nets: driver first (the O pin), macro connections are pins with offsets.
  ASSERT_EQ(nl.num_nets(), 3);
  const int32_t a_drv = nl.net_pins[nl.net_start[0]];
  EXPECT_EQ(nl.name[a_drv], "mac/netA_0");
  EXPECT_EQ(nl.parent[a_drv], mac);
  EXPECT_DOUBLE_EQ(nl.pin_dx[a_drv], 2.5);
  EXPECT_DOUBLE_EQ(nl.pin_dy[a_drv], -3);
  EXPECT_EQ(nl.net_start[1] - nl.net_start[0], 3);
  EXPECT_EQ(nl.name[nl.net_pins[nl.net_start[2]]], "pb");
  EXPECT_TRUE(nl.index_of.count("fixm/n2_0"));
  EXPECT_TRUE(nl.index_of.count("mac/n2_0"));
  EXPECT_EQ(nl.CountType(NodeType::kHardMacroPin), 3);
  // Weights: netB from .wts; node weights ignored.
  EXPECT_DOUBLE_EQ(nl.net_weight[0], 1);
  EXPECT_DOUBLE_EQ(nl.net_weight[1], 3);
  EXPECT_EQ(d.weighted_nets, 1);
  EXPECT_EQ(d.ignored_node_weights, 1);
}

TEST(Bookshelf, Ibm01Counts) {
  const BookshelfDesign d = ReadBookshelf(kIbm01);
  const Netlist& nl = d.netlist;
  EXPECT_EQ(d.bookshelf_nodes, 12752);
  EXPECT_EQ(d.bookshelf_terminals, 246);
  EXPECT_EQ(d.bookshelf_nets, 14111);
  EXPECT_EQ(d.bookshelf_pins, 50566);
  EXPECT_EQ(nl.num_nets(), 14111);
  EXPECT_EQ(static_cast<int64_t>(nl.net_pins.size()), 50566);
  EXPECT_EQ(nl.ports.size(), 246u);
  EXPECT_EQ(nl.hard_macros.size(), 246u);
  EXPECT_EQ(d.movable_macros, 246);
  EXPECT_EQ(d.fixed_macros, 0);
  EXPECT_EQ(nl.stdcells.size(), 12752u - 246u - 246u);
  EXPECT_EQ(nl.ports.size() + nl.hard_macros.size() + nl.stdcells.size(), 12752u);
  // Every macro connection is one pin node.
  EXPECT_EQ(nl.num_nodes(), 12752 + nl.CountType(NodeType::kHardMacroPin));
  EXPECT_EQ(d.num_rows, 144);
  EXPECT_DOUBLE_EQ(d.row_height, 16);
  EXPECT_DOUBLE_EQ(d.settings.canvas_width, 2295);
  EXPECT_DOUBLE_EQ(d.settings.canvas_height, 144 * 16);
  for (int32_t i : nl.hard_macros) EXPECT_GT(nl.height[i], 16);
  // .wts of ibm01 holds node weights only.
  EXPECT_EQ(d.weighted_nets, 0);
  EXPECT_EQ(d.ignored_node_weights, 12752);
}

TEST(Bookshelf, Ibm01ConvertedRoundTrip) {
  const BookshelfDesign d = ReadBookshelf(kIbm01);
  CtConversionReport rep;
  const Netlist ct = ToCircuitTrainingNets(d.netlist, &rep);
  EXPECT_EQ(rep.nets_in, 14111);
  EXPECT_EQ(rep.nets_out + rep.nets_merged, 14111);
  EXPECT_EQ(ct.num_nets(), rep.nets_out);
  // Every driver drives exactly one net.
  std::vector<int> drives(ct.num_nodes(), 0);
  for (int32_t k = 0; k < ct.num_nets(); ++k) EXPECT_EQ(drives[ct.net_pins[ct.net_start[k]]]++, 0);
  const std::string dir = MakeTempDir();
  WriteNetlist(ct, dir + "/netlist.pb.txt");
  const Netlist back = ReadNetlist(dir + "/netlist.pb.txt");
  EXPECT_EQ(back.num_nodes(), ct.num_nodes());
  EXPECT_EQ(back.num_nets(), ct.num_nets());
  EXPECT_EQ(back.net_pins.size(), ct.net_pins.size());
  EXPECT_EQ(back.hard_macros.size(), 246u);
  EXPECT_EQ(back.ports.size(), 246u);
  const double h1 = Hpwl(ct, d.settings), h2 = Hpwl(back, d.settings);
  EXPECT_GT(h1, 0);
  EXPECT_NEAR(h1, h2, 1e-9 * h1);
  // Exact merges keep HPWL; the conversion changes it by little overall.
  const double h0 = Hpwl(d.netlist, d.settings);
  EXPECT_NEAR(h0, h1, 0.05 * h0);
}

// Files that end without a newline are still read where the last line cannot have been cut:
// a comment, or the .scl's closing "End".
TEST(Bookshelf, LastLineWithoutNewlineReadWhenWhole) {
  auto f = SmallDesign();
  f["scl"].pop_back();  // "...\nEnd"
  f["wts"] += "# end of weights";
  const std::string dir = MakeTempDir();
  EXPECT_NO_THROW(ReadBookshelf(WriteDesign(f, dir)));
}

TEST(Bookshelf, ConversionMergesParallelNets) {
  auto f = SmallDesign();
  // Three nets between c2 and c3 (only two drivers available) + netA + n2.
  f["nets"] =
      "UCLA nets 1.0\nNumNets : 4\nNumPins : 9\n"
      "NetDegree : 3 netA\n c1 I\n mac O\n pa I\n"
      "NetDegree : 2 x1\n c2 O\n c3 I\n"
      "NetDegree : 2 x2\n c2 O\n c3 I\n"
      "NetDegree : 2 x3\n c3 O\n c2 I\n";
  f["wts"] = "UCLA wts 1.0\n x3 2\n";
  const std::string dir = MakeTempDir();
  const BookshelfDesign d = ReadBookshelf(WriteDesign(f, dir));
  CtConversionReport rep;
  const Netlist ct = ToCircuitTrainingNets(d.netlist, &rep);
  EXPECT_EQ(rep.nets_in, 4);
  EXPECT_EQ(rep.nets_merged, 1);
  EXPECT_EQ(rep.nets_merged_exact, 1);
  EXPECT_EQ(rep.nets_out, 3);
  EXPECT_GE(rep.drivers_reassigned, 1);
  // Total weight is kept by an exact merge: 1 + 1 + 1 + 2.
  double wsum = 0;
  for (double w : ct.net_weight) wsum += w;
  EXPECT_DOUBLE_EQ(wsum, 5);
  EXPECT_NEAR(Hpwl(ct, d.settings), Hpwl(d.netlist, d.settings), 1e-9);
}

// ---- malformed inputs: each gives ParseError "file:line: reason" ----

struct BadCase {
  const char* label;
  const char* file;      // which file is replaced
  const char* text;
  const char* bad_file;  // expected file name suffix in the message
  int line;              // expected line (-1: any)
  const char* reason;    // expected fragment of the reason
};

class BookshelfMalformed : public ::testing::TestWithParam<BadCase> {};

TEST_P(BookshelfMalformed, GivesFileLineReason) {
  const BadCase& c = GetParam();
  auto f = SmallDesign();
  f[c.file] = c.text ? std::string(c.text) : "UCLA pl 1.0\n" + std::string(size_t(3) << 20, 'a') + "\n";
  const std::string dir = MakeTempDir();
  const std::string aux = WriteDesign(f, dir);
  try {
    ReadBookshelf(aux);
    FAIL() << c.label << ": no error";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::string("d.") + c.bad_file + ":"), std::string::npos) << what;
    if (c.line >= 0) {
      EXPECT_EQ(e.line(), c.line) << what;
    }
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BookshelfMalformed,
    ::testing::Values(
        BadCase{"truncated_nets", "nets",
                "UCLA nets 1.0\nNumNets : 2\nNumPins : 5\nNetDegree : 2 a\n c1 I\n c2 O\n"
                "NetDegree : 3 b\n c1 I\n",
                "nets", 7, "declares 3 pins but 1 follow"},
        BadCase{"pin_missing_node", "nets",
                "UCLA nets 1.0\nNetDegree : 2 a\n c1 I\n ghost O\n", "nets", 4,
                "unknown node 'ghost'"},
        BadCase{"numnodes_mismatch", "nodes",
                "UCLA nodes 1.0\nNumNodes : 9\nNumTerminals : 3\n pa 0 0 terminal\n"
                " pb 2 2 terminal_NI\n fixm 40 40 terminal\n mac 20 30\n c1 4 10\n c2 6 10\n c3 2 10\n",
                "nodes", 2, "NumNodes is 9 but 7"},
        BadCase{"garbage_bytes", "nodes", "UCLA nodes 1.0\n\x89PNG\x01\x02\xff\xfe garbage\n", "nodes", 2,
                "binary"},
        BadCase{"negative_size", "nodes",
                "UCLA nodes 1.0\n pa 0 0 terminal\n pb 2 2 terminal_NI\n fixm 40 40 terminal\n"
                " mac -20 30\n c1 4 10\n c2 6 10\n c3 2 10\n",
                "nodes", 5, "negative size"},
        BadCase{"nan_size", "nodes", "UCLA nodes 1.0\n pa nan 0 terminal\n", "nodes", 2, "not finite"},
        BadCase{"unknown_node_kind", "nodes", "UCLA nodes 1.0\n pa 1 1 pad\n", "nodes", 2,
                "unknown node kind"},
        BadCase{"pl_unknown_node", "pl", "UCLA pl 1.0\nzz 1 2 : N\n", "pl", 2, "unknown node 'zz'"},
        BadCase{"pl_bad_orientation", "pl", "UCLA pl 1.0\nmac 1 2 : Q\n", "pl", 2, "unknown orientation"},
        BadCase{"scl_missing_end", "scl",
                "UCLA scl 1.0\nNumRows : 1\nCoreRow Horizontal\n Coordinate : 0\n Height : 10\n", "scl", 3,
                "not closed"},
        BadCase{"numpins_mismatch", "nets",
                "UCLA nets 1.0\nNumNets : 1\nNumPins : 4\nNetDegree : 2 a\n c1 I\n c2 O\n", "nets", 3,
                "NumPins is 4 but 2"},
        BadCase{"bad_number", "nets", "UCLA nets 1.0\nNetDegree : two a\n", "nets", 2,
                "expected a number"},
        BadCase{"wts_unknown_name", "wts", "UCLA wts 1.0\n nobody 3\n", "wts", 2, "neither a net nor a node"},
        BadCase{"huge_line", "pl", nullptr, "pl", 2, "longer than 1 MiB"},
        // Cut in the last row (no newline at the end): "c3 60" from "c3 60 0 : N" read as a
        // legal row; "c3 2 1" from "c3 2 10" as a smaller cell.
        BadCase{"pl_cut_last_row", "pl",
                "UCLA pl 1.0\npa 100 -5 : N /FIXED\npb -4 50 : N /FIXED\nfixm 150 150 : N /FIXED\nmac 30 40 : N\n"
                "c1 10 10 : N\nc2 20 20 : FS\nc3 60",
                "pl", 8, "no newline at end of file: the last line ('c3 60') may be truncated"},
        BadCase{"nodes_cut_last_row", "nodes",
                "UCLA nodes 1.0\nNumNodes : 7\nNumTerminals : 3\n pa 0 0 terminal\n pb 2 2 terminal_NI\n"
                " fixm 40 40 terminal\n mac 20 30\n c1 4 10\n c2 6 10\n c3 2 1",
                "nodes", 10, "may be truncated"},
        BadCase{"nets_cut_last_pin", "nets",
                "UCLA nets 1.0\nNetDegree : 2 a\n c1 I\n c2 O : 0.5 0.", "nets", 4, "may be truncated"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.label); });

}  // namespace
}  // namespace placerl::chip
