#include "env/device/device_env.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <random>

#include "cost_models/tpu/op_cost.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/budget_clock.h"
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

// Zobrist-style key of (node, device) for the placement hash (splitmix64).
uint64_t NodeHash(int32_t node, int32_t d) {
  uint64_t z = (static_cast<uint64_t>(node) << 16 | static_cast<uint64_t>(d)) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
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

std::mutex& StartPlacerMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, DeviceStartPlacer>& StartPlacers() {
  static auto* m = new std::map<std::string, DeviceStartPlacer>;
  return *m;
}
DeviceStartPlacer FindStartPlacer(const std::string& name) {
  std::lock_guard<std::mutex> lock(StartPlacerMutex());
  auto it = StartPlacers().find(name);
  return it == StartPlacers().end() ? DeviceStartPlacer() : it->second;
}

}  // namespace

void RegisterDeviceStartPlacer(const std::string& name, DeviceStartPlacer placer) {
  if (name == "single" || name == "random" || name == "round_robin")
    throw ConfigError("device: start placer name '" + name + "' is built in");
  std::lock_guard<std::mutex> lock(StartPlacerMutex());
  StartPlacers()[name] = std::move(placer);
}

std::vector<std::string> DeviceStartPlacerNames() {
  std::lock_guard<std::mutex> lock(StartPlacerMutex());
  std::vector<std::string> names;
  for (const auto& [k, v] : StartPlacers()) names.push_back(k);
  return names;
}

void DeviceEnv::BuildLifetime(DeviceInstance* inst, const std::vector<double>& single_start, int fastest) const {
  const graphs::ComputeGraph& g = inst->graph;
  const int nops = g.num_ops();
  const graphs::ComputeGraph* mg = &g;
  std::vector<int> to_op;
  std::vector<double> start;
  if (o_.memory_graph) {
    mg = o_.memory_graph.get();
    if (static_cast<int>(o_.memory_op_map.size()) != mg->num_ops())
      throw ConfigError("device: memory_op_map has " + std::to_string(o_.memory_op_map.size()) + " entries for the " +
                        std::to_string(mg->num_ops()) + " ops of memory_graph");
    for (int v : o_.memory_op_map)
      if (v < 0 || v >= nops)
        throw ConfigError("device: memory_op_map names op " + std::to_string(v) + "; the graph has " +
                          std::to_string(nops) + " ops");
    to_op = o_.memory_op_map;
    perf::Simulator msim(*mg, inst->machine.sim);
    start = msim.Run(std::vector<int>(mg->num_ops(), fastest)).op_start;
  } else {
    if (!o_.memory_op_map.empty()) throw ConfigError("device: memory_op_map needs memory_graph");
    to_op.resize(nops);
    for (int i = 0; i < nops; ++i) to_op[i] = i;
    start = single_start;
  }
  const int mn = mg->num_ops();
  const int ng = static_cast<int>(inst->order.size());
  // Buckets of equal op count along the single-device schedule (start time, then op index) and
  // each output's last use (datasets/graphs/fusion.h: the same ranges cap fusion's groups).
  const graphs::OpLiveRanges ranges = graphs::LiveRangesAlongSchedule(*mg, start, o_.memory_buckets);
  const int B = ranges.buckets;
  inst->mem_buckets = B;
  const std::vector<int>& bucket = ranges.bucket;
  std::vector<int> node(mn);
  for (int i = 0; i < mn; ++i) node[i] = inst->node_of_group[g.coloc_group[to_op[i]]];
  using MI = DeviceInstance::MemInterval;
  std::vector<std::vector<MI>> own(ng);
  std::vector<std::vector<std::pair<int32_t, int32_t>>> in(ng);  // (tensor, last bucket)
  std::vector<std::vector<int32_t>> out(ng);
  std::vector<double> params(ng, 0);
  std::vector<std::pair<int, int>> consumers;  // (consumer node, last bucket) of one tensor
  inst->copy_tensors.clear();
  inst->tc_offsets.assign(1, 0);
  for (int i = 0; i < mn; ++i) {
    const int n = node[i], b = bucket[i];
    params[n] += mg->param_bytes[i];
    if (mg->temp_bytes[i] > 0) own[n].push_back({b, b, mg->temp_bytes[i]});
    const double bytes = mg->output_bytes[i];
    if (!(bytes > 0)) continue;
    const int end = ranges.last_use[i];
    consumers.clear();
    for (int e = mg->out_offsets[i]; e < mg->out_offsets[i + 1]; ++e) {
      const int c = mg->out_targets[e];
      if (node[c] == n) continue;
      auto it = std::find_if(consumers.begin(), consumers.end(), [&](const auto& x) { return x.first == node[c]; });
      if (it == consumers.end()) consumers.emplace_back(node[c], std::max(b, bucket[c]));
      else it->second = std::max(it->second, bucket[c]);
    }
    own[n].push_back({b, end, bytes});
    if (consumers.empty()) continue;
    const int32_t t = static_cast<int32_t>(inst->copy_tensors.size());
    inst->copy_tensors.push_back({n, b, bytes});
    for (const auto& [cn, last] : consumers) {
      inst->tc_node.push_back(cn);
      inst->tc_last.push_back(last);
      in[cn].emplace_back(t, last);
    }
    inst->tc_offsets.push_back(static_cast<int>(inst->tc_node.size()));
    out[n].push_back(t);
  }
  for (int n = 0; n < ng; ++n)
    if (params[n] > 0) own[n].push_back({0, B - 1, params[n]});
  inst->own_peak.assign(ng, 0);
  std::vector<double> diff(B + 1);
  for (int n = 0; n < ng; ++n) {
    std::fill(diff.begin(), diff.end(), 0.0);
    for (const MI& v : own[n]) diff[v.b0] += v.bytes, diff[v.b1 + 1] -= v.bytes;
    double run = 0;
    for (int b = 0; b < B; ++b) inst->own_peak[n] = std::max(inst->own_peak[n], run += diff[b]);
  }
  inst->own_offsets.assign(ng + 1, 0);
  inst->in_offsets_mem.assign(ng + 1, 0);
  inst->out_offsets_mem.assign(ng + 1, 0);
  for (int n = 0; n < ng; ++n) {
    inst->own_offsets[n + 1] = inst->own_offsets[n] + static_cast<int>(own[n].size());
    inst->in_offsets_mem[n + 1] = inst->in_offsets_mem[n] + static_cast<int>(in[n].size());
    inst->out_offsets_mem[n + 1] = inst->out_offsets_mem[n] + static_cast<int>(out[n].size());
    inst->own.insert(inst->own.end(), own[n].begin(), own[n].end());
    for (const auto& [t, last] : in[n]) inst->in_tensor.push_back(t), inst->in_last.push_back(last);
    inst->out_tensor.insert(inst->out_tensor.end(), out[n].begin(), out[n].end());
  }
  if (!o_.memory_mask) return;
  for (int n = 0; n < ng; ++n) {
    double room = 0;
    for (int d = 0; d < nd_; ++d)
      if (inst->allowed[static_cast<size_t>(n) * nd_ + d]) room = std::max(room, inst->machine.sim.devices[d].memory_capacity);
    if (inst->own_peak[n] > room) {
      const int op0 = inst->group_ops[inst->order[n]].front();
      const std::string group = g.colocation[op0].empty() ? g.names[op0] : g.colocation[op0];
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    " needs %.4g bytes at its peak; the largest device it may use holds %.4g (memory_mask=true, "
                    "memory_estimate=lifetime)",
                    inst->own_peak[n], room);
      throw ConfigError("device: group '" + group + "'" + buf);
    }
  }
}

