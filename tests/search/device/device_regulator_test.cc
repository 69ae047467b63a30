// The device environment's regulator formulation (mode=iterative started from a list scheduler,
// docs/device_regulator.md): start=heft's first observation is PlaceHeft's placement, an
// episode's rewards sum to f(T_start) − f(T_end), episode_start=best seeds the next episode
// with the best placement seen and stays deterministic, and bad or infeasible starts are
// one-line ConfigErrors; start=heft_ls starts from HEFT + local search.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "cost_models/tpu/machine.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "env/device/device_env.h"
#include "env/registry.h"
#include "search/device/baselines.h"
#include "search/device/placers.h"

namespace placerl {
namespace {

const char* kGraph = "tests/data/device/mlp_training.graph";

std::unique_ptr<env::DeviceEnv> Make(const std::string& spec) {
  device_baseline::RegisterDeviceStartPlacers();
  std::unique_ptr<env::Environment> e = env::MakeEnvironment(spec);
  auto* d = dynamic_cast<env::DeviceEnv*>(e.get());
  EXPECT_NE(d, nullptr);
  e.release();
  return std::unique_ptr<env::DeviceEnv>(d);
}

int32_t RandomLegal(const env::Environment& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  for (int32_t a = 0; a < e.num_actions(); ++a)
    if (e.action_mask()[a]) legal.push_back(a);
  return legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

// The node placement the observation shows (on_device_* one-hot).
std::vector<int32_t> ObservedNodes(const env::DeviceEnv& e) {
  const env::DynamicState& s = e.state();
  std::vector<int32_t> nodes(e.episode_length(), -1);
  for (int32_t n = 0; n < e.episode_length(); ++n)
    for (int32_t d = 0; d < e.num_actions(); ++d)
      if (s.node_dynamic[static_cast<size_t>(n) * s.node_dynamic_dim + 3 + d] == 1.f) nodes[n] = d;
  return nodes;
}

TEST(DeviceRegulator, StartHeftIsPlaceHeftsPlacement) {
  for (const std::string& graph : {std::string(kGraph), std::string("'layered(ops=80,width=6,fan_in=2,seed=4)'")}) {
    const std::string machine = "k80(gpus=3,cpu=0)";
    auto e = Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative,start=heft)");
    const graphs::ComputeGraph& g = e->instance().graph;
    const perf::Machine m = perf::MachineFromSpec(machine);
    const std::vector<int> heft = search::PlaceHeft(g, m.sim);
    for (uint64_t seed : {1, 7}) {
      e->Reset(seed);
      EXPECT_EQ(e->OpPlacement(), heft) << graph;
      EXPECT_EQ(ObservedNodes(*e), e->NodePlacement(heft)) << graph;
      // On the layered graph HEFT uses several devices: start=single would fail here (on the
      // MLP, K80 transfers keep HEFT on one device).
      std::set<int> used(heft.begin(), heft.end());
      if (graph != kGraph) {
        EXPECT_GT(used.size(), 1u) << graph;
      }
      // Its step time is the simulator's for HEFT's placement.
      perf::Simulator sim(g, m.sim);
      EXPECT_EQ(e->info_value("step_time_s"), sim.Run(heft).makespan);
    }
  }
}

TEST(DeviceRegulator, CpuOnlyKindsAndOtherSchedulersAsStarts) {
  // On a machine with a CPU the list schedulers place on the accelerators (place-baseline's
  // devices=accelerators); m_sct / m_etf / m_topo / metis / scotch / expert are starts too.
  for (const char* start : {"heft", "m_sct", "m_etf", "m_topo", "metis", "scotch", "expert"}) {
    auto e = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2,cpu=1)',mode=iterative,start=" + start + ")");
    e->Reset(3);
    const std::vector<int32_t>& nodes = e->node_device();
    for (int32_t d : nodes) EXPECT_LT(d, 2) << start;  // device 2 is the CPU
    EXPECT_EQ(e->instance().start_nodes, nodes) << start;
  }
}

// start=heft_ls: HEFT + local search (place-baseline --method heft_ls's placer) as the start; what
// it cost is kept in the instance for the trainer to charge (a list scheduler's too; none for single).
TEST(DeviceRegulator, StartHeftLsIsTheLocalSearchsPlacement) {
  const std::string graph = "'layered(ops=80,width=6,fan_in=2,seed=4)'", machine = "k80(gpus=3,cpu=0)";
  auto e = Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative,start=heft_ls)");
  auto h = Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative,start=heft)");
  const graphs::ComputeGraph& g = e->instance().graph;
  const perf::Machine m = perf::MachineFromSpec(machine);
  env::DeviceEnvOptions eo;
  eo.graph_data = std::make_shared<const graphs::ComputeGraph>(g);
  eo.machine = machine;
  env::DeviceEnv judge(eo);
  config::DevicePlaceBaselineConfig c = device_baseline::DefaultDevicePlaceBaselineConfig();
  std::vector<int> ls;
  for (const device_baseline::Placer& p : device_baseline::Placers())
    if (p.name == "heft_ls") ls = p.place({g, m, 1, &judge, c, nullptr});
  ASSERT_EQ(ls.size(), static_cast<size_t>(g.num_ops()));
  e->Reset(2);
  EXPECT_EQ(e->OpPlacement(), ls);
  h->Reset(2);
  EXPECT_NE(e->OpPlacement(), h->OpPlacement());  // the local search moved something here
  EXPECT_LT(e->info_value("effective_time_s"), h->info_value("effective_time_s"));
  EXPECT_GT(e->instance().start_cpu_s, 0);
  EXPECT_GT(e->instance().start_wall_s, 0);
  EXPECT_EQ(Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative)")->instance().start_cpu_s, 0);
  // start_minutes: in the name when not the default 1, the local search's budget; (0, 1e4].
  auto timed = Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative,start=heft_ls,start_minutes=0.5)");
  EXPECT_NE(timed->name().find("start_minutes=0.5"), std::string::npos) << timed->name();
  EXPECT_EQ(e->name().find("start_minutes"), std::string::npos) << e->name();
  timed->Reset(2);
  EXPECT_EQ(timed->OpPlacement(), ls);  // a local optimum well inside either budget
  for (const char* bad : {"0", "-1", "nan", "1e5"})
    EXPECT_THROW(Make("device(graph=" + graph + ",machine='" + machine + "',mode=iterative,start=heft_ls,start_minutes=" +
                      bad + ")"),
                 ConfigError)
        << bad;
}

