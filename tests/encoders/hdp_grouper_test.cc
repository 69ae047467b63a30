// HDP's grouper (encoders/hdp_grouper.h): a sampled grouping's log-probability is the sum of
// the per-unit log-probabilities it reports, greedy = per-unit argmax, sampling is reproducible
// from the RNG, an update with a positive weight makes its grouping more likely (negative:
// less), REINFORCE alone learns a reward that prefers fewer groups, checkpoints round-trip and
// refuse other shapes, bad options are ConfigErrors.
#include "encoders/hdp_grouper.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::encoders {
namespace {

// A chain of n units with 3 features each (position, a constant, an alternating bit).
env::StaticGraph Chain(int32_t n) {
  env::StaticGraph g;
  g.num_nodes = n;
  g.node_feature_dim = 3;
  g.node_feature_names = {"position", "one", "odd"};
  for (int32_t u = 0; u < n; ++u) {
    g.node_features.insert(g.node_features.end(), {static_cast<float>(u) / n, 1.f, static_cast<float>(u % 2)});
    if (u > 0) {
      g.edge_src.push_back(u - 1);
      g.edge_dst.push_back(u);
      g.edge_weight.push_back(1.f);
    }
  }
  g.directed = true;
  g.Validate();
  return g;
}

double LogProbOf(const std::vector<float>& p, int32_t groups, const std::vector<int32_t>& unit_group) {
  double lp = 0;
  for (size_t u = 0; u < unit_group.size(); ++u) lp += std::log(p[u * groups + unit_group[u]]);
  return lp;
}

TEST(HdpGrouper, CompactGroupsNumbersUsedGroupsByFirstUse) {
  std::vector<int32_t> dense;
  EXPECT_EQ(CompactGroups({7, 3, 7, 200, 3}, &dense), 3);
  EXPECT_EQ(dense, (std::vector<int32_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(CompactGroups({}, &dense), 0);
  EXPECT_TRUE(dense.empty());
}

TEST(HdpGrouper, SampleReportsItsLogProbabilityAndGreedyIsTheArgmax) {
  const env::StaticGraph g = Chain(12);
  HdpGrouperOptions o;
  o.num_groups = 5;
  o.hidden_dim = 8;
  HdpGrouper grouper(o, 3);
  const std::vector<float> p = grouper.Probabilities(g);
  ASSERT_EQ(p.size(), 12u * 5);
  for (int u = 0; u < 12; ++u) {
    double sum = 0;
    for (int k = 0; k < 5; ++k) sum += p[u * 5 + k];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  std::mt19937_64 rng(3), again(3);
  const Grouping a = grouper.Sample(g, &rng), b = grouper.Sample(g, &again);
  EXPECT_EQ(a.unit_group, b.unit_group);  // the RNG alone decides
  ASSERT_EQ(a.unit_group.size(), 12u);
  for (int32_t k : a.unit_group) EXPECT_TRUE(k >= 0 && k < 5);
  EXPECT_NEAR(a.log_prob, LogProbOf(p, 5, a.unit_group), 1e-4);
  EXPECT_EQ(a.used_groups, static_cast<int32_t>(std::set<int32_t>(a.unit_group.begin(), a.unit_group.end()).size()));
  EXPECT_GT(a.mean_entropy, 0.5 * std::log(5.0));  // starts near uniform
  EXPECT_LE(a.mean_entropy, std::log(5.0) + 1e-6);
  const Grouping greedy = grouper.Sample(g, &rng, /*greedy=*/true);
  for (int u = 0; u < 12; ++u)
    for (int k = 0; k < 5; ++k) EXPECT_LE(p[u * 5 + k], p[u * 5 + greedy.unit_group[u]]);
}

TEST(HdpGrouper, UpdateMovesTheGroupingsProbabilityWithTheWeightsSign) {
  const env::StaticGraph g = Chain(10);
  for (const double w : {1.0, -1.0}) {
    HdpGrouperOptions o;
    o.num_groups = 4;
    o.hidden_dim = 16;
    o.learning_rate = 1e-2;
    HdpGrouper grouper(o, 3);
    std::mt19937_64 rng(5);
    const Grouping s = grouper.Sample(g, &rng);
    const double before = LogProbOf(grouper.Probabilities(g), 4, s.unit_group);
    const auto stats = grouper.Update(g, {&s}, {w});
    EXPECT_TRUE(stats.count("losses/grouper_loss"));
    EXPECT_DOUBLE_EQ(stats.at("charts/grouper_used_groups"), s.used_groups);
    const double after = LogProbOf(grouper.Probabilities(g), 4, s.unit_group);
    if (w > 0) EXPECT_GT(after, before + 1e-3);
    else EXPECT_LT(after, before - 1e-3);
  }
}

// REINFORCE with an EMA baseline on "reward = −(groups used)": the grouper learns to put the
// units together (8 units, 8 groups: a uniform grouper uses ≈ 5.3).
TEST(HdpGrouper, ReinforceLearnsToUseFewGroups) {
  const env::StaticGraph g = Chain(8);
  HdpGrouperOptions o;
  o.num_groups = 8;
  o.hidden_dim = 16;
  o.learning_rate = 3e-2;
  HdpGrouper grouper(o, 3);
  std::mt19937_64 rng(11);
  double baseline = NAN, first = 0, last = 0;
  for (int it = 0; it < 150; ++it) {
    std::vector<Grouping> batch(4);
    double mean = 0;
    for (auto& s : batch) s = grouper.Sample(g, &rng), mean -= s.used_groups / 4.0;
    if (std::isnan(baseline)) baseline = mean;
    std::vector<const Grouping*> ptr;
    std::vector<double> w;
    for (auto& s : batch) ptr.push_back(&s), w.push_back((-s.used_groups - baseline) / 4.0);
    grouper.Update(g, ptr, w);
    baseline = 0.9 * baseline + 0.1 * mean;
    if (it < 10) first -= mean / 10;
    if (it >= 140) last -= mean / 10;
  }
  EXPECT_GT(first, 4.0);
  EXPECT_LT(last, 2.0);
}

TEST(HdpGrouper, CheckpointRoundTripsAndRefusesAnotherShape) {
  testing::TempDir tmp;
  const env::StaticGraph g = Chain(6);
  HdpGrouperOptions o;
  o.num_groups = 3;
  o.hidden_dim = 4;
  HdpGrouper a(o, 3);
  std::mt19937_64 rng(1);
  const Grouping s = a.Sample(g, &rng);
  a.Update(g, {&s}, {1.0});
  a.Save(tmp / "g.ckpt");
  o.init_seed = 99;
  HdpGrouper b(o, 3);
  EXPECT_NE(a.Probabilities(g), b.Probabilities(g));
  b.Load(tmp / "g.ckpt");
  EXPECT_EQ(a.Probabilities(g), b.Probabilities(g));
  // The same next step (the optimiser state came along).
  a.Update(g, {&s}, {1.0});
  b.Update(g, {&s}, {1.0});
  EXPECT_EQ(a.Probabilities(g), b.Probabilities(g));
  o.num_groups = 4;
  HdpGrouper other(o, 3);
  EXPECT_THROW(other.Load(tmp / "g.ckpt"), ConfigError);
  EXPECT_THROW(other.Load(tmp / "missing.ckpt"), Error);
}

TEST(HdpGrouper, BadOptionsAndForeignGraphsAreConfigErrors) {
  HdpGrouperOptions o;
  o.num_groups = 0;
  EXPECT_THROW(HdpGrouper(o, 3), ConfigError);
  o.num_groups = 4;
  o.hidden_dim = 0;
  EXPECT_THROW(HdpGrouper(o, 3), ConfigError);
  o.hidden_dim = 4;
  o.learning_rate = 0;
  EXPECT_THROW(HdpGrouper(o, 3), ConfigError);
  o.learning_rate = 1e-3;
  EXPECT_THROW(HdpGrouper(o, 0), ConfigError);
  HdpGrouper grouper(o, 5);  // built for 5 features; the chain has 3
  std::mt19937_64 rng(1);
  EXPECT_THROW(grouper.Sample(Chain(4), &rng), ConfigError);
}

}  // namespace
}  // namespace placerl::encoders
