// Coordinate descent over hard-macro positions and orientations, Circuit Training's
// post-processor (circuit_training/environment/coordinate_descent_placer.py; notes §1.11),
// on the exact incremental ProxyCost and the GridMask: epochs over the hard macros (random
// order, reshuffled each epoch, or descending area); each macro tries every legal grid cell
// within Manhattan distance k of its cell (each with probability cell_search_prob) in every
// orientation of its family ({N, FN, S, FS} or {E, FE, W, FW}) and takes the best if it is
// strictly better than staying; soft macros are re-placed by force-directed placement from
// their current positions after each epoch (and before the first), kept only if the cost
// does not rise. Any placer can call it on its result; the cost never gets worse.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "cost_models/chip/fd_placer.h"
#include "cost_models/chip/proxy_cost.h"

namespace placerl::chip {

struct CoordinateDescentOptions {
  int epochs = 2;
  bool random_order = true;        // false: descending area (stable), as the RL episode
  uint64_t seed = 0;               // node order and cell sampling
  int k_distance_bound = 5;        // grid cells (Manhattan); ≤ 0: the whole grid
  double cell_search_prob = 1.0;   // probability to try each cell in the window
  bool search_orientations = true; // false: keep each macro's orientation
  bool optimize_only_orientation = false;  // true: never move, only flip
  // Soft macros: FD from their current positions before the first epoch, after each epoch
  // and every `fd_every_n_macros` macros (0: never in between; CT uses 32 with
  // DREAMPlace); a result that raises the cost is undone.
  bool fd_soft_macros = true;
  int fd_every_n_macros = 0;
  ForceDirectedOptions fd = [] {
    ForceDirectedOptions o;
    o.use_current_loc = true;  // CT: fd_placement_schedule(plc, use_current_loc=True)
    return o;
  }();
  // Stop when an epoch lowers the cost by less than this fraction (CT: 1e-3); 0: never.
  double min_relative_improvement = 1e-3;
  // Polled after every macro (may be empty): true ends the run there (a budget, Ctrl-C); the
  // soft macros are re-placed once more and the placement is kept as good as it is.
  std::function<bool()> stop;
};

struct CoordinateDescentResult {
  // Proxy cost on entry, then after each epoch run (non-increasing).
  std::vector<double> cost_history;
  int epochs_run = 0;
  int64_t evaluations = 0;     // candidate (cell, orientation) costs read
  int64_t macro_moves = 0;     // macros that changed cell or orientation
  int fd_accepted = 0, fd_rejected = 0;
  bool stopped = false;        // options.stop ended the run
};

// Runs on the placement held by `pc` (hard macros where they stand, soft macros too) and
// leaves the improved placement in it. Hard macros with the netlist's `fixed` flag stay.
// Macros that are illegal where they stand (overlap) may stay; they only move to legal cells.
CoordinateDescentResult RunCoordinateDescent(ProxyCost* pc, const CoordinateDescentOptions& opt = {});

}  // namespace placerl::chip
