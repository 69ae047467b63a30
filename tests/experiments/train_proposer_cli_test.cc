// train-proposer as a user runs it: a short search on the built-in chip writes proposer.json that
// place-baseline's learned proposer reads, its curve, metrics and result; bad options fail with one
// line, exit 1, and leave no directory.
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

const std::string kBin = placerl::testing::BinDir() + "/train-proposer";

TEST(TrainProposerCli, WritesWeightsThatPlaceBaselineReads) {
  testing::TempDir tmp;
  const std::string out = tmp / "es";
  const auto r = Sh("(" + kBin + " --moves 3000 --iterations 2 --pairs 2 --seed 4 --json --out " + out + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iterations"], 2);
  EXPECT_EQ(j["runs"], 1 + 2 * 2 * 2);
  ASSERT_EQ(j["history"].size(), 2u);
  EXPECT_GT(j["history"][1]["mean_cost"].get<double>(), 0);
  EXPECT_GT(j["start_cost"][0].get<double>(), 0);
  // The start is sa-soft's mixture: soft_shift has about half of the probability.
  EXPECT_NEAR(j["probabilities_start"]["progress_0.0"]["soft_shift"].get<double>(), 0.49, 0.01);
  for (const char* f : {"config.pbtxt", "proposer.json", "curve.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const auto b = Sh("(" + placerl::testing::BinDir() + "/place-baseline --method sa --minutes 0.01 --set max_evaluations=2000 "
                    "--set sa.proposer=learned --set sa.proposer_lr=0 --set sa.proposer_weights=" + out +
                    "/proposer.json --json --out " + (tmp / "sa") + " 2>/dev/null)");
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_GT(nlohmann::json::parse(b.out)["best"]["proxy_cost"].get<double>(), 0);
  // The same seed gives the same weights (the runs follow their moves, not the clock).
  const auto again = Sh("(" + kBin + " --moves 3000 --iterations 2 --pairs 2 --seed 4 --json --out " + (tmp / "es2") +
                        " 2>/dev/null)");
  ASSERT_EQ(again.status, 0) << again.out;
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read(out + "/proposer.json"), read(tmp / "es2/proposer.json"));
  EXPECT_EQ(nlohmann::json::parse(again.out)["history"][1]["mean_cost"], j["history"][1]["mean_cost"]);
}

// --set length=true searches only the run-length term; on runs of at most 10⁶ moves the term does
// nothing (λ = 0), so every run of the search is the start's and the term stays exactly zero.
TEST(TrainProposerCli, TheRunLengthTermDoesNotMoveOnShortRuns) {
  testing::TempDir tmp;
  const std::string out = tmp / "es";
  const auto r = Sh("(" + kBin + " --moves 3000 --iterations 2 --pairs 2 --seed 4 --set features= --set length=true "
                    "--json --out " + out + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["history"].size(), 2u);
  EXPECT_EQ(j["history"][0]["gradient_norm"].get<double>(), 0);
  std::ifstream in(out + "/proposer.json");
  const auto w = nlohmann::json::parse(in);
  ASSERT_TRUE(w.contains("length_weights")) << w.dump();
  EXPECT_EQ(w["length_weights"], nlohmann::json::parse("[0.0,0.0,0.0,0.0]"));
}

// Killed right after its second checkpoint (the scales, iteration 1) and resumed, a search ends
// with the uninterrupted one's weights and history; a finished run resumed with more iterations
// goes on as a run with that many; a resume that changes the search is refused.
TEST(TrainProposerCli, AKilledRunResumesToTheUninterruptedResult) {
  testing::TempDir tmp;
  const std::string run = kBin + " --moves 2000 --pairs 2 --seed 4 --set schedule=true";
  const std::string a = tmp / "a", b = tmp / "b", c = tmp / "c";
  ASSERT_EQ(Sh(run + " --iterations 3 --out " + a).status, 0);
  EXPECT_EQ(Sh(run + " --iterations 3 --test-kill-after-checkpoints 2 --out " + b).status, 128 + 9);  // SIGKILL
  EXPECT_TRUE(fs::exists(b + "/checkpoints/state.json"));
  EXPECT_FALSE(fs::exists(b + "/proposer.json"));
  const auto resumed = Sh(kBin + " --resume " + b);
  ASSERT_EQ(resumed.status, 0) << resumed.out;
  const auto j = nlohmann::json::parse(testing::Slurp(b + "/result.json"));
  EXPECT_TRUE(j["resumed"].get<bool>());
  const auto whole = nlohmann::json::parse(testing::Slurp(a + "/result.json"));
  EXPECT_EQ(j["runs"], whole["runs"]);
  ASSERT_EQ(j["history"].size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(j["history"][i]["mean_relative_cost"], whole["history"][i]["mean_relative_cost"]) << i;
  EXPECT_EQ(testing::Slurp(b + "/proposer.json"), testing::Slurp(a + "/proposer.json"));
  EXPECT_EQ(j["probabilities_start"], whole["probabilities_start"]);
  // metrics.csv: iterations 1, 2, 3 once each (iteration 1's row of the killed start kept).
  const std::string metrics = testing::Slurp(b + "/metrics.csv");
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), '\n'), 4) << metrics;
  // More iterations: the run a fresh search with that many gives.
  ASSERT_EQ(Sh(run + " --iterations 4 --out " + c).status, 0);
  const auto longer = Sh(kBin + " --resume " + a + " --iterations 4");
  ASSERT_EQ(longer.status, 0) << longer.out;
  EXPECT_EQ(testing::Slurp(a + "/proposer.json"), testing::Slurp(c + "/proposer.json"));
  // Refused with one line, the run left as it was: another search, nothing to resume, --config.
  const std::string before = testing::Slurp(a + "/proposer.json");
  const std::string config_before = testing::Slurp(a + "/config.pbtxt");
  for (const std::string& args : {"--resume " + a + " --pairs 3", "--resume " + a + " --set sigma=0.5",
                                  "--resume " + a + " --iterations 2",
                                  "--resume " + tmp.path(), "--resume " + a + " --config " + a + "/config.pbtxt"}) {
    const auto r = Sh(kBin + " " + args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
  EXPECT_NE(Sh(kBin + " --resume " + a + " --pairs 3").out.find("only --iterations"), std::string::npos);
  EXPECT_EQ(testing::Slurp(a + "/proposer.json"), before);
  EXPECT_EQ(testing::Slurp(a + "/config.pbtxt"), config_before);  // not rewritten by a refused resume
  // A damaged state is refused naming the file.
  testing::Spit(b + "/checkpoints/state.json", "{\"format\": \"placerl-proposer-es-state\"");
  const auto damaged = Sh(kBin + " --resume " + b);
  EXPECT_EQ(damaged.status, 1) << damaged.out;
  EXPECT_NE(damaged.out.find("state.json"), std::string::npos) << damaged.out;
}

TEST(TrainProposerCli, BadInputIsOneLineAndNoDirectory) {
  testing::TempDir tmp;
  for (const std::string& args :
       {std::string("--pairs 0"), std::string("--set sigma=-1"), std::string("--set features=bias,colour"),
        std::string("--netlist a.pb.txt --netlist b.pb.txt --plc a.plc"), std::string("--start /nonexistent.json"),
        std::string("--set run.sa.proposer=uniform"), std::string("--netlist /nonexistent.pb.txt")}) {
    const std::string out = tmp / "bad";
    const auto r = Sh(kBin + " " + args + " --moves 100 --iterations 1 --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

}  // namespace
}  // namespace placerl
