// The device placement environment (env/device/device_env.h): co-location and memory masks,
// rewards against an independent simulation, Placeto's iterative rewards, OOM signals, the
// static graph, CPU-only op kinds and parameter errors. (The conformance suite runs it too.)
#include "env/device/device_env.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "env/registry.h"

namespace placerl::env {
namespace {

const char* kGraph = "tests/data/device/mlp_training.graph";

std::unique_ptr<DeviceEnv> Make(const std::string& spec) {
  auto e = MakeEnvironment(spec);
  auto* d = dynamic_cast<DeviceEnv*>(e.get());
  if (!d) return nullptr;
  e.release();
  return std::unique_ptr<DeviceEnv>(d);
}

int32_t RandomLegal(const Environment& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  for (int32_t a = 0; a < e.num_actions(); ++a)
    if (e.action_mask()[a]) legal.push_back(a);
  if (legal.empty()) return -1;
  return legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

TEST(DeviceEnv, NodesAreColocationGroupsAndEdgesAreDirected) {
  auto env = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)')");
  ASSERT_TRUE(env);
  const auto& inst = env->instance();
  EXPECT_EQ(inst.graph.num_ops(), 38);
  EXPECT_EQ(env->episode_length(), inst.graph.num_coloc_groups);
  EXPECT_EQ(env->episode_length(), 16);
  EXPECT_EQ(env->num_actions(), 3);  // gpu:0, gpu:1, cpu:0
  const auto g = env->static_graph();
  EXPECT_TRUE(g->directed);
  EXPECT_GT(g->num_edges(), 0);
  for (float f : g->node_features) EXPECT_TRUE(std::isfinite(f));
  EXPECT_EQ(g->node_names[0], "input");
  ASSERT_EQ(g->metadata.size(), g->metadata_names.size());
  auto meta = [&](const std::string& name) {
    for (size_t k = 0; k < g->metadata_names.size(); ++k)
      if (g->metadata_names[k] == name) return g->metadata[k];
    ADD_FAILURE() << "no metadata " << name;
    return 0.f;
  };
  EXPECT_EQ(meta("devices"), 3.f);
  EXPECT_EQ(meta("cpus"), 1.f);
  EXPECT_NEAR(meta("slowest_to_fastest_speed"), 650e9 / 4.37e12, 1e-6);
  // Decision order follows the topological order of each group's first op: input first,
  // softmax (the last forward op) last.
  EXPECT_EQ(g->node_names.back(), "softmax");
  // The fc group holds the op, its gradient and its update.
  EXPECT_EQ(inst.group_ops[inst.order[1]].size(), 3u);
  EXPECT_EQ(env->name(),
            std::string("device(graph=") + kGraph +
                ",machine='k80(gpus=2,cpu=1,memory_fraction=1,latency_us=134)',mode=oneshot,memory_mask=false,reward=sqrt,"
                "oom=relative,oom_factor=10,failing_time_s=100,placeto_s_per_gb=2,placeto_cap_s=10,start=single)");
}

TEST(DeviceEnv, OneShotRewardIsMinusSqrtOfAnIndependentSimulationAndNeverSplitsAGroup) {
  auto env = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=4)')");
  std::mt19937_64 rng(1);
  const auto& inst = env->instance();
  for (uint64_t ep = 0; ep < 20; ++ep) {
    env->Reset(ep);
    double ret = 0;
    StepResult r;
    while (!env->done()) {
      r = env->Step(RandomLegal(*env, rng));
      if (!env->done()) {
        EXPECT_EQ(r.reward, 0.0);
      }
      ret += r.reward;
    }
    const std::vector<int> p = env->OpPlacement();
    EXPECT_EQ(graphs::ColocationViolation(inst.graph, p), "");
    const perf::SimResult s = perf::SimulatePlacement(inst.graph, p, inst.machine.sim);
    ASSERT_FALSE(s.oom);
    EXPECT_DOUBLE_EQ(ret, -std::sqrt(s.makespan));
    EXPECT_DOUBLE_EQ(env->info_value("step_time_s"), s.makespan);
    EXPECT_DOUBLE_EQ(env->info_value("bytes_transferred"), s.bytes_transferred);
    EXPECT_DOUBLE_EQ(env->info_value("peak_memory_1"), s.peak_memory[1]);
  }
  // All on the fastest device = the single-device reference time.
  env->Reset(0);
  while (!env->done()) env->Step(0);
  EXPECT_DOUBLE_EQ(env->info_value("step_time_s"), env->info_value("single_device_time_s"));
}

TEST(DeviceEnv, MemoryMaskKeepsEveryDeviceWithinCapacity) {
  // Capacity for ~40 % of the graph per GPU: one GPU cannot hold it, three can.
  auto probe = Make(std::string("device(graph=") + kGraph + ",machine='baechi(gpus=3)')");
  double total = 0, biggest = 0;
  for (double n : probe->instance().need) {
    total += n;
    biggest = std::max(biggest, n);
  }
  const double cap = std::max(biggest * 1.01, 0.4 * total);
  ASSERT_LT(cap, total);
  char spec[512];
  std::snprintf(spec, sizeof spec, "device(graph=%s,machine='baechi(gpus=3,memory_fraction=%.9g)',memory_mask=true)",
                kGraph, cap / (8e9 - 1.08e9));
  auto env = Make(spec);
  const auto& inst = env->instance();
  std::mt19937_64 rng(2);
  int complete = 0;
  for (uint64_t ep = 0; ep < 30; ++ep) {
    env->Reset(ep);
    while (!env->done()) {
      const int32_t node = env->state().current_node;
      for (int d = 0; d < env->num_actions(); ++d) {
        double used = 0;
        for (int32_t n = 0; n < env->episode_length(); ++n)
          if (env->node_device()[n] == d) used += inst.need[n];
        const bool fits = used + inst.need[node] <= inst.machine.sim.devices[d].memory_capacity;
        EXPECT_EQ(env->action_mask()[d] != 0, fits) << "node " << node << " device " << d;
      }
      const StepResult r = env->Step(RandomLegal(*env, rng));
      if (r.infeasible) {
        EXPECT_EQ(env->info_value("oom"), 1);
      }
    }
    if (env->state().step == env->episode_length()) {
      ++complete;
      std::vector<double> used(3, 0);
      for (int32_t n = 0; n < env->episode_length(); ++n) used[env->node_device()[n]] += inst.need[n];
      for (int d = 0; d < 3; ++d) EXPECT_LE(used[d], inst.machine.sim.devices[d].memory_capacity);
      EXPECT_EQ(graphs::ColocationViolation(inst.graph, env->OpPlacement()), "");
    }
  }
  EXPECT_GT(complete, 0);
  // Without the mask, everything on one GPU is allowed and runs out of memory.
  char nomask[512];
  std::snprintf(nomask, sizeof nomask, "device(graph=%s,machine='baechi(gpus=3,memory_fraction=%.9g)',oom=fixed)",
                kGraph, cap / (8e9 - 1.08e9));
  auto free_env = Make(nomask);
  double ret = 0;
  while (!free_env->done()) ret += free_env->Step(0).reward;
  EXPECT_EQ(free_env->info_value("oom"), 1);
  EXPECT_DOUBLE_EQ(ret, -10.0);  // HDP's failing signal: 100 s before the square root
}

TEST(DeviceEnv, OomSignals) {
  const std::string base = std::string("device(graph=") + kGraph + ",machine='baechi(gpus=2,memory_fraction=0.005)'";
  for (const std::string oom : {"relative", "placeto"}) {
    auto env = Make(base + ",oom=" + oom + ")");
    double ret = 0;
    while (!env->done()) ret += env->Step(0).reward;
    ASSERT_EQ(env->info_value("oom"), 1);
    const auto& inst = env->instance();
    const perf::SimResult s = perf::SimulatePlacement(inst.graph, env->OpPlacement(), inst.machine.sim);
    if (oom == "relative") {
      EXPECT_DOUBLE_EQ(ret, -std::sqrt(10 * inst.single_device_time));
    } else {
      const double over = (s.peak_memory[0] - inst.machine.sim.devices[0].memory_capacity) / 1e9;
      EXPECT_DOUBLE_EQ(env->info_value("effective_time_s"), s.makespan + std::min(10.0, 2 * over));
      EXPECT_DOUBLE_EQ(ret, -std::sqrt(s.makespan + std::min(10.0, 2 * over)));
    }
  }
}

TEST(DeviceEnv, IterativeRewardsSumToTheTotalImprovement) {
  for (const std::string reward : {"id", "sqrt"}) {
    auto env = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=4)',mode=iterative,start=random,reward=" +
                    reward + ")");
    const auto& inst = env->instance();
    std::mt19937_64 rng(3);
    for (uint64_t ep = 0; ep < 5; ++ep) {
      env->Reset(ep);
      const double t0 = perf::SimulatePlacement(inst.graph, env->OpPlacement(), inst.machine.sim).makespan;
      EXPECT_DOUBLE_EQ(env->info_value("step_time_s"), t0);
      double sum = 0;
      int moves = 0;
      while (!env->done()) {
        const int32_t node = env->state().current_node;
        const int32_t before = env->node_device()[node];
        const int32_t a = RandomLegal(*env, rng);
        const StepResult r = env->Step(a);
        if (a == before) {
          EXPECT_EQ(r.reward, 0.0);
        }
        moves += a != before;
        sum += r.reward;
        EXPECT_EQ(graphs::ColocationViolation(inst.graph, env->OpPlacement()), "");
      }
      const double t1 = perf::SimulatePlacement(inst.graph, env->OpPlacement(), inst.machine.sim).makespan;
      const double f0 = reward == "id" ? t0 : std::sqrt(t0), f1 = reward == "id" ? t1 : std::sqrt(t1);
      EXPECT_NEAR(sum, f0 - f1, 1e-12);
      EXPECT_EQ(env->info_value("moves"), moves);
      EXPECT_EQ(env->state().step, env->episode_length());
    }
  }
}

