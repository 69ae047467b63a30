// GridMask: hand-made cases (touching allowed, orientation swaps the footprint, blockages,
// soft macros never block, a placed macro does not block itself) and a differential
// property test against a naive reference (per cell, test every placed rectangle) over
// random placements on Ariane133-NG45 and Circuit Training's macro_tiles_10x10.
#include "cost_models/chip/grid_mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

// ---- naive reference: the definition written out cell by cell ----
struct PlacedRect {
  int32_t node;
  double cx, cy, w, h;
};

double Overlap1D(double a0, double a1, double b0, double b1) {
  return std::min(a1, b1) - std::max(a0, b0);
}

bool NaiveLegal(double cx, double cy, double w, double h, double canvas_w, double canvas_h,
                const std::vector<PlacedRect>& placed, int32_t self,
                const std::vector<Blockage>& blockages) {
  const double ox = std::max(0.0, Overlap1D(cx - w / 2, cx + w / 2, 0, canvas_w));
  const double oy = std::max(0.0, Overlap1D(cy - h / 2, cy + h / 2, 0, canvas_h));
  if (std::abs(ox * oy - w * h) > 1e-8) return false;
  for (const PlacedRect& p : placed) {
    if (p.node == self) continue;
    if (Overlap1D(cx - w / 2, cx + w / 2, p.cx - p.w / 2, p.cx + p.w / 2) > 1e-8 &&
        Overlap1D(cy - h / 2, cy + h / 2, p.cy - p.h / 2, p.cy + p.h / 2) > 1e-8)
      return false;
  }
  for (const Blockage& b : blockages) {
    if (b.rate <= 0) continue;
    if (Overlap1D(cx - w / 2, cx + w / 2, b.minx, b.maxx) > 1e-8 &&
        Overlap1D(cy - h / 2, cy + h / 2, b.miny, b.maxy) > 1e-8)
      return false;
  }
  return true;
}

bool Swaps(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW ||
         o == Orientation::kFW;
}

// A netlist of hard macros (sizes given) and optionally soft macros, no nets.
Netlist Macros(const std::vector<std::pair<double, double>>& hard,
               const std::vector<std::pair<double, double>>& soft = {}) {
  Netlist nl;
  int k = 0;
  for (auto [w, h] : hard) {
    const int32_t i = nl.AddNode("M" + std::to_string(k++), NodeType::kHardMacro);
    nl.width[i] = w;
    nl.height[i] = h;
  }
  for (auto [w, h] : soft) {
    const int32_t i = nl.AddNode("Grp_" + std::to_string(k++), NodeType::kSoftMacro);
    nl.width[i] = w;
    nl.height[i] = h;
  }
  nl.Finalize();
  return nl;
}

PlacementSettings Canvas(double w, double h, int cols, int rows) {
  PlacementSettings s;
  s.canvas_width = w;
  s.canvas_height = h;
  s.cols = cols;
  s.rows = rows;
  return s;
}

std::vector<uint8_t> MaskOf(const GridMask& gm, int32_t m, Orientation o = Orientation::kN) {
  std::vector<uint8_t> mask(gm.cols() * gm.rows(), 7);
  gm.Compute(m, mask.data(), o);
  return mask;
}

TEST(GridMask, EmptyCanvasAllowsExactlyTheCellsThatKeepTheMacroInside) {
  // 100×100 canvas, 10×10 grid (cells 10 µm): a 20×20 macro centred on a cell centre
  // (5 + 10k) sticks out by 5 µm in the first and last column/row.
  const Netlist nl = Macros({{20, 20}, {10, 10}, {200, 5}});
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  std::vector<uint8_t> mask(100);
  EXPECT_EQ(gm.Compute(0, mask.data()), 64);
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c)
      EXPECT_EQ(mask[r * 10 + c], (r >= 1 && r <= 8 && c >= 1 && c <= 8) ? 1 : 0) << r << "," << c;
  EXPECT_EQ(gm.Compute(1, mask.data()), 100);  // exactly one cell: touches the canvas edge
  EXPECT_EQ(gm.Compute(2, mask.data()), 0);    // wider than the canvas
}

