// perf-model simulate as a user runs it: a hand-made graph and placement file give the
// hand-computed Baechi schedule; malformed placements and out-of-memory are reported with
// a readable message and a non-zero exit; the trace has one row per op.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_models/tpu/perf_json.h"
#include "datasets/util/errors.h"
#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;

const std::string kBin = placerl::testing::BinDir() + "/perf-model";

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
  if (!std::filesystem::exists(placerl::testing::BinDir() + "/host-calibrate")) {
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
  EXPECT_NE(r.out.find("held out by paper (leave-one-paper-out refits): median"), std::string::npos) << r.out;
  std::ifstream f(out);
  const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* part : {"| X1 |", "| N8a |", "Partial-configuration rows", "| M1 |",
                           "## Held-out error (leave-one-out)", "Time / throughput rows only",
                           "## Held-out error by paper (leave-one-paper-out)", "| Narayanan et al. 2021 | 9 |"})
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

// ---- the input and output convention (issue 12) ----

// A failure is one line `perf-model: error: ...` and exit 1.
void ExpectOneLineError(const std::string& args, const std::string& needle) {
  const CmdResult r = Sh("timeout 60 " + kBin + " " + args);
  EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("perf-model: error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
}

TEST(PerfModelInputs, HugeMeshesAreErrorsNotWrappedCounts) {
  // Printed "(16 devices)" and a negative count before.
  ExpectOneLineError("run --mesh tpu_v5e:16x268435457 --plan fsdp=16,global_batch=64", "268435457");
  ExpectOneLineError("run --mesh tpu_v5e:100000x100000x100000", "exceed the limit of 1048576 devices");
  ExpectOneLineError("run --mesh tpu_v5e:16x16,slices=268435457", "slices=268435457");
  ExpectOneLineError("search --mesh tpu_v5e:16x16,slices=0", "slices=0");
}

TEST(PerfModelInputs, TimesCountsAndSizesAreChecked) {
  // `simulate --bench inf` never returned; `bench --seconds -1` printed "-nan ... /s", exit 0.
  ExpectOneLineError("simulate --bench inf", "not finite");
  ExpectOneLineError("bench --seconds -1", "outside");
  ExpectOneLineError("bench --seconds nan", "not finite");
  ExpectOneLineError("simulate --memory -1", "outside");
  ExpectOneLineError("simulate --memory nan", "not finite");
  ExpectOneLineError("simulate --memory 0", "outside");
  ExpectOneLineError("simulate --replicas 0", "outside");
  ExpectOneLineError("infer --batch 1.5", "not a whole number");
  ExpectOneLineError("infer --prompt -3", "outside");
  ExpectOneLineError("search --top -1", "outside");  // "internal: vector::_M_default_append" before
}

TEST(PerfModelInputs, BadPlanValuesAndRepeatedKeys) {
  ExpectOneLineError("run --plan interleave=0", "interleave=0");
  ExpectOneLineError("run --plan pipeline=2,interleave=-1", "interleave=-1");
  ExpectOneLineError("run --plan tensor_x=0", "tensor_x=0");
  ExpectOneLineError("run --plan microbatches=-4", "microbatches=-4");
  ExpectOneLineError("run --plan fsdp=16,fsdp=16", "given twice");
  ExpectOneLineError("run --model 'transformer(layers=2,layers=4)'", "given twice");
  ExpectOneLineError("run --model 'transformer(dropout=maybe)'", "model dropout: expected true/false, got \"maybe\"");
  // Inconsistent degrees say which numbers do not fit.
  ExpectOneLineError("run --plan fsdp=16,tensor=4", "data=1 x fsdp=16 x tensor=4 x pipeline=1 = 64 devices, but the mesh has 256");
  ExpectOneLineError("run --plan tensor=3", "tensor=3");
  ExpectOneLineError("run --mesh tpu_v5e:4 --plan tensor=4 --model 'transformer(heads=6)'",
                     "tensor does not divide heads (data 1, fsdp 1, tensor 4");
}

class PerfModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/placerl_perf_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

TEST_F(PerfModelFiles, EmptyInputsAreErrors) {
  ExpectOneLineError("simulate --graph " + Write("empty.graph", "# nothing here\n"), "empty.graph:1: no ops");
  // Printed "median 0.0 %" before.
  ExpectOneLineError("validate --measurements " + Write("none.pbtxt", "# no rows\n"), "none.pbtxt:1: no measurement rows");
}

// A plan file with an enum number that no value has (proto3 enums are open: the parser takes
// `remat: 77`) is refused at its field, one line, exit 1 — not an internal error later; a bad
// value that ends its line is named on its own line (the shared .pbtxt reader,
// run::ParseTextFormat; TextProto.ErrorsNameTheLineOfTheBadToken).
TEST_F(PerfModelFiles, PlanFileErrorsNameTheBadTokensLine) {
  const std::string plan = Write("plan.pbtxt", "# a plan\nglobal_batch: 64\nremat: 77\n");
  ExpectOneLineError("run --plan " + plan, plan + ":3:1: Unknown enumeration value 77 for field \"remat\" (Remat)\n");
  const std::string last = Write("last.pbtxt", "# a plan\nremat: 77");
  ExpectOneLineError("run --plan " + last, last + ":2:1: Unknown enumeration value 77");
  const std::string flag = Write("flag.pbtxt", "# a plan\nshard_optimizer: maybe\nglobal_batch: 64\n");
  ExpectOneLineError("run --plan " + flag, flag + ":2:18: Invalid value for boolean field \"shard_optimizer\"");
}

TEST_F(PerfModelFiles, ModelStringAndPbtxtMeanTheSame) {
  const std::string file = Write("m.pbtxt", "layers: 4\nheads: 8\nd_model: 1024\n");
  const CmdResult a = Sh(kBin + " run --json --mesh tpu_v5e:4 --plan global_batch=16 --model " + file);
  const CmdResult b = Sh(kBin + " run --json --mesh tpu_v5e:4 --plan global_batch=16 --model "
                                "'transformer(layers=4,heads=8,d_model=1024)'");
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << b.out;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["model"], jb["model"]);
  EXPECT_NE(ja["model"].get<std::string>().find("flash_attention=true"), std::string::npos) << a.out;
  EXPECT_DOUBLE_EQ(ja["step_s"].get<double>(), jb["step_s"].get<double>());
}