graphs::OpLiveRanges DeviceEnv::LiveRanges(const graphs::ComputeGraph& g, const perf::Machine& m, int memory_buckets) {
  if (memory_buckets < 1 || memory_buckets > 65536) throw ConfigError("device: memory_buckets must be in [1, 65536]");
  perf::Simulator sim(g, m.sim);
  const std::vector<double> start = sim.Run(std::vector<int>(g.num_ops(), m.FastestDevice())).op_start;
  return graphs::LiveRangesAlongSchedule(g, start, memory_buckets);
}

namespace {

// Checks the options (the reward's default filled in); ConfigError naming the first bad one.
// Returns the start placer of start=<placer> (empty for single, random, round_robin).
DeviceStartPlacer CheckOptions(DeviceEnvOptions* opt) {
  DeviceEnvOptions& o = *opt;
  if (o.mode != "oneshot" && o.mode != "iterative")
    throw ConfigError("device: mode must be oneshot or iterative, got '" + o.mode + "'");
  const bool iterative = o.mode == "iterative";
  if (o.reward.empty()) o.reward = iterative ? "id" : "sqrt";
  if (o.reward != "sqrt" && o.reward != "id" && o.reward != "log" && o.reward != "relative")
    throw ConfigError("device: reward must be sqrt, id, log or relative, got '" + o.reward + "'");
  if (o.features != "basic" && o.features != "heft")
    throw ConfigError("device: features must be basic or heft, got '" + o.features + "'");
  const bool heft = o.features == "heft";
  if (o.memory_estimate != "all_outputs" && o.memory_estimate != "lifetime")
    throw ConfigError("device: memory_estimate must be all_outputs or lifetime, got '" + o.memory_estimate + "'");
  const bool lifetime = o.memory_estimate == "lifetime";
  if (o.memory_buckets < 1 || o.memory_buckets > 65536)
    throw ConfigError("device: memory_buckets must be in [1, 65536], got " + std::to_string(o.memory_buckets));
  if (!lifetime && (o.memory_graph || !o.memory_op_map.empty()))
    throw ConfigError("device: memory_graph needs memory_estimate=lifetime");
  if (heft && iterative) throw ConfigError("device: features=heft needs mode=oneshot");
  if (o.oom != "relative" && o.oom != "fixed" && o.oom != "placeto")
    throw ConfigError("device: oom must be relative, fixed or placeto, got '" + o.oom + "'");
  if (o.order != "topological" && o.order != "rank")
    throw ConfigError("device: order must be topological or rank, got '" + o.order + "'");
  DeviceStartPlacer placer;
  if (o.start != "single" && o.start != "random" && o.start != "round_robin") {
    placer = FindStartPlacer(o.start);
    if (!placer) {
      std::string names = "single, random, round_robin";
      for (const std::string& n : DeviceStartPlacerNames()) names += ", " + n;
      throw ConfigError("device: start must be one of " + names + "; got '" + o.start + "'");
    }
    if (!iterative) throw ConfigError("device: start=" + o.start + " needs mode=iterative");
  }
  if (!(o.start_minutes > 0) || !(o.start_minutes <= 1e4))
    throw ConfigError("device: start_minutes must be in (0, 1e4]");
  if (o.episode_start != "fixed" && o.episode_start != "best")
    throw ConfigError("device: episode_start must be fixed or best, got '" + o.episode_start + "'");
  if (o.episode_start == "best" && !iterative) throw ConfigError("device: episode_start=best needs mode=iterative");
  if (o.sim_cache < 0 || o.sim_cache > 1000000) throw ConfigError("device: sim_cache must be in [0, 1e6]");
  if (o.episode_result != "last" && o.episode_result != "best")
    throw ConfigError("device: episode_result must be last or best, got '" + o.episode_result + "'");
  if (o.episode_result == "best" && !iterative) throw ConfigError("device: episode_result=best needs mode=iterative");
  if (o.episode_groups < 0) throw ConfigError("device: episode_groups must be >= 0");
  if (o.episode_groups > 0 && !iterative) throw ConfigError("device: episode_groups needs mode=iterative");
  for (double v : {o.oom_factor, o.failing_time_s, o.placeto_s_per_gb, o.placeto_cap_s})
    if (!(v >= 0) || !std::isfinite(v) || v > 1e9)
      throw ConfigError("device: oom_factor, failing_time_s, placeto_s_per_gb and placeto_cap_s must be in [0, 1e9]");
  return placer;
}

// Op bottom / top levels over op times on the fastest device (no communication).
struct OpLevels {
  std::vector<double> bottom, top;
};

OpLevels OpLevelsOnFastest(const graphs::ComputeGraph& g, perf::Simulator& sim, int fastest) {
  const int nops = g.num_ops();
  OpLevels l{std::vector<double>(nops, 0), std::vector<double>(nops, 0)};
  for (int k = nops - 1; k >= 0; --k) {
    const int u = g.topo_order[k];
    double after = 0;
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e) after = std::max(after, l.bottom[g.out_targets[e]]);
    l.bottom[u] = sim.OpTimeOn(u, fastest) + after;
  }
  for (int k = 0; k < nops; ++k) {
    const int u = g.topo_order[k];
    const double end = l.top[u] + sim.OpTimeOn(u, fastest);
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e)
      l.top[g.out_targets[e]] = std::max(l.top[g.out_targets[e]], end);
  }
  return l;
}

