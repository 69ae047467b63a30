#include "search/chip/baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "cost_models/chip/fd_placer.h"
#include "search/chip/coordinate_descent.h"
#include "cost_models/chip/grid_mask.h"
#include "datasets/util/errors.h"
#include "env/chip/chip_greedy.h"

namespace placerl::search {

using namespace placerl::chip;

namespace {

// Budget, stop flag, progress reports and the best-so-far curve shared by every method.
class Run {
 public:
  Run(const std::string& method, const ChipBaselineOptions& o, const std::function<bool()>& stop,
      const ProgressFn& progress)
      : o_(o), stop_(stop), progress_(progress), watch_(o.clock) {
    result_.method = method;
    if (!(o.seconds > 0) || !std::isfinite(o.seconds)) throw ConfigError("baseline: seconds must be > 0");
  }
  double Elapsed() const { return watch_.Elapsed(); }
  // True when the budget is spent or a stop was asked for (one clock read: ~25 ns wall, ~0.3 µs CPU).
  bool Over() {
    if (stop_ && stop_()) return true;
    if (o_.max_evaluations > 0 && result_.evaluations >= o_.max_evaluations) return true;
    const double t = Elapsed();
    over_ = t >= o_.seconds;
    if (progress_ && t >= next_report_) {
      next_report_ = t + 0.25;
      progress_({t, result_.evaluations, result_.best.valid ? result_.best.cost.proxy_cost : 0, current_, result_.accepted,
                 temperature_});
    }
    return over_;
  }
  // Offers a complete placement (the proxy cost `pc` as it stands, soft macros included).
  void Offer(const ProxyCost& pc, const CostBreakdown& c) {
    current_ = c.proxy_cost;
    if (result_.best.valid && c.proxy_cost >= result_.best.cost.proxy_cost) return;
    env::ChipSolution& b = result_.best;
    env::CopyPlacement(pc, &b);
    b.cost = c;
    b.valid = true;
    result_.curve.emplace_back(Elapsed(), c.proxy_cost);
  }
  BaselineResult& result() { return result_; }
  BaselineResult Finish(const env::ChipEnv& env) {
    result_.seconds = Elapsed();
    if (!result_.best.valid && result_.infeasible.empty())
      result_.infeasible = "no complete placement: every episode ran out of legal cells (grid " +
                           std::to_string(env.settings().cols) + "x" + std::to_string(env.settings().rows) + ", " +
                           std::to_string(env.order().size()) + " hard macros)";
    if (result_.best.valid) {
      // Re-score the best placement from scratch: the number reported is a full evaluation.
      const Netlist placed = env::PlacedNetlist(env.netlist(), result_.best);
      result_.best.cost = EvaluateProxyCost(placed, env.settings(), env.options().weights);
      result_.curve.emplace_back(result_.seconds, result_.best.cost.proxy_cost);
    }
    if (progress_)
      progress_({result_.seconds, result_.evaluations, result_.best.valid ? result_.best.cost.proxy_cost : 0, current_,
                 result_.accepted, temperature_});
    return result_;
  }
  double current_ = 0;
  double temperature_ = 0;  // sa: the annealer's current temperature (reported with the progress)

 private:
  const ChipBaselineOptions& o_;
  std::function<bool()> stop_;
  ProgressFn progress_;
  Stopwatch watch_;
  BaselineResult result_;
  bool over_ = false;
  double next_report_ = 0;
};

int32_t UniformLegal(const std::vector<uint8_t>& mask, std::mt19937_64& rng) {
  int32_t count = 0;
  for (uint8_t m : mask) count += m;
  if (count == 0) return -1;
  int32_t k = std::uniform_int_distribution<int32_t>(0, count - 1)(rng);
  for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a)
    if (mask[a] && k-- == 0) return a;
  return -1;
}

// One random legal episode; true if it completed.
bool RandomEpisode(env::ChipEnv* env, uint64_t seed, std::mt19937_64& rng, Run* run) {
  env->Reset(seed);
  while (!env->done()) {
    const int32_t a = UniformLegal(env->action_mask(), rng);
    if (env->Step(a).infeasible) return false;
  }
  ++run->result().episodes;
  return true;
}

void Finalize(env::ChipEnv* env, Run* run) {
  run->Offer(env->cost(), env->CurrentCost());
}

// One greedy episode: each macro to the cell of least cost (top_k > 1: uniformly among the
// top_k cheapest). True if it completed.
bool GreedyEpisode(env::ChipEnv* env, int top_k, std::mt19937_64& rng, Run* run) {
  env->Reset(0);
  std::vector<std::pair<double, int32_t>> scored;
  while (!env->done()) {
    env::ScoreLegalCells(*env, &scored);
    run->result().evaluations += static_cast<int64_t>(scored.size());
    if (run->Over() && run->result().best.valid) return false;
    const int k = std::min<int>(top_k, static_cast<int>(scored.size()));
    std::partial_sort(scored.begin(), scored.begin() + k, scored.end());
    const int pick = k > 1 ? std::uniform_int_distribution<int>(0, k - 1)(rng) : 0;
    if (env->Step(scored[pick].second).infeasible) return false;
  }
  ++run->result().episodes;
  return true;
}

bool SwapsFootprint(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW || o == Orientation::kFW;
}

// The bounding box of the pins of `net` that are not m's own; false when it has none.
bool OtherPinsBox(const Netlist& nl, const ProxyCost& pc, int32_t net, int32_t m, double* x0, double* x1, double* y0,
                  double* y1) {
  *x0 = *y0 = 1e300;
  *x1 = *y1 = -1e300;
  for (int32_t q = nl.net_start[net]; q < nl.net_start[net + 1]; ++q) {
    const int32_t pin = nl.net_pins[q];
    const int32_t parent = nl.parent[pin];
    if (pin == m || parent == m) continue;
    double x = 0, y = 0;  // (set by both branches)
    if (parent < 0) {
      x = pc.x(pin);
      y = pc.y(pin);
    } else {
      OrientOffset(pc.orientation(parent), nl.pin_dx[pin], nl.pin_dy[pin], &x, &y);
      x += pc.x(parent);
      y += pc.y(parent);
    }
    *x0 = std::min(*x0, x);
    *x1 = std::max(*x1, x);
    *y0 = std::min(*y0, y);
    *y1 = std::max(*y1, y);
  }
  return *x0 <= *x1;
}

// The point in [lo, hi] nearest `at`, where [lo, hi] minimises Σ w·|z − end| over `ends` (value,
// weight): the weighted median interval. Sorts `ends`; `total` = Σ w.
double NearestWeightedMedian(std::vector<std::pair<double, double>>* ends, double total, double at) {
  std::sort(ends->begin(), ends->end());
  double below = 0;  // Σ w of the ends before i
  for (size_t i = 0; i < ends->size(); ++i) {
    below += (*ends)[i].second;
    if (2 * below > total) return (*ends)[i].first;  // the median is this end
    if (2 * below == total)  // every point between this end and the next is a minimum
      return std::clamp(at, (*ends)[i].first, i + 1 < ends->size() ? (*ends)[i + 1].first : (*ends)[i].first);
  }
  return ends->back().first;
}

}  // namespace

