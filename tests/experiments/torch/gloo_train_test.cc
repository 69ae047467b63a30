// gloo-train: 2-process data parallel and pipeline runs over c10d Gloo give the same losses
// as one process on the whole batch; failures are readable errors; the prediction with a
// hand-made `host` chip is a positive finite number. Tiny configs, no timing assertions.
// Needs bin/gloo-train built next to the tests (testing::BinDir()).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/errors.h"
#include "agents/gloo_train.h"
#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"

namespace placerl {
namespace {

const char* kTinyModel = "transformer(layers=2,d_model=32,d_ff=64,heads=2,seq=16,vocab=64)";

std::string Binary() { return placerl::testing::BinDir() + "/gloo-train"; }

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gloo_train_test.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw IoError("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CmdResult {
  int status = -1;
  std::string out, err;
};

// Runs gloo-train with `args` (already shell-quoted where needed).
CmdResult RunBinary(const std::string& args) {
  TempDir tmp;
  const std::string out = tmp.path() + "/out", err = tmp.path() + "/err";
  const std::string cmd = "'" + Binary() + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(cmd.c_str());
  CmdResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

nlohmann::json RunJson(const std::string& mode, const std::string& extra) {
  const CmdResult r = RunBinary("--json --mode " + mode + " --model '" + kTinyModel +
                                "' --global-batch 4 --warmup 0 --steps 3 --seed 7 --lr 3e-3 " + extra);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return nlohmann::json();
  return nlohmann::json::parse(r.out);
}

void ExpectSameLosses(const nlohmann::json& a, const nlohmann::json& b) {
  const auto la = a.at("loss").get<std::vector<double>>(), lb = b.at("loss").get<std::vector<double>>();
  ASSERT_EQ(la.size(), 3u);
  ASSERT_EQ(lb.size(), 3u);
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_TRUE(std::isfinite(la[i]));
    EXPECT_NEAR(la[i], lb[i], 1e-4 * std::abs(la[i])) << "step " << i + 1;
  }
  // The gradient the optimizer used (after the all-reduce average / over both stages).
  const auto ga = a.at("grad_norm").get<std::vector<double>>(), gb = b.at("grad_norm").get<std::vector<double>>();
  ASSERT_EQ(ga.size(), 3u);
  ASSERT_EQ(gb.size(), 3u);
  for (size_t i = 0; i < ga.size(); ++i) {
    EXPECT_GT(ga[i], 0);
    EXPECT_NEAR(ga[i], gb[i], 1e-4 * ga[i]) << "gradient norm, step " << i + 1;
  }
  const double sa = a.at("param_sq_sum").get<double>(), sb = b.at("param_sq_sum").get<double>();
  EXPECT_NEAR(sa, sb, 1e-4 * sa) << "final parameters differ";
  EXPECT_EQ(a.at("params").get<int64_t>(), b.at("params").get<int64_t>());
}

TEST(GlooTrain, BinaryExists) {
  ASSERT_EQ(access(Binary().c_str(), X_OK), 0) << Binary() << " not built (ninja gloo-train)";
}

TEST(GlooTrain, DataParallelMatchesSingleProcess) {
  const nlohmann::json single = RunJson("single", "");
  const nlohmann::json dp = RunJson("dp", "");
  ASSERT_FALSE(single.is_null());
  ASSERT_FALSE(dp.is_null());
  EXPECT_EQ(dp.at("processes").get<int>(), 2);
  ExpectSameLosses(single, dp);
  // Both ranks apply the same averaged gradient: bit-identical parameters.
  EXPECT_EQ(dp.at("param_max_abs_diff").get<double>(), 0.0);
  // The loss must actually move (the optimizer ran on the all-reduced gradients).
  const auto loss = dp.at("loss").get<std::vector<double>>();
  EXPECT_NE(loss.front(), loss.back());
}

TEST(GlooTrain, DataParallelSeveralBucketsMatchesSingleProcess) {
  // A bucket cap smaller than one weight matrix: one bucket per parameter.
  const nlohmann::json single = RunJson("single", "");
  const nlohmann::json dp = RunJson("dp", "--bucket-mb 0.001");
  ASSERT_FALSE(dp.is_null());
  ExpectSameLosses(single, dp);
  EXPECT_EQ(dp.at("param_max_abs_diff").get<double>(), 0.0);
}

TEST(GlooTrain, PipelineMatchesSingleProcess) {
  const nlohmann::json single = RunJson("single", "");
  const nlohmann::json pipe = RunJson("pipeline", "--microbatches 2");
  ASSERT_FALSE(pipe.is_null());
  EXPECT_EQ(pipe.at("processes").get<int>(), 2);
  EXPECT_EQ(pipe.at("microbatches").get<int>(), 2);
  ExpectSameLosses(single, pipe);
}

TEST(GlooTrain, BadFlagsAreReadableErrors) {
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"--mode nope", "expected single, dp or pipeline"},
      {"--mode dp --global-batch 3", "must be even"},
      {"--mode pipeline --global-batch 6 --microbatches 4", "not divisible by --microbatches"},
      {"--model 'transformer(layers=2,bogus=1)'", "unknown key \"bogus\""},
      {"--catalog /nonexistent/catalog.pbtxt", "/nonexistent/catalog.pbtxt"},
      {"--steps 0", "--steps must be >= 1"},
      {"--no-such-flag", "no-such-flag"},
  };
  for (const Case& c : cases) {
    const bool own_model = c.args.find("--model") != std::string::npos;
    const CmdResult r = RunBinary(own_model ? c.args : c.args + " --model '" + std::string(kTinyModel) + "'");
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  }
}