TEST(PerfModelDefaults, OverridesMergeWithDefaults) {
  // `--plan data=2` changes data only: fsdp takes the rest, global_batch stays 512.
  const CmdResult r = Sh(kBin + " run --plan data=2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("plan   data=2,fsdp=128,tensor=1,pipeline=1,microbatches=1,expert=1,remat=none,global_batch=512"),
            std::string::npos)
      << r.out;
  // A model string gives defaults for the keys it omits ("layers must be > 0" before).
  const CmdResult m = Sh(kBin + " run --json --model 'transformer(heads=8)'");
  ASSERT_EQ(m.status, 0) << m.out;
  EXPECT_EQ(nlohmann::json::parse(m.out)["model"].get<std::string>().rfind("transformer(layers=24,d_model=2048,", 0), 0u)
      << m.out;
}

TEST(PerfModelExit, InfeasibleIsTwoInEverySubcommand) {
  // GPT-3-sized model on 2 chips: out of HBM. `run` exited 0 before.
  const std::string big = " --model 'transformer(layers=96,d_model=12288,d_ff=49152,heads=96)' --mesh tpu_v5e:2";
  const CmdResult run = Sh(kBin + " run" + big + " --plan global_batch=8");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("OOM"), std::string::npos) << run.out;
  const CmdResult search = Sh(kBin + " search" + big);
  EXPECT_EQ(search.status, 2) << search.out;
  EXPECT_NE(search.out.find("no plan fits"), std::string::npos) << search.out;
  const CmdResult infer = Sh(kBin + " infer" + big + " --batch 512 --prompt 65536");
  EXPECT_EQ(infer.status, 2) << infer.out;
  const CmdResult ok = Sh(kBin + " run --mesh tpu_v5e:4 --plan global_batch=16 --model "
                                 "'transformer(layers=2,d_model=512,heads=8)'");
  EXPECT_EQ(ok.status, 0) << ok.out;
}

TEST(PerfModelSearch, HonoursFixedKeysAndShowsExpert) {
  const std::string model = " --model 'transformer(layers=8,d_model=1024,d_ff=4096,heads=8,seq=512)' --mesh tpu_v5e:4x4";
  const CmdResult r = Sh(kBin + " search --json --top 50" + model + " --plan tensor=2,remat=full,global_batch=64");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) {
    const std::string plan = p["plan"].get<std::string>();
    EXPECT_NE(plan.find(",tensor=2,"), std::string::npos) << plan;
    EXPECT_NE(plan.find("remat=full"), std::string::npos) << plan;
  }
  const CmdResult text = Sh(kBin + " search --top 3" + model);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find(" expert "), std::string::npos) << text.out;
}

