// The smoothing range is capped by the grid (a range beyond max(cols, rows) − 1 reaches no
// further cell, so the values are bit-identical), and the work estimate used to refuse or
// announce slow evaluations (a 4096×4096 grid with smoothing 1000 ran for minutes).
#include <gtest/gtest.h>

#include <random>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {
namespace {

const char* kDir = "../shared/datasets/chip/circuit_training/sample_clustered/";

TEST(Smoothing, RangeCappedByTheGrid) {
  PlacementSettings s;
  s.cols = 7;
  s.rows = 5;
  for (double k : {0.0, 0.9, 3.0, 5.99, 6.0}) {
    s.smooth_range = k;
    EXPECT_EQ(EffectiveSmoothingRange(s), static_cast<int>(k)) << k;
  }
  for (double k : {6.5, 7.0, 1000.0, 1e6}) {
    s.smooth_range = k;
    EXPECT_EQ(EffectiveSmoothingRange(s), 6) << k;
  }
  s.cols = s.rows = 1;
  s.smooth_range = 5;
  EXPECT_EQ(EffectiveSmoothingRange(s), 0);
}

// Same costs and maps, bit for bit, for every range at or beyond the cap — after a full
// evaluation and after incremental moves.
TEST(Smoothing, CappedRangeGivesBitIdenticalCosts) {
  Netlist nl = ReadNetlist(std::string(kDir) + "netlist.pb.txt");
  const PlcFile plc = ReadPlc(std::string(kDir) + "initial.plc");
  ApplyPlc(plc, &nl, "initial.plc");
  PlacementSettings s = ResolveDefaults(plc.settings, nl);
  s.cols = 9;
  s.rows = 6;
  std::vector<CostBreakdown> full, moved;
  std::vector<std::vector<double>> vmaps, hmaps;
  for (double k : {8.0, 9.0, 50.0, 1e6}) {
    s.smooth_range = k;
    ProxyCost pc(nl, s);
    full.push_back(pc.EvaluateFull());
    std::mt19937 rng(7);
    for (int step = 0; step < 50; ++step) {
      const int32_t m = nl.macros[rng() % nl.macros.size()];
      pc.MoveNode(m, (rng() % 1000) / 1000.0 * s.canvas_width, (rng() % 1000) / 1000.0 * s.canvas_height);
    }
    moved.push_back(pc.Cost());
    vmaps.push_back(pc.VerticalCongestionMap());
    hmaps.push_back(pc.HorizontalCongestionMap());
  }
  for (size_t i = 1; i < full.size(); ++i) {
    EXPECT_EQ(full[i].congestion_cost, full[0].congestion_cost) << i;
    EXPECT_EQ(full[i].proxy_cost, full[0].proxy_cost) << i;
    EXPECT_EQ(moved[i].congestion_cost, moved[0].congestion_cost) << i;
    EXPECT_EQ(vmaps[i], vmaps[0]) << i;
    EXPECT_EQ(hmaps[i], hmaps[0]) << i;
  }
  // And a range below the cap still smooths differently (the test can tell ranges apart).
  s.smooth_range = 1;
  ProxyCost pc(nl, s);
  EXPECT_NE(pc.EvaluateFull().congestion_cost, full[0].congestion_cost);
}

TEST(Smoothing, WorkEstimateGrowsWithGridAndRange) {
  PlacementSettings s;
  s.cols = s.rows = 4096;
  s.smooth_range = 1000;
  const EvaluationEstimate big = EstimateEvaluation(s);
  EXPECT_EQ(big.smoothing_range, 1000);
  EXPECT_GT(big.seconds, 60);  // refused by the binaries without --allow-slow
  EXPECT_GT(big.bytes, 2e9);
  s.smooth_range = 0;
  const EvaluationEstimate plain = EstimateEvaluation(s);
  EXPECT_LT(plain.seconds, big.seconds / 5);
  s.cols = s.rows = 24;
  s.smooth_range = 1e6;  // capped: as cheap as range 23
  const EvaluationEstimate small = EstimateEvaluation(s);
  EXPECT_EQ(small.smoothing_range, 23);
  EXPECT_LT(small.seconds, 0.01);
}

}  // namespace
}  // namespace placerl::chip
