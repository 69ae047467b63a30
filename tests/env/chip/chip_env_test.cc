// The chip environment beyond the conformance suite: CT's macro order, legality of every
// random episode on every shared netlist (no overlap, inside the canvas), dense and sparse
// rewards agreeing, the final cost equal to a fresh evaluation, and the infeasible end; the
// episode-end FD schedule (fd_steps_scale): the default gives the rewards of before, a cheaper
// one other rewards, and FullScheduleCost re-scores with CT's schedule.
#include "env/chip/chip_env.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "datasets/util/errors.h"
#include "env/registry.h"

namespace placerl::env {
namespace {

using namespace placerl::chip;

const std::string kData = "../shared/datasets/chip/";

std::vector<std::string> SharedChips() {
  return {
      "chip(netlist=" + kData + "ariane133_ng45/netlist.pb.txt.gz,plc=" + kData + "ariane133_ng45/initial.plc,soft=keep)",
      "chip(netlist=" + kData + "circuit_training/macro_tiles_10x10/netlist.pb.txt,plc=" + kData +
          "circuit_training/macro_tiles_10x10/initial.plc,soft=keep)",
      "chip(netlist=" + kData + "circuit_training/sample_clustered/netlist.pb.txt,plc=" + kData +
          "circuit_training/sample_clustered/initial.plc,soft=keep)",
      "chip(netlist=" + kData + "circuit_training/simple_grouped_with_coords_with_blockage/netlist.pb.txt,plc=" + kData +
          "circuit_training/simple_grouped_with_coords_with_blockage/initial.plc,soft=keep)",
      "chip(netlist=" + kData + "circuit_training/toy_macro_stdcell/netlist.pb.txt,plc=" + kData +
          "circuit_training/toy_macro_stdcell/initial.plc,soft=keep)",
      "chip(seed=1,soft=keep)",
      "chip(seed=2,soft=keep)",
  };
}

int32_t RandomLegal(const Environment& e, std::mt19937_64& rng) {
  std::vector<int32_t> legal;
  for (int32_t a = 0; a < e.num_actions(); ++a)
    if (e.action_mask()[a]) legal.push_back(a);
  return legal.empty() ? -1 : legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
}

TEST(ChipEnv, HardMacrosInDescendingAreaOrderTiesInNetlistOrder) {
  auto e = MakeEnvironment(SharedChips()[0]);
  auto& env = dynamic_cast<ChipEnv&>(*e);
  const Netlist& nl = env.netlist();
  ASSERT_EQ(env.order().size(), nl.hard_macros.size());
  for (size_t k = 1; k < env.order().size(); ++k) {
    const int32_t a = env.order()[k - 1], b = env.order()[k];
    const double aa = nl.width[a] * nl.height[a], ab = nl.width[b] * nl.height[b];
    ASSERT_GE(aa, ab);
    if (aa == ab) {
      ASSERT_LT(a, b);
    }
  }
  EXPECT_EQ(env.episode_length(), 133);
  EXPECT_EQ(env.action_spec().cols * env.action_spec().rows, env.num_actions());
  EXPECT_EQ(env.static_graph()->metadata.size(), 12u);
  // Nodes: 915 macros + port clusters; every edge joins two different nodes.
  EXPECT_GT(env.static_graph()->num_nodes, 915);
  for (int32_t e2 = 0; e2 < env.static_graph()->num_edges(); ++e2)
    ASSERT_NE(env.static_graph()->edge_src[e2], env.static_graph()->edge_dst[e2]);
}

TEST(ChipEnv, RandomEpisodesNeverOverlapAndStayOnTheCanvas) {
  std::mt19937_64 rng(1);
  for (const std::string& spec : SharedChips()) {
    auto e = MakeEnvironment(spec);
    auto& env = dynamic_cast<ChipEnv&>(*e);
    const Netlist& nl = env.netlist();
    const PlacementSettings& s = env.settings();
    for (int ep = 0; ep < 3; ++ep) {
      env.Reset(ep);
      std::vector<std::array<double, 4>> rects;  // placed by this episode
      while (!env.done()) {
        const int32_t m = env.current_macro();
        const int32_t a = RandomLegal(env, rng);
        ASSERT_GE(a, 0);
        double x, y;
        env.ActionCentre(a, &x, &y);
        const bool swap = nl.orientation[m] == Orientation::kE || nl.orientation[m] == Orientation::kW ||
                          nl.orientation[m] == Orientation::kFE || nl.orientation[m] == Orientation::kFW;
        const double w = swap ? nl.height[m] : nl.width[m], h = swap ? nl.width[m] : nl.height[m];
        env.Step(a);
        EXPECT_EQ(env.cost().x(m), x);
        const std::array<double, 4> r{x - w / 2, y - h / 2, x + w / 2, y + h / 2};
        EXPECT_GE(r[0], -1e-6) << spec;
        EXPECT_GE(r[1], -1e-6) << spec;
        EXPECT_LE(r[2], s.canvas_width + 1e-6) << spec;
        EXPECT_LE(r[3], s.canvas_height + 1e-6) << spec;
        for (const auto& q : rects) {
          const double ox = std::min(r[2], q[2]) - std::max(r[0], q[0]);
          const double oy = std::min(r[3], q[3]) - std::max(r[1], q[1]);
          ASSERT_FALSE(ox > 1e-6 && oy > 1e-6) << spec << ": macro " << nl.name[m] << " overlaps";
        }
        for (const Blockage& b : s.blockages) {
          if (b.rate <= 0) continue;
          const double ox = std::min(r[2], b.maxx) - std::max(r[0], b.minx);
          const double oy = std::min(r[3], b.maxy) - std::max(r[1], b.miny);
          ASSERT_FALSE(ox > 1e-6 && oy > 1e-6) << spec << ": macro " << nl.name[m] << " on a blockage";
        }
        rects.push_back(r);
      }
    }
  }
}

TEST(ChipEnv, DenseAndSparseRewardsGiveTheSameReturnAndFinalCost) {
  for (const std::string& base : {SharedChips()[0], SharedChips()[1], SharedChips()[5]}) {
    auto sparse = MakeEnvironment(base.substr(0, base.size() - 1) + ",reward=sparse)");
    auto dense = MakeEnvironment(base.substr(0, base.size() - 1) + ",reward=dense)");
    std::mt19937_64 rng(4);
    sparse->Reset(0);
    dense->Reset(0);
    double rs = 0, rd = 0;
    int nonzero_dense = 0;
    while (!sparse->done()) {
      const int32_t a = RandomLegal(*sparse, rng);
      const StepResult a1 = sparse->Step(a), a2 = dense->Step(a);
      if (!a1.done) {
        EXPECT_EQ(a1.reward, 0.0);
      }
      nonzero_dense += a2.reward != 0;
      rs += a1.reward;
      rd += a2.reward;
    }
    ASSERT_TRUE(dense->done());
    EXPECT_NEAR(rs, rd, 1e-9) << base;
    EXPECT_NEAR(sparse->info_value("proxy_cost"), dense->info_value("proxy_cost"), 1e-12);
    EXPECT_NEAR(rs, -sparse->info_value("proxy_cost"), 1e-12);
    EXPECT_GT(nonzero_dense, 1) << "dense rewards give credit per step";
  }
}

TEST(ChipEnv, FinalCostEqualsAFreshEvaluationOfThePlacement) {
  auto e = MakeEnvironment(SharedChips()[0]);
  auto& env = dynamic_cast<ChipEnv&>(*e);
  std::mt19937_64 rng(9);
  while (!env.done()) env.Step(RandomLegal(env, rng));
  Netlist placed = env.netlist();
  env.cost().CopyPlacementTo(&placed);
  const CostBreakdown fresh = EvaluateProxyCost(placed, env.settings(), env.options().weights);
  EXPECT_NEAR(env.info_value("proxy_cost"), fresh.proxy_cost, 1e-9);
  EXPECT_NEAR(env.info_value("wirelength_cost"), fresh.wirelength_cost, 1e-9);
  EXPECT_NEAR(env.info_value("density_cost"), fresh.density_cost, 1e-9);
  EXPECT_NEAR(env.info_value("congestion_cost"), fresh.congestion_cost, 1e-9);
  EXPECT_EQ(env.info_value("placed_macros"), 133);
  EXPECT_EQ(env.info_value("infeasible"), 0);
}

TEST(ChipEnv, WirelengthMapRanksCellsByTheExactHpwlOfTheCurrentMacro) {
  auto e = MakeEnvironment(SharedChips()[0]);
  auto& env = dynamic_cast<ChipEnv&>(*e);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 40; ++k) env.Step(RandomLegal(env, rng));
  const DynamicState& st = env.state();
  ASSERT_EQ(st.action_feature_dim, 5);
  ASSERT_EQ(st.action_feature_names[4], "wirelength_change");
  const int32_t n = env.num_actions();
  const float* map = &st.action_features[4 * static_cast<size_t>(n)];
  // Exact: move the current macro to every cell centre in a copy of the cost and read the HPWL.
  ProxyCost pc = env.cost();
  const int32_t m = env.current_macro();
  std::vector<double> hpwl(n);
  for (int32_t a = 0; a < n; ++a) {
    double x, y;
    env.ActionCentre(a, &x, &y);
    pc.MoveNode(m, x, y);
    hpwl[a] = pc.Cost().hpwl;
  }
  const double lo = *std::min_element(hpwl.begin(), hpwl.end()), hi = *std::max_element(hpwl.begin(), hpwl.end());
  ASSERT_GT(hi, lo);
  for (int32_t a = 0; a < n; ++a) ASSERT_NEAR(map[a], (hpwl[a] - lo) / (hi - lo), 1e-5) << "cell " << a;
  // Occupancy: the placed macros' area over the grid equals their total area.
  const PlacementSettings& s = env.settings();
  double covered = 0, placed_area = 0;
  for (int32_t a = 0; a < n; ++a) covered += st.action_features[a] * (s.canvas_width / s.cols) * (s.canvas_height / s.rows);
  for (int k = 0; k < 40; ++k) placed_area += env.netlist().width[env.order()[k]] * env.netlist().height[env.order()[k]];
  EXPECT_NEAR(covered, placed_area, 1e-6 * placed_area);
}

// Canvas 12 × 12, grid 3 × 3 (cell centres 2, 6, 10): an 8 × 8 macro fits only at the centre,
// after which no cell is left for a 4 × 4 one.
std::shared_ptr<ChipInstance> Crowded() {
  auto inst = std::make_shared<ChipInstance>();
  Netlist& nl = inst->design.netlist;
  for (auto [name, side] : {std::pair<const char*, double>{"big", 8}, {"small", 4}}) {
    const int32_t i = nl.AddNode(name, NodeType::kHardMacro);
    nl.width[i] = nl.height[i] = side;
    nl.x[i] = nl.y[i] = 6;
  }
  nl.Finalize();
  PlacementSettings s;
  s.canvas_width = s.canvas_height = 12;
  s.cols = s.rows = 3;
  inst->design.settings = ResolveDefaults(s, nl);
  return inst;
}

TEST(ChipEnv, AnEmptyMaskEndsTheEpisodeWithThePenaltyInBothRewardModes) {
  for (ChipReward mode : {ChipReward::kSparse, ChipReward::kDense}) {
    ChipEnvOptions o;
    o.reward = mode;
    o.soft = SoftMacroPlacement::kKeep;
    o.infeasible_reward = -3.5;
    ChipEnv env(Crowded(), o);
    EXPECT_EQ(env.netlist().name[env.current_macro()], "big");
    int legal = 0;
    for (uint8_t m : env.action_mask()) legal += m;
    ASSERT_EQ(legal, 1);
    const StepResult r = env.Step(4);  // the centre cell
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.infeasible);
    EXPECT_DOUBLE_EQ(r.reward, -3.5);
    EXPECT_EQ(env.info_value("infeasible"), 1);
    EXPECT_EQ(env.info_value("placed_macros"), 1);
  }
}

