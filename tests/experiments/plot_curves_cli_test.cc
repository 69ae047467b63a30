// plot-curves as a user runs it: curves of a place-train-like and a place-baseline-like
// metrics.csv in one PNG (each file's own x column from the --x list, empty cells skipped);
// a log y axis (--y-log); bad curves, missing columns and malformed CSV are one line and exit 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/plot-curves";

TEST(PlotCurvesCli, DrawsRunsWithTheirOwnXColumn) {
  testing::TempDir tmp;
  fs::create_directories(tmp / "ppo");
  testing::Spit(tmp / "ppo/metrics.csv", "step,time_s,charts/best_proxy_cost\n1,60,0.9\n2,120,\n3,180,0.8\n");
  testing::Spit(tmp / "sa.csv", "step,charts/best_proxy_cost,charts/elapsed_s\n0,0.85,30\n1,0.7,90\n");
  const auto r = Sh("(" + kBin + " --curve 'PPO=" + (tmp / "ppo") + "' --curve 'SA=" + (tmp / "sa.csv") +
                    "' --x-scale 0.0166666666667 --json --out " + (tmp / "c.png") + ")");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["curves"].size(), 2u);
  EXPECT_EQ(j["curves"][0]["points"], 2);  // the row with an empty cell is skipped
  EXPECT_NEAR(j["curves"][0]["last_x"].get<double>(), 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(j["curves"][0]["last_y"].get<double>(), 0.8);
  EXPECT_NEAR(j["curves"][1]["last_x"].get<double>(), 1.5, 1e-9);  // charts/elapsed_s
  EXPECT_DOUBLE_EQ(j["curves"][1]["last_y"].get<double>(), 0.7);
  EXPECT_GT(fs::file_size(tmp / "c.png"), 1000u);
}

// --y-log: the annealing temperature (three decades) on a log axis; a zero is not drawn and the
// picture is not the linear one.
TEST(PlotCurvesCli, LogYAxis) {
  testing::TempDir tmp;
  testing::Spit(tmp / "m.csv", "step,charts/elapsed_s,charts/temperature\n0,0,4.5e-05\n1,60,2e-06\n2,120,0\n3,180,5e-08\n");
  const std::string c = " --curve 'sa=" + (tmp / "m.csv") + "' --y charts/temperature";
  ASSERT_EQ(Sh(kBin + c + " --y-log --out " + (tmp / "log.png")).status, 0);
  ASSERT_EQ(Sh(kBin + c + " --out " + (tmp / "lin.png")).status, 0);
  EXPECT_NE(testing::Slurp(tmp / "log.png"), testing::Slurp(tmp / "lin.png"));
  EXPECT_NE(Sh(kBin + " --help").out.find("--y-log"), std::string::npos);
}

