// experiments/learned_sa.sh --table-only as the 60-minute protocol uses it: the table and the
// curves from runs that --work already holds (made by earlier invocations), running nothing. A
// seed that did not run is "—"; a run that was cut (no result.json) is neither re-scored nor
// counted; each arm is compared with `sa-soft` on the seeds both finished; the temperature curves
// and the second half's gap to `sa-soft` are drawn beside the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

// A finished run: result.json (moves, accepted), rescored.json (the re-scored best) and metrics.csv;
// `stopped`: a run killed by a signal (its result.json says so).
void FakeRun(const fs::path& dir, double best, long moves, long accepted, bool stopped = false) {
  fs::create_directories(dir);
  testing::Spit(dir / "result.json", "{\"evaluations\": " + std::to_string(moves) + ", \"accepted\": " +
                                         std::to_string(accepted) + ", \"stopped_by_signal\": " +
                                         (stopped ? "true" : "false") + "}\n");
  testing::Spit(dir / "rescored.json", "{\"proxy_cost\": " + std::to_string(best) + "}\n");
  testing::Spit(dir / "metrics.csv",
                "step,charts/best_proxy_cost,charts/current_proxy_cost,charts/evaluations,charts/elapsed_s,charts/"
                "accepted,charts/temperature\n0,0.75,0.75,0,0,0,5e-05\n1,0.70,0.71,1000,60,100,2e-06\n2," +
                    std::to_string(best) + "," + std::to_string(best) + ",2000,3000,150,5e-08\n");  // at 50 CPU-min
}

