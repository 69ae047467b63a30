// The GCN encoder and policy head: output shapes on a chip and a device environment, masking,
// permutation invariance of the static embedding, the layout check and the metadata text;
// batched inference (ActBatch) equals one Act per environment.
#include <gtest/gtest.h>

#include <cmath>
#include <torch/torch.h>

#include <numeric>
#include <random>

#include "datasets/util/errors.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"

namespace placerl::encoders {
namespace {

class PolicyTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

TEST_F(PolicyTest, ShapesOnAChipGrid) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  PolicyOptions o;
  o.embedding_dim = 16;
  Policy policy(o, FeatureLayout::Of(*env));
  const auto g = env->static_graph();
  const GraphTensors gt = MakeGraphTensors(*g);
  torch::NoGradGuard no_grad;
  const StaticEmbedding emb = policy.net()->Encode(gt);
  EXPECT_EQ(emb.node.sizes(), (std::vector<int64_t>{g->num_nodes, 16}));
  EXPECT_EQ(emb.context.numel(), 3 * 16);
  std::vector<float> scratch;
  const StepBatch batch = StepBatchOf(gt, *env, &scratch);
  auto [logits, value] = policy.net()->Forward(emb, batch);
  const int64_t a = env->num_actions();
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{1, a}));
  EXPECT_EQ(value.sizes(), (std::vector<int64_t>{1}));
  const auto& mask = env->action_mask();
  int legal = 0;
  for (int64_t i = 0; i < a; ++i) {
    if (mask[i]) {
      ++legal;
      EXPECT_GT(logits[0][i].item<float>(), -1e6);
    } else {
      EXPECT_LE(logits[0][i].item<float>(), -1e8);
    }
  }
  EXPECT_GT(legal, 0);
  // Act returns a legal action with a log-probability ≤ 0, and Logits agrees with Forward.
  std::mt19937_64 rng(3);
  const PolicyStep step = policy.Act(*env, &rng);
  ASSERT_GE(step.action, 0);
  EXPECT_TRUE(mask[step.action]);
  EXPECT_LE(step.log_prob, 0.f);
  float v = 0;
  const std::vector<float> l = policy.Logits(*env, &v);
  ASSERT_EQ(static_cast<int64_t>(l.size()), a);
  // (the two paths sum in different orders: equal to float rounding, not bit for bit)
  EXPECT_NEAR(v, value.item<float>(), 1e-5f + 1e-5f * std::abs(value.item<float>()));
  EXPECT_NEAR(l[step.action], logits[0][step.action].item<float>(), 1e-5f + 1e-5f * std::abs(l[step.action]));
}

// Policy::Logits (no gradient: cached readouts and grid term, hand-written placed summary)
// equals the LibTorch training path (gradient on, nothing cached) mid-episode.
TEST_F(PolicyTest, InferencePathEqualsTheTrainingPath) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  std::mt19937_64 rng(5);
  for (int i = 0; i < 7; ++i) env->Step(policy.Act(*env, &rng).action);
  float fast_value = 0;
  const std::vector<float> fast = policy.Logits(*env, &fast_value);
  const GraphTensors gt = MakeGraphTensors(*env->static_graph());
  const StaticEmbedding emb = policy.net()->Encode(gt);
  std::vector<float> scratch;
  auto [logits, value] = policy.net()->Forward(emb, StepBatchOf(gt, *env, &scratch));
  ASSERT_TRUE(logits.requires_grad());
  ASSERT_EQ(static_cast<int64_t>(fast.size()), logits.size(1));
  const torch::Tensor fast_t = torch::from_blob(const_cast<float*>(fast.data()), {1, logits.size(1)});
  EXPECT_TRUE(torch::allclose(fast_t, logits.detach(), 1e-4, 1e-5));
  EXPECT_NEAR(fast_value, value.item<float>(), 1e-5);
}

