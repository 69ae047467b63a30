// The chip training loop shared by place-train (from scratch or pretraining on several designs)
// and place (fine-tuning a loaded policy on a new design): episodes collected with the policy,
// one learner update per `episodes_per_update`, the best complete placement of each design
// kept, one metrics row per update (CleanRL tags). With a Collective (place-train --workers N)
// every rank runs this loop: rank r plays its share of each update's episodes (their reset seeds
// are the single process's, split between the ranks), the learner reduces the gradients, and the
// update's row and the training state (episodes, steps, best cost per design) are global, equal
// on every rank; the decision to stop is taken by all ranks together. Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/distributed.h"
#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "env/chip/chip_env.h"
#include "search/chip/baselines.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/tensorboard.h"

namespace placerl {

struct ChipTrainingState {
  int64_t iteration = 0, episodes = 0, steps = 0;
  double elapsed_s = 0;           // training time before this process started (resume)
  std::vector<double> best_cost;  // per design (+inf: none yet)
  std::vector<search::ChipSolution> best;  // per design, found by this process
};

// Plays one episode of `env` with `policy` (sampling, or the most likely action when `greedy`),
// recording into `buffer` when given. Returns the episode's proxy cost (+inf when infeasible).
double PlayChipEpisode(encoders::Policy& policy, env::ChipEnv& env, uint64_t seed, std::mt19937_64* rng,
                       bool greedy, agents::RolloutBuffer* buffer);

// Keeps env's current (complete) placement as design k's best when it is better.
void OfferBest(const env::ChipEnv& env, size_t k, double cost, ChipTrainingState* st);

struct ChipTrainingOptions {
  int episodes_per_update = 16;
  uint64_t seed = 1;           // episode e (counted over the whole run) resets with seed + e
  double budget_s = 0;         // total training time (st->elapsed_s included)
  int64_t max_updates = 0;     // stop once st->iteration reaches it (0: no limit)
  agents::Collective* collective = nullptr;  // the ranks (null: one process)
  std::function<void()> heartbeat;           // after every episode and update (may be empty)
};

// Trains until the budget, max_updates or `stop()` (any rank's); `log(step, scalars)`
// receives one row per update; `every_update()` (may be empty) is called after each update on
// every rank (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& options, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const run::Scalars&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

// Trains until `budget_s` of total training time (st->elapsed_s included) or `stop()`;
// `log(step, scalars)` receives one row per update; `every_update()` (may be empty) is called
// after each update (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               int episodes_per_update, uint64_t seed, double budget_s, ChipTrainingState* st,
               const std::function<bool()>& stop,
               const std::function<void(int64_t, const run::Scalars&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

}  // namespace placerl