bool PullPoint(const Netlist& nl, const ProxyCost& pc, int32_t m, bool median, double* px, double* py) {
  if (m < 0 || m >= static_cast<int32_t>(nl.node_net_start.size()) - 1) return false;
  double sx = 0, sy = 0, sw = 0, ends_weight = 0;
  std::vector<std::pair<double, double>> ex, ey;  // (median) each box's ends with the net's weight
  for (int32_t e = nl.node_net_start[m]; e < nl.node_net_start[m + 1]; ++e) {
    const int32_t net = nl.node_nets[e];
    double x0, x1, y0, y1;
    if (!OtherPinsBox(nl, pc, net, m, &x0, &x1, &y0, &y1)) continue;
    const double w = nl.net_weight[net];
    if (median && w > 0) {
      ex.insert(ex.end(), {{x0, w}, {x1, w}});
      ey.insert(ey.end(), {{y0, w}, {y1, w}});
      ends_weight += 2 * w;
    }
    sx += w * (x0 + x1) / 2;
    sy += w * (y0 + y1) / 2;
    sw += w;
  }
  if (median) {
    if (!(ends_weight > 0)) return false;
    *px = NearestWeightedMedian(&ex, ends_weight, pc.x(m));
    *py = NearestWeightedMedian(&ey, ends_weight, pc.y(m));
  } else {
    if (!(sw > 0)) return false;
    *px = sx / sw;
    *py = sy / sw;
  }
  return true;
}

namespace {

// Simulated annealing on the hard macros of a complete placement held in `pc`. With `proposer`
// the learned policy chooses each proposal's kind (and learns from its outcome); without, the
// kinds are drawn as TILOS does (and `sa-soft`'s soft-macro fraction first).
class Annealer {
 public:
  Annealer(env::ChipEnv* env, ProxyCost* pc, const ChipBaselineOptions& o, std::mt19937_64& rng, Run* run,
           LearnedProposer* proposer)
      : nl_(env->netlist()),
        s_(env->settings()),
        movable_(env->order()),
        n_(static_cast<int32_t>(movable_.size())),
        pc_(pc),
        o_(o),
        rng_(rng),
        run_(run),
        proposer_(proposer),
        gm_(nl_, s_),
        pick_(0, n_ - 1),
        soft_(nl_.soft_macros),
        gw_(s_.canvas_width / s_.cols),
        gh_(s_.canvas_height / s_.rows),
        mask_(static_cast<size_t>(s_.cols) * s_.rows),
        cells_(static_cast<size_t>(s_.cols) * s_.rows),
        hard_select_(proposer && proposer->weights().hard_select_on),
        target_select_(proposer && proposer->weights().target_select_on),
        carry_from_(proposer && proposer->weights().shift_carry_on() ? proposer->weights().shift_carry_from : 2),
        carry_kinds_(proposer ? proposer->weights().carry_kinds : 0),
        hot_from_(proposer && proposer->weights().hot_soft_on() ? proposer->weights().hot_soft_from : 2),
        hot_macro_from_(proposer && proposer->weights().hot_macro_on() ? proposer->weights().hot_macro_from : 2) {
    for (int32_t m : nl_.hard_macros) gm_.Place(m, pc_->x(m), pc_->y(m), pc_->orientation(m));
    if (o.sa_fd_every_steps > 0 && !nl_.soft_macros.empty()) fd_.emplace(nl_, s_);
    const std::vector<double>& probs = o.sa_action_probs;
    if (probs.size() != 5) throw ConfigError("sa: action probabilities need 5 values (swap shift mirror move shuffle)");
    action_kind_ = std::discrete_distribution<int>(probs.begin(), probs.end());
    per_step_ = o.sa_actions_per_step > 0 ? o.sa_actions_per_step : 2 * n_;
    soft_prob_ = soft_.empty() ? 0.0 : o.sa_soft_move_prob;
    if (!(soft_prob_ >= 0 && soft_prob_ <= 1)) throw ConfigError("sa: soft_move_prob must be in [0, 1]");
    if (!(o.sa_soft_move_cells > 0) || !std::isfinite(o.sa_soft_move_cells))
      throw ConfigError("sa: soft_move_cells must be > 0");
    pick_soft_ = std::uniform_int_distribution<int32_t>(0, std::max<int32_t>(0, static_cast<int32_t>(soft_.size()) - 1));
    soft_step_ = std::uniform_real_distribution<double>(-o.sa_soft_move_cells, o.sa_soft_move_cells);
    cur_ = pc_->Cost().proxy_cost;
    run_->current_ = cur_;
    if (proposer_ && proposer_->weights().control_on) control_.emplace(proposer_->weights());
    if (carry_from_ <= 1) BuildAttached(), carried_at_.assign(nl_.num_nodes(), -1);
  }

  // Steps of per_step proposals at a temperature falling geometrically from t_max to t_min over
  // the budget (the clock, or the evaluations with max_evaluations), until the run is over.
  void Anneal() {
    int64_t step = 0;
    profile_.assign(10, {});
    tenth_ = &profile_[0];
    run_->temperature_ = Temperature(0);  // (reported before the first step)
    while (!run_->Over()) {
      const double progress = std::min(1.0, o_.max_evaluations > 0
                                                ? static_cast<double>(run_->result().evaluations) / o_.max_evaluations
                                                : run_->Elapsed() / o_.seconds);
      if (proposer_ && proposer_->weights().length_on) UpdateLengthLog(progress);
      t_ = run_->temperature_ = Temperature(progress);
      progress_ = progress;
      BaselineResult::AnnealTenth* const tenth = &profile_[std::min(9, static_cast<int>(progress * 10))];
      if (tenth != tenth_) RecordPlacement(tenth_);
      tenth_ = tenth;
      if (proposer_) soft_scale_ = ProposerSoftStepFactor(proposer_->weights(), progress);
      for (int i = 0; i < per_step_ && !run_->Over(); ++i) {
        if (proposer_) {
          ProposeLearned(progress);
        } else if (soft_prob_ > 0 && unit_(rng_) < soft_prob_) {
          Propose(kSoftShift);
        } else {
          Propose(action_kind_(rng_));
        }
      }
      ++step;
      if (fd_ && step % o_.sa_fd_every_steps == 0) {
        fd_->Run(pc_);
        const CostBreakdown c = pc_->Cost();
        cur_ = c.proxy_cost;
        ++run_->result().episodes;
        run_->Offer(*pc_, c);
      }
      tenth_->temperature = t_;
      if (control_) {
        tenth_->control_factor = control_->factor(progress);
        tenth_->control_target = control_->target(progress);
        tenth_->control_state = control_->state();
      }
    }
    RecordPlacement(tenth_);
    if (control_ && proposer_->weights().control_state_on) run_->result().control_first_log_share = control_->first_log_share();
    if (proposer_ && proposer_->weights().length_on) run_->result().length_log = length_log_;
    run_->result().anneal_profile = std::move(profile_);
  }

