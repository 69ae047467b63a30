// Exhaustive plan search: enumerate every valid (data, fsdp, tensor, pipeline,
// microbatches, remat, shard_optimizer) for a model on a mesh and rank by step time,
// keeping plans that fit in HBM. Dtypes, optimizer and global batch come from `base`.
#pragma once

#include <vector>

#include "cost_models/tpu/training_eval.h"

namespace placerl::perf {

struct RankedPlan {
  PlanC plan;
  StepBreakdown result;
};

struct SearchStats {
  long enumerated = 0;  // plans evaluated
  long valid = 0;       // valid plans
  long fitting = 0;     // valid and not OOM
};

// All candidate plans (valid or not) for `ev`'s mesh, in a fixed order.
std::vector<PlanC> EnumeratePlans(const TrainingEvaluator& ev, const PlanC& base);

// The `top` fastest plans that fit in memory, fastest first.
std::vector<RankedPlan> SearchPlans(const TrainingEvaluator& ev, const PlanC& base, int top,
                                    SearchStats* stats);

}  // namespace placerl::perf
