// Measures this machine for the performance model's `host` catalogue entry
// (perf-model calibrate-host): fp32/bf16 matmul FLOP/s and streaming memory bandwidth with
// LibTorch on `threads` threads, the fixed cost of a tiny op, and a 2-process c10d Gloo
// all-reduce on loopback fitted as t(S) = a + S/bw. One "host chip" = one process with
// `threads` threads, as gloo-train runs it. No torch includes here (see docs/host_calibration.md).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace placerl::host {

struct CalibrationOptions {
  int threads = 1;                 // LibTorch intra-op threads per process
  double seconds_per_probe = 0.3;  // time budget of each size
  bool allreduce = true;           // run the 2-process Gloo probe
  int ranks = 2;                   // processes sharing the machine (RAM is divided by this)
  double timeout_s = 120;          // the all-reduce children are killed after this
};

struct Measurements {
  std::string cpu;
  int threads = 1;
  int ranks = 2;
  double matmul_fp32_flops = 0, matmul_bf16_flops = 0;  // best over the sizes
  std::vector<std::pair<int, double>> matmul_fp32_by_size;  // n of an n×n×n matmul → FLOP/s
  double memory_bw = 0;      // bytes/s of c = a + b on 64 MiB fp32 tensors (read a, b; write c)
  double small_op_s = 0;     // seconds of an add on a 16-element tensor
  double allreduce_latency_s = 0, allreduce_bw = 0;  // t(S) = a + S / bw, 2 ranks
  std::vector<std::pair<double, double>> allreduce_by_size;  // bytes → median seconds
  double ram_bytes = 0;      // MemTotal
};

Measurements MeasureHost(const CalibrationOptions& options,
                         const std::function<void(const std::string&)>& log);

// Least-squares fit of t = a + S / bw over (bytes, seconds) points (a ≥ 0, bw > 0).
void FitLatencyBandwidth(const std::vector<std::pair<double, double>>& points, double* a, double* bw);

// One `chip { name: "host" ... }` block in the catalogue format. The all-reduce is encoded
// as a 2-chip ring without wraparound: the model's all-reduce time on it is 2·α + S/B, so
// hop_latency_s = a/2 and link_bw_one_way = bw; the efficiency override is 1 for matmul,
// memory and collective bandwidth (the rates are achieved rates, not peaks),
// launch_overhead_s = the tiny-op time, latency_floor_s = a.
std::string HostChipText(const Measurements& m);
// The embedded default catalogue with `host` added (an existing `host` entry is replaced).
std::string HostCatalogText(const Measurements& m);

}  // namespace placerl::host
