// Rollout collection from a VectorEnv (agents/rollout.cc): with batched inference
// (Policy::ActBatch) it records what one Act per environment and step would, with the same RNG.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>

#include "agents/rollout.h"
#include "encoders/policy.h"
#include "env/registry.h"
#include "env/vector_env.h"

namespace placerl::agents {
namespace {

TEST(Rollout, VectorEnvCollectionActsAsActPerEnvironment) {
  torch::set_num_threads(1);
  auto prototype = env::MakeEnvironment("chip(seed=1,soft=keep)");
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(*prototype));
  const int32_t b = 3;

  env::VectorEnv batched = env::VectorEnv::Replicate(*prototype, b, 10);
  std::mt19937_64 rng_batched(5);
  RolloutBuffer buffer;
  CollectEpisodes(policy, batched, b, &rng_batched, &buffer);

  // Reference: the same environments stepped with one Act per environment in turn.
  env::VectorEnv single = env::VectorEnv::Replicate(*prototype, b, 10);
  std::mt19937_64 rng_single(5);
  env::BatchBuffers out;
  single.Reset(&out);
  std::vector<std::vector<encoders::PolicyStep>> per_env(b);
  std::vector<int32_t> actions(b);
  for (bool running = true; running;) {
    for (int32_t i = 0; i < b; ++i) {
      per_env[i].push_back(policy.Act(single.env(i), &rng_single));
      actions[i] = per_env[i].back().action;
    }
    single.Step(actions.data(), &out);
    running = out.done[0] == 0;  // equal episode lengths: all end together
  }
  // The buffer holds the episodes in the order they ended (environment order here).
  std::vector<encoders::PolicyStep> expected;
  for (const auto& steps : per_env) expected.insert(expected.end(), steps.begin(), steps.end());
  ASSERT_EQ(buffer.size(), static_cast<int32_t>(expected.size()));
  ASSERT_EQ(static_cast<int32_t>(buffer.episodes.size()), b);
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(buffer.transitions[k].action, expected[k].action) << k;
    EXPECT_NEAR(buffer.transitions[k].log_prob, expected[k].log_prob, 1e-5f) << k;
    EXPECT_NEAR(buffer.transitions[k].value, expected[k].value, 1e-5f + 1e-5f * std::abs(expected[k].value)) << k;
  }
  // The environments of the batch did different things (the comparison is not trivial).
  EXPECT_NE(buffer.transitions[0].action, buffer.transitions[buffer.size() / b].action);
}

}  // namespace
}  // namespace placerl::agents
