// place-train as a user runs it: a short run on the built-in chip writes the run directory
// (config, checkpoint + state, best.plc, pictures, metrics, TensorBoard events) and one JSON
// document; --resume continues the same run (steps and episodes go on, metrics appended);
// bad options fail with one line, exit 1, and leave no directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = std::string(PLACERL_BIN_DIR) + "/place-train";

int Lines(const std::string& path) {
  std::ifstream f(path);
  int n = 0;
  std::string l;
  while (std::getline(f, l)) ++n;
  return n;
}

TEST(PlaceTrainCli, TrainsWritesTheRunDirectoryAndResumes) {
  testing::TempDir tmp;
  const std::string out = tmp / "run";
  const auto r = Sh("(" + kBin + " --minutes 0.05 --seed 2 --json --set episodes_per_update=4 --out " + out + " 2>/dev/null)");
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
  // Resume with a larger total budget: the run goes on from its checkpoint.
  const auto r2 = Sh("(" + kBin + " --resume " + out + " --minutes 0.1 --json 2>/dev/null)");
  ASSERT_EQ(r2.status, 0) << r2.out;
  const auto j2 = nlohmann::json::parse(r2.out);
  EXPECT_GT(j2["updates"].get<int>(), j["updates"].get<int>());
  EXPECT_EQ(Lines(out + "/metrics.csv"), 1 + j2["updates"].get<int>());
  EXPECT_LE(j2["designs"][0]["best_proxy_cost"].get<double>(), j["designs"][0]["best_proxy_cost"].get<double>());
}

TEST(PlaceTrainCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--minutes 0"), std::string("--algorithm sarsa"), std::string("--set agent.clip=-1"),
        std::string("--workers 2"), std::string("--netlist /nonexistent.pb.txt"), std::string("--set policy.nosuch=1"),
        std::string("--netlist ''")}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("place-train: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_EQ(Sh(kBin + " --resume " + (tmp / "nothing")).status, 1);
}

}  // namespace
}  // namespace placerl