// The op list — the topological order, or (order=rank) descending bottom level, ties in
// topological order (also a topological order, since a producer's level is at least its
// consumers') — and the groups (nodes) in order of their first op in it.
void OrderGroups(DeviceInstance* inst, const std::string& order, const std::vector<double>& bottom) {
  const graphs::ComputeGraph& g = inst->graph;
  const int nops = g.num_ops();
  std::vector<int> list = g.topo_order;
  if (order == "rank") {
    std::vector<int> topo_index(nops);
    for (int k = 0; k < nops; ++k) topo_index[g.topo_order[k]] = k;
    std::sort(list.begin(), list.end(), [&](int a, int b) {
      return bottom[a] != bottom[b] ? bottom[a] > bottom[b] : topo_index[a] < topo_index[b];
    });
  }
  inst->list_position.resize(nops);
  for (int k = 0; k < nops; ++k) inst->list_position[list[k]] = k;
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
}

// The name of node n's group (its colocation name, or its first op's).
std::string GroupName(const DeviceInstance& inst, int n) {
  const graphs::ComputeGraph& g = inst.graph;
  const int op0 = inst.group_ops[inst.order[n]].front();
  return g.colocation[op0].empty() ? g.names[op0] : g.colocation[op0];
}

// Each node's memory need and the devices that may run all its ops; ConfigError when none may,
// or (memory_mask, all_outputs estimate) when its need exceeds the largest of them.
void FindNeedAndAllowedDevices(DeviceInstance* inst, bool memory_mask, bool lifetime) {
  const graphs::ComputeGraph& g = inst->graph;
  const perf::Machine& m = inst->machine;
  const int ng = g.num_coloc_groups, nd = m.num_devices();
  inst->need.assign(ng, 0);
  inst->allowed.assign(static_cast<size_t>(ng) * nd, 1);
  for (int n = 0; n < ng; ++n) {
    double temp = 0;
    bool any = false;
    for (int op : inst->group_ops[inst->order[n]]) {
      inst->need[n] += g.param_bytes[op] + g.output_bytes[op];
      temp = std::max(temp, g.temp_bytes[op]);
      for (int d = 0; d < nd; ++d)
        if (!m.CanRun(d, g.kinds[op])) inst->allowed[static_cast<size_t>(n) * nd + d] = 0;
    }
    inst->need[n] += temp;
    double room = 0;
    for (int d = 0; d < nd; ++d)
      if (inst->allowed[static_cast<size_t>(n) * nd + d]) {
        any = true;
        room = std::max(room, m.sim.devices[d].memory_capacity);
      }
    const std::string group = GroupName(*inst, n);
    if (!any) throw ConfigError("device: no device of the machine can run every op of group '" + group + "'");
    if (memory_mask && !lifetime && inst->need[n] > room) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " needs %.4g bytes; the largest device it may use holds %.4g (memory_mask=true)",
                    inst->need[n], room);
      throw ConfigError("device: group '" + group + "'" + buf);
    }
  }
}

// start=<placer>: its placement as the nodes' start devices; ConfigError when it cannot place
// the graph, splits a group or uses a device a group may not run on.
void PlaceStartNodes(DeviceInstance* inst, const DeviceStartPlacer& placer, const std::string& start, double budget_s) {
  const graphs::ComputeGraph& g = inst->graph;
  const int nops = g.num_ops(), ng = g.num_coloc_groups, nd = inst->machine.num_devices();
  std::vector<int> ops;
  const Stopwatch cpu(BudgetClock::kCpu), wall(BudgetClock::kWall);
  try {
    ops = placer(g, inst->machine, budget_s);
    inst->start_cpu_s = cpu.Elapsed();
    inst->start_wall_s = wall.Elapsed();
  } catch (const InfeasibleAction& e) {  // m_etf / m_sct / m_topo: no room
    throw ConfigError("device: start=" + start + " cannot place the graph: " + e.what());
  }
  if (static_cast<int>(ops.size()) != nops)
    throw ConfigError("device: start=" + start + " placed " + std::to_string(ops.size()) + " of " +
                      std::to_string(nops) + " ops");
  inst->start_nodes.resize(ng);
  for (int n = 0; n < ng; ++n) {
    const auto& members = inst->group_ops[inst->order[n]];
    const int d = ops[members.front()];
    const std::string group = GroupName(*inst, n);
    if (d < 0 || d >= nd) throw ConfigError("device: start=" + start + " put group '" + group + "' on device " + std::to_string(d));
    for (int op : members)
      if (ops[op] != d) throw ConfigError("device: start=" + start + " splits group '" + group + "'");
    if (!inst->allowed[static_cast<size_t>(n) * nd + d])
      throw ConfigError("device: start=" + start + " puts group '" + group + "' on device " + std::to_string(d) +
                        ", which may not run its ops");
    inst->start_nodes[n] = d;
  }
}

