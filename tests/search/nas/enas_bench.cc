// What one ENAS step costs on one thread (models/enas_supernet.h, nas_rl.h): a
// shared-weight SGD step of a batch of 64 (forward + backward + update) at C = 8 and C = 16, a
// child's forward over 128 validation images (one controller reward), and one architecture
// sampled by the shared GNN controller (40 decisions).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <random>

#include "datasets/nas/search_space.h"
#include "env/block/block_env.h"
#include "models/enas_supernet.h"
#include "search/nas/nas_rl.h"
#include "search/nas/nas_search.h"

namespace placerl::enas {
namespace {

ChildArch RandomChild(uint64_t seed) {
  static const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  std::mt19937_64 rng(seed);
  return DecodeEnasMicro(search::RandomArchitecture(space, rng));
}

void BM_SharedStep(benchmark::State& state) {
  torch::set_num_threads(1);
  EnasNetOptions o;
  o.channels = static_cast<int32_t>(state.range(0));
  EnasNet net(o);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const torch::Tensor x = torch::randn({64, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {64}, torch::kLong);
  uint64_t seed = 1;
  for (auto _ : state) {
    const ChildArch child = RandomChild(seed++);
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(net->Forward(x, child), y).backward();
    sgd.step();
  }
}
BENCHMARK(BM_SharedStep)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

void BM_ChildReward128(benchmark::State& state) {
  torch::set_num_threads(1);
  EnasNet net(EnasNetOptions{});
  const torch::Tensor x = torch::randn({128, 1, 28, 28});
  uint64_t seed = 1;
  for (auto _ : state) {
    torch::NoGradGuard no_grad;
    benchmark::DoNotOptimize(net->Forward(x, RandomChild(seed++)).argmax(1).sum().item<int64_t>());
  }
}
BENCHMARK(BM_ChildReward128)->Unit(benchmark::kMillisecond);

void BM_ControllerSample(benchmark::State& state) {
  torch::set_num_threads(1);
  env::BlockEnvOptions eo;
  eo.space = "enas_micro";
  eo.quality = "synthetic";
  const env::BlockEnv block(eo);
  NasRlOptions co;
  co.agent.algorithm = agents::Algorithm::kReinforce;
  NasRlController controller(block, co);
  for (auto _ : state) benchmark::DoNotOptimize(controller.Sample());
}
BENCHMARK(BM_ControllerSample)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placerl::enas
