// Plan search over pipeline schedules and selective remat (EnumeratePlans(..., schedules=true)):
// the extended enumeration holds every plan of the basic one plus remat=selective and, for
// pipelines, GPipe and interleaved 1F1B (v = 2, 4 where the layers divide); fixed schedule /
// interleave keys are honoured; the basic enumeration (the uniform golden's) has none of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"

namespace placerl::perf {
namespace {

TrainingEvaluator Eval() {
  return TrainingEvaluator(ParseModelSpec("transformer(layers=16,d_model=1024,d_ff=4096,heads=16,seq=1024)"),
                           ParseMeshSpec("tpu_v5e:4x4"), WithShapeModel(DefaultCatalog(), true));
}

TEST(PlanSearchSchedules, ExtendedEnumerationAddsSelectiveGpipeAndInterleaving) {
  const TrainingEvaluator ev = Eval();
  PlanC base;
  base.global_batch = 256;
  const std::vector<PlanC> basic = EnumeratePlans(ev, base);
  const std::vector<PlanC> ext = EnumeratePlans(ev, base, nullptr, true);
  int sel = 0, gpipe = 0, v2 = 0, v4 = 0, v4_bad = 0;
  for (const PlanC& p : basic) {
    EXPECT_NE(p.remat, REMAT_SELECTIVE);
    EXPECT_EQ(p.schedule, SCHEDULE_1F1B);
    EXPECT_EQ(p.interleave, 1);
  }
  for (const PlanC& p : ext) {
    sel += p.remat == REMAT_SELECTIVE;
    gpipe += p.schedule == SCHEDULE_GPIPE;
    v2 += p.interleave == 2;
    v4 += p.interleave == 4;
    if (p.interleave > 1) v4_bad += p.pipeline == 1 || 16 % (p.pipeline * p.interleave) != 0;
    if (p.pipeline == 1) EXPECT_EQ(p.interleave, 1);
  }
  EXPECT_GT(sel, 0);
  EXPECT_GT(gpipe, 0);
  EXPECT_GT(v2, 0);
  EXPECT_GT(v4, 0);
  EXPECT_EQ(v4_bad, 0);
  // Every basic plan is in the extended list (1F1B without interleaving, remat none/minimal/full).
  auto same = [](const PlanC& a, const PlanC& b) {
    return a.data == b.data && a.fsdp == b.fsdp && a.tensor == b.tensor && a.tensor_x == b.tensor_x &&
           a.pipeline == b.pipeline && a.microbatches == b.microbatches && a.remat == b.remat &&
           a.shard_optimizer == b.shard_optimizer && a.schedule == b.schedule && a.interleave == b.interleave;
  };
  for (const PlanC& p : basic) {
    bool found = false;
    for (const PlanC& q : ext) found |= same(p, q);
    EXPECT_TRUE(found) << p.data << " " << p.fsdp << " " << p.tensor << " " << p.pipeline;
  }
  EXPECT_GT(ext.size(), basic.size() * 4 / 3);
  // Every extended plan evaluates (valid or with a reason); the best is no slower than the basic best.
  SearchStats s1, s2;
  const auto b1 = SearchPlans(ev, base, 1, &s1);
  const auto b2 = SearchPlans(ev, base, 1, &s2, nullptr, true);
  ASSERT_FALSE(b1.empty());
  ASSERT_FALSE(b2.empty());
  EXPECT_LE(b2[0].result.step_s, b1[0].result.step_s);
  EXPECT_EQ(s2.enumerated, long(ext.size()));
}

TEST(PlanSearchSchedules, FixedScheduleAndInterleaveAreKept) {
  const TrainingEvaluator ev = Eval();
  PlanC base;
  base.global_batch = 256;
  base.schedule = SCHEDULE_GPIPE;
  const std::vector<std::string> fixed = {"schedule"};
  for (const PlanC& p : EnumeratePlans(ev, base, &fixed, true)) EXPECT_EQ(p.schedule, SCHEDULE_GPIPE);
  base.schedule = SCHEDULE_1F1B;
  base.interleave = 2;
  const std::vector<std::string> fixed_v = {"interleave"};
  int pipelined = 0;
  for (const PlanC& p : EnumeratePlans(ev, base, &fixed_v, true)) {
    EXPECT_EQ(p.interleave, 2);
    pipelined += p.pipeline > 1;
  }
  EXPECT_GT(pipelined, 0);
}

}  // namespace
}  // namespace placerl::perf
