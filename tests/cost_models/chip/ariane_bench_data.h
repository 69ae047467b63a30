// The input every chip benchmark measures on: Ariane133 (NG45) with the canvas, grid and
// placement of its initial.plc, loaded once per benchmark process (run from the repository
// root: the data is ../shared/datasets/...).
#pragma once

#include "datasets/chip/design.h"

namespace placerl::chip {

inline const char* kArianeNetlist = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
inline const char* kArianePlc = "../shared/datasets/chip/ariane133_ng45/initial.plc";

struct ArianeBenchData {
  const Netlist& nl;
  const PlacementSettings& s;
};

inline ArianeBenchData Data() {
  static const ChipDesign d = LoadChipDesign(kArianeNetlist, kArianePlc, 1);
  return {d.netlist, d.settings};
}

}  // namespace placerl::chip
