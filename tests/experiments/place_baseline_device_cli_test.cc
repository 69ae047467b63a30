// place-baseline --env device as a user runs it: each method writes the run directory
// (config, metrics, TensorBoard events, best.placement, the timeline picture, result.json) and
// one JSON document; best.placement is what perf-model simulate reads and gives the same step
// time (perf-model simulate --machine: exactly, with the CPU); the search placers and the
// expert keep co-location groups whole and CPU-only ops on the CPU; out of memory is exit 2
// with the report written, a placer that finds no room (InfeasibleAction) exit 2 with its
// reason; bad input is one line, exit 1, no directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/graph_spec.h"
#include <csignal>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/place-baseline";
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
    EXPECT_EQ(j["machine"], "k80(gpus=2,cpu=0,memory_fraction=1,latency_us=134)");
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
      // The memory masks' estimates of the placement: all on one device, lifetime bounds the
      // simulated peak from above (the single-device schedule is its reference) and all_outputs
      // counts every output for the whole step, so it is at least lifetime.
      const auto& d0 = j["best"]["devices"][0];
      const double peak = d0["peak_memory_bytes"].get<double>();
      const double life = d0["mask_estimate_lifetime_bytes"].get<double>();
      EXPECT_GE(life, peak);
      EXPECT_GE(d0["mask_estimate_all_outputs_bytes"].get<double>(), life);
      EXPECT_EQ(j["best"]["devices"][1]["mask_estimate_lifetime_bytes"].get<double>(), 0);
      EXPECT_TRUE(j["best"]["memory_mask_check"]["lifetime"]["admitted"].get<bool>());
      EXPECT_TRUE(j["best"]["memory_mask_check"]["all_outputs"]["first_refused_group"].is_null());
    }
    for (const char* f : {"config.pbtxt", "best.placement", "best.png", "metrics.csv", "result.json"})
      EXPECT_TRUE(fs::exists(out + "/" + f)) << method << " " << f;
    EXPECT_EQ(fs::exists(out + "/curve.png"), method == "random");
    bool events = false;
    for (const auto& e : fs::directory_iterator(out))
      events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    EXPECT_TRUE(events);
    // Same machine written out by hand: 2 K80 dies, Placeto's link plus the preset's 134 µs per transfer.
    const std::string machine_file = tmp / "k80_by_hand.pbtxt";
    std::ofstream(machine_file) << "device { name: \"gpu\" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 "
                                   "memory_bytes: 12e9 }\nlink { preset: \"placeto\" latency_s: 134e-6 }\n";
    const auto p = Sh(placerl::testing::BinDir() + "/perf-model simulate --json --machine " + machine_file +
                      " --graph " + kGraph + " --placement " + out + "/best.placement");
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
       {std::string("--method nosuch"), std::string("--method m_etf --set memory_accounting=tight"),
        std::string("--method heft --set devices=gpus"), std::string("--method m_sct --set sct_threshold=2"),
        std::string("--method metis --set partition_imbalance=0"), std::string("--method heft --set fuse_max_group_fraction=2"),
        std::string("--method heft --set fuse_max_group_fraction=-1"), std::string("--machine 'k80(gpus=x)'"), std::string("--machine ''"),
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
  EXPECT_NE(h.out.find("m_sct"), std::string::npos);
  EXPECT_NE(h.out.find("--machine"), std::string::npos);
}

// One device per op of the run's best.placement (indices of `devices` devices).
std::vector<int> ReadBest(const std::string& dir, const graphs::ComputeGraph& g, int devices) {
  return graphs::ReadPlacement(dir + "/best.placement", g, devices);
}

nlohmann::json SimulateOnMachine(const std::string& graph, const std::string& machine, const std::string& placement,
                                 int* status) {
  const auto p = ShSplit(placerl::testing::BinDir() + "/perf-model simulate --json --machine '" + machine +
                         "' --graph '" + graph + "' --placement " + placement);
  *status = p.status;
  return p.out.empty() ? nlohmann::json() : nlohmann::json::parse(p.out);
}