// `--json` prints exactly one JSON document (nlohmann::json::parse refuses trailing text)
// with the resolved options; `--verbose` prints them in text mode.
TEST(PerfModelJson, OneDocumentPerInvocation) {
  const std::string small = " --model 'transformer(layers=2,d_model=512,heads=8)' --mesh tpu_v5e:4 --plan global_batch=16";
  for (const std::string& args : std::vector<std::string>{
           "run --json" + small, "run --json --graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2",
        "search --json --top 2" + small, "infer --json" + small, "bench --json --seconds 0.01" + small,
        "simulate --json --bench 0.01 --graph 'chain(ops=10)'", "validate --json --fit --no-held-out",
        "energy --json --chip tpu_v2 --chips 8 --hours 2", "energy --json --validate",
        "diloco --json --islands 2 --inner-steps 10" + small, "formats --json" + small}) {
    const CmdResult r = Sh(kBin + " " + args + " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << args << "\n" << r.out;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << args << "\n" << r.out;
    EXPECT_TRUE(j.is_object()) << args;
    EXPECT_TRUE(j.contains("options")) << args << "\n" << r.out;
  }
  const CmdResult v = Sh(kBin + " run --verbose" + small);
  ASSERT_EQ(v.status, 0) << v.out;
  EXPECT_EQ(v.out.rfind("options {", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("\"resolved\""), std::string::npos) << v.out;
}

// run / search / infer / simulate --json print the library's document (PerfModelDocument, what
// placerl.perf_model returns) byte for byte, with its status as the exit code.
TEST(PerfModelJson, TheBinaryPrintsTheLibraryDocument) {
  using nlohmann::json;
  const std::string model = "transformer(layers=2,d_model=512,heads=8)";
  struct Case {
    std::string sub, args;
    json options;
  };
  const std::vector<Case> cases = {
      {"run", "--model '" + model + "' --mesh tpu_v5e:4 --plan global_batch=16",
       {{"model", model}, {"mesh", "tpu_v5e:4"}, {"plan", "global_batch=16"}}},
      {"run", "--graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2",
       {{"graph", "resnet(depth=18,batch=8)"}, {"mesh", "tpu_v3:2x2"}}},
      {"run", "--mesh tpu_v5e:2x2 --model 'transformer(layers=48,d_model=8192,d_ff=32768,heads=64)'",
       {{"mesh", "tpu_v5e:2x2"}, {"model", "transformer(layers=48,d_model=8192,d_ff=32768,heads=64)"}}},
      {"search", "--top 3 --no-schedules --model '" + model + "' --mesh tpu_v5e:4 --plan tensor=2",
       {{"top", 3}, {"no_schedules", true}, {"model", model}, {"mesh", "tpu_v5e:4"}, {"plan", "tensor=2"}}},
      {"infer", "--model '" + model + "' --mesh tpu_v4:2x2x2 --batch 8 --energy --idle-capacity 0.5",
       {{"model", model}, {"mesh", "tpu_v4:2x2x2"}, {"batch", 8}, {"energy", true}, {"idle_capacity", 0.5}}},
      {"simulate", "--graph 'layered(ops=200,width=20,fan_in=3,seed=3)' --device tpu_v4 --memory 1e6",
       {{"graph", "layered(ops=200,width=20,fan_in=3,seed=3)"}, {"device", "tpu_v4"}, {"memory", 1e6}}},
      {"simulate", "--machine 'k80(gpus=2,cpu=1)' --graph 'chain(ops=10)' --replicas 2",
       {{"machine", "k80(gpus=2,cpu=1)"}, {"graph", "chain(ops=10)"}, {"replicas", 2}}},
  };
  int infeasible = 0;
  for (const Case& c : cases) {
    const CmdResult r = Sh(kBin + " " + c.sub + " --json " + c.args);
    int status = -1;
    const json doc = placerl::perf::PerfModelDocument(c.sub, c.options, &status);
    EXPECT_EQ(r.status, status) << c.args;
    EXPECT_EQ(r.out, doc.dump(2) + "\n") << c.args;
    infeasible += status == 2;
  }
  EXPECT_EQ(infeasible, 2);  // the 48-layer model on 4 chips and the simulation over 1 MB
  // --one-matmul-constant and --catalog are the document's one_matmul_constant and catalog.
  const CmdResult one = Sh(kBin + " --one-matmul-constant --catalog cost_models/tpu/catalog/hardware.pbtxt run --json");
  EXPECT_EQ(one.out, placerl::perf::PerfModelDocument(
                         "run", {{"one_matmul_constant", true}, {"catalog", "cost_models/tpu/catalog/hardware.pbtxt"}})
                             .dump(2) + "\n");
  EXPECT_THROW(placerl::perf::PerfModelDocument("bench", json::object()), placerl::ConfigError);
  EXPECT_THROW(placerl::perf::PerfModelDocument("run", {{"top", 3}}), placerl::ConfigError);
  EXPECT_THROW(placerl::perf::PerfModelDocument("run", json::array()), placerl::ConfigError);
}

// `energy`: a run given by its days (T5 of Patterson et al. 2021 Table 4 with the table's
// 283 W per v3 chip), a run whose time the evaluator predicts from --tokens, the validation
// page, and inputs that cannot be accounted as one-line errors.
TEST_F(PerfModelFiles, EnergyOfARunAndThePublishedRuns) {
  const CmdResult r = Sh(kBin + " energy --json --chip tpu_v3 --chips 512 --days 20 --pue 1.12 --grid 0.545");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["facility_mwh"].get<double>(), 512 * 480 * 283 * 1.12 / 1e6, 1e-9);
  EXPECT_NEAR(j["gross_tco2e"].get<double>(), j["facility_mwh"].get<double>() * 0.545, 1e-9);
  EXPECT_TRUE(j.contains("options"));
  const std::string small = " --model 'transformer(layers=2,d_model=512,heads=8)' --mesh tpu_v4:2x2x1 --plan global_batch=16";
  const CmdResult t = Sh(kBin + " energy --json --tokens 1e9 --power-w 300" + small);
  ASSERT_EQ(t.status, 0) << t.out;
  const auto jt = nlohmann::json::parse(t.out);
  const double tok_s = jt["run"]["tokens_per_s"].get<double>();
  ASSERT_GT(tok_s, 0);
  EXPECT_NEAR(jt["hours"].get<double>(), 1e9 / tok_s / 3600, 1e-9 * jt["hours"].get<double>());
  EXPECT_EQ(jt["chips"].get<double>(), 4);
  EXPECT_NEAR(jt["it_mwh"].get<double>(), 4 * jt["hours"].get<double>() * 300 / 1e6, 1e-12);
  const CmdResult v = Sh("cd " + dir_ + " && " + kBin + " energy --validate --out e.md");
  ASSERT_EQ(v.status, 0) << v.out;
  EXPECT_NE(v.out.find("Runs evaluated: 11."), std::string::npos) << v.out;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/e.md"));
  ExpectOneLineError("energy --chip tpu_v3 --chips 8", "one of --days / --hours");
  ExpectOneLineError("energy --chip tpu_v5p --chips 8 --days 1", "give --power-w");
  ExpectOneLineError("energy --chip tpu_v3 --chips 8 --days 1 --pue 0.5", "--pue");
  ExpectOneLineError("energy --tokens 1e9 --chips 8" + small, "--tokens");
  ExpectOneLineError("energy --chip tpu_v3 --chips 8 --days 1 --out x.md", "--validate");
}

// `energy --utilisation` / `--idle-capacity` / `--tokens` on a chip with a power model (tpu_v3:
// P̄ 283 W at ū 0.3461, β 1.13): P(u) by hand, idle accelerators at P(0), --tokens at the plan's
// HFU; out-of-range or misplaced options are errors.
TEST_F(PerfModelFiles, EnergyByUtilisationAndIdleCapacity) {
  auto P = [](double u) { return 283 * (1 + 1.13 * (u - 0.3461)); };
  const std::string run = " energy --json --chip tpu_v3 --chips 512 --days 20 --pue 1.12 --grid 0.545";
  const CmdResult a = Sh(kBin + run + " --utilisation 0.3461");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NEAR(nlohmann::json::parse(a.out)["power_w"].get<double>(), 283, 1e-9);
  const CmdResult b = Sh(kBin + run + " --utilisation 0.6 --idle-capacity 0.25");
  ASSERT_EQ(b.status, 0) << b.out;
  const auto jb = nlohmann::json::parse(b.out);
  EXPECT_NEAR(jb["busy_power_w"].get<double>(), P(0.6), 1e-9);
  EXPECT_NEAR(jb["idle_power_w"].get<double>(), P(0), 1e-9);
  EXPECT_NEAR(jb["power_w"].get<double>(), P(0.6) + 0.25 * P(0), 1e-9);
  EXPECT_NEAR(jb["facility_mwh"].get<double>(), 512 * 480 * (P(0.6) + 0.25 * P(0)) * 1.12 / 1e6, 1e-9);
  const std::string small = " --model 'transformer(layers=2,d_model=512,heads=8)' --mesh tpu_v3:2x2 --plan global_batch=16";
  const CmdResult t = Sh(kBin + " energy --json --tokens 1e9" + small);
  ASSERT_EQ(t.status, 0) << t.out;
  const auto jt = nlohmann::json::parse(t.out);
  EXPECT_NEAR(jt["power_w"].get<double>(), P(jt["run"]["hfu"].get<double>()), 1e-9);
  ExpectOneLineError("energy --tokens 1e9 --utilisation 0.5" + small, "--utilisation");
  const CmdResult bad = Sh(kBin + run + " --utilisation 1.5 2>&1");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("--utilisation"), std::string::npos) << bad.out;
}