TEST(DeviceEnv, IterativeStartsAndDeterminism) {
  auto single = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',mode=iterative)");
  for (int32_t d : single->node_device()) EXPECT_EQ(d, 0);
  EXPECT_DOUBLE_EQ(single->info_value("step_time_s"), single->info_value("single_device_time_s"));
  auto rr = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',mode=iterative,start=round_robin)");
  for (int32_t n = 0; n < rr->episode_length(); ++n) EXPECT_EQ(rr->node_device()[n], n % 3);
  auto a = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',mode=iterative,start=random)");
  auto b = Make(a->name());
  a->Reset(42);
  b->Reset(42);
  EXPECT_EQ(a->node_device(), b->node_device());
  b->Reset(43);
  EXPECT_NE(a->node_device(), b->node_device());
}

TEST(DeviceEnv, DynamicFeaturesFollowTheEpisode) {
  auto env = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',mode=iterative,start=round_robin)");
  const DynamicState& s = env->state();
  ASSERT_EQ(s.node_dynamic_names, (std::vector<std::string>{"decided", "current", "start_time", "on_device_0",
                                                              "on_device_1", "on_device_2"}));
  const int32_t dim = s.node_dynamic_dim;
  auto at = [&](int32_t node, int col) { return s.node_dynamic[static_cast<size_t>(node) * dim + col]; };
  for (int32_t n = 0; n < env->episode_length(); ++n) {
    EXPECT_EQ(at(n, 0), 0.f);
    EXPECT_EQ(at(n, 1), n == 0 ? 1.f : 0.f);
    EXPECT_GE(at(n, 2), 0.f);
    EXPECT_LE(at(n, 2), 1.f);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(at(n, 3 + d), d == n % 3 ? 1.f : 0.f);
  }
  EXPECT_EQ(at(0, 2), 0.f);  // the input starts the step
  float last_start = 0;
  for (int32_t n = 0; n < env->episode_length(); ++n) last_start = std::max(last_start, at(n, 2));
  EXPECT_GT(last_start, 0.f);
  env->Step(1);  // node 0 moves to gpu:1
  EXPECT_EQ(at(0, 0), 1.f);
  EXPECT_EQ(at(0, 1), 0.f);
  EXPECT_EQ(at(0, 4), 1.f);
  EXPECT_EQ(at(0, 3), 0.f);
  EXPECT_EQ(at(1, 1), 1.f);
  // One-shot: undecided nodes have no device until chosen.
  auto one = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)')");
  const DynamicState& o = one->state();
  for (size_t k = 0; k < o.node_dynamic.size(); ++k) {
    if (k % o.node_dynamic_dim != 1) {
      EXPECT_EQ(o.node_dynamic[k], 0.f);
    }
  }
}

