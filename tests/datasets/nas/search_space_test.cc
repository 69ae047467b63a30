// Search spaces as data: every built-in space parses with the documented sizes, masks follow
// the rules (Brainformer's per-type settings, ENAS micro's input indices), architectures round
// trip through their message, and malformed spaces fail with the line that is wrong (text that
// does not parse: the bad token's line and column, through run::ParseTextFormat).
#include <gtest/gtest.h>

#include <cmath>

#include "datasets/nas/search_space.h"
#include "datasets/proto/perf_model.pb.h"
#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::nas {
namespace {

int ErrorLine(const std::string& text) {
  try {
    ParseSearchSpace(text, "bad.pbtxt");
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "bad.pbtxt");
    return e.line();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return -1;
}

std::string ErrorText(const std::string& text) {
  try {
    ParseSearchSpace(text, "bad.pbtxt");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(SearchSpace, BuiltinSpacesHaveTheirSizes) {
  EXPECT_EQ(BuiltinSpaceNames(),
            (std::vector<std::string>{"brainformer", "enas_macro", "enas_micro", "nas_bench_macro", "nb201"}));
  const SearchSpace nb201 = LoadSearchSpace("nb201");
  EXPECT_EQ(nb201.num_decisions(), 6);
  EXPECT_EQ(nb201.max_choices(), 5);
  EXPECT_EQ(nb201.table(), "nb201");
  EXPECT_EQ(nb201.decisions()[2].name, "node2/from1");
  EXPECT_NEAR(std::pow(10, nb201.Log10Size()), 15625, 1e-6);
  EXPECT_EQ(nb201.node_names()[nb201.decisions()[nb201.DecisionIndex("node3/from2")].source_node], "node2");
  EXPECT_EQ(nb201.decisions()[nb201.DecisionIndex("node3/from0")].source_node, -1);  // the cell input
  const SearchSpace macro = LoadSearchSpace("nas_bench_macro");
  EXPECT_EQ(macro.num_decisions(), 8);
  EXPECT_EQ(macro.max_choices(), 3);
  EXPECT_EQ(macro.decisions()[7].name, "layer7/block");
  const SearchSpace enas_macro = LoadSearchSpace("enas_macro");
  EXPECT_EQ(enas_macro.num_decisions(), 12 + 12 * 11 / 2);  // ops + skip flags to earlier layers
  EXPECT_EQ(enas_macro.max_choices(), 6);
  EXPECT_GE(enas_macro.DecisionIndex("layer11/skip10"), 0);
  EXPECT_EQ(enas_macro.DecisionIndex("layer0/skip0"), -1);
  EXPECT_EQ(enas_macro.kinds().size(), 2u);
  const Decision& skip = enas_macro.decisions()[enas_macro.DecisionIndex("layer5/skip2")];
  EXPECT_EQ(enas_macro.node_names()[skip.node], "layer5");
  EXPECT_EQ(enas_macro.node_names()[skip.source_node], "layer2");
  EXPECT_EQ(enas_macro.decisions()[enas_macro.DecisionIndex("layer5/op")].source_node, -1);
  const SearchSpace micro = LoadSearchSpace("enas_micro");
  EXPECT_EQ(micro.num_decisions(), 2 * 5 * 4);
  EXPECT_EQ(micro.max_choices(), 6);  // node 4 reads inputs 0..5
  EXPECT_EQ(micro.decisions()[micro.DecisionIndex("normal0/input0")].num_choices(), 2);
  EXPECT_EQ(micro.decisions()[micro.DecisionIndex("reduce3/input1")].num_choices(), 5);
  const SearchSpace bf = LoadSearchSpace("brainformer");
  EXPECT_EQ(bf.num_decisions(), 1 + 8 * 6);
  EXPECT_EQ(bf.max_choices(), 7);
  EXPECT_EQ(bf.rules().size(), 8u * 10);  // 8 sub-layers × (2 heads + 2 ffn + 2 × 3 MoE settings) rules
}

TEST(SearchSpace, MasksFollowTheRulesAndTheRealNumberOfChoices) {
  const SearchSpace bf = LoadSearchSpace("brainformer");
  Architecture a(bf.num_decisions(), 0);
  std::vector<uint8_t> mask(bf.max_choices());
  const int32_t type = bf.DecisionIndex("sub2/type"), heads = bf.DecisionIndex("sub2/heads"),
                ffn = bf.DecisionIndex("sub2/ffn_ratio"), experts = bf.DecisionIndex("sub2/experts");
  a[type] = 0;  // attention: heads must be set, FFN settings are "-"
  bf.AllowedChoices(a.data(), heads, mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 1, 1, 1, 0, 0, 0}));
  bf.AllowedChoices(a.data(), ffn, mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0}));
  a[type] = 2;  // MoE FFN: no heads, an expansion ratio, experts
  bf.AllowedChoices(a.data(), heads, mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0}));
  bf.AllowedChoices(a.data(), ffn, mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 1, 1, 1, 1, 1, 1}));
  bf.AllowedChoices(a.data(), experts, mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 1, 1, 1, 1, 0, 0}));
  EXPECT_FALSE(bf.IsAllowed(a.data(), experts, 0));
  EXPECT_TRUE(bf.IsAllowed(a.data(), experts, 4));
  EXPECT_FALSE(bf.IsAllowed(a.data(), experts, 5));  // beyond this decision's 5 choices
  // Another sub-layer is not affected.
  bf.AllowedChoices(a.data(), bf.DecisionIndex("sub3/heads"), mask.data());
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 1, 1, 1, 0, 0, 0})) << "sub3 is attention (choice 0) in `a`";
  // ENAS micro: node 1 of a cell reads one of the 2 cell inputs or node 0.
  const SearchSpace micro = LoadSearchSpace("enas_micro");
  Architecture m(micro.num_decisions(), 0);
  micro.AllowedChoices(m.data(), micro.DecisionIndex("normal1/input1"), mask.data());
  EXPECT_EQ(std::vector<uint8_t>(mask.begin(), mask.begin() + 6), (std::vector<uint8_t>{1, 1, 1, 0, 0, 0}));
  // Check() names what is wrong.
  EXPECT_EQ(micro.Check(m), "");
  m[micro.DecisionIndex("normal1/input1")] = 3;
  EXPECT_NE(micro.Check(m).find("normal1/input1"), std::string::npos);
  EXPECT_NE(micro.Check(Architecture(3, 0)).find("40 decisions"), std::string::npos);
}

