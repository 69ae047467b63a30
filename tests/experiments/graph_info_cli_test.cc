// graph-info as a user runs it: the text summary, one JSON document with --json, fusion and
// expert-placement outputs that the graph reader and placement reader accept, and one-line
// errors with exit code 1 for bad specs and options.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "datasets/graphs/compute_graph.h"
#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace {

using placerl::testing::Sh;
using placerl::testing::ShSplit;

const std::string kBin = placerl::testing::BinDir() + "/graph-info";
const std::string kSmallNmt = "'nmt(layers=2,hidden=8,batch=2,steps=3,vocab=10)'";

TEST(GraphInfoCli, JsonCountsMatchTheGraph) {
  const auto r = ShSplit(kBin + " --graph " + kSmallNmt + " --json --fuse 8 --expert 2");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 2 layers, 3 steps (rnn_graphs_test counts 1 layer, 2 steps by hand): forward ops =
  // encoder 1 + 3 + 2 + 2·3·12, memory/keys 3, decoder 1 + 2 + 2, 3 × (1 + 2·12 + 6 + 3), loss
  const int forward = (1 + 3 + 2 + 72) + 3 + 5 + 3 * 34 + 1;
  EXPECT_EQ(j["forward_ops"], forward);
  EXPECT_EQ(j["backward_ops"], forward);
  EXPECT_EQ(j["update_ops"], 9);
  EXPECT_EQ(j["ops"], 2 * forward + 9);
  EXPECT_EQ(j["colocation_groups"], forward);
  EXPECT_DOUBLE_EQ(j["backward_flops"].get<double>(), 2 * j["forward_flops"].get<double>());
  EXPECT_LE(j["fused_groups"].get<int>(), 8);
  // Largest placement groups' weights + optimizer state + outputs, descending, within the graph's total.
  const auto& held = j["fused_largest_groups_bytes"];
  ASSERT_GE(held.size(), 1u);
  for (size_t k = 1; k < held.size(); ++k) EXPECT_GE(held[k - 1].get<double>(), held[k].get<double>());
  EXPECT_GT(held[0].get<double>(), 0);
  EXPECT_EQ(j["expert_flops"].size(), 2u);
  EXPECT_EQ(j["graph"], "nmt(batch=2,dtype_bytes=4,hidden=8,layers=2,steps=3,update=1,vocab=10)");
}

