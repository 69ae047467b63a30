// nas-search --space brainformer --dataset fashion-mnist as a user runs it (LibTorch builds): a
// tiny budget of tiny trainings writes the whole run directory with the best block, the GLaM-like
// reference and their test accuracies (the stand-in step-time proxy, budget = the reference's
// step time); bad inputs fail with one line, exit 1, and leave no directory.
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

const std::string kBin = placerl::testing::BinDir() + "/nas-search";
// Tiny: 3-step trainings of width model_dim / 64 on 200 held-out images.
const std::string kTiny = " --space brainformer --dataset fashion-mnist --train-steps 3 --set brainformer.eval_size=100 "
                          "--set brainformer.validation_size=200 --set brainformer.final_train_steps=4 "
                          "--set brainformer.width_divisor=64 --set brainformer.batch_size=16 ";

TEST(BrainformerCli, EndToEndOnATinyBudget) {
  testing::TempDir tmp;
  const std::string out = tmp / "bf";
  const auto r = ShSplit(kBin + kTiny + "--method evolution --budget 4 --population 2 --tournament 1 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dataset"], "fashion-mnist");
  EXPECT_NE(j["quality"].get<std::string>().find("after 3 steps"), std::string::npos) << j["quality"];
  // The block environment's own step-time model: the performance model at the stated scale (the
  // GLaM-like block: 0.9576 s, tests/env/block/brainformer_step_time_test.cc; 1.0497 s until the
  // tpu_v4 matmul refit of session 20, docs/perf_model.md "Second sources"; 1.0072 s until the
  // library default's memory refit of session 28, 0.5 -> 0.6).
  EXPECT_EQ(j["cost_unit"], "s");
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "pareto.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const auto& b = j["brainformer"];
  for (const char* who : {"best", "reference"}) {
    EXPECT_GT(b[who]["test_accuracy"].get<double>(), 0) << who;
    EXPECT_LE(b[who]["test_accuracy"].get<double>(), 1) << who;
    EXPECT_GT(b[who]["params"].get<int64_t>(), 0) << who;
    EXPECT_GT(b[who]["step_time"].get<double>(), 0) << who;
  }
  EXPECT_EQ(b["reference"]["block"], "d1024 attn16 ffn4 attn16 moe4x64/top2/cf2 attn16 ffn4 attn16 moe4x64/top2/cf2");
  // The budget is the reference's own step time; the reference is on the Pareto plot's data.
  EXPECT_EQ(b["step_time_budget"], b["reference"]["step_time"]);
  EXPECT_NEAR(b["reference"]["step_time"].get<double>(), 0.9576, 1e-4);
  EXPECT_EQ(b["step_time_budget_source"], "GLaM-like step time");
  EXPECT_EQ(b["reference_search"]["penalty"], 0);
  EXPECT_EQ(b["test_images"], 10000);
  EXPECT_EQ(b["validation_images"], 200);
  EXPECT_EQ(b["best"]["architecture"], j["best"]["architecture"]);
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  EXPECT_NE(config.find("train_steps: 3"), std::string::npos) << config;
  // A given budget is kept.
  const auto given = ShSplit(kBin + kTiny + "--method random --budget 2 --step-time-budget 0.05 --json --out " + tmp / "g");
  ASSERT_EQ(given.status, 0) << given.err;
  const auto jg = nlohmann::json::parse(given.out);
  EXPECT_EQ(jg["brainformer"]["step_time_budget"], 0.05);
  EXPECT_EQ(jg["brainformer"]["step_time_budget_source"], "given");
}

TEST(BrainformerCli, BadInputIsOneLineExitOne) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {kTiny + "--set brainformer.data_dir=" + tmp / "none", kTiny + "--set brainformer.batch_size=0",
        kTiny + "--set brainformer.final_train_steps=0", kTiny + "--set brainformer.validation_size=60000",
        kTiny + "--train-steps 0", std::string(" --space nb201 --dataset fashion-mnist"),
        std::string(" --space nb201 --train-steps 5"), std::string(" --space brainformer --set brainformer.repeats=2")}) {
    const auto r = Sh(kBin + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

}  // namespace
}  // namespace placerl
