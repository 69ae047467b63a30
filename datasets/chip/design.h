// A chip design ready to place: a netlist, the optional .plc applied to it, and the resolved
// placement settings (the .plc header's values where it gives them, then the synthetic
// design's, then Circuit Training's defaults). What every chip binary and the chip environment
// load from (netlist path, plc path) — an empty netlist path means the built-in synthetic design.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/chip/synthetic.h"

namespace placerl::chip {

struct ChipDesign {
  Netlist netlist;
  PlacementSettings settings;  // resolved: canvas, grid and routes all set
  PlcFile plc;                 // what the .plc said (empty without one)
  std::string label;           // short name for titles: "<folder>/<file>" or "synthetic (seed N)"
};

// The settings a .plc header gives (`header`, as ReadPlc returns them: 0 = absent) laid over
// `given`; not resolved (call ResolveDefaults).
PlacementSettings OverlayPlcSettings(const PlacementSettings& header, PlacementSettings given);

// `netlist_path` empty → the synthetic default with `seed`. Warns (PLC-0001, PLC-0002) about a
// .plc that places only some macros and about macros off the canvas.
ChipDesign LoadChipDesign(const std::string& netlist_path, const std::string& plc_path, uint64_t seed);
// The same with every option of the synthetic design (used when `netlist_path` is empty).
ChipDesign LoadChipDesign(const std::string& netlist_path, const std::string& plc_path,
                          const SyntheticOptions& synthetic);

}  // namespace placerl::chip