TEST(GraphInfoCli, WritesGraphFusedGraphAndPlacement) {
  placerl::testing::TempDir dir;
  const auto r = Sh(kBin + " --graph " + kSmallNmt + " --fuse 4 --expert 2 --write " + (dir / "g.txt") +
                    " --write-fused " + (dir / "f.txt") + " --write-placement " + (dir / "p.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("fused "), std::string::npos) << r.out;
  const placerl::graphs::ComputeGraph g = placerl::graphs::ReadComputeGraph(dir / "g.txt");
  EXPECT_EQ(g.num_ops(), 2 * ((1 + 3 + 2 + 72) + 3 + 5 + 3 * 34 + 1) + 9);
  EXPECT_LE(placerl::graphs::ReadComputeGraph(dir / "f.txt").num_coloc_groups, 4);
  const std::vector<int> p = placerl::graphs::ReadPlacement(dir / "p.txt", g, 2);
  EXPECT_EQ(placerl::graphs::ColocationViolation(g, p), "");
}

// --fuse-max-group-gb caps the placement groups: on nmt(layers=4) at 128 groups the largest
// holds 8.6 GB uncapped; capped at 2.34 GB every group fits, under either measure.
TEST(GraphInfoCli, FuseMaxGroupGbCapsTheLargestGroup) {
  const auto plain = ShSplit(kBin + " --graph 'nmt(layers=4)' --json --fuse 128");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_GT(nlohmann::json::parse(plain.out)["fused_largest_groups_bytes"][0].get<double>(), 8e9);
  const auto capped = ShSplit(kBin + " --graph 'nmt(layers=4)' --json --fuse 128 --fuse-max-group-gb 2.34");
  ASSERT_EQ(capped.status, 0) << capped.err;
  const auto c = nlohmann::json::parse(capped.out);
  EXPECT_LE(c["fused_groups"].get<int>(), 128);
  EXPECT_LE(c["fused_largest_groups_bytes"][0].get<double>(), 2.34e9);
  const auto life = ShSplit(kBin + " --graph 'nmt(layers=4)' --json --fuse 128 --fuse-max-group-gb 2.34 " +
                            "--machine 'k80(gpus=4,memory_fraction=0.39)'");
  ASSERT_EQ(life.status, 0) << life.err;
  const auto l = nlohmann::json::parse(life.out);
  EXPECT_LE(l["fused_largest_groups_lifetime_bytes"][0].get<double>(), 2.34e9);
  EXPECT_GT(l["fused_largest_groups_lifetime_bytes"][0].get<double>(), 1e9);
}

TEST(GraphInfoCli, ErrorsAreOneLine) {
  for (const std::string& args : {std::string("--graph 'nmt(depth=2)'"), std::string("--graph 'rnnlm(layers=0)'"),
                                  std::string("--graph rnnlm --fuse -3"), std::string("--graph /nonexistent.graph"),
                                  std::string("--graph rnnlm --write-placement /tmp/x"), std::string(""),
                                  std::string("--graph rnnlm --fuse-max-group-gb 1"),
                                  std::string("--graph rnnlm --fuse 8 --fuse-max-group-gb -1"),
                                  std::string("--graph rnnlm --machine 'k80(gpus=2)'"),
                                  std::string("--graph rnnlm --fuse 8 --machine 'k80(gpus=x)'")}) {
    const auto r = Sh(kBin + " " + args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("graph-info: error: ", 0), 0u) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

// Issue 29 item 15: 'nmt(layers=1000000000)' said "expected key=non-negative integer".
TEST(GraphInfoCli, ValueOutOfRangeSaysSoAndGivesTheRange) {
  const auto r = Sh(kBin + " --graph 'nmt(layers=1000000000)'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "graph-info: error: graph: layers=1000000000 is out of range: nmt's layers takes [1, 100000000]\n");
  const auto onnx = Sh(kBin + " --graph 'x.onnx?batch=1000000000'");
  EXPECT_EQ(onnx.out, "graph-info: error: graph: batch=1000000000 is out of range: batch takes [1, 100000000]\n");
}

// Issue 29 item 11 (graph-info's writers): the outputs are checked before the graph is read
// or built, and written together at the end.
TEST(GraphInfoCli, OutputsAreCheckedBeforeTheWork) {
  placerl::testing::TempDir dir;
  for (const std::string opt : {"--write", "--write-fused", "--write-placement"}) {
    SCOPED_TRACE(opt);
    const auto r = Sh(kBin + " --graph /nonexistent.graph --fuse 2 --expert 2 " + opt + " /dev/null/x");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "graph-info: error: cannot write /dev/null/x: /dev/null is not a directory\n");
  }
  // One target refused: none of the three written.
  std::filesystem::create_directories(dir / "p.txt");
  const auto r = Sh(kBin + " --graph " + kSmallNmt + " --fuse 4 --expert 2 --write " + (dir / "g.txt") +
                    " --write-fused " + (dir / "f.txt") + " --write-placement " + (dir / "p.txt"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "g.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "f.txt"));
}

// The limits sweep: every key of every generator at its largest accepted value, and --fuse /
// --expert at theirs, under a 4 GB address space: refused up front with one line, or done
// (or stopped by SIGINT) within the limit.
TEST(GraphInfoCli, LargestValuesRefusedOrBounded) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> families = {
      {"layered", {"ops", "width", "fan_in", "seed"}},
      {"chain", {"ops"}},
      {"resnet", {"depth", "batch", "image", "classes", "backward", "fused", "update"}},
      {"rnnlm", {"layers", "hidden", "batch", "steps", "vocab", "update", "dtype_bytes"}},
      {"nmt", {"layers", "hidden", "batch", "steps", "vocab", "update", "dtype_bytes"}},
      {"gnmt", {"layers", "hidden", "batch", "steps", "vocab", "update", "dtype_bytes"}},
      {"inception_v3", {"batch", "image", "classes", "aux", "update", "dtype_bytes"}},
      {"transformer_graph", {"layers", "enc_layers", "d_model", "d_ff", "heads", "seq", "batch", "vocab", "update", "dtype_bytes"}},
      {"moe_graph", {"layers", "experts", "moe_every", "d_model", "seq"}},
      {"enas_cell", {"seed", "nodes", "cells", "channels", "image", "classes", "hidden", "steps", "vocab", "batch", "dtype_bytes"}},
  };
  int runs = 0;
  for (const auto& [name, keys] : families) {
    for (const std::string& key : keys) {
      const std::string max = key == "ops" ? "2000000" : key == "fan_in" ? "64" : "100000000";
      const std::string spec = name + "(" + key + "=" + max + ")";
      SCOPED_TRACE(spec);
      const auto r = placerl::testing::ShLimited(kBin + " --graph '" + spec + "'", 3);
      EXPECT_EQ(placerl::testing::SweepVerdict(r, "graph-info"), "");
      ++runs;
    }
  }
  EXPECT_EQ(runs, 65);
  for (const std::string opts : {"--graph 'nmt(layers=4)' --fuse 100000000", "--graph 'moe_graph' --expert 4096",
                                 "--graph 'layered(ops=2000000,fan_in=10)' --fuse 1"}) {
    SCOPED_TRACE(opts);
    const auto r = placerl::testing::ShLimited(kBin + " " + opts, 3);
    EXPECT_EQ(placerl::testing::SweepVerdict(r, "graph-info"), "");
  }
}

}  // namespace
