// GridMask: placed hard-macro rectangles and the per-cell legality mask (see grid_mask.h).
#include "cost_models/chip/grid_mask.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

constexpr int32_t kSoftSlot = -2;  // slot_ value of a placed soft macro (it blocks nothing)

// Length of the overlap of [a0, a1] and [b0, b1]; negative when they are apart.
inline double OverlapLen(double a0, double a1, double b0, double b1) {
  return std::min(a1, b1) - std::max(a0, b0);
}

bool SwapsSides(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW ||
         o == Orientation::kFW;
}

// Clamps a real cell index estimate into [-1, n] before it becomes an int.
int ClampIndex(double v, int n) {
  if (!(v > -1)) return -1;  // also NaN
  if (v > n) return n;
  return static_cast<int>(v);
}

// The cells [a, b] of one axis whose predicate holds, given estimates that are off by at most
// a rounding step; the true set is an interval because the overlap length of two intervals
// is unimodal in the offset. Returns false if empty.
template <class Pred>
bool CellRange(int est_a, int est_b, int n, Pred pred, int* a_out, int* b_out) {
  int a = std::clamp(est_a, 0, n - 1), b = std::clamp(est_b, 0, n - 1);
  if (a > b) {  // estimated empty: only a neighbour can still hold
    if (pred(a)) b = a;
    else if (pred(b)) a = b;
    else return false;
  }
  while (a > 0 && pred(a - 1)) --a;
  while (b < n - 1 && pred(b + 1)) ++b;
  while (a <= b && !pred(a)) ++a;
  while (b >= a && !pred(b)) --b;
  *a_out = a;
  *b_out = b;
  return a <= b;
}

}  // namespace

GridMask::GridMask(const Netlist& nl, const PlacementSettings& s)
    : nl_(&nl),
      width_(s.canvas_width),
      height_(s.canvas_height),
      cols_(s.cols),
      rows_(s.rows) {
  if (!s.has_canvas() || !s.has_grid())
    throw ConfigError("GridMask: the canvas and the grid must be given (see ResolveDefaults)");
  gw_ = width_ / cols_;
  gh_ = height_ / rows_;
  for (const Blockage& b : s.blockages)
    if (b.rate > 0) blockages_.push_back({b.minx, b.maxx, b.miny, b.maxy});
  slot_.assign(nl.num_nodes(), -1);
  rect_.reserve(nl.hard_macros.size());
  node_.reserve(nl.hard_macros.size());
  diff_.assign(static_cast<size_t>(rows_ + 1) * (cols_ + 1), 0);
  col_overlap_.resize(cols_);
  row_overlap_.resize(rows_);
}

void GridMask::Clear() {
  for (int32_t n : node_) slot_[n] = -1;
  for (int32_t m : nl_->soft_macros) slot_[m] = -1;
  rect_.clear();
  node_.clear();
}

void GridMask::Footprint(int32_t macro, Orientation o, double* w, double* h) const {
  *w = nl_->width[macro];
  *h = nl_->height[macro];
  if (SwapsSides(o)) std::swap(*w, *h);
}

void GridMask::Place(int32_t macro, double x, double y, Orientation o) {
  if (macro < 0 || macro >= nl_->num_nodes() || !nl_->is_macro(macro))
    throw InfeasibleAction("GridMask::Place: node " + std::to_string(macro) + " is not a macro");
  if (!std::isfinite(x) || !std::isfinite(y))
    throw InfeasibleAction("GridMask::Place: position is not finite");
  if (nl_->type[macro] == NodeType::kSoftMacro) {
    slot_[macro] = kSoftSlot;
    return;
  }
  double w, h;
  Footprint(macro, o, &w, &h);
  const Rect r{x - 0.5 * w, x + 0.5 * w, y - 0.5 * h, y + 0.5 * h};
  if (slot_[macro] >= 0) {
    rect_[slot_[macro]] = r;
    return;
  }
  slot_[macro] = static_cast<int32_t>(node_.size());
  node_.push_back(macro);
  rect_.push_back(r);
}

void GridMask::Unplace(int32_t macro) {
  const int32_t k = slot_[macro];
  slot_[macro] = -1;
  if (k < 0) return;
  // Swap-remove keeps the obstacle list packed.
  const int32_t last = static_cast<int32_t>(node_.size()) - 1;
  if (k != last) {
    node_[k] = node_[last];
    rect_[k] = rect_[last];
    slot_[node_[k]] = k;
  }
  node_.pop_back();
  rect_.pop_back();
}

bool GridMask::Overlaps(const Rect& r, double cx, double cy, double w, double h) const {
  return OverlapLen(cx - 0.5 * w, cx + 0.5 * w, r.xmin, r.xmax) > kTolerance &&
         OverlapLen(cy - 0.5 * h, cy + 0.5 * h, r.ymin, r.ymax) > kTolerance;
}

