// Regression cases found by the fuzz targets of the perf-model readers (tests/fuzz/,
// docs/fuzzing.md), plus the mesh-size overflow of issue 12 that the targets would reach
// next. Under the fuzz build (ASan + UBSan) each of these failed; in the normal build some
// were undefined behaviour with a benign outcome, so the tests check the defined result.
#include <gtest/gtest.h>

#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

const char kChip[] = R"(
chip { name: "c" peak { dtype: BF16 flops_per_s: PEAK } hbm_bytes: HBM hbm_bw: 1e12 devices_per_chip: 1
       ici { links_per_chip: 1 link_bw_one_way: 1e10 hop_latency_s: HOP } dcn_bw_per_chip: DCN }
efficiency { matmul: 0.5 memory: 0.5 collective_bw: 0.5 hbm_usable: 0.5 tp_overlap: TPO }
)";

std::string Chip(const std::string& peak, const std::string& hbm = "1e10", const std::string& hop = "1e-6",
                 const std::string& dcn = "0", const std::string& tpo = "0.25") {
  std::string s = kChip;
  for (auto [key, value] : {std::pair<std::string, std::string>{"PEAK", peak}, {"HBM", hbm}, {"HOP", hop},
                            {"DCN", dcn}, {"TPO", tpo}})
    s.replace(s.find(key), key.size(), value);
  return s;
}

// catalog_fuzz (corpus/catalog_fuzz/regression_nan_peak.pbtxt): protobuf text accepts nan
// and inf for doubles; `flops_per_s <= 0` let NaN through and every step time became NaN.
TEST(FuzzRegression, CatalogRejectsNonFiniteNumbers) {
  EXPECT_NO_THROW(ParseCatalog(Chip("1e14"), "hw.pbtxt"));
  EXPECT_THROW(ParseCatalog(Chip("nan"), "hw.pbtxt"), ParseError);
  EXPECT_THROW(ParseCatalog(Chip("inf"), "hw.pbtxt"), ParseError);
  EXPECT_THROW(ParseCatalog(Chip("1e14", "inf"), "hw.pbtxt"), ParseError);
  EXPECT_THROW(ParseCatalog(Chip("1e14", "1e10", "nan"), "hw.pbtxt"), ParseError);
  EXPECT_THROW(ParseCatalog(Chip("1e14", "1e10", "1e-6", "-inf"), "hw.pbtxt"), ParseError);
  EXPECT_THROW(ParseCatalog(Chip("1e14", "1e10", "1e-6", "0", "nan"), "hw.pbtxt"), ParseError);
}

// perf_spec_fuzz (corpus/perf_spec_fuzz/regression_dim_beyond_long_long.txt): an integer
// beyond long long ("2x6422...2", 6.4e29) was cast from double to long long (undefined).
TEST(FuzzRegression, SpecIntegersBeyondLongLong) {
  EXPECT_THROW(ParseMeshSpec("tpu_v5p:2x642222222222222222222222222222"), ConfigError);
  EXPECT_THROW(ParsePlanSpec("global_batch=1e19"), ConfigError);
  EXPECT_THROW(ParsePlanSpec("global_batch=-9.3e18"), ConfigError);
  EXPECT_THROW(ParsePlanSpec("global_batch=1e15"), ConfigError);  // beyond the documented 2^30
  EXPECT_EQ(ParsePlanSpec("global_batch=1e9").global_batch(), 1000000000LL);
}

// perf_pbtxt_fuzz (corpus/perf_pbtxt_fuzz/regression_expert_product_overflow.txt): the
// inference check multiplied the plan's degrees in int (2 · 4 · 411111111 overflows).
TEST(FuzzRegression, InferenceWithHugeDegreesIsInvalid) {
  TransformerModel m = ParseModelSpec("transformer(layers=2,d_model=256,d_ff=1024,heads=8,seq=128)");
  const TrainingEvaluator ev(m, ParseMeshSpec("tpu_v4:2x2"), DefaultCatalog());
  PlanC p;
  p.data = 2;
  p.fsdp = 4;
  p.expert = 411111111;
  InferenceQuery q;
  EXPECT_FALSE(ev.EvaluateInference(p, q).valid);
  p.data = 536870912;  // 2^29 · 8 = 2^32 wraps to 0 in int
  p.fsdp = 8;
  p.expert = 1;
  EXPECT_FALSE(ev.EvaluateInference(p, q).valid);
}

// perf_pbtxt_fuzz (corpus/perf_pbtxt_fuzz/regression_search_batch_beyond_int.txt): the plan
// search cast global_batch / (data·fsdp) = 8.9e14 to int (undefined; with gcc INT_MIN, so
// every pipelined plan was silently dropped from the search).
TEST(FuzzRegression, SearchWithHugeGlobalBatchKeepsPipelinePlans) {
  const TransformerModel m = ParseModelSpec("transformer(layers=8,d_model=512,d_ff=1024,heads=8,seq=128)");
  const TrainingEvaluator ev(m, ParseMeshSpec("tpu_v4:2x2"), DefaultCatalog());
  PlanC base;
  base.global_batch = 896666666666666.0;
  int pipelined = 0;
  for (const PlanC& p : EnumeratePlans(ev, base)) pipelined += p.pipeline > 1;
  EXPECT_GT(pipelined, 0);
}

// Issue 12: 16 × 268435457 chips wrapped to 16 in int and passed the ICI-domain check.
TEST(FuzzRegression, MeshDeviceCountOverflowIsAnError) {
  const TransformerModel m = ParseModelSpec("transformer(layers=2,d_model=256,d_ff=1024,heads=8,seq=128)");
  EXPECT_THROW(TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:16x268435457"), DefaultCatalog()), ConfigError);
  EXPECT_THROW(TrainingEvaluator(m, ParseMeshSpec("tpu_v5p:100000x100000x100000"), DefaultCatalog()), ConfigError);
  EXPECT_THROW(TrainingEvaluator(m, ParseMeshSpec("tpu_v5p:2x2x2,slices=268435457"), DefaultCatalog()),
               ConfigError);
  EXPECT_EQ(TrainingEvaluator(m, ParseMeshSpec("tpu_v5p:4x4x4,slices=2"), DefaultCatalog()).num_chips(), 128);
}

}  // namespace
}  // namespace placerl::perf
