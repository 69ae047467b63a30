// Shared by the fuzz targets: runs the proxy cost on a netlist that a reader accepted,
// after "poisoning" some positions with NaN/inf/huge values and applying a few moves, all
// chosen by control bytes of the fuzz input. Contract checked: ResolveDefaults + ProxyCost
// either throw placerl::Error or return costs that are finite or inf (never NaN), without
// crashing. Any other exception escapes and libFuzzer reports it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"

namespace placerl::fuzz {

// Reads control bytes one at a time; 0 once they run out.
struct Control {
  const uint8_t* p;
  size_t n;
  uint8_t Byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
};

inline double Value(uint8_t b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static const double kValues[16] = {
      std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 1e308, -1e308, 5e-324, -0.0, 0.0,
      1.0, 10.0, 100.0, 1e6, -50.0, 33.3, 1e15, -1e15};
  return kValues[b & 15];
}

inline void CheckCost(const chip::CostBreakdown& c, const char* where) {
  const double v[5] = {c.hpwl, c.wirelength_cost, c.density_cost, c.congestion_cost, c.proxy_cost};
  for (double x : v) {
    if (std::isnan(x)) {
      std::fprintf(stderr, "proxy cost (%s): NaN in {hpwl %g, wl %g, density %g, congestion %g, proxy %g}\n",
                   where, v[0], v[1], v[2], v[3], v[4]);
      std::abort();
    }
  }
}

// `settings` as a reader gave them (ResolveDefaults fills the rest).
inline void FuzzProxyCost(const chip::Netlist& parsed, const chip::PlacementSettings& settings,
                          Control ctl) {
  chip::Netlist nl = parsed;
  const int32_t n = nl.num_nodes();
  if (n == 0) return;
  // Poison up to 7 positions (also of pins: their x/y is informational only).
  const int poisons = ctl.Byte() & 7;
  for (int i = 0; i < poisons; ++i) {
    const int32_t node = ctl.Byte() % n;
    const uint8_t b = ctl.Byte();
    ((b & 16) ? nl.y : nl.x)[node] = Value(b);
  }
  try {
    const chip::PlacementSettings s = chip::ResolveDefaults(settings, nl);
    chip::ProxyCost pc(nl, s);
    CheckCost(pc.Cost(), "initial");
    // Up to 16 incremental operations, then a full re-evaluation.
    for (int op = 0; op < 16 && ctl.n >= 3; ++op) {
      const uint8_t kind = ctl.Byte();
      const int32_t a = ctl.Byte() % n;
      const uint8_t b = ctl.Byte();
      try {
        switch (kind % 3) {
          case 0: pc.MoveNode(a, Value(b), Value(b >> 4)); break;
          case 1: pc.SetOrientation(a, static_cast<chip::Orientation>(b & 7)); break;
          case 2: {
            const int32_t c = b % n;
            if (nl.parent[a] < 0 && nl.parent[c] < 0) pc.SwapNodes(a, c);
            break;
          }
        }
      } catch (const InfeasibleAction&) {
        // a pin, a non-macro or a non-finite target: refused, state unchanged
      }
      CheckCost(pc.Cost(), "incremental");
    }
    CheckCost(pc.EvaluateFull(), "full");
  } catch (const Error&) {
    // ConfigError (no area, bad grid): allowed by the contract
  }
}

}  // namespace placerl::fuzz
