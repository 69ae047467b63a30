// The project's episode players: every learned method collects its episodes here.
// - PlayEpisode: one episode of one environment (sampling, or the most likely action when
//   greedy), recording into a buffer when given — evaluation rollouts, the NAS controller, tests.
// - Collector: the episodes of a training update over several designs with B environment copies
//   stepped together: one batched policy forward per step for all live copies
//   (Policy::ActBatch; Policy::Act when only one is live, so that B = 1 is exactly PlayEpisode
//   per episode, RNG included), episodes started in episode order with their own reset seeds and
//   recorded in episode order, so that an update's buffer depends only on the weights, the RNG and
//   the seeds (a resumed run continues the same curve).
// - CollectEpisodes (rollout.h) over a VectorEnv: the auto-resetting OpenMP-stepped form, for
//   throughput measurements.
// Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "agents/rollout.h"
#include "encoders/policy.h"
#include "env/environment.h"

namespace placerl::agents {

// Where collection time went, in CPU seconds of this process (all threads), so that it means the
// same on a loaded machine; the trainer adds the learner's updates.
struct TrainingTimes {
  double policy_s = 0;       // the policy's forwards and sampling, recording into the buffer
  double env_s = 0;          // environment steps and resets that did not end an episode
  double episode_end_s = 0;  // the steps that ended an episode (chip: soft macros by FD, the full cost)
  double update_s = 0;       // the learner's updates (all-reduces included)
};

// Plays one episode of `env` from Reset(seed) with `policy`, recording every decision into
// `buffer` when given (rewards multiplied by reward_scale). Returns true when a step reported the
// episode infeasible.
bool PlayEpisode(encoders::Policy& policy, env::Environment& env, uint64_t seed, std::mt19937_64* rng, bool greedy,
                 RolloutBuffer* buffer, double reward_scale = 1.0);

class Collector {
 public:
  // Called as each episode ends, in the order they end (deterministic), with the environment
  // still holding its final state; `infeasible`: a step reported it (false for an episode that
  // was over at its reset).
  using EpisodeEnd = std::function<void(size_t design, env::Environment& env, bool infeasible)>;

  // Copy 0 of design k is designs[k] itself (not owned); copies 1…B−1 are its Clone(), made on
  // first use. ConfigError when batch < 1 or there is no design.
  Collector(std::vector<env::Environment*> designs, int32_t batch);
  ~Collector();

  // Plays `episodes` episodes, recording them into `buffer` in episode order (episode e resets
  // with seed first_seed + e). An episode starts in the first free copy, in episode order; its
  // design is drawn from `rng` (uniformly, when there are several) as it starts. `may_start()`
  // (may be empty) is asked before each episode starts (false: no more episodes start; those
  // running finish). An episode over at its reset ends there without a decision. Returns the
  // number of episodes played.
  int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                  const std::function<bool()>& may_start, const EpisodeEnd& on_end, RolloutBuffer* buffer,
                  TrainingTimes* times = nullptr);

  int32_t batch() const { return batch_; }
  size_t designs() const { return designs_.size(); }

 private:
  env::Environment& Copy(size_t design, int32_t slot);
  std::vector<env::Environment*> designs_;
  int32_t batch_;
  std::vector<std::vector<std::unique_ptr<env::Environment>>> copies_;  // [design][slot − 1]
};

}  // namespace placerl::agents