// `formats`: one row per format, HBM falling with the width, the table written on request;
// a malformed format is a one-line error naming the accepted forms.
TEST_F(PerfModelFiles, FormatsTableAcrossExmyWidths) {
  const std::string small = " --model 'transformer(layers=4,d_model=2048,d_ff=8192,heads=16)' --mesh tpu_v5e:4x4 --plan global_batch=32";
  const CmdResult r = Sh(kBin + " formats --json --out " + dir_ + "/f.md" + small);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  const int bits[4] = {16, 8, 6, 4};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(j["rows"][i]["bits"].get<int>(), bits[i]);
    if (i > 0) {
      EXPECT_LT(j["rows"][i]["hbm_bytes_per_device"]["total"].get<double>(),
                j["rows"][i - 1]["hbm_bytes_per_device"]["total"].get<double>());
    }
  }
  std::ifstream f(dir_ + "/f.md");
  const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("| e3m2 | 6 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Compute-rate assumption"), std::string::npos) << md;
  ExpectOneLineError("formats --formats bf16,e9m9x" + small, "expected eXmY");
  ExpectOneLineError("formats --tensors weights,kv" + small, "--tensors takes");
}

// `diloco`: islands × H rows, traffic falling as 1/H, the island step from the evaluator (as
// `run` prints it); a catalogue chip without DCN needs --dcn-gbps.
TEST_F(PerfModelFiles, DilocoIslandsTable) {
  const std::string island = " --model 'transformer(layers=4,d_model=2048,d_ff=8192,heads=16)' --mesh tpu_v5e:4x4 --plan global_batch=32";
  const CmdResult r = Sh(kBin + " diloco --json --islands 2,8 --inner-steps 1,100 --out " + dir_ + "/d.md" + island);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  const CmdResult run = Sh(kBin + " run --json" + island);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_DOUBLE_EQ(j["island_step_s"].get<double>(), nlohmann::json::parse(run.out)["step_s"].get<double>());
  EXPECT_NEAR(j["rows"][1]["dcn_bytes_per_step"].get<double>() * 100, j["rows"][0]["dcn_bytes_per_step"].get<double>(),
              1e-6 * j["rows"][0]["dcn_bytes_per_step"].get<double>());
  EXPECT_LE(j["rows"][1]["step_s"].get<double>(), j["rows"][0]["step_s"].get<double>());
  // The page's header lines are whole (a fixed 512-byte buffer cut them: the model string is
  // long, and the table's first line ran into the truncated bandwidth line).
  std::ifstream f(dir_ + "/d.md");
  const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("dcn_bw efficiency), α = "), std::string::npos) << md;
  EXPECT_NE(md.find("\n| islands M | H |"), std::string::npos) << md;
  EXPECT_NE(md.find("flash_attention=true"), std::string::npos) << md;
  ExpectOneLineError("diloco --mesh tpu_v3:2x2 --model 'transformer(layers=2,d_model=512,heads=8)' --plan global_batch=8",
                     "give --dcn-gbps");
  ExpectOneLineError("diloco --islands 1,2" + island, "--islands");
}

