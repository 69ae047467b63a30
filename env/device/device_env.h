// device(graph=…,machine=…,mode=oneshot|iterative,…): place the co-location groups of a
// computation graph onto the devices of a machine (docs/device_placement.md). Rewards come from
// the placed-graph simulator (cost_models/tpu/placed_graph_sim.h); every op of a group gets the
// group's device, so a placement never splits a co-location group.
//
//  * order=topological (default): groups in order of their first op in the graph's topological
//    order; order=rank: in order of their first op in HEFT's list (descending upward rank = the
//    op's bottom level on the fastest device, ties in topological order; also topological).
//  * mode=oneshot (ColocRL, HDP, GDP): one decision per group, groups in the order above
//    (groups of op + gradient + update form cycles, so a true topological order of groups need
//    not exist). Reward 0 until the last decision, then
//    −f(T) with T the simulated step time (f = sqrt by default) or, on OOM, the failing time.
//  * mode=iterative (Placeto): the episode starts from a complete placement (start=single:
//    every group on the fastest device, random: uniform from the reset seed, round_robin, or
//    the placement of a list scheduler or partitioner registered by a higher layer — heft,
//    m_sct, m_etf, m_topo, metis, scotch, expert, heft_ls (HEFT + local search for start_minutes of
//    CPU, default 1) once search/device's RegisterDeviceStartPlacers() ran; computed once per
//    instance on its graph (its cost kept as start_cpu_s / start_wall_s), each group on its first
//    op's device; a start that puts a group on a device it may not use, or, with
//    memory_mask=true, over the mask's estimate, is a ConfigError) and visits every group once in the same order; each step sets
//    the current group's device (the same device = no move) and simulates: r_t = f(T_{t−1}) −
//    f(T_t) (f = identity by default), so the rewards of an episode sum to f(T_start) − f(T_end).
//    episode_start=best (default fixed): a reset starts from the best placement (lowest
//    effective time) this copy of the environment has seen since it was built — the previous
//    episodes' result seeds the next (MaskRegulate); a clone copies it, so the environment stays
//    deterministic for the same sequence of resets and actions. Placements are simulated from
//    scratch after every move or answered from a cache of recent placements (sim_cache entries,
//    default 4096; 0 = off): the same deterministic simulation, so identical values.
//    episode_groups=K (default 0 = all): an episode visits K consecutive groups of the order
//    (cyclically) from a first group drawn from the reset seed, so episodes are K steps long.
//    episode_result=best (default last): after the last step the episode returns to the best
//    placement it visited (the start included), the last reward counting that change, so the
//    rewards still sum to f(T_start) − f(T_end) with T_end the episode's best: the return is the
//    improvement a search keeps, and an episode never ends worse than its start.
//  * OOM (a device's simulated peak over its capacity): oom=relative (default) counts the step
//    as oom_factor × the single-device step time (scale-free); oom=fixed as failing_time_s
//    (HDP/grappler's failing_signal: 100 s, so −sqrt gives −10); oom=placeto adds
//    placeto_s_per_gb × (GB over capacity, summed over devices), capped at placeto_cap_s.
//  * memory_mask=true: only devices whose estimated used memory + the group's need fit its
//    capacity are legal. A group's need = Σ param_bytes + Σ output_bytes + max temp_bytes of
//    its ops (training keeps forward activations until the backward pass, so all outputs are
//    counted); used = Σ need of the groups on the device (one-shot: placed so far; iterative:
//    every other group). When no device fits, the episode ends early (infeasible) with the
//    OOM reward; a group larger than every device it may use is a ConfigError up front. A
//    machine's CPU-only op kinds restrict their groups to CPU devices always.
//  * memory_estimate=all_outputs (default; the estimate above) | lifetime: the step is cut into
//    B = min(memory_buckets (256), ops) buckets of equal op count along the single-device schedule (every op on
//    the fastest device, the reference order) and each device keeps a live-bytes profile over
//    them: its groups' params (weights + optimizer state) in every bucket; each op's output from
//    its bucket to its last consumer's (any device: an upper bound of the producer's copy);
//    each op's temp in its own bucket; and, for every tensor whose producer and consumer groups
//    may sit on different devices, one received copy per (tensor, device) (the simulator's
//    tensor caching) on every device that holds a consumer group and not the producer, from the
//    producer's bucket to the last consuming op's there: a consumer placed before its producer
//    reserves it, released when the producer joins it on its device — so a one-shot decision
//    never adds memory to another device. A device's estimate = the profile's
//    peak; a device is legal when the group's move keeps its peak within capacity (iterative:
//    the old device's too, which may now receive copies from it). Within a bucket everything live
//    at any moment counts, so the estimate bounds the single-device schedule's peak from above;
//    other placements run ops in another order, so it approximates their simulated peak
//    (docs/device_placement.md, "Memory mask"). A step costs O(ops + copies of the group +
//    devices × B) per device. With memory_graph set (a finer graph whose op i maps to op
//    memory_op_map[i] of `graph`: the original graph of a fused one), the profile is built from
//    that graph's ops, so the activations fused inside a coarse node are counted too.
//
// Observation: nodes = co-location groups; static features (log10 of 1 + x): flops, bytes,
// output bytes, param bytes, temp bytes, op count, time on the fastest device (µs), the group's
// memory need; the fraction of its ops of each kind (matmul, conv, elementwise, reduction,
// softmax, norm, embedding, other); position in the decision order. Edges: directed group →
// group data edges, weight log10(1 + bytes) (each producer output counted once per consumer
// group). Metadata: devices, CPU/accelerator counts, log10 link bandwidth, latency µs, op gap
// µs, log10 total FLOPs, log10 ops, log10 groups, log10 single-device step time (µs), log10
// fastest GFLOP/s, slowest ÷ fastest peak, log10 total memory (GB; unlimited = 1 PB).
// Dynamic per node: decided (visited this episode), current, start time of the group ÷ step
// time in the last simulation (Placeto's feature; iterative: every step, one-shot: at the end),
// one-hot device (-: unplaced). A step rewrites O(1) rows besides the start times. Action
// features per device: relative peak speed, log10 capacity (GB; 6 when unlimited), estimated
// used memory ÷ capacity, the current group fits (0/1) — the memory state lives here, per
// device, so that a step costs O(devices) besides the simulation. mode=iterative adds current_device
// (1 on the device the current group is on: staying there is no move).
// features=heft (one-shot only; default basic = the features above, unchanged) adds what HEFT
// decides with, in scale-free units so that one policy reads graphs of different sizes alike:
//  * static per node: time_fraction (the group's time on the fastest device ÷ the single-device
//    step time), upward_rank (max over its ops of the op's bottom level: its time + the longest
//    path of op times after it, fastest device, no communication) and downward_rank (min over its
//    ops of the op's top level: the longest path of op times before it), both ÷ the critical path;
//  * dynamic per node: est_finish, the estimated finish time of a placed group ÷ single-device time;
//  * action features per device: est_finish (when the current group would finish on it ÷ the
//    single-device time), est_finish_delta (that minus the earliest over legal devices, in units of
//    the group's own fastest time, capped at 10), device_load (when the device is free ÷ single
//    time), input_here (fraction of the bytes from placed predecessor groups produced on it),
//    earliest (1 on the legal device with the earliest finish).
//  The estimate is an op-level list schedule built as the episode goes (HEFT's earliest finish
//  time, appending, no insertion): once a group is placed, each of its ops whose producers are all
//  scheduled is scheduled on the group's device, in topological order, at max(device free,
//  max over producers of finish + (other device: latency + output bytes ÷ bandwidth)) for its
//  time on the device, which may make ops of earlier groups ready (a group's backward ops wait for
//  the loss). The current group's estimate on device d schedules its ready ops (at least its first
//  op: every op before it in the op list is scheduled) on d without committing them.
// reward=relative: f(T) = T ÷ single-device step time (one-shot reward −T/T₁, comparable across graphs).
// info: step_time_s, effective_time_s (OOM-penalised), oom, oom_device, bytes_transferred,
// transfers, placed_groups, moves, single_device_time_s, then utilisation_<d> and
// peak_memory_<d> (bytes) per device; all simulated values are 0 until a placement is complete.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/fusion.h"
#include "env/environment.h"
#include "env/registry.h"

