// Conformance of the proxy cost with the published reference values
// (../shared/datasets/README.md): Ariane133 initial.plc against the open re-implementation
// (1e-6) and Google's header (reported gap), and Circuit Training's own unit-test values
// for macro_tiles_10x10 (1e-9).
#include <gtest/gtest.h>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {
namespace {

const char* kAriane = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";

CostBreakdown Score(const std::string& netlist, const std::string& plc_path) {
  Netlist nl = ReadNetlist(netlist);
  PlacementSettings s;
  if (!plc_path.empty()) {
    PlcFile plc = ReadPlc(plc_path);
    ApplyPlc(plc, &nl, plc_path);
    s = plc.settings;
  }
  return EvaluateProxyCost(nl, ResolveDefaults(s, nl));
}

TEST(ProxyCostReference, Ariane133InitialMatchesReimplementation) {
  const CostBreakdown c = Score(kAriane, "../shared/datasets/chip/ariane133_ng45/initial.plc");
  EXPECT_NEAR(c.wirelength_cost, 0.049722, 1e-6);
  EXPECT_NEAR(c.density_cost, 0.606735, 1e-6);
  EXPECT_NEAR(c.congestion_cost, 0.715673, 1e-6);
  // Google's header (rounded to 4 digits): WL and density agree, congestion 0.7128 is the
  // known 0.4 % gap of the re-implementation.
  EXPECT_NEAR(c.wirelength_cost, 0.0497, 5e-5);
  EXPECT_NEAR(c.density_cost, 0.6067, 5e-5);
  EXPECT_NEAR(c.hpwl, 3219216.090, 5.0);
}

TEST(ProxyCostReference, Ariane133LegalizedMatchesReimplementation) {
  const CostBreakdown c = Score(kAriane, "../shared/datasets/chip/ariane133_ng45/legalized.plc");
  EXPECT_NEAR(c.wirelength_cost, 0.073568, 1e-6);
  EXPECT_NEAR(c.density_cost, 0.498818, 1e-6);
  EXPECT_NEAR(c.congestion_cost, 0.725915, 1e-6);
  EXPECT_NEAR(c.proxy_cost, 0.685935, 2e-6);
}

TEST(ProxyCostReference, MacroTilesDefaultsMatchGoogleUnitTest) {
  Netlist nl = ReadNetlist("../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt");
  EXPECT_EQ(nl.hard_macros.size(), 100u);
  EXPECT_DOUBLE_EQ(nl.TotalArea(), 250000.0);
  const PlacementSettings s = ResolveDefaults({}, nl);
  EXPECT_EQ(s.cols, 10);
  EXPECT_EQ(s.rows, 10);
  const CostBreakdown c = EvaluateProxyCost(nl, s);
  EXPECT_NEAR(c.hpwl, 5400.0, 1e-9);
  EXPECT_NEAR(c.wirelength_cost, 0.007745966692414834, 1e-9);
  EXPECT_NEAR(c.density_cost, 0.3570806661517036, 1e-9);
}

}  // namespace
}  // namespace placerl::chip
