// Property test: after thousands of random moves, swaps and flips, the incrementally
// maintained cost equals a from-scratch evaluation of the same placement to 1e-9 — under
// both rules for nets with a pin off the canvas (the moves cross the canvas boundary, so
// with kSkip nets leave and rejoin the routing).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {
namespace {

struct Case {
  const char* netlist;
  const char* plc;
  int cols, rows;       // 0: from the .plc
  double smooth_range;  // < 0: from the .plc
  OffCanvasNets off_canvas;
};

CostWeights WeightsOf(const Case& tc) {
  CostWeights w;
  w.off_canvas_nets = tc.off_canvas;
  return w;
}

void ExpectSame(const CostBreakdown& a, const CostBreakdown& b, int step) {
  EXPECT_NEAR(a.hpwl, b.hpwl, 1e-9 * std::max(1.0, std::abs(b.hpwl))) << "after step " << step;
  EXPECT_NEAR(a.wirelength_cost, b.wirelength_cost, 1e-9) << "after step " << step;
  EXPECT_NEAR(a.density_cost, b.density_cost, 1e-9) << "after step " << step;
  EXPECT_NEAR(a.congestion_cost, b.congestion_cost, 1e-9) << "after step " << step;
  EXPECT_NEAR(a.proxy_cost, b.proxy_cost, 1e-9) << "after step " << step;
}

// The netlist (with the .plc's positions) and the settings of a case.
PlacementSettings Load(const Case& tc, Netlist* nl) {
  *nl = ReadNetlist(tc.netlist);
  PlacementSettings given;
  if (tc.plc) {
    PlcFile plc = ReadPlc(tc.plc);
    ApplyPlc(plc, nl, tc.plc);
    given = plc.settings;
  }
  PlacementSettings s = ResolveDefaults(given, *nl);
  if (tc.cols > 0) {
    s.cols = tc.cols;
    s.rows = tc.rows;
  }
  if (tc.smooth_range >= 0) s.smooth_range = tc.smooth_range;
  return s;
}

class IncrementalTest : public ::testing::TestWithParam<Case> {};

TEST_P(IncrementalTest, ThousandsOfRandomEditsMatchFullEvaluation) {
  Netlist nl;
  const PlacementSettings s = Load(GetParam(), &nl);
  const CostWeights w = WeightsOf(GetParam());
  ProxyCost pc(nl, s, w);
  ASSERT_FALSE(nl.macros.empty());
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<size_t> pick(0, nl.macros.size() - 1);
  std::uniform_real_distribution<double> ux(-0.05 * s.canvas_width, 1.05 * s.canvas_width);
  std::uniform_real_distribution<double> uy(-0.05 * s.canvas_height, 1.05 * s.canvas_height);
  std::uniform_int_distribution<int> kind(0, 9), orient(0, 3), col(0, s.cols - 1), row(0, s.rows - 1);
  const int steps = 3000;
  double first = pc.Cost().proxy_cost, last = first;
  for (int step = 1; step <= steps; ++step) {
    const int32_t m = nl.macros[pick(rng)];
    const int k = kind(rng);
    if (k < 5) {
      pc.MoveNode(m, ux(rng), uy(rng));  // anywhere, also partly off the canvas
    } else if (k < 7) {
      pc.MoveNode(m, (col(rng) + 0.5) * pc.grid_width(), (row(rng) + 0.5) * pc.grid_height());
    } else if (k < 9) {
      pc.SwapNodes(m, nl.macros[pick(rng)]);
    } else if (nl.type[m] == NodeType::kHardMacro) {
      pc.SetOrientation(m, static_cast<Orientation>(orient(rng)));  // N, FN, S, FS
    }
    if (step % 250 == 0 || step == steps) {
      const CostBreakdown inc = pc.Cost();
      Netlist placed = nl;
      pc.CopyPlacementTo(&placed);
      ProxyCost fresh(placed, s, w);
      ExpectSame(inc, fresh.Cost(), step);
      // EvaluateFull on the same object must agree too, and leave it consistent.
      ExpectSame(pc.EvaluateFull(), fresh.Cost(), step);
      last = inc.proxy_cost;
    }
  }
  EXPECT_NE(first, last);  // the edits did change the placement
}

// The incremental read path (top-k member sets, changed rows/columns/cells) is exercised
// hardest when the cost is read after every single edit: compare costs and the maps.
TEST_P(IncrementalTest, ReadingAfterEveryEditMatchesFullEvaluation) {
  Netlist nl;
  const PlacementSettings s = Load(GetParam(), &nl);
  const CostWeights w = WeightsOf(GetParam());
  ProxyCost pc(nl, s, w);
  std::mt19937_64 rng(77);
  std::uniform_int_distribution<size_t> pick(0, nl.macros.size() - 1);
  std::uniform_int_distribution<int> col(0, s.cols - 1), row(0, s.rows - 1), kind(0, 3);
  std::vector<double> costs;
  for (int step = 1; step <= 1200; ++step) {
    const int32_t m = nl.macros[pick(rng)];
    if (kind(rng) == 0) {
      pc.SwapNodes(m, nl.macros[pick(rng)]);
    } else {
      pc.MoveNode(m, (col(rng) + 0.5) * pc.grid_width(), (row(rng) + 0.5) * pc.grid_height());
    }
    const CostBreakdown inc = pc.Cost();
    costs.push_back(inc.proxy_cost);
    if (step % 60 == 0) {
      Netlist placed = nl;
      pc.CopyPlacementTo(&placed);
      ProxyCost fresh(placed, s, w);
      ExpectSame(inc, fresh.Cost(), step);
      const auto v = pc.VerticalCongestionMap(), fv = fresh.VerticalCongestionMap();
      const auto h = pc.HorizontalCongestionMap(), fh = fresh.HorizontalCongestionMap();
      const auto d = pc.DensityMap(), fd = fresh.DensityMap();
      ASSERT_EQ(v.size(), fv.size());
      for (size_t i = 0; i < v.size(); ++i) {
        ASSERT_NEAR(v[i], fv[i], 1e-9) << "V cell " << i << " after step " << step;
        ASSERT_NEAR(h[i], fh[i], 1e-9) << "H cell " << i << " after step " << step;
        ASSERT_NEAR(d[i], fd[i], 1e-9) << "density cell " << i << " after step " << step;
      }
    }
  }
  std::sort(costs.begin(), costs.end());
  EXPECT_LT(costs.front(), costs.back());  // the costs did change
}

INSTANTIATE_TEST_SUITE_P(
    Netlists, IncrementalTest,
    ::testing::Values(
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/initial.plc", 0, 0, -1, OffCanvasNets::kClamp},
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/legalized.plc", 37, 13, 2.7, OffCanvasNets::kClamp},
        Case{"../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt", nullptr, 0, 0, 1,
             OffCanvasNets::kClamp},
        Case{"../shared/datasets/chip/circuit_training/sample_clustered/netlist.pb.txt",
             "../shared/datasets/chip/circuit_training/sample_clustered/initial.plc", 0, 0, -1, OffCanvasNets::kClamp},
        // Google's rule: initial.plc has 620 nets with a pin off the canvas to begin with.
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/initial.plc", 0, 0, -1, OffCanvasNets::kSkip},
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/legalized.plc", 37, 13, 2.7, OffCanvasNets::kSkip},
        Case{"../shared/datasets/chip/circuit_training/sample_clustered/netlist.pb.txt",
             "../shared/datasets/chip/circuit_training/sample_clustered/initial.plc", 0, 0, -1, OffCanvasNets::kSkip}),
    [](const ::testing::TestParamInfo<Case>& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace placerl::chip
