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
};

struct NasEvaluation {
  nas::Architecture arch;
  env::BlockScore score;
};

struct NasSearchResult {
  NasEvaluation best;                // highest reward (the first one found on ties)
  int64_t evaluations = 0;
  int64_t unique = 0;                // distinct architectures among them
  std::vector<double> reward;        // per evaluation, in order
  std::vector<double> best_reward;   // best so far after each evaluation
  double seconds = 0;
};

using NasObjective = std::function<env::BlockScore(const nas::Architecture&)>;

// A search between two evaluations, all it needs to go on exactly as if it had not stopped
// (nas-search --resume): what it evaluated and what it will draw next.
struct NasSearchState {
  std::vector<NasEvaluation> history;  // every evaluation, in order (repeats included)
  std::string rng;                     // random / evolution: the std::mt19937_64, as operator<< writes it
  std::vector<int64_t> population;     // evolution: indices into `history`, oldest first
};

// Checkpoints of a search. `state` (may be null): on entry a state to continue from (an empty
// history: a fresh search; the options must be the ones it was made with), on return the state
// at the end. After each evaluation (the population updated) `on_checkpoint` gets the state
// when `checkpoint_due` says so.
struct NasSearchCheckpoints {
  NasSearchState* state = nullptr;
  std::function<bool()> checkpoint_due;
  std::function<void(const NasSearchState&)> on_checkpoint;
};

// Decision by decision in order, each choice uniform among the allowed ones (uniform over the
// space when it has no rules).
nas::Architecture RandomArchitecture(const nas::SearchSpace& space, std::mt19937_64& rng);
// One decision, uniform among those with another allowed choice, set to another allowed choice
// (uniform); later decisions that a rule then forbids are redrawn among their allowed choices.
// Returns the parent unchanged when no decision has an alternative.
nas::Architecture Mutate(const nas::SearchSpace& space, const nas::Architecture& parent, std::mt19937_64& rng);

// Throws ConfigError for an unknown method or option out of range, or a state that does not fit
// them. `stop` (may be empty) ends the search early; `on_evaluation` (may be empty) sees every
// evaluation and the best so far (not those of a resumed state: the result counts them).
NasSearchResult RunNasSearch(const nas::SearchSpace& space, const NasObjective& objective,
                             const NasSearchOptions& options, const std::function<bool()>& stop = {},
                             const std::function<void(int64_t, const NasEvaluation&, const NasEvaluation&)>&
                                 on_evaluation = {},
                             const NasSearchCheckpoints& checkpoints = {});

// The result's bookkeeping (best, curves, unique) of a history, as if it had just been evaluated.
void AddToResult(const NasEvaluation& e, NasSearchResult* r);

}  // namespace placerl::search
