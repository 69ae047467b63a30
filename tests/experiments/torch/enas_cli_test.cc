// nas-search --space enas_micro --dataset fashion-mnist as a user runs it, at toy size
// (--max-images): ENAS writes the whole run directory and one JSON document with the found,
// random and hand-designed cells' test accuracies; a space without a Fashion-MNIST trainer, a
// method it does not have, an unknown dataset and missing IDX files fail with one line, exit 1,
// and leave no directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = std::string(PLACERL_BIN_DIR) + "/nas-search";
const std::string kToy = " --space enas_micro --dataset fashion-mnist --max-images 128 --budget-minutes 0.002 "
                         "--final-epochs 0.5 --random-cells 1";

TEST(EnasCli, EnasRunDirectoryEndToEnd) {
  testing::TempDir tmp;
  const std::string out = tmp / "runs/enas";
  const auto r = ShSplit(kBin + kToy + " --method enas --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "enas");
  EXPECT_EQ(j["dataset"], "fashion-mnist");
  for (const char* key : {"enas", "hand_designed", "best_random"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GE(j[key]["test_accuracy"].get<double>(), 0);
    EXPECT_LE(j[key]["test_accuracy"].get<double>(), 1);
    EXPECT_GT(j[key]["params"].get<int64_t>(), 0);
    EXPECT_GT(j[key]["macs"].get<int64_t>(), 0);
  }
  EXPECT_EQ(j["test_accuracy"], j["enas"]["test_accuracy"]);
  EXPECT_GE(j["search_seconds"].get<double>(), 0);
  EXPECT_GE(j["epochs"].get<int>(), 1);
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const std::string metrics = testing::Slurp(out + "/metrics.csv");
  EXPECT_EQ(metrics.rfind("step,time_s,charts/learning_rate,losses/shared_loss", 0), 0u) << metrics;
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("budget_minutes=0.002"), std::string::npos);
  EXPECT_NE(testing::Slurp(out + "/best.pbtxt").find("normal0/op0"), std::string::npos);

  const auto rr = ShSplit(kBin + kToy + " --method random --json --out " + tmp / "runs/random");
  ASSERT_EQ(rr.status, 0) << rr.out << rr.err;
  const auto jr = nlohmann::json::parse(rr.out);
  EXPECT_EQ(jr["random"].size(), 1u);
  EXPECT_FALSE(jr.contains("enas"));
}

// ENAS micro's controller settings (experiments/configs/enas_micro_controller.pbtxt) reach the
// resolved config; --clock cpu reaches the run (header, result.json, the checkpoint's flags) and a
// resume keeps it: another clock is refused with one line.
TEST(EnasCli, MicroControllerConfigAndCpuClock) {
  testing::TempDir tmp;
  const std::string out = tmp / "micro";
  const auto r = ShSplit(kBin + kToy + " --config experiments/configs/enas_micro_controller.pbtxt --clock cpu --json --out " +
                         out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "enas");
  EXPECT_EQ(j["options"]["clock"], "cpu");
  EXPECT_GE(j["search_cpu_seconds"].get<double>(), 0.002 * 60);
  EXPECT_GE(j["distinct_children"].get<int64_t>(), 1);
  EXPECT_LE(j["distinct_children"].get<int64_t>(), j["shared_steps"].get<int64_t>() + j["controller_children"].get<int64_t>());
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  for (const char* line : {"clock=cpu", "preset: \"lstm\"", "logit_tanh_constant: 1.1", "learning_rate: 0.0035",
                           "entropy_coef: 0.0001", "baseline_decay: 0.99"})
    EXPECT_NE(config.find(line), std::string::npos) << line << "\n" << config;
  EXPECT_NE(testing::Slurp(out + "/checkpoints/state.json").find("\"clock\": \"cpu\""), std::string::npos);
  const auto other = Sh(kBin + " --resume " + out + " --clock wall");
  EXPECT_EQ(other.status, 1) << other.out;
  EXPECT_EQ(std::count(other.out.begin(), other.out.end(), '\n'), 1) << other.out;
  EXPECT_NE(other.out.find("keeps the run's"), std::string::npos) << other.out;
}

TEST(EnasCli, BadDatasetSpaceMethodOrFilesAreOneLineExitOne) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--space enas_micro --dataset mnist --method enas"),
        std::string("--space nb201 --dataset fashion-mnist --method enas"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution"),
        std::string("--space enas_micro --dataset table --method enas"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --final-epochs 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --set agent.algorithm=ppo"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --clock sundial"),
        std::string("--space nb201 --dataset table --method random --clock cpu"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --fashion-mnist-dir ") + tmp / "none"}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const auto missing = Sh(kBin + " --space enas_micro --dataset fashion-mnist --method enas --fashion-mnist-dir " +
                          tmp / "none" + " --out " + out);
  EXPECT_NE(missing.out.find("dataset-fashion-mnist"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace placerl
