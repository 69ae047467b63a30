// place-train / place --env device as a user runs them: a short PPO run on the two-tower MLP
// training graph writes the run directory, and its best.placement re-simulated by
// `perf-model simulate --machine` gives result.json's step time exactly; `place --env device`
// loads the checkpoint on a graph it was not trained on (zero-shot + a short fine-tune); a big
// graph is placed fused and scored on its ops; a run killed after a checkpoint and resumed
// logs the same curve as one that was never stopped; bad input is one line, exit 1, no directory.
// HDP (--method hdp, HdpCli): the preset writes the usual run directory (best.placement
// re-simulates to the same step time, grouper checkpoint, --resume) and bad options are one
// line, exit 1, no directory. Graph specs split at top-level commas only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include <csignal>

#include "experiments/lib/torch/device_programs.h"
#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir();
const std::string kMlp = "tests/data/device/mlp_training.graph";
const std::string kMachine = "k80(gpus=2)";

double SimulatedStepTime(const std::string& graph, const std::string& placement) {
  const auto p = ShSplit(kBin + "/perf-model simulate --json --machine '" + kMachine + "' --graph '" + graph +
                         "' --placement " + placement);
  EXPECT_EQ(p.status, 0) << p.err;
  return p.out.empty() ? -1 : nlohmann::json::parse(p.out)["makespan_s"].get<double>();
}

