// Proxy cost: full evaluation and incremental updates. The arithmetic follows the
// reference re-implementation step by step (same grid-cell arithmetic, same routing
// patterns, same partial-overlap rule) so that results agree to ~1e-12; see
// docs/proxy_cost.md for the definition and where it departs from the reference.
#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/files.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

// Inputs beyond this magnitude (a 1000-km chip) overflow spans and sums to inf and then to
// NaN (inf − inf); the proxy cost refuses them instead of returning NaN. False for NaN/inf.
constexpr double kMaxMagnitude = 1e12;
bool InRange(double v) { return std::abs(v) <= kMaxMagnitude; }

}  // namespace

// Mean of the k largest values, kept across reads. The members are the elements with a
// value ≥ t, where t was the m-th largest value (m = k + k/2 + 16) when the set was last
// rebuilt or tightened, kept sorted by descending value; a move changes few values and
// each update moves one entry within, into or out of the sorted list. While at least k
// elements are members, the k largest of all values are the first k members (every other
// value is < t) — exact. Fewer than k → rebuild from all values. The k values are summed in
// descending order, so the result depends only on the multiset of values (full and
// incremental evaluation agree bit for bit).
void ProxyCost::TopKSet::Reset(size_t n) {
  val.assign(n, 0.0);
  members.clear();
  scratch.resize(n);
  valid = false;
}

void ProxyCost::TopKSet::Update(int32_t i, double old, double v) {
  if (old == v) return;
  const bool was = old >= t, now = v >= t;
  if (was && now) {
    // Move the entry from its old place to its new one, shifting the entries between.
    auto from = std::lower_bound(members.begin(), members.end(), Entry{old, i});
    const Entry e{v, i};
    if (e < *from) {
      auto to = std::lower_bound(members.begin(), from, e);
      std::move_backward(to, from, from + 1);
      *to = e;
    } else {
      auto to = std::lower_bound(from + 1, members.end(), e);
      std::move(from + 1, to, from);
      *(to - 1) = e;
    }
  } else if (was) {
    members.erase(std::lower_bound(members.begin(), members.end(), Entry{old, i}));
  } else {
    const Entry e{v, i};
    members.insert(std::lower_bound(members.begin(), members.end(), e), e);
  }
}

void ProxyCost::TopKSet::Rebuild(size_t k) {
  const size_t n = val.size();
  const size_t m = std::min(n, k + k / 2 + 16);
  std::copy(val.begin(), val.end(), scratch.begin());
  std::nth_element(scratch.begin(), scratch.begin() + (m - 1), scratch.begin() + n, std::greater<double>());
  t = scratch[m - 1];
  members.clear();
  for (size_t i = 0; i < n; ++i) {
    if (val[i] >= t) members.push_back({val[i], static_cast<int32_t>(i)});
  }
  std::sort(members.begin(), members.end());
  valid = true;
}

double ProxyCost::TopKSet::MeanTopK(size_t k) {
  const size_t n = val.size();
  if (n == 0) return 0.0;
  k = std::max<size_t>(1, std::min(k, n));
  const size_t m = std::min(n, k + k / 2 + 16);
  if (!valid || members.size() < k) Rebuild(k);
  if (members.size() > 2 * m) {
    // Tighten: the threshold becomes the m-th largest value again (members with that
    // value all stay), so the list stays short.
    t = members[m - 1].v;
    size_t keep = m;
    while (keep < members.size() && members[keep].v >= t) ++keep;
    members.resize(keep);
  }
  double s = 0;
  for (size_t j = 0; j < k; ++j) s += members[j].v;
  return s / static_cast<double>(k);
}

namespace {

}  // namespace

int EffectiveSmoothingRange(const PlacementSettings& s) {
  const double k = std::floor(s.smooth_range);
  const int longest = std::max(std::max(s.cols, s.rows), 1);
  return k >= longest - 1 ? longest - 1 : (k > 0 ? static_cast<int>(k) : 0);
}

EvaluationEstimate EstimateEvaluation(const PlacementSettings& s) {
  // Measured with proxy-cost on Ariane133 (docs/proxy_cost.md, CPU time): ~140 bytes per
  // grid cell; ~0.16 us per cell at 4096×4096 (allocation, the top-k sets and cache misses
  // dominate; 0.2 here), plus ~1 ns per smoothing term (each cell of both directions sums
  // 2k+1 terms). Wall-clock time on a busy machine can be 2–3× more.
  EvaluationEstimate e;
  const double cells = static_cast<double>(std::max(s.cols, 0)) * std::max(s.rows, 0);
  e.smoothing_range = EffectiveSmoothingRange(s);
  e.bytes = 140.0 * cells;
  e.seconds = 2e-7 * cells + 1e-9 * 2.0 * cells * (2.0 * e.smoothing_range + 1.0);
  return e;
}

