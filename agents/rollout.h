// Rollout storage for the on-policy learners: every decision with the parts of its
// DynamicState the policy head reads again in training (current node, node_dynamic, mask,
// action_features), the action, its log-probability and value at collection time, the reward;
// Monte-Carlo returns with discount γ (CT: γ = 1, no GAE). Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "encoders/policy.h"
#include "env/environment.h"
#include "env/vector_env.h"

namespace placerl::agents {

struct Transition {
  int32_t instance = 0;  // index into RolloutBuffer::instances
  int32_t step = 0;      // decisions before this one in its episode
  int32_t current_node = 0;
  int32_t action = 0;
  float log_prob = 0, value = 0, reward = 0;
  bool done = false;  // the last decision of its episode
  std::vector<float> node_dynamic;     // [N, C]
  std::vector<uint8_t> mask;           // [A]
  std::vector<float> action_features;  // [Ca, A]
};

// A problem instance of the buffer (transitions of several netlists may be mixed).
struct RolloutInstance {
  std::shared_ptr<const env::StaticGraph> graph;
  env::ActionSpec spec;
};

struct EpisodeSummary {
  int32_t instance = 0;
  double episode_return = 0;
  int32_t length = 0;
  bool infeasible = false;
  std::vector<double> info;  // the environment's info() at the end
};

class RolloutBuffer {
 public:
  // Records the decision `step` about to be taken in env's current state.
  void Record(const env::Environment& env, const encoders::PolicyStep& step);
  // The reward of the last recorded decision; `done` ends its episode (summarised from `env`).
  void SetOutcome(const env::Environment& env, double reward, bool done, bool infeasible);
  // … with the end-of-episode info given (a VectorEnv has already reset the environment).
  void SetOutcome(double reward, bool done, bool infeasible, const std::vector<double>& final_info);
  // Appends the complete episodes of `other` (instances are matched by graph).
  void Append(RolloutBuffer&& other);
  // Monte-Carlo returns G_t = r_t + γ G_{t+1} per episode, and advantages G_t − value_t.
  // Every episode must be complete.
  void ComputeReturns(double gamma);
  void Clear();

  int32_t size() const { return static_cast<int32_t>(transitions.size()); }
  double MeanEpisodeReturn() const;

  std::vector<RolloutInstance> instances;
  std::vector<Transition> transitions;
  std::vector<float> returns, advantages;  // after ComputeReturns
  std::vector<EpisodeSummary> episodes;

 private:
  int32_t InstanceOf(const env::Environment& env);
  double open_return_ = 0;
  int32_t open_length_ = 0;
};

// Plays `episodes` complete episodes of `env` with `policy` (sampling with `rng`), the k-th
// reset with seed `seed + k`, recording every decision into `buffer`.
void CollectEpisodes(encoders::Policy& policy, env::Environment& env, int32_t episodes, uint64_t seed,
                     std::mt19937_64* rng, RolloutBuffer* buffer);

// Resets `venv` (its seeds advance on every reset) and steps all its environments together
// (OpenMP; the policy acts for all of them in one batched forward, Policy::ActBatch) until at
// least `episodes` episodes have ended; records those complete episodes
// (each contiguous in `buffer`) and drops the unfinished ones.
void CollectEpisodes(encoders::Policy& policy, env::VectorEnv& venv, int32_t episodes, std::mt19937_64* rng,
                     RolloutBuffer* buffer);

}  // namespace placerl::agents
