#include "search/chip/proposer_es.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "datasets/util/errors.h"

namespace placerl::search {
namespace {

constexpr int F = ProposerWeights::kFeatures;

// A synthetic "annealing run": the final cost is 1 + Σ over the kinds' biases of (bias − target)²,
// scaled per design, with a small seed-dependent wobble (a run's noise).
struct Quadratic {
  double target(int k) const { return 0.2 * k - 0.5; }
  double operator()(const ProposerWeights& w, int design, uint64_t seed, int) const {
    double c = 1;
    for (int k = 0; k < ProposerWeights::kKinds; ++k) c += std::pow(w.w[k * F] - target(k), 2);
    const double wobble = 1e-3 * std::sin(static_cast<double>(seed) * 12.9898);
    return (design + 1) * (c + wobble);
  }
  double distance(const ProposerWeights& w) const {
    double d = 0;
    for (int k = 0; k < ProposerWeights::kKinds; ++k) d += std::pow(w.w[k * F] - target(k), 2);
    return d;
  }
};

ProposerEsOptions BiasOnly() {
  ProposerEsOptions o;
  o.features = {0};
  o.iterations = 60;
  o.pairs = 6;
  o.sigma = 0.1;
  o.learning_rate = 0.05;
  return o;
}

TEST(ProposerEs, DescendsASyntheticRunCost) {
  const Quadratic q;
  ProposerWeights start;
  const ProposerEsResult r = TrainProposerEs(2, q, start, BiasOnly(), {}, {}, {});
  ASSERT_EQ(r.history.size(), 60u);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.runs, 2 + 60 * 12);
  // The start's cost per design is its scale.
  EXPECT_NEAR(r.scale[0], q(start, 0, 1, 0), 1e-12);
  EXPECT_NEAR(r.scale[1], q(start, 1, 1, 0), 1e-12);
  EXPECT_LT(q.distance(r.weights), 0.25 * q.distance(start));
  EXPECT_LT(r.history.back().mean_relative, r.history.front().mean_relative);
}

TEST(ProposerEs, OnlyTheSearchedFeaturesChange) {
  ProposerWeights start;
  for (double& v : start.w) v = 0.125;
  start.select = {0.5, -0.25, 1.0};
  const ProposerEsResult r = TrainProposerEs(1, Quadratic{}, start, BiasOnly(), {}, {}, {});
  int changed = 0;
  for (int k = 0; k < ProposerWeights::kKinds; ++k) {
    changed += r.weights.w[k * F] != 0.125;
    for (int f = 1; f < F; ++f) EXPECT_EQ(r.weights.w[k * F + f], 0.125) << "kind " << k << " feature " << f;
  }
  EXPECT_GT(changed, 0);
  EXPECT_EQ(r.weights.select, start.select);
}

// schedule=true searches the six schedule weights (and only them with no feature), each kept
// within ±kMaxSchedule, and descends a run cost that depends on them.
TEST(ProposerEs, TheScheduleWeightsAreSearchedWithinTheirBound) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    double c = 1;
    for (int i = 0; i < ProposerWeights::kScheduleWeights; ++i) c += std::pow(w.schedule[i] - (i == 0 ? 5.5 : 0.3), 2);
    return c + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.schedule = true;
  o.iterations = 200;
  o.learning_rate = 0.05;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kScheduleWeights);
  ProposerWeights start;
  for (double& v : start.w) v = 0.125;
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_EQ(r.weights.w, start.w);  // no kind weight searched
  EXPECT_EQ(r.weights.schedule[0], ProposerWeights::kMaxSchedule);  // the target 5.5 is beyond the bound
  for (int i = 1; i < ProposerWeights::kScheduleWeights; ++i) EXPECT_NEAR(r.weights.schedule[i], 0.3, 0.1) << i;
  o.schedule = false;
  EXPECT_THROW(TrainProposerEs(1, run, start, o, {}, {}, {}), ConfigError);  // nothing to search
}