ProxyCost::ProxyCost(const Netlist& nl, const PlacementSettings& settings, CostWeights weights)
    : nl_(nl), s_(settings), w_(weights) {
  if (!s_.has_canvas()) throw ConfigError("proxy cost: canvas width and height must be positive");
  if (!s_.has_grid()) throw ConfigError("proxy cost: grid columns and rows must be positive");
  if (!s_.has_routes()) throw ConfigError("proxy cost: routes per micron must be positive");
  if (s_.cols > 4096 || s_.rows > 4096) throw ConfigError("proxy cost: grid larger than 4096×4096");
  if (!InRange(s_.canvas_width) || !InRange(s_.canvas_height) || s_.canvas_width < 1e-6 ||
      s_.canvas_height < 1e-6 || !InRange(s_.h_routes_per_micron) || !InRange(s_.v_routes_per_micron) ||
      s_.h_routes_per_micron < 1e-6 || s_.v_routes_per_micron < 1e-6 || !InRange(s_.h_macro_alloc) ||
      !InRange(s_.v_macro_alloc) || !(s_.smooth_range >= 0 && s_.smooth_range <= 1e6)) {
    throw ConfigError("proxy cost: canvas, routes or smoothing out of range (canvas and routes 1e-6..1e12)");
  }
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    const bool pos_ok = nl.parent[i] >= 0 || (InRange(nl.x[i]) && InRange(nl.y[i]));  // pins: x/y unused
    if (!pos_ok || !InRange(nl.width[i]) || !InRange(nl.height[i]) || !InRange(nl.pin_dx[i]) ||
        !InRange(nl.pin_dy[i]) || !InRange(nl.weight[i])) {
      throw ConfigError("proxy cost: node '" + nl.name[i] +
                        "' has a position, size, pin offset or weight that is not finite or beyond ±1e12");
    }
  }
  for (double w : nl.net_weight) {
    if (!InRange(w)) throw ConfigError("proxy cost: net weight not finite or beyond ±1e12");
  }
  cols_ = s_.cols;
  rows_ = s_.rows;
  k_ = EffectiveSmoothingRange(s_);  // bit-identical to floor(smooth_range), see the header
  skip_off_canvas_nets_ = w_.off_canvas_nets == OffCanvasNets::kSkip;
  gw_ = s_.canvas_width / cols_;
  gh_ = s_.canvas_height / rows_;
  inv_gw_ = 1.0 / gw_;
  inv_gh_ = 1.0 / gh_;
  grid_v_routes_ = gw_ * s_.v_routes_per_micron;
  grid_h_routes_ = gh_ * s_.h_routes_per_micron;
  net_weight_sum_ = 0;
  for (double w : nl.net_weight) net_weight_sum_ += w;
  if (net_weight_sum_ == 0) net_weight_sum_ = 1;  // as the reference: no nets → WL cost 0
  x_ = nl.x;
  y_ = nl.y;
  orient_ = nl.orientation;
  const int n = nl.num_nodes();
  counts_density_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const NodeType t = nl.type[i];
    counts_density_[i] = (t == NodeType::kHardMacro || t == NodeType::kSoftMacro || t == NodeType::kStdCell);
  }
  net_mark_.assign(nl.num_nets(), -1);
  pin_slot_start_.assign(n + 1, 0);
  for (int32_t p : nl.net_pins) pin_slot_start_[p + 1]++;
  for (int i = 0; i < n; ++i) pin_slot_start_[i + 1] += pin_slot_start_[i];
  pin_slots_.assign(nl.net_pins.size(), 0);
  {
    std::vector<int32_t> fill(pin_slot_start_.begin(), pin_slot_start_.end() - 1);
    for (size_t j = 0; j < nl.net_pins.size(); ++j) pin_slots_[fill[nl.net_pins[j]]++] = static_cast<int32_t>(j);
  }
  EvaluateFull();
}

void ProxyCost::PinXY(int32_t pin, double* px, double* py) const {
  PinPosition(nl_, x_.data(), y_.data(), orient_.data(), pin, px, py);
}

void ProxyCost::CellOf(double px, double py, int* row, int* col) const {
  // floor(y / h), floor(x / w), clamped to the grid (pins on or beyond the canvas edge).
  // A multiplication by the reciprocal gives the same floor unless the quotient is within
  // 1e-9 of an integer; only then is the (slower) division done.
  const double qy = py * inv_gh_, qx = px * inv_gw_;
  double r = std::floor(qy);
  double c = std::floor(qx);
  if (qy - r < 1e-9 || r + 1 - qy < 1e-9) r = std::floor(py / gh_);
  if (qx - c < 1e-9 || c + 1 - qx < 1e-9) c = std::floor(px / gw_);
  r = std::min(std::max(r, 0.0), static_cast<double>(rows_ - 1));
  c = std::min(std::max(c, 0.0), static_cast<double>(cols_ - 1));
  if (!(r == r)) r = 0;  // NaN positions land in cell 0 instead of indexing out of bounds
  if (!(c == c)) c = 0;
  *row = static_cast<int>(r);
  *col = static_cast<int>(c);
}

ProxyCost::Rect ProxyCost::NodeRect(int32_t i) const {
  const double hw = nl_.width[i] / 2, hh = nl_.height[i] / 2;
  return {x_[i] - hw, y_[i] - hh, x_[i] + hw, y_[i] + hh};
}

void ProxyCost::AddDensity(int32_t node, double sign) {
  const Rect m = NodeRect(node);
  int r0, c0, r1, c1;
  CellOf(m.xmin, m.ymin, &r0, &c0);
  CellOf(m.xmax, m.ymax, &r1, &c1);
  for (int r = r0; r <= r1; ++r) {
    const double cy0 = r * gh_, cy1 = (r + 1) * gh_;
    const double dy = std::min(m.ymax, cy1) - std::max(m.ymin, cy0);
    if (dy < 0) continue;
    for (int c = c0; c <= c1; ++c) {
      const double cx0 = c * gw_, cx1 = (c + 1) * gw_;
      const double dx = std::min(m.xmax, cx1) - std::max(m.xmin, cx0);
      if (dx < 0) continue;
      occupied_[r * cols_ + c] += sign * (dx * dy);
      dirty_density_.push_back(r * cols_ + c);
    }
  }
}

