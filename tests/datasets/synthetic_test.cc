// Tests of the seeded synthetic netlist generator: determinism, counts, structure, a legal
// canvas, round trip through the netlist text format, and a sane proxy cost.
#include "datasets/chip/synthetic.h"

#include <gtest/gtest.h>

#include <set>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

TEST(Synthetic, SameSeedSameBytes) {
  const std::string a = NetlistToText(GenerateSyntheticNetlist().netlist);
  const std::string b = NetlistToText(GenerateSyntheticNetlist().netlist);
  EXPECT_EQ(a, b);
  SyntheticOptions o;
  o.seed = 2;
  EXPECT_NE(a, NetlistToText(GenerateSyntheticNetlist(o).netlist));
}

TEST(Synthetic, DefaultCounts) {
  const SyntheticDesign d = GenerateSyntheticNetlist();
  const Netlist& nl = d.netlist;
  EXPECT_EQ(nl.hard_macros.size(), 40u);
  EXPECT_EQ(nl.soft_macros.size(), 200u);
  EXPECT_EQ(nl.ports.size(), 60u);
  EXPECT_EQ(nl.num_nets(), 1500);
  EXPECT_EQ(nl.stdcells.size(), 0u);
  EXPECT_EQ(nl.name[nl.soft_macros[0]], "Grp_0");
  // Several hard macro size classes.
  std::set<std::pair<double, double>> sizes;
  for (int32_t m : nl.hard_macros) sizes.emplace(nl.width[m], nl.height[m]);
  EXPECT_GE(sizes.size(), 3u);
  // Some soft-macro-driven nets are weighted.
  int weighted = 0;
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    const int32_t drv = nl.net_pins[nl.net_start[k]];
    if (nl.net_weight[k] > 1) {
      ++weighted;
      EXPECT_EQ(nl.type[drv], NodeType::kSoftMacroPin);
      EXPECT_EQ(nl.weight[drv], nl.net_weight[k]);
    }
  }
  EXPECT_GT(weighted, 50);
  // Every hard macro and port is connected.
  for (int32_t i : nl.hard_macros) EXPECT_GT(nl.node_net_start[i + 1], nl.node_net_start[i]);
  for (int32_t i : nl.ports) EXPECT_GT(nl.node_net_start[i + 1], nl.node_net_start[i]);
}

TEST(Synthetic, NetsAndDrivers) {
  SyntheticOptions o;
  o.seed = 7;
  o.num_nets = 900;
  const Netlist nl = GenerateSyntheticNetlist(o).netlist;
  std::vector<int> drives(nl.num_nodes(), 0);
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    EXPECT_GE(nl.net_start[k + 1] - nl.net_start[k], 2) << "net " << k;
    EXPECT_EQ(drives[nl.net_pins[nl.net_start[k]]]++, 0) << "node drives two nets";
    for (int32_t j = nl.net_start[k]; j < nl.net_start[k + 1]; ++j) {
      EXPECT_TRUE(nl.is_pin(nl.net_pins[j]));
    }
  }
}

TEST(Synthetic, InsideCanvasAndPortsOnBoundary) {
  const SyntheticDesign d = GenerateSyntheticNetlist();
  const Netlist& nl = d.netlist;
  const double W = d.settings.canvas_width, H = d.settings.canvas_height;
  ASSERT_GT(W, 0);
  for (int32_t m : nl.macros) {
    EXPECT_GE(nl.x[m] - nl.width[m] / 2, 0) << nl.name[m];
    EXPECT_LE(nl.x[m] + nl.width[m] / 2, W) << nl.name[m];
    EXPECT_GE(nl.y[m] - nl.height[m] / 2, 0) << nl.name[m];
    EXPECT_LE(nl.y[m] + nl.height[m] / 2, H) << nl.name[m];
  }
  for (int32_t p : nl.ports) {
    const bool on = nl.x[p] == 0 || nl.x[p] == W || nl.y[p] == 0 || nl.y[p] == H;
    EXPECT_TRUE(on) << nl.name[p];
    EXPECT_NE(nl.side[p], Side::kNone);
  }
  // Hard macros do not overlap each other in the initial placement.
  for (size_t a = 0; a < nl.hard_macros.size(); ++a) {
    for (size_t b = a + 1; b < nl.hard_macros.size(); ++b) {
      const int32_t i = nl.hard_macros[a], j = nl.hard_macros[b];
      const double ox = (nl.width[i] + nl.width[j]) / 2 - std::abs(nl.x[i] - nl.x[j]);
      const double oy = (nl.height[i] + nl.height[j]) / 2 - std::abs(nl.y[i] - nl.y[j]);
      EXPECT_FALSE(ox > 1e-9 && oy > 1e-9) << nl.name[i] << " overlaps " << nl.name[j];
    }
  }
}

