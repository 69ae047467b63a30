// Placed-graph simulator: step time, utilisation and peak memory of a computation graph
// whose ops are assigned to devices (semantics of Placeto/Park and Baechi, see
// docs/simulator.md and device_placement_notes.md §2).
//
// - Op time on device d: the given per-op time if the graph has one, else the OpTime
//   roofline with d's DeviceRates (or a plain max(flops/peak, bytes/bw) + launch when the
//   device has use_kind_efficiency = false).
// - Scheduling: per-device queue ordered by ready time, ties by op index; one op at a time
//   per device; optional idle gap after every op of non-zero time; transfers overlap compute.
// - Transfers: latency + bytes / bandwidth. kSenderBus (Placeto): one transfer per output on
//   the sender's single outbound bus feeds every remote consumer (any device); the bus is
//   then held for bus_hold_s. kSharedChannel (Baechi): one transfer per (tensor, destination
//   device) (tensor caching); each device has one channel shared by sends and receives;
//   send start = max(op end, sender channel free), receive start = max(send start, receiver
//   channel free); each occupies its channel for the transfer time; arrival = receive end.
// - Memory per device: params of its ops for the whole step; each output from op start
//   until its last same-device consumer ends and its outgoing sends are done (until op end
//   when nothing consumes it); each received copy from receive start until its last
//   consumer on that device ends; temp during the op. Peak by event sweep (at equal times
//   frees come before allocations). Peak over capacity → oom.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "cost_models/tpu/op_cost.h"
#include "datasets/graphs/compute_graph.h"

namespace placerl::perf {

struct SimDevice {
  DeviceRates rates;
  bool use_kind_efficiency = true;  // false: t = max(flops/peak, bytes/hbm_bw) + launch
  double memory_capacity = std::numeric_limits<double>::infinity();  // bytes
};
// A device with a plain speed: peak_flops FLOP/s and bw bytes/s for every op kind.
SimDevice PlainDevice(double flops_per_s, double bytes_per_s,
                      double capacity = std::numeric_limits<double>::infinity());

enum class Contention { kSenderBus, kSharedChannel };

struct LinkModel {
  double latency_s = 0;
  double bandwidth = 1e10;  // bytes/s
  Contention contention = Contention::kSharedChannel;
  double bus_hold_s = 0;    // kSenderBus only: bus stays busy this long after each transfer
};

struct SimConfig {
  std::vector<SimDevice> devices;
  LinkModel link;
  double op_gap_s = 0;  // device idle after each op of non-zero time (Placeto: 5.7 µs)
  // false (default): event-driven — ops finish in time order and each finished op books its
  // transfers then (channels are granted in producer finish order).
  // true: Baechi's virtual scheduler order — ops are taken one at a time from one global
  // list ordered by (ready time, op index), start = max(device free, ready), and the op's
  // transfers are booked right away, so an op that became ready earlier books channels
  // before one that became ready later even if it finishes later. Per-device op order is
  // the same in both modes; only the channel booking order (and so transfer times) differs.
  bool ready_list_order = false;
};

// Presets: Placeto (7.6 GB/s, no latency, 25 µs bus hold, 5.7 µs gap, sender bus,
// event-driven) and Baechi (5.7 GB/s, 134 µs latency, shared channel, no gap,
// ready_list_order) over the given devices. Both reproduce the reference simulators'
// schedules exactly on tests/data/sim_golden (placed_graph_sim_golden_test).
SimConfig PlacetoConfig(std::vector<SimDevice> devices);
SimConfig BaechiConfig(std::vector<SimDevice> devices);

struct SimResult {
  double makespan = 0;               // seconds: last op end
  // Time the last device or link becomes idle: max over ops of end + op gap and over
  // transfers of channel release (+ bus hold). Placeto/Park's simulator returns this as its
  // run time (its trailing δ1 / δ2 count); ≥ makespan.
  double busy_until = 0;
  std::vector<double> busy;          // per device: Σ op times
  std::vector<double> utilisation;   // per device: busy / makespan (0 when makespan = 0)
  std::vector<double> peak_memory;   // per device, bytes
  std::vector<double> peak_time;     // per device: when the peak is reached (first time), seconds
  bool oom = false;
  int oom_device = -1;               // lowest device over capacity
  int64_t num_transfers = 0;
  double bytes_transferred = 0;
  std::vector<double> op_start, op_end;  // per op
};

// Reusable simulator bound to one graph and config (the graph must outlive it). Run()
// reuses its buffers; the returned reference is valid until the next Run().
//
// Incremental re-simulation (event-driven mode, ready_list_order = false): Run() keeps
// snapshots of the event loop's small state every few op finishes and records, per op, its
// finish order, and per edge the arrival time it delivered. A following Run() whose placement
// differs from the last one only in ops none of whose producers had finished before snapshot
// k restarts the event loop from snapshot k: nothing before it read the device of a changed op
// (an op's device is first read at the finish of its earliest producer; a source op's at the
// start), the per-op state of the ops finished before it is rebuilt from the recorded values,
// and the memory sweep runs over the whole placement as before. The result is bit-identical to
// a full run (placed_graph_sim_incremental_test). set_incremental(false) always runs in full.
class Simulator {
 public:
  Simulator(const graphs::ComputeGraph& graph, const SimConfig& config);
  // Throws ConfigError when op_to_device has the wrong size or an index out of range.
  const SimResult& Run(const std::vector<int>& op_to_device);
  // What occupies device `d`'s memory at time `t` of the last Run() (allocations count
  // from their start inclusive to their free exclusive, as the peak sweep does): at
  // result.peak_time[d] the bytes sum to result.peak_memory[d]. Sorted by bytes, largest first.
  struct LiveTensor {
    int op;
    const char* what;  // "params", "output", "temp" or "received copy"
    double bytes;
  };
  std::vector<LiveTensor> LiveAt(int d, double t) const;
  // Op time of op `op` on device `d`.
  double OpTimeOn(int op, int d) const { return op_time_[static_cast<size_t>(op) * nd_ + d]; }
  // On by default; results are the same either way, only the work differs.
  void set_incremental(bool on) {
    incremental_ = on && incremental_ok_;
    has_reference_ = false;
  }
  // Op finishes the last Run() simulated (n for a full run, fewer when it resumed).
  int64_t last_finishes_simulated() const { return last_simulated_; }

