// Speed of the learning core on Ariane133 (one intra-op thread): the static GCN embedding, a
// policy step with the embedding cached (head only), batched policy steps (ActBatch over B
// environments vs B calls of Act), a PPO minibatch of 128 (forward + backward through the GCN),
// each for the default policy and the ct_faithful preset (CT's per-step GCN and 128×128 head),
// and a simple single-process train loop (collect + PPO update) in episodes per hour.
// Run: build/bench/learner_bench [--benchmark_filter=…]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"
#include "env/vector_env.h"

namespace placerl {
namespace {

const char* kAriane =
    "chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
    "plc=../shared/datasets/chip/ariane133_ng45/initial.plc,soft=keep)";
const char* kArianeFd =
    "chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
    "plc=../shared/datasets/chip/ariane133_ng45/initial.plc)";

env::Environment& Ariane(const char* spec) {
  static std::map<std::string, std::unique_ptr<env::Environment>> envs;
  auto& e = envs[spec];
  if (!e) e = env::MakeEnvironment(spec);
  return *e;
}

void BM_StaticEmbedding(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::PolicyOptions o;
  o.embedding_dim = static_cast<int32_t>(state.range(0));
  encoders::Policy policy(o, encoders::FeatureLayout::Of(env));
  const encoders::GraphTensors g = encoders::MakeGraphTensors(*env.static_graph());
  torch::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(policy.net()->Encode(g).node.data_ptr<float>());
  state.counters["nodes"] = g.num_nodes;
  state.counters["edges"] = static_cast<double>(env.static_graph()->num_edges());
}
BENCHMARK(BM_StaticEmbedding)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

// Policy::Act on a half-placed Ariane133 (static embedding cached): the head only.
void BM_PolicyStep(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::PolicyOptions o;
  o.embedding_dim = static_cast<int32_t>(state.range(0));
  encoders::Policy policy(o, encoders::FeatureLayout::Of(env));
  std::mt19937_64 rng(1);
  env.Reset(0);
  for (int32_t i = 0; i < env.episode_length() / 2 && !env.done(); ++i) env.Step(policy.Act(env, &rng).action);
  for (auto _ : state) benchmark::DoNotOptimize(policy.Act(env, &rng).action);
  state.counters["actions"] = env.num_actions();
}
BENCHMARK(BM_PolicyStep)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);

encoders::PolicyOptions PresetOptions(int64_t ct_faithful) {
  return ct_faithful ? encoders::PolicyOptions::CtFaithful() : encoders::PolicyOptions{};
}

// B Ariane133 environments at different steps (around half placed), for batched inference.
std::vector<std::unique_ptr<env::Environment>> HalfPlaced(encoders::Policy& policy, int32_t b) {
  std::vector<std::unique_ptr<env::Environment>> envs;
  std::mt19937_64 rng(1);
  for (int32_t i = 0; i < b; ++i) {
    envs.push_back(Ariane(kAriane).Clone());
    envs.back()->Reset(static_cast<uint64_t>(i));
    const int32_t steps = envs.back()->episode_length() / 2 - b / 2 + i;
    for (int32_t k = 0; k < steps && !envs.back()->done(); ++k) envs.back()->Step(policy.Act(*envs.back(), &rng).action);
  }
  return envs;
}

// Policy steps per second for B environments of one instance: one ActBatch (args: preset,
// B) vs B calls of Act (BM_ActLoop). Items = decisions.
void BM_ActBatch(benchmark::State& state) {
  torch::set_num_threads(1);
  const int32_t b = static_cast<int32_t>(state.range(1));
  encoders::Policy policy(PresetOptions(state.range(0)), encoders::FeatureLayout::Of(Ariane(kAriane)));
  const auto owned = HalfPlaced(policy, b);
  std::vector<const env::Environment*> envs;
  for (const auto& e : owned) envs.push_back(e.get());
  std::vector<encoders::PolicyStep> out(b);
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    policy.ActBatch(envs.data(), b, &rng, false, out.data());
    benchmark::DoNotOptimize(out[0].action);
  }
  state.SetItemsProcessed(state.iterations() * b);
}
void BM_ActLoop(benchmark::State& state) {
  torch::set_num_threads(1);
  const int32_t b = static_cast<int32_t>(state.range(1));
  encoders::Policy policy(PresetOptions(state.range(0)), encoders::FeatureLayout::Of(Ariane(kAriane)));
  const auto envs = HalfPlaced(policy, b);
  std::mt19937_64 rng(1);
  for (auto _ : state)
    for (const auto& e : envs) benchmark::DoNotOptimize(policy.Act(*e, &rng).action);
  state.SetItemsProcessed(state.iterations() * b);
}
BENCHMARK(BM_ActBatch)->ArgsProduct({{0}, {1, 4, 8, 16}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActLoop)->ArgsProduct({{0}, {1, 4, 8, 16}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActBatch)->ArgsProduct({{1}, {1, 8}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ActLoop)->ArgsProduct({{1}, {1, 8}})->Unit(benchmark::kMillisecond);

// Collection through a VectorEnv of B Ariane133 copies (soft=keep; policy ActBatch + batched
// environment step), B episodes per iteration; items = decisions. Run with OMP_NUM_THREADS=1
// for the single-threaded rate.
void BM_CollectVectorEnv(benchmark::State& state) {
  torch::set_num_threads(1);
  const int32_t b = static_cast<int32_t>(state.range(0));
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(Ariane(kAriane)));
  env::VectorEnv venv = env::VectorEnv::Replicate(Ariane(kAriane), b, 0);
  std::mt19937_64 rng(1);
  agents::RolloutBuffer buffer;
  int64_t steps = 0;
  for (auto _ : state) {
    buffer.Clear();
    agents::CollectEpisodes(policy, venv, b, &rng, &buffer);
    steps += buffer.size();
  }
  state.SetItemsProcessed(steps);
}
BENCHMARK(BM_CollectVectorEnv)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(3);

// One PPO minibatch of 128 Ariane133 decisions (arg: 0 default, 1 ct_faithful): GCN + head
// forward, backward through both (for ct_faithful the GCN of every sample), clipping, Adam.
void BM_PpoMinibatch(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::Policy policy(PresetOptions(state.range(0)), encoders::FeatureLayout::Of(env));
  agents::AgentOptions o;
  o.epochs = 1;
  o.minibatch_size = 128;
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, env, 1, 0, &learner.rng(), &buffer);
  // Exactly one minibatch: the first 128 decisions as one (shortened) episode.
  buffer.transitions.resize(std::min<size_t>(128, buffer.transitions.size()));
  buffer.transitions.back().done = true;
  for (auto _ : state) benchmark::DoNotOptimize(learner.Update(&buffer));
  state.counters["minibatch"] = buffer.size();
}
BENCHMARK(BM_PpoMinibatch)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PpoMinibatch)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

