// Placement pictures (see render.h): one drawing routine over a tiny painter interface with
// two back ends — SVG text (so that rectangles stay <rect> elements, readable and diffable)
// and cairo (PNG).
#include "experiments/lib/render.h"

#include <cairo.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::viz {
namespace {

using chip::Netlist;
using chip::NodeType;

struct Rgba {
  double r, g, b, a;
};
constexpr Rgba kNone{0, 0, 0, 0};

class Painter {
 public:
  virtual ~Painter() = default;
  // Pixel coordinates, y down.
  virtual void Rect(double x, double y, double w, double h, Rgba fill, Rgba stroke, double lw) = 0;
  virtual void Line(double x0, double y0, double x1, double y1, Rgba c, double lw) = 0;
  virtual void Polygon(const std::vector<std::pair<double, double>>& pts, Rgba fill, Rgba stroke,
                       double lw) = 0;
  // anchor: 0 left, 1 centre, 2 right; y is the baseline.
  virtual void Text(double x, double y, const std::string& s, double size, Rgba c, bool bold,
                    int anchor) = 0;
};

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", v);
  std::string s(b);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string Color(const Rgba& c) {
  char b[32];
  std::snprintf(b, sizeof(b), "#%02x%02x%02x", static_cast<int>(std::lround(c.r * 255)),
                static_cast<int>(std::lround(c.g * 255)), static_cast<int>(std::lround(c.b * 255)));
  return b;
}

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

class SvgPainter : public Painter {
 public:
  SvgPainter(int w, int h) {
    out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
           std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " +
           std::to_string(w) + " " + std::to_string(h) +
           "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  }
  void Rect(double x, double y, double w, double h, Rgba f, Rgba s, double lw) override {
    out_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
            Num(h) + "\"" + Style(f, s, lw) + "/>\n";
  }
  void Line(double x0, double y0, double x1, double y1, Rgba c, double lw) override {
    out_ += "<line x1=\"" + Num(x0) + "\" y1=\"" + Num(y0) + "\" x2=\"" + Num(x1) + "\" y2=\"" +
            Num(y1) + "\"" + Style(kNone, c, lw) + "/>\n";
  }
  void Polygon(const std::vector<std::pair<double, double>>& pts, Rgba f, Rgba s, double lw) override {
    out_ += "<polygon points=\"";
    for (size_t i = 0; i < pts.size(); ++i) {
      if (i) out_ += ' ';
      out_ += Num(pts[i].first) + "," + Num(pts[i].second);
    }
    out_ += "\"" + Style(f, s, lw) + "/>\n";
  }
  void Text(double x, double y, const std::string& s, double size, Rgba c, bool bold,
            int anchor) override {
    static const char* kAnchor[] = {"start", "middle", "end"};
    out_ += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" font-size=\"" + Num(size) +
            "\" text-anchor=\"" + kAnchor[anchor] + "\"" + (bold ? " font-weight=\"bold\"" : "") +
            " fill=\"" + Color(c) + "\">" + Escape(s) + "</text>\n";
  }
  std::string Finish() { return out_ + "</svg>\n"; }

 private:
  static std::string Style(Rgba f, Rgba s, double lw) {
    std::string o = " fill=\"" + (f.a > 0 ? Color(f) : std::string("none")) + "\"";
    if (f.a > 0 && f.a < 1) o += " fill-opacity=\"" + Num(f.a) + "\"";
    if (s.a > 0 && lw > 0) {
      o += " stroke=\"" + Color(s) + "\" stroke-width=\"" + Num(lw) + "\"";
      if (s.a < 1) o += " stroke-opacity=\"" + Num(s.a) + "\"";
    }
    return o;
  }
  std::string out_;
};

class CairoPainter : public Painter {
 public:
  CairoPainter(int w, int h) {
    surface_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    cr_ = cairo_create(surface_);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  ~CairoPainter() override {
    cairo_destroy(cr_);
    cairo_surface_destroy(surface_);
  }
  void Rect(double x, double y, double w, double h, Rgba f, Rgba s, double lw) override {
    cairo_rectangle(cr_, x, y, w, h);
    FillStroke(f, s, lw);
  }
  void Line(double x0, double y0, double x1, double y1, Rgba c, double lw) override {
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    FillStroke(kNone, c, lw);
  }
  void Polygon(const std::vector<std::pair<double, double>>& pts, Rgba f, Rgba s, double lw) override {
    for (size_t i = 0; i < pts.size(); ++i) {
      if (i == 0) cairo_move_to(cr_, pts[i].first, pts[i].second);
      else cairo_line_to(cr_, pts[i].first, pts[i].second);
    }
    cairo_close_path(cr_);
    FillStroke(f, s, lw);
  }
  void Text(double x, double y, const std::string& s, double size, Rgba c, bool bold,
            int anchor) override {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    const double dx = anchor == 0 ? 0 : anchor == 1 ? -e.x_advance / 2 : -e.x_advance;
    cairo_move_to(cr_, x + dx, y);
    cairo_set_source_rgba(cr_, c.r, c.g, c.b, c.a);
    cairo_show_text(cr_, s.c_str());
    cairo_new_path(cr_);
  }
  void WritePng(const std::string& path, const std::string& target) {
    cairo_surface_flush(surface_);
    errno = 0;
    const cairo_status_t st = cairo_surface_write_to_png(surface_, path.c_str());
    if (st != CAIRO_STATUS_SUCCESS) {
      const int e = errno;
      ::unlink(path.c_str());
      throw IoError("cannot write " + target + " (" + (e ? std::strerror(e) : cairo_status_to_string(st)) + ")");
    }
  }

 private:
  void FillStroke(Rgba f, Rgba s, double lw) {
    if (f.a > 0) {
      cairo_set_source_rgba(cr_, f.r, f.g, f.b, f.a);
      if (s.a > 0 && lw > 0) cairo_fill_preserve(cr_);
      else cairo_fill(cr_);
    }
    if (s.a > 0 && lw > 0) {
      cairo_set_source_rgba(cr_, s.r, s.g, s.b, s.a);
      cairo_set_line_width(cr_, lw);
      cairo_stroke(cr_);
    }
    cairo_new_path(cr_);
  }
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

// Heat colour ramp for t in [0, 1]: pale yellow → orange → red → dark red.
Rgba Heat(double t) {
  static const double stops[][3] = {
      {1.00, 0.98, 0.85}, {0.99, 0.80, 0.36}, {0.96, 0.45, 0.18}, {0.80, 0.10, 0.12}, {0.45, 0.00, 0.10}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  return {stops[i][0] + f * (stops[i + 1][0] - stops[i][0]),
          stops[i][1] + f * (stops[i + 1][1] - stops[i][1]),
          stops[i][2] + f * (stops[i + 1][2] - stops[i][2]), 1.0};
}

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The nets that touch a hard macro: a star from the driver pin to each sink (X, Y: chip µm →
// pixels).
template <class ToX, class ToY>
void DrawHardMacroNets(const chip::ProxyCost& pc, Painter* p, const ToX& X, const ToY& Y) {
  const Netlist& nl = pc.netlist();
  const Rgba net_c{0.15, 0.25, 0.55, 0.35};
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    bool touches = false;
    for (int32_t j = nl.net_start[k]; j < nl.net_start[k + 1] && !touches; ++j) {
      const int32_t m = nl.parent[nl.net_pins[j]];
      touches = m >= 0 && nl.type[m] == NodeType::kHardMacro;
    }
    if (!touches) continue;
    double dx = 0, dy = 0;
    const int32_t drv = nl.net_pins[nl.net_start[k]];
    auto pos = [&](int32_t pin, double* px, double* py) {
      const int32_t m = nl.parent[pin];
      if (m < 0) { *px = pc.x(pin); *py = pc.y(pin); return; }
      double ox2 = 0, oy2 = 0;
      chip::OrientOffset(pc.orientation(m), nl.pin_dx[pin], nl.pin_dy[pin], &ox2, &oy2);
      *px = pc.x(m) + ox2;
      *py = pc.y(m) + oy2;
    };
    pos(drv, &dx, &dy);
    for (int32_t j = nl.net_start[k] + 1; j < nl.net_start[k + 1]; ++j) {
      double sx = 0, sy = 0;
      pos(nl.net_pins[j], &sx, &sy);
      p->Line(X(dx), Y(dy), X(sx), Y(sy), net_c, 0.5);
    }
  }
}

void Draw(const chip::ProxyCost& pc, const RenderOptions& opt, const chip::CostBreakdown& costs,
          Painter* p, int W, int H, double scale, double ox, double oy, double vx0, double vy1,
          double canvas_top) {
  const Netlist& nl = pc.netlist();
  const auto& s = pc.settings();
  const double cw = s.canvas_width, ch = s.canvas_height;
  // Chip (µm, y up) → pixels (y down).
  auto X = [&](double x) { return ox + (x - vx0) * scale; };
  auto Y = [&](double y) { return oy + (vy1 - y) * scale; };
  const Rgba ink{0.13, 0.13, 0.16, 1}, grey{0.55, 0.55, 0.6, 1};

  p->Rect(0, 0, W, H, {1, 1, 1, 1}, kNone, 0);
  // Title: costs first, then what is drawn.
  std::string t1 = opt.title.empty() ? std::string("placement") : opt.title;
  t1 += "   HPWL " + Fmt("%.6g", costs.hpwl) + "   wirelength " + Fmt("%.4f", costs.wirelength_cost) +
        "   density " + Fmt("%.4f", costs.density_cost) + "   congestion " +
        Fmt("%.4f", costs.congestion_cost) + "   proxy " + Fmt("%.4f", costs.proxy_cost);
  p->Text(16, 26, t1, 15, ink, true, 0);
  const std::string t2 = std::to_string(nl.hard_macros.size()) + " hard macros, " +
                         std::to_string(nl.soft_macros.size()) + " soft macros, " +
                         std::to_string(nl.ports.size()) + " ports, " +
                         std::to_string(nl.stdcells.size()) + " std cells, " +
                         std::to_string(nl.num_nets()) + " nets;  canvas " + Fmt("%.1f", cw) + " x " +
                         Fmt("%.1f", ch) + " um, grid " + std::to_string(s.cols) + " x " +
                         std::to_string(s.rows);
  p->Text(16, 46, t2, 12, grey, false, 0);
  (void)canvas_top;

  // Canvas and heat map.
  p->Rect(X(0), Y(ch), cw * scale, ch * scale, {0.96, 0.96, 0.97, 1}, kNone, 0);
  std::vector<double> map;
  std::string map_name;
  if (opt.map == HeatMap::kCongestion) {
    const auto v = pc.VerticalCongestionMap(), h = pc.HorizontalCongestionMap();
    map.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) map[i] = std::max(v[i], h[i]);
    map_name = "congestion, max(V, H)";
  } else if (opt.map == HeatMap::kDensity) {
    map = pc.DensityMap();
    map_name = "density";
  }
  double vmax = 1.0;
  for (double v : map) vmax = std::max(vmax, v);
  const double gw = pc.grid_width(), gh = pc.grid_height();
  if (!map.empty()) {
    for (int r = 0; r < s.rows; ++r) {
      for (int c = 0; c < s.cols; ++c) {
        const double v = map[static_cast<size_t>(r) * s.cols + c];
        if (v <= 0) continue;
        Rgba col = Heat(v / vmax);
        p->Rect(X(c * gw), Y((r + 1) * gh), gw * scale + 0.3, gh * scale + 0.3, col, kNone, 0);
      }
    }
  }
  // Grid lines.
  const Rgba grid_c{0.45, 0.45, 0.5, 0.35};
  for (int c = 0; c <= s.cols; ++c) p->Line(X(c * gw), Y(0), X(c * gw), Y(ch), grid_c, 0.6);
  for (int r = 0; r <= s.rows; ++r) p->Line(X(0), Y(r * gh), X(cw), Y(r * gh), grid_c, 0.6);

  // Standard cells (tiny, grey) and soft macros (translucent green).
  for (int32_t i : nl.stdcells) {
    const double w = std::max(nl.width[i] * scale, 0.8), h = std::max(nl.height[i] * scale, 0.8);
    p->Rect(X(pc.x(i)) - w / 2, Y(pc.y(i)) - h / 2, w, h, {0.4, 0.4, 0.45, 0.35}, kNone, 0);
  }
  const Rgba soft_fill{0.20, 0.62, 0.35, 0.28}, soft_line{0.10, 0.45, 0.22, 0.7};
  for (int32_t i : nl.soft_macros) {
    const double w = nl.width[i] * scale, h = nl.height[i] * scale;
    p->Rect(X(pc.x(i)) - w / 2, Y(pc.y(i)) - h / 2, w, h, soft_fill, soft_line, 0.6);
  }
  // Nets of hard macros: star from the driver.
  if (opt.nets) DrawHardMacroNets(pc, p, X, Y);
  // Hard macros: solid blue, dark outline, orientation marker in the N lower-left corner.
  const Rgba hard_fill{0.23, 0.36, 0.62, 0.82}, hard_line{0.06, 0.10, 0.22, 1};
  for (int32_t i : nl.hard_macros) {
    const double w = nl.width[i] * scale, h = nl.height[i] * scale;
    const double x = X(pc.x(i)), y = Y(pc.y(i));
    p->Rect(x - w / 2, y - h / 2, w, h, hard_fill, hard_line, 1.0);
    double sx = 0, sy = 0;
    chip::OrientOffset(pc.orientation(i), -1, -1, &sx, &sy);
    const double cx = x + sx * w / 2, cy = y - sy * h / 2;  // pixel y is flipped
    const double m = std::clamp(std::min(w, h) * 0.18, 2.5, 12.0);
    p->Polygon({{cx, cy}, {cx - sx * m, cy}, {cx, cy + sy * m}}, {1, 1, 1, 0.9}, kNone, 0);
  }
  // Ports: small red diamonds.
  const Rgba port_c{0.85, 0.12, 0.15, 1};
  for (int32_t i : nl.ports) {
    const double x = X(pc.x(i)), y = Y(pc.y(i)), r = 4;
    p->Polygon({{x, y - r}, {x + r, y}, {x, y + r}, {x - r, y}}, port_c, {1, 1, 1, 1}, 0.6);
  }
  // Canvas outline.
  p->Rect(X(0), Y(ch), cw * scale, ch * scale, kNone, ink, 1.2);

  // Legend on the right: colour bar + symbols.
  const double lx = W - 240, ly = 80;
  if (!map.empty()) {
    p->Text(lx, ly, map_name, 12, ink, true, 0);
    const double bh = 220, bw = 18, by = ly + 14;
    const int steps = 44;
    for (int i = 0; i < steps; ++i) {
      const double t = 1.0 - (i + 0.5) / steps;
      p->Rect(lx, by + i * bh / steps, bw, bh / steps + 0.5, Heat(t), kNone, 0);
    }
    p->Rect(lx, by, bw, bh, kNone, ink, 0.8);
    for (int i = 0; i <= 4; ++i) {
      const double v = vmax * (1.0 - i / 4.0);
      const double ty = by + bh * i / 4.0;
      p->Line(lx + bw, ty, lx + bw + 5, ty, ink, 0.8);
      p->Text(lx + bw + 8, ty + 4, Fmt("%.2f", v), 11, ink, false, 0);
    }
    if (opt.map == HeatMap::kCongestion && vmax > 1) {
      const double ty = by + bh * (1.0 - 1.0 / vmax);
      p->Line(lx - 4, ty, lx + bw + 5, ty, {0, 0, 0, 1}, 1.6);
      p->Text(lx + bw + 48, ty + 4, "capacity", 10, grey, false, 0);
    }
  }
  double sy0 = ly + 270;
  p->Rect(lx, sy0, 18, 12, hard_fill, hard_line, 1.0);
  p->Polygon({{lx, sy0 + 12}, {lx + 5, sy0 + 12}, {lx, sy0 + 7}}, {1, 1, 1, 0.9}, kNone, 0);
  p->Text(lx + 26, sy0 + 10, "hard macro (white corner: N lower-left)", 10, ink, false, 0);
  sy0 += 22;
  p->Rect(lx, sy0, 18, 12, soft_fill, soft_line, 0.6);
  p->Text(lx + 26, sy0 + 10, "soft macro (cell cluster)", 10, ink, false, 0);
  sy0 += 22;
  p->Polygon({{lx + 9, sy0}, {lx + 13, sy0 + 6}, {lx + 9, sy0 + 12}, {lx + 5, sy0 + 6}}, port_c, kNone, 0);
  p->Text(lx + 26, sy0 + 10, "port", 10, ink, false, 0);
  if (opt.nets) {
    sy0 += 22;
    p->Line(lx, sy0 + 6, lx + 18, sy0 + 6, {0.15, 0.25, 0.55, 0.8}, 1);
    p->Text(lx + 26, sy0 + 10, "net of a hard macro", 10, ink, false, 0);
  }
}

}  // namespace

HeatMap ParseHeatMap(const std::string& s) {
  if (s == "congestion") return HeatMap::kCongestion;
  if (s == "density") return HeatMap::kDensity;
  if (s == "none") return HeatMap::kNone;
  throw ConfigError("--map must be congestion, density or none, got '" + s + "'");
}

void RenderPlacement(const chip::ProxyCost& cost, const RenderOptions& opt, const std::string& path) {
  const std::string low = Lower(path);
  const bool svg = low.size() > 4 && low.compare(low.size() - 4, 4, ".svg") == 0;
  const bool png = low.size() > 4 && low.compare(low.size() - 4, 4, ".png") == 0;
  if (!svg && !png) throw ConfigError("output must end in .svg or .png: " + path);
  if (opt.size_px < 100 || opt.size_px > 20000) throw ConfigError("render size must be 100..20000 px");

  chip::CostBreakdown costs;
  if (opt.costs) {
    costs = *opt.costs;
  } else {
    chip::ProxyCost copy = cost;
    costs = copy.EvaluateFull();
  }
  // View: the canvas, widened to show ports and macros that lie outside it.
  const Netlist& nl = cost.netlist();
  const auto& st = cost.settings();
  double vx0 = 0, vy0 = 0, vx1 = st.canvas_width, vy1 = st.canvas_height;
  for (int32_t i : nl.ports) {
    vx0 = std::min(vx0, cost.x(i)); vx1 = std::max(vx1, cost.x(i));
    vy0 = std::min(vy0, cost.y(i)); vy1 = std::max(vy1, cost.y(i));
  }
  for (int32_t i : nl.macros) {  // macros placed (partly) off the canvas stay visible
    vx0 = std::min(vx0, cost.x(i) - nl.width[i] / 2); vx1 = std::max(vx1, cost.x(i) + nl.width[i] / 2);
    vy0 = std::min(vy0, cost.y(i) - nl.height[i] / 2); vy1 = std::max(vy1, cost.y(i) + nl.height[i] / 2);
  }
  const double span = std::max(vx1 - vx0, vy1 - vy0);
  if (!(span > 0) || !std::isfinite(span)) throw ConfigError("render: empty or invalid canvas");
  const double scale = opt.size_px / span;
  const int margin = 24, top = 62, legend = 270;
  const int W = static_cast<int>(std::ceil((vx1 - vx0) * scale)) + 2 * margin + legend;
  const int H = std::max(static_cast<int>(std::ceil((vy1 - vy0) * scale)) + top + margin, 420);
  const double ox = margin, oy = top;

  if (svg) {
    SvgPainter p(W, H);
    Draw(cost, opt, costs, &p, W, H, scale, ox, oy, vx0, vy1, top);
    WriteFileAtomic(path, p.Finish());
    return;
  }
  // Checks the target and registers the temporary file before cairo starts writing it, so
  // that an interrupt (SIGINT/SIGTERM) during the drawing leaves nothing behind.
  PendingOutput out(path, ".png");
  CairoPainter p(W, H);
  Draw(cost, opt, costs, &p, W, H, scale, ox, oy, vx0, vy1, top);
  p.WritePng(out.temp_path(), path);
  out.Commit();
}

}  // namespace placerl::viz