namespace placerl::env {

struct DeviceEnvOptions {
  std::string graph = "layered(ops=60,width=6,fan_in=2,seed=1)";  // graphs::GraphFromSpec
  std::string machine = "k80(gpus=2,cpu=1,memory_fraction=1)";     // perf::MachineFromSpec
  std::string mode = "oneshot";      // oneshot | iterative
  bool memory_mask = false;
  std::string reward = "";           // sqrt | id | log (log1p of µs); "" = sqrt for oneshot, id for iterative
  std::string oom = "relative";      // relative | fixed | placeto
  double oom_factor = 10;            // relative
  double failing_time_s = 100;       // fixed
  double placeto_s_per_gb = 2, placeto_cap_s = 10;  // placeto
  std::string start = "single";      // iterative: single | random | round_robin | a registered start placer
  double start_minutes = 1;          // iterative: CPU budget of a start placer that searches (heft_ls), (0, 1e4]
  std::string episode_start = "fixed";  // iterative: fixed | best (header comment)
  int episode_groups = 0;            // iterative: 0 = visit every group; K = K consecutive groups (header comment)
  std::string episode_result = "last";  // iterative: last | best (the episode ends on its best placement)
  int sim_cache = 4096;              // iterative: placements remembered with their simulation (0 = off; ≤ 16 MB per copy)
  std::string features = "basic";   // basic | heft (one-shot only): see the header comment
  std::string order = "topological";  // topological | rank: decision order of the groups
  std::string memory_estimate = "all_outputs";  // all_outputs | lifetime (header comment)
  int memory_buckets = 256;          // lifetime: B = min(memory_buckets, ops), 1..65536
  // memory_estimate=lifetime only: count memory on this graph instead (op i belongs to op
  // memory_op_map[i] of the environment's graph, e.g. FusedGraph::op_to_node).
  std::shared_ptr<const graphs::ComputeGraph> memory_graph;
  std::vector<int> memory_op_map;
  // When set, the graph itself (`graph` then only names it): HDP's learned groupings are the
  // graph with its co-location groups replaced (agents/hdp_training.h).
  std::shared_ptr<const graphs::ComputeGraph> graph_data;
};

// What every copy of one environment shares (read-only).
struct DeviceInstance {
  graphs::ComputeGraph graph;
  perf::Machine machine;
  std::vector<std::vector<int>> group_ops;  // group → ops (ascending)
  std::vector<int> order;                   // decision order: group ids
  std::vector<int> list_position;           // op → index in the op list the order follows
  std::vector<int> node_of_group;           // group → node index (position in `order`)
  std::vector<double> need;                 // per node: memory estimate, bytes
  std::vector<uint8_t> allowed;             // [node * D + d]: CPU-only kinds respected
  double single_device_time = 0;            // step time with every op on the fastest device
  std::vector<int32_t> start_nodes;         // iterative with a start placer: node → device (else empty)
  double start_cpu_s = 0, start_wall_s = 0;  // what the start placer cost (process CPU / wall seconds)
  // features=heft only (empty otherwise):
  std::vector<double> time_on;              // [node * D + d]: Σ op time of the group on device d, s
  std::vector<int> in_offsets;              // per node: range into in_src / in_bytes (CSR)
  std::vector<int> in_src;                  // predecessor node, decided earlier (src < node)
  std::vector<double> in_bytes;             // bytes it sends to the node
  std::vector<double> op_time;              // [op * D + d], s
  std::vector<int> op_in_degree;            // op → number of out_targets entries naming it
  // memory_estimate=lifetime only (buckets = 0 otherwise): intervals [b0, b1] of buckets.
  struct MemInterval {
    int32_t b0, b1;
    double bytes;
  };
  struct CopyTensor {  // an output some other node consumes
    int32_t producer;  // node
    int32_t b0;        // the producer op's bucket
    double bytes;
  };
  int32_t mem_buckets = 0;
  std::vector<int> own_offsets;        // per node (CSR)
  std::vector<MemInterval> own;        // params, outputs, temps of the node's ops
  std::vector<CopyTensor> copy_tensors;
  std::vector<int> tc_offsets;         // per tensor (CSR): its consumer nodes and their last bucket
  std::vector<int32_t> tc_node, tc_last;
  std::vector<int> in_offsets_mem;     // per node (CSR): the tensors it receives, its last bucket
  std::vector<int32_t> in_tensor, in_last;
  std::vector<int> out_offsets_mem;    // per node (CSR): the tensors it sends
  std::vector<int32_t> out_tensor;
  std::vector<double> own_peak;        // per node: peak of its own intervals
};

// Start placers for mode=iterative's start=NAME beyond single | random | round_robin: op → device
// of the instance's graph on its machine (every co-location group on one device), given the CPU
// seconds a searching placer may spend (start_minutes × 60; list schedulers ignore it). env/ cannot
// include search/, so the list schedulers register themselves here (search/device/placers.h);
// registering a name twice replaces it. Thread-safe. What the placer cost is kept in the instance
// (start_cpu_s, start_wall_s) so that a trainer can charge it to its budget.
using DeviceStartPlacer =
    std::function<std::vector<int>(const graphs::ComputeGraph&, const perf::Machine&, double budget_s)>;
void RegisterDeviceStartPlacer(const std::string& name, DeviceStartPlacer placer);

// The machine's accelerators (every device when it has only CPUs).
std::vector<int> AcceleratorDevices(const perf::Machine& m);
// The fusion cap of fuse_max_group_fraction (place-baseline fuse=true, place-train/place --env
// device): fraction × the smallest accelerator's memory (every device's when the machine has no
// accelerator), in bytes; 0 (no cap) when fraction is 0 or that memory is unlimited. Throws
// ConfigError unless fraction is in [0, 1].
double FuseMaxGroupBytes(const perf::Machine& m, double fraction);
void CheckFuseMaxGroupFraction(double fraction);  // the same ConfigError
std::vector<std::string> DeviceStartPlacerNames();  // sorted

class DeviceEnv : public Environment {
 public:
  explicit DeviceEnv(const DeviceEnvOptions& o);
  static std::unique_ptr<Environment> Make(EnvParams& p);
  DeviceEnv(const DeviceEnv& other);

