// Transformer / MoE graph generator: op counts and FLOPs by hand on a tiny configuration,
// encoder–decoder wiring, MoE experts as separate ops, errors.
#include "datasets/graphs/transformer_graphs.h"

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

bool Forward(const std::string& name) { return name.rfind("grad/", 0) != 0 && name.rfind("update/", 0) != 0; }

TransformerGraphConfig Tiny() {
  TransformerGraphConfig c;
  c.layers = 1;
  c.d_model = 4;
  c.d_ff = 8;
  c.heads = 2;
  c.seq = 3;
  c.batch = 2;
  c.vocab = 5;
  return c;
}

TEST(TransformerGraph, OneLayerByHand) {
  const ComputeGraph g = MakeTransformerGraph(Tiny());
  // Forward: lookup, pos; attention q, k, v, scores, softmax, context, out, residual, ln; FFN
  // ffn1, relu, ffn2, residual, ln; logits, xent, loss = 19. All 19 have inputs or weights →
  // 19 grads; 11 ops own weights → 11 updates.
  EXPECT_EQ(g.num_ops(), 19 + 19 + 11);
  // N = B·s = 6 tokens, d 4, f 8, h 2, V 5.
  const double N = 6, d = 4, f = 8, s = 3, B = 2, h = 2, V = 5;
  const double flops = N * d                        // positions
                       + 4 * 2 * N * d * d          // q, k, v, out
                       + 2 * (2 * B * s * s * d)    // scores, context
                       + 5 * B * h * s * s          // softmax
                       + 2 * N * d + 2 * 8 * N * d  // residuals, layer norms
                       + 2 * 2 * N * d * f + N * f  // ffn1, ffn2, relu
                       + 2 * N * d * V + 5 * N * V  // logits, xent
                       + N;                         // loss
  double fwd = 0, params = 0;
  for (int i = 0; i < g.num_ops(); ++i)
    if (Forward(g.names[i])) {
      fwd += g.flops[i];
      params += g.param_bytes[i];
    }
  EXPECT_DOUBLE_EQ(fwd, flops);
  // V·d + s·d + 4(d² + d) + 2 LNs · 2d + (d·f + f) + (f·d + d) + (V·d + V) = 229 weights
  EXPECT_DOUBLE_EQ(params, 4 * 229.0);
}

TEST(TransformerGraph, EncoderDecoderHasCrossAttentionOnTheEncoderOutput) {
  TransformerGraphConfig c = Tiny();
  c.enc_layers = 2;
  c.layers = 2;
  const ComputeGraph g = MakeTransformerGraph(c);
  const int k = FindOp(g, "l2/cross/k");
  ASSERT_GE(k, 0);
  EXPECT_EQ(g.in_sources[g.in_offsets[k]], FindOp(g, "enc/l2/ffn/ln"));
  EXPECT_EQ(FindOp(g, "enc/l1/cross/q"), -1);
  EXPECT_GE(FindOp(g, "enc/emb/lookup"), 0);
}

TEST(MoeGraph, ExpertsAreSeparateOpsWithCapacity) {
  TransformerGraphConfig c = Tiny();
  c.layers = 2;
  c.experts = 4;
  c.moe_every = 2;
  const ComputeGraph g = MakeTransformerGraph(c);
  EXPECT_EQ(FindOp(g, "l1/moe/gate"), -1);  // layer 1 is dense
  EXPECT_GE(FindOp(g, "l1/ffn/ffn1"), 0);
  const int combine = FindOp(g, "l2/moe/combine");
  ASSERT_GE(combine, 0);
  for (int j = 0; j < 4; ++j) {
    const int e = FindOp(g, "l2/moe/e" + std::to_string(j) + "/ffn1");
    ASSERT_GE(e, 0);
    // capacity = ⌈2·N / E⌉ = ⌈12 / 4⌉ = 3 tokens: 2·3·d·f flops, weights d·f + f
    EXPECT_DOUBLE_EQ(g.flops[e], 2.0 * 3 * 4 * 8);
    EXPECT_DOUBLE_EQ(g.param_bytes[e], 4.0 * (4 * 8 + 8));
    EXPECT_EQ(g.in_sources[g.in_offsets[e]], FindOp(g, "l2/moe/dispatch"));
  }
  EXPECT_EQ(g.in_offsets[combine + 1] - g.in_offsets[combine], 5);  // 4 experts + gate
  EXPECT_NE(g.coloc_group[FindOp(g, "l2/moe/e0/ffn1")], g.coloc_group[FindOp(g, "l2/moe/e1/ffn1")]);
}

TEST(TransformerGraph, BadConfigThrows) {
  TransformerGraphConfig c = Tiny();
  c.heads = 3;  // does not divide 4
  EXPECT_THROW(MakeTransformerGraph(c), ConfigError);
  c = Tiny();
  c.seq = 0;
  EXPECT_THROW(MakeTransformerGraph(c), ConfigError);
  c = Tiny();
  c.experts = -1;
  EXPECT_THROW(MakeTransformerGraph(c), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
