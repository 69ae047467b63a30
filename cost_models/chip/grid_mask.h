// Legality of hard-macro positions: which grid-cell centres a macro may take given the hard
// macros already placed and the blockages (Circuit Training's get_node_mask, see
// ../shared/reference/chip_placement_notes.md §1.6). Owns the set of placed hard-macro
// rectangles; the chip environment, greedy/SA/coordinate descent and the tests share it.
//
// Rules (one definition for Compute and IsLegal):
//  * inside the canvas: the macro rectangle's area inside [0,W]×[0,H] equals its full area
//    to 1e-8 µm² (the area test of TILOS plc_client_os.get_node_mask);
//  * no overlap: with every placed hard macro (other than itself) the overlap in x and the
//    overlap in y are not both > 1e-8 µm — touching edges are allowed;
//  * blockages: every PlacementSettings blockage with rate > 0 is an obstacle like a placed
//    macro, whatever its rate (CT writes 0.99 for user blockages and 0.1 for boundary
//    spacing; both are meant to keep macros out). Blockages with rate ≤ 0 are ignored.
//  * soft macros never block: they are placed after the hard macros and overlap freely.
//    Placing a soft macro only records it as placed.
// Footprint: width×height, swapped for the E/FE/W/FW orientations.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

class GridMask {
 public:
  // Tolerance of the overlap tests, in microns (length) and square microns (canvas area).
  static constexpr double kTolerance = 1e-8;

  // `s` must give the canvas and the grid (see ResolveDefaults). Nothing placed.
  GridMask(const Netlist& nl, const PlacementSettings& s);

  void Clear();
  // Records macro `macro` (hard or soft) centred at (x, y); a hard macro then blocks.
  // Placing an already placed macro moves it.
  void Place(int32_t macro, double x, double y, Orientation o = Orientation::kN);
  void Unplace(int32_t macro);
  bool placed(int32_t macro) const { return slot_[macro] != -1; }
  int num_placed_hard() const { return static_cast<int>(node_.size()); }

  // mask[r*cols + c] = 1 iff `macro` (orientation o) centred on the centre of cell (r, c) is
  // legal; the macro itself, if placed, does not block. Returns the number of legal cells.
  // O(#placed + #blockages + cols·rows): each obstacle forbids a rectangle of cell centres,
  // summed in a 2-D difference array. Uses scratch of this object: not safe to call
  // concurrently on one GridMask (each environment copy owns its own).
  int Compute(int32_t macro, uint8_t* mask, Orientation o = Orientation::kN) const;
  // The same rules at any centre position. O(#placed + #blockages).
  bool IsLegal(int32_t macro, double x, double y, Orientation o = Orientation::kN) const;

  int cols() const { return cols_; }
  int rows() const { return rows_; }
  double cell_width() const { return gw_; }
  double cell_height() const { return gh_; }
  // Centre of column c / row r, computed the same way everywhere (Compute, tests, env).
  double CellCentreX(int c) const { return (c + 0.5) * gw_; }
  double CellCentreY(int r) const { return (r + 0.5) * gh_; }
  // The footprint of `macro` in orientation o.
  void Footprint(int32_t macro, Orientation o, double* w, double* h) const;

 private:
  // Obstacle rectangles: placed hard macros [0, node_.size()) then nothing else; blockages
  // are kept apart because they never change.
  struct Rect { double xmin, xmax, ymin, ymax; };
  // Adds the cells whose centres put a (w×h) macro in overlap with `r` to the difference array.
  void ForbidCells(const Rect& r, double w, double h) const;
  bool Overlaps(const Rect& r, double cx, double cy, double w, double h) const;

  const Netlist* nl_;
  double width_, height_, gw_, gh_;
  int cols_, rows_;
  std::vector<Rect> blockages_;
  // Placed hard macros, packed: rect_[k] is the rectangle of node_[k]; slot_[node] = k
  // (hard) or kSoftSlot (soft, placed but not blocking) or -1.
  std::vector<Rect> rect_;
  std::vector<int32_t> node_;
  std::vector<int32_t> slot_;
  // Scratch of Compute: difference array ((rows+1)·(cols+1)), per-column/row canvas overlap.
  mutable std::vector<int32_t> diff_;
  mutable std::vector<double> col_overlap_, row_overlap_;
};

}  // namespace placerl::chip
