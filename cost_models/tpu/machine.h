// Machines as data for device placement: named devices (CPU, GPUs, TPU cores) with compute
// rates and memory, plus the link model between them → the placed-graph simulator's SimConfig
// (placed_graph_sim.h). Named by short strings, like the graph specs, or read from a
// `.pbtxt` file (datasets/proto/machine.proto; unknown keys are errors with file:line):
//
//   k80(gpus=4,cpu=1,memory_fraction=1,latency_us=134)
//                                         k K80 dies (4.37 TFLOP/s, 240 GB/s, 12 GB each) and one
//                                         Haswell-class CPU (650 GFLOP/s, 32 GB/s, 128 GB), Placeto's
//                                         link (7.6 GB/s, 25 µs bus hold, 5.7 µs per op) plus a fixed
//                                         latency per transfer (default: Baechi's measured 134 µs)
//   baechi(gpus=4,cpu=0,memory_fraction=1,latency_us=134) the same dies with Baechi's link
//                                         (5.7 GB/s + 134 µs, shared channel) and Baechi's
//                                         8e9 − 1.08e9 B usable per GPU
//   tpu(type=v4,chips=4,memory_fraction=1) catalogue TPU chips (devices_per_chip cores each), ICI link
//   gpu(type=a100,gpus=8,cpu=0,memory_fraction=1) catalogue GPUs, NVLink-class link
//   <path>.pbtxt                          a Machine message
//
// Devices are numbered accelerators first (gpu:0 … gpu:k-1, or tpu cores), then the CPU, so
// that device 0 is the first accelerator and a placement file's index d is gpu:d. Sources of
// the constants: ../shared/reference/device_placement_notes.md §2 (docs/device_placement.md).
#pragma once

#include <string>
#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"

namespace placerl::perf {

struct Machine {
  std::string spec;                       // canonical: "k80(gpus=4,cpu=1,memory_fraction=1)" or the file path
  std::string name;                       // a short label ("k80", or the file's `name`)
  std::vector<std::string> device_names;  // "gpu:0", …, "cpu:0"
  std::vector<std::string> device_types;  // "gpu" | "cpu" | "tpu" per device
  SimConfig sim;                          // devices (same order), link, op gap
  std::vector<std::string> cpu_only_kinds;  // op kinds only "cpu" devices may run

  int num_devices() const { return static_cast<int>(sim.devices.size()); }
  // False when `op_kind` is CPU-only and device `d` is not a CPU.
  bool CanRun(int d, const std::string& op_kind) const;
  // Index of the device with the highest peak FLOP/s (lowest index on ties).
  int FastestDevice() const;
};

// A preset string (see above) or a `.pbtxt` path. Throws ConfigError for an unknown preset
// key, a bad value or an unknown chip; ParseError(file, line, what) for a malformed file.
Machine MachineFromSpec(const std::string& spec);
// Text of a Machine message (label names the source in errors).
Machine ParseMachineText(const std::string& text, const std::string& label);

// Per-transfer latency of the K80 preset, µs: the intercept of Baechi's linear fit to measured
// GPU0→GPU1 tensor copies in TensorFlow (comm µs = 0.0001754·bytes + 134; notes §2.2) — the
// only measured fixed cost of a cross-device tensor of that era in the sources. Placeto's
// simulator has no latency (its 25 µs bus hold only delays the sender's next transfer), and the
// PyTorch port of Baechi measured 0.1 ms × 1.2 = 120 µs. docs/device_placement.md "Link latency".
inline constexpr double kK80LatencyUs = 134;
inline constexpr double kBaechiLatencyUs = 134;

// The preset machines (also reachable through MachineFromSpec). latency_us is added to every
// transfer (LinkModel::latency_s; it occupies the link like the bytes do).
Machine K80Machine(int gpus = 4, int cpus = 1, double memory_fraction = 1, double latency_us = kK80LatencyUs);
Machine BaechiMachine(int gpus = 4, int cpus = 0, double memory_fraction = 1, double latency_us = kBaechiLatencyUs);
Machine ChipMachine(const std::string& chip, int chips, int cpus = 0, double memory_fraction = 1);

// Human-readable summary, one line per device: "gpu:0  4.37 TFLOP/s  240 GB/s  12 GB".
std::string DescribeMachine(const Machine& m);

}  // namespace placerl::perf