// control=true searches the acceptance controller's four weights; a start without a controller
// starts from kDefaultControl with kDefaultHandover (its runs see both), and the result has the
// controller on; a start with a controller keeps its own handover.
TEST(ProposerEs, TheControlWeightsAreSearchedFromTheDefaultController) {
  bool every_run_controlled = true;
  std::mutex mu;
  auto run = [&](const ProposerWeights& w, int, uint64_t seed, int) {
    std::lock_guard<std::mutex> lock(mu);
    every_run_controlled = every_run_controlled && w.control_on && w.control_handover == kDefaultHandover;
    double c = 1;
    for (int i = 0; i < ProposerWeights::kControlWeights; ++i) c += std::pow(w.control[i] - 0.5 * i, 2);
    return c + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.control = true;
  o.iterations = 300;
  o.learning_rate = 0.05;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kControlWeights);
  ProposerWeights start;
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(every_run_controlled);
  EXPECT_TRUE(r.weights.control_on);
  EXPECT_EQ(r.weights.control_handover, kDefaultHandover);
  EXPECT_NEAR(r.scale[0], run([] { ProposerWeights w; w.control = kDefaultControl; w.control_on = true; return w; }(), 0, 1, 0),
              1e-12);
  for (int i = 0; i < ProposerWeights::kControlWeights; ++i) EXPECT_NEAR(r.weights.control[i], 0.5 * i, 0.15) << i;
  EXPECT_EQ(r.weights.schedule, start.schedule);
  EXPECT_EQ(r.weights.w, start.w);
  ProposerWeights own = r.weights;
  own.control_handover = 0.8;
  o.iterations = 1;
  EXPECT_EQ(TrainProposerEs(1, [](const ProposerWeights& w, int, uint64_t, int) { return 1 + w.control_handover; },
                            own, o, {}, {}, {})
                .weights.control_handover,
            0.8);
}

// With a start whose controller has a state term, control=true searches its weight too (one
// dimension more); without one, the state weight is neither searched nor switched on.
TEST(ProposerEs, TheStateWeightIsSearchedWhenTheStartHasOne) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    return 1 + std::pow(w.control_state - 1.5, 2) + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.control = true;
  o.iterations = 300;
  o.learning_rate = 0.05;
  ProposerWeights start;
  start.control = kDefaultControl;
  start.control_on = true;
  start.control_state_on = true;
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.control_state_on);
  EXPECT_NEAR(r.weights.control_state, 1.5, 0.15);
  start.control_state_on = false;
  const ProposerEsResult off = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_FALSE(off.weights.control_state_on);
  EXPECT_EQ(off.weights.control_state, 0.0);
}

// control_state=true adds the state term at 0 to a start without one and searches it (the
// recipe "a schedule, then a controller with a state term" from one start file); without
// control it is refused.
TEST(ProposerEs, ControlStateAddsTheStateTermAtZeroAndSearchesIt) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    return 1 + std::pow(w.control_state + 0.6, 2) + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.control = true;
  o.control_state = true;
  o.learning_rate = 0.05;
  ProposerWeights start;  // no controller, no state term
  o.iterations = 0;
  const ProposerEsResult none = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(none.weights.control_on);
  EXPECT_TRUE(none.weights.control_state_on);
  EXPECT_EQ(none.weights.control_state, 0.0);
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kControlWeights + 1);
  o.iterations = 300;
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.control_state_on);
  EXPECT_NEAR(r.weights.control_state, -0.6, 0.15);
  o.control = false;
  EXPECT_THROW(TrainProposerEs(1, run, start, o, {}, {}, {}), ConfigError);
}

