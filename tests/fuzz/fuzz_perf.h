// Shared by the perf-model fuzz targets: runs the evaluators on a model, mesh and plan a
// reader accepted, as `perf-model run / infer / search / run --graph` do. Contract: every
// evaluator returns or throws placerl::Error; a valid result has no NaN. Plan search runs
// only on meshes of up to 64 devices (it enumerates the divisors of the device count).
#pragma once

#include <cstdint>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"

namespace placerl::fuzz {

inline void CheckStep(const perf::StepBreakdown& b) {
  if (!b.valid) return;
  for (double v : {b.step_s, b.compute_s, b.tokens_per_s, b.mfu, b.hfu, b.hbm_total, b.bubble_s,
                   b.exposed_tp_s, b.exposed_fsdp_s, b.exposed_dp_s, b.exposed_ep_s, b.optimizer_s})
    NotNaN(v, "training step result");
}

// `has_model` false: only the mesh + plan consumers (graph run) are exercised.
inline void RunPerf(const perf::TransformerModel* model, const perf::Mesh& mesh, const perf::Plan& plan,
                    const perf::Catalog& catalog, Input* in) {
  const uint8_t b = in->Byte();
  if (model != nullptr) {
    try {
      const perf::TrainingEvaluator ev(*model, mesh, catalog);
      const perf::PlanC p = perf::PlanFromProto(plan);
      CheckStep(ev.Evaluate(p));
      perf::InferenceQuery q;
      q.batch = 1 + (b & 15);
      q.prompt = 16 << (b >> 4 & 3);
      q.generate = 8 * (b >> 6);
      const perf::InferenceResult ir = ev.EvaluateInference(p, q);
      if (ir.valid) {
        NotNaN(ir.prefill_s, "prefill_s");
        NotNaN(ir.decode_s, "decode_s");
      }
      if (ev.num_devices() <= 64) {
        perf::SearchStats stats;
        for (const perf::RankedPlan& r : perf::SearchPlans(ev, p, 3, &stats)) CheckStep(r.result);
      }
    } catch (const Error&) {
    }
  }
  try {
    static const graphs::ComputeGraph chain = graphs::MakeChainGraph(8, 1e9, 1e6, 1e6);
    perf::GraphRunPlan gp = perf::GraphRunPlanFromPlan(plan, 4);
    const perf::GraphRunResult r = perf::EvaluateGraphOnMesh(chain, mesh, catalog, gp);
    NotNaN(r.step_s, "graph run step_s");
    NotNaN(r.examples_per_s, "graph run examples_per_s");
  } catch (const Error&) {
  }
}

}  // namespace placerl::fuzz