  std::string name() const override;
  ActionSpec action_spec() const override { return ActionSpec::Device(nd_); }
  int32_t episode_length() const override { return window_ > 0 ? window_ : num_groups(); }
  int32_t num_groups() const { return static_cast<int32_t>(inst_->order.size()); }  // nodes
  void Reset(uint64_t seed) override;
  StepResult Step(int32_t action) override;
  bool done() const override { return state_.current_node < 0; }
  std::shared_ptr<const StaticGraph> static_graph() const override { return graph_; }
  const DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override { return *info_names_; }
  const std::vector<double>& info() const override { return info_; }
  std::unique_ptr<Environment> Clone() const override { return std::make_unique<DeviceEnv>(*this); }

  const DeviceEnvOptions& options() const { return o_; }
  const DeviceInstance& instance() const { return *inst_; }
  // Device of each node (-1 = not placed yet) and the op → device placement it implies (ops
  // of unplaced groups on device 0).
  const std::vector<int32_t>& node_device() const { return node_dev_; }
  std::vector<int> OpPlacement() const;
  // Simulations sim_cache answered in this copy (0 without the cache).
  int64_t sim_cache_hits() const { return cache_ ? cache_->hits : 0; }
  // The reward transform f and the OOM-penalised time of a simulation result.
  double Transform(double seconds) const;
  double EffectiveTime(const perf::SimResult& r) const;
  // Per device: the estimated memory (memory_estimate's; all_outputs: Σ need, lifetime: the
  // profile's peak) of the current placement's placed groups.
  const std::vector<double>& memory_estimate() const { return used_; }
  // memory_estimate=lifetime's buckets and live ranges of the ops of `g` on `m` (the single-device
  // schedule on the fastest device, B = min(memory_buckets, ops)): what the mask counts, for
  // FusionOptions::live_ranges (a fused group's lifetime memory alone = its up-front check).
  static graphs::OpLiveRanges LiveRanges(const graphs::ComputeGraph& g, const perf::Machine& m, int memory_buckets);
  // Replays a complete node → device placement in decision order on a copy of this environment
  // and returns the per-device estimate at the end; *first_refused (if given) = the first node
  // whose device the memory check (memory_mask's, whether or not the mask is on) refuses, or -1.
  std::vector<double> ReplayMemoryEstimate(const std::vector<int32_t>& node_device, int32_t* first_refused = nullptr) const;
  // The node → device placement of an op placement (each group's first op's device).
  std::vector<int32_t> NodePlacement(const std::vector<int>& op_device) const;

