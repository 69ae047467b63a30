// The lstm policy preset (encoders/lstm_policy.h): shapes and masks on the device and block
// environments, ActBatch equal to an Act loop, the cached O(1)-per-step inference equal to the
// teacher-forced training path (the key correctness test: PPO's ratio is 1 before any step),
// REINFORCE learning a tiny synthetic block space and a two-chain device graph to their known
// optima, bounded logits, checkpoint round trips, and the ConfigErrors (grid actions, a
// decision order other than node t at step t, a mismatched preset or encoder).
#include "encoders/lstm_policy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "datasets/util/errors.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/block/block_env.h"
#include "env/registry.h"
#include "env/vector_env.h"

namespace placerl::encoders {
namespace {

class LstmPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/placerl_lstm_policy_test_" + std::to_string(::getpid()) + "_" + name;
}

PolicyOptions Small(LstmEncoder encoder = LstmEncoder::kBidirectional, bool attention = true) {
  PolicyOptions o;
  o.preset = PolicyPreset::kLstm;
  o.lstm_encoder = encoder;
  o.lstm_attention = attention;
  o.embedding_dim = 16;
  o.hidden_dim = 24;
  return o;
}

// 3 decisions × 4 choices, additive synthetic quality with a known optimum.
std::unique_ptr<env::BlockEnv> TinyBlock(std::shared_ptr<env::SyntheticQuality>* quality_out = nullptr) {
  auto space = std::make_shared<const nas::SearchSpace>(nas::ParseSearchSpace(
      "name: \"tiny\"\nnode { name: \"n{i}\" repeat: 3 decision { name: \"x\" choice: [\"a\", \"b\", \"c\", \"d\"] } }\n",
      "tiny.pbtxt"));
  auto quality = std::make_shared<env::SyntheticQuality>(*space, 11);
  if (quality_out) *quality_out = quality;
  return std::make_unique<env::BlockEnv>(space, quality, std::make_shared<env::NoCost>(), env::BlockEnvOptions{});
}

// Two independent chains of 3 equal matmuls (10 ms each on a K80 die), tiny outputs: the best
// placement of two equal devices puts one chain on each.
std::string TwoChainGraph() {
  const std::string path = TempPath("two_chains.graph");
  std::ofstream out(path);
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 3; ++k) {
      const std::string name = "c" + std::to_string(c) + "_" + std::to_string(k);
      out << "op " << name << " matmul flops=43700000000 bytes=4096 out=1024 params=0 temp=0 coloc=" << name;
      if (k > 0) out << " inputs=c" << c << "_" << k - 1;
      out << "\n";
    }
  return path;
}

TEST_F(LstmPolicyTest, ShapesMasksAndParametersOnDeviceAndBlockEnvironments) {
  for (const std::string spec : {"device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2,cpu=1)')",
                                 "partition(nodes=6,devices=3)"}) {
    auto env = env::MakeEnvironment(spec);
    Policy policy(Small(), FeatureLayout::Of(*env));
    auto params = policy.net()->named_parameters();
    EXPECT_TRUE(params.contains("lstm.encoder.weight_ih_l0_reverse")) << "bidirectional encoder";
    EXPECT_TRUE(params.contains("lstm.decoder.weight_hh_l0"));
    EXPECT_TRUE(params.contains("lstm.att_key.weight"));
    env->Reset(1);
    std::mt19937_64 rng(3);
    while (!env->done()) {
      float value = 0;
      const std::vector<float> logits = policy.Logits(*env, &value);
      ASSERT_EQ(static_cast<int32_t>(logits.size()), env->num_actions());
      EXPECT_TRUE(std::isfinite(value));
      for (int32_t a = 0; a < env->num_actions(); ++a) {
        if (env->action_mask()[a]) EXPECT_TRUE(std::isfinite(logits[a]) && logits[a] > -1e8);
        else EXPECT_EQ(logits[a], -1e9f);
      }
      const PolicyStep s = policy.Act(*env, &rng);
      ASSERT_TRUE(env->action_mask()[s.action]);
      env->Step(s.action);
    }
  }
  auto block = TinyBlock();
  Policy enas(PolicyOptions::EnasController(), FeatureLayout::Of(*block));
  EXPECT_FALSE(enas.net()->named_parameters().contains("lstm.encoder.weight_ih_l0"));
  block->Reset(1);
  std::mt19937_64 rng(1);
  while (!block->done()) {
    const std::vector<float> logits = enas.Logits(*block);
    for (int32_t a = 0; a < block->num_actions(); ++a)
      if (block->action_mask()[a]) EXPECT_LE(std::abs(logits[a]), 2.5f + 1e-6f) << "tanh constant 2.5 bounds them";
    block->Step(enas.Act(*block, &rng).action);
  }
}