TEST(SearchSpace, ArchitectureMessagesRoundTrip) {
  const SearchSpace bf = LoadSearchSpace("brainformer");
  Architecture a(bf.num_decisions(), 0);
  for (int32_t i = 0; i < 8; ++i) {
    a[bf.DecisionIndex("sub" + std::to_string(i) + "/type")] = 0;
    a[bf.DecisionIndex("sub" + std::to_string(i) + "/heads")] = 1 + i % 3;
  }
  ASSERT_EQ(bf.Check(a), "");
  const ArchitectureDef def = bf.ToDef(a);
  EXPECT_EQ(def.choice_size(), bf.num_decisions());
  EXPECT_EQ(bf.FromDef(def), a);
  ArchitectureDef other = def;
  other.set_space("nb201");
  EXPECT_THROW(bf.FromDef(other), ConfigError);
  ArchitectureDef missing = def;
  missing.mutable_choice()->RemoveLast();
  EXPECT_THROW(bf.FromDef(missing), ConfigError);
  ArchitectureDef forbidden = def;
  forbidden.mutable_choice(2)->set_choice("-");  // sub0/heads "-" for an attention sub-layer
  ASSERT_EQ(forbidden.choice(2).decision(), "sub0/heads");
  EXPECT_THROW(bf.FromDef(forbidden), ConfigError);
  ArchitectureDef unknown = def;
  unknown.mutable_choice(0)->set_choice("4096");
  EXPECT_THROW(bf.FromDef(unknown), ConfigError);
}

TEST(SearchSpace, LoadsFilesAndNamesTheBuiltinsForAnUnknownName) {
  testing::TempDir tmp;
  testing::Spit(tmp / "tiny.pbtxt", "name: \"tiny\"\nnode { name: \"a\" decision { name: \"x\" choice: [\"p\", \"q\"] } }\n");
  const SearchSpace s = LoadSearchSpace(tmp / "tiny.pbtxt");
  EXPECT_EQ(s.name(), "tiny");
  EXPECT_EQ(s.num_decisions(), 1);
  try {
    LoadSearchSpace("nb202");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("enas_micro"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LoadSearchSpace(tmp / "none.pbtxt"), IoError);
  // A file ending in '}' without a newline is whole; one ending in a top-level value may be cut.
  testing::Spit(tmp / "brace.pbtxt", "name: \"tiny\"\nnode { name: \"a\" decision { name: \"x\" choice: [\"p\", \"q\"] } }");
  EXPECT_EQ(LoadSearchSpace(tmp / "brace.pbtxt").num_decisions(), 1);
  testing::Spit(tmp / "cut.pbtxt", "node { name: \"a\" decision { name: \"x\" choice: [\"p\", \"q\"] } }\nname: \"ti");
  try {
    LoadSearchSpace(tmp / "cut.pbtxt");
    ADD_FAILURE() << "a cut last value was read";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("may be truncated"), std::string::npos) << e.what();
  }
}

