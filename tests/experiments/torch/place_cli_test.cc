// place as a user runs it: a checkpoint trained (briefly) on the built-in synthetic chip is
// loaded on a netlist it was never trained on (Circuit Training's macro_tiles_10x10, another
// grid), zero-shot + fine-tuning + coordinate descent; the result is a legal, complete
// placement whose .plc scores to the reported cost; bad checkpoints fail with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir();
const std::string kTiles = "../shared/datasets/chip/circuit_training/macro_tiles_10x10/";

// --help is what it was when the binary was flags and library code in one file
// (tests/data/place_help.txt, written by that binary; its path as "place").
TEST(PlaceCli, HelpIsUnchanged) {
  EXPECT_EQ(testing::HelpAsNamed(kBin + "/place", "place"), testing::Slurp("tests/data/place_help.txt"));
}

TEST(PlaceCli, RunsATrainedPolicyOnANetlistItWasNotTrainedOn) {
  testing::TempDir tmp;
  ASSERT_EQ(Sh(kBin + "/place-train --minutes 0.03 --set episodes_per_update=4 --out " + (tmp / "train") + " >/dev/null 2>&1").status, 0);
  const auto r = Sh("(" + kBin + "/place --checkpoint " + (tmp / "train") + " --netlist " + kTiles + "netlist.pb.txt --plc " +
                    kTiles + "initial.plc --samples 4 --finetune-minutes 0.03 --refine cd --json --out " + (tmp / "place") +
                    " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const double best = j["best"]["proxy_cost"];
  EXPECT_GT(best, 0);
  EXPECT_LE(best, j["stages"]["zero_shot"]["best_proxy_cost"].get<double>() + 1e-9);
  EXPECT_TRUE(j["stages"].contains("finetune"));
  EXPECT_TRUE(j["stages"].contains("refine"));
  for (const char* f : {"best.plc", "best.png", "curve.png", "metrics.csv", "result.json", "config.pbtxt"})
    EXPECT_TRUE(fs::exists(tmp / ("place/" + std::string(f)))) << f;
  const auto p = Sh("(" + kBin + "/proxy-cost --json --netlist " + kTiles + "netlist.pb.txt --plc " + (tmp / "place/best.plc") + " 2>/dev/null)");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_NEAR(nlohmann::json::parse(p.out)["proxy_cost"].get<double>(), best, 1e-6);
}

// The pretrained policy shipped in the repository loads and places a design it never saw.
// chip.cost_map is part of the policy's inputs: a policy trained with cost_map=proxy (or split:
// seven maps) is placed with it (place takes it from the checkpoint), whatever the config says.
TEST(PlaceCli, TakesTheCostMapFromTheCheckpoint) {
  for (const std::string map : {"proxy", "split"}) {
    testing::TempDir tmp;
    ASSERT_EQ(Sh(kBin + "/place-train --max-updates 1 --set episodes_per_update=2 --set chip.cost_map=" + map + " --out " +
                 (tmp / "train") + " >/dev/null 2>&1").status, 0) << map;
    const auto r = Sh("(" + kBin + "/place --checkpoint " + (tmp / "train") + " --samples 2 --set chip.cost_map=wirelength --json --out " +
                      (tmp / "place") + " 2>/dev/null)");
    ASSERT_EQ(r.status, 0) << map << ": " << r.out;
    EXPECT_GT(nlohmann::json::parse(r.out)["best"]["proxy_cost"].get<double>(), 0) << map;
    EXPECT_EQ(Sh("grep -c 'cost_map: \"" + map + "\"' " + (tmp / "place/config.pbtxt")).out, "1\n") << map;
  }
}

// --refine learned-sa: the policy's best placement refined by the learned annealer (sa-soft's moves,
// the shipped proposer): it ran (moves counted), never ends above the zero-shot best, and the
// written best.plc scores what the result says.
TEST(PlaceCli, RefinesWithTheShippedLearnedAnnealer) {
  testing::TempDir tmp;
  const auto r = Sh("(" + kBin + "/place --checkpoint experiments/pretrained/chip --samples 2 --refine learned-sa "
                    "--refine-minutes 0.02 --clock cpu --json --out " + (tmp / "refined") + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["stages"].contains("refine")) << r.out;
  EXPECT_EQ(j["stages"]["refine"]["method"], "learned-sa");
  EXPECT_GT(j["stages"]["refine"]["evaluations"].get<int64_t>(), 0);
  const double best = j["best"]["proxy_cost"];
  EXPECT_LE(best, j["stages"]["zero_shot"]["best_proxy_cost"].get<double>() + 1e-12);
  const auto p = Sh("(" + kBin + "/proxy-cost --json --plc " + (tmp / "refined/best.plc") + " 2>/dev/null)");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_NEAR(nlohmann::json::parse(p.out)["proxy_cost"].get<double>(), best, 1e-6);
}

TEST(PlaceCli, TheShippedPretrainedPolicyRunsOnAFreshClone) {
  testing::TempDir tmp;
  const auto r = Sh("(" + kBin + "/place --checkpoint experiments/pretrained/chip --netlist " + kTiles +
                    "netlist.pb.txt --plc " + kTiles + "initial.plc --samples 2 --json --out " + (tmp / "zs") + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["best"]["proxy_cost"].get<double>(), 0);
  EXPECT_TRUE(fs::exists(tmp / "zs/best.plc"));
}

// Fine-tuning takes the agent block and the budget clock of the config (so that a fine-tuned
// run and a from-scratch place-train run can be given the same hyper-parameters and CPU budget).
TEST(PlaceCli, FineTuningUsesTheConfiguredAgentAndClock) {
  testing::TempDir tmp;
  ASSERT_EQ(Sh(kBin + "/place-train --minutes 0.02 --set episodes_per_update=4 --out " + (tmp / "train") + " >/dev/null 2>&1").status, 0);
  const auto r = Sh("(" + kBin + "/place --checkpoint " + (tmp / "train") + " --samples 1 --finetune-minutes 0.02 --clock cpu " +
                    "--set agent.minibatch_size=64 --set agent.learning_rate=0.002 --set collect_batch=2 --json --out " +
                    (tmp / "place") + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["clock"], "cpu");
  EXPECT_GT(j["stages"]["finetune"]["episodes"].get<int64_t>(), 0);
  // The policy's entropy at the first and last update (a sampling policy over many cells: > 0).
  const auto& ft = j["stages"]["finetune"];
  if (ft["updates"].get<int64_t>() > 0) {
    EXPECT_GT(ft["entropy_first_update"].get<double>(), 0) << ft.dump();
    EXPECT_GT(ft["entropy_last_update"].get<double>(), 0) << ft.dump();
  } else {
    EXPECT_TRUE(ft["entropy_first_update"].is_null()) << ft.dump();
  }
  const auto c = Sh("cat " + (tmp / "place/config.pbtxt"));
  EXPECT_NE(c.out.find("clock: \"cpu\""), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("minibatch_size: 64"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("collect_batch: 2"), std::string::npos) << c.out;
}

TEST(PlaceCli, BadCheckpointsAndOptionsAreOneLineErrors) {
  testing::TempDir tmp;
  Sh("echo garbage > " + (tmp / "bad.ckpt"));
  for (const std::string& args : {"--checkpoint " + (tmp / "bad.ckpt"), "--checkpoint " + (tmp / "nosuch.ckpt"),
                                  "--checkpoint " + tmp.path(), std::string("--refine tabu --checkpoint x"),
                                  std::string("--samples -1 --checkpoint x"), std::string("--clock sundial --checkpoint x"),
                                  std::string("--set agent.learning_rate=5 --checkpoint x"),
                                  std::string("--set collect_batch=0 --checkpoint x"), std::string("")}) {
    const auto r = Sh(kBin + "/place " + args + " --out " + (tmp / "out"));
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(tmp / "out")) << args;
  }
}


// ------------------------------------------------------------ what a run reports

namespace report {

using testing::FileLines;
using testing::RunAndInterrupt;
const std::string kAriane = "../shared/datasets/chip/ariane133_ng45/";
// Address space per process (`ulimit -v`, KiB): LibTorch maps a few GB; a normal run fits.
constexpr long kAddressSpaceKb = 6000000;

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// A policy trained for one update on the built-in chip: loads on any design.
std::string TinyCheckpoint(const testing::TempDir& tmp) {
  const std::string dir = tmp / "train";
  EXPECT_EQ(Sh(kBin + "/place-train --max-updates 1 --set episodes_per_update=2 --out " + dir + " >/dev/null 2>&1").status, 0);
  return dir;
}

// `place --samples 1000000` stopped by Ctrl-C recorded "samples": 1000000 and no
// stopped_by_signal: the run reports the samples it played and that a signal stopped it.
TEST(PlaceCliReport, CtrlCDuringTheSamplesReportsTheSamplesDone) {
  testing::TempDir tmp;
  const std::string ckpt = TinyCheckpoint(tmp);
  const std::string out = tmp / "zs";
  const auto r = RunAndInterrupt(kBin + "/place --checkpoint " + ckpt + " --samples 1000000 --json --out " + out,
                                 [&] { return FileLines(out + "/metrics.csv") >= 6; }, 120, SIGINT, 30, kAddressSpaceKb);
  ASSERT_TRUE(r.signalled) << r.err;
  ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = ReadJson(out + "/result.json");
  EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
  const auto& zs = j["stages"]["zero_shot"];
  EXPECT_EQ(zs["samples_requested"].get<int64_t>(), 1000000);
  const int64_t done = zs["samples"].get<int64_t>();
  EXPECT_GE(done, 4);
  EXPECT_LT(done, 1000000);
  EXPECT_EQ(FileLines(out + "/metrics.csv"), 1 + 1 + done);  // header, greedy, one row per sample
  EXPECT_EQ(nlohmann::json::parse(r.out), j);                // --json prints result.json
  EXPECT_NE(r.err.find("of 1000000 samples, stopped"), std::string::npos) << r.err;
}

// The other budgets at their maximum (a week) run and stop on Ctrl-C within seconds, keeping
// what was done; the stages a stop skipped are named.
TEST(PlaceCliReport, EveryBudgetAtItsMaximumStopsOnCtrlC) {
  testing::TempDir tmp;
  const std::string ckpt = TinyCheckpoint(tmp);
  struct Case {
    std::string args, stage;
    int lines;  // metrics.csv lines that show the stage has started (header + zero-shot rows + …)
    bool may_end = false;  // cd ends by itself when a round no longer improves (seconds on Ariane)
  };
  for (const Case& c : {Case{"--samples 2 --finetune-minutes 10080", "finetune", 5},
                        Case{"--samples 1 --refine sa --refine-minutes 10080", "refine", 3},
                        Case{"--samples 1 --refine cd --refine-minutes 10080 --netlist " + kAriane + "netlist.pb.txt.gz --plc " +
                                 kAriane + "initial.plc", "refine", 3, true}}) {
    SCOPED_TRACE(c.args);
    const std::string out = tmp / ("run_" + c.stage + std::to_string(c.args.size()));
    // Ctrl-C 3 s after the stage has started (refinement logs no rows until it ends).
    std::chrono::steady_clock::time_point started{};
    auto ready = [&] {
      if (FileLines(out + "/metrics.csv") < c.lines) return false;
      if (started == std::chrono::steady_clock::time_point{}) started = std::chrono::steady_clock::now();
      return std::chrono::steady_clock::now() - started > std::chrono::seconds(3);
    };
    const auto r = RunAndInterrupt(kBin + "/place --checkpoint " + ckpt + " " + c.args + " --out " + out, ready, 240, SIGINT,
                                   30, kAddressSpaceKb);
    if (!c.may_end) {
      ASSERT_TRUE(r.signalled) << r.err;
    }
    ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = ReadJson(out + "/result.json");
    ASSERT_TRUE(j["stages"].contains(c.stage)) << j.dump();
    if (c.may_end && r.signalled && !j["stopped_by_signal"].get<bool>()) {
      // cd ended by itself and the run wrote its result before the signal arrived (seen once on a
      // loaded machine): a complete run, whose refinement did its work.
      EXPECT_GT(j["stages"][c.stage]["evaluations"].get<int64_t>(), 0) << j.dump();
    } else {
      EXPECT_EQ(j["stopped_by_signal"].get<bool>(), r.signalled);
    }
    EXPECT_EQ(j["stages"][c.stage]["budget_seconds"].get<double>(), 10080 * 60.0);
    EXPECT_LT(j["stages"][c.stage]["seconds"].get<double>(), 600);
    EXPECT_TRUE(fs::exists(out + "/best.plc"));
  }
}

// place on a design where no placement completes (Ariane without its .plc: the default 10×10
// grid) exited 2 with nothing on stdout and no result.json: now the shared infeasible report.
TEST(PlaceCliReport, NoCompletePlacementIsTheSharedInfeasibleReport) {
  testing::TempDir tmp;
  const std::string ckpt = TinyCheckpoint(tmp);
  const auto r = testing::ShSplit(kBin + "/place --checkpoint " + ckpt + " --netlist " + kAriane +
                                  "netlist.pb.txt.gz --samples 2 --json --out " + (tmp / "zs"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("place: infeasible: no complete placement"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_TRUE(j["best"]["proxy_cost"].is_null());
  EXPECT_TRUE(j["result_cost"].is_null());
  EXPECT_EQ(j, ReadJson(tmp / "zs/result.json"));
  EXPECT_FALSE(fs::exists(tmp / "zs/best.plc"));
  // Text mode: no cost, no best.plc named.
  const auto t = testing::ShSplit(kBin + "/place --checkpoint " + ckpt + " --netlist " + kAriane +
                                  "netlist.pb.txt.gz --samples 1 --out " + (tmp / "zs2"));
  EXPECT_EQ(t.status, 2);
  EXPECT_EQ(t.out.find("best.plc"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("no feasible solution"), std::string::npos) << t.out;
}

// Zero-shot ended worse than the input placement without saying so: the input's cost is
// reported next to the result, and --keep-better writes the input as best.plc when it wins.
TEST(PlaceCliReport, TheInputPlacementIsReportedAndKeptWhenBetter) {
  testing::TempDir tmp;
  const std::string ckpt = TinyCheckpoint(tmp);
  const std::string plc = kAriane + "legalized.plc";  // CT's legal placement: a one-update policy does worse
  const auto pc = Sh("(" + kBin + "/proxy-cost --json --netlist " + kAriane + "netlist.pb.txt.gz --plc " + plc + " 2>/dev/null)");
  ASSERT_EQ(pc.status, 0) << pc.out;
  const double input = nlohmann::json::parse(pc.out)["proxy_cost"].get<double>();
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep);
    const std::string out = tmp / (keep ? "keep" : "plain");
    const auto r = testing::ShSplit(kBin + "/place --checkpoint " + ckpt + " --netlist " + kAriane + "netlist.pb.txt.gz --plc " +
                                    plc + " --samples 0 " + (keep ? "--keep-better " : "") + "--out " + out);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = ReadJson(out + "/result.json");
    EXPECT_NEAR(j["input_cost"].get<double>(), input, 1e-9);
    EXPECT_TRUE(j["input"]["legal"].get<bool>());
    const double result = j["result_cost"].get<double>();
    ASSERT_GT(result, input) << "the test needs a result worse than the input";
    EXPECT_NE(r.out.find("input placement: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(worse by "), std::string::npos) << r.out;
    EXPECT_EQ(j["kept"], keep ? "input" : "result");
    const auto best = Sh("(" + kBin + "/proxy-cost --json --netlist " + kAriane + "netlist.pb.txt.gz --plc " + out +
                         "/best.plc 2>/dev/null)");
    ASSERT_EQ(best.status, 0) << best.out;
    EXPECT_NEAR(nlohmann::json::parse(best.out)["proxy_cost"].get<double>(), keep ? input : result, 1e-6);
    EXPECT_NEAR(j["best"]["proxy_cost"].get<double>(), keep ? input : result, 1e-6);
  }
}

TEST(PlaceCliReport, HelpNamesTheDeviceEnvironment) {
  const auto r = Sh(kBin + "/place --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--env"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--env device --help"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--keep-better"), std::string::npos) << r.out;
}

}  // namespace report
// Issue 29 item 1 (chip side): place re-created the environment from its own defaults instead
// of the training run's (weights, FD schedule, reward). The checkpoint carries them; place uses
// them, and a setting the user changes is a warning naming both values.
TEST(PlaceCli, UsesTheTrainingRunsEnvironmentSettings) {
  testing::TempDir tmp;
  ASSERT_EQ(Sh(kBin + "/place-train --max-updates 1 --set episodes_per_update=2 --set chip.density_weight=1 "
                      "--set chip.fd_steps_scale=0.5 --set chip.reward=dense --out " + (tmp / "train") + " >/dev/null 2>&1").status,
            0);
  const auto same = testing::ShSplit(kBin + "/place --checkpoint " + (tmp / "train") + " --samples 1 --json --out " + (tmp / "same"));
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err.find("CKPT-0001"), std::string::npos) << same.err;
  const auto j = nlohmann::json::parse(same.out);
  EXPECT_TRUE(j["trained_settings"]["recorded"].get<bool>());
  EXPECT_TRUE(j["trained_settings"]["changed"].empty());
  const std::string config = testing::Slurp(tmp / "same/config.pbtxt");
  for (const char* line : {"  density_weight: 1\n", "  fd_steps_scale: 0.5\n", "  reward: \"dense\"\n"})
    EXPECT_NE(config.find(line), std::string::npos) << line << config;
  // Asked for another weight: used, and said.
  const auto changed = testing::ShSplit(kBin + "/place --checkpoint " + (tmp / "train") +
                                        " --samples 1 --set chip.density_weight=0.5 --json --out " + (tmp / "changed"));
  ASSERT_EQ(changed.status, 0) << changed.err;
  EXPECT_NE(changed.err.find("place: warning [CKPT-0001]: using chip.density_weight 0.5 as asked; " + (tmp / "train") +
                             "/checkpoints/latest.ckpt was trained with 1"),
            std::string::npos)
      << changed.err;
  EXPECT_EQ(nlohmann::json::parse(changed.out)["trained_settings"]["changed"]["chip.density_weight"]["trained"], "1");
  EXPECT_NE(testing::Slurp(tmp / "changed/config.pbtxt").find("  density_weight: 0.5\n"), std::string::npos);
}

// Issue 29 item 1 (chip grid): a design the policy was trained on, placed without the .plc it
// was trained with (another canvas and grid), is a warning naming both.
TEST(PlaceCli, WarnsWhenATrainingDesignIsPlacedOnAnotherGrid) {
  testing::TempDir tmp;
  ASSERT_EQ(Sh(kBin + "/place-train --netlist " + kTiles + "netlist.pb.txt --plc " + kTiles +
               "initial.plc --max-updates 1 --set episodes_per_update=2 --out " + (tmp / "train") + " >/dev/null 2>&1").status,
            0);
  const auto r = testing::ShSplit(kBin + "/place --checkpoint " + (tmp / "train") + " --netlist " + kTiles +
                                  "netlist.pb.txt --samples 1 --json --out " + (tmp / "place"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("place: warning [CKPT-0001]: placing " + kTiles + "netlist.pb.txt with no .plc (the default grid); "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("initial.plc"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["trained_settings"]["changed"]["chip.plc"]["used"], "no .plc (the default grid)");
}

// Issue 29 item 9: checkpoints carry a checksum; a damaged or cut one is refused naming the file
// and the reason (place and a resume of place-train alike), with nothing written.
TEST(PlaceCli, DamagedOrTruncatedCheckpointsAreRefusedNamingTheFile) {
  testing::TempDir tmp;
  const std::string run = tmp / "train";
  ASSERT_EQ(Sh(kBin + "/place-train --max-updates 1 --set episodes_per_update=2 --out " + run + " >/dev/null 2>&1").status, 0);
  const std::string ckpt = run + "/checkpoints/latest.ckpt";
  const std::string bytes = testing::Slurp(ckpt);
  std::string flipped = bytes;
  for (size_t i = 0; i < 4; ++i) flipped[bytes.size() / 2 + i] = static_cast<char>(~flipped[bytes.size() / 2 + i]);
  testing::Spit(tmp / "flipped.ckpt", flipped);
  testing::Spit(tmp / "cut.ckpt", bytes.substr(0, bytes.size() / 2));
  for (const auto& [file, reason] : std::vector<std::pair<std::string, std::string>>{
           {tmp / "flipped.ckpt", "damaged checkpoint (checksum mismatch"}, {tmp / "cut.ckpt", "truncated checkpoint"}}) {
    const auto r = Sh(kBin + "/place --checkpoint " + file + " --samples 1 --out " + (tmp / "out"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_EQ(r.out.rfind("place: error: " + file + ": " + reason, 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(tmp / "out"));
  }
  testing::Spit(ckpt, bytes.substr(0, bytes.size() / 2));
  const auto resumed = Sh(kBin + "/place-train --resume " + run + " --max-updates 2");
  EXPECT_EQ(resumed.status, 1) << resumed.out;
  EXPECT_EQ(resumed.out.rfind("place-train: error: " + ckpt + ": truncated checkpoint", 0), 0u) << resumed.out;
}

}  // namespace
}  // namespace placerl