TEST(Synthetic, RoundTripThroughText) {
  const SyntheticDesign d = GenerateSyntheticNetlist();
  const std::string text = NetlistToText(d.netlist);
  const Netlist back = ParseNetlistText(text, "synthetic.pb.txt");
  EXPECT_EQ(back.num_nodes(), d.netlist.num_nodes());
  EXPECT_EQ(back.num_nets(), d.netlist.num_nets());
  EXPECT_EQ(back.soft_macros.size(), 200u);
  EXPECT_EQ(back.hard_macros.size(), 40u);
  EXPECT_EQ(NetlistToText(back), text);
  ProxyCost a(d.netlist, d.settings), b(back, d.settings);
  EXPECT_DOUBLE_EQ(a.EvaluateFull().proxy_cost, b.EvaluateFull().proxy_cost);
}

TEST(Synthetic, CostIsInARealisticRange) {
  const SyntheticDesign d = GenerateSyntheticNetlist();
  ProxyCost cost(d.netlist, d.settings);
  const CostBreakdown c = cost.EvaluateFull();
  EXPECT_GT(c.wirelength_cost, 0);
  EXPECT_LT(c.wirelength_cost, 1);
  EXPECT_GT(c.density_cost, 0.1);
  EXPECT_GT(c.congestion_cost, 0.3);
  EXPECT_LT(c.congestion_cost, 5);
}

TEST(Synthetic, BadOptions) {
  SyntheticOptions o;
  o.utilization = 0;
  EXPECT_THROW(GenerateSyntheticNetlist(o), ConfigError);
  o = {};
  o.num_nets = 10;
  EXPECT_THROW(GenerateSyntheticNetlist(o), ConfigError);
  o = {};
  o.num_hard_macros = -1;
  EXPECT_THROW(GenerateSyntheticNetlist(o), ConfigError);
}

}  // namespace
}  // namespace placerl::chip

namespace placerl::chip {
namespace {

TEST(SyntheticSpec, KeysOverrideTheDefaultsAndTheSeedStays) {
  SyntheticOptions o;
  o.seed = 9;
  ParseSyntheticSpec("macros=100,soft=50,ports=8,nets=700,utilization=0.5,global=0.1,weighted=0,grid=24x20", &o);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.num_hard_macros, 100);
  EXPECT_EQ(o.num_soft_macros, 50);
  EXPECT_EQ(o.num_ports, 8);
  EXPECT_EQ(o.num_nets, 700);
  EXPECT_DOUBLE_EQ(o.utilization, 0.5);
  EXPECT_DOUBLE_EQ(o.global_net_fraction, 0.1);
  EXPECT_DOUBLE_EQ(o.weighted_net_fraction, 0.0);
  EXPECT_EQ(o.cols, 24);
  EXPECT_EQ(o.rows, 20);
  const SyntheticDesign d = GenerateSyntheticNetlist(o);
  EXPECT_EQ(static_cast<int>(d.netlist.hard_macros.size()), 100);
  EXPECT_EQ(static_cast<int>(d.netlist.soft_macros.size()), 50);
  EXPECT_EQ(d.settings.cols, 24);
  EXPECT_EQ(d.settings.rows, 20);
  SyntheticOptions same;
  ParseSyntheticSpec("", &same);  // empty: no change
  EXPECT_EQ(same.num_hard_macros, SyntheticOptions{}.num_hard_macros);
}

TEST(SyntheticSpec, BadItemsAreNamed) {
  for (const char* bad : {"macros", "macros=x", "macros=-1", "foo=1", "grid=3", "grid=0x3", "grid=3x", "utilization=2",
                          "utilization=0", "nets=1e3", "global=nan"}) {
    SCOPED_TRACE(bad);
    SyntheticOptions o;
    try {
      ParseSyntheticSpec(bad, &o);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace placerl::chip