// `diloco --straggler --failed-islands`: a second table and a `faults` object per row; the
// decoupled variant sits between the healthy and the synchronous (barrier) step; the first
// table is unchanged by the options; out-of-range values are one-line errors.
TEST_F(PerfModelFiles, DilocoStragglersAndFailedIslands) {
  const std::string island = " --model 'transformer(layers=4,d_model=2048,d_ff=8192,heads=16)' --mesh tpu_v5e:4x4 --plan global_batch=32 --dcn-gbps 10";
  const CmdResult plain = Sh(kBin + " diloco --json --islands 2,8 --inner-steps 10,100" + island);
  ASSERT_EQ(plain.status, 0) << plain.out;
  const CmdResult r = Sh(kBin + " diloco --json --islands 2,8 --inner-steps 10,100 --straggler 1.5 --failed-islands 1 --out " +
                         dir_ + "/s.md" + island);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out), p = nlohmann::json::parse(plain.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(row["step_s"], p["rows"][i]["step_s"]);
    ASSERT_TRUE(row.contains("faults")) << row.dump();
    const auto& x = row["faults"];
    EXPECT_GT(x["decoupled_step_s"].get<double>(), row["step_s"].get<double>());
    EXPECT_LT(x["decoupled_step_s"].get<double>(), x["sync_diloco_step_s"].get<double>());
    EXPECT_LE(x["sync_break_even_h"].get<double>(), x["decoupled_break_even_h"].get<double>());
    EXPECT_LT(x["lost_island_s_decoupled"].get<double>(), x["lost_island_s_sync_diloco"].get<double>());
  }
  EXPECT_FALSE(p["rows"][0].contains("faults"));
  std::ifstream f(dir_ + "/s.md");
  const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("## Stragglers and failed islands"), std::string::npos) << md;
  EXPECT_NE(md.find("| decoupled step s |"), std::string::npos) << md;
  ExpectOneLineError("diloco --islands 2,4 --failed-islands 2" + island, "--failed-islands 2");
  // A fraction was truncated into the message ("--failed-islands 1 leaves no island of 2").
  ExpectOneLineError("diloco --islands 2,4 --failed-islands 1.5" + island, "whole number, got 1.5");
  const CmdResult slow = Sh(kBin + " diloco --straggler 0.5" + island + " 2>&1");
  EXPECT_NE(slow.status, 0);
  EXPECT_NE(slow.out.find("straggler"), std::string::npos) << slow.out;
}

