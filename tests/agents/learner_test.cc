// The learners learn: PPO and REINFORCE find the known optimum of partition(nodes=8,devices=2);
// PPO improves the mean proxy cost of a small synthetic chip over a near-uniform start; the
// rollout buffer's returns; checkpoints round-trip (same logits, same continuation) and a chip
// policy loads and runs on another netlist; mismatched checkpoints are clear errors; a frozen
// encoder keeps its weights; the ranks of a distributed run are checked to hold equal weights.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "datasets/util/errors.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"
#include "env/toy/partition_env.h"
#include "env/vector_env.h"

namespace placerl::agents {
namespace {

using encoders::FeatureLayout;
using encoders::Policy;
using encoders::PolicyOptions;

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/placerl_learner_test_" + std::to_string(::getpid()) + "_" + name;
}

// Cut fraction of the policy's greedy episode.
double GreedyCut(Policy& policy, env::Environment& env) {
  std::mt19937_64 rng(0);
  env.Reset(0);
  while (!env.done()) env.Step(policy.Act(env, &rng, /*greedy=*/true).action);
  return env.info_value("cut_fraction");
}

// Trains on partition(nodes=8,devices=2) until the greedy policy reaches the optimum; returns
// the iterations needed (or -1).
int32_t LearnPartition(Algorithm algorithm, double learning_rate, double entropy_coef, int32_t max_iterations,
                       uint64_t init_seed) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  const double optimum = dynamic_cast<env::PartitionEnv&>(*env).OptimalCutFraction();
  PolicyOptions po;
  po.embedding_dim = 16;
  AgentOptions o;
  o.algorithm = algorithm;
  o.learning_rate = learning_rate;
  o.entropy_coef = entropy_coef;
  po.init_seed = init_seed;
  Policy policy(po, FeatureLayout::Of(*env));
  o.minibatch_size = 32;
  Learner learner(&policy, o);
  RolloutBuffer buffer;
  for (int32_t it = 0; it < max_iterations; ++it) {
    buffer.Clear();
    CollectEpisodes(policy, *env, 16, 1000 * it, &learner.rng(), &buffer);
    const Stats st = learner.Update(&buffer);
    if (std::getenv("PLACERL_VERBOSE"))
      std::printf("it %d return %.4f greedy %.4f (opt %.4f) pg %.4f v %.4f ent %.4f kl %.5f clip %.3f\n", it,
                  buffer.MeanEpisodeReturn(), GreedyCut(policy, *env), optimum, st.at("losses/policy_loss"),
                  st.count("losses/value_loss") ? st.at("losses/value_loss") : 0.0, st.at("losses/entropy"),
                  st.count("losses/approx_kl") ? st.at("losses/approx_kl") : 0.0,
                  st.count("losses/clipfrac") ? st.at("losses/clipfrac") : 0.0);
    if (std::abs(GreedyCut(policy, *env) - optimum) < 1e-9) return it + 1;
  }
  return -1;
}

// PPO can settle in this instance's local optimum (cut 10/27, the contiguous split, vs 9/27):
// with these settings 5 of 6 initialisations reach the optimum within 150 iterations, so the
// test allows up to 3 (deterministic either way; this keeps it robust to changes of the model).
TEST_F(LearnerTest, PpoFindsThePartitionOptimum) {
  int32_t iterations = -1;
  uint64_t init = 1;
  for (; init <= 3 && iterations < 0; ++init) iterations = LearnPartition(Algorithm::kPpo, 2e-3, 0.05, 150, init);
  std::printf("PPO reached the optimum after %d iterations of 16 episodes (initialisation %d)\n", iterations,
              static_cast<int>(init - 1));
  EXPECT_GT(iterations, 0);
}

TEST_F(LearnerTest, ReinforceFindsThePartitionOptimum) {
  const int32_t iterations = LearnPartition(Algorithm::kReinforce, 1e-3, 0.05, 300, 1);
  std::printf("REINFORCE reached the optimum after %d iterations of 16 episodes\n", iterations);
  EXPECT_GT(iterations, 0);
}

