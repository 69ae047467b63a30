// Machines as data (cost_models/tpu/machine.h): presets, spec strings, the .pbtxt form and its
// errors, CPU-only op kinds.
#include "cost_models/tpu/machine.h"

#include <gtest/gtest.h>

#include <cmath>

#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

TEST(Machine, K80PresetHasGpusThenCpuAndPlacetoLink) {
  const Machine m = MachineFromSpec("k80(gpus=2)");
  EXPECT_EQ(m.spec, "k80(gpus=2,cpu=1,memory_fraction=1,latency_us=134)");
  ASSERT_EQ(m.num_devices(), 3);
  EXPECT_EQ(m.device_names, (std::vector<std::string>{"gpu:0", "gpu:1", "cpu:0"}));
  EXPECT_EQ(m.device_types, (std::vector<std::string>{"gpu", "gpu", "cpu"}));
  EXPECT_DOUBLE_EQ(m.sim.devices[0].rates.peak_flops, 4.37e12);
  EXPECT_DOUBLE_EQ(m.sim.devices[0].memory_capacity, 12e9);
  EXPECT_DOUBLE_EQ(m.sim.devices[2].rates.peak_flops, 650e9);
  EXPECT_DOUBLE_EQ(m.sim.link.bandwidth, 7.6e9);
  EXPECT_DOUBLE_EQ(m.sim.link.bus_hold_s, 25e-6);
  EXPECT_DOUBLE_EQ(m.sim.op_gap_s, 5.7e-6);
  EXPECT_EQ(m.sim.link.contention, Contention::kSenderBus);
  // Baechi's measured TF copy intercept (machine.h kK80LatencyUs).
  EXPECT_DOUBLE_EQ(m.sim.link.latency_s, 134e-6);
  EXPECT_EQ(m.FastestDevice(), 0);
  // The canonical spec re-creates the machine.
  EXPECT_EQ(MachineFromSpec(m.spec).spec, m.spec);
  EXPECT_EQ(MachineFromSpec("k80").num_devices(), 5);
}

TEST(Machine, BaechiPresetScalesMemory) {
  const Machine m = MachineFromSpec("baechi(gpus=4,memory_fraction=0.5)");
  ASSERT_EQ(m.num_devices(), 4);
  EXPECT_NEAR(m.sim.devices[3].memory_capacity, 0.5 * (8e9 - 1.08e9), 1);
  EXPECT_DOUBLE_EQ(m.sim.link.latency_s, 134e-6);
  EXPECT_DOUBLE_EQ(m.sim.link.bandwidth, 5.7e9);
  EXPECT_TRUE(m.sim.ready_list_order);
}

TEST(Machine, TpuAndGpuFromTheCatalogue) {
  const Machine t = MachineFromSpec("tpu(type=v4,chips=4)");
  ASSERT_EQ(t.num_devices(), 4);
  EXPECT_EQ(t.device_types[0], "tpu");
  EXPECT_DOUBLE_EQ(t.sim.devices[0].rates.peak_flops, 275e12);
  EXPECT_NEAR(t.sim.devices[0].memory_capacity, 34359738368.0 * 0.95, 1);
  EXPECT_DOUBLE_EQ(t.sim.link.bandwidth, 4.5e10);
  // v3 has two TensorCores per chip: two devices per chip.
  EXPECT_EQ(MachineFromSpec("tpu(type=v3,chips=2)").num_devices(), 4);
  const Machine g = MachineFromSpec("gpu(type=a100,gpus=2,cpu=1)");
  ASSERT_EQ(g.num_devices(), 3);
  EXPECT_EQ(g.device_names[2], "cpu:0");
  EXPECT_DOUBLE_EQ(g.sim.link.bandwidth, 12 * 2.5e10);
  EXPECT_THROW(MachineFromSpec("gpu(type=v4)"), ConfigError);
}

TEST(Machine, LatencyKeySetsThePerTransferLatency) {
  const Machine m = MachineFromSpec("k80(gpus=2,latency_us=1000)");
  EXPECT_DOUBLE_EQ(m.sim.link.latency_s, 1e-3);
  EXPECT_EQ(m.spec, "k80(gpus=2,cpu=1,memory_fraction=1,latency_us=1000)");
  EXPECT_EQ(MachineFromSpec(m.spec).sim.link.latency_s, m.sim.link.latency_s);
  // Placeto's link as it was: no latency, the bus hold and op gap unchanged.
  const Machine zero = MachineFromSpec("k80(gpus=2,latency_us=0)");
  EXPECT_EQ(zero.sim.link.latency_s, 0);
  EXPECT_DOUBLE_EQ(zero.sim.link.bus_hold_s, 25e-6);
  EXPECT_DOUBLE_EQ(MachineFromSpec("baechi(gpus=2,latency_us=50)").sim.link.latency_s, 50e-6);
  EXPECT_DOUBLE_EQ(K80Machine(2, 1, 1, 7).sim.link.latency_s, 7e-6);
  // The file form: link.latency_s (seconds) over a preset.
  const Machine f = ParseMachineText(
      "device { name: \"gpu\" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 }\n"
      "link { preset: \"placeto\" latency_s: 1.34e-4 }\n", "k80.pbtxt");
  EXPECT_DOUBLE_EQ(f.sim.link.latency_s, 1.34e-4);
  EXPECT_DOUBLE_EQ(f.sim.link.bus_hold_s, 25e-6);
}