// `failures`: rows for 0..N holes on a 32x32 v3 mesh (ResNet-50, data parallel); the mesh with
// holes is an error as the base (the sweep sets them).
TEST_F(PerfModelFiles, FailuresSweep) {
  const CmdResult r = Sh(kBin + " failures --json --graph 'resnet(depth=50,batch=128,fused=1)' --mesh tpu_v3:32x32 "
                                "--max-failed 3 --out " + dir_ + "/h.md");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["chips"].get<double>(), 1024);
  EXPECT_EQ(j["rows"][3]["chips"].get<double>(), 1021);
  EXPECT_GT(j["rows"][1]["collective_s"].get<double>(), j["rows"][0]["collective_s"].get<double>());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/h.md"));
  ExpectOneLineError("failures --mesh tpu_v3:32x32,failed=2 --graph 'resnet(depth=18,batch=8)'", "healthy mesh");
  ExpectOneLineError("run --mesh tpu_v4:4x4x4,failed=64", "failed=64");
}

// `infer --energy`: Wh per request = chips × P × PUE × (prefill + decode) / batch, by hand.
TEST(InferCli, EnergyPerRequest) {
  const std::string args =
      " --json --model 'transformer(layers=8,d_model=2048,d_ff=8192,heads=16,kv_heads=1,seq=1024,vocab=32000)'"
      " --mesh tpu_v4:2x2x1 --batch 8 --prompt 512 --generate 32";
  const CmdResult r = Sh(kBin + " infer --energy --pue 1.09 --grid 0.2" + args);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const double s = j["prefill_s"].get<double>() + j["decode_s"].get<double>();
  const double wh = 4 * 352 * 1.09 * s / 3600 / 8;  // tpu_v4: 352 W per chip in the energy table
  EXPECT_NEAR(j["energy"]["wh_per_request"].get<double>(), wh, 1e-9 * wh);
  EXPECT_NEAR(j["energy"]["gco2e_per_request"].get<double>(), wh * 0.2, 1e-9 * wh);
  const CmdResult none = Sh(kBin + " infer" + args);
  ASSERT_EQ(none.status, 0) << none.out;
  EXPECT_FALSE(nlohmann::json::parse(none.out).contains("energy"));
}