TEST_F(LstmPolicyTest, ActBatchEqualsAnActLoopAtDifferentSteps) {
  auto proto = env::MakeEnvironment("partition(nodes=8,devices=2)");
  Policy batched(Small(), FeatureLayout::Of(*proto)), looped(Small(), FeatureLayout::Of(*proto));
  // Environments at different steps (and two instances: a block space as well would need
  // another layout, so two partition graphs of the same shape).
  std::vector<std::unique_ptr<env::Environment>> envs;
  for (int i = 0; i < 4; ++i) envs.push_back(env::MakeEnvironment(i < 3 ? "partition(nodes=8,devices=2)"
                                                                        : "partition(nodes=8,devices=2,graph_seed=5)"));
  std::mt19937_64 warm(9);
  for (int i = 0; i < 4; ++i) {
    envs[i]->Reset(i);
    for (int k = 0; k < i; ++k) envs[i]->Step(batched.Act(*envs[i], &warm).action);
  }
  std::vector<std::unique_ptr<env::Environment>> copies;
  for (auto& e : envs) copies.push_back(e->Clone());
  std::mt19937_64 rng_a(5), rng_b(5);
  for (int round = 0; round < 4; ++round) {
    std::vector<const env::Environment*> ptrs;
    for (auto& e : envs) ptrs.push_back(e.get());
    std::vector<PolicyStep> out;
    batched.ActBatch(ptrs, &rng_a, false, &out);
    for (int i = 0; i < 4; ++i) {
      const PolicyStep s = looped.Act(*copies[i], &rng_b);
      EXPECT_EQ(s.action, out[i].action) << "round " << round << " env " << i;
      EXPECT_NEAR(s.log_prob, out[i].log_prob, 1e-5);
      EXPECT_NEAR(s.value, out[i].value, 1e-5);
      envs[i]->Step(out[i].action);
      copies[i]->Step(s.action);
    }
  }
}

// Cached inference (one cell per step, state kept per environment) == the teacher-forced
// decoder over the recorded prefix (one LSTM call), for every decision of an episode.
TEST_F(LstmPolicyTest, CachedInferenceEqualsTeacherForcedTraining) {
  auto env = env::MakeEnvironment("device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=3,cpu=1)')");
  Policy policy(Small(), FeatureLayout::Of(*env));
  std::mt19937_64 rng(2);
  env->Reset(1);
  std::vector<std::vector<float>> cached;
  std::vector<int64_t> actions;
  std::vector<std::vector<uint8_t>> masks;
  while (!env->done()) {
    cached.push_back(policy.Logits(*env));
    masks.push_back(env->action_mask());
    const PolicyStep s = policy.Act(*env, &rng);
    actions.push_back(s.action);
    env->Step(s.action);
  }
  LstmPolicyNetImpl& m = *policy.net()->lstm();
  {
  torch::NoGradGuard no_grad;
  const StaticEmbedding emb = m.Encode(MakeGraphTensors(*env->static_graph()));
  const int64_t t = static_cast<int64_t>(actions.size()), a = env->num_actions();
  torch::Tensor previous = torch::full({t, 1}, static_cast<int64_t>(m.start_symbol()), torch::kLong);
  for (int64_t k = 1; k < t; ++k) previous[k][0] = actions[k - 1];
  const torch::Tensor h = m.Decode(emb, previous).squeeze(1);  // [T, H]
  torch::Tensor mask = torch::empty({t, a}, torch::kUInt8);
  for (int64_t k = 0; k < t; ++k)
    for (int64_t j = 0; j < a; ++j) mask[k][j] = masks[k][j];
  const torch::Tensor logits = m.Head(emb, h, mask.eq(0)).first.contiguous();
  for (int64_t k = 0; k < t; ++k)
    for (int64_t j = 0; j < a; ++j) EXPECT_NEAR(logits[k][j].item<float>(), cached[k][j], 1e-4) << k << "," << j;
  }

  // The learner's path: collect (cached) and update with a vanishing step: the PPO ratio is 1,
  // i.e. the training log-probabilities equal the collected ones.
  agents::AgentOptions o;
  o.learning_rate = 1e-12;
  o.epochs = 1;
  o.minibatch_size = 7;  // shuffled minibatches cut episodes: prefixes come from the buffer
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, *env, 3, 10, &learner.rng(), &buffer);
  const agents::Stats stats = learner.Update(&buffer);
  EXPECT_LT(std::abs(stats.at("losses/approx_kl")), 1e-6);
  EXPECT_EQ(stats.at("losses/clipfrac"), 0.0);
}

