// The block environment: an episode builds the architecture it was given and ends with the
// table's accuracy; the reward is quality minus the step-time penalty with every term in info;
// masks are the space's (real number of choices, rules); the observation is one node per
// decision with the choices made so far.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "datasets/nas/tables.h"
#include "datasets/util/errors.h"
#include "env/block/block_env.h"
#include "env/registry.h"

namespace placerl::env {
namespace {

double Info(const Environment& e, const std::string& k) { return e.info_value(k); }

TEST(BlockEnv, AnEpisodeOnNb201EndsWithTheTableAccuracy) {
  BlockEnv env(BlockEnvOptions{});
  EXPECT_EQ(env.action_spec(), ActionSpec::Choice(5));
  EXPECT_EQ(env.episode_length(), 6);
  EXPECT_EQ(env.static_graph()->num_nodes, 6);
  // 5 order edges, node3/from0–node3/from2, and the edges from nodes 1 and 2 to their sources.
  EXPECT_EQ(env.static_graph()->num_edges(), 5 + 1 + 3);
  const std::string arch = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|";
  int32_t ops[6];
  ASSERT_EQ(nas::ParseNb201ArchString(arch, ops), "");
  env.Reset(0);
  StepResult r;
  for (int32_t d = 0; d < 6; ++d) {
    EXPECT_EQ(env.state().current_node, d);
    r = env.Step(ops[d]);
    EXPECT_EQ(r.done, d == 5);
    if (d < 5) {
      EXPECT_EQ(r.reward, 0.0);
    }
    // Dynamic features: decided + one-hot of the choice.
    const float* dyn = &env.state().node_dynamic[d * env.state().node_dynamic_dim];
    EXPECT_EQ(dyn[0], 1.f);
    EXPECT_EQ(dyn[1 + ops[d]], 1.f);
  }
  EXPECT_NEAR(r.reward, 0.9366, 1e-4);  // the CSV's CIFAR-10 test accuracy of that cell
  EXPECT_NEAR(Info(env, "quality"), 0.9366, 1e-4);
  EXPECT_DOUBLE_EQ(Info(env, "cost"), nas::Nb201MegaMacs(ops));
  EXPECT_EQ(Info(env, "penalty"), 0.0);
  EXPECT_EQ(Info(env, "decided"), 6.0);
  EXPECT_EQ(env.Encoding(env.architecture()), arch);
  EXPECT_THROW(env.Step(0), InfeasibleAction);
}

TEST(BlockEnv, RewardIsQualityMinusTheRelativeExcessOverTheCostBudget) {
  BlockEnvOptions o;
  o.cost_budget = 100;  // MMACs
  o.penalty = 0.5;
  o.dataset = "cifar100";
  BlockEnv env(o);
  auto table = CachedNb201Table(kDefaultNb201Table);
  for (const nas::Architecture& a : {nas::Architecture{3, 3, 3, 3, 3, 3}, nas::Architecture{1, 0, 2, 0, 1, 4}}) {
    env.Reset(1);
    StepResult r;
    for (int32_t c : a) r = env.Step(c);
    const double acc = table->Accuracy(nas::Nb201Dataset::kCifar100, nas::Nb201Code(a.data())) / 100.0;
    const double cost = nas::Nb201MegaMacs(a.data());
    const double penalty = 0.5 * std::max(0.0, cost / 100 - 1);
    EXPECT_NEAR(r.reward, acc - penalty, 1e-12);
    EXPECT_NEAR(Info(env, "quality"), acc, 1e-12);
    EXPECT_NEAR(Info(env, "penalty"), penalty, 1e-12);
    EXPECT_NEAR(Info(env, "reward"), r.reward, 1e-12);
    EXPECT_EQ(Info(env, "cost_budget"), 100.0);
    const BlockScore s = env.Evaluate(a);  // the same numbers without an episode
    EXPECT_EQ(s.reward, r.reward);
    EXPECT_EQ(s.cost, Info(env, "cost"));
  }
  env.Reset(2);
  EXPECT_EQ(Info(env, "quality"), 0.0);  // nothing to report before the end
  EXPECT_THROW(env.Evaluate({0, 0, 0}), ConfigError);
}

TEST(BlockEnv, MacroUsesTheTableFlopsAsItsCost) {
  auto env = MakeEnvironment("block(space=nas_bench_macro,budget=50)");
  const std::vector<int32_t> a = {0, 2, 0, 1, 2, 1, 0, 0};  // "02012100"
  for (int32_t c : a) env->Step(c);
  EXPECT_NEAR(Info(*env, "quality"), 0.8919666, 1e-6);
  EXPECT_NEAR(Info(*env, "cost"), 47.327744, 1e-9);
  EXPECT_NEAR(Info(*env, "penalty"), 0.0, 1e-12);
  EXPECT_THROW(MakeEnvironment("block(space=nas_bench_macro,dataset=cifar100)"), ConfigError);
}

TEST(BlockEnv, UnderPenaltyMakesTheBudgetATarget) {
  // macro cell "02012100": 47.327744 MFLOPs (the test above); budget 60 → shortfall 1 − 47.33/60.
  auto env = MakeEnvironment("block(space=nas_bench_macro,budget=60,under_penalty=0.25)");
  EXPECT_NE(env->name().find("under_penalty=0.25"), std::string::npos);
  for (int32_t c : {0, 2, 0, 1, 2, 1, 0, 0}) env->Step(c);
  const double under = 0.25 * (1 - 47.327744 / 60);
  EXPECT_NEAR(Info(*env, "penalty"), under, 1e-9);
  EXPECT_NEAR(Info(*env, "reward"), 0.8919666 - under, 1e-6);
  auto& block = dynamic_cast<BlockEnv&>(*env);
  EXPECT_NEAR(block.BudgetPenalty(60), 0.0, 1e-15);      // on target: nothing
  EXPECT_NEAR(block.BudgetPenalty(90), 0.5, 1e-12);      // above: penalty (1) × 0.5 excess
  EXPECT_NEAR(block.BudgetPenalty(30), 0.125, 1e-12);    // below: under_penalty × 0.5 shortfall
  // Off by default: the name (and so old run directories) unchanged, no term below the budget.
  auto plain = MakeEnvironment("block(space=nas_bench_macro,budget=60)");
  EXPECT_EQ(plain->name().find("under_penalty"), std::string::npos);
  EXPECT_EQ(dynamic_cast<BlockEnv&>(*plain).BudgetPenalty(30), 0.0);
  EXPECT_THROW(MakeEnvironment("block(space=nas_bench_macro,under_penalty=0.25)"), ConfigError);  // no budget
  EXPECT_THROW(MakeEnvironment("block(space=nas_bench_macro,budget=60,under_penalty=-1)"), ConfigError);
}

TEST(BlockEnv, MasksComeFromTheSpace) {
  auto env = MakeEnvironment("block(space=brainformer)");
  EXPECT_EQ(env->action_spec(), ActionSpec::Choice(7));
  // model_dim has 4 choices of the 7 actions.
  EXPECT_EQ(env->action_mask(), (std::vector<uint8_t>{1, 1, 1, 1, 0, 0, 0}));
  EXPECT_THROW(env->Step(5), InfeasibleAction);
  env->Step(1);   // model_dim 768
  env->Step(2);   // sub0: moe_ffn
  EXPECT_EQ(env->action_mask(), (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0}));  // heads "-"
  env->Step(0);
  EXPECT_EQ(env->action_mask(), (std::vector<uint8_t>{0, 1, 1, 1, 1, 1, 1}));  // an FFN ratio
  EXPECT_THROW(env->Step(0), InfeasibleAction);
  EXPECT_EQ(env->state().step, 3);
}

TEST(BlockEnv, ObservationIsOneNodePerDecision) {
  auto env = MakeEnvironment("block(space=enas_micro)");
  const auto g = env->static_graph();
  EXPECT_EQ(g->num_nodes, 40);
  EXPECT_EQ(g->node_feature_dim, 2 + 8);  // position, choices, 8 kinds (4 per cell)
  EXPECT_EQ(g->node_names[1], "normal0/op0");
  EXPECT_EQ(env->state().node_dynamic_dim, 1 + 6);
  EXPECT_NO_THROW(g->Validate());
  // Chain edges plus each decision to the first of its node: 39 + 3 per node instance.
  EXPECT_EQ(g->num_edges(), 39 + 10 * 2);  // (first, +2), (first, +3) are new; (first, +1) is a chain edge
  // ENAS macro: a skip flag is linked to the layer it skips from.
  auto macro = MakeEnvironment("block(space=enas_macro)");
  const auto gm = macro->static_graph();
  const auto& names = gm->node_names;
  const int32_t from = static_cast<int32_t>(std::find(names.begin(), names.end(), "layer2/op") - names.begin());
  const int32_t skip = static_cast<int32_t>(std::find(names.begin(), names.end(), "layer5/skip2") - names.begin());
  bool linked = false;
  for (int32_t e = 0; e < gm->num_edges(); ++e) linked |= gm->edge_src[e] == from && gm->edge_dst[e] == skip;
  EXPECT_TRUE(linked);
}

// ENAS's skip regulariser as a reward term: −w · KL(Bernoulli(f) ‖ Bernoulli(0.4)), f = the
// fraction of skip flags set; logged in info; refused on a space without skip flags.
TEST(BlockEnv, SkipPenaltyIsTheKlOfTheSkipFraction) {
  auto plain = MakeEnvironment("block(space=enas_macro)");
  auto penalised = MakeEnvironment("block(space=enas_macro,skip_penalty=0.8)");
  EXPECT_NE(penalised->name().find(",skip_penalty=0.8,skip_target=0.4)"), std::string::npos) << penalised->name();
  const auto& space = dynamic_cast<BlockEnv&>(*penalised).space();
  int32_t flags = 0;
  for (const auto& d : space.decisions()) flags += d.kind.find("skip") != std::string::npos;
  ASSERT_EQ(flags, 66);  // 12 layers: 0 + 1 + … + 11 skip flags
  for (int set_every : {1, 2, 3}) {  // all flags set, half, a third (by decision index parity)
    plain->Reset(0);
    penalised->Reset(0);
    int32_t set = 0, seen = 0;
    double r_plain = 0, r_pen = 0;
    while (!plain->done()) {
      const int32_t d = plain->state().current_node;
      const bool skip = space.decisions()[d].kind.find("skip") != std::string::npos;
      int32_t a = 0;
      if (skip) a = (seen++ % set_every == 0) ? 1 : 0, set += a;
      r_plain += plain->Step(a).reward;
      r_pen += penalised->Step(a).reward;
    }
    const double f = static_cast<double>(set) / flags;
    double kl = f * std::log(f / 0.4);
    if (f < 1) kl += (1 - f) * std::log((1 - f) / 0.6);
    EXPECT_NEAR(r_plain - r_pen, 0.8 * kl, 1e-12) << set_every;
    EXPECT_NEAR(penalised->info_value("skip_fraction"), f, 1e-12);
    EXPECT_NEAR(penalised->info_value("skip_penalty"), 0.8 * kl, 1e-12);
    EXPECT_EQ(plain->info_value("skip_penalty"), 0.0);
  }
  EXPECT_THROW(MakeEnvironment("block(space=nb201,skip_penalty=0.8)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=enas_macro,skip_penalty=-1)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=enas_macro,skip_penalty=1,skip_target=1)"), ConfigError);
}

TEST(BlockEnv, NamesAndErrors) {
  auto env = MakeEnvironment("block");
  EXPECT_EQ(env->name(),
            "block(space=nb201,quality=table,dataset=cifar10,table=../shared/datasets/nas/nats_bench_tss.csv,budget=0,"
            "penalty=1,seed=1)");
  EXPECT_EQ(MakeEnvironment("block(space=enas_macro)")->name(),
            "block(space=enas_macro,quality=synthetic,dataset=cifar10,table='',budget=0,penalty=1,seed=1)");
  EXPECT_THROW(MakeEnvironment("block(space=enas_macro,quality=table)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb201,quality=oracle)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb201,dataset=imagenet)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb201,budget=-1)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb202)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb201,table=/nonexistent.csv)"), IoError);
}

TEST(BlockEnv, SyntheticQualityHasItsOptimumAtTheBestChoices) {
  const nas::SearchSpace s = nas::LoadSearchSpace("enas_macro");
  SyntheticQuality q(s, 4);
  EXPECT_DOUBLE_EQ(q.Quality(q.Optimum()), 1.0);
  nas::Architecture other = q.Optimum();
  other[0] = (other[0] + 1) % 6;
  EXPECT_LT(q.Quality(other), 1.0);
  EXPECT_GE(q.Quality(other), 0.0);
}

}  // namespace
}  // namespace placerl::env
