#include "env/chip/chip_env.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_map>

#include "datasets/util/errors.h"

namespace placerl::env {

using namespace placerl::chip;

namespace {

const std::vector<std::string> kInfoNames = {"hpwl",          "wirelength_cost", "density_cost",
                                             "congestion_cost", "proxy_cost",    "placed_macros",
                                             "infeasible"};

// CT's ObservationConfig defaults, the normalisers of the metadata features.
constexpr double kMaxNumNodes = 5000, kMaxNumEdges = 70000, kMaxGridSize = 128;

const char* RewardName(ChipReward r) { return r == ChipReward::kDense ? "dense" : "sparse"; }
const char* SoftName(SoftMacroPlacement s) { return s == SoftMacroPlacement::kKeep ? "keep" : "fd"; }

}  // namespace

RefineStart ParseRefineStart(const std::string& s, const std::string& what) {
  if (s == "greedy") return RefineStart::kGreedy;
  if (s == "input") return RefineStart::kInput;
  throw ConfigError(what + " must be greedy or input (got '" + s + "')");
}

bool ParseStartOrBest(const std::string& s, const std::string& other, const std::string& what) {
  if (s == "best") return true;
  if (s == other) return false;
  throw ConfigError(what + " must be " + other + " or best (got '" + s + "')");
}

CostMap ParseCostMap(const std::string& s, const std::string& what) {
  if (s == "wirelength") return CostMap::kWirelength;
  if (s == "proxy") return CostMap::kProxy;
  if (s == "split") return CostMap::kSplit;
  throw ConfigError(what + " must be wirelength, proxy or split (got '" + s + "')");
}

const char* CostMapName(CostMap m) {
  return m == CostMap::kProxy ? "proxy" : m == CostMap::kSplit ? "split" : "wirelength";
}

const char* ChipModeName(ChipMode m) { return m == ChipMode::kRefine ? "refine" : "constructive"; }
const char* RefineStartName(RefineStart s) { return s == RefineStart::kInput ? "input" : "greedy"; }

ChipEnv::ChipEnv(std::shared_ptr<const ChipInstance> instance, const ChipEnvOptions& options)
    : inst_(std::move(instance)), opt_(options) {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  if (!s.has_canvas() || !s.has_grid()) throw ConfigError("chip: settings have no canvas or grid");
  if (!std::isfinite(opt_.infeasible_reward)) throw ConfigError("chip: infeasible_reward must be finite");
  if (!(opt_.fd_steps_scale >= 0.01 && opt_.fd_steps_scale <= 1))
    throw ConfigError("chip: fd_steps_scale must be in [0.01, 1] (got " + std::to_string(opt_.fd_steps_scale) + ")");
  if (!refine() && (opt_.start != RefineStart::kGreedy || opt_.episode_start_best || opt_.episode_result_best ||
                    opt_.steps != 0 || opt_.reward_scale != 1.0 || opt_.episode_end_fd))
    throw ConfigError("chip: start, episode_start, episode_result, steps, reward_scale and episode_end_fd need mode=refine");
  if (opt_.steps < 0 || opt_.steps > 1000000)
    throw ConfigError("chip: steps must be in [0, 1e6] (0 = one pass over the hard macros; got " +
                      std::to_string(opt_.steps) + ")");
  if (!(opt_.reward_scale > 0) || !std::isfinite(opt_.reward_scale))
    throw ConfigError("chip: reward_scale must be a finite number > 0 (got " + std::to_string(opt_.reward_scale) + ")");
  for (int32_t m : nl.hard_macros)
    if (!nl.fixed[m]) order_.push_back(m);
  if (order_.empty()) throw ConfigError("chip: the netlist has no movable hard macro to place");
  // Descending area, ties in netlist order (CT: Python's stable sort).
  std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    return nl.width[a] * nl.height[a] > nl.width[b] * nl.height[b];
  });
  pristine_ = std::make_shared<const ProxyCost>(nl, s, opt_.weights);
  const_cast<ProxyCost&>(*pristine_).Cost();  // cost the input once; copies start from it
  BuildStaticGraph();
  state_.node_dynamic_dim = 3;
  state_.node_dynamic_names = {"x", "y", "placed"};
  state_.node_dynamic.assign(static_cast<size_t>(graph_->num_nodes) * 3, 0.f);
  state_.action_mask.assign(static_cast<size_t>(s.cols) * s.rows, 0);
  if (opt_.maps) {
    state_.action_feature_names = {"occupancy", "density", "congestion_v", "congestion_h",
                                   opt_.cost_map == CostMap::kProxy ? "proxy_cost_change" : "wirelength_change"};
    if (opt_.cost_map == CostMap::kSplit) {
      state_.action_feature_names.push_back("density_change");
      state_.action_feature_names.push_back("congestion_change");
    }
    if (refine()) {  // where the current macro stands (its "stay" action)
      current_cell_channel_ = state_.action_feature_names.size() * static_cast<size_t>(s.cols) * s.rows;
      state_.action_feature_names.push_back("current_cell");
    }
    state_.action_feature_dim = static_cast<int32_t>(state_.action_feature_names.size());
    state_.action_features.assign(static_cast<size_t>(state_.action_feature_dim) * s.cols * s.rows, 0.f);
    occupancy_.assign(static_cast<size_t>(s.cols) * s.rows, 0.0);
    wl_col_.assign(s.cols, 0.0);
    wl_row_.assign(s.rows, 0.0);
  }
  info_.assign(kInfoNames.size(), 0.0);
  if (refine()) BuildRefineStart();
  Reset(0);
  if (done_)
    throw ConfigError("chip: macro " + nl.name[order_[0]] + " fits on no grid cell (" +
                      std::to_string(s.cols) + " x " + std::to_string(s.rows) + " grid, canvas " +
                      std::to_string(s.canvas_width) + " x " + std::to_string(s.canvas_height) + ")");
}

