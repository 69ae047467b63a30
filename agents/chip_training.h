// The chip task of the one trainer (agents/trainer.h), shared by place-train (from scratch or
// pretraining on several designs) and place (fine-tuning a loaded policy on a new design):
// episodes over the designs' ChipEnvs, the best complete placement of each design kept, one
// metrics row per update (CleanRL tags). With a Collective (place-train --workers N) every rank
// runs the trainer: rank r plays its share of each update's episodes, the learner reduces the
// gradients, and the update's row and the training state (episodes, steps, best cost per design)
// are global, equal on every rank. Collection steps B environment copies together
// (agents::Collector), finishing each update's episodes before the update, so that an update's
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

#include "agents/collector.h"
#include "agents/distributed.h"
#include "agents/learner.h"
#include "agents/log_row.h"
#include "agents/rollout.h"
#include "agents/trainer.h"
#include "datasets/util/budget_clock.h"
#include "encoders/policy.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_solution.h"

namespace placerl::workers {
class ProcessGroup;  // agents/workers.h
}

namespace placerl {

// Where this process's training time went, in CPU seconds of the process (not checkpointed:
// this process only): collection and updates (agents::TrainingTimes), and
struct ChipTrainingTimes : agents::TrainingTimes {
  // Candidate bests re-placed with CT's full FD schedule (chip.fd_steps_scale < 1; OfferBest).
  double rescore_s = 0;
  int64_t rescores = 0;
};

// Progress (iteration, episodes, steps, elapsed_s: agents::TrainingProgress) and the bests.
struct ChipTrainingState : agents::TrainingProgress {
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

// Measured on Ariane133, one thread (docs/learning.md "Batched collection in place-train").
constexpr int kDefaultCollectBatch = 8;

// The trainer's options (episodes per update, seed, budget and clock, max_updates, ranks,
// heartbeat) and how many environment copies are stepped together.
struct ChipTrainingOptions : agents::TrainerOptions {
  int collect_batch = 1;  // agents::Collector's B
};

// Trains until the budget, max_updates or `stop()` (any rank's); `log(step, scalars)`
// receives one row per update; `every_update()` (may be empty) is called after each update on
// every rank (checkpoints, progress). Returns when done.
void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& options, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double elapsed_s)>& every_update);

// With several ranks (place-train --workers N): the best placement of each of the `designs`
// over the ranks, to rank 0's `state` (collective: every rank calls it; nothing when `group` is
// null). The other ranks keep theirs.
void GatherBestPlacements(workers::ProcessGroup* group, size_t designs, ChipTrainingState* state);

}  // namespace placerl
