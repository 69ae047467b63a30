// Seeded synthetic chip netlists: hard macros in a few size classes, ports spread over the
// four sides of the boundary, standard-cell clusters as soft macros (`Grp_<k>`, typed
// lowercase `macro` when written), one pin node per macro-net connection, and nets with
// Rent-like locality (degrees ~ d^-2.5; most nets join near neighbours in a hidden 2-D
// layout, a few are global). Some soft-macro driver pins carry weights > 1, as after
// clustering. The embedded default instance of the toolkit (docs/formats.md).
#pragma once

#include <cstdint>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

struct SyntheticOptions {
  uint64_t seed = 1;
  int num_hard_macros = 40;
  int num_soft_macros = 200;
  int num_ports = 60;
  int num_nets = 1500;             // at least num_ports + num_hard_macros (each gets a net)
  double utilization = 0.6;        // (hard + soft macro area) / canvas area, in (0, 1]
  double global_net_fraction = 0.05;  // nets whose members are drawn from the whole chip
  double weighted_net_fraction = 0.3; // soft-macro-driven nets with weight > 1
  int cols = 16, rows = 16;        // placement grid of the returned settings
};

struct SyntheticDesign {
  Netlist netlist;             // finalized; x/y = a legal-ish initial placement
  PlacementSettings settings;  // square canvas, the grid, CT default routing resources
};

// Same options (seed included) → the same netlist, byte for byte in NetlistToText.
// Throws ConfigError on options that cannot make a netlist.
SyntheticDesign GenerateSyntheticNetlist(const SyntheticOptions& options = {});

// Lays "key=value,key=value" over `options` (the seed is not a key: binaries take it from
// --seed). Keys: macros (hard macros), soft (soft macros), ports, nets, utilization, global
// (global_net_fraction), weighted (weighted_net_fraction), grid (COLSxROWS). Empty spec = no
// change. Throws ConfigError naming the bad item (unknown key, bad number, missing '=').
void ParseSyntheticSpec(const std::string& spec, SyntheticOptions* options);

}  // namespace placerl::chip
