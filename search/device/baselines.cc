// Shared context and static memory ledger of the device baselines; single-device, round-robin,
// HEFT, m-TOPO and the by-name dispatch (m-ETF / m-SCT: list_scheduling.cc; METIS / Scotch:
// partitioning.cc).
#include "search/device/baselines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "datasets/util/errors.h"
#include "search/device/baseline_common.h"

namespace placerl::search {
namespace device_internal {

PlacementContext::PlacementContext(const graphs::ComputeGraph& graph, const perf::SimConfig& cfg)
    : g(graph), num_ops(graph.num_ops()), num_devices(static_cast<int>(cfg.devices.size())) {
  // The simulator validates the config and owns the op time model; use its times.
  perf::Simulator sim(g, cfg);
  const int nd = num_devices;
  op_time.resize(static_cast<size_t>(num_ops) * nd);
  mean_time.assign(num_ops, 0);
  comm.resize(num_ops);
  for (int i = 0; i < num_ops; ++i) {
    double s = 0;
    for (int d = 0; d < nd; ++d) {
      const double t = sim.OpTimeOn(i, d);
      op_time[static_cast<size_t>(i) * nd + d] = t;
      s += t;
    }
    mean_time[i] = s / nd;
    comm[i] = cfg.link.latency_s + g.output_bytes[i] / cfg.link.bandwidth;
  }
  topo_pos.resize(num_ops);
  for (int k = 0; k < num_ops; ++k) topo_pos[g.topo_order[k]] = k;
  group_ops = graphs::ColocationMembers(g);
  std::vector<int> first(group_ops.size(), num_ops);
  for (int i = 0; i < num_ops; ++i) {
    int& f = first[g.coloc_group[i]];
    f = std::min(f, topo_pos[i]);
  }
  group_order.resize(group_ops.size());
  std::iota(group_order.begin(), group_order.end(), 0);
  std::sort(group_order.begin(), group_order.end(),
            [&](int a, int b) { return first[a] < first[b]; });
  for (const perf::SimDevice& d : cfg.devices) capacity.push_back(d.memory_capacity);
}

std::string PlacementContext::GroupLabel(int group) const {
  const int op = group_ops[group].front();
  if (!g.colocation[op].empty()) return "co-location group '" + g.colocation[op] + "'";
  return "op '" + g.names[op] + "'";
}

MemoryLedger::MemoryLedger(const PlacementContext& ctx)
    : ctx_(ctx),
      own_(ctx.group_ops.size(), 0),
      used_(ctx.num_devices, 0),
      op_device_(ctx.num_ops, -1),
      copy_counted_(static_cast<size_t>(ctx.num_ops) * ctx.num_devices, 0),
      stamp_(static_cast<size_t>(ctx.num_ops) * ctx.num_devices, 0),
      memo_version_(ctx.group_ops.size() * ctx.num_devices, 0),
      memo_fits_(ctx.group_ops.size() * ctx.num_devices, 0) {
  const graphs::ComputeGraph& g = ctx.g;
  for (int i = 0; i < ctx.num_ops; ++i)
    own_[g.coloc_group[i]] += g.param_bytes[i] + g.output_bytes[i] + g.temp_bytes[i];
}

double MemoryLedger::Demand(int group, int d) {
  const graphs::ComputeGraph& g = ctx_.g;
  const int nd = ctx_.num_devices;
  double bytes = own_[group];
  ++stamp_now_;
  for (int i : ctx_.group_ops[group]) {
    for (int k = g.in_offsets[i]; k < g.in_offsets[i + 1]; ++k) {
      const int p = g.in_sources[k];
      const size_t key = static_cast<size_t>(p) * nd + d;
      if (g.coloc_group[p] == group || op_device_[p] == d || copy_counted_[key] ||
          stamp_[key] == stamp_now_)
        continue;
      stamp_[key] = stamp_now_;
      bytes += g.output_bytes[p];
    }
  }
  return bytes;
}

bool MemoryLedger::Fits(int group, int d) {
  const size_t key = static_cast<size_t>(group) * ctx_.num_devices + d;
  if (memo_version_[key] == version_) return memo_fits_[key];
  const bool fits = used_[d] + Demand(group, d) <= ctx_.capacity[d];
  memo_version_[key] = version_;
  memo_fits_[key] = fits;
  return fits;
}

void MemoryLedger::Place(int group, int d) {
  const graphs::ComputeGraph& g = ctx_.g;
  const int nd = ctx_.num_devices;
  used_[d] += Demand(group, d);
  for (int i : ctx_.group_ops[group]) op_device_[i] = d;
  for (int i : ctx_.group_ops[group]) {
    // Copies of inputs from other groups are now booked on d.
    for (int k = g.in_offsets[i]; k < g.in_offsets[i + 1]; ++k) {
      const int p = g.in_sources[k];
      if (op_device_[p] != d) copy_counted_[static_cast<size_t>(p) * nd + d] = 1;
    }
    // Consumers already on d booked a copy of i's output there, which is no longer needed.
    char& booked = copy_counted_[static_cast<size_t>(i) * nd + d];
    if (booked) {
      used_[d] -= g.output_bytes[i];
      booked = 0;
    }
  }
  ++version_;
}

std::string MemoryLedger::NoRoomMessage(const std::string& method, int group) {
  char buf[160];
  std::string free_list;
  for (int d = 0; d < ctx_.num_devices; ++d) {
    std::snprintf(buf, sizeof buf, "%s%d: %.4g", d ? ", " : "", d,
                  (ctx_.capacity[d] - used_[d]) / 1e9);
    free_list += buf;
  }
  std::snprintf(buf, sizeof buf, " (%.4g GB of its own) fits on no device (free GB per device: ",
                own_[group] / 1e9);
  return method + ": " + ctx_.GroupLabel(group) + buf + free_list + ")";
}

}  // namespace device_internal

using device_internal::MemoryLedger;
using device_internal::PlacementContext;

std::vector<int> PlaceSingleDevice(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                                   const SingleDeviceOptions&) {
  perf::Simulator sim(g, cfg);
  const int nd = static_cast<int>(cfg.devices.size());
  std::vector<int> placement(g.num_ops(), 0);
  int best = -1;
  double best_time = std::numeric_limits<double>::infinity();
  double least_over = std::numeric_limits<double>::infinity();
  for (int d = 0; d < nd; ++d) {
    std::fill(placement.begin(), placement.end(), d);
    const perf::SimResult& r = sim.Run(placement);
    if (r.oom) {
      least_over = std::min(least_over, r.peak_memory[d] - cfg.devices[d].memory_capacity);
      continue;
    }
    if (r.makespan < best_time) {
      best_time = r.makespan;
      best = d;
    }
  }
  if (best < 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "single-device: the graph fits on no single device (closest: peak %.4g GB over "
                  "capacity)",
                  least_over / 1e9);
    throw InfeasibleAction(buf);
  }
  std::fill(placement.begin(), placement.end(), best);
  return placement;
}

