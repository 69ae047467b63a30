// The chip environment beyond the conformance suite: CT's macro order, legality of every
// random episode on every shared netlist (no overlap, inside the canvas), dense and sparse
// rewards agreeing, the final cost equal to a fresh evaluation, and the infeasible end; the
// episode-end FD schedule (fd_steps_scale): the default gives the rewards of before, a cheaper
// one other rewards, and FullScheduleCost re-scores with CT's schedule.
#include "env/chip/chip_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>
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

// ---- cost_map=proxy: the per-cell proxy-cost change of the current macro ----

// Checks CostChangeByCell against PeekCost at `cells` legal cells (all when cells <= 0) of the
// current state: the wirelength and density terms exactly; the congestion term too when
// `congestion_exact` (the current macro has no nets). Returns the number of cells checked.
int CheckCostChangeAgainstPeek(ChipEnv& env, std::mt19937_64& rng, int cells, bool congestion_exact) {
  std::vector<double> dwl, dden, dcong;
  env.CostChangeByCell(&dwl, &dden, &dcong);
  const int32_t n = env.num_actions();
  EXPECT_EQ(dwl.size(), static_cast<size_t>(n));
  std::vector<int32_t> legal;
  for (int32_t a = 0; a < n; ++a)
    if (env.action_mask()[a]) legal.push_back(a);
  if (cells > 0 && static_cast<int>(legal.size()) > cells) {
    std::shuffle(legal.begin(), legal.end(), rng);
    legal.resize(cells);
  }
  const CostBreakdown now = env.CurrentCost();
  for (int32_t a : legal) {
    const CostBreakdown c = env.PeekCost(a);
    EXPECT_NEAR(dwl[a], c.wirelength_cost - now.wirelength_cost, 1e-9) << "cell " << a;
    EXPECT_NEAR(dden[a], c.density_cost - now.density_cost, 1e-9) << "cell " << a;
    if (congestion_exact) {
      EXPECT_NEAR(dcong[a], c.congestion_cost - now.congestion_cost, 1e-9) << "cell " << a;
    }
  }
  for (int32_t a = 0; a < n; ++a) {
    if (!env.action_mask()[a]) {
      EXPECT_EQ(dwl[a] + dden[a] + dcong[a], 0.0);
    }
  }
  return static_cast<int>(legal.size());
}

TEST(ChipEnv, ProxyCostMapWirelengthAndDensityTermsEqualPeekCost) {
  const std::vector<std::string> specs = {SharedChips()[0], SharedChips()[1], SharedChips()[3], SharedChips()[5]};
  int total = 0;
  for (const std::string& spec : specs) {
    auto e = MakeEnvironment(spec);
    auto& env = dynamic_cast<ChipEnv&>(*e);
    std::mt19937_64 rng(3);
    int checked = 0, steps = 0;
    double density_range = 0;
    while (!env.done()) {
      if (steps % 7 == 0) {
        checked += CheckCostChangeAgainstPeek(env, rng, 25, false);
        std::vector<double> dwl, dden, dcong;
        env.CostChangeByCell(&dwl, &dden, &dcong);
        density_range = std::max(density_range, *std::max_element(dden.begin(), dden.end()) -
                                                    *std::min_element(dden.begin(), dden.end()));
      }
      env.Step(RandomLegal(env, rng));
      ++steps;
    }
    EXPECT_GT(checked, 0) << spec;
    total += checked;
    EXPECT_GT(density_range, 1e-6) << spec << ": the density term never varied (the check would be vacuous)";
    std::vector<double> dwl, dden, dcong;
    env.CostChangeByCell(&dwl, &dden, &dcong);  // episode over: nothing
    EXPECT_TRUE(dwl.empty() && dden.empty() && dcong.empty());
  }
  EXPECT_GT(total, 300);
}