// Routing resources taken by a hard macro: per cell, x-overlap·v_alloc (vertical) and
// y-overlap·h_alloc (horizontal). A macro whose first or last row is covered only in part
// gives up its vertical share in its top row; likewise horizontal in its right-most column.
void ProxyCost::AddMacroBlockage(int32_t node, double sign) {
  const Rect m = NodeRect(node);
  int r0, c0, r1, c1;
  CellOf(m.xmin, m.ymin, &r0, &c0);
  CellOf(m.xmax, m.ymax, &r1, &c1);
  auto overlap = [&](int r, int c, double* dx, double* dy) {
    const double ox = std::min(m.xmax, (c + 1) * gw_) - std::max(m.xmin, c * gw_);
    const double oy = std::min(m.ymax, (r + 1) * gh_) - std::max(m.ymin, r * gh_);
    if (ox > 0 && oy > 0) {
      *dx = ox;
      *dy = oy;
    } else {
      *dx = *dy = 0;
    }
  };
  bool partial_v = false, partial_h = false;
  for (int r = r0; r <= r1; ++r) {
    for (int c = c0; c <= c1; ++c) {
      double dx, dy;
      overlap(r, c, &dx, &dy);
      if (r1 != r0 && (r == r0 || r == r1) && std::abs(dy - gh_) > 1e-5) partial_v = true;
      if (c1 != c0 && (c == c0 || c == c1) && std::abs(dx - gw_) > 1e-5) partial_h = true;
      v_macro_[r * cols_ + c] += sign * (dx * s_.v_macro_alloc);
      h_macro_[r * cols_ + c] += sign * (dy * s_.h_macro_alloc);
      dirty_blockage_.push_back(r * cols_ + c);
    }
  }
  if (partial_v) {
    for (int c = c0; c <= c1; ++c) {
      double dx, dy;
      overlap(r1, c, &dx, &dy);
      v_macro_[r1 * cols_ + c] -= sign * (dx * s_.v_macro_alloc);
    }
  }
  if (partial_h) {
    for (int r = r0; r <= r1; ++r) {
      double dx, dy;
      overlap(r, c1, &dx, &dy);
      h_macro_[r * cols_ + c1] -= sign * (dy * s_.h_macro_alloc);
    }
  }
}

// Net routing demand is kept as difference arrays: a horizontal segment over columns
// [c0, c1) of a row and a vertical segment over rows [r0, r1) of a column cost O(1) to
// add or remove; Cost() turns them into per-cell demand with one prefix-sum pass.
void ProxyCost::AddHRange(int row, int c0, int c1, double w) {
  if (c0 >= c1) return;
  if (!h_row_dirty_[row]) {
    h_row_dirty_[row] = 1;
    dirty_h_rows_.push_back(row);
  }
  double* d = &h_diff_[static_cast<size_t>(row) * (cols_ + 1)];
  d[c0] += w;
  d[c1] -= w;
}

void ProxyCost::AddVRange(int col, int r0, int r1, double w) {
  if (r0 >= r1) return;
  if (!v_col_dirty_[col]) {
    v_col_dirty_[col] = 1;
    dirty_v_cols_.push_back(col);
  }
  double* d = &v_diff_[static_cast<size_t>(col) * (rows_ + 1)];
  d[r0] += w;
  d[r1] -= w;
}

// Pin positions and cells are stored per net slot (parallel to net_pins), so that the
// hot loops over a net's pins read contiguous memory; moving a node rewrites the slots
// of its pins.
void ProxyCost::UpdatePins(int32_t i) {
  auto place = [&](int32_t p) {
    const int32_t sb = pin_slot_start_[p], se = pin_slot_start_[p + 1];
    if (sb == se) return;
    double px, py;
    PinPosition(nl_, x_.data(), y_.data(), orient_.data(), p, &px, &py);
    int r, c;
    CellOf(px, py, &r, &c);
    const int code = (r << 16) | c;
    for (int32_t q = sb; q < se; ++q) {
      const int32_t slot = pin_slots_[q];
      slot_x_[slot] = px;
      slot_y_[slot] = py;
      slot_code_[slot] = code;
    }
  };
  place(i);
  for (int32_t j = nl_.macro_pin_start[i]; j < nl_.macro_pin_start[i + 1]; ++j) place(nl_.macro_pins[j]);
}

// Grid routing of one net (weights in routes): the distinct cells of its pins are
// connected by a straight/L route (2 cells), an L/T pattern (3 cells) or a star from the
// driver's cell (more). A horizontal step from column c to c+1 loads H[row][c]; a vertical
// step from row r to r+1 loads V[r][col].
// Distinct cells of the net's pins, sorted, encoded row<<16 | col (sorting codes = sorting
// (row, col); decoding needs no division). Returns the count; *src = the driver's cell;
// *hpwl (if given) = the net's HPWL, measured in the same pass over the pin slots.
int ProxyCost::NetCells(int32_t net, int* cells, int* src, double* hpwl, bool* on_canvas) const {
  const int32_t b = nl_.net_start[net], e = nl_.net_start[net + 1];
  *src = slot_code_[b];
  double xmin = slot_x_[b], xmax = xmin, ymin = slot_y_[b], ymax = ymin;
  const bool large = e - b > 64;  // insertion sort for the (many) small nets, std::sort else
  int m = 0;
  for (int32_t j = b; j < e; ++j) {
    const double px = slot_x_[j], py = slot_y_[j];
    xmin = std::min(xmin, px);
    xmax = std::max(xmax, px);
    ymin = std::min(ymin, py);
    ymax = std::max(ymax, py);
    const int code = slot_code_[j];
    int pos = m++;
    while (!large && pos > 0 && cells[pos - 1] > code) {
      cells[pos] = cells[pos - 1];
      --pos;
    }
    cells[pos] = code;
  }
  if (large) std::sort(cells, cells + m);
  if (hpwl) *hpwl = (xmax - xmin) + (ymax - ymin);
  if (on_canvas) *on_canvas = xmin >= 0 && ymin >= 0 && xmax <= s_.canvas_width && ymax <= s_.canvas_height;
  int u = 1;
  for (int q = 1; q < m; ++q) {
    if (cells[q] != cells[u - 1]) cells[u++] = cells[q];
  }
  return u;
}

