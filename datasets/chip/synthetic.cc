// Seeded synthetic chip netlists (see synthetic.h). Deterministic across platforms: one
// splitmix64 stream, no std:: distributions, ties in sorts broken by index.
#include "datasets/chip/synthetic.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "datasets/util/errors.h"

namespace placerl::chip {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }   // [0, 1)
  double Uniform(double a, double b) { return a + (b - a) * Uniform(); }
  int Int(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }  // [0, n)

 private:
  uint64_t s_;
};

// Rounds to 1/16 µm so that the written numbers stay short.
double Q(double v) { return std::round(v * 16.0) / 16.0; }

// Net degree with P(d) ∝ d^-2.5 on [2, 16] (Rent-like: mostly 2- and 3-pin nets).
int DrawDegree(Rng& rng) {
  static const int kMax = 16;
  double total = 0, w[kMax + 1] = {0};
  for (int d = 2; d <= kMax; ++d) total += (w[d] = std::pow(d, -2.5));
  double u = rng.Uniform() * total;
  for (int d = 2; d <= kMax; ++d) {
    if ((u -= w[d]) < 0) return d;
  }
  return 2;
}

}  // namespace

namespace {

void CheckOptions(const SyntheticOptions& o) {
  if (o.num_hard_macros < 0 || o.num_soft_macros < 0 || o.num_ports < 0) {
    throw ConfigError("synthetic netlist: counts must not be negative");
  }
  if (o.num_hard_macros + o.num_soft_macros < 2) {
    throw ConfigError("synthetic netlist: needs at least two macros");
  }
  if (o.num_nets < o.num_ports + o.num_hard_macros || o.num_nets < 1) {
    throw ConfigError("synthetic netlist: num_nets must be at least num_ports + num_hard_macros");
  }
  if (!(o.utilization > 0 && o.utilization <= 1)) {
    throw ConfigError("synthetic netlist: utilization must be in (0, 1]");
  }
  if (o.cols <= 0 || o.rows <= 0) throw ConfigError("synthetic netlist: grid must be positive");
}

// The macros and ports before they become nodes: sizes, the canvas side, initial positions.
struct Things {
  int H = 0, S = 0, P = 0;  // hard macros, soft macros, ports
  std::vector<double> hw, hh, sw, sh;  // sizes
  double side = 0;                     // of the square canvas
  std::vector<double> hx, hy, sx, sy, px, py;
  std::vector<Side> pside;
};

// Sizes: hard macros of five classes, soft macros 16–32 µm; the canvas side from the area and
// the utilization.
void DrawSizes(const SyntheticOptions& o, Rng& rng, Things* t) {
  static const double kHardClasses[][2] = {{48, 32}, {64, 64}, {96, 48}, {32, 80}, {128, 96}};
  const int H = t->H, S = t->S;
  t->hw.resize(H), t->hh.resize(H), t->sw.resize(S), t->sh.resize(S);
  double area = 0;
  for (int i = 0; i < H; ++i) {
    const int c = rng.Int(5);
    t->hw[i] = kHardClasses[c][0];
    t->hh[i] = kHardClasses[c][1];
    area += t->hw[i] * t->hh[i];
  }
  for (int i = 0; i < S; ++i) {
    t->sw[i] = Q(rng.Uniform(16, 32));
    t->sh[i] = Q(rng.Uniform(16, 32));
    area += t->sw[i] * t->sh[i];
  }
  t->side = std::ceil(std::sqrt(area / o.utilization));
}

// Hard macros: shelves from the bottom-left in a random order (a poor but legal start). Returns
// the top of the shelves.
double PlaceHardMacros(Rng& rng, Things* t) {
  const int H = t->H;
  const double side = t->side;
  const std::vector<double>&hw = t->hw, &hh = t->hh;
  std::vector<int> order(H);
  for (int i = 0; i < H; ++i) order[i] = i;
  for (int i = H - 1; i > 0; --i) std::swap(order[i], order[rng.Int(i + 1)]);
  t->hx.resize(H), t->hy.resize(H);
  const double gap = 4;
  double cx = gap, cy = gap, shelf_h = 0;
  for (int i : order) {
    if (cx + hw[i] + gap > side && cx > gap) {
      cx = gap;
      cy += shelf_h + gap;
      shelf_h = 0;
    }
    t->hx[i] = std::min(cx + hw[i] / 2, side - hw[i] / 2);
    t->hy[i] = std::min(cy + hh[i] / 2, side - hh[i] / 2);
    cx += hw[i] + gap;
    shelf_h = std::max(shelf_h, hh[i]);
  }
  return H > 0 ? std::min(cy + shelf_h + gap, side * 0.8) : 0;
}

// Soft macros: a jittered grid over the free band above the shelves (from `top`).
void PlaceSoftMacros(double top, Rng& rng, Things* t) {
  const int S = t->S;
  const double side = t->side;
  t->sx.resize(S), t->sy.resize(S);
  const double band_h = side - top;
  const int gc = std::max(1, static_cast<int>(std::ceil(std::sqrt(S * side / band_h))));
  const int gr = std::max(1, (S + gc - 1) / gc);
  const double cw = side / gc, ch = band_h / gr;
  for (int i = 0; i < S; ++i) {
    const int c = i % gc, r = i / gc;
    const double jx = rng.Uniform(-0.2, 0.2) * cw, jy = rng.Uniform(-0.2, 0.2) * ch;
    t->sx[i] = std::clamp((c + 0.5) * cw + jx, t->sw[i] / 2, side - t->sw[i] / 2);
    t->sy[i] = std::clamp(top + (r + 0.5) * ch + jy, t->sh[i] / 2, side - t->sh[i] / 2);
  }
}

// Ports: evenly around the boundary (with jitter), starting on the left side.
void PlacePorts(Rng& rng, Things* t) {
  const int P = t->P;
  const double side = t->side;
  t->px.resize(P), t->py.resize(P), t->pside.resize(P);
  for (int i = 0; i < P; ++i) {
    const double u = std::fmod((i + rng.Uniform(0.1, 0.9)) / P * 4.0, 4.0);
    const int s = static_cast<int>(u);
    const double f = Q((u - s) * side);
    switch (s) {
      case 0: t->px[i] = 0; t->py[i] = f; t->pside[i] = Side::kLeft; break;
      case 1: t->px[i] = f; t->py[i] = side; t->pside[i] = Side::kTop; break;
      case 2: t->px[i] = side; t->py[i] = side - f; t->pside[i] = Side::kRight; break;
      default: t->px[i] = side - f; t->py[i] = 0; t->pside[i] = Side::kBottom; break;
    }
  }
}

// Nets over "things": 0..P-1 ports, P..P+H-1 hard macros, then soft macros; [0] drives. Their
// weights into *net_w.
std::vector<std::vector<int>> DrawNets(const SyntheticOptions& o, const Things& th, Rng& rng, std::vector<double>* net_w) {
  const int P = th.P, H = th.H, S = th.S;
  const double side = th.side;
  // Locality lives in a hidden layout: soft macros and ports where they are placed, hard
  // macros at random points (their shelf placement ignores it: room to improve).
  const int T = P + H + S;
  std::vector<double> lx(T), ly(T);
  for (int i = 0; i < P; ++i) { lx[i] = th.px[i]; ly[i] = th.py[i]; }
  for (int i = 0; i < H; ++i) { lx[P + i] = rng.Uniform(0, side); ly[P + i] = rng.Uniform(0, side); }
  for (int i = 0; i < S; ++i) { lx[P + H + i] = th.sx[i]; ly[P + H + i] = th.sy[i]; }
  auto nearest = [&](int c, int count, bool allow_ports) {
    std::vector<std::pair<double, int>> d;
    d.reserve(T);
    for (int t = 0; t < T; ++t) {
      if (t == c || (!allow_ports && t < P)) continue;
      d.emplace_back(std::hypot(lx[t] - lx[c], ly[t] - ly[c]), t);
    }
    const int k = std::min<int>(count, static_cast<int>(d.size()));
    std::partial_sort(d.begin(), d.begin() + k, d.end());
    std::vector<int> out(k);
    for (int i = 0; i < k; ++i) out[i] = d[i].second;
    return out;
  };
  std::vector<std::vector<int>> nets(o.num_nets);  // things; [0] drives
  net_w->assign(o.num_nets, 1.0);
  std::vector<uint8_t> port_drives(P, 0);
  for (int k = 0; k < o.num_nets; ++k) {
    std::vector<int>& m = nets[k];
    if (k < P) {
      // One net per port: the port and a nearby macro; inputs drive, outputs are driven.
      const int mac = nearest(k, 1 + rng.Int(3), false).back();
      if (rng.Uniform() < 0.5) {
        m = {k, mac};
        port_drives[k] = 1;
      } else {
        m = {mac, k};
      }
      continue;
    }
    const int c = k < P + H ? P + (k - P) : (rng.Uniform() < 0.8 && S > 0 ? P + H + rng.Int(S) : P + rng.Int(H > 0 ? H : S));
    const int deg = std::min(DrawDegree(rng), T);
    m.push_back(c);
    std::vector<int> pool;
    if (rng.Uniform() < o.global_net_fraction) {
      for (int t = 0; t < T; ++t) if (t != c) pool.push_back(t);
    } else {
      pool = nearest(c, std::max(3 * (deg - 1), 6), true);
    }
    for (int j = 1; j < deg && !pool.empty(); ++j) {
      const int pick = rng.Int(static_cast<int>(pool.size()));
      m.push_back(pool[pick]);
      pool.erase(pool.begin() + pick);
    }
    if (c >= P + H && rng.Uniform() < o.weighted_net_fraction) {
      int w = 2;
      while (w < 12 && rng.Uniform() < 0.4) ++w;
      (*net_w)[k] = w;
    }
  }
  return nets;
}

// The nodes (ports; each hard macro then its pins, on its edge; each soft macro then its pins,
// at its centre) and the nets of `nl`.
void EmitNetlist(const SyntheticOptions& o, const Things& th, const std::vector<std::vector<int>>& nets,
                 const std::vector<double>& net_w, Rng& rng, Netlist* netlist) {
  const int P = th.P, H = th.H, S = th.S, T = P + H + S;
  Netlist& nl = *netlist;
  nl.sources = {"synthetic(seed=" + std::to_string(o.seed) + ")"};
  // pins_of[thing] = list of (net, member slot) connections, in net order.
  std::vector<std::vector<std::pair<int, int>>> conns(T);
  for (int k = 0; k < o.num_nets; ++k) {
    for (int j = 0; j < static_cast<int>(nets[k].size()); ++j) conns[nets[k][j]].emplace_back(k, j);
  }
  std::vector<std::vector<int32_t>> net_nodes(o.num_nets);
  for (int k = 0; k < o.num_nets; ++k) net_nodes[k].assign(nets[k].size(), -1);
  for (int i = 0; i < P; ++i) {
    const int32_t n = nl.AddNode("P" + std::to_string(i), NodeType::kPort);
    nl.x[n] = th.px[i];
    nl.y[n] = th.py[i];
    nl.side[n] = th.pside[i];
    for (auto [k, j] : conns[i]) net_nodes[k][j] = n;
  }
  auto add_macro = [&](int thing, const std::string& name, NodeType t, NodeType pin_t, double x,
                       double y, double w, double h) {
    const int32_t m = nl.AddNode(name, t);
    nl.x[m] = x;
    nl.y[m] = y;
    nl.width[m] = w;
    nl.height[m] = h;
    int pin_no = 0;
    for (auto [k, j] : conns[thing]) {
      const int32_t p = nl.AddNode(name + "/P" + std::to_string(pin_no++), pin_t);
      nl.parent[p] = m;
      if (t == NodeType::kHardMacro) {
        // Hard macro pins on the macro edge (as memories have them), soft pins at the centre.
        const double u = rng.Uniform(-0.5, 0.5);
        const bool vertical_edge = rng.Uniform() < 0.5;
        const double e = rng.Uniform() < 0.5 ? -0.5 : 0.5;
        nl.pin_dx[p] = Q(vertical_edge ? e * w : u * w);
        nl.pin_dy[p] = Q(vertical_edge ? u * h : e * h);
      }
      nl.x[p] = x + nl.pin_dx[p];
      nl.y[p] = y + nl.pin_dy[p];
      net_nodes[k][j] = p;
    }
  };
  for (int i = 0; i < H; ++i) {
    add_macro(P + i, "M" + std::to_string(i), NodeType::kHardMacro, NodeType::kHardMacroPin, th.hx[i],
              th.hy[i], th.hw[i], th.hh[i]);
  }
  for (int i = 0; i < S; ++i) {
    add_macro(P + H + i, "Grp_" + std::to_string(i), NodeType::kSoftMacro, NodeType::kSoftMacroPin,
              th.sx[i], th.sy[i], th.sw[i], th.sh[i]);
  }
  // Nets with at least one sink that is not the driver itself (a port listed twice can't be).
  for (int k = 0; k < o.num_nets; ++k) {
    const std::vector<int32_t>& m = net_nodes[k];
    nl.net_pins.insert(nl.net_pins.end(), m.begin(), m.end());
    nl.net_start.push_back(static_cast<int32_t>(nl.net_pins.size()));
    nl.net_weight.push_back(net_w[k]);
    nl.weight[m[0]] = net_w[k];
  }
  nl.Finalize();
}

// Square canvas, the grid, routing resources scaled to the wiring: the mean routing demand of a
// cell ≈ (HPWL/2) / (W·H·routes); routes are chosen so that the mean is about 0.25 and the top
// 5 % of cells run near or above capacity.
PlacementSettings SettingsFor(const Netlist& nl, double side, const SyntheticOptions& o) {
  double hpwl = 0;
  for (int k = 0; k < nl.num_nets(); ++k) {
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (int32_t j = nl.net_start[k]; j < nl.net_start[k + 1]; ++j) {
      double ax, ay;
      PinPosition(nl, nl.x.data(), nl.y.data(), nl.orientation.data(), nl.net_pins[j], &ax, &ay);
      x0 = std::min(x0, ax); x1 = std::max(x1, ax);
      y0 = std::min(y0, ay); y1 = std::max(y1, ay);
    }
    hpwl += (x1 - x0) + (y1 - y0);
  }
  PlacementSettings s;
  s.canvas_width = s.canvas_height = side;
  s.cols = o.cols;
  s.rows = o.rows;
  const double routes = std::max(0.01, std::round(hpwl / 2 / (side * side * 0.25) * 1000) / 1000);
  s.h_routes_per_micron = routes;
  s.v_routes_per_micron = routes;
  s.h_macro_alloc = s.v_macro_alloc = std::round(routes * 0.736 * 1000) / 1000;
  s.smooth_range = 2;
  s.overlap_threshold = 0.004;
  s.block = "synthetic";
  return s;
}

}  // namespace