// Canvas 30 × 30, grid 10 × 10 (cells 3 × 3), CT's default routing (51.79 routes of macro
// allocation, smoothing 5). "big" (7 × 5, the first to place) has no pins; the other macros,
// a soft macro and three ports carry three nets, so that there is routing demand.
std::shared_ptr<ChipInstance> NetlessFirstMacro() {
  auto inst = std::make_shared<ChipInstance>();
  Netlist& nl = inst->design.netlist;
  auto node = [&](const char* name, NodeType t, double x, double y, double w, double h) {
    const int32_t i = nl.AddNode(name, t);
    nl.x[i] = x, nl.y[i] = y, nl.width[i] = w, nl.height[i] = h;
    return i;
  };
  auto pin = [&](const char* name, int32_t macro, NodeType t, double dx, double dy) {
    const int32_t i = nl.AddNode(name, t);
    nl.parent[i] = macro, nl.pin_dx[i] = dx, nl.pin_dy[i] = dy;
    return i;
  };
  node("big", NodeType::kHardMacro, 15, 15, 7, 5);
  const int32_t b = node("b", NodeType::kHardMacro, 24, 8, 4, 4);
  const int32_t c = node("c", NodeType::kHardMacro, 6, 24, 4, 3);
  const int32_t g = node("Grp_0", NodeType::kSoftMacro, 20, 21, 5, 5);
  const int32_t p0 = node("P0", NodeType::kPort, 0, 13, 0, 0), p1 = node("P1", NodeType::kPort, 30, 27, 0, 0);
  const int32_t p2 = node("P2", NodeType::kPort, 12, 0, 0, 0);
  const int32_t b0 = pin("b_p0", b, NodeType::kHardMacroPin, 1.5, 0), b1 = pin("b_p1", b, NodeType::kHardMacroPin, -1.5, 1);
  const int32_t c0 = pin("c_p0", c, NodeType::kHardMacroPin, 0, -1), g0 = pin("g_p0", g, NodeType::kSoftMacroPin, 0, 0);
  for (const std::vector<int32_t>& net : {std::vector<int32_t>{p0, b0, c0, p1}, {b1, g0, p2}, {g0, p1, c0}}) {
    nl.net_pins.insert(nl.net_pins.end(), net.begin(), net.end());
    nl.net_start.push_back(static_cast<int32_t>(nl.net_pins.size()));
    nl.net_weight.push_back(1.0);
  }
  for (int32_t p : {p0, p1, p2}) nl.fixed[p] = 1;
  nl.Finalize();
  PlacementSettings s;
  s.canvas_width = s.canvas_height = 30;
  s.cols = s.rows = 10;
  inst->design.settings = ResolveDefaults(s, nl);
  return inst;
}

