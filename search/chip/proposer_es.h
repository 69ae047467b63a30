// Evolution strategies for the learned SA proposer (docs/learned_sa.md "Judged on the run's final
// cost"): the proposer's weights are judged by what the annealer cares about — the best proxy cost
// at the end of a whole annealing run — instead of each proposal's own cost change (the myopic
// REINFORCE of learned_proposer.h, which measurably loses). Antithetic Gaussian perturbations
// (Salimans et al. 2017, the ES the Neural SA paper also trains with): each pair runs the annealer
// with θ + σε and θ − σε on the same design and the same seed (common random numbers), the
// difference of the two final costs, relative to the design's own scale, estimates the gradient
// along ε; Adam steps on θ. The runs themselves are a callback, so the search is independent of
// the chip environment (tests use a synthetic fitness).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "search/chip/learned_proposer.h"

namespace placerl::search {

struct ProposerEsOptions {
  int iterations = 30;
  int pairs = 4;            // antithetic pairs per iteration (2 × pairs runs)
  double sigma = 0.3;       // perturbation scale (logit units)
  double learning_rate = 0.1;  // Adam step
  uint64_t seed = 1;        // perturbations and the runs' seeds
  // Which weight columns (ProposerWeights features: 0 bias, 1 progress, 2 progress², 3 acceptance
  // rate) are searched, for every kind; the others keep the start's values.
  std::vector<int> features = {0, 1, 2};
  bool select = false;      // also the soft-macro candidate weights
  bool schedule = false;    // also the schedule's adjustments (ProposerWeights::schedule: temperature
                            // and soft-step multipliers over the run)
  bool control = false;     // also the acceptance controller (ProposerWeights::control; a start
                            // without one starts from kDefaultControl)
  bool control_state = false;  // also the controller's state term (ProposerWeights::control_state;
                               // needs control): a start without one gets it at 0
  bool hard_select = false;  // also the hard-macro selection (ProposerWeights::hard_select): a start
                             // without one starts from zero (uniform)
  bool target_select = false;  // also a `move`'s target-cell selection (ProposerWeights::target_select):
                               // a start without one starts from zero (uniform)
  bool late_kinds = false;  // also the kinds' late adjustment (ProposerWeights::late_kinds): a start
                            // without one starts from zero (the start's mixture to the end)
  bool length = false;      // also the run-length term (ProposerWeights::length): a start without one
                            // starts from zero (every run length follows the start)
  int threads = 1;          // runs in parallel (each thread has its own index for the callback)
};

// One annealing run with these weights on design `design` (0 ≤ design < designs) with this seed, on
// thread `thread` (0 ≤ thread < threads): returns the run's final cost (lower is better), finite.
using ProposerRunFn = std::function<double(const ProposerWeights& w, int design, uint64_t seed, int thread)>;

struct ProposerEsIteration {
  int iteration = 0;
  double seconds = 0;             // on the caller's clock, at the end of the iteration
  double mean_cost = 0;           // mean final cost of the iteration's runs ((θ+σε, θ−σε) around θ)
  double mean_relative = 0;       // the same, each run ÷ its design's scale (the first centre run)
  double gradient_norm = 0;       // ‖ĝ‖ of the relative cost
  std::vector<double> design_cost;  // mean final cost per design this iteration (NaN: not run)
};

struct ProposerEsResult {
  ProposerWeights weights;        // θ at the end
  std::vector<ProposerEsIteration> history;
  std::vector<double> scale;      // per design: the start weights' final cost (one run, the first seed)
  int64_t runs = 0;
  bool stopped = false;           // `stop` ended it early
};

// A search between two iterations: all it needs to go on exactly as if it had not stopped
// (train-proposer --resume). `scaled` false: nothing done yet (a fresh search).
struct ProposerEsState {
  bool scaled = false;            // the designs' scales are measured (ProposerEsResult::scale)
  int iterations = 0;             // iterations done
  ProposerWeights weights;        // θ after them (with the controller / state term the search added)
  std::vector<double> m, v;       // Adam's moments, one per searched parameter
  std::string rng;                // the perturbations' std::mt19937_64 then its normal distribution, as operator<< writes them
  std::vector<double> scale;      // per design
  int64_t runs = 0;
  std::vector<ProposerEsIteration> history;
  double seconds = 0;             // the caller's clock when the state was taken
  ProposerWeights start;          // the search's start (for its caller's report)
};

// Checkpoints of a search. `state` (may be null): on entry a state to continue from (not scaled: a
// fresh search; the options and designs must be the ones it was made with), on return the state
// at the end. `on_checkpoint` (may be empty) gets the state after the scales and after every
// iteration.
struct ProposerEsCheckpoints {
  ProposerEsState* state = nullptr;
  std::function<void(const ProposerEsState&)> on_checkpoint;
};

// The state's text (one line of JSON; doubles round-trip exactly) and back. ParseProposerEsState
// throws ConfigError naming `label` for a damaged text (TrainProposerEs checks that it fits the
// designs and options).
std::string ProposerEsStateJson(const ProposerEsState& s);
ProposerEsState ParseProposerEsState(const std::string& text, const std::string& label);

// The number of searched parameters for these options (kKinds × |features| (+ kSelectFeatures)
// (+ kScheduleWeights) (+ kControlWeights) (+ 1 with control_state) (+ kHardSelectFeatures) (+ kTargetSelectFeatures)); the search also adds the
// controller's state weight when it searches a controller and the start has a state term
// (ProposerWeights::control_state_on) without control_state.
int ProposerEsDimensions(const ProposerEsOptions& o);

// Runs the search from `start` over `designs` designs: first one run of `start` per design (its
// scale), then `iterations` iterations; pair i of iteration t runs on design (t·pairs + i) mod
// designs. `stop` (may be empty) is polled between runs; `on_iteration` (may be empty) after each
// iteration; `clock` gives the seconds reported. With `checkpoints.state` holding a scaled state the
// search goes on from it (`start` is then not used): the result is the one an uninterrupted search
// gives, its history and runs those of the whole search. Throws ConfigError for bad options, a
// state that does not fit them or a run that returns a non-finite cost.
ProposerEsResult TrainProposerEs(int designs, const ProposerRunFn& run, const ProposerWeights& start,
                                 const ProposerEsOptions& o, const std::function<bool()>& stop,
                                 const std::function<void(const ProposerEsIteration&, const ProposerWeights&)>& on_iteration,
                                 const std::function<double()>& clock, const ProposerEsCheckpoints& checkpoints = {});

}  // namespace placerl::search
