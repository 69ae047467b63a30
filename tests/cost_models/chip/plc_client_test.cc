// Circuit Training's PlacementCost API over the exact proxy cost (cost_models/chip/plc_client.h):
// after restore_placement every golden case of TILOS's plc_client_os.py (tests/data/proxy_golden)
// gives the reference's four numbers; moves, orientations and settings changes give what a fresh
// full evaluation of the same placement gives; a saved .plc restores to the same costs; bad
// indices, orientations and settings are one-line errors that leave the object unchanged.
#include "cost_models/chip/plc_client.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "tests/experiments/test_dir.h"

namespace placerl::chip {
namespace {

TEST(PlcClient, RestorePlacementGivesTheReferenceCostsOnEveryGoldenCase) {
  const auto cases = nlohmann::json::parse(ReadFile("tests/data/proxy_golden/golden.json"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    PlcClient plc(c.at("netlist").get<std::string>());
    plc.RestorePlacement(c.at("plc").get<std::string>());
    const double hpwl = c.at("hpwl");
    EXPECT_NEAR(plc.Wirelength(), hpwl, 1e-9 * std::max(1.0, hpwl));
    EXPECT_NEAR(plc.WirelengthCost(), c.at("wirelength_cost").get<double>(), 1e-9);
    EXPECT_NEAR(plc.DensityCost(), c.at("density_cost").get<double>(), 1e-9);
    const double cong = c.at("congestion_cost");
    EXPECT_NEAR(plc.CongestionCost(), cong, 1e-9 * std::max(1.0, cong));
  }
}

double FreshProxy(const PlcClient& plc) {
  Netlist nl = plc.netlist();
  return EvaluateProxyCost(nl, plc.settings(), {}).proxy_cost;
}

TEST(PlcClient, MovesOrientationsAndSettingsAreWhatAFullEvaluationGives) {
  PlcClient plc("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  plc.RestorePlacement("../shared/datasets/chip/ariane133_ng45/initial.plc");
  std::mt19937_64 rng(5);
  const auto [w, h] = plc.CanvasWidthHeight();
  const auto [cols, rows] = plc.GridColumnsRows();
  std::vector<int32_t> hard;
  for (int32_t m : plc.MacroIndices())
    if (plc.IsNodeHardMacro(m)) hard.push_back(m);
  ASSERT_EQ(hard.size(), 133u);
  for (int i = 0; i < 40; ++i) {
    const int32_t m = hard[rng() % hard.size()];
    if (i % 3 == 0) {
      plc.PlaceNode(m, static_cast<int32_t>(rng() % (cols * rows)));
    } else if (i % 3 == 1) {
      plc.UpdateNodeCoords(m, std::uniform_real_distribution<double>(0, w)(rng),
                           std::uniform_real_distribution<double>(0, h)(rng));
    } else {
      plc.UpdateMacroOrientation(m, i % 2 ? "FS" : "S");
    }
  }
  const CostBreakdown c = plc.Costs();
  // The incremental cost equals a full evaluation of the placement it holds.
  {
    Netlist nl = plc.netlist();
    // netlist() holds the placement of the last settings change; copy the current one in.
    for (int32_t m : plc.MacroIndices()) {
      const auto [x, y] = plc.NodeLocation(m);
      nl.x[m] = x;
      nl.y[m] = y;
      ParseOrientation(plc.MacroOrientation(m), &nl.orientation[m]);
    }
    EXPECT_NEAR(EvaluateProxyCost(nl, plc.settings(), {}).proxy_cost, c.proxy_cost, 1e-9);
  }
  EXPECT_NEAR(c.proxy_cost, c.wirelength_cost + 0.5 * c.density_cost + 0.5 * c.congestion_cost, 1e-12);
  // A settings change keeps the placement and re-scores it.
  plc.SetPlacementGrid(20, 20);
  EXPECT_EQ(plc.GridColumnsRows(), (std::pair<int32_t, int32_t>{20, 20}));
  EXPECT_NEAR(plc.Costs().proxy_cost, FreshProxy(plc), 1e-9);
  EXPECT_NEAR(plc.WirelengthCost(), c.wirelength_cost, 1e-12);  // the wirelength does not depend on the grid
  // Saved and restored: the same costs.
  testing::TempDir tmp;
  const std::string saved = tmp / "moved.plc";
  plc.SavePlacement(saved, "written by a test\nsecond line");
  const std::string text = ReadFile(saved);
  EXPECT_NE(text.find("# written by a test\n# second line\n"), std::string::npos);
  PlcClient again("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  again.RestorePlacement(saved);
  EXPECT_EQ(again.GridColumnsRows(), plc.GridColumnsRows());
  EXPECT_NEAR(again.Costs().proxy_cost, plc.Costs().proxy_cost, 1e-6);
}

TEST(PlcClient, NodeQueriesFollowCircuitTrainingsNumbering) {
  PlcClient plc("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  const int32_t m = plc.MacroIndices()[0];
  EXPECT_EQ(plc.NodeIndex(plc.NodeName(m)), m);
  EXPECT_EQ(plc.NodeType(m), "MACRO");
  EXPECT_GT(plc.NodeWidthHeight(m).first, 0);
  int ports = 0, pins = 0;
  for (int32_t i = 0; i < plc.NumNodes(); ++i) {
    ports += plc.NodeType(i) == "PORT";
    pins += plc.NodeType(i) == "MACRO_PIN";
  }
  EXPECT_EQ(ports, static_cast<int>(plc.netlist().ports.size()));
  EXPECT_GT(pins, 0);
  // A macro pin sits at its macro's centre plus its offset.
  const int32_t pin = plc.netlist().macro_pins[plc.netlist().macro_pin_start[m]];
  plc.UpdateNodeCoords(m, 100, 200);
  Orientation o;
  ASSERT_TRUE(ParseOrientation(plc.MacroOrientation(m), &o));
  double ox = 0, oy = 0;
  OrientOffset(o, plc.netlist().pin_dx[pin], plc.netlist().pin_dy[pin], &ox, &oy);
  EXPECT_EQ(plc.NodeLocation(pin), (std::pair<double, double>{100 + ox, 200 + oy}));
  plc.UpdateMacroOrientation(m, "FS");
  OrientOffset(Orientation::kFS, plc.netlist().pin_dx[pin], plc.netlist().pin_dy[pin], &ox, &oy);
  EXPECT_EQ(plc.NodeLocation(pin), (std::pair<double, double>{100 + ox, 200 + oy}));
  EXPECT_FALSE(plc.IsNodeFixed(m));
  plc.FixNodeCoord(m);
  EXPECT_TRUE(plc.IsNodeFixed(m));
  plc.UnfixNodeCoord(m);
  EXPECT_FALSE(plc.IsNodeFixed(m));
}

TEST(PlcClient, BadInputIsAOneLineErrorAndChangesNothing) {
  PlcClient plc("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  plc.RestorePlacement("../shared/datasets/chip/ariane133_ng45/initial.plc");
  const double before = plc.Costs().proxy_cost;
  const int32_t m = plc.MacroIndices()[0];
  EXPECT_THROW(plc.NodeName(-1), ConfigError);
  EXPECT_THROW(plc.NodeType(plc.NumNodes()), ConfigError);
  EXPECT_THROW(plc.PlaceNode(plc.netlist().ports[0], 0), ConfigError);
  EXPECT_THROW(plc.PlaceNode(m, 1 << 30), ConfigError);
  EXPECT_THROW(plc.UpdateMacroOrientation(m, "sideways"), ConfigError);
  EXPECT_THROW(plc.UpdateNodeCoords(m, NAN, 0), ConfigError);
  EXPECT_THROW(plc.SetPlacementGrid(0, 5), ConfigError);
  EXPECT_THROW(plc.SetCanvasSize(-1, 5), ConfigError);
  EXPECT_THROW(plc.SetRoutesPerMicron(NAN, 5), ConfigError);
  EXPECT_THROW(plc.NodeIndex("no such node"), ConfigError);
  EXPECT_THROW(plc.RestorePlacement("/nonexistent.plc"), Error);
  EXPECT_THROW(PlcClient("/nonexistent.pb.txt"), Error);
  EXPECT_EQ(plc.Costs().proxy_cost, before);
  try {
    plc.UpdateMacroOrientation(m, "sideways");
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace placerl::chip