const std::vector<std::string>& ChipEnv::info_names() const { return kInfoNames; }

env::ActionSpec ChipEnv::action_spec() const {
  return ActionSpec::Grid(inst_->design.settings.cols, inst_->design.settings.rows);
}

std::string ChipEnv::name() const {
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof(buf), "%g", v);
    return std::string(buf);
  };
  EnvParams p;
  p.GetString("netlist", inst_->netlist_path);
  p.GetString("plc", inst_->plc_path);
  if (inst_->netlist_path.empty()) p.GetInt("seed", static_cast<int64_t>(inst_->synthetic_seed));
  p.GetString("weights", num(opt_.weights.wirelength) + "," + num(opt_.weights.density) + "," +
                             num(opt_.weights.congestion));
  p.GetString("reward", RewardName(opt_.reward));
  p.GetString("soft", SoftName(opt_.soft));
  p.GetString("infeasible_reward", num(opt_.infeasible_reward));
  if (opt_.fd_steps_scale != 1.0) p.GetString("fd_steps_scale", num(opt_.fd_steps_scale));  // default: names unchanged
  p.GetBool("maps", opt_.maps);
  if (opt_.cost_map != CostMap::kWirelength) p.GetString("cost_map", CostMapName(opt_.cost_map));  // default: names unchanged
  p.GetString("off_canvas_nets", OffCanvasNetsName(opt_.weights.off_canvas_nets));
  if (refine()) {  // the constructive default: names unchanged
    p.GetString("mode", ChipModeName(opt_.mode));
    p.GetString("start", RefineStartName(opt_.start));
    p.GetString("episode_start", opt_.episode_start_best ? "best" : "start");
    p.GetString("episode_result", opt_.episode_result_best ? "best" : "last");
    p.GetInt("steps", opt_.steps);
    p.GetString("reward_scale", num(opt_.reward_scale));
    if (opt_.episode_end_fd) p.GetBool("episode_end_fd", true);  // default: names unchanged
  }
  return p.Canonical("chip");
}

std::unique_ptr<Environment> ChipEnv::Make(EnvParams& p) {
  auto inst = std::make_shared<ChipInstance>();
  inst->netlist_path = p.GetString("netlist", "");
  inst->plc_path = p.GetString("plc", "");
  if (inst->netlist_path.empty()) inst->synthetic_seed = static_cast<uint64_t>(p.GetInt("seed", 1));
  ChipEnvOptions o;
  o.weights = ParseCostWeights(p.GetString("weights", "1,0.5,0.5"), "chip: weights");
  const std::string reward = p.GetString("reward", "sparse");
  if (reward == "sparse") o.reward = ChipReward::kSparse;
  else if (reward == "dense") o.reward = ChipReward::kDense;
  else throw ConfigError("chip: reward must be sparse or dense, got '" + reward + "'");
  const std::string soft = p.GetString("soft", "fd");
  if (soft == "fd") o.soft = SoftMacroPlacement::kForceDirected;
  else if (soft == "keep") o.soft = SoftMacroPlacement::kKeep;
  else throw ConfigError("chip: soft must be fd or keep, got '" + soft + "'");
  o.infeasible_reward = p.GetDouble("infeasible_reward", o.infeasible_reward);
  o.fd_steps_scale = p.GetDouble("fd_steps_scale", o.fd_steps_scale);
  o.maps = p.GetBool("maps", o.maps);
  o.cost_map = ParseCostMap(p.GetString("cost_map", "wirelength"));
  o.weights.off_canvas_nets = ParseOffCanvasNets(p.GetString("off_canvas_nets", "clamp"), "chip: off_canvas_nets");
  const std::string mode = p.GetString("mode", "constructive");
  if (mode == "refine") o.mode = ChipMode::kRefine;
  else if (mode != "constructive") throw ConfigError("chip: mode must be constructive or refine, got '" + mode + "'");
  o.start = ParseRefineStart(p.GetString("start", "greedy"), "chip: start");
  o.episode_start_best = ParseStartOrBest(p.GetString("episode_start", "start"), "start", "chip: episode_start");
  o.episode_result_best = ParseStartOrBest(p.GetString("episode_result", "last"), "last", "chip: episode_result");
  o.steps = static_cast<int32_t>(std::clamp<int64_t>(p.GetInt("steps", 0), -1, 1000001));
  o.reward_scale = p.GetDouble("reward_scale", 1.0);
  o.episode_end_fd = p.GetBool("episode_end_fd", false);
  if (o.mode != ChipMode::kRefine)
    for (const char* k : {"start", "episode_start", "episode_result", "steps", "reward_scale", "episode_end_fd"})
      if (p.Has(k)) throw ConfigError(std::string("chip: ") + k + " needs mode=refine");
  inst->design = LoadChipDesign(inst->netlist_path, inst->plc_path, inst->synthetic_seed);
  return std::make_unique<ChipEnv>(inst, o);
}