// A simple single-process loop: collect 8 episodes, one PPO update (4 epochs, minibatch 128).
void TrainLoop(benchmark::State& state, const char* spec) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(spec);
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(env));
  agents::Learner learner(&policy, agents::AgentOptions{});
  agents::RolloutBuffer buffer;
  const int32_t episodes = 8;
  uint64_t seed = 0;
  double collect_s = 0, update_s = 0, steps = 0, cost = 0;
  for (auto _ : state) {
    buffer.Clear();
    const auto t0 = std::chrono::steady_clock::now();
    agents::CollectEpisodes(policy, env, episodes, seed, &learner.rng(), &buffer);
    const auto t1 = std::chrono::steady_clock::now();
    seed += episodes;
    learner.Update(&buffer);
    collect_s += std::chrono::duration<double>(t1 - t0).count();
    update_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    steps += buffer.size();
    cost -= buffer.MeanEpisodeReturn();
  }
  // Wall-clock rates (the benchmark runs with UseRealTime): episodes per hour of the loop.
  state.counters["episodes_per_hour"] = episodes * 3600.0 * state.iterations() / (collect_s + update_s);
  state.counters["collect_s_per_episode"] = collect_s / (episodes * state.iterations());
  state.counters["update_s_per_iteration"] = update_s / state.iterations();
  state.counters["steps_per_episode"] = steps / (episodes * state.iterations());
  state.counters["mean_cost"] = cost / state.iterations();
}
void BM_TrainLoopSoftKeep(benchmark::State& state) { TrainLoop(state, kAriane); }
void BM_TrainLoopSoftFd(benchmark::State& state) { TrainLoop(state, kArianeFd); }
BENCHMARK(BM_TrainLoopSoftKeep)->Unit(benchmark::kMillisecond)->Iterations(4)->UseRealTime();
BENCHMARK(BM_TrainLoopSoftFd)->Unit(benchmark::kMillisecond)->Iterations(4)->UseRealTime();

// Collection alone (policy + environment, soft=keep), per episode.
void BM_CollectEpisode(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(env));
  std::mt19937_64 rng(1);
  agents::RolloutBuffer buffer;
  uint64_t seed = 0;
  for (auto _ : state) {
    buffer.Clear();
    agents::CollectEpisodes(policy, env, 1, seed++, &rng, &buffer);
  }
}
BENCHMARK(BM_CollectEpisode)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace placerl

namespace placerl {
namespace {
// The head's LibTorch forward alone on a prepared one-step batch (no batch building, no sampling).
void BM_HeadForward(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(env));
  std::mt19937_64 rng(1);
  env.Reset(0);
  for (int32_t i = 0; i < env.episode_length() / 2 && !env.done(); ++i) env.Step(policy.Act(env, &rng).action);
  const encoders::GraphTensors g = encoders::MakeGraphTensors(*env.static_graph());
  torch::NoGradGuard no_grad;
  const encoders::StaticEmbedding emb = policy.net()->Encode(g);
  std::vector<float> scratch;
  const encoders::StepBatch batch = encoders::StepBatchOf(g, env, &scratch);
  for (auto _ : state) benchmark::DoNotOptimize(policy.net()->Forward(emb, batch).first.data_ptr<float>());
}
BENCHMARK(BM_HeadForward)->Unit(benchmark::kMicrosecond);
}  // namespace
}  // namespace placerl
