// Tests of the curve plots: valid PNG / SVG of the requested size, non-finite points skipped
// (the picture equals the one without them), a readable "no data" picture for empty input,
// nice axis ticks, a logarithmic y axis (ticks at 1, 2, 5 × 10^k or whole decades, values <= 0
// skipped), and refusal of bad arguments.
#include "experiments/lib/plot.h"

#include <cairo.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::viz {
namespace {

using placerl::testing::Slurp;
using placerl::testing::TempDir;

uint32_t BigEndian32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Pixels in a box of a PNG whose RGB is darker than `level` (0..255 each channel summed / 3).
int DarkPixels(const std::string& png, int x0, int y0, int x1, int y1, int level = 128) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(png.c_str());
  EXPECT_EQ(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  const unsigned char* data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  int n = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      const uint32_t p = *reinterpret_cast<const uint32_t*>(data + y * stride + 4 * x);
      const int r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
      if ((r + g + b) / 3 < level) ++n;
    }
  }
  cairo_surface_destroy(s);
  return n;
}

PlotSeries Curve(const std::string& label, int n, double scale) {
  PlotSeries s;
  s.label = label;
  for (int i = 0; i < n; ++i) {
    s.x.push_back(i * 0.5);
    s.y.push_back(scale * (1.0 + 1.0 / (1 + i)));
  }
  return s;
}

TEST(Plot, PngOfTheRequestedSize) {
  TempDir dir;
  PlotOptions o;
  o.title = "ariane133: proxy cost";
  o.x_label = "time (s)";
  o.y_label = "best proxy cost";
  o.width_px = 640;
  o.height_px = 400;
  PlotCurves({Curve("sa", 50, 1.0), Curve("greedy", 30, 1.2)}, o, dir / "curve.PNG");
  const std::string png = Slurp(dir / "curve.PNG");
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(BigEndian32(png, 16), 640u);
  EXPECT_EQ(BigEndian32(png, 20), 400u);
  EXPECT_GT(DarkPixels(dir / "curve.PNG", 0, 0, 640, 400), 500);  // axes, ticks, text
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string(), "curve.PNG");  // no temporary left
  }
}

TEST(Plot, SvgOfTheRequestedSize) {
  TempDir dir;
  PlotOptions o;
  o.width_px = 500;
  o.height_px = 300;
  o.markers = true;
  PlotCurves({Curve("a", 10, 1.0)}, o, dir / "curve.svg");
  const std::string svg = Slurp(dir / "curve.svg");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("width=\"500px\" height=\"300px\""), std::string::npos) << svg.substr(0, 400);
  EXPECT_NE(svg.find("viewBox=\"0 0 500 300\""), std::string::npos) << svg.substr(0, 400);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Plot, NonFinitePointsAreSkipped) {
  TempDir dir;
  PlotSeries clean{"cost", {0, 2, 3}, {1.5, 1.2, 1.1}};
  PlotSeries dirty{"cost",
                   {0, 1, 2, 2.5, 3, NAN, 9},
                   {1.5, NAN, 1.2, INFINITY, 1.1, 100, -INFINITY}};
  PlotCurves({clean}, PlotOptions(), dir / "clean.png");
  PlotCurves({dirty}, PlotOptions(), dir / "dirty.png");
  EXPECT_EQ(Slurp(dir / "clean.png"), Slurp(dir / "dirty.png"));  // same axes, same line
}

TEST(Plot, NoDataIsAPictureThatSaysSo) {
  TempDir dir;
  PlotOptions o;
  o.width_px = 400;
  o.height_px = 300;
  o.title = "nothing yet";
  PlotCurves({}, o, dir / "empty.png");
  PlotCurves({PlotSeries{"a", {}, {}}, PlotSeries{"b", {1, 2}, {NAN, NAN}}}, o, dir / "nan.png");
  PlotCurves({}, o, dir / "empty.svg");
  for (const char* f : {"empty.png", "nan.png"}) {
    const std::string png = Slurp(dir / f);
    ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << f;
    EXPECT_EQ(BigEndian32(png, 16), 400u);
    // "no data" in the middle of the frame.
    EXPECT_GT(DarkPixels(dir / f, 150, 120, 290, 180, 160), 50) << f;
  }
  EXPECT_NE(Slurp(dir / "empty.svg").find("</svg>"), std::string::npos);
}