void ChipEnv::BuildStaticGraph() {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const double W = s.canvas_width, H = s.canvas_height, norm = W + H;
  const double gw = W / s.cols, gh = H / s.rows;
  auto g = std::make_shared<StaticGraph>();
  graph_node_.assign(nl.num_nodes(), -1);
  int32_t n = 0;
  for (int32_t m : nl.macros) graph_node_[m] = n++;
  const int32_t num_macros = n;
  // Port clusters: ports of one grid cell (clamped to the grid) become one node.
  std::unordered_map<int64_t, int32_t> cluster_of_cell;
  std::vector<std::pair<double, double>> cluster_xy;
  for (int32_t p : nl.ports) {
    const int col = std::clamp(static_cast<int>(std::floor(nl.x[p] / gw)), 0, s.cols - 1);
    const int row = std::clamp(static_cast<int>(std::floor(nl.y[p] / gh)), 0, s.rows - 1);
    const int64_t key = static_cast<int64_t>(row) * s.cols + col;
    auto it = cluster_of_cell.find(key);
    if (it == cluster_of_cell.end()) {
      it = cluster_of_cell.emplace(key, n++).first;
      // The cell's boundary point: canvas edges for edge cells, the centre otherwise.
      const double x = col == 0 ? 0.0 : col == s.cols - 1 ? W : (col + 0.5) * gw;
      const double y = row == 0 ? 0.0 : row == s.rows - 1 ? H : (row + 0.5) * gh;
      cluster_xy.emplace_back(x, y);
    }
    graph_node_[p] = it->second;
  }
  g->num_nodes = n;
  g->node_feature_dim = 5;
  g->node_feature_names = {"width", "height", "is_hard_macro", "is_soft_macro", "is_port_cluster"};
  g->node_features.assign(static_cast<size_t>(n) * 5, 0.f);
  g->node_names.resize(n);
  for (int32_t m : nl.macros) {
    float* f = &g->node_features[static_cast<size_t>(graph_node_[m]) * 5];
    const bool hard = nl.type[m] == NodeType::kHardMacro;
    if (hard) {
      f[0] = static_cast<float>(nl.width[m] / norm);
      f[1] = static_cast<float>(nl.height[m] / norm);
    }
    f[2] = hard ? 1.f : 0.f;
    f[3] = hard ? 0.f : 1.f;
    g->node_names[graph_node_[m]] = nl.name[m];
  }
  for (int32_t c = num_macros; c < n; ++c) {
    g->node_features[static_cast<size_t>(c) * 5 + 4] = 1.f;
    g->node_names[c] = "port_cluster_" + std::to_string(c - num_macros);
  }
  // Edges: driver → sink connections between graph nodes, weighted by the net's weight.
  auto owner = [&](int32_t pin) -> int32_t {
    const int32_t m = nl.parent[pin];
    return m >= 0 ? graph_node_[m] : graph_node_[pin];
  };
  std::unordered_map<int64_t, double> adj;
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    const int32_t a = owner(nl.net_pins[nl.net_start[k]]);
    if (a < 0) continue;
    for (int32_t q = nl.net_start[k] + 1; q < nl.net_start[k + 1]; ++q) {
      const int32_t b = owner(nl.net_pins[q]);
      if (b < 0 || b == a) continue;
      adj[static_cast<int64_t>(std::min(a, b)) * n + std::max(a, b)] += nl.net_weight[k];
    }
  }
  std::vector<std::pair<int64_t, double>> edges(adj.begin(), adj.end());
  std::sort(edges.begin(), edges.end());
  double total = 0;
  for (const auto& e : edges) total += e.second;
  const double mean = edges.empty() ? 1.0 : total / edges.size();
  for (const auto& e : edges) {
    g->edge_src.push_back(static_cast<int32_t>(e.first / n));
    g->edge_dst.push_back(static_cast<int32_t>(e.first % n));
    g->edge_weight.push_back(static_cast<float>(e.second / mean));
  }
  // CT's 12 metadata features (§1.7), including its total_macro_vertical_routes_k quirk
  // (it uses the horizontal allocation).
  g->metadata = {
      static_cast<float>(total / kMaxNumEdges),
      static_cast<float>(nl.hard_macros.size() / kMaxNumNodes),
      static_cast<float>(nl.soft_macros.size() / kMaxNumNodes),
      static_cast<float>((n - num_macros) / kMaxNumNodes),
      static_cast<float>(s.h_routes_per_micron * H / 1000),
      static_cast<float>(s.v_routes_per_micron * W / 1000),
      static_cast<float>(s.h_macro_alloc * H / 1000),
      static_cast<float>(s.h_macro_alloc * W / 1000),
      static_cast<float>(s.cols / kMaxGridSize),
      static_cast<float>(s.rows / kMaxGridSize),
      static_cast<float>(W / norm),
      static_cast<float>(H / norm)};
  g->metadata_names = {"normalized_num_edges",         "normalized_num_hard_macros",
                       "normalized_num_soft_macros",   "normalized_num_port_clusters",
                       "total_horizontal_routes_k",    "total_vertical_routes_k",
                       "total_macro_horizontal_routes_k", "total_macro_vertical_routes_k",
                       "grid_cols",                    "grid_rows",
                       "canvas_width",                 "canvas_height"};
  g->Validate();
  graph_ = g;
  // Remember the port-cluster positions in the dynamic template (they never move).
  state_.node_dynamic.assign(static_cast<size_t>(n) * 3, 0.f);
  cluster_xy_.assign(cluster_xy.begin(), cluster_xy.end());
}

