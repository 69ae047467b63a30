#include "env/toy/partition_env.h"

#include <algorithm>
#include <random>

#include "datasets/util/errors.h"

namespace placerl::env {
namespace {
const std::vector<std::string> kInfoNames = {"cut_weight", "cut_fraction", "max_load", "placed"};
}

PartitionEnv::PartitionEnv(const PartitionOptions& opt) : o_(opt) {
  if (o_.nodes < 2 || o_.nodes > 4096) throw ConfigError("partition: nodes must be in [2, 4096]");
  if (o_.devices < 2 || o_.devices > 64) throw ConfigError("partition: devices must be in [2, 64]");
  if (o_.capacity == 0) o_.capacity = (o_.nodes + o_.devices - 1) / o_.devices;
  if (o_.capacity < 1 || static_cast<int64_t>(o_.capacity) * o_.devices < o_.nodes)
    throw ConfigError("partition: capacity " + std::to_string(o_.capacity) + " x " +
                      std::to_string(o_.devices) + " devices cannot hold " + std::to_string(o_.nodes) + " nodes");
  if (o_.extra_edges < 0 || o_.extra_edges > 100000) throw ConfigError("partition: extra_edges must be in [0, 100000]");
  auto g = std::make_shared<StaticGraph>();
  g->num_nodes = o_.nodes;
  std::mt19937_64 rng(o_.graph_seed);
  std::uniform_int_distribution<int32_t> pick(0, o_.nodes - 1), wpick(1, 3);
  auto add = [&](int32_t a, int32_t b, float w) {
    if (a == b) return;
    if (a > b) std::swap(a, b);
    for (size_t e = 0; e < g->edge_src.size(); ++e)
      if (g->edge_src[e] == a && g->edge_dst[e] == b) {
        g->edge_weight[e] += w;
        return;
      }
    g->edge_src.push_back(a);
    g->edge_dst.push_back(b);
    g->edge_weight.push_back(w);
  };
  for (int32_t i = 0; i < o_.nodes; ++i) add(i, (i + 1) % o_.nodes, static_cast<float>(wpick(rng)));
  for (int32_t k = 0; k < o_.extra_edges; ++k) add(pick(rng), pick(rng), static_cast<float>(wpick(rng)));
  std::vector<float> deg(o_.nodes, 0);
  for (size_t e = 0; e < g->edge_src.size(); ++e) {
    deg[g->edge_src[e]] += g->edge_weight[e];
    deg[g->edge_dst[e]] += g->edge_weight[e];
    total_weight_ += g->edge_weight[e];
  }
  const float maxdeg = *std::max_element(deg.begin(), deg.end());
  g->node_feature_dim = 2;
  g->node_feature_names = {"weighted_degree", "position"};
  for (int32_t i = 0; i < o_.nodes; ++i) {
    g->node_features.push_back(deg[i] / maxdeg);
    g->node_features.push_back(static_cast<float>(i) / o_.nodes);
  }
  g->metadata = {static_cast<float>(o_.nodes) / 4096.f, static_cast<float>(o_.devices) / 64.f,
                 static_cast<float>(o_.capacity) / o_.nodes};
  g->metadata_names = {"nodes", "devices", "capacity_fraction"};
  g->Validate();
  graph_ = g;
  state_.node_dynamic_dim = o_.devices + 1;
  state_.node_dynamic_names.push_back("placed");
  for (int32_t d = 0; d < o_.devices; ++d) state_.node_dynamic_names.push_back("on_device_" + std::to_string(d));
  state_.node_dynamic.assign(static_cast<size_t>(o_.nodes) * state_.node_dynamic_dim, 0.f);
  state_.action_mask.assign(o_.devices, 0);
  info_.assign(kInfoNames.size(), 0.0);
  Reset(0);
}

std::unique_ptr<Environment> PartitionEnv::Make(EnvParams& p) {
  PartitionOptions o;
  o.nodes = static_cast<int32_t>(p.GetInt("nodes", o.nodes));
  o.devices = static_cast<int32_t>(p.GetInt("devices", o.devices));
  o.capacity = static_cast<int32_t>(p.GetInt("capacity", 0));
  o.extra_edges = static_cast<int32_t>(p.GetInt("extra_edges", o.extra_edges));
  o.graph_seed = static_cast<uint64_t>(p.GetInt("graph_seed", 1));
  return std::make_unique<PartitionEnv>(o);
}

std::string PartitionEnv::name() const {
  return "partition(nodes=" + std::to_string(o_.nodes) + ",devices=" + std::to_string(o_.devices) +
         ",capacity=" + std::to_string(o_.capacity) + ",extra_edges=" + std::to_string(o_.extra_edges) +
         ",graph_seed=" + std::to_string(o_.graph_seed) + ")";
}

const std::vector<std::string>& PartitionEnv::info_names() const { return kInfoNames; }

void PartitionEnv::Reset(uint64_t) {
  assign_.assign(o_.nodes, -1);
  load_.assign(o_.devices, 0);
  std::fill(state_.node_dynamic.begin(), state_.node_dynamic.end(), 0.f);
  state_.current_node = 0;
  state_.step = 0;
  std::fill(info_.begin(), info_.end(), 0.0);
  UpdateMask();
}

void PartitionEnv::UpdateMask() {
  for (int32_t d = 0; d < o_.devices; ++d)
    state_.action_mask[d] = state_.current_node >= 0 && load_[d] < o_.capacity ? 1 : 0;
}

double PartitionEnv::CutFraction(const std::vector<int32_t>& a) const {
  double cut = 0;
  for (size_t e = 0; e < graph_->edge_src.size(); ++e)
    if (a[graph_->edge_src[e]] != a[graph_->edge_dst[e]]) cut += graph_->edge_weight[e];
  return cut / total_weight_;
}

StepResult PartitionEnv::Step(int32_t action) {
  if (done()) throw InfeasibleAction("partition: the episode is over");
  if (action < 0 || action >= o_.devices || !state_.action_mask[action])
    throw InfeasibleAction("partition: device " + std::to_string(action) + " is not allowed for node " +
                           std::to_string(state_.current_node));
  const int32_t node = state_.current_node;
  assign_[node] = action;
  ++load_[action];
  float* dyn = &state_.node_dynamic[static_cast<size_t>(node) * state_.node_dynamic_dim];
  dyn[0] = 1.f;
  dyn[1 + action] = 1.f;
  ++state_.step;
  state_.current_node = node + 1 < o_.nodes ? node + 1 : -1;
  UpdateMask();
  StepResult r;
  info_[3] = state_.step;
  info_[2] = *std::max_element(load_.begin(), load_.end());
  if (done()) {
    const double f = CutFraction(assign_);
    info_[0] = f * total_weight_;
    info_[1] = f;
    r.reward = -f;
    r.done = true;
  }
  return r;
}

double PartitionEnv::OptimalCutFraction() const {
  double states = 1;
  for (int32_t i = 0; i < o_.nodes; ++i) states *= o_.devices;
  if (states > (1 << 24)) throw ConfigError("partition: too many assignments to enumerate");
  std::vector<int32_t> a(o_.nodes, 0), load(o_.devices, 0);
  double best = 1e300;
  const int64_t n = static_cast<int64_t>(states);
  for (int64_t code = 0; code < n; ++code) {
    int64_t c = code;
    std::fill(load.begin(), load.end(), 0);
    bool ok = true;
    for (int32_t i = 0; i < o_.nodes && ok; ++i) {
      a[i] = static_cast<int32_t>(c % o_.devices);
      c /= o_.devices;
      ok = ++load[a[i]] <= o_.capacity;
    }
    if (ok) best = std::min(best, CutFraction(a));
  }
  return best;
}

}  // namespace placerl::env
