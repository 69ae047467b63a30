// place-train as a user runs it: a short run on the built-in chip writes the run directory
// (config, checkpoint + state, best.plc, pictures, metrics, TensorBoard events) and one JSON
// document; --resume continues the same run (steps and episodes go on, metrics appended);
// bad options fail with one line, exit 1, and leave no directory; --workers 2 (two c10d ranks)
// trains end to end and resumes with one; a worker that dies or hangs stops the run with one
// line naming it; a run killed (SIGKILL) after a checkpoint and resumed logs the same rows as
// an uninterrupted run; batched collection (collect_batch) gives the same metrics.csv for the
// same seed; a cheaper episode-end FD (chip.fd_steps_scale) changes the rewards but the best is
// reported with CT's full FD schedule (alone, resumed, and with two workers).
#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/place-train";

int Lines(const std::string& path) {
  std::ifstream f(path);
  int n = 0;
  std::string l;
  while (std::getline(f, l)) ++n;
  return n;
}

// --help is what it was when the binary was flags and library code in one file
// (tests/data/place_train_help.txt, written by that binary; its path as "place-train").
TEST(PlaceTrainCli, HelpIsUnchanged) {
  EXPECT_EQ(testing::HelpAsNamed(kBin, "place-train"), testing::Slurp("tests/data/place_train_help.txt"));
}