TEST(DeviceEnv, CpuOnlyKindsAreMasked) {
  const std::string path = ::testing::TempDir() + "/cpu_only.pbtxt";
  {
    std::ofstream f(path);
    f << "name: \"two_gpus_and_host\"\n"
         "device { name: \"gpu\" type: \"gpu\" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 }\n"
         "device { name: \"cpu:0\" type: \"cpu\" flops_per_s: 6.5e11 bytes_per_s: 3.2e10 }\n"
         "link { preset: \"placeto\" }\n"
         "cpu_only_kind: \"softmax\"\n";
  }
  auto env = Make(std::string("device(graph=") + kGraph + ",machine='" + path + "')");
  ASSERT_EQ(env->num_actions(), 3);
  while (!env->done()) {
    const bool softmax_group = env->static_graph()->node_names[env->state().current_node] == "softmax";
    EXPECT_EQ(env->action_mask()[0], softmax_group ? 0 : 1);
    EXPECT_EQ(env->action_mask()[2], 1);
    env->Step(softmax_group ? 2 : 0);
  }
  EXPECT_GT(env->info_value("transfers"), 0);
}

TEST(DeviceEnv, BadParametersAreConfigErrors) {
  const std::string g = std::string("device(graph=") + kGraph;
  for (const std::string bad : {",mode=sometimes)", ",reward=cube)", ",oom=never)", ",start=middle)", ",oom_factor=-1)",
                                ",machine='k80(gpus=x)')", ",machine=nosuch.pbtxt)", ",memory_mask=maybe)", ",nosuchkey=1)"}) {
    EXPECT_THROW(MakeEnvironment(g + bad), Error) << bad;
  }
  EXPECT_THROW(MakeEnvironment("device(graph=no/such/file.graph)"), Error);
  // With the memory mask, a group larger than every device is refused up front (it names the group).
  try {
    MakeEnvironment(g + ",machine='baechi(gpus=2,memory_fraction=0.001)',memory_mask=true)");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
  }
}

