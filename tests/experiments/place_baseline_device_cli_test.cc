// place-baseline --env device as a user runs it: each method writes the run directory
// (config, metrics, TensorBoard events, best.placement, the timeline picture, result.json) and
// one JSON document; best.placement is what perf-model simulate reads and gives the same step
// time; out of memory is exit 2 with the report written; bad input is one line, exit 1, no
// directory.
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

const std::string kBin = std::string(PLACERL_BIN_DIR) + "/place-baseline";
const std::string kGraph = "tests/data/device/mlp_training.graph";

int CountLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(PlaceBaselineDeviceCli, EveryMethodWritesTheRunDirectoryAndPerfModelAgrees) {
  testing::TempDir tmp;
  double single = 0;
  for (const std::string method : {"single", "round_robin", "blocks", "random"}) {
    const std::string out = tmp / ("runs/" + method);
    const auto r = Sh("(" + kBin + " --env device --graph " + kGraph + " --machine 'k80(gpus=2,cpu=0)' --method " +
                      method + " --samples 20 --seed 4 --json --out " + out + " 2>/dev/null)");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);  // exactly one document
    EXPECT_EQ(j["method"], method);
    EXPECT_EQ(j["machine"], "k80(gpus=2,cpu=0,memory_fraction=1)");
    EXPECT_EQ(j["groups"], 16);
    EXPECT_EQ(j["evaluations"], method == "random" ? 20 : 1);
    const double t = j["best"]["step_time_s"].get<double>();
    EXPECT_GT(t, 0);
    EXPECT_FALSE(j["best"]["oom"].get<bool>());
    EXPECT_DOUBLE_EQ(j["best"]["reward"].get<double>(), -std::sqrt(t));
    if (method == "single") {
      single = t;
      EXPECT_DOUBLE_EQ(t, j["single_device_time_s"].get<double>());
      EXPECT_EQ(j["best"]["devices"][1]["ops"], 0);
    }
    for (const char* f : {"config.pbtxt", "best.placement", "best.png", "metrics.csv", "result.json"})
      EXPECT_TRUE(fs::exists(out + "/" + f)) << method << " " << f;
    EXPECT_EQ(fs::exists(out + "/curve.png"), method == "random");
    bool events = false;
    for (const auto& e : fs::directory_iterator(out))
      events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    EXPECT_TRUE(events);
    // Same machine in perf-model's terms: 2 K80 dies, Placeto preset.
    const auto p = Sh(std::string(PLACERL_BIN_DIR) + "/perf-model simulate --json --preset placeto --devices 2 "
                      "--device plain:4.37e12,2.4e11 --memory 12e9 --graph " + kGraph + " --placement " + out +
                      "/best.placement");
    ASSERT_EQ(p.status, 0) << p.out;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(p.out)["makespan_s"].get<double>(), t) << method;
  }
  EXPECT_GT(single, 0);
  // The random run's config names its samples; --set reaches the config too.
  std::ifstream cfg(tmp / "runs/random/config.pbtxt");
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("samples: 20"), std::string::npos) << text;
  EXPECT_NE(text.find("machine: \"k80(gpus=2,cpu=0)\""), std::string::npos) << text;
}

TEST(PlaceBaselineDeviceCli, OutOfMemoryIsExitTwoWithTheReportWritten) {
  testing::TempDir tmp;
  const std::string out = tmp / "oom";
  const auto r = Sh("(" + kBin + " --env=device --graph " + kGraph +
                    " --machine 'baechi(gpus=2,memory_fraction=0.001)' --method single --json --out " + out +
                    " 2>/dev/null)");
  EXPECT_EQ(r.status, 2) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["best"]["oom"].get<bool>());
  EXPECT_EQ(j["best"]["oom_device"], "gpu:0");
  EXPECT_TRUE(j["best"]["devices"][0]["oom"].get<bool>());
  EXPECT_TRUE(fs::exists(out + "/best.png"));
  // The memory-aware random placer finds a split that fits.
  const auto m = Sh("(" + kBin + " --env device --graph " + kGraph +
                    " --machine 'baechi(gpus=4,memory_fraction=0.02)' --method random --memory-aware --samples 30 "
                    "--json --out " + (tmp / "fits") + " 2>/dev/null)");
  EXPECT_EQ(m.status, 0) << m.out;
  EXPECT_FALSE(nlohmann::json::parse(m.out)["best"]["oom"].get<bool>());
}

TEST(PlaceBaselineDeviceCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--method heft"), std::string("--machine 'k80(gpus=x)'"), std::string("--machine ''"),
        std::string("--graph no/such.graph"), std::string("--samples 0"), std::string("--minutes nan"),
        std::string("--set nosuch=1"), std::string("--graph 'layered(ops=0)'"), std::string("--resume " + out)}) {
    const auto r = Sh(kBin + " --env device --graph " + kGraph + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(CountLines(r.out), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("place-baseline: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const auto r = Sh(kBin + " --env nosuch --out " + out);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(CountLines(r.out), 1) << r.out;
  // --help of the device mode names its methods.
  const auto h = Sh(kBin + " --env device --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("round_robin"), std::string::npos);
  EXPECT_NE(h.out.find("--machine"), std::string::npos);
}

}  // namespace
}  // namespace placerl
