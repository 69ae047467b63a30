// TPU performance model: collective formulas against hand-computed cases, the op roofline,
// the catalogue reader (errors with file:line), model/mesh/plan strings, and invariants of
// the training-run evaluator (throughput and MFU consistent with the step time, memory
// accounting, OOM, pipeline bubble, invalid plans).
#include <gtest/gtest.h>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/collectives.h"
#include "cost_models/tpu/op_cost.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/files.h"

#include <cmath>
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

// S = 8.4 MB, B = 4.5e10 B/s one way, α = 1 µs, n = 4.
constexpr double S = 8.4e6, B = 4.5e10, A = 1e-6;

TEST(Collectives, UnidirectionalRingByHand) {
  const Ring r{4, B, A, false};
  // AG/RS: (n−1)α + (n−1)/n·S/B = 3e-6 + 0.75·8.4e6/4.5e10 = 3e-6 + 1.4e-4
  EXPECT_NEAR(RingTime(Collective::kAllGather, r, S), 3e-6 + 1.4e-4, 1e-12);
  EXPECT_NEAR(RingTime(Collective::kReduceScatter, r, S), 3e-6 + 1.4e-4, 1e-12);
  // AR = 2 × RS
  EXPECT_NEAR(RingTime(Collective::kAllReduce, r, S), 2 * (3e-6 + 1.4e-4), 1e-12);
  // A2A: same latency, half the bandwidth term: 3e-6 + 0.7e-4
  EXPECT_NEAR(RingTime(Collective::kAllToAll, r, S), 3e-6 + 0.7e-4, 1e-12);
  // permute (shift by one): α + (S/n)/B = 1e-6 + 2.1e6/4.5e10
  EXPECT_NEAR(RingTime(Collective::kPermute, r, S), 1e-6 + 2.1e6 / 4.5e10, 1e-12);
  // one participant: free
  EXPECT_EQ(RingTime(Collective::kAllReduce, Ring{1, B, A, false}, S), 0.0);
}

TEST(Collectives, BidirectionalRingByHand) {
  const Ring r{4, B, A, true};
  // AG: ⌈n/2⌉α + (n−1)/n·S/(2B) = 2e-6 + 0.7e-4
  EXPECT_NEAR(RingTime(Collective::kAllGather, r, S), 2e-6 + 0.7e-4, 1e-12);
  // A2A on a bidirectional ring: a quarter of the AG bandwidth term: 2e-6 + 0.25·0.7e-4
  EXPECT_NEAR(RingTime(Collective::kAllToAll, r, S), 2e-6 + 1.75e-5, 1e-12);
  // Bandwidth-bound limit of the scaling book: AR → 2S/W as n grows.
  const Ring big{256, B, 0, true};
  EXPECT_NEAR(RingTime(Collective::kAllReduce, big, S), 2 * S / (2 * B) * 255 / 256, 1e-12);
}

TEST(Collectives, TwoAxisTorusUsesBothAxesBandwidth) {
  AxisGroup g;
  g.ndims = 2;
  g.extent[0] = g.extent[1] = 4;
  g.wrap[0] = g.wrap[1] = true;
  g.dim_bw[0] = g.dim_bw[1] = B;
  g.hop_latency = A;
  // AG over 16 chips on a 4×4 torus: (2+2)α + 15/16·S/(2B + 2B)
  const double ag = 4 * A + 15.0 / 16 * S / (4 * B);
  EXPECT_NEAR(IciGroupTime(Collective::kAllGather, g, S), ag, 1e-12);
  EXPECT_NEAR(IciGroupTime(Collective::kAllReduce, g, S), 2 * ag, 1e-12);
  // Doing it one dimension after the other (Ying et al., one order): RS_x(S) + AR_y(S/4) + AG_x(S)
  const Ring x{4, B, A, true};
  const double phased = 2 * (2 * A + 0.75 * S / (2 * B)) + 2 * (2 * A + 0.75 * (S / 4) / (2 * B));
  EXPECT_NEAR(PhasedTorusAllReduce(g, S), phased, 1e-12);
  EXPECT_GT(PhasedTorusAllReduce(g, S), IciGroupTime(Collective::kAllReduce, g, S));
  (void)x;
}