// The nodes' basic features (kNodeFeatureNames) into sg; returns the graph's total FLOPs.
double FillNodeFeatures(const DeviceInstance& inst, perf::Simulator& sim, int fastest, StaticGraph* sg) {
  const graphs::ComputeGraph& g = inst.graph;
  const int ng = g.num_coloc_groups;
  double total_flops = 0;
  for (int n = 0; n < ng; ++n) {
    float* f = &sg->node_features[static_cast<size_t>(n) * sg->node_feature_dim];
    double flops = 0, bytes = 0, out = 0, params = 0, temp = 0, time = 0;
    std::vector<double> kinds(kKindNames.size(), 0);
    const auto& ops = inst.group_ops[inst.order[n]];
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
    f[7] = Log10p(inst.need[n]);
    for (size_t k = 0; k < kinds.size(); ++k) f[8 + k] = static_cast<float>(kinds[k] / ops.size());
    f[16] = ng > 1 ? static_cast<float>(n) / (ng - 1) : 0.f;
  }
  return total_flops;
}

// Node → node data edges (bytes): each producer's output counted once per consumer group;
// sorted by (source, destination).
std::map<std::pair<int, int>, double> GroupEdgeBytes(const DeviceInstance& inst) {
  const graphs::ComputeGraph& g = inst.graph;
  std::map<std::pair<int, int>, double> edge_bytes;
  std::vector<int> seen(g.num_coloc_groups, -1);
  for (int u = 0; u < g.num_ops(); ++u) {
    const int nu = inst.node_of_group[g.coloc_group[u]];
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e) {
      const int nv = inst.node_of_group[g.coloc_group[g.out_targets[e]]];
      if (nv == nu || seen[nv] == u) continue;
      seen[nv] = u;
      edge_bytes[{nu, nv}] += g.output_bytes[u];
    }
  }
  return edge_bytes;
}

// features=heft: op and group times per device, the HEFT node features (kHeftNodeFeatureNames)
// into sg, and each node's inputs from nodes decided earlier (CSR by consumer node).
void BuildHeftFeatures(DeviceInstance* inst, perf::Simulator& sim, int fastest, const OpLevels& levels,
                       const std::map<std::pair<int, int>, double>& edge_bytes, StaticGraph* sg) {
  const graphs::ComputeGraph& g = inst->graph;
  const int ng = g.num_coloc_groups, nd = inst->machine.num_devices(), nops = g.num_ops();
  inst->op_time.resize(static_cast<size_t>(nops) * nd);
  inst->op_in_degree.assign(nops, 0);
  for (int op = 0; op < nops; ++op)
    for (int d = 0; d < nd; ++d) inst->op_time[static_cast<size_t>(op) * nd + d] = sim.OpTimeOn(op, d);
  for (int t : g.out_targets) ++inst->op_in_degree[t];
  inst->time_on.assign(static_cast<size_t>(ng) * nd, 0);
  for (int n = 0; n < ng; ++n)
    for (int op : inst->group_ops[inst->order[n]])
      for (int d = 0; d < nd; ++d) inst->time_on[static_cast<size_t>(n) * nd + d] += sim.OpTimeOn(op, d);
  double critical = 0;
  for (int u = 0; u < nops; ++u) critical = std::max(critical, levels.bottom[u]);
  const int base = static_cast<int>(kNodeFeatureNames.size());
  for (int n = 0; n < ng; ++n) {
    float* f = &sg->node_features[static_cast<size_t>(n) * sg->node_feature_dim];
    double up = 0, down = std::numeric_limits<double>::infinity();
    for (int op : inst->group_ops[inst->order[n]]) up = std::max(up, levels.bottom[op]), down = std::min(down, levels.top[op]);
    const double t = inst->time_on[static_cast<size_t>(n) * nd + fastest];
    f[base] = inst->single_device_time > 0 ? static_cast<float>(t / inst->single_device_time) : 0.f;
    f[base + 1] = critical > 0 ? static_cast<float>(up / critical) : 0.f;
    f[base + 2] = critical > 0 ? static_cast<float>(down / critical) : 0.f;
  }
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

// The machine's and graph's summary (StaticGraph::metadata).
void FillMetadata(const DeviceInstance& inst, double total_flops, StaticGraph* sg) {
  const perf::Machine& m = inst.machine;
  const int nd = m.num_devices();
  int cpus = 0;
  double fastest_flops = 0, slowest_flops = std::numeric_limits<double>::infinity(), memory = 0;
  for (int d = 0; d < nd; ++d) {
    cpus += m.device_types[d] == "cpu";
    fastest_flops = std::max(fastest_flops, m.sim.devices[d].rates.peak_flops);
    slowest_flops = std::min(slowest_flops, m.sim.devices[d].rates.peak_flops);
    const double cap = m.sim.devices[d].memory_capacity;
    memory += std::isfinite(cap) ? cap : 1e15;  // unlimited counts as 1 PB
  }
  sg->metadata = {static_cast<float>(nd), static_cast<float>(cpus), static_cast<float>(nd - cpus),
                  Log10p(m.sim.link.bandwidth), static_cast<float>(m.sim.link.latency_s * 1e6),
                  static_cast<float>(m.sim.op_gap_s * 1e6), Log10p(total_flops), Log10p(inst.graph.num_ops()),
                  Log10p(inst.graph.num_coloc_groups), Log10p(inst.single_device_time * 1e6), Log10p(fastest_flops / 1e9),
                  fastest_flops > 0 ? static_cast<float>(slowest_flops / fastest_flops) : 0.f, Log10p(memory / 1e9)};
  sg->metadata_names = {"devices", "cpus", "accelerators", "log_link_bandwidth", "link_latency_us", "op_gap_us",
                        "log_total_flops", "log_ops", "log_groups", "log_single_device_time_us",
                        "log_fastest_gflops", "slowest_to_fastest_speed", "log_total_memory_gb"};
}

// The static graph: one node per group with its features, the data edges between them, the
// metadata (and, features=heft, the instance's per-device times: BuildHeftFeatures).
std::shared_ptr<StaticGraph> BuildStaticGraph(DeviceInstance* inst, perf::Simulator& sim, int fastest,
                                              const OpLevels& levels, bool heft) {
  const int ng = inst->graph.num_coloc_groups;
  auto sg = std::make_shared<StaticGraph>();
  sg->num_nodes = ng;
  sg->node_feature_names = kNodeFeatureNames;
  if (heft)
    sg->node_feature_names.insert(sg->node_feature_names.end(), kHeftNodeFeatureNames.begin(),
                                  kHeftNodeFeatureNames.end());
  sg->node_feature_dim = static_cast<int32_t>(sg->node_feature_names.size());
  sg->node_features.assign(static_cast<size_t>(ng) * sg->node_feature_dim, 0.f);
  const double total_flops = FillNodeFeatures(*inst, sim, fastest, sg.get());
  const std::map<std::pair<int, int>, double> edge_bytes = GroupEdgeBytes(*inst);
  if (heft) BuildHeftFeatures(inst, sim, fastest, levels, edge_bytes, sg.get());
  sg->directed = true;
  for (const auto& [key, b] : edge_bytes) {
    sg->edge_src.push_back(key.first);
    sg->edge_dst.push_back(key.second);
    sg->edge_weight.push_back(Log10p(b));
  }
  FillMetadata(*inst, total_flops, sg.get());
  sg->node_names.resize(ng);
  for (int n = 0; n < ng; ++n) sg->node_names[n] = GroupName(*inst, n);
  sg->Validate();
  return sg;
}

// The dynamic part's names and sizes (values: Reset).
void SizeDynamicState(int ng, int nd, bool iterative, bool heft, DynamicState* state) {
  state->node_dynamic_names = {"decided", "current", "start_time"};
  for (int d = 0; d < nd; ++d) state->node_dynamic_names.push_back("on_device_" + std::to_string(d));
  if (heft) state->node_dynamic_names.push_back("est_finish");
  state->node_dynamic_dim = static_cast<int32_t>(state->node_dynamic_names.size());
  state->node_dynamic.assign(static_cast<size_t>(ng) * state->node_dynamic_dim, 0.f);
  state->action_feature_names = {"relative_speed", "log_capacity_gb", "memory_used_fraction", "fits"};
  if (iterative) state->action_feature_names.push_back("current_device");  // 1 on the current group's device
  if (heft)
    state->action_feature_names.insert(state->action_feature_names.end(), kHeftActionFeatureNames.begin(),
                                       kHeftActionFeatureNames.end());
  state->action_feature_dim = static_cast<int32_t>(state->action_feature_names.size());
  state->action_features.assign(static_cast<size_t>(state->action_feature_dim) * nd, 0.f);
  state->action_mask.assign(nd, 0);
}

}  // namespace