TEST(PlaceTrainDeviceCli, TrainsWritesTheRunDirectoryAndPlaceLoadsTheCheckpointElsewhere) {
  testing::TempDir tmp;
  const std::string out = tmp / "train";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine +
                         "' --minutes 0.03 --seed 3 --json --set episodes_per_update=4 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["updates"].get<int>(), 1);
  EXPECT_EQ(j["episodes"].get<int>(), 4 * j["updates"].get<int>());
  for (const char* f : {"config.pbtxt", "best.placement", "best.png", "curve.png", "metrics.csv", "result.json",
                        "checkpoints/latest.ckpt"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const auto& g = j["graphs"][0];
  EXPECT_EQ(g["groups"].get<int>(), 16);
  EXPECT_FALSE(g["fused"].get<bool>());
  const double t = g["step_time_s"].get<double>();
  EXPECT_GT(t, 0);
  EXPECT_EQ(SimulatedStepTime(kMlp, out + "/best.placement"), t);  // the same simulator, bit for bit

  // A graph the policy never saw (same machine → same device head).
  const std::string other = "layered(ops=40,width=4,fan_in=2,seed=5)";
  const std::string placed = tmp / "place";
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + other + "' --machine '" +
                         kMachine + "' --samples 3 --finetune-minutes 0.01 --set episodes_per_update=2 --json --out " + placed);
  ASSERT_EQ(p.status, 0) << p.err;
  const auto pj = nlohmann::json::parse(p.out);
  EXPECT_TRUE(pj["stages"].contains("zero_shot"));
  EXPECT_TRUE(pj["stages"].contains("finetune"));
  EXPECT_EQ(pj["clock"], "wall");  // the default clock of the fine-tuning budget
  const double best = pj["best"]["step_time_s"].get<double>();
  EXPECT_LE(pj["best"]["effective_time_s"].get<double>(), pj["stages"]["zero_shot"]["greedy_effective_time_s"].get<double>());
  for (const char* f : {"config.pbtxt", "best.placement", "best.png", "curve.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(placed + "/" + f)) << f;
  EXPECT_EQ(SimulatedStepTime(other, placed + "/best.placement"), best);

  // A checkpoint for 3 devices does not load on a 5-device machine: one line, exit 1.
  const auto bad = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + other +
                           "' --machine 'k80(gpus=4)' --out " + (tmp / "never"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("place: error:"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(tmp / "never"));
}

// The seq2seq preset (experiments/configs/seq2seq_2017.pbtxt): REINFORCE with the LSTM policy
// trains, its checkpoint names the preset, and `place` runs it zero-shot on another graph (the
// LSTM is tied to the device count, not to the graph) and fine-tunes it.
TEST(PlaceTrainDeviceCli, Seq2SeqConfigTrainsAndPlaceLoadsIt) {
  testing::TempDir tmp;
  const std::string out = tmp / "seq2seq";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine +
                         "' --config experiments/configs/seq2seq_2017.pbtxt --minutes 0.03 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["algorithm"], "reinforce");
  ASSERT_GE(j["updates"].get<int>(), 1);
  EXPECT_EQ(j["episodes"].get<int>(), 4 * j["updates"].get<int>());  // 4 placements per update
  const std::string config = Sh("cat " + out + "/config.pbtxt").out;
  EXPECT_NE(config.find("preset: \"lstm\""), std::string::npos) << config;
  EXPECT_NE(config.find("logit_temperature: 10"), std::string::npos) << config;
  const std::string placed = tmp / "place";
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph 'layered(ops=40,width=4,fan_in=2,seed=5)' " +
                         "--machine '" + kMachine + "' --samples 3 --finetune-minutes 0.01 --set episodes_per_update=2 " +
                         "--clock cpu --json --out " + placed);
  ASSERT_EQ(p.status, 0) << p.err;
  const auto pj = nlohmann::json::parse(p.out);
  EXPECT_TRUE(pj["stages"].contains("zero_shot"));
  EXPECT_TRUE(pj["stages"].contains("finetune"));
  EXPECT_EQ(pj["clock"], "cpu");  // --clock cpu: the fine-tuning budget counts this process's CPU seconds
  EXPECT_NE(Sh("cat " + placed + "/config.pbtxt").out.find("clock: \"cpu\""), std::string::npos);
}

TEST(PlaceTrainDeviceCli, BigGraphIsPlacedFusedAndScoredOnItsOps) {
  testing::TempDir tmp;
  const std::string out = tmp / "fused";
  const std::string graph = "layered(ops=120,width=6,fan_in=2,seed=2)";
  const auto r = ShSplit(kBin + "/place-train --env device --graph '" + graph + "' --machine '" + kMachine +
                         "' --minutes 0.02 --json --set episodes_per_update=2 --set fuse_above_groups=50 "
                         "--set fuse_target_groups=10 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto g = nlohmann::json::parse(r.out)["graphs"][0];
  EXPECT_TRUE(g["fused"].get<bool>());
  EXPECT_LE(g["placed_groups"].get<int>(), 10);
  EXPECT_EQ(g["groups"].get<int>(), 120);
  EXPECT_EQ(SimulatedStepTime(graph, out + "/best.placement"), g["step_time_s"].get<double>());
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

TEST(PlaceTrainDeviceCli, ResumeAfterKillContinuesTheSameCurve) {
  testing::TempDir tmp;
  const std::string config = " --env device --graph " + kMlp + " --machine '" + kMachine +
                             "' --minutes 10 --seed 3 --max-updates 6 --set episodes_per_update=4"
                             " --set checkpoint_minutes=1e-9";
  const auto a_run = ShSplit(kBin + "/place-train" + config + " --json --out " + (tmp / "a"));
  ASSERT_EQ(a_run.status, 0) << a_run.err;
  // B: the same run, SIGKILLed right after its 3rd checkpoint (nothing but the checkpoint and
  // three metric rows written), then resumed with only the directory.
  EXPECT_EQ(ShSplit(kBin + "/place-train" + config + " --test-kill-after-checkpoints 3 --out " + (tmp / "b")).status,
            128 + 9);
  EXPECT_FALSE(fs::exists(tmp / "b/result.json"));
  EXPECT_EQ(ReadMetrics(tmp / "b/metrics.csv").size(), 3u);
  const auto state = nlohmann::json::parse(std::ifstream(tmp / "b/checkpoints/state.json"));
  EXPECT_EQ(state["iteration"].get<int>(), 3);
  EXPECT_EQ(state["episodes"].get<int>(), 12);
  // Changing what the run is about is refused; the budget may change.
  const auto refused = ShSplit(kBin + "/place-train --env device --resume " + (tmp / "b") + " --seed 4");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("--resume keeps the run's graphs"), std::string::npos) << refused.err;
  const auto resumed = ShSplit(kBin + "/place-train --env device --resume " + (tmp / "b") + " --max-updates 6 --json");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto ja = nlohmann::json::parse(a_run.out), jb = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(jb["updates"].get<int>(), 6);
  EXPECT_EQ(jb["episodes"].get<int>(), ja["episodes"].get<int>());
  // The same best placement, found in the first or the second half.
  EXPECT_EQ(jb["graphs"][0]["step_time_s"].get<double>(), ja["graphs"][0]["step_time_s"].get<double>());
  EXPECT_EQ(SimulatedStepTime(kMlp, tmp / "b/best.placement"), jb["graphs"][0]["step_time_s"].get<double>());
  const auto a = ReadMetrics(tmp / "a/metrics.csv"), b = ReadMetrics(tmp / "b/metrics.csv");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (const auto& [column, value] : a[i]) {
      if (column == "time_s" || column == "charts/SPS" || column.rfind("perf/", 0) == 0) continue;  // times
      if (column.rfind("losses/", 0) == 0) {
        // float32 sums of the resumed process may round differently (as on the chip path).
        const double x = std::stod(value), y = std::stod(b[i].at(column));
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(x))) << "row " << i + 1 << " " << column;
      } else {
        EXPECT_EQ(value, b[i].at(column)) << "row " << i + 1 << " " << column;
      }
    }
  }
  // Nothing to resume from: one line, exit 1.
  const std::string empty = tmp / "c";
  ASSERT_EQ(ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --minutes 10 --max-updates 1 --out " + empty).status, 0);
  fs::remove_all(fs::path(empty) / "checkpoints");
  const auto none = ShSplit(kBin + "/place-train --env device --resume " + empty);
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("no checkpoint to resume from"), std::string::npos) << none.err;
}

// fuse_max_group_fraction: a new run writes the default (0.5) into config.pbtxt; a run whose
// config.pbtxt has no such line (started before the key) resumes with it off (0), not 0.5.
TEST(PlaceTrainDeviceCli, FuseMaxGroupFractionDefaultAndOldRunsKeepTheirFusion) {
  testing::TempDir tmp;
  const std::string out = tmp / "d";
  ASSERT_EQ(ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --minutes 10 --max-updates 1 " +
                    "--set episodes_per_update=2 --out " + out).status, 0);
  const std::string cfg_path = out + "/config.pbtxt";
  std::string text;
  {
    std::ifstream f(cfg_path);
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const size_t at = text.find("fuse_max_group_fraction: 0.5\n");
  ASSERT_NE(at, std::string::npos) << text;
  text.erase(at, std::string("fuse_max_group_fraction: 0.5\n").size());
  std::ofstream(cfg_path) << text;
  const auto resumed = ShSplit(kBin + "/place-train --env device --resume " + out + " --max-updates 2");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto cfg = ShSplit("cat " + cfg_path);
  EXPECT_NE(cfg.out.find("\n  fuse_max_group_fraction: 0\n"), std::string::npos) << cfg.out;  // (in env { })
}

TEST(PlaceTrainDeviceCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--graph ") + kMlp + " --minutes 0", std::string("--graph ") + kMlp + " --algorithm sarsa",
        std::string("--graph ") + kMlp + " --set agent.clip=-1", std::string("--graph ") + kMlp + " --set oom=never",
        std::string("--graph /nonexistent.graph"), std::string("--graph ") + kMlp + " --machine 'k80(gpus=0,cpu=0)'",
        std::string("--graph ") + kMlp + " --set fuse_above_groups=-1", std::string("--machine 'k80(gpus=2)'"),
        std::string("--graph ") + kMlp + " --set features=all", std::string("--graph ") + kMlp + " --set order=sideways",
        std::string("--graph ") + kMlp + " --set reward=relativ",
        std::string("--graph ") + kMlp + " --set fuse_max_group_fraction=1.5",
        std::string("--graph ") + kMlp + " --set fuse_max_group_fraction=-0.25",
        std::string("--graph ") + kMlp + " --set fuse_max_group_fraction=nan"}) {
    const auto r = ShSplit(kBin + "/place-train --env device " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("place-train: error:"), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const auto r = ShSplit(kBin + "/place --env device --checkpoint /nonexistent.ckpt --graph " + kMlp + " --out " + out);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// features=heft / order=rank / reward=relative reach the environment; place takes the
// checkpoint's features by itself (the heft policy does not load on basic features).
TEST(PlaceTrainDeviceCli, HeftFeaturesTrainAndPlaceReadsThemFromTheCheckpoint) {
  testing::TempDir tmp;
  const std::string out = tmp / "heft";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine +
                         "' --minutes 0.02 --json --set episodes_per_update=2 --set features=heft --set order=rank "
                         "--set reward=relative --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const double t = nlohmann::json::parse(r.out)["graphs"][0]["step_time_s"].get<double>();
  EXPECT_EQ(SimulatedStepTime(kMlp, out + "/best.placement"), t);
  const std::string placed = tmp / "place";
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + kMlp + "' --machine '" +
                         kMachine + "' --samples 2 --set order=rank --json --out " + placed);
  ASSERT_EQ(p.status, 0) << p.err;
  const auto cfg = ShSplit("cat " + placed + "/config.pbtxt");
  EXPECT_NE(cfg.out.find("features: \"heft\""), std::string::npos) << cfg.out;
  const auto basic = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + kMlp + "' --machine '" +
                             kMachine + "' --samples 1 --set features=basic --out " + (tmp / "never"));
  EXPECT_EQ(basic.status, 1) << basic.err;
  EXPECT_NE(basic.err.find("place: error:"), std::string::npos) << basic.err;
}