TEST(GlooTrain, DeadPeerIsAnError) {
  const CmdResult r = RunBinary(std::string("--mode dp --model '") + kTinyModel +
                                "' --global-batch 4 --warmup 0 --steps 3 --timeout 20 --debug-fail-rank 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("gloo-train: error: dp run failed: rank 1 exited with status 3"), std::string::npos)
      << r.err;
}

TEST(GlooTrain, HungPeerIsAnError) {
  const CmdResult r = RunBinary(std::string("--mode pipeline --model '") + kTinyModel +
                                "' --global-batch 4 --microbatches 2 --warmup 0 --steps 3 --timeout 3 "
                                "--debug-hang-rank 0");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("gloo-train: error: pipeline run failed"), std::string::npos) << r.err;
}

TEST(GlooTrain, SingleProcessInProcess) {
  GlooTrainOptions o;
  o.model = kTinyModel;
  o.global_batch = 2;
  o.warmup = 1;
  o.steps = 2;
  const GlooRunResult r = RunGlooTraining(o, "");
  EXPECT_EQ(r.processes, 1);
  EXPECT_EQ(r.loss.size(), 3u);
  EXPECT_EQ(r.step_s.size(), 2u);
  EXPECT_GT(r.step_median_s, 0);
  EXPECT_GT(r.params, 0);
  EXPECT_FALSE(r.prediction.available);  // the embedded catalogue has no `host` chip (yet)
  EXPECT_NE(r.prediction.note.find("calibrate-host"), std::string::npos);
  // The report and the JSON say so instead of failing.
  EXPECT_NE(FormatGlooReport(r).find("prediction: unavailable"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(GlooResultJson(r)).at("prediction").at("available").get<bool>());
}

TEST(GlooTrain, PredictionWithHandMadeHostChip) {
  TempDir tmp;
  const std::string path = tmp.path() + "/catalog.pbtxt";
  {
    std::ofstream out(path);
    out << perf::DefaultCatalogText() << R"(
chip {
  name: "host"
  peak { dtype: FP32 flops_per_s: 50e9 }
  peak { dtype: BF16 flops_per_s: 50e9 }
  hbm_bytes: 8e9
  hbm_bw: 10e9
  devices_per_chip: 1
  ici { topology: RING links_per_chip: 1 link_bw_one_way: 1e9 hop_latency_s: 5e-05 }
  efficiency { matmul: 0.8 memory: 1.0 collective_bw: 1.0 }
}
)";
  }
  for (GlooMode mode : {GlooMode::kSingle, GlooMode::kDataParallel, GlooMode::kPipeline}) {
    GlooTrainOptions o;
    o.mode = mode;
    o.catalog = path;
    o.microbatches = 4;
    const GlooPrediction p = PredictGlooRun(o);
    ASSERT_TRUE(p.available) << GlooModeName(mode) << ": " << p.note;
    EXPECT_TRUE(std::isfinite(p.step_s) && p.step_s > 0) << GlooModeName(mode);
    EXPECT_GT(p.compute_s, 0);
    EXPECT_GT(p.model_flops, 0);
    EXPECT_EQ(p.mesh, mode == GlooMode::kSingle ? "host:1" : "host:2");
  }
  // Half the batch per process: data parallel is predicted faster than one process.
  GlooTrainOptions single, dp;
  single.catalog = dp.catalog = path;
  dp.mode = GlooMode::kDataParallel;
  EXPECT_LT(PredictGlooRun(dp).step_s, PredictGlooRun(single).step_s);
}