TEST(GridMask, TouchingIsAllowedOverlapIsNot) {
  const Netlist nl = Macros({{20, 20}, {20, 10}});
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  gm.Place(0, 35, 35);  // covers [25,45]×[25,45]
  EXPECT_TRUE(gm.placed(0));
  EXPECT_FALSE(gm.placed(1));
  // Macro 1 (20×10) at x = 55 spans [45,65]: touches macro 0's right edge.
  EXPECT_TRUE(gm.IsLegal(1, 55, 35));
  EXPECT_FALSE(gm.IsLegal(1, 55 - 1e-6, 35));  // 1e-6 µm overlap > tolerance
  EXPECT_TRUE(gm.IsLegal(1, 55 - 1e-9, 35));   // within the 1e-8 tolerance
  EXPECT_TRUE(gm.IsLegal(1, 35, 50));          // y span [45,55]: touches the top edge
  const std::vector<uint8_t> mask = MaskOf(gm, 1);
  // Cell centres (5+10c, 5+10r). Overlap in x iff |cx-35| < 20, in y iff |cy-35| < 15.
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c) {
      const double cx = 5 + 10 * c, cy = 5 + 10 * r;
      const bool inside = c >= 1 && c <= 8;  // x span [cx-10, cx+10]
      const bool overlap = std::abs(cx - 35) < 20 && std::abs(cy - 35) < 15;
      EXPECT_EQ(mask[r * 10 + c], inside && !overlap ? 1 : 0) << r << "," << c;
    }
}

TEST(GridMask, OrientationSwapsTheFootprintForTheEastFamily) {
  const Netlist nl = Macros({{30, 10}});
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  EXPECT_TRUE(gm.IsLegal(0, 15, 5, Orientation::kN));    // 30 wide, 10 high: fits
  EXPECT_FALSE(gm.IsLegal(0, 15, 5, Orientation::kE));   // 10 wide, 30 high: sticks out below
  EXPECT_TRUE(gm.IsLegal(0, 5, 15, Orientation::kW));
  EXPECT_TRUE(gm.IsLegal(0, 15, 5, Orientation::kFS));
  const std::vector<uint8_t> n = MaskOf(gm, 0, Orientation::kN);
  const std::vector<uint8_t> e = MaskOf(gm, 0, Orientation::kFE);
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c) EXPECT_EQ(n[r * 10 + c], e[c * 10 + r]);  // square canvas: transpose
  gm.Place(0, 50, 50, Orientation::kE);  // occupies [45,55]×[35,65]
  EXPECT_TRUE(gm.IsLegal(0, 50, 50));    // itself never blocks: only the canvas matters
  EXPECT_TRUE(gm.IsLegal(0, 50, 50, Orientation::kE));
  EXPECT_FALSE(gm.IsLegal(0, 50, 95, Orientation::kE));  // 30 high: out at the top
}

TEST(GridMask, PlacedMacroDoesNotBlockItselfAndUnplaceFreesItsCells) {
  const Netlist nl = Macros({{20, 20}, {20, 20}, {20, 20}});
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  gm.Place(0, 35, 35);
  gm.Place(1, 75, 75);
  EXPECT_EQ(gm.num_placed_hard(), 2);
  std::vector<uint8_t> m0 = MaskOf(gm, 0), m2 = MaskOf(gm, 2);
  EXPECT_EQ(m0[3 * 10 + 3], 1);  // its own cell
  EXPECT_EQ(m2[3 * 10 + 3], 0);
  EXPECT_EQ(m0[7 * 10 + 7], 0);  // blocked by macro 1
  gm.Place(1, 15, 85);           // moving a placed macro
  EXPECT_EQ(MaskOf(gm, 0)[7 * 10 + 7], 1);
  gm.Unplace(0);
  EXPECT_FALSE(gm.placed(0));
  EXPECT_EQ(MaskOf(gm, 2)[3 * 10 + 3], 1);
  EXPECT_EQ(gm.num_placed_hard(), 1);
  gm.Clear();
  EXPECT_FALSE(gm.placed(1));
  EXPECT_EQ(gm.Compute(2, MaskOf(gm, 2).data()), 64);
}