// ------------------------------------------------------------ what a run reports

namespace report {

using testing::FileLines;
using testing::RunAndInterrupt;
constexpr long kAddressSpaceKb = 6000000;  // `ulimit -v` per process (KiB): a normal run fits

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// The budgets at their maximum run with bounded memory and stop within seconds of Ctrl-C,
// reporting what was done; place --env device --samples 1000000 reports the samples played.
TEST(PlaceTrainDeviceCliReport, EveryBudgetAtItsMaximumStopsOnCtrlC) {
  testing::TempDir tmp;
  for (const std::string& args : {std::string("--minutes 10080"), std::string("--max-updates 9223372036854775807")}) {
    SCOPED_TRACE(args);
    const std::string out = tmp / (args[2] == 'm' && args[3] == 'i' ? "minutes" : "updates");
    const auto r = RunAndInterrupt(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine + "' " +
                                       args + " --set episodes_per_update=2 --json --out " + out,
                                   [&] { return FileLines(out + "/metrics.csv") >= 3; }, 240, SIGINT, 30, kAddressSpaceKb);
    ASSERT_TRUE(r.signalled) << r.err;
    ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = ReadJson(out + "/result.json");
    EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
    EXPECT_TRUE(j["feasible"].get<bool>());
    EXPECT_GE(j["updates"].get<int64_t>(), 2);
    EXPECT_EQ(FileLines(out + "/metrics.csv"), 1 + j["updates"].get<int64_t>());
  }
  // place --env device with a million samples, stopped.
  const std::string out = tmp / "place";
  const auto r = RunAndInterrupt(kBin + "/place --env device --checkpoint " + (tmp / "minutes") + " --graph " + kMlp +
                                     " --machine '" + kMachine + "' --samples 1000000 --json --out " + out,
                                 [&] { return FileLines(out + "/metrics.csv") >= 6; }, 240, SIGINT, 30, kAddressSpaceKb);
  ASSERT_TRUE(r.signalled) << r.err;
  ASSERT_TRUE(r.ended);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = ReadJson(out + "/result.json");
  EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
  const auto& zs = j["stages"]["zero_shot"];
  EXPECT_EQ(zs["samples_requested"].get<int64_t>(), 1000000);
  EXPECT_EQ(FileLines(out + "/metrics.csv"), 1 + 1 + zs["samples"].get<int64_t>());
  EXPECT_LT(zs["samples"].get<int64_t>(), 1000000);
}

// Out of memory on the devices is the shared infeasible report in place-train and place --env
// device: exit 2, one stderr line, result.json (and --json) with "feasible": false.
TEST(PlaceTrainDeviceCliReport, OutOfMemoryIsTheSharedInfeasibleReport) {
  testing::TempDir tmp;
  const std::string tiny = "k80(gpus=2,cpu=0,memory_fraction=0.0001)";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + tiny +
                         "' --max-updates 1 --set episodes_per_update=2 --json --out " + (tmp / "train"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("place-train: infeasible: "), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_EQ(j, ReadJson(tmp / "train/result.json"));
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + (tmp / "train") + " --graph " + kMlp + " --machine '" +
                         tiny + "' --samples 2 --json --out " + (tmp / "place"));
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(p.err.find("place: infeasible: "), std::string::npos) << p.err;
  const auto q = nlohmann::json::parse(p.out);
  EXPECT_FALSE(q["feasible"].get<bool>());
  EXPECT_EQ(q, ReadJson(tmp / "place/result.json"));
}

}  // namespace report
// Issue 29 item 1: after `place-train --env device … --set memory_mask=true`, `place` with the
// same graph and machine re-created the environment from its own defaults (memory_mask=false).
// The checkpoint carries the training run's environment; place uses it (the machine too, when
// none is given) and warns about each setting the user changes.
TEST(PlaceTrainDeviceCli, PlaceUsesTheTrainingRunsEnvironment) {
  testing::TempDir tmp;
  const std::string out = tmp / "train";
  const std::string machine = "k80(gpus=2,memory_fraction=0.39)";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + machine +
                         "' --minutes 10 --max-updates 1 --set episodes_per_update=2 --set memory_mask=true "
                         "--set oom_factor=7 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph " + kMlp +
                         " --samples 1 --json --out " + (tmp / "place"));
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(p.err.find("CKPT-0001"), std::string::npos) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_TRUE(j["trained_settings"]["recorded"].get<bool>());
  const std::string config = testing::Slurp(tmp / "place/config.pbtxt");
  EXPECT_NE(config.find("machine: \"" + machine + "\"\n"), std::string::npos) << config;
  EXPECT_NE(config.find("memory_mask: true\n"), std::string::npos) << config;
  EXPECT_NE(config.find("oom_factor: 7\n"), std::string::npos) << config;
  // Asked otherwise: used, and each difference said.
  const auto q = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph " + kMlp + " --machine '" + kMachine +
                         "' --set memory_mask=false --samples 1 --json --out " + (tmp / "asked"));
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_NE(q.err.find("place: warning [CKPT-0001]: using memory_mask false as asked; " + out +
                       "/checkpoints/latest.ckpt was trained with true"),
            std::string::npos)
      << q.err;
  EXPECT_NE(q.err.find("using machine \"" + kMachine + "\" as asked"), std::string::npos) << q.err;
  const auto changed = nlohmann::json::parse(q.out)["trained_settings"]["changed"];
  EXPECT_EQ(changed.size(), 2u) << changed.dump();
  EXPECT_NE(testing::Slurp(tmp / "asked/config.pbtxt").find("memory_mask: false\n"), std::string::npos);
}

