// The chip training loop shared by place-train (from scratch or pretraining on several designs)
// and place (fine-tuning a loaded policy on a new design): episodes collected with the policy,
// one learner update per `episodes_per_update`, the best complete placement of each design
// kept, one metrics row per update (CleanRL tags). With a Collective (place-train --workers N)
// every rank runs this loop: rank r plays its share of each update's episodes (their reset seeds
// are the single process's, split between the ranks), the learner reduces the gradients, and the
// update's row and the training state (episodes, steps, best cost per design) are global, equal
// on every rank; the decision to stop is taken by all ranks together. Collection steps B
// environment copies together (ChipCollector: one batched policy forward per step,
// Policy::ActBatch), finishing each update's episodes before the update, so that an update's
// buffer depends only on the weights, the RNG and the seeds (resume continues the same curve).
// Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "agents/distributed.h"
#include "agents/learner.h"
#include "agents/rollout.h"
#include "datasets/util/budget_clock.h"
#include "encoders/policy.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_solution.h"

namespace placerl {

// Where this process's training time went, in CPU seconds of the process (not checkpointed:
// this process only).
// One metrics row (tag, value), as the run directory's logs take it.
using LogRow = std::vector<std::pair<std::string, double>>;

struct ChipTrainingTimes {
  double policy_s = 0;       // the policy's forwards and sampling, recording into the buffer
  double env_s = 0;          // environment steps and resets that did not end an episode
  double episode_end_s = 0;  // the steps that ended an episode: soft macros (FD) and the full cost
  double update_s = 0;       // the learner's updates (all-reduces included)
  // Candidate bests re-placed with CT's full FD schedule (chip.fd_steps_scale < 1; OfferBest).
  double rescore_s = 0;
  int64_t rescores = 0;
};

struct ChipTrainingState {
  int64_t iteration = 0, episodes = 0, steps = 0;
  double elapsed_s = 0;           // training time before this process started (resume)
  std::vector<double> best_cost;  // per design (+inf: none yet)
  std::vector<env::ChipSolution> best;  // per design, found by this process
  // Per design: the lowest episode-end cost seen by this process (with a cheaper FD schedule
  // the bar for a full re-score; not checkpointed: a resumed run re-scores its first episode).
  std::vector<double> best_episode_cost;
  ChipTrainingTimes times;                 // this process's
};

// Plays one episode of `env` with `policy` (sampling, or the most likely action when `greedy`),
// recording into `buffer` when given. Returns the episode's proxy cost (+inf when infeasible).
double PlayChipEpisode(encoders::Policy& policy, env::ChipEnv& env, uint64_t seed, std::mt19937_64* rng,
                       bool greedy, agents::RolloutBuffer* buffer);

// Keeps env's current (complete) placement, whose episode ended with proxy cost `cost`, as design
// k's best when it is better. best_cost and best always hold costs of CT's full FD schedule: when
// the environment's episode ends use a cheaper one (chip.fd_steps_scale < 1), an episode that
// sets a new lowest episode-end cost (best_episode_cost) has its soft macros re-placed with the
// full schedule (ChipEnv::FullScheduleCost), and that cost and placement are what is compared
// and kept (the episode's reward stays the cheap cost).
void OfferBest(const env::ChipEnv& env, size_t k, double cost, ChipTrainingState* st);

// Plays episodes of several designs with B environment copies stepped together: one
// Policy::ActBatch forward for all live copies per step (Policy::Act when only one is live, so
// B = 1 is exactly the one-environment loop). Copy 0 of design k is envs[k] itself; copies 1…B−1
// are made on first use.
class ChipCollector {
 public:
  ChipCollector(std::vector<std::unique_ptr<env::ChipEnv>>* envs, int32_t batch);
  ~ChipCollector();

  // Plays `episodes` episodes, recording them into `buffer` in episode order (episode e resets
  // with seed first_seed + e). An episode starts in the first free copy, in episode order; its
  // design is drawn from `rng` (uniformly, when there are several) as it starts. `may_start()`
  // (may be empty) is asked before each episode starts (false: no more episodes start; those
  // running finish). `on_end(design, env, cost)` is called as each episode ends, in the order
  // they end (deterministic), with the environment still holding the final placement; cost is
  // +inf when the episode was infeasible. Returns the number of episodes played.
  int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                  const std::function<bool()>& may_start,
                  const std::function<void(size_t design, const env::ChipEnv& env, double cost)>& on_end,
                  agents::RolloutBuffer* buffer, ChipTrainingTimes* times = nullptr);

  int32_t batch() const { return batch_; }

 private:
  env::ChipEnv& Copy(size_t design, int32_t slot);
  std::vector<std::unique_ptr<env::ChipEnv>>* envs_;
  int32_t batch_;
  std::vector<std::vector<std::unique_ptr<env::ChipEnv>>> copies_;  // [design][slot − 1]
};

// Measured on Ariane133, one thread (docs/learning.md "Batched collection in place-train").
constexpr int kDefaultCollectBatch = 8;

struct ChipTrainingOptions {
  int episodes_per_update = 16;
  int collect_batch = 1;       // environment copies stepped together (ChipCollector)
  uint64_t seed = 1;           // episode e (counted over the whole run) resets with seed + e
  double budget_s = 0;         // total training time (st->elapsed_s included), on `clock`
  BudgetClock clock = BudgetClock::kWall;  // kCpu: this process's CPU seconds (time_s too)
  int64_t max_updates = 0;     // stop once st->iteration reaches it (0: no limit)
  agents::Collective* collective = nullptr;  // the ranks (null: one process)
  std::function<void()> heartbeat;           // after every episode and update (may be empty)
};

// Trains until the budget, max_updates or `stop()` (any rank's); `log(step, scalars)`
// receives one row per update; `every_update()` (may be empty) is called after each update on
// every rank (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& options, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

// Trains until `budget_s` of total training time (st->elapsed_s included) or `stop()`, with
// collect_batch kDefaultCollectBatch;
// `log(step, scalars)` receives one row per update; `every_update()` (may be empty) is called
// after each update (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               int episodes_per_update, uint64_t seed, double budget_s, ChipTrainingState* st,
               const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

}  // namespace placerl
