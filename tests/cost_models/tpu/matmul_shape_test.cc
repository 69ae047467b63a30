// Shape-dependent matmul efficiency (Efficiency.shape_model, op_cost.h MatmulShapeFactor): the
// factor by hand (tile padding, waves over the matrix units, systolic fill), the backward GEMMs'
// own shapes, narrow vs wide models in the training evaluator, the catalogue switch (the library
// default keeps the one-constant model), and the committed shape calibration being the fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/op_cost.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

DeviceRates Rates(const std::string& chip, double fill) {
  Catalog c = WithShapeModel(DefaultCatalog(), true);
  c.mutable_efficiency()->set_matmul_fill(fill);
  const Chip& ch = FindChip(c, chip);
  return MakeDeviceRates(ch, BF16, EffectiveEfficiency(c, ch));
}

TEST(MatmulShape, FactorByHand) {
  const DeviceRates r = Rates("tpu_v5e", 0);  // tile 128, 4 MXUs
  ASSERT_TRUE(r.shape);
  EXPECT_DOUBLE_EQ(r.tile, 128);
  EXPECT_DOUBLE_EQ(r.units, 4);
  // Large and aligned: 32×32 weight tiles, 256 waves of 4: no loss.
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(r, 4096, 4096, 4096), 1.0);
  // One weight tile: 1 of 4 MXUs busy.
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(r, 4096, 128, 128), 0.25);
  // k = 64 pads to 128 (half), n = 192 pads to 256 (3/4); 1×2 tiles on 4 MXUs (half); rows 12
  // pad to 16 (3/4).
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(r, 12, 64, 192), 0.75 * 0.5 * 0.75 * 0.5);
  // A batch of 4 single-tile matmuls fills the 4 MXUs.
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(r, 4096, 128, 128, 4), 1.0);
  // Systolic fill: m rows stream through each tile at the cost of m + fill·T.
  const DeviceRates f = Rates("tpu_v5e", 1.0);
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(f, 128, 4096, 4096), 0.5);
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(f, 384, 4096, 4096), 0.75);
  // Off: 1 whatever the shape.
  DeviceRates off = r;
  off.shape = false;
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(off, 12, 64, 192), 1.0);
  // v6e's 256-wide MXU pads a 128-wide dimension to half.
  const DeviceRates v6 = Rates("tpu_v6e", 0);
  EXPECT_DOUBLE_EQ(MatmulShapeFactor(v6, 4096, 128, 4096), 0.5);
}

// The factor as first written (session 16), the reference for the faster forms in op_cost.h.
double PlainShapeFactor(const DeviceRates& r, double m, double k, double n, double batch = 1) {
  if (!r.shape || r.tile <= 0 || !(m > 0 && k > 0 && n > 0)) return 1.0;
  const double T = r.tile;
  const double tm = std::ceil(m / kMatmulRowGranule), tk = std::ceil(k / T), tn = std::ceil(n / T);
  const double pad = (m / (tm * kMatmulRowGranule)) * (k / (tk * T)) * (n / (tn * T));
  const double tiles = tk * tn * std::max(1.0, batch);
  const double wave = tiles / (std::ceil(tiles / r.units) * r.units);
  return pad * wave * (m / (m + r.fill * T));
}

// The fast forms (reciprocals of power-of-two tiles and units, no division for whole tiles, the
// forward / weight-gradient and the two attention factors sharing their terms) equal the plain
// expression bit for bit: power-of-two and other tiles and unit counts (GPUs' SM counts), aligned
// and ragged dimensions, batches. (EXPECT_EQ on doubles: exact.)
TEST(MatmulShape, FastFormsEqualThePlainExpressionBitForBit) {
  std::vector<DeviceRates> rates = {Rates("tpu_v5e", 1.25), Rates("tpu_v6e", 1.25), Rates("a100", 1.25),
                                    Rates("tpu_v4", 0)};
  // The weight-stationary forms: the a100's 108 SMs as a unit count that is not a power of two
  // (the committed a100 is output-stationary, whose forms OutputStationaryTilesTheOutputAndStreamsK checks).
  rates[2].output_stationary = false;
  DeviceRates odd = rates[0];  // a tile and a unit count that are not powers of two
  odd.tile = 96;
  odd.units = 6;
  odd.fill_rows = odd.fill * odd.tile;
  odd.inv_tile = 0;
  odd.inv_units = 0;
  rates.push_back(odd);
  ASSERT_EQ(rates[2].inv_units, 0.0);  // a100: 108 SMs, divided
  ASSERT_EQ(rates[0].inv_tile, 1.0 / 128);
  const double dims[] = {1, 7, 8, 12, 64, 96, 100, 127, 128, 129, 192, 256, 384, 1000, 1024, 1536,
                         2048, 5120, 12288, 28672, 49152.5};
  const double batches[] = {1, 2, 3, 16, 40, 108};
  long checked = 0;
  for (const DeviceRates& r : rates)
    for (double m : dims)
      for (double k : dims)
        for (double n : {1.0, 64.0, 100.0, 128.0, 1000.0, 4096.0, 6144.5})
          for (double b : batches) {
            const double want = PlainShapeFactor(r, m, k, n, b);
            ASSERT_EQ(MatmulShapeFactor(r, m, k, n, b), want) << m << " " << k << " " << n << " " << b;
            double fwd = 0, dw = 0, ac = 0, ca = 0;
            MatmulShapeFactorsFwdDw(r, m, k, n, b, &fwd, &dw);
            ASSERT_EQ(fwd, want);
            ASSERT_EQ(dw, PlainShapeFactor(r, k, m, n, b)) << m << " " << k << " " << n << " " << b;
            MatmulShapeFactorsSwapped(r, m, k, n, b, &ac, &ca);
            ASSERT_EQ(ac, want);
            ASSERT_EQ(ca, PlainShapeFactor(r, m, n, k, b));
            ++checked;
          }
  EXPECT_GT(checked, 10000);
  // Off, or no tile: 1 from every form.
  DeviceRates off = rates[0];
  off.shape = false;
  double fwd = 0, dw = 0;
  MatmulShapeFactorsFwdDw(off, 12, 64, 192, 1, &fwd, &dw);
  EXPECT_EQ(fwd, 1.0);
  EXPECT_EQ(dw, 1.0);
}