// A regulator checkpoint (mode=iterative from HEFT's placement, docs/device_regulator.md) on a
// graph it never saw: `place` builds the episodes the policy was trained on (before, it built
// one-shot episodes and refused the checkpoint: the action features differ), so every sample is a
// search episode from the best placement so far — never above HEFT's — and --samples-minutes
// bounds that search.
TEST(PlaceTrainDeviceCli, PlaceRunsARegulatorCheckpointAsASearchFromHeft) {
  testing::TempDir tmp;
  const std::string out = tmp / "train";
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine +
                         "' --minutes 10 --max-updates 1 --set episodes_per_update=2 --set mode=iterative --set start=heft "
                         "--set episode_start=best --set episode_result=best --set episode_groups=4 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string other = "layered(ops=60,width=6,fan_in=2,seed=7)";
  const auto heft = ShSplit(kBin + "/place-baseline --env device --method heft --graph '" + other + "' --machine '" +
                            kMachine + "' --json --out " + (tmp / "heft"));
  ASSERT_EQ(heft.status, 0) << heft.err;
  const double heft_time = nlohmann::json::parse(heft.out)["best"]["step_time_s"].get<double>();
  const auto p = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + other +
                         "' --samples 30 --json --out " + (tmp / "place"));
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(p.err.find("CKPT-0001"), std::string::npos) << p.err;  // nothing asked otherwise
  const std::string config = testing::Slurp(tmp / "place/config.pbtxt");
  for (const char* line : {"mode: \"iterative\"\n", "start: \"heft\"\n", "episode_start: \"best\"\n",
                           "episode_result: \"best\"\n", "episode_groups: 4\n"})
    EXPECT_NE(config.find(line), std::string::npos) << line << config;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["stages"]["zero_shot"]["samples"].get<int>(), 30);
  EXPECT_LE(j["stages"]["zero_shot"]["greedy_effective_time_s"].get<double>(), heft_time);
  const double best = j["best"]["step_time_s"].get<double>();
  EXPECT_LE(best, heft_time);
  EXPECT_EQ(SimulatedStepTime(other, tmp / "place/best.placement"), best);

  // The search's budget: a million samples stop after 0.01 CPU-minutes.
  const auto q = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + other +
                         "' --samples 1000000 --samples-minutes 0.01 --clock cpu --json --out " + (tmp / "timed"));
  ASSERT_EQ(q.status, 0) << q.err;
  const auto zs = nlohmann::json::parse(q.out)["stages"]["zero_shot"];
  EXPECT_GT(zs["samples"].get<int>(), 0);
  EXPECT_LT(zs["samples"].get<int>(), 1000000);
  EXPECT_EQ(zs["samples_requested"].get<int>(), 1000000);
  // A bad budget: one line, exit 1, no directory.
  const auto bad = ShSplit(kBin + "/place --env device --checkpoint " + out + " --graph '" + other +
                           "' --set samples_minutes=-1 --out " + (tmp / "never"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("place: error: samples_minutes must be in [0, a week]"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(tmp / "never"));
}

// start=heft_ls: the environment runs HEFT + local search when it is built, before the trainer's
// clock starts; place-train charges that CPU time to the run's budget (result.json
// start_placer_seconds, inside `seconds`), and the start placement is the run's first best — so a
// budget the start spends entirely ends with the local search's placement and no update.
TEST(PlaceTrainDeviceCli, RegulatorFromHeftLsChargesTheStartToTheBudget) {
  testing::TempDir tmp;
  const std::string machine = "k80(gpus=2,memory_fraction=0.39)";
  const std::string regulator = "--set mode=iterative --set start=heft_ls --set episode_start=best --set episode_result=best "
                                "--set episode_groups=4 --set fuse_above_groups=0 --set episodes_per_update=2 ";
  // RNNLM's local search needs about 1.6 CPU-s: a budget of 0.06 s (start_minutes = minutes = 0.001) is spent by the start.
  const auto r = ShSplit(kBin + "/place-train --env device --graph rnnlm --machine '" + machine + "' " + regulator +
                         "--set start_minutes=0.001 --minutes 0.001 --clock cpu --json --out " + (tmp / "spent"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["updates"].get<int>(), 0);
  EXPECT_EQ(j["episodes"].get<int>(), 0);
  const double start_s = j["start_placer_seconds"].get<double>();
  EXPECT_GE(start_s, 0.06);
  EXPECT_GE(j["seconds"].get<double>(), start_s);
  const double best = j["graphs"][0]["step_time_s"].get<double>();
  const auto sim = ShSplit(kBin + "/perf-model simulate --json --machine '" + machine + "' --graph rnnlm --placement " +
                           (tmp / "spent/best.placement"));
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_EQ(nlohmann::json::parse(sim.out)["makespan_s"].get<double>(), best);
  const auto heft = ShSplit(kBin + "/place-baseline --env device --method heft --graph rnnlm --machine '" + machine +
                            "' --json --out " + (tmp / "heft"));
  ASSERT_EQ(heft.status, 0) << heft.err;
  EXPECT_LT(best, nlohmann::json::parse(heft.out)["best"]["step_time_s"].get<double>());  // the search moved groups
  EXPECT_NE(testing::Slurp(tmp / "spent/config.pbtxt").find("start_minutes: 0.001\n"), std::string::npos);
  // A run with time left learns after the start, its seconds counted from the start's.
  const auto q = ShSplit(kBin + "/place-train --env device --graph " + kMlp + " --machine '" + kMachine + "' " + regulator +
                         "--minutes 10 --max-updates 1 --json --out " + (tmp / "learns"));
  ASSERT_EQ(q.status, 0) << q.err;
  const auto k = nlohmann::json::parse(q.out);
  EXPECT_EQ(k["updates"].get<int>(), 1);
  EXPECT_GT(k["start_placer_seconds"].get<double>(), 0);
  EXPECT_GT(k["seconds"].get<double>(), k["start_placer_seconds"].get<double>());
}

// The device environment's keys moved into `env` (DeviceEnvConfig); the old top-level keys are
// deprecated aliases. tests/data/device_old_run was written by place-train before the move (one
// update; its config.pbtxt and checkpoint have the old keys), and the two files beside it are the
// old binary's output on it: its resume to 2 updates and `place` zero-shot on its checkpoint.
namespace old_keys {

const std::string kOldRun = "tests/data/device_old_run";
const std::string kOldGraph = "layered(ops=40,width=4,fan_in=2,seed=5)";

// metrics.csv without its time columns.
std::string Untimed(const std::string& path) {
  std::string out;
  for (const auto& row : ReadMetrics(path)) {
    for (const auto& [column, value] : row)
      // (losses/…: the PPO update's diagnostics differ in their last digits between the Intel machine
      // the old run was recorded on and AMD ones, with the same trajectory; tests/experiments/torch/golden_runs_test.cc)
      if (column != "time_s" && column != "charts/SPS" && column.rfind("perf/", 0) != 0 && column.rfind("losses/", 0) != 0)
        out += column + "=" + value + ",";
    out += "\n";
  }
  return out;
}

std::string WithoutComments(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.empty() || line[0] != '#') out += line + "\n";
  return out;
}

TEST(DeviceEnvOldKeys, AnOldRunDirectoryResumesAsTheOldBinaryResumedIt) {
  testing::TempDir tmp;
  const std::string run = tmp / "old";
  fs::copy(kOldRun, run, fs::copy_options::recursive);
  // Asking for another environment is refused under either name, before anything is written.
  for (const std::string key : {"memory_mask", "env.memory_mask"}) {
    const auto refused = ShSplit(kBin + "/place-train --env device --resume " + run + " --set " + key + "=false");
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("asked for env.memory_mask false (the run's: true)"), std::string::npos) << refused.err;
  }
  const auto r = ShSplit("OMP_NUM_THREADS=1 " + kBin + "/place-train --env device --resume " + run +
                         " --max-updates 2 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["updates"].get<int>(), 2);
  EXPECT_EQ(Untimed(run + "/metrics.csv"), Untimed("tests/data/device_old_run_resumed_metrics.csv"));
  // config.pbtxt is now in the new form, with the run's settings.
  const std::string config = testing::Slurp(run + "/config.pbtxt");
  EXPECT_NE(config.find("\nenv {\n  memory_mask: true\n"), std::string::npos) << config;
  EXPECT_NE(config.find("\n  oom_factor: 7\n"), std::string::npos) << config;
  EXPECT_NE(config.find("\n  order: \"rank\"\n"), std::string::npos) << config;
  EXPECT_EQ(config.find("\nmemory_mask:"), std::string::npos) << config;
  EXPECT_EQ(config.find("\noom_factor:"), std::string::npos) << config;
}

TEST(DeviceEnvOldKeys, PlaceReadsAnOldCheckpointsEnvironment) {
  testing::TempDir tmp;
  const std::string out = tmp / "place";
  const auto p = ShSplit("OMP_NUM_THREADS=1 " + kBin + "/place --env device --checkpoint " + kOldRun + " --graph '" +
                         kOldGraph + "' --samples 2 --seed 1 --json --out " + out);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(p.err.find("CKPT-0001"), std::string::npos) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_TRUE(j["trained_settings"]["recorded"].get<bool>());
  EXPECT_TRUE(j["trained_settings"]["changed"].empty());
  EXPECT_EQ(Untimed(out + "/metrics.csv"), Untimed("tests/data/device_old_run_place_metrics.csv"));
  EXPECT_EQ(WithoutComments(testing::Slurp(out + "/best.placement")),
            WithoutComments(testing::Slurp("tests/data/device_old_run_place_best.placement")));
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  EXPECT_NE(config.find("\nenv {\n  memory_mask: true\n"), std::string::npos) << config;
  EXPECT_NE(config.find("\n  order: \"rank\"\n"), std::string::npos) << config;
  // The old key asks for another setting as before: the warning and result.json name it as before.
  const auto q = ShSplit("OMP_NUM_THREADS=1 " + kBin + "/place --env device --checkpoint " + kOldRun + " --graph '" +
                         kOldGraph + "' --samples 1 --set memory_mask=false --json --out " + (tmp / "asked"));
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_NE(q.err.find("place: warning [CKPT-0001]: using memory_mask false as asked; " + kOldRun +
                       "/checkpoints/latest.ckpt was trained with true"),
            std::string::npos)
      << q.err;
  const auto changed = nlohmann::json::parse(q.out)["trained_settings"]["changed"];
  EXPECT_EQ(changed.size(), 1u) << changed.dump();
  EXPECT_EQ(changed["memory_mask"]["used"], "false");
}

// An old config file (the old run's config.pbtxt) as --config, and the old --set keys, give the
// run the new keys give: the same config.pbtxt and the same metrics as the old binary's first update.
TEST(DeviceEnvOldKeys, OldConfigFileAndOldSetKeysGiveTheSameRunAsTheNewKeys) {
  testing::TempDir tmp;
  const std::string common = "OMP_NUM_THREADS=1 " + kBin + "/place-train --env device --max-updates 1 ";
  const std::string policy = " --set policy.embedding_dim=8 --set policy.hidden_dim=16 --set policy.action_hidden_dim=8";
  const std::string args = "--graph '" + kOldGraph + "' --machine 'k80(gpus=2)' --minutes 10 --seed 3 " +
                           "--set episodes_per_update=2" + policy;
  const auto a = ShSplit(common + "--config " + kOldRun + "/config.pbtxt --out " + (tmp / "file"));
  ASSERT_EQ(a.status, 0) << a.err;
  const auto b = ShSplit(common + args + " --set memory_mask=true --set oom_factor=7 --set order=rank --out " + (tmp / "old"));
  ASSERT_EQ(b.status, 0) << b.err;
  const auto c = ShSplit(common + args + " --set env.memory_mask=true --set env.oom_factor=7 --set env.order=rank --out " +
                         (tmp / "new"));
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string want = WithoutComments(testing::Slurp(tmp / "new/config.pbtxt"));
  EXPECT_NE(want.find("\n  oom_factor: 7\n"), std::string::npos) << want;
  EXPECT_EQ(WithoutComments(testing::Slurp(tmp / "file/config.pbtxt")), want);
  EXPECT_EQ(WithoutComments(testing::Slurp(tmp / "old/config.pbtxt")), want);
  const std::string metrics = Untimed(kOldRun + "/metrics.csv");  // the old binary's
  for (const char* run : {"file", "old", "new"})
    EXPECT_EQ(Untimed(tmp / (std::string(run) + "/metrics.csv")), metrics) << run;
  // Both names with different values: one line, exit 1, no directory.
  const auto bad = ShSplit(common + args + " --set memory_mask=true --set env.memory_mask=false --out " + (tmp / "bad"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err,
            "place-train: error: --set 'memory_mask=true' and --set 'env.memory_mask=false' ask for different values "
            "of env.memory_mask (memory_mask is a deprecated alias of it); give env.memory_mask once\n");
  EXPECT_FALSE(fs::exists(tmp / "bad"));
}

}  // namespace old_keys

// ---------------------------------------------------------------- graph specs

TEST(DeviceTraining, SplitGraphSpecsKeepsParenthesisedCommas) {
  EXPECT_EQ(SplitGraphSpecs("rnnlm,nmt(layers=2),enas_cell(family=cifar10,seed=3)"),
            (std::vector<std::string>{"rnnlm", "nmt(layers=2)", "enas_cell(family=cifar10,seed=3)"}));
  EXPECT_EQ(SplitGraphSpecs("a.graph"), (std::vector<std::string>{"a.graph"}));
  EXPECT_TRUE(SplitGraphSpecs("").empty());
}

// ---------------------------------------------------------------- HDP (--method hdp): the binary

double SimulatedStepTime(const std::string& graph, const std::string& machine, const std::string& placement) {
  const auto p = ShSplit(kBin + "/perf-model simulate --json --machine '" + machine + "' --graph '" + graph +
                         "' --placement " + placement);
  EXPECT_EQ(p.status, 0) << p.err;
  return p.out.empty() ? -1 : nlohmann::json::parse(p.out)["makespan_s"].get<double>();
}

TEST(HdpCli, PresetTrainsWritesTheRunDirectoryAndResumes) {
  testing::TempDir tmp;
  const std::string out = tmp / "hdp";
  const std::string machine = "k80(gpus=2)";
  const std::string args = " --env device --graph " + kMlp + " --machine '" + machine +
                           "' --config experiments/configs/hdp_2018.pbtxt --set hdp.num_groups=8"
                           " --set policy.hidden_dim=32 --minutes 10 --clock cpu --seed 2";
  const auto r = ShSplit(kBin + "/place-train" + args + " --max-updates 3 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "hdp");
  EXPECT_EQ(j["algorithm"], "reinforce");
  EXPECT_EQ(j["clock"], "cpu");
  EXPECT_EQ(j["updates"].get<int>(), 3);
  EXPECT_EQ(j["episodes"].get<int>(), 12);  // the preset's 4 placements per grouping
  for (const char* f : {"config.pbtxt", "best.placement", "best.png", "curve.png", "metrics.csv", "result.json",
                        "checkpoints/latest.ckpt", "checkpoints/state.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  // The grouper travels inside latest.ckpt (one atomic write with the placer and the progress).
  EXPECT_FALSE(fs::exists(out + "/checkpoints/grouper.ckpt"));
  const auto& g = j["graphs"][0];
  EXPECT_EQ(g["groups"].get<int>(), 16);
  EXPECT_GE(g["hdp_groups"].get<int>(), 1);
  EXPECT_LE(g["hdp_groups"].get<int>(), 8);
  const double t = g["step_time_s"].get<double>();
  EXPECT_GT(t, 0);
  EXPECT_EQ(SimulatedStepTime(kMlp, machine, out + "/best.placement"), t);
  std::ifstream metrics(out + "/metrics.csv");
  std::string header;
  std::getline(metrics, header);
  for (const char* column : {"charts/groups", "losses/grouper_loss", "losses/policy_loss", "charts/best_step_time_s"})
    EXPECT_NE(header.find(column), std::string::npos) << column;
  const auto state = nlohmann::json::parse(std::ifstream(out + "/checkpoints/state.json"));
  EXPECT_TRUE(state["hdp_baseline"].is_number());

  // --resume continues it (grouper, placer, baseline) to 5 updates in total.
  const auto refused = ShSplit(kBin + "/place-train --env device --resume " + out + " --method ppo");
  EXPECT_EQ(refused.status, 1);
  const auto resumed = ShSplit(kBin + "/place-train --env device --resume " + out + " --max-updates 5 --json");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto jr = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(jr["updates"].get<int>(), 5);
  EXPECT_EQ(jr["episodes"].get<int>(), 20);
  EXPECT_EQ(jr["method"], "hdp");
  EXPECT_LE(jr["graphs"][0]["step_time_s"].get<double>(), t);
}

// --method ppo is --algorithm ppo (the policy alone over the co-location groups); --clock
// reaches the device path too.
TEST(HdpCli, MethodPpoIsThePolicyAloneAndClockCpuReachesTheDevicePath) {
  testing::TempDir tmp;
  const auto r = ShSplit(kBin + "/place-train --env device --graph " + kMlp +
                         " --method ppo --clock cpu --minutes 10 --max-updates 1 --set episodes_per_update=2 --json --out " +
                         (tmp / "ppo"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "ppo");
  EXPECT_EQ(j["clock"], "cpu");
  EXPECT_FALSE(j["graphs"][0].contains("hdp_groups"));
  EXPECT_FALSE(fs::exists(tmp / "ppo/checkpoints/grouper.ckpt"));
}

TEST(HdpCli, BadOptionsAreOneLineExitOneAndLeaveNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  const std::string g = "--graph " + kMlp + " --minutes 1 ";
  for (const std::string& args :
       {g + "--method hdp --algorithm ppo", g + "--set method=hdp --set agent.algorithm=ppo", g + "--set method=hpd",
        g + "--method sarsa", g + "--clock gpu", g + "--set clock=sundial", g + "--method hdp --set hdp.num_groups=-1",
        g + "--method hdp --set hdp.hidden_dim=0", g + "--method hdp --set features=heft",
        "--graph " + kMlp + "," + kMlp + " --method hdp"}) {
    const auto r = ShSplit(kBin + "/place-train --env device " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("place-train: error:"), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

}  // namespace
}  // namespace placerl
