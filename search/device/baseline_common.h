// Internal to search/device: what every device placement baseline needs about a graph and a
// machine (op times, transfer times, topological positions, co-location groups) and the
// static memory ledger of m-TOPO / m-ETF / m-SCT (see baselines.h "Memory").
#pragma once

#include <string>
#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"

namespace placerl::search::device_internal {

struct PlacementContext {
  PlacementContext(const graphs::ComputeGraph& g, const perf::SimConfig& cfg);

  const graphs::ComputeGraph& g;
  int num_ops = 0;
  int num_devices = 0;
  std::vector<double> op_time;    // [op * num_devices + d], seconds
  std::vector<double> mean_time;  // per op, over devices
  std::vector<double> comm;       // per op: latency + output_bytes / bandwidth
  std::vector<int> topo_pos;      // op → position in g.topo_order
  std::vector<std::vector<int>> group_ops;  // group → ops (ascending)
  std::vector<int> group_order;   // groups by the topological position of their first op
  std::vector<double> capacity;   // per device, bytes

  double Time(int op, int d) const { return op_time[static_cast<size_t>(op) * num_devices + d]; }
  // "group 'name'" for messages: the co-location name, or the op's name for a lone op.
  std::string GroupLabel(int group) const;
};

// Static memory: what each device holds when every allocation lasts the whole step.
class MemoryLedger {
 public:
  explicit MemoryLedger(const PlacementContext& ctx);
  // Bytes of a group's own ops: Σ params + output + temp.
  double OwnBytes(int group) const { return own_[group]; }
  double Used(int d) const { return used_[d]; }
  // Whether the (unplaced) group fits on d: its own bytes plus one copy of every input from
  // another group that is not on d — booked now even when the producer is not placed yet, so
  // that placing a producer later never adds bytes to another device (a producer placed on d
  // later gives its booked copy back). Memoised until the next Place().
  bool Fits(int group, int d);
  // Places the group on d (its ops must not be placed yet) and books the bytes.
  void Place(int group, int d);
  int DeviceOf(int op) const { return op_device_[op]; }
  const std::vector<int>& Placement() const { return op_device_; }
  // Why a group fits nowhere (for InfeasibleAction).
  std::string NoRoomMessage(const std::string& method, int group);

 private:
  // Bytes the group would add on d.
  double Demand(int group, int d);

  const PlacementContext& ctx_;
  std::vector<double> own_, used_;
  std::vector<int> op_device_;
  std::vector<char> copy_counted_;  // [op * D + d]: a copy of op's output is booked on d
  std::vector<int> stamp_;          // per (op * D + d) scratch to count a copy once
  int stamp_now_ = 0;
  std::vector<int> memo_version_;   // [group * D + d]
  std::vector<char> memo_fits_;
  int version_ = 1;
};

}  // namespace placerl::search::device_internal
