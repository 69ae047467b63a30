// The chip baselines on small real and synthetic chips with short budgets: every method returns
// a complete, legal placement whose reported cost is a fresh full evaluation; the best-so-far
// curve never rises; simulated annealing never ends worse than its start; a stop request ends
// a run early with its best result; unknown methods and options are refused.
#include "search/chip/baselines.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "datasets/util/errors.h"
#include "env/registry.h"

namespace placerl::search {
namespace {

using namespace placerl::chip;

std::unique_ptr<env::ChipEnv> Env(const std::string& spec) {
  auto e = env::MakeEnvironment(spec);
  return std::unique_ptr<env::ChipEnv>(dynamic_cast<env::ChipEnv*>(e.release()));
}

void ExpectLegal(const env::ChipEnv& env, const env::ChipSolution& s) {
  const Netlist& nl = env.netlist();
  const PlacementSettings& st = env.settings();
  for (size_t a = 0; a < nl.hard_macros.size(); ++a) {
    const int32_t i = nl.hard_macros[a];
    const bool sw = s.orientation[i] == Orientation::kE || s.orientation[i] == Orientation::kW ||
                    s.orientation[i] == Orientation::kFE || s.orientation[i] == Orientation::kFW;
    const double wi = sw ? nl.height[i] : nl.width[i], hi = sw ? nl.width[i] : nl.height[i];
    ASSERT_GE(s.x[i] - wi / 2, -1e-6);
    ASSERT_LE(s.x[i] + wi / 2, st.canvas_width + 1e-6);
    ASSERT_GE(s.y[i] - hi / 2, -1e-6);
    ASSERT_LE(s.y[i] + hi / 2, st.canvas_height + 1e-6);
    for (size_t b = a + 1; b < nl.hard_macros.size(); ++b) {
      const int32_t j = nl.hard_macros[b];
      const bool sj = s.orientation[j] == Orientation::kE || s.orientation[j] == Orientation::kW ||
                      s.orientation[j] == Orientation::kFE || s.orientation[j] == Orientation::kFW;
      const double wj = sj ? nl.height[j] : nl.width[j], hj = sj ? nl.width[j] : nl.height[j];
      const double ox = std::min(s.x[i] + wi / 2, s.x[j] + wj / 2) - std::max(s.x[i] - wi / 2, s.x[j] - wj / 2);
      const double oy = std::min(s.y[i] + hi / 2, s.y[j] + hj / 2) - std::max(s.y[i] - hi / 2, s.y[j] - hj / 2);
      ASSERT_FALSE(ox > 1e-6 && oy > 1e-6) << nl.name[i] << " overlaps " << nl.name[j];
    }
  }
}

class Baselines : public ::testing::TestWithParam<std::string> {};

TEST_P(Baselines, ReturnLegalPlacementsScoredByAFullEvaluation) {
  for (const std::string& spec :
       {std::string("chip(seed=2)"),
        std::string("chip(netlist=../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt,"
                    "plc=../shared/datasets/chip/circuit_training/macro_tiles_10x10/initial.plc)")}) {
    auto env = Env(spec);
    ChipBaselineOptions o;
    o.seconds = 0.6;
    int reports = 0;
    const BaselineResult r = RunChipBaseline(GetParam(), env.get(), o, {}, [&](const BaselineProgress&) { ++reports; });
    ASSERT_TRUE(r.best.valid) << spec;
    EXPECT_GE(reports, 1);
    EXPECT_GT(r.evaluations, 0);
    EXPECT_GE(r.episodes, 1);
    ExpectLegal(*env, r.best);
    const CostBreakdown fresh = EvaluateProxyCost(env::PlacedNetlist(env->netlist(), r.best), env->settings(), env->options().weights);
    EXPECT_NEAR(r.best.cost.proxy_cost, fresh.proxy_cost, 1e-12);
    ASSERT_FALSE(r.curve.empty());
    for (size_t k = 1; k < r.curve.size(); ++k) {
      EXPECT_GE(r.curve[k].first, r.curve[k - 1].first);
      EXPECT_LE(r.curve[k].second, r.curve[k - 1].second + 1e-9);
    }
    EXPECT_NEAR(r.curve.back().second, r.best.cost.proxy_cost, 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, Baselines, ::testing::ValuesIn(ChipBaselineMethods()));

TEST(Baselines, AnnealingNeverEndsWorseThanItsGreedyStartAndImprovesIt) {
  auto env = Env("chip(seed=3)");
  ChipBaselineOptions o;
  o.seconds = 0.3;
  ChipBaselineOptions one_pass;
  one_pass.seconds = 0.3;
  const BaselineResult g = RunChipBaseline("greedy", env.get(), one_pass, {}, {});
  o.seconds = 1.5;
  const BaselineResult sa = RunChipBaseline("sa", env.get(), o, {}, {});
  ASSERT_TRUE(g.best.valid && sa.best.valid);
  // SA starts from the deterministic greedy pass (the first point of its curve).
  EXPECT_LE(sa.best.cost.proxy_cost, sa.curve.front().second + 1e-12);
  EXPECT_LT(sa.best.cost.proxy_cost, g.curve.front().second) << "1.5 s of annealing improves a 40-macro greedy start";
  EXPECT_GT(sa.accepted, 0);
}

// Soft-macro moves (beyond TILOS): the soft macros leave the FD positions of the greedy start,
// stay inside the canvas, the result stays legal and scored by a full evaluation, and the run
// ends no worse than its start.
TEST(Baselines, AnnealingWithSoftMovesKeepsSoftMacrosOnTheCanvasAndImproves) {
  auto env = Env("chip(seed=3)");
  ASSERT_FALSE(env->netlist().soft_macros.empty());
  ChipBaselineOptions o;
  o.seconds = 1.0;
  o.sa_fd_every_steps = 0;
  o.sa_soft_move_prob = 0.5;
  o.sa_soft_move_cells = 2;
  const BaselineResult sa = RunChipBaseline("sa", env.get(), o, {}, {});
  ASSERT_TRUE(sa.best.valid);
  ExpectLegal(*env, sa.best);
  const CostBreakdown fresh = EvaluateProxyCost(env::PlacedNetlist(env->netlist(), sa.best), env->settings(), env->options().weights);
  EXPECT_NEAR(sa.best.cost.proxy_cost, fresh.proxy_cost, 1e-12);
  EXPECT_LT(sa.best.cost.proxy_cost, sa.curve.front().second);
  // The greedy start's soft macros (one FD) against the best's.
  o.seconds = 1e-3;
  o.sa_soft_move_prob = 0;
  const BaselineResult start = RunChipBaseline("sa", env.get(), o, {}, {});
  const Netlist& nl = env->netlist();
  const PlacementSettings& st = env->settings();
  int moved = 0;
  for (int32_t m : nl.soft_macros) {
    moved += sa.best.x[m] != start.best.x[m] || sa.best.y[m] != start.best.y[m];
    EXPECT_GE(sa.best.x[m] - nl.width[m] / 2, -1e-9);
    EXPECT_LE(sa.best.x[m] + nl.width[m] / 2, st.canvas_width + 1e-9);
    EXPECT_GE(sa.best.y[m] - nl.height[m] / 2, -1e-9);
    EXPECT_LE(sa.best.y[m] + nl.height[m] / 2, st.canvas_height + 1e-9);
  }
  EXPECT_GT(moved, 0);
}

// Ariane133's initial.plc has hard macros off the canvas: as it is it is not a legal start;
// `snapped` moves each hard macro to the nearest free legal cell and SA keeps it legal.
TEST(Baselines, SnappedInputIsALegalStartAndIllegalPlacementsAreNamed) {
  auto env = Env("chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
                 "plc=../shared/datasets/chip/ariane133_ng45/initial.plc)");
  const Netlist& nl = env->netlist();
  env::ChipSolution input;
  env->Reset(0);
  env::CopyPlacement(env->cost(), &input);
  std::string why;
  EXPECT_FALSE(env::IsLegalPlacement(nl, env->settings(), input, &why));
  EXPECT_NE(why.find("hard macro '"), std::string::npos) << why;
  ChipBaselineOptions o;
  o.seconds = 0.3;
  o.sa_init = "snapped";
  o.sa_fd_every_steps = 0;  // and no soft moves: the soft macros stay where the input has them
  const BaselineResult r = RunChipBaseline("sa", env.get(), o, {}, {});
  ASSERT_TRUE(r.best.valid);
  ExpectLegal(*env, r.best);
  EXPECT_TRUE(env::IsLegalPlacement(nl, env->settings(), r.best));
  // Soft macros start where the input has them (not re-placed by FD) and nothing moved them.
  int kept = 0;
  for (int32_t m : nl.soft_macros) kept += r.best.x[m] == input.x[m] && r.best.y[m] == input.y[m];
  EXPECT_EQ(kept, static_cast<int>(nl.soft_macros.size()));
  // The snapped hard macros sit on cell centres.
  const double gw = env->settings().canvas_width / env->settings().cols;
  for (int32_t m : nl.hard_macros) {
    const double c = r.best.x[m] / gw - 0.5;
    EXPECT_NEAR(c, std::round(c), 1e-9) << nl.name[m];
  }
  // Coordinate descent snaps the illegal input first and ends legal too.
  ChipBaselineOptions co;
  co.seconds = 0.05;
  const BaselineResult cd = RunChipBaseline("cd", env.get(), co, {}, {});
  ASSERT_TRUE(cd.best.valid);
  EXPECT_TRUE(env::IsLegalPlacement(nl, env->settings(), cd.best));
  // One hard macro onto another: illegal.
  env::ChipSolution bad = r.best;
  bad.x[nl.hard_macros[1]] = bad.x[nl.hard_macros[0]];
  bad.y[nl.hard_macros[1]] = bad.y[nl.hard_macros[0]];
  EXPECT_FALSE(env::IsLegalPlacement(nl, env->settings(), bad));
}

TEST(Baselines, AStopRequestEndsTheRunWithItsBestSoFar) {
  auto env = Env("chip(seed=1)");
  ChipBaselineOptions o;
  o.seconds = 3600;
  int polls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const BaselineResult r = RunChipBaseline("sa", env.get(), o, [&] { return ++polls > 2000; }, {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 600) << "stopped, not run for the hour";
  EXPECT_TRUE(r.best.valid);
}

TEST(Baselines, RefusesUnknownMethodsAndOptions) {
  auto env = Env("chip(seed=1)");
  ChipBaselineOptions o;
  o.seconds = 0.1;
  EXPECT_THROW(RunChipBaseline("tabu", env.get(), o, {}, {}), ConfigError);
  o.seconds = -1;
  EXPECT_THROW(RunChipBaseline("random", env.get(), o, {}, {}), ConfigError);
  o.seconds = 0.1;
  o.sa_action_probs = {1, 1};
  EXPECT_THROW(RunChipBaseline("sa", env.get(), o, {}, {}), ConfigError);
  o.sa_action_probs = {1, 1, 1, 1, 1};
  o.sa_init = "spiral";
  EXPECT_THROW(RunChipBaseline("sa", env.get(), o, {}, {}), ConfigError);
  o.sa_init = "greedy";
  o.sa_soft_move_prob = 1.5;
  EXPECT_THROW(RunChipBaseline("sa", env.get(), o, {}, {}), ConfigError);
  o.sa_soft_move_prob = 0.5;
  o.sa_soft_move_cells = 0;
  EXPECT_THROW(RunChipBaseline("sa", env.get(), o, {}, {}), ConfigError);
}

}  // namespace
}  // namespace placerl::search
