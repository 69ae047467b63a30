// Pictures of a chip placement: canvas, placement grid, a congestion or density heat map,
// hard macros (filled, outlined, with an orientation marker in their N-lower-left corner),
// soft macros (translucent), ports, optionally the nets of hard macros; a colour bar, a
// legend and a title line with HPWL and the three costs. SVG (written as plain SVG text,
// one <rect> per macro and cell) or PNG (cairo), chosen by the output's extension; written
// through a temporary file + rename. Rendering observes a ProxyCost; it never changes it.
#pragma once

#include <optional>
#include <string>

#include "cost_models/chip/proxy_cost.h"

namespace placerl::viz {

enum class HeatMap { kCongestion, kDensity, kNone };
// "congestion" | "density" | "none"; throws ConfigError otherwise.
HeatMap ParseHeatMap(const std::string& s);

struct RenderOptions {
  HeatMap map = HeatMap::kCongestion;  // congestion = max(V, H) per cell
  bool nets = false;                   // draw the nets that touch hard macros
  int size_px = 900;                   // side of the canvas drawing (longer side), pixels
  std::string title;                   // first line of the title; costs follow it
  // Costs for the title; evaluated on a copy of the ProxyCost when absent.
  std::optional<chip::CostBreakdown> costs;
};

// Writes `path` (.svg or .png, case-insensitive). Throws ConfigError for another extension
// and IoError when the file cannot be written.
void RenderPlacement(const chip::ProxyCost& cost, const RenderOptions& options,
                     const std::string& path);

}  // namespace placerl::viz
