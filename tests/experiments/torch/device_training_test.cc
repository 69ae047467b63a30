// The device training loop (experiments/torch/device_training.h) on a graph whose optimum is
// known: two independent chains of equal heavy ops on two GPUs — one chain per device halves
// the step time and any other placement is slower. PPO with the shared policy finds that
// optimum and its greedy placement ends there (within 300 updates; tens in practice); graph
// specs split at top-level commas only.
#include "experiments/torch/device_training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "env/device/device_env.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

std::string TwoChains(const std::string& path) {
  std::ofstream f(path);
  f << "# two independent chains of 4 matmuls\n";
  for (const char* c : {"a", "b"})
    for (int i = 0; i < 4; ++i) {
      f << "op " << c << i << " matmul flops=100000000000 bytes=1000000 out=1000000 params=0 temp=0 coloc=" << c << i;
      if (i > 0) f << " inputs=" << c << i - 1;
      f << "\n";
    }
  return path;
}

TEST(DeviceTraining, PpoReachesOneChainPerDevice) {
  testing::TempDir tmp;
  env::DeviceEnvOptions eo;
  eo.graph = TwoChains(tmp / "chains.graph");
  // Placeto's link without the preset's per-transfer latency: the run this test was written
  // against (the optimum has no transfers either way; the latency only changes the sampled ones).
  eo.machine = "k80(gpus=2,cpu=0,latency_us=0)";
  std::vector<DeviceTask> tasks;
  tasks.push_back(MakeDeviceTask(eo, 0, 0));
  DeviceTask& task = tasks[0];
  ASSERT_EQ(task.env->episode_length(), 8);
  ASSERT_EQ(task.env->num_actions(), 2);
  // The optimum: chain a on device 0, chain b on device 1 (ops a0..a3 come first in the file).
  const graphs::ComputeGraph& g = task.env->instance().graph;
  std::vector<int> split(g.num_ops());
  for (int op = 0; op < g.num_ops(); ++op) split[op] = g.names[op][0] == 'a' ? 0 : 1;
  perf::Simulator sim(g, task.env->instance().machine.sim);
  const double optimum = sim.Run(split).makespan;
  EXPECT_NEAR(optimum, task.env->instance().single_device_time / 2, 0.05 * optimum);

  encoders::PolicyOptions po;
  po.embedding_dim = 16;
  po.hidden_dim = 32;
  encoders::Policy policy(po, encoders::FeatureLayout::Of(*task.env));
  agents::AgentOptions ao;
  ao.learning_rate = 3e-3;
  ao.minibatch_size = 64;
  agents::Learner learner(&policy, ao);
  std::mt19937_64 rng(7);
  const double initial_greedy = PlayDeviceEpisode(policy, task, 1, &rng, /*greedy=*/true, nullptr);

  // Train until the greedy placement is the optimum (checked after every update), at most 300 updates.
  DeviceTrainingState st;
  st.best_time.assign(1, INFINITY);
  st.best.resize(1);
  int64_t rows = 0;
  double first_mean = NAN, last_mean = NAN, greedy = INFINITY;
  std::mt19937_64 probe_rng(9);
  TrainDevice(tasks, learner, 16, 11, 1e9, &st, [&] { return st.iteration >= 300 || greedy <= optimum * (1 + 1e-12); },
              [&](int64_t, const run::Scalars& row) {
                ++rows;
                for (const auto& [k, v] : row)
                  if (k == "charts/mean_step_time_s") (std::isnan(first_mean) ? first_mean : last_mean) = v;
              },
              [&](const DeviceTrainingState&, double) {
                greedy = PlayDeviceEpisode(policy, task, 1, &probe_rng, /*greedy=*/true, nullptr);
              });
  EXPECT_LT(st.iteration, 300) << "the greedy placement never reached one chain per device";
  EXPECT_EQ(rows, st.iteration);
  EXPECT_EQ(st.episodes, st.iteration * 16);
  EXPECT_NEAR(st.best_time[0], optimum, 1e-12);
  ASSERT_EQ(st.best[0].size(), split.size());
  EXPECT_EQ(sim.Run(st.best[0]).makespan, st.best_time[0]);
  if (st.iteration > 1) {
    EXPECT_LT(last_mean, first_mean);  // the sampled placements improved
  }
  EXPECT_LE(greedy, initial_greedy);
  EXPECT_NEAR(greedy, optimum, 1e-12);
  std::printf("greedy optimal after %lld updates\n", static_cast<long long>(st.iteration));
}

TEST(DeviceTraining, SplitGraphSpecsKeepsParenthesisedCommas) {
  EXPECT_EQ(SplitGraphSpecs("rnnlm,nmt(layers=2),enas_cell(family=cifar10,seed=3)"),
            (std::vector<std::string>{"rnnlm", "nmt(layers=2)", "enas_cell(family=cifar10,seed=3)"}));
  EXPECT_EQ(SplitGraphSpecs("a.graph"), (std::vector<std::string>{"a.graph"}));
  EXPECT_TRUE(SplitGraphSpecs("").empty());
}

TEST(DeviceTraining, FusedTasksCountLifetimeMemoryOnTheOriginalOps) {
  env::DeviceEnvOptions o;
  o.graph = "nmt(layers=2,steps=6)";
  o.machine = "k80(gpus=2)";
  o.memory_mask = true;
  o.memory_estimate = "lifetime";
  DeviceTask t = MakeDeviceTask(o, 50, 16);
  ASSERT_TRUE(t.fused);
  ASSERT_TRUE(t.env->options().memory_graph);
  EXPECT_EQ(t.env->options().memory_graph->num_ops(), t.scoring->instance().graph.num_ops());
  // Everything on device 0: the fused environment's estimate equals the unfused one's.
  const double fused = t.env->ReplayMemoryEstimate(std::vector<int32_t>(t.env->episode_length(), 0))[0];
  const double original = t.scoring->ReplayMemoryEstimate(std::vector<int32_t>(t.scoring->episode_length(), 0))[0];
  EXPECT_GT(original, 0);
  EXPECT_NEAR(fused, original, 1e-9 * original);
  // all_outputs keeps the coarse graph's own fields (no memory graph).
  o.memory_estimate = "all_outputs";
  DeviceTask a = MakeDeviceTask(o, 50, 16);
  EXPECT_FALSE(a.env->options().memory_graph);
}

}  // namespace
}  // namespace placerl
