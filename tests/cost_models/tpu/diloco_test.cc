// DiLoCo islands (cost_models/tpu/diloco.h): the outer all-reduce, the mean step and the
// break-even H by hand; more inner steps never cost more; bad inputs are errors.
#include "cost_models/tpu/diloco.h"

#include <gtest/gtest.h>

#include <cmath>

#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

StepBreakdown Island(double step_s, double compute_s, int microbatches) {
  StepBreakdown b;
  b.valid = true;
  b.step_s = step_s;
  b.compute_s = compute_s;
  b.microbatches = microbatches;
  return b;
}

TEST(Diloco, OuterAllReduceAndMeanStepByHand) {
  // 1e9 params, fp32 outer gradients, 4 islands at 1e10 B/s, α 1e-3 s, island step 2 s.
  DilocoQuery q;
  q.islands = 4;
  q.inner_steps = 100;
  q.island_bw = 1e10;
  q.latency_s = 1e-3;
  q.outer_bytes = 4;
  const DilocoResult r = EvaluateDiloco(Island(2.0, 1.5, 1), 1e9, 4, q);
  const double sync = 2.0 * 3 / 4 * 4e9 / 1e10 + 6 * 1e-3;  // 0.606 s
  EXPECT_NEAR(r.sync_s, sync, 1e-12);
  EXPECT_NEAR(r.step_s, 2.0 + sync / 100, 1e-12);
  EXPECT_NEAR(r.overhead, sync / 100 / 2.0, 1e-12);
  EXPECT_NEAR(r.dcn_bytes_per_step, 1.5 * 4e9 / 100, 1e-3);
  // Synchronous DP: the same all-reduce every step, 2/3 of the 1.5 s compute hides it → 0.
  EXPECT_NEAR(r.sync_dp_step_s, 2.0, 1e-12);
  EXPECT_NEAR(r.sync_dp_dcn_bytes_per_step, 1.5 * 4e9, 1e-3);
  // ≤ 5 % overhead needs sync / H <= 0.1 s → H = 7.
  EXPECT_EQ(r.break_even_h, 7);
  // A slow network: the gradient all-reduce is exposed every step for sync DP.
  q.island_bw = 1e8;
  const DilocoResult slow = EvaluateDiloco(Island(2.0, 1.5, 1), 1e9, 4, q);
  EXPECT_NEAR(slow.sync_dp_step_s, 2.0 + (2.0 * 3 / 4 * 4e9 / 1e8 + 6e-3 - 1.0), 1e-9);
  EXPECT_GT(slow.speedup_vs_sync_dp, 1);
  // 4-bit outer gradients: 8× less traffic than fp32; τ overlapped steps hide the sync.
  q.outer_bytes = 0.5;
  q.overlap_steps = 1e6;
  const DilocoResult hidden = EvaluateDiloco(Island(2.0, 1.5, 1), 1e9, 4, q);
  EXPECT_NEAR(hidden.dcn_bytes_per_step, slow.dcn_bytes_per_step / 8, 1e-3);
  EXPECT_DOUBLE_EQ(hidden.step_s, 2.0);
  EXPECT_EQ(hidden.break_even_h, 1);
}

TEST(Diloco, MoreInnerStepsNeverCostMore) {
  DilocoQuery q;
  q.island_bw = 1e9;
  double last = 1e30;
  for (double h : {1.0, 2.0, 10.0, 100.0, 1000.0}) {
    q.inner_steps = h;
    const DilocoResult r = EvaluateDiloco(Island(1.0, 0.9, 4), 2e9, 2, q);
    EXPECT_LE(r.step_s, last);
    last = r.step_s;
  }
}