TEST(Collectives, DcnLevelAndEfficiency) {
  AxisGroup g;
  g.ndims = 1;
  g.extent[0] = 4;
  g.wrap[0] = true;
  g.dim_bw[0] = B;
  g.hop_latency = A;
  g.dcn_n = 2;
  g.dcn_bw = 6.25e9;
  g.dcn_latency = 1e-5;
  const double eff = 0.8;
  const double ici = 2 * (2 * A + 0.75 * (S / eff) / (2 * B));
  // DCN ring of 2 slices on the 1/4 shard each chip holds: 2·(α_dcn + ½·(S/eff/4)/B_dcn)
  const double dcn = 2 * (1e-5 + 0.5 * (S / eff / 4) / 6.25e9);
  EXPECT_NEAR(CollectiveTime(Collective::kAllReduce, g, S, eff, 0), ici + dcn, 1e-12);
  // The latency floor: a tiny all-gather on one slice with no hop latency takes the floor.
  AxisGroup one = g;
  one.dcn_n = 1;
  one.hop_latency = 0;
  EXPECT_DOUBLE_EQ(CollectiveTime(Collective::kAllGather, one, 8, 1.0, 5e-6), 5e-6);
  EXPECT_GT(CollectiveTime(Collective::kAllGather, one, S, 1.0, 5e-6), 5e-6);
}

TEST(OpCost, RooflineComputeAndMemoryBound) {
  DeviceRates r;
  r.peak_flops = 1e14;
  r.hbm_bw = 1e12;
  r.eff_matmul = 0.5;
  r.eff_memory = 0.8;
  r.launch = 2e-6;
  // Compute-bound matmul: 1e12 FLOP / (1e14 · 0.5) = 0.02 s (+ launch); its 1e6 bytes take 1.25 µs.
  EXPECT_NEAR(OpTime(r, OpKind::kMatmul, 1e12, 1e6), 0.02 + 2e-6, 1e-12);
  // Memory-bound elementwise: 1e9 B / (1e12 · 0.8) = 1.25 ms; its 1e9 FLOP on the vector unit
  // (1/16 of peak) take 1e9 / (1e14/16) = 0.16 ms.
  EXPECT_NEAR(OpTime(r, OpKind::kElementwise, 1e9, 1e9), 1.25e-3 + 2e-6, 1e-12);
  EXPECT_NEAR(MatmulFlops(2, 3, 4), 48.0, 0);
  EXPECT_NEAR(MatmulBytes(2, 3, 4, 2, 1), (6 + 8) * 2 + 12 * 1, 0);
}

TEST(Catalog, DefaultHasThePublishedChips) {
  const Catalog& c = DefaultCatalog();
  for (const char* name : {"tpu_v2", "tpu_v3", "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "v100", "a100", "h100"}) {
    SCOPED_TRACE(name);
    const Chip& chip = FindChip(c, name);
    EXPECT_GT(PeakFlops(chip, BF16), 1e13);
    EXPECT_GT(chip.hbm_bytes(), 1e9);
  }
  // Values of perf_model_notes.md §1.
  EXPECT_NEAR(PeakFlops(FindChip(c, "tpu_v5p"), BF16), 459e12, 1e9);
  EXPECT_NEAR(PeakFlops(FindChip(c, "tpu_v4"), BF16), 275e12, 1e9);
  EXPECT_THROW(FindChip(c, "tpu_v99"), ConfigError);
  EXPECT_DOUBLE_EQ(BytesPerElement(BF16), 2.0);
  EXPECT_DOUBLE_EQ(BytesPerElement(FP32), 4.0);
}

TEST(Catalog, MalformedTextGivesFileAndLine) {
  for (const std::string& text : {std::string("chip {\n  name: \"x\"\n  no_such_field: 3\n}\n"),
                                  std::string("chip {\n  name: \"x\"\n  hbm_bytes: \"lots\"\n}\n"),
                                  std::string("chip {\n  name: \"x\"\n")}) {
    SCOPED_TRACE(text);
    try {
      ParseCatalog(text, "bad.pbtxt");
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "bad.pbtxt");
      EXPECT_GE(e.line(), 1);
    }
  }
}

