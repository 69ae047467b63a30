#include "env/device/device_env.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "cost_models/tpu/op_cost.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"

namespace placerl::env {
namespace {

const std::vector<std::string> kKindNames = {"matmul", "conv", "elementwise", "reduction",
                                             "softmax", "norm", "embedding", "other"};

int KindColumn(const std::string& kind) {
  perf::OpKind k;
  if (!perf::ParseOpKind(kind.c_str(), &k)) return 7;
  switch (k) {
    case perf::OpKind::kMatmul: return 0;
    case perf::OpKind::kConv: return 1;
    case perf::OpKind::kElementwise: return 2;
    case perf::OpKind::kReduction: return 3;
    case perf::OpKind::kSoftmax: return 4;
    case perf::OpKind::kNorm: return 5;
    case perf::OpKind::kEmbedding: return 6;
    default: return 7;
  }
}

float Log10p(double x) { return static_cast<float>(std::log10(1 + std::max(0.0, x))); }

// Node features, in the order of their names.
const std::vector<std::string> kNodeFeatureNames = {
    "log_flops", "log_bytes", "log_output_bytes", "log_param_bytes", "log_temp_bytes", "log_ops",
    "log_fastest_time_us", "log_memory_need", "kind_matmul", "kind_conv", "kind_elementwise",
    "kind_reduction", "kind_softmax", "kind_norm", "kind_embedding", "kind_other", "order_position"};
// features=heft appends these (header comment).
const std::vector<std::string> kHeftNodeFeatureNames = {"time_fraction", "upward_rank", "downward_rank"};
const std::vector<std::string> kHeftActionFeatureNames = {"est_finish", "est_finish_delta", "device_load", "input_here",
                                                          "earliest"};

}  // namespace

DeviceEnv::DeviceEnv(const DeviceEnvOptions& opt) : o_(opt) {
  if (o_.mode != "oneshot" && o_.mode != "iterative")
    throw ConfigError("device: mode must be oneshot or iterative, got '" + o_.mode + "'");
  iterative_ = o_.mode == "iterative";
  if (o_.reward.empty()) o_.reward = iterative_ ? "id" : "sqrt";
  if (o_.reward != "sqrt" && o_.reward != "id" && o_.reward != "log" && o_.reward != "relative")
    throw ConfigError("device: reward must be sqrt, id, log or relative, got '" + o_.reward + "'");
  if (o_.features != "basic" && o_.features != "heft")
    throw ConfigError("device: features must be basic or heft, got '" + o_.features + "'");
  heft_ = o_.features == "heft";
  if (heft_ && iterative_) throw ConfigError("device: features=heft needs mode=oneshot");
  if (o_.oom != "relative" && o_.oom != "fixed" && o_.oom != "placeto")
    throw ConfigError("device: oom must be relative, fixed or placeto, got '" + o_.oom + "'");
  if (o_.order != "topological" && o_.order != "rank")
    throw ConfigError("device: order must be topological or rank, got '" + o_.order + "'");
  if (o_.start != "single" && o_.start != "random" && o_.start != "round_robin")
    throw ConfigError("device: start must be single, random or round_robin, got '" + o_.start + "'");
  for (double v : {o_.oom_factor, o_.failing_time_s, o_.placeto_s_per_gb, o_.placeto_cap_s})
    if (!(v >= 0) || !std::isfinite(v) || v > 1e9)
      throw ConfigError("device: oom_factor, failing_time_s, placeto_s_per_gb and placeto_cap_s must be in [0, 1e9]");

  auto inst = std::make_shared<DeviceInstance>();
  inst->graph = o_.graph_data ? *o_.graph_data : graphs::GraphFromSpec(o_.graph).graph;
  inst->machine = perf::MachineFromSpec(o_.machine);
  o_.machine = inst->machine.spec;
  const graphs::ComputeGraph& g = inst->graph;
  const perf::Machine& m = inst->machine;
  nd_ = m.num_devices();
  if (nd_ > 4096) throw ConfigError("device: at most 4096 devices");

  // Op bottom / top levels over op times on the fastest device (no communication).
  perf::Simulator sim(g, m.sim);
  const int fastest = m.FastestDevice();
  const int nops = g.num_ops();
  std::vector<double> bottom(nops, 0), top(nops, 0);
  for (int k = nops - 1; k >= 0; --k) {
    const int u = g.topo_order[k];
    double after = 0;
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e) after = std::max(after, bottom[g.out_targets[e]]);
    bottom[u] = sim.OpTimeOn(u, fastest) + after;
  }
  for (int k = 0; k < nops; ++k) {
    const int u = g.topo_order[k];
    const double end = top[u] + sim.OpTimeOn(u, fastest);
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e)
      top[g.out_targets[e]] = std::max(top[g.out_targets[e]], end);
  }
  // The op list: the topological order, or (order=rank) descending bottom level, ties in
  // topological order — also a topological order, since a producer's level is at least its
  // consumers'.
  std::vector<int> list = g.topo_order;
  if (o_.order == "rank") {
    std::vector<int> topo_index(nops);
    for (int k = 0; k < nops; ++k) topo_index[g.topo_order[k]] = k;
    std::sort(list.begin(), list.end(), [&](int a, int b) {
      return bottom[a] != bottom[b] ? bottom[a] > bottom[b] : topo_index[a] < topo_index[b];
    });
  }
  inst->list_position.resize(nops);
  for (int k = 0; k < nops; ++k) inst->list_position[list[k]] = k;

  // Groups in order of their first op in the list.
  inst->group_ops = graphs::ColocationMembers(g);
  const int ng = g.num_coloc_groups;
  std::vector<int> first(ng, std::numeric_limits<int>::max());
  for (int k = 0; k < nops; ++k) {
    const int gr = g.coloc_group[list[k]];
    first[gr] = std::min(first[gr], k);
  }
  inst->order.resize(ng);
  for (int i = 0; i < ng; ++i) inst->order[i] = i;
  std::sort(inst->order.begin(), inst->order.end(), [&](int a, int b) { return first[a] < first[b]; });
  inst->node_of_group.assign(ng, 0);
  for (int n = 0; n < ng; ++n) inst->node_of_group[inst->order[n]] = n;

  // Memory need and the devices each node may use.
  inst->need.assign(ng, 0);
  inst->allowed.assign(static_cast<size_t>(ng) * nd_, 1);
  for (int n = 0; n < ng; ++n) {
    double temp = 0;
    bool any = false;
    for (int op : inst->group_ops[inst->order[n]]) {
      inst->need[n] += g.param_bytes[op] + g.output_bytes[op];
      temp = std::max(temp, g.temp_bytes[op]);
      for (int d = 0; d < nd_; ++d)
        if (!m.CanRun(d, g.kinds[op])) inst->allowed[static_cast<size_t>(n) * nd_ + d] = 0;
    }
    inst->need[n] += temp;
    double room = 0;
    for (int d = 0; d < nd_; ++d)
      if (inst->allowed[static_cast<size_t>(n) * nd_ + d]) {
        any = true;
        room = std::max(room, m.sim.devices[d].memory_capacity);
      }
    const int op0 = inst->group_ops[inst->order[n]].front();
    const std::string group = g.colocation[op0].empty() ? g.names[op0] : g.colocation[op0];
    if (!any) throw ConfigError("device: no device of the machine can run every op of group '" + group + "'");
    if (o_.memory_mask && inst->need[n] > room) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " needs %.4g bytes; the largest device it may use holds %.4g (memory_mask=true)",
                    inst->need[n], room);
      throw ConfigError("device: group '" + group + "'" + buf);
    }
  }

  // Single-device reference time (every op on the fastest device, memory ignored).
  inst->single_device_time = sim.Run(std::vector<int>(g.num_ops(), fastest)).makespan;

  // Static graph.
  auto sg = std::make_shared<StaticGraph>();
  sg->num_nodes = ng;
  sg->node_feature_names = kNodeFeatureNames;
  if (heft_)
    sg->node_feature_names.insert(sg->node_feature_names.end(), kHeftNodeFeatureNames.begin(),
                                  kHeftNodeFeatureNames.end());
  sg->node_feature_dim = static_cast<int32_t>(sg->node_feature_names.size());
  sg->node_features.assign(static_cast<size_t>(ng) * sg->node_feature_dim, 0.f);
  double total_flops = 0;
  for (int n = 0; n < ng; ++n) {
    float* f = &sg->node_features[static_cast<size_t>(n) * sg->node_feature_dim];
    double flops = 0, bytes = 0, out = 0, params = 0, temp = 0, time = 0;
    std::vector<double> kinds(kKindNames.size(), 0);
    const auto& ops = inst->group_ops[inst->order[n]];
    for (int op : ops) {
      flops += g.flops[op];
      bytes += g.bytes[op];
      out += g.output_bytes[op];
      params += g.param_bytes[op];
      temp = std::max(temp, g.temp_bytes[op]);
      time += sim.OpTimeOn(op, fastest);
      kinds[KindColumn(g.kinds[op])] += 1;
    }
    total_flops += flops;
    f[0] = Log10p(flops);
    f[1] = Log10p(bytes);
    f[2] = Log10p(out);
    f[3] = Log10p(params);
    f[4] = Log10p(temp);
    f[5] = Log10p(static_cast<double>(ops.size()));
    f[6] = Log10p(time * 1e6);
    f[7] = Log10p(inst->need[n]);
    for (size_t k = 0; k < kinds.size(); ++k) f[8 + k] = static_cast<float>(kinds[k] / ops.size());
    f[16] = ng > 1 ? static_cast<float>(n) / (ng - 1) : 0.f;
  }
  // Group → group data edges: each producer's output counted once per consumer group.
  std::map<std::pair<int, int>, double> edge_bytes;
  std::vector<int> seen(ng, -1);
  for (int u = 0; u < g.num_ops(); ++u) {
    const int nu = inst->node_of_group[g.coloc_group[u]];
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e) {
      const int nv = inst->node_of_group[g.coloc_group[g.out_targets[e]]];
      if (nv == nu || seen[nv] == u) continue;
      seen[nv] = u;
      edge_bytes[{nu, nv}] += g.output_bytes[u];
    }
  }
  if (heft_) {
    // Group time per device; op bottom / top levels over op times on the fastest device.
    inst->op_time.resize(static_cast<size_t>(g.num_ops()) * nd_);
    inst->op_in_degree.assign(g.num_ops(), 0);
    for (int op = 0; op < g.num_ops(); ++op)
      for (int d = 0; d < nd_; ++d) inst->op_time[static_cast<size_t>(op) * nd_ + d] = sim.OpTimeOn(op, d);
    for (int t : g.out_targets) ++inst->op_in_degree[t];
    inst->time_on.assign(static_cast<size_t>(ng) * nd_, 0);
    for (int n = 0; n < ng; ++n)
      for (int op : inst->group_ops[inst->order[n]])
        for (int d = 0; d < nd_; ++d) inst->time_on[static_cast<size_t>(n) * nd_ + d] += sim.OpTimeOn(op, d);
    double critical = 0;
    for (int u = 0; u < nops; ++u) critical = std::max(critical, bottom[u]);
    const int base = static_cast<int>(kNodeFeatureNames.size());
    for (int n = 0; n < ng; ++n) {
      float* f = &sg->node_features[static_cast<size_t>(n) * sg->node_feature_dim];
      double up = 0, down = std::numeric_limits<double>::infinity();
      for (int op : inst->group_ops[inst->order[n]]) up = std::max(up, bottom[op]), down = std::min(down, top[op]);
      const double t = inst->time_on[static_cast<size_t>(n) * nd_ + fastest];
      f[base] = inst->single_device_time > 0 ? static_cast<float>(t / inst->single_device_time) : 0.f;
      f[base + 1] = critical > 0 ? static_cast<float>(up / critical) : 0.f;
      f[base + 2] = critical > 0 ? static_cast<float>(down / critical) : 0.f;
    }
    // Inputs from groups decided earlier, CSR by consumer node (edge_bytes is sorted by (src, dst)).
    inst->in_offsets.assign(ng + 1, 0);
    for (const auto& [key, b] : edge_bytes)
      if (key.first < key.second) ++inst->in_offsets[key.second + 1];
    for (int n = 0; n < ng; ++n) inst->in_offsets[n + 1] += inst->in_offsets[n];
    inst->in_src.resize(inst->in_offsets[ng]);
    inst->in_bytes.resize(inst->in_offsets[ng]);
    std::vector<int> fill(inst->in_offsets.begin(), inst->in_offsets.end() - 1);
    for (const auto& [key, b] : edge_bytes)
      if (key.first < key.second) {
        inst->in_src[fill[key.second]] = key.first;
        inst->in_bytes[fill[key.second]++] = b;
      }
  }
  sg->directed = true;
  for (const auto& [key, b] : edge_bytes) {
    sg->edge_src.push_back(key.first);
    sg->edge_dst.push_back(key.second);
    sg->edge_weight.push_back(Log10p(b));
  }
  int cpus = 0;
  double fastest_flops = 0, slowest_flops = std::numeric_limits<double>::infinity(), memory = 0;
  for (int d = 0; d < nd_; ++d) {
    cpus += m.device_types[d] == "cpu";
    fastest_flops = std::max(fastest_flops, m.sim.devices[d].rates.peak_flops);
    slowest_flops = std::min(slowest_flops, m.sim.devices[d].rates.peak_flops);
    const double cap = m.sim.devices[d].memory_capacity;
    memory += std::isfinite(cap) ? cap : 1e15;  // unlimited counts as 1 PB
  }
  sg->metadata = {static_cast<float>(nd_), static_cast<float>(cpus), static_cast<float>(nd_ - cpus),
                  Log10p(m.sim.link.bandwidth), static_cast<float>(m.sim.link.latency_s * 1e6),
                  static_cast<float>(m.sim.op_gap_s * 1e6), Log10p(total_flops), Log10p(g.num_ops()),
                  Log10p(ng), Log10p(inst->single_device_time * 1e6), Log10p(fastest_flops / 1e9),
                  fastest_flops > 0 ? static_cast<float>(slowest_flops / fastest_flops) : 0.f, Log10p(memory / 1e9)};
  sg->metadata_names = {"devices", "cpus", "accelerators", "log_link_bandwidth", "link_latency_us", "op_gap_us",
                        "log_total_flops", "log_ops", "log_groups", "log_single_device_time_us",
                        "log_fastest_gflops", "slowest_to_fastest_speed", "log_total_memory_gb"};
  sg->node_names.resize(ng);
  for (int n = 0; n < ng; ++n) {
    const int op0 = inst->group_ops[inst->order[n]].front();
    sg->node_names[n] = g.colocation[op0].empty() ? g.names[op0] : g.colocation[op0];
  }
  sg->Validate();
  graph_ = sg;

  auto names = std::make_shared<std::vector<std::string>>(std::vector<std::string>{
      "step_time_s", "effective_time_s", "oom", "oom_device", "bytes_transferred", "transfers", "placed_groups",
      "moves", "single_device_time_s"});
  for (int d = 0; d < nd_; ++d) names->push_back("utilisation_" + std::to_string(d));
  for (int d = 0; d < nd_; ++d) names->push_back("peak_memory_" + std::to_string(d));
  info_names_ = names;
  inst_ = inst;

  state_.node_dynamic_names = {"decided", "current", "start_time"};
  for (int d = 0; d < nd_; ++d) state_.node_dynamic_names.push_back("on_device_" + std::to_string(d));
  if (heft_) state_.node_dynamic_names.push_back("est_finish");
  state_.node_dynamic_dim = static_cast<int32_t>(state_.node_dynamic_names.size());
  state_.node_dynamic.assign(static_cast<size_t>(ng) * state_.node_dynamic_dim, 0.f);
  state_.action_feature_names = {"relative_speed", "log_capacity_gb", "memory_used_fraction", "fits"};
  if (heft_)
    state_.action_feature_names.insert(state_.action_feature_names.end(), kHeftActionFeatureNames.begin(),
                                       kHeftActionFeatureNames.end());
  state_.action_feature_dim = static_cast<int32_t>(state_.action_feature_names.size());
  state_.action_features.assign(static_cast<size_t>(state_.action_feature_dim) * nd_, 0.f);
  state_.action_mask.assign(nd_, 0);
  Reset(0);
}

