// The trainer's batched collection (agents/collector.h, Collector) on chip designs: with
// one copy it records exactly what the one-environment loop (PlayChipEpisode per episode, the
// design drawn before each) records, RNG included; with several copies of two designs it is
// deterministic (same RNG → same buffer), records complete episodes in episode order, each
// replayable on a fresh environment to the cost it reported, and stops starting episodes when
// asked; episodes that end early (infeasible) free their copy for the next episode.
#include "agents/collector.h"

#include "agents/chip_training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <random>

#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "env/registry.h"

namespace placerl {
namespace {

std::vector<std::unique_ptr<env::ChipEnv>> TwoDesigns() {
  std::vector<std::unique_ptr<env::ChipEnv>> envs;
  for (const char* spec : {"chip(seed=1)", "chip(seed=2)"}) {
    std::unique_ptr<env::Environment> e = env::MakeEnvironment(spec);
    envs.emplace_back(dynamic_cast<env::ChipEnv*>(e.release()));
  }
  return envs;
}

encoders::PolicyOptions SmallPolicy() {
  encoders::PolicyOptions o;
  o.embedding_dim = 8;
  o.hidden_dim = 16;
  o.action_hidden_dim = 8;
  o.init_seed = 3;
  return o;
}

std::vector<env::Environment*> Pointers(const std::vector<std::unique_ptr<env::ChipEnv>>& envs) {
  std::vector<env::Environment*> p;
  for (const auto& e : envs) p.push_back(e.get());
  return p;
}

// The episode's proxy cost as the chip task reads it (+inf when it ended infeasible).
double Cost(const env::Environment& env) {
  return env.info_value("infeasible") == 0 ? env.info_value("proxy_cost") : INFINITY;
}

// Every recorded field of two buffers, transition by transition and episode by episode.
void ExpectSameBuffers(const agents::RolloutBuffer& a, const agents::RolloutBuffer& b) {
  ASSERT_EQ(a.transitions.size(), b.transitions.size());
  ASSERT_EQ(a.instances.size(), b.instances.size());
  for (size_t i = 0; i < a.instances.size(); ++i) EXPECT_EQ(a.instances[i].graph, b.instances[i].graph);
  for (size_t i = 0; i < a.transitions.size(); ++i) {
    const agents::Transition &x = a.transitions[i], &y = b.transitions[i];
    ASSERT_EQ(x.instance, y.instance) << i;
    ASSERT_EQ(x.step, y.step) << i;
    ASSERT_EQ(x.current_node, y.current_node) << i;
    ASSERT_EQ(x.action, y.action) << i;
    ASSERT_EQ(x.log_prob, y.log_prob) << i;
    ASSERT_EQ(x.value, y.value) << i;
    ASSERT_EQ(x.reward, y.reward) << i;
    ASSERT_EQ(x.done, y.done) << i;
    ASSERT_EQ(x.node_dynamic, y.node_dynamic) << i;
    ASSERT_EQ(x.mask, y.mask) << i;
    ASSERT_EQ(x.action_features, y.action_features) << i;
  }
  ASSERT_EQ(a.episodes.size(), b.episodes.size());
  for (size_t i = 0; i < a.episodes.size(); ++i) {
    EXPECT_EQ(a.episodes[i].instance, b.episodes[i].instance);
    EXPECT_EQ(a.episodes[i].episode_return, b.episodes[i].episode_return);
    EXPECT_EQ(a.episodes[i].length, b.episodes[i].length);
    EXPECT_EQ(a.episodes[i].info, b.episodes[i].info);
  }
}

TEST(Collector, OneCopyIsTheOneEnvironmentLoop) {
  auto envs = TwoDesigns();
  encoders::Policy policy(SmallPolicy(), encoders::FeatureLayout::Of(*envs[0]));
  const uint64_t seed = 40;
  const int32_t episodes = 5;

  // The loop place-train ran before batching: the design drawn, then the episode played.
  std::mt19937_64 rng_loop(11);
  agents::RolloutBuffer loop;
  std::vector<std::pair<size_t, double>> loop_ends;
  for (int32_t e = 0; e < episodes; ++e) {
    const size_t k = std::uniform_int_distribution<size_t>(0, envs.size() - 1)(rng_loop);
    loop_ends.emplace_back(k, PlayChipEpisode(policy, *envs[k], seed + e, &rng_loop, false, &loop));
  }

  std::mt19937_64 rng(11);
  agents::RolloutBuffer batched;
  std::vector<std::pair<size_t, double>> ends;
  agents::Collector collector(Pointers(envs), 1);
  agents::TrainingTimes times;
  const int32_t played = collector.Collect(
      policy, &rng, episodes, seed, {}, [&](size_t k, env::Environment& env, bool) { ends.emplace_back(k, Cost(env)); },
      &batched, &times);
  EXPECT_EQ(played, episodes);
  EXPECT_EQ(ends, loop_ends);
  ExpectSameBuffers(batched, loop);
  EXPECT_EQ(rng, rng_loop);  // the same draws, in the same order
  EXPECT_GT(times.policy_s, 0);
  EXPECT_GT(times.episode_end_s, 0);
  bool both = false;
  for (const auto& [k, c] : ends) both |= k != ends[0].first;
  EXPECT_TRUE(both) << "the seed should draw both designs";
}

TEST(Collector, SeveralCopiesAreDeterministicCompleteAndReplayable) {
  const int32_t episodes = 7, batch = 3;
  const uint64_t seed = 100;
  auto envs = TwoDesigns();
  encoders::Policy policy(SmallPolicy(), encoders::FeatureLayout::Of(*envs[0]));
  agents::RolloutBuffer first, second;
  std::vector<std::pair<size_t, double>> ends_first, ends_second;
  for (auto* run : {&first, &second}) {
    std::mt19937_64 rng(5);
    auto& ends = run == &first ? ends_first : ends_second;
    agents::Collector collector(Pointers(envs), batch);
    EXPECT_EQ(collector.Collect(policy, &rng, episodes, seed, {},
                                [&](size_t k, env::Environment& env, bool) {
                                  EXPECT_TRUE(env.done());
                                  ends.emplace_back(k, Cost(env));
                                },
                                run),
              episodes);
  }
  ExpectSameBuffers(first, second);
  EXPECT_EQ(ends_first, ends_second);
  ASSERT_EQ(first.episodes.size(), static_cast<size_t>(episodes));

  // Episodes are contiguous and complete, in episode order; replaying an episode's actions on
  // the original environment of its design gives the same masks and final cost.
  std::multiset<double> reported, replayed;
  for (const auto& [k, c] : ends_first) reported.insert(c);
  size_t t = 0;
  for (int32_t e = 0; e < episodes; ++e) {
    const agents::EpisodeSummary& ep = first.episodes[e];
    env::ChipEnv* design = nullptr;
    for (auto& env : envs)
      if (env->static_graph() == first.instances[ep.instance].graph) design = env.get();
    ASSERT_NE(design, nullptr);
    ASSERT_EQ(ep.length, design->episode_length());
    design->Reset(seed + e);
    double ret = 0;
    for (int32_t s = 0; s < ep.length; ++s, ++t) {
      const agents::Transition& x = first.transitions[t];
      ASSERT_EQ(x.step, s);
      ASSERT_EQ(x.done, s + 1 == ep.length);
      ASSERT_EQ(x.mask, design->state().action_mask) << "episode " << e << " step " << s;
      ASSERT_EQ(x.node_dynamic, design->state().node_dynamic) << "episode " << e << " step " << s;
      const env::StepResult r = design->Step(x.action);
      ASSERT_EQ(static_cast<float>(r.reward), x.reward);
      ret += r.reward;
    }
    ASSERT_TRUE(design->done());
    const double cost = design->info_value("proxy_cost");
    replayed.insert(cost);
    EXPECT_DOUBLE_EQ(-ret, cost);  // sparse reward: the return is −proxy cost
    EXPECT_EQ(ep.info, design->info());
  }
  EXPECT_EQ(t, first.transitions.size());
  EXPECT_EQ(reported, replayed);
}

// Two hard macros that cannot both fit: every episode ends infeasible after one decision.
std::unique_ptr<env::ChipEnv> Crowded() {
  auto inst = std::make_shared<env::ChipInstance>();
  chip::Netlist& nl = inst->design.netlist;
  for (auto [name, side] : {std::pair<const char*, double>{"big", 8}, {"small", 4}}) {
    const int32_t i = nl.AddNode(name, chip::NodeType::kHardMacro);
    nl.width[i] = nl.height[i] = side;
    nl.x[i] = nl.y[i] = 6;
  }
  nl.Finalize();
  chip::PlacementSettings s;
  s.canvas_width = s.canvas_height = 12;
  s.cols = s.rows = 3;
  inst->design.settings = chip::ResolveDefaults(s, nl);
  return std::make_unique<env::ChipEnv>(inst, env::ChipEnvOptions{});
}

TEST(Collector, InfeasibleEpisodesEndEarlyAndFreeTheirCopy) {
  std::vector<std::unique_ptr<env::ChipEnv>> envs;
  envs.push_back(Crowded());
  {
    std::unique_ptr<env::Environment> e = env::MakeEnvironment("chip(seed=1)");
    envs.emplace_back(dynamic_cast<env::ChipEnv*>(e.release()));
  }
  encoders::Policy policy(SmallPolicy(), encoders::FeatureLayout::Of(*envs[1]));
  agents::RolloutBuffer first, second;
  std::map<size_t, int> ends_by_design;
  for (auto* run : {&first, &second}) {
    std::mt19937_64 rng(21);
    agents::Collector collector(Pointers(envs), 3);
    EXPECT_EQ(collector.Collect(policy, &rng, 8, 7, {},
                                [&](size_t k, env::Environment& env, bool infeasible) {
                                  if (run == &first) ++ends_by_design[k];
                                  EXPECT_EQ(std::isfinite(Cost(env)), k == 1) << "design " << k;
                                  EXPECT_EQ(infeasible, k == 0) << "design " << k;
                                },
                                run),
              8);
  }
  ExpectSameBuffers(first, second);
  ASSERT_GT(ends_by_design[0], 0);
  ASSERT_GT(ends_by_design[1], 0);
  ASSERT_EQ(first.episodes.size(), 8u);
  for (const agents::EpisodeSummary& ep : first.episodes) {
    const bool crowded = first.instances[ep.instance].graph == envs[0]->static_graph();
    EXPECT_EQ(ep.infeasible, crowded);
    EXPECT_EQ(ep.length, crowded ? 1 : envs[1]->episode_length());
  }
}

TEST(Collector, StopsStartingEpisodesWhenAskedAndTakesMoreCopiesThanEpisodes) {
  auto envs = TwoDesigns();
  encoders::Policy policy(SmallPolicy(), encoders::FeatureLayout::Of(*envs[0]));
  std::mt19937_64 rng(9);
  agents::RolloutBuffer buffer;
  int starts = 0;
  agents::Collector collector(Pointers(envs), 4);
  EXPECT_EQ(collector.Collect(policy, &rng, 10, 1, [&] { return ++starts <= 2; }, {}, &buffer), 2);
  EXPECT_EQ(buffer.episodes.size(), 2u);
  buffer.Clear();
  agents::Collector wide(Pointers(envs), 16);
  EXPECT_EQ(wide.Collect(policy, &rng, 3, 1, {}, {}, &buffer), 3);
  EXPECT_EQ(buffer.episodes.size(), 3u);
  EXPECT_THROW(agents::Collector(Pointers(envs), 0), ConfigError);
  EXPECT_THROW(agents::Collector({}, 1), ConfigError);
}

}  // namespace
}  // namespace placerl
