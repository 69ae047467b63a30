// Circuit Training's PlacementCost API over the exact proxy cost (cost_models/chip/plc_client.h):
// after restore_placement every golden case of TILOS's plc_client_os.py (tests/data/proxy_golden)
// gives the reference's four numbers; moves, orientations and settings changes give what a fresh
// full evaluation of the same placement gives; a saved .plc restores to the same costs; bad
// indices, orientations and settings are one-line errors that leave the object unchanged; masks,
// placed flags, grid cells and the macro adjacency equal TILOS's (tests/data/plc_api_golden).
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

// CT's environment API: masks, placed flags, grid cells and the macro adjacency against TILOS's
// plc_client_os.py (tests/data/plc_api_golden: the same operations in the same order).
TEST(PlcClient, MasksPlacedFlagsAndAdjacencyEqualTheReference) {
  const auto cases = nlohmann::json::parse(ReadFile("tests/data/plc_api_golden/golden.json"));
  ASSERT_GE(cases.size(), 8u);
  int masks = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    PlcClient plc(c.at("netlist").get<std::string>());
    plc.RestorePlacement(c.at("plc").get<std::string>());
    const size_t m = c.at("adjacency_size");
    std::vector<double> expected(m * m, 0.0);
    const nlohmann::json* nonzero = &c.at("adjacency_nonzero");
    if (nonzero->is_string())  // the same netlist as the case it names
      for (const auto& other : cases)
        if (other.at("name") == *nonzero) nonzero = &other.at("adjacency_nonzero");
    ASSERT_TRUE(nonzero->is_array());
    for (const auto& e : *nonzero) expected[e[0].get<size_t>() * m + e[1].get<size_t>()] = e[2];
    const std::vector<double> adj = plc.MacroAdjacency();
    ASSERT_EQ(adj.size(), expected.size());
    for (size_t i = 0; i < adj.size(); ++i) ASSERT_NEAR(adj[i], expected[i], 1e-9) << i;
    // The macros and the clustered ports (the macro block is the adjacency above).
    const size_t k = c.at("clustered_size");
    std::vector<double> clustered(k * k, 0.0);
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < m; ++j) clustered[i * k + j] = expected[i * m + j];
    for (const auto& e : c.at("clustered_port_nonzero")) clustered[e[0].get<size_t>() * k + e[1].get<size_t>()] = e[2];
    const auto [got, cells] = plc.MacroAndClusteredPortAdjacency();
    EXPECT_EQ(cells, c.at("clustered_cells").get<std::vector<int32_t>>());
    ASSERT_EQ(got.size(), clustered.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], clustered[i], 1e-9) << i;
    for (const auto& op : c.at("ops")) {
      const std::string what = op[0];
      if (what == "mask") {
        EXPECT_EQ(plc.NodeMask(op[1]), op[2].get<std::vector<int32_t>>()) << "node " << op[1];
        ++masks;
      } else if (what == "is_placed") {
        EXPECT_EQ(plc.IsNodePlaced(op[1]), op[2].get<bool>()) << "node " << op[1];
      } else if (what == "unplace_all") {
        plc.UnplaceAllNodes();
      } else if (what == "place") {
        plc.PlaceNode(op[1], op[2]);
      } else if (what == "unplace") {
        plc.UnplaceNode(op[1]);
      }
    }
    for (const auto& [node, cell] : c.at("grid_cell_of_node_after_ops").items())
      EXPECT_EQ(plc.GridCellOfNode(std::stoi(node)), cell.get<int32_t>()) << node;
  }
  EXPECT_GE(masks, 50);
}

TEST(PlcClient, FanOutsPlaceNodeOnFixedMacrosAndFd) {
  PlcClient plc("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz");
  plc.RestorePlacement("../shared/datasets/chip/ariane133_ng45/initial.plc");
  const Netlist& nl = plc.netlist();
  for (int32_t k = 0; k < nl.num_nets(); k += 97) {
    const int32_t driver = nl.net_pins[nl.net_start[k]];
    EXPECT_EQ(plc.FanOutsOfNode(driver),
              std::vector<int32_t>(nl.net_pins.begin() + nl.net_start[k] + 1, nl.net_pins.begin() + nl.net_start[k + 1]));
  }
  EXPECT_TRUE(plc.FanOutsOfNode(nl.hard_macros[0]).empty());
  // place_node leaves a fixed macro where it is (regression: it used to move it).
  const int32_t m = nl.hard_macros[0];
  plc.FixNodeCoord(m);
  const auto before = plc.NodeLocation(m);
  plc.PlaceNode(m, 0);
  EXPECT_EQ(plc.NodeLocation(m), before);
  plc.UnplaceAllNodes();
  EXPECT_TRUE(plc.IsNodePlaced(m));  // fixed: keeps its flag
  EXPECT_FALSE(plc.IsNodePlaced(nl.hard_macros[1]));
  EXPECT_THROW(plc.IsNodePlaced(nl.macro_pins[0]), ConfigError);
  EXPECT_THROW(plc.GridCellOfNode(nl.ports[0]), ConfigError);
  // FD moves soft macros only.
  const auto hard_before = plc.NodeLocation(nl.hard_macros[1]);
  const auto soft_before = plc.NodeLocation(nl.soft_macros[0]);
  ForceDirectedOptions o;
  o.num_steps = {20};
  o.move_distance_factors = {1.0};
  o.attract_factor = {100.0};
  o.repel_factor = {0.0};
  plc.OptimizeStdcells(o);
  EXPECT_EQ(plc.NodeLocation(nl.hard_macros[1]), hard_before);
  EXPECT_NE(plc.NodeLocation(nl.soft_macros[0]), soft_before);
  o.repel_factor = {};
  EXPECT_THROW(plc.OptimizeStdcells(o), ConfigError);
  EXPECT_THROW(plc.CreateBlockage(5, 5, 1, 1, 0.5), ConfigError);
  plc.CreateBlockage(1, 2, 3, 4, 0.5);
  ASSERT_EQ(plc.Blockages().size(), 1u);
  EXPECT_EQ(plc.Blockages()[0].maxy, 4);
}

}  // namespace
}  // namespace placerl::chip
