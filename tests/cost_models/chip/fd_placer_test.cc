// Force-directed soft-macro placement against golden positions from TILOS MacroPlacement's
// C++ FD placer (CodeElements/FDPlacement, run outside this repository, see
// tests/data/fd_golden/README.md), plus invariants: fixed nodes never move, soft macros
// stay inside the canvas, the proxy-cost path equals the array path, bad options rejected.
#include "cost_models/chip/fd_placer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

const char* kSimpleNetlist = "../shared/datasets/chip/tilos_unit/fd_simple/simple.pb.txt";
const char* kSimplePlc = "../shared/datasets/chip/tilos_unit/fd_simple/simple.plc";
const char* kMixedNetlist = "tests/data/fd_golden/small_mixed/netlist.pb.txt";
const char* kMixedPlc = "tests/data/fd_golden/small_mixed/initial.plc";

struct Loaded {
  Netlist nl;
  PlacementSettings s;
};

Loaded Load(const char* netlist, const char* plc_path) {
  Loaded l;
  l.nl = ReadNetlist(netlist);
  PlcFile plc = ReadPlc(plc_path);
  ApplyPlc(plc, &l.nl, plc_path);
  l.s = ResolveDefaults(plc.settings, l.nl);
  return l;
}

struct Expected {
  const char* name;
  double x, y;
};

// Goldens are TILOS's FD run in float64 (their float32 build gives the same numbers on the
// simple example but drifts by up to ~10 µm on the mixed one: the max-normalised moves
// amplify float32 rounding; see tests/data/fd_golden/README.md). Printed with 6 decimals.
constexpr double kTol = 2e-6;

void RunAndCompare(const Loaded& l, const ForceDirectedOptions& opt,
                   const std::vector<Expected>& want) {
  std::vector<double> x = l.nl.x, y = l.nl.y;
  ForceDirectedPlacer fd(l.nl, l.s, opt);
  fd.Run(l.nl.orientation.data(), x.data(), y.data());
  for (const Expected& e : want) {
    const int32_t i = l.nl.index_of.at(e.name);
    EXPECT_NEAR(x[i], e.x, kTol) << e.name;
    EXPECT_NEAR(y[i], e.y, kTol) << e.name;
  }
  // Everything that is not a soft macro stays where it was.
  for (int32_t i = 0; i < l.nl.num_nodes(); ++i) {
    if (l.nl.type[i] == NodeType::kSoftMacro) continue;
    EXPECT_EQ(x[i], l.nl.x[i]) << l.nl.name[i];
    EXPECT_EQ(y[i], l.nl.y[i]) << l.nl.name[i];
  }
}

// TILOS's C++ FD puts every macro pin at its macro's centre; reproduce that for the
// comparisons (see ForceDirectedOptions::pins_at_macro_centres).
ForceDirectedOptions CtSchedule(double io_factor = 1.0) {
  ForceDirectedOptions o;  // the defaults are CT's episode-end schedule
  o.io_factor = io_factor;
  o.pins_at_macro_centres = true;
  return o;
}