TEST(ProposerEs, PairsShareDesignAndSeedAndThreadsDoNotChangeTheResult) {
  std::mutex mu;
  std::multiset<std::tuple<int, uint64_t>> calls;
  auto recording = [&](const ProposerWeights& w, int design, uint64_t seed, int thread) {
    EXPECT_GE(thread, 0);
    EXPECT_LT(thread, 2);
    std::lock_guard<std::mutex> lock(mu);
    calls.insert({design, seed});
    return Quadratic{}(w, design, seed, thread);
  };
  ProposerEsOptions o = BiasOnly();
  o.iterations = 5;
  o.pairs = 3;
  o.threads = 2;
  const ProposerEsResult two = TrainProposerEs(3, recording, ProposerWeights{}, o, {}, {}, {});
  // 3 scale runs (seed 1, designs 0..2), then every (design, seed) of a pair twice.
  EXPECT_EQ(calls.count({0, 1}), 1u);
  for (int t = 0; t < 5; ++t)
    for (int i = 0; i < 3; ++i) {
      const uint64_t seed = 2 + t * 3 + i;
      EXPECT_EQ(calls.count({(t * 3 + i) % 3, seed}), 2u) << "iteration " << t << " pair " << i;
    }
  o.threads = 1;
  const ProposerEsResult one = TrainProposerEs(3, Quadratic{}, ProposerWeights{}, o, {}, {}, {});
  EXPECT_EQ(one.weights.w, two.weights.w);
}

TEST(ProposerEs, StopEndsEarlyAndDropsTheUnfinishedIteration) {
  int runs = 0;
  auto counting = [&](const ProposerWeights& w, int design, uint64_t seed, int thread) {
    ++runs;
    return Quadratic{}(w, design, seed, thread);
  };
  ProposerEsOptions o = BiasOnly();
  const ProposerEsResult r = TrainProposerEs(1, counting, ProposerWeights{}, o, [&] { return runs >= 1 + 12 * 2 + 5; }, {}, {});
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.history.size(), 2u);
  EXPECT_EQ(r.runs, 1 + 2 * 12);
}

// hard_select=true searches the hard-macro selection from zero (a start without one) and nothing
// else when no feature is listed.
TEST(ProposerEs, TheHardSelectionIsSearchedFromZero) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    EXPECT_TRUE(w.hard_select_on);
    return 1 + std::pow(w.hard_select[0] - 2, 2) + std::pow(w.hard_select[2] + 1, 2) +
           1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerWeights start;
  start.w[3] = 0.5;
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.hard_select = true;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kHardSelectFeatures);
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.hard_select_on);
  EXPECT_NEAR(r.weights.hard_select[0], 2, 0.5);
  EXPECT_NEAR(r.weights.hard_select[2], -1, 0.5);
  EXPECT_EQ(r.weights.w, start.w);
  EXPECT_EQ(r.weights.schedule, start.schedule);
  EXPECT_FALSE(r.weights.control_on);
}

// late_kinds=true searches the kinds' late adjustment from zero (a start without one) and nothing
// else when no feature is listed.
TEST(ProposerEs, TheLateKindsAreSearchedFromZero) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    EXPECT_TRUE(w.late_kinds_on);
    return 1 + std::pow(w.late_kinds[kSoftShift] - 1.5, 2) + std::pow(w.late_kinds[kMove] + 1, 2) +
           1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerWeights start;
  start.w[3] = 0.5;
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.late_kinds = true;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kKinds);
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.late_kinds_on);
  EXPECT_NEAR(r.weights.late_kinds[kSoftShift], 1.5, 0.5);
  EXPECT_NEAR(r.weights.late_kinds[kMove], -1, 0.5);
  EXPECT_EQ(r.weights.w, start.w);
  EXPECT_FALSE(r.weights.control_on);
}

// length=true searches the run-length term from zero (a start without one) and nothing else when
// no feature is listed; the start's late adjustment and schedule stay as they are.
TEST(ProposerEs, TheRunLengthTermIsSearchedFromZero) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    EXPECT_TRUE(w.length_on);
    return 1 + std::pow(w.length[0] + 0.5, 2) + std::pow(w.length[2] - 1, 2) + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerWeights start;
  start.schedule[0] = 0.3;
  start.late_kinds_on = true;
  start.late_kinds[kSoftShift] = 2;
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.length = true;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kLengthWeights);
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.length_on);
  EXPECT_NEAR(r.weights.length[0], -0.5, 0.3);
  EXPECT_NEAR(r.weights.length[2], 1, 0.3);
  EXPECT_EQ(r.weights.schedule, start.schedule);
  EXPECT_EQ(r.weights.late_kinds, start.late_kinds);
  EXPECT_EQ(r.weights.w, start.w);
}