// ------------------------------------------------------------ limits

// Every count option at its maximum: refused up front with one line (counts beyond their
// bounds, a batch whose memory estimate is beyond 8 GiB, microbatches that do not divide the
// batch), or run with bounded memory (`ulimit -v`) and stopped within seconds by Ctrl-C, the
// steps done reported — in one process and with two (Ctrl-C reaches the launcher and both
// ranks, as a terminal sends it to the process group).
TEST(GlooTrain, EveryCountAtItsMaximumStopsOnCtrlCOrIsRefused) {
  const std::string model = std::string(" --model '") + kTinyModel + "'";
  struct Refused {
    std::string args, expect;
  } refused[] = {
      {"--steps 100001", "--steps must be <= 100000"},
      {"--warmup 100001", "--warmup must be <= 100000"},
      {"--global-batch 65537", "--global-batch must be <= 65536"},
      {"--global-batch 65536", "GiB of memory per process"},  // the default model
      {"--mode pipeline --global-batch 6 --microbatches 65536", "not divisible by --microbatches"},
      {"--timeout 1e9", "--timeout must be in"},
      {"--bucket-mb 1e9", "--bucket-mb must be in"},
      {"--steps 99999999999", "--steps"},
  };
  for (const Refused& c : refused) {
    const CmdResult r = RunBinary(c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
  }
  constexpr long kAddressSpaceKb = 6000000;  // per process: LibTorch maps a few GB
  for (const std::string& args : {std::string("--steps 100000 --global-batch 4"), std::string("--warmup 100000 --global-batch 4"),
                                  std::string("--mode dp --steps 100000 --global-batch 4"),
                                  std::string("--mode pipeline --steps 100000 --global-batch 4 --microbatches 4")}) {
    SCOPED_TRACE(args);
    // Ctrl-C once the run is training: 6 s after the start in one process; with two, 3 s after
    // both ranks are up (their heartbeat files exist in a rendezvous folder made after the start:
    // a rank still loading LibTorch has no handler yet and would die of the signal).
    const auto start = std::filesystem::file_time_type::clock::now();
    const bool two = args.find("--mode") != std::string::npos;
    std::chrono::steady_clock::time_point up{};
    auto ready = [&] {
      if (up == std::chrono::steady_clock::time_point{}) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
          if (e.path().filename().string().rfind("gloo-train.", 0) != 0 || e.last_write_time(ec) < start) continue;
          if (!two || (std::filesystem::exists(e.path() / "progress.0") && std::filesystem::exists(e.path() / "progress.1")))
            up = std::chrono::steady_clock::now();
        }
        if (!two) up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        return false;
      }
      return std::chrono::steady_clock::now() - up > std::chrono::seconds(3);
    };
    const auto r = testing::RunAndInterrupt("'" + Binary() + "' --json " + args + model, ready, 120, SIGINT, 30, kAddressSpaceKb);
    ASSERT_TRUE(r.signalled) << r.err;
    ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
    const bool warm = args.find("--warmup") != std::string::npos;
    EXPECT_EQ(j["steps_requested"].get<int>(), warm ? 8 : 100000);
    EXPECT_EQ(j["warmup_requested"].get<int>(), warm ? 100000 : 2);
    EXPECT_LT(j["steps"].get<int>(), 100000);
    EXPECT_EQ(j["steps"].get<size_t>(), j["step_s"].size());
    EXPECT_EQ(j["loss"].size(), j["warmup"].get<size_t>() + j["steps"].get<size_t>());
    EXPECT_GE(j["loss"].size(), 1u);
  }
}
}  // namespace
}  // namespace placerl
