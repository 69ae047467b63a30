// Force-directed soft-macro placement (see fd_placer.h for the model and where it comes from).
#include "cost_models/chip/fd_placer.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

bool SwapsSides(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW ||
         o == Orientation::kFW;
}

}  // namespace

ForceDirectedPlacer::ForceDirectedPlacer(const Netlist& nl, const PlacementSettings& s,
                                         ForceDirectedOptions opt)
    : nl_(nl), opt_(std::move(opt)), width_(s.canvas_width), height_(s.canvas_height) {
  if (!s.has_canvas()) throw ConfigError("force-directed placement: the canvas must be given");
  const size_t phases = opt_.num_steps.size();
  if (opt_.move_distance_factors.size() != phases || opt_.attract_factor.size() != phases ||
      opt_.repel_factor.size() != phases)
    throw ConfigError("force-directed placement: num_steps, move_distance_factors, "
                      "attract_factor and repel_factor must have the same length");
  for (size_t i = 0; i < phases; ++i) {
    if (opt_.num_steps[i] < 0) throw ConfigError("force-directed placement: num_steps < 0");
    if (!(opt_.attract_factor[i] >= 0) || !(opt_.repel_factor[i] >= 0) ||
        !(opt_.move_distance_factors[i] >= 0) || !std::isfinite(opt_.attract_factor[i]) ||
        !std::isfinite(opt_.repel_factor[i]) || !std::isfinite(opt_.move_distance_factors[i]))
      throw ConfigError("force-directed placement: factors must be finite and ≥ 0");
  }
  if (!(opt_.bin_size_factor >= 1) || !std::isfinite(opt_.bin_size_factor))
    throw ConfigError("force-directed placement: bin_size_factor must be finite and ≥ 1");
  if (!(opt_.overlap_margin >= 0) || !std::isfinite(opt_.overlap_margin))
    throw ConfigError("force-directed placement: overlap_margin must be finite and ≥ 0");
  if (!(opt_.io_factor >= 0) || !std::isfinite(opt_.io_factor))
    throw ConfigError("force-directed placement: io_factor must be finite and ≥ 0");

  // Slots: soft macros first (they move), then hard macros (obstacles for repulsion).
  num_soft_ = static_cast<int>(nl.soft_macros.size());
  num_macros_ = num_soft_ + static_cast<int>(nl.hard_macros.size());
  slot_node_.reserve(num_macros_);
  slot_node_.insert(slot_node_.end(), nl.soft_macros.begin(), nl.soft_macros.end());
  slot_node_.insert(slot_node_.end(), nl.hard_macros.begin(), nl.hard_macros.end());
  std::vector<int32_t> soft_slot(nl.num_nodes(), -1);
  for (int k = 0; k < num_soft_; ++k) soft_slot[slot_node_[k]] = k;

  // Star edges → Laplacian couplings between soft macros + edges to fixed pins.
  static_cx_.assign(num_soft_, 0.0);
  static_cy_.assign(num_soft_, 0.0);
  std::vector<std::tuple<int32_t, int32_t, double>> couplings, fixed_edges;
  struct End {
    int32_t soft;  // soft slot or -1 (fixed)
    double ox, oy; // offset from the soft macro's centre
  };
  const auto end_of = [&](int32_t pin) {
    End e{-1, 0, 0};
    const int32_t m = nl.parent[pin];
    if (m >= 0 && soft_slot[m] >= 0) {
      e.soft = soft_slot[m];
      if (!opt_.pins_at_macro_centres)
        OrientOffset(nl.orientation[m], nl.pin_dx[pin], nl.pin_dy[pin], &e.ox, &e.oy);
    }
    return e;
  };
  for (int32_t n = 0; n < nl.num_nets(); ++n) {
    const int32_t b = nl.net_start[n], e = nl.net_start[n + 1];
    const int32_t drv = nl.net_pins[b];
    const End d = end_of(drv);
    for (int32_t q = b + 1; q < e; ++q) {
      const int32_t snk = nl.net_pins[q];
      const End t = end_of(snk);
      if (d.soft < 0 && t.soft < 0) continue;  // both ends fixed: no force on anything movable
      if (d.soft >= 0 && d.soft == t.soft) continue;  // +f and −f on one macro cancel
      const bool io = nl.type[drv] == NodeType::kPort || nl.type[snk] == NodeType::kPort;
      const double k = nl.net_weight[n] * (io ? opt_.io_factor : 1.0);
      if (k == 0) continue;
      if (d.soft >= 0 && t.soft >= 0) {
        couplings.emplace_back(d.soft, t.soft, k);
        couplings.emplace_back(t.soft, d.soft, k);
        static_cx_[d.soft] += k * (t.ox - d.ox);
        static_cy_[d.soft] += k * (t.oy - d.oy);
        static_cx_[t.soft] += k * (d.ox - t.ox);
        static_cy_[t.soft] += k * (d.oy - t.oy);
      } else {
        const End& mv = d.soft >= 0 ? d : t;
        const int32_t fixed_pin = d.soft >= 0 ? snk : drv;
        static_cx_[mv.soft] -= k * mv.ox;
        static_cy_[mv.soft] -= k * mv.oy;
        fixed_edges.emplace_back(mv.soft, fixed_pin, k);
      }
    }
  }
  std::sort(couplings.begin(), couplings.end());
  lap_start_.assign(num_soft_ + 1, 0);
  for (size_t i = 0; i < couplings.size();) {
    const auto [a, c, k0] = couplings[i];
    double k = 0;
    while (i < couplings.size() && std::get<0>(couplings[i]) == a && std::get<1>(couplings[i]) == c)
      k += std::get<2>(couplings[i++]);
    lap_col_.push_back(c);
    lap_val_.push_back(k);
    ++lap_start_[a + 1];
  }
  for (int a = 0; a < num_soft_; ++a) lap_start_[a + 1] += lap_start_[a];
  std::stable_sort(fixed_edges.begin(), fixed_edges.end(),
                   [](const auto& u, const auto& v) { return std::get<0>(u) < std::get<0>(v); });
  fixed_start_.assign(num_soft_ + 1, 0);
  for (const auto& [a, pin, k] : fixed_edges) {
    ++fixed_start_[a + 1];
    fixed_pin_.push_back(pin);
    fixed_k_.push_back(k);
  }
  for (int a = 0; a < num_soft_; ++a) fixed_start_[a + 1] += fixed_start_[a];
  fixed_x_.resize(fixed_k_.size());
  fixed_y_.resize(fixed_k_.size());

  px_.resize(num_macros_);
  py_.resize(num_macros_);
  w_.resize(num_macros_);
  h_.resize(num_macros_);
  fx_.resize(num_soft_);
  fy_.resize(num_soft_);
  slot_bx0_.resize(num_macros_);
  slot_bx1_.resize(num_macros_);
  slot_by0_.resize(num_macros_);
  slot_by1_.resize(num_macros_);

  // Bins at least as large as the largest soft macro, so that two overlapping soft macros
  // have their centres in the same or adjacent bins.
  double side = 0;
  for (int k = 0; k < num_soft_; ++k) {
    const double w = nl.width[slot_node_[k]], h = nl.height[slot_node_[k]];
    side = std::max(side, opt_.square_soft_macros ? std::sqrt(w * h) : std::max(w, h));
  }
  if (!(side > 0)) side = std::max(width_, height_);
  const double bin = opt_.bin_size_factor * side;
  nbx_ = std::clamp(static_cast<int>(width_ / bin), 1, 256);
  nby_ = std::clamp(static_cast<int>(height_ / bin), 1, 256);
  bin_w_ = width_ / nbx_;
  bin_h_ = height_ / nby_;
  inv_bin_w_ = 1.0 / bin_w_;
  inv_bin_h_ = 1.0 / bin_h_;
  const size_t nb = static_cast<size_t>(nbx_) * nby_;
  soft_bin_start_.resize(nb + 1);
  soft_bin_items_.resize(num_soft_);
  soft_bin_of_.resize(num_soft_);
  for (auto* v : {&sx_, &sy_, &shw_, &shh_, &sfx_, &sfy_}) v->resize(num_soft_);
  snode_.resize(num_soft_);
  hit_scratch_.resize(num_soft_ + 1);
  hard_bin_start_.resize(nb + 1);
  bin_fill_.resize(nb);
}