// `infer --energy` on a chip whose power depends on utilisation (tpu_v3: P̄ 283 W at ū 0.3461,
// β 1.13 in the energy table): prefill and decode each at P(their MFU), time-weighted; idle
// provisioned chips (--idle-capacity) add P(0) each.
TEST(InferCli, EnergyByUtilisationAndIdleCapacity) {
  const std::string args =
      " --json --model 'transformer(layers=8,d_model=2048,d_ff=8192,heads=16,kv_heads=1,seq=1024,vocab=32000)'"
      " --mesh tpu_v3:2x2 --batch 8 --prompt 512 --generate 32 --energy";
  const CmdResult r = Sh(kBin + " infer" + args);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  auto P = [](double u) { return 283 * (1 + 1.13 * (std::min(1.0, u) - 0.3461)); };
  const double tp = j["prefill_s"].get<double>(), td = j["decode_s"].get<double>();
  const double busy = (tp * P(j["prefill_mfu"].get<double>()) + td * P(j["decode_mfu"].get<double>())) / (tp + td);
  EXPECT_NEAR(j["energy"]["busy_power_w"].get<double>(), busy, 1e-9 * busy);
  EXPECT_NEAR(j["energy"]["idle_power_w"].get<double>(), P(0), 1e-9);
  EXPECT_LT(j["energy"]["power_w"].get<double>(), 283.0);  // decode-dominated: low utilisation
  const CmdResult idle = Sh(kBin + " infer --idle-capacity 0.5" + args);
  ASSERT_EQ(idle.status, 0) << idle.out;
  const auto k = nlohmann::json::parse(idle.out);
  EXPECT_NEAR(k["energy"]["power_w"].get<double>(), busy + 0.5 * P(0), 1e-9 * busy);
  EXPECT_NEAR(k["energy"]["wh_per_request"].get<double>() / j["energy"]["wh_per_request"].get<double>(),
              (busy + 0.5 * P(0)) / busy, 1e-9);
  const CmdResult bad = Sh(kBin + " infer --idle-capacity 11" + args + " 2>&1");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("--idle-capacity"), std::string::npos) << bad.out;
}

// `validate` writes the markdown page only when asked (it overwrote docs/perf_validation.md
// of the working directory before).
TEST_F(PerfModelFiles, ValidateWritesNoDocByDefault) {
  std::filesystem::create_directories(dir_ + "/docs");
  const CmdResult r = Sh("cd " + dir_ + " && " + kBin + " validate --no-held-out");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/docs/perf_validation.md"));
  const CmdResult w = Sh("cd " + dir_ + " && " + kBin + " validate --no-held-out --out docs/perf_validation.md");
  ASSERT_EQ(w.status, 0) << w.out;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/docs/perf_validation.md"));
}

}  // namespace

// The binary runs the Transformer evaluator with the shape-dependent matmul efficiency;
// --one-matmul-constant gives the library default (one matmul constant per chip). A narrow
// model under 16-way tensor parallelism (64-wide head blocks, half an MXU tile) computes more
// slowly with shapes; graph runs keep the one-constant op model either way.
TEST(PerfModelShapes, OneMatmulConstantSwitchesTheShapeModelOff) {
  const std::string args = " run --json --model 'transformer(layers=4,d_model=1024,d_ff=4096,heads=16,seq=2048)' "
                           "--mesh tpu_v5e:4x4 --plan tensor=16,global_batch=16";
  const CmdResult shaped = Sh(kBin + args);
  const CmdResult flat = Sh(kBin + " --one-matmul-constant" + args);
  ASSERT_EQ(shaped.status, 0) << shaped.out;
  ASSERT_EQ(flat.status, 0) << flat.out;
  const auto js = nlohmann::json::parse(shaped.out), jf = nlohmann::json::parse(flat.out);
  EXPECT_NE(js["breakdown_s"]["compute"].get<double>(), jf["breakdown_s"]["compute"].get<double>());
  EXPECT_TRUE(js["options"]["matmul_shapes"].get<bool>());
  EXPECT_FALSE(jf["options"]["matmul_shapes"].get<bool>());
  const std::string graph = " run --json --graph 'resnet(depth=18,batch=8)' --mesh tpu_v3:2x2";
  const CmdResult g1 = Sh(kBin + graph), g2 = Sh(kBin + " --one-matmul-constant" + graph);
  ASSERT_EQ(g1.status, 0) << g1.out;
  EXPECT_EQ(nlohmann::json::parse(g1.out)["step_s"], nlohmann::json::parse(g2.out)["step_s"]);
  const CmdResult v = Sh(kBin + " validate --fit --no-held-out");
  EXPECT_NE(v.out.find("shape model on"), std::string::npos) << v.out.substr(0, 400);
  const CmdResult help = Sh(kBin + " --help");
  EXPECT_NE(help.out.find("--one-matmul-constant"), std::string::npos);
}