// Two ops on two GPUs of the K80 preset: step = compute of a + (latency + bytes / 7.6 GB/s) +
// compute of b. a's output (76 MB) crosses once: 10 ms at 7.6 GB/s.
TEST(Machine, TwoOpsAcrossGpusPayComputeBandwidthAndLatency) {
  graphs::OpInfo a, b;
  a.name = "a", a.kind = "matmul", a.flops = 4.37e9, a.output_bytes = 7.6e7;  // 1 ms at 4.37 TFLOP/s
  b.name = "b", b.kind = "matmul", b.flops = 8.74e9, b.output_bytes = 8, b.inputs = {0};
  const graphs::ComputeGraph g = graphs::BuildComputeGraph({a, b});
  for (double latency_us : {0.0, 134.0, 10000.0}) {
    const Machine m = K80Machine(2, 1, 1, latency_us);
    Simulator sim(g, m.sim);
    const double compute = sim.OpTimeOn(0, 0) + sim.OpTimeOn(1, 1);
    const SimResult& r = sim.Run({0, 1});
    EXPECT_EQ(r.num_transfers, 1);
    EXPECT_NEAR(r.makespan, compute + latency_us * 1e-6 + 7.6e7 / 7.6e9, 1e-12) << latency_us;
    // The same two ops on one GPU pay no transfer: the op gap after a (5.7 µs) is all.
    EXPECT_NEAR(sim.Run({0, 0}).makespan, compute + 5.7e-6, 1e-12) << latency_us;
  }
}

TEST(Machine, BadSpecsAreConfigErrors) {
  for (const char* bad : {"k80(gpus=-1)", "k80(gpu=2)", "k80(gpus=2,gpus=3)", "k80(gpus=x)", "k80(memory_fraction=0)",
                          "k80(gpus=0,cpu=0)", "tpu(type=v99)", "nosuch(a=1)", "k80(gpus)", "",
                          "k80(latency_us=-1)", "k80(latency_us=x)", "k80(latency_us=nan)", "k80(latency_us=inf)",
                          "k80(latency_us=1e9)", "k80(latency_us=)", "baechi(latency_us=-5)"}) {
    EXPECT_THROW(MachineFromSpec(bad), ConfigError) << bad;
  }
  try {
    MachineFromSpec("k80(gpu=2)");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: gpus, cpu, memory_fraction, latency_us"), std::string::npos) << e.what();
  }
  try {
    MachineFromSpec("k80(latency_us=-1)");
    ADD_FAILURE() << "a negative latency was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("latency_us must be in [0, 1e7]"), std::string::npos) << e.what();
  }
}

TEST(Machine, TextFormWithCountsLinkOverridesAndCpuOnlyKinds) {
  const Machine m = ParseMachineText(R"(
name: "two_k80_and_host"
device { name: "gpu" type: "gpu" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 memory_bytes: 12e9 }
device { name: "cpu:0" type: "cpu" flops_per_s: 6.5e11 bytes_per_s: 3.2e10 }
device { name: "tpu" type: "tpu" count: 1 chip: "tpu_v4" }
link { preset: "baechi" latency_s: 0 contention: "sender_bus" }
cpu_only_kind: "embedding"
)", "m.pbtxt");
  EXPECT_EQ(m.name, "two_k80_and_host");
  EXPECT_EQ(m.device_names, (std::vector<std::string>{"gpu:0", "gpu:1", "cpu:0", "tpu:0"}));
  EXPECT_TRUE(std::isinf(m.sim.devices[2].memory_capacity));
  EXPECT_DOUBLE_EQ(m.sim.link.latency_s, 0);          // written zero overrides the preset's 134 µs
  EXPECT_DOUBLE_EQ(m.sim.link.bandwidth, 5.7e9);      // not written: the preset's
  EXPECT_EQ(m.sim.link.contention, Contention::kSenderBus);
  EXPECT_FALSE(m.CanRun(0, "embedding"));
  EXPECT_TRUE(m.CanRun(2, "embedding"));
  EXPECT_TRUE(m.CanRun(0, "matmul"));
  EXPECT_EQ(m.FastestDevice(), 3);
}

TEST(Machine, MalformedTextNamesFileAndLine) {
  auto expect_parse_error = [](const std::string& text, const std::string& needle) {
    try {
      ParseMachineText(text, "bad.pbtxt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nwhat: 3\n", "bad.pbtxt:2");
  expect_parse_error("", "at least one");
  expect_parse_error("device { name: \"g\" }", "either chip or flops_per_s");
  expect_parse_error("device { name: \"g\" chip: \"k99\" }", "unknown chip 'k99'");
  expect_parse_error("device { name: \"g\" type: \"fpga\" flops_per_s: 1 bytes_per_s: 1 }", "type must be");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\n"
                     "device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }", "two devices are named 'g'");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nlink { preset: \"fast\" }", "link.preset");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nlink { bandwidth: 0 }", "link.bandwidth");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\ncpu_only_kind: \"x\"", "no device of type cpu");
  // The link's latency (seconds in the file): negative, not a number, or on a wrong line.
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nlink { latency_s: -1e-4 }", "link.latency_s must be >= 0");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nlink { latency_s: inf }", "link.latency_s must be >= 0");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\n\nlink { latency_s: \"fast\" }", "bad.pbtxt:3");
  expect_parse_error("device { name: \"g\" flops_per_s: 1 bytes_per_s: 1 }\nlink { latency_us: 134 }", "bad.pbtxt:2");
  EXPECT_THROW(MachineFromSpec("tests/data/no_such_machine.pbtxt"), Error);
}

TEST(Machine, DescribeListsEveryDevice) {
  const std::string s = DescribeMachine(MachineFromSpec("k80(gpus=2)"));
  EXPECT_NE(s.find("gpu:1"), std::string::npos);
  EXPECT_NE(s.find("cpu:0"), std::string::npos);
  EXPECT_NE(s.find("7.6 GB/s"), std::string::npos);
}

}  // namespace
}  // namespace placerl::perf
