// Device placement that learns: the shared GNN policy (encoders/policy.h, device head) and the
// shared learner (agents/learner.h, PPO or REINFORCE) on one-shot device episodes
// (env/device/device_env.h, mode=oneshot: GDP-style, every co-location group gets a device in one
// episode, reward −sqrt(step time) at the end). This file owns the device training loop and the
// two `--env device` programs that place_train_main.cc and place_main.cc dispatch to:
//   place-train --env device --graph 'rnnlm' --machine 'k80(gpus=2,memory_fraction=0.39)' --minutes 10 --out DIR
//   place --env device --checkpoint DIR --graph 'enas_cell(seed=9)' --machine … --samples 16 --out DIR2
// Run directory (docs/device_placement.md): config.pbtxt, metrics.csv, TensorBoard events,
// checkpoints/latest.ckpt, best.placement (+ best.png timeline/memory) per graph, curve, result.json.
// `--method hdp` (HDP, Mirhoseini, Goldie et al. 2018): the grouper (encoders/hdp_grouper.h)
// groups the graph's co-location groups into at most G learned groups, the same policy and
// learner place those groups, and both learn from one REINFORCE loss (TrainHdp below).
// Torch-free header.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/fusion.h"
#include "datasets/util/budget_clock.h"
#include "encoders/hdp_grouper.h"
#include "env/device/device_env.h"
#include "experiments/lib/tensorboard.h"

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
// accelerator's memory (device_baseline::FuseMaxGroupBytes; fusion.h: it may stop above the target).
DeviceTask MakeDeviceTask(const env::DeviceEnvOptions& options, int fuse_above_groups, int fuse_target_groups,
                          double fuse_max_group_fraction = 0);

struct DeviceTrainingState {
  int64_t iteration = 0, episodes = 0, steps = 0;
  double elapsed_s = 0;
  std::vector<double> best_time;         // per graph: best effective (OOM-penalised) step time, +inf = none
  std::vector<std::vector<int>> best;    // per graph: its op → device placement
};

// Plays one one-shot episode of `env` (sampling, or the most likely legal device when `greedy`),
// recording into `buffer` when given. Returns the effective step time of the placement on the
// original graph (OOM penalised as the env's `oom` option says), +inf when the memory mask left a group no device.
double PlayDeviceEpisode(encoders::Policy& policy, DeviceTask& task, uint64_t seed, std::mt19937_64* rng,
                         bool greedy, agents::RolloutBuffer* buffer);

// Keeps the task's current (complete) placement as graph k's best when `time` is lower.
void OfferBestDevice(const DeviceTask& task, size_t k, double time, DeviceTrainingState* st);

// Trains until `budget_s` (st->elapsed_s included) or `stop()`: each update collects
// `episodes_per_update` episodes, each on a graph drawn uniformly (pretraining when several),
// then one learner update. `log` gets one metrics row per update; `every_update` may be empty.
// `budget_s` and the metrics' time_s are counted on `clock` (kCpu: this process's CPU seconds).
void TrainDevice(std::vector<DeviceTask>& tasks, agents::Learner& learner,
                 int episodes_per_update, uint64_t seed, double budget_s, DeviceTrainingState* st,
                 const std::function<bool()>& stop, const std::function<void(int64_t, const run::Scalars&)>& log,
                 const std::function<void(const DeviceTrainingState&, double elapsed_s)>& every_update,
                 BudgetClock clock = BudgetClock::kWall);

// ---- HDP. Units are the nodes of `base` (its co-location groups, in its decision order); a
// grouping gives each unit a group in [0, G).

// `base`'s graph with its co-location groups replaced by the grouping: every op of unit u gets
// group unit_group[u] (named "hdp_<k>", k dense in order of first use: empty groups vanish).
graphs::ComputeGraph GroupedGraph(const env::DeviceEnv& base, const std::vector<int32_t>& unit_group);
// A one-shot task over that graph with base's options (never fused: it is the original graph,
// so its placements are op placements of base's graph and its rewards simulate that graph).
// Throws ConfigError when a learned group cannot be placed at all (memory_mask=true and the
// group is larger than every device it may use, or no device runs all of its ops).
DeviceTask MakeGroupedTask(const env::DeviceEnv& base, const std::vector<int32_t>& unit_group);

// What an HDP run keeps besides DeviceTrainingState (checkpointed in state.json).
struct HdpState {
  // EMA of the mean return per update (the learner's b at step 0 while every grouping is
  // realisable: the learner sees no episode of an unrealisable one); NaN = none yet.
  double baseline = NAN;
  int32_t best_groups = 0; // learned groups of the best placement
};

// HDP's loop until `budget_s` on `clock` (st->elapsed_s included) or `stop()`: per update the
// grouper samples ONE grouping of base's units (HDP: grouper 1 sample), the learner's policy
// places its non-empty groups `placements_per_update` times (HDP: 4), then one joint REINFORCE
// step: the learner's update (−Σ (R − b_t) log p_placer ÷ decisions, its EMA baseline) and the
// grouper's (−Σ (R − b) log p_grouper ÷ decisions, b = the same EMA of the mean return). A
// grouping no placement can realise (MakeGroupedTask's ConfigError) scores every placement as
// the environment's out-of-memory time and updates the grouper only. The learner must be
// REINFORCE (ConfigError otherwise). Metrics as TrainDevice plus the grouper's.
void TrainHdp(DeviceTask& base, encoders::HdpGrouper& grouper, agents::Learner& learner, int placements_per_update,
              uint64_t seed, double budget_s, BudgetClock clock, DeviceTrainingState* st, HdpState* hs,
              const std::function<bool()>& stop, const std::function<void(int64_t, const run::Scalars&)>& log,
              const std::function<void(const DeviceTrainingState&, double elapsed_s)>& every_update);

// Splits "a(x=1,y=2),b" at top-level commas: {"a(x=1,y=2)", "b"}.
std::vector<std::string> SplitGraphSpecs(const std::string& text);

// True when argv selects `--env device` (place-baseline's rule): the two mains dispatch on it.
bool DeviceEnvSelected(int argc, char** argv);

// The whole `place-train --env device` / `place --env device` programs (parsing included);
// return the exit code.
int DevicePlaceTrainMain(int argc, char** argv);
int DevicePlaceMain(int argc, char** argv);

}  // namespace placerl
