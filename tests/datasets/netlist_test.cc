// Circuit Training netlist and .plc formats: every shipped netlist loads with the counts
// its .plc header states; files round-trip; malformed input gives file:line errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("placerl_netlist_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

TEST(Netlist, Ariane133CountsMatchHeader) {
  const Netlist nl = ReadNetlist("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  // 19,887 nodes + the __metadata__ node (the datasets README counts 19,888 with it).
  EXPECT_EQ(nl.num_nodes(), 133 + 782 + 495 + 7847 + 10630);
  EXPECT_EQ(nl.hard_macros.size(), 133u);
  EXPECT_EQ(nl.soft_macros.size(), 782u);
  EXPECT_EQ(nl.ports.size(), 495u);
  EXPECT_EQ(nl.CountType(NodeType::kHardMacroPin), 7847);
  EXPECT_EQ(nl.CountType(NodeType::kSoftMacroPin), 10630);
  EXPECT_EQ(nl.metadata.at("soft_macro_area_bloating_ratio"), 2.0);
  // Node indices are file order without __metadata__: the first port is clk_i.
  EXPECT_EQ(nl.name[0], "clk_i");
  EXPECT_EQ(nl.index_of.at("clk_i"), 0);
  // The .plc lists exactly the ports and macros.
  const PlcFile plc = ReadPlc("../shared/datasets/chip/ariane133_ng45/initial.plc");
  EXPECT_EQ(plc.rows.size(), 133u + 782u + 495u);
  EXPECT_EQ(plc.settings.cols, 24);
  EXPECT_EQ(plc.settings.rows, 21);
  EXPECT_DOUBLE_EQ(plc.settings.canvas_width, 1433.406);
  EXPECT_DOUBLE_EQ(plc.settings.h_routes_per_micron, 57.031);
  EXPECT_DOUBLE_EQ(plc.settings.v_macro_alloc, 30.303);
  ASSERT_TRUE(plc.header_congestion_cost.has_value());
  EXPECT_DOUBLE_EQ(*plc.header_congestion_cost, 0.7128);
}

TEST(Netlist, SampleClusteredIndicesAsCircuitTraining) {
  // CT numbering: P0=0, P1=1, M0=2, M1=3, pins 4–7, Grp_2=8, its pins 9–10.
  const Netlist nl = ReadNetlist("../shared/datasets/chip/circuit_training/sample_clustered/netlist.pb.txt");
  EXPECT_EQ(nl.num_nodes(), 11);
  EXPECT_EQ(nl.type[0], NodeType::kPort);
  EXPECT_EQ(nl.type[2], NodeType::kHardMacro);
  EXPECT_EQ(nl.type[3], NodeType::kHardMacro);
  EXPECT_EQ(nl.type[8], NodeType::kSoftMacro);
  EXPECT_EQ(nl.type[9], NodeType::kSoftMacroPin);
  EXPECT_EQ(nl.parent[9], 8);
}

TEST(Netlist, MacroTilesLowercaseMacrosAreHard) {
  // Google's test asserts is_node_soft_macro(13) == False for this file.
  const Netlist nl = ReadNetlist("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt");
  EXPECT_EQ(nl.hard_macros.size(), 100u);
  EXPECT_EQ(nl.soft_macros.size(), 0u);
  EXPECT_EQ(nl.num_nets(), 540);
  EXPECT_EQ(nl.CountType(NodeType::kHardMacroPin), 1200);
}

TEST(Netlist, EveryShippedNetlistLoads) {
  int loaded = 0;
  for (const char* root : {"../shared/datasets/chip/circuit_training", "../shared/datasets/chip/tilos_unit"}) {
    for (const auto& dir : fs::directory_iterator(root)) {
      for (const auto& f : fs::directory_iterator(dir.path())) {
        const std::string p = f.path().string();
        if (p.size() < 7 || p.substr(p.size() - 7) != ".pb.txt") continue;
        SCOPED_TRACE(p);
        const Netlist nl = ReadNetlist(p);
        EXPECT_GT(nl.num_nodes(), 0);
        const fs::path plc = dir.path() / (f.path().filename() == "simple.pb.txt" ? "simple.plc" : "initial.plc");
        if (fs::exists(plc)) {
          // Some TILOS unit cases pair a netlist with the .plc of another version of it
          // (hard2soft, port2soft, ...): a row then names a pin — a clean error, not a crash.
          Netlist placed = nl;
          const PlcFile pf = ReadPlc(plc.string());
          try {
            ApplyPlc(pf, &placed, plc.string());
          } catch (const ParseError& e) {
            EXPECT_NE(std::string(e.what()).find(plc.string()), std::string::npos);
          }
        }
        ++loaded;
      }
    }
  }
  EXPECT_GE(loaded, 20);
}

TEST(Netlist, MultipleFilesCommaSeparated) {
  // Split sample_clustered into two shards: nodes keep file order across shards.
  const std::string text = ReadFile("../shared/datasets/chip/circuit_training/sample_clustered/netlist.pb.txt");
  const size_t cut = text.find("node {", text.find("name: \"M1\"") - 40);
  ASSERT_NE(cut, std::string::npos);
  const std::string a = TempPath("shard_a.pb.txt"), b = TempPath("shard_b.pb.txt");
  WriteFileAtomic(a, text.substr(0, cut));
  WriteFileAtomic(b, text.substr(cut));
  const Netlist whole = ParseNetlistText(text, "whole");
  const Netlist split = ReadNetlist(a + "," + b);
  EXPECT_EQ(split.num_nodes(), whole.num_nodes());
  EXPECT_EQ(split.num_nets(), whole.num_nets());
  EXPECT_EQ(split.name, whole.name);
}

TEST(Netlist, WriteReadRoundTrip) {
  Netlist nl = ReadNetlist("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  const std::string p = TempPath("rt.pb.txt");
  WriteNetlist(nl, p);
  const Netlist back = ReadNetlist(p);
  ASSERT_EQ(back.num_nodes(), nl.num_nodes());
  EXPECT_EQ(back.type, nl.type);
  EXPECT_EQ(back.parent, nl.parent);
  EXPECT_EQ(back.net_pins, nl.net_pins);
  EXPECT_EQ(back.net_weight, nl.net_weight);
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    if (nl.parent[i] < 0) ASSERT_EQ(back.x[i], nl.x[i]) << nl.name[i];  // pins: written at macro + offset
  }
  EXPECT_EQ(back.pin_dx, nl.pin_dx);
  EXPECT_EQ(NetlistToText(back), NetlistToText(nl));
}

TEST(Plc, WriteReadRoundTripIsExact) {
  Netlist nl = ReadNetlist("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  const PlcFile in = ReadPlc("../shared/datasets/chip/ariane133_ng45/legalized.plc");
  ApplyPlc(in, &nl, "legalized.plc");
  nl.x[nl.hard_macros[0]] += 0.1234567890123;  // a value that needs all 17 digits
  nl.orientation[nl.hard_macros[1]] = Orientation::kFS;
  PlacementSettings s = in.settings;
  s.blockages.push_back({1.5, 2.5, 100.25, 200.125, 0.99});
  const PlcCosts costs{123.456, 0.1, 0.2, 0.3};
  const std::string p = TempPath("rt.plc");
  WritePlc(nl, s, &costs, p);
  const PlcFile back = ReadPlc(p);
  EXPECT_EQ(back.settings.cols, s.cols);
  EXPECT_EQ(back.settings.canvas_width, s.canvas_width);
  EXPECT_EQ(back.settings.h_routes_per_micron, s.h_routes_per_micron);
  EXPECT_EQ(back.settings.smooth_range, s.smooth_range);
  ASSERT_EQ(back.settings.blockages.size(), 1u);
  EXPECT_EQ(back.settings.blockages[0].maxy, 200.125);
  EXPECT_DOUBLE_EQ(*back.header_density_cost, 0.3);
  Netlist nl2 = ReadNetlist("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  ApplyPlc(back, &nl2, p);
  EXPECT_EQ(nl2.x, nl.x);
  EXPECT_EQ(nl2.y, nl.y);
  EXPECT_EQ(nl2.orientation, nl.orientation);
}

// ---- malformed input: each gives ParseError with file:line, never a crash or a hang ----

struct Bad {
  const char* name;
  std::string text;
  int line;            // expected line (0 = any)
  const char* reason;  // substring of the reason
};

const char* kGood = R"(node {
  name: "M0"
  attr { key: "type" value { placeholder: "MACRO" } }
  attr { key: "width" value { f: 10 } }
  attr { key: "height" value { f: 10 } }
  attr { key: "x" value { f: 5 } }
  attr { key: "y" value { f: 5 } }
}
node {
  name: "M0/P"
  input: "P0"
  attr { key: "type" value { placeholder: "MACRO_PIN" } }
  attr { key: "macro_name" value { placeholder: "M0" } }
}
node {
  name: "P0"
  attr { key: "type" value { placeholder: "PORT" } }
  attr { key: "x" value { f: 0 } }
  attr { key: "y" value { f: 0 } }
}
)";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t p = s.find(from);
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

TEST(NetlistMalformed, GoodBaseParses) {
  const Netlist nl = ParseNetlistText(kGood, "good.pb.txt");
  EXPECT_EQ(nl.num_nodes(), 3);
  EXPECT_EQ(nl.num_nets(), 1);
}

TEST(NetlistMalformed, EachCaseNamesFileAndLine) {
  const std::string g = kGood;
  const std::vector<Bad> cases = {
      {"truncated", g.substr(0, g.find("  attr", g.find("name: \"P0\""))), 15, "not closed"},
      {"unknown type", Replace(g, "\"PORT\"", "\"FLIPFLOP\""), 17, "unknown node type 'FLIPFLOP'"},
      {"missing width", Replace(g, "  attr { key: \"width\" value { f: 10 } }\n", ""), 1, "no 'width'"},
      {"missing type", Replace(g, "  attr { key: \"type\" value { placeholder: \"PORT\" } }\n", ""), 15, "no 'type'"},
      {"pin to missing node", Replace(g, "input: \"P0\"", "input: \"P9\""), 11, "missing node"},
      {"pin of missing macro", Replace(g, "placeholder: \"M0\" }", "placeholder: \"M7\" }"), 13, "missing macro 'M7'"},
      {"NaN size", Replace(g, "f: 10 } }\n  attr { key: \"height\"", "f: nan } }\n  attr { key: \"height\""), 4, "not finite"},
      {"negative size", Replace(g, "key: \"height\" value { f: 10 }", "key: \"height\" value { f: -3 }"), 5, "negative size"},
      {"huge line", Replace(g, "name: \"P0\"", "name: \"" + std::string(3 << 20, 'x') + "\""), 16, "longer than 1 MiB"},
      {"binary garbage", std::string("node {\n  name: \"A\"\n") + std::string("\x01\x02\xff\xfe garbage", 12), 3, "unexpected byte"},
      {"unterminated string", Replace(g, "name: \"P0\"", "name: \"P0"), 16, "unterminated string"},
      {"duplicate name", Replace(g, "name: \"P0\"", "name: \"M0\""), 15, "duplicate node name"},
      {"bad number", Replace(g, "f: 5 } }", "f: 5.5.5 } }"), 6, "malformed number"},
      {"string where number", Replace(g, "value { f: 5 } }", "value { placeholder: \"five\" } }"), 6, "must be a number"},
      {"bad orientation", Replace(g, "  attr { key: \"x\" value { f: 5 } }", "  attr { key: \"orientation\" value { placeholder: \"Q\" } }\n  attr { key: \"x\" value { f: 5 } }"), 6, "unknown orientation"},
      {"empty file", "", 0, "no nodes"},
      {"not a netlist", "hello world\n", 1, ""},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.name);
    try {
      ParseNetlistText(b.text, "bad.pb.txt");
      ADD_FAILURE() << "no error for " << b.name;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "bad.pb.txt");
      if (b.line > 0) EXPECT_EQ(e.line(), b.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.reason), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("bad.pb.txt:", 0), 0u) << e.what();
    }
  }
}

