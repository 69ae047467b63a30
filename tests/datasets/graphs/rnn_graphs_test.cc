// RNNLM / NMT / GNMT generators: op counts and FLOP totals against hand calculation on small
// configurations, structure (dependencies, residuals, attention), co-location, gradient sizes.
#include "datasets/graphs/rnn_graphs.h"

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

// Sum of flops / param bytes over ops whose name starts with `prefix` ("" = forward ops: not
// grad/ or update/).
double Sum(const ComputeGraph& g, const std::vector<double>& v, const std::string& prefix) {
  double s = 0;
  for (int i = 0; i < g.num_ops(); ++i) {
    const bool training = g.names[i].rfind("grad/", 0) == 0 || g.names[i].rfind("update/", 0) == 0;
    if (prefix.empty() ? !training : g.names[i].rfind(prefix, 0) == 0) s += v[i];
  }
  return s;
}

bool HasInput(const ComputeGraph& g, int op, int input) {
  for (int e = g.in_offsets[op]; e < g.in_offsets[op + 1]; ++e)
    if (g.in_sources[e] == input) return true;
  return false;
}

RnnLmConfig SmallLm() {
  RnnLmConfig c;
  c.layers = 1;
  c.hidden = 3;
  c.batch = 2;
  c.steps = 2;
  c.vocab = 5;
  return c;
}

TEST(RnnLmGraph, OneLayerTwoStepsByHand) {
  const ComputeGraph g = MakeRnnLmGraph(SmallLm());
  // Forward: 3 variables (embedding, layer weights, softmax weights) + per step (lookup,
  // 12 LSTM ops, matmul + bias_add + xent) = 16 × 2 + loss = 36. Every forward op has inputs
  // or weights → 36 grad ops; 3 update ops (the variables).
  EXPECT_EQ(g.num_ops(), 36 + 36 + 3);
  // Forward flops per step (B 2, H 3, V 5, LSTM input I = H): LSTM matmul 2·B·(I+H)·4H = 288,
  // element-wise 13·B·H = 78, softmax matmul 2·B·H·V = 60, bias_add + xent 6·B·V = 60 → 486;
  // two steps 972 + loss (one flop per step loss: 2·B = 4) = 976.
  EXPECT_DOUBLE_EQ(Sum(g, g.flops, ""), 976);
  EXPECT_DOUBLE_EQ(Sum(g, g.flops, "grad/"), 2 * 976);
  // Parameters: V·H = 15, 4H·(I+H) + 4H = 84, H·V + V = 20 → 119 weights × 4 B; Adam
  // update 10 flops per weight and 2 state copies.
  EXPECT_DOUBLE_EQ(Sum(g, g.param_bytes, ""), 119 * 4);
  EXPECT_DOUBLE_EQ(Sum(g, g.flops, "update/"), 1190);
  EXPECT_DOUBLE_EQ(Sum(g, g.param_bytes, "update/"), 2 * 119 * 4);
  // h and c of a step are B·H elements.
  EXPECT_EQ(g.output_bytes[FindOp(g, "l1/t1/lstm/mul_h")], 2 * 3 * 4);
  EXPECT_EQ(g.output_bytes[FindOp(g, "l1/t1/lstm/add_c")], 2 * 3 * 4);
}

TEST(RnnLmGraph, RecurrenceAndSharedWeights) {
  RnnLmConfig c = SmallLm();
  c.layers = 2;
  c.steps = 3;
  const ComputeGraph g = MakeRnnLmGraph(c);
  const int w = FindOp(g, "l2/weights");
  for (int t = 1; t <= 3; ++t) EXPECT_TRUE(HasInput(g, FindOp(g, "l2/t" + std::to_string(t) + "/lstm/matmul"), w)) << t;
  // step 2 of layer 2 reads h of step 1 (same layer) and h of step 2 of layer 1
  const int concat = FindOp(g, "l2/t2/lstm/concat");
  EXPECT_TRUE(HasInput(g, concat, FindOp(g, "l2/t1/lstm/mul_h")));
  EXPECT_TRUE(HasInput(g, concat, FindOp(g, "l1/t2/lstm/mul_h")));
  EXPECT_TRUE(HasInput(g, FindOp(g, "l2/t2/lstm/mul_fc"), FindOp(g, "l2/t1/lstm/add_c")));
  // t1 has no previous state: concat reads only its input
  EXPECT_EQ(g.in_offsets[FindOp(g, "l1/t1/lstm/concat") + 1] - g.in_offsets[FindOp(g, "l1/t1/lstm/concat")], 1);
}

