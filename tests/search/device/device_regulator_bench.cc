// Cost of one regulator move (device(mode=iterative,start=heft), docs/device_regulator.md): a step
// that changes a group's device re-simulates the placed graph. Rows of docs/device_leaderboard.md,
// unfused (every co-location group a node) on k80(gpus=k,memory_fraction=0.39); each step moves
// the current group to a uniformly drawn other device it may use, episodes restart from HEFT.
// `sim_cache` = 0 simulates every move; the default cache answers placements seen before (none in
// this random walk but the episode starts, so it shows the cache's overhead, not its gain).
// BM_RegulatorRevisit replays one recorded episode of moves again and again (a peaked policy from
// a fixed start): every placement is in the cache after the first pass.
// The CPU column (process CPU time per iteration) is the cost of one move / step.
//   OMP_NUM_THREADS=1 build/bench/device_regulator_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <random>

#include "env/device/device_env.h"
#include "search/device/placers.h"

namespace placerl {
namespace {

const char* kGraphs[] = {"rnnlm", "nmt(layers=4)", "inception_v3"};
const int kGpus[] = {2, 4, 4};

env::DeviceEnvOptions Options(int row, int cache) {
  device_baseline::RegisterDeviceStartPlacers();
  env::DeviceEnvOptions o;
  o.graph = kGraphs[row];
  o.machine = "k80(gpus=" + std::to_string(kGpus[row]) + ",memory_fraction=0.39)";
  o.mode = "iterative";
  o.start = "heft";
  o.sim_cache = cache;
  return o;
}

int32_t OtherDevice(const env::DeviceEnv& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  const int32_t cur = e.node_device()[e.state().current_node];
  for (int32_t a = 0; a < e.num_actions(); ++a)
    if (e.action_mask()[a] && a != cur) legal.push_back(a);
  if (legal.empty()) return cur;
  return legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

void BM_RegulatorMove(benchmark::State& state) {
  env::DeviceEnv e(Options(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  state.SetLabel(std::string(kGraphs[state.range(0)]) + " on " + std::to_string(kGpus[state.range(0)]) + " GPUs, " +
                 std::to_string(e.episode_length()) + " groups");
  std::mt19937_64 rng(1);
  uint64_t seed = 0;
  e.Reset(seed);
  int64_t moves = 0;
  for (auto _ : state) {
    if (e.done()) e.Reset(++seed);
    benchmark::DoNotOptimize(e.Step(OtherDevice(e, rng)));
    ++moves;
  }
  state.counters["moves"] = static_cast<double>(moves);  // the CPU column is the time per move
}

void BM_RegulatorRevisit(benchmark::State& state) {
  env::DeviceEnv e(Options(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  std::mt19937_64 rng(1);
  std::vector<int32_t> actions;
  e.Reset(0);
  const int32_t len = std::min<int32_t>(e.episode_length(), 200);
  for (int32_t k = 0; k < len; ++k) actions.push_back(k % 2 ? OtherDevice(e, rng) : e.node_device()[k]), e.Step(actions.back());
  e.Reset(0);
  size_t k = 0;
  for (auto _ : state) {
    if (k == actions.size()) e.Reset(0), k = 0;
    benchmark::DoNotOptimize(e.Step(actions[k++]));
  }
}

BENCHMARK(BM_RegulatorMove)->Args({0, 0})->Args({1, 0})->Args({2, 0})->Args({0, 4096})->Args({1, 4096})->Args({2, 4096})
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();
BENCHMARK(BM_RegulatorRevisit)->Args({0, 0})->Args({2, 0})->Args({0, 4096})->Args({2, 4096})
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();

}  // namespace
}  // namespace placerl
