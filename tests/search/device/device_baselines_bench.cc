// Placement wall time of every device baseline on layered random graphs (width 100, fan-in ≤ 3,
// seed 1) of 1,000 and 10,000 ops over 4 plain devices (10 TFLOP/s) with Baechi's link;
// counters report the simulated step time of the placement (ms) and how many devices it uses;
// then the memory-aware placers with devices of 0.4 × the graph's bytes, and m-SCT's LP window.
// Baechi's claim is planning in seconds (device_placement_notes §5.5).
//   build/bench/device_baselines_bench --benchmark_min_time=0.05
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "datasets/util/errors.h"
#include "search/device/baselines.h"

namespace placerl::search {
namespace {

const graphs::ComputeGraph& Layered(int ops) {
  static std::map<int, std::unique_ptr<graphs::ComputeGraph>> cache;
  auto& g = cache[ops];
  if (!g) g = std::make_unique<graphs::ComputeGraph>(graphs::MakeLayeredRandomGraph(ops, 100, 3, 1));
  return *g;
}

void BM_Place(benchmark::State& state, const char* method) {
  const graphs::ComputeGraph& g = Layered(static_cast<int>(state.range(0)));
  const perf::SimConfig cfg =
      perf::BaechiConfig(std::vector<perf::SimDevice>(4, perf::PlainDevice(1e13, 1e12)));
  std::vector<int> p;
  for (auto _ : state) {
    p = PlaceDeviceBaseline(method, g, cfg);
    benchmark::DoNotOptimize(p.data());
  }
  state.counters["step_ms"] = perf::SimulatePlacement(g, p, cfg).makespan * 1e3;
  state.counters["devices_used"] = static_cast<double>(std::set<int>(p.begin(), p.end()).size());
}

#define PLACERL_PLACE_BENCH(name)                                                          \
  BENCHMARK_CAPTURE(BM_Place, name, #name)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)

PLACERL_PLACE_BENCH(single);
PLACERL_PLACE_BENCH(round_robin);
PLACERL_PLACE_BENCH(heft);
PLACERL_PLACE_BENCH(m_topo);
PLACERL_PLACE_BENCH(m_etf);
PLACERL_PLACE_BENCH(m_sct);
PLACERL_PLACE_BENCH(metis);
PLACERL_PLACE_BENCH(scotch);

// Memory-bound: each device holds `fraction` × the graph's bytes (params + outputs + temps), so
// no single device fits and the memory-aware placers must split; at 0.2 the static ledger has
// no room (4 × 0.2 < 1) and only MemoryAccounting::kSchedule can place.
void BM_PlaceTight(benchmark::State& state, const char* method, MemoryAccounting memory,
                   double fraction) {
  const graphs::ComputeGraph& g = Layered(static_cast<int>(state.range(0)));
  double total = 0;
  for (int i = 0; i < g.num_ops(); ++i)
    total += g.param_bytes[i] + g.output_bytes[i] + g.temp_bytes[i];
  const perf::SimConfig cfg = perf::BaechiConfig(
      std::vector<perf::SimDevice>(4, perf::PlainDevice(1e13, 1e12, fraction * total)));
  const std::string m = method;
  std::vector<int> p;
  try {
    for (auto _ : state) {
      if (m == "m_etf") {
        p = PlaceMEtf(g, cfg, MEtfOptions{memory});
      } else if (m == "m_sct") {
        MSctOptions o;
        o.memory = memory;
        p = PlaceMSct(g, cfg, o);
      } else {
        p = PlaceMTopo(g, cfg);
      }
      benchmark::DoNotOptimize(p.data());
    }
  } catch (const InfeasibleAction& e) {
    state.SkipWithError(e.what());
    return;
  }
  const perf::SimResult r = perf::SimulatePlacement(g, p, cfg);
  state.counters["step_ms"] = r.makespan * 1e3;
  state.counters["oom"] = r.oom;
  state.counters["devices_used"] = static_cast<double>(std::set<int>(p.begin(), p.end()).size());
}
constexpr MemoryAccounting kStatic = MemoryAccounting::kStatic;
constexpr MemoryAccounting kSchedule = MemoryAccounting::kSchedule;
BENCHMARK_CAPTURE(BM_PlaceTight, m_topo_04, "m_topo", kStatic, 0.4)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlaceTight, m_etf_04, "m_etf", kStatic, 0.4)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlaceTight, m_sct_04, "m_sct", kStatic, 0.4)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlaceTight, m_etf_schedule_02, "m_etf", kSchedule, 0.2)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlaceTight, m_sct_schedule_02, "m_sct", kSchedule, 0.2)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// m-SCT's LP window (MSctOptions::lp_window_ops) against placement time and quality.
void BM_MSctWindow(benchmark::State& state) {
  const graphs::ComputeGraph& g = Layered(static_cast<int>(state.range(0)));
  const perf::SimConfig cfg =
      perf::BaechiConfig(std::vector<perf::SimDevice>(4, perf::PlainDevice(1e13, 1e12)));
  MSctOptions options;
  options.lp_window_ops = static_cast<int>(state.range(1));
  std::vector<int> p;
  for (auto _ : state) {
    p = PlaceMSct(g, cfg, options);
    benchmark::DoNotOptimize(p.data());
  }
  state.counters["step_ms"] = perf::SimulatePlacement(g, p, cfg).makespan * 1e3;
}
BENCHMARK(BM_MSctWindow)
    ->Args({1000, 250})
    ->Args({1000, 0})
    ->Args({2000, 0})
    ->Args({10000, 1000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placerl::search