TEST(ForceDirected, DefaultsAreCircuitTrainingsSchedule) {
  const ForceDirectedOptions o;
  EXPECT_EQ(o.num_steps, (std::vector<int>{100, 100, 100}));
  EXPECT_EQ(o.move_distance_factors, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(o.attract_factor, (std::vector<double>{100, 1e-3, 1e-5}));
  EXPECT_EQ(o.repel_factor, (std::vector<double>{0, 1e6, 1e7}));
  EXPECT_EQ(o.io_factor, 1.0);
  EXPECT_FALSE(o.use_current_loc);
}

// TILOS's FD example (one hard macro, three unconnected 50×50 clusters): phase 1 has no
// force (no nets), phases 2–3 spread the clusters from the canvas centre.
TEST(ForceDirected, TilosSimpleExampleCtSchedule) {
  RunAndCompare(Load(kSimpleNetlist, kSimplePlc), CtSchedule(),
                {{"Grp_1", 252.612039, 252.612039},
                 {"Grp_2", 306.306019, 306.306019},
                 {"Grp_3", 360.000000, 360.000000}});
}

// The configuration of TILOS FD.py's own `simple` run (one repulsion step from the netlist
// positions); the result is also TILOS's published simple.plc.final.
TEST(ForceDirected, TilosSimpleExampleOwnConfiguration) {
  ForceDirectedOptions o;
  o.io_factor = 0;
  o.num_steps = {1};
  o.attract_factor = {0};
  o.repel_factor = {10};
  o.move_distance_factors = {0.1};
  o.use_current_loc = true;
  RunAndCompare(Load(kSimpleNetlist, kSimplePlc), o,
                {{"Grp_1", 300, 300}, {"Grp_2", 285, 285}, {"Grp_3", 400, 400}});
}

// A hand-made netlist with ports, two hard macros (one in orientation S) with pins, six soft
// macros and weighted multi-pin nets.
TEST(ForceDirected, SmallMixedNetlistCtSchedule) {
  RunAndCompare(Load(kMixedNetlist, kMixedPlc), CtSchedule(),
                {{"Grp_0", 158.425449, 156.162086},
                 {"Grp_1", 172.212254, 125.981831},
                 {"Grp_2", 166.151152, 193.130499},
                 {"Grp_3", 201.928138, 216.908410},
                 {"Grp_4", 287.176114, 145.587595},
                 {"Grp_5", 246.848441, 113.957727}});
}

TEST(ForceDirected, SmallMixedNetlistAttractionOnly) {
  ForceDirectedOptions o;
  o.pins_at_macro_centres = true;
  o.num_steps = {50};
  o.attract_factor = {100};
  o.repel_factor = {0};
  o.move_distance_factors = {1};
  RunAndCompare(Load(kMixedNetlist, kMixedPlc), o,
                {{"Grp_0", 127.970586, 159.462223},
                 {"Grp_1", 163.199679, 137.442388},
                 {"Grp_2", 147.515203, 168.065381},
                 {"Grp_3", 188.522923, 206.505124},
                 {"Grp_4", 287.508175, 145.489949},
                 {"Grp_5", 246.805476, 113.970361}});
}

TEST(ForceDirected, SmallMixedNetlistIoFactor2) {
  RunAndCompare(Load(kMixedNetlist, kMixedPlc), CtSchedule(2.0),
                {{"Grp_0", 67.548454, 197.931967},
                 {"Grp_1", 151.524416, 143.393055},
                 {"Grp_2", 143.007884, 201.299103},
                 {"Grp_3", 185.328910, 236.904141},
                 {"Grp_4", 306.502073, 169.123223},
                 {"Grp_5", 251.564239, 119.838738}});
}

// Through the proxy cost: same positions as the array path, the incremental cost equals a
// full evaluation, and on Ariane133 every soft macro ends inside the canvas.
TEST(ForceDirected, ProxyCostPathMatchesArrayPathOnAriane133) {
  Loaded l = Load("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
                  "../shared/datasets/chip/ariane133_ng45/initial.plc");
  ASSERT_GT(l.nl.soft_macros.size(), 700u);
  ProxyCost pc(l.nl, l.s);
  const double before = pc.Cost().proxy_cost;
  ForceDirectedPlacer fd(l.nl, l.s);
  fd.Run(&pc);
  std::vector<double> x = l.nl.x, y = l.nl.y;
  fd.Run(l.nl.orientation.data(), x.data(), y.data());
  for (int32_t m : l.nl.soft_macros) {
    EXPECT_EQ(pc.x(m), x[m]);
    EXPECT_EQ(pc.y(m), y[m]);
    const double half = 0.5 * std::sqrt(l.nl.width[m] * l.nl.height[m]);  // squared clusters
    EXPECT_GE(x[m] - half, 0.0);
    EXPECT_LE(x[m] + half, l.s.canvas_width);
    EXPECT_GE(y[m] - half, 0.0);
    EXPECT_LE(y[m] + half, l.s.canvas_height);
  }
  for (int32_t m : l.nl.hard_macros) {
    EXPECT_EQ(pc.x(m), l.nl.x[m]);
    EXPECT_EQ(pc.y(m), l.nl.y[m]);
  }
  const CostBreakdown inc = pc.Cost();
  const CostBreakdown full = pc.EvaluateFull();
  EXPECT_NEAR(inc.proxy_cost, full.proxy_cost, 1e-9);
  EXPECT_TRUE(std::isfinite(inc.proxy_cost));
  EXPECT_NE(inc.proxy_cost, before);  // the soft macros really moved
  // Deterministic: a second run from the same hard-macro placement gives the same result.
  ForceDirectedPlacer fd2(l.nl, l.s);
  std::vector<double> x2 = l.nl.x, y2 = l.nl.y;
  fd2.Run(l.nl.orientation.data(), x2.data(), y2.data());
  EXPECT_EQ(x, x2);
  EXPECT_EQ(y, y2);
}

// ---- naive reference: the model written out directly (every star edge, every pair) ----
void NaiveForceDirected(const Netlist& nl, const PlacementSettings& s, const ForceDirectedOptions& o,
                        std::vector<double>* xs, std::vector<double>* ys) {
  std::vector<double>& x = *xs;
  std::vector<double>& y = *ys;
  const double W = s.canvas_width, H = s.canvas_height;
  const auto footprint = [&](int32_t m, double* w, double* h) {
    *w = nl.width[m];
    *h = nl.height[m];
    if (nl.type[m] == NodeType::kSoftMacro && o.square_soft_macros) *w = *h = std::sqrt(*w * *h);
  };
  const auto pin_xy = [&](int32_t p, double* px, double* py) {
    PinPosition(nl, x.data(), y.data(), nl.orientation.data(), p, px, py);
  };
  if (!o.use_current_loc)
    for (int32_t m : nl.soft_macros) {
      x[m] = W / 2;
      y[m] = H / 2;
    }
  std::vector<int32_t> macros = nl.macros;  // ascending node index
  std::vector<double> fx(nl.num_nodes()), fy(nl.num_nodes());
  for (size_t ph = 0; ph < o.num_steps.size(); ++ph) {
    const double a = o.attract_factor[ph], r = o.repel_factor[ph];
    if ((a == 0 && r == 0) || o.num_steps[ph] == 0) continue;
    const double md = o.move_distance_factors[ph] * std::max(W, H) / o.num_steps[ph];
    for (int it = 0; it < o.num_steps[ph]; ++it) {
      std::fill(fx.begin(), fx.end(), 0.0);
      std::fill(fy.begin(), fy.end(), 0.0);
      if (r == 0 || a / r > 1e-4) {
        for (int32_t n = 0; n < nl.num_nets(); ++n) {
          const int32_t d = nl.net_pins[nl.net_start[n]];
          for (int32_t q = nl.net_start[n] + 1; q < nl.net_start[n + 1]; ++q) {
            const int32_t t = nl.net_pins[q];
            double dx, dy, tx, ty;
            pin_xy(d, &dx, &dy);
            pin_xy(t, &tx, &ty);
            const bool io = nl.type[d] == NodeType::kPort || nl.type[t] == NodeType::kPort;
            const double k = nl.net_weight[n] * a * (io ? o.io_factor : 1.0);
            if (nl.type[d] == NodeType::kSoftMacroPin) {
              fx[nl.parent[d]] += k * (tx - dx);
              fy[nl.parent[d]] += k * (ty - dy);
            }
            if (nl.type[t] == NodeType::kSoftMacroPin) {
              fx[nl.parent[t]] -= k * (tx - dx);
              fy[nl.parent[t]] -= k * (ty - dy);
            }
          }
        }
      }
      if (a == 0 || r / a > 1e-4) {
        for (size_t i = 0; i < macros.size(); ++i)
          for (size_t j = i + 1; j < macros.size(); ++j) {
            const int32_t u = macros[i], v = macros[j];
            double wu, hu, wv, hv;
            footprint(u, &wu, &hu);
            footprint(v, &wv, &hv);
            if (std::abs(x[v] - x[u]) > (wu + wv) / 2 - o.overlap_margin) continue;
            if (std::abs(y[v] - y[u]) > (hu + hv) / 2 - o.overlap_margin) continue;
            double ux = -1, uy = -1;
            if (x[u] != x[v] || y[u] != y[v]) {
              const double dist = std::hypot(x[u] - x[v], y[u] - y[v]);
              ux = (x[u] - x[v]) / dist;
              uy = (y[u] - y[v]) / dist;
            }
            fx[u] += r * md * ux;
            fy[u] += r * md * uy;
            fx[v] -= r * md * ux;
            fy[v] -= r * md * uy;
          }
      }
      double mx = 0, my = 0;
      for (int32_t m : nl.soft_macros) {
        mx = std::max(mx, std::abs(fx[m]));
        my = std::max(my, std::abs(fy[m]));
      }
      for (int32_t m : nl.soft_macros) {
        const double nx = x[m] + (mx > 0 ? fx[m] / mx * md : 0.0);
        const double ny = y[m] + (my > 0 ? fy[m] / my * md : 0.0);
        double w, h;
        footprint(m, &w, &h);
        if (nx - w / 2 >= 0 && ny - h / 2 >= 0 && nx + w / 2 <= W && ny + h / 2 <= H) {
          x[m] = nx;
          y[m] = ny;
        }
      }
    }
  }
}

// The fast path (Laplacian attraction, strip-sorted and binned repulsion) against the naive
// reference on Ariane133 (782 clusters, 133 hard macros, real pin offsets). A short
// schedule: the max-normalised moves amplify summation-order rounding over long runs.
TEST(ForceDirected, MatchesNaiveReferenceOnAriane133) {
  const Loaded l = Load("../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz",
                        "../shared/datasets/chip/ariane133_ng45/initial.plc");
  struct Run {
    std::vector<int> steps;
    bool use_current_loc;
  };
  // Attraction then repulsion from the centre; repulsion (the last phase) from initial.plc.
  for (const Run& run : {Run{{12, 3, 0}, false}, Run{{0, 0, 4}, true}}) {
    for (const bool square : {true, false}) {
      ForceDirectedOptions o;
      o.num_steps = run.steps;
      o.use_current_loc = run.use_current_loc;
      o.square_soft_macros = square;
      std::vector<double> fx = l.nl.x, fy = l.nl.y, nx = l.nl.x, ny = l.nl.y;
      ForceDirectedPlacer fd(l.nl, l.s, o);
      fd.Run(l.nl.orientation.data(), fx.data(), fy.data());
      NaiveForceDirected(l.nl, l.s, o, &nx, &ny);
      int moved = 0;
      for (int32_t m : l.nl.soft_macros) {
        ASSERT_NEAR(fx[m], nx[m], 1e-6) << l.nl.name[m] << " square " << square;
        ASSERT_NEAR(fy[m], ny[m], 1e-6) << l.nl.name[m] << " square " << square;
        moved += fx[m] != l.nl.x[m] || fy[m] != l.nl.y[m];
      }
      EXPECT_GT(moved, 300) << "square " << square;
    }
  }
}

TEST(ForceDirected, RejectsInconsistentOptions) {
  const Loaded l = Load(kSimpleNetlist, kSimplePlc);
  ForceDirectedOptions o;
  o.repel_factor = {0, 1};
  EXPECT_THROW(ForceDirectedPlacer(l.nl, l.s, o), ConfigError);
  o = {};
  o.attract_factor[1] = -1;
  EXPECT_THROW(ForceDirectedPlacer(l.nl, l.s, o), ConfigError);
  o = {};
  o.num_steps[0] = -3;
  EXPECT_THROW(ForceDirectedPlacer(l.nl, l.s, o), ConfigError);
  o = {};
  o.io_factor = std::nan("");
  EXPECT_THROW(ForceDirectedPlacer(l.nl, l.s, o), ConfigError);
  EXPECT_THROW(ForceDirectedPlacer(l.nl, PlacementSettings{}, ForceDirectedOptions{}), ConfigError);
}

}  // namespace
}  // namespace placerl::chip