TEST(Spec, StringsRoundTripAndRejectUnknownKeys) {
  const TransformerModel m = ParseModelSpec("transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)");
  EXPECT_EQ(m.layers(), 24);
  EXPECT_EQ(m.d_ff(), 8192);
  const TransformerModel back = ParseModelSpec(ModelToString(m));
  EXPECT_EQ(back.SerializeAsString(), m.SerializeAsString());
  EXPECT_THROW(ParseModelSpec("transformer(layers=24,colour=blue)"), Error);
  const Plan p = ParsePlanSpec("fsdp=16,tensor=4,remat=full,global_batch=384");
  EXPECT_EQ(p.fsdp(), 16);
  EXPECT_EQ(p.remat(), REMAT_FULL);
  EXPECT_THROW(ParsePlanSpec("fsdp=sixteen"), Error);
  const Mesh mesh = ParseMeshSpec("tpu_v5p:4x4x4,slices=2");
  EXPECT_EQ(mesh.chip(), "tpu_v5p");
  EXPECT_EQ(mesh.dims_size(), 3);
  EXPECT_EQ(mesh.slices(), 2);
}

class Evaluator : public ::testing::Test {
 protected:
  TrainingEvaluator Make(const std::string& model, const std::string& mesh) {
    return TrainingEvaluator(ParseModelSpec(model), ParseMeshSpec(mesh), DefaultCatalog());
  }
  static PlanC Plan(const std::string& s) { return PlanFromProto(ParsePlanSpec(s)); }
};

TEST_F(Evaluator, ThroughputAndMfuFollowFromStepTime) {
  TrainingEvaluator ev = Make("transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)", "tpu_v5p:4x4x4");
  const StepBreakdown b = ev.Evaluate(Plan("fsdp=64,global_batch=256"));
  ASSERT_TRUE(b.valid) << b.invalid_reason;
  EXPECT_GT(b.step_s, 0);
  EXPECT_NEAR(b.tokens_per_s, 256.0 * 2048 / b.step_s, 1e-9 * b.tokens_per_s);
  const double peak = PeakFlops(ev.chip(), BF16) * ev.num_chips();
  EXPECT_NEAR(b.mfu, b.model_flops / b.step_s / peak, 1e-9);
  // Model FLOPs ≥ 6·N·tokens for the matmul parameters (attention adds more).
  EXPECT_GE(b.model_flops, 6 * 24 * (4.0 * 2048 * 2048 + 2.0 * 2048 * 8192) * 256 * 2048);
  EXPECT_GT(b.mfu, 0.05);
  EXPECT_LT(b.mfu, 1.0);
  EXPECT_GE(b.hfu, b.mfu);
  // HBM total is the sum of its parts.
  EXPECT_NEAR(b.hbm_total, b.hbm_params + b.hbm_grads + b.hbm_optimizer + b.hbm_activations, 1);
}

TEST_F(Evaluator, ShardingDividesWeightMemoryAndHugeModelsRunOutOfMemory) {
  TrainingEvaluator ev = Make("transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)", "tpu_v5p:4x4x4");
  const StepBreakdown dp = ev.Evaluate(Plan("data=64,global_batch=256"));
  const StepBreakdown fsdp = ev.Evaluate(Plan("fsdp=64,global_batch=256"));
  ASSERT_TRUE(dp.valid && fsdp.valid);
  EXPECT_NEAR(dp.hbm_params / fsdp.hbm_params, 64.0, 1e-6);
  TrainingEvaluator huge = Make("transformer(layers=128,d_model=16384,d_ff=65536,heads=128,seq=2048,vocab=32000)", "tpu_v5e:2x2");
  const StepBreakdown b = huge.Evaluate(Plan("fsdp=4,global_batch=4"));
  ASSERT_TRUE(b.valid);
  EXPECT_TRUE(b.oom);
  EXPECT_GT(b.hbm_total, b.hbm_capacity);
}