DeviceEnv::DeviceEnv(const DeviceEnv& o)
    : o_(o.o_),
      iterative_(o.iterative_),
      inst_(o.inst_),
      graph_(o.graph_),
      info_names_(o.info_names_),
      nd_(o.nd_),
      op_dev_(o.op_dev_),
      node_dev_(o.node_dev_),
      start_frac_(o.start_frac_),
      used_(o.used_),
      last_f_(o.last_f_),
      heft_(o.heft_),
      finish_(o.finish_),
      device_free_(o.device_free_),
      eft_scratch_(o.eft_scratch_),
      op_finish_(o.op_finish_),
      op_pending_(o.op_pending_),
      op_scheduled_(o.op_scheduled_),
      state_(o.state_),
      info_(o.info_) {}

std::unique_ptr<Environment> DeviceEnv::Make(EnvParams& p) {
  DeviceEnvOptions o;
  o.graph = p.GetString("graph", o.graph);
  o.machine = p.GetString("machine", o.machine);
  o.mode = p.GetString("mode", o.mode);
  o.memory_mask = p.GetBool("memory_mask", o.memory_mask);
  o.reward = p.GetString("reward", o.reward);
  o.oom = p.GetString("oom", o.oom);
  o.oom_factor = p.GetDouble("oom_factor", o.oom_factor);
  o.failing_time_s = p.GetDouble("failing_time_s", o.failing_time_s);
  o.placeto_s_per_gb = p.GetDouble("placeto_s_per_gb", o.placeto_s_per_gb);
  o.placeto_cap_s = p.GetDouble("placeto_cap_s", o.placeto_cap_s);
  o.start = p.GetString("start", o.start);
  o.features = p.GetString("features", o.features);
  o.order = p.GetString("order", o.order);
  return std::make_unique<DeviceEnv>(o);
}

