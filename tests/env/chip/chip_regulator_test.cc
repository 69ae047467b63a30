// The chip environment's mode=refine (the regulator): rewards telescope to start − end, masks are
// exactly the legal cells with the current cell always among them, episode_start=best and
// episode_result=best, the final info equals a fresh evaluation, the start placements, the
// window of macros an episode visits, and one-line errors for bad keys and values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cost_models/chip/grid_mask.h"
#include "datasets/util/errors.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_greedy.h"
#include "env/chip/chip_solution.h"
#include "env/registry.h"

namespace placerl::env {
namespace {

using namespace placerl::chip;

const std::string kData = "../shared/datasets/chip/";

std::string Ct(const std::string& name, const std::string& extra) {
  return "chip(netlist=" + kData + "circuit_training/" + name + "/netlist.pb.txt,plc=" + kData + "circuit_training/" +
         name + "/initial.plc," + extra + ")";
}

std::unique_ptr<ChipEnv> MakeChip(const std::string& spec) {
  auto e = MakeEnvironment(spec);
  auto* c = dynamic_cast<ChipEnv*>(e.get());
  EXPECT_NE(c, nullptr);
  e.release();
  return std::unique_ptr<ChipEnv>(c);
}

std::vector<std::string> RefineSpecs() {
  return {"chip(seed=3,mode=refine)",
          "chip(seed=4,mode=refine,cost_map=proxy,steps=7)",
          Ct("simple_grouped_with_coords_with_blockage", "mode=refine,start=input"),
          Ct("macro_tiles_10x10", "mode=refine,cost_map=split,reward_scale=100"),
          "chip(seed=5,mode=refine,episode_end_fd=true,episode_result=best)"};
}

int32_t RandomLegal(const Environment& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  const auto& m = e.action_mask();
  for (int32_t a = 0; a < static_cast<int32_t>(m.size()); ++a)
    if (m[a]) legal.push_back(a);
  if (legal.empty()) return -1;
  return legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

// The legal cell of least cost for the current macro (a coordinate-descent move).
int32_t Cheapest(ChipEnv& env) {
  const auto& mask = env.action_mask();
  int32_t best = -1;
  double bc = 0;
  for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a)
    if (mask[a]) {
      const double c = env.PeekCost(a).proxy_cost;
      if (best < 0 || c < bc) best = a, bc = c;
    }
  return best;
}

// Plays one random legal episode; returns the sum of its rewards.
double PlayRandom(ChipEnv& env, uint64_t seed, std::mt19937_64& rng) {
  env.Reset(seed);
  double sum = 0;
  while (!env.done()) sum += env.Step(RandomLegal(env, rng)).reward;
  return sum;
}

TEST(ChipRegulator, RewardsSumToTheStartMinusTheEndCost) {
  for (const std::string& spec : RefineSpecs()) {
    SCOPED_TRACE(spec);
    auto env = MakeChip(spec);
    const double scale = env->options().reward_scale;
    std::mt19937_64 rng(5);
    for (uint64_t seed = 0; seed < 4; ++seed) {
      env->Reset(seed);
      const double start = env->info_value("proxy_cost");
      EXPECT_NEAR(start, env->start_cost(), 1e-12);  // episode_start=start
      double sum = 0;
      int32_t steps = 0;
      while (!env->done()) {
        const double before = env->info_value("proxy_cost");
        const StepResult r = env->Step(RandomLegal(*env, rng));
        ++steps;
        // Each reward is the exact change of the cost as the info reports it.
        EXPECT_NEAR(r.reward, scale * (before - env->info_value("proxy_cost")), 1e-12 * scale);
        sum += r.reward;
      }
      EXPECT_EQ(steps, env->episode_length());
      EXPECT_NEAR(sum, scale * (start - env->info_value("proxy_cost")), 1e-9 * scale);
      EXPECT_EQ(env->info_value("infeasible"), 0);
    }
  }
}

TEST(ChipRegulator, MaskedCellsAreExactlyTheLegalMovesAndTheCurrentCellIsOne) {
  for (const std::string& spec : RefineSpecs()) {
    SCOPED_TRACE(spec);
    auto env = MakeChip(spec);
    const Netlist& nl = env->netlist();
    const PlacementSettings& s = env->settings();
    std::mt19937_64 rng(9);
    for (uint64_t seed = 0; seed < 2; ++seed) {
      env->Reset(seed);
      while (!env->done()) {
        const int32_t m = env->current_macro();
        // Every hard macro where it stands now; m itself does not block its own cells.
        GridMask gm(nl, s);
        for (int32_t h : nl.hard_macros) gm.Place(h, env->cost().x(h), env->cost().y(h), env->cost().orientation(h));
        const auto& mask = env->action_mask();
        int32_t legal = 0;
        for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a) {
          double x, y;
          env->ActionCentre(a, &x, &y);
          ASSERT_EQ(mask[a] != 0, gm.IsLegal(m, x, y, env->cost().orientation(m))) << "cell " << a;
          legal += mask[a];
        }
        // The current cell: the macro stands on its centre, and staying is legal.
        const int32_t here = env->CellOf(m);
        double hx, hy;
        env->ActionCentre(here, &hx, &hy);
        EXPECT_EQ(hx, env->cost().x(m));
        EXPECT_EQ(hy, env->cost().y(m));
        ASSERT_EQ(mask[here], 1);
        // The current-cell channel marks it (and nothing else).
        const DynamicState& st = env->state();
        const size_t n = mask.size();
        ASSERT_EQ(st.action_feature_names.back(), "current_cell");
        const float* cc = st.action_features.data() + (st.action_feature_dim - 1) * n;
        for (size_t a = 0; a < n; ++a) ASSERT_EQ(cc[a], a == static_cast<size_t>(here) ? 1.f : 0.f);
        // Staying changes nothing and pays nothing (every other step: a random legal move).
        const double before = env->info_value("proxy_cost");
        if (env->state().step % 2 == 0) {
          const StepResult r = env->Step(here);
          EXPECT_EQ(r.reward, 0.0);
          EXPECT_EQ(env->info_value("proxy_cost"), before);
        } else {
          env->Step(RandomLegal(*env, rng));
        }
      }
      ChipSolution sol;
      CopyPlacement(env->cost(), &sol);
      std::string why;
      EXPECT_TRUE(IsLegalPlacement(nl, s, sol, &why)) << why;
    }
  }
}

TEST(ChipRegulator, FinalInfoEqualsAFreshEvaluationOfThePlacement) {
  for (const std::string& spec : RefineSpecs()) {
    SCOPED_TRACE(spec);
    auto env = MakeChip(spec);
    std::mt19937_64 rng(3);
    PlayRandom(*env, 2, rng);
    ChipSolution sol;
    CopyPlacement(env->cost(), &sol);
    const CostBreakdown fresh =
        EvaluateProxyCost(PlacedNetlist(env->netlist(), sol), env->settings(), env->options().weights);
    EXPECT_NEAR(env->info_value("proxy_cost"), fresh.proxy_cost, 1e-9);
    EXPECT_NEAR(env->info_value("wirelength_cost"), fresh.wirelength_cost, 1e-9);
    EXPECT_NEAR(env->info_value("density_cost"), fresh.density_cost, 1e-9);
    EXPECT_NEAR(env->info_value("congestion_cost"), fresh.congestion_cost, 1e-9);
    EXPECT_NEAR(env->info_value("hpwl"), fresh.hpwl, 1e-6 * std::max(1.0, fresh.hpwl));
    // No FD at the end: the trainer keeps the cost as it is.
    EXPECT_TRUE(env->episode_end_is_full_schedule());
  }
}

TEST(ChipRegulator, EpisodeStartBestSeedsTheNextEpisodeDeterministically) {
  const std::string spec = "chip(seed=3,mode=refine,episode_start=best,steps=5,cost_map=proxy)";
  auto a = MakeChip(spec), b = MakeChip(spec);
  auto fixed = MakeChip("chip(seed=3,mode=refine,steps=5,cost_map=proxy)");
  const double start = a->start_cost();
  std::mt19937_64 rng(17);
  double lowest = start;
  for (uint64_t e = 0; e < 12; ++e) {
    a->Reset(e);
    b->Reset(e);
    fixed->Reset(e);
    // Each reset starts from the lowest cost any earlier step reached (the start until then).
    EXPECT_NEAR(a->info_value("proxy_cost"), lowest, 1e-12);
    EXPECT_EQ(a->best_reached_cost(), lowest);
    EXPECT_EQ(fixed->info_value("proxy_cost"), start);
    while (!a->done()) {
      ASSERT_EQ(a->state().action_mask, b->state().action_mask);
      ASSERT_EQ(a->state().action_features, b->state().action_features);
      // Random moves and descent moves (so that the best improves on the start).
      // (PeekCost on a clone: a peek moves and restores the macro, which may round the maps.)
      const int32_t act = rng() % 2 ? RandomLegal(*a, rng) : Cheapest(dynamic_cast<ChipEnv&>(*a->Clone()));
      const StepResult ra = a->Step(act), rb = b->Step(act);
      ASSERT_EQ(ra.reward, rb.reward);
      lowest = std::min(lowest, a->info_value("proxy_cost"));
    }
    EXPECT_EQ(a->info(), b->info());
  }
  EXPECT_LT(lowest, start) << "12 episodes of 5 moves never improved: the test shows nothing";
  // A copy carries the best: its next reset starts where the original's does.
  auto c = a->Clone();
  c->Reset(100);
  a->Reset(100);
  EXPECT_EQ(c->info(), a->info());
  EXPECT_EQ(c->state().node_dynamic, a->state().node_dynamic);
}

TEST(ChipRegulator, EpisodeResultBestEndsOnTheBestVisitedPlacement) {
  auto best = MakeChip("chip(seed=4,mode=refine,episode_result=best,cost_map=proxy)");
  auto last = MakeChip("chip(seed=4,mode=refine,cost_map=proxy)");
  std::mt19937_64 rng(23);
  for (uint64_t e = 0; e < 4; ++e) {
    best->Reset(e);
    last->Reset(e);
    const double start = best->info_value("proxy_cost");
    double lowest = start, sum = 0;
    while (!last->done()) {
      const int32_t act = RandomLegal(*last, rng);
      last->Step(act);
      sum += best->Step(act).reward;
      lowest = std::min(lowest, last->info_value("proxy_cost"));
    }
    EXPECT_TRUE(best->done());
    EXPECT_NEAR(best->info_value("proxy_cost"), lowest, 1e-9);
    EXPECT_LE(best->info_value("proxy_cost"), start + 1e-12);
    EXPECT_NEAR(sum, start - best->info_value("proxy_cost"), 1e-9);
    ChipSolution sol;
    CopyPlacement(best->cost(), &sol);
    EXPECT_NEAR(EvaluateProxyCost(PlacedNetlist(best->netlist(), sol), best->settings(), best->options().weights).proxy_cost,
                lowest, 1e-9);
  }
}

TEST(ChipRegulator, EpisodeEndFdMovesOnlySoftMacrosAndNeverRaisesTheCost) {
  // A twin without episode_end_fd stepped with the same actions: the hard macros end alike, the
  // FD end is never worse, the rewards still sum to start − end, and some end is better (FD from
  // positions the hard macros have left); episode_start=best then starts from FD'd soft macros.
  const std::string base = "chip(seed=5,mode=refine,steps=8,episode_start=best";
  auto fd = MakeChip(base + ",episode_end_fd=true)"), plain = MakeChip(base + ")");
  const Netlist& nl = fd->netlist();
  ASSERT_FALSE(nl.soft_macros.empty());
  std::mt19937_64 rng(29);
  bool improved = false;
  for (uint64_t e = 0; e < 6; ++e) {
    fd->Reset(e);
    plain->Reset(e);
    const double start = fd->info_value("proxy_cost");
    double sum = 0;
    while (!fd->done()) {
      const int32_t act = RandomLegal(*fd, rng);
      sum += fd->Step(act).reward;
      if (e == 0) plain->Step(act);  // (later starts differ: each copy's own best)
    }
    EXPECT_NEAR(sum, start - fd->info_value("proxy_cost"), 1e-9);
    if (e == 0) {  // equal starts: the ends differ only by the FD
      for (int32_t m : fd->order()) EXPECT_EQ(fd->cost().x(m), plain->cost().x(m));
      EXPECT_LE(fd->info_value("proxy_cost"), plain->info_value("proxy_cost") + 1e-12);
      improved |= fd->info_value("proxy_cost") < plain->info_value("proxy_cost") - 1e-9;
    }
    ChipSolution sol;
    CopyPlacement(fd->cost(), &sol);
    EXPECT_NEAR(EvaluateProxyCost(PlacedNetlist(nl, sol), fd->settings(), fd->options().weights).proxy_cost,
                fd->info_value("proxy_cost"), 1e-9);
  }
  EXPECT_TRUE(improved) << "FD did not help in the first episode: the test shows nothing";
  // The next reset starts from the best, soft macros included.
  fd->Reset(50);
  EXPECT_NEAR(fd->info_value("proxy_cost"), fd->best_reached_cost(), 1e-9);
}

TEST(ChipRegulator, StepsVisitAWindowOfTheOrderFromTheSeed) {
  auto env = MakeChip("chip(seed=3,mode=refine,steps=4)");
  const auto& order = env->order();
  const size_t n = order.size();
  ASSERT_GT(n, 4u);
  EXPECT_EQ(env->episode_length(), 4);
  for (uint64_t seed : {0, 1, 2, 7}) {
    env->Reset(seed);
    for (int32_t k = 0; k < 4; ++k) {
      EXPECT_EQ(env->current_macro(), order[(seed * 4 + k) % n]) << "seed " << seed << " step " << k;
      env->Step(env->CellOf(env->current_macro()));
    }
    EXPECT_TRUE(env->done());
  }
  // Default: one pass over every movable hard macro, in the order.
  auto full = MakeChip("chip(seed=3,mode=refine)");
  EXPECT_EQ(full->episode_length(), static_cast<int32_t>(full->order().size()));
  full->Reset(5);
  EXPECT_EQ(full->current_macro(), full->order()[0]);
}

// The greedy step (env/chip/chip_greedy.h) scores every legal cell, by increasing cell, with the
// cost PeekCost gives; its least pair is the cheapest cell (ties: the lowest), at every step.
// Each step's cheapest is taken from a clone that has peeked nothing yet, as a greedy pass sees it.
TEST(ChipRegulator, ScoreLegalCellsScoresEveryLegalCell) {
  auto env = MakeChip("chip(seed=3,maps=false)");
  std::vector<std::pair<double, int32_t>> scored = {{-1.0, -1}};  // cleared first
  int steps = 0;
  while (!env->done()) {
    const int32_t cheapest = Cheapest(dynamic_cast<ChipEnv&>(*env->Clone()));
    ScoreLegalCells(*env, &scored);
    const auto& mask = env->action_mask();
    ASSERT_EQ(scored.size(), static_cast<size_t>(std::count(mask.begin(), mask.end(), 1)));
    for (size_t k = 0; k < scored.size(); ++k) {
      ASSERT_TRUE(mask[scored[k].second]);
      if (k > 0) ASSERT_LT(scored[k - 1].second, scored[k].second);
      // (the incremental cost's rounding depends on the peeks before: equal to 1e-12)
      ASSERT_NEAR(scored[k].first, env->PeekCost(scored[k].second).proxy_cost, 1e-12);
    }
    ASSERT_EQ(std::min_element(scored.begin(), scored.end())->second, cheapest);
    env->Step(cheapest);
    ++steps;
  }
  EXPECT_GT(steps, 1);
}

TEST(ChipRegulator, StartsAreCompleteLegalPlacements) {
  // greedy: the greedy pass's hard macros (legal), the soft macros placed by FD — the start is
  // the constructive greedy's episode end, so it costs what the greedy episode's info says.
  auto g = MakeChip("chip(seed=3,mode=refine,start=greedy)");
  ChipSolution sol;
  CopyPlacement(g->start_placement(), &sol);
  std::string why;
  EXPECT_TRUE(IsLegalPlacement(g->netlist(), g->settings(), sol, &why)) << why;
  auto constructive = MakeChip("chip(seed=3,maps=false)");
  while (!constructive->done()) constructive->Step(Cheapest(*constructive));
  EXPECT_NEAR(g->start_cost(), constructive->info_value("proxy_cost"), 1e-12);
  for (int32_t m : g->netlist().macros) {
    EXPECT_EQ(g->start_placement().x(m), constructive->cost().x(m));
    EXPECT_EQ(g->start_placement().y(m), constructive->cost().y(m));
  }
  // input: the .plc's placement with the hard macros on the nearest free legal cell centres;
  // soft macros exactly where the .plc has them.
  const std::string spec = Ct("simple_grouped_with_coords_with_blockage", "mode=refine,start=input");
  auto in = MakeChip(spec);
  CopyPlacement(in->start_placement(), &sol);
  EXPECT_TRUE(IsLegalPlacement(in->netlist(), in->settings(), sol, &why)) << why;
  const Netlist& nl = in->netlist();
  const double cw = in->settings().canvas_width / in->settings().cols, ch = in->settings().canvas_height / in->settings().rows;
  for (int32_t m : nl.soft_macros) {
    EXPECT_EQ(in->start_placement().x(m), nl.x[m]);
    EXPECT_EQ(in->start_placement().y(m), nl.y[m]);
  }
  for (int32_t m : nl.hard_macros) {  // snapped: not far from the input
    EXPECT_LE(std::abs(in->start_placement().x(m) - nl.x[m]), 2 * cw + 0.5 * nl.width[m]) << nl.name[m];
    EXPECT_LE(std::abs(in->start_placement().y(m) - nl.y[m]), 2 * ch + 0.5 * nl.height[m]) << nl.name[m];
  }
}

TEST(ChipRegulator, BadKeysAndValuesAreOneLineConfigErrors) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"chip(seed=3,mode=refining)", "mode"},
      {"chip(seed=3,mode=refine,start=sa)", "start"},
      {"chip(seed=3,mode=refine,episode_start=last)", "episode_start"},
      {"chip(seed=3,mode=refine,episode_result=start)", "episode_result"},
      {"chip(seed=3,mode=refine,steps=-1)", "steps"},
      {"chip(seed=3,mode=refine,steps=2000000)", "steps"},
      {"chip(seed=3,mode=refine,reward_scale=0)", "reward_scale"},
      {"chip(seed=3,mode=refine,reward_scale=-1)", "reward_scale"},
      {"chip(seed=3,start=greedy)", "start"},
      {"chip(seed=3,episode_start=best)", "episode_start"},
      {"chip(seed=3,steps=3)", "steps"},
      {"chip(seed=3,mode=refine,step=3)", "step"},
      {"chip(seed=3,episode_end_fd=true)", "episode_end_fd"},
      {"chip(seed=3,mode=refine,episode_end_fd=maybe)", "episode_end_fd"},
  };
  for (const auto& [spec, key] : bad) {
    SCOPED_TRACE(spec);
    try {
      MakeEnvironment(spec);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(key), std::string::npos) << what;
    }
  }
  // name() re-creates the mode; the constructive names are unchanged.
  auto env = MakeEnvironment("chip(seed=3,mode=refine,episode_start=best,steps=6,reward_scale=10)");
  EXPECT_NE(env->name().find("mode=refine,start=greedy,episode_start=best,episode_result=last,steps=6,reward_scale=10"),
            std::string::npos)
      << env->name();
  EXPECT_EQ(MakeEnvironment("chip(seed=3)")->name().find("mode"), std::string::npos);
}

}  // namespace
}  // namespace placerl::env