void ForceDirectedPlacer::Run(const Orientation* orient, double* x, double* y) {
  for (int k = 0; k < num_macros_; ++k) {
    const int32_t node = slot_node_[k];
    double w = nl_.width[node], h = nl_.height[node];
    if (k >= num_soft_ && SwapsSides(orient[node])) std::swap(w, h);
    if (k < num_soft_ && opt_.square_soft_macros) w = h = std::sqrt(w * h);
    w_[k] = w;
    h_[k] = h;
    if (k < num_soft_ && !opt_.use_current_loc) {
      px_[k] = 0.5 * width_;
      py_[k] = 0.5 * height_;
    } else {
      px_[k] = x[node];
      py_[k] = y[node];
    }
  }
  // The fixed pins where they stand now.
  for (size_t e = 0; e < fixed_k_.size(); ++e) {
    const int32_t pin = fixed_pin_[e], m = nl_.parent[pin];
    if (opt_.pins_at_macro_centres && m >= 0) {
      fixed_x_[e] = x[m];
      fixed_y_[e] = y[m];
    } else {
      PinPosition(nl_, x, y, orient, pin, &fixed_x_[e], &fixed_y_[e]);
    }
  }
  BinHardMacros();
  for (int k = 0; k < num_soft_; ++k) soft_bin_items_[k] = k;  // sort order of AddRepulsion
  const double max_size = std::max(width_, height_);
  for (size_t ph = 0; ph < opt_.num_steps.size(); ++ph) {
    const double a = opt_.attract_factor[ph], r = opt_.repel_factor[ph];
    if (a == 0 && r == 0) continue;
    if (opt_.num_steps[ph] == 0) continue;
    const double max_move = opt_.move_distance_factors[ph] * max_size / opt_.num_steps[ph];
    for (int it = 0; it < opt_.num_steps[ph]; ++it) Iterate(a, r, max_move);
  }
  for (int k = 0; k < num_soft_; ++k) {
    x[slot_node_[k]] = px_[k];
    y[slot_node_[k]] = py_[k];
  }
}