std::string DeviceEnv::name() const {
  EnvParams p;
  auto s = [&](const char* k, const std::string& v) {
    p.Set(k, v);
    p.GetString(k, "");
  };
  auto d = [&](const char* k, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    p.Set(k, buf);
    p.GetDouble(k, v);
  };
  s("graph", o_.graph);
  s("machine", o_.machine);
  s("mode", o_.mode);
  s("memory_mask", o_.memory_mask ? "true" : "false");
  s("reward", o_.reward);
  s("oom", o_.oom);
  d("oom_factor", o_.oom_factor);
  d("failing_time_s", o_.failing_time_s);
  d("placeto_s_per_gb", o_.placeto_s_per_gb);
  d("placeto_cap_s", o_.placeto_cap_s);
  s("start", o_.start);
  if (o_.features != "basic") s("features", o_.features);  // absent = basic: older names unchanged
  if (o_.order != "topological") s("order", o_.order);
  return p.Canonical("device");
}

double DeviceEnv::Transform(double t) const {
  if (o_.reward == "sqrt") return std::sqrt(std::max(0.0, t));
  if (o_.reward == "log") return std::log1p(std::max(0.0, t) * 1e6);
  if (o_.reward == "relative") return inst_->single_device_time > 0 ? t / inst_->single_device_time : t;
  return t;
}

