// Host calibration: the catalogue entry parses and carries exactly the measured rates, the
// model's all-reduce on mesh host:2 (TrainingEvaluator's own axis mapping) reproduces the
// fitted a + S/bw, an existing host entry is replaced, the fit recovers known parameters,
// and a short real measurement (2 processes, Gloo) gives finite positive numbers.
// No timing assertions.
#include "models/host_calibration.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cerrno>
#include <cmath>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/collectives.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"

namespace placerl::host {
namespace {

// Deliberately "ugly" values: the catalogue text must carry them exactly.
Measurements HandMade() {
  Measurements m;
  m.cpu = "test CPU";
  m.threads = 1;
  m.ranks = 2;
  m.matmul_fp32_flops = 80e9 / 3;
  m.matmul_bf16_flops = 20.5e9;
  m.matmul_fp32_by_size = {{256, 20e9}, {2048, 80e9 / 3}};
  m.matmul_bf16_by_size = {{512, 20.5e9}};
  m.memory_bw = 12.345678912e9;
  m.small_op_s = 1.37e-6;
  m.allreduce_latency_s = 123.456e-6;
  m.allreduce_bw = 1.0 / 0.7e-9;
  m.allreduce_by_size = {{4096, 130e-6}, {64 << 20, 0.05}};
  m.ram_bytes = 24684096.0 * 1024;
  return m;
}

int CountHosts(const perf::Catalog& c) {
  int n = 0;
  for (const perf::Chip& chip : c.chip()) n += chip.name() == "host";
  return n;
}

TEST(HostCalibration, CatalogueEntryHasTheMeasuredRates) {
  const Measurements m = HandMade();
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "host.pbtxt");
  EXPECT_EQ(CountHosts(c), 1);
  EXPECT_EQ(c.chip_size(), perf::DefaultCatalog().chip_size() + 1);
  const perf::Chip& host = perf::FindChip(c, "host");
  EXPECT_EQ(perf::PeakFlops(host, perf::FP32), m.matmul_fp32_flops);
  EXPECT_EQ(perf::PeakFlops(host, perf::BF16), m.matmul_bf16_flops);
  EXPECT_EQ(host.hbm_bw(), m.memory_bw);
  EXPECT_EQ(host.hbm_bytes(), m.ram_bytes / 2);  // RAM / 2 processes
  EXPECT_EQ(host.devices_per_chip(), 1);
  EXPECT_EQ(host.ici().topology(), perf::RING);
  EXPECT_EQ(host.ici().links_per_chip(), 1);
  EXPECT_EQ(host.ici().wrap_min_axis(), 0);
  EXPECT_EQ(host.ici().link_bw_one_way(), m.allreduce_bw);
  EXPECT_EQ(host.ici().hop_latency_s(), m.allreduce_latency_s / 2);
  const perf::Efficiency e = perf::EffectiveEfficiency(c, host);
  EXPECT_EQ(e.matmul(), 1.0);
  EXPECT_EQ(e.memory(), 1.0);
  EXPECT_EQ(e.collective_bw(), 1.0);
  EXPECT_EQ(e.launch_overhead_s(), m.small_op_s);
  EXPECT_EQ(e.latency_floor_s(), m.allreduce_latency_s / 2);
  EXPECT_EQ(e.hbm_usable(), c.efficiency().hbm_usable());  // not overridden
  // The other chips keep their efficiencies (the default catalogue's: a chip's own override, else
  // the global one — tpu_v4 has its own matmul since the session-20 fit, the global moved in 21).
  const perf::Catalog d = perf::DefaultCatalog();
  for (const char* chip : {"tpu_v4", "tpu_v5e", "a100"})
    EXPECT_EQ(perf::EffectiveEfficiency(c, perf::FindChip(c, chip)).DebugString(),
              perf::EffectiveEfficiency(d, perf::FindChip(d, chip)).DebugString())
        << chip;
  // Each measured number is also in a comment.
  const std::string text = HostChipText(m);
  EXPECT_NE(text.find("test CPU"), std::string::npos);
  EXPECT_NE(text.find("123.5 us"), std::string::npos) << text;
  EXPECT_NE(text.find("1.37 us"), std::string::npos) << text;
  EXPECT_NE(text.find("256^3 20.0"), std::string::npos) << text;
}

TEST(HostCalibration, ModelAllReduceOnTwoHostsIsTheFit) {
  const Measurements m = HandMade();
  const double a = m.allreduce_latency_s, bw = m.allreduce_bw;
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "host.pbtxt");
  const perf::Chip& host = perf::FindChip(c, "host");
  const perf::Efficiency e = perf::EffectiveEfficiency(c, host);
  const perf::TransformerModel model =
      perf::ParseModelSpec("transformer(layers=2,d_model=64,d_ff=256,heads=4,seq=32,vocab=500,tied_embeddings=true)");
  const perf::TrainingEvaluator ev(model, perf::ParseMeshSpec("host:2"), c);
  // The group the evaluator lays data=2 on.
  const int sizes[4] = {1, 1, 2, 1};
  perf::AxisGroup g[4];
  ev.MapAxes(sizes, g);
  EXPECT_EQ(g[2].size(), 2);
  for (double bytes : {0.0, 4096.0, 1e6, 64e6, 1e9}) {
    const double t = perf::CollectiveTime(perf::Collective::kAllReduce, g[2], bytes, e.collective_bw(),
                                          e.latency_floor_s());
    EXPECT_NEAR(t, a + bytes / bw, 1e-12 * (a + bytes / bw)) << bytes;
  }
  // And end to end: the exposed gradient all-reduce of a data=2 step (fp32 gradients).
  perf::PlanC p;
  p.data = 2;
  p.global_batch = 4;
  p.grad_dtype = perf::FP32;
  p.grad_reduce_after_backward = true;
  const perf::StepBreakdown r = ev.Evaluate(p);
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  const double grad_bytes = ev.total_params() * 4;
  EXPECT_NEAR(r.exposed_dp_s, a + grad_bytes / bw, 1e-12 * r.exposed_dp_s);
  // The smallest collective (a one-hop permute of nothing) costs the floor, one hop.
  EXPECT_NEAR(perf::CollectiveTime(perf::Collective::kPermute, g[2], 0, 1, e.latency_floor_s()), a / 2, 1e-15);
}