// Options checked → sizes → initial placement (hard macros, soft macros, ports) → nets → the
// netlist's nodes and nets → settings; one RNG stream, drawn in this order.
SyntheticDesign GenerateSyntheticNetlist(const SyntheticOptions& o) {
  CheckOptions(o);
  Rng rng(o.seed);
  Things th;
  th.H = o.num_hard_macros, th.S = o.num_soft_macros, th.P = o.num_ports;
  DrawSizes(o, rng, &th);
  const double top = PlaceHardMacros(rng, &th);
  PlaceSoftMacros(top, rng, &th);
  PlacePorts(rng, &th);
  std::vector<double> net_w;
  const std::vector<std::vector<int>> nets = DrawNets(o, th, rng, &net_w);
  SyntheticDesign d;
  EmitNetlist(o, th, nets, net_w, rng, &d.netlist);
  d.settings = SettingsFor(d.netlist, th.side, o);
  return d;
}

void ParseSyntheticSpec(const std::string& spec, SyntheticOptions* o) {
  auto bad = [&](const std::string& item, const std::string& why) {
    return ConfigError("synthetic spec '" + spec + "': " + item + ": " + why +
                       " (keys: macros, soft, ports, nets, utilization, global, weighted, grid=COLSxROWS)");
  };
  auto to_int = [&](const std::string& item, const std::string& v, int lo, int hi) {
    errno = 0;
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
      throw bad(item, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(x);
  };
  auto to_double = [&](const std::string& item, const std::string& v, double lo, double hi) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno != 0 || !(x >= lo && x <= hi))
      throw bad(item, "expected a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  };
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw bad(item, "expected key=value");
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    constexpr int kMaxCount = 1000000;
    if (k == "macros") o->num_hard_macros = to_int(item, v, 0, kMaxCount);
    else if (k == "soft") o->num_soft_macros = to_int(item, v, 0, kMaxCount);
    else if (k == "ports") o->num_ports = to_int(item, v, 0, kMaxCount);
    else if (k == "nets") o->num_nets = to_int(item, v, 1, 10 * kMaxCount);
    else if (k == "utilization") o->utilization = to_double(item, v, 1e-6, 1);
    else if (k == "global") o->global_net_fraction = to_double(item, v, 0, 1);
    else if (k == "weighted") o->weighted_net_fraction = to_double(item, v, 0, 1);
    else if (k == "grid") {
      const size_t x = v.find('x');
      if (x == std::string::npos) throw bad(item, "expected grid=COLSxROWS");
      o->cols = to_int(item, v.substr(0, x), 1, 4096);
      o->rows = to_int(item, v.substr(x + 1), 1, 4096);
    } else {
      throw bad(item, "unknown key '" + k + "'");
    }
  }
}

}  // namespace placerl::chip