TEST(PlaceTrainCli, TrainsWritesTheRunDirectoryAndResumes) {
  testing::TempDir tmp;
  const std::string out = tmp / "run";
  // (--clock cpu: a budget of this process's CPU seconds; kept by --resume.)
  const auto r = Sh("(" + kBin + " --minutes 0.05 --clock cpu --seed 2 --json --set episodes_per_update=4 --out " + out +
                    " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["updates"].get<int>(), 1);
  EXPECT_EQ(j["episodes"].get<int>(), 4 * j["updates"].get<int>());
  EXPECT_GT(j["designs"][0]["best_proxy_cost"].get<double>(), 0);
  for (const char* f : {"config.pbtxt", "best.plc", "best.png", "curve.png", "metrics.csv", "result.json",
                        "checkpoints/latest.ckpt", "checkpoints/state.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const int rows = Lines(out + "/metrics.csv");
  EXPECT_EQ(rows, 1 + j["updates"].get<int>());
  EXPECT_EQ(Sh(kBin + " --resume " + out + " --clock wall 2>/dev/null").status, 1);  // a run keeps its clock
  // Resume with a larger total budget: the run goes on from its checkpoint.
  const auto r2 = Sh("(" + kBin + " --resume " + out + " --minutes 0.1 --json 2>/dev/null)");
  ASSERT_EQ(r2.status, 0) << r2.out;
  const auto j2 = nlohmann::json::parse(r2.out);
  EXPECT_GT(j2["updates"].get<int>(), j["updates"].get<int>());
  EXPECT_EQ(Lines(out + "/metrics.csv"), 1 + j2["updates"].get<int>());
  EXPECT_LE(j2["designs"][0]["best_proxy_cost"].get<double>(), j["designs"][0]["best_proxy_cost"].get<double>());
}

// chip.mode=refine (the regulator) has its own learning defaults, γ = 0 and lr 0.006, under the
// user's settings; the constructive mode keeps γ = 1 and lr 0.002.
TEST(PlaceTrainCli, TheRegulatorModeHasItsOwnDefaults) {
  testing::TempDir tmp;
  auto resolved = [&](const std::string& args, const std::string& name) {
    const std::string out = tmp / name;
    const auto r = Sh("(" + kBin + " " + args + " --max-updates 1 --set episodes_per_update=2 --set collect_batch=1 "
                      "--minutes 1 --out " + out + " >/dev/null 2>&1)");
    EXPECT_EQ(r.status, 0) << args << ": " << r.out;
    std::ifstream f(out + "/config.pbtxt");
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  auto has = [](const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; };
  const std::string refine = resolved("--set chip.mode=refine --set chip.steps=4", "refine");
  EXPECT_TRUE(has(refine, "gamma: 0\n") || !has(refine, "gamma:")) << refine;
  EXPECT_TRUE(has(refine, "learning_rate: 0.006")) << refine;
  const std::string mine = resolved("--set chip.mode=refine --set chip.steps=4 --set agent.gamma=0.5", "mine");
  EXPECT_TRUE(has(mine, "gamma: 0.5")) << mine;
  EXPECT_TRUE(has(mine, "learning_rate: 0.006")) << mine;
  const std::string constructive = resolved("", "constructive");
  EXPECT_TRUE(has(constructive, "gamma: 1")) << constructive;
  EXPECT_TRUE(has(constructive, "learning_rate: 0.002")) << constructive;
}

TEST(PlaceTrainCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--minutes 0"), std::string("--algorithm sarsa"), std::string("--set agent.clip=-1"),
        std::string("--workers 0"), std::string("--set collect_batch=0"), std::string("--netlist /nonexistent.pb.txt"), std::string("--set policy.nosuch=1"),
        std::string("--netlist ''"), std::string("--clock gpu"), std::string("--set clock=gpu"),
        std::string("--set chip.fd_steps_scale=0"), std::string("--set chip.fd_steps_scale=1.5"),
        std::string("--set chip.fd_steps_scale=nan"), std::string("--set chip.cost_map=wiremask")}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("place-train: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_NE(Sh(kBin + " --set chip.cost_map=wiremask --out " + out).out.find("chip.cost_map must be wirelength, proxy or split (got 'wiremask')"),
            std::string::npos);
  EXPECT_EQ(Sh(kBin + " --resume " + (tmp / "nothing")).status, 1);
}

TEST(PlaceTrainCli, TwoWorkersTrainEndToEndAndResumeWithOne) {
  testing::TempDir tmp;
  const std::string out = tmp / "run";
  const auto r = Sh("(" + kBin + " --workers 2 --minutes 0.05 --seed 2 --json --set episodes_per_update=4 --out " + out +
                    " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // one document: only rank 0 prints
  ASSERT_GE(j["updates"].get<int>(), 1);
  EXPECT_EQ(j["workers"].get<int>(), 2);
  EXPECT_EQ(j["episodes"].get<int>(), 4 * j["updates"].get<int>());  // the ranks' episodes together
  EXPECT_GT(j["designs"][0]["best_proxy_cost"].get<double>(), 0);
  for (const char* f : {"config.pbtxt", "best.plc", "best.png", "curve.png", "metrics.csv", "result.json",
                        "checkpoints/latest.ckpt", "checkpoints/state.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  EXPECT_EQ(Lines(out + "/metrics.csv"), 1 + j["updates"].get<int>());
  // The same run goes on with one worker, for two more updates.
  const int more = j["updates"].get<int>() + 2;
  const auto r2 = Sh("(" + kBin + " --resume " + out + " --workers 1 --max-updates " + std::to_string(more) +
                     " --minutes 10 --json 2>/dev/null)");
  ASSERT_EQ(r2.status, 0) << r2.out;
  const auto j2 = nlohmann::json::parse(r2.out);
  EXPECT_EQ(j2["updates"].get<int>(), more);
  EXPECT_EQ(j2["workers"].get<int>(), 1);
  EXPECT_EQ(j2["episodes"].get<int>(), 4 * more);
  EXPECT_EQ(Lines(out + "/metrics.csv"), 1 + more);
  EXPECT_LE(j2["designs"][0]["best_proxy_cost"].get<double>(), j["designs"][0]["best_proxy_cost"].get<double>());
}

TEST(PlaceTrainCli, RanksStartedByHandMeetByMasterAddrAndPort) {
  testing::TempDir tmp;
  // Without the launcher, as on several machines: one process per rank; rank 0 serves the TCPStore.
  const std::string port = std::to_string(20000 + ::getpid() % 20000);
  const std::string env = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " WORLD_SIZE=2 ";
  const std::string args = " --minutes 10 --max-updates 2 --seed 4 --set episodes_per_update=4 --json";
  const auto r = Sh("(" + env + "RANK=1 " + kBin + args + " --out " + (tmp / "rank1") + " > " + (tmp / "rank1.out") +
                    " 2>&1 & p=$!; " + env + "RANK=0 " + kBin + args + " --out " + (tmp / "run") +
                    " 2>/dev/null; s=$?; wait $p || s=1; exit $s)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workers"].get<int>(), 2);
  EXPECT_EQ(j["updates"].get<int>(), 2);
  EXPECT_EQ(j["episodes"].get<int>(), 8);
  EXPECT_TRUE(fs::exists(tmp / "run/checkpoints/latest.ckpt"));
  EXPECT_FALSE(fs::exists(tmp / "rank1")) << "only rank 0 writes the run directory";
  EXPECT_EQ(Lines(tmp / "rank1.out"), 0);
}

TEST(PlaceTrainCli, AWorkerThatDiesOrHangsStopsTheRunNamingIt) {
  testing::TempDir tmp;
  // Rank 1 exits (status 3) after its first update; without the launcher's watch rank 0 would
  // wait in the next all-reduce.
  const auto died = Sh(kBin + " --workers 2 --minutes 5 --set episodes_per_update=4 --test-fail-rank 1 --out " +
                       (tmp / "died"));
  EXPECT_EQ(died.status, 1) << died.out;
  EXPECT_NE(died.out.find("place-train: error: rank 1 exited with status 3; stopped the other workers"), std::string::npos)
      << died.out;
  // Rank 1 sleeps after its first update: named after --worker-timeout without a heartbeat.
  // (12 s, not less: on a loaded machine rank 0's own compute between two heartbeats took over
  // 4 s, and rank 0 was named.)
  const auto hung = Sh(kBin + " --workers 2 --minutes 5 --set episodes_per_update=4 --test-hang-rank 1 --worker-timeout 12 --out " +
                       (tmp / "hung"));
  EXPECT_EQ(hung.status, 1) << hung.out;
  EXPECT_NE(hung.out.find("place-train: error: rank 1 made no progress for"), std::string::npos) << hung.out;
}

// metrics.csv as rows of column → text.
std::vector<std::map<std::string, std::string>> ReadMetrics(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells;
    std::stringstream s(l);
    std::string c;
    while (std::getline(s, c, ',')) cells.push_back(c);
    return cells;
  };
  if (std::getline(f, line)) header = split(line);
  while (std::getline(f, line)) {
    const std::vector<std::string> cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// Rows of two runs equal but for times (losses within float32 rounding: the training forward
// of a resumed process rounds a few float32 sums differently, ~1e-7 relative; the episodes,
// costs and returns are identical).
void ExpectSameCurve(const std::vector<std::map<std::string, std::string>>& a,
                     const std::vector<std::map<std::string, std::string>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (const auto& [column, value] : a[i]) {
      if (column == "time_s" || column == "charts/SPS" || column.rfind("perf/", 0) == 0) continue;  // times
      if (column.rfind("losses/", 0) == 0) {
        const double x = std::stod(value), y = std::stod(b[i].at(column));
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(x))) << "row " << i + 1 << " " << column;
      } else {
        EXPECT_EQ(value, b[i].at(column)) << "row " << i + 1 << " " << column;
      }
    }
  }
}

TEST(PlaceTrainCli, ResumeAfterKillContinuesTheSameCurve) {
  testing::TempDir tmp;
  const std::string config = " --minutes 10 --seed 3 --max-updates 6 --set episodes_per_update=4 --set checkpoint_minutes=1e-9";
  ASSERT_EQ(Sh(kBin + config + " --out " + (tmp / "a")).status, 0);
  // B: the same run, SIGKILLed right after its 3rd checkpoint, then resumed.
  EXPECT_EQ(Sh(kBin + config + " --test-kill-after-checkpoints 3 --out " + (tmp / "b")).status, 128 + 9);  // sh: killed by SIGKILL
  EXPECT_EQ(Lines(tmp / "b/metrics.csv"), 1 + 3);
  const auto resumed = Sh(kBin + " --resume " + (tmp / "b") + " --max-updates 6");
  ASSERT_EQ(resumed.status, 0) << resumed.out;
  const auto a = ReadMetrics(tmp / "a/metrics.csv"), b = ReadMetrics(tmp / "b/metrics.csv");
  ASSERT_EQ(a.size(), 6u);
  ExpectSameCurve(a, b);

  // C: killed between writing latest.ckpt and state.json — state.json still holds the previous
  // checkpoint's counters. The resume reads the copy inside the checkpoint (written with the
  // weights in one atomic write) and continues the same curve; with state.json gone too.
  EXPECT_EQ(Sh(kBin + config + " --test-kill-after-checkpoints 3 --out " + (tmp / "c")).status, 128 + 9);
  const std::string state_path = tmp / "c/checkpoints/state.json";
  nlohmann::json stale = nlohmann::json::parse(testing::Slurp(state_path));
  ASSERT_EQ(stale["iteration"].get<int>(), 3);
  stale["iteration"] = 2;
  stale["episodes"] = stale["episodes"].get<int>() - 4;
  testing::Spit(state_path, stale.dump());
  ASSERT_EQ(Sh(kBin + " --resume " + (tmp / "c") + " --max-updates 6").status, 0);
  ExpectSameCurve(a, ReadMetrics(tmp / "c/metrics.csv"));
  EXPECT_EQ(Sh(kBin + config + " --test-kill-after-checkpoints 3 --force --out " + (tmp / "c")).status, 128 + 9);
  std::filesystem::remove(state_path);
  ASSERT_EQ(Sh(kBin + " --resume " + (tmp / "c") + " --max-updates 6").status, 0);
  ExpectSameCurve(a, ReadMetrics(tmp / "c/metrics.csv"));
}

TEST(PlaceTrainCli, BatchedCollectionGivesTheSameMetricsForTheSameSeed) {
  testing::TempDir tmp;
  // 3 copies for 5 episodes per update: a full batch, then a partial one.
  const std::string config = " --minutes 10 --seed 5 --max-updates 3 --set episodes_per_update=5 --set collect_batch=3 --json";
  const auto ra = Sh("(" + kBin + config + " --out " + (tmp / "a") + " 2>/dev/null)");
  const auto rb = Sh("(" + kBin + config + " --out " + (tmp / "b") + " 2>/dev/null)");
  ASSERT_EQ(ra.status, 0) << ra.out;
  ASSERT_EQ(rb.status, 0) << rb.out;
  EXPECT_EQ(nlohmann::json::parse(ra.out)["collect_batch"].get<int>(), 3);
  const auto a = ReadMetrics(tmp / "a/metrics.csv"), b = ReadMetrics(tmp / "b/metrics.csv");
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].at("charts/episodes"), std::to_string(5 * (i + 1)));
    for (const auto& [column, value] : a[i]) {
      if (column == "time_s" || column == "charts/SPS" || column.rfind("perf/", 0) == 0) continue;  // times
      EXPECT_EQ(value, b[i].at(column)) << "row " << i + 1 << " " << column;
    }
  }
}

