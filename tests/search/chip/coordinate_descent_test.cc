// Coordinate descent: the cost history never rises, the final incremental cost equals a full
// evaluation, the result stays legal (no hard-macro overlap, inside the canvas), runs are
// deterministic for a seed, and bad options are rejected.
#include "search/chip/coordinate_descent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cost_models/chip/grid_mask.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

struct Loaded {
  Netlist nl;
  PlacementSettings s;
};

Loaded Load(const char* netlist, const char* plc_path) {
  Loaded l;
  l.nl = ReadNetlist(netlist);
  PlcFile plc = ReadPlc(plc_path);
  ApplyPlc(plc, &l.nl, plc_path);
  l.s = ResolveDefaults(plc.settings, l.nl);
  return l;
}

// Every hard macro inside the canvas and no two overlapping (naive pairwise check).
void ExpectLegal(const ProxyCost& pc) {
  const Netlist& nl = pc.netlist();
  const PlacementSettings& s = pc.settings();
  const auto rect = [&](int32_t m, double* x0, double* x1, double* y0, double* y1) {
    double w = nl.width[m], h = nl.height[m];
    const Orientation o = pc.orientation(m);
    if (o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW || o == Orientation::kFW)
      std::swap(w, h);
    *x0 = pc.x(m) - w / 2;
    *x1 = pc.x(m) + w / 2;
    *y0 = pc.y(m) - h / 2;
    *y1 = pc.y(m) + h / 2;
  };
  for (size_t i = 0; i < nl.hard_macros.size(); ++i) {
    double ax0, ax1, ay0, ay1;
    rect(nl.hard_macros[i], &ax0, &ax1, &ay0, &ay1);
    EXPECT_GE(ax0, -1e-6);
    EXPECT_GE(ay0, -1e-6);
    EXPECT_LE(ax1, s.canvas_width + 1e-6);
    EXPECT_LE(ay1, s.canvas_height + 1e-6);
    for (size_t j = i + 1; j < nl.hard_macros.size(); ++j) {
      double bx0, bx1, by0, by1;
      rect(nl.hard_macros[j], &bx0, &bx1, &by0, &by1);
      const double ox = std::min(ax1, bx1) - std::max(ax0, bx0);
      const double oy = std::min(ay1, by1) - std::max(ay0, by0);
      EXPECT_FALSE(ox > 1e-6 && oy > 1e-6)
          << nl.name[nl.hard_macros[i]] << " overlaps " << nl.name[nl.hard_macros[j]];
    }
  }
}

void ExpectNonIncreasing(const std::vector<double>& h) {
  ASSERT_FALSE(h.empty());
  for (size_t i = 1; i < h.size(); ++i) EXPECT_LE(h[i], h[i - 1] + 1e-12) << "epoch " << i;
}

// Hard macros spread by first-fit on random legal cells (a legal, poor placement).
void RandomLegalPlacement(ProxyCost* pc, uint64_t seed) {
  const Netlist& nl = pc->netlist();
  GridMask gm(nl, pc->settings());
  std::vector<uint8_t> mask(gm.cols() * gm.rows());
  std::mt19937_64 rng(seed);
  for (int32_t m : nl.hard_macros) {
    const int legal = gm.Compute(m, mask.data(), pc->orientation(m));
    ASSERT_GT(legal, 0);
    int pick = std::uniform_int_distribution<int>(0, legal - 1)(rng), cell = 0;
    for (; cell < static_cast<int>(mask.size()); ++cell)
      if (mask[cell] && pick-- == 0) break;
    const double x = gm.CellCentreX(cell % gm.cols()), y = gm.CellCentreY(cell / gm.cols());
    gm.Place(m, x, y, pc->orientation(m));
    pc->MoveNode(m, x, y);
  }
}

// macro_tiles_10x10: 100 hard macros, no soft macros; from a random legal placement CD must
// lower the cost and keep it legal.
TEST(CoordinateDescent, LowersCostOnMacroTilesAndStaysLegal) {
  const Loaded l = Load("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt",
                        "../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc");
  ProxyCost pc(l.nl, l.s);
  RandomLegalPlacement(&pc, 5);
  ExpectLegal(pc);
  const double start = pc.Cost().proxy_cost;
  CoordinateDescentOptions o;
  o.epochs = 3;
  o.k_distance_bound = 3;
  const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
  ExpectNonIncreasing(r.cost_history);
  EXPECT_EQ(r.cost_history.front(), start);
  EXPECT_LT(r.cost_history.back(), start);
  EXPECT_GT(r.macro_moves, 0);
  EXPECT_GT(r.evaluations, 0);
  EXPECT_EQ(r.fd_accepted + r.fd_rejected, 0);  // no soft macros
  EXPECT_EQ(static_cast<int>(r.cost_history.size()), r.epochs_run + 1);
  EXPECT_NEAR(pc.Cost().proxy_cost, r.cost_history.back(), 1e-12);
  EXPECT_NEAR(pc.EvaluateFull().proxy_cost, r.cost_history.back(), 1e-9);
  ExpectLegal(pc);
  // Orientations stay in the N family (the netlist's macros are N).
  for (int32_t m : l.nl.hard_macros) {
    const Orientation ori = pc.orientation(m);
    EXPECT_TRUE(ori == Orientation::kN || ori == Orientation::kFN || ori == Orientation::kS ||
                ori == Orientation::kFS);
  }
}