// The per-environment decoder state is never continued across a reset, steps the policy did
// not take, or a clone: the logits equal those of a clone (which recomputes its prefix).
TEST_F(LstmPolicyTest, CachedStateFollowsResetsAndForeignSteps) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  Policy policy(Small(), FeatureLayout::Of(*env));
  std::mt19937_64 rng(4);
  env->Reset(0);
  for (int k = 0; k < 3; ++k) env->Step(policy.Act(*env, &rng).action);  // cached up to step 3
  auto expect_as_clone = [&](const char* what) {
    auto clone = env->Clone();
    const std::vector<float> a = policy.Logits(*env), b = policy.Logits(*clone);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << what;
  };
  env->Reset(1);  // a new episode: same address, step 0
  expect_as_clone("after reset");
  for (int k = 0; k < 4; ++k) {  // steps the policy did not choose (the other device than it would)
    const int32_t a = 1 - policy.Act(*env, &rng, /*greedy=*/true).action;
    env->Step(env->action_mask()[a] ? a : 1 - a);
  }
  expect_as_clone("after foreign steps");
  policy.ClearCache();
  expect_as_clone("after ClearCache");
}

// Gradients reach the encoder, the decoder, the attention and the value head.
TEST_F(LstmPolicyTest, PpoUpdateReachesEncoderDecoderAndValue) {
  auto env = env::MakeEnvironment("partition(nodes=6,devices=2)");
  Policy policy(Small(), FeatureLayout::Of(*env));
  auto params = policy.net()->named_parameters();
  std::vector<std::string> names = {"lstm.node_in.weight", "lstm.encoder.weight_hh_l0", "lstm.decoder.weight_ih_l0",
                                    "lstm.att_key.weight", "lstm.action_embedding", "lstm.value.weight"};
  std::vector<torch::Tensor> before;
  for (const auto& n : names) before.push_back(params[n].clone());
  agents::AgentOptions o;
  o.epochs = 1;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, *env, 8, 0, &learner.rng(), &buffer);
  learner.Update(&buffer);
  for (size_t i = 0; i < names.size(); ++i) EXPECT_FALSE(torch::equal(before[i], params[names[i]])) << names[i];
}

std::vector<int32_t> GreedyActions(Policy& policy, env::Environment& env, double* reward = nullptr) {
  env.Reset(0);
  std::mt19937_64 rng(0);
  std::vector<int32_t> actions;
  double total = 0;
  while (!env.done()) {
    actions.push_back(policy.Act(env, &rng, /*greedy=*/true).action);
    total += env.Step(actions.back()).reward;
  }
  if (reward) *reward = total;
  return actions;
}