 private:
  using Outcome = std::pair<bool, bool>;  // {evaluated, accepted}

  // The current placement's wirelength, congestion and counted routing into `t` (AnnealTenth).
  void RecordPlacement(BaselineResult::AnnealTenth* t) const {
    const CostBreakdown c = pc_->Cost();
    t->wirelength_cost = c.wirelength_cost;
    t->congestion_cost = c.congestion_cost;
    double routing = 0;
    const std::vector<ProxyCost::CongestionValue> values = pc_->CountedCongestion();
    for (const ProxyCost::CongestionValue& v : values) routing += v.value - v.blockage;
    t->congestion_routing = routing / static_cast<double>(values.size());
  }

  // The temperature at `progress`: geometric from t_max to t_min, times the learned schedule's
  // adjustment (1 when its weights are zero).
  double Temperature(double progress) const {
    const double t = o_.sa_t_max * std::exp(std::log(o_.sa_t_min / o_.sa_t_max) * progress);
    if (!proposer_) return t;
    return t * ProposerTemperatureFactor(proposer_->weights(), progress, length_log_) *
           (control_ ? control_->factor(progress) : 1.0);
  }

  // λ of ProposerWeights::length: from the run's evaluations (max_evaluations), else estimated
  // from the evaluations so far once the run is kLengthEstimateFrom of the way (0 before).
  void UpdateLengthLog(double progress) {
    double evaluations = 0;
    if (o_.max_evaluations > 0) {
      evaluations = static_cast<double>(o_.max_evaluations);
    } else if (progress >= ProposerWeights::kLengthEstimateFrom) {
      evaluations = static_cast<double>(run_->result().evaluations) / progress;
    }
    length_log_ = ProposerLengthLog(proposer_->weights(), evaluations);
    if (control_) control_->set_length_log(length_log_);
  }

  // The learned proposer's proposal and its feedback.
  void ProposeLearned(double progress) {
    const double before = cur_;
    // (timed only for the per-second reward: two clock reads per proposal)
    const auto t0 = o_.sa_proposer_reward_per_second ? std::chrono::steady_clock::now()
                                                     : std::chrono::steady_clock::time_point{};
    const int kind = proposer_->Sample(progress, rng_);
    const auto [evaluated, accepted] = Propose(kind);
    const double seconds = o_.sa_proposer_reward_per_second
                               ? std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
                               : -1;
    proposer_->Feedback(evaluated, accepted, accepted ? (before - cur_) / t_ : 0.0, seconds);
    if (control_ && evaluated &&
        control_->Feedback(accepted, progress, kind_group_ == 0, accepted && cur_ < before))
      t_ = run_->temperature_ = Temperature(progress);
  }

  // One proposal of `kind` (ProposalKind), made and decided.
  Outcome Propose(int kind) {
    kind_group_ = kind == kSoftShift || kind == kSoftPull;
    if (kind == kSoftShift) {  // a soft macro by a few cells (continuous)
      // (a hot-net soft move: ProposerWeights::hot_soft_from)
      const bool hot = progress_ >= hot_from_ && unit_(rng_) < proposer_->weights().hot_soft_share;
      const int32_t m = hot ? PickHotSoftMacro() : PickSoftMacro();
      run_->result().hot_soft_moves += hot;
      const double cells = proposer_ ? proposer_->weights().hot_soft_cells : 0;
      const double scale = hot && cells > 0 ? cells / o_.sa_soft_move_cells : soft_scale_;
      const double x1 = pc_->x(m) + soft_step_(rng_) * scale * gw_;
      const double y1 = pc_->y(m) + soft_step_(rng_) * scale * gh_;
      return SoftMove(m, x1, y1);
    }
    if (kind == kSoftPull) return SoftPull();
    if (kind == kMirror) return Mirror();
    ms_.clear();
    js_.clear();
    from_.clear();
    to_.clear();
    if (kind == kSwap || kind == kShuffle) {
      if (!SwapOrShuffle(kind == kSwap ? 2 : 4)) return {false, false};
    } else if (!OneMacroTarget(kind)) {  // shift, move, hard_pull
      return {false, false};
    }
    if (!Relocate()) return {false, false};
    if (progress_ >= carry_from_ && ((carry_kinds_ >> kind) & 1u)) {  // a cluster move (ProposerWeights::shift_carry_from, carry_kinds)
      Carry();
      return {true, Metropolis([this] {
                UndoCarry();
                UndoRelocate();
              })};
    }
    return {true, Metropolis([this] { UndoRelocate(); })};
  }

