// Steps per second of the chip regulator (chip(mode=refine), docs/chip_regulator.md) on
// Ariane133 from the greedy start: one step = the current hard macro to a uniformly drawn legal
// cell (its own included), the exact incremental cost, the next macro's mask and — with maps —
// the observation's maps (occupancy, density, congestion, the cost-change map, current cell).
// Episodes (one pass over the hard macros) restart when they end; the reset is in the loop.
// The CPU column is the cost of one step (the policy's forward not included).
//   OMP_NUM_THREADS=1 build/bench/chip_regulator_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <random>

#include "env/chip/chip_env.h"
#include "env/registry.h"

namespace placerl {
namespace {

const char* kMaps[] = {"maps=false", "cost_map=wirelength", "cost_map=proxy", "cost_map=split"};

std::unique_ptr<env::Environment> Make(int maps) {
  return env::MakeEnvironment(
      "chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
      "plc=../shared/datasets/chip/ariane133_ng45/initial.plc,mode=refine," +
      std::string(kMaps[maps]) + ")");
}

void BM_RegulatorStep(benchmark::State& state) {
  auto e = Make(static_cast<int>(state.range(0)));
  state.SetLabel(std::string("ariane133, ") + kMaps[state.range(0)]);
  std::mt19937_64 rng(1);
  uint64_t seed = 0;
  std::vector<int32_t> legal;
  int64_t steps = 0;
  for (auto _ : state) {
    if (e->done()) e->Reset(++seed);
    legal.clear();
    const auto& m = e->action_mask();
    for (int32_t a = 0; a < static_cast<int32_t>(m.size()); ++a)
      if (m[a]) legal.push_back(a);
    benchmark::DoNotOptimize(e->Step(legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)]));
    ++steps;
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_RegulatorStep)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placerl