// features=heft on a diamond a → {b, c} → d (one op per group), values recomputed by hand from
// the simulator's op times: static ranks, the list-schedule estimates after each decision.
TEST(DeviceEnv, HeftFeaturesByHandOnADiamond) {
  const std::string path = ::testing::TempDir() + "/placerl_diamond.graph";
  {
    std::ofstream f(path);
    f << "op a matmul flops=1000000000 bytes=3000000 out=1000000 params=0 temp=0 coloc=a\n"
         "op b matmul flops=2000000000 bytes=3000000 out=2000000 params=0 temp=0 coloc=b inputs=a\n"
         "op c matmul flops=1000000000 bytes=3000000 out=500000 params=0 temp=0 coloc=c inputs=a\n"
         "op d elementwise flops=1000000 bytes=3000000 out=1000 params=0 temp=0 coloc=d inputs=b,c\n";
  }
  auto env = Make("device(graph=" + path + ",machine='k80(gpus=2)',features=heft,reward=relative)");
  ASSERT_TRUE(env);
  EXPECT_NE(env->name().find("features=heft"), std::string::npos);
  const auto& inst = env->instance();
  const auto g = env->static_graph();
  ASSERT_EQ(env->episode_length(), 4);
  ASSERT_EQ(g->node_names, (std::vector<std::string>{"a", "b", "c", "d"}));
  perf::Simulator sim(inst.graph, inst.machine.sim);
  const int fast = inst.machine.FastestDevice();
  auto t = [&](const char* name, int d) {
    for (int op = 0; op < inst.graph.num_ops(); ++op)
      if (inst.graph.names[op] == name) return sim.OpTimeOn(op, d);
    ADD_FAILURE() << name;
    return 0.0;
  };
  const double single = inst.single_device_time;
  const double cp = t("a", fast) + std::max(t("b", fast), t("c", fast)) + t("d", fast);
  auto feature = [&](int node, const std::string& name) {
    for (int k = 0; k < g->node_feature_dim; ++k)
      if (g->node_feature_names[k] == name) return g->node_features[static_cast<size_t>(node) * g->node_feature_dim + k];
    ADD_FAILURE() << "no feature " << name;
    return 0.f;
  };
  EXPECT_EQ(g->node_feature_dim, 20);
  EXPECT_NEAR(feature(0, "upward_rank"), 1.0, 1e-6);
  EXPECT_NEAR(feature(1, "upward_rank"), (t("b", fast) + t("d", fast)) / cp, 1e-6);
  EXPECT_NEAR(feature(2, "upward_rank"), (t("c", fast) + t("d", fast)) / cp, 1e-6);
  EXPECT_NEAR(feature(3, "upward_rank"), t("d", fast) / cp, 1e-6);
  EXPECT_NEAR(feature(0, "downward_rank"), 0.0, 1e-6);
  EXPECT_NEAR(feature(1, "downward_rank"), t("a", fast) / cp, 1e-6);
  EXPECT_NEAR(feature(3, "downward_rank"), (t("a", fast) + t("b", fast)) / cp, 1e-6);
  EXPECT_NEAR(feature(1, "time_fraction"), t("b", fast) / single, 1e-6);

  const DynamicState& s = env->state();
  ASSERT_EQ(s.action_feature_names, (std::vector<std::string>{"relative_speed", "log_capacity_gb",
                                                               "memory_used_fraction", "fits", "est_finish",
                                                               "est_finish_delta", "device_load", "input_here",
                                                               "earliest"}));
  ASSERT_EQ(s.node_dynamic_names.back(), "est_finish");
  const int nd = env->num_actions();  // gpu:0, gpu:1, cpu:0
  ASSERT_EQ(nd, 3);
  auto act = [&](const std::string& name, int d) {
    for (int k = 0; k < s.action_feature_dim; ++k)
      if (s.action_feature_names[k] == name) return s.action_features[static_cast<size_t>(k) * nd + d];
    ADD_FAILURE() << "no action feature " << name;
    return 0.f;
  };
  // Nothing placed: the estimate is the group's own time on each device.
  for (int d = 0; d < nd; ++d) {
    EXPECT_NEAR(act("est_finish", d), t("a", d) / single, 1e-6);
    EXPECT_EQ(act("device_load", d), 0.f);
    EXPECT_EQ(act("input_here", d), 0.f);
    EXPECT_EQ(act("earliest", d), d == fast ? 1.f : 0.f);
  }
  env->Step(0);  // a → gpu:0
  const double fin_a = t("a", 0);
  const auto& link = inst.machine.sim.link;
  auto comm = [&](double bytes) { return link.latency_s + bytes / link.bandwidth; };
  EXPECT_NEAR(s.node_dynamic[static_cast<size_t>(0) * s.node_dynamic_dim + s.node_dynamic_dim - 1], fin_a / single, 1e-6);
  double eft_b[3];
  for (int d = 0; d < nd; ++d) {
    eft_b[d] = (d == 0 ? fin_a : fin_a + comm(1e6)) + t("b", d);
    EXPECT_NEAR(act("est_finish", d), eft_b[d] / single, 1e-6) << d;
    EXPECT_NEAR(act("device_load", d), d == 0 ? fin_a / single : 0.0, 1e-6);
    EXPECT_EQ(act("input_here", d), d == 0 ? 1.f : 0.f);
  }
  const int best_b = static_cast<int>(std::min_element(eft_b, eft_b + 3) - eft_b);
  EXPECT_EQ(act("earliest", best_b), 1.f);
  EXPECT_NEAR(act("est_finish_delta", 1), std::min(10.0, (eft_b[1] - eft_b[best_b]) / t("b", fast)), 1e-4);
  env->Step(1);  // b → gpu:1 (finishes at eft_b[1])
  for (int d = 0; d < nd; ++d) {
    const double free = d == 0 ? fin_a : d == 1 ? eft_b[1] : 0.0;
    const double eft = std::max(free, d == 0 ? fin_a : fin_a + comm(1e6)) + t("c", d);
    EXPECT_NEAR(act("est_finish", d), eft / single, 1e-6) << d;
  }
  env->Step(0);  // c → gpu:0 (finishes at fin_a + t_c)
  const double fin_c = fin_a + t("c", 0);
  // d's inputs: b (2 MB, on gpu:1) and c (0.5 MB, on gpu:0).
  EXPECT_NEAR(act("input_here", 0), 0.5 / 2.5, 1e-6);
  EXPECT_NEAR(act("input_here", 1), 2.0 / 2.5, 1e-6);
  EXPECT_NEAR(act("est_finish", 1),
              (std::max({eft_b[1], eft_b[1], fin_c + comm(5e5)}) + t("d", 1)) / single, 1e-6);
  const StepResult r = env->Step(1);
  ASSERT_TRUE(r.done);
  // reward=relative: −T / single-device time, T from an independent simulation.
  const perf::SimResult& res = sim.Run(env->OpPlacement());
  EXPECT_NEAR(r.reward, -res.makespan / single, 1e-9);
  // After the last decision the action features have no current group.
  for (int d = 0; d < nd; ++d) EXPECT_EQ(act("est_finish", d), 0.f);
  std::remove(path.c_str());
}