double DeviceEnv::EffectiveTime(const perf::SimResult& r) const {
  if (!r.oom) return r.makespan;
  if (o_.oom == "fixed") return o_.failing_time_s;
  if (o_.oom == "relative") return o_.oom_factor * inst_->single_device_time;
  double over_gb = 0;
  const auto& devs = inst_->machine.sim.devices;
  for (size_t d = 0; d < devs.size(); ++d) over_gb += std::max(0.0, r.peak_memory[d] - devs[d].memory_capacity) / 1e9;
  return r.makespan + std::min(o_.placeto_cap_s, o_.placeto_s_per_gb * over_gb);
}

std::vector<int> DeviceEnv::OpPlacement() const { return op_dev_; }

bool DeviceEnv::Fits(int32_t node, int32_t d) const {
  const double need = inst_->need[node];
  const double used = used_[d] - (node_dev_[node] == d ? need : 0);
  return used + need <= inst_->machine.sim.devices[d].memory_capacity;
}

void DeviceEnv::SetNodeDevice(int32_t node, int32_t d) {
  const int32_t old = node_dev_[node];
  if (old >= 0) used_[old] -= inst_->need[node];
  used_[d] += inst_->need[node];
  node_dev_[node] = d;
  for (int op : inst_->group_ops[inst_->order[node]]) op_dev_[op] = d;
}

