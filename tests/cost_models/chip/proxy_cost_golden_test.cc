// The proxy cost on placements that exercise every branch of its definition (random
// hard/soft moves, pins on the canvas edge, grids from 3×3 to 50×50, smoothing 0–5 and
// non-integer, flipped orientations, non-square canvases, tiny netlists), against golden
// values computed by the open re-implementation (TILOS plc_client_os.py at 20eddb6, with
// the grid-index clamp). How they were made: tests/data/proxy_golden/README.md.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

TEST(ProxyCostGolden, EveryCaseMatchesReferenceImplementation) {
  const auto cases = nlohmann::json::parse(ReadFile("tests/data/proxy_golden/golden.json"));
  ASSERT_GE(cases.size(), 20u);
  std::unordered_map<std::string, Netlist> netlists;
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const std::string netlist_path = c.at("netlist"), plc_path = c.at("plc");
    if (!netlists.count(netlist_path)) netlists.emplace(netlist_path, ReadNetlist(netlist_path));
    Netlist nl = netlists.at(netlist_path);
    const PlcFile plc = ReadPlc(plc_path);
    ApplyPlc(plc, &nl, plc_path);
    CostWeights w;
    w.wirelength = c.at("weights")[0];
    w.density = c.at("weights")[1];
    w.congestion = c.at("weights")[2];
    const CostBreakdown got = EvaluateProxyCost(nl, ResolveDefaults(plc.settings, nl), w);
    const double hpwl = c.at("hpwl");
    EXPECT_NEAR(got.hpwl, hpwl, 1e-9 * std::max(1.0, hpwl));
    EXPECT_NEAR(got.wirelength_cost, c.at("wirelength_cost").get<double>(), 1e-9);
    EXPECT_NEAR(got.density_cost, c.at("density_cost").get<double>(), 1e-9);
    EXPECT_NEAR(got.congestion_cost, c.at("congestion_cost").get<double>(), 1e-9 * std::max(1.0, c.at("congestion_cost").get<double>()));
    EXPECT_NEAR(got.proxy_cost, c.at("proxy_cost").get<double>(), 1e-9 * std::max(1.0, c.at("proxy_cost").get<double>()));
  }
}

}  // namespace
}  // namespace placerl::chip
