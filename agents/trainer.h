// The one on-policy trainer: every learned placer (chip, device, HDP) trains here, and what
// differs between them is a small TrainingTask — which environments episodes come from, what an
// episode's result is and which best solution it may be, which metric columns an update logs.
//
// One update: decide (all ranks together) whether to stop — budget on the clock, max_updates,
// stop() —; the task collects this rank's share of the update's episodes (their reset seeds are
// the single process's, split between the ranks); the update's counters and the task's metrics
// are combined over the ranks; the learner's update (gradients all-reduced inside); one log row
// (time_s, charts/episodes, the task's columns, charts/SPS, perf/collect_s, perf/update_s, the
// learner's statistics); every_update() (checkpoints, progress). Hooks: stop, log, every_update,
// heartbeat (after every episode and update). Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "agents/collector.h"
#include "agents/distributed.h"
#include "agents/learner.h"
#include "agents/log_row.h"
#include "agents/rollout.h"
#include "datasets/util/budget_clock.h"

namespace placerl::agents {

// What a run has done so far; checkpointed by the binaries (a resumed run continues from it).
struct TrainingProgress {
  int64_t iteration = 0, episodes = 0, steps = 0;
  double elapsed_s = 0;  // training time before this process started (resume)
};

struct TrainerOptions {
  int episodes_per_update = 16;
  uint64_t seed = 1;        // episode e (counted over the whole run) resets with seed + e
  double budget_s = 0;      // total training time (progress->elapsed_s included), on `clock`
  BudgetClock clock = BudgetClock::kWall;  // kCpu: this process's CPU seconds (time_s too)
  int64_t max_updates = 0;  // stop once progress->iteration reaches it (0: no limit)
  Collective* collective = nullptr;  // the ranks (null: one process)
  std::function<void()> heartbeat;   // after every episode and update (may be empty)
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // Plays up to `episodes` episodes into `buffer` — episode e resets with seed first_seed + e;
  // `may_start()` is asked before each starts; `ended()` is called after each ends — and returns
  // how many were played.
  virtual int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                          const std::function<bool()>& may_start, const std::function<void()>& ended,
                          RolloutBuffer* buffer, TrainingTimes* times) = 0;
  // Whether a single process learns from this update (false: the run ends, as after a stop
  // before the update's first episode). Default: the buffer holds a decision.
  virtual bool Learnable(const RolloutBuffer& buffer, int32_t played) const;
  // Combines this rank's metrics of the update (its buffer: this rank's episodes) with the other
  // ranks' (group null: one process). Called once per update, after Collect, before the
  // learner's update.
  virtual void Reduce(const RolloutBuffer& buffer, Collective* group) {}
  // The learner's update on the buffer; returns its statistics as the row's last columns, in
  // order (default: the learner's; HDP appends its grouper's).
  virtual LogRow Update(Learner& learner, RolloutBuffer* buffer);
  // Appends the update's columns (between charts/episodes and charts/SPS) to `row`; called after
  // the learner's update.
  virtual void Columns(const RolloutBuffer& buffer, LogRow* row) = 0;
};

// A task whose episodes are played by the Collector over its environments (one per design).
class CollectorTask : public TrainingTask {
 public:
  // designs[k]: design k's environment (not owned; the collector plays it and its clones).
  CollectorTask(std::vector<env::Environment*> designs, int32_t collect_batch);
  int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                  const std::function<bool()>& may_start, const std::function<void()>& ended,
                  RolloutBuffer* buffer, TrainingTimes* times) override;

 protected:
  // An episode of design k ended; env holds its final state (Collector::EpisodeEnd).
  virtual void EpisodeEnded(size_t design, env::Environment& env, bool infeasible) = 0;

 private:
  Collector collector_;
};

// Trains until the budget, max_updates or `stop()` (any rank's). `log(step, row)` receives one
// row per update; `every_update(elapsed_s)` (may be empty) is called after each update on every
// rank. `times` (may be null) accumulates this process's collection and update CPU seconds.
// On return progress->elapsed_s is the total training time.
void Train(TrainingTask& task, Learner& learner, const TrainerOptions& options, TrainingProgress* progress,
           TrainingTimes* times, const std::function<bool()>& stop,
           const std::function<void(int64_t, const LogRow&)>& log, const std::function<void(double)>& every_update);

}  // namespace placerl::agents