double DeviceEnv::Simulate() {
  if (!sim_) sim_ = std::make_unique<perf::Simulator>(inst_->graph, inst_->machine.sim);
  const perf::SimResult& r = sim_->Run(op_dev_);
  const double eff = EffectiveTime(r);
  info_[0] = r.makespan;
  info_[1] = eff;
  info_[2] = r.oom ? 1 : 0;
  info_[3] = r.oom_device;
  info_[4] = r.bytes_transferred;
  info_[5] = static_cast<double>(r.num_transfers);
  for (int d = 0; d < nd_; ++d) {
    info_[9 + d] = r.utilisation[d];
    info_[9 + nd_ + d] = r.peak_memory[d];
  }
  // Start of each group (its earliest op) ÷ step time: Placeto's start-time feature.
  const int32_t dim = state_.node_dynamic_dim;
  for (size_t n = 0; n < start_frac_.size(); ++n) {
    double t = r.makespan;
    for (int op : inst_->group_ops[inst_->order[n]]) t = std::min(t, r.op_start[op]);
    start_frac_[n] = r.makespan > 0 ? static_cast<float>(t / r.makespan) : 0.f;
    state_.node_dynamic[n * dim + 2] = start_frac_[n];
  }
  return eff;
}

void DeviceEnv::WriteNodeRow(int32_t node) {
  float* f = &state_.node_dynamic[static_cast<size_t>(node) * state_.node_dynamic_dim];
  std::fill(f, f + state_.node_dynamic_dim, 0.f);
  f[0] = node < state_.step ? 1.f : 0.f;
  f[1] = node == state_.current_node ? 1.f : 0.f;
  f[2] = start_frac_[node];
  const int32_t d = node_dev_[node];
  if (d >= 0) f[3 + d] = 1.f;
  if (heft_ && d >= 0 && inst_->single_device_time > 0)
    f[3 + nd_] = static_cast<float>(finish_[node] / inst_->single_device_time);
}