// One random episode (seed 11, soft=fd) of `spec`; returns its return.
double RandomEpisodeReturn(Environment& e) {
  std::mt19937_64 rng(11);
  e.Reset(0);
  double ret = 0;
  while (!e.done()) ret += e.Step(RandomLegal(e, rng)).reward;
  return ret;
}

const std::string kAriane = "netlist=" + kData + "ariane133_ng45/netlist.pb.txt.gz,plc=" + kData + "ariane133_ng45/initial.plc";

TEST(ChipEnv, DefaultFdScheduleGivesTheRewardsOfBefore) {
  // Returns of this episode measured with the code before fd_steps_scale existed (commit c524719).
  const std::vector<std::pair<std::string, double>> golden = {
      {"chip(seed=1", -1.5417571443747469}, {"chip(" + kAriane, -0.96968671183395161}};
  for (const auto& [prefix, before] : golden)
    for (const std::string& spec : {prefix + ")", prefix + ",fd_steps_scale=1)"}) {
      auto e = MakeEnvironment(spec);
      auto& env = dynamic_cast<ChipEnv&>(*e);
      EXPECT_TRUE(env.episode_end_is_full_schedule());
      EXPECT_EQ(env.EpisodeEndFdOptions().num_steps, (std::vector<int>{100, 100, 100}));
      EXPECT_NEAR(RandomEpisodeReturn(env), before, 1e-12) << spec;
      EXPECT_EQ(env.name().find("fd_steps_scale"), std::string::npos);  // default names unchanged
      // The full schedule re-places the soft macros exactly where the episode end put them.
      ProxyCost pc = env.cost();
      EXPECT_NEAR(env.FullScheduleCost(&pc).proxy_cost, -before, 1e-12) << spec;
    }
}