// The ENAS controller's shape (no encoder, decoder fed the previous choice) on 3 decisions × 4
// choices. (Measured while writing this: with 10 episodes per update, or 6 decisions, both this
// policy and the default GNN collapse onto one choice for every decision within 200 updates —
// see docs/nas.md; 40 episodes per update and a 0.05 entropy bonus reach the optimum.)
TEST_F(LstmPolicyTest, ReinforceLearnsATinySyntheticBlockSpaceToItsOptimum) {
  std::shared_ptr<env::SyntheticQuality> quality;
  auto env = TinyBlock(&quality);
  const nas::Architecture optimum = quality->Optimum();
  PolicyOptions po = PolicyOptions::EnasController();
  po.hidden_dim = po.embedding_dim = 32;
  po.logit_tanh_constant = 0;  // bounded logits learn this too, but in ~190 updates instead of ~70
  po.logit_temperature = 1;
  Policy policy(po, FeatureLayout::Of(*env));
  agents::AgentOptions o;
  o.algorithm = agents::Algorithm::kReinforce;
  o.learning_rate = 1e-2;
  o.entropy_coef = 0.05;
  o.baseline_decay = 0.9;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  int reached = -1;
  for (int it = 0; it < 300 && reached < 0; ++it) {
    buffer.Clear();
    agents::CollectEpisodes(policy, *env, 40, 100 * it, &learner.rng(), &buffer);
    learner.Update(&buffer);
    const std::vector<int32_t> greedy = GreedyActions(policy, *env);
    if (nas::Architecture(greedy.begin(), greedy.end()) == optimum) reached = it + 1;
  }
  std::printf("lstm REINFORCE (ENAS controller): tiny synthetic optimum reached after %d updates of 40\n", reached);
  EXPECT_GT(reached, 0);
}

TEST_F(LstmPolicyTest, ReinforceLearnsTwoChainsOnTwoDevices) {
  const std::string graph = TwoChainGraph();
  auto env = env::MakeEnvironment("device(graph=" + graph + ",machine='k80(gpus=2,cpu=0)')");
  // The optimum by enumeration of all 2^6 placements.
  double best = -1e300;
  for (int mask = 0; mask < 64; ++mask) {
    env->Reset(0);
    double r = 0;
    for (int k = 0; k < 6; ++k) r += env->Step((mask >> k) & 1).reward;
    best = std::max(best, r);
  }
  Policy policy(Small(), FeatureLayout::Of(*env));
  agents::AgentOptions o;
  o.algorithm = agents::Algorithm::kReinforce;
  o.learning_rate = 1e-2;
  o.entropy_coef = 1e-3;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  int reached = -1;
  double greedy = 0;
  for (int it = 0; it < 200 && reached < 0; ++it) {
    buffer.Clear();
    agents::CollectEpisodes(policy, *env, 8, 100 * it, &learner.rng(), &buffer);
    learner.Update(&buffer);
    GreedyActions(policy, *env, &greedy);
    if (greedy >= best - 1e-9) reached = it + 1;
  }
  std::printf("lstm REINFORCE (seq2seq): two-chain optimum %.6f reached after %d updates of 8 (greedy %.6f)\n", best,
              reached, greedy);
  EXPECT_GT(reached, 0);
  std::remove(graph.c_str());
}

