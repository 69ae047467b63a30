// Cycle-free fusion of a compute graph (see fusion.h). Clusters of ops are union–find sets with
// adjacency lists of member ops (resolved lazily to cluster roots); a topological order of the
// clusters (seq_, pos_) is kept valid across merges so that cycle checks only search between
// the two ends. Placement groups ("units") are union–find sets of co-location groups.
#include "datasets/graphs/fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

class Fuser {
 public:
  Fuser(const ComputeGraph& g, const FusionOptions& o) : g_(g), o_(o) {
    const int n = g.num_ops();
    parent_.resize(n);
    size_.assign(n, 1);
    succ_.resize(n);
    pred_.resize(n);
    pos_.assign(n, -1);
    stamp_.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      parent_[i] = i;
      succ_[i].assign(g.out_targets.begin() + g.out_offsets[i], g.out_targets.begin() + g.out_offsets[i + 1]);
      pred_[i].assign(g.in_sources.begin() + g.in_offsets[i], g.in_sources.begin() + g.in_offsets[i + 1]);
    }
    seq_ = g.topo_order;
    for (int p = 0; p < n; ++p) pos_[seq_[p]] = p;
    unit_parent_.resize(g.num_coloc_groups);
    for (int k = 0; k < g.num_coloc_groups; ++k) unit_parent_[k] = k;
    units_ = g.num_coloc_groups;
  }

  FusedGraph Run() {
    if (o_.fuse_colocated) FuseColocated();
    if (o_.target_groups > 0 && units_ > o_.target_groups) GroupDown();
    return Output();
  }

 private:
  int Find(int c) {
    while (parent_[c] != c) c = parent_[c] = parent_[parent_[c]];
    return c;
  }
  int FindUnit(int k) {
    while (unit_parent_[k] != k) k = unit_parent_[k] = unit_parent_[unit_parent_[k]];
    return k;
  }
  int UnitOf(int cluster) { return FindUnit(g_.coloc_group[cluster]); }

  // Resolves an adjacency list to distinct cluster roots other than `self`.
  void Normalize(std::vector<int>& v, int self) {
    for (int& x : v) x = Find(x);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.erase(std::remove(v.begin(), v.end(), self), v.end());
  }

  // Merges clusters a → b (an edge) when no other path a ⇝ b exists; returns whether it did.
  bool TryMerge(int a, int b, int budget) {
    Normalize(succ_[a], a);
    Normalize(pred_[b], b);
    if (succ_[a].size() == 1) return Merge(a, b, kAtB);
    if (pred_[b].size() == 1) return Merge(a, b, kAtA);
    // Search a's other descendants that precede b in the order; reaching b = a cycle.
    const int pb = pos_[b];
    ++cur_stamp_;
    std::vector<int> stack;
    for (int s : succ_[a])
      if (s != b && pos_[s] < pb) {
        stamp_[s] = cur_stamp_;
        stack.push_back(s);
      }
    int visited = 0;
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (++visited > budget) return false;
      for (int y : succ_[x]) {
        y = Find(y);
        if (y == b) return false;
        if (pos_[y] < pb && stamp_[y] != cur_stamp_) {
          stamp_[y] = cur_stamp_;
          stack.push_back(y);
        }
      }
    }
    return Merge(a, b, kReorder);  // the stamped clusters are a's descendants before b
  }

  enum Where { kAtA, kAtB, kReorder };
  bool Merge(int a, int b, Where where) {
    const int pa = pos_[a], pb = pos_[b];
    int r = a, other = b;
    if (size_[b] > size_[a]) std::swap(r, other);
    parent_[other] = r;
    size_[r] += size_[other];
    if (where == kAtA || where == kAtB) {
      seq_[where == kAtA ? pb : pa] = -1;
      seq_[where == kAtA ? pa : pb] = r;
      pos_[r] = where == kAtA ? pa : pb;
    } else {
      // Non-descendants of a stay before the merged cluster, a's descendants move after it.
      std::vector<int> rest, desc;
      for (int p = pa + 1; p < pb; ++p) {
        const int x = seq_[p];
        if (x >= 0) (stamp_[x] == cur_stamp_ ? desc : rest).push_back(x);
      }
      int p = pa;
      for (int x : rest) pos_[seq_[p] = x] = p, ++p;
      pos_[seq_[p] = r] = p, ++p;
      for (int x : desc) pos_[seq_[p] = x] = p, ++p;
      for (; p <= pb; ++p) seq_[p] = -1;
    }
    succ_[r].insert(succ_[r].end(), succ_[other].begin(), succ_[other].end());
    pred_[r].insert(pred_[r].end(), pred_[other].begin(), pred_[other].end());
    std::vector<int>().swap(succ_[other]);
    std::vector<int>().swap(pred_[other]);
    Normalize(succ_[r], r);
    Normalize(pred_[r], r);
    return true;
  }

  // Step 1: directly connected ops of one co-location group.
  void FuseColocated() {
    for (int pass = 0; pass < 4; ++pass) {
      bool merged = false;
      for (int u : g_.topo_order)
        for (int e = g_.out_offsets[u]; e < g_.out_offsets[u + 1]; ++e) {
          const int v = g_.out_targets[e];
          if (UnitOf(Find(u)) != UnitOf(Find(v))) continue;
          const int a = Find(u), b = Find(v);
          if (a != b && TryMerge(a, b, o_.cycle_check_budget)) merged = true;
        }
      if (!merged) break;
    }
  }

  // Step 2: the lightest placement group joins a neighbour group until target_groups remain.
  void GroupDown() {
    const int n = g_.num_ops(), k = g_.num_coloc_groups;
    std::vector<double> flops(k, 0), ops(k, 0);
    std::vector<std::vector<int>> clusters(k);
    for (int i = 0; i < n; ++i) {
      const int u = UnitOf(Find(i));
      flops[u] += g_.flops[i];
      ops[u] += 1;
      if (Find(i) == i) clusters[u].push_back(i);
    }
    // Memory cap (fusion.h): per unit the all_outputs sums, or its live-range profile.
    const bool capped = o_.max_group_bytes > 0;
    const OpLiveRanges* lr = capped ? o_.live_ranges : nullptr;
    const int B = lr ? lr->buckets : 0;
    std::vector<double> held, temp;
    std::vector<std::vector<double>> profile;
    if (lr) {
      profile.resize(k);
      for (int i = 0; i < n; ++i) {
        std::vector<double>& p = profile[UnitOf(Find(i))];
        if (p.empty()) p.assign(B + 1, 0.0);
        const int b = lr->bucket[i];
        p[0] += g_.param_bytes[i], p[B] -= g_.param_bytes[i];
        p[b] += g_.temp_bytes[i], p[b + 1] -= g_.temp_bytes[i];
        p[b] += g_.output_bytes[i], p[lr->last_use[i] + 1] -= g_.output_bytes[i];
      }
      for (std::vector<double>& p : profile) {
        if (p.empty()) continue;
        std::partial_sum(p.begin(), p.end(), p.begin());
        p.pop_back();
      }
    } else if (capped) {
      held.assign(k, 0.0);
      temp.assign(k, 0.0);
      for (int i = 0; i < n; ++i) {
        const int u = UnitOf(Find(i));
        held[u] += g_.param_bytes[i] + g_.output_bytes[i];
        temp[u] = std::max(temp[u], g_.temp_bytes[i]);
      }
    }
    auto fits = [&](int a, int b) {
      if (!capped) return true;
      if (!lr) return held[a] + held[b] + std::max(temp[a], temp[b]) <= o_.max_group_bytes;
      const double* pa = profile[a].data();
      const double* pb = profile[b].data();
      for (int t = 0; t < B; ++t)
        if (pa[t] + pb[t] > o_.max_group_bytes) return false;
      return true;
    };
    using Entry = std::tuple<double, double, int>;  // flops, ops, unit
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    for (int u = 0; u < k; ++u)
      if (FindUnit(u) == u && ops[u] > 0) heap.emplace(flops[u], ops[u], u);
    auto pop_valid = [&]() {
      while (!heap.empty()) {
        const auto [f, c, u] = heap.top();
        heap.pop();
        if (FindUnit(u) == u && f == flops[u] && c == ops[u]) return u;
      }
      return -1;
    };
    std::map<int, int> links;  // neighbour unit → edges
    std::vector<std::pair<int, int>> ranked;  // (−edges, unit)
    while (units_ > o_.target_groups) {
      const int u = pop_valid();
      if (u < 0) break;
      links.clear();
      int consumer_unit = -1;
      for (int c : clusters[u]) {
        if (Find(c) != c) continue;
        Normalize(succ_[c], c);
        Normalize(pred_[c], c);
        if (succ_[c].size() == 1 && UnitOf(succ_[c][0]) != u && consumer_unit < 0) consumer_unit = UnitOf(succ_[c][0]);
        for (int y : succ_[c])
          if (UnitOf(y) != u) ++links[UnitOf(y)];
        for (int y : pred_[c])
          if (UnitOf(y) != u) ++links[UnitOf(y)];
      }
      int w = -1;
      if (!capped) {
        w = consumer_unit;
        if (w < 0) {
          int best = 0;
          for (const auto& [unit, count] : links)
            if (count > best) best = count, w = unit;
        }
      } else {
        // The same preference as uncapped (consumer, then most edges, lowest unit first), the
        // first candidate within the cap.
        if (consumer_unit >= 0 && fits(u, consumer_unit)) w = consumer_unit;
        if (w < 0) {
          ranked.clear();
          for (const auto& [unit, count] : links)
            if (unit != consumer_unit) ranked.emplace_back(-count, unit);
          std::sort(ranked.begin(), ranked.end());
          for (const auto& [neg, unit] : ranked)
            if (fits(u, unit)) {
              w = unit;
              break;
            }
        }
      }
      if (w < 0 && links.empty()) {  // no neighbour: the next lightest group
        w = pop_valid();
        if (w >= 0 && !fits(u, w)) {
          heap.emplace(flops[w], ops[w], w);  // stays a candidate for later joins
          w = -1;
        }
      }
      if (w < 0) {
        if (!capped) break;
        continue;  // capped: u joins nothing; set aside (another group may still join it)
      }
      // Join the units; the longer cluster list absorbs the shorter one.
      int r = u, o = w;
      if (clusters[o].size() > clusters[r].size()) std::swap(r, o);
      unit_parent_[o] = r;
      flops[r] += flops[o];
      ops[r] += ops[o];
      if (lr) {
        for (int t = 0; t < B; ++t) profile[r][t] += profile[o][t];
        std::vector<double>().swap(profile[o]);
      } else if (capped) {
        held[r] += held[o];
        temp[r] = std::max(temp[r], temp[o]);
      }
      --units_;
      const std::vector<int> joined = clusters[o];
      clusters[r].insert(clusters[r].end(), joined.begin(), joined.end());
      std::vector<int>().swap(clusters[o]);
      heap.emplace(flops[r], ops[r], r);
      // Fuse directly connected clusters of the joined group where cycle-free.
      constexpr int kJoinBudget = 256;
      for (int c : joined) {
        const std::vector<int> out = succ_[Find(c)], in = pred_[Find(c)];
        for (int y : out) {
          const int a = Find(c), b = Find(y);
          if (a != b && UnitOf(b) == r) TryMerge(a, b, kJoinBudget);
        }
        for (int y : in) {
          const int a = Find(y), b = Find(c);
          if (a != b && UnitOf(a) == r) TryMerge(a, b, kJoinBudget);
        }
      }
    }
  }

  FusedGraph Output() {
    const int n = g_.num_ops();
    FusedGraph out;
    std::vector<int> node_of(n, -1);
    int nodes = 0;
    for (int c : seq_)
      if (c >= 0) node_of[c] = nodes++;
    out.op_to_node.resize(n);
    std::vector<std::vector<int>> members(nodes);
    for (int i = 0; i < n; ++i) {
      out.op_to_node[i] = node_of[Find(i)];
      members[out.op_to_node[i]].push_back(i);
    }
    // A placement group is named after its first co-location group's name (or first op).
    std::vector<int> first_op(g_.num_coloc_groups, -1);
    for (int i = n - 1; i >= 0; --i) first_op[g_.coloc_group[i]] = i;
    std::vector<OpInfo> ops(nodes);
    for (int v = 0; v < nodes; ++v) {
      OpInfo& o = ops[v];
      const std::vector<int>& m = members[v];
      o.name = g_.names[m[0]] + (m.size() > 1 ? "+" + std::to_string(m.size() - 1) : "");
      int heaviest = m[0];
      bool timed = true;
      o.time_s = 0;
      for (int i : m) {
        if (g_.flops[i] > g_.flops[heaviest]) heaviest = i;
        o.flops += g_.flops[i];
        o.bytes += g_.bytes[i];
        o.param_bytes += g_.param_bytes[i];
        o.temp_bytes = std::max(o.temp_bytes, g_.temp_bytes[i]);
        if (g_.time_s[i] < 0) timed = false;
        o.time_s += std::max(0.0, g_.time_s[i]);
        bool leaves = g_.out_offsets[i] == g_.out_offsets[i + 1];
        for (int e = g_.out_offsets[i]; e < g_.out_offsets[i + 1] && !leaves; ++e)
          leaves = out.op_to_node[g_.out_targets[e]] != v;
        if (leaves) o.output_bytes += g_.output_bytes[i];
        for (int e = g_.in_offsets[i]; e < g_.in_offsets[i + 1]; ++e)
          if (out.op_to_node[g_.in_sources[e]] != v) o.inputs.push_back(out.op_to_node[g_.in_sources[e]]);
      }
      if (!timed) o.time_s = -1;
      o.kind = g_.kinds[heaviest];
      std::sort(o.inputs.begin(), o.inputs.end());
      o.inputs.erase(std::unique(o.inputs.begin(), o.inputs.end()), o.inputs.end());
      const int rep = first_op[FindUnit(g_.coloc_group[m[0]])];
      o.colocation = g_.colocation[rep].empty() ? g_.names[rep] : g_.colocation[rep];
    }
    out.coarse = BuildComputeGraph(ops);
    out.num_groups = out.coarse.num_coloc_groups;
    out.op_to_group.resize(n);
    for (int i = 0; i < n; ++i) out.op_to_group[i] = out.coarse.coloc_group[out.op_to_node[i]];
    return out;
  }

  const ComputeGraph& g_;
  const FusionOptions& o_;
  std::vector<int> parent_, size_, pos_, seq_, stamp_;
  std::vector<std::vector<int>> succ_, pred_;
  std::vector<int> unit_parent_;
  int units_ = 0;
  int cur_stamp_ = 0;
};