// search enumerates selective remat, GPipe and interleaved 1F1B by default (a schedule column
// says which); --no-schedules restores the basic enumeration.
TEST(PerfModelSearch, EnumeratesSchedulesAndSelectiveRemat) {
  const std::string model = " --model 'transformer(layers=16,d_model=1024,d_ff=4096,heads=16,seq=1024)' "
                            "--mesh tpu_v5e:4x4 --plan global_batch=256";
  const CmdResult ext = Sh(kBin + " search --json --top 100000" + model);
  const CmdResult basic = Sh(kBin + " search --json --no-schedules --top 100000" + model);
  ASSERT_EQ(ext.status, 0) << ext.out;
  ASSERT_EQ(basic.status, 0) << basic.out;
  const auto je = nlohmann::json::parse(ext.out), jb = nlohmann::json::parse(basic.out);
  EXPECT_TRUE(je["options"]["schedules"].get<bool>());
  EXPECT_FALSE(jb["options"]["schedules"].get<bool>());
  EXPECT_GT(je["enumerated"].get<long>(), jb["enumerated"].get<long>());
  bool gpipe = false, interleaved = false, selective = false;
  for (const auto& p : je["plans"]) {
    const std::string plan = p["plan"].get<std::string>();
    gpipe |= plan.find("schedule=gpipe") != std::string::npos;
    interleaved |= plan.find("interleave=") != std::string::npos;
    selective |= plan.find("remat=selective") != std::string::npos;
  }
  EXPECT_TRUE(gpipe && interleaved && selective);
  for (const auto& p : jb["plans"]) EXPECT_EQ(p["plan"].get<std::string>().find("schedule=gpipe"), std::string::npos);
  const CmdResult text = Sh(kBin + " search --top 3" + model);
  EXPECT_NE(text.out.find(" schedule "), std::string::npos) << text.out;
}

// infer --layout wg-x|wg-xy|wg-xyz: Pope's weight-gathered layouts, in JSON with the gather group.
TEST(InferCli, WeightGatheredLayouts) {
  const std::string model =
      " --model 'transformer(layers=8,d_model=4096,d_ff=16384,heads=32,seq=2048,vocab=32000)' --mesh tpu_v4:4x4x4 "
      "--plan tensor=64 --batch 64 --prompt 2048 --generate 0";
  const CmdResult r = Sh(kBin + " infer --json --layout wg-xyz" + model);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gather_chips"].get<int>(), 64);
  EXPECT_EQ(j["options"]["layout"].get<std::string>(), "wg-xyz");
  EXPECT_GT(j["prefill_s"].get<double>(), 0);
  const CmdResult bad = Sh(kBin + " infer --layout wg-q" + model);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("--layout"), std::string::npos) << bad.out;
  const CmdResult help = Sh(kBin + " infer --help");
  EXPECT_NE(help.out.find("weight-gathered"), std::string::npos);
}

// perf-model mlperf: predicted vs published time to train; the ResNet-50 v0.6 rows are epochs ×
// ImageNet images / the graph run's throughput; the multipod runs are listed, not evaluated.
TEST_F(PerfModelFiles, MlperfTimeToTrain) {
  const std::string out = dir_ + "/m.md";
  const CmdResult r = Sh(kBin + " mlperf --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 10u);
  int evaluated = 0;
  for (const auto& row : j["rows"]) {
    if (row.contains("not_evaluated")) continue;
    ++evaluated;
    const double pred = row["predicted_s"].get<double>(), pub = row["published_s"].get<double>();
    EXPECT_GT(pred, 0);
    EXPECT_NEAR(row["error"].get<double>(), (pred - pub) / pub, 1e-12);
  }
  EXPECT_EQ(evaluated, 5);
  const auto& m1 = j["rows"][0];
  EXPECT_EQ(m1["id"].get<std::string>(), "M1");
  EXPECT_NEAR(m1["predicted_s"].get<double>(), 60 * 1281167.0 / (16 * m1["examples_per_s_per_chip"].get<double>()),
              1e-6 * m1["predicted_s"].get<double>());
  std::ifstream md(out);
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| M5 |"), std::string::npos);
  EXPECT_NE(text.find("not evaluated"), std::string::npos);
}