// target_select=true searches a `move`'s target-cell selection from zero (a start without one),
// beside the hard selection when both are asked for, and nothing else when no feature is listed.
TEST(ProposerEs, TheTargetSelectionIsSearchedFromZero) {
  auto run = [](const ProposerWeights& w, int, uint64_t seed, int) {
    EXPECT_TRUE(w.target_select_on);
    EXPECT_TRUE(w.hard_select_on);
    return 1 + std::pow(w.target_select[0] - 2, 2) + std::pow(w.target_select[1] + 1, 2) +
           std::pow(w.hard_select[1] - 1, 2) + 1e-3 * std::sin(static_cast<double>(seed));
  };
  ProposerWeights start;
  start.w[3] = 0.5;
  ProposerEsOptions o = BiasOnly();
  o.features = {};
  o.target_select = true;
  o.hard_select = true;
  EXPECT_EQ(ProposerEsDimensions(o), ProposerWeights::kHardSelectFeatures + ProposerWeights::kTargetSelectFeatures);
  const ProposerEsResult r = TrainProposerEs(1, run, start, o, {}, {}, {});
  EXPECT_TRUE(r.weights.target_select_on);
  EXPECT_NEAR(r.weights.target_select[0], 2, 0.5);
  EXPECT_NEAR(r.weights.target_select[1], -1, 0.5);
  EXPECT_NEAR(r.weights.hard_select[1], 1, 0.5);
  EXPECT_EQ(r.weights.w, start.w);
  EXPECT_EQ(r.weights.schedule, start.schedule);
  EXPECT_FALSE(r.weights.control_on);
}

TEST(ProposerEs, AResumedSearchEndsWhereAnUninterruptedOneEnds) {
  const Quadratic q;
  ProposerEsOptions o = BiasOnly();
  o.iterations = 12;
  o.pairs = 3;
  o.schedule = true;
  o.control = true;
  o.control_state = true;
  const ProposerEsResult whole = TrainProposerEs(2, q, ProposerWeights{}, o, {}, {}, {});
  // The same search, its state written as text after every iteration and the process "killed"
  // after iteration 5 (stop), then continued from the text of iteration 5's checkpoint.
  std::vector<std::string> texts;
  int iterations_seen = 0;
  ProposerEsCheckpoints save;
  save.on_checkpoint = [&](const ProposerEsState& s) { texts.push_back(ProposerEsStateJson(s)); };
  const ProposerEsResult first = TrainProposerEs(
      2, q, ProposerWeights{}, o, [&] { return iterations_seen >= 5; },
      [&](const ProposerEsIteration&, const ProposerWeights&) { ++iterations_seen; }, [] { return 7.5; }, save);
  ASSERT_EQ(first.history.size(), 5u);
  ASSERT_EQ(texts.size(), 6u);  // after the scales, then after each iteration
  ProposerEsState st = ParseProposerEsState(texts.back(), "state.json");
  EXPECT_EQ(st.iterations, 5);
  EXPECT_EQ(st.seconds, 7.5);
  EXPECT_EQ(ProposerEsStateJson(st), texts.back());  // the text round-trips to the bit
  int fresh_runs = 0;
  auto counting = [&](const ProposerWeights& w, int design, uint64_t seed, int thread) {
    ++fresh_runs;
    return q(w, design, seed, thread);
  };
  ProposerEsCheckpoints resume;
  resume.state = &st;
  const ProposerEsResult rest = TrainProposerEs(2, counting, ProposerWeights{}, o, {}, {}, {}, resume);
  EXPECT_EQ(fresh_runs, 7 * 6);  // no scale runs again: only the 7 iterations left
  EXPECT_EQ(rest.runs, whole.runs);
  EXPECT_EQ(rest.weights.w, whole.weights.w);
  EXPECT_EQ(rest.weights.schedule, whole.weights.schedule);
  EXPECT_EQ(rest.weights.control, whole.weights.control);
  EXPECT_EQ(rest.weights.control_state, whole.weights.control_state);
  ASSERT_EQ(rest.history.size(), whole.history.size());
  for (size_t i = 0; i < whole.history.size(); ++i)
    EXPECT_EQ(rest.history[i].mean_relative, whole.history[i].mean_relative) << i;
  EXPECT_EQ(st.iterations, 12);  // the state at the end
  // A state that does not fit the search, or a damaged text, is a ConfigError naming the file.
  ProposerEsState other = ParseProposerEsState(texts[3], "state.json");
  ProposerEsCheckpoints misfit;
  misfit.state = &other;
  EXPECT_THROW(TrainProposerEs(3, q, ProposerWeights{}, o, {}, {}, {}, misfit), ConfigError);  // 3 designs, not 2
  other = ParseProposerEsState(texts[3], "state.json");
  ProposerEsOptions fewer = o;
  fewer.schedule = false;
  EXPECT_THROW(TrainProposerEs(2, q, ProposerWeights{}, fewer, {}, {}, {}, misfit), ConfigError);
  other = ParseProposerEsState(texts[3], "state.json");
  other.rng = "damaged";
  EXPECT_THROW(TrainProposerEs(2, q, ProposerWeights{}, o, {}, {}, {}, misfit), ConfigError);
  const std::string good = texts[3];
  for (const std::string& bad : {good.substr(0, good.size() / 2), std::string("{}"), std::string("[1,2]"),
                                 std::string("{\"format\":\"placerl-proposer-es-state\",\"version\":2}")}) {
    try {
      ParseProposerEsState(bad, "runs/es/checkpoints/state.json");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("runs/es/checkpoints/state.json"), std::string::npos) << e.what();
    }
  }
  std::string nan_scale = good;
  const size_t at = nan_scale.find("\"scale\":[");
  ASSERT_NE(at, std::string::npos);
  nan_scale.replace(at, 9, "\"scale\":[-1,");
  EXPECT_THROW(ParseProposerEsState(nan_scale, "state.json"), ConfigError);
}