void ForceDirectedPlacer::Run(ProxyCost* pc) {
  const int32_t n = nl_.num_nodes();
  all_x_.resize(n);
  all_y_.resize(n);
  all_o_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    all_x_[i] = pc->x(i);
    all_y_[i] = pc->y(i);
    all_o_[i] = pc->orientation(i);
  }
  Run(all_o_.data(), all_x_.data(), all_y_.data());
  for (int k = 0; k < num_soft_; ++k) {
    const int32_t node = slot_node_[k];
    if (all_x_[node] != pc->x(node) || all_y_[node] != pc->y(node))
      pc->MoveNode(node, all_x_[node], all_y_[node]);
  }
}

void ForceDirectedPlacer::Iterate(double attract, double repel, double max_move) {
  std::fill(fx_.begin(), fx_.end(), 0.0);
  std::fill(fy_.begin(), fy_.end(), 0.0);
  const bool use_attraction = repel == 0 || attract / repel > 1e-4;
  const bool use_repulsion = attract == 0 || repel / attract > 1e-4;
  if (use_attraction) {
    // Σ k·(p_other − p_self) edge by edge, so that co-located ends pull with exactly zero
    // (as TILOS does): at the start every cluster sits at the canvas centre, and a rounding
    // residue there would later decide the direction of the coincident-centre repulsion.
    for (int a = 0; a < num_soft_; ++a) {
      const double xa = px_[a], ya = py_[a];
      double sx = static_cx_[a], sy = static_cy_[a];
      for (int32_t q = lap_start_[a]; q < lap_start_[a + 1]; ++q) {
        sx += lap_val_[q] * (px_[lap_col_[q]] - xa);
        sy += lap_val_[q] * (py_[lap_col_[q]] - ya);
      }
      for (int32_t e = fixed_start_[a]; e < fixed_start_[a + 1]; ++e) {
        sx += fixed_k_[e] * (fixed_x_[e] - xa);
        sy += fixed_k_[e] * (fixed_y_[e] - ya);
      }
      fx_[a] = attract * sx;
      fy_[a] = attract * sy;
    }
  }
  if (use_repulsion) AddRepulsion(repel * max_move);

  double max_fx = 0, max_fy = 0;
  for (int a = 0; a < num_soft_; ++a) {
    max_fx = std::max(max_fx, std::abs(fx_[a]));
    max_fy = std::max(max_fy, std::abs(fy_[a]));
  }
  const double sx = max_fx > 0 ? max_move / max_fx : 0.0;
  const double sy = max_fy > 0 ? max_move / max_fy : 0.0;
  for (int a = 0; a < num_soft_; ++a) {
    const double nx = px_[a] + fx_[a] * sx, ny = py_[a] + fy_[a] * sy;
    const double hw = 0.5 * w_[a], hh = 0.5 * h_[a];
    if (nx - hw >= 0 && ny - hh >= 0 && nx + hw <= width_ && ny + hh <= height_) {
      px_[a] = nx;
      py_[a] = ny;
    }
  }
}