TEST_F(LearnerTest, MonteCarloReturnsPerEpisode) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  std::mt19937_64 rng(1);
  RolloutBuffer buffer;
  CollectEpisodes(policy, *env, 3, 0, &rng, &buffer);
  ASSERT_EQ(buffer.size(), 24);
  ASSERT_EQ(buffer.episodes.size(), 3u);
  buffer.ComputeReturns(1.0);
  for (int32_t e = 0; e < 3; ++e) {
    EXPECT_TRUE(buffer.transitions[8 * e + 7].done);
    for (int32_t t = 0; t < 8; ++t) {
      // Sparse reward and γ = 1: every decision's return is its episode's return.
      EXPECT_NEAR(buffer.returns[8 * e + t], buffer.episodes[e].episode_return, 1e-6);
      EXPECT_EQ(buffer.transitions[8 * e + t].step, t);
    }
    EXPECT_NEAR(buffer.episodes[e].episode_return, -buffer.episodes[e].info[1], 1e-9);  // −cut_fraction
  }
  buffer.ComputeReturns(0.5);
  EXPECT_NEAR(buffer.returns[0], buffer.episodes[0].episode_return / 128.0, 1e-6);
  // An open episode cannot be turned into returns.
  env->Reset(9);
  buffer.Record(*env, policy.Act(*env, &rng));
  EXPECT_THROW(buffer.ComputeReturns(1.0), ConfigError);
}

TEST_F(LearnerTest, CollectsCompleteEpisodesFromAVectorEnv) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  env::VectorEnv venv = env::VectorEnv::Replicate(*env, 3, 100);
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  std::mt19937_64 rng(1);
  RolloutBuffer buffer;
  CollectEpisodes(policy, venv, 7, &rng, &buffer);
  ASSERT_GE(buffer.episodes.size(), 7u);
  ASSERT_EQ(buffer.size(), 8 * static_cast<int32_t>(buffer.episodes.size()));
  EXPECT_EQ(buffer.instances.size(), 1u);  // replicas share the static graph
  buffer.ComputeReturns(1.0);
  const size_t cut = 1;  // info "cut_fraction"
  ASSERT_EQ(env->info_names()[cut], "cut_fraction");
  for (size_t e = 0; e < buffer.episodes.size(); ++e) {
    for (int32_t t = 0; t < 8; ++t) {
      const Transition& tr = buffer.transitions[8 * e + t];
      EXPECT_EQ(tr.step, t);
      EXPECT_EQ(tr.current_node, t);
      EXPECT_EQ(tr.done, t == 7);
      EXPECT_NEAR(buffer.returns[8 * e + t], buffer.episodes[e].episode_return, 1e-6);
    }
    EXPECT_NEAR(buffer.episodes[e].episode_return, -buffer.episodes[e].info[cut], 1e-6);
  }
  // The learner trains on it.
  Learner learner(&policy, AgentOptions{});
  EXPECT_TRUE(std::isfinite(learner.Update(&buffer).at("losses/policy_loss")));
}

// Mean final proxy cost of `episodes` sampled episodes.
double MeanCost(Policy& policy, env::Environment& env, int32_t episodes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  RolloutBuffer buffer;
  CollectEpisodes(policy, env, episodes, seed, &rng, &buffer);
  double s = 0;
  for (const auto& e : buffer.episodes) s += -e.episode_return;
  return s / episodes;
}