TEST(HostCalibration, AnExistingHostEntryIsReplaced) {
  Measurements old = HandMade();
  old.matmul_fp32_flops = 1e9;
  old.matmul_bf16_flops = 2e9;
  const std::string with_old = HostCatalogText(old) + "# trailing comment kept\n";
  Measurements fresh = HandMade();
  fresh.memory_bw = 7e9;
  const std::string text = WithHostChip(with_old, fresh);
  const perf::Catalog c = perf::ParseCatalog(text, "replaced.pbtxt");
  EXPECT_EQ(CountHosts(c), 1);
  EXPECT_EQ(c.chip_size(), perf::DefaultCatalog().chip_size() + 1);
  const perf::Chip& host = perf::FindChip(c, "host");
  EXPECT_EQ(perf::PeakFlops(host, perf::FP32), fresh.matmul_fp32_flops);
  EXPECT_EQ(host.hbm_bw(), 7e9);
  EXPECT_NE(text.find("# trailing comment kept"), std::string::npos);
  // The default catalogue's own comments survive.
  EXPECT_NE(text.find("Efficiency parameters: fitted once"), std::string::npos);
  // A host written in another layout (one line, `chip:`, braces inside a string) also goes.
  const std::string odd = perf::DefaultCatalogText() +
                          "chip: { name: \"host\" source: \"a } in { a string\" peak { dtype: BF16 flops_per_s: 1 } "
                          "hbm_bytes: 1 hbm_bw: 1 devices_per_chip: 1 ici { links_per_chip: 1 link_bw_one_way: 1 } }\n";
  ASSERT_EQ(CountHosts(perf::ParseCatalog(odd, "odd.pbtxt")), 1);
  const perf::Catalog c2 = perf::ParseCatalog(WithHostChip(odd, fresh), "odd2.pbtxt");
  EXPECT_EQ(CountHosts(c2), 1);
  EXPECT_EQ(perf::FindChip(c2, "host").hbm_bw(), 7e9);
  // Garbage in → error, not a silently broken catalogue.
  EXPECT_THROW(WithHostChip("chip { name: \"host\" bogus_field: 1 }\n", fresh), Error);
}

TEST(HostCalibration, MatmulCurveFitAndCatalogueField) {
  std::vector<std::pair<int, double>> pts;
  for (int n : {128, 256, 512, 1024, 2048}) pts.emplace_back(n, 100e9 * n / (n + 200.0));
  double peak = 0, half = 0;
  FitMatmulCurve(pts, &peak, &half);
  EXPECT_NEAR(peak, 100e9, 1e-6 * 100e9);
  EXPECT_NEAR(half, 200, 1e-6 * 200);
  FitMatmulCurve({{256, 50e9}, {1024, 50e9}}, &peak, &half);  // flat: no size effect
  EXPECT_DOUBLE_EQ(half, 0);
  EXPECT_DOUBLE_EQ(peak, 50e9);
  Measurements m = HandMade();
  m.matmul_fp32_peak = 110e9;
  m.matmul_half_size = 200;
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "host.pbtxt");
  const perf::Chip& host = perf::FindChip(c, "host");
  EXPECT_DOUBLE_EQ(perf::PeakFlops(host, perf::FP32), 110e9);
  EXPECT_DOUBLE_EQ(perf::EffectiveEfficiency(c, host).matmul_half_size(), 200);
}