  // attached_: per movable_ index, the soft macros that share a net with that hard macro (each once).
  void BuildAttached() {
    std::vector<int32_t> seen(nl_.num_nodes(), -1);
    attached_start_.assign(1, 0);
    for (int32_t j = 0; j < n_; ++j) {
      const int32_t m = movable_[j];
      for (int32_t e = nl_.node_net_start[m]; e < nl_.node_net_start[m + 1]; ++e) {
        const int32_t net = nl_.node_nets[e];
        for (int32_t i = nl_.net_start[net]; i < nl_.net_start[net + 1]; ++i) {
          const int32_t q = nl_.net_pins[i];
          const int32_t owner = nl_.parent[q] >= 0 ? nl_.parent[q] : q;
          if (nl_.type[owner] != NodeType::kSoftMacro || seen[owner] == j) continue;
          seen[owner] = j;
          attached_.push_back(owner);
        }
      }
      attached_start_.push_back(static_cast<int32_t>(attached_.size()));
    }
  }
  // After Relocate of a carrying kind: each relocated macro ms_[k] takes the attached soft macros
  // within its old rectangle grown by shift_carry_cells cells along by its own vector (a soft macro
  // attached to two of them goes with the first; carried_ remembers them for UndoCarry).
  void Carry() {
    carried_.clear();
    ++carry_stamp_;
    const double reach = proposer_->weights().shift_carry_cells;
    for (size_t k = 0; k < ms_.size(); ++k) {
      const int32_t m = ms_[k], j = js_[k];
      const double dx = to_[k].first - from_[k].first, dy = to_[k].second - from_[k].second;
      const auto [half_w, half_h] = HalfFootprint(m);
      const double hw = half_w + reach * gw_, hh = half_h + reach * gh_;
      for (int32_t i = attached_start_[j]; i < attached_start_[j + 1]; ++i) {
        const int32_t q = attached_[i];
        if (carried_at_[q] == carry_stamp_) continue;
        const double x0 = pc_->x(q), y0 = pc_->y(q);
        if (std::fabs(x0 - from_[k].first) > hw || std::fabs(y0 - from_[k].second) > hh) continue;
        double x1 = x0 + dx, y1 = y0 + dy;
        KeepSoftInside(q, &x1, &y1);
        if (x1 == x0 && y1 == y0) continue;
        carried_at_[q] = carry_stamp_;
        carried_.push_back({q, x0, y0});
        pc_->MoveNode(q, x1, y1);
      }
    }
    run_->result().carried_soft_moves += static_cast<int64_t>(carried_.size());
  }
  void UndoCarry() {
    for (auto it = carried_.rbegin(); it != carried_.rend(); ++it) pc_->MoveNode(it->m, it->x, it->y);
  }

  // A soft macro part of the way towards its nets' pull.
  Outcome SoftPull() {
    const int32_t m = PickSoftMacro();
    double px, py;
    if (!PullPoint(nl_, *pc_, m, proposer_ && proposer_->weights().median_pull, &px, &py)) return {false, false};
    const double c = o_.sa_soft_move_cells * soft_scale_, f = unit_(rng_);
    const double dx = std::clamp((px - pc_->x(m)) / gw_, -c, c), dy = std::clamp((py - pc_->y(m)) / gh_, -c, c);
    return SoftMove(m, pc_->x(m) + f * dx * gw_, pc_->y(m) + f * dy * gh_);
  }

  // Another orientation with the same footprint.
  Outcome Mirror() {
    const int32_t m = movable_[pick_(rng_)];
    const Orientation old_o = pc_->orientation(m);
    static const Orientation same[4] = {Orientation::kN, Orientation::kFN, Orientation::kS, Orientation::kFS};
    static const Orientation swapped[4] = {Orientation::kE, Orientation::kFE, Orientation::kW, Orientation::kFW};
    const Orientation* family = SwapsFootprint(old_o) ? swapped : same;
    Orientation o2 = old_o;
    while (o2 == old_o) o2 = family[std::uniform_int_distribution<int>(0, 3)(rng_)];
    pc_->SetOrientation(m, o2);
    return {true, Metropolis([&] { pc_->SetOrientation(m, old_o); })};
  }

  // Swap two / shuffle four distinct hard macros' centres (ms_, from_, to_). False if too few.
  bool SwapOrShuffle(int count) {
    if (n_ < count) return false;
    while (static_cast<int>(ms_.size()) < count) {
      const int32_t j = pick_(rng_);
      const int32_t m = movable_[j];
      if (std::find(ms_.begin(), ms_.end(), m) == ms_.end()) ms_.push_back(m), js_.push_back(j);
    }
    for (int32_t m : ms_) from_.emplace_back(pc_->x(m), pc_->y(m));
    to_ = from_;
    if (count == 2) std::swap(to_[0], to_[1]);
    else std::shuffle(to_.begin(), to_.end(), rng_);
    return true;
  }

  // One hard macro's target: a neighbouring cell (shift) / anywhere legal (move) / the legal cell
  // nearest its nets' pull (hard_pull). False when there is none.
  bool OneMacroTarget(int kind) {
    const bool hot = progress_ >= hot_macro_from_ && unit_(rng_) < proposer_->weights().hot_macro_share;
    const int32_t j = hot ? PickHotMacro() : hard_select_ ? PickHardMacro() : pick_(rng_);
    run_->result().hot_macro_moves += hot;
    const int32_t m = movable_[j];
    js_.push_back(j);
    ms_.push_back(m);
    from_.emplace_back(pc_->x(m), pc_->y(m));
    if (kind == kShift) {
      static const int dc[4] = {1, -1, 0, 0}, dr[4] = {0, 0, 1, -1};
      const int d = std::uniform_int_distribution<int>(0, 3)(rng_);
      to_.emplace_back(from_[0].first + dc[d] * gw_, from_[0].second + dr[d] * gh_);
      return true;
    }
    if (kind == kMove) {
      gm_.Compute(m, mask_.data(), pc_->orientation(m));
      const int32_t a = target_select_ ? PickTarget(j) : UniformLegal(mask_, rng_);
      if (a < 0) return false;
      to_.emplace_back((a % s_.cols + 0.5) * gw_, (a / s_.cols + 0.5) * gh_);
      return true;
    }
    double px, py;
    if (!PullPoint(nl_, *pc_, m, false, &px, &py)) return false;
    gm_.Unplace(m);
    gm_.Compute(m, mask_.data(), pc_->orientation(m));
    gm_.Place(m, from_[0].first, from_[0].second, pc_->orientation(m));
    int32_t best = -1;
    double best_d = 1e300;
    for (int32_t a = 0; a < static_cast<int32_t>(mask_.size()); ++a) {
      if (!mask_[a]) continue;
      const double dx = (a % s_.cols + 0.5) * gw_ - px, dy = (a / s_.cols + 0.5) * gh_ - py;
      if (dx * dx + dy * dy < best_d) best_d = dx * dx + dy * dy, best = a;
    }
    if (best < 0) return false;
    const double x1 = (best % s_.cols + 0.5) * gw_, y1 = (best / s_.cols + 0.5) * gh_;
    if (x1 == from_[0].first && y1 == from_[0].second) return false;
    to_.emplace_back(x1, y1);
    return true;
  }

