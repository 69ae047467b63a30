// Force-directed placement of soft macros (standard-cell clusters) with Circuit Training's
// episode-end schedule (../shared/reference/chip_placement_notes.md §1.10), following the
// open re-description of TILOS MacroPlacement (CodeElements/FDPlacement, README + C++):
//  * every soft macro starts at the canvas centre (or where it is); hard macros, ports and
//    standard cells never move;
//  * attraction: each net is a star from its driver; the edge driver→sink pulls both ends
//    with k·(p_sink − p_driver), k = net weight × attract factor (× io_factor when one end is
//    a port); only soft-macro ends feel it;
//  * repulsion: every overlapping pair of macros (hard or soft; overlap = centre distance
//    ≤ half-size sum − 1e-4 on both axes) pushes its two members apart along the line of
//    centres with repel factor × max move distance (coincident centres: the lower node index
//    gets (−1, −1)·F, the other (+1, +1)·F);
//  * a phase computes attraction only if repel = 0 or attract/repel > 1e-4, and repulsion
//    only if attract = 0 or repel/attract > 1e-4 (TILOS C++). With CT's schedule phase 1
//    is pure attraction and phases 2–3 pure repulsion;
//  * forces are normalised per axis so the largest |f_x| (|f_y|) over the soft macros moves
//    exactly max_move_distance = factor·max(W, H)/num_steps; all soft macros then move at
//    once, and a move that would put a soft macro partly outside the canvas is cancelled
//    (both axes).
// Fast path: the star edges are merged once per netlist into soft–soft couplings and
// soft–fixed-pin edges (flat CSR arrays; fixed-pin positions read once per call);
// soft–soft repulsion scans y-strips sorted by x (insertion sort, the order barely changes
// between steps) with a branch-free overlap test, soft–hard repulsion uses 2-D bins of the
// hard macros built once per call. No allocation per iteration. A naive reference (every
// edge, every pair) lives in the test and agrees to 1e-6 µm on Ariane133.
#pragma once

#include <cstdint>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

struct ForceDirectedOptions {
  // One entry per phase; the four lists must have the same length. CT episode-end defaults.
  std::vector<int> num_steps{100, 100, 100};
  std::vector<double> move_distance_factors{1.0, 1.0, 1.0};
  std::vector<double> attract_factor{100.0, 1e-3, 1e-5};
  std::vector<double> repel_factor{0.0, 1e6, 1e7};
  double io_factor = 1.0;
  // false: every soft macro starts at the canvas centre (CT's use_current_loc=False).
  bool use_current_loc = false;
  // Pairs closer than half-size sum − this (µm) on both axes overlap (TILOS min_dist).
  double overlap_margin = 1e-4;
  // true: every macro pin acts at its macro's centre. TILOS's C++ FD does this (its SetPos
  // adds the macro's own offset, 0, instead of the pin's), so its numbers are reproduced
  // only with this set; the default uses the real (oriented) pin positions, as the proxy
  // cost does. Identical when all pin offsets are 0 (every soft-macro pin of Ariane133).
  bool pins_at_macro_centres = false;
  // true: soft macros repel and meet the canvas as squares of their area (side √(w·h)), as
  // Circuit Training (make_soft_macros_square on load) and TILOS's FD see them; false: the
  // netlist's width × height (Ariane133's clusters are 59.7 µm wide, 0.02–39 µm high).
  bool square_soft_macros = true;
  // Side of the repulsion bins in units of the largest soft-macro side (≥ 1; speed only).
  double bin_size_factor = 1.0;
};

class ForceDirectedPlacer {
 public:
  // Precomputes the attraction structure of `nl` (the netlist must outlive the placer).
  // `s` must give the canvas. Throws ConfigError on inconsistent options.
  ForceDirectedPlacer(const Netlist& nl, const PlacementSettings& s, ForceDirectedOptions opt = {});

  // Positions of every node (size num_nodes, centres); hard macros, ports and pins are read,
  // soft-macro entries are overwritten with the result. `orient` gives macro orientations
  // (hard-macro pin offsets). Not thread-safe on one placer (scratch is reused).
  void Run(const Orientation* orient, double* x, double* y);
  // Same, reading positions from the proxy cost and writing the soft macros back through
  // MoveNode (only those that moved).
  void Run(ProxyCost* pc);

  const ForceDirectedOptions& options() const { return opt_; }
  int num_soft() const { return num_soft_; }

 private:
  void Iterate(double attract, double repel, double max_move);
  void AddRepulsion(double scale);
  void BinHardMacros();
  void RepelPair(int32_t a, int32_t b, double scale);
  int BinX(double v) const;
  int BinY(double v) const;

  const Netlist& nl_;
  ForceDirectedOptions opt_;
  double width_, height_;
  int num_soft_ = 0, num_macros_ = 0;  // slots [0, num_soft_) soft, then hard macros
  std::vector<int32_t> slot_node_;     // node index of each slot
  // Attraction on soft slot a: F_a = static_a + Σ_b lap_val·(p_b − p_a) + Σ_e k_e·(q_e − p_a)
  // over merged soft–soft couplings (CSR) and edges to fixed pins q_e (CSR by soft slot,
  // positions refreshed per call); static_a = the pin-offset terms.
  std::vector<int32_t> lap_start_, lap_col_;
  std::vector<double> lap_val_;
  std::vector<double> static_cx_, static_cy_;
  std::vector<int32_t> fixed_start_, fixed_pin_;
  std::vector<double> fixed_k_, fixed_x_, fixed_y_;
  // Per call / per iteration state (slots).
  std::vector<double> px_, py_, w_, h_, fx_, fy_;
  // Spatial bins for repulsion, at least as large as the largest soft macro: soft macros are
  // binned by centre every iteration (an overlapping pair is then in the same or adjacent
  // bins); hard macros, which do not move, are binned once per call into every bin they
  // cover. CSR arrays, reused.
  int nbx_ = 1, nby_ = 1;
  double bin_w_ = 1, bin_h_ = 1, inv_bin_w_ = 1, inv_bin_h_ = 1;
  std::vector<int32_t> soft_bin_start_, soft_bin_items_, soft_bin_of_;
  std::vector<int32_t> hard_bin_start_, hard_bin_items_, bin_fill_;
  std::vector<int32_t> slot_bx0_, slot_bx1_, slot_by0_, slot_by1_;  // bins covered (hard macros)
  // Soft macros in bin order: centre, half sizes, node index, accumulated unit forces.
  std::vector<double> sx_, sy_, shw_, shh_, sfx_, sfy_;
  std::vector<int32_t> snode_, hit_scratch_;
  // Scratch of Run(ProxyCost*).
  std::vector<double> all_x_, all_y_;
  std::vector<Orientation> all_o_;
};

// One FD run with `opt` on the placement held by `pc` (soft macros written back).
void RunForceDirected(ProxyCost* pc, const ForceDirectedOptions& opt = {});

}  // namespace placerl::chip
