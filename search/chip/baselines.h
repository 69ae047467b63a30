// The classic chip macro placement baselines, all on the same chip environment, the same exact
// proxy cost and the same time budget (docs/baselines.md):
//   random  — uniformly random legal cells, episode after episode; keeps the best;
//   greedy  — each macro (CT order) onto the legal cell of least proxy cost; first
//             deterministically, then, for the rest of the budget, sampling among the few best
//             cells; keeps the best;
//   sa      — simulated annealing as TILOS defines it (chip_placement_notes §2.5 (f)): macros on
//             grid-cell centres, each step 2N actions drawn from {swap, shift, mirror, move,
//             shuffle}, Metropolis acceptance, exponential cooling, force-directed placement of
//             the soft macros after every step — on the incremental cost;
//   fd      — the input's hard macros kept, soft macros placed by force-directed placement;
//   cd      — Circuit Training's coordinate descent (search/chip/coordinate_descent.h) from the
//             input placement (if its hard macros are illegal: snapped to the nearest legal
//             cells first, as sa.init=snapped), rounds until one no longer improves or the budget is spent.
// `refine_cd` runs coordinate descent on any method's best placement at the end.
// Every result is a complete placement (soft macros included) scored by a full evaluation.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/budget_clock.h"
#include "datasets/chip/netlist.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_solution.h"
#include "search/chip/learned_proposer.h"