  // Moves ms_ from from_ to to_; false (and nothing changed) if one target is illegal.
  bool Relocate() {
    for (int32_t m : ms_) gm_.Unplace(m);
    size_t k = 0;
    for (; k < ms_.size(); ++k) {
      if (!gm_.IsLegal(ms_[k], to_[k].first, to_[k].second, pc_->orientation(ms_[k]))) break;
      gm_.Place(ms_[k], to_[k].first, to_[k].second, pc_->orientation(ms_[k]));
    }
    if (k < ms_.size()) {
      for (size_t j = 0; j < k; ++j) gm_.Unplace(ms_[j]);
      for (size_t j = 0; j < ms_.size(); ++j) gm_.Place(ms_[j], from_[j].first, from_[j].second, pc_->orientation(ms_[j]));
      return false;
    }
    for (size_t j = 0; j < ms_.size(); ++j) pc_->MoveNode(ms_[j], to_[j].first, to_[j].second);
    return true;
  }
  void UndoRelocate() {
    for (int32_t m : ms_) gm_.Unplace(m);
    for (size_t j = 0; j < ms_.size(); ++j) {
      gm_.Place(ms_[j], from_[j].first, from_[j].second, pc_->orientation(ms_[j]));
      pc_->MoveNode(ms_[j], from_[j].first, from_[j].second);
    }
  }

  // Metropolis on the move just made: keeps it or calls `undo`. True if accepted.
  template <typename Undo>
  bool Metropolis(Undo&& undo) {
    ++run_->result().evaluations;
    const CostBreakdown c = pc_->Cost();
    BaselineResult::AnnealCounts& k = tenth_->kinds[kind_group_];
    ++k.evaluated;
    const bool uphill = c.proxy_cost > cur_;
    if (uphill) {
      ++k.uphill;
      k.sum_log_uphill += std::log(c.proxy_cost - cur_);
    } else {
      ++(c.proxy_cost < cur_ ? k.downhill : k.unchanged);
    }
    if (c.proxy_cost <= cur_ || unit_(rng_) < std::exp((cur_ - c.proxy_cost) / t_)) {
      k.uphill_accepted += uphill;
      cur_ = c.proxy_cost;
      ++run_->result().accepted;
      run_->Offer(*pc_, c);
      return true;
    }
    undo();
    return false;
  }

  // Moves soft macro m to (x1, y1) (its rectangle kept inside the canvas) and decides.
  Outcome SoftMove(int32_t m, double x1, double y1) {
    const double x0 = pc_->x(m), y0 = pc_->y(m);
    KeepSoftInside(m, &x1, &y1);
    if (x1 == x0 && y1 == y0) return {false, false};
    pc_->MoveNode(m, x1, y1);
    return {true, Metropolis([&] { pc_->MoveNode(m, x0, y0); })};
  }

  // Half the width and height of macro m's rectangle as it is oriented now (E/W turn it).
  std::pair<double, double> HalfFootprint(int32_t m) const {
    const bool swapped = SwapsFootprint(pc_->orientation(m));
    return {(swapped ? nl_.height[m] : nl_.width[m]) / 2, (swapped ? nl_.width[m] : nl_.height[m]) / 2};
  }

  // Clamps soft macro m's centre (x, y) so that its rectangle stays inside the canvas.
  void KeepSoftInside(int32_t m, double* x, double* y) const {
    const double hw = std::min(nl_.width[m], s_.canvas_width) / 2, hh = std::min(nl_.height[m], s_.canvas_height) / 2;
    *x = std::clamp(*x, hw, s_.canvas_width - hw);
    *y = std::clamp(*y, hh, s_.canvas_height - hh);
  }