std::vector<int> PlaceRoundRobin(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                                 const RoundRobinOptions&) {
  PlacementContext ctx(g, cfg);
  std::vector<int> placement(g.num_ops(), 0);
  int next = 0;
  for (int group : ctx.group_order) {
    for (int i : ctx.group_ops[group]) placement[i] = next;
    next = (next + 1) % ctx.num_devices;
  }
  return placement;
}

namespace {

std::vector<double> UpwardRanks(const PlacementContext& ctx) {
  const graphs::ComputeGraph& g = ctx.g;
  // Mean transfer over ordered pairs a ≠ b: every pair costs the same on one link model.
  const double comm_factor = ctx.num_devices > 1 ? 1.0 : 0.0;
  std::vector<double> rank(g.num_ops(), 0);
  for (int k = g.num_ops() - 1; k >= 0; --k) {
    const int i = g.topo_order[k];
    double tail = 0;
    for (int e = g.out_offsets[i]; e < g.out_offsets[i + 1]; ++e)
      tail = std::max(tail, comm_factor * ctx.comm[i] + rank[g.out_targets[e]]);
    rank[i] = ctx.mean_time[i] + tail;
  }
  return rank;
}

}  // namespace

std::vector<double> HeftUpwardRanks(const graphs::ComputeGraph& g, const perf::SimConfig& cfg) {
  return UpwardRanks(PlacementContext(g, cfg));
}

namespace {

struct Busy {
  double start, end;
};

// Earliest start ≥ ready of an op of `duration` on a device busy during `busy` (sorted by
// start): with insertion the first idle gap longer than the op (strictly, as mrocklin/heft's
// find_first_gap), else after the last op.
double EarliestStart(const std::vector<Busy>& busy, double ready, double duration,
                     bool insertion) {
  if (busy.empty()) return ready;
  if (insertion) {
    // A gap ending at or before `ready` cannot hold the op: start at the first op after it.
    size_t k = std::upper_bound(busy.begin(), busy.end(), ready,
                                [](double t, const Busy& b) { return t < b.start; }) -
               busy.begin();
    for (; k < busy.size(); ++k) {
      const double earliest = std::max(ready, k ? busy[k - 1].end : 0.0);
      if (busy[k].start - earliest > duration) return earliest;
    }
  }
  return std::max(busy.back().end, ready);
}

}  // namespace

