// Speed of the lstm preset (one intra-op thread) against the default policy: a policy step
// inside an episode (the decoder state cached per environment: one LSTM cell + attention per
// step) and a learner update's minibatch of 128 transitions (the teacher-forced decoder over
// their episodes, forward + backward), on NMT-2 placed on two K80s (the device environment,
// one decision per co-location group) and on NAS-Bench-201 (6 decisions).
// Run: build/bench/lstm_policy_bench [--benchmark_filter=…]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "env/registry.h"

namespace placerl {
namespace {

const char* kNmt2 = "device(graph='nmt(layers=2)',machine='k80(gpus=2,memory_fraction=0.39)')";
const char* kNb201 = "block(space=nb201)";

env::Environment& Env(const char* spec) {
  static std::map<std::string, std::unique_ptr<env::Environment>> envs;
  auto& e = envs[spec];
  if (!e) e = env::MakeEnvironment(spec);
  return *e;
}

encoders::PolicyOptions Preset(int which) {
  if (which == 1) return encoders::PolicyOptions::Seq2Seq2017();
  if (which == 2) return encoders::PolicyOptions::EnasController();
  return encoders::PolicyOptions();
}

// Arg 0: env (0 NMT-2, 1 NB201); arg 1: preset (0 default, 1 seq2seq_2017, 2 enas_controller).
void BM_PolicyStepInEpisode(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Env(state.range(0) == 0 ? kNmt2 : kNb201);
  encoders::Policy policy(Preset(static_cast<int>(state.range(1))), encoders::FeatureLayout::Of(env));
  std::mt19937_64 rng(1);
  int64_t steps = 0;
  env.Reset(0);
  policy.Act(env, &rng);  // the static embedding, once
  for (auto _ : state) {
    if (env.done()) {
      state.PauseTiming();
      env.Reset(steps);
      state.ResumeTiming();
    }
    env.Step(policy.Act(env, &rng).action);
    ++steps;
  }
  state.counters["decisions"] = env.episode_length();
}
BENCHMARK(BM_PolicyStepInEpisode)->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 2})->Unit(benchmark::kMicrosecond);

// One REINFORCE update over a buffer of whole episodes, timed per minibatch of 128 transitions.
void BM_UpdatePerMinibatch(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Env(state.range(0) == 0 ? kNmt2 : kNb201);
  encoders::Policy policy(Preset(static_cast<int>(state.range(1))), encoders::FeatureLayout::Of(env));
  agents::AgentOptions o;
  o.algorithm = agents::Algorithm::kReinforce;
  o.minibatch_size = 128;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  const int32_t episodes = std::max<int32_t>(1, 512 / env.episode_length());
  agents::CollectEpisodes(policy, env, episodes, 0, &learner.rng(), &buffer);
  const int64_t minibatches = (buffer.size() + 127) / 128;
  for (auto _ : state) {
    agents::RolloutBuffer copy = buffer;
    learner.Update(&copy);
  }
  state.counters["transitions"] = buffer.size();
  state.counters["minibatches"] = static_cast<double>(minibatches);
  state.counters["ms_per_minibatch"] = benchmark::Counter(static_cast<double>(minibatches) * 1e-3,
                                                          benchmark::Counter::kIsIterationInvariantRate |
                                                              benchmark::Counter::kInvert);
}
BENCHMARK(BM_UpdatePerMinibatch)->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 2})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placerl
