// .plc input that used to be accepted silently: an empty file, two rows for one node,
// impossible blockages, routes per micron written as 0, errors found while applying rows
// (named at the row's line), and the warnings PLC-0001 (rows place only part of the
// macros) and PLC-0002 (macros off the canvas).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl::chip {
namespace {

// Two hard macros (one pin each), a port.
const char kNetlist[] = R"(
node { name: "M0" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 10 } }
  attr { key: "height" value { f: 10 } } attr { key: "x" value { f: 20 } } attr { key: "y" value { f: 20 } } }
node { name: "M0/A" input: "M1/A" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "M0" } } }
node { name: "M1" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 10 } }
  attr { key: "height" value { f: 10 } } attr { key: "x" value { f: 60 } } attr { key: "y" value { f: 60 } } }
node { name: "M1/A" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "M1" } } }
node { name: "P0" attr { key: "type" value { placeholder: "PORT" } } attr { key: "x" value { f: 0 } } attr { key: "y" value { f: 0 } } }
)";
// Node indices: M0 0, M0/A 1, M1 2, M1/A 3, P0 4.

struct Bad {
  std::string name, text;
  int line;
  std::string reason;
};

TEST(PlcChecks, SilentlyAcceptedInputIsNowAnErrorAtItsLine) {
  const std::vector<Bad> cases = {
      {"0-byte file", "", 0, "empty file"},
      {"only blank lines", "\n  \n\r\n", 0, "empty file"},
      {"duplicate row", "# Columns : 2  Rows : 2\n0 1 2 N 0\n2 5 5 N 0\n0 3 4 N 0\n", 4, "second row for node 0 (first at line 2)"},
      {"blockage min > max x", "# Blockage : 10 0 5 10 0.5\n", 1, "min is greater than max"},
      {"blockage min > max y", "# Blockage : 0 10 10 5 0.5\n", 1, "min is greater than max"},
      {"blockage rate > 1", "# Blockage : 0 0 10 10 1.5\n", 1, "rate 1.5 is outside [0, 1]"},
      {"blockage rate < 0", "# Blockage : 0 0 10 10 -0.1\n", 1, "outside [0, 1]"},
      {"routes 0 0", "# Columns : 2  Rows : 2\n# Routes per micron, hor : 0  ver : 0\n", 2, "leave the line out to get the defaults"},
      {"routes 0 hor", "# Routes per micron, hor : 0  ver : 5\n", 1, "must be positive"},
      {"negative macro alloc", "# Routes used by macros, hor : -1  ver : 5\n", 1, "negative macro routing allocation"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.name);
    try {
      ParsePlcText(b.text, "bad.plc");
      ADD_FAILURE() << "no error for " << b.name;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), b.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.reason), std::string::npos) << e.what();
    }
  }
  // Still fine: a header-only file, a blockage of rate 0 and 1, a 0-area blockage.
  EXPECT_NO_THROW(ParsePlcText("# Columns : 2  Rows : 2\n", "ok.plc"));
  EXPECT_NO_THROW(ParsePlcText("# Blockage : 0 0 10 10 0\n# Blockage : 5 5 5 5 1\n", "ok.plc"));
}

