// HDP (Mirhoseini, Goldie et al. 2018; place-train --env device --method hdp): the grouper
// (encoders/hdp_grouper.h) groups the graph's co-location groups into at most G learned groups,
// the device policy and learner (agents/device_training.h) place those groups, and both learn
// from one REINFORCE loss (TrainHdp below).
// Torch-free header.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "agents/device_training.h"
#include "agents/learner.h"
#include "agents/log_row.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/util/budget_clock.h"
#include "encoders/hdp_grouper.h"
#include "env/device/device_env.h"

namespace placerl {

// Units are the nodes of `base` (its co-location groups, in its decision order); a
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
              const std::function<bool()>& stop, const std::function<void(int64_t, const LogRow&)>& log,
              const std::function<void(const DeviceTrainingState&, double elapsed_s)>& every_update);

}  // namespace placerl
