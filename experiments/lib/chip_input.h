// How every chip binary gets its input: a netlist (or the built-in synthetic one), an
// optional .plc applied to it, and the resolved placement settings (the .plc header's
// values where it gives them, then the synthetic design's, then the defaults).
#pragma once

#include <cstdint>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl {

struct ChipInput {
  chip::Netlist netlist;
  chip::PlacementSettings settings;  // resolved: canvas, grid and routes all set
  chip::PlcFile plc;                 // what the .plc said (empty without --plc)
  std::string label;                 // short name for titles: "<folder>/<file>" or "synthetic (seed N)"
};

// `netlist_path` empty → the synthetic default with `seed`.
ChipInput LoadChipInput(const std::string& netlist_path, const std::string& plc_path, uint64_t seed);

}  // namespace placerl
