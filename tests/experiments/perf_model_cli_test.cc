// perf-model simulate as a user runs it: a hand-made graph and placement file give the
// hand-computed Baechi schedule; malformed placements and out-of-memory are reported with
// a readable message and a non-zero exit; the trace has one row per op.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;

const std::string kBin = std::string(PLACERL_BIN_DIR) + "/perf-model";

class SimulateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/placerl_sim_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // a (10 µs) → b (20 µs) and a → c (30 µs); outputs of 5700 bytes = 1 µs at 5.7 GB/s.
    Write("g.graph", "op a matmul time=10e-6 out=5700\nop b matmul time=20e-6 out=100 inputs=a\n"
                     "op c matmul time=30e-6 params=1000 inputs=a\n");
    Write("p.txt", "a 0\nb 0\nc 1\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(SimulateCli, BaechiScheduleByHand) {
  const CmdResult r = Sh(kBin + " simulate --json --devices 2 --graph " + Path("g.graph") + " --placement " +
                         Path("p.txt") + " --trace " + Path("t.csv"));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  // b on device 0 runs 10..30 µs; a's output reaches device 1 after 134 + 1 µs → c runs
  // 145..175 µs.
  EXPECT_NEAR(j["makespan_s"].get<double>(), 175e-6, 1e-12);
  EXPECT_EQ(j["transfers"].get<int>(), 1);
  EXPECT_NEAR(j["devices"][0]["busy_s"].get<double>(), 30e-6, 1e-12);
  EXPECT_NEAR(j["devices"][1]["busy_s"].get<double>(), 30e-6, 1e-12);
  EXPECT_GE(j["devices"][1]["peak_memory_bytes"].get<double>(), 1000);
  EXPECT_NEAR(j["data_parallel"]["step_s"].get<double>(),
              j["makespan_s"].get<double>() + j["data_parallel"]["optimizer_s"].get<double>(), 1e-15);  // 1 replica
  const CmdResult dp = Sh(kBin + " simulate --json --devices 2 --graph " + Path("g.graph") + " --placement " +
                          Path("p.txt") + " --replicas 2 --ring-bw 1e9 --ring-latency 0");
  ASSERT_EQ(dp.status, 0) << dp.out;
  // c's 1000 parameter bytes on device 1: ring of 2 → AR = 2 · ½ · 1000 / 1e9.
  EXPECT_NEAR(nlohmann::json::parse(dp.out)["data_parallel"]["allreduce_s"].get<double>(), 1e-6, 1e-15);
  std::ifstream trace(Path("t.csv"));
  std::string line;
  int rows = 0;
  while (std::getline(trace, line)) ++rows;
  EXPECT_EQ(rows, 4);  // header + 3 ops
}

