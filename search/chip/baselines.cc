#include "search/chip/baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "cost_models/chip/fd_placer.h"
#include "search/chip/coordinate_descent.h"
#include "cost_models/chip/grid_mask.h"
#include "datasets/util/errors.h"

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
    const double t = Elapsed();
    over_ = t >= o_.seconds;
    if (progress_ && t >= next_report_) {
      next_report_ = t + 0.25;
      progress_({t, result_.evaluations, result_.best.valid ? result_.best.cost.proxy_cost : 0, current_});
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
      progress_({result_.seconds, result_.evaluations, result_.best.valid ? result_.best.cost.proxy_cost : 0, current_});
    return result_;
  }
  double current_ = 0;

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
    scored.clear();
    const auto& mask = env->action_mask();
    for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a) {
      if (!mask[a]) continue;
      scored.emplace_back(env->PeekCost(a).proxy_cost, a);
      ++run->result().evaluations;
    }
    if (run->Over() && run->result().best.valid) return false;
    const int k = std::min<int>(top_k, static_cast<int>(scored.size()));
    std::partial_sort(scored.begin(), scored.begin() + k, scored.end());
    const int pick = k > 1 ? std::uniform_int_distribution<int>(0, k - 1)(rng) : 0;
    if (env->Step(scored[pick].second).infeasible) return false;
  }
  ++run->result().episodes;
  return true;
}

// The input placement made legal: each hard macro in `order` onto the free legal cell centre
// nearest (Euclidean) its input centre. Soft macros, ports and orientations are kept. False
// if a macro finds no legal cell. Fixed hard macros (not in `order`) stay and block.
bool SnapToLegalCells(const Netlist& nl, const PlacementSettings& s, const std::vector<int32_t>& order, ProxyCost* pc) {
  GridMask gm(nl, s);
  for (int32_t m : nl.hard_macros)
    if (nl.fixed[m]) gm.Place(m, pc->x(m), pc->y(m), pc->orientation(m));
  std::vector<uint8_t> mask(static_cast<size_t>(s.cols) * s.rows);
  for (int32_t m : order) {
    if (nl.type[m] != NodeType::kHardMacro) continue;
    gm.Compute(m, mask.data(), pc->orientation(m));
    int32_t best = -1;
    double best_d = 0;
    for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a) {
      if (!mask[a]) continue;
      const double dx = gm.CellCentreX(a % s.cols) - pc->x(m), dy = gm.CellCentreY(a / s.cols) - pc->y(m);
      const double d = dx * dx + dy * dy;
      if (best < 0 || d < best_d) {
        best = a;
        best_d = d;
      }
    }
    if (best < 0) return false;
    const double x = gm.CellCentreX(best % s.cols), y = gm.CellCentreY(best / s.cols);
    gm.Place(m, x, y, pc->orientation(m));
    pc->MoveNode(m, x, y);
  }
  return true;
}

bool SwapsFootprint(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW || o == Orientation::kFW;
}

