// The ct_faithful preset (CT's network): shapes of its readout and 128×128 head cropped to the
// real grid, masking, permutation invariance of its per-step GCN, that it learns (PPO on a
// partition instance to the optimum; a PPO update on a small chip reaches every part), and
// its checkpoints (round trip with the preset name; a clear error in a default
// policy). The default policy's parameters are untouched by the preset's existence.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <numeric>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "datasets/util/errors.h"
#include "encoders/ct_faithful.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"
#include "env/toy/partition_env.h"

namespace placerl::encoders {
namespace {

class CtFaithfulTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/placerl_ct_faithful_test_" + std::to_string(::getpid()) + "_" + name;
}

TEST_F(CtFaithfulTest, ParametersAreCtsAndTheDefaultPolicyIsUnchanged) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy ct(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  ASSERT_NE(ct.net()->ct_faithful(), nullptr);
  std::vector<std::string> names;
  for (const auto& p : ct.net()->named_parameters()) names.push_back(p.key());
  for (const std::string& n : names) EXPECT_EQ(n.rfind("ct.", 0), 0u) << n;
  // CT's shapes: an 8-wide node input (5 static + x, y, placed) into 8, the edge FC on
  // [h_i, h_j, w] (17 → 8), the deconvolution head's first dense layer 56 → 2048.
  auto params = ct.net()->named_parameters();
  EXPECT_EQ(params["ct.node_in.weight"].sizes(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(params["ct.gcn2.weight"].sizes(), (std::vector<int64_t>{8, 17}));
  EXPECT_EQ(params["ct.deconv_in.weight"].sizes(), (std::vector<int64_t>{2048, 56}));
  EXPECT_EQ(params.find("ct.gcn3.weight"), nullptr);
  // The default policy has none of them (its checkpoint format is what it was).
  Policy plain(PolicyOptions{}, FeatureLayout::Of(*env));
  EXPECT_EQ(plain.net()->ct_faithful(), nullptr);
  for (const auto& p : plain.net()->named_parameters()) EXPECT_NE(p.key().rfind("ct.", 0), 0u) << p.key();
  EXPECT_NE(plain.net()->named_parameters().find("trunk1.weight"), nullptr);
}

TEST_F(CtFaithfulTest, ShapesAndMaskOnAChipGrid) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  std::mt19937_64 rng(2);
  for (int i = 0; i < 3; ++i) env->Step(policy.Act(*env, &rng).action);
  const GraphTensors g = MakeGraphTensors(*env->static_graph());
  torch::NoGradGuard no_grad;
  CtFaithfulNetImpl& ct = *policy.net()->ct_faithful();
  const StaticEmbedding emb = policy.net()->Encode(g);
  std::vector<float> scratch;
  const StepBatch batch = StepBatchOf(g, *env, &scratch);
  const auto enc = ct.EncodeSteps(emb, batch);
  EXPECT_EQ(enc.node.sizes(), (std::vector<int64_t>{1, g.num_nodes, 8}));
  EXPECT_EQ(enc.readout.sizes(), (std::vector<int64_t>{1, 7 * 8}));
  auto [logits, value] = policy.net()->Forward(emb, batch);
  const int64_t a = env->num_actions();
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{1, a}));
  EXPECT_EQ(value.sizes(), (std::vector<int64_t>{1}));
  int legal = 0, illegal = 0;
  for (int64_t i = 0; i < a; ++i) {
    if (env->action_mask()[i]) {
      ++legal;
      EXPECT_GT(logits[0][i].item<float>(), -1e6);
    } else {
      ++illegal;
      EXPECT_LE(logits[0][i].item<float>(), -1e8);
    }
  }
  EXPECT_GT(legal, 0);
  EXPECT_GT(illegal, 0);  // mid-episode some cells are taken
  // The per-step GCN reads the dynamic inputs: another placement gives another readout.
  const PolicyStep s = policy.Act(*env, &rng);
  env->Step(s.action);
  const auto after = ct.EncodeSteps(emb, StepBatchOf(g, *env, &scratch));
  EXPECT_FALSE(torch::allclose(enc.node, after.node, 1e-5, 1e-6));
  // Grids beyond CT's 128 × 128 are refused.
  StepBatch big = batch;
  big.spec = env::ActionSpec::Grid(129, 4);
  EXPECT_THROW(policy.net()->Forward(emb, big), ConfigError);
}

