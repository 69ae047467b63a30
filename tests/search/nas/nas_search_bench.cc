// Speed of the block environment and the tabular searches: a whole episode (one step per
// decision, masks, final evaluation) on nb201 and brainformer, and one regularised-evolution
// run of 100 architectures on NAS-Bench-201 (the unit of docs/nas_leaderboard.md).
#include <benchmark/benchmark.h>

#include <random>

#include "env/block/block_env.h"
#include "env/registry.h"
#include "search/nas/nas_search.h"

namespace placerl {
namespace {

void RunEpisodes(benchmark::State& state, const std::string& spec) {
  auto env = env::MakeEnvironment(spec);
  std::mt19937_64 rng(1);
  std::vector<int32_t> legal;
  for (auto _ : state) {
    env->Reset(0);
    while (!env->done()) {
      legal.clear();
      const auto& m = env->action_mask();
      for (int32_t a = 0; a < static_cast<int32_t>(m.size()); ++a)
        if (m[a]) legal.push_back(a);
      env->Step(legal[rng() % legal.size()]);
    }
    benchmark::DoNotOptimize(env->info());
  }
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * env->episode_length(),
                                                 benchmark::Counter::kIsRate);
}

void BM_BlockEpisodeNb201(benchmark::State& state) { RunEpisodes(state, "block(space=nb201)"); }
void BM_BlockEpisodeBrainformer(benchmark::State& state) { RunEpisodes(state, "block(space=brainformer)"); }
BENCHMARK(BM_BlockEpisodeNb201);
BENCHMARK(BM_BlockEpisodeBrainformer);

void BM_Search100Nb201(benchmark::State& state) {
  env::BlockEnv e(env::BlockEnvOptions{});
  search::NasSearchOptions o;
  o.method = state.range(0) ? "evolution" : "random";
  o.budget = 100;
  for (auto _ : state) {
    ++o.seed;
    benchmark::DoNotOptimize(
        search::RunNasSearch(e.space(), [&](const nas::Architecture& a) { return e.Evaluate(a); }, o).best);
  }
  state.counters["archs/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 100, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Search100Nb201)->Arg(0)->Arg(1);

}  // namespace
}  // namespace placerl