void ProxyCost::RouteNet(int32_t net, double sign) {
  const int32_t b = nl_.net_start[net], e = nl_.net_start[net + 1];
  if (e - b < 2) return;
  // The cells of the last route are kept per net: removing a route replays them.
  int* cells = &net_cells_[b];
  if (sign > 0) {
    bool on_canvas = true;
    net_ncells_[net] = NetCells(net, cells, &net_src_[net], nullptr, skip_off_canvas_nets_ ? &on_canvas : nullptr);
    net_routed_[net] = on_canvas;
  }
  if (!net_routed_[net]) return;
  RouteCells(cells, net_ncells_[net], net_src_[net], sign * NetRouteWeight(net));
}

// After the pins of `net` moved: replace its old route (cached cells) by the new one. A
// star (more than three cells) whose driver cell did not change only swaps the branches
// to the cells that left or joined; an unchanged cell set costs nothing.
double ProxyCost::RerouteNet(int32_t net) {
  const int32_t b = nl_.net_start[net], e = nl_.net_start[net + 1];
  if (e - b < 2) return NetHpwl(net);
  const double w = NetRouteWeight(net);
  int* old_cells = &net_cells_[b];
  const int n_old = net_ncells_[net], src_old = net_src_[net];
  if (new_cells_.size() < static_cast<size_t>(e - b)) new_cells_.resize(e - b);
  int* fresh = new_cells_.data();
  int src_new;
  double h;
  bool on_canvas = true;
  const int n_new = NetCells(net, fresh, &src_new, &h, skip_off_canvas_nets_ ? &on_canvas : nullptr);
  if (skip_off_canvas_nets_ && !(net_routed_[net] && on_canvas)) {
    // Google's rule: a pin crossed the canvas boundary (or the net stays off it): its route
    // leaves or joins the demand as a whole.
    if (net_routed_[net]) RouteCells(old_cells, n_old, src_old, -w);
    if (on_canvas) RouteCells(fresh, n_new, src_new, w);
    std::copy(fresh, fresh + n_new, old_cells);
    net_ncells_[net] = n_new;
    net_src_[net] = src_new;
    net_routed_[net] = on_canvas;
    return h;
  }
  if (src_new == src_old && n_new == n_old && std::equal(fresh, fresh + n_new, old_cells)) return h;
  if (src_new == src_old && n_old > 3 && n_new > 3) {
    const int sr = src_old >> 16, sc = src_old & 0xffff;
    auto branch = [&](int code, double wt) {
      if (code == src_old) return;
      const int r = code >> 16, c = code & 0xffff;
      AddHRange(sr, std::min(sc, c), std::max(sc, c), wt);
      AddVRange(c, std::min(sr, r), std::max(sr, r), wt);
    };
    int i = 0, j = 0;
    while (i < n_old || j < n_new) {
      if (j == n_new || (i < n_old && old_cells[i] < fresh[j])) {
        branch(old_cells[i++], -w);
      } else if (i == n_old || fresh[j] < old_cells[i]) {
        branch(fresh[j++], w);
      } else {
        ++i;
        ++j;
      }
    }
  } else {
    RouteCells(old_cells, n_old, src_old, -w);
    RouteCells(fresh, n_new, src_new, w);
  }
  std::copy(fresh, fresh + n_new, old_cells);
  net_ncells_[net] = n_new;
  net_src_[net] = src_new;
  return h;
}

// Routes one net given its distinct sorted cells: a straight/L route (2 cells), the L/T
// patterns of the reference (3 cells), or a star of 2-cell routes from the driver's cell.
void ProxyCost::RouteCells(const int* cells, int ncells, int src, double w) {
  const int sr = src >> 16, sc = src & 0xffff;
  const size_t n = static_cast<size_t>(ncells);
  auto route2 = [&](int r_src, int c_src, int r_snk, int c_snk) {
    AddHRange(r_src, std::min(c_src, c_snk), std::max(c_src, c_snk), w);
    AddVRange(c_snk, std::min(r_src, r_snk), std::max(r_src, r_snk), w);
  };
  if (n == 1) return;
  const int src_code = src;
  if (n == 2) {
    const int other = cells[0] == src_code ? cells[1] : cells[0];
    route2(sr, sc, other >> 16, other & 0xffff);
    return;
  }
  if (n == 3) {
    // Sort by (col, row): keys col<<16 | row, three compare-exchanges.
    auto key = [](int code) { return ((code & 0xffff) << 16) | (code >> 16); };
    int ka = key(cells[0]), kb = key(cells[1]), kc = key(cells[2]);
    if (ka > kb) std::swap(ka, kb);
    if (kb > kc) std::swap(kb, kc);
    if (ka > kb) std::swap(ka, kb);
    const std::pair<int, int> g[3] = {{ka & 0xffff, ka >> 16}, {kb & 0xffff, kb >> 16}, {kc & 0xffff, kc >> 16}};
    const int y1 = g[0].first, x1 = g[0].second;
    const int y2 = g[1].first, x2 = g[1].second;
    const int y3 = g[2].first, x3 = g[2].second;
    if (x1 < x2 && x2 < x3 && std::min(y1, y3) < y2 && std::max(y1, y3) > y2) {
      // L-routing
      AddHRange(y1, x1, x2, w);
      AddHRange(y2, x2, x3, w);
      AddVRange(x2, std::min(y1, y2), std::max(y1, y2), w);
      AddVRange(x3, std::min(y2, y3), std::max(y2, y3), w);
    } else if (x2 == x3 && x1 < x2 && y1 < std::min(y2, y3)) {
      AddHRange(y1, x1, x2, w);
      AddVRange(x2, y1, std::max(y2, y3), w);
    } else if (y2 == y3) {
      AddHRange(y1, x1, x2, w);
      AddHRange(y2, x2, x3, w);
      AddVRange(x2, std::min(y2, y1), std::max(y2, y1), w);
    } else {
      // T-routing: by (row, col), which is the order of the cell codes.
      const int ty1 = cells[0] >> 16, tx1 = cells[0] & 0xffff;
      const int ty2 = cells[1] >> 16;
      const int ty3 = cells[2] >> 16, tx3 = cells[2] & 0xffff;
      const int xmin = std::min({tx1, cells[1] & 0xffff, tx3});
      const int xmax = std::max({tx1, cells[1] & 0xffff, tx3});
      AddHRange(ty2, xmin, xmax, w);
      AddVRange(tx1, std::min(ty1, ty2), std::max(ty1, ty2), w);
      AddVRange(tx3, std::min(ty2, ty3), std::max(ty2, ty3), w);
    }
    return;
  }
  for (size_t q = 0; q < n; ++q) {
    const int code = cells[q];
    if (code == src_code) continue;
    route2(sr, sc, code >> 16, code & 0xffff);
  }
}