  // The soft macro a soft move takes: uniform, or (learned proposer) one of a few candidates
  // chosen by the congestion and density of their cells, read from maps refreshed every 256 picks.
  int32_t PickSoftMacro() {
    if (!proposer_) return soft_[pick_soft_(rng_)];
    if (++maps_age_ >= 256) RefreshMaps();
    constexpr int C = ProposerWeights::kCandidates, S = ProposerWeights::kSelectFeatures;
    int32_t candidate[C];
    double phi[C * S];
    for (int i = 0; i < C; ++i) {
      const int32_t m = candidate[i] = soft_[pick_soft_(rng_)];
      const size_t cell = CellOf(m);
      const double cong = cell_v_[cell] / max_congestion_;
      phi[i * S + 0] = cong;
      phi[i * S + 1] = cell_density_[cell] / max_density_;
      phi[i * S + 2] = cong * cong * cong * cong;
    }
    return candidate[proposer_->Select(phi, C, rng_)];
  }
  // A soft macro on a net whose pins' cell box covers a cell the congestion cost counts (the hot
  // nets; ProposerWeights::hot_soft_from), from a list refreshed every kHotRefresh picks; the
  // uniform pick when there is none.
  int32_t PickHotSoftMacro() {
    if (++hot_age_ >= ProposerWeights::kHotRefresh) RefreshHot();
    if (hot_soft_.empty()) return PickSoftMacro();
    return hot_soft_[std::uniform_int_distribution<size_t>(0, hot_soft_.size() - 1)(rng_)];
  }
  void RefreshHot() {
    hot_age_ = 0;
    const int cols = s_.cols, rows = s_.rows;
    const size_t n = cells_;
    const double threshold = pc_->CountedCongestion().back().value;  // the smallest value the cost counts
    std::vector<double> v(n), h(n);
    pc_->CongestionValuesInto(v.data(), h.data());
    // prefix sums of the hot cells, (rows + 1) × (cols + 1)
    hot_prefix_.assign(static_cast<size_t>(rows + 1) * (cols + 1), 0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const size_t i = static_cast<size_t>(r) * cols + c;
        const int hot = v[i] >= threshold || h[i] >= threshold;  // (values tied with it too)
        hot_prefix_[(r + 1) * (cols + 1) + c + 1] = hot + hot_prefix_[r * (cols + 1) + c + 1] +
                                                     hot_prefix_[(r + 1) * (cols + 1) + c] - hot_prefix_[r * (cols + 1) + c];
      }
    hot_soft_.clear();
    if (hot_seen_.size() != static_cast<size_t>(nl_.num_nodes())) hot_seen_.assign(nl_.num_nodes(), -1);
    ++hot_stamp_;
    const int32_t nets = static_cast<int32_t>(nl_.net_start.size()) - 1;
    for (int32_t net = 0; net < nets; ++net) {
      int r0 = rows, r1 = -1, c0 = cols, c1 = -1;
      for (int32_t q = nl_.net_start[net]; q < nl_.net_start[net + 1]; ++q) {
        const int32_t pin = nl_.net_pins[q], parent = nl_.parent[pin];
        double x = 0, y = 0;  // (set by both branches)
        if (parent < 0) {
          x = pc_->x(pin), y = pc_->y(pin);
        } else {
          OrientOffset(pc_->orientation(parent), nl_.pin_dx[pin], nl_.pin_dy[pin], &x, &y);
          x += pc_->x(parent), y += pc_->y(parent);
        }
        const int c = std::clamp(static_cast<int>(std::floor(x / gw_)), 0, cols - 1);
        const int r = std::clamp(static_cast<int>(std::floor(y / gh_)), 0, rows - 1);
        r0 = std::min(r0, r), r1 = std::max(r1, r), c0 = std::min(c0, c), c1 = std::max(c1, c);
      }
      if (r1 < 0) continue;
      const int hot = hot_prefix_[(r1 + 1) * (cols + 1) + c1 + 1] - hot_prefix_[r0 * (cols + 1) + c1 + 1] -
                      hot_prefix_[(r1 + 1) * (cols + 1) + c0] + hot_prefix_[r0 * (cols + 1) + c0];
      if (hot == 0) continue;
      for (int32_t q = nl_.net_start[net]; q < nl_.net_start[net + 1]; ++q) {
        const int32_t pin = nl_.net_pins[q];
        const int32_t owner = nl_.parent[pin] >= 0 ? nl_.parent[pin] : pin;
        if (nl_.type[owner] != NodeType::kSoftMacro || hot_seen_[owner] == hot_stamp_) continue;
        hot_seen_[owner] = hot_stamp_;
        hot_soft_.push_back(owner);
      }
    }
    std::sort(hot_soft_.begin(), hot_soft_.end());  // (an order that does not depend on the nets' order)
    run_->result().hot_soft_macros = static_cast<int64_t>(hot_soft_.size());
  }
  // A hard macro (its index in movable_) overlapping a counted congestion cell whose net routing is
  // at least the counted cells' mean (ProposerWeights::hot_macro_from), from a list refreshed every
  // kHotRefresh picks; the uniform pick when there is none.
  int32_t PickHotMacro() {
    if (++hot_macro_age_ >= ProposerWeights::kHotRefresh) RefreshHotMacros();
    if (hot_macros_.empty()) return pick_(rng_);
    return hot_macros_[std::uniform_int_distribution<size_t>(0, hot_macros_.size() - 1)(rng_)];
  }
  void RefreshHotMacros() {
    hot_macro_age_ = 0;
    const int cols = s_.cols;
    const size_t n = cells_;
    const std::vector<ProxyCost::CongestionValue> values = pc_->CountedCongestion();
    double mean_routing = 0;
    for (const ProxyCost::CongestionValue& c : values) mean_routing += c.value - c.blockage;
    mean_routing /= static_cast<double>(values.size());
    std::vector<size_t> busy;  // cells
    for (const ProxyCost::CongestionValue& c : values) {
      const double routing = c.value - c.blockage;
      if (routing > 0 && routing >= mean_routing) busy.push_back(static_cast<size_t>(c.index) % n);
    }
    hot_macros_.clear();
    for (int32_t j = 0; j < n_; ++j) {
      const int32_t m = movable_[j];
      const auto [hw, hh] = HalfFootprint(m);
      const double x0 = pc_->x(m) - hw, x1 = pc_->x(m) + hw, y0 = pc_->y(m) - hh, y1 = pc_->y(m) + hh;
      for (size_t cell : busy) {
        const double cx0 = static_cast<double>(cell % cols) * gw_, cy0 = static_cast<double>(cell / cols) * gh_;
        if (x0 < cx0 + gw_ && x1 > cx0 && y0 < cy0 + gh_ && y1 > cy0) {
          hot_macros_.push_back(j);
          break;
        }
      }
    }
    run_->result().hot_macros = static_cast<int64_t>(hot_macros_.size());
  }
  // The hard macro (its index in movable_) a one-macro move takes with the learned hard selection:
  // one of a few uniform candidates chosen by how far its nets pull it and the congestion and
  // density of its cell (ProposerWeights::hard_select), read from values refreshed every 256 picks.
  int32_t PickHardMacro() {
    if (++hard_age_ >= 256) RefreshHard();
    constexpr int C = ProposerWeights::kCandidates, H = ProposerWeights::kHardSelectFeatures;
    int32_t candidate[C];
    double phi[C * H];
    for (int i = 0; i < C; ++i) {
      const int32_t j = candidate[i] = pick_(rng_);
      const int32_t m = movable_[j];
      const size_t cell = CellOf(m);
      phi[i * H + 0] = pull_distance_[j] / max_pull_distance_;
      phi[i * H + 1] = cell_v_[cell] / max_congestion_;
      phi[i * H + 2] = cell_density_[cell] / max_density_;
    }
    return candidate[proposer_->SelectHard(phi, C, rng_)];
  }
  // The legal cell (of mask_) a `move` of movable_[j] takes with the learned target selection: one
  // of a few cells drawn uniformly among the legal ones, chosen by how much nearer its nets' pull
  // point it is than the macro's centre and by its congestion and density
  // (ProposerWeights::target_select), from pull points and maps refreshed every 256 picks. -1 if
  // no cell is legal.
  int32_t PickTarget(int32_t j) {
    if (++target_age_ >= 256) RefreshTarget();
    constexpr int C = ProposerWeights::kCandidates, T = ProposerWeights::kTargetSelectFeatures;
    int32_t count = 0;
    for (uint8_t v : mask_) count += v;
    if (count == 0) return -1;
    int32_t rank[C], candidate[C];
    std::uniform_int_distribution<int32_t> any(0, count - 1);
    for (int i = 0; i < C; ++i) rank[i] = any(rng_);
    std::sort(rank, rank + C);  // (the candidates are exchangeable: one scan finds all of them)
    int i = 0;
    for (int32_t a = 0, k = 0; a < static_cast<int32_t>(mask_.size()) && i < C; ++a) {
      if (!mask_[a]) continue;
      while (i < C && rank[i] == k) candidate[i++] = a;
      ++k;
    }
    const int32_t m = movable_[j];
    const double px = target_pull_[2 * j], py = target_pull_[2 * j + 1];
    const bool pulled = std::isfinite(px);
    const double d_now = pulled ? std::hypot(px - pc_->x(m), py - pc_->y(m)) : 0, diag = std::hypot(gw_, gh_);
    double phi[C * T];
    for (i = 0; i < C; ++i) {
      const int32_t a = candidate[i];
      const double x = (a % s_.cols + 0.5) * gw_, y = (a / s_.cols + 0.5) * gh_;
      phi[i * T + 0] = pulled ? std::clamp((d_now - std::hypot(px - x, py - y)) / (d_now + diag), -4.0, 1.0) : 0.0;
      phi[i * T + 1] = cell_v_[a] / max_congestion_;
      phi[i * T + 2] = cell_density_[a] / max_density_;
    }
    return candidate[proposer_->SelectTarget(phi, C, rng_)];
  }
  void RefreshTarget() {
    RefreshMaps();
    target_pull_.assign(2 * movable_.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t j = 0; j < movable_.size(); ++j)
      if (!PullPoint(nl_, *pc_, movable_[j], false, &target_pull_[2 * j], &target_pull_[2 * j + 1]))
        target_pull_[2 * j] = target_pull_[2 * j + 1] = std::numeric_limits<double>::quiet_NaN();
    target_age_ = 0;
  }
  void RefreshHard() {
    RefreshMaps();
    pull_distance_.assign(movable_.size(), 0.0);
    max_pull_distance_ = 1e-12;
    for (size_t j = 0; j < movable_.size(); ++j) {
      const int32_t m = movable_[j];
      double px, py;
      if (!PullPoint(nl_, *pc_, m, false, &px, &py)) continue;
      pull_distance_[j] = std::hypot(px - pc_->x(m), py - pc_->y(m));
      max_pull_distance_ = std::max(max_pull_distance_, pull_distance_[j]);
    }
    hard_age_ = 0;
  }
  // The grid cell (row-major index) of node m's centre, clamped to the grid.
  size_t CellOf(int32_t m) const {
    const int col = std::clamp(static_cast<int>(pc_->x(m) / gw_), 0, s_.cols - 1);
    const int row = std::clamp(static_cast<int>(pc_->y(m) / gh_), 0, s_.rows - 1);
    return static_cast<size_t>(row) * s_.cols + col;
  }
  void RefreshMaps() {
    cell_density_.resize(cells_);
    cell_v_.resize(cells_);
    cell_h_.resize(cells_);
    pc_->DensityValuesInto(cell_density_.data());
    pc_->CongestionValuesInto(cell_v_.data(), cell_h_.data());
    max_density_ = max_congestion_ = 1e-12;
    for (size_t c = 0; c < cells_; ++c) {
      cell_v_[c] = std::max(cell_v_[c], cell_h_[c]);
      max_density_ = std::max(max_density_, cell_density_[c]);
      max_congestion_ = std::max(max_congestion_, cell_v_[c]);
    }
    maps_age_ = 0;
  }