void CheckLiveRanges(const ComputeGraph& g, const OpLiveRanges& r) {
  const size_t n = static_cast<size_t>(g.num_ops());
  if (r.buckets < 1 || r.bucket.size() != n || r.last_use.size() != n)
    throw ConfigError("fusion: live ranges cover " + std::to_string(r.bucket.size()) + " ops in " +
                      std::to_string(r.buckets) + " buckets; the graph has " + std::to_string(n) + " ops");
  for (size_t i = 0; i < n; ++i)
    if (r.bucket[i] < 0 || r.bucket[i] > r.last_use[i] || r.last_use[i] >= r.buckets)
      throw ConfigError("fusion: live range of op " + std::to_string(i) + " is not within [0, buckets)");
}

}  // namespace

OpLiveRanges LiveRangesAlongSchedule(const ComputeGraph& g, const std::vector<double>& start, int max_buckets) {
  const int n = g.num_ops();
  if (static_cast<int>(start.size()) != n)
    throw ConfigError("fusion: " + std::to_string(start.size()) + " start times for " + std::to_string(n) + " ops");
  std::vector<int> by_start(n);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::stable_sort(by_start.begin(), by_start.end(), [&](int a, int b) { return start[a] < start[b]; });
  OpLiveRanges r;
  r.buckets = std::max(1, std::min(max_buckets, n));
  r.bucket.assign(n, 0);
  for (int k = 0; k < n; ++k)
    r.bucket[by_start[k]] = static_cast<int>(static_cast<int64_t>(k) * r.buckets / std::max(1, n));
  r.last_use = r.bucket;
  for (int i = 0; i < n; ++i)
    for (int e = g.out_offsets[i]; e < g.out_offsets[i + 1]; ++e)
      r.last_use[i] = std::max(r.last_use[i], r.bucket[g.out_targets[e]]);
  return r;
}