TEST(Plot, OnePointAndAFlatLine) {
  TempDir dir;
  EXPECT_NO_THROW(PlotCurves({PlotSeries{"one", {5}, {2}}}, PlotOptions(), dir / "one.png"));
  EXPECT_NO_THROW(PlotCurves({PlotSeries{"flat", {0, 1, 2}, {0, 0, 0}}}, PlotOptions(), dir / "flat.png"));
  EXPECT_NO_THROW(PlotCurves({PlotSeries{"huge", {0, 1}, {-1e308, 1e308}}}, PlotOptions(), dir / "huge.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "huge.png"));
}

TEST(Plot, BadArgumentsAreRefused) {
  TempDir dir;
  EXPECT_THROW(PlotCurves({}, PlotOptions(), dir / "curve.gif"), ConfigError);
  EXPECT_THROW(PlotCurves({PlotSeries{"a", {1, 2}, {1}}}, PlotOptions(), dir / "c.png"), ConfigError);
  PlotOptions tiny;
  tiny.width_px = 10;
  EXPECT_THROW(PlotCurves({}, tiny, dir / "c.png"), ConfigError);
  EXPECT_THROW(PlotCurves({}, PlotOptions(), "/nonexistent/dir/c.png"), IoError);
}

TEST(NiceAxis, TicksCoverTheFiniteValues) {
  bool has = false;
  PlotAxis a = NiceAxis({0.93, 1.27, NAN, INFINITY}, &has);
  EXPECT_TRUE(has);
  EXPECT_LE(a.lo, 0.93);
  EXPECT_GE(a.hi, 1.27);
  EXPECT_GT(a.lo, 0.5);  // the infinity did not stretch the range
  EXPECT_LT(a.hi, 2.0);
  ASSERT_GE(a.ticks.size(), 3u);
  const double step = a.ticks[1] - a.ticks[0];
  EXPECT_NEAR(step, 0.1, 1e-12);  // 1, 2 or 5 × 10^k
  EXPECT_NEAR(a.ticks.front(), a.lo, 1e-12);
  EXPECT_NEAR(a.ticks.back(), a.hi, 1e-12);

  a = NiceAxis({NAN}, &has);
  EXPECT_FALSE(has);
  a = NiceAxis({3, 3}, &has);
  EXPECT_TRUE(has);
  EXPECT_LT(a.lo, 3);
  EXPECT_GT(a.hi, 3);
  a = NiceAxis({0, 0}, &has);
  EXPECT_LT(a.lo, 0);
  EXPECT_GT(a.hi, 0);
}

TEST(LogAxis, DecadesAroundThePositiveValues) {
  bool has = false;
  // Two decades: ticks at 1, 2, 5 × 10^k from 1e-7 to 1e-5.
  PlotAxis a = LogAxis({5.1e-8 * 2, 4.46e-5 / 5, 0, -3, NAN}, &has);
  EXPECT_TRUE(has);
  EXPECT_NEAR(a.lo, -7, 1e-12);
  EXPECT_NEAR(a.hi, -5, 1e-12);
  ASSERT_EQ(a.ticks.size(), 7u);  // 1e-7 2e-7 5e-7 1e-6 2e-6 5e-6 1e-5
  EXPECT_NEAR(a.ticks[1], std::log10(2e-7), 1e-12);
  EXPECT_NEAR(a.ticks[5], std::log10(5e-6), 1e-12);
  EXPECT_NEAR(a.ticks.back(), -5, 1e-12);
  // Twelve decades: whole decades, two apart, at most 7 ticks.
  a = LogAxis({1e-9, 3e2}, &has);
  EXPECT_NEAR(a.lo, -9, 1e-12);
  EXPECT_NEAR(a.hi, 3, 1e-12);
  ASSERT_GE(a.ticks.size(), 2u);
  EXPECT_LE(a.ticks.size(), 7u);
  EXPECT_NEAR(a.ticks[1] - a.ticks[0], 2, 1e-12);
  // Only values <= 0: no data; one value: one decade around it.
  a = LogAxis({0, -1, NAN}, &has);
  EXPECT_FALSE(has);
  a = LogAxis({1e-3, 1e-3}, &has);
  EXPECT_TRUE(has);
  EXPECT_NEAR(a.lo, -3, 1e-12);
  EXPECT_NEAR(a.hi, -2, 1e-12);
}

TEST(Plot, LogYSkipsNonPositiveValuesAndDiffersFromLinear) {
  TempDir dir;
  PlotOptions o;
  o.y_log = true;
  PlotSeries clean{"T", {0, 2, 3}, {1e-5, 1e-6, 5e-8}};
  PlotSeries dirty{"T", {0, 1, 2, 2.5, 3}, {1e-5, 0, 1e-6, -2, 5e-8}};
  PlotCurves({clean}, o, dir / "clean.png");
  PlotCurves({dirty}, o, dir / "dirty.png");
  EXPECT_EQ(Slurp(dir / "clean.png"), Slurp(dir / "dirty.png"));  // zero and negative values skipped
  PlotCurves({clean}, PlotOptions(), dir / "linear.png");
  EXPECT_NE(Slurp(dir / "clean.png"), Slurp(dir / "linear.png"));
  PlotCurves({PlotSeries{"T", {0, 1}, {0, -1}}}, o, dir / "none.png");  // nothing positive: "no data"
  EXPECT_GT(DarkPixels(dir / "none.png", 330, 220, 470, 280, 160), 50);
}

}  // namespace
}  // namespace placerl::viz