// The proxy cost of a place-train best.plc of the built-in chip (seed 1) as `tool` scores it:
// "proxy-cost" (the placement as written) or "fd" (place-baseline --method fd: the plc's hard
// macros with the soft macros re-placed by CT's full FD schedule).
double Score(const std::string& plc, const std::string& tool) {
  const std::string bin = placerl::testing::BinDir();
  const auto r = tool == "proxy-cost"
                     ? Sh("(" + bin + "/proxy-cost --json --seed 1 --plc " + plc + " 2>/dev/null)")
                     : Sh("(" + bin + "/place-baseline --method fd --minutes 1 --json --force --plc " + plc + " --out " + plc +
                          ".fd 2>/dev/null)");
  EXPECT_EQ(r.status, 0) << r.out;
  if (r.status != 0) return NAN;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  return tool == "proxy-cost" ? j["proxy_cost"].get<double>() : j["best"]["proxy_cost"].get<double>();
}

TEST(PlaceTrainCli, CheaperFdChangesTheRewardsButTheBestIsScoredWithTheFullSchedule) {
  testing::TempDir tmp;
  const std::string config = " --minutes 10 --seed 3 --set episodes_per_update=4 --json";
  const auto full = Sh("(" + kBin + config + " --max-updates 1 --out " + (tmp / "full") + " 2>/dev/null)");
  const auto cheap = Sh("(" + kBin + config + " --max-updates 2 --set chip.fd_steps_scale=0.3 --out " + (tmp / "cheap") +
                        " 2>/dev/null)");
  ASSERT_EQ(full.status, 0) << full.out;
  ASSERT_EQ(cheap.status, 0) << cheap.out;
  const auto jf = nlohmann::json::parse(full.out), jc = nlohmann::json::parse(cheap.out);
  EXPECT_EQ(jf["fd_steps_scale"].get<double>(), 1.0);
  EXPECT_EQ(jf["best_rescores"].get<int>(), 0);  // the full schedule needs no re-score
  EXPECT_EQ(jc["fd_steps_scale"].get<double>(), 0.3);
  EXPECT_GE(jc["best_rescores"].get<int>(), 1);
  EXPECT_GT(jc["cpu_s"]["best_rescore"].get<double>(), 0);
  // The first update plays the same hard-macro placements (same seed, same initial weights):
  // only the soft macros' schedule differs, and with it the rewards.
  const auto mf = ReadMetrics(tmp / "full/metrics.csv"), mc = ReadMetrics(tmp / "cheap/metrics.csv");
  ASSERT_EQ(mf.size(), 1u);
  ASSERT_EQ(mc.size(), 2u);
  EXPECT_NE(mf[0].at("charts/episodic_return"), mc[0].at("charts/episodic_return"));
  // The reported best is CT's full schedule on the best's hard macros, and best.plc scores to it.
  const double best = jc["designs"][0]["best_proxy_cost"].get<double>();
  EXPECT_NEAR(jc["designs"][0]["proxy_cost"].get<double>(), best, 1e-9);
  EXPECT_NEAR(Score(tmp / "cheap/best.plc", "proxy-cost"), best, 1e-6);
  EXPECT_NEAR(Score(tmp / "cheap/best.plc", "fd"), best, 1e-6);
  // Resumed (the lowest cheap cost is not checkpointed: the first episodes are re-scored again).
  const auto resumed = Sh("(" + kBin + " --resume " + (tmp / "cheap") + " --max-updates 4 --json 2>/dev/null)");
  ASSERT_EQ(resumed.status, 0) << resumed.out;
  const auto jr = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(jr["updates"].get<int>(), 4);
  EXPECT_EQ(jr["fd_steps_scale"].get<double>(), 0.3);
  EXPECT_GE(jr["best_rescores"].get<int>(), 1);
  const double best2 = jr["designs"][0]["best_proxy_cost"].get<double>();
  EXPECT_LE(best2, best);
  EXPECT_NEAR(Score(tmp / "cheap/best.plc", "proxy-cost"), best2, 1e-6);
  EXPECT_NEAR(Score(tmp / "cheap/best.plc", "fd"), best2, 1e-6);
  // Two workers: the best over the ranks, each re-scored by the rank that found it.
  const auto two = Sh("(" + kBin + config + " --workers 2 --max-updates 2 --set chip.fd_steps_scale=0.3 --out " +
                      (tmp / "two") + " 2>/dev/null)");
  ASSERT_EQ(two.status, 0) << two.out;
  const auto j2 = nlohmann::json::parse(two.out);
  const double best_two = j2["designs"][0]["best_proxy_cost"].get<double>();
  EXPECT_NEAR(Score(tmp / "two/best.plc", "proxy-cost"), best_two, 1e-6);
  EXPECT_NEAR(Score(tmp / "two/best.plc", "fd"), best_two, 1e-6);
}