TEST_F(LearnerTest, PpoImprovesTheCostOfASmallChip) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep,reward=dense)");
  Policy policy(PolicyOptions{}, FeatureLayout::Of(*env));
  AgentOptions o;
  o.learning_rate = 1e-2;
  const int32_t iterations = 40;  // 8 episodes each
  Learner learner(&policy, o);
  const double before = MeanCost(policy, *env, 32, 5000);
  RolloutBuffer buffer;
  for (int32_t it = 0; it < iterations; ++it) {
    buffer.Clear();
    CollectEpisodes(policy, *env, 8, 100 * it, &learner.rng(), &buffer);
    const Stats s = learner.Update(&buffer);
    if (std::getenv("PLACERL_VERBOSE"))
      std::printf("iteration %d: mean cost %.4f  policy_loss %.4f value_loss %.4f entropy %.3f kl %.4f\n", it,
                -buffer.MeanEpisodeReturn(), s.at("losses/policy_loss"), s.at("losses/value_loss"),
                s.at("losses/entropy"), s.at("losses/approx_kl"));
  }
  const double after = MeanCost(policy, *env, 32, 5000);
  std::printf("mean proxy cost of 32 sampled episodes: %.4f before, %.4f after\n", before, after);
  EXPECT_LT(after, before - 0.05);
}

// agent.freeze_encoder (fine-tuning): an update leaves every weight of the static encoder (node
// input, GCN layers, attention keys and values, metadata) as it was and changes the head's; without
// it the encoder learns too. The ct_faithful policy (GCN inside the head) refuses it.
TEST_F(LearnerTest, FreezeEncoderTrainsOnlyTheHead) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep)");
  const auto is_encoder = [](const std::string& name) {
    for (const char* prefix : {"node_in", "gcn", "att_key", "att_value", "meta_in"})
      if (name.rfind(prefix, 0) == 0) return true;
    return false;
  };
  for (const bool freeze : {true, false}) {
    PolicyOptions po;
    po.embedding_dim = 8;
    Policy policy(po, FeatureLayout::Of(*env));
    std::map<std::string, torch::Tensor> before;
    for (const auto& p : policy.net()->named_parameters()) before[p.key()] = p.value().detach().clone();
    AgentOptions o;
    o.learning_rate = 1e-2;
    o.freeze_encoder = freeze;
    Learner learner(&policy, o);
    RolloutBuffer buffer;
    for (int32_t it = 0; it < 2; ++it) {
      buffer.Clear();
      CollectEpisodes(policy, *env, 4, 10 * it, &learner.rng(), &buffer);
      learner.Update(&buffer);
    }
    int32_t encoder_changed = 0, encoder_total = 0, head_changed = 0;
    for (const auto& p : policy.net()->named_parameters()) {
      const bool changed = !torch::equal(p.value(), before.at(p.key()));
      if (is_encoder(p.key())) {
        ++encoder_total;
        encoder_changed += changed;
      } else {
        head_changed += changed;
      }
    }
    EXPECT_GE(encoder_total, 5);  // node_in, 3 GCN layers' weights, att_key, att_value
    EXPECT_GT(head_changed, 3) << "freeze " << freeze;
    if (freeze) EXPECT_EQ(encoder_changed, 0);
    else EXPECT_GT(encoder_changed, encoder_total / 2);
  }
  Policy ct(PolicyOptions::CtFaithful(), FeatureLayout::Of(*env));
  AgentOptions o;
  o.freeze_encoder = true;
  EXPECT_THROW(Learner(&ct, o), ConfigError);
}