// The backward pass of a small-batch matmul: dX = dY·Wᵀ streams the same few rows as the
// forward (fill-bound), dW = Xᵀ·dY streams k rows and contracts over the few (padded, not
// fill-bound).
TEST(MatmulShape, BackwardGemmsHaveTheirOwnShapes) {
  const DeviceRates r = Rates("tpu_v5e", 1.25);
  const double m = 64, k = 4096, n = 4096;
  const double fwd = MatmulShapeFactor(r, m, k, n);
  const double dx = MatmulShapeFactor(r, m, n, k);
  const double dw = MatmulShapeFactor(r, k, m, n);
  EXPECT_DOUBLE_EQ(dx, fwd);
  EXPECT_GT(dw, 1.5 * fwd);
  EXPECT_NEAR(fwd, 64.0 / (64 + 160), 1e-12);
  EXPECT_NEAR(dw, 0.5 * 4096 / (4096 + 160), 1e-12);  // contraction 64 pads to 128
}

// Narrow models lose to tile padding under tensor parallelism, wide ones do not: a 16-way tensor
// group on d_model 1024 (16 heads of 64 → 64 per device, half a tile) runs its layer matmuls
// slower per FLOP than on d_model 4096 (256 per device).
TEST(MatmulShape, NarrowModelsPadTheTile) {
  const Catalog shaped = WithShapeModel(DefaultCatalog(), true);
  Catalog flat = shaped;  // the same calibration without tiles: shape factor 1
  for (Chip& chip : *flat.mutable_chip()) chip.set_mxu_tile(0);
  auto hw_per_compute = [](const Catalog& c, int d) {
    const TransformerModel m = ParseModelSpec("transformer(layers=4,d_model=" + std::to_string(d) + ",d_ff=" +
                                              std::to_string(4 * d) + ",heads=16,seq=2048,vocab=32000)");
    const TrainingEvaluator ev(m, ParseMeshSpec("tpu_v5e:4x4"), c);
    PlanC p;
    p.tensor = 16;
    p.global_batch = 16;
    const StepBreakdown b = ev.Evaluate(p);
    EXPECT_TRUE(b.valid) << b.invalid_reason;
    return b.hw_flops / b.compute_s;
  };
  const double narrow_ratio = hw_per_compute(shaped, 1024) / hw_per_compute(flat, 1024);
  const double wide_ratio = hw_per_compute(shaped, 4096) / hw_per_compute(flat, 4096);
  EXPECT_LT(narrow_ratio, 0.95 * wide_ratio);  // measured 0.90 vs 0.97 (elementwise work dilutes it)
  EXPECT_GT(wide_ratio, 0.95);  // 4096 wide: aligned, large; only the fill (0 since session 22)
}

