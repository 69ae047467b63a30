// Circuit Training placement files (`.plc`): a `#` header (canvas, grid, routing
// resources, smoothing, overlap threshold, blockages, reference costs) and one row
// `node_index x y orientation fixed` per port, hard macro and soft macro (and standard
// cell when present). Layout as written by circuit_training placement_util.save_placement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "datasets/chip/netlist.h"

namespace placerl::chip {

struct Blockage {
  double minx = 0, miny = 0, maxx = 0, maxy = 0, rate = 0;
};

// Everything the proxy cost needs besides the netlist and the node positions. A value of
// 0 for canvas or grid means "not given": see ResolveDefaults.
struct PlacementSettings {
  double canvas_width = 0, canvas_height = 0;
  int cols = 0, rows = 0;
  double h_routes_per_micron = 0, v_routes_per_micron = 0;
  double h_macro_alloc = 0, v_macro_alloc = 0;   // "Routes used by macros, hor/ver"
  double smooth_range = 0;
  double overlap_threshold = 0;
  std::vector<Blockage> blockages;
  std::string project = "circuit_training";
  std::string block;

  bool has_canvas() const { return canvas_width > 0 && canvas_height > 0; }
  bool has_grid() const { return cols > 0 && rows > 0; }
  bool has_routes() const { return h_routes_per_micron > 0 && v_routes_per_micron > 0; }
};

// Fills what is not given with the defaults of Circuit Training's placement-cost binary:
// square canvas of side sqrt(total_area / 0.6), a 10×10 grid, and the routing resources of
// circuit_training placement_util.create_placement_cost (70.33 / 74.51 routes per micron,
// 51.79 / 51.79 macro allocation, smoothing 5 — only when no routing line was given).
PlacementSettings ResolveDefaults(const PlacementSettings& s, const Netlist& nl);

// One body row of a .plc file.
struct PlcRow {
  int32_t node = -1;
  double x = 0, y = 0;
  bool has_orientation = false;  // '-' for ports
  Orientation orientation = Orientation::kN;
  bool fixed = false;
  int line = 0;  // line of the file it came from (for errors found when it is applied)
};

struct PlcFile {
  PlacementSettings settings;  // what the header gave (0 = absent)
  bool has_congestion_grid = false;
  int congestion_cols = 0, congestion_rows = 0;
  // Costs stated in the header (by whoever wrote the file), for comparison.
  std::optional<double> header_wirelength, header_wirelength_cost, header_density_cost,
      header_congestion_cost, header_area;
  std::vector<PlcRow> rows;
};

// Reads a .plc file. Throws ParseError("file:line: reason"): besides malformed lines, an
// empty file, two rows for one node, a blockage with min > max or a rate outside [0, 1],
// and routes per micron that are not positive (defaults apply only when the line is absent).
PlcFile ReadPlc(const std::string& path);
PlcFile ParsePlcText(const std::string& text, const std::string& file_label);

// Applies the rows of `plc` to the netlist's positions/orientations/fixed flags. Throws
// ParseError (at the row's line) if a row names a node that does not exist or is a pin.
// Warns (PLC-0001) when the rows place some but not all macros.
void ApplyPlc(const PlcFile& plc, Netlist* nl, const std::string& file_label);

// Warns (PLC-0002) when macro centres lie outside the canvas (the cost clamps them into the
// nearest grid cell); returns how many do.
int WarnMacrosOffCanvas(const Netlist& nl, const PlacementSettings& settings, const std::string& label);

// The costs written into a .plc header.
struct PlcCosts {
  double wirelength = 0, wirelength_cost = 0, congestion_cost = 0, density_cost = 0;
};

// Writes the netlist's current placement as a .plc (ports, macros and stdcells), with
// `settings` and `costs` in the header. Atomic (temporary file + rename).
std::string PlcToText(const Netlist& nl, const PlacementSettings& settings,
                      const PlcCosts* costs, const std::string& netlist_source,
                      const std::string& this_file);
void WritePlc(const Netlist& nl, const PlacementSettings& settings, const PlcCosts* costs,
              const std::string& path);

}  // namespace placerl::chip