// Simulated annealing on the hard macros of a complete placement held in `pc`.
void Anneal(env::ChipEnv* env, ProxyCost* pc, const ChipBaselineOptions& o, std::mt19937_64& rng, Run* run) {
  const Netlist& nl = env->netlist();
  const PlacementSettings& s = env->settings();
  const std::vector<int32_t>& movable = env->order();
  const int32_t n = static_cast<int32_t>(movable.size());
  GridMask gm(nl, s);
  for (int32_t m : nl.hard_macros) gm.Place(m, pc->x(m), pc->y(m), pc->orientation(m));
  std::optional<ForceDirectedPlacer> fd;
  if (o.sa_fd_every_steps > 0 && !nl.soft_macros.empty()) fd.emplace(nl, s);
  std::vector<double> probs = o.sa_action_probs;
  if (probs.size() != 5) throw ConfigError("sa: action probabilities need 5 values (swap shift mirror move shuffle)");
  std::discrete_distribution<int> action_kind(probs.begin(), probs.end());
  std::uniform_int_distribution<int32_t> pick(0, n - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int per_step = o.sa_actions_per_step > 0 ? o.sa_actions_per_step : 2 * n;
  const std::vector<int32_t>& soft = nl.soft_macros;
  const double soft_prob = soft.empty() ? 0.0 : o.sa_soft_move_prob;
  if (!(soft_prob >= 0 && soft_prob <= 1)) throw ConfigError("sa: soft_move_prob must be in [0, 1]");
  if (!(o.sa_soft_move_cells > 0) || !std::isfinite(o.sa_soft_move_cells))
    throw ConfigError("sa: soft_move_cells must be > 0");
  std::uniform_int_distribution<int32_t> pick_soft(0, std::max<int32_t>(0, static_cast<int32_t>(soft.size()) - 1));
  std::uniform_real_distribution<double> soft_step(-o.sa_soft_move_cells, o.sa_soft_move_cells);
  const double gw = s.canvas_width / s.cols, gh = s.canvas_height / s.rows;
  std::vector<uint8_t> mask(static_cast<size_t>(s.cols) * s.rows);
  double cur = pc->Cost().proxy_cost;
  run->current_ = cur;
  const double log_ratio = std::log(o.sa_t_min / o.sa_t_max);
  int64_t step = 0;
  // Moves several macros to new centres; false (and nothing changed) if one is illegal.
  std::vector<int32_t> ms;
  std::vector<std::pair<double, double>> from, to;
  auto relocate = [&]() -> bool {
    for (int32_t m : ms) gm.Unplace(m);
    size_t k = 0;
    for (; k < ms.size(); ++k) {
      if (!gm.IsLegal(ms[k], to[k].first, to[k].second, pc->orientation(ms[k]))) break;
      gm.Place(ms[k], to[k].first, to[k].second, pc->orientation(ms[k]));
    }
    if (k < ms.size()) {
      for (size_t j = 0; j < k; ++j) gm.Unplace(ms[j]);
      for (size_t j = 0; j < ms.size(); ++j) gm.Place(ms[j], from[j].first, from[j].second, pc->orientation(ms[j]));
      return false;
    }
    for (size_t j = 0; j < ms.size(); ++j) pc->MoveNode(ms[j], to[j].first, to[j].second);
    return true;
  };
  auto undo_relocate = [&]() {
    for (int32_t m : ms) gm.Unplace(m);
    for (size_t j = 0; j < ms.size(); ++j) {
      gm.Place(ms[j], from[j].first, from[j].second, pc->orientation(ms[j]));
      pc->MoveNode(ms[j], from[j].first, from[j].second);
    }
  };
  while (!run->Over()) {
    const double t = o.sa_t_max * std::exp(log_ratio * std::min(1.0, run->Elapsed() / o.seconds));
    for (int i = 0; i < per_step && !run->Over(); ++i) {
      if (soft_prob > 0 && unit(rng) < soft_prob) {
        // A soft macro by a few cells (continuous), its rectangle kept inside the canvas.
        const int32_t m = soft[pick_soft(rng)];
        const double x0 = pc->x(m), y0 = pc->y(m);
        const double hw = std::min(nl.width[m], s.canvas_width) / 2, hh = std::min(nl.height[m], s.canvas_height) / 2;
        const double x1 = std::clamp(x0 + soft_step(rng) * gw, hw, s.canvas_width - hw);
        const double y1 = std::clamp(y0 + soft_step(rng) * gh, hh, s.canvas_height - hh);
        if (x1 == x0 && y1 == y0) continue;
        pc->MoveNode(m, x1, y1);
        ++run->result().evaluations;
        const CostBreakdown c = pc->Cost();
        if (c.proxy_cost <= cur || unit(rng) < std::exp((cur - c.proxy_cost) / t)) {
          cur = c.proxy_cost;
          ++run->result().accepted;
          run->Offer(*pc, c);
        } else {
          pc->MoveNode(m, x0, y0);
        }
        continue;
      }
      const int kind = action_kind(rng);
      ms.clear();
      from.clear();
      to.clear();
      bool moved = false;
      Orientation old_o = Orientation::kN;
      int32_t mirrored = -1;
      if (kind == 0 || kind == 4) {  // swap two / shuffle four
        const int count = kind == 0 ? 2 : 4;
        if (n < count) continue;
        while (static_cast<int>(ms.size()) < count) {
          const int32_t m = movable[pick(rng)];
          if (std::find(ms.begin(), ms.end(), m) == ms.end()) ms.push_back(m);
        }
        for (int32_t m : ms) from.emplace_back(pc->x(m), pc->y(m));
        to = from;
        if (count == 2) std::swap(to[0], to[1]);
        else std::shuffle(to.begin(), to.end(), rng);
        moved = relocate();
      } else if (kind == 1 || kind == 3) {  // shift to a neighbouring cell / move anywhere legal
        const int32_t m = movable[pick(rng)];
        ms.push_back(m);
        from.emplace_back(pc->x(m), pc->y(m));
        if (kind == 1) {
          static const int dc[4] = {1, -1, 0, 0}, dr[4] = {0, 0, 1, -1};
          const int d = std::uniform_int_distribution<int>(0, 3)(rng);
          to.emplace_back(from[0].first + dc[d] * gw, from[0].second + dr[d] * gh);
        } else {
          gm.Compute(m, mask.data(), pc->orientation(m));
          const int32_t a = UniformLegal(mask, rng);
          if (a < 0) continue;
          to.emplace_back((a % s.cols + 0.5) * gw, (a / s.cols + 0.5) * gh);
        }
        moved = relocate();
      } else {  // mirror: another orientation with the same footprint
        mirrored = movable[pick(rng)];
        old_o = pc->orientation(mirrored);
        static const Orientation same[4] = {Orientation::kN, Orientation::kFN, Orientation::kS, Orientation::kFS};
        static const Orientation swapped[4] = {Orientation::kE, Orientation::kFE, Orientation::kW, Orientation::kFW};
        const Orientation* family = SwapsFootprint(old_o) ? swapped : same;
        Orientation o2 = old_o;
        while (o2 == old_o) o2 = family[std::uniform_int_distribution<int>(0, 3)(rng)];
        pc->SetOrientation(mirrored, o2);
        moved = true;
      }
      if (!moved) continue;
      ++run->result().evaluations;
      const CostBreakdown c = pc->Cost();
      if (c.proxy_cost <= cur || unit(rng) < std::exp((cur - c.proxy_cost) / t)) {
        cur = c.proxy_cost;
        ++run->result().accepted;
        run->Offer(*pc, c);
      } else if (mirrored >= 0) {
        pc->SetOrientation(mirrored, old_o);
      } else {
        undo_relocate();
      }
    }
    ++step;
    if (fd && step % o.sa_fd_every_steps == 0) {
      fd->Run(pc);
      const CostBreakdown c = pc->Cost();
      cur = c.proxy_cost;
      ++run->result().episodes;
      run->Offer(*pc, c);
    }
  }
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
    if (o.sa_init == "snapped") ok = SnapToLegalCells(env->netlist(), env->settings(), env->order(), &pc);
    if (o.sa_init == "input" || o.sa_init == "snapped") ++run.result().episodes;  // the start is a complete placement
    if (ok) {
      run.Offer(pc, pc.Cost());
      Anneal(env, &pc, o, rng, &run);
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
          !SnapToLegalCells(env->netlist(), env->settings(), env->order(), &pc)) {
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