double ProxyCost::NetHpwl(int32_t net) const {
  const int32_t b = nl_.net_start[net], e = nl_.net_start[net + 1];
  double xmin = slot_x_[b], xmax = slot_x_[b], ymin = slot_y_[b], ymax = slot_y_[b];
  for (int32_t j = b + 1; j < e; ++j) {
    const double px = slot_x_[j], py = slot_y_[j];
    xmin = std::min(xmin, px);
    xmax = std::max(xmax, px);
    ymin = std::min(ymin, py);
    ymax = std::max(ymax, py);
  }
  return (xmax - xmin) + (ymax - ymin);
}

// Brings the congestion values up to date. Rows (H) and columns (V) whose difference
// array changed get their per-cell demand again by a prefix sum; with smoothing, each
// vertical value is spread evenly over the cells [c−k, c+k] of its row and each
// horizontal value over the cells [r−k, r+k] of its column (clipped to the grid), so the
// smoothed values of the columns/rows within k of a changed one are recomputed (same
// arithmetic as a full pass). Then every changed cell's (demand + blockage) / supply goes
// into the top-k set; cells whose macro blockage changed are updated too.
// Smoothed value at position `pos` of a line of `len` raw values `stride` apart: each raw
// value is spread evenly over the positions within k of it (clipped to the line).
double ProxyCost::Smoothed(const double* line, int pos, int len, int stride) const {
  double s = 0;
  for (int q = std::max(0, pos - k_); q <= std::min(len - 1, pos + k_); ++q) {
    const int cnt = std::min(len - 1, q + k_) - std::max(0, q - k_) + 1;
    s += line[q * stride] / cnt;
  }
  return s;
}

void ProxyCost::RefreshCongestion() {
  const size_t n = static_cast<size_t>(rows_) * cols_;
  const double inv_v = 1.0 / grid_v_routes_, inv_h = 1.0 / grid_h_routes_;
  double* hr = h_raw_.data();
  double* vr = v_raw_.data();
  if (k_ == 0) {
    // No smoothing: the prefix sums are the demand; update the values in the same pass.
    for (int r : dirty_h_rows_) {
      h_row_dirty_[r] = 0;
      double acc = 0;
      const double* d = &h_diff_[static_cast<size_t>(r) * (cols_ + 1)];
      const int base = r * cols_;
      for (int c = 0; c < cols_; ++c) {
        acc += d[c];
        h_smooth_[base + c] = acc;
        congestion_topk_.Set(static_cast<int32_t>(n + base + c), (acc + h_macro_[base + c]) * inv_h);
      }
    }
    for (int c : dirty_v_cols_) {
      v_col_dirty_[c] = 0;
      double acc = 0;
      const double* d = &v_diff_[static_cast<size_t>(c) * (rows_ + 1)];
      for (int r = 0; r < rows_; ++r) {
        acc += d[r];
        const int i = r * cols_ + c;
        v_smooth_[i] = acc;
        congestion_topk_.Set(i, (acc + v_macro_[i]) * inv_v);
      }
    }
    dirty_h_rows_.clear();
    dirty_v_cols_.clear();
  }
  smooth_rows_.clear();
  smooth_cols_.clear();
  for (int r : dirty_h_rows_) {
    h_row_dirty_[r] = 0;
    double acc = 0;
    const double* d = &h_diff_[static_cast<size_t>(r) * (cols_ + 1)];
    for (int c = 0; c < cols_; ++c) {
      acc += d[c];
      hr[r * cols_ + c] = acc;
    }
    for (int rr = std::max(0, r - k_); rr <= std::min(rows_ - 1, r + k_); ++rr) {
      if (!h_smooth_dirty_[rr]) {
        h_smooth_dirty_[rr] = 1;
        smooth_rows_.push_back(rr);
      }
    }
  }
  for (int c : dirty_v_cols_) {
    v_col_dirty_[c] = 0;
    double acc = 0;
    const double* d = &v_diff_[static_cast<size_t>(c) * (rows_ + 1)];
    for (int r = 0; r < rows_; ++r) {
      acc += d[r];
      vr[r * cols_ + c] = acc;
    }
    for (int cc = std::max(0, c - k_); cc <= std::min(cols_ - 1, c + k_); ++cc) {
      if (!v_smooth_dirty_[cc]) {
        v_smooth_dirty_[cc] = 1;
        smooth_cols_.push_back(cc);
      }
    }
  }
  dirty_h_rows_.clear();
  dirty_v_cols_.clear();
  for (int r : smooth_rows_) {
    h_smooth_dirty_[r] = 0;
    for (int c = 0; c < cols_; ++c) {
      const int i = r * cols_ + c;
      h_smooth_[i] = Smoothed(&h_raw_[c], r, rows_, cols_);
      congestion_topk_.Set(static_cast<int32_t>(n + i), (h_smooth_[i] + h_macro_[i]) * inv_h);
    }
  }
  for (int c : smooth_cols_) {
    v_smooth_dirty_[c] = 0;
    for (int r = 0; r < rows_; ++r) {
      const int i = r * cols_ + c;
      v_smooth_[i] = Smoothed(&v_raw_[r * cols_], c, cols_, 1);
      congestion_topk_.Set(i, (v_smooth_[i] + v_macro_[i]) * inv_v);
    }
  }
  for (int i : dirty_blockage_) {
    congestion_topk_.Set(i, (v_smooth_[i] + v_macro_[i]) * inv_v);
    congestion_topk_.Set(static_cast<int32_t>(n + i), (h_smooth_[i] + h_macro_[i]) * inv_h);
  }
  dirty_blockage_.clear();
}

