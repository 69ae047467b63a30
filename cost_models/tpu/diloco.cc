#include "cost_models/tpu/diloco.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "datasets/util/errors.h"

namespace placerl::perf {

namespace {
void Check(const char* what, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "diloco: %s must be in [%g, %g], got %g", what, lo, hi, v);
    throw ConfigError(buf);
  }
}
}  // namespace

DilocoResult EvaluateDiloco(const StepBreakdown& island, double params, double grad_bytes, const DilocoQuery& q) {
  if (!island.valid || !(island.step_s > 0)) throw ConfigError("diloco: the island's plan is not valid");
  Check("islands", q.islands, 2, 1e6);
  Check("inner steps H", q.inner_steps, 1, 1e9);
  Check("island bandwidth (bytes/s)", q.island_bw, 1, 1e15);
  Check("latency (s)", q.latency_s, 0, 10);
  Check("outer bytes per value", q.outer_bytes, 1e-3, 8);
  Check("gradient bytes per value", grad_bytes, 1e-3, 8);
  Check("overlap steps", q.overlap_steps, 0, 1e9);
  Check("params", params, 1, 1e16);
  const double M = q.islands, H = q.inner_steps;
  const double ring = 2 * (M - 1) / M;  // bytes per island per byte of the array (all-reduce)
  DilocoResult r;
  r.inner_step_s = island.step_s;
  r.sync_s = ring * params * q.outer_bytes / q.island_bw + 2 * (M - 1) * q.latency_s;
  r.exposed_sync_s = std::max(0.0, r.sync_s - q.overlap_steps * r.inner_step_s);
  r.step_s = r.inner_step_s + r.exposed_sync_s / H;
  r.overhead = r.step_s / r.inner_step_s - 1;
  r.dcn_bytes_per_step = ring * params * q.outer_bytes / H;
  // Synchronous data parallelism over the same network: the gradient all-reduce every step,
  // hidden under the last microbatch's backward pass (2/3 of its compute).
  const double ar = ring * params * grad_bytes / q.island_bw + 2 * (M - 1) * q.latency_s;
  const double hidden = island.microbatches > 0 ? island.compute_s / island.microbatches * 2.0 / 3.0 : 0;
  r.sync_dp_step_s = r.inner_step_s + std::max(0.0, ar - hidden);
  r.sync_dp_dcn_bytes_per_step = ring * params * grad_bytes;
  r.speedup_vs_sync_dp = r.sync_dp_step_s / r.step_s;
  r.break_even_h = std::max(1.0, std::ceil(r.exposed_sync_s / (0.05 * r.inner_step_s) - 1e-9));
  return r;
}

}  // namespace placerl::perf
