#include "experiments/lib/plot.h"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::viz {
namespace {

struct Rgb {
  double r, g, b;
};
// Tableau 10: distinguishable, colour-blind friendly enough for a handful of series.
const Rgb kPalette[] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                        {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
                        {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

cairo_status_t AppendToString(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

std::string TickLabel(double v, double step) {
  if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0" or "1e-17"
  char b[32];
  std::snprintf(b, sizeof(b), "%.6g", v);
  return b;
}

double NiceStep(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

void Text(cairo_t* cr, double x, double y, const std::string& s, double size, int anchor, bool bold = false) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  const double dx = anchor == 0 ? 0 : anchor == 1 ? -e.x_advance / 2 : -e.x_advance;
  cairo_move_to(cr, x + dx, y);
  cairo_show_text(cr, s.c_str());
  cairo_new_path(cr);
}

double TextWidth(cairo_t* cr, const std::string& s, double size) {
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  return e.x_advance;
}

void Draw(cairo_t* cr, const std::vector<PlotSeries>& series, const PlotOptions& o) {
  const double W = o.width_px, H = o.height_px;
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  // On a log axis a value is drawn at log10(y); y <= 0 becomes NaN and is skipped.
  auto yv = [&](double y) { return !o.y_log ? y : y > 0 ? std::log10(y) : NAN; };
  std::vector<double> xs, ys;
  for (const PlotSeries& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (std::isfinite(s.x[i]) && std::isfinite(yv(s.y[i]))) {
        xs.push_back(s.x[i]);
        ys.push_back(s.y[i]);
      }
    }
  }
  bool has_x = false, has_y = false;
  const PlotAxis ax = NiceAxis(xs, &has_x);
  const PlotAxis ay = o.y_log ? LogAxis(ys, &has_y) : NiceAxis(ys, &has_y);
  const bool has_data = has_x && has_y;
  // A tick's label: the value itself (log axis: 10^tick, "%.6g" gives 1e-07, 2e-07, 0.01).
  auto ylabel = [&](double t, double step) {
    return o.y_log ? TickLabel(std::pow(10.0, t), 0) : TickLabel(t, step);
  };

  const double font = std::clamp(H / 40.0, 9.0, 14.0);
  const double top = o.title.empty() ? font * 1.5 : font * 3.0;
  const double bottom = font * (o.x_label.empty() ? 3.0 : 4.5);
  double tick_w = 0;
  for (double t : ay.ticks) tick_w = std::max(tick_w, TextWidth(cr, ylabel(t, ay.ticks.size() > 1 ? ay.ticks[1] - ay.ticks[0] : 1), font));
  const double left = tick_w + font * (o.y_label.empty() ? 1.5 : 3.0);
  const double right = font * 1.5;
  const double pw = std::max(10.0, W - left - right), ph = std::max(10.0, H - top - bottom);
  auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * pw; };
  auto py = [&](double y) { return top + ph - (y - ay.lo) / (ay.hi - ay.lo) * ph; };

  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  if (!o.title.empty()) Text(cr, W / 2, font * 1.9, o.title, font * 1.15, 1, true);
  if (!o.x_label.empty()) Text(cr, left + pw / 2, H - font * 0.9, o.x_label, font, 1);
  if (!o.y_label.empty()) {
    cairo_save(cr);
    cairo_translate(cr, font * 1.3, top + ph / 2);
    cairo_rotate(cr, -M_PI / 2);
    Text(cr, 0, 0, o.y_label, font, 1);
    cairo_restore(cr);
  }
  if (has_data) {
    // Grid and ticks.
    cairo_set_line_width(cr, 1);
    const double xstep = ax.ticks.size() > 1 ? ax.ticks[1] - ax.ticks[0] : 1;
    const double ystep = ay.ticks.size() > 1 ? ay.ticks[1] - ay.ticks[0] : 1;
    for (double t : ax.ticks) {
      cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
      cairo_move_to(cr, std::round(px(t)) + 0.5, top);
      cairo_line_to(cr, std::round(px(t)) + 0.5, top + ph);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      Text(cr, px(t), top + ph + font * 1.4, TickLabel(t, xstep), font, 1);
    }
    for (double t : ay.ticks) {
      cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
      cairo_move_to(cr, left, std::round(py(t)) + 0.5);
      cairo_line_to(cr, left + pw, std::round(py(t)) + 0.5);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      Text(cr, left - font * 0.4, py(t) + font * 0.35, ylabel(t, ystep), font, 2);
    }
  }
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, left + 0.5, top + 0.5, pw, ph);
  cairo_stroke(cr);
  if (!has_data) {
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    Text(cr, left + pw / 2, top + ph / 2, "no data", font * 1.6, 1, true);
    return;
  }

  // Series, clipped to the plot area.
  cairo_save(cr);
  cairo_rectangle(cr, left, top, pw, ph);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (size_t k = 0; k < series.size(); ++k) {
    const PlotSeries& s = series[k];
    const Rgb c = kPalette[k % (sizeof(kPalette) / sizeof(kPalette[0]))];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_set_line_width(cr, 1.8);
    int n = 0;
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double y = yv(s.y[i]);
      if (!std::isfinite(s.x[i]) || !std::isfinite(y)) continue;
      if (n++ == 0) cairo_move_to(cr, px(s.x[i]), py(y));
      else cairo_line_to(cr, px(s.x[i]), py(y));
    }
    cairo_stroke(cr);
    if (o.markers || n == 1) {
      for (size_t i = 0; i < s.x.size(); ++i) {
        const double y = yv(s.y[i]);
        if (!std::isfinite(s.x[i]) || !std::isfinite(y)) continue;
        cairo_arc(cr, px(s.x[i]), py(y), 2.8, 0, 2 * M_PI);
        cairo_fill(cr);
      }
    }
  }
  cairo_restore(cr);