TEST_F(SimulateCli, MalformedPlacementNamesFileAndLine) {
  Write("bad.txt", "a 0\nb 7\nc 1\n");
  const CmdResult r = Sh(kBin + " simulate --devices 2 --graph " + Path("g.graph") + " --placement " + Path("bad.txt"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("bad.txt:2: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
}

TEST_F(SimulateCli, OutOfMemoryExitsWithTwo) {
  // Device 0 peaks at 5800 bytes (a's and b's outputs), device 1 at 6700 (c's params + the
  // received copy of a's output): only device 1 is over 6000.
  const CmdResult r = Sh(kBin + " simulate --devices 2 --memory 6000 --graph " + Path("g.graph") + " --placement " +
                         Path("p.txt"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("OUT OF MEMORY on device 1"), std::string::npos) << r.out;
  // The report names what is live: c's parameters and the received copy of a's output.
  EXPECT_NE(r.out.find("params        c"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("received copy a"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("OUT OF MEMORY on device 0"), std::string::npos) << r.out;
  const CmdResult js = Sh(kBin + " simulate --json --devices 2 --memory 6000 --graph " + Path("g.graph") +
                          " --placement " + Path("p.txt"));
  EXPECT_EQ(js.status, 2) << js.out;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["oom_report"]["device"].get<int>(), 1);
  EXPECT_NEAR(j["oom_report"]["peak_bytes"].get<double>(), 1000 + 5700, 1e-6);
}

// calibrate-host runs bin/host-calibrate (LibTorch) when it was built, and says what is
// missing otherwise; the written catalogue loads and has a `host` chip.
TEST_F(SimulateCli, CalibrateHostWritesALoadableCatalogue) {
  const std::string out = Path("cat/host.pbtxt");
  const CmdResult r = Sh(kBin + " calibrate-host --seconds 0.02 --out " + out);
  if (!std::filesystem::exists(std::string(PLACERL_BIN_DIR) + "/host-calibrate")) {
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.out.find("host-calibrate"), std::string::npos) << r.out;
    return;
  }
  ASSERT_EQ(r.status, 0) << r.out;
  const CmdResult run = Sh(kBin + " --catalog " + out + " run --json --mesh host:2 --model "
                                  "'transformer(layers=2,d_model=256,d_ff=1024,heads=4,seq=128,vocab=2048)' "
                                  "--plan data=2,global_batch=8,compute_dtype=fp32");
  ASSERT_EQ(run.status, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_GT(j["step_s"].get<double>(), 0);
}

TEST(SimulateCliArgs, BadDeviceSpecIsAnError) {
  const CmdResult r = Sh(kBin + " simulate --device plain:abc");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("plain:FLOPS,BYTES_PER_S"), std::string::npos) << r.out;
}

TEST(RunGraphCli, ResNetDataParallelOnAMesh) {
  // ResNet-50, 128 images per core, on a v3 4x4 (32 cores): JSON with 32 replicas, a positive
  // step time and examples/s = 32 · 128 / step.
  const CmdResult r = Sh(kBin + " run --json --graph 'resnet(depth=50,batch=128,fused=1)' "
                                "--mesh tpu_v3:4x4 --plan shard_optimizer=true,optimizer=sgd_momentum");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["replicas"].get<int>(), 32);
  const double step = j["step_s"].get<double>();
  EXPECT_GT(step, 0);
  EXPECT_NEAR(j["examples_per_s"].get<double>(), 32 * 128 / step, 1e-6 * 32 * 128 / step);
  EXPECT_FALSE(j["oom"].get<bool>());
  // Text output names the pieces.
  const CmdResult t = Sh(kBin + " run --graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("examples/s"), std::string::npos) << t.out;
  // Readable errors: a model-parallel plan, an unknown graph key, a wrong data degree.
  const CmdResult tp = Sh(kBin + " run --graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2 --plan tensor=2");
  EXPECT_NE(tp.status, 0);
  EXPECT_NE(tp.out.find("data parallel and pipelined only"), std::string::npos) << tp.out;
  const CmdResult key = Sh(kBin + " run --graph 'resnet(depth=18,layers=3)' --mesh tpu_v3:2x2");
  EXPECT_NE(key.status, 0);
  EXPECT_NE(key.out.find("unknown key 'layers'"), std::string::npos) << key.out;
  const CmdResult dp = Sh(kBin + " run --graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2 --plan data=3");
  EXPECT_NE(dp.status, 0);
  EXPECT_NE(dp.out.find("data=3"), std::string::npos) << dp.out;
}

TEST(ValidateCli, WritesTheTablesAndTheHeldOutError) {
  char tmpl[] = "/tmp/placerl_validate_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string out = std::string(tmpl) + "/v.md";
  const CmdResult r = Sh(kBin + " validate --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("held out (leave-one-out refits): median"), std::string::npos) << r.out;
  std::ifstream f(out);
  const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* part : {"| X1 |", "| N8a |", "Partial-configuration rows", "| M1 |",
                           "## Held-out error (leave-one-out)", "Time / throughput rows only"})
    EXPECT_NE(md.find(part), std::string::npos) << part;
  // --fit prints the fitted parameters in one line; a bad measurements file is a readable error.
  const CmdResult fit = Sh(kBin + " validate --fit --no-held-out --out ''");
  ASSERT_EQ(fit.status, 0) << fit.out;
  EXPECT_EQ(fit.out.rfind("fit: matmul ", 0), 0u) << fit.out;
  std::ofstream(std::string(tmpl) + "/bad.pbtxt") << "row { id: \"Z\" metric: NOPE }\n";
  const CmdResult bad = Sh(kBin + " validate --measurements " + tmpl + "/bad.pbtxt --out ''");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("bad.pbtxt:1"), std::string::npos) << bad.out;
  std::filesystem::remove_all(tmpl);
}

TEST(InferCli, JsonAndErrors) {
  const std::string model =
      "'transformer(layers=8,d_model=2048,d_ff=8192,heads=16,kv_heads=1,seq=1024,vocab=32000)'";
  const CmdResult r = Sh(kBin + " infer --json --model " + model +
                         " --mesh tpu_v4:2x2x2 --batch 8 --prompt 512 --generate 16 --weights int8 --batch-sharded-kv");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["prefill_s"].get<double>(), 0);
  EXPECT_NEAR(j["decode_s"].get<double>(), 16 * j["decode_step_s"].get<double>(), 1e-12);
  const CmdResult bad = Sh(kBin + " infer --model " + model + " --mesh tpu_v4:2x2x2 --weights int3");
  EXPECT_NE(bad.status, 0);
  const CmdResult dp = Sh(kBin + " infer --model " + model + " --mesh tpu_v4:2x2x2 --plan data=8,global_batch=8");
  EXPECT_NE(dp.status, 0);
  EXPECT_NE(dp.out.find("tensor layouts only"), std::string::npos) << dp.out;
}

}  // namespace