void GridMask::ForbidCells(const Rect& r, double w, double h) const {
  // Centres cx with overlap > tol lie in the open interval
  // (xmin − w/2 + tol, xmax + w/2 − tol); the estimate is then checked with the exact
  // predicate so that Compute and IsLegal agree on every cell.
  const double lo_x = r.xmin - 0.5 * w + kTolerance, hi_x = r.xmax + 0.5 * w - kTolerance;
  const double lo_y = r.ymin - 0.5 * h + kTolerance, hi_y = r.ymax + 0.5 * h - kTolerance;
  if (hi_x <= lo_x || hi_y <= lo_y) return;
  const auto px = [&](int c) {
    const double cx = CellCentreX(c);
    return OverlapLen(cx - 0.5 * w, cx + 0.5 * w, r.xmin, r.xmax) > kTolerance;
  };
  const auto py = [&](int rr) {
    const double cy = CellCentreY(rr);
    return OverlapLen(cy - 0.5 * h, cy + 0.5 * h, r.ymin, r.ymax) > kTolerance;
  };
  int c0, c1, r0, r1;
  if (!CellRange(ClampIndex(std::floor(lo_x / gw_ - 0.5) + 1, cols_),
                 ClampIndex(std::ceil(hi_x / gw_ - 0.5) - 1, cols_), cols_, px, &c0, &c1))
    return;
  if (!CellRange(ClampIndex(std::floor(lo_y / gh_ - 0.5) + 1, rows_),
                 ClampIndex(std::ceil(hi_y / gh_ - 0.5) - 1, rows_), rows_, py, &r0, &r1))
    return;
  const int stride = cols_ + 1;
  int32_t* d = diff_.data();
  d[r0 * stride + c0] += 1;
  d[r0 * stride + c1 + 1] -= 1;
  d[(r1 + 1) * stride + c0] -= 1;
  d[(r1 + 1) * stride + c1 + 1] += 1;
}

int GridMask::Compute(int32_t macro, uint8_t* mask, Orientation o) const {
  double w, h;
  Footprint(macro, o, &w, &h);
  std::fill(diff_.begin(), diff_.end(), 0);
  const int32_t self = slot_[macro];
  const int32_t n = static_cast<int32_t>(node_.size());
  for (int32_t k = 0; k < n; ++k)
    if (k != self) ForbidCells(rect_[k], w, h);
  for (const Rect& b : blockages_) ForbidCells(b, w, h);

  // Canvas: the area inside the canvas must be the whole area (TILOS's area test).
  for (int c = 0; c < cols_; ++c) {
    const double cx = CellCentreX(c);
    col_overlap_[c] = std::max(0.0, OverlapLen(cx - 0.5 * w, cx + 0.5 * w, 0.0, width_));
  }
  for (int r = 0; r < rows_; ++r) {
    const double cy = CellCentreY(r);
    row_overlap_[r] = std::max(0.0, OverlapLen(cy - 0.5 * h, cy + 0.5 * h, 0.0, height_));
  }
  const double area = w * h;

  // Prefix sums of the difference array, row by row: `run[c]` carries the column sums of
  // the rows above, so each cell's count is the running sum of its row.
  const int stride = cols_ + 1;
  int32_t* d = diff_.data();
  int legal = 0;
  for (int r = 0; r < rows_; ++r) {
    int32_t* row = d + r * stride;
    int32_t* next = row + stride;
    int32_t acc = 0;
    const double oy = row_overlap_[r];
    uint8_t* out = mask + static_cast<size_t>(r) * cols_;
    for (int c = 0; c < cols_; ++c) {
      acc += row[c];
      next[c] += row[c];  // carry the column's pending changes to the next row
      const bool inside = std::abs(col_overlap_[c] * oy - area) <= kTolerance;
      const uint8_t ok = static_cast<uint8_t>(acc == 0 && inside);
      out[c] = ok;
      legal += ok;
    }
    next[cols_] += row[cols_];
  }
  return legal;
}

bool GridMask::IsLegal(int32_t macro, double x, double y, Orientation o) const {
  double w, h;
  Footprint(macro, o, &w, &h);
  const double ox = std::max(0.0, OverlapLen(x - 0.5 * w, x + 0.5 * w, 0.0, width_));
  const double oy = std::max(0.0, OverlapLen(y - 0.5 * h, y + 0.5 * h, 0.0, height_));
  if (std::abs(ox * oy - w * h) > kTolerance) return false;
  const int32_t self = slot_[macro];
  const int32_t n = static_cast<int32_t>(node_.size());
  for (int32_t k = 0; k < n; ++k)
    if (k != self && Overlaps(rect_[k], x, y, w, h)) return false;
  for (const Rect& b : blockages_)
    if (Overlaps(b, x, y, w, h)) return false;
  return true;
}

}  // namespace placerl::chip