int ForceDirectedPlacer::BinX(double v) const {
  const double b = std::floor(v * inv_bin_w_);
  return b < 0 ? 0 : b >= nbx_ ? nbx_ - 1 : static_cast<int>(b);  // positions are finite
}

int ForceDirectedPlacer::BinY(double v) const {
  const double b = std::floor(v * inv_bin_h_);
  return b < 0 ? 0 : b >= nby_ ? nby_ - 1 : static_cast<int>(b);
}

void ForceDirectedPlacer::BinHardMacros() {
  std::fill(hard_bin_start_.begin(), hard_bin_start_.end(), 0);
  for (int k = num_soft_; k < num_macros_; ++k) {
    const double hw = 0.5 * w_[k], hh = 0.5 * h_[k];
    slot_bx0_[k] = BinX(px_[k] - hw);
    slot_bx1_[k] = BinX(px_[k] + hw);
    slot_by0_[k] = BinY(py_[k] - hh);
    slot_by1_[k] = BinY(py_[k] + hh);
    for (int by = slot_by0_[k]; by <= slot_by1_[k]; ++by)
      for (int bx = slot_bx0_[k]; bx <= slot_bx1_[k]; ++bx) ++hard_bin_start_[by * nbx_ + bx + 1];
  }
  const int nb = nbx_ * nby_;
  for (int b = 0; b < nb; ++b) hard_bin_start_[b + 1] += hard_bin_start_[b];
  hard_bin_items_.resize(hard_bin_start_[nb]);
  std::copy(hard_bin_start_.begin(), hard_bin_start_.end() - 1, bin_fill_.begin());
  for (int k = num_soft_; k < num_macros_; ++k)
    for (int by = slot_by0_[k]; by <= slot_by1_[k]; ++by)
      for (int bx = slot_bx0_[k]; bx <= slot_bx1_[k]; ++bx)
        hard_bin_items_[bin_fill_[by * nbx_ + bx]++] = k;
}

// TILOS's pair force: overlap on both axes (with the margin) pushes the two apart along the
// line of centres; the lower node index is the reference of the direction.
inline void ForceDirectedPlacer::RepelPair(int32_t a, int32_t b, double scale) {
  int32_t lo = a, hi = b;
  if (slot_node_[lo] > slot_node_[hi]) std::swap(lo, hi);
  const double dx = px_[lo] - px_[hi], dy = py_[lo] - py_[hi];
  const double margin = opt_.overlap_margin;
  if (std::abs(dx) > 0.5 * (w_[lo] + w_[hi]) - margin) return;
  if (std::abs(dy) > 0.5 * (h_[lo] + h_[hi]) - margin) return;
  double ux = -1, uy = -1;  // coincident centres
  if (dx != 0 || dy != 0) {
    const double inv = 1.0 / std::sqrt(dx * dx + dy * dy);
    ux = dx * inv;
    uy = dy * inv;
  }
  if (lo < num_soft_) {
    fx_[lo] += scale * ux;
    fy_[lo] += scale * uy;
  }
  if (hi < num_soft_) {
    fx_[hi] -= scale * ux;
    fy_[hi] -= scale * uy;
  }
}

