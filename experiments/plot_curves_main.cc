// plot-curves: one PNG/SVG of several runs' curves read from their metrics.csv — e.g. the best
// proxy cost over time of place-train and place-baseline runs side by side:
//   plot-curves --curve "PPO seed 1=runs/ppo_s1" --curve "SA=runs/sa_s1"
//     --x time_s,charts/elapsed_s --y charts/best_proxy_cost --x-scale 0.0166667
//     --x-label "CPU minutes" --y-label "best proxy cost" --out curves.png
// A curve is LABEL=PATH (PATH: a run directory or a metrics.csv file). --x and --y name columns;
// a comma-separated list means "the first of these that the file has" (place-train logs time_s,
// place-baseline charts/elapsed_s). Rows with an empty cell are skipped. --json prints one
// document: per curve the points drawn and the last y.
#include <cmath>
#include <cstdio>
#include <filesystem>
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
    std::string x = "time_s,charts/elapsed_s", y = "charts/best_proxy_cost", out, title, x_label, y_label;
    double x_scale = 1;
    bool json = false, y_log = false;
    app.add_option("--curve", curves, "LABEL=PATH: a run directory or metrics.csv (repeat)")->required();
    app.add_option("--x", x, "x column; a comma-separated list takes the first one present")->capture_default_str();
    app.add_option("--y", y, "y column; a comma-separated list takes the first one present")->capture_default_str();
    app.add_option("--x-scale", x_scale, "multiply x by this (1/60: seconds to minutes)")
        ->check(cli::FiniteRange(1e-12, 1e12))->capture_default_str();
    app.add_option("--title", title, "plot title");
    app.add_option("--x-label", x_label, "x axis label (default: the x column)");
    app.add_option("--y-label", y_label, "y axis label (default: the y column)");
    app.add_option("-o,--out", out, "output file, .png or .svg")->required()->check(cli::NonEmpty());
    app.add_flag("--y-log", y_log,
                 "logarithmic y axis (e.g. the annealing temperature, charts/temperature); values <= 0 are not drawn");
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
      doc["curves"].push_back({{"label", s.label},
                               {"path", path},
                               {"points", s.x.size()},
                               {"last_x", s.x.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.x.back())},
                               {"last_y", s.y.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.y.back())}});
      series.push_back(std::move(s));
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
