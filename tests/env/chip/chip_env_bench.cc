// Speed of the chip environment on Ariane133 (grid and canvas of initial.plc), one thread:
//   ChipEnvStep: one step (place a hard macro, incremental cost update, next mask), sparse
//     and dense (+ incremental cost read) rewards, averaged over whole random episodes;
//   ChipEnvStepSparseProxyMap: the same with maps and cost_map=proxy (maps cost = Maps − Sparse);
//   ChipEnvCostChangeByCell/k: the proxy map's terms at step k (µs per call, CPU);
//   ChipEnvEpisode: a whole random episode (reset, 133 steps, soft-macro placement, final cost);
//   ChipEnvEpisodeFdScale/N: the same with chip.fd_steps_scale = N / 100 (maps on, as training).
// Run from the repository root: build/bench/chip_env_bench
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "env/chip/chip_env.h"
#include "env/registry.h"

namespace {

using namespace placerl::env;

const std::string kAriane =
    "chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
    "plc=../shared/datasets/chip/ariane133_ng45/initial.plc";

int32_t RandomLegal(const Environment& e, std::mt19937_64& rng, std::vector<int32_t>* legal) {
  legal->clear();
  const auto& m = e.action_mask();
  for (int32_t a = 0; a < static_cast<int32_t>(m.size()); ++a)
    if (m[a]) legal->push_back(a);
  return (*legal)[std::uniform_int_distribution<size_t>(0, legal->size() - 1)(rng)];
}

void Steps(benchmark::State& state, const std::string& spec) {
  auto env = MakeEnvironment(spec);
  std::mt19937_64 rng(1);
  std::vector<int32_t> legal;
  int64_t steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    env->Reset(steps);
    std::vector<int32_t> actions;
    {  // choose the actions outside the timed region (a clone replays them)
      auto probe = env->Clone();
      while (!probe->done()) {
        actions.push_back(RandomLegal(*probe, rng, &legal));
        probe->Step(actions.back());
      }
    }
    state.ResumeTiming();
    for (int32_t a : actions) benchmark::DoNotOptimize(env->Step(a));
    steps += actions.size();
  }
  state.SetItemsProcessed(steps);  // items/s = steps/s (1e6 / items_per_second = µs per step)
}

void BM_ChipEnvStepSparse(benchmark::State& s) { Steps(s, kAriane + ",soft=keep,reward=sparse,maps=false)"); }
void BM_ChipEnvStepDense(benchmark::State& s) { Steps(s, kAriane + ",soft=keep,reward=dense,maps=false)"); }
void BM_ChipEnvStepSparseMaps(benchmark::State& s) { Steps(s, kAriane + ",soft=keep,reward=sparse,maps=true)"); }
void BM_ChipEnvStepSparseProxyMap(benchmark::State& s) {
  Steps(s, kAriane + ",soft=keep,reward=sparse,maps=true,cost_map=proxy)");
}

// ChipEnv::CostChangeByCell (the work of the proxy map beyond the wirelength map's) at step
// range(0) of a random episode, called again and again on the same state.
void BM_ChipEnvCostChangeByCell(benchmark::State& state) {
  auto e = MakeEnvironment(kAriane + ",soft=keep,maps=false)");
  auto& env = dynamic_cast<ChipEnv&>(*e);
  std::mt19937_64 rng(3);
  std::vector<int32_t> legal;
  for (int64_t k = 0; k < state.range(0); ++k) env.Step(RandomLegal(env, rng, &legal));
  std::vector<double> wl, den, cong;
  for (auto _ : state) {
    env.CostChangeByCell(&wl, &den, &cong);
    benchmark::DoNotOptimize(den.data());
  }
  int64_t n = 0;
  for (uint8_t m : env.action_mask()) n += m;
  state.counters["legal_cells"] = static_cast<double>(n);
}

void Episodes(benchmark::State& state, const std::string& spec) {
  auto env = MakeEnvironment(spec);
  std::mt19937_64 rng(2);
  std::vector<int32_t> legal;
  uint64_t seed = 0;
  for (auto _ : state) {
    env->Reset(seed++);
    while (!env->done()) env->Step(RandomLegal(*env, rng, &legal));
    benchmark::DoNotOptimize(env->info()[4]);
  }
}
void BM_ChipEnvEpisodeKeepSoft(benchmark::State& s) { Episodes(s, kAriane + ",soft=keep,maps=false)"); }
void BM_ChipEnvEpisodeFd(benchmark::State& s) { Episodes(s, kAriane + ",soft=fd,maps=false)"); }
void BM_ChipEnvEpisodeFdMaps(benchmark::State& s) { Episodes(s, kAriane + ",soft=fd,maps=true)"); }
void BM_ChipEnvEpisodeFdScale(benchmark::State& s) {
  Episodes(s, kAriane + ",soft=fd,maps=true,fd_steps_scale=" + std::to_string(s.range(0) / 100.0) + ")");
}

BENCHMARK(BM_ChipEnvStepSparse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvStepDense)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvStepSparseMaps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvStepSparseProxyMap)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvCostChangeByCell)->Arg(0)->Arg(40)->Arg(80)->Arg(120)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ChipEnvEpisodeKeepSoft)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvEpisodeFd)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvEpisodeFdMaps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChipEnvEpisodeFdScale)->Arg(100)->Arg(30)->Arg(10)->Unit(benchmark::kMillisecond);

}  // namespace