TEST(ChipEnv, ProxyCostMapBlockageFootprintByHand) {
  ChipEnvOptions o;
  o.soft = SoftMacroPlacement::kKeep;
  ChipEnv env(NetlessFirstMacro(), o);
  const int32_t big = env.current_macro();
  ASSERT_EQ(env.netlist().name[big], "big");
  const double va = env.settings().v_macro_alloc, ha = env.settings().h_macro_alloc;
  ASSERT_GT(va, 0);
  ASSERT_GT(ha, 0);
  // 7 × 5 centred on cell (1, 1)'s centre (4.5, 4.5): [1, 8] × [2, 7] covers columns 0–2 by
  // 2, 3, 2 and rows 0–2 by 1, 3, 1. Area: the products. Vertical blockage x-overlap·v_alloc,
  // but the first row is covered in part, so the top row gives its vertical share up; likewise
  // the horizontal blockage y-overlap·h_alloc loses its right-most column.
  std::vector<ProxyCost::FootprintCell> f;
  env.cost().FootprintAt(big, 4.5, 4.5, &f);
  ASSERT_EQ(f.size(), 9u);
  const double ox[3] = {2, 3, 2}, oy[3] = {1, 3, 1};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const auto& cell = f[r * 3 + c];
      EXPECT_EQ(cell.cell, r * 10 + c);
      EXPECT_NEAR(cell.area, ox[c] * oy[r], 1e-12);
      EXPECT_NEAR(cell.v_blockage, r == 2 ? 0.0 : ox[c] * va, 1e-9) << r << "," << c;
      EXPECT_NEAR(cell.h_blockage, c == 2 ? 0.0 : oy[r] * ha, 1e-9) << r << "," << c;
    }
  // The same numbers as the proxy cost's own maps: place "big" there in a copy and compare.
  ProxyCost pc = env.cost();
  const std::vector<double> v0 = pc.VerticalCongestionMap(), h0 = pc.HorizontalCongestionMap();
  std::vector<ProxyCost::FootprintCell> now;
  pc.FootprintAt(big, pc.x(big), pc.y(big), &now);
  pc.MoveNode(big, 4.5, 4.5);
  pc.Cost();
  const std::vector<double> v1 = pc.VerticalCongestionMap(), h1 = pc.HorizontalCongestionMap();
  std::vector<double> dv(100, 0.0), dh(100, 0.0);
  for (const auto& x : f) dv[x.cell] += x.v_blockage / pc.grid_v_routes(), dh[x.cell] += x.h_blockage / pc.grid_h_routes();
  for (const auto& x : now) dv[x.cell] -= x.v_blockage / pc.grid_v_routes(), dh[x.cell] -= x.h_blockage / pc.grid_h_routes();
  for (int i = 0; i < 100; ++i) {
    EXPECT_NEAR(v1[i] - v0[i], dv[i], 1e-12) << i;
    EXPECT_NEAR(h1[i] - h0[i], dh[i], 1e-12) << i;
  }
}

TEST(ChipEnv, ProxyCostMapCongestionTermIsExactForAMacroWithoutNets) {
  ChipEnvOptions o;
  o.soft = SoftMacroPlacement::kKeep;
  o.cost_map = CostMap::kProxy;
  ChipEnv env(NetlessFirstMacro(), o);
  ASSERT_EQ(env.netlist().name[env.current_macro()], "big");
  std::mt19937_64 rng(1);
  EXPECT_GT(CheckCostChangeAgainstPeek(env, rng, 0, /*congestion_exact=*/true), 20);
  std::vector<double> dwl, dden, dcong;
  env.CostChangeByCell(&dwl, &dden, &dcong);
  double lo = 0, hi = 0;
  for (size_t a = 0; a < dcong.size(); ++a) {
    if (!env.action_mask()[a]) continue;
    lo = std::min(lo, dcong[a]), hi = std::max(hi, dcong[a]);
    EXPECT_EQ(dwl[a], 0.0);  // no nets
  }
  EXPECT_GT(hi - lo, 1e-4) << "the blockage term varies over the cells";
  // The next macro has nets: wirelength and density stay exact; congestion is the estimate.
  env.Step(RandomLegal(env, rng));
  EXPECT_GT(CheckCostChangeAgainstPeek(env, rng, 0, false), 5);
}