// Issue 29 item 2: Ariane's initial.plc cut in its last row (`head -c 41346`) read
// "19882 240.781 10" as a legal row with y = 10 and changed the cost without a word. A last
// row without a newline is now refused at its line unless it has all five fields; Circuit
// Training's own files, which end after a whole row without a newline, still read.
TEST(PlcChecks, RowCutAtTheEndIsRefusedAtItsLine) {
  const std::string a = "../shared/datasets/chip/ariane133_ng45/initial.plc";
  std::ifstream in(a, std::ios::binary);
  std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(full.size(), 41346u);
  const std::string cut = full.substr(0, 41346);
  ASSERT_EQ(cut.substr(cut.size() - 16), "19882 240.781 10");
  int lines = 1;
  for (char c : cut) lines += c == '\n';
  try {
    ParsePlcText(cut, "t.plc");
    ADD_FAILURE() << "a .plc cut in its last row was read";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), lines);
    EXPECT_NE(std::string(e.what()).find("no newline at end of file: the last line ('19882 240.781 10') may be truncated"),
              std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(ParsePlcText(full, "full.plc"));
  // Whole rows and harmless comments without a newline are read; cut rows and header lines
  // whose numbers could be cut are not.
  EXPECT_EQ(ParsePlcText("0 1 2 N 0\n2 5 5 N 1", "ok.plc").rows.size(), 2u);
  EXPECT_NO_THROW(ParsePlcText("0 1 2 N 0\n# node_index x y orientation fixed", "ok.plc"));
  for (const char* bad : {"0 1 2 N 0\n2 5 5 N", "0 1 2 N 0\n2 5 5", "0 1 2 N 0\n2 5", "# Columns : 20  Rows : 1",
                          "# Width : 500  Height : 50", "0 1 2 N 0\n# Blockage : 0 0 10 10 0.5"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(ParsePlcText(bad, "cut.plc"), ParseError);
  }
  for (const char* ct : {"simple_grouped_with_coords", "simple_with_coords", "toy_macro_stdcell"}) {
    SCOPED_TRACE(ct);
    EXPECT_NO_THROW(ReadPlc(std::string("../shared/datasets/chip/circuit_training/") + ct + "/initial.plc"));
  }
}

TEST(PlcChecks, EmptyFileOnDisk) {
  const std::string p = "/tmp/placerl_plc_test_empty_" + std::to_string(::getpid()) + ".plc";
  std::ofstream(p).close();
  try {
    ReadPlc(p);
    ADD_FAILURE() << "no error for a 0-byte .plc";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), p + ":0: empty file (neither a header nor placement rows)");
  }
  std::filesystem::remove(p);
}

TEST(PlcChecks, ApplyErrorsNameTheRowsLine) {
  Netlist nl = ParseNetlistText(kNetlist, "n.pb.txt");
  const std::string text = "# Columns : 2  Rows : 2\n0 1 2 N 0\n\n9 1 2 N 0\n";
  try {
    ApplyPlc(ParsePlcText(text, "x.plc"), &nl, "x.plc");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();  // was line 0
    EXPECT_NE(std::string(e.what()).find("row for node 9 but the netlist has 5 nodes"), std::string::npos);
  }
  try {
    ApplyPlc(ParsePlcText("# x\n3 1 2 N 0\n", "x.plc"), &nl, "x.plc");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2) << e.what();
    EXPECT_NE(std::string(e.what()).find("which is a pin"), std::string::npos);
  }
}

TEST(PlcChecks, PartialPlacementWarnsWithCount) {
  Netlist nl = ParseNetlistText(kNetlist, "n.pb.txt");
  {
    ScopedWarningCapture w;
    ApplyPlc(ParsePlcText("0 30 30 N 0\n4 0 0 - 1\n", "part.plc"), &nl, "part.plc");
    ASSERT_EQ(w.ids(), std::vector<std::string>{"PLC-0001"});
    EXPECT_EQ(w.warnings()[0].message, "part.plc: rows place 1 of 2 macros; the other 1 keep the netlist's positions");
  }
  EXPECT_EQ(nl.x[0], 30);
  ScopedWarningCapture w;
  ApplyPlc(ParsePlcText("0 30 30 N 0\n2 50 50 N 0\n", "all.plc"), &nl, "all.plc");  // all macros
  ApplyPlc(ParsePlcText("# Columns : 3  Rows : 3\n", "header.plc"), &nl, "header.plc");  // settings only
  ApplyPlc(ParsePlcText("4 1 1 - 1\n", "ports.plc"), &nl, "ports.plc");               // no macro rows
  EXPECT_TRUE(w.ids().empty());
}

TEST(PlcChecks, MacrosOffTheCanvasWarn) {
  Netlist nl = ParseNetlistText(kNetlist, "n.pb.txt");
  PlacementSettings s;
  s.canvas_width = s.canvas_height = 100;
  ScopedWarningCapture w;
  EXPECT_EQ(WarnMacrosOffCanvas(nl, s, "in.plc"), 0);
  nl.x[2] = 130;
  nl.y[0] = -1;
  EXPECT_EQ(WarnMacrosOffCanvas(nl, s, "in.plc"), 2);
  ASSERT_EQ(w.ids(), std::vector<std::string>{"PLC-0002"});
  EXPECT_EQ(w.warnings()[0].message,
            "in.plc: 2 macros have their centre outside the 100 x 100 canvas (first: 'M0' at (20, -1)); "
            "the cost counts them in the nearest grid cell");
}

}  // namespace
}  // namespace placerl::chip