TEST(HostCalibration, FitRecoversLatencyAndBandwidth) {
  std::vector<std::pair<double, double>> pts;
  for (double s = 4096; s <= 64e6; s *= 4) pts.emplace_back(s, 50e-6 + s / 2e9);
  double a = 0, bw = 0;
  FitLatencyBandwidth(pts, &a, &bw);
  EXPECT_NEAR(a, 50e-6, 1e-9);
  EXPECT_NEAR(bw, 2e9, 1e-3 * 2e9);
  // A negative intercept is clamped to 0 and the slope refitted through the origin.
  FitLatencyBandwidth({{1e6, 0.5e-3}, {2e6, 1.5e-3}}, &a, &bw);
  EXPECT_EQ(a, 0);
  EXPECT_GT(bw, 0);
  EXPECT_THROW(FitLatencyBandwidth({{1e3, 1e-3}, {1e6, 1e-3}}, &a, &bw), Error);
  EXPECT_THROW(FitLatencyBandwidth({}, &a, &bw), Error);
}

TEST(HostCalibration, ShortRealMeasurementIsPositiveAndFinite) {
  CalibrationOptions o;
  o.seconds_per_probe = 0.02;
  o.timeout_s = 90;
  std::vector<std::string> lines;
  const Measurements m = MeasureHost(o, [&](const std::string& l) { lines.push_back(l); });
  for (const std::string& l : lines) std::printf("  | %s\n", l.c_str());
  EXPECT_GT(lines.size(), 10u);
  for (double v : {m.matmul_fp32_flops, m.matmul_bf16_flops, m.memory_bw, m.small_op_s, m.allreduce_bw,
                   m.allreduce_latency_s, m.ram_bytes, m.matmul_cpu_per_wall}) {
    EXPECT_TRUE(std::isfinite(v) && v > 0) << v;
  }
  EXPECT_EQ(m.allreduce_statistic, "mean");  // the default: the catalogue gets the fit of the means
  EXPECT_EQ(m.allreduce_latency_s, m.allreduce_mean_latency_s);
  EXPECT_EQ(m.allreduce_bw, m.allreduce_mean_bw);
  EXPECT_TRUE(std::isfinite(m.allreduce_median_bw) && m.allreduce_median_bw > 0);
  EXPECT_GE(m.allreduce_median_latency_s, 0);
  ASSERT_EQ(m.allreduce_mean_by_size.size(), m.allreduce_by_size.size());
  EXPECT_EQ(m.matmul_fp32_by_size.size(), 4u);
  EXPECT_EQ(m.matmul_bf16_by_size.size(), 3u);
  ASSERT_EQ(m.allreduce_by_size.size(), 8u);  // 4 KiB .. 64 MiB in steps of 4
  EXPECT_EQ(m.allreduce_by_size.front().first, 4096);
  EXPECT_EQ(m.allreduce_by_size.back().first, 64 << 20);
  for (const auto& [bytes, t] : m.allreduce_by_size) EXPECT_TRUE(std::isfinite(t) && t > 0) << bytes;
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "measured.pbtxt");
  EXPECT_EQ(perf::FindChip(c, "host").hbm_bw(), m.memory_bw);
}

TEST(HostCalibration, AnAllReduceThatOutlivesTheTimeoutIsKilledAndReported) {
  CalibrationOptions o;
  o.seconds_per_probe = 0.01;
  o.timeout_s = 0.3;  // far below what the probe needs
  try {
    MeasureHost(o, [](const std::string&) {});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all-reduce probe"), std::string::npos) << e.what();
  }
  // Both children were reaped: this process has none left.
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(HostCalibration, WithoutAllReduceTheEntryStillLoads) {
  CalibrationOptions o;
  o.seconds_per_probe = 0.01;
  o.allreduce = false;
  const Measurements m = MeasureHost(o, [](const std::string&) {});
  EXPECT_TRUE(m.allreduce_by_size.empty());
  EXPECT_EQ(m.allreduce_bw, 0);
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "no_ar.pbtxt");
  EXPECT_GT(perf::FindChip(c, "host").ici().link_bw_one_way(), 0);
}

TEST(HostCalibration, BadOptionsAreConfigErrors) {
  auto bad = [](auto edit) {
    CalibrationOptions o;
    edit(o);
    EXPECT_THROW(MeasureHost(o, [](const std::string&) {}), ConfigError);
  };
  bad([](CalibrationOptions& o) { o.threads = 0; });
  bad([](CalibrationOptions& o) { o.seconds_per_probe = 0; });
  bad([](CalibrationOptions& o) { o.ranks = 0; });
  bad([](CalibrationOptions& o) { o.timeout_s = -1; });
}

}  // namespace
}  // namespace placerl::host