void ChipEnv::Reset(uint64_t seed) {
  if (refine()) {
    ResetRefine(seed);
    return;
  }
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const double norm = s.canvas_width + s.canvas_height;
  cost_.emplace(*pristine_);
  if (!mask_) mask_.emplace(nl, s);
  mask_->Clear();
  std::fill(occupancy_.begin(), occupancy_.end(), 0.0);
  for (int32_t m : nl.hard_macros)
    if (nl.fixed[m]) {
      mask_->Place(m, nl.x[m], nl.y[m], nl.orientation[m]);
      AddOccupancy(m, nl.x[m], nl.y[m]);
    }
  float* d = state_.node_dynamic.data();
  for (int32_t m : nl.macros) {
    float* f = d + static_cast<size_t>(graph_node_[m]) * 3;
    const bool movable_hard = nl.type[m] == NodeType::kHardMacro && !nl.fixed[m];
    f[0] = static_cast<float>((movable_hard ? 0.5 * s.canvas_width : nl.x[m]) / norm);
    f[1] = static_cast<float>((movable_hard ? 0.5 * s.canvas_height : nl.y[m]) / norm);
    f[2] = movable_hard ? 0.f : 1.f;
  }
  SetClusterFeatures();
  BeginEpisode(0);
  RefreshMask();
  if (!done_) state_.current_node = graph_node_[order_[0]];
  FillMaps();
}

void ChipEnv::SetClusterFeatures() {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const double norm = s.canvas_width + s.canvas_height;
  const size_t num_macros = nl.macros.size();
  for (size_t c = 0; c < cluster_xy_.size(); ++c) {
    float* f = &state_.node_dynamic[(num_macros + c) * 3];
    f[0] = static_cast<float>(cluster_xy_[c].first / norm);
    f[1] = static_cast<float>(cluster_xy_[c].second / norm);
    f[2] = 1.f;
  }
}

CostBreakdown ChipEnv::BeginEpisode(double placed) {
  state_.step = 0;
  done_ = false;
  return_ = 0;
  const CostBreakdown c = cost_->Cost();
  last_cost_ = c.proxy_cost;
  SetInfo(c);
  info_[5] = placed;
  info_[6] = 0;
  return c;
}

void ChipEnv::SetInfo(const CostBreakdown& c) {
  info_[0] = c.hpwl;
  info_[1] = c.wirelength_cost;
  info_[2] = c.density_cost;
  info_[3] = c.congestion_cost;
  info_[4] = c.proxy_cost;
}

void ChipEnv::RefreshMask() {
  const int32_t m = order_[OrderIndex()];
  const int legal = mask_->Compute(m, state_.action_mask.data(), inst_->design.netlist.orientation[m]);
  if (legal == 0) {
    done_ = true;
    state_.current_node = -1;
    info_[6] = 1;
  } else {
    state_.current_node = graph_node_[m];
  }
}

void ChipEnv::ActionCentre(int32_t action, double* x, double* y) const {
  const PlacementSettings& s = inst_->design.settings;
  const int32_t col = action % s.cols, row = action / s.cols;
  *x = (col + 0.5) * (s.canvas_width / s.cols);
  *y = (row + 0.5) * (s.canvas_height / s.rows);
}

CostBreakdown ChipEnv::PeekCost(int32_t action) {
  if (done_) throw InfeasibleAction("chip: the episode is over");
  const int32_t m = order_[OrderIndex()];
  const double x0 = cost_->x(m), y0 = cost_->y(m);
  double x, y;
  ActionCentre(action, &x, &y);
  cost_->MoveNode(m, x, y);
  const CostBreakdown c = cost_->Cost();
  cost_->MoveNode(m, x0, y0);
  return c;
}

