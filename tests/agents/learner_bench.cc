// Speed of the learning core on Ariane133 (one intra-op thread): the static GCN embedding, a
// policy step with the embedding cached (head only), a PPO minibatch (forward + backward
// through the static GCN), and a simple single-process train loop (collect + PPO update) in
// episodes per hour. Run: build/bench/learner_bench [--benchmark_filter=…]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"

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

// One PPO minibatch of one Ariane133 episode's decisions (133): static GCN + head forward,
// backward through both, clipping, Adam.
void BM_PpoMinibatch(benchmark::State& state) {
  torch::set_num_threads(1);
  env::Environment& env = Ariane(kAriane);
  encoders::Policy policy(encoders::PolicyOptions{}, encoders::FeatureLayout::Of(env));
  agents::AgentOptions o;
  o.epochs = 1;
  o.minibatch_size = env.episode_length();
  agents::Learner learner(&policy, o);
  agents::RolloutBuffer buffer;
  agents::CollectEpisodes(policy, env, 1, 0, &learner.rng(), &buffer);
  for (auto _ : state) benchmark::DoNotOptimize(learner.Update(&buffer));
  state.counters["minibatch"] = buffer.size();
}
BENCHMARK(BM_PpoMinibatch)->Unit(benchmark::kMillisecond);

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
