// Grouping of a flat (standard-cell) Circuit Training netlist into soft macros, as Circuit
// Training's grouper does it (circuit_training/grouping/grouping.py; docs/grouping.md):
//   * the group file reader (`groups.final`: one group id per node, file order);
//   * the clustered netlist writer: every group holding standard cells becomes a soft
//     macro `Grp_<id>` (width = one grid-cell width, area = cell area / utilization,
//     centre = area-weighted centroid of its cells) with one input pin `Grp_<id>/Pinput`,
//     one `Poutput_multi_<k>` pin per cell driving several other groups/pins and one
//     `Poutput_single_<k>` pin per distinct single target (weights summed); ports, hard
//     macros, their pins and ungrouped cells are kept; nets with more than 500 distinct
//     sinks are dropped first (CT's disconnect_high_fanout_nets);
//   * CT's grid selection for a netlist without a grid (grid_size_selection.py);
//   * a grouping without hMETIS: CT's fixed groups (pins of each hard macro, ports by side
//     and proximity, expanded by `fixed_logic_levels` levels of logic), METIS k-way on the
//     remaining standard cells, then CT's break-up of spread groups and merge of small ones;
//   * the .plc header's node counts, and Google's congestion rule for nets with pins off
//     the canvas (WithoutOffCanvasNets), used to check the result against CT's headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datasets/chip/netlist.h"

