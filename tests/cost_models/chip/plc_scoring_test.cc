// A .plc scored on its netlist (cost_models/chip/plc_scoring.h): the initial.plc written for a
// netlist scores as the netlist itself on the same canvas and grid, its header carries those
// costs, and a .plc that moves a node is measured on the moved placement.
#include <gtest/gtest.h>

#include <string>

#include "cost_models/chip/plc_scoring.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {
namespace {

const std::string kToy = "../shared/datasets/chip/circuit_training/toy_macro_stdcell/netlist.pb.txt";

TEST(PlcScoring, AnInitialPlcScoresAsItsNetlist) {
  const Netlist nl = ReadNetlist(kToy);
  const CostWeights weights;
  const std::string text = InitialPlcText(nl, 300, 200, 12, 11, weights, "initial.plc");
  const PlcFile plc = ParsePlcText(text, "initial.plc");
  EXPECT_EQ(plc.settings.canvas_width, 300);
  EXPECT_EQ(plc.settings.cols, 12);
  EXPECT_EQ(plc.settings.rows, 11);

  PlacementSettings s;
  s.canvas_width = 300;
  s.canvas_height = 200;
  s.cols = 12;
  s.rows = 11;
  const CostBreakdown direct = EvaluateProxyCost(nl, ResolveDefaults(s, nl), weights);
  const PlcScore score = ScorePlc(nl, plc, "initial.plc", weights);
  EXPECT_NEAR(score.cost.proxy_cost, direct.proxy_cost, 1e-6);
  EXPECT_NEAR(score.cost.wirelength_cost, direct.wirelength_cost, 1e-6);
  ASSERT_TRUE(plc.header_wirelength_cost.has_value());
  EXPECT_NEAR(*plc.header_wirelength_cost, direct.wirelength_cost, 1e-4);
  EXPECT_EQ(score.rows, static_cast<int32_t>(plc.rows.size()));
  EXPECT_EQ(score.placeable, static_cast<int32_t>(nl.ports.size() + nl.macros.size()));
  EXPECT_EQ(score.max_soft_shift, 0);
  EXPECT_LE(score.google_congestion, score.cost.congestion_cost + 1e-12);  // fewer nets routed, never more

  // A .plc that moves the first macro: scored on the moved placement, not the netlist's.
  ASSERT_FALSE(nl.macros.empty());
  Netlist moved = nl;
  moved.x[nl.macros[0]] += 17;
  const PlcFile moved_plc = ParsePlcText(InitialPlcText(moved, 300, 200, 12, 11, weights, "moved.plc"), "moved.plc");
  const PlcScore moved_score = ScorePlc(nl, moved_plc, "moved.plc", weights);
  EXPECT_NEAR(moved_score.cost.proxy_cost, EvaluateProxyCost(moved, ResolveDefaults(s, moved), weights).proxy_cost, 1e-6);
  EXPECT_NE(moved_score.cost.hpwl, score.cost.hpwl);
}

}  // namespace
}  // namespace placerl::chip
