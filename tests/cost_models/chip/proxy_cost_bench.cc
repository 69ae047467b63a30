// Speed of the proxy cost on Ariane133 (19,888 nodes): netlist parse (gzipped), one full
// evaluation, and one incremental hard-macro move followed by a cost read. Run from the
// repository root: ./build/bench/proxy_cost_bench
#include <benchmark/benchmark.h>

#include <random>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "tests/cost_models/chip/ariane_bench_data.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

const char* kNetlist = kArianeNetlist;
const char* kPlc = kArianePlc;

void BM_ReadNetlistGz(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(ReadNetlist(kNetlist).num_nodes());
}
BENCHMARK(BM_ReadNetlistGz)->Unit(benchmark::kMillisecond);

void BM_GunzipOnly(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(ReadFile(kNetlist).size());
}
BENCHMARK(BM_GunzipOnly)->Unit(benchmark::kMillisecond);

void BM_FullEvaluation(benchmark::State& st) {
  ProxyCost pc(Data().nl, Data().s);
  for (auto _ : st) benchmark::DoNotOptimize(pc.EvaluateFull().proxy_cost);
}
BENCHMARK(BM_FullEvaluation)->Unit(benchmark::kMicrosecond);

// Moves a random hard macro to the centre of a random grid cell (as the RL environment
// places macros), optionally reading the cost after each move.
void RandomCellMoves(benchmark::State& st, bool read_cost) {
  ProxyCost pc(Data().nl, Data().s);
  const auto& hm = Data().nl.hard_macros;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> pick(0, hm.size() - 1);
  std::uniform_int_distribution<int> col(0, Data().s.cols - 1), row(0, Data().s.rows - 1);
  for (auto _ : st) {
    pc.MoveNode(hm[pick(rng)], (col(rng) + 0.5) * pc.grid_width(), (row(rng) + 0.5) * pc.grid_height());
    if (read_cost) benchmark::DoNotOptimize(pc.Cost().proxy_cost);
  }
}

void BM_IncrementalMacroMove(benchmark::State& st) { RandomCellMoves(st, true); }
BENCHMARK(BM_IncrementalMacroMove)->Unit(benchmark::kMicrosecond);

// The two halves of the above: the move alone (nets re-measured and re-routed, density
// and blockage of the macro updated), and reading the cost (prefix sums, smoothing, the
// two top-k selections over the grid).
void BM_IncrementalMoveOnly(benchmark::State& st) { RandomCellMoves(st, false); }
BENCHMARK(BM_IncrementalMoveOnly)->Unit(benchmark::kMicrosecond);

void BM_CostRead(benchmark::State& st) {
  ProxyCost pc(Data().nl, Data().s);
  for (auto _ : st) benchmark::DoNotOptimize(pc.Cost().proxy_cost);
}
BENCHMARK(BM_CostRead)->Unit(benchmark::kMicrosecond);

// A local move (to a neighbouring grid cell), as simulated annealing and coordinate
// descent make them, followed by a cost read.
void BM_IncrementalLocalMove(benchmark::State& st) {
  ProxyCost pc(Data().nl, Data().s);
  const auto& hm = Data().nl.hard_macros;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> pick(0, hm.size() - 1);
  std::uniform_int_distribution<int> step(-1, 1);
  for (auto _ : st) {
    const int32_t m = hm[pick(rng)];
    pc.MoveNode(m, pc.x(m) + step(rng) * pc.grid_width(), pc.y(m) + step(rng) * pc.grid_height());
    benchmark::DoNotOptimize(pc.Cost().proxy_cost);
  }
}
BENCHMARK(BM_IncrementalLocalMove)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placerl::chip