double GroupMemoryBytes(const ComputeGraph& g, const std::vector<int>& ops, const OpLiveRanges* lr) {
  if (!lr) {
    double held = 0, temp = 0;
    for (int i : ops) held += g.param_bytes[i] + g.output_bytes[i], temp = std::max(temp, g.temp_bytes[i]);
    return held + temp;
  }
  CheckLiveRanges(g, *lr);
  std::vector<double> p(lr->buckets + 1, 0.0);
  for (int i : ops) {
    const int b = lr->bucket[i];
    p[0] += g.param_bytes[i], p[lr->buckets] -= g.param_bytes[i];
    p[b] += g.temp_bytes[i], p[b + 1] -= g.temp_bytes[i];
    p[b] += g.output_bytes[i], p[lr->last_use[i] + 1] -= g.output_bytes[i];
  }
  double run = 0, peak = 0;
  for (int t = 0; t < lr->buckets; ++t) peak = std::max(peak, run += p[t]);
  return peak;
}

FusedGraph FuseGraph(const ComputeGraph& g, const FusionOptions& options) {
  if (options.target_groups < 0) throw ConfigError("fusion: target_groups must be >= 0");
  if (options.cycle_check_budget < 1) throw ConfigError("fusion: cycle_check_budget must be >= 1");
  if (!std::isfinite(options.max_group_bytes) || options.max_group_bytes < 0)
    throw ConfigError("fusion: max_group_bytes must be a finite number >= 0 (0 = no cap)");
  if (options.live_ranges) CheckLiveRanges(g, *options.live_ranges);
  return Fuser(g, options).Run();
}

std::vector<int> ExpandPlacement(const FusedGraph& fused, const std::vector<int>& node_to_device) {
  if (static_cast<int>(node_to_device.size()) != fused.coarse.num_ops())
    throw ConfigError("fusion: placement has " + std::to_string(node_to_device.size()) + " devices for " +
                      std::to_string(fused.coarse.num_ops()) + " fused nodes");
  std::vector<int> op_to_device(fused.op_to_node.size());
  for (size_t i = 0; i < op_to_device.size(); ++i) op_to_device[i] = node_to_device[fused.op_to_node[i]];
  return op_to_device;
}

}  // namespace placerl::graphs