TEST(SearchSpace, MalformedSpacesFailWithTheirLine) {
  const std::string head = "name: \"t\"\n";
  // Syntax and unknown fields (protobuf's own errors, 1-based).
  EXPECT_EQ(ErrorLine(head + "node {\n  nmae: \"a\"\n}\n"), 3);
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\"\n"), 0 + 3);
  // A decision with no choices / two sources / an unknown list.
  EXPECT_EQ(ErrorLine(head + "node {\n name: \"a\"\n decision { name: \"x\" }\n}\n"), 4);
  EXPECT_EQ(ErrorLine(head + "node {\n name: \"a\"\n decision { name: \"x\" choice: \"p\" choices: \"l\" }\n}\n"), 4);
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\"\n decision { name: \"x\" choices: \"nolist\" } }\n"), 3);
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\" decision { name: \"x\" choice: [\"p\", \"p\"] } }\n"), 2);
  // Repeat without {i}; a node defined twice.
  EXPECT_EQ(ErrorLine(head + "\nnode { name: \"a\" repeat: 3 decision { name: \"x\" choice: \"p\" } }\n"), 3);
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\" decision { name: \"x\" choice: \"p\" } }\n"
                             "node { name: \"a\" decision { name: \"y\" choice: \"p\" } }\n"),
            3);
  // per_earlier without {j}.
  EXPECT_EQ(ErrorLine(head + "node { name: \"l{i}\" repeat: 2\n decision { name: \"s\" per_earlier: true choice: \"p\" } }\n"), 3);
  const std::string two = head + "node { name: \"a\" decision { name: \"x\" choice: [\"p\", \"q\"] } }\n"
                                 "node { name: \"b\" decision { name: \"y\" choice: [\"u\", \"v\"] } }\n";
  // Rules: unknown decision, unknown choice, wrong order, empty allow, dead end.
  EXPECT_EQ(ErrorLine(two + "rule { if_decision: \"a/z\" if_choice: \"p\" then_decision: \"b/y\" allow: \"u\" }\n"), 4);
  EXPECT_EQ(ErrorLine(two + "\nrule { if_decision: \"a/x\" if_choice: \"r\" then_decision: \"b/y\" allow: \"u\" }\n"), 5);
  EXPECT_EQ(ErrorLine(two + "rule { if_decision: \"b/y\" if_choice: \"u\" then_decision: \"a/x\" allow: \"p\" }\n"), 4);
  EXPECT_EQ(ErrorLine(two + "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" deny: [\"u\", \"v\"] }\n"), 4);
  EXPECT_EQ(ErrorLine(two + "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" allow: \"u\" }\n"
                            "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" allow: \"v\" }\n"),
            4);
  EXPECT_NE(ErrorText(two + "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" allow: \"u\" }\n"
                            "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" allow: \"v\" }\n")
                .find("no choice when a/x=p"),
            std::string::npos);
  EXPECT_EQ(ErrorLine(two + "rule { if_decision: \"a/x\" if_choice: \"p\" then_decision: \"b/y\" allow: \"u\" deny: \"v\" }\n"), 4);
  // source_node: unknown, its own node, with per_earlier.
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\"\n decision { name: \"x\" choice: \"p\" source_node: \"b\" } }\n"), 3);
  EXPECT_EQ(ErrorLine(head + "node { name: \"a\"\n decision { name: \"x\" choice: \"p\" source_node: \"a\" } }\n"), 3);
  EXPECT_EQ(ErrorLine(head + "node { name: \"l{i}\" repeat: 2\n decision { name: \"s{j}\" per_earlier: true choice: \"p\" "
                             "source_node: \"l0\" } }\n"),
            3);
  // A table's layout.
  EXPECT_EQ(ErrorLine(two + "table: \"nb201\"\n"), 4);
  EXPECT_EQ(ErrorLine(two + "table: \"nb101\"\n"), 4);
  EXPECT_EQ(ErrorLine("name: \"t\"\n"), 0);  // no decision
  EXPECT_EQ(ErrorLine("name: \"a b\"\nnode { name: \"a\" decision { name: \"x\" choice: \"p\" } }\n"), 1);
}

// ParseNasText reads through run::ParseTextFormat: protobuf 3.21 reports a bad bool, an unknown
// enum name and an unknown field name at the token after it (the next line when the bad value
// ends its line: `per_earlier: maybe` on line 8 was "bad.pbtxt:9:", with no column), and takes
// any number for an open proto3 enum. Now each names the bad token's own file:line:col. The NAS
// schemas have no enum field; ParseNasText takes any message, so the enum cases use perf::Plan.
std::string NasTextError(const std::string& text, google::protobuf::Message* msg) {
  try {
    ParseNasText(text, "bad.pbtxt", msg);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "bad.pbtxt");
    return e.what();
  }
  return "(no error)";
}

