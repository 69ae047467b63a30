// Regression cases found by the fuzz targets (tests/fuzz/, docs/fuzzing.md). Each input
// must either be rejected with placerl::Error or be read; when read, the proxy cost must
// either throw placerl::Error or return costs that are not NaN.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

// A port, a macro with two pins and a standard cell; nets p→m/a, m/b→c.
const char kNetlist[] = R"(
node { name: "p" input: "m/a" attr { key: "type" value { placeholder: "PORT" } } attr { key: "x" value { f: 0 } } attr { key: "y" value { f: 5 } } }
node { name: "m" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 10 } } attr { key: "height" value { f: 10 } } attr { key: "x" value { f: 20 } } attr { key: "y" value { f: 20 } } }
node { name: "m/a" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m" } } attr { key: "x_offset" value { f: -2 } } }
node { name: "m/b" input: "c" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m" } } attr { key: "y_offset" value { f: 3 } } }
node { name: "c" attr { key: "type" value { placeholder: "STDCELL" } } attr { key: "width" value { f: 1 } } attr { key: "height" value { f: 2 } } attr { key: "x" value { f: 35 } } attr { key: "y" value { f: 35 } } }
)";

bool IsNaN(const CostBreakdown& c) {
  return std::isnan(c.hpwl) || std::isnan(c.wirelength_cost) || std::isnan(c.density_cost) ||
         std::isnan(c.congestion_cost) || std::isnan(c.proxy_cost);
}

// The fuzz contract for the proxy cost: throws placerl::Error, or no NaN. Returns true if
// it threw.
bool ProxyCostThrowsOrIsNotNaN(const Netlist& nl, const PlacementSettings& given) {
  try {
    ProxyCost pc(nl, ResolveDefaults(given, nl));
    EXPECT_FALSE(IsNaN(pc.Cost()));
    EXPECT_FALSE(IsNaN(pc.EvaluateFull()));
    return false;
  } catch (const Error&) {
    return true;
  }
}

TEST(FuzzRegression, NonFinitePositionsAreRefusedByProxyCost) {
  const Netlist base = ParseNetlistText(kNetlist, "base");
  const double kInf = std::numeric_limits<double>::infinity();
  for (double v : {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 1e308}) {
    for (int node : {0, 1, 4}) {  // port, macro, standard cell
      Netlist nl = base;
      nl.x[node] = v;
      EXPECT_TRUE(ProxyCostThrowsOrIsNotNaN(nl, {})) << "node " << node << " x=" << v;
    }
  }
  // Pins' own x/y are informational (a pin sits at its macro plus its offset): accepted.
  Netlist nl = base;
  nl.x[2] = kInf;
  EXPECT_FALSE(ProxyCostThrowsOrIsNotNaN(nl, {}));
}

// tests/fuzz/corpus/netlist_fuzz/regression_pins_overflow_to_inf.pb.txt: both pins of a net
// at +inf (1e308 + 1e308 and 1e308 + 9e307) gave HPWL inf − inf = NaN.
TEST(FuzzRegression, PinsOverflowingToInfinity) {
  const std::string text = R"(
node { name: "m" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 1 } }
  attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 1e308 } } attr { key: "y" value { f: 0 } } }
node { name: "m/a" input: "m/b" attr { key: "type" value { placeholder: "MACRO_PIN" } }
  attr { key: "macro_name" value { placeholder: "m" } } attr { key: "x_offset" value { f: 1e308 } } }
node { name: "m/b" attr { key: "type" value { placeholder: "MACRO_PIN" } }
  attr { key: "macro_name" value { placeholder: "m" } } attr { key: "x_offset" value { f: 9e307 } } }
)";
  Netlist nl;
  try {
    nl = ParseNetlistText(text, "regression");
  } catch (const Error&) {
    return;  // also within the contract
  }
  EXPECT_TRUE(ProxyCostThrowsOrIsNotNaN(nl, {}));
}

// tests/fuzz/corpus/plc_fuzz/regression_tiny_canvas.plc: a 1e-300 canvas made the cell
// area 0, the density 0·inf = NaN, and fed NaN to nth_element in the top-k mean.
TEST(FuzzRegression, TinyCanvasFromPlc) {
  Netlist nl = ParseNetlistText(kNetlist, "base");
  PlcFile plc;
  try {
    plc = ParsePlcText("# Columns : 4  Rows : 4\n# Width : 1e-300  Height : 1e-300\n1 0 0 N 0\n", "regression.plc");
    ApplyPlc(plc, &nl, "regression.plc");
  } catch (const Error&) {
    return;
  }
  EXPECT_TRUE(ProxyCostThrowsOrIsNotNaN(nl, plc.settings));
}

TEST(FuzzRegression, MoveBeyondRangeIsInfeasible) {
  const Netlist nl = ParseNetlistText(kNetlist, "base");
  ProxyCost pc(nl, ResolveDefaults({}, nl));
  const CostBreakdown before = pc.Cost();
  EXPECT_THROW(pc.MoveNode(1, 1e308, 0), InfeasibleAction);
  EXPECT_THROW(pc.MoveNode(1, std::numeric_limits<double>::quiet_NaN(), 0), InfeasibleAction);
  EXPECT_EQ(pc.Cost().proxy_cost, before.proxy_cost);
  pc.MoveNode(1, 1e6, -1e6);  // far off the canvas but in range: clamped to edge cells
  EXPECT_FALSE(IsNaN(pc.Cost()));
}

// graph_spec_fuzz (tests/fuzz/corpus/graph_spec_fuzz/regression_resnet_huge_image.txt): the
// global average pool's work per output, h · w, was multiplied in int (3125000² overflows
// for image=100000000).
TEST(FuzzRegression, ResNetHugeImageAvgPool) {
  const graphs::ComputeGraph g = graphs::GraphFromSpec("resnet(image=100000000,batch=1,backward=0)").graph;
  int pool = -1;
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == "avgpool") pool = i;
  ASSERT_GE(pool, 0);
  EXPECT_DOUBLE_EQ(g.flops[pool], 3125000.0 * 3125000.0 * 2048);
}

}  // namespace
}  // namespace placerl::chip