// The library default is the one-constant model (the NAS step-time model and the uniform golden
// keep their numbers); WithShapeModel swaps in the shape calibration, per chip too.
TEST(MatmulShape, CatalogueSwitch) {
  const Catalog& def = DefaultCatalog();
  EXPECT_FALSE(def.efficiency().shape_model());
  ASSERT_TRUE(def.has_shape_efficiency());
  const Catalog on = WithShapeModel(def, true);
  EXPECT_TRUE(on.efficiency().shape_model());
  EXPECT_DOUBLE_EQ(on.efficiency().memory(), def.shape_efficiency().memory());
  EXPECT_GE(on.efficiency().matmul_fill(), 0);  // fitted; 0 since session 22 (only the decode row I2 pinned it)
  // The fixed cost per inference collective: the shape calibration's since session 22, the
  // library default's too since session 31 (the same constant).
  EXPECT_GT(on.efficiency().collective_fixed_s(), 0);
  EXPECT_EQ(def.efficiency().collective_fixed_s(), on.efficiency().collective_fixed_s());
  const Chip& a100 = FindChip(on, "a100");
  EXPECT_DOUBLE_EQ(EffectiveEfficiency(on, a100).matmul(), FindChip(def, "a100").shape_efficiency().matmul());
  EXPECT_EQ(FindChip(def, "tpu_v5p").mxu_tile(), 128);
  EXPECT_EQ(FindChip(def, "tpu_v6e").mxu_tile(), 256);
  // Off again: the one-constant model's rates.
  const Catalog off = WithShapeModel(def, false);
  EXPECT_FALSE(MakeDeviceRates(FindChip(off, "tpu_v5e"), BF16, EffectiveEfficiency(off, FindChip(off, "tpu_v5e"))).shape);
}

TEST(MatmulShape, BadShapeConstantsAreOneLineErrors) {
  std::string text = DefaultCatalogText();
  const std::string fill = "matmul_fill: 0 ";
  ASSERT_NE(text.find(fill), std::string::npos);
  std::string bad = text;
  bad.replace(bad.find(fill), fill.size(), "matmul_fill: 100");
  try {
    ParseCatalog(bad, "c.pbtxt");
    FAIL() << "accepted matmul_fill 100";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("matmul_fill must be in [0, 64]"), std::string::npos) << e.what();
  }
  const std::string fixed = "collective_fixed_s: 5e-06";
  ASSERT_NE(text.find(fixed), std::string::npos);
  bad = text;
  bad.replace(bad.find(fixed), fixed.size(), "collective_fixed_s: -1e-06");
  EXPECT_THROW(ParseCatalog(bad, "c.pbtxt"), ParseError);
  const std::string tile = "mxu_tile: 128";
  bad = text;
  bad.replace(bad.find(tile), tile.size(), "mxu_tile: -1");
  EXPECT_THROW(ParseCatalog(bad, "c.pbtxt"), ParseError);
}

// The committed shape calibration is what `perf-model validate --fit` gives under the shape model.
TEST(MatmulShape, CommittedShapeCalibrationIsTheFit) {
  const Catalog committed = WithShapeModel(DefaultCatalog(), true);
  const Catalog fitted = FitEfficiency(DefaultMeasurements(), committed, nullptr);
  EXPECT_EQ(EfficiencyText(fitted), EfficiencyText(committed));
}

// What the shape model is for: held-out rows. Asserted today: the leave-one-paper-out worst is
// strictly lower with the shape model than with one matmul constant per chip; the medians
// (leave-one-out and leave-one-paper-out) and the leave-one-out worst are not higher beyond 0.2
// point (they tie). Named HeldOutErrorIsLowerThanWithOneConstant until session 52, when it
// asserted this already. History: once every held-out number was lower (44 rows, session 21,
// Korthikanti et al. counted: 5.6 vs 7.5 %, 7.5 vs 9.0 %, 26.0 vs 28.2 %; session 22, decode's
// collective costs: 5.3 vs 5.7 %, 7.5 vs 8.3 %, 25.7 vs 27.0 %). The leave-one-out worst is the
// same row in both (session 21: I2, -22.6 %; session 22: X7, 16.83 % in both, 0.002 points apart),
// so it is asserted not higher beyond 0.1 point (session 20, 35 rows: 20.4 vs 31.2 %).
// Since the MaxText rows describe their 2023 runs (issue 32, 2026-12-03) leave-one-out no longer
// separates the two: 5.75 vs 5.62 % median, 16.67 (X5) vs 16.60 % (X7) worst (before: 5.8 vs 6.5 %,
// 16.5 vs 19.7 %); it is asserted within 0.2 point. Leave-one-paper-out still separates them
// (7.0 vs 9.6 %, 22.6 vs 24.6 %). Since the MaxText rows carry their parallel block (session 51) the
// one constant's leave-one-paper-out median is the lower (7.02 vs 6.87 %; worst 21.7 vs 25.3 %) and
// leave-one-out separates them again (5.20 vs 5.63 %): the medians are asserted within 0.2 point.
// With tp_overlap no longer fitted (kept at 0.375, session 51) the shape model's leave-one-out
// median is 5.60 vs 5.62 % (the folds' coordinate descent no longer moves tp_overlap).
TEST(MatmulShape, LeaveOnePaperOutWorstIsLowerThanWithOneConstantAndMediansTie) {
  const MeasurementSet rows = DefaultMeasurements();
  const Catalog shaped = WithShapeModel(DefaultCatalog(), true);
  const ValidationReport loo_shaped = CrossValidate(rows, shaped), loo_one = CrossValidate(rows, DefaultCatalog());
  EXPECT_LT(loo_shaped.median_abs_error, loo_one.median_abs_error + 2e-3);
  EXPECT_LE(loo_shaped.worst_abs_error, loo_one.worst_abs_error + 2e-3);
  const ValidationReport lopo_shaped = CrossValidatePapers(rows, shaped),
                         lopo_one = CrossValidatePapers(rows, DefaultCatalog());
  EXPECT_LT(lopo_shaped.median_abs_error, lopo_one.median_abs_error + 2e-3);
  EXPECT_LT(lopo_shaped.worst_abs_error, lopo_one.worst_abs_error);
}

}  // namespace
}  // namespace placerl::perf

