// Golden tests: our placed-graph simulator against the outputs of the published simulators
// (Placeto/Park tf_sim.py and Baechi's VirtualScheduler), recorded offline by
// tests/data/sim_golden/gen_sim_golden.py — see tests/data/sim_golden/README.md for the
// repositories, commits, input mapping and how to regenerate. Paths are relative to the
// repository root (the test working directory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"

namespace placerl::perf {
namespace {

const char* kDir = "tests/data/sim_golden";

struct Case {
  std::string name;
  graphs::ComputeGraph graph;
  nlohmann::json json;
};

std::vector<Case> LoadCases() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kDir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const std::string& f : files) {
    std::ifstream in(f);
    Case c;
    c.json = nlohmann::json::parse(in);
    c.name = std::filesystem::path(f).stem().string();
    c.graph = graphs::ReadComputeGraph(std::string(kDir) + "/" + c.json["graph"].get<std::string>());
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<SimDevice> Devices(int n) {
  // Every op has a given time; the rates only have to be valid.
  return std::vector<SimDevice>(n, PlainDevice(1e12, 1e12));
}

// Reference µs → seconds; relative tolerance 1e-9 of the reference makespan (the references
// accumulate in µs doubles, we in seconds: only rounding differs).
void ExpectSchedule(const SimResult& r, const nlohmann::json& ref, double ref_makespan_us,
                    const std::string& what) {
  const double tol = 1e-9 * ref_makespan_us * 1e-6 + 1e-15;
  const auto& start = ref["op_start_us"];
  const auto& end = ref["op_end_us"];
  ASSERT_EQ(start.size(), r.op_start.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < start.size(); ++i) {
    if (std::abs(r.op_start[i] - start[i].get<double>() * 1e-6) > tol ||
        std::abs(r.op_end[i] - end[i].get<double>() * 1e-6) > tol) {
      if (++bad <= 3)
        ADD_FAILURE() << what << ": op " << i << " start " << r.op_start[i] * 1e6 << " µs, end "
                      << r.op_end[i] * 1e6 << " µs; reference " << start[i] << ", " << end[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

TEST(PlacedGraphSimGolden, CasesPresent) {
  const std::vector<Case> cases = LoadCases();
  EXPECT_EQ(cases.size(), 8u);
  int placements = 0, baechi = 0;
  for (const Case& c : cases) {
    for (const auto& p : c.json["placements"]) {
      ++placements;
      baechi += p.contains("baechi") ? 1 : 0;
    }
  }
  EXPECT_EQ(placements, 26);
  EXPECT_EQ(baechi, 24);
}

// Placeto/Park tf_sim.py Simulator.simulate: per-op start/end and makespan (= last op end),
// and busy_until = the simulator's returned run time (which counts the trailing δ1 gap and
// δ2 bus hold).
TEST(PlacedGraphSimGolden, PlacetoPresetMatchesParkSimulator) {
  for (const Case& c : LoadCases()) {
    const int nd = c.json["devices"].get<int>();
    Simulator sim(c.graph, PlacetoConfig(Devices(nd)));
    for (const auto& p : c.json["placements"]) {
      const std::string what = c.name + "/" + p["name"].get<std::string>() + " (Placeto)";
      const auto& ref = p["placeto"];
      const SimResult& r = sim.Run(p["placement"].get<std::vector<int>>());
      const double mk = ref["max_op_end_us"].get<double>(), rt = ref["run_time_us"].get<double>();
      EXPECT_NEAR(r.makespan, mk * 1e-6, 1e-9 * mk * 1e-6) << what;
      EXPECT_NEAR(r.busy_until, rt * 1e-6, 1e-9 * rt * 1e-6) << what;
      ExpectSchedule(r, ref, mk, what);
    }
  }
}

// Baechi placer/virtual_scheduler.py VirtualScheduler.run with the README's comm cost
// round(0.0001754·B + 134) µs (exactly 134 + B/5700 µs for the recorded sizes): makespan and
// per-op start/end. The preset uses ready_list_order (Baechi's global (ready, topo order)
// list; the graphs are written in Baechi's topological order, so op index = topo_order).
TEST(PlacedGraphSimGolden, BaechiPresetMatchesVirtualScheduler) {
  for (const Case& c : LoadCases()) {
    const int nd = c.json["devices"].get<int>();
    const SimConfig cfg = BaechiConfig(Devices(nd));
    EXPECT_TRUE(cfg.ready_list_order);
    Simulator sim(c.graph, cfg);
    for (const auto& p : c.json["placements"]) {
      if (!p.contains("baechi")) continue;
      const std::string what = c.name + "/" + p["name"].get<std::string>() + " (Baechi)";
      const auto& ref = p["baechi"];
      const SimResult& r = sim.Run(p["placement"].get<std::vector<int>>());
      const double mk = ref["makespan_us"].get<double>();
      EXPECT_NEAR(r.makespan, mk * 1e-6, 1e-9 * mk * 1e-6) << what;
      ExpectSchedule(r, ref, mk, what);
    }
  }
}

}  // namespace
}  // namespace placerl::perf

namespace placerl::perf {
namespace {

// With ready_list_order = false (event-driven) the shared channels are booked in producer
// FINISH order, Baechi books them in producer (ready time, topo order) order
// (docs/simulator.md). Both agree whenever no two transfers compete for a channel out of
// that order — every hand-made case here — and differ on the multi-device random DAGs.
TEST(PlacedGraphSimGolden, BaechiEventOrderDiffersOnlyByChannelBookingOrder) {
  std::vector<std::string> differ;
  for (const Case& c : LoadCases()) {
    const int nd = c.json["devices"].get<int>();
    SimConfig cfg = BaechiConfig(Devices(nd));
    cfg.ready_list_order = false;
    Simulator sim(c.graph, cfg);
    for (const auto& p : c.json["placements"]) {
      if (!p.contains("baechi")) continue;
      const SimResult& r = sim.Run(p["placement"].get<std::vector<int>>());
      const double mk = p["baechi"]["makespan_us"].get<double>();
      const std::string name = c.name + "/" + p["name"].get<std::string>();
      if (std::abs(r.makespan - mk * 1e-6) > 1e-9 * mk * 1e-6) differ.push_back(name);
    }
  }
  const std::vector<std::string> expected = {
      "layered30/round_robin", "layered30/random_0",  "layered45/round_robin",
      "layered45/random_0",    "layered45/random_1",  "layered60/round_robin",
      "layered60/random_0",    "layered60/random_1"};
  EXPECT_EQ(differ, expected);
}

}  // namespace
}  // namespace placerl::perf
