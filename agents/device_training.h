// Device placement that learns: the shared GNN policy (encoders/policy.h, device head) and the
// shared learner (agents/learner.h, PPO or REINFORCE) on one-shot device episodes
// (env/device/device_env.h, mode=oneshot: GDP-style, every co-location group gets a device in one
// episode, reward −sqrt(step time) at the end). This file owns the device training loop; HDP's
// loop is agents/hdp_training.h, and the two `--env device` programs that place_train_main.cc and
// place_main.cc dispatch to are experiments/lib/torch/device_programs.h.
// Torch-free header.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "agents/learner.h"
#include "agents/log_row.h"
#include "agents/rollout.h"
#include "agents/trainer.h"
#include "encoders/policy.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/fusion.h"
#include "datasets/util/budget_clock.h"
#include "env/device/device_env.h"

namespace placerl {

// One graph to place. Big graphs (more co-location groups than a threshold) are placed as their
// fused graph (datasets/graphs/fusion.h, Baechi's merge + grouping down to a target): the
// policy acts on `env` over the coarse graph, and every complete placement is expanded to the
// ops and simulated on the original graph (`scoring`), which is what best.placement holds.
struct DeviceTask {
  std::string label;                          // the graph spec as given
  std::unique_ptr<env::DeviceEnv> env;        // what the policy places
  std::unique_ptr<env::DeviceEnv> scoring;    // the original graph when fused, else null
  std::shared_ptr<const graphs::FusedGraph> fused;
  std::unique_ptr<perf::Simulator> sim;       // over scoring's graph (when fused)
  bool last_oom = false;                      // of the last Score()

  const env::DeviceEnv& original() const { return scoring ? *scoring : *env; }
  // The op placement of env's current placement on the original graph.
  std::vector<int> OpPlacement() const;
  // Effective time of env's current complete placement on the original graph (the env's own
  // value when not fused).
  double Score();
};

// Builds the task of `options.graph`; fused when the graph has more than `fuse_above_groups`
// groups (0 = never), down to `fuse_target_groups` placement groups. With options.memory_mask and
// fuse_max_group_fraction > 0, no grouping step makes a group whose memory (options.memory_estimate's
// estimate of the group alone: lifetime = the mask's up-front check on the original ops;
// all_outputs = Σ params + outputs + max temp of its ops) exceeds that fraction of the smallest
// accelerator's memory (env::FuseMaxGroupBytes; fusion.h: it may stop above the target).
// A start placer (mode=iterative, start=heft, heft_ls, …) runs once, where the episodes run: on
// the coarse graph when fused (the scoring environment is built with start=single).
DeviceTask MakeDeviceTask(const env::DeviceEnvOptions& options, int fuse_above_groups, int fuse_target_groups,
                          double fuse_max_group_fraction = 0);

// Progress (iteration, episodes, steps, elapsed_s: agents::TrainingProgress) and the bests.
struct DeviceTrainingState : agents::TrainingProgress {
  std::vector<double> best_time;         // per graph: best effective (OOM-penalised) step time, +inf = none
  std::vector<std::vector<int>> best;    // per graph: its op → device placement
};

// The device episodes of one update, for its metric columns (TrainDevice's and TrainHdp's).
struct DeviceUpdateStats {
  double sum_time = 0, sum_speedup = 0;  // over the complete episodes
  int complete = 0, infeasible = 0, oom = 0;
  // Counts an episode of `task` whose placement scored effective time `time` (+inf: infeasible);
  // returns whether it was complete.
  bool Add(const DeviceTask& task, double time);
  // The columns charts/episodic_return … charts/infeasible_episodes (NaN where there is no value).
  void AppendColumns(double episodic_return, double best_speedup, double best_time, LogRow* row) const;
};

// Plays one one-shot episode of `env` (sampling, or the most likely legal device when `greedy`),
// recording into `buffer` when given. Returns the effective step time of the placement on the
// original graph (OOM penalised as the env's `oom` option says), +inf when the memory mask left a group no device.
double PlayDeviceEpisode(encoders::Policy& policy, DeviceTask& task, uint64_t seed, std::mt19937_64* rng,
                         bool greedy, agents::RolloutBuffer* buffer);

// Keeps the task's current (complete) placement as graph k's best when `time` is lower.
void OfferBestDevice(const DeviceTask& task, size_t k, double time, DeviceTrainingState* st);

// The device task of the one trainer (agents/trainer.h): trains until `budget_s`
// (st->elapsed_s included) or `stop()`: each update collects `episodes_per_update` episodes, each
// on a graph drawn uniformly (pretraining when several), then one learner update. `log` gets one metrics row per update; `every_update` may be empty.
// `budget_s` and the metrics' time_s are counted on `clock` (kCpu: this process's CPU seconds).
void TrainDevice(std::vector<DeviceTask>& tasks, agents::Learner& learner,
                 int episodes_per_update, uint64_t seed, double budget_s, DeviceTrainingState* st,
                 const std::function<bool()>& stop, const std::function<void(int64_t, const LogRow&)>& log,
                 const std::function<void(const DeviceTrainingState&, double elapsed_s)>& every_update,
                 BudgetClock clock = BudgetClock::kWall);

}  // namespace placerl
