#include "env/chip/chip_solution.h"

#include "cost_models/chip/grid_mask.h"
#include "datasets/util/errors.h"

namespace placerl::env {

using namespace placerl::chip;

void CopyPlacement(const ProxyCost& pc, ChipSolution* b) {
  const Netlist& nl = pc.netlist();
  const int32_t n = nl.num_nodes();
  auto copy = [&](int32_t i) {
    b->x[i] = pc.x(i);
    b->y[i] = pc.y(i);
    b->orientation[i] = pc.orientation(i);
  };
  if (b->valid && b->x.size() == static_cast<size_t>(n)) {
    for (int32_t i : nl.macros) copy(i);
    return;
  }
  b->x.resize(n);
  b->y.resize(n);
  b->orientation.resize(n);
  for (int32_t i = 0; i < n; ++i) copy(i);
}

bool IsLegalPlacement(const Netlist& nl, const PlacementSettings& s, const ChipSolution& solution, std::string* why) {
  if (solution.x.size() != static_cast<size_t>(nl.num_nodes())) throw ConfigError("solution does not match the netlist");
  GridMask gm(nl, s);
  for (int32_t m : nl.hard_macros) gm.Place(m, solution.x[m], solution.y[m], solution.orientation[m]);
  for (int32_t m : nl.hard_macros) {
    if (gm.IsLegal(m, solution.x[m], solution.y[m], solution.orientation[m])) continue;
    if (why) {
      *why = "hard macro '" + nl.name[m] + "' at (" + std::to_string(solution.x[m]) + ", " + std::to_string(solution.y[m]) +
             ") is outside the canvas, on a blockage or overlaps another";
    }
    return false;
  }
  return true;
}

Netlist PlacedNetlist(const Netlist& nl, const ChipSolution& solution) {
  Netlist placed = nl;
  if (solution.x.size() != static_cast<size_t>(nl.num_nodes())) throw ConfigError("solution does not match the netlist");
  placed.x = solution.x;
  placed.y = solution.y;
  placed.orientation = solution.orientation;
  return placed;
}

}  // namespace placerl::env