StepResult ChipEnv::Step(int32_t action) {
  if (refine()) return StepRefine(action);
  if (done_) throw InfeasibleAction("chip: the episode is over");
  const int32_t num = static_cast<int32_t>(state_.action_mask.size());
  if (action < 0 || action >= num || !state_.action_mask[action])
    throw InfeasibleAction("chip: cell " + std::to_string(action) + " is not legal for macro " +
                           inst_->design.netlist.name[order_[state_.step]]);
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const int32_t m = order_[state_.step];
  double x, y;
  ActionCentre(action, &x, &y);
  cost_->MoveNode(m, x, y);
  mask_->Place(m, x, y, nl.orientation[m]);
  AddOccupancy(m, x, y);
  float* f = &state_.node_dynamic[static_cast<size_t>(graph_node_[m]) * 3];
  const double norm = s.canvas_width + s.canvas_height;
  f[0] = static_cast<float>(x / norm);
  f[1] = static_cast<float>(y / norm);
  f[2] = 1.f;
  ++state_.step;
  info_[5] = state_.step;
  StepResult r;
  if (opt_.reward == ChipReward::kDense) {
    const CostBreakdown c = cost_->Cost();
    SetInfo(c);
    // The first step also pays the initial cost, so that the return telescopes to −final.
    r.reward = -(c.proxy_cost - last_cost_) - (state_.step == 1 ? last_cost_ : 0.0);
    last_cost_ = c.proxy_cost;
  }
  if (state_.step == static_cast<int32_t>(order_.size())) {
    Finish(&r);
  } else {
    RefreshMask();
    if (done_) {  // no legal cell for the next macro
      r.done = true;
      r.infeasible = true;
      // Dense: cancel what the steps paid so far, so that the return is the penalty.
      r.reward = opt_.reward == ChipReward::kDense ? opt_.infeasible_reward - return_ : opt_.infeasible_reward;
    }
  }
  if (done_) std::fill(state_.action_mask.begin(), state_.action_mask.end(), 0);
  FillMaps();
  return_ += r.reward;
  return r;
}

void ChipEnv::Finish(StepResult* r) {
  done_ = true;
  state_.current_node = -1;
  if (opt_.soft == SoftMacroPlacement::kForceDirected && !inst_->design.netlist.soft_macros.empty()) {
    PlaceSoftMacros();
  }
  const CostBreakdown c = cost_->Cost();
  SetInfo(c);
  if (opt_.reward == ChipReward::kDense) {
    r->reward += -(c.proxy_cost - last_cost_);
    last_cost_ = c.proxy_cost;
  } else {
    r->reward = -c.proxy_cost;
  }
  r->done = true;
}

void ChipEnv::AddOccupancy(int32_t m, double x, double y, double sign) {
  if (!opt_.maps) return;
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const double gw = s.canvas_width / s.cols, gh = s.canvas_height / s.rows;
  double w = nl.width[m], h = nl.height[m];
  const Orientation o = nl.orientation[m];
  if (o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW || o == Orientation::kFW) std::swap(w, h);
  const double x0 = x - w / 2, x1 = x + w / 2, y0 = y - h / 2, y1 = y + h / 2;
  const int c0 = std::max(0, static_cast<int>(std::floor(x0 / gw))), c1 = std::min(s.cols - 1, static_cast<int>(std::floor(x1 / gw)));
  const int r0 = std::max(0, static_cast<int>(std::floor(y0 / gh))), r1 = std::min(s.rows - 1, static_cast<int>(std::floor(y1 / gh)));
  for (int r = r0; r <= r1; ++r) {
    const double oy = std::min(y1, (r + 1) * gh) - std::max(y0, r * gh);
    if (oy <= 0) continue;
    for (int c = c0; c <= c1; ++c) {
      const double ox = std::min(x1, (c + 1) * gw) - std::max(x0, c * gw);
      if (ox > 0) occupancy_[static_cast<size_t>(r) * s.cols + c] += sign * ox * oy;
    }
  }
}