  const Netlist& nl_;
  const PlacementSettings& s_;
  const std::vector<int32_t>& movable_;
  const int32_t n_;
  ProxyCost* pc_;
  const ChipBaselineOptions& o_;
  std::mt19937_64& rng_;
  Run* run_;
  LearnedProposer* proposer_;
  std::optional<AcceptanceController> control_;  // the proposer's acceptance controller, if it has one
  double length_log_ = 0;                         // λ of ProposerWeights::length (UpdateLengthLog)
  GridMask gm_;
  std::optional<ForceDirectedPlacer> fd_;
  std::discrete_distribution<int> action_kind_;
  std::uniform_int_distribution<int32_t> pick_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  const std::vector<int32_t>& soft_;
  double soft_prob_ = 0;
  std::uniform_int_distribution<int32_t> pick_soft_;
  std::uniform_real_distribution<double> soft_step_;
  int per_step_ = 0;
  const double gw_, gh_;
  std::vector<uint8_t> mask_;
  double cur_ = 0, t_ = 0;
  std::vector<BaselineResult::AnnealTenth> profile_;  // (BaselineResult::anneal_profile)
  BaselineResult::AnnealTenth* tenth_ = nullptr;       // the tenth of the run now
  int kind_group_ = 0;                                 // 0 hard, 1 soft (AnnealCounts)
  double soft_scale_ = 1;  // the soft moves' step multiplier (the learned schedule; 1 otherwise)
  std::vector<int32_t> ms_;  // the macros of the current relocation, their centres before and after
  std::vector<std::pair<double, double>> from_, to_;
  const size_t cells_;
  std::vector<double> cell_density_, cell_v_, cell_h_;
  int maps_age_ = 1 << 30;
  const bool hard_select_;           // the learned hard-macro selection (ProposerWeights::hard_select_on)
  std::vector<double> pull_distance_;  // per movable_ index: its centre to its nets' pull point
  double max_pull_distance_ = 0;
  int hard_age_ = 1 << 30;
  const bool target_select_;  // the learned target cell of a `move` (ProposerWeights::target_select_on)
  std::vector<double> target_pull_;  // per movable_ index: its nets' pull point (x, y; NaN: none)
  int target_age_ = 1 << 30;
  double max_density_ = 0, max_congestion_ = 0;
  const double carry_from_;  // cluster shifts from this progress on (ProposerWeights::shift_carry_from; > 1 never)
  double progress_ = 0;      // the run's progress at the current step
  std::vector<int32_t> attached_start_, attached_;  // BuildAttached
  const uint32_t carry_kinds_;                      // which kinds carry (ProposerWeights::carry_kinds)
  std::vector<int32_t> js_;                         // movable_ index of each of ms_
  std::vector<int64_t> carried_at_;                 // per node: the carry stamp when last carried
  int64_t carry_stamp_ = 0;
  const double hot_from_;                  // hot-net soft moves from this progress on (> 1 never)
  const double hot_macro_from_;            // hot-macro moves from this progress on (> 1 never)
  int hot_macro_age_ = 1 << 30;            // picks since RefreshHotMacros
  std::vector<int32_t> hot_macros_;        // movable_ indices of the hard macros over busy counted cells
  int hot_age_ = 1 << 30;                  // picks since RefreshHot
  std::vector<int32_t> hot_soft_;          // the soft macros on hot nets (RefreshHot)
  std::vector<int> hot_prefix_;            // prefix sums of the hot cells
  std::vector<int64_t> hot_seen_;
  int64_t hot_stamp_ = 0;
  struct Carried {
    int32_t m;
    double x, y;
  };
  std::vector<Carried> carried_;  // the soft macros the current cluster shift moved, where they were
};

void Anneal(env::ChipEnv* env, ProxyCost* pc, const ChipBaselineOptions& o, std::mt19937_64& rng, Run* run,
            LearnedProposer* proposer) {
  Annealer(env, pc, o, rng, run, proposer).Anneal();
}

}  // namespace

const std::vector<std::string>& ChipBaselineMethods() {
  static const std::vector<std::string> m = {"random", "greedy", "sa", "fd", "cd"};
  return m;
}

