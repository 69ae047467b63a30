#include "cost_models/tpu/diloco.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

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

DilocoFaultResult EvaluateDilocoFaults(const StepBreakdown& island, double params, double grad_bytes,
                                       const DilocoQuery& q, const DilocoFaults& f) {
  const DilocoResult healthy = EvaluateDiloco(island, params, grad_bytes, q);  // checks q
  Check("straggler slowdown", f.straggler_slowdown, 1, 100);
  Check("failed islands", f.failed_islands, 0, q.islands - 1);
  if (f.failed_islands != std::floor(f.failed_islands))
    throw ConfigError("diloco: failed islands must be a whole number, got " + std::to_string(f.failed_islands));
  Check("restart time (s)", f.restart_s, 0, 1e7);
  const double M = q.islands, H = q.inner_steps, t = healthy.inner_step_s, s = f.straggler_slowdown;
  const double e = healthy.exposed_sync_s;
  DilocoFaultResult r;
  r.sync_diloco_step_s = s * t + e / H;
  r.decoupled_step_s = M / ((M - 1) / (t + e / H) + 1 / (s * t + e / H));
  r.sync_dp_step_s = healthy.sync_dp_step_s + (s - 1) * t;
  r.sync_break_even_h = std::max(1.0, std::ceil(e / (0.05 * s * t) - 1e-9));
  r.decoupled_break_even_h = healthy.break_even_h;
  const double F = f.failed_islands;
  if (M - F >= 2) {
    DilocoQuery rest = q;
    rest.islands = M - F;
    r.survivors_step_s = EvaluateDiloco(island, params, grad_bytes, rest).step_s;
  } else {
    r.survivors_step_s = t;  // one island left: no outer all-reduce
  }
  r.throughput_after_failure = (M - F) / M * healthy.step_s / r.survivors_step_s;
  const double lost_steps = F * H / 2 * t;
  r.lost_island_s_decoupled = lost_steps;
  r.lost_island_s_sync_diloco = M * f.restart_s + lost_steps;
  r.lost_island_s_sync_dp = M * f.restart_s;
  return r;
}

}  // namespace placerl::perf