TEST(GridMask, SoftMacrosNeverBlock) {
  const Netlist nl = Macros({{20, 20}}, {{60, 60}});
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  gm.Place(1, 50, 50);
  EXPECT_TRUE(gm.placed(1));
  EXPECT_EQ(gm.num_placed_hard(), 0);
  std::vector<uint8_t> mask(100);
  EXPECT_EQ(gm.Compute(0, mask.data()), 64);
  gm.Unplace(1);
  EXPECT_FALSE(gm.placed(1));
}

TEST(GridMask, BlockagesWithPositiveRateBlock) {
  const Netlist nl = Macros({{10, 10}});
  PlacementSettings s = Canvas(100, 100, 10, 10);
  s.blockages.push_back({0, 0, 50, 100, 0.99});  // the left half
  s.blockages.push_back({50, 0, 100, 50, 0.0});  // rate 0: ignored
  GridMask gm(nl, s);
  std::vector<uint8_t> mask(100);
  EXPECT_EQ(gm.Compute(0, mask.data()), 50);
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c) EXPECT_EQ(mask[r * 10 + c], c >= 5 ? 1 : 0);
  EXPECT_FALSE(gm.IsLegal(0, 49, 80));
  EXPECT_TRUE(gm.IsLegal(0, 55, 80));
}

TEST(GridMask, RejectsMissingGridAndNonMacros) {
  Netlist nl = Macros({{10, 10}});
  EXPECT_THROW(GridMask(nl, PlacementSettings{}), ConfigError);
  GridMask gm(nl, Canvas(100, 100, 10, 10));
  EXPECT_THROW(gm.Place(5, 1, 1), InfeasibleAction);
  EXPECT_THROW(gm.Place(0, std::nan(""), 1), InfeasibleAction);
  EXPECT_FALSE(gm.placed(0));
}

// ---- differential property test on real netlists ----
struct Case {
  const char* netlist;
  const char* plc;
  int cols, rows;  // 0: from the .plc
  bool blockages;  // add two random blockages
};

class GridMaskDifferential : public ::testing::TestWithParam<Case> {};

