// The Brainformer patch Transformer (models/brainformer_net.h, brainformer_block.h):
// blocks read from the search space (GLaM-like reference included), forward shapes for every
// sub-layer type and gating, the analytic parameter count against the module's, MoE routing
// counted by hand (capacity, GShard order, dropped tokens), expert choice filling every expert
// exactly, the load-balancing loss, and bad inputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "models/brainformer_block.h"
#include "models/brainformer_net.h"

namespace placerl::brainformer {
namespace {

class BrainformerNetTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

SubLayer Attn(int32_t heads) { return {SubLayerType::kAttention, heads, 0, 0, Gating::kNone, 0}; }
SubLayer Dense(int32_t ratio) { return {SubLayerType::kDenseFfn, 0, ratio, 0, Gating::kNone, 0}; }
SubLayer Moe(int32_t ratio, int32_t experts, Gating g, double cf) { return {SubLayerType::kMoeFfn, 0, ratio, experts, g, cf}; }
SubLayer None() { return {}; }

TEST_F(BrainformerNetTest, GlamLikeBlockFromTheSpace) {
  const nas::SearchSpace space = nas::LoadSearchSpace("brainformer");
  const nas::Architecture glam = GlamLikeArchitecture(space);
  EXPECT_EQ(space.Check(glam), "");
  const Block b = BlockFromArchitecture(space, glam);
  EXPECT_EQ(b.model_dim, 1024);
  ASSERT_EQ(b.layers.size(), 8u);
  EXPECT_EQ(b.Summary(), "d1024 attn16 ffn4 attn16 moe4x64/top2/cf2 attn16 ffn4 attn16 moe4x64/top2/cf2");
  EXPECT_EQ(b.layers[3].gating, Gating::kTop2);
  EXPECT_EQ(b.layers[3].capacity_factor, 2);
  NetShape s;
  EXPECT_EQ(TrainWidth(b, s), 64);
  EXPECT_EQ(TrainExperts(b.layers[3], s), 16);
  // Not a brainformer space / not allowed.
  const nas::SearchSpace nb201 = nas::LoadSearchSpace("nb201");
  EXPECT_THROW(BlockFromArchitecture(nb201, nas::Architecture(nb201.num_decisions(), 0)), ConfigError);
  EXPECT_THROW(GlamLikeArchitecture(nb201), ConfigError);
  nas::Architecture bad = glam;
  bad[space.DecisionIndex("sub0/heads")] = 0;  // "-" for an attention sub-layer
  EXPECT_THROW(BlockFromArchitecture(space, bad), ConfigError);
}

TEST_F(BrainformerNetTest, ForwardShapesAndParameterCounts) {
  const std::vector<Block> blocks = {
      {512, {Attn(4), Dense(2), None(), Moe(2, 8, Gating::kTop1, 1.25)}},
      {768, {Moe(1, 16, Gating::kTop2, 1), Moe(3, 8, Gating::kExpertChoice, 2), Moe(2, 32, Gating::kTop1, 1)}},  // all MoE
      {1536, {Attn(16), Attn(8), Dense(8)}},
      {1024, {None(), None()}},  // nothing but embedding, pooling and head
      {768, {Attn(16), Moe(6, 64, Gating::kExpertChoice, 1)}},
  };
  for (int32_t repeats : {1, 2})
    for (const Block& b : blocks) {
      NetShape s;
      s.repeats = repeats;
      torch::manual_seed(3);
      BrainformerNet net(b, s);
      const torch::Tensor x = torch::randn({5, 28, 28});
      const torch::Tensor y = net->forward(x);
      EXPECT_EQ(y.sizes(), (std::vector<int64_t>{5, 10})) << b.Summary();
      EXPECT_TRUE(torch::isfinite(y).all().item<bool>()) << b.Summary();
      EXPECT_EQ(net->aux_loss().dim(), 0);
      const NetCost c = TrainedNetCost(b, s);
      EXPECT_EQ(c.params, net->num_parameters()) << b.Summary() << " x" << repeats;
      EXPECT_LE(c.activated_params, c.params);
      EXPECT_GT(c.flops_per_sample, 0);
      // Gradients reach the patch embedding through every sub-layer.
      (y.sum() + net->aux_loss()).backward();
      for (const auto& p : net->named_parameters())
        if (p.key() == "patch_embed.weight") EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0);
    }
  // Hand count of one small case: width 512/16 = 32, one dense FFN ×2, no repeats.
  NetShape s;
  const NetCost c = TrainedNetCost({512, {Dense(2)}}, s);
  const int64_t d = 32, h = 64;
  EXPECT_EQ(c.params, (49 * d + d) + 16 * d + 2 * d + (d * 10 + 10) + (2 * d + d * h + h + h * d + d));
}

TEST_F(BrainformerNetTest, TopOneDropsTokensOverCapacity) {
  // 6 tokens, 2 experts, cf 1: capacity ceil(6 / 2) = 3. Tokens 0-4 prefer expert 0, token 5
  // expert 1: expert 0 takes tokens 0, 1, 2 (token order); 3 and 4 are dropped.
  const torch::Tensor logits = torch::tensor({2.0f, 0.f, 3.f, 0.f, 1.f, 0.f, 4.f, 0.f, 2.f, 0.f, 0.f, 1.f}).view({6, 2});
  const MoeRouting r = RouteTokens(logits, Gating::kTop1, 1.0);
  EXPECT_EQ(r.capacity, 3);
  EXPECT_EQ(r.dropped_assignments, 2);
  EXPECT_EQ(r.dropped_tokens, 2);
  ASSERT_EQ(r.token.size(0), 4);
  EXPECT_TRUE(r.token.equal(torch::tensor({0, 1, 2, 5}, torch::kLong)));
  EXPECT_TRUE(r.slot.equal(torch::tensor({0, 1, 2, 3}, torch::kLong)));  // expert 1's first slot = 1 · 3 + 0
  // Top-1 keeps the router probability as the weight.
  EXPECT_NEAR(r.gate[0].item<double>(), 1 / (1 + std::exp(-2.0)), 1e-6);
  // cf 2: capacity 6, nothing dropped.
  EXPECT_EQ(RouteTokens(logits, Gating::kTop1, 2.0).dropped_tokens, 0);
}

TEST_F(BrainformerNetTest, TopTwoFillsFirstChoicesBeforeSecondChoices) {
  // 3 tokens, 3 experts, cf 1: capacity ceil(2 · 3 / 3) = 2. Tokens 0, 1: expert 0 then 1;
  // token 2: expert 1 then 0. First choices: e0 ← t0, t1; e1 ← t2. Second choices: e1 ← t0
  // (position 1), t1 would be position 2: dropped; e0 ← t2 would be position 2: dropped.
  const torch::Tensor logits = torch::tensor({3.f, 2.f, 0.f, 3.f, 2.f, 0.f, 2.f, 3.f, 0.f}).view({3, 3});
  const MoeRouting r = RouteTokens(logits, Gating::kTop2, 1.0);
  EXPECT_EQ(r.capacity, 2);
  EXPECT_EQ(r.dropped_assignments, 2);
  EXPECT_EQ(r.dropped_tokens, 0);  // every token keeps at least one expert
  EXPECT_TRUE(r.token.equal(torch::tensor({0, 1, 2, 0}, torch::kLong)));
  EXPECT_TRUE(r.slot.equal(torch::tensor({0, 1, 2, 3}, torch::kLong)));
  // The two weights of a token are renormalised: token 0's sum to 1.
  const double g0 = r.gate[0].item<double>(), g0b = r.gate[3].item<double>();
  EXPECT_NEAR(g0 + g0b, 1, 1e-6);
  EXPECT_NEAR(g0, 1 / (1 + std::exp(-1.0)), 1e-6);
  // Load balance: every first choice on experts 0/1 → the loss is above the balanced value 1.
  EXPECT_GT(r.aux_loss.item<double>(), 1.0);
  const MoeRouting uniform = RouteTokens(torch::eye(3) * 5, Gating::kTop1, 1.0);
  EXPECT_NEAR(RouteTokens(torch::zeros({4, 4}) + torch::eye(4), Gating::kTop1, 1.0).aux_loss.item<double>(), 1.0, 1e-6);
  EXPECT_EQ(uniform.dropped_tokens, 0);
}

TEST_F(BrainformerNetTest, ExpertChoiceGivesEveryExpertExactlyItsCapacity) {
  torch::manual_seed(11);
  const torch::Tensor logits = torch::randn({10, 4});
  const MoeRouting r = RouteTokens(logits, Gating::kExpertChoice, 2.0);
  EXPECT_EQ(r.capacity, 5);  // ceil(2 · 10 / 4)
  ASSERT_EQ(r.token.size(0), 20);
  const torch::Tensor probs = torch::softmax(logits, 1);
  for (int64_t e = 0; e < 4; ++e) {
    std::set<int64_t> chosen;
    for (int64_t k = 0; k < 5; ++k) {
      EXPECT_EQ(r.slot[e * 5 + k].item<int64_t>(), e * 5 + k);
      chosen.insert(r.token[e * 5 + k].item<int64_t>());
    }
    EXPECT_EQ(chosen.size(), 5u) << "expert " << e << " took a token twice";
    // The chosen tokens are the expert's 5 most probable.
    const double lowest_chosen = r.gate.slice(0, e * 5, e * 5 + 5).min().item<double>();
    for (int64_t t = 0; t < 10; ++t)
      if (!chosen.count(t)) EXPECT_LE(probs[t][e].item<double>(), lowest_chosen + 1e-9);
  }
  // Tokens no expert took are the dropped ones.
  std::set<int64_t> covered;
  for (int64_t i = 0; i < 20; ++i) covered.insert(r.token[i].item<int64_t>());
  EXPECT_EQ(r.dropped_tokens, 10 - static_cast<int64_t>(covered.size()));
  EXPECT_EQ(r.aux_loss.item<double>(), 0);
  // Capacity never exceeds the tokens.
  EXPECT_EQ(RouteTokens(torch::randn({3, 2}), Gating::kExpertChoice, 2.0).capacity, 3);
}

TEST_F(BrainformerNetTest, MoeOutputIsTheGatedSumOfItsExperts) {
  // With capacity for everyone, the batched MoE equals a per-token loop over the chosen experts.
  torch::manual_seed(5);
  MoeFfn moe(8, 16, 4, Gating::kTop2, 2.0);
  const torch::Tensor x = torch::randn({6, 8});
  const torch::Tensor y = moe->forward(x);
  const MoeRouting& r = moe->last_routing();
  EXPECT_EQ(r.dropped_assignments, 0);
  const auto params = moe->named_parameters();
  const torch::Tensor w1 = params["w1"], b1 = params["b1"], w2 = params["w2"], b2 = params["b2"];
  torch::Tensor expected = torch::zeros({6, 8});
  {
  torch::NoGradGuard no_grad;
  for (int64_t a = 0; a < r.token.size(0); ++a) {
    const int64_t t = r.token[a].item<int64_t>(), e = r.slot[a].item<int64_t>() / r.capacity;
    const torch::Tensor h = torch::gelu(torch::matmul(x[t], w1[e]) + b1[e][0]);
    expected[t] += r.gate[a] * (torch::matmul(h, w2[e]) + b2[e][0]);
  }
  }
  EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-6));
  // The router learns through the gates.
  y.sum().backward();
  EXPECT_GT(params["router.weight"].grad().abs().sum().item<double>(), 0);
}

TEST_F(BrainformerNetTest, BadInputsAreErrors) {
  EXPECT_THROW(RouteTokens(torch::zeros({4}), Gating::kTop1, 1.0), ConfigError);
  EXPECT_THROW(RouteTokens(torch::zeros({4, 2}), Gating::kNone, 1.0), ConfigError);
  NetShape s;
  s.patch_size = 5;  // does not divide 28
  EXPECT_THROW(BrainformerNet(Block{512, {Dense(1)}}, s), ConfigError);
  // Width 24 (768 / 32) with 16 heads: 2 dims per head (32 wide attention); counts still agree.
  s = NetShape();
  s.width_divisor = 32;
  EXPECT_EQ(AttentionInnerWidth(24, 16), 32);
  EXPECT_EQ(AttentionInnerWidth(64, 16), 64);
  BrainformerNet odd(Block{768, {Attn(16), Attn(8)}}, s);
  EXPECT_EQ(odd->forward(torch::randn({2, 28, 28})).sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(odd->num_parameters(), TrainedNetCost(Block{768, {Attn(16), Attn(8)}}, s).params);
}

}  // namespace
}  // namespace placerl::brainformer