TEST(PlaceBaselineDeviceCli, SearchPlacersAndExpertKeepGroupsAndPerfModelReproducesTheStepTime) {
  testing::TempDir tmp;
  const graphs::ComputeGraph g = graphs::GraphFromSpec(kGraph).graph;
  struct Case {
    std::string method, sets;
  };
  // The machine has a CPU (device 2): perf-model --machine must reproduce the step time exactly.
  for (const Case& c : std::vector<Case>{{"expert", ""},
                                         {"heft", ""},
                                         {"heft", "--set heft_insertion=false"},
                                         {"m_topo", ""},
                                         {"m_etf", ""},
                                         {"m_etf", "--set memory_accounting=schedule"},
                                         {"m_sct", ""},
                                         {"m_sct", "--set fuse=true --set sct_lp_window_ops=0"},
                                         {"m_etf", "--set fuse=true --set fuse_target_groups=4"},
                                         {"metis", ""},
                                         {"scotch", "--set devices=all"}}) {
    const std::string label = c.method + " " + c.sets;
    const std::string out = tmp / ("runs/" + c.method + std::to_string(c.sets.size()));
    const auto r = ShSplit(kBin + " --env device --graph " + kGraph + " --machine 'k80(gpus=2)' --method " + c.method +
                           " " + c.sets + " --json --out " + out);
    ASSERT_EQ(r.status, 0) << label << ": " << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["method"], c.method);
    EXPECT_EQ(j["evaluations"], 1);
    EXPECT_GE(j["placement_wall_s"].get<double>(), 0) << label;
    EXPECT_FALSE(j["best"]["oom"].get<bool>()) << label;
    const double t = j["best"]["step_time_s"].get<double>();
    EXPECT_GT(t, 0);
    const std::vector<int> p = ReadBest(out, g, 3);
    EXPECT_EQ(graphs::ColocationViolation(g, p), "") << label;
    int on_cpu = 0;
    for (int d : p) on_cpu += d == 2;
    if (c.sets.find("devices=all") == std::string::npos) EXPECT_EQ(on_cpu, 0) << label;  // accelerators only
    EXPECT_EQ(j["best"]["devices"][2]["ops"], on_cpu) << label;
    if (c.method == "expert") EXPECT_DOUBLE_EQ(t, j["single_device_time_s"].get<double>());  // unlayered: one GPU
    if (c.sets.find("fuse") != std::string::npos) {
      ASSERT_EQ(j["notes"].size(), 1u) << j.dump();
      EXPECT_NE(j["notes"][0].get<std::string>().find("fused graph"), std::string::npos);
      if (c.sets.find("fuse_target_groups=4") != std::string::npos)
      {
        EXPECT_NE(j["notes"][0].get<std::string>().find(", 4 placement groups"), std::string::npos) << j.dump();
        // fuse_max_group_fraction 0.5 of a 12 GB K80: the cap is on (and does not bind here).
        EXPECT_NE(j["notes"][0].get<std::string>().find("groups capped at 6 GB"), std::string::npos) << j.dump();
      }
    }
    int status = -1;
    const auto sim = SimulateOnMachine(kGraph, "k80(gpus=2)", out + "/best.placement", &status);
    ASSERT_EQ(status, 0) << label;
    EXPECT_EQ(sim["makespan_s"].get<double>(), t) << label;  // bit-identical: same machine, same simulator
    EXPECT_EQ(sim["machine"], "k80(gpus=2,cpu=1,memory_fraction=1,latency_us=134)");
    EXPECT_EQ(sim["devices"][2]["name"], "cpu:0");
    // metrics.csv has the placement wall time column.
    std::ifstream metrics(out + "/metrics.csv");
    std::string header;
    std::getline(metrics, header);
    EXPECT_NE(header.find("charts/placement_wall_s"), std::string::npos) << header;
  }
  // The two-tower MLP (a 5 ms step) splits when transfers cost only their bytes: HEFT beats one GPU
  // on the K80 without latency; with the preset's 134 µs per transfer it is never worse than one GPU.
  int status = -1;
  const auto single = SimulateOnMachine(kGraph, "k80(gpus=2)", "single", &status);
  const auto heft = nlohmann::json::parse(std::ifstream(tmp / "runs/heft0/result.json"));
  EXPECT_LE(heft["best"]["step_time_s"].get<double>(), single["makespan_s"].get<double>());
  const auto no_latency = ShSplit(kBin + " --env device --graph " + kGraph +
                                  " --machine 'k80(gpus=2,latency_us=0)' --method heft --json --out " + (tmp / "runs/heft_l0"));
  ASSERT_EQ(no_latency.status, 0) << no_latency.err;
  const auto single0 = SimulateOnMachine(kGraph, "k80(gpus=2,latency_us=0)", "single", &status);
  EXPECT_LT(nlohmann::json::parse(no_latency.out)["best"]["step_time_s"].get<double>(), single0["makespan_s"].get<double>());
}

