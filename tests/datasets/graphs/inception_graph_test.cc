// Inception-V3 generator: parameters and MACs against torchvision, op structure, shapes.
#include "datasets/graphs/inception_graph.h"

#include <gtest/gtest.h>

#include <string>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

int FindOp(const ComputeGraph& g, const std::string& name) {
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == name) return i;
  return -1;
}

// torchvision's inception_v3 has 27,161,264 parameters (auxiliary head included; model docs)
// and 5.71 GFLOPS (MACs, main head) per 299×299 image. The auxiliary head has conv0 768·128 +
// 2·128, conv1 5·5·128·768 + 2·768 and fc 769·1000 = 3,326,696 weights.
TEST(InceptionV3Graph, ParamsAndMacsMatchTorchvision) {
  InceptionConfig c;
  EXPECT_EQ(InceptionV3ParamCount(c), 27161264.0);
  EXPECT_NEAR(InceptionV3ForwardMacs(c), 5.71e9, 0.01 * 5.71e9);
  c.aux = false;
  EXPECT_EQ(InceptionV3ParamCount(c), 27161264.0 - 3326696.0);
  const ComputeGraph g = MakeInceptionV3Graph(c);
  double params = 0;
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i].rfind("update/", 0) != 0) params += g.param_bytes[i];
  EXPECT_EQ(params / 4, 27161264.0 - 3326696.0);
}

TEST(InceptionV3Graph, OpCountsAndShapes) {
  InceptionConfig c;
  c.batch = 2;
  c.update = false;
  const ComputeGraph g = MakeInceptionV3Graph(c);
  int convs = 0, forward = 0;
  for (int i = 0; i < g.num_ops(); ++i) {
    if (g.names[i].rfind("grad/", 0) == 0) continue;
    ++forward;
    if (g.kinds[i] == "conv") ++convs;
  }
  // 94 convs in the main network (stem 5, 3 × InceptionA 7, B 4, 4 × C 10, D 6, 2 × E 9) + 2
  // in the auxiliary head.
  EXPECT_EQ(convs, 96);
  // Each conv has BN and ReLU (×3); pools: stem 2 max, 3 A + 4 C + 2 E avg, B and D max, aux
  // 2, head 1 = 16; concats: 3 A + B + 4 C + D + 2 E × 3 = 15; fc ×2, xent ×2, loss.
  EXPECT_EQ(forward, 96 * 3 + 16 + 15 + 5);
  EXPECT_EQ(g.num_ops(), 2 * forward);  // every forward op has inputs or weights
  // Mixed_5b: 35×35×256; Mixed_6e: 17×17×768; Mixed_7c: 8×8×2048 (fp32, batch 2)
  EXPECT_EQ(g.output_bytes[FindOp(g, "Mixed_5b/concat")], 2.0 * 35 * 35 * 256 * 4);
  EXPECT_EQ(g.output_bytes[FindOp(g, "Mixed_6e/concat")], 2.0 * 17 * 17 * 768 * 4);
  EXPECT_EQ(g.output_bytes[FindOp(g, "Mixed_7c/concat")], 2.0 * 8 * 8 * 2048 * 4);
  // conv flops: Conv2d_1a_3x3 is 3→32, 3×3, stride 2: 149×149 outputs
  EXPECT_EQ(g.flops[FindOp(g, "Conv2d_1a_3x3/conv")], 2.0 * 2 * 149 * 149 * 3 * 3 * 3 * 32);
}

TEST(InceptionV3Graph, BadConfigThrows) {
  InceptionConfig c;
  c.image = 74;
  EXPECT_THROW(MakeInceptionV3Graph(c), ConfigError);
  c.image = 299;
  c.batch = 0;
  EXPECT_THROW(MakeInceptionV3Graph(c), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
