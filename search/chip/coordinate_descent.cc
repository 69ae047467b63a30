// Coordinate descent post-processor (see coordinate_descent.h).
#include "search/chip/coordinate_descent.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "cost_models/chip/grid_mask.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

constexpr Orientation kNorthFamily[] = {Orientation::kN, Orientation::kFN, Orientation::kS,
                                        Orientation::kFS};
constexpr Orientation kEastFamily[] = {Orientation::kE, Orientation::kFE, Orientation::kW,
                                       Orientation::kFW};

bool EastFamily(Orientation o) {
  return o == Orientation::kE || o == Orientation::kFE || o == Orientation::kW ||
         o == Orientation::kFW;
}

class CoordinateDescent {
 public:
  CoordinateDescent(ProxyCost* pc, const CoordinateDescentOptions& opt)
      : pc_(*pc),
        nl_(pc->netlist()),
        opt_(opt),
        mask_(nl_, pc->settings()),
        rng_(opt.seed) {
    if (opt_.epochs < 0) throw ConfigError("coordinate descent: epochs < 0");
    if (!(opt_.cell_search_prob >= 0 && opt_.cell_search_prob <= 1))
      throw ConfigError("coordinate descent: cell_search_prob must be in [0, 1]");
    if (!(opt_.min_relative_improvement >= 0))
      throw ConfigError("coordinate descent: min_relative_improvement must be ≥ 0");
    if (opt_.fd_every_n_macros < 0) throw ConfigError("coordinate descent: fd_every_n_macros < 0");
    for (int32_t m : nl_.hard_macros) {
      mask_.Place(m, pc_.x(m), pc_.y(m), pc_.orientation(m));
      if (!nl_.fixed[m]) order_.push_back(m);
    }
    if (!opt_.random_order) {
      std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
        return nl_.width[a] * nl_.height[a] > nl_.width[b] * nl_.height[b];
      });
    }
    cells_.resize(static_cast<size_t>(mask_.cols()) * mask_.rows());
    if (opt_.fd_soft_macros && !nl_.soft_macros.empty())
      fd_ = std::make_unique<ForceDirectedPlacer>(nl_, pc_.settings(), opt_.fd);
    soft_x_.resize(nl_.soft_macros.size());
    soft_y_.resize(nl_.soft_macros.size());
  }

  CoordinateDescentResult Run() {
    CoordinateDescentResult res;
    double cost = pc_.Cost().proxy_cost;
    res.cost_history.push_back(cost);
    if (opt_.epochs == 0) return res;
    PlaceSoftMacros(&res);
    for (int e = 0; e < opt_.epochs; ++e) {
      if (opt_.random_order) std::shuffle(order_.begin(), order_.end(), rng_);
      for (size_t i = 0; i < order_.size() && !res.stopped; ++i) {
        ImproveMacro(order_[i], &res);
        if (opt_.fd_every_n_macros > 0 && (i + 1) % opt_.fd_every_n_macros == 0) PlaceSoftMacros(&res);
        if (opt_.stop && opt_.stop()) res.stopped = true;
      }
      PlaceSoftMacros(&res);
      const double now = pc_.Cost().proxy_cost;
      res.cost_history.push_back(now);
      ++res.epochs_run;
      if (res.stopped) break;
      const bool small = cost > 0 && (cost - now) / cost < opt_.min_relative_improvement;
      cost = now;
      if (small) break;
    }
    return res;
  }

 private:
  double Cost() { return pc_.Cost().proxy_cost; }

  // FD of the soft macros from where they are; undone if the cost rises.
  void PlaceSoftMacros(CoordinateDescentResult* res) {
    if (!fd_) return;
    const double before = Cost();
    for (size_t k = 0; k < nl_.soft_macros.size(); ++k) {
      soft_x_[k] = pc_.x(nl_.soft_macros[k]);
      soft_y_[k] = pc_.y(nl_.soft_macros[k]);
    }
    fd_->Run(&pc_);
    if (Cost() <= before) {
      ++res->fd_accepted;
      return;
    }
    ++res->fd_rejected;
    for (size_t k = 0; k < nl_.soft_macros.size(); ++k) {
      const int32_t m = nl_.soft_macros[k];
      if (pc_.x(m) != soft_x_[k] || pc_.y(m) != soft_y_[k]) pc_.MoveNode(m, soft_x_[k], soft_y_[k]);
    }
  }

  void ImproveMacro(int32_t m, CoordinateDescentResult* res) {
    const double x0 = pc_.x(m), y0 = pc_.y(m);
    const Orientation o0 = pc_.orientation(m);
    const Orientation* family = EastFamily(o0) ? kEastFamily : kNorthFamily;
    Orientation orients[4];
    int num_orients = 0;
    if (opt_.search_orientations) {
      for (int i = 0; i < 4; ++i) orients[num_orients++] = family[i];
    } else {
      orients[num_orients++] = o0;
    }
    double best = Cost();
    double bx = x0, by = y0;
    Orientation bo = o0;

    if (opt_.optimize_only_orientation) {
      for (int i = 0; i < num_orients; ++i) {
        if (orients[i] == o0) continue;
        pc_.SetOrientation(m, orients[i]);
        const double c = Cost();
        ++res->evaluations;
        if (c < best) {
          best = c;
          bo = orients[i];
        }
      }
    } else {
      // The cell holding the macro's centre and the legal cells within distance k. All
      // orientations of a family share one footprint, so one mask serves them all.
      const int cols = mask_.cols(), rows = mask_.rows();
      const int c0 = std::clamp(static_cast<int>(std::floor(x0 / mask_.cell_width())), 0, cols - 1);
      const int r0 = std::clamp(static_cast<int>(std::floor(y0 / mask_.cell_height())), 0, rows - 1);
      mask_.Compute(m, cells_.data(), o0);
      const int k = opt_.k_distance_bound > 0 ? opt_.k_distance_bound : cols + rows;
      std::uniform_real_distribution<double> u01(0.0, 1.0);
      for (int r = std::max(0, r0 - k); r <= std::min(rows - 1, r0 + k); ++r) {
        const int span = k - std::abs(r - r0);
        for (int c = std::max(0, c0 - span); c <= std::min(cols - 1, c0 + span); ++c) {
          if (!cells_[r * cols + c]) continue;
          if (opt_.cell_search_prob < 1 && !(r == r0 && c == c0) && u01(rng_) > opt_.cell_search_prob)
            continue;
          const double cx = mask_.CellCentreX(c), cy = mask_.CellCentreY(r);
          pc_.MoveNode(m, cx, cy);
          for (int i = 0; i < num_orients; ++i) {
            if (pc_.orientation(m) != orients[i]) pc_.SetOrientation(m, orients[i]);
            const double cst = Cost();
            ++res->evaluations;
            if (cst < best) {
              best = cst;
              bx = cx;
              by = cy;
              bo = orients[i];
            }
          }
        }
      }
    }
    // Leave the macro at the best candidate (or where it was).
    if (pc_.x(m) != bx || pc_.y(m) != by) pc_.MoveNode(m, bx, by);
    if (pc_.orientation(m) != bo) pc_.SetOrientation(m, bo);
    if (bx != x0 || by != y0 || bo != o0) {
      ++res->macro_moves;
      mask_.Place(m, bx, by, bo);
    }
  }

  ProxyCost& pc_;
  const Netlist& nl_;
  CoordinateDescentOptions opt_;
  GridMask mask_;
  std::mt19937_64 rng_;
  std::vector<int32_t> order_;
  std::vector<uint8_t> cells_;
  std::unique_ptr<ForceDirectedPlacer> fd_;
  std::vector<double> soft_x_, soft_y_;
};

}  // namespace

CoordinateDescentResult RunCoordinateDescent(ProxyCost* pc, const CoordinateDescentOptions& opt) {
  CoordinateDescent cd(pc, opt);
  return cd.Run();
}

}  // namespace placerl::chip