// agent.entropy_target: PPO's entropy on partition(nodes=8,devices=2) collapses with the fixed
// coefficient; with a target the coefficient grows while the entropy is below it and holds the
// entropy near it. Off, nothing changes (no charts/entropy_coef, the fixed coefficient). The
// adapted coefficient survives a checkpoint. A target without a start coefficient is refused.
TEST_F(LearnerTest, EntropyTargetHoldsTheEntropyAboveTheCollapse) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  auto run = [&](double target, int32_t iterations, Learner** keep, Policy** keep_policy) {
    PolicyOptions po;
    po.embedding_dim = 16;
    auto* policy = new Policy(po, FeatureLayout::Of(*env));
    AgentOptions o;
    o.learning_rate = 1e-2;
    o.minibatch_size = 32;
    o.entropy_target = target;
    // A fast adaptation: at the default rate 1 the coefficient catches the collapse with some BLAS
    // kernels (Intel's AVX-512 ones) and not with others (AVX2: the policy saturates first and the
    // entropy's gradient vanishes); at 10 it holds the target with every kernel set tried.
    o.entropy_coef_rate = 10;
    auto* learner = new Learner(policy, o);
    RolloutBuffer buffer;
    std::vector<Stats> stats;
    for (int32_t it = 0; it < iterations; ++it) {
      buffer.Clear();
      CollectEpisodes(*policy, *env, 16, 1000 * it, &learner->rng(), &buffer);
      stats.push_back(learner->Update(&buffer));
    }
    *keep = learner;
    *keep_policy = policy;
    return stats;
  };
  constexpr int32_t kIterations = 60;
  Learner *off_learner = nullptr, *on_learner = nullptr;
  Policy *off_policy = nullptr, *on_policy = nullptr;
  const std::vector<Stats> off = run(0, kIterations, &off_learner, &off_policy);
  const std::vector<Stats> on = run(0.5, kIterations, &on_learner, &on_policy);
  auto tail_entropy = [](const std::vector<Stats>& s) {
    double sum = 0;
    for (size_t i = s.size() - 10; i < s.size(); ++i) sum += s[i].at("losses/entropy");
    return sum / 10;
  };
  const double off_entropy = tail_entropy(off), on_entropy = tail_entropy(on);
  std::printf("mean entropy of the last 10 updates: fixed coefficient %.4f, target 0.5 %.4f (coefficient %.4f)\n",
              off_entropy, on_entropy, on.back().at("charts/entropy_coef"));
  EXPECT_EQ(off.back().count("charts/entropy_coef"), 0u);
  EXPECT_LT(off_entropy, 0.25);
  EXPECT_GT(on_entropy, 0.35);
  EXPECT_LT(on_entropy, 0.69);  // below ln 2: the policy still learns
  EXPECT_GT(on.back().at("charts/entropy_coef"), 0.01);  // it grew from its start
  EXPECT_EQ(on.front().at("charts/entropy_coef"), 0.01);

  // The adapted coefficient is saved and restored: the restored learner's next update uses it.
  const std::string path = TempPath("entropy_target.pt");
  on_learner->SaveCheckpoint(path);
  Policy same(on_policy->options(), FeatureLayout::Of(*env));
  AgentOptions o;
  o.learning_rate = 1e-2;
  o.minibatch_size = 32;
  o.entropy_target = 0.5;
  o.entropy_coef_rate = 10;
  Learner restored(&same, o);
  restored.LoadCheckpoint(path);
  RolloutBuffer a, b;
  std::mt19937_64 rng_a(5), rng_b(5);
  CollectEpisodes(*on_policy, *env, 4, 77, &rng_a, &a);
  CollectEpisodes(same, *env, 4, 77, &rng_b, &b);
  const double expected = on_learner->Update(&a).at("charts/entropy_coef");
  EXPECT_EQ(restored.Update(&b).at("charts/entropy_coef"), expected);
  EXPECT_GT(expected, 0.01);
  std::remove(path.c_str());
  delete off_learner;
  delete on_learner;
  delete off_policy;
  delete on_policy;

  AgentOptions bad;
  bad.entropy_target = 0.5;
  bad.entropy_coef = 0;
  Policy p(PolicyOptions{}, FeatureLayout::Of(*env));
  EXPECT_THROW(Learner(&p, bad), ConfigError);
  bad.entropy_coef = 0.01;
  bad.entropy_target = -1;
  EXPECT_THROW(Learner(&p, bad), ConfigError);
}

