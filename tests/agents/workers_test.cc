// Decentralised updates over c10d Gloo (agents/workers.h + the Learner's Collective
// hook): 2 processes on loopback (FileStore in a temp dir), each with half of a fixed batch of
// partition(nodes=8,devices=2) episodes, take one PPO update (2 epochs, one minibatch each)
// and one REINFORCE update; their weights equal the single-process update on the combined
// batch; so does a rank with no episodes at all. The two ranks are this test binary re-executed (by workers::Launch) with a filter
// naming one of the WorkersRank tests, which do nothing in a normal run. Also: a rank that
// exits makes Launch fail naming it; the byte collectives; the environment rendezvous.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/policy.h"
#include "encoders/policy_net.h"
#include "env/registry.h"
#include "agents/workers.h"

namespace placerl {
namespace {

constexpr const char* kDirVar = "PLACERL_WORKERS_TEST_DIR";
constexpr const char* kAlgoVar = "PLACERL_WORKERS_TEST_ALGORITHM";
constexpr const char* kModeVar = "PLACERL_WORKERS_TEST_MODE";

struct Setup {
  std::unique_ptr<env::Environment> env = env::MakeEnvironment("partition(nodes=8,devices=2)");
  std::unique_ptr<encoders::Policy> policy;
  std::unique_ptr<agents::Learner> learner;
  explicit Setup(agents::Algorithm algorithm) {
    torch::set_num_threads(1);
    encoders::PolicyOptions po;
    po.embedding_dim = 16;
    po.init_seed = 5;
    policy = std::make_unique<encoders::Policy>(po, encoders::FeatureLayout::Of(*env));
    agents::AgentOptions o;
    o.algorithm = algorithm;
    o.learning_rate = 3e-3;
    o.epochs = 2;
    o.minibatch_size = 1000;  // one minibatch per epoch: the same minibatch in both set-ups
    learner = std::make_unique<agents::Learner>(policy.get(), o);
  }
  // Half `half` of the fixed batch: 4 episodes with their own seeds and sampling RNG (none
  // for half 1 when `empty_second`: a rank without episodes still takes part in the update).
  void Collect(int half, agents::RolloutBuffer* buffer, bool empty_second = false) {
    if (half == 1 && empty_second) return;
    std::mt19937_64 rng(77 + half);
    agents::CollectEpisodes(*policy, *env, 4, 100 + 4 * half, &rng, buffer);
  }
  std::vector<double> Weights() {
    std::vector<double> w;
    for (const auto& p : policy->net()->parameters()) {
      const torch::Tensor d = p.detach().to(torch::kFloat64).contiguous().reshape({-1});
      w.insert(w.end(), d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
    }
    return w;
  }
};

agents::Algorithm AlgorithmFromName(const std::string& name) {
  return name == "reinforce" ? agents::Algorithm::kReinforce : agents::Algorithm::kPpo;
}

std::string WeightsPath(const std::string& dir, int rank) { return dir + "/weights." + std::to_string(rank); }

void RunRank(int rank) {
  const char* dir = std::getenv(kDirVar);
  if (!dir) GTEST_SKIP() << "a rank of WorkersTest (started by it)";
  const std::string mode = std::getenv(kModeVar) ? std::getenv(kModeVar) : "";
  workers::Heartbeat(dir, rank);
  workers::Rendezvous rv;
  rv.rank = rank;
  rv.world_size = 2;
  rv.store_dir = dir;
  rv.timeout_s = 30;
  workers::ProcessGroup group(rv);
  if (mode == "fail") {
    if (rank == 1) std::_Exit(3);
    double x = 1;  // the peer is gone: a PeerFailure naming this rank, not a hang
    try {
      group.AllReduceSum(&x, 1);
      ADD_FAILURE() << "the all-reduce with a dead peer returned";
    } catch (const workers::PeerFailure& e) {
      EXPECT_EQ(std::string(e.what()).rfind("rank 0: ", 0), 0u) << e.what();
    }
    return;
  }
  if (mode == "bytes") {
    std::string text = rank == 0 ? std::string("config from rank 0\n") : "";
    group.Broadcast(&text, 0);
    const std::vector<std::string> all = group.AllGather(std::string(rank + 1, static_cast<char>('a' + rank)));
    WriteFileAtomic(WeightsPath(dir, rank), text + all.at(0) + "|" + all.at(1));
    return;
  }
  Setup s(AlgorithmFromName(std::getenv(kAlgoVar)));
  s.learner->SetCollective(&group);
  agents::RolloutBuffer buffer;
  s.Collect(rank, &buffer, mode == "empty");
  s.learner->Update(&buffer);
  const std::vector<double> w = s.Weights();
  WriteFileAtomic(WeightsPath(dir, rank), std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(double)));
}

TEST(WorkersRank, Rank0) { RunRank(0); }
TEST(WorkersRank, Rank1) { RunRank(1); }

// Runs the two ranks (this binary re-executed) in a fresh directory; throws as Launch.
void LaunchRanks(const std::string& dir, const std::string& algorithm, const std::string& mode) {
  setenv(kDirVar, dir.c_str(), 1);
  setenv(kAlgoVar, algorithm.c_str(), 1);
  setenv(kModeVar, mode.c_str(), 1);
  workers::LaunchOptions lo;
  lo.exe = "/proc/self/exe";
  lo.world_size = 2;
  lo.args = [](int rank) { return std::vector<std::string>{"--gtest_filter=WorkersRank.Rank" + std::to_string(rank)}; };
  lo.heartbeat_dir = dir;
  lo.timeout_s = 60;
  struct Unset {
    ~Unset() {
      unsetenv(kDirVar);
      unsetenv(kAlgoVar);
      unsetenv(kModeVar);
    }
  } unset;
  workers::Launch(lo);
}

std::vector<double> ReadWeights(const std::string& path) {
  const std::string bytes = ReadFile(path);
  std::vector<double> w(bytes.size() / sizeof(double));
  std::memcpy(w.data(), bytes.data(), w.size() * sizeof(double));
  return w;
}

void ExpectTwoRanksEqualOneProcess(const std::string& algorithm, bool empty_second = false) {
  const workers::TempDirectory dir("workers_test");
  LaunchRanks(dir.path(), algorithm, empty_second ? "empty" : "update");
  const std::vector<double> w0 = ReadWeights(WeightsPath(dir.path(), 0)), w1 = ReadWeights(WeightsPath(dir.path(), 1));

  Setup single(AlgorithmFromName(algorithm));
  const std::vector<double> initial = single.Weights();
  agents::RolloutBuffer both, second;
  single.Collect(0, &both);
  single.Collect(1, &second, empty_second);
  both.Append(std::move(second));
  single.learner->Update(&both);
  const std::vector<double> expected = single.Weights();

  ASSERT_EQ(w0.size(), expected.size());
  ASSERT_EQ(w1.size(), expected.size());
  double moved = 0, err = 0, scale = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(w0[i], w1[i]) << "the ranks' weights differ at " << i;
    moved = std::max(moved, std::abs(expected[i] - initial[i]));
    err = std::max(err, std::abs(w0[i] - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  EXPECT_GT(moved, 1e-4) << "the update did not change the weights";
  // To 1e-5 of the weights, and to 0.1 % of the update itself (measured: ~1e-5 of it; a
  // local advantage normalisation or baseline is off by far more).
  EXPECT_LE(err, 1e-3 * moved) << algorithm << ": max |2 ranks − 1 process| = " << err << ", largest update " << moved;
  EXPECT_LE(err, 1e-5 * scale) << algorithm << ": max |2 ranks − 1 process| = " << err << " (weights up to " << scale
                               << ", largest update " << moved << ")";
}

TEST(WorkersTest, TwoRanksPpoUpdateEqualsOneProcessOnTheCombinedBatch) { ExpectTwoRanksEqualOneProcess("ppo"); }

TEST(WorkersTest, TwoRanksReinforceUpdateEqualsOneProcessOnTheCombinedBatch) {
  ExpectTwoRanksEqualOneProcess("reinforce");
}

TEST(WorkersTest, ARankWithoutEpisodesTakesTheSameStep) {
  ExpectTwoRanksEqualOneProcess("ppo", /*empty_second=*/true);
  ExpectTwoRanksEqualOneProcess("reinforce", /*empty_second=*/true);
}

TEST(WorkersTest, BroadcastAndAllGatherCarryBytes) {
  const workers::TempDirectory dir("workers_test");
  LaunchRanks(dir.path(), "ppo", "bytes");
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ReadFile(WeightsPath(dir.path(), r)), "config from rank 0\na|bb");
}

TEST(WorkersTest, ARankThatExitsFailsTheLaunchNamingIt) {
  const workers::TempDirectory dir("workers_test");
  try {
    LaunchRanks(dir.path(), "ppo", "fail");
    FAIL() << "Launch returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 exited with status 3"), std::string::npos) << e.what();
  }
}

TEST(WorkersTest, RendezvousFromTheEnvironment) {
  workers::Rendezvous r;
  for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"}) unsetenv(v);
  EXPECT_FALSE(workers::RendezvousFromEnvironment(&r));
  setenv("MASTER_ADDR", "10.0.0.1", 1);
  EXPECT_THROW(workers::RendezvousFromEnvironment(&r), ConfigError);  // only some are set
  setenv("MASTER_PORT", "29500", 1);
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "4", 1);
  ASSERT_TRUE(workers::RendezvousFromEnvironment(&r));
  EXPECT_EQ(r.master_addr, "10.0.0.1");
  EXPECT_EQ(r.master_port, 29500);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world_size, 4);
  setenv("RANK", "4", 1);
  EXPECT_THROW(workers::RendezvousFromEnvironment(&r), ConfigError);  // rank outside the world
  setenv("RANK", "0", 1);
  setenv("MASTER_PORT", "http", 1);
  EXPECT_THROW(workers::RendezvousFromEnvironment(&r), ConfigError);
  for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"}) unsetenv(v);
}

}  // namespace
}  // namespace placerl
