// mode=refine of the chip environment: the regulator (MaskRegulate-style learned coordinate
// descent; env/chip/chip_env.h, docs/chip_regulator.md). The observation's maps, the cost-change
// maps and the masks are the constructive environment's (chip_env.cc); what differs is where an
// episode starts (a complete placement), which macro is current (the order, cyclically) and what
// a step does (moves it; the reward is the exact cost change).
#include <algorithm>
#include <cmath>

#include "datasets/util/errors.h"
#include "env/chip/chip_env.h"
#include "env/chip/chip_greedy.h"

namespace placerl::env {

using namespace placerl::chip;

bool SnapHardMacrosToLegalCells(const Netlist& nl, const PlacementSettings& s, const std::vector<int32_t>& order,
                                ProxyCost* pc, int32_t* which) {
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
      if (best < 0 || d < best_d) best = a, best_d = d;
    }
    if (best < 0) {
      if (which) *which = m;
      return false;
    }
    const double x = gm.CellCentreX(best % s.cols), y = gm.CellCentreY(best / s.cols);
    gm.Place(m, x, y, pc->orientation(m));
    if (x != pc->x(m) || y != pc->y(m)) pc->MoveNode(m, x, y);
  }
  return true;
}

int32_t ChipEnv::CellOf(int32_t m) const {
  const PlacementSettings& s = inst_->design.settings;
  const int32_t col = std::clamp(static_cast<int32_t>(std::floor(cost_->x(m) / (s.canvas_width / s.cols))), 0, s.cols - 1);
  const int32_t row = std::clamp(static_cast<int32_t>(std::floor(cost_->y(m) / (s.canvas_height / s.rows))), 0, s.rows - 1);
  return row * s.cols + col;
}

void ChipEnv::BuildRefineStart() {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  refine_steps_ = opt_.steps > 0 ? opt_.steps : static_cast<int32_t>(order_.size());
  std::shared_ptr<ProxyCost> pc;
  if (opt_.start == RefineStart::kGreedy) {
    // The greedy baseline's deterministic pass (search/chip/baselines.cc GreedyEpisode with
    // top_k 1): each macro onto the legal cell of least proxy cost (ties: the lowest cell), the
    // soft macros then placed as a constructive episode end with CT's full schedule does.
    ChipEnvOptions o = opt_;
    o.mode = ChipMode::kConstructive;
    o.start = RefineStart::kGreedy;
    o.episode_start_best = o.episode_result_best = false;
    o.steps = 0;
    o.reward_scale = 1.0;
    o.episode_end_fd = false;
    o.maps = false;
    o.fd_steps_scale = 1.0;
    o.reward = ChipReward::kSparse;
    ChipEnv g(inst_, o);
    std::vector<std::pair<double, int32_t>> scored;
    while (!g.done()) {
      ScoreLegalCells(g, &scored);
      const int32_t best = scored.empty() ? -1 : std::min_element(scored.begin(), scored.end())->second;
      if (g.Step(best).infeasible)
        throw ConfigError("chip: start=greedy: the greedy pass found no legal cell for hard macro '" +
                          nl.name[g.order_[g.state_.step]] + "'");
    }
    pc = std::make_shared<ProxyCost>(g.cost());
  } else {
    pc = std::make_shared<ProxyCost>(*pristine_);
    int32_t which = -1;
    if (!SnapHardMacrosToLegalCells(nl, s, order_, pc.get(), &which))
      throw ConfigError("chip: start=input: hard macro '" + nl.name[which] +
                        "' finds no free legal cell (the others snapped to the cells nearest their input centres)");
  }
  const CostBreakdown c = pc->Cost();
  start_ = pc;
  start_cost_ = best_cost_ = c.proxy_cost;
  tracked_ = order_;
  if (opt_.episode_end_fd && !nl.soft_macros.empty()) {
    tracked_.insert(tracked_.end(), nl.soft_macros.begin(), nl.soft_macros.end());
    ForceDirectedOptions fo;  // CT's schedule from where the soft macros stand (as CD)
    fo.use_current_loc = true;
    fd_.emplace(nl, s, fo);
  }
  best_xy_.resize(2 * tracked_.size());
  for (size_t i = 0; i < tracked_.size(); ++i) best_xy_[2 * i] = pc->x(tracked_[i]), best_xy_[2 * i + 1] = pc->y(tracked_[i]);
}

void ChipEnv::RestoreTracked(const std::vector<double>& xy) {
  for (size_t i = 0; i < tracked_.size(); ++i) {
    const int32_t m = tracked_[i];
    if (cost_->x(m) != xy[2 * i] || cost_->y(m) != xy[2 * i + 1]) cost_->MoveNode(m, xy[2 * i], xy[2 * i + 1]);
  }
}

void ChipEnv::EpisodeEndFd() {
  if (!fd_) return;
  const Netlist& nl = inst_->design.netlist;
  const double before = cost_->Cost().proxy_cost;
  soft_xy_.resize(2 * nl.soft_macros.size());
  for (size_t k = 0; k < nl.soft_macros.size(); ++k)
    soft_xy_[2 * k] = cost_->x(nl.soft_macros[k]), soft_xy_[2 * k + 1] = cost_->y(nl.soft_macros[k]);
  fd_->Run(&*cost_);
  if (cost_->Cost().proxy_cost <= before) return;
  for (size_t k = 0; k < nl.soft_macros.size(); ++k) {  // worse: undone
    const int32_t m = nl.soft_macros[k];
    if (cost_->x(m) != soft_xy_[2 * k] || cost_->y(m) != soft_xy_[2 * k + 1])
      cost_->MoveNode(m, soft_xy_[2 * k], soft_xy_[2 * k + 1]);
  }
}