// A netlist cut mid-way (at any byte but exactly after a node's closing brace) fails to
// parse: verified on Ariane at 40 offsets. A file cut after a top-level scalar would parse, so
// a last line without a newline must end with '}' (as Circuit Training's files do).
TEST(NetlistMalformed, CutTextFailsToParse) {
  const std::string text = ReadFile("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  for (int k = 1; k <= 40; ++k) {
    const size_t at = text.size() / 41 * k + 7 * k;
    SCOPED_TRACE(at);
    EXPECT_THROW(ParseNetlistText(text.substr(0, at), "cut.pb.txt"), ParseError);
  }
  const std::string good = kGood;
  ASSERT_EQ(good.back(), '\n');
  EXPECT_EQ(ParseNetlistText(good.substr(0, good.size() - 1), "x.pb.txt").num_nodes(), 3);  // ends with '}'
  EXPECT_EQ(ParseNetlistText(good + "# end", "x.pb.txt").num_nodes(), 3);
  try {
    ParseNetlistText(good + "versions_x: 12", "cut.pb.txt");
    ADD_FAILURE() << "a last top-level value without a newline was read";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("no newline at end of file: the last line ('versions_x: 12') may be truncated"),
              std::string::npos) << e.what();
  }
}

TEST(NetlistMalformed, CorruptAndTruncatedGzip) {
  const std::string gz = ReadFile("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz", 1u << 30);
  std::ifstream raw("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  const std::string trunc = TempPath("trunc.pb.txt.gz");
  WriteFileAtomic(trunc, bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(ReadNetlist(trunc), ParseError);
  std::string corrupt = bytes;
  for (size_t i = 100; i < 400; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  const std::string bad = TempPath("corrupt.pb.txt.gz");
  WriteFileAtomic(bad, corrupt);
  EXPECT_THROW(ReadNetlist(bad), ParseError);
  EXPECT_THROW(ReadNetlist(TempPath("does_not_exist.pb.txt")), IoError);
}

TEST(PlcMalformed, EachCaseNamesFileAndLine) {
  const std::vector<Bad> cases = {
      {"bad columns", "# Columns : x  Rows : 3\n", 1, "malformed Columns"},
      {"zero width", "# Width : 0  Height : 5\n", 1, "positive"},
      {"short row", "# Columns : 2  Rows : 2\n0 1.5\n", 2, "expected 'node_index"},
      {"bad orientation", "0 1 2 Q 0\n", 1, "unknown orientation"},
      {"bad fixed", "0 1 2 N 7\n", 1, "fixed flag"},
      {"nan x", "0 nan 2 N 0\n", 1, "malformed x"},
      {"negative index", "-4 1 2 N 0\n", 1, "node index"},
      {"binary", std::string("0 1 2 N 0\n\x01\x02\x03", 13), 2, "control byte"},
      {"routes missing ver", "# Routes per micron, hor : 3\n", 1, "hor and ver"},
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
  // A row naming a node that does not exist, or a pin.
  Netlist nl = ParseNetlistText(kGood, "good.pb.txt");
  EXPECT_THROW(ApplyPlc(ParsePlcText("7 1 2 N 0\n", "x.plc"), &nl, "x.plc"), ParseError);
  EXPECT_THROW(ApplyPlc(ParsePlcText("1 1 2 N 0\n", "x.plc"), &nl, "x.plc"), ParseError);
}

TEST(Files, AtomicWriteLeavesNoTemporary) {
  const std::string p = TempPath("atomic.txt");
  WriteFileAtomic(p, "one");
  WriteFileAtomic(p, "two");
  EXPECT_EQ(ReadFile(p), "two");
  int others = 0;
  for (const auto& f : fs::directory_iterator(fs::path(p).parent_path())) {
    others += f.path().string().find(".tmp.") != std::string::npos;
  }
  EXPECT_EQ(others, 0);
  EXPECT_THROW(WriteFileAtomic("/nonexistent_dir_placerl/x.txt", "x"), IoError);
}

}  // namespace
}  // namespace placerl::chip