TEST_F(Evaluator, PipelineBubbleShrinksWithMoreMicrobatches) {
  TrainingEvaluator ev = Make("transformer(layers=32,d_model=4096,d_ff=16384,heads=32,seq=2048,vocab=32000)", "tpu_v4:4x4x4");
  const StepBreakdown m4 = ev.Evaluate(Plan("pipeline=4,fsdp=16,microbatches=4,global_batch=1024"));
  const StepBreakdown m32 = ev.Evaluate(Plan("pipeline=4,fsdp=16,microbatches=32,global_batch=1024"));
  ASSERT_TRUE(m4.valid) << m4.invalid_reason;
  ASSERT_TRUE(m32.valid) << m32.invalid_reason;
  EXPECT_GT(m4.bubble_s, 0);
  // GPipe: bubble fraction (K−1)/(M+K−1): 3/7 with M=4, 3/35 with M=32 (of the microbatch slots).
  EXPECT_GT(m4.bubble_s / m4.step_s, m32.bubble_s / m32.step_s);
  const StepBreakdown none = ev.Evaluate(Plan("fsdp=64,global_batch=256"));
  EXPECT_EQ(none.bubble_s, 0);
}

TEST_F(Evaluator, PlansThatDoNotFitTheMeshAreInvalid) {
  TrainingEvaluator ev = Make("transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)", "tpu_v5p:4x4x4");
  const StepBreakdown b = ev.Evaluate(Plan("fsdp=16,tensor=2,global_batch=256"));  // 32 of 64 chips
  EXPECT_FALSE(b.valid);
  EXPECT_STRNE(b.invalid_reason, "");
}

TEST_F(Evaluator, SearchRanksValidPlansByStepTime) {
  TrainingEvaluator ev = Make("transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)", "tpu_v5p:4x4x4");
  PlanC base;
  base.global_batch = 256;
  SearchStats stats;
  const std::vector<RankedPlan> top = SearchPlans(ev, base, 10, &stats);
  ASSERT_FALSE(top.empty());
  for (size_t i = 1; i < top.size(); ++i) {
    EXPECT_LE(top[i - 1].result.step_s, top[i].result.step_s);
    EXPECT_FALSE(top[i].result.oom);
  }
}

}  // namespace
}  // namespace placerl::perf

namespace placerl::perf {
namespace {

// The embedded copies (catalog_data.cc, validation_data.cc) are generated from the .pbtxt
// files by cost_models/tpu/embed_data.sh; they must not drift apart.
TEST(EmbeddedData, MatchesTheTextFiles) {
  EXPECT_EQ(DefaultCatalogText() + "\n", ReadFile("cost_models/tpu/catalog/hardware.pbtxt") + "\n");
  EXPECT_EQ(DefaultMeasurementsText() + "\n", ReadFile("cost_models/tpu/validation/measurements.pbtxt") + "\n");
  EXPECT_GE(DefaultMeasurements().row_size(), 20);
}

TEST(Validation, EveryRowIsPredictedWithAFiniteError) {
  const ValidationReport rep = Validate(DefaultMeasurements(), DefaultCatalog());
  ASSERT_FALSE(rep.rows.empty());
  for (const ValidationRow& r : rep.rows) {
    SCOPED_TRACE(r.id);
    EXPECT_GT(r.predicted, 0);
    EXPECT_TRUE(std::isfinite(r.rel_error));
  }
}

}  // namespace
}  // namespace placerl::perf