double ChipEnv::WirelengthByColumnAndRow(int32_t m) {
  const Netlist& nl = inst_->design.netlist;
  const PlacementSettings& s = inst_->design.settings;
  const ProxyCost& pc = *cost_;
  const double gw = s.canvas_width / s.cols, gh = s.canvas_height / s.rows;
  wl_col_.resize(s.cols);
  wl_row_.resize(s.rows);
  std::fill(wl_col_.begin(), wl_col_.end(), 0.0);
  std::fill(wl_row_.begin(), wl_row_.end(), 0.0);
  const Orientation om = pc.orientation(m);
  const double xm = pc.x(m), ym = pc.y(m);
  double now = 0;
  for (int32_t q = nl.node_net_start[m]; q < nl.node_net_start[m + 1]; ++q) {
    const int32_t k = nl.node_nets[q];
    // Bounding box of the net's other pins, and the extent of m's own pins around its centre.
    double xlo = 1e300, xhi = -1e300, ylo = 1e300, yhi = -1e300;
    double dxlo = 1e300, dxhi = -1e300, dylo = 1e300, dyhi = -1e300;
    for (int32_t t = nl.net_start[k]; t < nl.net_start[k + 1]; ++t) {
      const int32_t pin = nl.net_pins[t];
      const int32_t owner = nl.parent[pin];
      if (owner == m || pin == m) {
        double dx = 0, dy = 0;
        if (owner == m) OrientOffset(om, nl.pin_dx[pin], nl.pin_dy[pin], &dx, &dy);
        dxlo = std::min(dxlo, dx), dxhi = std::max(dxhi, dx);
        dylo = std::min(dylo, dy), dyhi = std::max(dyhi, dy);
        continue;
      }
      double px, py;
      if (owner < 0) {
        px = pc.x(pin), py = pc.y(pin);
      } else {
        double dx = 0, dy = 0;
        OrientOffset(pc.orientation(owner), nl.pin_dx[pin], nl.pin_dy[pin], &dx, &dy);
        px = pc.x(owner) + dx, py = pc.y(owner) + dy;
      }
      xlo = std::min(xlo, px), xhi = std::max(xhi, px);
      ylo = std::min(ylo, py), yhi = std::max(yhi, py);
    }
    if (dxlo > dxhi) continue;  // (cannot happen: m touches the net)
    const double w = nl.net_weight[k];
    now += w * ((std::max(xhi, xm + dxhi) - std::min(xlo, xm + dxlo)) +
                (std::max(yhi, ym + dyhi) - std::min(ylo, ym + dylo)));
    for (int c = 0; c < s.cols; ++c) {
      const double cx = (c + 0.5) * gw;
      wl_col_[c] += w * (std::max(xhi, cx + dxhi) - std::min(xlo, cx + dxlo));
    }
    for (int r = 0; r < s.rows; ++r) {
      const double cy = (r + 0.5) * gh;
      wl_row_[r] += w * (std::max(yhi, cy + dyhi) - std::min(ylo, cy + dylo));
    }
  }
  return now;
}

void ChipEnv::WirelengthByCell(int32_t m, float* out) {
  WirelengthByColumnAndRow(m);
  ScaleWirelength(out);
}

void ChipEnv::ScaleWirelength(float* out) const {
  const PlacementSettings& s = inst_->design.settings;
  double lo = 1e300, hi = -1e300;
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c) {
      const double v = wl_col_[c] + wl_row_[r];
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
  const double scale = hi > lo ? 1.0 / (hi - lo) : 0.0;
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c)
      out[static_cast<size_t>(r) * s.cols + c] = static_cast<float>((wl_col_[c] + wl_row_[r] - lo) * scale);
}

void ChipEnv::FillMaps() {
  if (!opt_.maps) return;
  const PlacementSettings& s = inst_->design.settings;
  const size_t n = static_cast<size_t>(s.cols) * s.rows;
  float* f = state_.action_features.data();
  const double inv_cell = 1.0 / ((s.canvas_width / s.cols) * (s.canvas_height / s.rows));
  for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(occupancy_[i] * inv_cell);
  cost_->Cost();  // brings the maps up to date (incremental)
  cost_->DensityMapInto(f + n);
  cost_->CongestionMapsInto(f + 2 * n, f + 3 * n);
  if (done_) {
    std::fill(f + 4 * n, f + state_.action_features.size(), 0.f);
  } else if (opt_.cost_map == CostMap::kProxy) {
    ProxyCostByCell(f + 4 * n);
  } else if (opt_.cost_map == CostMap::kSplit) {
    SplitCostByCell(f + 4 * n);
  } else {
    WirelengthByCell(order_[OrderIndex()], f + 4 * n);
  }
  if (current_cell_channel_ > 0 && !done_) {  // (done: zero, as every change map)
    std::fill(f + current_cell_channel_, f + current_cell_channel_ + n, 0.f);
    f[current_cell_channel_ + CellOf(order_[OrderIndex()])] = 1.f;
  }
}

void ChipEnv::TopK::ComputeTop(size_t want, size_t extra) {
  const size_t n = val.size();
  k = std::max<size_t>(1, std::min(want, n));
  const size_t m = std::min(n, k + extra);
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  auto greater = [this](int32_t a, int32_t b) { return val[a] > val[b] || (val[a] == val[b] && a < b); };
  std::nth_element(order.begin(), order.begin() + (m - 1), order.end(), greater);
  std::sort(order.begin(), order.begin() + m, greater);
  if (rank.size() != n) {
    rank.assign(n, -1);
    stamp.assign(n, 0);
  } else {
    for (int32_t e : top_elem) rank[e] = -1;
  }
  top.resize(m);
  top_elem.resize(m);
  top_sum = 0;
  for (size_t j = 0; j < m; ++j) {
    top_elem[j] = order[j];
    top[j] = val[order[j]];
    rank[order[j]] = static_cast<int32_t>(j);
    if (j < k) top_sum += top[j];
  }
}

