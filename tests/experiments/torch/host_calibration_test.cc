// Host calibration: the catalogue entry parses and carries exactly the measured rates, the
// model's 2-host all-reduce reproduces the fitted a + S/bw, the fit recovers known
// parameters, and a short real measurement (2 processes, Gloo) gives finite positive rates.
#include "experiments/torch/host_calibration.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/collectives.h"

namespace placerl::host {
namespace {

Measurements HandMade() {
  Measurements m;
  m.cpu = "test CPU";
  m.threads = 1;
  m.ranks = 2;
  m.matmul_fp32_flops = 80e9;
  m.matmul_bf16_flops = 20e9;
  m.memory_bw = 12e9;
  m.small_op_s = 4e-6;
  m.allreduce_latency_s = 100e-6;
  m.allreduce_bw = 1.5e9;
  m.ram_bytes = 24e9;
  return m;
}

TEST(HostCalibration, CatalogueEntryHasTheMeasuredRates) {
  const Measurements m = HandMade();
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "host.pbtxt");
  const perf::Chip& host = perf::FindChip(c, "host");
  EXPECT_DOUBLE_EQ(perf::PeakFlops(host, perf::FP32), 80e9);
  EXPECT_DOUBLE_EQ(perf::PeakFlops(host, perf::BF16), 20e9);
  EXPECT_DOUBLE_EQ(host.hbm_bw(), 12e9);
  EXPECT_DOUBLE_EQ(host.hbm_bytes(), 12e9);  // RAM / 2 processes
  const perf::Efficiency e = perf::EffectiveEfficiency(c, host);
  EXPECT_DOUBLE_EQ(e.matmul(), 1.0);
  EXPECT_DOUBLE_EQ(e.memory(), 1.0);
  EXPECT_DOUBLE_EQ(e.launch_overhead_s(), 4e-6);
  // The other chips keep the global efficiencies.
  EXPECT_DOUBLE_EQ(perf::EffectiveEfficiency(c, perf::FindChip(c, "tpu_v4")).matmul(), c.efficiency().matmul());
}

TEST(HostCalibration, ModelAllReduceOnTwoHostsIsTheFit) {
  const Measurements m = HandMade();
  const perf::Catalog c = perf::ParseCatalog(HostCatalogText(m), "host.pbtxt");
  const perf::Chip& host = perf::FindChip(c, "host");
  const perf::Efficiency e = perf::EffectiveEfficiency(c, host);
  // The group TrainingEvaluator builds for a 2-chip host mesh: one axis of 2, no wraparound.
  perf::AxisGroup g;
  g.ndims = 1;
  g.extent[0] = 2;
  g.wrap[0] = host.ici().wrap_min_axis() > 0;
  g.dim_bw[0] = host.ici().link_bw_one_way();
  g.hop_latency = host.ici().hop_latency_s();
  for (double bytes : {4096.0, 1e6, 64e6}) {
    const double t = perf::CollectiveTime(perf::Collective::kAllReduce, g, bytes, e.collective_bw(), e.latency_floor_s());
    EXPECT_NEAR(t, 100e-6 + bytes / 1.5e9, 1e-12 + 1e-9 * t) << bytes;
  }
}

TEST(HostCalibration, FitRecoversLatencyAndBandwidth) {
  std::vector<std::pair<double, double>> pts;
  for (double s = 4096; s <= 64e6; s *= 4) pts.emplace_back(s, 50e-6 + s / 2e9);
  double a = 0, bw = 0;
  FitLatencyBandwidth(pts, &a, &bw);
  EXPECT_NEAR(a, 50e-6, 1e-9);
  EXPECT_NEAR(bw, 2e9, 1e-3 * 2e9);
  EXPECT_THROW(FitLatencyBandwidth({{1e3, 1e-3}, {1e6, 1e-3}}, &a, &bw), std::exception);
}

TEST(HostCalibration, ShortRealMeasurementIsPositiveAndFinite) {
  CalibrationOptions o;
  o.seconds_per_probe = 0.02;
  o.timeout_s = 60;
  int lines = 0;
  const Measurements m = MeasureHost(o, [&](const std::string&) { ++lines; });
  EXPECT_GT(lines, 5);
  for (double v : {m.matmul_fp32_flops, m.matmul_bf16_flops, m.memory_bw, m.small_op_s, m.allreduce_bw, m.ram_bytes}) {
    EXPECT_TRUE(std::isfinite(v) && v > 0) << v;
  }
  EXPECT_GE(m.allreduce_latency_s, 0);
  EXPECT_EQ(m.allreduce_by_size.size(), 8u);  // 4 KiB .. 64 MiB in steps of 4
  EXPECT_NO_THROW(perf::ParseCatalog(HostCatalogText(m), "measured.pbtxt"));
}

TEST(HostCalibration, BadOptionsAreConfigErrors) {
  CalibrationOptions o;
  o.threads = 0;
  EXPECT_THROW(MeasureHost(o, [](const std::string&) {}), std::exception);
}

}  // namespace
}  // namespace placerl::host