TEST(DeviceRegulator, RewardsSumToTheStartMinusTheEndTime) {
  for (const char* reward : {"id", "sqrt", "relative"}) {
    auto e = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=heft,reward=" +
                  reward + ")");
    std::mt19937_64 rng(5);
    for (uint64_t ep = 0; ep < 3; ++ep) {
      e->Reset(ep);
      const double f_start = e->Transform(e->info_value("effective_time_s"));
      double sum = 0;
      int moves = 0;
      while (!e->done()) {
        const int32_t before = e->node_device()[e->state().current_node];
        const int32_t a = RandomLegal(*e, rng);
        moves += a != before;
        sum += e->Step(a).reward;
      }
      ASSERT_GT(moves, 0);
      const double f_end = e->Transform(e->info_value("effective_time_s"));
      EXPECT_NEAR(sum, f_start - f_end, 1e-12 * std::max(1.0, std::abs(f_start))) << reward;
    }
  }
}

TEST(DeviceRegulator, EpisodeStartBestSeedsTheNextEpisodeDeterministically) {
  const std::string spec = std::string("device(graph=") + kGraph +
                           ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=round_robin,episode_start=best)";
  auto a = Make(spec), b = Make(spec);
  std::mt19937_64 rng(2);
  double best = INFINITY;
  std::vector<int32_t> best_nodes;
  for (uint64_t ep = 0; ep < 6; ++ep) {
    a->Reset(ep);
    b->Reset(ep);
    // The episode starts from the best placement any earlier step reached (round robin at first).
    if (ep > 0) {
      EXPECT_EQ(a->node_device(), best_nodes);
      EXPECT_EQ(a->info_value("effective_time_s"), best);
    }
    if (a->info_value("effective_time_s") < best) best = a->info_value("effective_time_s"), best_nodes = a->node_device();
    while (!a->done()) {
      const int32_t act = RandomLegal(*a, rng);
      EXPECT_EQ(a->Step(act).reward, b->Step(act).reward);
      if (a->info_value("effective_time_s") < best) best = a->info_value("effective_time_s"), best_nodes = a->node_device();
    }
    EXPECT_EQ(a->node_device(), b->node_device());
  }
  // A clone carries the best placement: its next reset starts where the original's does.
  auto c = a->Clone();
  a->Reset(100);
  c->Reset(100);
  EXPECT_EQ(a->node_device(), dynamic_cast<env::DeviceEnv&>(*c).node_device());
  EXPECT_EQ(a->node_device(), best_nodes);
  // episode_start=fixed (the default) starts every episode from round robin again.
  auto f = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=round_robin)");
  f->Reset(0);
  const std::vector<int32_t> rr = f->node_device();
  while (!f->done()) f->Step(RandomLegal(*f, rng));
  f->Reset(1);
  EXPECT_EQ(f->node_device(), rr);
}