std::vector<int> PlaceHeft(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const HeftOptions& options) {
  PlacementContext ctx(g, cfg);
  const std::vector<double> rank = UpwardRanks(ctx);
  const int n = g.num_ops(), nd = ctx.num_devices;
  // Descending rank; ties by topological position. rank(producer) ≥ rank(consumer) in floating
  // point too (adding a non-negative number never decreases), so this is a topological order.
  std::vector<int> order(g.topo_order);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank[a] > rank[b]; });
  std::vector<int> group_device(ctx.group_ops.size(), -1), placement(n, -1);
  std::vector<double> finish(n, 0);
  std::vector<std::vector<Busy>> busy(nd);
  for (int i : order) {
    const int group = g.coloc_group[i];
    int best = -1;
    double best_start = 0, best_eft = std::numeric_limits<double>::infinity();
    for (int d = 0; d < nd; ++d) {
      if (group_device[group] >= 0 && group_device[group] != d) continue;
      double ready = 0;
      for (int k = g.in_offsets[i]; k < g.in_offsets[i + 1]; ++k) {
        const int p = g.in_sources[k];
        ready = std::max(ready, finish[p] + (placement[p] != d ? ctx.comm[p] : 0.0));
      }
      const double start = EarliestStart(busy[d], ready, ctx.Time(i, d), options.insertion);
      const double eft = start + ctx.Time(i, d);
      if (eft < best_eft) {
        best_eft = eft;
        best_start = start;
        best = d;
      }
    }
    group_device[group] = best;
    placement[i] = best;
    finish[i] = best_eft;
    std::vector<Busy>& b = busy[best];
    b.insert(std::upper_bound(b.begin(), b.end(), best_start,
                              [](double t, const Busy& x) { return t < x.start; }),
             Busy{best_start, best_eft});
  }
  return placement;
}

std::vector<int> PlaceMTopo(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                            const MTopoOptions&) {
  PlacementContext ctx(g, cfg);
  MemoryLedger ledger(ctx);
  double total = 0, largest = 0;
  for (size_t group = 0; group < ctx.group_ops.size(); ++group) {
    total += ledger.OwnBytes(static_cast<int>(group));
    largest = std::max(largest, ledger.OwnBytes(static_cast<int>(group)));
  }
  // Baechi's uniform cap; the last device takes the rest (the cap guarantees it is < Σ/#devices).
  const double cap = total / ctx.num_devices + largest;
  std::vector<double> own_used(ctx.num_devices, 0);
  int d = 0;
  for (int group : ctx.group_order) {
    while (true) {
      const bool last = d == ctx.num_devices - 1;
      if ((last || own_used[d] + ledger.OwnBytes(group) <= cap) && ledger.Fits(group, d)) break;
      if (last) throw InfeasibleAction(ledger.NoRoomMessage("m-TOPO", group));
      ++d;
    }
    ledger.Place(group, d);
    own_used[d] += ledger.OwnBytes(group);
  }
  return ledger.Placement();
}

const std::vector<std::string>& DeviceBaselineNames() {
  static const std::vector<std::string> names{"single", "round_robin", "heft",  "m_topo",
                                              "m_etf",  "m_sct",       "metis", "scotch"};
  return names;
}

std::vector<int> PlaceDeviceBaseline(const std::string& method, const graphs::ComputeGraph& g,
                                     const perf::SimConfig& cfg) {
  if (method == "single") return PlaceSingleDevice(g, cfg);
  if (method == "round_robin") return PlaceRoundRobin(g, cfg);
  if (method == "heft") return PlaceHeft(g, cfg);
  if (method == "m_topo") return PlaceMTopo(g, cfg);
  if (method == "m_etf") return PlaceMEtf(g, cfg);
  if (method == "m_sct") return PlaceMSct(g, cfg);
  if (method == "metis") return PlaceMetis(g, cfg);
  if (method == "scotch") return PlaceScotch(g, cfg);
  std::string list;
  for (const std::string& n : DeviceBaselineNames()) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("unknown device baseline '" + method + "' (one of: " + list + ")");
}

}  // namespace placerl::search
