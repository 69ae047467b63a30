// Line plots of one or more (x, y) series — learning curves, cost versus time — with axes,
// "nice" ticks (1, 2, 5 × 10^k), axis labels, a title and a legend; PNG or SVG chosen by the
// output's extension, drawn with cairo and written through a temporary file + rename.
// Points with a non-finite coordinate are skipped (the line joins their neighbours); a plot
// without any finite point says "no data" instead of failing.
#pragma once

#include <string>
#include <vector>

namespace placerl::viz {

struct PlotSeries {
  std::string label;  // legend entry ("" = not in the legend)
  std::vector<double> x, y;  // same length
};

struct PlotOptions {
  std::string title;
  std::string x_label;   // "time (s)", "episodes"
  std::string y_label;   // "proxy cost"
  int width_px = 800;
  int height_px = 500;
  bool markers = false;  // a dot at every point (always for a series of one point)
  bool y_log = false;    // logarithmic y axis: values <= 0 are skipped like non-finite ones
};

// Axis range and ticks of a set of values: what PlotCurves draws (exposed for tests).
struct PlotAxis {
  double lo = 0, hi = 1;       // drawn range (covers every finite value, padded)
  std::vector<double> ticks;   // inside [lo, hi]
};
// Axis over the finite values of `values` (`has_data` false when there are none).
PlotAxis NiceAxis(const std::vector<double>& values, bool* has_data);
// Logarithmic axis over the finite positive values of `values`: lo, hi and ticks are log10 of the
// values (ticks at 1, 2, 5 × 10^k when the range spans at most 3 decades, else at whole decades,
// at most 7 of them); `has_data` false when no value is positive.
PlotAxis LogAxis(const std::vector<double>& values, bool* has_data);

// Writes `path` (.png or .svg, case-insensitive) of `width_px` × `height_px`. Throws
// ConfigError for another extension, x/y of different lengths or a size outside
// [64, 10000] px, and IoError when the file cannot be written.
void PlotCurves(const std::vector<PlotSeries>& series, const PlotOptions& options, const std::string& path);

}  // namespace placerl::viz