double DeviceEnv::OpStart(int op, int d) const {
  const graphs::ComputeGraph& g = inst_->graph;
  const perf::LinkModel& link = inst_->machine.sim.link;
  double arrival = 0;
  for (int k = g.in_offsets[op]; k < g.in_offsets[op + 1]; ++k) {
    const int p = g.in_sources[k];
    const double comm = op_dev_[p] == d ? 0 : link.latency_s + g.output_bytes[p] / link.bandwidth;
    arrival = std::max(arrival, op_finish_[p] + comm);
  }
  return arrival;
}

void DeviceEnv::EstimateFinish(int32_t node, double* finish) const {
  const auto& ops = inst_->group_ops[inst_->order[node]];
  for (int d = 0; d < nd_; ++d) {
    double free = device_free_[d], last = 0;
    // The group's ready ops (every producer scheduled, so none of them feeds another and their
    // producers' devices are known), one after the other on d.
    for (int op : ops) {
      if (op_pending_[op] != 0) continue;
      const double end = std::max(free, OpStart(op, d)) + inst_->op_time[static_cast<size_t>(op) * nd_ + d];
      free = end;
      last = std::max(last, end);
    }
    finish[d] = last;
  }
}

void DeviceEnv::ScheduleReady(int32_t node) {
  const graphs::ComputeGraph& g = inst_->graph;
  // Min-heap on list position (a topological order): HEFT's append schedule.
  std::vector<std::pair<int, int>> heap;
  auto push = [&](int op) {
    heap.emplace_back(-inst_->list_position[op], op);
    std::push_heap(heap.begin(), heap.end());
  };
  for (int op : inst_->group_ops[inst_->order[node]])
    if (op_pending_[op] == 0 && !op_scheduled_[op]) push(op);
  double last = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const int op = heap.back().second;
    heap.pop_back();
    const int d = op_dev_[op];
    const double end = std::max(device_free_[d], OpStart(op, d)) + inst_->op_time[static_cast<size_t>(op) * nd_ + d];
    device_free_[d] = end;
    op_finish_[op] = end;
    op_scheduled_[op] = 1;
    if (inst_->node_of_group[g.coloc_group[op]] == node) last = std::max(last, end);
    for (int e = g.out_offsets[op]; e < g.out_offsets[op + 1]; ++e) {
      const int v = g.out_targets[e];
      if (--op_pending_[v] == 0 && node_dev_[inst_->node_of_group[g.coloc_group[v]]] >= 0) push(v);
    }
  }
  finish_[node] = last;
}

