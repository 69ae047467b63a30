// A .plc scored on a netlist it was written for — as `group-netlist` checks a clustered netlist
// against CT's initial.plc and legalized.plc (docs/grouping.md) — and the initial.plc of a
// clustered netlist without one (its canvas, grid and current placement, the costs in the header).
#pragma once

#include <cstdint>
#include <string>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

// The proxy cost of `nl` placed by `plc` (read from `path`, which errors name) on the .plc
// header's settings, and how the .plc fits the netlist.
struct PlcScore {
  CostBreakdown cost;
  double max_soft_shift = 0;        // largest |Δx|+|Δy| between the netlist's soft-macro centres and the file's
  double google_congestion = 0;     // congestion with the nets that have a pin off the canvas left out (Google's rule)
  int32_t off_canvas_nets = 0;      // those nets
  int32_t rows = 0, placeable = 0;  // .plc rows; ports + macros of the netlist
};
PlcScore ScorePlc(const Netlist& nl, const PlcFile& plc, const std::string& path, const CostWeights& weights);

// The .plc text of `nl`'s current placement on canvas × grid (resolved as every chip binary
// does), its costs with `weights` in the header; `this_file` is the path it will be written to.
std::string InitialPlcText(const Netlist& nl, double canvas_width, double canvas_height, int cols, int rows,
                           const CostWeights& weights, const std::string& this_file);

}  // namespace placerl::chip