TEST_F(LstmPolicyTest, CheckpointRoundTripKeepsThePresetAndRefusesAMismatch) {
  auto env = env::MakeEnvironment("partition(nodes=6,devices=2)");
  PolicyOptions po = Small(LstmEncoder::kUnidirectional);
  po.logit_tanh_constant = 2.5;
  po.logit_temperature = 5;
  Policy policy(po, FeatureLayout::Of(*env));
  agents::AgentOptions ao;
  ao.algorithm = agents::Algorithm::kReinforce;
  agents::Learner learner(&policy, ao);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, *env, 4, 0, &learner.rng(), &buffer);
  learner.Update(&buffer);
  const std::string path = TempPath("lstm.ckpt");
  learner.SaveCheckpoint(path);
  env->Reset(3);
  std::mt19937_64 rng(1);
  env->Step(policy.Act(*env, &rng).action);
  const std::vector<float> logits = policy.Logits(*env);
  auto loaded = Policy::Load(path, *env);
  EXPECT_EQ(loaded->options().preset, PolicyPreset::kLstm);
  EXPECT_EQ(loaded->options().lstm_encoder, LstmEncoder::kUnidirectional);
  EXPECT_EQ(loaded->options().logit_tanh_constant, 2.5);
  EXPECT_EQ(loaded->options().logit_temperature, 5);
  const std::vector<float> again = loaded->Logits(*env);  // a fresh policy recomputes the prefix
  ASSERT_EQ(again.size(), logits.size());
  for (size_t i = 0; i < logits.size(); ++i) EXPECT_NEAR(again[i], logits[i], 1e-5);

  auto refuses = [&](const PolicyOptions& other, const std::string& what) {
    Policy p(other, FeatureLayout::Of(*env));
    agents::Learner l(&p, ao);
    try {
      l.LoadCheckpoint(path);
      ADD_FAILURE() << "loaded into " << what;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  PolicyOptions plain;
  refuses(plain, "preset: lstm vs default");
  PolicyOptions bi = po;
  bi.lstm_encoder = LstmEncoder::kBidirectional;
  refuses(bi, "lstm_encoder: unidirectional vs bidirectional");
  PolicyOptions unbounded = po;
  unbounded.logit_tanh_constant = 0;
  refuses(unbounded, "logit_tanh_constant");
  std::remove(path.c_str());
}

// Decides node N − 1 − t at step t: the lstm preset refuses it.
class ReversedPartition : public env::Environment {
 public:
  ReversedPartition() : inner_(env::MakeEnvironment("partition(nodes=6,devices=2)")) { Sync(); }
  std::string name() const override { return "reversed"; }
  env::ActionSpec action_spec() const override { return inner_->action_spec(); }
  int32_t episode_length() const override { return inner_->episode_length(); }
  void Reset(uint64_t seed) override { inner_->Reset(seed), Sync(); }
  env::StepResult Step(int32_t a) override {
    auto r = inner_->Step(a);
    Sync();
    return r;
  }
  bool done() const override { return inner_->done(); }
  std::shared_ptr<const env::StaticGraph> static_graph() const override { return inner_->static_graph(); }
  const env::DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override { return inner_->info_names(); }
  const std::vector<double>& info() const override { return inner_->info(); }
  std::unique_ptr<env::Environment> Clone() const override { return std::make_unique<ReversedPartition>(); }

 private:
  void Sync() {
    state_ = inner_->state();
    if (state_.current_node >= 0) state_.current_node = inner_->episode_length() - 1 - state_.step;
  }
  std::unique_ptr<env::Environment> inner_;
  env::DynamicState state_;
};

TEST_F(LstmPolicyTest, ConfigErrors) {
  ReversedPartition reversed;
  Policy policy(Small(), FeatureLayout::Of(reversed));
  reversed.Reset(1);
  EXPECT_THROW(policy.Logits(reversed), ConfigError);  // step 0 decides node 5
  auto chip = env::MakeEnvironment("chip(seed=1,soft=keep)");
  EXPECT_THROW(Policy(Small(), FeatureLayout::Of(*chip)), ConfigError);  // grid actions
  auto block = TinyBlock();
  EXPECT_THROW(Policy(Small(LstmEncoder::kNone, /*attention=*/true), FeatureLayout::Of(*block)), ConfigError);
  PolicyOptions bad = Small();
  bad.logit_temperature = 0;
  EXPECT_THROW(Policy(bad, FeatureLayout::Of(*block)), ConfigError);
  PolicyOptions ct = PolicyOptions::CtFaithful();
  ct.logit_tanh_constant = 2.5;
  EXPECT_THROW(Policy(ct, FeatureLayout::Of(*block)), ConfigError);
  EXPECT_THROW(ParsePolicyPreset("seq2seq"), ConfigError);
  EXPECT_EQ(ParsePolicyPreset("lstm"), PolicyPreset::kLstm);
}

// The default preset's bounded logits: C·tanh(l / T) before the mask.
TEST_F(LstmPolicyTest, DefaultPresetBoundedLogits) {
  auto env = env::MakeEnvironment("partition(nodes=6,devices=3)");
  PolicyOptions plain, bounded;
  bounded.logit_tanh_constant = 1.5;
  bounded.logit_temperature = 2;
  Policy a(plain, FeatureLayout::Of(*env)), b(bounded, FeatureLayout::Of(*env));
  env->Reset(1);
  const std::vector<float> la = a.Logits(*env), lb = b.Logits(*env);
  for (size_t i = 0; i < la.size(); ++i) {
    if (env->action_mask()[i]) EXPECT_NEAR(lb[i], 1.5f * std::tanh(la[i] / 2), 1e-5);
    else EXPECT_EQ(lb[i], -1e9f);
  }
}

}  // namespace
}  // namespace placerl::encoders
