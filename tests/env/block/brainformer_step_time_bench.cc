// Cost of the Brainformer step time per architecture: uncached evaluations with the fixed FSDP
// plan (3 evaluator calls) and with plan search, and a cache hit (what the environment pays
// for an architecture it has seen). Architectures: random allowed ones of the brainformer space.
#include <benchmark/benchmark.h>

#include <random>

#include "env/block/block_models.h"

namespace placerl::env {
namespace {

std::vector<nas::Architecture> RandomArchitectures(const nas::SearchSpace& space, int n) {
  std::mt19937_64 rng(7);
  std::vector<nas::Architecture> out;
  std::vector<uint8_t> mask(space.max_choices());
  for (int i = 0; i < n; ++i) {
    nas::Architecture a(space.num_decisions(), -1);
    for (int32_t d = 0; d < space.num_decisions(); ++d) {
      space.AllowedChoices(a.data(), d, mask.data());
      std::vector<int32_t> ok;
      for (int32_t c = 0; c < space.max_choices(); ++c)
        if (mask[c]) ok.push_back(c);
      a[d] = ok[std::uniform_int_distribution<size_t>(0, ok.size() - 1)(rng)];
    }
    out.push_back(a);
  }
  return out;
}

void BM_BrainformerStepTime(benchmark::State& state, const char* plan, bool cached) {
  static const nas::SearchSpace space = nas::LoadSearchSpace("brainformer");
  static const std::vector<nas::Architecture> archs = RandomArchitectures(space, 64);
  BrainformerScale scale;
  scale.plan = plan;
  const BrainformerStepTime model(space, scale);
  size_t i = 0;
  double sum = 0;
  for (auto _ : state) {
    const nas::Architecture& a = archs[i++ % archs.size()];
    sum += cached ? model.StepTime(a) : model.Evaluate(a).step_s;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_BrainformerStepTime, fsdp_uncached, "fsdp", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BrainformerStepTime, search_uncached, "search", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BrainformerStepTime, fsdp_cached, "fsdp", true)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placerl::env