TEST_F(LearnerTest, CheckpointRoundTripAndAnotherNetlist) {
  auto env = env::MakeEnvironment("chip(seed=1,soft=keep,reward=dense)");
  PolicyOptions po;
  po.embedding_dim = 8;
  Policy policy(po, FeatureLayout::Of(*env));
  AgentOptions o;
  Learner learner(&policy, o);
  RolloutBuffer buffer;
  CollectEpisodes(policy, *env, 2, 0, &learner.rng(), &buffer);
  learner.Update(&buffer);
  const std::string path = TempPath("chip.pt");
  learner.SaveCheckpoint(path);

  // Continuing from the checkpoint gives what continuing the original gives.
  env->Reset(3);
  const std::vector<float> logits = policy.Logits(*env);
  buffer.Clear();
  CollectEpisodes(policy, *env, 2, 7, &learner.rng(), &buffer);
  const Stats next = learner.Update(&buffer);
  env->Reset(3);
  const std::vector<float> logits_after = policy.Logits(*env);

  PolicyOptions other_init = po;
  other_init.init_seed = 99;
  Policy restored(other_init, FeatureLayout::Of(*env));
  Learner restored_learner(&restored, o);
  EXPECT_THROW(restored_learner.LoadCheckpoint(path), ConfigError);  // init_seed is part of the metadata
  Policy same(po, FeatureLayout::Of(*env));
  {  // perturb the weights first, so that loading must overwrite them
    torch::NoGradGuard no_grad;
    for (auto& p : same.net()->parameters()) p.add_(0.5);
  }
  Learner same_learner(&same, o);
  same_learner.LoadCheckpoint(path);
  EXPECT_EQ(same_learner.updates(), 1);
  env->Reset(3);
  EXPECT_EQ(same.Logits(*env), logits);
  buffer.Clear();
  CollectEpisodes(same, *env, 2, 7, &same_learner.rng(), &buffer);
  const Stats next_again = same_learner.Update(&buffer);
  EXPECT_EQ(next_again.at("losses/policy_loss"), next.at("losses/policy_loss"));
  env->Reset(3);
  EXPECT_EQ(same.Logits(*env), logits_after);

  // Policy::Load runs the checkpoint zero-shot on a netlist with another grid.
  auto tiles = env::MakeEnvironment(
      "chip(netlist=../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt,soft=keep)");
  auto loaded = Policy::Load(path, *tiles);
  std::mt19937_64 rng(1);
  tiles->Reset(0);
  while (!tiles->done()) tiles->Step(loaded->Act(*tiles, &rng).action);
  EXPECT_TRUE(std::isfinite(tiles->info_value("proxy_cost")));
  // … with the same logits as the policy it was saved from.
  env->Reset(3);
  EXPECT_EQ(Policy::Load(path, *env)->Logits(*env), logits);

  // A device environment cannot use it; a PPO checkpoint does not load into REINFORCE.
  auto part = env::MakeEnvironment("partition(nodes=8,devices=2)");
  try {
    Policy::Load(path, *part);
    FAIL() << "loaded a grid checkpoint for a device environment";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("action kind"), std::string::npos) << e.what();
  }
  AgentOptions ro = o;
  ro.algorithm = Algorithm::kReinforce;
  Policy r(po, FeatureLayout::Of(*env));
  Learner reinforce(&r, ro);
  EXPECT_THROW(reinforce.LoadCheckpoint(path), ConfigError);
  std::remove(path.c_str());
}

// A chip environment with two per-cell maps in action_features (as the chip env will provide:
// channel-major [C, cols*rows]): "blocked" = 1 − mask, and a "ramp" that grows with the column.
class WithActionFeatures : public env::Environment {
 public:
  explicit WithActionFeatures(std::unique_ptr<env::Environment> inner) : inner_(std::move(inner)) { Refresh(); }
  std::string name() const override { return inner_->name(); }
  env::ActionSpec action_spec() const override { return inner_->action_spec(); }
  int32_t episode_length() const override { return inner_->episode_length(); }
  void Reset(uint64_t seed) override {
    inner_->Reset(seed);
    Refresh();
  }
  env::StepResult Step(int32_t action) override {
    const env::StepResult r = inner_->Step(action);
    Refresh();
    return r;
  }
  bool done() const override { return inner_->done(); }
  std::shared_ptr<const env::StaticGraph> static_graph() const override { return inner_->static_graph(); }
  const env::DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override { return inner_->info_names(); }
  const std::vector<double>& info() const override { return inner_->info(); }
  std::unique_ptr<env::Environment> Clone() const override {
    return std::make_unique<WithActionFeatures>(inner_->Clone());
  }
  float ramp_scale = 1.f;

