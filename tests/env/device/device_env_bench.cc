// Steps per second of the device environment (env/device): Placeto's iterative MDP simulates the
// whole placed graph after every move (one reused Simulator), so a step costs one simulation;
// the one-shot MDP simulates once per episode. Layered random graphs of 1k and 10k ops (no
// co-location: one group per op) on k80(gpus=4): 5 devices; one-shot also with features=heft.
//   build/bench/device_env_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <random>

#include "env/device/device_env.h"

namespace placerl::env {
namespace {

void Run(benchmark::State& state, const std::string& mode, const std::string& features = "basic",
         const std::string& memory_estimate = "") {
  DeviceEnvOptions o;
  o.features = features;
  if (!memory_estimate.empty()) {  // memory mask on (capacity never binds: the mask's cost only)
    o.memory_mask = true;
    o.memory_estimate = memory_estimate;
  }
  o.graph = "layered(ops=" + std::to_string(state.range(0)) + ",width=100,fan_in=3,seed=1)";
  o.machine = "k80(gpus=4)";
  o.mode = mode;
  o.start = "random";
  DeviceEnv env(o);
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int32_t> pick(0, env.num_actions() - 1);
  uint64_t seed = 0;
  env.Reset(seed);
  int64_t steps = 0;
  for (auto _ : state) {
    if (env.done()) env.Reset(++seed);
    int32_t a = pick(rng);
    if (mode == "iterative") {  // always a move: every step simulates
      const int32_t cur = env.node_device()[env.state().current_node];
      if (a == cur) a = (a + 1) % env.num_actions();
    }
    benchmark::DoNotOptimize(env.Step(a));
    ++steps;
  }
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}

void BM_IterativeStep(benchmark::State& state) { Run(state, "iterative"); }
void BM_OneShotStep(benchmark::State& state) { Run(state, "oneshot"); }
// features=heft: the list-schedule estimate per device on every step (O(in-degree × devices)).
void BM_OneShotStepHeft(benchmark::State& state) { Run(state, "oneshot", "heft"); }
// memory_mask=true with each estimate: all_outputs O(devices), lifetime O(ops + copies + devices × 256) per device.
void BM_OneShotStepMaskAllOutputs(benchmark::State& state) { Run(state, "oneshot", "basic", "all_outputs"); }
void BM_OneShotStepMaskLifetime(benchmark::State& state) { Run(state, "oneshot", "basic", "lifetime"); }
BENCHMARK(BM_IterativeStep)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneShotStep)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneShotStepHeft)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneShotStepMaskAllOutputs)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneShotStepMaskLifetime)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placerl::env