// Ariane133 (133 hard, 782 soft): random legal hard macros, soft macros by FD, then one epoch
// of CD with FD in between: cheaper, legal, consistent with a full evaluation.
TEST(CoordinateDescent, LowersCostOnAriane133WithForceDirectedSoftMacros) {
  const Loaded l = Load("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
                        "../shared/datasets/chip/ariane133_ng45/initial.plc");
  ProxyCost pc(l.nl, l.s);
  RandomLegalPlacement(&pc, 11);
  RunForceDirected(&pc);
  ExpectLegal(pc);
  const double start = pc.Cost().proxy_cost;
  CoordinateDescentOptions o;
  o.epochs = 1;
  o.k_distance_bound = 2;
  o.seed = 3;
  const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
  ExpectNonIncreasing(r.cost_history);
  EXPECT_LT(r.cost_history.back(), start);
  EXPECT_GT(r.macro_moves, 0);
  EXPECT_EQ(r.fd_accepted + r.fd_rejected, 2);  // before the epoch and after it
  EXPECT_NEAR(pc.EvaluateFull().proxy_cost, r.cost_history.back(), 1e-9);
  ExpectLegal(pc);
}

TEST(CoordinateDescent, DeterministicForASeedAndOrientationOnlyNeverMoves) {
  const Loaded l = Load("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt",
                        "../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc");
  CoordinateDescentOptions o;
  o.epochs = 1;
  o.k_distance_bound = 2;
  o.cell_search_prob = 0.5;
  o.seed = 42;
  std::vector<double> first;
  for (int run = 0; run < 2; ++run) {
    ProxyCost pc(l.nl, l.s);
    RandomLegalPlacement(&pc, 9);
    const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
    std::vector<double> pos;
    for (int32_t m : l.nl.hard_macros) {
      pos.push_back(pc.x(m));
      pos.push_back(pc.y(m));
      pos.push_back(static_cast<double>(pc.orientation(m)));
    }
    if (run == 0) first = pos;
    else EXPECT_EQ(pos, first);
  }
  // Orientation only: positions untouched, cost not higher.
  ProxyCost pc(l.nl, l.s);
  RandomLegalPlacement(&pc, 9);
  std::vector<double> x0, y0;
  for (int32_t m : l.nl.hard_macros) {
    x0.push_back(pc.x(m));
    y0.push_back(pc.y(m));
  }
  o.optimize_only_orientation = true;
  const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
  ExpectNonIncreasing(r.cost_history);
  for (size_t i = 0; i < l.nl.hard_macros.size(); ++i) {
    EXPECT_EQ(pc.x(l.nl.hard_macros[i]), x0[i]);
    EXPECT_EQ(pc.y(l.nl.hard_macros[i]), y0[i]);
  }
}

TEST(CoordinateDescent, ZeroEpochsChangesNothingAndBadOptionsAreRejected) {
  const Loaded l = Load("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt",
                        "../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc");
  ProxyCost pc(l.nl, l.s);
  CoordinateDescentOptions o;
  o.epochs = 0;
  const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
  ASSERT_EQ(r.cost_history.size(), 1u);
  EXPECT_EQ(r.macro_moves, 0);
  for (int32_t m : l.nl.hard_macros) EXPECT_EQ(pc.x(m), l.nl.x[m]);
  o = {};
  o.cell_search_prob = 1.5;
  EXPECT_THROW(RunCoordinateDescent(&pc, o), ConfigError);
  o = {};
  o.epochs = -1;
  EXPECT_THROW(RunCoordinateDescent(&pc, o), ConfigError);
  o = {};
  o.fd_every_n_macros = -2;
  EXPECT_THROW(RunCoordinateDescent(&pc, o), ConfigError);
}

}  // namespace
}  // namespace placerl::chip