TEST(ChipEnv, ProxyCostMapIsTheWeightedChangeScaledOverLegalCells) {
  auto e = MakeEnvironment("chip(" + kAriane + ",soft=keep,cost_map=proxy)");
  auto& env = dynamic_cast<ChipEnv&>(*e);
  EXPECT_NE(env.name().find("cost_map=proxy"), std::string::npos) << env.name();
  std::mt19937_64 rng(9);
  for (int k = 0; k < 30; ++k) env.Step(RandomLegal(env, rng));
  const DynamicState& st = env.state();
  ASSERT_EQ(st.action_feature_dim, 5);
  EXPECT_EQ(st.action_feature_names[4], "proxy_cost_change");
  const int32_t n = env.num_actions();
  const float* map = &st.action_features[4 * static_cast<size_t>(n)];
  std::vector<double> dwl, dden, dcong;
  env.CostChangeByCell(&dwl, &dden, &dcong);
  const CostWeights& w = env.options().weights;
  double lo = 1e300, hi = -1e300;
  for (int32_t a = 0; a < n; ++a)
    if (st.action_mask[a]) {
      const double d = w.wirelength * dwl[a] + w.density * dden[a] + w.congestion * dcong[a];
      lo = std::min(lo, d), hi = std::max(hi, d);
    }
  ASSERT_GT(hi, lo);
  float mn = 2;
  for (int32_t a = 0; a < n; ++a) {
    if (!st.action_mask[a]) {
      EXPECT_EQ(map[a], 1.f) << a;
      continue;
    }
    const double d = w.wirelength * dwl[a] + w.density * dden[a] + w.congestion * dcong[a];
    EXPECT_NEAR(map[a], (d - lo) / (hi - lo), 1e-6) << a;
    mn = std::min(mn, map[a]);
  }
  EXPECT_EQ(mn, 0.f);
  // The other four maps are those of cost_map=wirelength; only the fifth differs.
  auto w2 = MakeEnvironment("chip(" + kAriane + ",soft=keep)");
  std::mt19937_64 rng2(9);
  for (int k = 0; k < 30; ++k) w2->Step(RandomLegal(*w2, rng2));
  const auto& f1 = st.action_features;
  const auto& f2 = w2->state().action_features;
  EXPECT_TRUE(std::equal(f1.begin(), f1.begin() + 4 * n, f2.begin()));
  EXPECT_FALSE(std::equal(f1.begin() + 4 * n, f1.end(), f2.begin() + 4 * n));
  EXPECT_EQ(w2->state().action_feature_names[4], "wirelength_change");
  EXPECT_EQ(w2->name().find("cost_map"), std::string::npos);  // the default names are unchanged
  EXPECT_THROW(MakeEnvironment("chip(seed=1,cost_map=congestion)"), ConfigError);
}

// ---- cost_map=split: the wirelength map plus the density and congestion changes, separately ----