TEST(SearchSpace, TextErrorsNameTheBadTokensLineAndColumn) {
  const std::string per_earlier =  // a bad bool ending line 8
      "name: \"t\"\nnode {\n  name: \"l{i}\"\n  repeat: 2\n  decision {\n    name: \"s{j}\"\n    choice: \"p\"\n"
      "    per_earlier: maybe";
  const std::string one_line =  // a bad bool in the last line, a whole node
      "name: \"t\"\nnode { name: \"l{i}\" repeat: 2 decision { name: \"s{j}\" choice: \"p\" per_earlier: maybe } }";
  const std::string field_mid = "name: \"t\"\nnode {\n  nmae: \"a\"\n}\n";  // unknown field, middle
  const std::string field_last = "node { name: \"a\" decision { name: \"x\" choice: \"p\" } }\nnmae: \"t\"";
  const std::string arch = "space: \"enas_micro\"\nchoice {\n  decision: \"node0/x\"\n  choise: \"y\"\n}\n";
  struct Case {
    std::string text;
    bool plan;  // the text is a perf::Plan (enum fields); else a SearchSpaceDef
    std::string at;
  };
  const std::vector<Case> cases = {
      {per_earlier + "\n  }\n}\n", false, "bad.pbtxt:8:18: "},  // middle (was bad.pbtxt:9:)
      {per_earlier + "\n", false, "bad.pbtxt:8:18: "},          // ends the text (was 9: past the end)
      {per_earlier, false, "bad.pbtxt:8:18: "},                 // (without a final newline: was 8:, no column)
      {one_line + "\n", false, "bad.pbtxt:2:80: "},
      {one_line, false, "bad.pbtxt:2:80: "},
      {field_mid, false, "bad.pbtxt:3:3: "},                    // (was 3:, no column)
      {field_last + "\n", false, "bad.pbtxt:2:1: "},
      {field_last, false, "bad.pbtxt:2:1: "},
      {"remat: SOMETIMES\ndata: 2\n", true, "bad.pbtxt:1:8: "},  // unknown enum name, middle (was 2:)
      {"data: 2\nremat: SOMETIMES\n", true, "bad.pbtxt:2:8: "},  // last line (was 3:)
      {"data: 2\nremat: SOMETIMES", true, "bad.pbtxt:2:8: "},
      {"remat: 77\ndata: 2\n", true, "bad.pbtxt:1:1: "},         // an enum number that is no value (was read)
      {"data: 2\nremat: 77\n", true, "bad.pbtxt:2:1: "},
      {"data: 2\nremat: -1", true, "bad.pbtxt:2:1: "},
  };
  for (const Case& c : cases) {
    SearchSpaceDef space;
    perf::Plan plan;
    const std::string e = NasTextError(c.text, c.plan ? static_cast<google::protobuf::Message*>(&plan) : &space);
    EXPECT_EQ(e.rfind(c.at, 0), 0u) << c.at << " for:\n" << c.text << "\ngot: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // The reasons are protobuf's (the enum number: the shared reader's).
  SearchSpaceDef space;
  EXPECT_EQ(NasTextError(per_earlier + "\n  }\n}\n", &space),
            "bad.pbtxt:8:18: Invalid value for boolean field \"per_earlier\". Value: \"maybe\".");
  perf::Plan plan;
  EXPECT_EQ(NasTextError("remat: 77\n", &plan), "bad.pbtxt:1:1: Unknown enumeration value 77 for field \"remat\" (Remat)");
  // enas-rank's architectures (ArchitectureDef) and whole spaces read the same way.
  ArchitectureDef def;
  const std::string arch_error = NasTextError(arch, &def);
  EXPECT_EQ(arch_error.rfind("bad.pbtxt:4:3: ", 0), 0u) << arch_error;
  try {
    ParseSearchSpace(per_earlier + "\n  }\n}\n", "s.pbtxt");
    ADD_FAILURE() << "read";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.pbtxt:8:18: ", 0), 0u) << e.what();
    EXPECT_EQ(e.line(), 8);
  }
  // A file read by LoadSearchSpace: the same.
  testing::TempDir tmp;
  testing::Spit(tmp / "bad.pbtxt", per_earlier + "\n  }\n}\n");
  try {
    LoadSearchSpace(tmp / "bad.pbtxt");
    ADD_FAILURE() << "read";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(tmp / "bad.pbtxt:8:18: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace placerl::nas