TEST(LearnedSaScript, TableOnlyReadsTheRunsItHoldsAndRunsNothing) {
  testing::TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "work", d = work / "ariane133";
  FakeRun(d / "sa-soft.s1", 0.630000, 170000000, 19000000);
  FakeRun(d / "sa-soft.s2", 0.632000, 172000000, 19500000);
  FakeRun(d / "shipped-loo.s1", 0.629000, 200000000, 27000000);
  FakeRun(d / "late-loo.s2", 0.631000, 190000000, 26000000);
  FakeRun(d / "length-loo.s1", 0.628000, 210000000, 28000000);
  FakeRun(d / "late-loo.s3", 0.650000, 40000000, 6000000, /*stopped=*/true);  // killed: not counted
  // Seed 2 of the learned arm was cut: a best.plc but no result.json.
  fs::create_directories(d / "shipped-loo.s2");
  testing::Spit(d / "shipped-loo.s2/best.plc", "# not a finished run\n");
  const std::string out = tmp / "out/t.md";
  const auto r = Sh("experiments/learned_sa.sh --table-only --minutes 60 --seeds '1 2 3' --designs ariane133 "
                    "--arms 'sa-soft shipped-loo late-loo length-loo' --bin " + testing::BinDir() + " --work " + work.string() +
                    " --out " + out + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string t = testing::Slurp(out);
  EXPECT_NE(t.find("| ariane133 | `sa-soft` (uniform proposals) | 0.630000 0.632000 — | 0.631000 ± 0.001414 (n=2) | — |"),
            std::string::npos) << t;
  // The learned arm: seed 1 only; −0.159 % = 0.629 / 0.630 − 1 on the one seed both finished.
  EXPECT_NE(t.find("| 0.629000 — — | 0.629000 ± 0.000000 (n=1) | −0.159 % on the mean, below on 1 of 1 | 2e+08 | 2.7e+07 |"),
            std::string::npos) << t;
  // The shipped recipe's held-out arm (session 44), seed 2 only: 0.631 / 0.632 − 1 = −0.158 %.
  EXPECT_NE(t.find("| ariane133 | the shipped recipe (session 44: + the kinds' late adjustment) trained without this "
                   "design (held out), frozen | — 0.631000 — | 0.631000 ± 0.000000 (n=1) | −0.158 % on the mean, below on 1 of 1 |"),
            std::string::npos) << t;
  // The late file with a hotter start on long runs (session 52), seed 1: 0.628 / 0.630 − 1 = −0.317 %.
  EXPECT_NE(t.find("| ariane133 | late-loo with a hotter start on runs longer than 10^6 moves (length_weights [0.1, 0, 0, "
                   "0], session 52), frozen | 0.628000 — — | 0.628000 ± 0.000000 (n=1) | −0.317 % on the mean, below on 1 of 1 |"),
            std::string::npos) << t;
  EXPECT_NE(t.find("| ariane133 | the session-32 recipe trained without this design"), std::string::npos) << t;
  EXPECT_NE(t.find("--table-only"), std::string::npos);
  EXPECT_FALSE(fs::exists(d / "shipped-loo.s2/rescored.json"));  // the cut run is not re-scored
  EXPECT_FALSE(fs::exists(d / "sa-soft.s3"));                      // nothing ran
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133.png"), 1000u);
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133_temperature.png"), 1000u);
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133_gap.png"), 1000u);  // against sa-soft
}

// --archive keeps a small record of each finished run (its files, metrics.csv thinned to about 360
// rows), and --table-only over the archive gives the same table without grouping any netlist in it.
TEST(LearnedSaScript, TheArchiveHoldsSmallRecordsThatMakeTheSameTable) {
  testing::TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "work", d = work / "ng45_ariane136";
  FakeRun(d / "sa-soft.s1", 0.636000, 170000000, 19000000);
  FakeRun(d / "shipped-loo.s1", 0.635000, 200000000, 27000000);
  std::string long_metrics = "step,charts/best_proxy_cost,charts/elapsed_s\n";
  for (int i = 0; i <= 1000; ++i)
    long_metrics += std::to_string(i) + "," + std::to_string(0.7 - i * 1e-5) + "," + std::to_string(i * 3.6) + "\n";
  testing::Spit(d / "shipped-loo.s1/metrics.csv", long_metrics);
  const std::string args = " --minutes 60 --seeds 1 --designs ng45_ariane136 --arms 'sa-soft shipped-loo' --bin " +
                           testing::BinDir();
  const fs::path archive = fs::path(tmp.path()) / "archive";
  const auto a = Sh("experiments/learned_sa.sh --table-only" + args + " --work " + work.string() + " --out " +
                    (tmp / "a/t.md") + " --archive " + archive.string() + " 2>&1");
  ASSERT_EQ(a.status, 0) << a.out;
  const fs::path rec = archive / "60min/ng45_ariane136/shipped-loo.s1";
  for (const char* f : {"result.json", "rescored.json", "metrics.csv"}) EXPECT_TRUE(fs::exists(rec / f)) << f;
  const std::string thin = testing::Slurp((rec / "metrics.csv").string());
  const long rows = std::count(thin.begin(), thin.end(), '\n');
  EXPECT_GE(rows, 300);
  EXPECT_LE(rows, 400);
  EXPECT_EQ(thin.rfind("1000,", std::string::npos) != std::string::npos, true);  // the last row is kept
  EXPECT_EQ(thin.substr(0, thin.find('\n')), "step,charts/best_proxy_cost,charts/elapsed_s");
  const auto b = Sh("experiments/learned_sa.sh --table-only" + args + " --work " + (archive / "60min").string() +
                    " --out " + (tmp / "b/t.md") + " 2>&1");
  ASSERT_EQ(b.status, 0) << b.out;
  const std::string ta = testing::Slurp(tmp / "a/t.md"), tb = testing::Slurp(tmp / "b/t.md");
  const std::string row = "| 0.635000 | 0.635000 ± 0.000000 (n=1) | −0.157 % on the mean, below on 1 of 1 |";
  EXPECT_NE(ta.find(row), std::string::npos) << ta;
  EXPECT_NE(tb.find(row), std::string::npos) << tb;
  EXPECT_FALSE(fs::exists(archive / "60min/grouped"));  // nothing was grouped into the archive
  EXPECT_FALSE(fs::exists(work / "grouped"));
}

TEST(LearnedSaScript, BadArgumentsAreOneLineAndExitOne) {
  const std::string bin = " --bin " + testing::BinDir();
  for (const std::string& args : {"--table-only --arms bogus" + bin, bin + " --minutes", "--bogus" + bin,
                                  std::string("--bin /nonexistent"), "--arms late-loo --designs bogus" + bin}) {
    const auto r = Sh("experiments/learned_sa.sh " + args + " 2>&1");
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("learned_sa.sh: error: ", 0), 0u) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace placerl
