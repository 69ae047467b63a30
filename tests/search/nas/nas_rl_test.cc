// nas-search's learned controllers (search/nas/nas_rl.h): REINFORCE (the ENAS
// controller's algorithm) and PPO with the shared policy learn an additive synthetic quality on
// the NB201 space to its known optimum; the budget counts every sampled architecture (a last
// partial batch too); the bookkeeping is the table's (an episode's reward = the environment's
// score = the CSV's accuracy); a seed gives the same search; bad options are errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "datasets/nas/tables.h"
#include "datasets/util/errors.h"
#include "env/block/block_env.h"
#include "env/block/block_models.h"
#include "search/nas/nas_rl.h"
#include "datasets/nas/search_space.h"

namespace placerl {
namespace {

class NasRlTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
};

env::BlockEnvOptions Synthetic(uint64_t seed) {
  env::BlockEnvOptions o;
  o.space = "nb201";
  o.quality = "synthetic";
  o.seed = seed;
  return o;
}

// A tiny test-made space: 4 decisions × 4 choices (256 architectures).
constexpr const char* kTinySpace = R"(
name: "tiny"
description: "4 decisions x 4 choices"
choice_list { name: "ops" choice: ["a", "b", "c", "d"] }
node { name: "n1" decision { name: "x" choices: "ops" } }
node { name: "n2" decision { name: "x" choices: "ops" } }
node { name: "n3" decision { name: "x" choices: "ops" } }
node { name: "n4" decision { name: "x" choices: "ops" } }
)";

double MeanOfLast(const std::vector<double>& v, size_t n) {
  n = std::min(n, v.size());
  return std::accumulate(v.end() - n, v.end(), 0.0) / n;
}

struct Tiny {
  std::shared_ptr<const nas::SearchSpace> space =
      std::make_shared<const nas::SearchSpace>(nas::ParseSearchSpace(kTinySpace, "tiny.pbtxt"));
  std::shared_ptr<const env::SyntheticQuality> quality;
  std::unique_ptr<env::BlockEnv> env;
  explicit Tiny(uint64_t seed) {
    quality = std::make_shared<const env::SyntheticQuality>(*space, seed);
    env = std::make_unique<env::BlockEnv>(space, quality, std::make_shared<const env::NoCost>(), env::BlockEnvOptions{});
  }
};

// Learning settings of these tests: a strong entropy bonus (0.1) because the shared choice head
// otherwise collapses early onto one decision-independent choice (docs/nas.md "Learned
// controllers": a known weakness of the GNN policy on choice spaces, measured there).
NasRlOptions LearnOptions(agents::Algorithm algorithm, uint64_t seed) {
  NasRlOptions o;
  o.agent.algorithm = algorithm;
  o.seed = seed;
  o.budget = 2000;
  o.episodes_per_update = 10;
  o.agent.learning_rate = 3e-3;
  o.agent.entropy_coef = 0.1;
  o.agent.baseline_decay = 0.9;
  return o;
}

struct Learned {
  bool improved = false;  // the last 100 architectures' mean quality > 0.65 and > the first 100's + 0.1
  int64_t at_optimum = 0;  // how many of the last 100 architectures are the optimum
};

// One learning run on the tiny space (random sampling: the optimum 1 time in 256, mean quality
// ≈ 0.5). The search always finds the optimum; whether the policy then keeps sampling it is a
// learning outcome, reported.
Learned Learns(agents::Algorithm algorithm, uint64_t seed) {
  const Tiny t(seed);
  std::vector<nas::Architecture> archs;
  const search::NasSearchResult r = RunNasRl(*t.env, LearnOptions(algorithm, seed), {},
      [&](int64_t, const search::NasEvaluation& ev, const search::NasEvaluation&) { archs.push_back(ev.arch); });
  EXPECT_EQ(r.evaluations, 2000);
  EXPECT_EQ(r.best.arch, t.quality->Optimum()) << "seed " << seed;
  const double first = std::accumulate(r.reward.begin(), r.reward.begin() + 100, 0.0) / 100;
  const double last = MeanOfLast(r.reward, 100);
  Learned l;
  l.improved = last > 0.65 && last > first + 0.1;
  l.at_optimum = std::count(archs.end() - 100, archs.end(), t.quality->Optimum());
  std::printf("%s seed %d: mean quality %.3f -> %.3f, %d of the last 100 at the optimum\n",
              algorithm == agents::Algorithm::kPpo ? "ppo" : "reinforce", static_cast<int>(seed), first, last,
              static_cast<int>(l.at_optimum));
  return l;
}