TEST_F(PolicyTest, DeviceHeadAndAMinibatchOfSteps) {
  auto env = env::MakeEnvironment("partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  EXPECT_EQ(policy.layout().fixed_actions, 3);
  std::mt19937_64 rng(1);
  double total = 0;
  while (!env->done()) {
    const auto l = policy.Logits(*env);
    ASSERT_EQ(l.size(), 3u);
    // A near-uniform start: the first policy's logits are small.
    for (size_t d = 0; d < 3; ++d)
      if (env->action_mask()[d]) {
        EXPECT_LT(std::abs(l[d]), 1.0f);
      }
    const PolicyStep s = policy.Act(*env, &rng);
    EXPECT_TRUE(env->action_mask()[s.action]);
    total += std::exp(s.log_prob);
    env->Step(s.action);
  }
  EXPECT_GT(total, 0);
}

// Relabel the nodes of a graph: node embeddings permute the same way, the context stays.
TEST_F(PolicyTest, StaticEmbeddingIsPermutationInvariant) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  const env::StaticGraph& g = *env->static_graph();
  const int32_t n = g.num_nodes;
  std::vector<int32_t> perm(n);  // new index of old node i
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(11));
  env::StaticGraph p = g;
  const int32_t f = g.node_feature_dim;
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < f; ++k) p.node_features[perm[i] * f + k] = g.node_features[i * f + k];
  std::vector<int32_t> edge_order(g.num_edges());
  std::iota(edge_order.begin(), edge_order.end(), 0);
  std::shuffle(edge_order.begin(), edge_order.end(), std::mt19937_64(12));
  for (int32_t e = 0; e < g.num_edges(); ++e) {
    const int32_t from = edge_order[e];
    int32_t a = perm[g.edge_src[from]], b = perm[g.edge_dst[from]];
    if (a > b) std::swap(a, b);
    p.edge_src[e] = a;
    p.edge_dst[e] = b;
    p.edge_weight[e] = g.edge_weight[from];
  }
  p.node_names.clear();
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  torch::NoGradGuard no_grad;
  const StaticEmbedding a = policy.net()->Encode(MakeGraphTensors(g));
  const StaticEmbedding b = policy.net()->Encode(MakeGraphTensors(p));
  std::vector<int64_t> perm64(perm.begin(), perm.end());
  const torch::Tensor moved = b.node.index_select(0, torch::tensor(perm64, torch::kLong));
  EXPECT_TRUE(torch::allclose(a.node, moved, 1e-4, 1e-5)) << (a.node - moved).abs().max().item<float>();
  EXPECT_TRUE(torch::allclose(a.context, b.context, 1e-4, 1e-5));
  // A different graph does give different embeddings (the test can fail).
  p.edge_weight[0] *= 5;
  const StaticEmbedding c = policy.net()->Encode(MakeGraphTensors(p));
  EXPECT_FALSE(torch::allclose(b.node, c.node, 1e-4, 1e-5));
}

TEST_F(PolicyTest, GridHeadRunsOnAnyGridSize) {
  auto small = env::MakeEnvironment("chip(seed=1,soft=keep)");
  auto other = env::MakeEnvironment(
      "chip(netlist=../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt,soft=keep)");
  ASSERT_FALSE(small->action_spec() == other->action_spec());
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*small));
  std::mt19937_64 rng(1);
  EXPECT_EQ(policy.Logits(*small).size(), static_cast<size_t>(small->num_actions()));
  EXPECT_EQ(policy.Logits(*other).size(), static_cast<size_t>(other->num_actions()));
  while (!other->done()) other->Step(policy.Act(*other, &rng).action);
}

TEST_F(PolicyTest, AnotherLayoutIsRejectedWithTheDifference) {
  auto chip = env::MakeEnvironment("chip(seed=1,soft=keep)");
  auto part = env::MakeEnvironment("partition(nodes=8,devices=2)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*chip));
  std::mt19937_64 rng(1);
  try {
    policy.Act(*part, &rng);
    FAIL() << "a grid policy acted on a device environment";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("action kind"), std::string::npos) << e.what();
  }
  FeatureLayout l = FeatureLayout::Of(*chip);
  l.node_dynamic_names.push_back("extra");
  EXPECT_NE(l.Mismatch(FeatureLayout::Of(*chip)).find("node_dynamic_names"), std::string::npos);
  auto wider = env::MakeEnvironment("partition(nodes=8,devices=3)");
  EXPECT_NE(FeatureLayout::Of(*part).Mismatch(FeatureLayout::Of(*wider)).find("number of actions"), std::string::npos);
}

