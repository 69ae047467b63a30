// Speed of force-directed soft-macro placement on Ariane133-NG45 (782 soft macros, CT's
// 300-step schedule), hard macros where initial.plc puts them.
// Run from the repository root: ./build/bench/fd_placer_bench
#include <benchmark/benchmark.h>

#include <vector>

#include "cost_models/chip/fd_placer.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "tests/cost_models/chip/ariane_bench_data.h"

namespace placerl::chip {
namespace {

const char* kNetlist = kArianeNetlist;
const char* kPlc = kArianePlc;

// Building the attraction structure (once per netlist).
void BM_FdConstruct(benchmark::State& st) {
  for (auto _ : st) {
    ForceDirectedPlacer fd(Data().nl, Data().s);
    benchmark::DoNotOptimize(fd.num_soft());
  }
}
BENCHMARK(BM_FdConstruct)->Unit(benchmark::kMillisecond);

// One FD call on position arrays (what an episode end costs without the cost update).
void BM_FdRunArrays(benchmark::State& st) {
  const Netlist& nl = Data().nl;
  ForceDirectedPlacer fd(nl, Data().s);
  std::vector<double> x = nl.x, y = nl.y;
  for (auto _ : st) {
    fd.Run(nl.orientation.data(), x.data(), y.data());
    benchmark::DoNotOptimize(x.data());
  }
}
BENCHMARK(BM_FdRunArrays)->Unit(benchmark::kMillisecond);

// One FD call through the proxy cost (soft macros written back with MoveNode) + cost read.
void BM_FdRunProxyCost(benchmark::State& st) {
  const Netlist& nl = Data().nl;
  ForceDirectedPlacer fd(nl, Data().s);
  ProxyCost pc(nl, Data().s);
  for (auto _ : st) {
    // Start each iteration from initial.plc's soft-macro positions so every soft macro moves.
    st.PauseTiming();
    for (int32_t m : nl.soft_macros) pc.MoveNode(m, nl.x[m], nl.y[m]);
    pc.Cost();
    st.ResumeTiming();
    fd.Run(&pc);
    benchmark::DoNotOptimize(pc.Cost().proxy_cost);
  }
}
BENCHMARK(BM_FdRunProxyCost)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placerl::chip
