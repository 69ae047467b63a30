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
// Cycle checks are a depth-first search restricted to nodes between the two ends in a
// maintained topological order; when it visits more than `cycle_check_budget` nodes the merge
// is refused (never wrong, possibly less fused). Merges where one end has a single consumer or
// the other a single producer need no search.
#pragma once

#include <vector>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct FusionOptions {
  bool fuse_colocated = true;     // step 1 (Baechi)
  int target_groups = 0;          // step 2 when > 0: at most this many placement groups
  int cycle_check_budget = 4096;  // nodes a cycle check may visit before refusing a merge
};

struct FusedGraph {
  ComputeGraph coarse;           // one op per fused node, in a topological order
  std::vector<int> op_to_node;   // op of the input graph → coarse node
  std::vector<int> op_to_group;  // op of the input graph → placement group (coarse co-location id)
  int num_groups = 0;            // placement groups (= coarse.num_coloc_groups)
};

// Throws ConfigError when target_groups < 0 or cycle_check_budget < 1.
FusedGraph FuseGraph(const ComputeGraph& g, const FusionOptions& options = {});

// A placement of the coarse graph (node → device) → a placement of the ops.
std::vector<int> ExpandPlacement(const FusedGraph& fused, const std::vector<int>& node_to_device);

}  // namespace placerl::graphs