// Checks that `map` is `v` min-max scaled over the legal cells (illegal 1, the cheapest legal 0)
// and orders the legal cells as `v` does. Returns false when all legal values are equal.
bool CheckScaledOverLegal(const std::vector<double>& v, const float* map, const std::vector<uint8_t>& mask) {
  double lo = 1e300, hi = -1e300;
  for (size_t a = 0; a < mask.size(); ++a)
    if (mask[a]) lo = std::min(lo, v[a]), hi = std::max(hi, v[a]);
  if (!(hi > lo)) {
    for (size_t a = 0; a < mask.size(); ++a) EXPECT_EQ(map[a], mask[a] ? 0.f : 1.f) << a;
    return false;
  }
  float mn = 2, mx = -1;
  std::vector<size_t> legal;
  for (size_t a = 0; a < mask.size(); ++a) {
    if (!mask[a]) {
      EXPECT_EQ(map[a], 1.f) << a;
      continue;
    }
    legal.push_back(a);
    EXPECT_NEAR(map[a], (v[a] - lo) / (hi - lo), 1e-6) << a;
    mn = std::min(mn, map[a]), mx = std::max(mx, map[a]);
  }
  EXPECT_EQ(mn, 0.f);
  EXPECT_EQ(mx, 1.f);
  // Monotone: a cell that changes the cost less never gets a larger value.
  std::sort(legal.begin(), legal.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  for (size_t j = 1; j < legal.size(); ++j) EXPECT_LE(map[legal[j - 1]], map[legal[j]]) << legal[j];
  return true;
}

TEST(ChipEnv, SplitCostMapAddsTheDensityAndCongestionChangesScaledOnTheirOwn) {
  auto e = MakeEnvironment("chip(" + kAriane + ",soft=keep,cost_map=split)");
  auto& env = dynamic_cast<ChipEnv&>(*e);
  EXPECT_NE(env.name().find("cost_map=split"), std::string::npos) << env.name();
  EXPECT_EQ(MakeEnvironment(env.name())->name(), env.name());
  auto w = MakeEnvironment("chip(" + kAriane + ",soft=keep)");
  const int32_t n = env.num_actions();
  std::mt19937_64 rng(9), rng2(9);
  int varied_den = 0, varied_cong = 0;
  for (int k = 0; k < 30; ++k) {
    const DynamicState& st = env.state();
    ASSERT_EQ(st.action_feature_dim, 7);
    ASSERT_EQ(st.action_features.size(), 7 * static_cast<size_t>(n));
    EXPECT_EQ(st.action_feature_names,
              (std::vector<std::string>{"occupancy", "density", "congestion_v", "congestion_h", "wirelength_change",
                                        "density_change", "congestion_change"}));
    // Channels 0-4 are cost_map=wirelength's, bit for bit.
    const auto& f2 = w->state().action_features;
    ASSERT_EQ(f2.size(), 5 * static_cast<size_t>(n));
    EXPECT_EQ(std::memcmp(st.action_features.data(), f2.data(), f2.size() * sizeof(float)), 0) << "step " << k;
    if (k % 10 == 9) {  // channels 5 and 6 against CostChangeByCell
      std::vector<double> dwl, dden, dcong;
      env.CostChangeByCell(&dwl, &dden, &dcong);
      varied_den += CheckScaledOverLegal(dden, &st.action_features[5 * static_cast<size_t>(n)], st.action_mask);
      varied_cong += CheckScaledOverLegal(dcong, &st.action_features[6 * static_cast<size_t>(n)], st.action_mask);
    }
    env.Step(RandomLegal(env, rng));
    w->Step(RandomLegal(*w, rng2));
  }
  EXPECT_GT(varied_den, 0);
  EXPECT_GT(varied_cong, 0);
  // A whole episode on a synthetic design: the first five maps are the wirelength mode's, the
  // last two are zero once the episode is over.
  auto s = MakeEnvironment("chip(seed=1,soft=keep,cost_map=split)");
  auto s2 = MakeEnvironment("chip(seed=1,soft=keep)");
  std::mt19937_64 r1(4), r2(4);
  const size_t m = static_cast<size_t>(s->num_actions());
  while (!s->done()) {
    ASSERT_FALSE(s2->done());
    EXPECT_EQ(std::memcmp(s->state().action_features.data(), s2->state().action_features.data(), 5 * m * sizeof(float)), 0);
    s->Step(RandomLegal(*s, r1));
    s2->Step(RandomLegal(*s2, r2));
  }
  const auto& fe = s->state().action_features;
  EXPECT_TRUE(std::all_of(fe.begin() + 4 * m, fe.end(), [](float x) { return x == 0.f; }));
  try {
    MakeEnvironment("chip(seed=1,cost_map=congestion)");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("must be wirelength, proxy or split (got 'congestion')"), std::string::npos)
        << err.what();
  }
}

// FNV-1a over the bytes of every map of one random episode.
uint64_t MapsHash(Environment& env, uint64_t seed) {
  std::mt19937_64 rng(seed);
  env.Reset(0);
  uint64_t h = 1469598103934665603ull;
  auto mix = [&]() {
    const auto& f = env.state().action_features;
    const auto* p = reinterpret_cast<const unsigned char*>(f.data());
    for (size_t i = 0; i < f.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix();
  while (!env.done()) {
    env.Step(RandomLegal(env, rng));
    mix();
  }
  return h;
}

TEST(ChipEnv, WirelengthCostMapGivesTheMapsOfBefore) {
  // Measured with the code before cost_map existed (branch main at ecdc19e), same episodes.
  const std::vector<std::pair<std::string, uint64_t>> golden = {
      {"chip(seed=1,soft=keep", 6576302263668507385ull}, {"chip(" + kAriane + ",soft=keep", 9745501505531723864ull}};
  for (const auto& [prefix, before] : golden)
    for (const std::string& spec : {prefix + ")", prefix + ",cost_map=wirelength)"}) {
      auto e = MakeEnvironment(spec);
      EXPECT_EQ(MapsHash(*e, 4), before) << spec;
    }
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