// episode_result=best: the episode ends on the best placement it visited (never worse than its
// start) and the rewards still sum to f(T_start) − f(T_end).
TEST(DeviceRegulator, EpisodeResultBestEndsOnTheBestVisitedPlacement) {
  auto e = Make(std::string("device(graph=") + kGraph +
                ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=heft,episode_result=best,reward=sqrt)");
  auto last = Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=heft,reward=sqrt)");
  std::mt19937_64 rng(4);
  int restored = 0;
  for (uint64_t ep = 0; ep < 8; ++ep) {
    e->Reset(ep);
    last->Reset(ep);
    const double start = e->info_value("effective_time_s");
    double best = start, sum = 0;
    std::vector<int32_t> best_nodes = e->node_device();
    while (!e->done()) {
      const int32_t a = RandomLegal(*e, rng);
      const double r = e->Step(a).reward;
      sum += r;
      last->Step(a);
      if (!e->done()) {
        ASSERT_EQ(e->node_device(), last->node_device());
      }
      if (last->info_value("effective_time_s") < best) {
        best = last->info_value("effective_time_s");
        best_nodes = last->node_device();
      }
    }
    EXPECT_EQ(e->info_value("effective_time_s"), best);
    EXPECT_EQ(e->node_device(), best_nodes);
    EXPECT_LE(e->info_value("effective_time_s"), start);
    EXPECT_NEAR(sum, std::sqrt(start) - std::sqrt(best), 1e-12);
    restored += last->info_value("effective_time_s") > best;
  }
  EXPECT_GT(restored, 0);  // random moves end worse than the best they passed
}

// episode_groups=K: K steps per episode over consecutive groups (cyclically) from a first group
// drawn from the reset seed; the rest of the placement is carried along unchanged.
TEST(DeviceRegulator, EpisodeGroupsVisitsAWindowOfConsecutiveGroups) {
  auto e = Make(std::string("device(graph=") + kGraph +
                ",machine='k80(gpus=3,cpu=1)',mode=iterative,start=heft,episode_groups=5,episode_start=best)");
  const int32_t n = e->num_groups();
  ASSERT_GT(n, 5);
  EXPECT_EQ(e->episode_length(), 5);
  std::set<int32_t> firsts;
  std::mt19937_64 rng(8);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    e->Reset(seed);
    const int32_t first = e->state().current_node;
    firsts.insert(first);
    int32_t steps = 0;
    while (!e->done()) {
      EXPECT_EQ(e->state().current_node, (first + steps) % n);
      const std::vector<int32_t> before = e->node_device();
      const int32_t a = RandomLegal(*e, rng);
      const int32_t node = e->state().current_node;
      e->Step(a);
      ++steps;
      for (int32_t k = 0; k < n; ++k) {  // only the visited group moved (no episode_result=best here)
        if (k != node) {
          ASSERT_EQ(e->node_device()[k], before[k]);
        }
      }
    }
    EXPECT_EQ(steps, 5);
  }
  EXPECT_GT(firsts.size(), 5u);  // the window moves with the seed
  // With the best-keeping options and placements that run out of memory on the way, each
  // window's rewards still sum to f(T_start) − f(T_end), T_end the window's best.
  auto w = Make(std::string("device(graph=") + kGraph +
                ",machine='baechi(gpus=3,memory_fraction=0.03)',mode=iterative,start=heft,episode_groups=6,"
                "episode_start=best,episode_result=best,reward=sqrt)");
  int ooms = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    w->Reset(seed);
    const double start = w->info_value("effective_time_s");
    double sum = 0;
    while (!w->done()) {
      sum += w->Step(RandomLegal(*w, rng)).reward;
      ooms += w->info_value("oom") != 0;
    }
    EXPECT_LE(w->info_value("effective_time_s"), start);
    EXPECT_NEAR(sum, std::sqrt(start) - std::sqrt(w->info_value("effective_time_s")), 1e-12);
  }
  EXPECT_GT(ooms, 0);
  EXPECT_THROW(Make(std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)',episode_groups=3)"), ConfigError);
}

