// A complete chip placement as the chip environment and every chip method keep it (the best of a
// baseline run, of a training run, an input placement): every node's position and orientation as
// the proxy cost holds them, and its cost. Below search/ and agents/, which both keep them.
#pragma once

#include <string>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"

namespace placerl::env {

struct ChipSolution {
  std::vector<double> x, y;  // every node, as the proxy cost holds them
  std::vector<chip::Orientation> orientation;
  chip::CostBreakdown cost;
  bool valid = false;
};

// Records the placement `pc` holds (positions, orientations) into `solution` (cost not set).
// When `solution` already holds a placement of the same netlist only the macros are copied:
// ports, pins and standard cells never move.
void CopyPlacement(const chip::ProxyCost& pc, ChipSolution* solution);

// Whether the hard macros of `solution` are legal (GridMask's rules: inside the canvas, no
// two overlap, off the blockages); if not and `why` is given, the first violation.
bool IsLegalPlacement(const chip::Netlist& nl, const chip::PlacementSettings& s, const ChipSolution& solution,
                      std::string* why = nullptr);

// Writes `solution` into a copy of the netlist (for .plc files and pictures).
chip::Netlist PlacedNetlist(const chip::Netlist& nl, const ChipSolution& solution);

}  // namespace placerl::env
