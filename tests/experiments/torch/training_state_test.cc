// checkpoints/state.json (experiments/lib/torch/training_state.h): what place-train's chip and device
// paths write is what they read back; malformed state files and a missing checkpoint are
// ConfigErrors that name the file. Checkpoint files (encoders/checkpoint_file.h) carry a
// checksum: damaged, truncated and non-finite checkpoints are refused at load, naming the file
// and the reason; files written before the checksum still load. (Settings that differ from the
// training run's, CKPT-0001: tests/env/trained_settings_test.cc.)
#include "experiments/lib/torch/training_state.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "agents/learner.h"
#include "datasets/util/errors.h"
#include "encoders/checkpoint_file.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

// The run's progress is the trainer's (agents::TrainingProgress: the four counters, one copy)
// with the best values: a trainer's state goes into state.json as it is.
TEST(TrainingState, ProgressIsTheTrainersCountersWithTheBestValues) {
  static_assert(std::is_base_of_v<agents::TrainingProgress, TrainingProgress>);
  agents::TrainingProgress trainer;
  trainer.iteration = 3, trainer.episodes = 48, trainer.steps = 400, trainer.elapsed_s = 2.5;
  const nlohmann::json j = TrainingProgressJson({trainer, {1.5}}, "best_cost");
  EXPECT_EQ(j["iteration"], 3);
  EXPECT_EQ(j["episodes"], 48);
  EXPECT_EQ(j["steps"], 400);
  EXPECT_EQ(j["elapsed_s"], 2.5);
  EXPECT_EQ(j["best_cost"], (nlohmann::json{1.5}));
}

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
  const nlohmann::json good = TrainingProgressJson({{1, 2, 3, 4.0}, {1.0}}, "best_cost");
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
  expect_error(TrainingProgressJson({{1, 2, 3, 4.0}, {1.0}}, "best_time"), "best_cost");
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
  std::ofstream(path + "/checkpoints/state.json") << TrainingProgressJson({{3, 4, 5, 6.0}, {}}, "best_time").dump();
  const ResumePoint r = ReadResumePoint(dir);
  EXPECT_EQ(r.checkpoint_bytes, "weights");
  EXPECT_EQ(r.state["iteration"], 3);
}

// The state inside the checkpoint (written with the weights) wins over state.json; without it,
// state.json; with neither, a one-line error.
TEST(ResumeState, PrefersTheCopyInsideTheCheckpoint) {
  const nlohmann::json file = TrainingProgressJson({{2, 8, 5, 6.0}, {}}, "best_cost");
  const std::string inside = TrainingProgressJson({{3, 12, 7, 9.0}, {}}, "best_cost").dump();
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

// The message of the ConfigError `f` throws ("" when it does not throw).
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Issue 29 item 9: a checkpoint with flipped bytes loaded silently, one with NaN weights failed
// later as "policy: no legal action", a truncated one said "not a placerl checkpoint" without
// the file or the word truncated.
TEST(CheckpointFile, DamagedTruncatedAndNonFiniteCheckpointsAreRefusedNamingTheFile) {
  testing::TempDir tmp;
  auto env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  const encoders::FeatureLayout layout = encoders::FeatureLayout::Of(*env);
  encoders::Policy policy(encoders::PolicyOptions{}, layout);
  agents::Learner learner(&policy, agents::AgentOptions{});
  const std::string good = tmp / "good.ckpt";
  learner.SaveCheckpoint(good, {{"note", "kept"}});
  const std::string bytes = testing::Slurp(good);
  ASSERT_TRUE(encoders::HasCheckpointHeader(bytes));
  auto load = [&](const std::string& path) {
    encoders::Policy p(encoders::PolicyOptions{}, layout);
    agents::Learner l(&p, agents::AgentOptions{});
    l.LoadCheckpoint(path);
  };
  EXPECT_EQ(ErrorOf([&] { load(good); }), "");
  EXPECT_EQ(agents::Learner::ReadExtras(good).at("note"), "kept");

  auto expect_refused = [&](const std::string& name, const std::string& content, const std::string& reason) {
    const std::string path = tmp / name;
    testing::Spit(path, content);
    for (const std::string& what : {ErrorOf([&] { load(path); }), ErrorOf([&] { encoders::Policy::Load(path, *env); }),
                                    ErrorOf([&] { agents::Learner::ReadExtras(path); })}) {
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << name << ": " << what;
      EXPECT_NE(what.find(reason), std::string::npos) << name << ": " << what;
    }
  };
  std::string flipped = bytes;
  for (size_t i = 0; i < 4; ++i) flipped[bytes.size() / 2 + i] = static_cast<char>(flipped[bytes.size() / 2 + i] ^ 0x5a);
  expect_refused("flipped.ckpt", flipped, "damaged checkpoint (checksum mismatch");
  expect_refused("cut.ckpt", bytes.substr(0, bytes.size() * 2 / 3), "truncated checkpoint");
  expect_refused("cut_header.ckpt", bytes.substr(0, 10), "truncated checkpoint");
  expect_refused("longer.ckpt", bytes + "x", "damaged checkpoint (1 bytes after");
  expect_refused("empty.ckpt", "", "empty file");
  expect_refused("garbage.ckpt", "garbage\n", "not a placerl checkpoint");

  // Written before the checksum (the archive alone, as experiments/pretrained/chip): loads; cut,
  // it is named truncated.
  const std::string legacy = encoders::CheckpointArchive(bytes, "good.ckpt");
  ASSERT_EQ(legacy.rfind("PK", 0), 0u);
  testing::Spit(tmp / "legacy.ckpt", legacy);
  EXPECT_EQ(ErrorOf([&] { load(tmp / "legacy.ckpt"); }), "");
  EXPECT_EQ(ErrorOf([&] { encoders::Policy::Load(tmp / "legacy.ckpt", *env); }), "");
  expect_refused("legacy_cut.ckpt", legacy.substr(0, legacy.size() - 100), "truncated checkpoint");

  // Non-finite weights (a diverged run) are refused at load with the file and the weight named.
  {
    torch::NoGradGuard no_grad;
    policy.net()->parameters()[0].view(-1)[0].fill_(NAN);
  }
  const std::string nan = tmp / "nan.ckpt";
  learner.SaveCheckpoint(nan);
  for (const std::string& what : {ErrorOf([&] { load(nan); }), ErrorOf([&] { encoders::Policy::Load(nan, *env); })}) {
    EXPECT_EQ(what.rfind(nan + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("non-finite values"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace placerl::run