// Options checked → the instance (graph, machine, op list, groups, memory needs, allowed
// devices, start placement) → the static graph → the dynamic state → the first reset.
DeviceEnv::DeviceEnv(const DeviceEnvOptions& opt) : o_(opt) {
  const DeviceStartPlacer placer = CheckOptions(&o_);
  iterative_ = o_.mode == "iterative";
  heft_ = o_.features == "heft";
  lifetime_ = o_.memory_estimate == "lifetime";
  start_best_ = o_.episode_start == "best";
  result_best_ = o_.episode_result == "best";

  auto inst = std::make_shared<DeviceInstance>();
  inst->graph = o_.graph_data ? *o_.graph_data : graphs::GraphFromSpec(o_.graph).graph;
  inst->machine = perf::MachineFromSpec(o_.machine);
  o_.machine = inst->machine.spec;
  const graphs::ComputeGraph& g = inst->graph;
  nd_ = inst->machine.num_devices();
  if (nd_ > 4096) throw ConfigError("device: at most 4096 devices");
  perf::Simulator sim(g, inst->machine.sim);
  const int fastest = inst->machine.FastestDevice();
  const OpLevels levels = OpLevelsOnFastest(g, sim, fastest);
  OrderGroups(inst.get(), o_.order, levels.bottom);
  FindNeedAndAllowedDevices(inst.get(), o_.memory_mask, lifetime_);
  // Single-device reference time (every op on the fastest device, memory ignored).
  const perf::SimResult& single = sim.Run(std::vector<int>(g.num_ops(), fastest));
  inst->single_device_time = single.makespan;
  if (lifetime_) BuildLifetime(inst.get(), single.op_start, fastest);
  if (placer) PlaceStartNodes(inst.get(), placer, o_.start, o_.start_minutes * 60);
  graph_ = BuildStaticGraph(inst.get(), sim, fastest, levels, heft_);

  const int ng = g.num_coloc_groups;
  auto names = std::make_shared<std::vector<std::string>>(std::vector<std::string>{
      "step_time_s", "effective_time_s", "oom", "oom_device", "bytes_transferred", "transfers", "placed_groups",
      "moves", "single_device_time_s"});
  for (int d = 0; d < nd_; ++d) names->push_back("utilisation_" + std::to_string(d));
  for (int d = 0; d < nd_; ++d) names->push_back("peak_memory_" + std::to_string(d));
  info_names_ = names;
  inst_ = inst;
  window_ = o_.episode_groups > 0 ? std::min<int32_t>(o_.episode_groups, ng) : 0;
  SizeDynamicState(ng, nd_, iterative_, heft_, &state_);
  if (iterative_ && o_.sim_cache > 0) {
    cache_ = std::make_unique<SimCache>();
    const double entry = ng * (sizeof(uint16_t) + sizeof(float)) + (info_names_->size() + 2) * sizeof(double) + 48;
    cache_->slots = static_cast<int>(std::max(1.0, std::min<double>(o_.sim_cache, 16e6 / entry)));
  }
  Reset(0);
  best_nodes_.clear();  // episode_start=best: the first reset by the caller starts from `start`
  if (!inst_->start_nodes.empty() && o_.memory_mask) {
    int32_t refused = -1;
    const std::vector<double> est = ReplayMemoryEstimate(inst_->start_nodes, &refused);
    if (refused >= 0) {
      const int32_t d = inst_->start_nodes[refused];
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "device: start=%s does not fit the memory mask: group '%s' on device %d (estimate %.4g of %.4g bytes, "
                    "memory_estimate=%s)",
                    o_.start.c_str(), graph_->node_names[refused].c_str(), d, est[d],
                    inst_->machine.sim.devices[d].memory_capacity, o_.memory_estimate.c_str());
      throw ConfigError(buf);
    }
  }
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
      lifetime_(o.lifetime_),
      prof_(o.prof_),
      copy_end_(o.copy_end_),
      diff_(o.diff_),
      touched_(o.touched_),
      fits_(o.fits_),
      last_f_(o.last_f_),
      start_best_(o.start_best_),
      best_nodes_(o.best_nodes_),
      best_time_(o.best_time_),
      result_best_(o.result_best_),
      window_(o.window_),
      window_start_(o.window_start_),
      ep_best_nodes_(o.ep_best_nodes_),
      ep_best_time_(o.ep_best_time_),
      hash_(o.hash_),
      heft_(o.heft_),
      finish_(o.finish_),
      device_free_(o.device_free_),
      eft_scratch_(o.eft_scratch_),
      op_finish_(o.op_finish_),
      op_pending_(o.op_pending_),
      op_scheduled_(o.op_scheduled_),
      state_(o.state_),
      info_(o.info_) {
  if (o.cache_) {  // a clone starts with an empty cache (cached values are exact: nothing observable differs)
    cache_ = std::make_unique<SimCache>();
    cache_->slots = o.cache_->slots;
  }
}

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
  o.start_minutes = p.GetDouble("start_minutes", o.start_minutes);
  o.episode_start = p.GetString("episode_start", o.episode_start);
  o.episode_result = p.GetString("episode_result", o.episode_result);
  const int64_t window = p.GetInt("episode_groups", o.episode_groups);
  if (window < 0 || window > (int64_t{1} << 30)) throw ConfigError("device: episode_groups must be >= 0");
  o.episode_groups = static_cast<int>(window);
  const int64_t cache = p.GetInt("sim_cache", o.sim_cache);
  if (cache < 0 || cache > 1000000) throw ConfigError("device: sim_cache must be in [0, 1e6]");
  o.sim_cache = static_cast<int>(cache);
  o.features = p.GetString("features", o.features);
  o.order = p.GetString("order", o.order);
  o.memory_estimate = p.GetString("memory_estimate", o.memory_estimate);
  const int64_t buckets = p.GetInt("memory_buckets", o.memory_buckets);
  if (buckets < 1 || buckets > 65536) throw ConfigError("device: memory_buckets must be in [1, 65536]");
  o.memory_buckets = static_cast<int>(buckets);
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
  if (o_.start_minutes != 1) d("start_minutes", o_.start_minutes);  // absent = 1
  if (o_.episode_start != "fixed") s("episode_start", o_.episode_start);  // absent = fixed
  if (o_.episode_result != "last") s("episode_result", o_.episode_result);  // absent = last
  if (o_.episode_groups != 0) s("episode_groups", std::to_string(o_.episode_groups));
  if (o_.sim_cache != 4096) s("sim_cache", std::to_string(o_.sim_cache));
  if (o_.features != "basic") s("features", o_.features);  // absent = basic: older names unchanged
  if (o_.order != "topological") s("order", o_.order);
  if (o_.memory_estimate != "all_outputs") s("memory_estimate", o_.memory_estimate);  // absent = all_outputs
  if (o_.memory_buckets != 256) s("memory_buckets", std::to_string(o_.memory_buckets));
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

