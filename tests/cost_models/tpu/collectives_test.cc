// Collective formulas against hand-computed values (arithmetic stated in each test) and
// the op roofline.
#include <gtest/gtest.h>

#include "cost_models/tpu/collectives.h"
#include "cost_models/tpu/op_cost.h"

namespace placerl::perf {
namespace {

TEST(RingTime, BookAllGatherExampleV5eNoWrap) {
  // Scaling book: AllGather over Y=4 of bf16[2048,8192] on v5e, no wraparound:
  // S = 2048*8192*2 = 33,554,432 B; (n-1)/n * S / B = 0.75 * 33554432 / 4.5e10 = 559.24 us.
  Ring r{4, 4.5e10, 0.0, false};
  EXPECT_NEAR(RingTime(Collective::kAllGather, r, 2048.0 * 8192 * 2), 559.24e-6, 0.01e-6);
}

TEST(RingTime, UnidirectionalWithLatency) {
  // n=8, S=8e6, B=1e9, a=1e-6: AG = 7*1e-6 + 7/8*8e6/1e9 = 7e-6 + 7e-3 = 7.007e-3.
  Ring r{8, 1e9, 1e-6, false};
  EXPECT_NEAR(RingTime(Collective::kAllGather, r, 8e6), 7.007e-3, 1e-12);
  EXPECT_NEAR(RingTime(Collective::kReduceScatter, r, 8e6), 7.007e-3, 1e-12);
  // AR = 2 * AG = 14.014e-3.
  EXPECT_NEAR(RingTime(Collective::kAllReduce, r, 8e6), 14.014e-3, 1e-12);
  // A2A = 7e-6 + 7e-3/2 = 3.507e-3.
  EXPECT_NEAR(RingTime(Collective::kAllToAll, r, 8e6), 3.507e-3, 1e-12);
  // permute = a + (S/n)/B = 1e-6 + 1e6/1e9 = 1.001e-3.
  EXPECT_NEAR(RingTime(Collective::kPermute, r, 8e6), 1.001e-3, 1e-12);
  // broadcast = 7e-6 + 8e6/1e9 = 8.007e-3.
  EXPECT_NEAR(RingTime(Collective::kBroadcast, r, 8e6), 8.007e-3, 1e-12);
}

TEST(RingTime, BidirectionalHalvesBandwidthTerm) {
  // n=8 bidi: hops ceil(8/2)=4; AG = 4e-6 + 7/8*8e6/(2e9) = 4e-6 + 3.5e-3.
  Ring r{8, 1e9, 1e-6, true};
  EXPECT_NEAR(RingTime(Collective::kAllGather, r, 8e6), 3.504e-3, 1e-12);
  // A2A bidi = AG bandwidth / 4: 4e-6 + 3.5e-3/4 = 0.879e-3.
  EXPECT_NEAR(RingTime(Collective::kAllToAll, r, 8e6), 0.879e-3, 1e-12);
  EXPECT_EQ(RingTime(Collective::kAllReduce, Ring{1, 1e9, 1e-6, true}, 8e6), 0.0);
}

TEST(IciGroupTime, ThreeWrappedAxesTripleBandwidth) {
  // 4x4x4 torus, all wrapped, B=1e9 per link: sum of bandwidths = 3 * 2e9 = 6e9;
  // N=64: AG = (2+2+2)*1e-6 + 63/64*6.4e7/6e9 = 6e-6 + 10.5e-3.
  AxisGroup g;
  g.ndims = 3;
  for (int i = 0; i < 3; ++i) {
    g.extent[i] = 4;
    g.wrap[i] = true;
    g.dim_bw[i] = 1e9;
  }
  g.hop_latency = 1e-6;
  EXPECT_NEAR(IciGroupTime(Collective::kAllGather, g, 6.4e7), 10.506e-3, 1e-12);
  EXPECT_NEAR(IciGroupTime(Collective::kAllReduce, g, 6.4e7), 21.012e-3, 1e-12);
}

TEST(PhasedTorusAllReduce, YingOneOrder) {
  // 2-D 4x4 torus, wrapped, B=1e9, a=0, S=1.6e7:
  // RS_X = 3/4*S/2e9 = 6e-3; AR_Y on S/4 = 2*3/4*4e6/2e9 = 3e-3; AG_X = 6e-3 → 15e-3,
  // vs multi-axis 2 * 15/16*S/4e9 = 7.5e-3 (both dims at once).
  AxisGroup g;
  g.ndims = 2;
  g.extent[0] = g.extent[1] = 4;
  g.wrap[0] = g.wrap[1] = true;
  g.dim_bw[0] = g.dim_bw[1] = 1e9;
  EXPECT_NEAR(PhasedTorusAllReduce(g, 1.6e7), 15e-3, 1e-12);
  EXPECT_NEAR(IciGroupTime(Collective::kAllReduce, g, 1.6e7), 7.5e-3, 1e-12);
}

TEST(CollectiveTime, TwoLevelAllReduceAddsDcnOnShard) {
  // ICI ring of 4 (no wrap, B=1e9, a=0) + 2 slices over DCN (1e8 B/s, latency 1e-5), S=4e6,
  // efficiency 1: ICI AR = 2*3/4*4e6/1e9 = 6e-3; DCN AR on S/4=1e6 over 2: 2*(1e-5 + 1/2*1e6/1e8)
  // = 2*(1e-5 + 5e-3) = 10.02e-3 → 16.02e-3.
  AxisGroup g;
  g.ndims = 1;
  g.extent[0] = 4;
  g.dim_bw[0] = 1e9;
  g.dcn_n = 2;
  g.dcn_bw = 1e8;
  g.dcn_latency = 1e-5;
  EXPECT_NEAR(CollectiveTime(Collective::kAllReduce, g, 4e6, 1.0, 0.0), 16.02e-3, 1e-12);
  // Efficiency 0.5 doubles every bandwidth term: 12e-3 + 2*(1e-5 + 1e-2) = 32.02e-3.
  EXPECT_NEAR(CollectiveTime(Collective::kAllReduce, g, 4e6, 0.5, 0.0), 32.02e-3, 1e-12);
  // Latency floor applies to tiny messages.
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 1.0, 1.0, 3e-3), 3e-3, 1e-12);
}

