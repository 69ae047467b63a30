// The chip training loop shared by place-train (from scratch or pretraining on several designs)
// and place (fine-tuning a loaded policy on a new design): episodes collected with the policy,
// one learner update per `episodes_per_update`, the best complete placement of each design
// kept, one metrics row per update (CleanRL tags). Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

// Trains until `budget_s` of total training time (st->elapsed_s included) or `stop()`;
// `log(step, scalars)` receives one row per update; `every_update()` (may be empty) is called
// after each update (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               int episodes_per_update, uint64_t seed, double budget_s, ChipTrainingState* st,
               const std::function<bool()>& stop,
               const std::function<void(int64_t, const run::Scalars&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

}  // namespace placerl