// Everything is recomputed on the next read (after a full evaluation, or when the lists of
// changed cells grew beyond the grid size because many moves came without a read).
void ProxyCost::MarkAllDirty() {
  const size_t n = static_cast<size_t>(rows_) * cols_;
  dirty_density_.clear();
  dirty_blockage_.clear();
  dirty_h_rows_.clear();
  dirty_v_cols_.clear();
  for (int r = 0; r < rows_; ++r) {
    h_row_dirty_[r] = 1;
    dirty_h_rows_.push_back(r);
  }
  for (int c = 0; c < cols_; ++c) {
    v_col_dirty_[c] = 1;
    dirty_v_cols_.push_back(c);
  }
  for (size_t i = 0; i < n; ++i) {
    dirty_density_.push_back(static_cast<int32_t>(i));
    dirty_blockage_.push_back(static_cast<int32_t>(i));
  }
  density_topk_.valid = false;
  congestion_topk_.valid = false;
}

void ProxyCost::ResetArrays() {
  const size_t n = static_cast<size_t>(rows_) * cols_;
  occupied_.assign(n, 0);
  h_raw_.assign(n, 0);
  v_raw_.assign(n, 0);
  h_macro_.assign(n, 0);
  v_macro_.assign(n, 0);
  h_smooth_.assign(n, 0);
  v_smooth_.assign(n, 0);
  h_diff_.assign(static_cast<size_t>(rows_) * (cols_ + 1), 0);
  v_diff_.assign(static_cast<size_t>(cols_) * (rows_ + 1), 0);
  net_cells_.assign(nl_.net_pins.size(), 0);
  net_ncells_.assign(nl_.num_nets(), 0);
  net_src_.assign(nl_.num_nets(), 0);
  net_routed_.assign(nl_.num_nets(), 1);
  slot_x_.assign(nl_.net_pins.size(), 0);
  slot_y_.assign(nl_.net_pins.size(), 0);
  slot_code_.assign(nl_.net_pins.size(), 0);
  for (int32_t i = 0; i < nl_.num_nodes(); ++i) {
    if (nl_.parent[i] < 0) UpdatePins(i);
  }
  density_topk_.Reset(n);
  congestion_topk_.Reset(2 * n);
  h_row_dirty_.assign(rows_, 0);
  v_col_dirty_.assign(cols_, 0);
  h_smooth_dirty_.assign(rows_, 0);
  v_smooth_dirty_.assign(cols_, 0);
  MarkAllDirty();
}

CostBreakdown ProxyCost::EvaluateFull() {
  ResetArrays();
  const int32_t nn = nl_.num_nets();
  net_hpwl_.assign(nn, 0);
  hpwl_ = 0;
  for (int32_t k = 0; k < nn; ++k) {
    net_hpwl_[k] = NetHpwl(k);
    hpwl_ += nl_.net_weight[k] * net_hpwl_[k];
  }
  for (int32_t i = 0; i < nl_.num_nodes(); ++i) {
    if (counts_density_[i]) AddDensity(i, 1.0);
    if (nl_.type[i] == NodeType::kHardMacro) AddMacroBlockage(i, 1.0);
  }
  for (int32_t k = 0; k < nn; ++k) RouteNet(k, 1.0);
  return Cost();
}