// A co-located gradient waits for the loss: the estimate schedules ops, not whole groups.
TEST(DeviceEnv, HeftEstimateSchedulesBackwardOpsWhenTheirInputsArePlaced) {
  const std::string path = ::testing::TempDir() + "/placerl_fwd_bwd.graph";
  {
    std::ofstream f(path);
    f << "op f matmul flops=1000000000 bytes=3000000 out=1000000 params=0 temp=0 coloc=f\n"
         "op l softmax flops=100000000 bytes=3000000 out=400000 params=0 temp=0 coloc=l inputs=f\n"
         "op g matmul flops=2000000000 bytes=3000000 out=1000000 params=0 temp=0 coloc=f inputs=l,f\n";
  }
  auto env = Make("device(graph=" + path + ",machine='k80(gpus=2)',features=heft)");
  ASSERT_TRUE(env);
  const auto& inst = env->instance();
  ASSERT_EQ(env->static_graph()->node_names, (std::vector<std::string>{"f", "l"}));
  perf::Simulator sim(inst.graph, inst.machine.sim);
  auto t = [&](int op, int d) { return sim.OpTimeOn(op, d); };  // ops 0 = f, 1 = l, 2 = g
  const double single = inst.single_device_time;
  const DynamicState& s = env->state();
  const int nd = env->num_actions();
  auto act = [&](int k, int d) { return s.action_features[static_cast<size_t>(k) * nd + d]; };  // 4 = est_finish, 6 = device_load
  auto est = [&](int node) { return s.node_dynamic[static_cast<size_t>(node) * s.node_dynamic_dim + s.node_dynamic_dim - 1]; };
  // f's group: only f is ready (g needs the loss), so the estimate is f's time alone.
  for (int d = 0; d < nd; ++d) EXPECT_NEAR(act(4, d), t(0, d) / single, 1e-6);
  env->Step(0);
  EXPECT_NEAR(est(0), t(0, 0) / single, 1e-6);
  EXPECT_NEAR(act(6, 0), t(0, 0) / single, 1e-6);
  const auto& link = inst.machine.sim.link;
  const double fin_l = t(0, 0) + link.latency_s + 1e6 / link.bandwidth + t(1, 1);
  EXPECT_NEAR(act(4, 1), fin_l / single, 1e-6);
  env->Step(1);  // l → gpu:1; g becomes ready and runs on gpu:0 after l's output arrives
  EXPECT_NEAR(est(1), fin_l / single, 1e-6);
  const double fin_g = fin_l + link.latency_s + 4e5 / link.bandwidth + t(2, 0);
  EXPECT_NEAR(act(6, 0), fin_g / single, 1e-6);
  EXPECT_NEAR(act(6, 1), fin_l / single, 1e-6);
  std::remove(path.c_str());
}