// The k largest of X ∪ N, where X = the values of the elements not increased and N = the new
// values of the increased ones: the k largest of X are the top list without the increased
// members, refilled from the positions after k; then the N values in descending order displace
// the smallest of those in ascending order while they are larger (a merge from the bottom).
bool ChipEnv::TopK::MeanWithIncreases(const std::pair<int32_t, double>* inc, size_t n, double* mean) {
  ++cur_stamp;
  entering.clear();
  double removed = 0;
  size_t removed_count = 0;
  for (size_t q = 0; q < n; ++q) {
    const int32_t e = inc[q].first;
    const int32_t r = rank[e];
    if (r >= 0) {
      stamp[e] = cur_stamp;
      if (static_cast<size_t>(r) < k) removed += top[r], ++removed_count;
    }
    entering.push_back(val[e] + inc[q].second);
  }
  // X's k largest: the top k without the increased members, plus as many after position k.
  double sum = top_sum - removed;
  int64_t last = static_cast<int64_t>(k) - 1;  // position of X's k-th largest in the top list
  const int64_t m = static_cast<int64_t>(top.size());
  for (size_t taken = 0; taken < removed_count;) {
    if (++last >= m) return false;  // the list is too short (the caller computes from scratch)
    if (stamp[top_elem[last]] == cur_stamp) continue;
    sum += top[last];
    ++taken;
  }
  while (last >= 0 && stamp[top_elem[last]] == cur_stamp) --last;
  if (last < 0) return false;
  const double kth = top[last];
  size_t cnt = 0;
  for (double v : entering)
    if (v > kth) entering[cnt++] = v;  // the others cannot enter
  entering.resize(cnt);
  std::sort(entering.begin(), entering.end(), std::greater<double>());
  int64_t pos = last;
  for (double v : entering) {
    while (pos >= 0 && stamp[top_elem[pos]] == cur_stamp) --pos;
    if (pos < 0 || !(v > top[pos])) break;
    sum += v - top[pos];
    --pos;
  }
  *mean = sum / static_cast<double>(k);
  return true;
}

void ChipEnv::CostChangeByCell(std::vector<double>* dwl, std::vector<double>* dden, std::vector<double>* dcong) {
  dwl->clear();
  dden->clear();
  dcong->clear();
  if (done_) return;
  const PlacementSettings& s = inst_->design.settings;
  const size_t n = static_cast<size_t>(s.cols) * s.rows;
  dwl->assign(n, 0.0);
  dden->assign(n, 0.0);
  dcong->assign(n, 0.0);
  const int32_t m = order_[OrderIndex()];
  const CostBreakdown now = cost_->Cost();  // (incremental) brings the values up to date
  // Wirelength: exact, separable per column and row.
  const double hpwl_now = WirelengthByColumnAndRow(m);
  const double wl_norm = (s.canvas_width + s.canvas_height) * cost_->net_weight_sum();
  // Density and blockage values with m taken out of the cells it covers now.
  const double inv_area = 1.0 / (cost_->grid_width() * cost_->grid_height());
  const double iv = 1.0 / cost_->grid_v_routes(), ih = 1.0 / cost_->grid_h_routes();
  TopK& D = den_topk_;
  TopK& C = cong_topk_;
  D.val.resize(n);
  C.val.resize(2 * n);
  cost_->DensityValuesInto(D.val.data());
  cost_->CongestionValuesInto(C.val.data(), C.val.data() + n);
  cost_->FootprintAt(m, cost_->x(m), cost_->y(m), &footprint_);
  for (const auto& f : footprint_) {
    D.val[f.cell] -= f.area * inv_area;
    C.val[f.cell] -= f.v_blockage * iv;
    C.val[n + f.cell] -= f.h_blockage * ih;
  }
  // Cost(): density = 0.5 · mean of the floor(10 %) largest (fewer than 10 cells: of the occupied
  // ones); congestion = mean of the floor(5 % of 2n) largest of V ++ H (at least 1).
  // The top lists reach beyond k by the most cells a footprint at a cell centre can cover.
  const Netlist& nl = inst_->design.netlist;
  const size_t fp = static_cast<size_t>((std::floor(nl.width[m] / cost_->grid_width()) + 2) *
                                        (std::floor(nl.height[m] / cost_->grid_height()) + 2));
  const bool small = n < 10;
  if (!small) D.ComputeTop(static_cast<size_t>(std::floor(n * 0.1)), fp);
  const size_t kc = static_cast<size_t>(std::floor(2 * n * 0.05));
  C.ComputeTop(kc == 0 ? 1 : kc, 2 * fp);
  // A mean of the k largest after arbitrary changes, from scratch (tiny grids; negative changes).
  auto from_scratch = [&](const TopK& t, size_t k, bool occupied_mean) {
    std::vector<double> v = t.val;
    for (const auto& [e, d] : inc_) v[e] += d;
    if (occupied_mean) {
      double sum = 0;
      size_t cnt = 0;
      for (double d : v)
        if (std::abs(d) > 1e-12) sum += d, ++cnt;
      return cnt ? sum / cnt : 0.0;
    }
    std::sort(v.begin(), v.end(), std::greater<double>());
    double sum = 0;
    for (size_t j = 0; j < k; ++j) sum += v[j];
    return sum / static_cast<double>(k);
  };
  const double gw = s.canvas_width / s.cols, gh = s.canvas_height / s.rows;
  for (int32_t r = 0; r < s.rows; ++r) {
    for (int32_t c = 0; c < s.cols; ++c) {
      const size_t a = static_cast<size_t>(r) * s.cols + c;
      if (!state_.action_mask[a]) continue;
      (*dwl)[a] = (wl_col_[c] + wl_row_[r] - hpwl_now) / wl_norm;
      cost_->FootprintAt(m, (c + 0.5) * gw, (r + 0.5) * gh, &footprint_);
      bool negative = false;
      inc_.clear();
      for (const auto& f : footprint_) {
        if (f.area != 0) inc_.emplace_back(f.cell, f.area * inv_area);
        negative |= f.area < 0;
      }
      double den;
      if (small || negative || !D.MeanWithIncreases(inc_.data(), inc_.size(), &den)) den = from_scratch(D, D.k, small);
      (*dden)[a] = 0.5 * den - now.density_cost;
      negative = false;
      inc_.clear();
      for (const auto& f : footprint_) {
        if (f.v_blockage != 0) inc_.emplace_back(f.cell, f.v_blockage * iv);
        if (f.h_blockage != 0) inc_.emplace_back(static_cast<int32_t>(n) + f.cell, f.h_blockage * ih);
        negative |= f.v_blockage < 0 || f.h_blockage < 0;
      }
      double cong;
      if (negative || !C.MeanWithIncreases(inc_.data(), inc_.size(), &cong)) cong = from_scratch(C, C.k, false);
      (*dcong)[a] = cong - now.congestion_cost;
    }
  }
}