void ForceDirectedPlacer::AddRepulsion(double scale) {
  // Soft–soft: strips of the bin height (≥ the largest soft macro, so an overlapping pair
  // is in the same or adjacent strips), each sorted by x. The order of the previous
  // iteration is almost right: insertion sort on (strip, x, slot).
  const int n = num_soft_;
  for (int k = 0; k < n; ++k) soft_bin_of_[k] = BinY(py_[k]);
  int32_t* order = soft_bin_items_.data();
  const auto before = [&](int32_t a, int32_t b) {
    if (soft_bin_of_[a] != soft_bin_of_[b]) return soft_bin_of_[a] < soft_bin_of_[b];
    if (px_[a] != px_[b]) return px_[a] < px_[b];
    return a < b;
  };
  for (int p = 1; p < n; ++p) {
    const int32_t k = order[p];
    int q = p;
    for (; q > 0 && before(k, order[q - 1]); --q) order[q] = order[q - 1];
    order[q] = k;
  }
  std::fill(soft_bin_start_.begin(), soft_bin_start_.begin() + nby_ + 1, 0);
  double max_hw = 0;
  for (int p = 0; p < n; ++p) {
    const int32_t k = order[p];
    sx_[p] = px_[k];
    sy_[p] = py_[k];
    shw_[p] = 0.5 * w_[k];
    shh_[p] = 0.5 * h_[k];
    snode_[p] = slot_node_[k];
    sfx_[p] = 0;
    sfy_[p] = 0;
    max_hw = std::max(max_hw, shw_[p]);
    ++soft_bin_start_[soft_bin_of_[k] + 1];
  }
  for (int r = 0; r < nby_; ++r) soft_bin_start_[r + 1] += soft_bin_start_[r];
  const double margin = opt_.overlap_margin;
  const double* X = sx_.data();
  const double* Y = sy_.data();
  const double* HW = shw_.data();
  const double* HH = shh_.data();
  double* FX = sfx_.data();
  double* FY = sfy_.data();
  // Overlapping pair (p, q): TILOS's unit push along the line of centres; coincident
  // centres: the lower node index gets (−1, −1).
  const auto push = [&](int p, int q, double& fxp, double& fyp) {
    const double dx = X[p] - X[q], dy = Y[p] - Y[q];
    double ux, uy;
    if (dx != 0 || dy != 0) {
      const double inv = 1.0 / std::sqrt(dx * dx + dy * dy);
      ux = dx * inv;
      uy = dy * inv;
    } else {
      ux = uy = snode_[p] < snode_[q] ? -1.0 : 1.0;
    }
    fxp += ux;
    fyp += uy;
    FX[q] -= ux;
    FY[q] -= uy;
  };
  // A window of candidates [q0, q1) is tested without branches (TILOS's overlap test:
  // centre distance ≤ half-size sum − margin on both axes; the loop vectorises), then only
  // the overlapping ones are pushed.
  int32_t* hits = hit_scratch_.data();
  const auto window = [&](int p, int q0, int q1, double& fxp, double& fyp) {
    const double xp = X[p], yp = Y[p], hwp = HW[p], hhp = HH[p];
    int nh = 0;
    for (int q = q0; q < q1; ++q) {
      hits[nh] = q;
      nh += (std::abs(xp - X[q]) <= (hwp + HW[q]) - margin) &
            (std::abs(yp - Y[q]) <= (hhp + HH[q]) - margin);
    }
    for (int t = 0; t < nh; ++t) push(p, hits[t], fxp, fyp);
  };
  for (int r = 0; r < nby_; ++r) {
    const int r0 = soft_bin_start_[r], r1 = soft_bin_start_[r + 1];
    const int u1 = r + 1 < nby_ ? soft_bin_start_[r + 2] : r1;
    int u = r1;  // first item of the strip above still within reach (x ≥ X[p] − 2·max_hw)
    for (int p = r0; p < r1; ++p) {
      double fxp = 0, fyp = 0;
      const double reach = X[p] + HW[p] + max_hw;
      int e = p + 1;
      while (e < r1 && X[e] <= reach) ++e;
      window(p, p + 1, e, fxp, fyp);
      while (u < u1 && X[u] < X[p] - 2 * max_hw) ++u;
      e = u;
      while (e < u1 && X[e] <= reach) ++e;
      window(p, u, e, fxp, fyp);
      FX[p] += fxp;
      FY[p] += fyp;
    }
  }
  for (int p = 0; p < n; ++p) {
    const int32_t k = order[p];
    fx_[k] += scale * sfx_[p];
    fy_[k] += scale * sfy_[p];
  }

  // Soft–hard: the hard macros listed in the bins the soft macro covers; a pair sharing
  // several bins is handled in the bin of the lower-left corner of their intersection.
  if (num_macros_ == num_soft_) return;
  for (int k = 0; k < num_soft_; ++k) {
    const double hw = 0.5 * w_[k], hh = 0.5 * h_[k];
    const int bx0 = BinX(px_[k] - hw), bx1 = BinX(px_[k] + hw);
    const int by0 = BinY(py_[k] - hh), by1 = BinY(py_[k] + hh);
    for (int by = by0; by <= by1; ++by) {
      for (int bx = bx0; bx <= bx1; ++bx) {
        const int b = by * nbx_ + bx;
        for (int q = hard_bin_start_[b]; q < hard_bin_start_[b + 1]; ++q) {
          const int32_t h = hard_bin_items_[q];
          if (std::max(bx0, slot_bx0_[h]) != bx || std::max(by0, slot_by0_[h]) != by) continue;
          RepelPair(k, h, scale);
        }
      }
    }
  }
}

void RunForceDirected(ProxyCost* pc, const ForceDirectedOptions& opt) {
  ForceDirectedPlacer fd(pc->netlist(), pc->settings(), opt);
  fd.Run(pc);
}

}  // namespace placerl::chip
