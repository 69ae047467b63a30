#include "cost_models/chip/plc_scoring.h"

#include <algorithm>
#include <cmath>

#include "datasets/chip/design.h"
#include "datasets/chip/grouping.h"

namespace placerl::chip {

PlcScore ScorePlc(const Netlist& nl, const PlcFile& plc, const std::string& path, const CostWeights& weights) {
  PlcScore s;
  Netlist placed = nl;
  ApplyPlc(plc, &placed, path);
  for (int32_t m : nl.soft_macros)
    s.max_soft_shift = std::max(s.max_soft_shift, std::abs(placed.x[m] - nl.x[m]) + std::abs(placed.y[m] - nl.y[m]));
  // The .plc header's settings over the defaults (as every chip binary reads them).
  const PlacementSettings settings = ResolveDefaults(OverlayPlcSettings(plc.settings, PlacementSettings{}), placed);
  s.cost = EvaluateProxyCost(placed, settings, weights);
  const Netlist routed = WithoutOffCanvasNets(placed, settings.canvas_width, settings.canvas_height, &s.off_canvas_nets);
  s.google_congestion = EvaluateProxyCost(routed, settings, weights).congestion_cost;
  s.rows = static_cast<int32_t>(plc.rows.size());
  s.placeable = static_cast<int32_t>(nl.ports.size() + nl.macros.size());
  return s;
}

std::string InitialPlcText(const Netlist& nl, double canvas_width, double canvas_height, int cols, int rows,
                           const CostWeights& weights, const std::string& this_file) {
  PlacementSettings s;
  s.canvas_width = canvas_width;
  s.canvas_height = canvas_height;
  s.cols = cols;
  s.rows = rows;
  s = ResolveDefaults(s, nl);
  const CostBreakdown c = EvaluateProxyCost(nl, s, weights);
  const PlcCosts pc{c.hpwl, c.wirelength_cost, c.congestion_cost, c.density_cost};
  const std::string src = nl.sources.empty() ? std::string("(generated)") : nl.sources.front();
  return PlcToText(nl, s, &pc, src, this_file);
}

}  // namespace placerl::chip
