// DiLoCo islands (Douillard et al. 2023): M islands (pods / slices, each an ordinary SPMD job
// on its own ICI domain) run H inner steps each, then all-reduce the parameter delta (the
// outer gradient) over the network between them, instead of a gradient all-reduce every step
// (fully synchronous data parallelism over the same network). Time model:
//   t_sync = 2(M−1)/M · P·b_outer / B + 2(M−1)·α       (ring over the M islands)
//   mean step = t_inner + max(0, t_sync − τ·t_inner) / H (τ inner steps overlap the sync)
//   sync DP:  t_inner + max(0, 2(M−1)/M · P·b_grad / B + 2(M−1)·α − t_hidden) every step
// with B the bandwidth of one island's share of the inter-island network (bytes/s) and
// t_hidden the backward time the gradient all-reduce overlaps (the evaluator's convention:
// the last microbatch's backward). Quality vs synchronous training is not modelled.
#pragma once

#include "cost_models/tpu/training_eval.h"

namespace placerl::perf {

struct DilocoQuery {
  double islands = 2;        // M >= 2
  double inner_steps = 100;  // H >= 1
  double island_bw = 0;      // bytes/s of one island's link to the others
  double latency_s = 0;      // per ring step between islands
  double outer_bytes = 4;    // bytes per value of the outer gradient on the wire (fp32 = 4; 4-bit = 0.5)
  double overlap_steps = 0;  // τ: inner steps the outer all-reduce runs under (streaming / eager)
};
struct DilocoResult {
  double inner_step_s = 0;          // one island's step (the evaluator)
  double sync_s = 0;                // one outer all-reduce
  double exposed_sync_s = 0;        // of it, not hidden under the overlapped inner steps
  double step_s = 0;                // mean per inner step
  double overhead = 0;              // step_s / inner_step_s − 1
  double dcn_bytes_per_step = 0;    // per island, mean per inner step (sent + received / 2 = ring bytes)
  double sync_dp_step_s = 0;        // fully synchronous data parallelism over the same network
  double sync_dp_dcn_bytes_per_step = 0;
  double speedup_vs_sync_dp = 0;    // sync_dp_step_s / step_s
  double break_even_h = 0;          // smallest H with overhead <= 5 % (1 if none needed)
};

// Stragglers and failed islands (Decoupled DiLoCo, Douillard et al. 2026: learners push their
// outer gradients asynchronously to a syncer that merges whatever arrives — no global barrier).
// Compared, on the same islands and network:
//  - synchronous DiLoCo (a barrier at every outer step) and synchronous DP (every step) wait for
//    the slowest island: step = s·t_inner + exposed sync (per step / H);
//  - decoupled DiLoCo: every island runs at its own pace and pays its own exposed sync per H
//    steps (its push; conservative: no more hidden than the synchronous variant's), so the job
//    does Σ_m 1/(s_m·t_inner + e/H) island-steps per second; its mean step is M / that.
// A failed island (F of M lost for good): decoupled continues with M−F learners at once (the
// syncer's quorum) and loses each failed island's steps since its last push (H/2 on average);
// the synchronous variants stop for `restart_s` (detection, restart, reload of the last
// checkpoint / outer step; an input) and then run with M−F islands, synchronous DiLoCo also
// losing the failed islands' steps since the last outer step (H/2). Loss per failure in
// island-seconds of work: decoupled F·H/2·t, synchronous DiLoCo M·R + F·H/2·t, DP M·R.
struct DilocoFaults {
  double straggler_slowdown = 1;  // s >= 1: one island's inner step is s × the others'
  double failed_islands = 0;      // F in [0, M−1]
  double restart_s = 0;           // stop of the synchronous variants per failure
};
struct DilocoFaultResult {
  // with the straggler (all islands up)
  double sync_diloco_step_s = 0;      // s·t + e/H
  double decoupled_step_s = 0;        // M / Σ_m 1/(s_m·t + e/H)
  double sync_dp_step_s = 0;          // s·t + max(0, all-reduce − hidden)
  double sync_break_even_h = 0;       // ≤ 5 % over s·t
  double decoupled_break_even_h = 0;  // the healthy islands': ≤ 5 % over t
  // after F islands failed: mean step per island-step of the M−F survivors (outer ring of M−F)
  double survivors_step_s = 0;
  double throughput_after_failure = 0;  // (M−F)/M × healthy step / survivors' step
  double lost_island_s_decoupled = 0, lost_island_s_sync_diloco = 0, lost_island_s_sync_dp = 0;
};
// Throws ConfigError on out-of-range inputs (slowdown 1..100, failed 0..M−1, restart 0..1e7 s).
DilocoFaultResult EvaluateDilocoFaults(const StepBreakdown& island, double params, double grad_bytes,
                                       const DilocoQuery& q, const DilocoFaults& f);

// `island`: the evaluator's result for one island's plan; `params` the model's parameters;
// `grad_bytes` bytes per gradient value of the synchronous alternative. Throws ConfigError on
// out-of-range inputs (islands 2..1e6, H 1..1e9, bandwidth > 0, bytes per value in (0, 8]).
DilocoResult EvaluateDiloco(const StepBreakdown& island, double params, double grad_bytes, const DilocoQuery& q);

}  // namespace placerl::perf