std::vector<int32_t> DeviceEnv::NodePlacement(const std::vector<int>& op_device) const {
  if (static_cast<int>(op_device.size()) != inst_->graph.num_ops())
    throw ConfigError("device: placement has " + std::to_string(op_device.size()) + " entries for " +
                      std::to_string(inst_->graph.num_ops()) + " ops");
  std::vector<int32_t> nd(num_groups());
  for (int32_t n = 0; n < num_groups(); ++n) nd[n] = op_device[inst_->group_ops[inst_->order[n]].front()];
  return nd;
}

std::vector<double> DeviceEnv::ReplayMemoryEstimate(const std::vector<int32_t>& node_device,
                                                    int32_t* first_refused) const {
  const int32_t n = num_groups();
  if (static_cast<int32_t>(node_device.size()) != n)
    throw ConfigError("device: placement has " + std::to_string(node_device.size()) + " entries for " +
                      std::to_string(n) + " groups");
  DeviceEnv e(*this);
  e.node_dev_.assign(n, -1);
  e.used_.assign(nd_, 0.0);
  if (lifetime_) {
    std::fill(e.prof_.begin(), e.prof_.end(), 0.0);
    std::fill(e.copy_end_.begin(), e.copy_end_.end(), -1);
  }
  if (first_refused) *first_refused = -1;
  for (int32_t node = 0; node < n; ++node) {
    const int32_t d = node_device[node];
    if (d < 0 || d >= nd_) throw ConfigError("device: group " + std::to_string(node) + " on device " + std::to_string(d));
    if (first_refused && *first_refused < 0 && !e.Fits(node, d)) *first_refused = node;
    e.SetNodeDevice(node, d);
  }
  return e.used_;
}