// ------------------------------------------------------------ what a run reports

namespace report {

using testing::FileLines;
using testing::RunAndInterrupt;
const std::string kAriane = "../shared/datasets/chip/ariane133_ng45/";
constexpr long kAddressSpaceKb = 6000000;  // `ulimit -v` per process (KiB): a normal run fits

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// place-train on a design where no placement completes (Ariane without its .plc: a 10×10 grid)
// exited 0, printed "best proxy cost inf" and "wrote … best.plc", and wrote no best.plc: now
// it is the shared infeasible report (exit 2, one stderr line, result.json "feasible": false).
TEST(PlaceTrainCliReport, NoCompletePlacementIsTheSharedInfeasibleReport) {
  testing::TempDir tmp;
  const std::string args = " --netlist " + kAriane + "netlist.pb.txt.gz --max-updates 1 --set episodes_per_update=2 --out ";
  const auto r = testing::ShSplit(kBin + args + (tmp / "text"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("best.plc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no feasible solution"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("place-train: infeasible: no complete placement"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("best proxy cost inf"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "text/best.plc"));
  const auto j = ReadJson(tmp / "text/result.json");
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_TRUE(j["designs"][0]["proxy_cost"].is_null());
  EXPECT_TRUE(j["designs"][0]["best_proxy_cost"].is_null());
  EXPECT_EQ(j["updates"].get<int>(), 1);
  // --json: the same document on stdout, nothing else.
  const auto js = testing::ShSplit(kBin + " --json" + args + (tmp / "json"));
  EXPECT_EQ(js.status, 2);
  const auto d = nlohmann::json::parse(js.out);
  EXPECT_FALSE(d["feasible"].get<bool>());
  EXPECT_EQ(d, ReadJson(tmp / "json/result.json"));
  // A feasible run says so.
  const auto ok = testing::ShSplit(kBin + " --json --max-updates 1 --set episodes_per_update=2 --out " + (tmp / "ok"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(nlohmann::json::parse(ok.out)["feasible"].get<bool>());
}

// Every budget/count option at its maximum: the budgets run with bounded memory (`ulimit -v`)
// and stop within seconds of Ctrl-C, reporting what was done; --workers beyond what this
// machine can run is refused up front with one line.
TEST(PlaceTrainCliReport, EveryBudgetAtItsMaximumStopsOnCtrlCOrIsRefused) {
  testing::TempDir tmp;
  for (const std::string& args : {std::string("--minutes 10080"), std::string("--max-updates 9223372036854775807"),
                                   std::string("--minutes 10080 --worker-timeout 604800 --workers 2")}) {
    SCOPED_TRACE(args);
    const std::string out = tmp / ("run" + std::to_string(args.size()));
    const auto r = RunAndInterrupt(kBin + " " + args + " --set episodes_per_update=2 --json --out " + out,
                                   [&] { return FileLines(out + "/metrics.csv") >= 3; }, 240, SIGINT, 30, kAddressSpaceKb);
    ASSERT_TRUE(r.signalled) << r.err;
    ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = ReadJson(out + "/result.json");
    EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
    EXPECT_TRUE(j["feasible"].get<bool>());
    EXPECT_GE(j["updates"].get<int64_t>(), 2);
    // Ctrl-C between the two episodes of an update ends the collection there, and that update
    // learns from the one episode played (TrainChip): 2·updates − 1 or 2·updates episodes.
    EXPECT_LE(j["episodes"].get<int64_t>(), 2 * j["updates"].get<int64_t>());
    EXPECT_GE(j["episodes"].get<int64_t>(), 2 * j["updates"].get<int64_t>() - 1);
    EXPECT_EQ(FileLines(out + "/metrics.csv"), 1 + j["updates"].get<int64_t>());
    EXPECT_TRUE(fs::exists(out + "/checkpoints/latest.ckpt"));
    EXPECT_TRUE(fs::exists(out + "/best.plc"));
  }
  const auto w = Sh(kBin + " --workers 1024 --out " + (tmp / "many"));
  EXPECT_EQ(w.status, 1) << w.out;
  EXPECT_EQ(std::count(w.out.begin(), w.out.end(), '\n'), 1) << w.out;
  EXPECT_NE(w.out.find("--workers 1024: at most"), std::string::npos) << w.out;
  EXPECT_FALSE(fs::exists(tmp / "many"));
}

TEST(PlaceTrainCliReport, HelpNamesTheDeviceEnvironment) {
  const auto r = Sh(kBin + " --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--env device --help"), std::string::npos) << r.out;
  const auto d = Sh(kBin + " --env device --help");
  EXPECT_EQ(d.status, 0);
  EXPECT_NE(d.out.find("--graph"), std::string::npos) << d.out;
}

}  // namespace report
// Issue 29 item 7: config.pbtxt kept the input paths as given (relative to the working
// directory), so a run resumed from another directory failed with "cannot open".
TEST(PlaceTrainCli, ARunResumesFromAnotherWorkingDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "run";
  const std::string tiles = "../shared/datasets/chip/circuit_training/macro_tiles_10x10/";
  const auto r = Sh(kBin + " --netlist " + tiles + "netlist.pb.txt --plc " + tiles +
                    "initial.plc --minutes 10 --max-updates 1 --set episodes_per_update=2 --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  EXPECT_NE(config.find("netlists: \"/"), std::string::npos) << config;
  EXPECT_NE(config.find("plcs: \"/"), std::string::npos) << config;
  const auto resumed = Sh("(cd " + tmp.path() + " && " + kBin + " --resume " + out + " --max-updates 2 --json 2>/dev/null)");
  ASSERT_EQ(resumed.status, 0) << resumed.out;
  EXPECT_EQ(nlohmann::json::parse(resumed.out)["updates"].get<int>(), 2);
}

// Issue 29 item 8: `--resume DIR --set agent.learning_rate=0.1` was accepted and overwrote
// config.pbtxt's record of the run and its command line. A resumed run keeps its settings; a
// longer budget is recorded under the first command line.
TEST(PlaceTrainCli, ResumeRefusesSettingChangesAndKeepsTheRunsRecord) {
  testing::TempDir tmp;
  const std::string out = tmp / "run";
  ASSERT_EQ(Sh(kBin + " --minutes 10 --max-updates 1 --set episodes_per_update=2 --out " + out).status, 0);
  const std::string before = testing::Slurp(out + "/config.pbtxt");
  const auto r = Sh(kBin + " --resume " + out + " --set agent.learning_rate=0.1 --max-updates 1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("asked for agent.learning_rate 0.1 (the run's: 0.002)"), std::string::npos) << r.out;
  EXPECT_EQ(testing::Slurp(out + "/config.pbtxt"), before);
  EXPECT_EQ(Lines(out + "/metrics.csv"), 2);
  // A longer budget (--minutes, --checkpoint-minutes) is the change a resume may make.
  const auto longer = Sh(kBin + " --resume " + out + " --minutes 20 --checkpoint-minutes 2 --max-updates 2");
  ASSERT_EQ(longer.status, 0) << longer.out;
  const std::string after = testing::Slurp(out + "/config.pbtxt");
  const std::string first_line = before.substr(0, before.find('\n') + 1);
  EXPECT_EQ(after.rfind(first_line + "# resumed: ", 0), 0u) << after;
  EXPECT_NE(after.find("\nrun {\n  minutes: 20\n"), std::string::npos) << after;  // (the budget is run.*)
  EXPECT_NE(after.find("\n  checkpoint_minutes: 2\n"), std::string::npos) << after;
  // The old keys of the budget still work on --resume (deprecated aliases of run.*).
  const auto old_key = Sh(kBin + " --resume " + out + " --set minutes=30 --max-updates 2");
  ASSERT_EQ(old_key.status, 0) << old_key.out;
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("\nrun {\n  minutes: 30\n"), std::string::npos);
}

// Issue 29 item 10: the first checkpoint came after 5 minutes (checkpoint_minutes, not in
// --help), so a run killed earlier lost everything. The interval is an option and the first
// update is checkpointed; checkpointing leaves the run's curve alone (issue 30).
TEST(PlaceTrainCli, TheFirstUpdateIsCheckpointedAndTheIntervalIsAnOption) {
  testing::TempDir tmp;
  EXPECT_NE(Sh(kBin + " --help").out.find("--checkpoint-minutes"), std::string::npos);
  const std::string config = " --minutes 10 --seed 3 --max-updates 3 --set episodes_per_update=2";
  // Killed right after its first checkpoint: the first update's, not the end's.
  EXPECT_EQ(Sh(kBin + config + " --test-kill-after-checkpoints 1 --out " + (tmp / "killed")).status, 128 + 9);
  const auto state = nlohmann::json::parse(testing::Slurp(tmp / "killed/checkpoints/state.json"));
  EXPECT_EQ(state["iteration"].get<int>(), 1);
  ASSERT_EQ(Sh(kBin + " --resume " + (tmp / "killed") + " --max-updates 3").status, 0);
  // Checkpoints after every update, or after the first only: the same curve to the bit.
  ASSERT_EQ(Sh(kBin + config + " --checkpoint-minutes 1e-9 --out " + (tmp / "every")).status, 0);
  ASSERT_EQ(Sh(kBin + config + " --out " + (tmp / "first")).status, 0);
  const auto every = ReadMetrics(tmp / "every/metrics.csv"), first = ReadMetrics(tmp / "first/metrics.csv");
  ASSERT_EQ(every.size(), 3u);
  ASSERT_EQ(first.size(), 3u);
  for (size_t i = 0; i < every.size(); ++i)
    for (const auto& [column, value] : every[i]) {
      if (column == "time_s" || column == "charts/SPS" || column.rfind("perf/", 0) == 0) continue;  // times
      EXPECT_EQ(value, first[i].at(column)) << "row " << i + 1 << " " << column;
    }
  ExpectSameCurve(every, ReadMetrics(tmp / "killed/metrics.csv"));
}

// Issue 29 item 10: `--workers 2` with a worker killed before the first checkpoint left
// config.pbtxt and an empty checkpoints/ (neither resumable nor replaceable without --force).
TEST(PlaceTrainCli, AWorkerDyingBeforeTheFirstCheckpointLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "new/died";
  const auto died = Sh(kBin + " --workers 2 --minutes 5 --set episodes_per_update=4 --test-fail-rank 1 --out " + out);
  EXPECT_EQ(died.status, 1) << died.out;
  EXPECT_NE(died.out.find("rank 1 exited with status 3"), std::string::npos) << died.out;
  EXPECT_FALSE(fs::exists(tmp / "new")) << Sh("find " + tmp.path()).out;
  // The same --out starts again without --force.
  EXPECT_EQ(Sh(kBin + " --minutes 10 --max-updates 1 --set episodes_per_update=2 --out " + out).status, 0);
}

}  // namespace
}  // namespace placerl