void ChipEnv::RecordBest(double cost, std::vector<double>* xy, double* best) {
  if (!(cost < *best)) return;
  *best = cost;
  xy->resize(2 * tracked_.size());
  for (size_t i = 0; i < tracked_.size(); ++i) (*xy)[2 * i] = cost_->x(tracked_[i]), (*xy)[2 * i + 1] = cost_->y(tracked_[i]);
}

void ChipEnv::MoveHardMacro(int32_t m, double x, double y) {
  cost_->MoveNode(m, x, y);
  if (mask_) mask_->Place(m, x, y, inst_->design.netlist.orientation[m]);
  const PlacementSettings& s = inst_->design.settings;
  const double norm = s.canvas_width + s.canvas_height;
  float* f = &state_.node_dynamic[static_cast<size_t>(graph_node_[m]) * 3];
  f[0] = static_cast<float>(x / norm);
  f[1] = static_cast<float>(y / norm);
}

void ChipEnv::ResetRefine(uint64_t seed) {
  cost_.emplace(*start_);
  if (opt_.episode_start_best) RestoreTracked(best_xy_);  // the best this copy has reached (the start until it improves)
  const uint64_t n = order_.size();
  refine_first_ = static_cast<size_t>(((seed % n) * (static_cast<uint64_t>(refine_steps_) % n)) % n);
  const CostBreakdown c = BeginEpisode(static_cast<double>(order_.size()));
  ep_best_cost_ = INFINITY;
  if (opt_.episode_result_best) RecordBest(c.proxy_cost, &ep_best_xy_, &ep_best_cost_);
  RebuildRefineState();
  FillMaps();
}

void ChipEnv::RebuildRefineState() {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const double norm = s.canvas_width + s.canvas_height;
  if (!mask_) mask_.emplace(nl, s);
  mask_->Clear();
  for (int32_t m : nl.hard_macros) mask_->Place(m, cost_->x(m), cost_->y(m), nl.orientation[m]);
  const int32_t cur = done_ ? -1 : order_[OrderIndex()];
  std::fill(occupancy_.begin(), occupancy_.end(), 0.0);
  for (int32_t m : nl.hard_macros)
    if (m != cur) AddOccupancy(m, cost_->x(m), cost_->y(m));
  occupancy_excluded_ = cur;
  for (int32_t m : nl.macros) {
    float* f = &state_.node_dynamic[static_cast<size_t>(graph_node_[m]) * 3];
    f[0] = static_cast<float>(cost_->x(m) / norm);
    f[1] = static_cast<float>(cost_->y(m) / norm);
    f[2] = 1.f;
  }
  SetClusterFeatures();
  if (done_) {
    state_.current_node = -1;
    std::fill(state_.action_mask.begin(), state_.action_mask.end(), 0);
  } else {
    state_.current_node = graph_node_[cur];
    mask_->Compute(cur, state_.action_mask.data(), nl.orientation[cur]);
  }
}

void ChipEnv::PrepareRefineMacro() {
  const Netlist& nl = inst_->design.netlist;
  const int32_t cur = order_[OrderIndex()];
  if (occupancy_excluded_ != cur) {
    if (occupancy_excluded_ >= 0) AddOccupancy(occupancy_excluded_, cost_->x(occupancy_excluded_), cost_->y(occupancy_excluded_));
    AddOccupancy(cur, cost_->x(cur), cost_->y(cur), -1.0);
    occupancy_excluded_ = cur;
  }
  state_.current_node = graph_node_[cur];
  mask_->Compute(cur, state_.action_mask.data(), nl.orientation[cur]);
}

StepResult ChipEnv::StepRefine(int32_t action) {
  if (done_) throw InfeasibleAction("chip: the episode is over");
  const int32_t num = static_cast<int32_t>(state_.action_mask.size());
  const int32_t m = order_[OrderIndex()];
  if (action < 0 || action >= num || !state_.action_mask[action])
    throw InfeasibleAction("chip: cell " + std::to_string(action) + " is not legal for macro " +
                           inst_->design.netlist.name[m]);
  double x, y;
  ActionCentre(action, &x, &y);
  StepResult r;
  if (x != cost_->x(m) || y != cost_->y(m)) MoveHardMacro(m, x, y);  // (its own cell: stays, reward 0)
  CostBreakdown c = cost_->Cost();
  r.reward = opt_.reward_scale * (last_cost_ - c.proxy_cost);
  last_cost_ = c.proxy_cost;
  RecordBest(c.proxy_cost, &best_xy_, &best_cost_);
  if (opt_.episode_result_best) RecordBest(c.proxy_cost, &ep_best_xy_, &ep_best_cost_);
  ++state_.step;
  if (state_.step >= refine_steps_) {
    done_ = true;
    const bool back = opt_.episode_result_best && ep_best_cost_ < last_cost_;
    if (back) RestoreTracked(ep_best_xy_);  // back to the episode's best
    EpisodeEndFd();
    if (back || fd_) {
      c = cost_->Cost();
      r.reward += opt_.reward_scale * (last_cost_ - c.proxy_cost);
      last_cost_ = c.proxy_cost;
      RecordBest(c.proxy_cost, &best_xy_, &best_cost_);
    }
    r.done = true;
    RebuildRefineState();  // (every hard macro in the occupancy; mask all zero)
  } else {
    PrepareRefineMacro();
  }
  SetInfo(c);
  FillMaps();
  return_ += r.reward;
  return r;
}

}  // namespace placerl::env