CostBreakdown ProxyCost::Cost() {
  CostBreakdown c;
  c.hpwl = hpwl_;
  c.wirelength_cost = hpwl_ / ((s_.canvas_width + s_.canvas_height) * net_weight_sum_);
  const size_t n = occupied_.size();
  // Density: 0.5 × mean of the top 10 % cells (fewer than 10 cells: mean of the occupied ones).
  const double inv_area = 1.0 / (gw_ * gh_);
  for (int i : dirty_density_) density_topk_.Set(i, occupied_[i] * inv_area);
  dirty_density_.clear();
  if (n < 10) {
    double s = 0;
    size_t cnt = 0;
    // "Occupied" = above 1e-12 of a cell: incremental updates may leave ~1e-16 residue
    // in an emptied cell, which must not count as occupied.
    for (double d : density_topk_.val) {
      if (std::abs(d) > 1e-12) {
        s += d;
        ++cnt;
      }
    }
    c.density_cost = cnt ? 0.5 * s / cnt : 0.0;
  } else {
    c.density_cost = 0.5 * density_topk_.MeanTopK(static_cast<size_t>(std::floor(n * 0.1)));
  }
  // Congestion: mean of the top 5 % of [V ++ H] (at least the maximum); per cell
  // (smoothed net demand + macro blockage) / routing supply.
  RefreshCongestion();
  const size_t k = static_cast<size_t>(std::floor(2 * n * 0.05));
  c.congestion_cost = congestion_topk_.MeanTopK(k == 0 ? 1 : k);
  c.proxy_cost = w_.wirelength * c.wirelength_cost + w_.density * c.density_cost +
                 w_.congestion * c.congestion_cost;
  return c;
}

void ProxyCost::BeforeMove(int32_t i) {
  ++stamp_;
  touched_nets_.clear();
  for (int32_t j = nl_.node_net_start[i]; j < nl_.node_net_start[i + 1]; ++j) {
    const int32_t k = nl_.node_nets[j];
    if (net_mark_[k] == stamp_) continue;
    net_mark_[k] = stamp_;
    touched_nets_.push_back(k);
  }
  if (counts_density_[i]) AddDensity(i, -1.0);
  if (nl_.type[i] == NodeType::kHardMacro) AddMacroBlockage(i, -1.0);
}

void ProxyCost::AfterMove(int32_t i) {
  if (counts_density_[i]) AddDensity(i, 1.0);
  if (nl_.type[i] == NodeType::kHardMacro) AddMacroBlockage(i, 1.0);
  for (int32_t k : touched_nets_) {
    const double h = RerouteNet(k);
    hpwl_ += nl_.net_weight[k] * (h - net_hpwl_[k]);
    net_hpwl_[k] = h;
  }
  // Many moves without a read: the changed-cell lists are bounded by a full refresh.
  const size_t cap = 4 * occupied_.size() + 64;
  if (dirty_density_.size() > cap || dirty_blockage_.size() > cap) MarkAllDirty();
}

void ProxyCost::MoveNode(int32_t i, double x, double y) {
  if (i < 0 || i >= nl_.num_nodes()) throw InfeasibleAction("MoveNode: node index out of range");
  if (nl_.parent[i] >= 0) throw InfeasibleAction("MoveNode: '" + nl_.name[i] + "' is a pin; move its macro");
  if (!InRange(x) || !InRange(y)) throw InfeasibleAction("MoveNode: position is not finite or beyond ±1e12");
  BeforeMove(i);
  x_[i] = x;
  y_[i] = y;
  UpdatePins(i);
  AfterMove(i);
}

void ProxyCost::SetOrientation(int32_t i, Orientation o) {
  if (i < 0 || i >= nl_.num_nodes() || !nl_.is_macro(i)) throw InfeasibleAction("SetOrientation: not a macro");
  BeforeMove(i);
  orient_[i] = o;
  UpdatePins(i);
  AfterMove(i);
}

void ProxyCost::SwapNodes(int32_t a, int32_t b) {
  const double xa = x_[a], ya = y_[a];
  MoveNode(a, x_[b], y_[b]);
  MoveNode(b, xa, ya);
}

std::vector<double> ProxyCost::DensityMap() const {
  std::vector<double> d(occupied_.size());
  const double area = gw_ * gh_;
  for (size_t i = 0; i < d.size(); ++i) d[i] = occupied_[i] / area;
  return d;
}

std::vector<double> ProxyCost::VerticalCongestionMap() const {
  std::vector<double> v(v_smooth_.size());
  const double inv = 1.0 / grid_v_routes_;  // as in Cost()
  for (size_t i = 0; i < v.size(); ++i) v[i] = (v_smooth_[i] + v_macro_[i]) * inv;
  return v;
}

std::vector<double> ProxyCost::HorizontalCongestionMap() const {
  std::vector<double> h(h_smooth_.size());
  const double inv = 1.0 / grid_h_routes_;  // as in Cost()
  for (size_t i = 0; i < h.size(); ++i) h[i] = (h_smooth_[i] + h_macro_[i]) * inv;
  return h;
}

void ProxyCost::DensityMapInto(float* out) const {
  const double inv_area = 1.0 / (gw_ * gh_);
  for (size_t i = 0; i < occupied_.size(); ++i) out[i] = static_cast<float>(occupied_[i] * inv_area);
}

void ProxyCost::CongestionMapsInto(float* vertical, float* horizontal) const {
  const double iv = 1.0 / grid_v_routes_, ih = 1.0 / grid_h_routes_;
  for (size_t i = 0; i < v_smooth_.size(); ++i) vertical[i] = static_cast<float>((v_smooth_[i] + v_macro_[i]) * iv);
  for (size_t i = 0; i < h_smooth_.size(); ++i) horizontal[i] = static_cast<float>((h_smooth_[i] + h_macro_[i]) * ih);
}

void ProxyCost::DensityValuesInto(double* out) const {
  const double inv_area = 1.0 / (gw_ * gh_);  // as in Cost()
  for (size_t i = 0; i < occupied_.size(); ++i) out[i] = occupied_[i] * inv_area;
}

void ProxyCost::CongestionValuesInto(double* vertical, double* horizontal) const {
  const double iv = 1.0 / grid_v_routes_, ih = 1.0 / grid_h_routes_;  // as in RefreshCongestion()
  for (size_t i = 0; i < v_smooth_.size(); ++i) vertical[i] = (v_smooth_[i] + v_macro_[i]) * iv;
  for (size_t i = 0; i < h_smooth_.size(); ++i) horizontal[i] = (h_smooth_[i] + h_macro_[i]) * ih;
}

