// place as a user runs it: a checkpoint trained (briefly) on the built-in synthetic chip is
// loaded on a netlist it was never trained on (Circuit Training's macro_tiles_10x10, another
// grid), zero-shot + fine-tuning + coordinate descent; the result is a legal, complete
// placement whose .plc scores to the reported cost; bad checkpoints fail with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir();
const std::string kTiles = "../shared/datasets/chip/circuit_training/macro_tiles_10x10/";

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

}  // namespace
}  // namespace placerl