TEST(PlaceBaselineDeviceCli, ExpertPutsOneLstmLayerPerGpuAndCpuOnlyOpsOnTheCpu) {
  testing::TempDir tmp;
  const std::string spec = "rnnlm(layers=2,hidden=32,batch=2,steps=3,vocab=50)";
  const graphs::ComputeGraph g = graphs::GraphFromSpec(spec).graph;
  const std::string out = tmp / "expert";
  const auto r = ShSplit(kBin + " --env device --graph '" + spec + "' --machine 'k80(gpus=2)' --method expert --json --out " +
                         out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::vector<int> p = ReadBest(out, g, 3);
  EXPECT_EQ(graphs::ColocationViolation(g, p), "");
  int l1 = 0, l2 = 0;
  for (int i = 0; i < g.num_ops(); ++i) {
    const std::string& n = g.names[i];
    const bool grad = n.rfind("grad/", 0) == 0, update = n.rfind("update/", 0) == 0;
    const std::string fwd = grad ? n.substr(5) : update ? n.substr(7) : n;
    if (fwd.rfind("l1/", 0) == 0) {
      EXPECT_EQ(p[i], 0) << n;
      ++l1;
    }
    if (fwd.rfind("l2/", 0) == 0) {
      EXPECT_EQ(p[i], 1) << n;
      ++l2;
    }
    if (fwd.rfind("emb/", 0) == 0) EXPECT_EQ(p[i], 0) << n;       // embedding with the first layer
    if (fwd.rfind("softmax/", 0) == 0) EXPECT_EQ(p[i], 1) << n;   // softmax with the last
  }
  EXPECT_GT(l1, 20);
  EXPECT_GT(l2, 20);

  // A machine whose gather (embedding lookup) ops may run only on the CPU: the expert and HEFT
  // move those groups there and say so; perf-model --machine FILE agrees and refuses a
  // placement that puts a gather on a GPU.
  const std::string machine = tmp / "k80_cpu_embedding.pbtxt";
  std::ofstream(machine) << "name: \"k80_cpu_embedding\"\n"
                            "device { name: \"gpu\" type: \"gpu\" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 "
                            "memory_bytes: 12e9 }\n"
                            "device { name: \"cpu:0\" type: \"cpu\" flops_per_s: 6.5e11 bytes_per_s: 3.2e10 }\n"
                            "link { preset: \"placeto\" }\n"
                            "cpu_only_kind: \"gather\"\n";
  for (const std::string method : {"expert", "heft"}) {
    const std::string run = tmp / ("cpu_" + method);
    const auto c = ShSplit(kBin + " --env device --graph '" + spec + "' --machine " + machine + " --method " + method +
                           " --json --out " + run);
    ASSERT_EQ(c.status, 0) << c.out << c.err;
    const auto j = nlohmann::json::parse(c.out);
    ASSERT_EQ(j["notes"].size(), 1u) << j.dump();
    EXPECT_NE(j["notes"][0].get<std::string>().find("moved to the CPU"), std::string::npos);
    const std::vector<int> q = ReadBest(run, g, 3);
    EXPECT_EQ(graphs::ColocationViolation(g, q), "");
    for (int i = 0; i < g.num_ops(); ++i)
      if (g.kinds[i] == "gather") EXPECT_EQ(q[i], 2) << g.names[i];
    int status = -1;
    const auto sim = SimulateOnMachine(spec, machine, run + "/best.placement", &status);
    ASSERT_EQ(status, 0);
    EXPECT_EQ(sim["makespan_s"].get<double>(), j["best"]["step_time_s"].get<double>()) << method;
  }
  const auto bad = ShSplit(placerl::testing::BinDir() + "/perf-model simulate --machine " + machine + " --graph '" +
                           spec + "' --placement single");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("CPU-only op"), std::string::npos) << bad.err;
  // --machine replaces the uniform-device flags.
  const auto both = ShSplit(placerl::testing::BinDir() + "/perf-model simulate --machine 'k80(gpus=2)' --devices 2");
  EXPECT_EQ(both.status, 1);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

TEST(PlaceBaselineDeviceCli, APlacerWithoutRoomIsExitTwoWithItsReason) {
  testing::TempDir tmp;
  const std::string out = tmp / "m_etf";
  const auto r = ShSplit(kBin + " --env device --graph " + kGraph +
                         " --machine 'baechi(gpus=2,memory_fraction=0.001)' --method m_etf --json --out " + out);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["infeasible"].get<std::string>().find("fits on no device"), std::string::npos) << j.dump();
  EXPECT_NE(r.err.find("place-baseline: infeasible: m-ETF"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(out + "/result.json"));
  EXPECT_FALSE(fs::exists(out + "/best.placement"));
}


// ------------------------------------------------------------ what a run reports

namespace report {

using testing::FileLines;
using testing::RunAndInterrupt;
constexpr long kAddressSpaceKb = 2000000;  // `ulimit -v` (KiB): no LibTorch here

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// --samples and --minutes at their maximum: the random placer runs with bounded memory and
// stops within seconds of Ctrl-C, reporting the placements it drew and the stop.
TEST(PlaceBaselineDeviceCliReport, TheMaximumCountsStopOnCtrlC) {
  testing::TempDir tmp;
  const std::string out = tmp / "random";
  const auto r = RunAndInterrupt(kBin + " --env device --graph " + kGraph + " --machine 'k80(gpus=2,cpu=0)' --method random " +
                                     "--samples 1000000000 --minutes 10080 --json --out " + out,
                                 [&] { return FileLines(out + "/metrics.csv") >= 20; }, 120, SIGINT, 30, kAddressSpaceKb);
  ASSERT_TRUE(r.signalled) << r.err;
  ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = ReadJson(out + "/result.json");
  EXPECT_TRUE(j["stopped_by_signal"].get<bool>());
  EXPECT_TRUE(j["feasible"].get<bool>());
  EXPECT_EQ(j["samples_requested"].get<int64_t>(), 1000000000);
  EXPECT_EQ(FileLines(out + "/metrics.csv"), 1 + j["evaluations"].get<int64_t>());
  EXPECT_GE(j["evaluations"].get<int64_t>(), 19);
}

// Out of memory and a placer without room are the shared infeasible report: exit 2, one
// stderr line, "feasible": false in result.json and --json; the text mode names no best file.
TEST(PlaceBaselineDeviceCliReport, InfeasibleIsTheSharedReport) {
  testing::TempDir tmp;
  const std::string tiny = "'baechi(gpus=2,memory_fraction=0.001)'";
  for (const std::string method : {"single", "m_etf"}) {
    SCOPED_TRACE(method);
    const auto r = ShSplit(kBin + " --env device --graph " + kGraph + " --machine " + tiny + " --method " + method +
                           " --json --out " + (tmp / method));
    EXPECT_EQ(r.status, 2) << r.err;
    // (stderr also has the progress line) one line says why, in the shared form.
    const size_t at = r.err.find("place-baseline: infeasible: ");
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_TRUE(at == 0 || r.err[at - 1] == '\n') << r.err;
    EXPECT_EQ(r.err.find("place-baseline: infeasible: ", at + 1), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j["feasible"].get<bool>());
    EXPECT_EQ(j, ReadJson(tmp / (method + "/result.json")));
    const auto t = ShSplit(kBin + " --env device --graph " + kGraph + " --machine " + tiny + " --method " + method +
                           " --out " + (tmp / (method + "_text")));
    EXPECT_EQ(t.status, 2);
    EXPECT_NE(t.out.find("no feasible solution; wrote "), std::string::npos) << t.out;
  }
}

}  // namespace report
}  // namespace
}  // namespace placerl