// order=rank decides groups in HEFT's list order (descending upward rank), still topological.
TEST(DeviceEnv, RankOrderPutsTheCriticalPathFirst) {
  const std::string path = ::testing::TempDir() + "/placerl_two_roots.graph";
  {
    std::ofstream f(path);
    f << "op x elementwise flops=1000 bytes=1000 out=1000 params=0 temp=0 coloc=x\n"
         "op y matmul flops=1000000000 bytes=3000000 out=1000 params=0 temp=0 coloc=y\n"
         "op z elementwise flops=1000 bytes=1000 out=1000 params=0 temp=0 coloc=z inputs=x,y\n";
  }
  auto topo = Make("device(graph=" + path + ",machine='k80(gpus=2)')");
  EXPECT_EQ(topo->static_graph()->node_names, (std::vector<std::string>{"x", "y", "z"}));
  auto rank = Make("device(graph=" + path + ",machine='k80(gpus=2)',order=rank,features=heft)");
  EXPECT_EQ(rank->static_graph()->node_names, (std::vector<std::string>{"y", "x", "z"}));
  EXPECT_NE(rank->name().find("order=rank"), std::string::npos);
  EXPECT_EQ(topo->name().find("order="), std::string::npos);
  // The estimate follows the list: y on gpu:0, then x's best is gpu:1 (gpu:0 is busy with y).
  rank->Step(0);
  const DynamicState& s = rank->state();
  const int nd = rank->num_actions();
  EXPECT_EQ(s.action_features[static_cast<size_t>(8) * nd + 1], 1.f);  // earliest
  while (!rank->done()) rank->Step(0);
  EXPECT_THROW(MakeEnvironment("device(graph=" + path + ",order=sideways)"), ConfigError);
  std::remove(path.c_str());
}

