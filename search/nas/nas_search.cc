#include "search/nas/nas_search.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
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

void AddToResult(const NasEvaluation& e, NasSearchResult* r) {
  r->reward.push_back(e.score.reward);
  if (r->evaluations == 0 || e.score.reward > r->best.score.reward) r->best = e;
  r->best_reward.push_back(r->best.score.reward);
  ++r->evaluations;
}

NasSearchResult RunNasSearch(const nas::SearchSpace& space, const NasObjective& objective,
                             const NasSearchOptions& o, const std::function<bool()>& stop,
                             const std::function<void(int64_t, const NasEvaluation&, const NasEvaluation&)>& on_evaluation,
                             const NasSearchCheckpoints& checkpoints) {
  if (o.method != "random" && o.method != "evolution")
    throw ConfigError("nas search: unknown method '" + o.method + "' (random, evolution)");
  if (o.budget < 1) throw ConfigError("nas search: the budget must be >= 1 architecture");
  if (o.method == "evolution" && (o.population < 2 || o.tournament < 1 || o.tournament > o.population))
    throw ConfigError("nas search: evolution needs population >= 2 and 1 <= tournament <= population");
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(o.seed);
  NasSearchResult r;
  r.best.score.reward = -1e300;
  std::set<nas::Architecture> seen;
  NasSearchState local;
  NasSearchState& st = checkpoints.state ? *checkpoints.state : local;
  std::deque<int64_t> population;  // evolution: indices into st.history, oldest first
  if (!st.history.empty()) {       // continue a stopped search from its state
    for (const NasEvaluation& e : st.history) {
      if (static_cast<int32_t>(e.arch.size()) != space.num_decisions())
        throw ConfigError("nas search: the state's architectures do not have the space's " +
                          std::to_string(space.num_decisions()) + " decisions");
      AddToResult(e, &r);
      seen.insert(e.arch);
    }
    std::istringstream in(st.rng);
    in >> rng;
    if (!in) throw ConfigError("nas search: the state's RNG is unreadable");
    for (int64_t i : st.population) {
      if (i < 0 || i >= static_cast<int64_t>(st.history.size()))
        throw ConfigError("nas search: the state's population points outside its history");
      population.push_back(i);
    }
    if (o.method == "evolution" && static_cast<int32_t>(population.size()) > o.population)
      throw ConfigError("nas search: the state's population is larger than " + std::to_string(o.population));
  }
  auto snapshot = [&] {
    std::ostringstream out;
    out << rng;
    st.rng = out.str();
    st.population.assign(population.begin(), population.end());
  };
  // Random search without checkpoints needs no history (the benchmark's fast path).
  const bool keep_history = checkpoints.state != nullptr || o.method == "evolution";
  if (keep_history) st.history.reserve(static_cast<size_t>(std::min<int64_t>(o.budget, 1 << 20)));
  auto evaluate = [&](const nas::Architecture& a) {
    NasEvaluation e{a, objective(a)};
    if (keep_history) st.history.push_back(e);
    AddToResult(e, &r);
    seen.insert(a);
    if (on_evaluation) on_evaluation(r.evaluations - 1, e, r.best);
    return r.evaluations - 1;
  };
  auto step_done = [&] {  // a whole step: the checkpoint may follow
    if (checkpoints.on_checkpoint && checkpoints.checkpoint_due && checkpoints.checkpoint_due()) {
      snapshot();
      checkpoints.on_checkpoint(st);
    }
  };
  auto more = [&] { return r.evaluations < o.budget && !(stop && stop()); };

  if (o.method == "random") {
    while (more()) {
      evaluate(RandomArchitecture(space, rng));
      step_done();
    }
  } else {
    while (static_cast<int32_t>(population.size()) < o.population && more()) {
      population.push_back(evaluate(RandomArchitecture(space, rng)));
      step_done();
    }
    while (more()) {
      int64_t parent = -1;
      for (int32_t k = 0; k < o.tournament; ++k) {
        const int64_t c = population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
        if (parent < 0 || st.history[c].score.reward > st.history[parent].score.reward) parent = c;
      }
      const nas::Architecture child = Mutate(space, st.history[parent].arch, rng);
      population.push_back(evaluate(child));
      population.pop_front();
      step_done();
    }
  }
  if (checkpoints.state) snapshot();  // the RNG as text costs ~10 µs: only when asked for
  r.unique = static_cast<int64_t>(seen.size());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace placerl::search