TEST(RnnLmGraph, ColocationAndGradientSizes) {
  RnnLmConfig c = SmallLm();
  c.steps = 4;
  const ComputeGraph g = MakeRnnLmGraph(c);
  for (const char* op : {"l1/t3/lstm/matmul", "l1/weights", "emb/t2/lookup"}) {
    const int x = FindOp(g, op), gx = FindOp(g, std::string("grad/") + op);
    ASSERT_GE(x, 0);
    ASSERT_GE(gx, 0);
    EXPECT_EQ(g.coloc_group[x], g.coloc_group[gx]) << op;
  }
  EXPECT_EQ(g.coloc_group[FindOp(g, "l1/weights")], g.coloc_group[FindOp(g, "update/l1/weights")]);
  EXPECT_NE(g.coloc_group[FindOp(g, "l1/t1/lstm/matmul")], g.coloc_group[FindOp(g, "l1/t2/lstm/matmul")]);
  // The matmul's gradient is w.r.t. its activation input (B·(I+H)), the weight gradient
  // accumulates in grad/l1/weights (weights' size), the lookup's gradient is its rows (B·H).
  EXPECT_EQ(g.output_bytes[FindOp(g, "grad/l1/t3/lstm/matmul")], 2 * 6 * 4);
  EXPECT_EQ(g.output_bytes[FindOp(g, "grad/l1/weights")], 84 * 4);
  EXPECT_EQ(g.output_bytes[FindOp(g, "grad/emb/t2/lookup")], 2 * 3 * 4);
}

TEST(RnnLmGraph, UpdateSwitch) {
  RnnLmConfig c = SmallLm();
  c.update = false;
  EXPECT_EQ(MakeRnnLmGraph(c).num_ops(), 72);
}

Seq2SeqConfig SmallSeq2Seq(int layers) {
  Seq2SeqConfig c;
  c.layers = layers;
  c.hidden = 4;
  c.batch = 2;
  c.steps = 2;
  c.vocab = 7;
  return c;
}

TEST(NmtGraph, OneLayerTwoStepsByHand) {
  const Seq2SeqConfig c = SmallSeq2Seq(1);
  const ComputeGraph g = MakeNmtGraph(c);
  // Encoder: embedding + 2 lookups + layer weights + 2 × 12 LSTM ops = 28; memory, key
  // weights, keys = 3; decoder variables (embedding, layer, attention, softmax) = 4; per
  // decoder step lookup + 12 LSTM + 6 attention + 3 softmax = 22, × 2 = 44; loss. 80 forward
  // ops, 80 grads, 7 updates (variables).
  EXPECT_EQ(g.num_ops(), 80 + 80 + 7);
  const double B = 2, H = 4, S = 2, T = 2, V = 7;
  const double enc = S * (2 * B * (2 * H) * 4 * H + 13 * B * H);
  const double keys = 2 * B * S * H * H;
  // decoder LSTM input = [embedding, previous attention] (I = 2H)
  const double dec_step = 2 * B * (3 * H) * 4 * H + 13 * B * H +  // LSTM
                          4 * B * S * H + 5 * B * S +             // score, softmax, context
                          2 * B * (2 * H) * H + B * H +           // attention layer + tanh
                          2 * B * H * V + 6 * B * V;              // projection, bias, xent
  EXPECT_DOUBLE_EQ(Sum(g, g.flops, ""), enc + keys + T * dec_step + T * B);
  EXPECT_DOUBLE_EQ(Sum(g, g.flops, "grad/"), 2 * (enc + keys + T * dec_step + T * B));
  const double params = V * H + (4 * H * 2 * H + 4 * H) + H * H +  // encoder side, keys
                        V * H + (4 * H * 3 * H + 4 * H) + 2 * H * H + (H * V + V);
  EXPECT_DOUBLE_EQ(Sum(g, g.param_bytes, ""), 4 * params);
}

