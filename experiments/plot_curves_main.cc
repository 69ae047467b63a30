// plot-curves: one PNG/SVG of several runs' curves read from their metrics.csv — e.g. the best
// proxy cost over time of place-train and place-baseline runs side by side:
//   plot-curves --curve "PPO seed 1=runs/ppo_s1" --curve "SA=runs/sa_s1"
//     --x time_s,charts/elapsed_s --y charts/best_proxy_cost --x-scale 0.0166667
//     --x-label "CPU minutes" --y-label "best proxy cost" --out curves.png
// A curve is LABEL=PATH (PATH: a run directory or a metrics.csv file). --x and --y name columns;
// a comma-separated list means "the first of these that the file has" (place-train logs time_s,
// place-baseline charts/elapsed_s). Rows with an empty cell are skipped. --json prints one
// document: per curve the points drawn and the last y. --relative-to LABEL draws every curve as its
// per-cent difference from curve LABEL at the same x (LABEL's last point at or before that x: a
// best-so-far curve is a step), e.g. how far a learned annealer is below `sa-soft` over a run;
// --x-from / --x-to then keep a window of x.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/metrics_csv.h"
#include "experiments/lib/plot.h"

namespace placerl {
namespace {

// The first column of the comma-separated `names` that `table` has, or -1.
int FindAny(const run::MetricsTable& table, const std::string& names, std::string* found) {
  std::stringstream in(names);
  std::string name;
  while (std::getline(in, name, ',')) {
    const int j = table.Find(name);
    if (j >= 0) {
      *found = name;
      return j;
    }
  }
  return -1;
}

// Every series as 100 (y - r) / |r|, r = the reference's last y at an x <= this x (the reference's
// points in x order). Points before the reference's first x, or where r is 0, are dropped.
void RelativeTo(const viz::PlotSeries& reference, std::vector<viz::PlotSeries>* series) {
  std::vector<std::pair<double, double>> ref;
  for (size_t i = 0; i < reference.x.size(); ++i) ref.push_back({reference.x[i], reference.y[i]});
  std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& s : *series) {
    viz::PlotSeries out;
    out.label = s.label;
    for (size_t i = 0; i < s.x.size(); ++i) {
      auto it = std::upper_bound(ref.begin(), ref.end(), s.x[i], [](double x, const auto& p) { return x < p.first; });
      if (it == ref.begin()) continue;
      const double r = std::prev(it)->second;
      if (r == 0) continue;
      out.x.push_back(s.x[i]);
      out.y.push_back(100 * (s.y[i] - r) / std::fabs(r));
    }
    s = std::move(out);
  }
}

std::string ColumnList(const run::MetricsTable& t) {
  std::string s;
  for (const auto& c : t.columns) s += (s.empty() ? "" : ", ") + c;
  return s;
}

}  // namespace
}  // namespace placerl

