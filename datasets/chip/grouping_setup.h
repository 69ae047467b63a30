// What a grouping run needs around the grouper (datasets/chip/grouping.h), as `group-netlist`
// does it (docs/grouping.md): the flat netlist (a CT netlist, or a Bookshelf design with CT's
// nets), the canvas and grid the clustered netlist is made for (asked for, else the .plc
// header's, else the Bookshelf rows' canvas, else CT's defaults: a square canvas at 60 % use and
// CT's grid selection), the warning for standard cells that look unplaced, and the group file's
// text. No cost model here: scoring a .plc on the result is cost_models/chip/plc_scoring.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

// The flat netlist: `netlist_path`'s (gzip ok; several files comma-separated), else the Bookshelf
// design `aux_path` with CT's nets (chip::ToCircuitTrainingNets), its rows' canvas into *bookshelf.
Netlist ReadFlatNetlist(const std::string& netlist_path, const std::string& aux_path, PlacementSettings* bookshelf);

// Where the grid of a grouping came from.
enum class GroupingGridSource {
  kAsked,      // the caller's cols × rows
  kPlcHeader,  // the .plc header's
  kSelection,  // CT's grid selection on the hard macros (`candidates` grids fit them)
  kDefault,    // CT's 10 × 10: no grid fits the hard macros, or there are none
};

// What the caller asks for; 0 = not asked.
struct GroupingCanvasRequest {
  const PlcFile* plc = nullptr;       // a .plc of the clustered netlist: its header's canvas and grid
  double canvas_width = 0, canvas_height = 0;
  int cols = 0, rows = 0;
  PlacementSettings bookshelf;         // a Bookshelf design's rows' canvas (has_canvas())
};

struct GroupingCanvas {
  double canvas_width = 0, canvas_height = 0;  // microns
  int cols = 0, rows = 0;
  GroupingGridSource grid_source = GroupingGridSource::kAsked;
  int32_t candidates = 0;  // kSelection: the grids on which the hard macros fit
};

// The canvas: asked for, else the .plc header's, else the Bookshelf rows', else CT's square of
// side sqrt(cell area / 0.6); the grid: asked for, else the .plc header's, else CT's grid
// selection (SelectGrid) on that canvas, else 10 × 10.
GroupingCanvas ChooseGroupingCanvas(const Netlist& flat, const GroupingCanvasRequest& request);

// CT's grouper expects placed standard cells (centroids, break-up): when they all lie within
// 1 % of the canvas in both directions (piled up in one spot: unplaced), warns
// (warning_id::kGroupUnplacedCells) and returns true.
bool WarnIfUnplacedCells(const Netlist& flat, double canvas_width, double canvas_height);

// A group file's text (one id a line, node order; ReadGroupFile reads it back).
std::string GroupFileText(const std::vector<int32_t>& groups);

}  // namespace placerl::chip