void DeviceEnv::Move(int32_t node, int32_t d, bool commit) {
  const DeviceInstance& I = *inst_;
  const int B = I.mem_buckets;
  const int32_t old = node_dev_[node];
  touched_[d] = 1;
  if (old == d) return;
  auto add = [&](int dev, int b0, int b1, double bytes) {
    if (b1 < b0) return;
    double* row = &diff_[static_cast<size_t>(dev) * (B + 1)];
    row[b0] += bytes;
    row[b1 + 1] -= bytes;
    touched_[dev] = 1;
  };
  // Last bucket of the consumers of tensor t on device e other than `node` (-1: none).
  auto others_end = [&](int32_t t, int32_t e) {
    int32_t end = -1;
    for (int k = I.tc_offsets[t]; k < I.tc_offsets[t + 1]; ++k)
      if (I.tc_node[k] != node && node_dev_[I.tc_node[k]] == e) end = std::max(end, I.tc_last[k]);
    return end;
  };
  auto set_end = [&](int32_t t, int32_t e, int32_t end) {
    if (commit) copy_end_[static_cast<size_t>(t) * nd_ + e] = end;
  };
  if (old >= 0) {  // leave old: its own memory, its share of the copies received there; its consumers there now receive copies
    for (int k = I.own_offsets[node]; k < I.own_offsets[node + 1]; ++k) add(old, I.own[k].b0, I.own[k].b1, -I.own[k].bytes);
    for (int k = I.in_offsets_mem[node]; k < I.in_offsets_mem[node + 1]; ++k) {
      const int32_t t = I.in_tensor[k];
      const auto& ct = I.copy_tensors[t];
      if (node_dev_[ct.producer] == old) continue;  // read locally: no copy
      const int32_t cur = copy_end_[static_cast<size_t>(t) * nd_ + old], rest = others_end(t, old);
      add(old, rest < 0 ? ct.b0 : rest + 1, cur, -ct.bytes);
      set_end(t, old, rest);
    }
    for (int k = I.out_offsets_mem[node]; k < I.out_offsets_mem[node + 1]; ++k) {
      const int32_t t = I.out_tensor[k];
      const int32_t end = others_end(t, old);
      add(old, I.copy_tensors[t].b0, end, I.copy_tensors[t].bytes);
      set_end(t, old, end);
    }
  }
  for (int k = I.own_offsets[node]; k < I.own_offsets[node + 1]; ++k) add(d, I.own[k].b0, I.own[k].b1, I.own[k].bytes);
  for (int k = I.in_offsets_mem[node]; k < I.in_offsets_mem[node + 1]; ++k) {
    const int32_t t = I.in_tensor[k];
    const auto& ct = I.copy_tensors[t];
    if (node_dev_[ct.producer] == d) continue;
    const int32_t cur = copy_end_[static_cast<size_t>(t) * nd_ + d], end = std::max(cur, I.in_last[k]);
    add(d, cur < 0 ? ct.b0 : cur + 1, end, ct.bytes);
    set_end(t, d, end);
  }
  for (int k = I.out_offsets_mem[node]; k < I.out_offsets_mem[node + 1]; ++k) {  // its consumers on d read locally
    const int32_t t = I.out_tensor[k];
    const int32_t cur = copy_end_[static_cast<size_t>(t) * nd_ + d];
    add(d, I.copy_tensors[t].b0, cur, -I.copy_tensors[t].bytes);
    set_end(t, d, -1);
  }
}

bool DeviceEnv::CheckDiff() const {
  const int B = inst_->mem_buckets;
  bool ok = true;
  for (int dev = 0; dev < nd_; ++dev) {
    if (!touched_[dev]) continue;
    touched_[dev] = 0;
    double* row = &diff_[static_cast<size_t>(dev) * (B + 1)];
    const double* p = &prof_[static_cast<size_t>(dev) * B];
    const double cap = inst_->machine.sim.devices[dev].memory_capacity;
    double run = 0;
    for (int b = 0; b < B; ++b) {
      run += row[b];
      row[b] = 0;
      if (p[b] + run > cap) ok = false;
    }
    row[B] = 0;
  }
  return ok;
}

void DeviceEnv::CommitDiff() {
  const int B = inst_->mem_buckets;
  for (int dev = 0; dev < nd_; ++dev) {
    if (!touched_[dev]) continue;
    touched_[dev] = 0;
    double* row = &diff_[static_cast<size_t>(dev) * (B + 1)];
    double* p = &prof_[static_cast<size_t>(dev) * B];
    double run = 0, peak = 0;
    for (int b = 0; b < B; ++b) {
      run += row[b];
      row[b] = 0;
      p[b] += run;
      peak = std::max(peak, p[b]);
    }
    row[B] = 0;
    used_[dev] = peak;
  }
}

bool DeviceEnv::Fits(int32_t node, int32_t d) {
  if (lifetime_) {
    Move(node, d, false);
    return CheckDiff();
  }
  const double need = inst_->need[node];
  const double used = used_[d] - (node_dev_[node] == d ? need : 0);
  return used + need <= inst_->machine.sim.devices[d].memory_capacity;
}

void DeviceEnv::SetNodeDevice(int32_t node, int32_t d) {
  const int32_t old = node_dev_[node];
  if (lifetime_) {
    Move(node, d, true);
    CommitDiff();
  } else {
    if (old >= 0) used_[old] -= inst_->need[node];
    used_[d] += inst_->need[node];
  }
  if (old >= 0) hash_ ^= NodeHash(node, old);
  hash_ ^= NodeHash(node, d);
  node_dev_[node] = d;
  for (int op : inst_->group_ops[inst_->order[node]]) op_dev_[op] = d;
}

bool DeviceEnv::Recall(double* eff) {
  if (!cache_) return false;
  SimCache& c = *cache_;
  const auto it = c.index.find(hash_);
  if (it == c.index.end()) return false;
  const int slot = it->second;
  const size_t n = node_dev_.size();
  const uint16_t* key = &c.keys[slot * n];
  for (size_t k = 0; k < n; ++k)
    if (key[k] != node_dev_[k]) return false;  // a hash collision: simulate
  const size_t ni = info_.size();
  const double* info = &c.infos[slot * ni];
  for (size_t k = 0; k < ni; ++k)
    if (k < 6 || k >= 9) info_[k] = info[k];
  const int32_t dim = state_.node_dynamic_dim;
  const float* st = &c.starts[slot * n];
  for (size_t k = 0; k < n; ++k) {
    start_frac_[k] = st[k];
    state_.node_dynamic[k * dim + 2] = st[k];
  }
  *eff = c.effs[slot];
  ++c.hits;
  return true;
}