TEST(CollectiveTime, DcnEfficiencyAndFlatRings) {
  // Same group as above (ICI ring of 4 at 1e9, 2 slices at 1e8 per chip, DCN latency 1e-5).
  AxisGroup g;
  g.ndims = 1;
  g.extent[0] = 4;
  g.dim_bw[0] = 1e9;
  g.hop_latency = 1e-6;
  g.dcn_n = 2;
  g.dcn_bw = 1e8;
  g.dcn_latency = 1e-5;
  // Hierarchical AG, S=4e6: ICI 3·1e-6 + 3/4·4e6/1e9 = 3.003e-3; DCN on S/4 over 2 slices:
  // 1e-5 + 1/2·1e6/1e8 = 5.01e-3 → 8.013e-3. DCN efficiency 0.5 doubles only the DCN
  // bandwidth term: 3.003e-3 + 1e-5 + 10e-3 = 13.013e-3.
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 4e6, 1.0, 0.0), 8.013e-3, 1e-12);
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 4e6, 1.0, 0.0, 0.5), 13.013e-3, 1e-12);
  // Flat ring over all 8 members: 6 ICI hops + 2 DCN hops of latency, and the whole S over
  // one chip's DCN share: 6e-6 + 2e-5 + 7/8·4e6/1e8 = 35.026e-3; AR twice that.
  g.flat_dcn = true;
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 4e6, 1.0, 0.0), 35.026e-3, 1e-12);
  EXPECT_NEAR(CollectiveTime(Collective::kReduceScatter, g, 4e6, 1.0, 0.0), 35.026e-3, 1e-12);
  EXPECT_NEAR(CollectiveTime(Collective::kAllReduce, g, 4e6, 1.0, 0.0), 70.052e-3, 1e-12);
  // DCN efficiency 0.5: 26e-6 + 70e-3.
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 4e6, 1.0, 0.0, 0.5), 70.026e-3, 1e-12);
  // A flat ring only matters across slices: inside one slice nothing changes.
  g.dcn_n = 1;
  EXPECT_NEAR(CollectiveTime(Collective::kAllGather, g, 4e6, 1.0, 0.0), 3.003e-3, 1e-12);
}

TEST(OpTime, MatmulSizeEfficiency) {
  DeviceRates r;
  r.peak_flops = 100e12;
  r.hbm_bw = 1e12;
  r.eff_matmul = 0.5;
  r.launch = 1e-6;
  // No size effect configured: same as OpTime.
  EXPECT_DOUBLE_EQ(MatmulOpTime(r, 64, 1e12, 1e6), OpTime(r, OpKind::kMatmul, 1e12, 1e6));
  r.matmul_half = 128;
  // Smallest dimension = half size: half the rate → twice the compute time.
  EXPECT_NEAR(MatmulOpTime(r, 128, 1e12, 1e6), 40e-3 + 1e-6, 1e-12);
  // 3× the half size: 3/4 of the rate.
  EXPECT_NEAR(MatmulOpTime(r, 384, 1e12, 1e6), 20e-3 * 4 / 3 + 1e-6, 1e-12);
  // Memory-bound stays memory-bound.
  EXPECT_NEAR(MatmulOpTime(r, 128, 1e6, 1e10), 10e-3 + 1e-6, 1e-12);
}

TEST(OpTime, RooflineComputeAndMemoryBound) {
  DeviceRates r;
  r.peak_flops = 100e12;
  r.hbm_bw = 1e12;
  r.eff_matmul = 0.5;
  r.eff_memory = 0.8;
  r.launch = 1e-6;
  // Compute-bound matmul: 1e12 FLOP / (100e12*0.5) = 20 ms (+1 us launch).
  EXPECT_NEAR(OpTime(r, OpKind::kMatmul, 1e12, 1e6), 20e-3 + 1e-6, 1e-12);
  // Memory-bound elementwise: 8e9 B / (1e12*0.8) = 10 ms (+1 us).
  EXPECT_NEAR(OpTime(r, OpKind::kElementwise, 1e9, 8e9), 10e-3 + 1e-6, 1e-12);
  // Vector kinds run at 1/16 of peak: 1e12 / 6.25e12 = 0.16 s.
  EXPECT_NEAR(OpTime(r, OpKind::kSoftmax, 1e12, 0), 0.16 + 1e-6, 1e-12);
  OpKind k;
  EXPECT_TRUE(ParseOpKind("einsum", &k));
  EXPECT_EQ(k, OpKind::kMatmul);
  EXPECT_FALSE(ParseOpKind("nonsense", &k));
}

}  // namespace
}  // namespace placerl::perf
