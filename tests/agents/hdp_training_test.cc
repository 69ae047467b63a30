// HDP (place-train --env device --method hdp; agents/hdp_training.h TrainHdp and
// encoders/hdp_grouper.h): a learned grouping keeps every co-location group together and its
// placements are valid op placements of the original graph; a grouping that cannot be placed is
// a ConfigError; joint REINFORCE of grouper + seq2seq placer finds the known optimum of two
// independent chains on two GPUs and its greedy grouping + placement ends there. The binary's
// tests (HdpCli) are in tests/experiments/torch/place_train_device_cli_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "datasets/util/errors.h"
#include "agents/hdp_training.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

namespace fs = std::filesystem;
const std::string kMlp = "tests/data/device/mlp_training.graph";  // 38 ops, 16 co-location groups

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

DeviceTask MlpTask(const std::string& machine, bool memory_mask) {
  env::DeviceEnvOptions eo;
  eo.graph = kMlp;
  eo.machine = machine;
  eo.memory_mask = memory_mask;
  return MakeDeviceTask(eo, 0, 0);
}

TEST(HdpTraining, LearnedGroupsKeepColocationGroupsTogetherAndPlaceValidly) {
  DeviceTask base = MlpTask("k80(gpus=2)", false);
  const env::DeviceEnv& units = *base.env;
  ASSERT_EQ(units.episode_length(), 16);
  const graphs::ComputeGraph& g = units.instance().graph;
  encoders::HdpGrouperOptions go;
  go.num_groups = 6;
  encoders::HdpGrouper grouper(go, units.static_graph()->node_feature_dim);
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 5; ++trial) {
    const encoders::Grouping grouping = grouper.Sample(*units.static_graph(), &rng);
    const graphs::ComputeGraph grouped = GroupedGraph(units, grouping.unit_group);
    EXPECT_EQ(grouped.num_coloc_groups, grouping.used_groups);
    // Ops that shared a co-location group share a learned group.
    for (int a = 0; a < g.num_ops(); ++a)
      for (int b = 0; b < g.num_ops(); ++b)
        if (g.coloc_group[a] == g.coloc_group[b]) {
          EXPECT_EQ(grouped.coloc_group[a], grouped.coloc_group[b]);
        }
    std::set<int> ids(grouped.coloc_group.begin(), grouped.coloc_group.end());
    EXPECT_EQ(static_cast<int>(ids.size()), grouping.used_groups);  // dense, empty groups skipped
    EXPECT_EQ(*ids.rbegin(), grouping.used_groups - 1);

    DeviceTask task = MakeGroupedTask(units, grouping.unit_group);
    ASSERT_EQ(task.env->episode_length(), grouping.used_groups);  // one decision per learned group
    task.env->Reset(1);
    for (int k = 0; !task.env->done(); ++k) {
      const auto& mask = task.env->action_mask();
      int d = k % task.env->num_actions();
      while (!mask[d]) d = (d + 1) % task.env->num_actions();
      task.env->Step(d);
    }
    const std::vector<int> placement = task.OpPlacement();
    ASSERT_EQ(static_cast<int>(placement.size()), g.num_ops());
    EXPECT_EQ(graphs::ColocationViolation(g, placement), "");
    for (int a = 0; a < g.num_ops(); ++a)
      for (int b = 0; b < g.num_ops(); ++b)
        if (grouped.coloc_group[a] == grouped.coloc_group[b]) {
          EXPECT_EQ(placement[a], placement[b]);
        }
    EXPECT_GT(task.Score(), 0);
    perf::Simulator sim(g, units.instance().machine.sim);
    EXPECT_EQ(sim.Run(placement).makespan, task.env->info_value("step_time_s"));  // the original graph, simulated
  }
  EXPECT_THROW(GroupedGraph(units, std::vector<int32_t>(15, 0)), ConfigError);
}

TEST(HdpTraining, AGroupTooBigForEveryDeviceCannotBePlaced) {
  // 60 MB per GPU and no CPU: every co-location group of the MLP fits, all of them together not.
  const std::string machine = "k80(gpus=2,cpu=0,memory_fraction=0.005)";
  DeviceTask base = MlpTask(machine, true);
  const int32_t n = base.env->episode_length();
  EXPECT_THROW(MakeGroupedTask(*base.env, std::vector<int32_t>(n, 0)), ConfigError);
  std::vector<int32_t> own(n);
  for (int32_t u = 0; u < n; ++u) own[u] = u;
  EXPECT_EQ(MakeGroupedTask(*base.env, own).env->episode_length(), n);
}