 private:
  struct Event {
    double t;
    uint32_t tag;  // kind << 30 | id; kind 0 op finish, 2 device dispatch
  };
  struct Copy {
    int device;
    double start, free;
    double arrive;  // free at creation (before any consumer extends it)
  };
  // The event loop's state after `finished` op finishes (and no event after the last of them).
  struct Snapshot {
    int finished = 0;
    std::vector<Event> events;
    std::vector<std::vector<std::pair<double, int>>> queues;
    std::vector<double> chan_free, dev_free, dispatch_at, busy;
    std::vector<char> running;
    std::vector<size_t> mem_chrono_size;
    size_t copies = 0;
    double makespan = 0, busy_until = 0, bytes_transferred = 0;
    int64_t num_transfers = 0;
  };
  void TakeSnapshot(int finished);
  // Restores the state of snapshots_[k] for the placement `dev` (see the class comment).
  void Restore(size_t k, const std::vector<int>& dev);
  // Index of the latest snapshot from which `dev` can resume the last run, or -1.
  int ResumePoint(const std::vector<int>& dev) const;
  void Push(double t, int kind, int id);
  void FinishOp(int op, double t, const std::vector<int>& dev);
  void Arrive(int consumer, double t, double now, const std::vector<int>& dev);
  void StartOp(int op, int d, double t);  // records start/end, busy and chronological memory
  void RunEvents(const std::vector<int>& dev, int finished);
  void RunReadyList(const std::vector<int>& dev);
  void RequestDispatch(int d, double at);

  const graphs::ComputeGraph& g_;
  SimConfig cfg_;
  int nd_;
  std::vector<double> op_time_;  // [op * nd + d]
  // per-run buffers
  std::vector<Event> events_;
  std::vector<std::vector<std::pair<double, int>>> queues_;  // per device min-heaps
  std::vector<std::pair<double, int>> ready_list_;  // ready_list_order: global min-heap
  std::vector<int> pending_;
  std::vector<double> ready_, out_free_, chan_free_, dev_free_, dispatch_at_;
  std::vector<char> running_;
  std::vector<int> copy_begin_, copy_count_;
  std::vector<Copy> copies_;
  struct MemEvent {
    uint64_t key;  // MemKey: time bits << 1 | is-allocation
    double delta;  // bytes (+ allocate, - free)
  };
  static void RadixSortByKey(std::vector<MemEvent>* v, std::vector<MemEvent>* tmp);
  std::vector<std::vector<MemEvent>> mem_rest_, mem_chrono_;  // per device
  std::vector<MemEvent> sweep_tmp_;
  SimResult res_;
  std::vector<int> last_dev_;  // placement of the last Run (for LiveAt)
  // Incremental re-simulation (event-driven mode).
  bool incremental_ = true;
  bool incremental_ok_ = true;  // false when the graph's producer and consumer lists disagree
  bool has_reference_ = false;  // the per-op records below describe the run of last_dev_
  int snapshot_every_ = 1;      // op finishes between snapshots
  std::vector<int> finish_order_, fpos_;  // ops in finish order; each op's position in it
  std::vector<double> own_free_;          // out_free_ of an op right after its own finish
  std::vector<double> arrival_in_;        // per in-edge: the ready time its producer delivered
  std::vector<int> out_to_in_;            // out-edge index → in-edge index
  std::vector<Snapshot> snapshots_;       // the first num_snapshots_ are valid, increasing `finished`
  size_t num_snapshots_ = 0;
  std::vector<int> stamp_;                // restore: ops already visited
  int stamp_value_ = 0;
  int64_t last_simulated_ = 0;
};

SimResult SimulatePlacement(const graphs::ComputeGraph& graph,
                            const std::vector<int>& op_to_device, const SimConfig& config);

// Ops scheduled per second: a layered random DAG of num_ops ops (width 100, fan-in ≤ 3,
// seed 1) placed round-robin-by-layer-slot over `devices` plain devices with the Baechi
// link, simulated `reps` times (after one warm-up run) with one Simulator.
double BenchmarkSimulator(int num_ops, int devices, int reps);

}  // namespace placerl::perf
