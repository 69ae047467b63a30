#include "search/nas/nas_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <sstream>

#include "datasets/util/errors.h"

namespace placerl::search {

namespace {

int32_t PickAllowed(const std::vector<uint8_t>& mask, int32_t exclude, std::mt19937_64& rng) {
  int32_t count = 0;
  for (size_t c = 0; c < mask.size(); ++c) count += mask[c] && static_cast<int32_t>(c) != exclude;
  if (count == 0) return -1;
  int32_t k = std::uniform_int_distribution<int32_t>(0, count - 1)(rng);
  for (size_t c = 0; c < mask.size(); ++c)
    if (mask[c] && static_cast<int32_t>(c) != exclude && k-- == 0) return static_cast<int32_t>(c);
  return -1;
}

}  // namespace

nas::Architecture RandomArchitecture(const nas::SearchSpace& space, std::mt19937_64& rng) {
  nas::Architecture a(space.num_decisions(), 0);
  std::vector<uint8_t> mask(space.max_choices());
  for (int32_t d = 0; d < space.num_decisions(); ++d) {
    space.AllowedChoices(a.data(), d, mask.data());
    a[d] = PickAllowed(mask, -1, rng);
  }
  return a;
}

nas::Architecture Mutate(const nas::SearchSpace& space, const nas::Architecture& parent, std::mt19937_64& rng) {
  std::vector<uint8_t> mask(space.max_choices());
  std::vector<int32_t> mutable_decisions;
  for (int32_t d = 0; d < space.num_decisions(); ++d) {
    space.AllowedChoices(parent.data(), d, mask.data());
    if (PickAllowed(mask, parent[d], rng) >= 0) mutable_decisions.push_back(d);
  }
  if (mutable_decisions.empty()) return parent;
  nas::Architecture child = parent;
  const int32_t d = mutable_decisions[std::uniform_int_distribution<size_t>(0, mutable_decisions.size() - 1)(rng)];
  space.AllowedChoices(child.data(), d, mask.data());
  child[d] = PickAllowed(mask, parent[d], rng);
  for (int32_t later = d + 1; later < space.num_decisions(); ++later)
    if (!space.IsAllowed(child.data(), later, child[later])) {
      space.AllowedChoices(child.data(), later, mask.data());
      child[later] = PickAllowed(mask, -1, rng);
    }
  return child;
}

uint64_t ArchitectureHash(const nas::Architecture& a) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ a.size();
  for (int32_t x : a) {  // splitmix64 of the running value and each choice
    uint64_t z = (h ^ static_cast<uint32_t>(x)) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    h = z ^ (z >> 31);
  }
  return h;
}

bool RecordEvaluation(const NasEvaluation& e, int64_t curve_stride, NasSearchState* st) {
  if (st->evaluations == 0 || e.score.reward > st->best.score.reward) st->best = e;
  ++st->evaluations;
  if (curve_stride <= 1 || st->evaluations % curve_stride == 0) {
    st->reward.push_back(e.score.reward);
    st->best_reward.push_back(st->best.score.reward);
  }
  const uint64_t h = ArchitectureHash(e.arch);
  if (st->seen.count(h)) return false;
  if (static_cast<int64_t>(st->seen.size()) >= kMaxTrackedArchitectures) {
    st->unique_exact = false;  // new, but not remembered: `unique` is a lower bound from now on
    return false;
  }
  st->seen.insert(h);
  return true;
}

NasSearchResult ResultOf(const NasSearchState& st) {
  NasSearchResult r;
  r.best = st.best;
  if (st.evaluations == 0) r.best.score.reward = -1e300;
  r.evaluations = st.evaluations;
  r.unique = static_cast<int64_t>(st.seen.size());
  r.unique_exact = st.unique_exact;
  r.reward = st.reward;
  r.best_reward = st.best_reward;
  return r;
}

void CheckState(const nas::SearchSpace& space, const NasSearchState& st, int64_t curve_stride) {
  const auto fits = [&](const nas::Architecture& a) { return static_cast<int32_t>(a.size()) == space.num_decisions(); };
  bool ok = st.evaluations >= 0 && (st.evaluations == 0 || fits(st.best.arch));
  for (const NasEvaluation& e : st.population) ok = ok && fits(e.arch);
  if (!ok)
    throw ConfigError("nas search: the state's architectures do not have the space's " +
                      std::to_string(space.num_decisions()) + " decisions");
  const int64_t points = st.evaluations / std::max<int64_t>(1, curve_stride);
  if (static_cast<int64_t>(st.reward.size()) != points || st.best_reward.size() != st.reward.size() ||
      static_cast<int64_t>(st.seen.size()) > std::min(st.evaluations, kMaxTrackedArchitectures))
    throw ConfigError("nas search: the state's curves or distinct architectures do not fit its " +
                      std::to_string(st.evaluations) + " evaluations");
}