namespace placerl::chip {

// Reads a group file: exactly one integer per line and one line per node of a netlist of
// `num_nodes` nodes (node index = line number − 1); −1 = no group. A final newline is
// optional. Throws ParseError("file:line: what") for a wrong line count, a line that is not
// a whole number, an id below −1 or above 2^31−1; IoError if the file cannot be read. Gzip ok.
std::vector<int32_t> ReadGroupFile(const std::string& path, int32_t num_nodes);
std::vector<int32_t> ParseGroupText(const std::string& text, const std::string& file_label,
                                    int32_t num_nodes);

// What the clustered netlist depends on besides the groups.
struct GroupingOptions {
  double canvas_width = 0;            // soft-macro width = canvas_width / cols (required)
  int cols = 0;
  double cell_area_utilization = 0.5;  // soft-macro area = cell area / utilization (CT: 0.5)
  int32_t max_fanout = 500;            // nets with more distinct sinks are dropped (CT: 500)
};

// Node counts in the layout of a .plc header ("# HARD_MACROs : 136", ...).
struct NodeTypeCounts {
  int64_t hard_macros = 0, hard_macro_pins = 0, macros = 0, macro_pins = 0, ports = 0,
          soft_macros = 0, soft_macro_pins = 0, stdcells = 0;
  bool operator==(const NodeTypeCounts& o) const;
};
NodeTypeCounts CountNodeTypes(const Netlist& nl);
// The "Counts of node types" block of a .plc header; nullopt when the file has none.
// Throws ParseError on a count line that is present but not a number.
std::optional<NodeTypeCounts> ParsePlcNodeCounts(const std::string& plc_text,
                                                 const std::string& file_label);
// "HARD_MACROs 136 vs 135, ..." for the fields that differ (empty when equal).
std::string DescribeCountDifferences(const NodeTypeCounts& ours, const NodeTypeCounts& theirs);

// What grouping did (for reports).
struct GroupingReport {
  int32_t dropped_high_fanout_nets = 0;  // nets removed before grouping (> max_fanout sinks)
  int32_t grouped_stdcells = 0, ungrouped_stdcells = 0;
  int32_t soft_macros = 0, soft_macro_pins = 0;
};

// The clustered netlist CT's grouper writes for `flat` and per-node `groups` (same length
// as flat's nodes): node order = the kept nodes in flat order, then per group (ascending
// id) the soft macro, its multi-output pins, single-output pins and input pin. Metadata
// `soft_macro_area_bloating_ratio` = 1/utilization. Finalized. Throws ConfigError on a
// size mismatch or unusable options.
Netlist BuildGroupedNetlist(const Netlist& flat, const std::vector<int32_t>& groups,
                            const GroupingOptions& options, GroupingReport* report = nullptr);

// Google's plc_wrapper_main leaves every net with a pin outside the canvas out of its
// congestion routing (found while checking the grouper: with that rule the congestion cost
// of the initial.plc of all four tilos_flows designs and of ariane133_ng45 equals the header
// to its four printed digits; clamping such pins into the border cells, as the TILOS
// re-implementation does, gives up to +0.069). Returns a copy of the placed netlist `nl`
// without those nets (pins at the node positions of `nl`, canvas [0,W]×[0,H]): its
// congestion cost is Google's; its wirelength is not (score wirelength on `nl`).
Netlist WithoutOffCanvasNets(const Netlist& nl, double canvas_width, double canvas_height,
                             int32_t* dropped = nullptr);

// Circuit Training's choice of the placement grid for a netlist without one
// (circuit_training/grouping/grid_size_selection.py): every cols × rows in [10, 128)² with
// 500..4096 cells and cell aspect ratio ≤ 1.5 for which the hard macros (descending area,
// each at the first free cell centre in row-major order: inside the canvas, no overlap) all
// fit; metric = empty-cell ratio + (1 − horizontal waste) + (1 − vertical waste) of the macro
// sizes on the grid; among the choices within `tolerance` of the best metric the one with
// the largest metric per cell wins.
struct GridSelectionOptions {
  int min_num = 10, max_num = 128;       // cols and rows swept in [min_num, max_num)
  int max_grid_size = 128;
  int min_cells = 500, max_cells = 4096;
  double max_aspect_ratio = 1.5;
  double tolerance = 0.05;
  double macro_spacing_x = 0, macro_spacing_y = 0;  // added to macro sizes (bloat)
};
struct GridChoice {
  int cols = 0, rows = 0;
  double key_metric = 0, empty_ratio = 0, hor_waste = 0, ver_waste = 0;
  int32_t candidates = 0;  // grids on which all hard macros fit
};
// nullopt when the netlist has no hard macro or no grid fits them all.
std::optional<GridChoice> SelectGrid(const Netlist& nl, double canvas_width, double canvas_height,
                                     const GridSelectionOptions& options = {});

// Grouping without a group file (METIS instead of CT's hMETIS).
struct MetisGroupingOptions {
  int32_t num_groups = 500;         // k of the k-way partition of the free standard cells
  double imbalance = 0.05;          // METIS load imbalance (0.05 = parts up to 5 % above average)
  int32_t fixed_logic_levels = 1;   // CT's expansion of macro-pin / IO groups into logic
  bool breakup = true;              // CT's break-up of spread groups and merge of small ones
  int32_t max_clique_pins = 64;     // nets with more free cells are left out of the graph
  // Fixed groups join the graph as one vertex each (weight = members) and the part count
  // grows by their number, as in CT's hMETIS call. Off by default: on ng45_ariane136 it gives
  // CT's soft-macro count more closely (750 vs 772, 683 without) but cuts more (docs/grouping.md).
  bool fixed_group_vertices = false;
  int32_t seed = 1;
  double canvas_height = 0;         // with GroupingOptions.canvas_width: port sides, break-up
  int rows = 0;
};

struct MetisGroupingReport {
  int32_t fixed_groups = 0;      // macro-pin and IO groups
  int32_t fixed_stdcells = 0;    // standard cells pulled into them
  int32_t free_stdcells = 0;     // partitioned by METIS
  int32_t metis_parts = 0;
  int64_t graph_edges = 0;       // undirected edges of the METIS graph
  int64_t metis_edgecut = 0;
  int32_t groups_after_breakup = 0, groups_final = 0;
};

// Per-node group ids in CT's numbering (fixed groups first, then METIS parts shifted past
// them, then break-up groups). Deterministic for a seed.
std::vector<int32_t> MetisGroups(const Netlist& flat, const GroupingOptions& options,
                                 const MetisGroupingOptions& metis,
                                 MetisGroupingReport* report = nullptr);

}  // namespace placerl::chip