 private:
  double Simulate();  // simulates the current (complete) placement, fills info_, returns effective time
  double SimulateFully();  // Simulate without the cache
  void UpdateDynamic();            // mask and action features: O(devices)
  void WriteNodeRow(int32_t node);  // one row of node_dynamic
  void SetNodeDevice(int32_t node, int32_t d);
  bool Fits(int32_t node, int32_t d);
  // lifetime: builds the instance's buckets and intervals (constructor); single_start = op start
  // times of the env graph's single-device run on device `fastest`.
  void BuildLifetime(DeviceInstance* inst, const std::vector<double>& single_start, int fastest) const;
  // lifetime: adds to diff_ the profile change of moving `node` from its device (or unplaced) to
  // d (own intervals, received copies per (tensor, device)); commit: updates copy_end_ too.
  void Move(int32_t node, int32_t d, bool commit);
  // lifetime: whether prof_ + diff_ stays within every touched device's capacity / applies diff_
  // to prof_ and used_; both clear diff_.
  bool CheckDiff() const;
  void CommitDiff();
  void EndEpisode();
  void EstimateFinish(int32_t node, double* finish) const;  // features=heft: per device, s
  void ScheduleReady(int32_t node);  // features=heft: commits the node's ready ops (and what they free)
  double OpStart(int op, int d) const;