void DeviceEnv::UpdateDynamic() {
  const auto& devs = inst_->machine.sim.devices;
  const int32_t cur = state_.current_node;
  double fastest = 0;
  for (const auto& dv : devs) fastest = std::max(fastest, dv.rates.peak_flops);
  for (int d = 0; d < nd_; ++d) {
    const double cap = devs[d].memory_capacity;
    const bool ok = cur >= 0 && inst_->allowed[static_cast<size_t>(cur) * nd_ + d] &&
                    (!o_.memory_mask || Fits(cur, d) || (iterative_ && node_dev_[cur] == d));
    state_.action_mask[d] = ok ? 1 : 0;
    state_.action_features[d] = fastest > 0 ? static_cast<float>(devs[d].rates.peak_flops / fastest) : 0.f;
    state_.action_features[nd_ + d] = std::isfinite(cap) ? static_cast<float>(std::log10(1 + cap / 1e9)) : 6.f;
    state_.action_features[2 * nd_ + d] = std::isfinite(cap) && cap > 0 ? static_cast<float>(used_[d] / cap) : 0.f;
    state_.action_features[3 * nd_ + d] = cur >= 0 && Fits(cur, d) ? 1.f : 0.f;
  }
  if (!heft_) return;
  float* a = &state_.action_features[4 * static_cast<size_t>(nd_)];
  std::fill(a, a + 5 * static_cast<size_t>(nd_), 0.f);
  const double single = inst_->single_device_time > 0 ? inst_->single_device_time : 1;
  for (int d = 0; d < nd_; ++d) a[2 * nd_ + d] = static_cast<float>(device_free_[d] / single);
  if (cur < 0) return;
  EstimateFinish(cur, eft_scratch_.data());
  int best = -1;
  for (int d = 0; d < nd_; ++d)
    if (state_.action_mask[d] && (best < 0 || eft_scratch_[d] < eft_scratch_[best])) best = d;
  double own = 0;  // the ready ops' time on the fastest device: the unit of est_finish_delta
  const int fast = inst_->machine.FastestDevice();
  for (int op : inst_->group_ops[inst_->order[cur]])
    if (op_pending_[op] == 0) own += inst_->op_time[static_cast<size_t>(op) * nd_ + fast];
  own = std::max(own, 1e-12);
  double in_total = 0;
  for (int k = inst_->in_offsets[cur]; k < inst_->in_offsets[cur + 1]; ++k) {
    const int32_t sd = node_dev_[inst_->in_src[k]];
    if (sd < 0) continue;
    in_total += inst_->in_bytes[k];
    a[3 * nd_ + sd] += static_cast<float>(inst_->in_bytes[k]);
  }
  for (int d = 0; d < nd_; ++d) {
    a[d] = static_cast<float>(eft_scratch_[d] / single);
    a[nd_ + d] = best < 0 ? 0.f : static_cast<float>(std::min(10.0, (eft_scratch_[d] - eft_scratch_[best]) / own));
    a[3 * nd_ + d] = in_total > 0 ? static_cast<float>(a[3 * nd_ + d] / in_total) : 0.f;
    a[4 * nd_ + d] = d == best ? 1.f : 0.f;
  }
}