void ProxyCost::CongestionBlockageInto(double* vertical, double* horizontal) const {
  const double iv = 1.0 / grid_v_routes_, ih = 1.0 / grid_h_routes_;
  for (size_t i = 0; i < v_macro_.size(); ++i) vertical[i] = v_macro_[i] * iv;
  for (size_t i = 0; i < h_macro_.size(); ++i) horizontal[i] = h_macro_[i] * ih;
}

size_t ProxyCost::CongestionCountedK() const {
  const size_t k = static_cast<size_t>(std::floor(2 * v_macro_.size() * 0.05));  // as Cost()
  return k == 0 ? 1 : k;
}

std::vector<ProxyCost::CongestionValue> ProxyCost::CountedCongestion(size_t extra) const {
  const size_t n = v_macro_.size();
  std::vector<double> v(n), h(n), bv(n), bh(n);
  CongestionValuesInto(v.data(), h.data());
  CongestionBlockageInto(bv.data(), bh.data());
  std::vector<CongestionValue> all;
  all.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) all.push_back({v[i], bv[i], static_cast<int32_t>(i)});
  for (size_t i = 0; i < n; ++i) all.push_back({h[i], bh[i], static_cast<int32_t>(n + i)});
  const size_t keep = std::min(all.size(), CongestionCountedK() + extra);
  std::partial_sort(all.begin(), all.begin() + keep, all.end(), [](const CongestionValue& a, const CongestionValue& b) {
    return a.value > b.value || (a.value == b.value && a.index < b.index);
  });
  all.resize(keep);
  return all;
}

// The arithmetic of AddDensity and AddMacroBlockage, for a rectangle centred at (x, y).
void ProxyCost::FootprintAt(int32_t i, double x, double y, std::vector<FootprintCell>* out) const {
  out->clear();
  const double hw = nl_.width[i] / 2, hh = nl_.height[i] / 2;
  const Rect m{x - hw, y - hh, x + hw, y + hh};
  int r0, c0, r1, c1;
  CellOf(m.xmin, m.ymin, &r0, &c0);
  CellOf(m.xmax, m.ymax, &r1, &c1);
  const bool dens = counts_density_[i] != 0, hard = nl_.type[i] == NodeType::kHardMacro;
  const int ncols = c1 - c0 + 1;
  bool partial_v = false, partial_h = false;
  for (int r = r0; r <= r1; ++r) {
    for (int c = c0; c <= c1; ++c) {
      FootprintCell f{r * cols_ + c, 0.0, 0.0, 0.0};
      const double ox = std::min(m.xmax, (c + 1) * gw_) - std::max(m.xmin, c * gw_);
      const double oy = std::min(m.ymax, (r + 1) * gh_) - std::max(m.ymin, r * gh_);
      if (dens && ox >= 0 && oy >= 0) f.area = ox * oy;
      if (hard) {
        double dx = 0, dy = 0;
        if (ox > 0 && oy > 0) dx = ox, dy = oy;
        if (r1 != r0 && (r == r0 || r == r1) && std::abs(dy - gh_) > 1e-5) partial_v = true;
        if (c1 != c0 && (c == c0 || c == c1) && std::abs(dx - gw_) > 1e-5) partial_h = true;
        f.v_blockage = dx * s_.v_macro_alloc;
        f.h_blockage = dy * s_.h_macro_alloc;
      }
      out->push_back(f);
    }
  }
  // The partial rule takes the share back in the top row / right-most column.
  if (partial_v) {
    for (int c = c0; c <= c1; ++c) {
      FootprintCell& f = (*out)[static_cast<size_t>(r1 - r0) * ncols + (c - c0)];
      f.v_blockage = 0.0;
    }
  }
  if (partial_h) {
    for (int r = r0; r <= r1; ++r) {
      FootprintCell& f = (*out)[static_cast<size_t>(r - r0) * ncols + (c1 - c0)];
      f.h_blockage = 0.0;
    }
  }
}

void ProxyCost::CopyPlacementTo(Netlist* nl) const {
  nl->x = x_;
  nl->y = y_;
  nl->orientation = orient_;
}

OffCanvasNets ParseOffCanvasNets(const std::string& s, const std::string& what) {
  if (s == "clamp") return OffCanvasNets::kClamp;
  if (s == "skip") return OffCanvasNets::kSkip;
  throw ConfigError(what + " must be clamp or skip (got '" + s + "')");
}

const char* OffCanvasNetsName(OffCanvasNets rule) { return rule == OffCanvasNets::kSkip ? "skip" : "clamp"; }

CostWeights ParseCostWeights(const std::string& s, const std::string& what) {
  const auto parts = SplitCommaList(s);
  if (parts.size() != 3 || s.back() == ',')
    throw ConfigError(what + " wants three numbers: wirelength,density,congestion (got '" + s + "')");
  double v[3];
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    v[i] = std::strtod(parts[i].c_str(), &end);
    if (end != parts[i].c_str() + parts[i].size() || !std::isfinite(v[i]) || v[i] < 0 || v[i] > 1e6)
      throw ConfigError(what + ": '" + parts[i] + "' is not a number in [0, 1e6]");
  }
  CostWeights w;
  w.wirelength = v[0];
  w.density = v[1];
  w.congestion = v[2];
  return w;
}

CostBreakdown EvaluateProxyCost(const Netlist& nl, const PlacementSettings& settings, CostWeights weights) {
  ProxyCost pc(nl, settings, weights);
  return pc.Cost();
}

}  // namespace placerl::chip