TEST_F(PolicyTest, LayoutTextRoundTripsAndRejectsGarbage) {
  auto chip = env::MakeEnvironment("chip(seed=1,soft=keep)");
  PolicyOptions o;
  o.embedding_dim = 8;
  o.gcn_layers = 2;
  const FeatureLayout l = FeatureLayout::Of(*chip);
  PolicyOptions o2;
  FeatureLayout l2;
  ParseLayoutText(LayoutText(o, l), &o2, &l2);
  EXPECT_EQ(o2.embedding_dim, 8);
  EXPECT_EQ(o2.gcn_layers, 2);
  EXPECT_TRUE(l2 == l);
  EXPECT_THROW(ParseLayoutText("format=placerl-policy-v1\nno equals sign\n", &o2, &l2), ParseError);
  EXPECT_THROW(ParseLayoutText("format=placerl-policy-v1\n", &o2, &l2), ConfigError);
  EXPECT_THROW(ParseLayoutText("format=other\n", &o2, &l2), ConfigError);
  // The default preset's text is the one of checkpoints written before presets existed (no
  // preset line); other presets name themselves, and an unknown one is rejected.
  EXPECT_EQ(LayoutText(o, l).find("preset"), std::string::npos);
  EXPECT_EQ(o2.preset, PolicyPreset::kDefault);
  const std::string ct = LayoutText(PolicyOptions::CtFaithful(), l);
  EXPECT_NE(ct.find("preset=ct_faithful\n"), std::string::npos);
  ParseLayoutText(ct, &o2, &l2);
  EXPECT_EQ(o2.preset, PolicyPreset::kCtFaithful);
  EXPECT_EQ(o2.embedding_dim, 8);
  std::string bogus = ct;
  bogus.replace(bogus.find("ct_faithful"), 11, "alphachip");
  EXPECT_THROW(ParseLayoutText(bogus, &o2, &l2), ConfigError);
  EXPECT_EQ(OptionsMismatch(PolicyOptions::CtFaithful(), PolicyOptions{}), "preset: ct_faithful vs default");
  EXPECT_EQ(OptionsMismatch(PolicyOptions{}, PolicyOptions{}), "");
}

// Environments of two instances (chip grids of different sizes) at different steps, interleaved.
std::vector<std::unique_ptr<env::Environment>> MixedChipEnvs(Policy* policy) {
  std::vector<std::unique_ptr<env::Environment>> envs;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 6; ++i) {
    envs.push_back(env::MakeEnvironment(
        i % 3 == 1 ? "chip(netlist=../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt,soft=keep)"
                   : "chip(seed=1,soft=keep)"));
    envs.back()->Reset(static_cast<uint64_t>(i));
    for (int k = 0; k < 2 * i && !envs.back()->done(); ++k) envs.back()->Step(policy->Act(*envs.back(), &rng).action);
  }
  return envs;
}

