// Fusion and co-location grouping of a compute graph into a coarse graph for placers and
// schedulers (device_placement_notes §4 "Fusion / co-location", §1.2, §1.3):
//  1. Baechi's FusedOpPlacer: merge directly connected ops of one co-location group unless
//     that creates a cycle (u→v is unsafe iff another path u⇝v exists), so an op's gradient and
//     its weights' update become one node, while an op and its gradient (which depends on the
//     whole forward pass after it) stay two nodes of the same placement group.
//  2. Optionally (target_groups > 0), ColocRL/HDP-style grouping down to a number of placement
//     groups: repeatedly the lightest group joins a neighbour group (the group of its single
//     consumer when it has one), and directly connected nodes of the joined group fuse where
//     that is cycle-free.
// A fused node: flops, bytes and persistent memory add; temporary memory is the maximum;
// output bytes = the outputs its members send outside the node (or that nobody consumes);
// time_s adds when every member has one. Its co-location name is its placement group's, so
// any co-location-respecting placement of the coarse graph expands (ExpandPlacement) to a
// co-location-respecting placement of the ops. The coarse graph is acyclic by construction.
// It is the placers' view (features, decisions); score a placement by simulating the expanded
// op placement on the original graph, since a node's output bytes omit the activations that
// stay inside it (their memory and their per-op schedule).
//
// Memory cap (max_group_bytes > 0; step 2 only): a join whose placement group would need more
// than the cap is refused and the lightest group tries its next candidate (its single consumer's
// group, then its neighbour groups by edge count, most first; a group without neighbours: the
// next lightest group); a group that can join none is set aside. When every group is set aside,
// step 2 stops above target_groups. Co-location groups already over the cap stay as they are
// (step 1 never splits one); nothing joins them. A group's memory is the device environment's
// (env/device/device_env.h) estimate of that group alone, so a mask built with the same estimate
// never refuses a group the cap admitted on a device of at least the cap:
//  * live_ranges set (memory_estimate=lifetime, the profile DeviceEnv::LiveRanges builds): the
//    peak over buckets of its ops' params (every bucket) + outputs (from the op's bucket to its last
//    consumer's) + temps (own bucket) — exactly the lifetime mask's up-front check of a group alone
//    on the original ops (the received copies it adds depend on the placement, so they are not
//    counted);
//  * otherwise: Σ (param_bytes + output_bytes) + max temp_bytes over its ops — the all_outputs
//    need counted on the original ops, an upper bound of the all_outputs need of the fused group
//    (whose nodes' output bytes omit the activations that stay inside them).
// With max_group_bytes = 0 the result is exactly the uncapped one.
//
// Cycle checks are a depth-first search restricted to nodes between the two ends in a
// maintained topological order; when it visits more than `cycle_check_budget` nodes the merge
// is refused (never wrong, possibly less fused). Merges where one end has a single consumer or
// the other a single producer need no search.
#pragma once

#include <vector>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

// Per-op live ranges over B time buckets of a reference schedule (env/device's lifetime
// estimate: DeviceEnv::LiveRanges): op i runs in bucket[i]; its output is live from there to
// last_use[i] (≥ bucket[i]: the latest bucket of its consumers).
struct OpLiveRanges {
  int buckets = 0;
  std::vector<int> bucket, last_use;
};

// Buckets of equal op count along a schedule (op start times; ties by op index), B =
// max(1, min(max_buckets, ops)), and each op's last use = max(own bucket, consumers' buckets).
OpLiveRanges LiveRangesAlongSchedule(const ComputeGraph& g, const std::vector<double>& start, int max_buckets);

// The memory of a set of ops as one group alone (header comment: live_ranges null = Σ params +
// outputs + max temp; else the peak of its live-range profile).
double GroupMemoryBytes(const ComputeGraph& g, const std::vector<int>& ops, const OpLiveRanges* live_ranges);

struct FusionOptions {
  bool fuse_colocated = true;     // step 1 (Baechi)
  int target_groups = 0;          // step 2 when > 0: at most this many placement groups
  int cycle_check_budget = 4096;  // nodes a cycle check may visit before refusing a merge
  double max_group_bytes = 0;     // step 2: no join makes a group needing more (0 = no cap)
  const OpLiveRanges* live_ranges = nullptr;  // the group memory's estimate (header); not owned
};

struct FusedGraph {
  ComputeGraph coarse;           // one op per fused node, in a topological order
  std::vector<int> op_to_node;   // op of the input graph → coarse node
  std::vector<int> op_to_group;  // op of the input graph → placement group (coarse co-location id)
  int num_groups = 0;            // placement groups (= coarse.num_coloc_groups)
};

// Throws ConfigError when target_groups < 0, cycle_check_budget < 1, max_group_bytes is negative
// or not finite, or live_ranges does not match the graph.
FusedGraph FuseGraph(const ComputeGraph& g, const FusionOptions& options = {});

// A placement of the coarse graph (node → device) → a placement of the ops.
std::vector<int> ExpandPlacement(const FusedGraph& fused, const std::vector<int>& node_to_device);

}  // namespace placerl::graphs