NasSearchResult RunNasSearch(const nas::SearchSpace& space, const NasObjective& objective,
                             const NasSearchOptions& o, const std::function<bool()>& stop,
                             const std::function<void(int64_t, const NasEvaluation&, const NasEvaluation&)>& on_evaluation,
                             const NasSearchCheckpoints& checkpoints) {
  if (o.method != "random" && o.method != "evolution")
    throw ConfigError("nas search: unknown method '" + o.method + "' (random, evolution)");
  if (o.budget < 1) throw ConfigError("nas search: the budget must be >= 1 architecture");
  if (o.curve_stride < 1) throw ConfigError("nas search: the curve stride must be >= 1");
  if (o.method == "evolution" && (o.population < 2 || o.tournament < 1 || o.tournament > o.population))
    throw ConfigError("nas search: evolution needs population >= 2 and 1 <= tournament <= population");
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(o.seed);
  NasSearchState local;
  NasSearchState& st = checkpoints.state ? *checkpoints.state : local;
  std::deque<NasEvaluation> population;  // evolution: oldest first
  if (st.evaluations > 0) {              // continue a stopped search from its state
    CheckState(space, st, o.curve_stride);
    std::istringstream in(st.rng);
    in >> rng;
    if (!in) throw ConfigError("nas search: the state's RNG is unreadable");
    if (o.method == "evolution" && static_cast<int32_t>(st.population.size()) > o.population)
      throw ConfigError("nas search: the state's population is larger than " + std::to_string(o.population));
    if (static_cast<int64_t>(st.population.size()) > st.evaluations || (o.method == "random" && !st.population.empty()))
      throw ConfigError("nas search: the state's population does not fit its evaluations and method");
    population.assign(st.population.begin(), st.population.end());
  } else {
    st = NasSearchState{};
  }
  auto snapshot = [&] {
    std::ostringstream out;
    out << rng;
    st.rng = out.str();
    st.population.assign(population.begin(), population.end());
  };
  bool cut_short = false;  // the last evaluation was cut short by a stop: not counted
  // The RNG before the current step's draws: a step whose evaluation a stop cuts short is undone,
  // so that a resumed search draws it again, as the uninterrupted one does.
  std::mt19937_64 rng_before = rng;
  // Returns false when the evaluation was cut short by a stop.
  auto evaluate = [&](const nas::Architecture& a) {
    NasEvaluation e{a, objective(a)};
    if (!std::isfinite(e.score.quality) && stop && stop()) {
      cut_short = true;
      rng = rng_before;
      return false;
    }
    RecordEvaluation(e, o.curve_stride, &st);
    if (o.method == "evolution") population.push_back(std::move(e));
    if (on_evaluation) on_evaluation(st.evaluations - 1, o.method == "evolution" ? population.back() : e, st.best);
    return true;
  };
  auto step_done = [&] {  // a whole step: the checkpoint may follow
    if (checkpoints.on_checkpoint && checkpoints.checkpoint_due && checkpoints.checkpoint_due()) {
      snapshot();
      checkpoints.on_checkpoint(st);
    }
  };
  auto more = [&] { return !cut_short && st.evaluations < o.budget && !(stop && stop()); };

  if (o.method == "random") {
    while (more()) {
      rng_before = rng;
      if (evaluate(RandomArchitecture(space, rng))) step_done();
    }
  } else {
    while (static_cast<int32_t>(population.size()) < o.population && more()) {
      rng_before = rng;
      if (evaluate(RandomArchitecture(space, rng))) step_done();
    }
    while (more()) {
      rng_before = rng;
      const NasEvaluation* parent = nullptr;
      for (int32_t k = 0; k < o.tournament; ++k) {
        const NasEvaluation& c = population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
        if (parent == nullptr || c.score.reward > parent->score.reward) parent = &c;
      }
      const nas::Architecture child = Mutate(space, parent->arch, rng);
      if (!evaluate(child)) break;
      population.pop_front();
      step_done();
    }
  }
  if (checkpoints.state) snapshot();  // the RNG as text costs ~10 µs: only when asked for
  NasSearchResult r = ResultOf(st);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace placerl::search