BaselineResult RunChipBaseline(const std::string& method, env::ChipEnv* env, const ChipBaselineOptions& o,
                               const std::function<bool()>& stop, const ProgressFn& progress) {
  Run run(method, o, stop, progress);
  std::mt19937_64 rng(o.seed);
  if (method == "random") {
    uint64_t seed = o.seed;
    do {
      if (RandomEpisode(env, seed++, rng, &run)) Finalize(env, &run);
      ++run.result().evaluations;
    } while (!run.Over());
  } else if (method == "greedy") {
    int top_k = 1;
    do {
      if (GreedyEpisode(env, top_k, rng, &run)) Finalize(env, &run);
      top_k = std::max(1, o.greedy_top_k);
    } while (!run.Over());
  } else if (method == "sa") {
    // Start from a complete placement: greedy, a random episode, or the input as it is.
    bool ok = false;
    if (o.sa_init == "greedy") ok = GreedyEpisode(env, 1, rng, &run);
    else if (o.sa_init == "random") ok = RandomEpisode(env, o.seed, rng, &run);
    else if (o.sa_init != "input" && o.sa_init != "snapped")
      throw ConfigError("sa: init must be greedy, random, input or snapped");
    if (o.sa_init == "input" || o.sa_init == "snapped") {
      env->Reset(0);
      ok = true;
    }
    ProxyCost pc = env->cost();
    if (o.sa_init == "snapped") ok = env::SnapHardMacrosToLegalCells(env->netlist(), env->settings(), env->order(), &pc);
    if (o.sa_init == "input" || o.sa_init == "snapped") ++run.result().episodes;  // the start is a complete placement
    if (ok) {
      run.Offer(pc, pc.Cost());
      std::optional<LearnedProposer> proposer;
      if (o.sa_proposer == "learned") {
        const Netlist& nl = env->netlist();
        const size_t hard = env->order().size();
        std::array<bool, ProposerWeights::kKinds> legal{};
        legal.fill(hard >= 1);
        legal[kSwap] = hard >= 2;
        legal[kShuffle] = hard >= 4;
        legal[kSoftShift] = legal[kSoftPull] = !nl.soft_macros.empty() && o.sa_soft_move_cells > 0;
        ProposerOptions po;
        po.learning_rate = o.sa_proposer_lr;
        po.reward_per_second = o.sa_proposer_reward_per_second;
        ProposerWeights start = o.sa_proposer_weights;
        if (o.sa_proposer_prior == "mixture") {
          po.log_prior = MixtureLogPrior(legal[kSoftShift] ? o.sa_soft_move_prob : 0.0, o.sa_action_probs);
          const bool untrained = std::all_of(start.w.begin(), start.w.end(), [](double v) { return v == 0; });
          if (untrained) {
            ProposerWeights prior = WeightsOfPrior(po.log_prior);
            prior.select = start.select;
            prior.trained_on = start.trained_on;
            start = prior;
          }
        } else if (o.sa_proposer_prior != "uniform") {
          throw ConfigError("sa: proposer_prior must be uniform or mixture (got '" + o.sa_proposer_prior + "')");
        }
        proposer.emplace(start, po, legal);
      } else if (o.sa_proposer != "uniform") {
        throw ConfigError("sa: proposer must be uniform or learned (got '" + o.sa_proposer + "')");
      }
      BaselineResult::Proposer& report = run.result().proposer;
      if (proposer) report.start_probabilities = proposer->Probabilities(0.0, proposer->acceptance_rate());
      Anneal(env, &pc, o, rng, &run, proposer ? &*proposer : nullptr);
      if (proposer) {
        report.used = true;
        report.weights = proposer->weights();
        report.stats = proposer->stats();
        report.updates = proposer->updates();
        report.end_probabilities = proposer->Probabilities(1.0, proposer->acceptance_rate());
      }
    } else {
      run.result().infeasible = "sa: the initial placement (sa.init=" + o.sa_init + ") did not complete: " +
                                (o.sa_init == "snapped" ? std::string("a hard macro found no free legal cell")
                                                        : std::string("the episode ran out of legal cells"));
    }
  } else if (method == "fd") {
    env->Reset(0);
    ProxyCost pc = env->cost();
    RunForceDirected(&pc);
    ++run.result().evaluations;
    ++run.result().episodes;
    run.Offer(pc, pc.Cost());
  } else if (method == "cd") {
    // Coordinate descent from the input placement, round after round (a new node order each
    // round) until a round no longer improves or the budget is spent.
    env->Reset(0);
    ProxyCost pc = env->cost();
    {
      // An illegal input (hard macros off the canvas or overlapping, as some initial.plc
      // files have) is snapped to legal cells first: descent alone may leave them illegal.
      env::ChipSolution input;
      env::CopyPlacement(pc, &input);
      if (!env::IsLegalPlacement(env->netlist(), env->settings(), input) &&
          !env::SnapHardMacrosToLegalCells(env->netlist(), env->settings(), env->order(), &pc)) {
        run.result().infeasible = "cd: the input placement is illegal and its hard macros do not all fit on legal cells";
        return run.Finish(*env);
      }
    }
    run.Offer(pc, pc.Cost());
    CoordinateDescentOptions co;
    co.epochs = 1000;
    co.stop = [&] { return run.Over(); };  // the budget and Ctrl-C end a round after its current macro
    for (uint64_t round = 0; !run.Over(); ++round) {
      co.seed = o.seed + round;
      const double before = pc.Cost().proxy_cost;
      const CoordinateDescentResult cr = RunCoordinateDescent(&pc, co);
      run.result().evaluations += cr.evaluations;
      ++run.result().episodes;
      run.Offer(pc, pc.Cost());
      if (cr.stopped || pc.Cost().proxy_cost >= before * (1 - co.min_relative_improvement)) break;
    }
  } else {
    throw ConfigError("unknown baseline method '" + method + "' (random, greedy, sa, fd, cd)");
  }
  if (o.refine_cd && method != "cd" && run.result().best.valid) {
    // Coordinate descent on the best placement found (CT's optional post-processing).
    const Netlist placed = env::PlacedNetlist(env->netlist(), run.result().best);
    ProxyCost pc(placed, env->settings(), env->options().weights);
    CoordinateDescentOptions co;
    co.seed = o.seed;
    co.stop = stop;  // Ctrl-C (the refinement is not part of the budget)
    const CoordinateDescentResult cr = RunCoordinateDescent(&pc, co);
    run.result().evaluations += cr.evaluations;
    run.Offer(pc, pc.Cost());
  }
  return run.Finish(*env);
}

}  // namespace placerl::search
