#include "datasets/chip/design.h"

#include "datasets/chip/synthetic.h"

namespace placerl::chip {

PlacementSettings OverlayPlcSettings(const PlacementSettings& h, PlacementSettings given) {
  if (h.has_canvas()) {
    given.canvas_width = h.canvas_width;
    given.canvas_height = h.canvas_height;
  }
  if (h.has_grid()) {
    given.cols = h.cols;
    given.rows = h.rows;
  }
  if (h.h_routes_per_micron > 0 || h.v_routes_per_micron > 0) {
    given.h_routes_per_micron = h.h_routes_per_micron;
    given.v_routes_per_micron = h.v_routes_per_micron;
    given.h_macro_alloc = h.h_macro_alloc;
    given.v_macro_alloc = h.v_macro_alloc;
    given.smooth_range = h.smooth_range;
  }
  if (h.overlap_threshold > 0) given.overlap_threshold = h.overlap_threshold;
  if (!h.blockages.empty()) given.blockages = h.blockages;
  if (!h.block.empty()) given.block = h.block;
  return given;
}


ChipDesign LoadChipDesign(const std::string& netlist_path, const std::string& plc_path, uint64_t seed) {
  SyntheticOptions so;
  so.seed = seed;
  return LoadChipDesign(netlist_path, plc_path, so);
}

ChipDesign LoadChipDesign(const std::string& netlist_path, const std::string& plc_path,
                          const SyntheticOptions& synthetic) {
  ChipDesign in;
  PlacementSettings given;
  if (netlist_path.empty()) {
    SyntheticDesign d = GenerateSyntheticNetlist(synthetic);
    in.netlist = std::move(d.netlist);
    given = d.settings;
    in.label = "synthetic (seed " + std::to_string(synthetic.seed) + ")";
  } else {
    in.netlist = ReadNetlist(netlist_path);
    std::string t = netlist_path;
    const size_t a = t.rfind('/');
    if (a != std::string::npos && a > 0) {
      const size_t b = t.rfind('/', a - 1);
      t = t.substr(b == std::string::npos ? 0 : b + 1);
    }
    in.label = t;
  }
  if (!plc_path.empty()) {
    in.plc = ReadPlc(plc_path);
    ApplyPlc(in.plc, &in.netlist, plc_path);
    given = OverlayPlcSettings(in.plc.settings, given);
  }
  in.settings = ResolveDefaults(given, in.netlist);
  WarnMacrosOffCanvas(in.netlist, in.settings, plc_path.empty() ? in.label : plc_path);
  return in;
}

}  // namespace placerl