namespace placerl::search {

struct ChipBaselineOptions {
  double seconds = 60;  // budget, on `clock`
  BudgetClock clock = BudgetClock::kWall;
  // Also stop after this many evaluations (0: the time budget only). SA's cooling schedule then
  // follows the evaluations instead of the clock, so a run is the same on any machine.
  int64_t max_evaluations = 0;
  uint64_t seed = 1;
  // greedy: after the deterministic pass, sample uniformly among this many best cells.
  int greedy_top_k = 3;
  // sa
  double sa_t_max = 5e-5;  // TILOS Ariane133 config
  double sa_t_min = 5e-8;  // (TILOS does not publish t_min; three decades below t_max)
  // Probabilities of swap, shift, mirror, move, shuffle (TILOS: 0.2 each); normalised.
  std::vector<double> sa_action_probs{0.2, 0.2, 0.2, 0.2, 0.2};
  int sa_actions_per_step = 0;     // 0 = 2 × #hard macros (TILOS)
  int sa_fd_every_steps = 1;       // force-directed soft macros after every k steps (0 = never)
  // Beyond TILOS: this fraction of the actions moves one soft macro (a standard-cell cluster)
  // by up to sa_soft_move_cells grid cells per axis (uniform; kept inside the canvas; soft
  // macros may overlap), accepted by the same Metropolis rule on the exact cost. FD restarts
  // the soft macros from the canvas centre, so with soft moves FD every k steps undoes them:
  // use sa_fd_every_steps = 0 (the start's FD then gives the soft macros' first positions).
  double sa_soft_move_prob = 0;
  double sa_soft_move_cells = 1;
  // greedy | random | input (as it is, legal or not) | snapped (the input with each hard
  // macro, in CT order, on the free legal cell centre nearest its input centre; soft macros
  // where the input has them)
  std::string sa_init = "greedy";
  // uniform: the kinds drawn as above (TILOS; sa_soft_move_prob first). learned: a policy over
  // eight kinds (search/chip/learned_proposer.h: TILOS's five, soft_shift, soft_pull, hard_pull)
  // chooses each proposal, starting from sa_proposer_weights (all zero: uniform over the
  // kinds that apply) and learning during the run at sa_proposer_lr (0: frozen).
  std::string sa_proposer = "uniform";
  ProposerWeights sa_proposer_weights;
  double sa_proposer_lr = 0.01;
  bool sa_proposer_reward_per_second = false;  // ProposerOptions::reward_per_second
  // uniform | mixture: the entropy bonus towards uniform, or −KL towards the uniform proposer's
  // mixture (MixtureLogPrior of sa_soft_move_prob and sa_action_probs), which is then also the
  // start when sa_proposer_weights is untrained (all zero).
  std::string sa_proposer_prior = "uniform";
  bool refine_cd = false;          // coordinate descent on the best result at the end
};

struct BaselineProgress {
  double elapsed_s = 0;
  int64_t evaluations = 0;  // episodes (random), cost reads (greedy), moves (sa)
  double best_cost = 0;
  double current_cost = 0;
  int64_t accepted = 0;     // sa: accepted moves so far
  double temperature = 0;   // sa: the current temperature (learned schedule included); 0 for other methods
};

struct BaselineResult {
  std::string method;
  env::ChipSolution best;
  std::vector<std::pair<double, double>> curve;  // (seconds, best proxy cost so far)
  int64_t evaluations = 0;
  int64_t episodes = 0;   // complete placements produced
  int64_t accepted = 0;   // sa: accepted moves
  double seconds = 0;
  // Why there is no result when `best` is not valid (no complete placement within the budget, an
  // initial placement that cannot be made): the run is infeasible, not an error.
  std::string infeasible;
  // sa with sa_proposer=learned: the proposer's weights at the end (to save and continue from),
  // its per-kind counts, and its probabilities at the start and the end of the schedule.
  struct Proposer {
    bool used = false;
    ProposerWeights weights;
    std::array<LearnedProposer::KindStats, ProposerWeights::kKinds> stats{};
    std::array<double, ProposerWeights::kKinds> start_probabilities{}, end_probabilities{};
    int64_t updates = 0;
  } proposer;
  // sa: what the evaluated proposals did, per tenth of the run and per group of kinds (0: hard-macro
  // moves — swap, shift, mirror, move, shuffle, hard_pull; 1: soft-macro moves): how many, how
  // many lowered / did not change / raised the cost, how many of the raising ones were accepted,
  // and the geometric mean of their cost increase (the scale the temperature meets).
  struct AnnealCounts {
    int64_t evaluated = 0, downhill = 0, unchanged = 0, uphill = 0, uphill_accepted = 0;
    double sum_log_uphill = 0;  // Σ log(cost increase) over the uphill proposals
  };
  struct AnnealTenth {
    double temperature = 0;  // at the end of the tenth
    std::array<AnnealCounts, 2> kinds{};
    // With the proposer's acceptance controller (ProposerWeights::control_on), at the end of the
    // tenth: its factor on the temperature and the acceptance it aims at; with its state term, d.
    double control_factor = 1, control_target = 0, control_state = 0;
    // The current placement at the end of the tenth: its wirelength and congestion costs and the net
    // routing part of the congestion values the cost counts (ProxyCost::CountedCongestion; the rest
    // is macro blockage).
    double wirelength_cost = 0, congestion_cost = 0, congestion_routing = 0;
  };
  std::vector<AnnealTenth> anneal_profile;  // 10 entries for sa, empty otherwise
  // The controller's state term: the log share of the first window's hard-macro proposals that
  // lowered the cost (d's reference; AcceptanceController::first_log_share). NaN without the term.
  double control_first_log_share = std::numeric_limits<double>::quiet_NaN();
  // sa with a learned proposer that has the run-length term (ProposerWeights::length): its λ at the
  // end of the run (NaN otherwise).
  double length_log = std::numeric_limits<double>::quiet_NaN();
  // sa with cluster shifts (ProposerWeights::shift_carry_from): soft macros moved along with a
  // shifted hard macro, summed over the shifts (accepted or not).
  int64_t carried_soft_moves = 0;
  // Hot-net soft moves (ProposerWeights::hot_soft_from): how many soft_shift proposals took a soft
  // macro on a hot net, and how many soft macros were on hot nets at the last refresh.
  int64_t hot_soft_moves = 0, hot_soft_macros = 0;
  // Hot-macro moves (ProposerWeights::hot_macro_from): one-macro hard moves that took a macro over a
  // busy counted congestion cell, and how many such macros there were at the last refresh.
  int64_t hot_macro_moves = 0, hot_macros = 0;
  double evaluations_per_second() const { return seconds > 0 ? evaluations / seconds : 0; }
};

using ProgressFn = std::function<void(const BaselineProgress&)>;

// `env` supplies the instance, the macro order, the weights and the soft-macro placement; its
// state is used and left in an arbitrary state. `stop` (may be empty) is polled often; when it
// returns true the run ends early and the best result so far is returned. `progress` (may be
// empty) is called about 4 times a second and once at the end. A run that finds no complete
// placement returns `best` not valid and says why in `infeasible` (it does not throw).
BaselineResult RunChipBaseline(const std::string& method, env::ChipEnv* env,
                               const ChipBaselineOptions& options, const std::function<bool()>& stop,
                               const ProgressFn& progress);

// The methods RunChipBaseline knows.
const std::vector<std::string>& ChipBaselineMethods();

// The point the nets of macro `m` pull it to, as the learned proposer's pull kinds use it
// (docs/learned_sa.md): `median` false — the net-weighted mean of the centres of the bounding boxes
// of each net's pins that are not m's own; true — where those nets' half-perimeter wirelength
// (with m's pins at its centre) is least: per axis the net-weighted median of the boxes' ends, and
// within the interval of minima the point nearest m's centre. False when no net of m has another pin.
bool PullPoint(const chip::Netlist& nl, const chip::ProxyCost& pc, int32_t m, bool median, double* px, double* py);

}  // namespace placerl::search