int main(int argc, char** argv) {
  return placerl::RunMain("plot-curves", [&]() {
    using namespace placerl;
    CLI::App app{"Draws curves of several runs (their metrics.csv) in one PNG or SVG, e.g. the best proxy cost over "
                 "time of place-train and place-baseline runs"};
    std::vector<std::string> curves;
    std::string x = "time_s,charts/elapsed_s", y = "charts/best_proxy_cost", out, title, x_label, y_label, relative_to;
    double x_scale = 1, x_from = -std::numeric_limits<double>::infinity(), x_to = std::numeric_limits<double>::infinity();
    bool json = false, y_log = false;
    app.add_option("--curve", curves, "LABEL=PATH: a run directory or metrics.csv (repeat)")->required();
    app.add_option("--x", x, "x column; a comma-separated list takes the first one present")->capture_default_str();
    app.add_option("--y", y, "y column; a comma-separated list takes the first one present")->capture_default_str();
    app.add_option("--x-scale", x_scale, "multiply x by this (1/60: seconds to minutes)")
        ->check(cli::FiniteRange(1e-12, 1e12))->capture_default_str();
    app.add_option("--x-from", x_from, "draw only points with x >= this (after --x-scale), e.g. the end of a long run")
        ->check(cli::FiniteRange(-1e300, 1e300));
    app.add_option("--x-to", x_to, "draw only points with x <= this (after --x-scale)")->check(cli::FiniteRange(-1e300, 1e300));
    app.add_option("--title", title, "plot title");
    app.add_option("--x-label", x_label, "x axis label (default: the x column)");
    app.add_option("--y-label", y_label, "y axis label (default: the y column)");
    app.add_option("-o,--out", out, "output file, .png or .svg")->required()->check(cli::NonEmpty());
    app.add_flag("--y-log", y_log,
                 "logarithmic y axis (e.g. the annealing temperature, charts/temperature); values <= 0 are not drawn");
    app.add_option("--relative-to", relative_to,
                   "LABEL: draw every curve as its per-cent difference from curve LABEL at the same x (LABEL's last "
                   "point at or before it), e.g. the gap of a learned annealer to sa-soft");
    app.add_flag("--json", json, "print one JSON document (per curve: points and last y)");
    cli::Parse(app, argc, argv);
    CheckOutputPath(out);
    std::vector<viz::PlotSeries> series;
    nlohmann::json doc = {{"output", out}, {"curves", nlohmann::json::array()}};
    std::string x_used, y_used;
    for (const std::string& c : curves) {
      const size_t eq = c.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == c.size())
        throw ConfigError("--curve '" + c + "': expected LABEL=PATH");
      viz::PlotSeries s;
      s.label = c.substr(0, eq);
      std::string path = c.substr(eq + 1);
      if (std::filesystem::is_directory(path)) path += "/metrics.csv";
      const run::MetricsTable t = run::ReadMetricsCsv(path);
      std::string xc, yc;
      const int xi = FindAny(t, x, &xc), yi = FindAny(t, y, &yc);
      if (xi < 0) throw ConfigError(path + ": no column " + x + " (it has: " + ColumnList(t) + ")");
      if (yi < 0) throw ConfigError(path + ": no column " + y + " (it has: " + ColumnList(t) + ")");
      if (x_used.empty()) x_used = xc, y_used = yc;
      for (const auto& row : t.rows) {
        if (!std::isfinite(row[xi]) || !std::isfinite(row[yi])) continue;
        s.x.push_back(row[xi] * x_scale);
        s.y.push_back(row[yi]);
      }
      doc["curves"].push_back({{"label", s.label}, {"path", path}});
      series.push_back(std::move(s));
    }
    if (!relative_to.empty()) {
      auto ref = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.label == relative_to; });
      if (ref == series.end()) throw ConfigError("--relative-to '" + relative_to + "': no --curve has that label");
      const viz::PlotSeries reference = *ref;
      RelativeTo(reference, &series);
      if (y_label.empty()) y_label = "% vs " + relative_to + " (" + y_used + ")";
      doc["relative_to"] = relative_to;
    }
    for (auto& s : series) {  // the x window, after --relative-to (whose reference may start before it)
      viz::PlotSeries kept;
      kept.label = s.label;
      for (size_t i = 0; i < s.x.size(); ++i)
        if (s.x[i] >= x_from && s.x[i] <= x_to) kept.x.push_back(s.x[i]), kept.y.push_back(s.y[i]);
      s = std::move(kept);
    }
    for (size_t i = 0; i < series.size(); ++i) {
      const auto& s = series[i];
      auto& c = doc["curves"][i];
      c["points"] = s.x.size();
      c["last_x"] = s.x.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.x.back());
      c["last_y"] = s.y.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.y.back());
    }
    viz::PlotOptions po;
    po.title = title;
    po.x_label = x_label.empty() ? x_used : x_label;
    po.y_label = y_label.empty() ? y_used : y_label;
    po.y_log = y_log;
    viz::PlotCurves(series, po, out);
    if (json)
      std::printf("%s\n", doc.dump().c_str());
    else
      std::printf("plot-curves: wrote %s (%zu curves)\n", out.c_str(), series.size());
    return kExitOk;
  });
}