  DeviceEnvOptions o_;
  bool iterative_ = false;
  std::shared_ptr<const DeviceInstance> inst_;
  std::shared_ptr<const StaticGraph> graph_;
  std::shared_ptr<const std::vector<std::string>> info_names_;
  int32_t nd_ = 0;
  std::unique_ptr<perf::Simulator> sim_;  // per copy (buffers); built on first use
  std::vector<int> op_dev_;               // op → device of the current placement
  std::vector<int32_t> node_dev_;
  std::vector<float> start_frac_;        // per node: start ÷ step time of the last simulation
  std::vector<double> used_;              // per device: estimated memory (all_outputs: Σ need of its nodes)
  bool lifetime_ = false;                 // memory_estimate=lifetime
  std::vector<double> prof_;              // lifetime: [d * B + b] live bytes estimate
  std::vector<int32_t> copy_end_;         // lifetime: [tensor * D + d] last bucket of its copy on d (-1: none)
  mutable std::vector<double> diff_;      // lifetime scratch: [d * (B + 1) + b]
  mutable std::vector<uint8_t> touched_;  // lifetime scratch: per device
  std::vector<uint8_t> fits_;             // per device: the current node fits (UpdateDynamic)
  double last_f_ = 0;                     // iterative: f(effective time) of the current placement
  bool start_best_ = false;               // iterative: episode_start=best
  std::vector<int32_t> best_nodes_;       // episode_start=best: best node placement seen (empty: none yet)
  double best_time_ = 0;                  // its effective time
  bool result_best_ = false;              // iterative: episode_result=best
  int32_t window_ = 0;                    // iterative: episode_groups (0 = all)
  int32_t window_start_ = 0;              // first node of this episode's window
  std::vector<int32_t> ep_best_nodes_;    // episode_result=best: best placement of this episode
  double ep_best_time_ = 0;
  // sim_cache: recent placements (node → device) and what their simulation wrote; per copy (a clone
  // starts empty), FIFO. hash_ = Zobrist-style hash of node_dev_, kept by SetNodeDevice.
  struct SimCache {
    int slots = 0, next = 0;
    std::vector<uint16_t> keys;    // [slot * nodes + node]
    std::vector<float> starts;     // [slot * nodes + node]: start_frac_
    std::vector<double> infos;     // [slot * info size]
    std::vector<double> effs;      // [slot]
    std::vector<uint64_t> hashes;  // [slot]
    std::vector<uint8_t> full;     // [slot]
    std::unordered_map<uint64_t, int> index;
    int64_t hits = 0;
  };
  std::unique_ptr<SimCache> cache_;
  uint64_t hash_ = 0;
  bool Recall(double* eff);        // a cached simulation of node_dev_ → info_, start_frac_, node_dynamic
  void Remember(double eff);
  bool heft_ = false;                     // features=heft
  std::vector<double> finish_;            // heft: per node, estimated finish of its ops scheduled when placed, s
  std::vector<double> device_free_;       // heft: per device, latest estimated finish on it, s
  std::vector<double> eft_scratch_;       // heft: per device
  std::vector<double> op_finish_;         // heft: per op, estimated finish (scheduled ops)
  std::vector<int> op_pending_;           // heft: per op, producers not scheduled yet
  std::vector<uint8_t> op_scheduled_;     // heft: per op
  DynamicState state_;
  std::vector<double> info_;
};

}  // namespace placerl::env
