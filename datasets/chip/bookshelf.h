// Bookshelf placement benchmarks (UCLA/ISPD format: `.aux` naming `.nodes .nets .wts .pl
// .scl`) read into the shared chip Netlist, and the conversion of such a netlist into one
// that Circuit Training's netlist.pb.txt can express (one net per driver node).
//
// Mapping (docs/formats.md, "Bookshelf"):
//   terminal that is `terminal_NI`, zero-area or no larger than a row  → PORT (fixed)
//   other terminals                                                    → fixed hard macro
//   movable node taller than one row                                   → hard macro
//   other movable nodes                                                → standard cell
// Every (macro, net) connection becomes a hard-macro pin node named `<macro>/<net>_<j>`
// (appended after the Bookshelf nodes) with the Bookshelf offset (from the node centre).
// The driver of a net is its first `O` pin, else its first pin. `.pl` lower-left corners
// become centres; coordinates are shifted so that the core (hull of the `.scl` rows)
// starts at (0, 0), and the canvas is the core.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

struct BookshelfDesign {
  Netlist netlist;               // finalized
  PlacementSettings settings;    // canvas from .scl (0 when there is no .scl); grid not set
  double origin_x = 0, origin_y = 0;  // core lower-left in Bookshelf coordinates (subtracted)
  double row_height = 0;         // height of the first .scl row (0 without .scl)
  int32_t num_rows = 0;
  // Counts as the Bookshelf files state them (and as they were checked).
  int32_t bookshelf_nodes = 0, bookshelf_terminals = 0, bookshelf_nets = 0, bookshelf_pins = 0;
  int32_t movable_macros = 0, fixed_macros = 0;
  int32_t weighted_nets = 0;     // nets that got a weight from .wts
  int32_t ignored_node_weights = 0;  // .wts entries naming nodes (node weights: not used)
};

// Reads the design named by an `.aux` file (paths in it are relative to the .aux). The
// .wts and .scl files are optional; .nodes, .nets and .pl are required. Throws
// ParseError("file:line: reason") on malformed input and IoError on unreadable files.
BookshelfDesign ReadBookshelf(const std::string& aux_path);

// What ToCircuitTrainingNets had to change.
struct CtConversionReport {
  int32_t nets_in = 0, nets_out = 0;
  int32_t drivers_reassigned = 0;  // nets whose driver became another of their pins
  int32_t nets_merged = 0;         // nets merged into another net with the same driver
  int32_t nets_merged_exact = 0;   // ... of which had the same pin set (weights summed: exact)
};

// Circuit Training expresses a net as "driver node + its inputs", so a port or standard
// cell can drive one net only (macro pins are per connection and always distinct). Returns
// a copy of `nl` in which every net has its own driver: drivers are chosen by a maximum
// matching that keeps each net's own driver where it can; a net left without a free driver
// is merged into the net its driver already drives (pin sets equal → weights add, exact;
// otherwise union of pins with the larger weight — the CT "multi-output cell" rule). The
// driver's `weight` attribute is set to its net's weight so that the written file keeps it.
Netlist ToCircuitTrainingNets(const Netlist& nl, CtConversionReport* report = nullptr);

}  // namespace placerl::chip