namespace {
// Min-max scaling of `v` to [0, 1] over the legal cells (mask 1); illegal cells 1; all legal
// cells equal → 0.
void ScaleOverLegal(const std::vector<double>& v, const std::vector<uint8_t>& mask, float* out) {
  double lo = 1e300, hi = -1e300;
  for (size_t a = 0; a < mask.size(); ++a)
    if (mask[a]) lo = std::min(lo, v[a]), hi = std::max(hi, v[a]);
  const double scale = hi > lo ? 1.0 / (hi - lo) : 0.0;
  for (size_t a = 0; a < mask.size(); ++a) out[a] = mask[a] ? static_cast<float>((v[a] - lo) * scale) : 1.f;
}
}  // namespace

void ChipEnv::ProxyCostByCell(float* out) {
  CostChangeByCell(&dwl_, &dden_, &dcong_);
  const CostWeights& w = opt_.weights;
  for (size_t a = 0; a < dwl_.size(); ++a)  // the weighted change, in place of the wirelength term
    dwl_[a] = w.wirelength * dwl_[a] + w.density * dden_[a] + w.congestion * dcong_[a];
  ScaleOverLegal(dwl_, state_.action_mask, out);
}

void ChipEnv::SplitCostByCell(float* out) {
  CostChangeByCell(&dwl_, &dden_, &dcong_);  // leaves m's wl_col_ / wl_row_ (WirelengthByColumnAndRow)
  const size_t n = state_.action_mask.size();
  ScaleWirelength(out);                      // the wirelength map, as cost_map=wirelength makes it
  ScaleOverLegal(dden_, state_.action_mask, out + n);
  ScaleOverLegal(dcong_, state_.action_mask, out + 2 * n);
}

void ChipEnv::PlaceSoftMacros() {
  const Netlist& nl = inst_->design.netlist;
  if (!fd_) fd_.emplace(nl, inst_->design.settings, EpisodeEndFdOptions());
  fd_->Run(&*cost_);
  const PlacementSettings& s = inst_->design.settings;
  const double norm = s.canvas_width + s.canvas_height;
  for (int32_t m : nl.soft_macros) {
    float* f = &state_.node_dynamic[static_cast<size_t>(graph_node_[m]) * 3];
    f[0] = static_cast<float>(cost_->x(m) / norm);
    f[1] = static_cast<float>(cost_->y(m) / norm);
  }
}

ForceDirectedOptions ChipEnv::EpisodeEndFdOptions() const {
  ForceDirectedOptions o;  // CT's episode-end schedule
  for (int& n : o.num_steps) n = std::max(1, static_cast<int>(std::lround(n * opt_.fd_steps_scale)));
  return o;
}

bool ChipEnv::episode_end_is_full_schedule() const {
  return refine() || opt_.soft != SoftMacroPlacement::kForceDirected || inst_->design.netlist.soft_macros.empty() ||
         EpisodeEndFdOptions().num_steps == ForceDirectedOptions{}.num_steps;
}

CostBreakdown ChipEnv::FullScheduleCost(ProxyCost* pc) const {
  const Netlist& nl = inst_->design.netlist;
  if (opt_.soft == SoftMacroPlacement::kForceDirected && !nl.soft_macros.empty()) {
    if (!fd_full_) fd_full_.emplace(nl, inst_->design.settings);  // CT's schedule
    fd_full_->Run(pc);
  }
  return pc->Cost();
}

}  // namespace placerl::env