// --relative-to: every curve as its per-cent difference from the reference's last value at or before
// the same x; points before the reference's first x are dropped; the reference itself is 0; --x-from
// and --x-to keep a window of x.
TEST(PlotCurvesCli, RelativeToAReferenceCurve) {
  testing::TempDir tmp;
  testing::Spit(tmp / "sa.csv", "step,charts/elapsed_s,charts/best_proxy_cost\n0,10,1.0\n1,60,0.8\n2,120,0.7\n");
  testing::Spit(tmp / "es.csv", "step,charts/elapsed_s,charts/best_proxy_cost\n0,0,0.95\n1,30,0.9\n2,90,0.78\n3,150,0.693\n");
  const std::string c = " --curve 'sa-soft=" + (tmp / "sa.csv") + "' --curve 'es=" + (tmp / "es.csv") + "'";
  const auto r = Sh("(" + kBin + c + " --relative-to sa-soft --json --out " + (tmp / "rel.png") + ")");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["relative_to"], "sa-soft");
  EXPECT_EQ(j["curves"][0]["points"], 3);
  EXPECT_NEAR(j["curves"][0]["last_y"].get<double>(), 0.0, 1e-12);
  EXPECT_EQ(j["curves"][1]["points"], 3);  // x = 0 is before the reference's first point
  EXPECT_NEAR(j["curves"][1]["last_x"].get<double>(), 150, 1e-12);
  EXPECT_NEAR(j["curves"][1]["last_y"].get<double>(), -1.0, 1e-9);  // (0.693 - 0.7) / 0.7
  // --x-from after the difference: the reference's earlier point still counts (x = 90 against x = 60)
  const auto w = Sh("(" + kBin + c + " --relative-to sa-soft --x-from 80 --x-to 100 --json --out " + (tmp / "w.png") + ")");
  ASSERT_EQ(w.status, 0) << w.out;
  const auto jw = nlohmann::json::parse(w.out);
  EXPECT_EQ(jw["curves"][0]["points"], 0);
  EXPECT_EQ(jw["curves"][1]["points"], 1);
  EXPECT_NEAR(jw["curves"][1]["last_y"].get<double>(), -2.5, 1e-9);  // (0.78 - 0.8) / 0.8
  ASSERT_EQ(Sh(kBin + c + " --out " + (tmp / "abs.png")).status, 0);
  EXPECT_NE(testing::Slurp(tmp / "rel.png"), testing::Slurp(tmp / "abs.png"));
  const auto bad = Sh("(" + kBin + c + " --relative-to nosuch --out " + (tmp / "x.png") + ") 2>&1");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_EQ(bad.out, "plot-curves: error: --relative-to 'nosuch': no --curve has that label\n");
  EXPECT_FALSE(fs::exists(tmp / "x.png"));
}

TEST(PlotCurvesCli, BadInputIsOneLineAndExitOne) {
  testing::TempDir tmp;
  testing::Spit(tmp / "m.csv", "step,time_s,charts/best_proxy_cost\n1,60,0.9\n");
  testing::Spit(tmp / "bad.csv", "step,time_s,charts/best_proxy_cost\n1,sixty,0.9\n");
  const std::string ok = tmp / "m.csv";
  for (const std::string& args :
       {std::string("--curve nolabel"), std::string("--curve '=x'"), std::string("--curve 'a=/nonexistent.csv'"),
        "--curve 'a=" + ok + "' --y nosuch", "--curve 'a=" + ok + "' --x nosuch,other",
        "--curve 'a=" + (tmp / "bad.csv") + "'", "--curve 'a=" + ok + "' --x-scale 0", std::string("--bogus")}) {
    const auto r = Sh(kBin + " " + args + " --out " + (tmp / "o.png"));
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("plot-curves: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(tmp / "o.png")) << args;
  }
  EXPECT_EQ(Sh(kBin + " --help").status, 0);
}

// The limits sweep: plot-curves has no count option; its input grows instead. A 1,000,000-row
// metrics.csv and the largest --x-scale, under a 4 GB address space: drawn, or stopped by
// SIGINT with no partial picture. And the output is checked before any curve is read.
TEST(PlotCurvesCli, LargestInputBoundedAndOutputCheckedFirst) {
  testing::TempDir tmp;
  ASSERT_EQ(Sh("seq 1 1000000 | awk 'BEGIN{print \"step,time_s,charts/best_proxy_cost\"} {print $1\",\"$1\",\"1/$1}' > " +
               (tmp / "m.csv")).status, 0);
  for (const std::string ext : {"png", "svg"}) {
    const std::string out = tmp / ("c." + ext);
    const auto r = testing::ShLimited(kBin + " --curve 'a=" + (tmp / "m.csv") + "' --x-scale 1000000000000 --out " + out, 5);
    EXPECT_EQ(testing::SweepVerdict(r, "plot-curves"), "") << ext;
    if (r.status != 0) {
      EXPECT_FALSE(fs::exists(out)) << r.out;
    }
    EXPECT_EQ(testing::LeftoverTemporaries(tmp.path()), "");
  }
  const auto r = Sh(kBin + " --curve 'a=/nonexistent.csv' --out /dev/null/c.png");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "plot-curves: error: cannot write /dev/null/c.png: /dev/null is not a directory\n");
}

}  // namespace
}  // namespace placerl