TEST(ProposerEs, BadOptionsAndBadRunsAreConfigErrors) {
  const Quadratic q;
  ProposerEsOptions o = BiasOnly();
  EXPECT_THROW(TrainProposerEs(0, q, {}, o, {}, {}, {}), ConfigError);
  o.sigma = 0;
  EXPECT_THROW(TrainProposerEs(1, q, {}, o, {}, {}, {}), ConfigError);
  o = BiasOnly();
  o.features = {4};
  EXPECT_THROW(TrainProposerEs(1, q, {}, o, {}, {}, {}), ConfigError);
  o.features = {0, 0};
  EXPECT_THROW(TrainProposerEs(1, q, {}, o, {}, {}, {}), ConfigError);
  o.features = {};
  EXPECT_THROW(TrainProposerEs(1, q, {}, o, {}, {}, {}), ConfigError);
  o = BiasOnly();
  o.pairs = 0;
  EXPECT_THROW(TrainProposerEs(1, q, {}, o, {}, {}, {}), ConfigError);
  o = BiasOnly();
  auto nan_run = [](const ProposerWeights&, int, uint64_t seed, int) {
    return seed > 1 ? std::numeric_limits<double>::quiet_NaN() : 1.0;
  };
  EXPECT_THROW(TrainProposerEs(1, nan_run, {}, o, {}, {}, {}), ConfigError);
  // A failing run on another thread is the same exception on the caller's, not a crash.
  o.threads = 2;
  EXPECT_THROW(TrainProposerEs(1, nan_run, {}, o, {}, {}, {}), ConfigError);
  auto throwing = [](const ProposerWeights&, int, uint64_t seed, int) -> double {
    if (seed > 3) throw Error("no placement");
    return 1.0;
  };
  EXPECT_THROW(TrainProposerEs(2, throwing, {}, o, {}, {}, {}), Error);
}

}  // namespace
}  // namespace placerl::search
