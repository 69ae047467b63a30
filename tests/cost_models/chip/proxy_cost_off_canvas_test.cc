// The rule for nets with a pin off the canvas (OffCanvasNets): TILOS clamps such pins into
// the border cells (the default), Google leaves such nets out of the congestion routing
// (kSkip). Checked on Ariane133's initial.plc, whose 620 off-canvas nets are the whole gap
// between our clamped congestion and the header (docs/grouping.md), against the netlist
// rewrite of datasets/chip/grouping.h, and across boundary crossings of the incremental path
// (the random-move differential test is proxy_cost_incremental_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

const char* kAriane = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
const char* kArianeInitial = "../shared/datasets/chip/ariane133_ng45/initial.plc";
const char* kArianeLegalized = "../shared/datasets/chip/ariane133_ng45/legalized.plc";

PlacementSettings Load(const char* plc_path, Netlist* nl) {
  *nl = ReadNetlist(kAriane);
  const PlcFile plc = ReadPlc(plc_path);
  ApplyPlc(plc, nl, plc_path);
  return ResolveDefaults(plc.settings, *nl);
}

CostWeights Rule(OffCanvasNets rule) {
  CostWeights w;
  w.off_canvas_nets = rule;
  return w;
}

TEST(OffCanvasNets, SkipGivesGooglesCongestionOnArianeInitialPlc) {
  Netlist nl;
  const PlacementSettings s = Load(kArianeInitial, &nl);
  const CostBreakdown clamp = EvaluateProxyCost(nl, s, Rule(OffCanvasNets::kClamp));
  const CostBreakdown skip = EvaluateProxyCost(nl, s, Rule(OffCanvasNets::kSkip));
  // docs/grouping.md: clamped 0.715673, Google's rule 0.712777 (header 0.7128).
  EXPECT_NEAR(clamp.congestion_cost, 0.715673, 5e-7);
  EXPECT_NEAR(skip.congestion_cost, 0.712777, 5e-7);
  // Only congestion depends on the rule.
  EXPECT_EQ(skip.hpwl, clamp.hpwl);
  EXPECT_EQ(skip.wirelength_cost, clamp.wirelength_cost);
  EXPECT_EQ(skip.density_cost, clamp.density_cost);
  EXPECT_NEAR(skip.proxy_cost, clamp.proxy_cost - 0.5 * (clamp.congestion_cost - skip.congestion_cost), 1e-12);
  // Same as removing those nets from the netlist (the grouper's check).
  int32_t dropped = 0;
  const Netlist routed = WithoutOffCanvasNets(nl, s.canvas_width, s.canvas_height, &dropped);
  EXPECT_EQ(dropped, 620);
  EXPECT_NEAR(skip.congestion_cost, EvaluateProxyCost(routed, s).congestion_cost, 1e-12);
}

TEST(OffCanvasNets, RulesAgreeWhenEveryPinIsOnTheCanvas) {
  Netlist nl;
  const PlacementSettings s = Load(kArianeLegalized, &nl);
  int32_t dropped = -1;
  WithoutOffCanvasNets(nl, s.canvas_width, s.canvas_height, &dropped);
  ASSERT_EQ(dropped, 0);
  const CostBreakdown clamp = EvaluateProxyCost(nl, s, Rule(OffCanvasNets::kClamp));
  const CostBreakdown skip = EvaluateProxyCost(nl, s, Rule(OffCanvasNets::kSkip));
  EXPECT_EQ(skip.congestion_cost, clamp.congestion_cost);
  EXPECT_EQ(skip.proxy_cost, clamp.proxy_cost);
}

// A macro pushed across the right edge unroutes its nets (and only with kSkip); moving it
// back restores the cost exactly; a full evaluation agrees at every stage.
TEST(OffCanvasNets, CrossingTheBoundaryRoutesAndUnroutesIncrementally) {
  Netlist nl;
  const PlacementSettings s = Load(kArianeLegalized, &nl);
  ProxyCost skip(nl, s, Rule(OffCanvasNets::kSkip));
  ProxyCost clamp(nl, s, Rule(OffCanvasNets::kClamp));
  const int32_t m = nl.hard_macros.front();
  const double x0 = skip.x(m), y0 = skip.y(m);
  const CostBreakdown before = skip.Cost();
  auto fresh = [&](const ProxyCost& pc, OffCanvasNets rule) {
    Netlist placed = nl;
    pc.CopyPlacementTo(&placed);
    return EvaluateProxyCost(placed, s, Rule(rule)).congestion_cost;
  };
  // Centre beyond the right edge: every pin of the macro is off the canvas.
  const double off_x = s.canvas_width + nl.width[m];
  skip.MoveNode(m, off_x, y0);
  clamp.MoveNode(m, off_x, y0);
  const CostBreakdown off = skip.Cost();
  EXPECT_NEAR(off.congestion_cost, fresh(skip, OffCanvasNets::kSkip), 1e-12);
  EXPECT_NEAR(clamp.Cost().congestion_cost, fresh(clamp, OffCanvasNets::kClamp), 1e-12);
  EXPECT_NE(off.congestion_cost, clamp.Cost().congestion_cost);  // the rules now differ
  EXPECT_EQ(off.hpwl, clamp.Cost().hpwl);
  {
    Netlist placed = nl;
    skip.CopyPlacementTo(&placed);
    int32_t dropped = 0;
    WithoutOffCanvasNets(placed, s.canvas_width, s.canvas_height, &dropped);
    EXPECT_GT(dropped, 0);
  }
  // Half-way back: partly on the canvas (pins on both sides).
  skip.MoveNode(m, s.canvas_width, y0);
  EXPECT_NEAR(skip.Cost().congestion_cost, fresh(skip, OffCanvasNets::kSkip), 1e-12);
  // Back home.
  skip.MoveNode(m, x0, y0);
  const CostBreakdown back = skip.Cost();
  EXPECT_NEAR(back.congestion_cost, before.congestion_cost, 1e-12);
  EXPECT_NEAR(back.proxy_cost, before.proxy_cost, 1e-12);
}

TEST(OffCanvasNets, NamesParseAndBadNamesAreRejected) {
  EXPECT_EQ(ParseOffCanvasNets("clamp"), OffCanvasNets::kClamp);
  EXPECT_EQ(ParseOffCanvasNets("skip"), OffCanvasNets::kSkip);
  EXPECT_STREQ(OffCanvasNetsName(OffCanvasNets::kSkip), "skip");
  EXPECT_STREQ(OffCanvasNetsName(OffCanvasNets::kClamp), "clamp");
  EXPECT_THROW(ParseOffCanvasNets("Skip"), ConfigError);
  EXPECT_THROW(ParseOffCanvasNets(""), ConfigError);
  EXPECT_EQ(CostWeights{}.off_canvas_nets, OffCanvasNets::kClamp);  // TILOS's rule stays the default
  EXPECT_EQ(ParseCostWeights("1,0.5,0.5").off_canvas_nets, OffCanvasNets::kClamp);
}

}  // namespace
}  // namespace placerl::chip
