// checkpoints/state.json (experiments/torch/training_state.h): what place-train's chip and device
// paths write is what they read back; malformed state files and a missing checkpoint are
// ConfigErrors that name the file.
#include "experiments/torch/training_state.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

TEST(TrainingState, RoundTripKeepsCountersBestValuesAndRankRngs) {
  TrainingProgress p;
  p.iteration = 7, p.episodes = 112, p.steps = 900, p.elapsed_s = 12.5;
  p.best = {0.25, INFINITY, 3.0};
  const nlohmann::json j = TrainingProgressJson(p, "best_time", {"rank0", "rank1", "rank2"});
  EXPECT_TRUE(j["best_time"][1].is_null());
  EXPECT_EQ(j["rank_rng"], (nlohmann::json{"rank1", "rank2"}));  // rank 0's is in the checkpoint
  // Through text, as the file is read back.
  const TrainingProgress q = ParseTrainingProgress(nlohmann::json::parse(j.dump()), "best_time", 4, "state.json");
  EXPECT_EQ(q.iteration, 7);
  EXPECT_EQ(q.episodes, 112);
  EXPECT_EQ(q.steps, 900);
  EXPECT_EQ(q.elapsed_s, 12.5);
  ASSERT_EQ(q.best.size(), 4u);  // one per task of the resumed run; missing ones: none yet
  EXPECT_EQ(q.best[0], 0.25);
  EXPECT_TRUE(std::isinf(q.best[1]));
  EXPECT_EQ(q.best[2], 3.0);
  EXPECT_TRUE(std::isinf(q.best[3]));
  EXPECT_FALSE(TrainingProgressJson(p, "best_cost").contains("rank_rng"));
}

TEST(TrainingState, MalformedStateIsAConfigErrorNamingTheFile) {
  const nlohmann::json good = TrainingProgressJson({1, 2, 3, 4.0, {1.0}}, "best_cost");
  auto expect_error = [](const nlohmann::json& j, const std::string& needle) {
    try {
      ParseTrainingProgress(j, "best_cost", 1, "run/checkpoints/state.json");
      ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("run/checkpoints/state.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  nlohmann::json j = good;
  j.erase("episodes");
  expect_error(j, "episodes");
  j = good;
  j["iteration"] = "three";
  expect_error(j, "not a place-train state file");
  j = good;
  j["steps"] = -1;
  expect_error(j, "negative");
  j = good;
  j["best_cost"] = {"x"};
  expect_error(j, "not a place-train state file");
  expect_error(nlohmann::json::array(), "not a place-train state file");
  // The other path's key is not this one's.
  expect_error(TrainingProgressJson({1, 2, 3, 4.0, {1.0}}, "best_time"), "best_cost");
}

TEST(TrainingState, ReadResumePointNeedsTheCheckpointAndJsonState) {
  testing::TempDir tmp;
  const std::string path = tmp / "run";
  std::filesystem::create_directories(path + "/checkpoints");
  std::ofstream(path + "/config.pbtxt") << "\n";
  RunDirOptions o;
  o.path = path;
  o.resume = true;
  RunDirectory dir(o);
  EXPECT_THROW(
      try { ReadResumePoint(dir); } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("no checkpoint to resume from"), std::string::npos) << e.what();
        throw;
      },
      ConfigError);
  std::ofstream(path + "/checkpoints/latest.ckpt") << "weights";
  EXPECT_TRUE(ReadResumePoint(dir).state.is_null());  // no state.json: the checkpoint may carry the state
  std::ofstream(path + "/checkpoints/state.json") << "{ not json";
  try {
    ReadResumePoint(dir);
    ADD_FAILURE() << "accepted a state file that is not JSON";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("state.json: not JSON"), std::string::npos) << e.what();
  }
  std::ofstream(path + "/checkpoints/state.json") << TrainingProgressJson({3, 4, 5, 6.0, {}}, "best_time").dump();
  const ResumePoint r = ReadResumePoint(dir);
  EXPECT_EQ(r.checkpoint_bytes, "weights");
  EXPECT_EQ(r.state["iteration"], 3);
}

// The state inside the checkpoint (written with the weights) wins over state.json; without it,
// state.json; with neither, a one-line error.
TEST(ResumeState, PrefersTheCopyInsideTheCheckpoint) {
  const nlohmann::json file = TrainingProgressJson({2, 8, 5, 6.0, {}}, "best_cost");
  const std::string inside = TrainingProgressJson({3, 12, 7, 9.0, {}}, "best_cost").dump();
  EXPECT_EQ(ResumeState({{kRunStateExtra, inside}}, file)["iteration"], 3);
  EXPECT_EQ(ResumeState({{kRunStateExtra, inside}}, nullptr)["episodes"], 12);
  EXPECT_EQ(ResumeState({{"hdp_grouper", "bytes"}}, file)["iteration"], 2);
  EXPECT_THROW(ResumeState({}, nullptr), ConfigError);
  try {
    ResumeState({{kRunStateExtra, "{ torn"}}, file);
    ADD_FAILURE() << "accepted an embedded state that is not JSON";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace placerl::run
