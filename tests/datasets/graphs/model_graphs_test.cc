// ResNet compute-graph generator: parameter / MAC counts against torchvision, graph
// structure (op counts, shapes, backward ops), config errors, text round trip.
#include "datasets/graphs/model_graphs.h"
#include "datasets/graphs/graph_spec.h"

#include <gtest/gtest.h>

#include <string>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

ResNetConfig Config(int depth, int batch, bool backward) {
  ResNetConfig c;
  c.depth = depth;
  c.batch = batch;
  c.backward = backward;
  return c;
}

int FindOp(const ComputeGraph& g, const std::string& name) {
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == name) return i;
  return -1;
}

double TotalFlops(const ComputeGraph& g) {
  double s = 0;
  for (double f : g.flops) s += f;
  return s;
}

// Reference numbers are torchvision's published ones (model docs): ResNet-50 has 25,557,032
// parameters and 4.09 GFLOPS (really MACs) per 224×224 image; ResNet-18 11,689,512 and 1.81.
TEST(ResNetGraph, ParamsMatchTorchvision) {
  for (const auto& [depth, expected] : {std::pair{50, 25557032.0}, std::pair{18, 11689512.0}}) {
    const ResNetConfig c = Config(depth, 32, true);
    EXPECT_EQ(ResNetParamCount(c), expected) << depth;
    const ComputeGraph g = MakeResNetGraph(c);
    double param_bytes = 0;
    for (double p : g.param_bytes) param_bytes += p;
    EXPECT_EQ(param_bytes / c.param_bytes, expected) << depth;
  }
}

TEST(ResNetGraph, MacsMatchTorchvision) {
  EXPECT_NEAR(ResNetForwardMacs(Config(50, 1, false)), 4.09e9, 0.01 * 4.09e9);
  EXPECT_NEAR(ResNetForwardMacs(Config(18, 1, false)), 1.81e9, 0.01 * 1.81e9);
}

TEST(ResNetGraph, ForwardConvAndMatmulFlopsAreTwiceMacsTimesBatch) {
  for (int depth : {18, 50}) {
    const ResNetConfig c = Config(depth, 2, false);
    const ComputeGraph g = MakeResNetGraph(c);
    double flops = 0;
    for (int i = 0; i < g.num_ops(); ++i)
      if (g.kinds[i] == "conv" || g.kinds[i] == "matmul") flops += g.flops[i];
    EXPECT_DOUBLE_EQ(flops, 2.0 * 2.0 * ResNetForwardMacs(c)) << depth;
  }
}

TEST(ResNetGraph, ForwardOpCounts) {
  // ResNet-50: stem conv1, bn1, relu, maxpool (4); 16 bottleneck blocks of 3 conv + 3 BN +
  // 3 ReLU + add (10 each = 160); the first block of each of the 4 stages also has a
  // downsample conv + BN (8); avgpool, fc, loss (3). 4 + 160 + 8 + 3 = 175.
  EXPECT_EQ(MakeResNetGraph(Config(50, 1, false)).num_ops(), 175);
  // ResNet-18: 4 + 8 basic blocks × 7 (2 conv, 2 BN, 2 ReLU, add) + 3 downsamples × 2
  // (layer1 keeps 64 channels at stride 1) + 3 = 69.
  EXPECT_EQ(MakeResNetGraph(Config(18, 1, false)).num_ops(), 69);
}

TEST(ResNetGraph, BackwardDoublesOpsAndEndsWithGradOp) {
  for (int depth : {18, 50, 152}) {
    const ComputeGraph fwd = MakeResNetGraph(Config(depth, 4, false));
    const ComputeGraph g = MakeResNetGraph(Config(depth, 4, true));
    EXPECT_EQ(g.num_ops(), 2 * fwd.num_ops()) << depth;
    ASSERT_EQ(static_cast<int>(g.topo_order.size()), g.num_ops());  // acyclic
    EXPECT_EQ(FindCycleOp([&] {
                std::vector<std::vector<int>> in(g.num_ops());
                for (int i = 0; i < g.num_ops(); ++i)
                  in[i].assign(g.in_sources.begin() + g.in_offsets[i],
                               g.in_sources.begin() + g.in_offsets[i + 1]);
                return in;
              }()),
              -1);
    const std::string last = g.names[g.topo_order.back()];
    EXPECT_EQ(last.rfind("grad/", 0), 0u) << last;
    EXPECT_EQ(last, "grad/conv1");
    double grad_params = 0;
    for (int i = fwd.num_ops(); i < g.num_ops(); ++i) {
      EXPECT_EQ(g.names[i].rfind("grad/", 0), 0u);
      grad_params += g.param_bytes[i];
    }
    EXPECT_EQ(grad_params, 0.0);
    EXPECT_DOUBLE_EQ(TotalFlops(g), 3 * TotalFlops(fwd));
  }
}