// The logits of the real grid are the top-left cols × rows corner of the 128 × 128 map: on two
// grids of different sizes the same (current node, dynamic state) gives the same map.
TEST_F(CtFaithfulTest, TheGridIsTheTopLeftCornerOfTheMap) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  const GraphTensors g = MakeGraphTensors(*env->static_graph());
  torch::NoGradGuard no_grad;
  const StaticEmbedding emb = policy.net()->Encode(g);
  std::vector<float> scratch;
  StepBatch small = StepBatchOf(g, *env, &scratch);
  const env::ActionSpec spec = small.spec;
  small.illegal = torch::zeros({1, spec.num_actions()}, torch::kBool);
  StepBatch wide = small;
  wide.spec = env::ActionSpec::Grid(spec.cols + 3, spec.rows + 2);
  wide.illegal = torch::zeros({1, wide.spec.num_actions()}, torch::kBool);
  const torch::Tensor a = policy.net()->Forward(emb, small).first.reshape({spec.rows, spec.cols});
  const torch::Tensor b = policy.net()->Forward(emb, wide).first.reshape({spec.rows + 2, spec.cols + 3});
  EXPECT_TRUE(torch::allclose(a, b.slice(0, 0, spec.rows).slice(1, 0, spec.cols), 1e-5, 1e-6));
}

// Relabel the nodes (and their dynamic inputs, and the current node): the per-step node
// embeddings permute the same way; readout, value and logits stay.
TEST_F(CtFaithfulTest, PerStepGcnIsPermutationInvariant) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  std::mt19937_64 rng(4);
  for (int i = 0; i < 4; ++i) env->Step(policy.Act(*env, &rng).action);
  const env::StaticGraph& g = *env->static_graph();
  const int32_t n = g.num_nodes, f = g.node_feature_dim, c = env->state().node_dynamic_dim;
  std::vector<int32_t> perm(n);  // new index of old node i
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(11));
  env::StaticGraph p = g;
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

  torch::NoGradGuard no_grad;
  const GraphTensors gt = MakeGraphTensors(g), pt = MakeGraphTensors(p);
  std::vector<float> scratch;
  const StepBatch batch = StepBatchOf(gt, *env, &scratch);
  StepBatch moved = batch;
  moved.current_node = torch::full({1}, static_cast<int64_t>(perm[env->state().current_node]), torch::kLong);
  std::vector<float> dyn(env->state().node_dynamic.size());
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < c; ++k) dyn[perm[i] * c + k] = env->state().node_dynamic[i * c + k];
  moved.node_dynamic = torch::from_blob(dyn.data(), {1, n, c});
  CtFaithfulNetImpl& ct = *policy.net()->ct_faithful();
  const StaticEmbedding ea = policy.net()->Encode(gt), eb = policy.net()->Encode(pt);
  const auto a = ct.EncodeSteps(ea, batch), b = ct.EncodeSteps(eb, moved);
  std::vector<int64_t> perm64(perm.begin(), perm.end());
  const torch::Tensor back = b.node.index_select(1, torch::tensor(perm64, torch::kLong));
  EXPECT_TRUE(torch::allclose(a.node, back, 1e-4, 1e-5)) << (a.node - back).abs().max().item<float>();
  EXPECT_TRUE(torch::allclose(a.readout, b.readout, 1e-4, 1e-5)) << (a.readout - b.readout).abs().max().item<float>();
  const auto fa = policy.net()->Forward(ea, batch), fb = policy.net()->Forward(eb, moved);
  EXPECT_TRUE(torch::allclose(fa.first, fb.first, 1e-4, 1e-4));
  EXPECT_NEAR(fa.second.item<float>(), fb.second.item<float>(), 1e-4);
  // A different graph does change it (the test can fail).
  p.edge_weight[0] *= 5;
  const auto c2 = ct.EncodeSteps(policy.net()->Encode(MakeGraphTensors(p)), moved);
  EXPECT_FALSE(torch::allclose(b.node, c2.node, 1e-4, 1e-5));
}

// A batch larger than the GCN's chunk (every state of one episode) gives the logits and values
// of the steps one at a time.
TEST_F(CtFaithfulTest, ChunkedBatchEqualsSingleSteps) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  std::mt19937_64 rng(6);
  std::vector<std::unique_ptr<env::Environment>> states;
  while (!env->done()) {
    states.push_back(env->Clone());
    env->Step(policy.Act(*env, &rng).action);
  }
  ASSERT_GT(static_cast<int64_t>(states.size()), CtFaithfulNetImpl::kChunk);
  std::vector<const env::Environment*> envs;
  for (const auto& e : states) envs.push_back(e.get());
  std::vector<float> values;
  const auto logits = policy.LogitsBatch(envs, &values);
  for (size_t i = 0; i < envs.size(); ++i) {
    float v = 0;
    const std::vector<float> one = policy.Logits(*envs[i], &v);
    EXPECT_NEAR(values[i], v, 1e-5f + 1e-5f * std::abs(v)) << i;
    for (size_t a = 0; a < one.size(); ++a) ASSERT_NEAR(logits[i][a], one[a], 1e-4f + 1e-5f * std::abs(one[a])) << i;
  }
}