namespace placerl::perf {
namespace {

// Chip.output_stationary (GPU tensor cores; on the committed a100 since session 21): [m, n] output tiles
// of 128 in waves over the 108 SMs of an a100, the contraction k streams (padded to 8) and pays
// k/(k + 1.25·128). By hand, and the forward / dW / dX / attention forms agree with the plain one.
TEST(MatmulShape, OutputStationaryTilesTheOutputAndStreamsK) {
  Catalog c = WithShapeModel(DefaultCatalog(), true);
  c.mutable_efficiency()->set_matmul_fill(1.25);
  Chip ch = FindChip(c, "a100");
  EXPECT_TRUE(ch.output_stationary());  // committed (session 21)
  ch.set_output_stationary(false);
  const DeviceRates ws = MakeDeviceRates(ch, BF16, EffectiveEfficiency(c, ch));
  ch.set_output_stationary(true);
  const DeviceRates r = MakeDeviceRates(ch, BF16, EffectiveEfficiency(c, ch));
  ASSERT_TRUE(r.output_stationary);
  // m 2048 (16 tiles), n 3200 (25 tiles): 400 tiles in ⌈400/108⌉ = 4 waves; k 1000 (8-granular).
  const double want = (400.0 / 432) * (1000.0 / (1000 + 160));
  EXPECT_NEAR(MatmulShapeFactor(r, 2048, 1000, 3200), want, 1e-12);
  // n 100 pads to one tile of 128; k 1004 pads to 1008.
  EXPECT_NEAR(MatmulShapeFactor(r, 2048, 1004, 100), (100.0 / 128) * (1004.0 / 1008) * (16.0 / 108) * (1004.0 / 1164),
              1e-12);
  // Weight-stationary differs (k, n are the tiles there; m streams).
  EXPECT_GT(std::fabs(MatmulShapeFactor(ws, 2048, 1000, 3200) - want), 1e-3);
  // A long contraction amortises the fill: the wide model's GEMM is the more efficient one.
  EXPECT_GT(MatmulShapeFactor(r, 2048, 25600, 3200), MatmulShapeFactor(r, 2048, 3072, 3200));
  double fwd, dw, dx, ac, ca;
  MatmulShapeFactorsFwdDw(r, 2048, 1000, 3200, 1, &fwd, &dw, &dx);
  EXPECT_DOUBLE_EQ(fwd, MatmulShapeFactor(r, 2048, 1000, 3200));
  EXPECT_DOUBLE_EQ(dw, MatmulShapeFactor(r, 1000, 2048, 3200));
  EXPECT_DOUBLE_EQ(dx, MatmulShapeFactor(r, 2048, 3200, 1000));
  MatmulShapeFactorsSwapped(r, 2048, 128, 2048, 12, &ac, &ca);
  EXPECT_DOUBLE_EQ(ac, MatmulShapeFactor(r, 2048, 128, 2048, 12));
  EXPECT_DOUBLE_EQ(ca, MatmulShapeFactor(r, 2048, 2048, 128, 12));
  // Weight-stationary: dX is the forward's factor.
  MatmulShapeFactorsFwdDw(ws, 2048, 1000, 3200, 1, &fwd, &dw, &dx);
  EXPECT_EQ(dx, fwd);
}

// The training evaluator follows the chip's dataflow: the key changes a layer's compute (the
// fill moves from the tokens m to the contractions k, dX gets its own tiles), and a narrow model
// with many tokens (short contractions of 128 per GPU) is slower output-stationary.
TEST(MatmulShape, OutputStationaryReachesTheTrainingEvaluator) {
  Catalog ws = WithShapeModel(DefaultCatalog(), true);
  ws.mutable_efficiency()->set_matmul_fill(1.25);  // the fill moves with the dataflow (the committed one is 0)
  Catalog os = ws;
  for (Chip& ch : *ws.mutable_chip())
    if (ch.name() == "a100") ch.set_output_stationary(false);
  for (Chip& ch : *os.mutable_chip())
    if (ch.name() == "a100") ch.set_output_stationary(true);
  const Mesh mesh = ParseMeshSpec("a100:8");
  const PlanC p = PlanFromProto(ParsePlanSpec("tensor=8,global_batch=1,param_dtype=fp16,compute_dtype=fp16"));
  const TransformerModel wide = ParseModelSpec("transformer(layers=2,d_model=25600,heads=160,seq=512,vocab=0)");
  const TransformerModel narrow = ParseModelSpec("transformer(layers=2,d_model=1024,heads=8,seq=65536,vocab=0,flash_attention=true)");
  const StepBreakdown wide_ws = TrainingEvaluator(wide, mesh, ws).Evaluate(p);
  const StepBreakdown wide_os = TrainingEvaluator(wide, mesh, os).Evaluate(p);
  const StepBreakdown narrow_ws = TrainingEvaluator(narrow, mesh, ws).Evaluate(p);
  const StepBreakdown narrow_os = TrainingEvaluator(narrow, mesh, os).Evaluate(p);
  ASSERT_TRUE(wide_ws.valid && wide_os.valid && narrow_ws.valid && narrow_os.valid);
  EXPECT_GT(std::fabs(wide_os.compute_s / wide_ws.compute_s - 1), 0.01);
  EXPECT_GT(narrow_os.compute_s, 1.05 * narrow_ws.compute_s);
}

// Efficiency.dcn_sync_exposed (on in the shape calibration since session 28, off in the library
// default; docs/perf_model.md sessions 26-28): the slices all-reduce the gradients over DCN after
// the backward pass (session 26's form: each chip's gradient shard over its own DCN share at the
// catalogue's per-chip DCN bandwidth, no fitted efficiency). On X10c's plan over 8 v5e-256
// slices that ring is exposed instead of the last bucket's alone (the switch set off explicitly);
// one slice is unchanged.
TEST(MultiSlice, DcnSyncExposedAddsTheDcnPhase) {
  const TransformerModel m = ParseModelSpec(
      "transformer(layers=64,d_model=8192,d_ff=28672,heads=64,head_dim=128,seq=2048,vocab=32000,gated_ffn=true,"
      "flash_attention=true)");
  const Catalog on = WithShapeModel(DefaultCatalog(), true);
  ASSERT_TRUE(on.efficiency().dcn_sync_exposed());  // the committed shape calibration
  Catalog off = on;
  off.mutable_efficiency()->set_dcn_sync_exposed(false);
  PlanC p;
  p.data = 8;
  p.fsdp = 256;
  p.remat = REMAT_FULL;
  p.global_batch = 512 * 8;
  const StepBreakdown a = TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:16x16,slices=8"), off).Evaluate(p);
  const StepBreakdown b = TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:16x16,slices=8"), on).Evaluate(p);
  ASSERT_TRUE(a.valid && b.valid);
  // Off: hidden under the backward pass but for the last layer's bucket (session 23, below).
  EXPECT_GT(a.exposed_dp_s, 0);
  EXPECT_LT(a.exposed_dp_s, 0.05 * b.exposed_dp_s);
  EXPECT_GT(b.exposed_dp_s, 0.1);
  EXPECT_NEAR(b.step_s - a.step_s, b.exposed_dp_s - a.exposed_dp_s, 1e-9);
  // The exposed time is the DCN ring all-reduce of one chip's gradient shard (fp32) over 8
  // slices, once, at the chip's DCN bandwidth (3.125e9 B/s: 2 × 100 Gb/s per 8-chip host):
  // 2·7 hop latencies + 2·7/8 · shard / B_dcn. Not scaled by the fitted dcn_bw.
  const Chip& v5e = FindChip(on, "tpu_v5e");
  const double shard = (64 * (8192.0 * 3 * 8192 + 8192.0 * 8192 + 3 * 8192.0 * 28672) + 2 * 32000.0 * 8192) / 256 * 4;
  const double dcn = 2 * 7 * v5e.dcn_latency_s() + 2.0 * 7 / 8 * shard / v5e.dcn_bw_per_chip();
  ASSERT_LT(on.efficiency().dcn_bw(), 1);  // (so that a dcn_bw-scaled ring would fail below)
  EXPECT_NEAR(b.exposed_dp_s, dcn, 1e-9 * dcn);
  p.data = 1;
  p.global_batch = 512;
  const StepBreakdown c = TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:16x16"), on).Evaluate(p);
  const StepBreakdown d = TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:16x16"), off).Evaluate(p);
  EXPECT_EQ(c.step_s, d.step_s);
}

// Session 26: the AXLearn rows A1 (fuji-7B on 4 v5e-256 slices: data 64 = 16 in a slice × 4
// over DCN, fsdp 16) and A4 (one v5e-32: data 2 × fsdp 16) do the same work per chip; measured
// 2.44 s and 1.93 s. With dcn_sync_exposed the DCN ring runs on the shard each chip holds (its
// fp32 fsdp shard of the gradients, 1/16 of them), not on 1/16 of it after an in-slice
// reduce-scatter over the 16 data members of a slice: 2·3/4 · 1.65 GB / 3.125e9 B/s ≈ 0.79 s,
// exposed after the backward pass (the in-slice all-reduce hides under it). A4 (one slice) is
// unchanged; with the committed shape calibration (switch on since session 28) A1 is within 15 %
// of its measurement, with the switch set off it is > 15 % fast (−19 % in session 27).
TEST(MultiSlice, DcnSyncExposedRingsEachChipsWholeShard) {
  const MeasurementSet all = DefaultMeasurements();
  const Measurement* a1 = nullptr;
  const Measurement* a4 = nullptr;
  for (const Measurement& m : all.row()) {
    if (m.id() == "A1") a1 = &m;
    if (m.id() == "A4") a4 = &m;
  }
  ASSERT_TRUE(a1 != nullptr && a4 != nullptr);
  // On in the shape calibration (session 28: adopted with A2-A4 counted), off in the library default.
  EXPECT_FALSE(DefaultCatalog().efficiency().dcn_sync_exposed());
  const Catalog on = WithShapeModel(DefaultCatalog(), true);
  ASSERT_TRUE(on.efficiency().dcn_sync_exposed());
  Catalog off = on;
  off.mutable_efficiency()->set_dcn_sync_exposed(false);
  auto eval = [](const Measurement& m, const Catalog& c) {
    return TrainingEvaluator(m.run().model(), m.run().mesh(), c).Evaluate(PlanFromProto(m.run().plan()));
  };
  const StepBreakdown a1_off = eval(*a1, off), a1_on = eval(*a1, on), a4_off = eval(*a4, off), a4_on = eval(*a4, on);
  ASSERT_TRUE(a1_off.valid && a1_on.valid && a4_off.valid && a4_on.valid);
  EXPECT_EQ(a4_on.step_s, a4_off.step_s);
  const Chip& v5e = FindChip(on, "tpu_v5e");
  // fuji-7B: 32 layers of 4·4096² (attention) + 3·4096·11008 (gated FFN), + the tied 32768×4096
  // embedding = 6,610,223,104 parameters; fp32 gradients / fsdp 16 per chip.
  const double shard = (32 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) + 32768.0 * 4096) / 16 * 4;
  EXPECT_NEAR(a1_on.hbm_grads, shard, 1e-9 * shard);
  const double ring = 2 * 3 * v5e.dcn_latency_s() + 2.0 * 3 / 4 * shard / v5e.dcn_bw_per_chip();
  EXPECT_GT(ring, 0.7);
  EXPECT_NEAR(a1_on.exposed_dp_s, ring, 1e-9 * ring);
  EXPECT_NEAR(a1_on.step_s - a1_off.step_s, ring - a1_off.exposed_dp_s, 1e-9);
  EXPECT_LT(a1_off.step_s / a1->measured() - 1, -0.15);
  EXPECT_LT(std::fabs(a1_on.step_s / a1->measured() - 1), 0.15);
}

// Session 23: several slices are never free. The gradients are reduced bucket by bucket (a layer
// at a time) as the backward pass produces them; the last bucket (the first layer's gradients and
// the input embedding's) is ready only when the backward pass ends, so its DCN ring over the
// slices is exposed. With the per-slice plan fixed (data over the slices, fsdp over one slice,
// sequences per slice fixed), the step time grows strictly with the number of slices (it was
// flat: the whole all-reduce hid under the backward pass), in both calibrations. With
// dcn_sync_exposed (the shape calibration's since session 28) the whole DCN ring of each chip's
// shard is exposed instead: more than the last bucket at every n > 1, and growing with
// 2(n-1)/n; the library default (off) and the shape calibration with the switch set off expose
// the last bucket only.
TEST(MultiSlice, StepTimeGrowsStrictlyWithTheNumberOfSlices) {
  const TransformerModel m = ParseModelSpec("transformer(layers=8,d_model=1024,d_ff=4096,heads=16,seq=1024,vocab=32000)");
  const Catalog library = WithShapeModel(DefaultCatalog(), false), shaped = WithShapeModel(DefaultCatalog(), true);
  ASSERT_FALSE(library.efficiency().dcn_sync_exposed());
  ASSERT_TRUE(shaped.efficiency().dcn_sync_exposed());
  Catalog shaped_off = shaped;
  shaped_off.mutable_efficiency()->set_dcn_sync_exposed(false);
  auto eval = [&](const Catalog& c, int n) {
    PlanC p;
    p.data = n;
    p.fsdp = 16;
    p.global_batch = 512.0 * n;  // 32 sequences per chip: compute-bound, the all-reduce hides but its tail
    return TrainingEvaluator(m, ParseMeshSpec("tpu_v5e:4x4,slices=" + std::to_string(n)), c).Evaluate(p);
  };
  for (const Catalog* c : std::vector<const Catalog*>{&library, &shaped_off, &shaped}) {
    const bool sync = c->efficiency().dcn_sync_exposed();
    double last = 0, last_dp = 0;
    for (const int n : {1, 2, 4, 8, 16, 32}) {
      const StepBreakdown b = eval(*c, n);
      ASSERT_TRUE(b.valid) << b.invalid_reason;
      EXPECT_GT(b.step_s, last) << n << " slices, shape model " << c->efficiency().shape_model();
      if (n == 1) {
        EXPECT_EQ(b.exposed_dp_s, 0);
      } else if (sync) {
        EXPECT_GT(b.exposed_dp_s, last_dp) << n;  // 2(n-1)/n · shard / B_dcn grows with n
        EXPECT_GT(b.exposed_dp_s, eval(shaped_off, n).exposed_dp_s) << n;
      }
      if (!sync) {
        EXPECT_LT(b.exposed_dp_s, 0.05 * b.step_s);  // the last bucket only
      }
      last = b.step_s;
      last_dp = b.exposed_dp_s;
    }
  }
}

// The new terms by hand on a tiny case: 4 slices of tpu_v5e:2x2, data 4 over the slices, fsdp 4
// over each slice (the DCN ring runs on one chip's fp32 gradient shard, 1/4 of the stage's).
//   exposed = DCN ring AR of the last bucket = 2·3·α + 2·3/4 · bucket/4·4 B / (dcn_bw · B_dcn),
//   bucket = one layer's params + the input embedding (V·d);
// with dcn_sync_exposed (session 26), one ring after the backward pass on the chip's whole shard at
// the raw DCN bandwidth: 2·3·α + 2·3/4 · stage/4·4 B / B_dcn, stage = layers · layer params + 2·V·d
// (untied, one stage).
TEST(MultiSlice, LastBucketAndPerBucketLatencyByHand) {
  const TransformerModel m = ParseModelSpec("transformer(layers=4,d_model=512,d_ff=2048,heads=8,seq=512,vocab=1000)");
  Catalog c = DefaultCatalog();
  PlanC p;
  p.data = 4;
  p.fsdp = 4;
  p.global_batch = 1024;  // 64 sequences per chip: the other buckets hide under the backward pass
  const Mesh mesh = ParseMeshSpec("tpu_v5e:2x2,slices=4");
  const Chip& v5e = FindChip(c, "tpu_v5e");
  const double alpha = v5e.dcn_latency_s(), bw = c.efficiency().dcn_bw() * v5e.dcn_bw_per_chip();
  ASSERT_GT(alpha, 0);
  const double layer = 512.0 * 3 * 512 + 512.0 * 512 + 2 * 512.0 * 2048, embed = 1000.0 * 512;
  const double bucket = (layer + embed) / 4 * 4, stage = (4 * layer + 2 * embed) / 4 * 4;
  const StepBreakdown a = TrainingEvaluator(m, mesh, c).Evaluate(p);
  ASSERT_TRUE(a.valid) << a.invalid_reason;
  const double tail = 2 * 3 * alpha + 2.0 * 3 / 4 * bucket / bw;
  EXPECT_NEAR(a.exposed_dp_s, tail, 1e-12 * tail);
  c.mutable_efficiency()->set_dcn_sync_exposed(true);
  const StepBreakdown b = TrainingEvaluator(m, mesh, c).Evaluate(p);
  const double dcn = 2 * 3 * alpha + 2.0 * 3 / 4 * stage / v5e.dcn_bw_per_chip();
  EXPECT_NEAR(b.exposed_dp_s, dcn, 1e-12 * dcn);
  // Reduced once after the backward pass (grad_reduce_after_backward): one ring, one latency chain.
  c.mutable_efficiency()->set_dcn_sync_exposed(false);
  p.grad_reduce_after_backward = true;
  const StepBreakdown d = TrainingEvaluator(m, mesh, c).Evaluate(p);
  const double once = 2 * 3 * alpha + 2.0 * 3 / 4 * stage / bw;
  EXPECT_NEAR(d.exposed_dp_s, once, 1e-12 * once);
}

// Efficiency.dcn_hop_sync_s (opt-in; 0 in both committed calibrations, docs/perf_model.md
// session 23 says why): every step of every bucket's DCN ring waits s on the critical path, so
// the step grows by exactly (layers per stage + 1) · 2(n-1) · s; after the backward pass (one
// reduction) by 2(n-1) · s; one slice is unchanged.
TEST(MultiSlice, DcnHopSyncByHand) {
  const TransformerModel m = ParseModelSpec("transformer(layers=4,d_model=512,d_ff=2048,heads=8,seq=512,vocab=1000)");
  EXPECT_EQ(DefaultCatalog().efficiency().dcn_hop_sync_s(), 0);
  EXPECT_EQ(WithShapeModel(DefaultCatalog(), true).efficiency().dcn_hop_sync_s(), 0);
  const double s = 3e-4;
  for (const bool after : {false, true}) {
    for (const int n : {1, 4}) {
      Catalog c = WithShapeModel(DefaultCatalog(), true);
      PlanC p;
      p.data = n;
      p.fsdp = 4;
      p.global_batch = 256.0 * n;
      p.grad_reduce_after_backward = after;
      const Mesh mesh = ParseMeshSpec("tpu_v5e:2x2,slices=" + std::to_string(n));
      const StepBreakdown a = TrainingEvaluator(m, mesh, c).Evaluate(p);
      c.mutable_efficiency()->set_dcn_hop_sync_s(s);
      const StepBreakdown b = TrainingEvaluator(m, mesh, c).Evaluate(p);
      ASSERT_TRUE(a.valid && b.valid) << a.invalid_reason;
      const double expect = n == 1 ? 0 : (after ? 1 : 4 + 1) * 2 * (n - 1) * s;
      EXPECT_NEAR(b.exposed_dp_s - a.exposed_dp_s, expect, 1e-12) << n << " " << after;
      EXPECT_NEAR(b.step_s - a.step_s, expect, 1e-12) << n << " " << after;
    }
  }
}

// Plan.serial_collectives (session 27, third part): XLA:GPU without its latency-hiding scheduler
// runs every collective on the critical path. By hand on 4 nodes of h100:8, data 4 over the nodes
// (one GPU per node in each data group), fsdp 8 inside a node (NVSwitch: one hop, 18 × 25 GB/s per
// GPU), library default calibration (η = collective_bw, η_dcn = dcn_bw):
//   FSDP, per layer: 2 all-gathers of the bf16 layer + 1 reduce-scatter of its fp32 gradients,
//     each 7·α_nvl + 7/8 · S / (η · 18 · 25 GB/s), all exposed (L = 4 layers);
//   data: the ring all-reduce of the chip's fp32 gradient shard over the 4 nodes at the per-GPU
//     DCN bandwidth, 2·(3·α_dcn + 3/4 · S_chip / (η_dcn · B_dcn)), + the other L buckets' hop
//     latencies L·2·3·α_dcn, all exposed;
// step = compute + those + the optimizer. On one node the data term vanishes and the FSDP term is
// the same; without the key the FSDP collectives of this compute-bound case hide.
TEST(MultiNode, SerialCollectivesByHand) {
  const TransformerModel m = ParseModelSpec("transformer(layers=4,d_model=512,d_ff=2048,heads=8,seq=512,vocab=1000)");
  const Catalog c = DefaultCatalog();
  const Chip& h100 = FindChip(c, "h100");
  const Efficiency e = EffectiveEfficiency(c, h100);
  ASSERT_EQ(h100.ici().topology(), SWITCHED);
  const double nvl = h100.ici().link_bw_one_way() * h100.ici().links_per_chip(), a_nvl = h100.ici().hop_latency_s();
  const double b_dcn = h100.dcn_bw_per_chip(), a_dcn = h100.dcn_latency_s();
  ASSERT_GT(e.dcn_bw(), 0);
  const double layer = 512.0 * 3 * 512 + 512.0 * 512 + 2 * 512.0 * 2048, embed = 1000.0 * 512;
  const double ag = 7 * a_nvl + 7.0 / 8 * layer * 2 / (e.collective_bw() * nvl);
  const double rs = 7 * a_nvl + 7.0 / 8 * layer * 4 / (e.collective_bw() * nvl);
  const double shard = (4 * layer + 2 * embed) / 8 * 4;
  const double dp = 2 * (3 * a_dcn + 3.0 / 4 * shard / (e.dcn_bw() * b_dcn)) + 4 * 2 * 3 * a_dcn;
  ASSERT_GT(std::min(ag, rs), e.latency_floor_s());
  for (const int nodes : {4, 1}) {
    PlanC p;
    p.data = nodes;
    p.fsdp = 8;
    p.global_batch = 512.0 * nodes;  // 64 sequences per GPU: compute-bound, the overlapped collectives hide
    const Mesh mesh = ParseMeshSpec(nodes > 1 ? "h100:8,slices=4" : "h100:8");
    const TrainingEvaluator ev(m, mesh, c);
    const StepBreakdown overlapped = ev.Evaluate(p);
    p.serial_collectives = true;
    const StepBreakdown b = ev.Evaluate(p);
    ASSERT_TRUE(overlapped.valid && b.valid) << b.invalid_reason;
    EXPECT_EQ(overlapped.exposed_fsdp_s, 0) << nodes;
    EXPECT_NEAR(b.exposed_fsdp_s, 4 * (2 * ag + rs), 1e-12) << nodes;
    EXPECT_NEAR(b.exposed_dp_s, nodes > 1 ? dp : 0.0, 1e-12) << nodes;
    EXPECT_EQ(b.exposed_tp_s, 0);
    EXPECT_EQ(b.compute_s, overlapped.compute_s);
    EXPECT_NEAR(b.step_s, b.compute_s + b.exposed_fsdp_s + b.exposed_dp_s + b.optimizer_s, 1e-12) << nodes;
    EXPECT_GT(b.step_s, overlapped.step_s) << nodes;
    EXPECT_NE(ResolvedPlanString(p, 1).find("serial_collectives=true"), std::string::npos);
  }
  EXPECT_EQ(ParsePlanSpec("data=4,fsdp=8,serial_collectives=true").serial_collectives(), true);
}

}  // namespace
}  // namespace placerl::perf
