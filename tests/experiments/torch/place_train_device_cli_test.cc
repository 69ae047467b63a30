// place-train / place --env device as a user runs them: a short PPO run on the two-tower MLP
// training graph writes the run directory, and its best.placement re-simulated by
// `perf-model simulate --machine` gives result.json's step time exactly; `place --env device`
// loads the checkpoint on a graph it was not trained on (zero-shot + a short fine-tune); a big
// graph is placed fused and scored on its ops; bad input is one line, exit 1, no directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = std::string(PLACERL_BIN_DIR);
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
                         "--machine '" + kMachine + "' --samples 3 --finetune-minutes 0.01 --set episodes_per_update=2 --json --out " +
                         placed);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_TRUE(nlohmann::json::parse(p.out)["stages"].contains("zero_shot"));
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

TEST(PlaceTrainDeviceCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--graph ") + kMlp + " --minutes 0", std::string("--graph ") + kMlp + " --algorithm sarsa",
        std::string("--graph ") + kMlp + " --set agent.clip=-1", std::string("--graph ") + kMlp + " --set oom=never",
        std::string("--graph /nonexistent.graph"), std::string("--graph ") + kMlp + " --machine 'k80(gpus=0,cpu=0)'",
        std::string("--graph ") + kMlp + " --set fuse_above_groups=-1", std::string("--machine 'k80(gpus=2)'")}) {
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

}  // namespace
}  // namespace placerl
