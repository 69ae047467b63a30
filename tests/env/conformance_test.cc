// The conformance suite every registered environment passes (OpenSpiel's basic_tests): random
// legal episodes never violate the mask, episode length as documented, determinism for a seed,
// clone() equals the original after any prefix and is independent of it, observation shapes
// never change, rewards and info finite, name() re-creates the environment, and batched stepping
// equals stepping one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "datasets/util/errors.h"
#include "env/registry.h"
#include "env/vector_env.h"
#include "search/device/placers.h"

namespace placerl::env {
namespace {

struct Snapshot {
  std::vector<float> node_dynamic, action_features;
  std::vector<uint8_t> mask;
  int32_t current_node, step;
  std::vector<double> info;
  bool done;
  bool operator==(const Snapshot& o) const {
    return node_dynamic == o.node_dynamic && action_features == o.action_features && mask == o.mask &&
           current_node == o.current_node && step == o.step && info == o.info && done == o.done;
  }
};

Snapshot Take(const Environment& e) {
  const DynamicState& s = e.state();
  return {s.node_dynamic, s.action_features, s.action_mask, s.current_node, s.step, e.info(), e.done()};
}

int32_t RandomLegal(const Environment& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  const auto& m = e.action_mask();
  for (int32_t a = 0; a < static_cast<int32_t>(m.size()); ++a)
    if (m[a]) legal.push_back(a);
  if (legal.empty()) return -1;
  return legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

// Every spec tested: the registry's examples plus a few real instances.
std::vector<std::string> Specs() {
  device_baseline::RegisterDeviceStartPlacers();  // device(mode=iterative,start=heft|m_sct|…)
  std::vector<std::string> s;
  for (const auto& r : BuiltinRegistry().registrations()) s.push_back(r.example);
  s.push_back("chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
              "plc=../shared/datasets/chip/ariane133_ng45/initial.plc,reward=dense)");
  s.push_back("chip(seed=3,reward=dense,soft=keep)");
  s.push_back("chip(seed=4,reward=dense,soft=keep,off_canvas_nets=skip)");
  s.push_back("chip(seed=5,soft=keep,cost_map=proxy)");
  s.push_back("chip(seed=5,soft=keep,cost_map=split)");
  s.push_back("chip(netlist=../shared/datasets/chip/circuit_training/simple_grouped_with_coords_with_blockage/netlist.pb.txt,"
              "plc=../shared/datasets/chip/circuit_training/simple_grouped_with_coords_with_blockage/initial.plc)");
  // The regulator (mode=refine): complete placements, one hard macro moved per step.
  s.push_back("chip(seed=3,mode=refine)");
  s.push_back("chip(seed=5,mode=refine,cost_map=proxy,episode_start=best,steps=6,episode_end_fd=true)");
  s.push_back("chip(netlist=../shared/datasets/chip/circuit_training/simple_grouped_with_coords_with_blockage/netlist.pb.txt,"
              "plc=../shared/datasets/chip/circuit_training/simple_grouped_with_coords_with_blockage/initial.plc,"
              "mode=refine,start=input,episode_result=best,cost_map=split,reward_scale=100)");
  s.push_back("partition(nodes=10,devices=3,extra_edges=5,graph_seed=7)");
  s.push_back("device(graph=tests/data/device/mlp_training.graph,machine='baechi(gpus=3,memory_fraction=0.02)',"
              "memory_mask=true)");
  s.push_back("device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)',mode=iterative,start=random)");
  s.push_back("device(graph=tests/data/device/mlp_training.graph,machine='baechi(gpus=3,memory_fraction=0.02)',"
              "memory_mask=true,features=heft,reward=relative)");
  s.push_back("device(graph='layered(ops=40,width=5,fan_in=2,seed=3)',machine='tpu(type=v3,chips=2)',"
              "mode=iterative,memory_mask=true,oom=placeto)");
  s.push_back("device(graph=tests/data/device/mlp_training.graph,machine='baechi(gpus=3,memory_fraction=0.02)',"
              "memory_mask=true,memory_estimate=lifetime)");
  s.push_back("device(graph='layered(ops=40,width=5,fan_in=2,seed=3)',machine='tpu(type=v3,chips=2)',"
              "mode=iterative,start=random,memory_mask=true,memory_estimate=lifetime)");
  s.push_back("device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)',mode=iterative,start=heft,episode_result=best)");
  s.push_back("device(graph='layered(ops=40,width=5,fan_in=2,seed=3)',machine='k80(gpus=3,cpu=0)',mode=iterative,"
              "start=heft,episode_start=best,episode_groups=7)");
  s.push_back("device(graph='layered(ops=40,width=5,fan_in=2,seed=3)',machine='k80(gpus=3,cpu=0)',mode=iterative,"
              "start=heft_ls,start_minutes=0.25,episode_start=best,episode_result=best,episode_groups=7)");
  s.push_back("device(graph='layered(ops=40,width=5,fan_in=2,seed=3)',machine='tpu(type=v3,chips=2)',"
              "mode=iterative,start=m_sct,memory_mask=true,memory_estimate=lifetime,episode_start=best)");
  s.push_back("block(space=nas_bench_macro,budget=60,penalty=0.5)");
  s.push_back("block(space=nb201,dataset=imagenet16-120,budget=100)");
  s.push_back("block(space=enas_macro)");
  s.push_back("block(space=enas_micro,seed=3)");
  s.push_back("block(space=brainformer)");
  s.push_back("block(space=brainformer,budget=glam,penalty=2,plan=search,blocks=4,mesh=tpu_v5e:4x4)");
  return s;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, NameRecreatesTheEnvironment) {
  auto env = MakeEnvironment(GetParam());
  auto again = MakeEnvironment(env->name());
  EXPECT_EQ(again->name(), env->name());
  EXPECT_EQ(again->action_spec(), env->action_spec());
  EXPECT_EQ(again->static_graph()->node_features, env->static_graph()->node_features);
}

TEST_P(Conformance, RandomEpisodesRespectMaskShapesAndFiniteness) {
  auto env = MakeEnvironment(GetParam());
  const auto graph = env->static_graph();
  ASSERT_NO_THROW(graph->Validate());
  const ActionSpec spec = env->action_spec();
  const size_t dyn_size = static_cast<size_t>(graph->num_nodes) * env->state().node_dynamic_dim;
  std::mt19937_64 rng(7);
  for (uint64_t seed = 0; seed < 3; ++seed) {
    env->Reset(seed);
    double ret = 0;
    int32_t steps = 0;
    bool infeasible = false;
    while (!env->done()) {
      const DynamicState& s = env->state();
      ASSERT_EQ(s.action_mask.size(), static_cast<size_t>(spec.num_actions()));
      ASSERT_EQ(s.node_dynamic.size(), dyn_size);
      ASSERT_EQ(s.action_features.size(), static_cast<size_t>(s.action_feature_dim) * spec.num_actions());
      ASSERT_GE(s.current_node, 0);
      ASSERT_LT(s.current_node, graph->num_nodes);
      ASSERT_EQ(s.step, steps);
      // A masked-out action is refused and changes nothing.
      for (int32_t a = 0; a < spec.num_actions(); ++a) {
        if (s.action_mask[a]) continue;
        const Snapshot before = Take(*env);
        EXPECT_THROW(env->Step(a), InfeasibleAction);
        EXPECT_TRUE(before == Take(*env));
        break;
      }
      EXPECT_THROW(env->Step(-1), InfeasibleAction);
      EXPECT_THROW(env->Step(spec.num_actions()), InfeasibleAction);
      const int32_t a = RandomLegal(*env, rng);
      ASSERT_GE(a, 0) << "a live state must have a legal action";
      const StepResult r = env->Step(a);
      ++steps;
      ASSERT_TRUE(std::isfinite(r.reward));
      for (double v : env->info()) ASSERT_TRUE(std::isfinite(v));
      ret += r.reward;
      EXPECT_EQ(r.done, env->done());
      infeasible |= r.infeasible;
      ASSERT_LE(steps, env->episode_length());
    }
    if (!infeasible) {
      EXPECT_EQ(steps, env->episode_length());
    }
    EXPECT_EQ(env->state().current_node, -1);
    for (uint8_t m : env->action_mask()) EXPECT_EQ(m, 0);
    EXPECT_THROW(env->Step(0), InfeasibleAction);
    EXPECT_TRUE(std::isfinite(ret));
    EXPECT_EQ(env->static_graph(), graph) << "the static graph is shared, never rebuilt";
    EXPECT_EQ(env->info().size(), env->info_names().size());
  }
}

TEST_P(Conformance, DeterministicForASeedAndClonesAreEqualAndIndependent) {
  auto a = MakeEnvironment(GetParam());
  auto b = MakeEnvironment(GetParam());
  std::mt19937_64 rng(11);
  a->Reset(5);
  b->Reset(5);
  std::vector<int32_t> actions;
  std::unique_ptr<Environment> clone;
  int32_t clone_at = std::max(1, a->episode_length() / 2);
  while (!a->done()) {
    ASSERT_TRUE(Take(*a) == Take(*b));
    if (static_cast<int32_t>(actions.size()) == clone_at) clone = a->Clone();
    const int32_t act = RandomLegal(*a, rng);
    actions.push_back(act);
    const StepResult ra = a->Step(act), rb = b->Step(act);
    ASSERT_EQ(ra.reward, rb.reward);
    ASSERT_EQ(ra.done, rb.done);
  }
  ASSERT_TRUE(Take(*a) == Take(*b));
  if (!clone) return;  // episode shorter than the clone point
  // The clone replays the rest of the same actions to the same end; stepping it did not
  // disturb `a`, which is already done.
  const Snapshot end = Take(*a);
  for (size_t k = clone_at; k < actions.size(); ++k) clone->Step(actions[k]);
  EXPECT_TRUE(Take(*clone) == end);
  EXPECT_TRUE(Take(*a) == end);
  // A clone of a fresh reset equals a fresh reset.
  a->Reset(9);
  auto c = a->Clone();
  EXPECT_TRUE(Take(*c) == Take(*a));
}

TEST_P(Conformance, BatchedSteppingEqualsSingleStepping) {
  auto proto = MakeEnvironment(GetParam());
  const int32_t batch = 3;
  VectorEnv vec = VectorEnv::Replicate(*proto, batch, 100);
  BatchBuffers buf;
  vec.Reset(&buf);
  std::vector<std::unique_ptr<Environment>> single;
  for (int32_t i = 0; i < batch; ++i) {
    single.push_back(proto->Clone());
    single.back()->Reset(100 + i);
  }
  std::mt19937_64 rng(3);
  std::vector<double> returns(batch, 0.0);
  const int32_t steps = proto->episode_length() + 3;  // crosses an auto-reset
  std::vector<uint64_t> next_seed;
  for (int32_t i = 0; i < batch; ++i) next_seed.push_back(100 + i + batch);
  for (int32_t t = 0; t < steps; ++t) {
    std::vector<int32_t> act(batch);
    for (int32_t i = 0; i < batch; ++i) act[i] = RandomLegal(*single[i], rng);
    vec.Step(act.data(), &buf);
    for (int32_t i = 0; i < batch; ++i) {
      const StepResult r = single[i]->Step(act[i]);
      returns[i] += r.reward;
      ASSERT_FLOAT_EQ(buf.reward[i], static_cast<float>(r.reward));
      ASSERT_EQ(buf.done[i], r.done ? 1 : 0);
      if (r.done) {
        EXPECT_DOUBLE_EQ(buf.episode_return[i], returns[i]);
        for (size_t k = 0; k < single[i]->info().size(); ++k)
          EXPECT_EQ(buf.final_info[i * buf.info_stride + k], single[i]->info()[k]);
        single[i]->Reset(next_seed[i]);
        next_seed[i] += batch;
        returns[i] = 0;
      }
      const DynamicState& s = single[i]->state();
      ASSERT_EQ(buf.current_node[i], s.current_node);
      for (size_t a = 0; a < s.action_mask.size(); ++a) ASSERT_EQ(buf.mask[i * buf.mask_stride + a], s.action_mask[a]);
      for (size_t k = 0; k < s.node_dynamic.size(); ++k)
        ASSERT_EQ(buf.node_dynamic[i * buf.dynamic_stride + k], s.node_dynamic[k]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, Conformance, ::testing::ValuesIn(Specs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::to_string(info.index);
                         });

// When several environments of a batch fail, Step throws the lowest-numbered one's error, whatever
// order the threads ran in (it was the first to reach the handler: the Python binding's message
// changed from run to run).
TEST(VectorEnvErrors, TheLowestNumberedEnvironmentsErrorIsThrown) {
  auto proto = MakeEnvironment("chip(seed=1)");
  const int32_t batch = 8;
  VectorEnv vec = VectorEnv::Replicate(*proto, batch, 100);
  BatchBuffers buf;
  vec.Reset(&buf);
  std::mt19937_64 rng(5);
  for (int first = 0; first < 3; ++first) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<int32_t> act(batch);
      for (int32_t i = 0; i < batch; ++i) act[i] = RandomLegal(vec.env(i), rng);
      for (int32_t i = first; i < batch; ++i) act[i] = 1000000 + i;  // illegal: every one from `first` on fails
      try {
        vec.Step(act.data(), &buf);
        ADD_FAILURE() << "no error";
      } catch (const InfeasibleAction& e) {
        const std::string want = "cell " + std::to_string(1000000 + first) + " is not legal";
        ASSERT_NE(std::string(e.what()).find(want), std::string::npos) << e.what() << " (want " << want << ")";
      }
      vec.Reset(&buf);  // the environments before `first` stepped: start over
    }
  }
}

TEST(Registry, ParsesQuotesRejectsUnknownAndDuplicateKeys) {
  auto [name, p] = EnvParams::Parse("chip(netlist='a,b.pb.txt', plc=\"x(1).plc\")");
  EXPECT_EQ(name, "chip");
  EXPECT_EQ(p.GetString("netlist", ""), "a,b.pb.txt");
  EXPECT_EQ(p.GetString("plc", ""), "x(1).plc");
  EXPECT_EQ(p.Canonical("chip"), "chip(netlist='a,b.pb.txt',plc='x(1).plc')");
  EXPECT_THROW(EnvParams::Parse("chip(a=1,a=2)"), ConfigError);
  EXPECT_THROW(EnvParams::Parse("chip(a=1"), ConfigError);
  EXPECT_THROW(EnvParams::Parse("chip(=1)"), ConfigError);
  EXPECT_THROW(EnvParams::Parse("chip(a='1)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("nosuch(a=1)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("partition(nodez=3)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("partition(nodes=x)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("partition(nodes=1)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("chip(seed=2,reward=often)"), ConfigError);
  try {
    MakeEnvironment("partition(nodez=3)");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: nodes"), std::string::npos) << e.what();
  }
}

TEST(Registry, NamePrintsDefaultedValues) {
  auto env = MakeEnvironment("partition");
  EXPECT_EQ(env->name(), "partition(nodes=8,devices=2,capacity=4,extra_edges=8,graph_seed=1)");
  auto chip = MakeEnvironment("chip(seed=2)");
  EXPECT_EQ(chip->name(), "chip(netlist='',plc='',seed=2,weights='1,0.5,0.5',reward=sparse,soft=fd,infeasible_reward=-4,maps=true,off_canvas_nets=clamp)");
  EXPECT_NE(MakeEnvironment("chip(seed=2,off_canvas_nets=skip)")->name().find("off_canvas_nets=skip"), std::string::npos);
  EXPECT_THROW(MakeEnvironment("chip(seed=2,off_canvas_nets=never)"), ConfigError);
}

}  // namespace
}  // namespace placerl::env