// Learning outcomes depend on the last bits of the floating-point kernels (LibTorch picks AVX2 or
// AVX-512 by the machine), so a single seed may collapse early on one machine and not on another:
// the tests ask for most of six seeds, which random sampling never reaches.
TEST_F(NasRlTest, ReinforceFindsTheOptimumOfASyntheticQualityAndImproves) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) improved += Learns(agents::Algorithm::kReinforce, seed).improved;
  EXPECT_GE(improved, 4) << "of 6 seeds";
}

TEST_F(NasRlTest, PpoLearnsASyntheticQualityToItsOptimum) {
  int improved = 0;
  int64_t at_optimum = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Learned l = Learns(agents::Algorithm::kPpo, seed);
    improved += l.improved;
    at_optimum += l.at_optimum;
  }
  EXPECT_GE(improved, 3) << "of 6 seeds";
  EXPECT_GE(at_optimum, 60) << "of the last 6 x 100 architectures (random sampling: about 2)";
}

TEST_F(NasRlTest, BudgetCountsEveryArchitectureAndBookkeepingIsTheTables) {
  const env::BlockEnv e(env::BlockEnvOptions{});  // nb201, CIFAR-10 table
  const env::Nb201Quality table(env::CachedNb201Table(env::kDefaultNb201Table), nas::Nb201Dataset::kCifar10);
  for (const agents::Algorithm algorithm : {agents::Algorithm::kReinforce, agents::Algorithm::kPpo}) {
    NasRlOptions o;
    o.agent.algorithm = algorithm;
    o.budget = 23;  // 4 batches of 5 and a partial one of 3
    o.episodes_per_update = 5;
    o.seed = 11;
    int64_t updates = 0, seen = 0;
    double best_seen = -1;
    const search::NasSearchResult r = RunNasRl(
        e, o, {},
        [&](int64_t i, const search::NasEvaluation& ev, const search::NasEvaluation& best) {
          EXPECT_EQ(i, seen++);
          // Every architecture's score is the table's accuracy (no cost budget: reward = quality).
          EXPECT_DOUBLE_EQ(ev.score.quality, table.Quality(ev.arch));
          EXPECT_DOUBLE_EQ(ev.score.reward, ev.score.quality);
          best_seen = std::max(best_seen, ev.score.reward);
          EXPECT_EQ(best.score.reward, best_seen);
        },
        [&](int64_t u, const NasRlStats& s) {
          EXPECT_EQ(u, ++updates);
          EXPECT_TRUE(s.count("losses/policy_loss")) << "learner stats reach the caller";
        });
    EXPECT_EQ(r.evaluations, 23);
    EXPECT_EQ(seen, 23);
    EXPECT_EQ(updates, 4) << "no update after the budget's last architecture";
    ASSERT_EQ(r.reward.size(), 23u);
    ASSERT_EQ(r.best_reward.size(), 23u);
    for (size_t i = 0; i < r.reward.size(); ++i)
      EXPECT_EQ(r.best_reward[i], *std::max_element(r.reward.begin(), r.reward.begin() + i + 1));
    // The best architecture's reported accuracy is the table's.
    EXPECT_DOUBLE_EQ(r.best.score.quality, table.Quality(r.best.arch));
    EXPECT_EQ(r.best.score.reward, r.best_reward.back());
    EXPECT_GE(r.unique, 1);
    EXPECT_LE(r.unique, 23);
    // Playing the best architecture as an episode ends with the same reward.
    env::BlockEnv play(env::BlockEnvOptions{});
    play.Reset(0);
    env::StepResult step;
    for (int32_t c : r.best.arch) step = play.Step(c);
    EXPECT_TRUE(step.done);
    EXPECT_DOUBLE_EQ(step.reward, r.best.score.reward);
  }
}

TEST_F(NasRlTest, ASeedGivesTheSameSearchAndStopEndsIt) {
  const env::BlockEnv e(Synthetic(5));
  NasRlOptions o;
  o.agent.algorithm = agents::Algorithm::kReinforce;
  o.budget = 40;
  o.seed = 8;
  const search::NasSearchResult a = RunNasRl(e, o), b = RunNasRl(e, o);
  EXPECT_EQ(a.reward, b.reward);
  EXPECT_EQ(a.best.arch, b.best.arch);
  o.seed = 9;
  EXPECT_NE(RunNasRl(e, o).reward, a.reward);
  int64_t calls = 0;
  const search::NasSearchResult stopped =
      RunNasRl(e, o, [&] { return calls >= 7; }, [&](int64_t, const auto&, const auto&) { ++calls; });
  EXPECT_EQ(stopped.evaluations, 7);
}

