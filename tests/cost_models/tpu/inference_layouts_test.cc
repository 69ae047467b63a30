// Pope et al.'s weight-gathered inference layouts (InferenceQuery.weight_gathered = X, XY, XYZ):
// gather groups of the mesh's first 1, 2, 3 axes; at batch 1 the gathers dominate and the
// weight-stationary layout wins, at a large prefill batch the weight-gathered ones win (Pope:
// "switch from WS to WG as B·L grows"); bad combinations are refused with a reason.
#include <gtest/gtest.h>

#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"

namespace placerl::perf {
namespace {

// PaLM 540B as rows I1 / I2 of the validation (118 layers, multi-query, SwiGLU) on 64 v4 chips.
const char* kPalm =
    "transformer(layers=118,d_model=18432,d_ff=73728,heads=48,head_dim=256,kv_heads=1,seq=2048,vocab=256000,"
    "gated_ffn=true)";

InferenceResult Prefill(const TrainingEvaluator& ev, int wg, double batch) {
  PlanC p;
  p.tensor = 64;
  p.tensor_x = wg == 0 ? 4 : 1;
  InferenceQuery q;
  q.batch = batch;
  q.prompt = 2048;
  q.generate = 0;
  q.weight_gathered = wg;
  return ev.EvaluateInference(p, q);
}

TEST(InferenceLayouts, WeightGatheredWinsAtLargeBatchOnly) {
  const TrainingEvaluator ev(ParseModelSpec(kPalm), ParseMeshSpec("tpu_v4:4x4x4"), WithShapeModel(DefaultCatalog(), true));
  const int gather[4] = {1, 4, 16, 64};
  for (int wg = 1; wg <= 3; ++wg) {
    const InferenceResult one = Prefill(ev, wg, 1), ws_one = Prefill(ev, 0, 1);
    const InferenceResult big = Prefill(ev, wg, 64), ws_big = Prefill(ev, 0, 64);
    ASSERT_TRUE(one.valid && big.valid && ws_one.valid && ws_big.valid) << one.invalid_reason;
    EXPECT_EQ(big.gather_chips, gather[wg]);
    EXPECT_GT(one.prefill_s, ws_one.prefill_s) << wg;  // batch 1: gathering 540 B weights per 2048 tokens
    EXPECT_LT(big.prefill_s, ws_big.prefill_s) << wg;  // 131,072 tokens: the gathers amortise
    EXPECT_GT(big.prefill_mfu, ws_big.prefill_mfu);
  }
}

TEST(InferenceLayouts, BadCombinationsAreRefused) {
  const TrainingEvaluator ev(ParseModelSpec(kPalm), ParseMeshSpec("tpu_v4:8x8"), DefaultCatalog());
  EXPECT_FALSE(Prefill(ev, 3, 64).valid);  // XYZ on a 2-D mesh
  EXPECT_STREQ(Prefill(ev, 3, 64).invalid_reason, "inference: weight-gathered over more axes than the mesh has");
  PlanC p;
  p.tensor = 64;
  p.tensor_x = 4;
  InferenceQuery q;
  q.weight_gathered = 1;
  EXPECT_FALSE(ev.EvaluateInference(p, q).valid);  // WG with a 2-D stationary layout
  q.weight_gathered = 7;
  p.tensor_x = 1;
  EXPECT_FALSE(ev.EvaluateInference(p, q).valid);
  // 8x8 gathered over X: the other 8 devices must divide the 48 heads (they do) and d_ff.
  EXPECT_TRUE(Prefill(ev, 1, 8).valid);
}

}  // namespace
}  // namespace placerl::perf