void DeviceEnv::Reset(uint64_t seed) {
  const int32_t n = episode_length();
  node_dev_.assign(n, -1);
  start_frac_.assign(n, 0.f);
  used_.assign(nd_, 0.0);
  if (heft_) {
    finish_.assign(n, 0.0);
    device_free_.assign(nd_, 0.0);
    eft_scratch_.assign(nd_, 0.0);
    op_finish_.assign(inst_->graph.num_ops(), 0.0);
    op_pending_ = inst_->op_in_degree;
    op_scheduled_.assign(inst_->graph.num_ops(), 0);
  }
  op_dev_.assign(inst_->graph.num_ops(), 0);
  info_.assign(info_names_->size(), 0.0);
  info_[8] = inst_->single_device_time;
  state_.step = 0;
  state_.current_node = 0;
  if (iterative_) {
    std::mt19937_64 rng(seed);
    const int fastest = inst_->machine.FastestDevice();
    for (int32_t node = 0; node < n; ++node) {
      std::vector<int> ok;
      for (int d = 0; d < nd_; ++d)
        if (inst_->allowed[static_cast<size_t>(node) * nd_ + d]) ok.push_back(d);
      int d = ok.front();
      if (o_.start == "single") {
        if (std::find(ok.begin(), ok.end(), fastest) != ok.end()) d = fastest;
      } else if (o_.start == "random") {
        d = ok[std::uniform_int_distribution<size_t>(0, ok.size() - 1)(rng)];
      } else {
        d = ok[node % ok.size()];
      }
      SetNodeDevice(node, d);
    }
    info_[6] = n;
    last_f_ = Transform(Simulate());
  }
  for (int32_t node = 0; node < n; ++node) WriteNodeRow(node);
  UpdateDynamic();
  if (!iterative_ && o_.memory_mask &&
      std::find(state_.action_mask.begin(), state_.action_mask.end(), 1) == state_.action_mask.end())
    EndEpisode();  // not even the first group fits anywhere
}

void DeviceEnv::EndEpisode() {
  const int32_t cur = state_.current_node;
  state_.current_node = -1;
  if (cur >= 0) WriteNodeRow(cur);
  UpdateDynamic();
}

StepResult DeviceEnv::Step(int32_t action) {
  if (done()) throw InfeasibleAction("device: the episode is over");
  if (action < 0 || action >= nd_ || !state_.action_mask[action])
    throw InfeasibleAction("device: device " + std::to_string(action) + " is not allowed for group " +
                           std::to_string(state_.current_node));
  const int32_t node = state_.current_node;
  const int32_t n = episode_length();
  StepResult r;
  const int32_t before = node_dev_[node];
  SetNodeDevice(node, action);
  if (heft_) ScheduleReady(node);
  ++state_.step;
  state_.current_node = node + 1 < n ? node + 1 : -1;
  if (iterative_) {
    if (before != action) {
      info_[7] += 1;
      const double f = Transform(Simulate());
      r.reward = last_f_ - f;
      last_f_ = f;
    }
  } else {
    info_[6] = state_.step;
    if (state_.current_node < 0) {
      r.reward = -Transform(Simulate());
    }
  }
  WriteNodeRow(node);
  if (state_.current_node >= 0) WriteNodeRow(state_.current_node);
  UpdateDynamic();
  if (!iterative_ && state_.current_node >= 0 && o_.memory_mask &&
      std::find(state_.action_mask.begin(), state_.action_mask.end(), 1) == state_.action_mask.end()) {
    // No device can hold the next group: the episode fails with the OOM signal.
    const double t = o_.oom == "fixed"    ? o_.failing_time_s
                     : o_.oom == "relative" ? o_.oom_factor * inst_->single_device_time
                                            : inst_->single_device_time + o_.placeto_cap_s;
    info_[1] = t;
    info_[2] = 1;
    r.reward = -Transform(t);
    r.infeasible = true;
    EndEpisode();
  }
  r.done = done();
  return r;
}

}  // namespace placerl::env
