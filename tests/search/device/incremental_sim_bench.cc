// Cost of re-simulating a placement after one co-location group moves (the regulator's and the
// local search's move), with the simulator's incremental re-simulation on (arg 1) and off (arg
// 0, a full simulation every move: the cost before it existed). Rows of
// docs/device_leaderboard.md, unfused, on k80(gpus=k,memory_fraction=0.39); the start places
// group i on device i mod k; each iteration moves a seed-drawn group to a seed-drawn other GPU
// and simulates. The CPU column is the cost of one move; `simulated` is the mean fraction of op
// finishes a move simulated (a group is read from the finish of the earliest producer of any of
// its ops: TensorFlow's groups hold an op with its gradient, so a move resumes in the forward
// pass).
//   OMP_NUM_THREADS=1 build/bench/incremental_sim_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/graph_spec.h"

namespace placerl {
namespace {

const char* kGraphs[] = {"rnnlm", "nmt(layers=4)", "inception_v3", "nmt(layers=2)"};
const int kGpus[] = {2, 4, 4, 2};

void BM_GroupMove(benchmark::State& state) {
  const int row = static_cast<int>(state.range(0));
  const graphs::ComputeGraph g = graphs::GraphFromSpec(kGraphs[row]).graph;
  const perf::Machine m =
      perf::MachineFromSpec("k80(gpus=" + std::to_string(kGpus[row]) + ",memory_fraction=0.39)");
  perf::Simulator sim(g, m.sim);
  sim.set_incremental(state.range(1) != 0);
  const auto groups = graphs::ColocationMembers(g);
  const int nd = kGpus[row];  // the GPUs (the CPU is the last device)
  std::vector<int> dev(g.num_ops());
  for (size_t k = 0; k < groups.size(); ++k)
    for (int o : groups[k]) dev[o] = static_cast<int>(k % nd);
  sim.Run(dev);
  std::mt19937_64 rng(1);
  double fraction = 0;
  int64_t moves = 0;
  for (auto _ : state) {
    const auto& members = groups[rng() % groups.size()];
    const int d = (dev[members[0]] + 1 + static_cast<int>(rng() % (nd - 1))) % nd;
    for (int o : members) dev[o] = d;
    benchmark::DoNotOptimize(sim.Run(dev).makespan);
    fraction += static_cast<double>(sim.last_finishes_simulated()) / g.num_ops();
    ++moves;
  }
  state.SetLabel(std::string(kGraphs[row]) + " on " + std::to_string(nd) + " GPUs, " + std::to_string(g.num_ops()) +
                 " ops, " + std::to_string(groups.size()) + " groups");
  state.counters["simulated"] = moves > 0 ? fraction / moves : 0;
}

BENCHMARK(BM_GroupMove)
    ->Args({0, 0})->Args({0, 1})->Args({3, 0})->Args({3, 1})->Args({1, 0})->Args({1, 1})->Args({2, 0})->Args({2, 1})
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();

}  // namespace
}  // namespace placerl
