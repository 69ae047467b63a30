// Random search and regularised evolution: evolution finds the optimum of a small synthetic
// space, runs are deterministic per seed, the budget is the number of evaluations, every
// sampled or mutated architecture is allowed by the space's rules, and on NAS-Bench-201
// evolution beats random search on average (the published ordering).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "datasets/util/errors.h"
#include "env/block/block_env.h"
#include "search/nas/nas_search.h"

namespace placerl::search {
namespace {

// 6 decisions × 4 choices (4,096 architectures), additive synthetic quality.
nas::SearchSpace TinySpace() {
  return nas::ParseSearchSpace(
      "name: \"tiny\"\nnode { name: \"n{i}\" repeat: 6 decision { name: \"x\" choice: [\"a\", \"b\", \"c\", \"d\"] } }\n",
      "tiny.pbtxt");
}

TEST(NasSearch, EvolutionFindsTheOptimumOfATinySyntheticSpace) {
  auto space = std::make_shared<const nas::SearchSpace>(TinySpace());
  auto quality = std::make_shared<env::SyntheticQuality>(*space, 11);
  env::BlockEnv e(space, quality, std::make_shared<env::NoCost>(), {});
  int found = 0, random_found = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    NasSearchOptions o;
    o.budget = 500;
    o.seed = seed;
    const NasSearchResult r = RunNasSearch(*space, [&](const nas::Architecture& a) { return e.Evaluate(a); }, o);
    EXPECT_EQ(r.evaluations, 500);
    found += r.best.arch == quality->Optimum();
    o.method = "random";
    random_found += RunNasSearch(*space, [&](const nas::Architecture& a) { return e.Evaluate(a); }, o).best.arch ==
                    quality->Optimum();
  }
  // (Measured over 50 seeds: evolution 47/50, random 7/50 — 500 draws of 4,096 hit it 12 % of the time.)
  EXPECT_GE(found, 17) << "evolution should find the optimum of an additive space in 500 evaluations";
  EXPECT_LE(random_found, 8) << random_found;
}

TEST(NasSearch, DeterministicPerSeedAndCountsTheBudget) {
  env::BlockEnv e(env::BlockEnvOptions{});
  auto objective = [&](const nas::Architecture& a) { return e.Evaluate(a); };
  for (const char* method : {"random", "evolution"}) {
    NasSearchOptions o;
    o.method = method;
    o.budget = 57;
    o.seed = 5;
    const NasSearchResult a = RunNasSearch(e.space(), objective, o), b = RunNasSearch(e.space(), objective, o);
    EXPECT_EQ(a.reward, b.reward) << method;
    EXPECT_EQ(a.best.arch, b.best.arch) << method;
    EXPECT_EQ(a.evaluations, 57);
    ASSERT_EQ(a.best_reward.size(), 57u);
    for (size_t i = 1; i < a.best_reward.size(); ++i) EXPECT_GE(a.best_reward[i], a.best_reward[i - 1]);
    EXPECT_EQ(a.best_reward.back(), *std::max_element(a.reward.begin(), a.reward.end()));
    EXPECT_LE(a.unique, 57);
    o.seed = 6;
    EXPECT_NE(RunNasSearch(e.space(), objective, o).reward, a.reward) << method;
  }
  int64_t calls = 0;
  NasSearchOptions o;
  o.budget = 1000;
  const NasSearchResult stopped = RunNasSearch(e.space(), objective, o, [&] { return ++calls > 20; });
  EXPECT_EQ(stopped.evaluations, 20);
}

// A search stopped after k evaluations and continued from its state (the end state, or a
// checkpoint's copy) evaluates exactly what the uninterrupted one does.
TEST(NasSearch, AStoppedSearchContinuedFromItsStateIsTheUninterruptedOne) {
  env::BlockEnv e(env::BlockEnvOptions{});
  auto objective = [&](const nas::Architecture& a) { return e.Evaluate(a); };
  for (const char* method : {"random", "evolution"}) {
    NasSearchOptions o;
    o.method = method;
    o.budget = 40;
    o.seed = 3;
    o.population = 6;
    const NasSearchResult whole = RunNasSearch(e.space(), objective, o);
    for (int64_t k : {1, 4, 6, 7, 25}) {  // inside and after evolution's initial population
      NasSearchState state;
      int64_t calls = 0;
      const NasSearchResult first =
          RunNasSearch(e.space(), objective, o, [&] { return calls >= k; },
                       [&](int64_t, const NasEvaluation&, const NasEvaluation&) { ++calls; }, {&state, {}, {}});
      ASSERT_EQ(first.evaluations, k);
      ASSERT_EQ(state.evaluations, k);
      EXPECT_EQ(state.population.size(), std::string(method) == "evolution" ? std::min<size_t>(k, 6) : 0u);
      int64_t seen_again = 0;
      const NasSearchResult rest = RunNasSearch(e.space(), objective, o, {},
          [&](int64_t i, const NasEvaluation&, const NasEvaluation&) { seen_again += i < k; }, {&state, {}, {}});
      EXPECT_EQ(seen_again, 0) << "the history's evaluations are not reported again";
      EXPECT_EQ(rest.reward, whole.reward) << method << " k=" << k;
      EXPECT_EQ(rest.best_reward, whole.best_reward) << method << " k=" << k;
      EXPECT_EQ(rest.best.arch, whole.best.arch) << method << " k=" << k;
      EXPECT_EQ(rest.unique, whole.unique) << method << " k=" << k;
      EXPECT_EQ(state.evaluations, 40);
    }
    // Checkpoints: every 9th evaluation; the 3rd checkpoint's copy continues the same way.
    std::vector<NasSearchState> saved;
    NasSearchState state;
    int64_t evaluations = 0;
    NasSearchCheckpoints ck{&state, [&] { return evaluations % 9 == 0; },
                            [&](const NasSearchState& s) { saved.push_back(s); }};
    RunNasSearch(e.space(), objective, o, {}, [&](int64_t, const auto&, const auto&) { ++evaluations; }, ck);
    ASSERT_EQ(saved.size(), 4u);
    EXPECT_EQ(saved[2].evaluations, 27);
    const NasSearchResult resumed = RunNasSearch(e.space(), objective, o, {}, {}, {&saved[2], {}, {}});
    EXPECT_EQ(resumed.reward, whole.reward) << method;
    // A state that does not fit the space or options is refused.
    NasSearchState bad = saved[0];
    bad.rng = "not an rng";
    EXPECT_THROW(RunNasSearch(e.space(), objective, o, {}, {}, {&bad, {}, {}}), ConfigError);
    bad = saved[0];
    bad.best.arch.pop_back();
    EXPECT_THROW(RunNasSearch(e.space(), objective, o, {}, {}, {&bad, {}, {}}), ConfigError);
    bad = saved[0];
    bad.reward.pop_back();  // curves that do not fit the evaluations
    EXPECT_THROW(RunNasSearch(e.space(), objective, o, {}, {}, {&bad, {}, {}}), ConfigError);
    bad = saved[0];
    for (int i = 0; i < 7; ++i) bad.population.push_back(bad.best);
    EXPECT_THROW(RunNasSearch(e.space(), objective, o, {}, {}, {&bad, {}, {}}), ConfigError);
  }
}

// Issue 29 item 5: a search's memory does not grow with its budget. The state holds counters,
// the best, the population and the distinct architectures (at most the space's), never every
// evaluation; with a curve stride the curves hold budget / stride points.
TEST(NasSearch, StateDoesNotGrowWithTheBudget) {
  env::BlockEnv e(env::BlockEnvOptions{});  // nb201's synthetic quality: 15,625 architectures
  auto objective = [&](const nas::Architecture& a) { return e.Evaluate(a); };
  for (const char* method : {"random", "evolution"}) {
    NasSearchOptions o;
    o.method = method;
    o.budget = 200000;
    o.curve_stride = 1000;
    NasSearchState state;
    int64_t checkpoints = 0, due = 0;
    size_t largest_population = 0;
    const NasSearchResult r = RunNasSearch(e.space(), objective, o, {}, {},
                                           {&state, [&] { return ++due % 1000 == 0; }, [&](const NasSearchState& s) {
                                              ++checkpoints;
                                              largest_population = std::max(largest_population, s.population.size());
                                            }});
    EXPECT_EQ(r.evaluations, 200000) << method;
    EXPECT_EQ(checkpoints, 200) << method;
    EXPECT_EQ(r.reward.size(), 200u) << method;
    EXPECT_EQ(r.best_reward.size(), 200u) << method;
    EXPECT_LE(largest_population, 10u) << method;
    EXPECT_LE(state.seen.size(), 15625u) << method;
    EXPECT_EQ(static_cast<int64_t>(state.seen.size()), r.unique) << method;
    EXPECT_TRUE(r.unique_exact) << method;
    EXPECT_EQ(r.best_reward.back(), r.best.score.reward) << method;
  }
}

// A stop that cuts an evaluation short (a training: its quality is NaN) does not count it, and
// the search continued from its state draws that architecture again, as the uninterrupted one.
TEST(NasSearch, AnEvaluationCutShortByAStopIsNotCounted) {
  env::BlockEnv e(env::BlockEnvOptions{});
  for (const char* method : {"random", "evolution"}) {
    NasSearchOptions o;
    o.method = method;
    o.budget = 30;
    o.population = 5;
    const NasSearchResult whole = RunNasSearch(e.space(), [&](const nas::Architecture& a) { return e.Evaluate(a); }, o);
    int64_t calls = 0;
    bool stop = false;
    auto cut = [&](const nas::Architecture& a) {
      env::BlockScore s = e.Evaluate(a);
      if (++calls == 13) {  // the 13th training is interrupted
        stop = true;
        s.quality = NAN;
        s.reward = NAN;
      }
      return s;
    };
    NasSearchState state;
    const NasSearchResult first = RunNasSearch(e.space(), cut, o, [&] { return stop; }, {}, {&state, {}, {}});
    EXPECT_EQ(first.evaluations, 12) << method;
    EXPECT_EQ(state.evaluations, 12) << method;
    for (double x : first.reward) EXPECT_TRUE(std::isfinite(x)) << method;
    const NasSearchResult rest = RunNasSearch(e.space(), [&](const nas::Architecture& a) { return e.Evaluate(a); }, o, {},
                                              {}, {&state, {}, {}});
    EXPECT_EQ(rest.reward, whole.reward) << method;
    EXPECT_EQ(rest.unique, whole.unique) << method;
  }
}

TEST(NasSearch, SamplesAndMutationsKeepTheRules) {
  const nas::SearchSpace bf = nas::LoadSearchSpace("brainformer");
  std::mt19937_64 rng(3);
  for (int k = 0; k < 200; ++k) {
    const nas::Architecture a = RandomArchitecture(bf, rng);
    ASSERT_EQ(bf.Check(a), "");
    const nas::Architecture m = Mutate(bf, a, rng);
    ASSERT_EQ(bf.Check(m), "");
    EXPECT_NE(m, a);
  }
  // Without rules, a mutation changes exactly one decision.
  const nas::SearchSpace nb201 = nas::LoadSearchSpace("nb201");
  for (int k = 0; k < 100; ++k) {
    const nas::Architecture a = RandomArchitecture(nb201, rng), m = Mutate(nb201, a, rng);
    int changed = 0;
    for (size_t d = 0; d < a.size(); ++d) changed += a[d] != m[d];
    EXPECT_EQ(changed, 1);
  }
}

TEST(NasSearch, EvolutionBeatsRandomSearchOnNb201OnAverage) {
  env::BlockEnv e(env::BlockEnvOptions{});
  auto objective = [&](const nas::Architecture& a) { return e.Evaluate(a); };
  double sum[2] = {0, 0};
  for (uint64_t seed = 1; seed <= 30; ++seed)
    for (int m = 0; m < 2; ++m) {
      NasSearchOptions o;
      o.method = m == 0 ? "random" : "evolution";
      o.budget = 100;
      o.seed = seed;
      sum[m] += RunNasSearch(e.space(), objective, o).best.score.quality;
    }
  EXPECT_GT(sum[1], sum[0]);
}

TEST(NasSearch, RefusesBadOptions) {
  env::BlockEnv e(env::BlockEnvOptions{});
  auto objective = [&](const nas::Architecture& a) { return e.Evaluate(a); };
  NasSearchOptions o;
  o.method = "bayes";
  EXPECT_THROW(RunNasSearch(e.space(), objective, o), ConfigError);
  o = {};
  o.budget = 0;
  EXPECT_THROW(RunNasSearch(e.space(), objective, o), ConfigError);
  o = {};
  o.tournament = 11;
  EXPECT_THROW(RunNasSearch(e.space(), objective, o), ConfigError);
}

}  // namespace
}  // namespace placerl::search