TEST_P(GridMaskDifferential, MatchesNaiveReferenceOverRandomPlacements) {
  const Case& tc = GetParam();
  Netlist nl = ReadNetlist(tc.netlist);
  PlcFile plc = ReadPlc(tc.plc);
  ApplyPlc(plc, &nl, tc.plc);
  PlacementSettings s = ResolveDefaults(plc.settings, nl);
  if (tc.cols > 0) {
    s.cols = tc.cols;
    s.rows = tc.rows;
  }
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u01(0, 1);
  if (tc.blockages) {
    for (int b = 0; b < 2; ++b) {
      const double x0 = u01(rng) * s.canvas_width, y0 = u01(rng) * s.canvas_height;
      s.blockages.push_back({x0, y0, x0 + 0.2 * s.canvas_width, y0 + 0.1 * s.canvas_height,
                             b == 0 ? 0.99 : 0.0});
    }
  }
  GridMask gm(nl, s);
  const auto& hm = nl.hard_macros;
  ASSERT_FALSE(hm.empty());
  std::uniform_int_distribution<size_t> pick(0, hm.size() - 1);
  std::uniform_int_distribution<int> orient(0, 7), kind(0, 9);
  std::vector<PlacedRect> placed;  // the reference's own record
  const auto ref_remove = [&](int32_t m) {
    placed.erase(std::remove_if(placed.begin(), placed.end(),
                                [&](const PlacedRect& p) { return p.node == m; }),
                 placed.end());
  };
  std::vector<uint8_t> mask(s.cols * s.rows);
  int checked_cells = 0, legal_seen = 0, illegal_seen = 0;
  for (int step = 0; step < 600; ++step) {
    const int32_t m = hm[pick(rng)];
    const Orientation o = static_cast<Orientation>(orient(rng));
    double w = nl.width[m], h = nl.height[m];
    if (Swaps(o)) std::swap(w, h);
    // The mask of this macro now, against the reference.
    const int legal = gm.Compute(m, mask.data(), o);
    int count = 0;
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c) {
        const bool ref = NaiveLegal(gm.CellCentreX(c), gm.CellCentreY(r), w, h, s.canvas_width,
                                    s.canvas_height, placed, m, s.blockages);
        ASSERT_EQ(mask[r * s.cols + c], ref ? 1 : 0)
            << "step " << step << " macro " << m << " cell " << r << "," << c;
        ASSERT_EQ(gm.IsLegal(m, gm.CellCentreX(c), gm.CellCentreY(r), o), ref);
        count += ref;
        ++checked_cells;
      }
    ASSERT_EQ(legal, count);
    legal_seen += count;
    illegal_seen += s.cols * s.rows - count;
    // IsLegal at arbitrary positions.
    for (int t = 0; t < 5; ++t) {
      const double x = u01(rng) * s.canvas_width, y = u01(rng) * s.canvas_height;
      ASSERT_EQ(gm.IsLegal(m, x, y, o),
                NaiveLegal(x, y, w, h, s.canvas_width, s.canvas_height, placed, m, s.blockages));
    }
    // Then change the placement: mostly legal cells (as an episode does), sometimes an
    // arbitrary position (overlapping placements must still be handled), sometimes unplace.
    const int k = kind(rng);
    if (k < 6 && count > 0) {
      std::uniform_int_distribution<int> nth(0, count - 1);
      int target = nth(rng), cell = 0;
      for (; cell < s.cols * s.rows; ++cell)
        if (mask[cell] && target-- == 0) break;
      const double x = gm.CellCentreX(cell % s.cols), y = gm.CellCentreY(cell / s.cols);
      gm.Place(m, x, y, o);
      ref_remove(m);
      placed.push_back({m, x, y, w, h});
    } else if (k < 8) {
      const double x = u01(rng) * s.canvas_width, y = u01(rng) * s.canvas_height;
      gm.Place(m, x, y, o);
      ref_remove(m);
      placed.push_back({m, x, y, w, h});
    } else {
      gm.Unplace(m);
      ref_remove(m);
    }
    ASSERT_EQ(gm.num_placed_hard(), static_cast<int>(placed.size()));
  }
  EXPECT_GT(checked_cells, 0);
  EXPECT_GT(legal_seen, 0);    // both outcomes exercised
  EXPECT_GT(illegal_seen, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Netlists, GridMaskDifferential,
    ::testing::Values(
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/initial.plc", 0, 0, false},
        Case{"../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
             "../shared/datasets/chip/ariane133_ng45/initial.plc", 48, 37, true},
        Case{"../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt",
             "../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc", 0, 0, false},
        Case{"../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt",
             "../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc", 24, 24, true}),
    [](const ::testing::TestParamInfo<Case>& i) { return "case" + std::to_string(i.index); });

// Touching macros exactly packed on the grid: a 24-cell-wide grid of 50 µm macros on a
// 1200 µm canvas (macro_tiles_10x10 geometry) — the rounding of cell centres must not make
// abutting macros overlap.
TEST(GridMask, AbuttingMacrosOnCellCentresStayLegal) {
  Netlist nl = ReadNetlist("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt");
  GridMask gm(nl, Canvas(1200, 1200, 24, 24));  // cells of exactly 50 µm
  std::vector<uint8_t> mask(24 * 24);
  int placed = 0;
  for (int32_t m : nl.hard_macros) {
    ASSERT_GT(gm.Compute(m, mask.data()), 0);
    const int cell = static_cast<int>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
    EXPECT_EQ(cell, placed);  // row-major first-fit packs them side by side
    gm.Place(m, gm.CellCentreX(cell % 24), gm.CellCentreY(cell / 24));
    ++placed;
  }
  EXPECT_EQ(gm.Compute(nl.hard_macros[0], mask.data()), 24 * 24 - 99);
}

}  // namespace
}  // namespace placerl::chip