// Joint REINFORCE of the grouper and the lstm placer on two independent chains of 4 equal
// matmuls, 2 GPUs: the optimum puts one chain per device (half the single-device time), which
// needs a grouping that does not mix the chains and a placement that splits them.
TEST(HdpTraining, JointReinforceReachesOneChainPerDevice) {
  testing::TempDir tmp;
  env::DeviceEnvOptions eo;
  eo.graph = TwoChains(tmp / "chains.graph");
  eo.machine = "k80(gpus=2,cpu=0,latency_us=0)";
  DeviceTask base = MakeDeviceTask(eo, 0, 0);
  ASSERT_EQ(base.env->episode_length(), 8);
  const graphs::ComputeGraph& g = base.env->instance().graph;
  std::vector<int> split(g.num_ops());
  for (int op = 0; op < g.num_ops(); ++op) split[op] = g.names[op][0] == 'a' ? 0 : 1;
  perf::Simulator sim(g, base.env->instance().machine.sim);
  const double optimum = sim.Run(split).makespan;
  EXPECT_NEAR(optimum, base.env->instance().single_device_time / 2, 0.05 * optimum);

  encoders::PolicyOptions po = encoders::PolicyOptions::Seq2Seq2017();
  po.embedding_dim = 16;
  po.hidden_dim = 32;
  encoders::Policy policy(po, encoders::FeatureLayout::Of(*base.env));
  agents::AgentOptions ao;
  ao.algorithm = agents::Algorithm::kReinforce;
  ao.learning_rate = 1e-2;
  ao.entropy_coef = 1e-3;
  ao.minibatch_size = 4096;
  agents::Learner learner(&policy, ao);
  encoders::HdpGrouperOptions go;
  go.num_groups = 4;
  go.learning_rate = ao.learning_rate;
  encoders::HdpGrouper grouper(go, base.env->static_graph()->node_feature_dim);

  std::mt19937_64 probe(9);
  auto greedy_time = [&] {
    const encoders::Grouping grouping = grouper.Sample(*base.env->static_graph(), &probe, /*greedy=*/true);
    DeviceTask task = MakeGroupedTask(*base.env, grouping.unit_group);
    return PlayDeviceEpisode(policy, task, 1, &probe, /*greedy=*/true, nullptr);
  };
  // The expected step time under the policy: the mean of 64 sampled groupings + placements.
  auto sampled_mean = [&] {
    double sum = 0;
    for (int k = 0; k < 64; ++k) {
      const encoders::Grouping grouping = grouper.Sample(*base.env->static_graph(), &probe);
      DeviceTask task = MakeGroupedTask(*base.env, grouping.unit_group);
      sum += PlayDeviceEpisode(policy, task, 1, &probe, /*greedy=*/false, nullptr) / 64;
    }
    return sum;
  };
  const double initial_greedy = greedy_time(), initial_mean = sampled_mean();
  DeviceTrainingState st;
  st.best_time.assign(1, INFINITY);
  st.best.resize(1);
  HdpState hs;
  double greedy = INFINITY;
  int64_t rows = 0;
  TrainHdp(base, grouper, learner, 4, 11, 1e9, BudgetClock::kWall, &st, &hs,
           [&] { return st.iteration >= 600 || greedy <= optimum * (1 + 1e-12); },
           [&](int64_t, const LogRow& row) {
             ++rows;
             std::map<std::string, double> m(row.begin(), row.end());
             EXPECT_TRUE(m.count("losses/grouper_loss"));
             EXPECT_TRUE(m.count("losses/policy_loss"));
             EXPECT_GE(m.at("charts/groups"), 1);
             EXPECT_LE(m.at("charts/groups"), 4);
           },
           [&](const DeviceTrainingState&, double) { greedy = greedy_time(); });
  EXPECT_LT(st.iteration, 600) << "the greedy grouping + placement never reached one chain per device";
  EXPECT_EQ(rows, st.iteration);
  EXPECT_EQ(st.episodes, 4 * st.iteration);
  EXPECT_FALSE(std::isnan(hs.baseline));
  EXPECT_GE(hs.best_groups, 2);  // the optimum needs the chains apart
  EXPECT_LE(st.best_time[0], optimum * 1.01);  // sampled (the greedy one below is exact)
  ASSERT_EQ(st.best[0].size(), split.size());
  EXPECT_EQ(sim.Run(st.best[0]).makespan, st.best_time[0]);
  EXPECT_NEAR(greedy, optimum, 1e-12);
  EXPECT_LE(greedy, initial_greedy);
  const double final_mean = sampled_mean();
  EXPECT_LT(final_mean, initial_mean);  // the expected step time improved
  std::printf("greedy optimal after %lld updates (greedy %.4g s before, optimum %.4g s; sampled mean %.4g -> %.4g s)\n",
              static_cast<long long>(st.iteration), initial_greedy, optimum, initial_mean, final_mean);
}

TEST(HdpTraining, TrainHdpRefusesPpoAndFusedTasks) {
  DeviceTask base = MlpTask("k80(gpus=2)", false);
  encoders::PolicyOptions po;
  encoders::Policy policy(po, encoders::FeatureLayout::Of(*base.env));
  agents::Learner ppo(&policy, agents::AgentOptions{});
  encoders::HdpGrouper grouper(encoders::HdpGrouperOptions{}, base.env->static_graph()->node_feature_dim);
  DeviceTrainingState st;
  st.best_time.assign(1, INFINITY);
  st.best.resize(1);
  HdpState hs;
  EXPECT_THROW(TrainHdp(base, grouper, ppo, 4, 1, 1e9, BudgetClock::kWall, &st, &hs, {}, {}, {}), ConfigError);
  env::DeviceEnvOptions eo;
  eo.graph = kMlp;
  DeviceTask fused = MakeDeviceTask(eo, 4, 4);
  ASSERT_NE(fused.fused, nullptr);
  agents::AgentOptions ao;
  ao.algorithm = agents::Algorithm::kReinforce;
  agents::Learner reinforce(&policy, ao);
  EXPECT_THROW(TrainHdp(fused, grouper, reinforce, 4, 1, 1e9, BudgetClock::kWall, &st, &hs, {}, {}, {}), ConfigError);
}

}  // namespace
}  // namespace placerl