  // Legend, top right inside the plot.
  std::vector<size_t> listed;
  double lw = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    if (series[k].label.empty()) continue;
    listed.push_back(k);
    lw = std::max(lw, TextWidth(cr, series[k].label, font));
  }
  if (listed.empty()) return;
  const double row = font * 1.4, sw = font * 2;
  const double bw = lw + sw + font * 1.5, bh = row * listed.size() + font * 0.6;
  const double bx = left + pw - bw - font * 0.5, by = top + font * 0.5;
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_rectangle(cr, bx, by, bw, bh);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  for (size_t r = 0; r < listed.size(); ++r) {
    const Rgb c = kPalette[listed[r] % (sizeof(kPalette) / sizeof(kPalette[0]))];
    const double y = by + font * 0.3 + row * (r + 0.5);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, bx + font * 0.5, y);
    cairo_line_to(cr, bx + font * 0.5 + sw, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    Text(cr, bx + font + sw, y + font * 0.35, series[listed[r]].label, font, 0);
  }
}

}  // namespace

PlotAxis NiceAxis(const std::vector<double>& values, bool* has_data) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  PlotAxis a;
  *has_data = lo <= hi;
  if (!*has_data) {
    lo = 0;
    hi = 1;
  }
  if (!std::isfinite(hi - lo)) {  // values near ±DBL_MAX: keep the range representable
    lo = std::max(lo, -1e307);
    hi = std::min(hi, 1e307);
  }
  if (hi - lo <= std::max(std::fabs(hi), std::fabs(lo)) * 1e-12) {
    // One value (or all equal): a small window around it.
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.05;
    lo -= pad;
    hi += pad;
  }
  const double step = NiceStep(hi - lo, 5);
  // Pad to whole ticks so the curve never touches the frame at a tick-less edge.
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  if (a.hi <= a.lo) a.hi = a.lo + step;
  for (int i = 0; i < 100; ++i) {
    const double t = a.lo + i * step;
    if (t > a.hi + step * 1e-9) break;
    a.ticks.push_back(t);
  }
  return a;
}

PlotAxis LogAxis(const std::vector<double>& values, bool* has_data) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) continue;
    lo = std::min(lo, std::log10(v));
    hi = std::max(hi, std::log10(v));
  }
  PlotAxis a;
  *has_data = lo <= hi;
  if (!*has_data) {
    lo = 0;
    hi = 1;
  }
  // Whole decades around the values (one decade at least).
  a.lo = std::floor(lo + 1e-9);
  a.hi = std::ceil(hi - 1e-9);
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  const double decades = a.hi - a.lo;
  if (decades <= 3) {
    for (double k = a.lo; k <= a.hi + 1e-9; k += 1) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double t = k + std::log10(m);
        if (t <= a.hi + 1e-9) a.ticks.push_back(t);
      }
    }
  } else {
    const double step = std::ceil(decades / 6);
    for (double t = a.lo; t <= a.hi + 1e-9; t += step) a.ticks.push_back(t);
  }
  return a;
}

void PlotCurves(const std::vector<PlotSeries>& series, const PlotOptions& options, const std::string& path) {
  const std::string ext = Lower(path);
  const bool png = EndsWith(ext, ".png"), svg = EndsWith(ext, ".svg");
  if (!png && !svg) throw ConfigError(path + ": plot format must be .png or .svg");
  if (options.width_px < 64 || options.width_px > 10000 || options.height_px < 64 || options.height_px > 10000) {
    throw ConfigError(path + ": plot size must be within [64, 10000] px");
  }
  for (const PlotSeries& s : series) {
    if (s.x.size() != s.y.size()) {
      throw ConfigError(path + ": series '" + s.label + "' has " + std::to_string(s.x.size()) + " x and " +
                        std::to_string(s.y.size()) + " y values");
    }
  }
  std::string bytes;
  cairo_surface_t* surface =
      png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, options.width_px, options.height_px)
          : cairo_svg_surface_create_for_stream(AppendToString, &bytes, options.width_px, options.height_px);
  if (svg) cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX);
  cairo_t* cr = cairo_create(surface);
  Draw(cr, series, options);
  cairo_destroy(cr);
  cairo_status_t status = CAIRO_STATUS_SUCCESS;
  if (png) {
    cairo_surface_flush(surface);
    status = cairo_surface_write_to_png_stream(surface, AppendToString, &bytes);
  } else {
    cairo_surface_finish(surface);  // the SVG document is complete only now
    status = cairo_surface_status(surface);
  }
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw IoError(path + ": cairo cannot draw the plot (" + cairo_status_to_string(status) + ")");
  }
  WriteFileAtomic(path, bytes);
}

}  // namespace placerl::viz