void DeviceEnv::Remember(double eff) {
  if (!cache_) return;
  SimCache& c = *cache_;
  const size_t n = node_dev_.size(), ni = info_.size();
  if (c.keys.empty()) {
    c.keys.resize(c.slots * n);
    c.starts.resize(c.slots * n);
    c.infos.resize(c.slots * ni);
    c.effs.resize(c.slots);
    c.hashes.resize(c.slots);
    c.full.assign(c.slots, 0);
    c.index.reserve(c.slots);
  }
  const int slot = c.next;
  c.next = (c.next + 1) % c.slots;
  if (c.full[slot]) {
    const auto it = c.index.find(c.hashes[slot]);
    if (it != c.index.end() && it->second == slot) c.index.erase(it);
  }
  c.full[slot] = 1;
  c.hashes[slot] = hash_;
  c.index[hash_] = slot;
  std::copy(node_dev_.begin(), node_dev_.end(), &c.keys[slot * n]);
  std::copy(start_frac_.begin(), start_frac_.end(), &c.starts[slot * n]);
  std::copy(info_.begin(), info_.end(), &c.infos[slot * ni]);
  c.effs[slot] = eff;
}

double DeviceEnv::Simulate() {
  double eff = 0;
  if (!Recall(&eff)) {
    eff = SimulateFully();
    Remember(eff);
  }
  if (start_best_ && (best_nodes_.empty() || eff < best_time_)) {
    best_nodes_ = node_dev_;
    best_time_ = eff;
  }
  if (result_best_ && (ep_best_nodes_.empty() || eff < ep_best_time_)) {
    ep_best_nodes_ = node_dev_;
    ep_best_time_ = eff;
  }
  return eff;
}

double DeviceEnv::SimulateFully() {
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
  f[0] = (window_ > 0 ? (node - window_start_ + num_groups()) % num_groups() : node) < state_.step ? 1.f : 0.f;
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
  for (int d = 0; d < nd_; ++d) fits_[d] = cur >= 0 && Fits(cur, d) ? 1 : 0;
  for (int d = 0; d < nd_; ++d) {
    const double cap = devs[d].memory_capacity;
    const bool ok = cur >= 0 && inst_->allowed[static_cast<size_t>(cur) * nd_ + d] &&
                    (!o_.memory_mask || fits_[d] || (iterative_ && node_dev_[cur] == d));
    state_.action_mask[d] = ok ? 1 : 0;
    state_.action_features[d] = fastest > 0 ? static_cast<float>(devs[d].rates.peak_flops / fastest) : 0.f;
    state_.action_features[nd_ + d] = std::isfinite(cap) ? static_cast<float>(std::log10(1 + cap / 1e9)) : 6.f;
    state_.action_features[2 * nd_ + d] = std::isfinite(cap) && cap > 0 ? static_cast<float>(used_[d] / cap) : 0.f;
    state_.action_features[3 * nd_ + d] = fits_[d] ? 1.f : 0.f;
    if (iterative_) state_.action_features[4 * nd_ + d] = cur >= 0 && node_dev_[cur] == d ? 1.f : 0.f;
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
  const int32_t n = num_groups();
  node_dev_.assign(n, -1);
  hash_ = 0;
  ep_best_nodes_.clear();
  start_frac_.assign(n, 0.f);
  used_.assign(nd_, 0.0);
  fits_.assign(nd_, 0);
  if (lifetime_) {
    const size_t B = static_cast<size_t>(inst_->mem_buckets);
    prof_.assign(nd_ * B, 0.0);
    copy_end_.assign(inst_->copy_tensors.size() * nd_, -1);
    diff_.assign(nd_ * (B + 1), 0.0);
    touched_.assign(nd_, 0);
  }
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
  window_start_ = 0;
  if (window_ > 0) {  // its own stream: start=random's draws stay those of the seed
    std::mt19937_64 wrng(seed ^ 0x5bd1e9955bd1e995ull);
    window_start_ = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, n - 1)(wrng));
  }
  state_.current_node = window_start_;
  if (iterative_ && (!best_nodes_.empty() || !inst_->start_nodes.empty())) {
    const std::vector<int32_t>& from = best_nodes_.empty() ? inst_->start_nodes : best_nodes_;
    for (int32_t node = 0; node < n; ++node) SetNodeDevice(node, from[node]);
    info_[6] = n;
    last_f_ = Transform(Simulate());
  } else if (iterative_) {
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
  const int32_t n = num_groups();
  StepResult r;
  const int32_t before = node_dev_[node];
  SetNodeDevice(node, action);
  if (heft_) ScheduleReady(node);
  ++state_.step;
  if (window_ > 0) state_.current_node = state_.step < window_ ? (window_start_ + state_.step) % n : -1;
  else state_.current_node = node + 1 < n ? node + 1 : -1;
  if (iterative_) {
    const double f0 = last_f_;
    if (before != action) {
      info_[7] += 1;
      last_f_ = Transform(Simulate());
    }
    if (result_best_ && state_.current_node < 0 && ep_best_time_ < info_[1]) {
      // episode_result=best: the episode ends on the best placement it visited.
      for (int32_t k = 0; k < n; ++k)
        if (node_dev_[k] != ep_best_nodes_[k]) {
          SetNodeDevice(k, ep_best_nodes_[k]);
          WriteNodeRow(k);
        }
      last_f_ = Transform(Simulate());
    }
    r.reward = f0 - last_f_;
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

std::vector<int> AcceleratorDevices(const perf::Machine& m) {
  std::vector<int> a;
  for (int d = 0; d < m.num_devices(); ++d)
    if (m.device_types[d] != "cpu") a.push_back(d);
  if (a.empty())
    for (int d = 0; d < m.num_devices(); ++d) a.push_back(d);
  return a;
}

void CheckFuseMaxGroupFraction(double fraction) {
  if (!(fraction >= 0 && fraction <= 1)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", fraction);
    throw ConfigError(std::string("fuse_max_group_fraction must be in [0, 1] (0 = no cap), got ") + buf);
  }
}

double FuseMaxGroupBytes(const perf::Machine& m, double fraction) {
  CheckFuseMaxGroupFraction(fraction);
  double smallest = std::numeric_limits<double>::infinity();
  for (int d : AcceleratorDevices(m)) smallest = std::min(smallest, m.sim.devices[d].memory_capacity);
  return fraction > 0 && std::isfinite(smallest) ? fraction * smallest : 0.0;
}

}  // namespace placerl::env