// sim_cache answers revisited placements with the values their simulation wrote: rewards,
// info and observations equal those of an environment that simulates every move, to the bit.
TEST(DeviceRegulator, CachedSimulationsEqualFullSimulations) {
  for (const std::string& rest : {std::string(",machine='k80(gpus=3,cpu=1)',mode=iterative,start=heft"),
                                  std::string(",machine='baechi(gpus=3,memory_fraction=0.02)',mode=iterative,"
                                              "start=round_robin,memory_mask=true,memory_estimate=lifetime,"
                                              "episode_start=best,oom=placeto")}) {
    auto full = Make(std::string("device(graph=") + kGraph + rest + ",sim_cache=0)");
    auto cached = Make(std::string("device(graph=") + kGraph + rest + ",sim_cache=64)");
    std::mt19937_64 rng(9);
    for (uint64_t ep = 0; ep < 40; ++ep) {
      full->Reset(ep);
      cached->Reset(ep);
      // Half the episodes replay episode 0's first moves (revisits), the rest draw new ones.
      std::mt19937_64 replay(ep % 2 ? ep : 1);
      while (!full->done()) {
        ASSERT_EQ(full->state().node_dynamic, cached->state().node_dynamic);
        ASSERT_EQ(full->state().action_mask, cached->state().action_mask);
        ASSERT_EQ(full->info(), cached->info());
        const int32_t a = RandomLegal(*full, ep % 2 ? rng : replay);
        ASSERT_EQ(full->Step(a).reward, cached->Step(a).reward);
      }
      ASSERT_EQ(full->info(), cached->info());
      ASSERT_EQ(full->node_device(), cached->node_device());
    }
    EXPECT_EQ(full->sim_cache_hits(), 0);
    EXPECT_GT(cached->sim_cache_hits(), 100) << rest;
  }
}

TEST(DeviceRegulator, BadStartsAreOneLineConfigErrors) {
  const std::string g = std::string("device(graph=") + kGraph + ",machine='k80(gpus=2)'";
  auto message = [&](const std::string& spec) {
    try {
      Make(spec);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = message(g + ",mode=iterative,start=nope)");
  EXPECT_NE(unknown.find("heft"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("m_sct"), std::string::npos) << unknown;
  EXPECT_NE(message(g + ",start=heft)").find("needs mode=iterative"), std::string::npos);
  EXPECT_NE(message(g + ",mode=iterative,episode_start=worst)").find("episode_start"), std::string::npos);
  EXPECT_NE(message(g + ",episode_start=best)").find("needs mode=iterative"), std::string::npos);
  EXPECT_NE(message(g + ",mode=iterative,sim_cache=-1)").find("sim_cache"), std::string::npos);
  EXPECT_NE(message(g + ",episode_result=best)").find("needs mode=iterative"), std::string::npos);
  // HEFT is not memory-aware: on GPUs of 2 % of a K80's memory its placement overflows the mask's estimate.
  const std::string oom = message(std::string("device(graph=") + kGraph +
                                  ",machine='baechi(gpus=3,memory_fraction=0.02)',mode=iterative,start=heft,memory_mask=true)");
  EXPECT_NE(oom.find("start=heft does not fit the memory mask"), std::string::npos) << oom;
  for (const std::string& m : {unknown, oom}) EXPECT_EQ(m.find('\n'), std::string::npos);
  // m_etf cannot place at all where no group fits: a ConfigError, not InfeasibleAction.
  EXPECT_THROW(Make(std::string("device(graph=") + kGraph +
                    ",machine='baechi(gpus=2,memory_fraction=0.0001)',mode=iterative,start=m_etf)"),
               ConfigError);
}

}  // namespace
}  // namespace placerl
