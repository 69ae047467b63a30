#include "datasets/chip/grouping_setup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "datasets/chip/bookshelf.h"
#include "datasets/chip/grouping.h"
#include "datasets/util/warnings.h"

namespace placerl::chip {

Netlist ReadFlatNetlist(const std::string& netlist_path, const std::string& aux_path, PlacementSettings* bookshelf) {
  if (!netlist_path.empty()) return ReadNetlist(netlist_path);
  BookshelfDesign d = ReadBookshelf(aux_path);
  *bookshelf = d.settings;
  return ToCircuitTrainingNets(d.netlist);
}

GroupingCanvas ChooseGroupingCanvas(const Netlist& flat, const GroupingCanvasRequest& request) {
  GroupingCanvas cg;
  double& canvas_w = cg.canvas_width;
  double& canvas_h = cg.canvas_height;
  int& cols = cg.cols;
  int& rows = cg.rows;
  if (request.plc) {
    canvas_w = request.plc->settings.canvas_width;
    canvas_h = request.plc->settings.canvas_height;
    cols = request.plc->settings.cols;
    rows = request.plc->settings.rows;
  }
  if (request.canvas_width > 0 && request.canvas_height > 0) {
    canvas_w = request.canvas_width;
    canvas_h = request.canvas_height;
  }
  const bool grid_asked = request.cols > 0 && request.rows > 0;
  if (grid_asked) {
    cols = request.cols;
    rows = request.rows;
  }
  if (!(canvas_w > 0 && canvas_h > 0) && request.bookshelf.has_canvas()) {
    canvas_w = request.bookshelf.canvas_width;
    canvas_h = request.bookshelf.canvas_height;
  }
  if (!(canvas_w > 0 && canvas_h > 0)) {
    // CT's placement-cost default for a netlist without a canvas: a square at 60 % use.
    canvas_w = canvas_h = std::max(1e-3, std::sqrt(flat.TotalArea() / 0.6));
  }
  cg.grid_source = request.plc ? GroupingGridSource::kPlcHeader : GroupingGridSource::kAsked;
  if (cols <= 0 || rows <= 0) {
    // CT's grid selection on the hard macros; a netlist without any gets CT's 10 × 10.
    if (const auto choice = SelectGrid(flat, canvas_w, canvas_h)) {
      cols = choice->cols;
      rows = choice->rows;
      cg.grid_source = GroupingGridSource::kSelection;
      cg.candidates = choice->candidates;
    } else {
      cols = rows = 10;
      cg.grid_source = GroupingGridSource::kDefault;
    }
  } else if (grid_asked) {
    cg.grid_source = GroupingGridSource::kAsked;
  }
  return cg;
}

bool WarnIfUnplacedCells(const Netlist& flat, double canvas_width, double canvas_height) {
  if (flat.stdcells.size() <= 1) return false;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (int32_t c : flat.stdcells) {
    x0 = std::min(x0, flat.x[c]);
    x1 = std::max(x1, flat.x[c]);
    y0 = std::min(y0, flat.y[c]);
    y1 = std::max(y1, flat.y[c]);
  }
  if (!(x1 - x0 <= 0.01 * canvas_width && y1 - y0 <= 0.01 * canvas_height)) return false;
  char what[320];
  std::snprintf(what, sizeof what,
                "all %zu standard cells lie within %.3g x %.3g um near (%g, %g): the netlist looks unplaced; "
                "soft macros start there and the break-up of spread groups does nothing (Circuit Training's "
                "grouper expects placed cells)",
                flat.stdcells.size(), x1 - x0, y1 - y0, x0, y0);
  Warn(warning_id::kGroupUnplacedCells, what);
  return true;
}

std::string GroupFileText(const std::vector<int32_t>& groups) {
  std::string text;
  for (int32_t g : groups) text += std::to_string(g) + "\n";
  return text;
}

}  // namespace placerl::chip