 private:
  void Refresh() {
    state_ = inner_->state();
    const env::ActionSpec spec = inner_->action_spec();
    const int32_t a = spec.num_actions();
    state_.action_feature_dim = 2;
    state_.action_feature_names = {"blocked", "ramp"};
    state_.action_features.assign(2 * static_cast<size_t>(a), 0.f);
    for (int32_t i = 0; i < a; ++i) {
      state_.action_features[i] = state_.action_mask[i] ? 0.f : 1.f;
      state_.action_features[a + i] = ramp_scale * static_cast<float>(i % spec.cols) / spec.cols;
    }
  }
  std::unique_ptr<env::Environment> inner_;
  env::DynamicState state_;
};

TEST_F(LearnerTest, GridHeadReadsActionFeaturesAndTrainsOnThem) {
  WithActionFeatures env(env::MakeEnvironment("chip(seed=1,soft=keep,reward=dense)"));
  Policy policy(PolicyOptions{}, FeatureLayout::Of(env));
  EXPECT_EQ(policy.layout().action_feature_names, (std::vector<std::string>{"blocked", "ramp"}));
  env.Reset(0);
  const std::vector<float> before = policy.Logits(env);
  ASSERT_EQ(before.size(), static_cast<size_t>(env.num_actions()));
  env.ramp_scale = 5.f;  // other maps, same state otherwise: other logits
  env.Reset(0);
  EXPECT_NE(policy.Logits(env), before);
  AgentOptions o;
  Learner learner(&policy, o);
  RolloutBuffer buffer;
  CollectEpisodes(policy, env, 2, 0, &learner.rng(), &buffer);
  EXPECT_EQ(buffer.transitions[0].action_features.size(), 2u * env.num_actions());
  const Stats s = learner.Update(&buffer);
  EXPECT_TRUE(std::isfinite(s.at("losses/policy_loss")));
  const std::string path = TempPath("features.pt");
  learner.SaveCheckpoint(path);
  EXPECT_NO_THROW(Policy::Load(path, env));
  // A policy trained with the maps does not load where they are absent (and says why).
  auto plain = env::MakeEnvironment("chip(seed=1,soft=keep,reward=dense)");
  try {
    Policy::Load(path, *plain);
    FAIL() << "loaded a policy with action features for an environment without them";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("action_feature_names"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

// One rank's view of a two-rank run for CheckSameWeights: the other rank's weight checksum is
// `peer` (AllReduceMax over {c, -c} of both ranks).
class TwoRanks : public Collective {
 public:
  explicit TwoRanks(double peer) : peer_(peer) {}
  int rank() const override { return 1; }
  int world_size() const override { return 2; }
  void AllReduceSum(float*, int64_t) override {}
  void AllReduceSum(double*, int64_t) override {}
  void AllReduceMax(double* v, int64_t n) override {
    ASSERT_EQ(n, 2);
    v[0] = std::max(v[0], peer_);
    v[1] = std::max(v[1], -peer_);
  }

 private:
  double peer_;
};

TEST_F(LearnerTest, CheckSameWeightsNamesTheRankWhenTheRanksDiffer) {
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  PolicyOptions po;
  po.embedding_dim = 16;
  Policy policy(po, FeatureLayout::Of(*env));
  Learner learner(&policy, AgentOptions());
  CheckSameWeights(learner, nullptr, "at the start");  // one process: nothing to compare
  TwoRanks same(learner.WeightChecksum());
  CheckSameWeights(learner, &same, "at the start");
  TwoRanks other(learner.WeightChecksum() + 1e-3);
  try {
    CheckSameWeights(learner, &other, "after loading the checkpoint");
    ADD_FAILURE() << "no error for different weights";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "rank 1: the workers' weights differ after loading the checkpoint");
  }
}

}  // namespace
}  // namespace placerl::agents
