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

// A finished run: result.json (moves, accepted), rescored.json (the re-scored best) and metrics.csv.
void FakeRun(const fs::path& dir, double best, long moves, long accepted) {
  fs::create_directories(dir);
  testing::Spit(dir / "result.json",
                "{\"evaluations\": " + std::to_string(moves) + ", \"accepted\": " + std::to_string(accepted) + "}\n");
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
  // Seed 2 of the learned arm was cut: a best.plc but no result.json.
  fs::create_directories(d / "shipped-loo.s2");
  testing::Spit(d / "shipped-loo.s2/best.plc", "# not a finished run\n");
  const std::string out = tmp / "out/t.md";
  const auto r = Sh("experiments/learned_sa.sh --table-only --minutes 60 --seeds '1 2 3' --designs ariane133 "
                    "--arms 'sa-soft shipped-loo' --bin " + testing::BinDir() + " --work " + work.string() +
                    " --out " + out + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string t = testing::Slurp(out);
  EXPECT_NE(t.find("| ariane133 | `sa-soft` (uniform proposals) | 0.630000 0.632000 — | 0.631000 ± 0.001414 (n=2) | — |"),
            std::string::npos) << t;
  // The learned arm: seed 1 only; −0.159 % = 0.629 / 0.630 − 1 on the one seed both finished.
  EXPECT_NE(t.find("| 0.629000 — — | 0.629000 ± 0.000000 (n=1) | −0.159 % on the mean, below on 1 of 1 | 2e+08 | 2.7e+07 |"),
            std::string::npos) << t;
  EXPECT_NE(t.find("--table-only"), std::string::npos);
  EXPECT_FALSE(fs::exists(d / "shipped-loo.s2/rescored.json"));  // the cut run is not re-scored
  EXPECT_FALSE(fs::exists(d / "sa-soft.s3"));                      // nothing ran
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133.png"), 1000u);
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133_temperature.png"), 1000u);
  EXPECT_GT(fs::file_size(tmp / "out/learned_sa_ariane133_gap.png"), 1000u);  // against sa-soft
}

TEST(LearnedSaScript, BadArgumentsAreOneLineAndExitOne) {
  const std::string bin = " --bin " + testing::BinDir();
  for (const std::string& args : {"--table-only --arms bogus" + bin, bin + " --minutes", "--bogus" + bin,
                                  std::string("--bin /nonexistent")}) {
    const auto r = Sh("experiments/learned_sa.sh " + args + " 2>&1");
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("learned_sa.sh: error: ", 0), 0u) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace placerl