TEST(DeviceEnv, DefaultFeaturesAreUnchangedAndHeftIsOneShotOnly) {
  auto basic = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)')");
  EXPECT_EQ(basic->static_graph()->node_feature_dim, 17);
  EXPECT_EQ(basic->state().action_feature_dim, 4);
  EXPECT_EQ(basic->state().node_dynamic_dim, 6);
  EXPECT_EQ(basic->name().find("features"), std::string::npos);
  auto heft = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',features=heft)");
  EXPECT_EQ(heft->static_graph()->node_feature_dim, 20);
  EXPECT_EQ(heft->state().action_feature_dim, 9);
  EXPECT_EQ(heft->state().node_dynamic_dim, 7);
  // The extra features change what the policy sees, not the MDP: same placements, same rewards.
  std::mt19937_64 rng(3);
  for (uint64_t ep = 0; ep < 5; ++ep) {
    basic->Reset(ep);
    heft->Reset(ep);
    while (!basic->done()) {
      ASSERT_EQ(basic->action_mask(), heft->action_mask());
      const int32_t a = RandomLegal(*basic, rng);
      const StepResult rb = basic->Step(a), rh = heft->Step(a);
      EXPECT_EQ(rb.reward, rh.reward);
      EXPECT_EQ(rb.done, rh.done);
    }
    EXPECT_TRUE(heft->done());
  }
  const std::string g = std::string("device(graph=") + kGraph;
  EXPECT_THROW(MakeEnvironment(g + ",features=all)"), ConfigError);
  EXPECT_THROW(MakeEnvironment(g + ",features=heft,mode=iterative)"), ConfigError);
  EXPECT_THROW(MakeEnvironment(g + ",reward=relativ)"), ConfigError);
}

}  // namespace
}  // namespace placerl::env
