// Backward/update derivation and co-location groups of compute graphs (hand-checked).
#include "datasets/graphs/training_graph.h"

#include <gtest/gtest.h>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

// x (input, no params) → fc (params 400 B, 100 flops) → loss.
std::vector<OpInfo> ThreeOps() {
  std::vector<OpInfo> ops(3);
  ops[0].name = "x";
  ops[0].output_bytes = 64;
  ops[1].name = "fc";
  ops[1].kind = "matmul";
  ops[1].flops = 100;
  ops[1].bytes = 30;
  ops[1].output_bytes = 16;
  ops[1].param_bytes = 400;
  ops[1].inputs = {0};
  ops[2].name = "loss";
  ops[2].kind = "softmax";
  ops[2].flops = 5;
  ops[2].output_bytes = 4;
  ops[2].inputs = {1};
  return ops;
}

TEST(TrainingGraph, BackwardAndUpdateOpsByHand) {
  const ComputeGraph g = BuildComputeGraph(AddTrainingOps(ThreeOps()));
  // x has no inputs and no params: no grad. grad/loss, grad/fc, update/fc.
  ASSERT_EQ(g.num_ops(), 6);
  EXPECT_EQ(g.names[3], "grad/loss");
  EXPECT_EQ(g.names[4], "grad/fc");
  EXPECT_EQ(g.names[5], "update/fc");
  EXPECT_DOUBLE_EQ(g.flops[4], 200);
  EXPECT_DOUBLE_EQ(g.bytes[4], 60);
  EXPECT_DOUBLE_EQ(g.output_bytes[4], 64);  // gradient w.r.t. x
  EXPECT_DOUBLE_EQ(g.output_bytes[3], 16);  // gradient w.r.t. fc's output
  // grad/fc reads grad/loss, the saved input x and fc itself.
  const std::vector<int> in(g.in_sources.begin() + g.in_offsets[4], g.in_sources.begin() + g.in_offsets[5]);
  EXPECT_EQ(in, (std::vector<int>{3, 0, 1}));
  // Adam: 100 parameters × 10 flops, 7 × 400 bytes, m and v resident.
  EXPECT_DOUBLE_EQ(g.flops[5], 1000);
  EXPECT_DOUBLE_EQ(g.bytes[5], 2800);
  EXPECT_DOUBLE_EQ(g.param_bytes[5], 800);
  EXPECT_EQ(g.kinds[5], "elementwise");
  // fc, grad/fc, update/fc share a group; x, loss (+ grad/loss) have their own.
  EXPECT_EQ(g.coloc_group[1], g.coloc_group[4]);
  EXPECT_EQ(g.coloc_group[1], g.coloc_group[5]);
  EXPECT_EQ(g.coloc_group[2], g.coloc_group[3]);
  EXPECT_NE(g.coloc_group[0], g.coloc_group[1]);
  EXPECT_NE(g.coloc_group[1], g.coloc_group[2]);
  EXPECT_EQ(g.num_coloc_groups, 3);
  EXPECT_EQ(ColocationMembers(g)[g.coloc_group[1]], (std::vector<int>{1, 4, 5}));
}

TEST(TrainingGraph, WithoutUpdateOrColocation) {
  TrainingOpsOptions o;
  o.update = false;
  o.colocate = false;
  const ComputeGraph g = BuildComputeGraph(AddTrainingOps(ThreeOps(), o));
  EXPECT_EQ(g.num_ops(), 5);
  EXPECT_EQ(g.num_coloc_groups, 5);
}

TEST(TrainingGraph, NameCollisionIsAnError) {
  auto ops = ThreeOps();
  ops[0].name = "grad/loss";
  EXPECT_THROW(AddTrainingOps(ops), ConfigError);
}

TEST(Colocation, TextRoundTripAndViolation) {
  const std::string text =
      "op a matmul flops=1 coloc=g1\n"
      "op b matmul flops=1 inputs=a\n"
      "op c matmul flops=1 coloc=g1 inputs=b\n";
  const ComputeGraph g = ParseComputeGraph(text, "t.graph");
  EXPECT_EQ(g.num_coloc_groups, 2);
  EXPECT_EQ(g.coloc_group[0], g.coloc_group[2]);
  const ComputeGraph back = ParseComputeGraph(ComputeGraphToText(g), "back");
  EXPECT_EQ(back.colocation, g.colocation);
  EXPECT_EQ(back.coloc_group, g.coloc_group);
  EXPECT_EQ(ColocationViolation(g, {0, 1, 0}), "");
  EXPECT_EQ(ColocationViolation(g, {0, 0, 1}),
            "co-location group 'g1': op 'a' on device 0, op 'c' on device 1");
}

TEST(Colocation, MalformedNamesReportTheLine) {
  for (const char* bad : {"op a matmul\nop b matmul coloc=\n", "op a matmul\nop b matmul coloc=x,y\n",
                          "op a matmul\nop b matmul coloc=x=y\n"}) {
    try {
      ParseComputeGraph(bad, "bad.graph");
      FAIL() << bad;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.graph:2"), std::string::npos) << e.what();
    }
  }
  OpInfo o;
  o.name = "a";
  o.colocation = "has space";
  EXPECT_THROW(BuildComputeGraph({o}), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