double GreedyCut(Policy& policy, env::Environment& env) {
  std::mt19937_64 rng(0);
  env.Reset(0);
  while (!env.done()) env.Step(policy.Act(env, &rng, /*greedy=*/true).action);
  return env.info_value("cut_fraction");
}

// PPO through the per-step GCN (back-propagated per sample) learns a small partition instance.
TEST_F(CtFaithfulTest, PpoLearnsAPartitionToItsOptimum) {
  auto env = env::MakeEnvironment("partition(nodes=6,devices=2)");
  const double optimum = dynamic_cast<env::PartitionEnv&>(*env).OptimalCutFraction();
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  agents::AgentOptions o;
  o.learning_rate = 3e-3;
  o.entropy_coef = 0.02;
  o.minibatch_size = 32;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  const double before = GreedyCut(policy, *env);
  int32_t reached = -1;
  for (int32_t it = 0; it < 150 && reached < 0; ++it) {
    buffer.Clear();
    agents::CollectEpisodes(policy, *env, 16, 1000 * it, &learner.rng(), &buffer);
    learner.Update(&buffer);
    if (std::abs(GreedyCut(policy, *env) - optimum) < 1e-9) reached = it + 1;
  }
  std::printf("ct_faithful PPO: greedy cut %.4f at the start, optimum %.4f reached after %d iterations\n", before,
              optimum, reached);
  EXPECT_GT(reached, 0);
}

// On a grid: one PPO update back-propagates into the per-step GCN and the deconvolution head
// (their weights change) and leaves finite logits. (Learning is shown on the partition above:
// dozens of chip updates through the per-step GCN are too slow for the suite.)
TEST_F(CtFaithfulTest, PpoUpdateOnAChipReachesTheGcnAndTheDeconvolution) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep,reward=dense)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  auto params = policy.net()->named_parameters();
  const torch::Tensor node_in = params["ct.node_in.weight"].clone(), gcn0 = params["ct.gcn0.weight"].clone(),
                      deconv = params["ct.deconv4.weight"].clone(), value = params["ct.value3.weight"].clone();
  agents::AgentOptions o;
  o.epochs = 1;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, *env, 2, 0, &learner.rng(), &buffer);
  const agents::Stats stats = learner.Update(&buffer);
  EXPECT_TRUE(std::isfinite(stats.at("losses/policy_loss")));
  EXPECT_GT(stats.at("losses/entropy"), 0);
  EXPECT_FALSE(torch::equal(node_in, params["ct.node_in.weight"]));
  EXPECT_FALSE(torch::equal(gcn0, params["ct.gcn0.weight"]));
  EXPECT_FALSE(torch::equal(deconv, params["ct.deconv4.weight"]));
  EXPECT_FALSE(torch::equal(value, params["ct.value3.weight"]));
  env->Reset(1);
  for (float l : policy.Logits(*env)) EXPECT_TRUE(std::isfinite(l));
}

TEST_F(CtFaithfulTest, CheckpointRoundTripNamesThePreset) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  Policy policy(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  agents::Learner learner(&policy, agents::AgentOptions{});
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, *env, 2, 0, &learner.rng(), &buffer);
  learner.Update(&buffer);
  const std::string path = TempPath("ct.ckpt");
  learner.SaveCheckpoint(path);
  env->Reset(3);
  std::mt19937_64 rng(1);
  env->Step(policy.Act(*env, &rng).action);
  const std::vector<float> logits = policy.Logits(*env);
  // Policy::Load makes a ct_faithful policy from the metadata, with the same weights.
  auto loaded = Policy::Load(path, *env);
  EXPECT_EQ(loaded->options().preset, PolicyPreset::kCtFaithful);
  EXPECT_EQ(loaded->Logits(*env), logits);
  // A learner of the same preset restores it; a default policy's learner refuses, naming why.
  Policy same(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  agents::Learner same_learner(&same, agents::AgentOptions{});
  same_learner.LoadCheckpoint(path);
  EXPECT_EQ(same.Logits(*env), logits);
  EXPECT_EQ(same_learner.updates(), 1);
  PolicyOptions plain_options;
  plain_options.embedding_dim = 8;
  Policy plain(plain_options, FeatureLayout::Of(*env));
  agents::Learner plain_learner(&plain, agents::AgentOptions{});
  try {
    plain_learner.LoadCheckpoint(path);
    FAIL() << "a ct_faithful checkpoint loaded into a default policy";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("preset: ct_faithful vs default"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace placerl::encoders