// Stragglers and failed islands by hand: 4 islands, a 2 s island step, sync 0.606 s exposed per
// outer step (as above), H = 100, one island 1.5× slower, one island lost, 600 s restart.
TEST(Diloco, StragglerAndFailedIslandByHand) {
  DilocoQuery q;
  q.islands = 4;
  q.inner_steps = 100;
  q.island_bw = 1e10;
  q.latency_s = 1e-3;
  q.outer_bytes = 4;
  DilocoFaults f;
  f.straggler_slowdown = 1.5;
  f.failed_islands = 1;
  f.restart_s = 600;
  const DilocoFaultResult r = EvaluateDilocoFaults(Island(2.0, 1.5, 1), 1e9, 4, q, f);
  const double e = 2.0 * 3 / 4 * 4e9 / 1e10 + 6e-3;  // 0.606 s
  // The barrier waits for the slow island; decoupled runs 3 islands at 2 s and one at 3 s.
  EXPECT_NEAR(r.sync_diloco_step_s, 3.0 + e / 100, 1e-12);
  EXPECT_NEAR(r.decoupled_step_s, 4 / (3 / (2.0 + e / 100) + 1 / (3.0 + e / 100)), 1e-12);
  EXPECT_LT(r.decoupled_step_s, r.sync_diloco_step_s);
  EXPECT_GT(r.decoupled_step_s, 2.0 + e / 100);
  // Sync DP: its all-reduce hides under the backward (as above), the straggler adds 1 s.
  EXPECT_NEAR(r.sync_dp_step_s, 3.0, 1e-12);
  // Break-even H: e/H <= 5 % of 3 s → H = 5 (sync); of 2 s → 7 (decoupled, the healthy islands').
  EXPECT_EQ(r.sync_break_even_h, 5);
  EXPECT_EQ(r.decoupled_break_even_h, 7);
  // After the failure: 3 islands, outer ring of 3.
  const double e3 = 2.0 * 2 / 3 * 4e9 / 1e10 + 4e-3;
  EXPECT_NEAR(r.survivors_step_s, 2.0 + e3 / 100, 1e-12);
  EXPECT_NEAR(r.throughput_after_failure, 0.75 * (2.0 + e / 100) / (2.0 + e3 / 100), 1e-12);
  // Lost work: decoupled 1 × 50 steps × 2 s; sync DiLoCo + 4 islands × 600 s; sync DP 4 × 600 s.
  EXPECT_NEAR(r.lost_island_s_decoupled, 100, 1e-9);
  EXPECT_NEAR(r.lost_island_s_sync_diloco, 2500, 1e-9);
  EXPECT_NEAR(r.lost_island_s_sync_dp, 2400, 1e-9);
  // No straggler, no failure: every variant is the healthy one.
  const DilocoFaultResult none = EvaluateDilocoFaults(Island(2.0, 1.5, 1), 1e9, 4, q, DilocoFaults());
  const DilocoResult healthy = EvaluateDiloco(Island(2.0, 1.5, 1), 1e9, 4, q);
  EXPECT_NEAR(none.sync_diloco_step_s, healthy.step_s, 1e-12);
  EXPECT_NEAR(none.decoupled_step_s, healthy.step_s, 1e-12);
  EXPECT_NEAR(none.sync_dp_step_s, healthy.sync_dp_step_s, 1e-12);
  EXPECT_NEAR(none.throughput_after_failure, 1, 1e-12);
  EXPECT_EQ(none.lost_island_s_sync_diloco, 0);
}

TEST(Diloco, BadFaultInputsAreErrors) {
  DilocoQuery q;
  q.island_bw = 1e9;
  q.islands = 4;
  for (int i = 0; i < 6; ++i) {
    DilocoFaults f;
    if (i == 0) f.straggler_slowdown = 0.5;
    if (i == 1) f.straggler_slowdown = NAN;
    if (i == 2) f.failed_islands = 4;  // none left
    if (i == 3) f.failed_islands = 1.5;
    if (i == 4) f.restart_s = -1;
    if (i == 5) f.failed_islands = -1;
    EXPECT_THROW(EvaluateDilocoFaults(Island(1, 1, 1), 1e9, 4, q, f), ConfigError) << i;
  }
  DilocoFaults last;
  last.failed_islands = 3;  // one island left: no outer all-reduce
  EXPECT_NEAR(EvaluateDilocoFaults(Island(1, 1, 1), 1e9, 4, q, last).survivors_step_s, 1.0, 1e-12);
}

TEST(Diloco, BadInputsAreErrors) {
  DilocoQuery ok;
  ok.island_bw = 1e9;
  EXPECT_NO_THROW(EvaluateDiloco(Island(1, 1, 1), 1e9, 4, ok));
  for (int i = 0; i < 5; ++i) {
    DilocoQuery q = ok;
    if (i == 0) q.islands = 1;
    if (i == 1) q.inner_steps = 0;
    if (i == 2) q.island_bw = 0;
    if (i == 3) q.outer_bytes = NAN;
    if (i == 4) q.overlap_steps = -1;
    EXPECT_THROW(EvaluateDiloco(Island(1, 1, 1), 1e9, 4, q), ConfigError) << i;
  }
  EXPECT_THROW(EvaluateDiloco(StepBreakdown(), 1e9, 4, ok), ConfigError);  // invalid island plan
}

}  // namespace
}  // namespace placerl::perf