// ActBatch on B environments (several instances) = B calls of Act in turn: the same logits and
// values (float rounding) and, with the same RNG stream, the same actions.
void ExpectActBatchEqualsAct(Policy& policy, const std::vector<std::unique_ptr<env::Environment>>& owned) {
  std::vector<const env::Environment*> envs;
  for (const auto& e : owned) envs.push_back(e.get());
  std::vector<float> batch_values;
  const std::vector<std::vector<float>> batch_logits = policy.LogitsBatch(envs, &batch_values);
  ASSERT_EQ(batch_logits.size(), envs.size());
  for (size_t i = 0; i < envs.size(); ++i) {
    float value = 0;
    const std::vector<float> logits = policy.Logits(*envs[i], &value);
    ASSERT_EQ(batch_logits[i].size(), logits.size()) << i;
    EXPECT_NEAR(batch_values[i], value, 1e-5f + 1e-5f * std::abs(value)) << i;
    float worst = 0;
    for (size_t a = 0; a < logits.size(); ++a)
      if (envs[i]->action_mask()[a]) {
        worst = std::max(worst, std::abs(batch_logits[i][a] - logits[a]) / (1.f + std::abs(logits[a])));
      } else {
        EXPECT_LE(batch_logits[i][a], -1e8f);
      }
    EXPECT_LT(worst, 1e-5f) << "environment " << i;
  }
  for (const bool greedy : {false, true}) {
    std::mt19937_64 rng_one(42), rng_batch(42);
    std::vector<PolicyStep> batch;
    policy.ActBatch(envs, &rng_batch, greedy, &batch);
    ASSERT_EQ(batch.size(), envs.size());
    for (size_t i = 0; i < envs.size(); ++i) {
      const PolicyStep one = policy.Act(*envs[i], &rng_one, greedy);
      EXPECT_EQ(batch[i].action, one.action) << i;
      EXPECT_NEAR(batch[i].log_prob, one.log_prob, 1e-5f) << i;
      EXPECT_NEAR(batch[i].value, one.value, 1e-5f + 1e-5f * std::abs(one.value)) << i;
    }
    EXPECT_EQ(rng_one(), rng_batch());  // the same number of draws
  }
}

TEST_F(PolicyTest, ActBatchEqualsActAcrossInstancesAndSteps) {
  auto probe = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*probe));
  const auto envs = MixedChipEnvs(&policy);
  // The environments really differ (otherwise equal rows would prove little).
  ASSERT_NE(envs[0]->num_actions(), envs[1]->num_actions());
  ASSERT_NE(envs[0]->state().node_dynamic, envs[3]->state().node_dynamic);
  ExpectActBatchEqualsAct(policy, envs);
}

TEST_F(PolicyTest, ActBatchEqualsActOnADeviceHead) {
  std::vector<std::unique_ptr<env::Environment>> envs;
  for (int i = 0; i < 5; ++i) envs.push_back(env::MakeEnvironment("partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)"));
  PolicyOptions o;
  o.init_seed = 3;
  Policy policy(o, FeatureLayout::Of(*envs[0]));
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < i; ++k) envs[i]->Step(policy.Act(*envs[i], &rng).action);
  ExpectActBatchEqualsAct(policy, envs);
}

TEST_F(PolicyTest, ActBatchEqualsActForTheCtFaithfulPreset) {
  auto probe = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*probe));
  ExpectActBatchEqualsAct(policy, MixedChipEnvs(&policy));
}

TEST_F(PolicyTest, ActBatchRejectsAnotherLayoutAndADoneEnvironment) {
  auto chip = env::MakeEnvironment("chip(seed=1,soft=keep)");
  auto part = env::MakeEnvironment("partition(nodes=8,devices=2)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*chip));
  std::mt19937_64 rng(1);
  std::vector<PolicyStep> out;
  EXPECT_THROW(policy.ActBatch({chip.get(), part.get()}, &rng, false, &out), ConfigError);
  auto done = env::MakeEnvironment("chip(seed=1,soft=keep)");
  while (!done->done()) done->Step(policy.Act(*done, &rng).action);
  EXPECT_THROW(policy.ActBatch({chip.get(), done.get()}, &rng, false, &out), InfeasibleAction);
}

TEST_F(PolicyTest, LoadingAFileThatIsNoCheckpointIsAClearError) {
  auto chip = env::MakeEnvironment("chip(seed=1,soft=keep)");
  EXPECT_THROW(Policy::Load("tests/CMakeLists.txt", *chip), ConfigError);
  EXPECT_THROW(Policy::Load("/nonexistent/checkpoint.pt", *chip), IoError);
}

}  // namespace
}  // namespace placerl::encoders