TEST(ResNetGraph, GradOpInputsAndOutput) {
  const ResNetConfig c = Config(50, 8, true);
  const ComputeGraph g = MakeResNetGraph(c);
  const int add = FindOp(g, "layer2.0.add"), grad_add = FindOp(g, "grad/layer2.0.add");
  ASSERT_GE(add, 0);
  ASSERT_GE(grad_add, 0);
  const OpInfo op = g.op(grad_add);
  // consumer grad (relu3), forward inputs (bn3, downsample.bn), the add itself
  const std::vector<int> expected = {FindOp(g, "grad/layer2.0.relu3"), FindOp(g, "layer2.0.bn3"),
                                     FindOp(g, "layer2.0.downsample.bn"), add};
  EXPECT_EQ(op.inputs, expected);
  EXPECT_EQ(op.output_bytes, g.output_bytes[FindOp(g, "layer2.0.bn3")]);
  EXPECT_EQ(g.op(FindOp(g, "grad/loss")).inputs,
            (std::vector<int>{FindOp(g, "fc"), FindOp(g, "loss")}));
  // the gradient w.r.t. the image
  EXPECT_EQ(g.output_bytes[FindOp(g, "grad/conv1")], 8.0 * 3 * 224 * 224 * c.act_bytes);
}

TEST(ResNetGraph, FinalFeatureMapIs7x7x2048) {
  const ResNetConfig c = Config(50, 3, false);
  const ComputeGraph g = MakeResNetGraph(c);
  const int add = FindOp(g, "layer4.2.add");
  ASSERT_GE(add, 0);
  EXPECT_EQ(g.output_bytes[add], 3.0 * 7 * 7 * 2048 * c.act_bytes);
  EXPECT_EQ(FindOp(g, "layer4.3.add"), -1);
}

TEST(ResNetGraph, BadConfigThrows) {
  EXPECT_THROW(MakeResNetGraph(Config(42, 1, true)), ConfigError);
  EXPECT_THROW(MakeResNetGraph(Config(50, 0, true)), ConfigError);
  EXPECT_THROW(ResNetParamCount(Config(42, 1, true)), ConfigError);
  ResNetConfig c = Config(18, 1, false);
  c.image = 0;
  EXPECT_THROW(MakeResNetGraph(c), ConfigError);
  c.image = 224;
  c.act_bytes = 0;
  EXPECT_THROW(MakeResNetGraph(c), ConfigError);
}

TEST(ResNetGraph, TextRoundTrip) {
  const ComputeGraph g = MakeResNetGraph(Config(18, 16, true));
  const ComputeGraph h = ParseComputeGraph(ComputeGraphToText(g), "resnet18");
  EXPECT_EQ(h.num_ops(), g.num_ops());
  EXPECT_EQ(h.num_edges(), g.num_edges());
  EXPECT_EQ(TotalFlops(h), TotalFlops(g));
}

TEST(ResNetGraph, FusionRemovesElementwisePassesOnly) {
  ResNetConfig c = Config(50, 8, true);
  const ComputeGraph plain = MakeResNetGraph(c);
  c.fused = true;
  const ComputeGraph fused = MakeResNetGraph(c);
  ASSERT_EQ(fused.num_ops(), plain.num_ops());
  EXPECT_EQ(TotalFlops(fused), TotalFlops(plain));
  for (int i = 0; i < plain.num_ops(); ++i) {
    if (plain.kinds[i] == "conv" || plain.kinds[i] == "matmul") EXPECT_EQ(fused.bytes[i], plain.bytes[i]);
    if (plain.kinds[i] == "elementwise") EXPECT_EQ(fused.bytes[i], 0) << plain.names[i];
    if (plain.kinds[i] == "norm") EXPECT_DOUBLE_EQ(2 * fused.bytes[i], plain.bytes[i]) << plain.names[i];
  }
}

TEST(GraphSpec, NamesAndErrors) {
  const NamedGraph r = GraphFromSpec("resnet(depth=18,batch=4,backward=0)");
  EXPECT_EQ(r.examples, 4);
  EXPECT_EQ(r.graph.num_ops(), 69);  // forward only
  EXPECT_EQ(GraphFromSpec("chain(ops=7)").graph.num_ops(), 7);
  EXPECT_EQ(GraphFromSpec("layered(ops=50,width=10)").graph.num_ops(), 50);
  EXPECT_EQ(GraphFromSpec("chain(ops=7)").examples, 0);
  EXPECT_THROW(GraphFromSpec("resnet(depth=42)"), ConfigError);
  EXPECT_THROW(GraphFromSpec("resnet(batch=0)"), ConfigError);
  EXPECT_THROW(GraphFromSpec("resnet(batch=x)"), ConfigError);
  EXPECT_THROW(GraphFromSpec("resnet(heads=4)"), ConfigError);
  EXPECT_THROW(GraphFromSpec("chain(ops)"), ConfigError);
  // Anything else is a file name: a missing file is an error, not a crash.
  EXPECT_THROW(GraphFromSpec("/nonexistent/graph.txt"), Error);
}

}  // namespace
}  // namespace placerl::graphs