// A search continued from a checkpoint (taken after an update) or from the end state of a stopped
// one (the last update's: the episodes after it are played again) is the uninterrupted search,
// for REINFORCE (its baseline is in the checkpoint) and PPO.
TEST_F(NasRlTest, ASearchContinuedFromItsCheckpointIsTheUninterruptedOne) {
  const env::BlockEnv e(Synthetic(5));
  for (agents::Algorithm algorithm : {agents::Algorithm::kReinforce, agents::Algorithm::kPpo}) {
    NasRlOptions o;
    o.agent.algorithm = algorithm;
    o.budget = 33;
    o.episodes_per_update = 4;
    o.seed = 8;
    const search::NasSearchResult whole = RunNasRl(e, o);
    // Checkpoints after every 2nd update; continue from the 3rd (24 episodes).
    std::vector<std::pair<search::NasSearchState, std::string>> saved;
    search::NasSearchState state;
    std::string learner;
    int64_t updates = 0;
    NasRlCheckpoints ck{&state, &learner, [&] { return updates % 2 == 0; },
                        [&](const search::NasSearchState& s, const std::string& l) { saved.emplace_back(s, l); }};
    const search::NasSearchResult checked = RunNasRl(e, o, {}, {}, [&](int64_t, const NasRlStats&) { ++updates; }, ck);
    EXPECT_EQ(checked.reward, whole.reward);
    ASSERT_GE(saved.size(), 3u);
    ASSERT_EQ(saved[2].first.evaluations, 24);
    EXPECT_EQ(state.evaluations, 32) << "the end state is the last update's (after 8 x 4 episodes)";
    search::NasSearchState from = saved[2].first;
    std::string from_learner = saved[2].second;
    const search::NasSearchResult resumed = RunNasRl(e, o, {}, {}, {}, {&from, &from_learner, {}, {}});
    EXPECT_EQ(resumed.reward, whole.reward);
    EXPECT_EQ(resumed.best.arch, whole.best.arch);
    EXPECT_EQ(resumed.unique, whole.unique);
    // Stopped mid-batch after 14 episodes: the state is the 3rd update's (12); the rest the same.
    search::NasSearchState stopped;
    std::string stopped_learner;
    int64_t calls = 0;
    RunNasRl(e, o, [&] { return calls >= 14; }, [&](int64_t, const auto&, const auto&) { ++calls; }, {},
             {&stopped, &stopped_learner, {}, {}});
    EXPECT_EQ(stopped.evaluations, 12);
    EXPECT_EQ(stopped.reward.size(), 12u);
    const search::NasSearchResult after_stop = RunNasRl(e, o, {}, {}, {}, {&stopped, &stopped_learner, {}, {}});
    EXPECT_EQ(after_stop.reward, whole.reward);
    EXPECT_EQ(after_stop.unique, whole.unique) << "the distinct architectures after the update are forgotten too";
    // A longer budget goes on as a search with that budget from the start.
    o.budget = 45;
    EXPECT_EQ(RunNasRl(e, o, {}, {}, {}, {&state, &learner, {}, {}}).reward, RunNasRl(e, o).reward);
    // A state without its learner, or a learner of another policy, is refused.
    search::NasSearchState lone = saved[0].first;
    std::string none;
    EXPECT_THROW(RunNasRl(e, o, {}, {}, {}, {&lone, &none, {}, {}}), ConfigError);
    std::string garbage = "not a checkpoint";
    EXPECT_ANY_THROW(RunNasRl(e, o, {}, {}, {}, {&lone, &garbage, {}, {}}));
  }
}

TEST_F(NasRlTest, BadOptionsAreConfigErrors) {
  const env::BlockEnv e(Synthetic(1));
  NasRlOptions o;
  o.budget = 0;
  EXPECT_THROW(RunNasRl(e, o), ConfigError);
  o.budget = 5;
  o.episodes_per_update = 0;
  EXPECT_THROW(RunNasRl(e, o), ConfigError);
  o.episodes_per_update = 1;
  o.reward_scale = 0;
  EXPECT_THROW(RunNasRl(e, o), ConfigError);
}

}  // namespace
}  // namespace placerl

