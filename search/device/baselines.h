// The classic device placement baselines (device_placement_notes.md §4): each maps every op of
// a computation graph to a device of a perf::SimConfig, deterministically, and ALWAYS keeps a
// co-location group (graphs::ComputeGraph::coloc_group) on one device — a group is placed as a
// unit when its first op is placed.
//   single-device — all ops on the fastest device whose simulated peak memory fits;
//   round-robin   — co-location groups in topological order (of their first op) → 0, 1, 2, …;
//   HEFT          — Topcuoglu et al. 2002: upward rank on mean compute / mean communication,
//                   ops in descending rank onto the device of earliest finish time, inserted
//                   into the first idle gap that holds them as the paper and mrocklin/heft do
//                   (device_placement_notes §4 says that implementation only appends: it does
//                   not; HeftOptions::insertion = false appends); transfers are contention-free
//                   in its model; not memory-aware;
//   m-TOPO        — Baechi: groups in topological order fill device 0, 1, … up to
//                   Σ memory / #devices + the largest group's memory (and each device's capacity);
//   m-ETF         — Baechi: event-driven earliest-start-first list scheduling with Baechi's
//                   transfer model (one shared channel per device, a tensor sent to a device once);
//                   at time t every free device takes the ready op of earliest start, the
//                   (start, topological position) smallest pair wins; only devices with room for
//                   the op's group are candidates;
//   m-SCT         — Baechi: the favourite-child LP (below, GLPK dual simplex, in windows of
//                   MSctOptions::lp_window_ops ops), then m-ETF in which a device that just ran
//                   an op and is the earliest for its favourite child waits for that child
//                   unless another op becomes urgent (can start nowhere later). Baechi solves the
//                   LP with MOSEK's interior point, whose central x can differ from GLPK's vertex
//                   on edges off the critical path, and so can the favourites;
//   METIS, Scotch — k-way partitioning of the symmetrised graph of co-location groups (vertex
//                   weight = mean compute time, edge weight = bytes), part sizes ∝ device speed;
//                   both ignore the critical path and memory (the papers show they are weak).
//
// Memory (m-TOPO, m-ETF, m-SCT): accounted statically — every byte an op ever holds on a device
// (parameters, output, temp) and every received copy (one per tensor and device, as the
// simulator caches) counts for the whole step. The simulated peak (placed_graph_sim.h) never
// exceeds this sum, so a placement these three return never runs out of memory in the simulator
// under either transfer model. Baechi frees outputs after their consumers and so packs tighter:
// m-ETF and m-SCT do so with MemoryAccounting::kSchedule. When a group fits on no device they
// throw InfeasibleAction naming the group (kSchedule: when no ready op fits anywhere).
// Op times are the simulator's (perf::Simulator::OpTimeOn); a transfer of an op's output costs
// link.latency_s + output_bytes / link.bandwidth between any two devices.
// Checked against the reference code (tests/search/device): m-ETF, m-TOPO and m-SCT's
// scheduling stage give Baechi's (afe7278) placements, HEFT mrocklin/heft's, on random graphs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"