TEST(ChipEnv, CheaperFdScheduleChangesTheRewardAndFullScheduleCostRescoresIt) {
  auto e = MakeEnvironment("chip(" + kAriane + ",fd_steps_scale=0.3)");
  auto& env = dynamic_cast<ChipEnv&>(*e);
  EXPECT_FALSE(env.episode_end_is_full_schedule());
  EXPECT_EQ(env.EpisodeEndFdOptions().num_steps, (std::vector<int>{30, 30, 30}));
  EXPECT_NE(env.name().find("fd_steps_scale=0.3"), std::string::npos) << env.name();
  const double cheap = RandomEpisodeReturn(env);
  const double full_before = -0.96968671183395161;  // the same hard macros, CT's schedule (above)
  EXPECT_GT(std::abs(cheap - full_before), 1e-6) << "30 steps per phase place the soft macros elsewhere";
  EXPECT_NEAR(env.info_value("proxy_cost"), -cheap, 1e-12);
  ProxyCost pc = env.cost();
  const CostBreakdown full = env.FullScheduleCost(&pc);
  EXPECT_NEAR(full.proxy_cost, -full_before, 1e-12);
  EXPECT_NEAR(env.CurrentCost().proxy_cost, -cheap, 1e-12);  // the environment is unchanged
  // The re-scored placement, written out and evaluated from scratch, costs the same.
  Netlist placed = env.netlist();
  pc.CopyPlacementTo(&placed);
  EXPECT_NEAR(EvaluateProxyCost(placed, env.settings(), env.options().weights).proxy_cost, full.proxy_cost, 1e-9);
  // The smallest scale still runs one step per phase; soft=keep never runs FD.
  auto tiny = MakeEnvironment("chip(seed=1,fd_steps_scale=0.01)");
  EXPECT_EQ(dynamic_cast<ChipEnv&>(*tiny).EpisodeEndFdOptions().num_steps, (std::vector<int>{1, 1, 1}));
  EXPECT_TRUE(dynamic_cast<ChipEnv&>(*MakeEnvironment("chip(seed=1,soft=keep,fd_steps_scale=0.3)")).episode_end_is_full_schedule());
}

TEST(ChipEnv, RejectsDesignsThatCannotStart) {
  auto inst = Crowded();
  inst->design.netlist.width[0] = inst->design.netlist.height[0] = 13;  // larger than the canvas
  EXPECT_THROW(ChipEnv(inst, ChipEnvOptions{}), ConfigError);
  EXPECT_THROW(MakeEnvironment("chip(netlist=../shared/datasets/chip/nosuch/netlist.pb.txt)"), Error);
  EXPECT_THROW(MakeEnvironment("chip(seed=1,weights=1,2)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("chip(seed=1,weights=1,0.5,x)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("chip(seed=1,soft=dreamplace)"), ConfigError);
  for (const char* scale : {"0", "0.001", "1.5", "-1", "nan"})
    EXPECT_THROW(MakeEnvironment(std::string("chip(seed=1,fd_steps_scale=") + scale + ")"), ConfigError) << scale;
}

}  // namespace
}  // namespace placerl::env
