// Architecture search without gradients on a block environment's space (docs/nas.md): random
// search and regularised evolution (Real, Aggarwal, Huang, Le, AAAI 2019, Algorithm 1: a
// population of P architectures, each cycle a tournament of S drawn with replacement from the
// population, the winner's child — one decision mutated — joins and the OLDEST member leaves).
// Defaults P = 10, S = 3 as NAS-Bench-201 / NATS-Bench ran REA (AutoDL-Projects
// `regularized_ea.py --ea_population 10 --ea_sample_size 3`). The budget counts evaluated
// architectures, repeats included (a tabular lookup stands for a training run). Deterministic
// for a seed. No LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "datasets/nas/search_space.h"
#include "env/block/block_env.h"

namespace placerl::search {

struct NasSearchOptions {
  std::string method = "evolution";  // random | evolution
  int64_t budget = 100;              // evaluated architectures (the initial population included)
  uint64_t seed = 1;
  int32_t population = 10;           // evolution: P
  int32_t tournament = 3;            // evolution: S (1 ≤ S ≤ P)
  // The result's curves (reward, best_reward) keep every curve_stride-th evaluation (the k-th
  // point is evaluation k·curve_stride); 1 = every one. Large budgets use a larger stride so that
  // the memory of a search does not grow with its budget.
  int64_t curve_stride = 1;
};

struct NasEvaluation {
  nas::Architecture arch;
  env::BlockScore score;
};

struct NasSearchResult {
  NasEvaluation best;                // highest reward (the first one found on ties)
  int64_t evaluations = 0;
  int64_t unique = 0;                // distinct architectures among them (a lower bound unless unique_exact)
  bool unique_exact = true;          // false once more than kMaxTrackedArchitectures distinct ones were seen
  std::vector<double> reward;        // per curve_stride-th evaluation, in order
  std::vector<double> best_reward;   // best so far after each curve_stride-th evaluation
  double seconds = 0;
};

// Distinct architectures a search remembers (by a 64-bit hash) to count `unique`: beyond this many
// the count is a lower bound (NasSearchResult::unique_exact), so that memory stays bounded (≈ 64 MiB).
inline constexpr int64_t kMaxTrackedArchitectures = int64_t{1} << 21;

using NasObjective = std::function<env::BlockScore(const nas::Architecture&)>;

// A search between two evaluations, all it needs to go on exactly as if it had not stopped
// (nas-search --resume). Its size does not grow with the evaluations beyond the thinned curves:
// counters, the best, evolution's population, the hashes of the distinct architectures (at most
// kMaxTrackedArchitectures) and the RNG.
struct NasSearchState {
  int64_t evaluations = 0;                // evaluated so far (repeats included)
  NasEvaluation best;                     // the best so far (first on ties); meaningful when evaluations > 0
  std::vector<NasEvaluation> population;  // evolution: the population, oldest first
  std::unordered_set<uint64_t> seen;      // ArchitectureHash of the distinct architectures evaluated
  bool unique_exact = true;               // false once an architecture was not remembered (seen full)
  std::vector<double> reward, best_reward;  // the result's curves so far (NasSearchOptions::curve_stride)
  std::string rng;                        // random / evolution: the std::mt19937_64, as operator<< writes it
};

// Checkpoints of a search. `state` (may be null): on entry a state to continue from (no
// evaluations: a fresh search; the options must be the ones it was made with), on return the
// state at the end. After each evaluation (the population updated) `on_checkpoint` gets the state
// when `checkpoint_due` says so.
struct NasSearchCheckpoints {
  NasSearchState* state = nullptr;
  std::function<bool()> checkpoint_due;
  std::function<void(const NasSearchState&)> on_checkpoint;
};

// A 64-bit hash of an architecture (the same on every machine and run).
uint64_t ArchitectureHash(const nas::Architecture& a);
// One evaluation into a state's bookkeeping (counters, best, distinct hashes, curves every
// `curve_stride`-th evaluation). Returns true when the architecture was new and is now remembered.
bool RecordEvaluation(const NasEvaluation& e, int64_t curve_stride, NasSearchState* state);
// The result a state stands for (seconds: 0).
NasSearchResult ResultOf(const NasSearchState& state);
// Throws ConfigError when `state` does not fit `space` (architectures of another size) or its
// curves do not fit its evaluation count and `curve_stride`.
void CheckState(const nas::SearchSpace& space, const NasSearchState& state, int64_t curve_stride);

// Decision by decision in order, each choice uniform among the allowed ones (uniform over the
// space when it has no rules).
nas::Architecture RandomArchitecture(const nas::SearchSpace& space, std::mt19937_64& rng);
// One decision, uniform among those with another allowed choice, set to another allowed choice
// (uniform); later decisions that a rule then forbids are redrawn among their allowed choices.
// Returns the parent unchanged when no decision has an alternative.
nas::Architecture Mutate(const nas::SearchSpace& space, const nas::Architecture& parent, std::mt19937_64& rng);

// Throws ConfigError for an unknown method or option out of range, or a state that does not fit
// them. `stop` (may be empty) ends the search early, polled before and after every evaluation: an
// evaluation whose quality is not finite while `stop` says so (a training cut short by the stop)
// is not counted. `on_evaluation` (may be empty) sees every evaluation and the best so far (not
// those of a resumed state: the result counts them).
NasSearchResult RunNasSearch(const nas::SearchSpace& space, const NasObjective& objective,
                             const NasSearchOptions& options, const std::function<bool()>& stop = {},
                             const std::function<void(int64_t, const NasEvaluation&, const NasEvaluation&)>&
                                 on_evaluation = {},
                             const NasSearchCheckpoints& checkpoints = {});

}  // namespace placerl::search