namespace placerl::search {

// How m-ETF and m-SCT count memory (m-TOPO is always static, as Baechi's).
enum class MemoryAccounting {
  kStatic,    // every byte for the whole step (see "Memory" above): never OOM in the simulator
  kSchedule,  // Baechi's: along the placer's own schedule, outputs (and received copies) freed
              // once all consumers have started, parameters held, temps only during the op;
              // fits tighter memory, but the simulator's different op order may exceed it
};

struct SingleDeviceOptions {};
struct RoundRobinOptions {};
struct HeftOptions {
  // Insert an op into the first idle gap of a device that holds it (the paper, and
  // mrocklin/heft's find_first_gap); false = only append after a device's last op.
  bool insertion = true;
};
struct MTopoOptions {};
struct MEtfOptions {
  MemoryAccounting memory = MemoryAccounting::kStatic;
};
struct MSctOptions {
  // Edge i→j makes j the favourite child of i iff its LP value x_ij ≤ threshold (Baechi
  // rounds x − t + 0.5; its CLI default --sct_threshold is 0.1, its class default 0.5).
  double threshold = 0.1;
  // GLPK's time on the LP grows superlinearly (layered graphs, CPU: 0.06 s at 250 ops, 0.23 s
  // at 500, 0.7 s at 1,000, 6.9 s at 2,000, > 3 min at 10,000), so larger graphs are cut into
  // windows of this many consecutive ops in topological order, one LP each; edges between
  // windows are never favourite. 0 = one LP over the whole graph (Baechi, which solves it on
  // its fused graph of a few hundred ops).
  int lp_window_ops = 500;
  MemoryAccounting memory = MemoryAccounting::kStatic;
};
struct MetisOptions {
  uint64_t seed = 1;
  double imbalance = 0.05;  // parts up to 5 % above their target weight
};
struct ScotchOptions {
  uint64_t seed = 1;
  double imbalance = 0.05;
};

// Every function returns op → device (size g.num_ops(), values in [0, cfg.devices.size())).
// ConfigError: no devices or a bad config (as perf::Simulator); InfeasibleAction: no memory.
std::vector<int> PlaceSingleDevice(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                                   const SingleDeviceOptions& options = {});
std::vector<int> PlaceRoundRobin(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                                 const RoundRobinOptions& options = {});
std::vector<int> PlaceHeft(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const HeftOptions& options = {});
std::vector<int> PlaceMTopo(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                            const MTopoOptions& options = {});
std::vector<int> PlaceMEtf(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const MEtfOptions& options = {});
std::vector<int> PlaceMSct(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const MSctOptions& options = {});
std::vector<int> PlaceMetis(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                            const MetisOptions& options = {});
std::vector<int> PlaceScotch(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                             const ScotchOptions& options = {});

// By name with default options: single, round_robin, heft, m_topo, m_etf, m_sct, metis, scotch.
// Unknown name → ConfigError listing the names.
std::vector<int> PlaceDeviceBaseline(const std::string& method, const graphs::ComputeGraph& g,
                                     const perf::SimConfig& cfg);
const std::vector<std::string>& DeviceBaselineNames();

// Internals exposed for tests.
// HEFT's upward rank per op (seconds): mean op time over devices plus the largest
// (mean transfer + rank) over its consumers; mean transfer = 0 with one device.
std::vector<double> HeftUpwardRanks(const graphs::ComputeGraph& g, const perf::SimConfig& cfg);

// m-SCT's relaxed LP (Baechi's FavoriteChildLPSolver) in microseconds: minimise w over
// x_e ∈ [0, 1] per edge (CSR order of g.out_targets), s_i ≥ 0 per op, subject to
// s_i + p_i + c_i·x_ij ≤ s_j, Σ_j x_ij ≥ |succ(i)| − 1, Σ_i x_ij ≥ |pred(j)| − 1, s_i + p_i ≤ w;
// p_i = mean op time over devices, c_i = transfer time of i's output. With lp_window_ops > 0,
// one LP per window of that many ops in topological order (start times offset by the
// makespans of the windows before; makespan_us = their sum).
struct SctLpSolution {
  std::vector<double> edge_x;        // per edge, CSR order
  std::vector<double> start_us;      // per op
  double makespan_us = 0;
  std::vector<int> favourite_child;  // per op, -1 = none (after rounding; last edge wins)
};
SctLpSolution SolveSctLp(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                         double threshold, int lp_window_ops = 0);
// m-SCT's scheduling stage with given favourite children (per op, -1 = none; each op the
// favourite of at most one producer). ConfigError when the list is malformed.
std::vector<int> PlaceMSctWithFavourites(
    const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
    const std::vector<int>& favourite_child,
    MemoryAccounting memory = MemoryAccounting::kStatic);

}  // namespace placerl::search
