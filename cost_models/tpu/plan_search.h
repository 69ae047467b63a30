// Exhaustive plan search: enumerate every valid (data, fsdp, tensor, pipeline,
// microbatches, remat, shard_optimizer) for a model on a mesh and rank by step time,
// keeping plans that fit in HBM. Dtypes, optimizer and global batch come from `base`, and so
// do the keys the user fixed.
#pragma once

#include <string>
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

// All candidate plans (valid or not) for `ev`'s mesh, in a fixed order. `fixed` (optional)
// names plan keys whose value is taken from `base` instead of being enumerated: data, fsdp,
// tensor, tensor_x, pipeline, microbatches, expert, remat, shard_optimizer (other keys, e.g.
// dtypes and global_batch, always come from `base`). The expert degree is 1 unless fixed.
// `schedules`: also remat=selective and, for pipelines, GPipe and interleaved 1F1B (2 and 4 model
// chunks per device where the layers divide); off (the default, the uniform golden's plan list):
// remat none/minimal/full and the base's schedule. Fixed `schedule` / `interleave` keys are honoured.
std::vector<PlanC> EnumeratePlans(const TrainingEvaluator& ev, const PlanC& base,
                                  const std::vector<std::string>* fixed = nullptr, bool schedules = false);

// The `top` fastest plans that fit in memory, fastest first (`top` < 1 → none).
std::vector<RankedPlan> SearchPlans(const TrainingEvaluator& ev, const PlanC& base, int top,
                                    SearchStats* stats, const std::vector<std::string>* fixed = nullptr,
                                    bool schedules = false);

}  // namespace placerl::perf