TEST(NmtGraph, AttentionInputFeedingAndBridge) {
  const ComputeGraph g = MakeNmtGraph(SmallSeq2Seq(2));
  // decoder step 2, layer 1 reads the attention output of step 1 (input feeding)
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/l1/t2/lstm/concat"), FindOp(g, "dec/attn/t1/tanh")));
  // attention reads the top decoder layer and the encoder memory
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/attn/t2/score"), FindOp(g, "dec/l2/t2/lstm/mul_h")));
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/attn/t2/context"), FindOp(g, "enc/memory")));
  // the decoder starts from the encoder's final state, layer by layer
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/l2/t1/lstm/concat"), FindOp(g, "enc/l2/t2/lstm/mul_h")));
  EXPECT_EQ(FindOp(g, "dec/l3/t1/lstm/matmul"), -1);
}

TEST(GnmtGraph, BidirectionalResidualAndAttentionFromTheBottomLayer) {
  Seq2SeqConfig c = SmallSeq2Seq(4);
  c.steps = 3;
  const ComputeGraph g = MakeGnmtGraph(c);
  // bw runs from the last step: bw t2 reads bw t3's h; the concat joins fw and bw of a step
  EXPECT_TRUE(HasInput(g, FindOp(g, "enc/l1/bw/t2/lstm/concat"), FindOp(g, "enc/l1/bw/t3/lstm/mul_h")));
  const int cat = FindOp(g, "enc/l1/t2/concat");
  EXPECT_TRUE(HasInput(g, cat, FindOp(g, "enc/l1/fw/t2/lstm/mul_h")));
  EXPECT_TRUE(HasInput(g, cat, FindOp(g, "enc/l1/bw/t2/lstm/mul_h")));
  // residual adds on layers 3 and 4 only, encoder and decoder
  int residuals = 0;
  for (const std::string& n : g.names)
    if (n.rfind("grad/", 0) != 0 && n.find("/residual") != std::string::npos) ++residuals;
  EXPECT_EQ(residuals, 2 * 2 * 3);
  EXPECT_EQ(FindOp(g, "enc/l2/t1/residual"), -1);
  EXPECT_GE(FindOp(g, "dec/l3/t1/residual"), 0);
  // attention of step t is computed from layer 1 and feeds layers 2..4 of step t
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/attn/t2/query"), FindOp(g, "dec/l1/t2/lstm/mul_h")));
  for (int l = 2; l <= 4; ++l)
    EXPECT_TRUE(
        HasInput(g, FindOp(g, "dec/l" + std::to_string(l) + "/t2/lstm/concat"), FindOp(g, "dec/attn/t2/context")));
  // the softmax reads the top layer's output (residual)
  EXPECT_TRUE(HasInput(g, FindOp(g, "dec/softmax/t2/matmul"), FindOp(g, "dec/l4/t2/residual")));
}

TEST(GnmtGraph, DefaultIsBaechisConfiguration) {
  const Seq2SeqConfig c = GnmtV2Config();
  EXPECT_EQ(c.layers, 4);
  EXPECT_EQ(c.hidden, 512);
  EXPECT_EQ(c.batch, 128);
  EXPECT_EQ(c.steps, 40);
  EXPECT_EQ(c.vocab, 30000);
  // vocabulary projection of one step: 2·B·H·V = 3.93 GFLOP (device_placement_notes §3.3)
  const ComputeGraph g = MakeGnmtGraph(c);
  EXPECT_NEAR(g.flops[FindOp(g, "dec/softmax/t1/matmul")], 3.93e9, 0.01e9);
}

TEST(RnnGraphs, BadSizesThrow) {
  RnnLmConfig lm = SmallLm();
  lm.hidden = 0;
  EXPECT_THROW(MakeRnnLmGraph(lm), ConfigError);
  Seq2SeqConfig s = SmallSeq2Seq(1);
  s.steps = 0;
  EXPECT_THROW(MakeNmtGraph(s), ConfigError);
  EXPECT_THROW(MakeGnmtGraph(SmallSeq2Seq(1)), ConfigError);  // needs >= 2 layers
}

}  // namespace
}  // namespace placerl::graphs
