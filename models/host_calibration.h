// Measures this machine for the performance model's `host` catalogue entry
// (perf-model calibrate-host): fp32/bf16 matmul FLOP/s and streaming memory bandwidth with
// LibTorch on `threads` threads, the fixed cost of a tiny op, and a 2-process c10d Gloo
// all-reduce on loopback fitted as t(S) = a + S/bw. One "host chip" = one process with
// `threads` threads, as gloo-train runs it. No torch includes here: non-torch code calls
// these functions (docs/host_calibration.md).
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
  // Which per-size statistic of the all-reduce the catalogue's fit uses: the mean without the
  // slowest 5 % (default: what a step of several calls pays) or the median.
  bool allreduce_fit_means = true;
};

struct Measurements {
  std::string cpu;
  int threads = 1;
  int ranks = 2;
  double matmul_fp32_flops = 0, matmul_bf16_flops = 0;      // best over the sizes
  std::vector<std::pair<int, double>> matmul_fp32_by_size;  // n of an n×n×n matmul → FLOP/s
  std::vector<std::pair<int, double>> matmul_bf16_by_size;
  // rate(n) = peak·n/(n + half) fitted to the fp32 sizes (the catalogue's peak and
  // efficiency.matmul_half_size); bf16 peak with the same half size.
  double matmul_fp32_peak = 0, matmul_bf16_peak = 0, matmul_half_size = 0;
  double matmul_cpu_per_wall = 0;  // process CPU time / wall time during the fp32 probe (≈ threads)
  double memory_bw = 0;      // bytes/s of c = a + b on 64 MiB fp32 tensors (read a, b; write c)
  double small_op_s = 0;     // seconds of an add on a 16-element tensor
  // 2-rank all-reduce, fitted as t(S) = a + S / bw. The calls are bimodal on this VM (see
  // docs/host_calibration.md), so both the per-size medians and the per-size means (slowest
  // 5 % dropped) are kept and fitted; allreduce_latency_s/bw is the fit the catalogue gets.
  double allreduce_latency_s = 0, allreduce_bw = 0;
  std::string allreduce_statistic;  // "mean" or "median": what allreduce_latency_s/bw fit
  std::vector<std::pair<double, double>> allreduce_by_size;       // bytes → median seconds
  std::vector<std::pair<double, double>> allreduce_mean_by_size;  // bytes → trimmed-mean seconds
  double allreduce_median_latency_s = 0, allreduce_median_bw = 0;
  double allreduce_mean_latency_s = 0, allreduce_mean_bw = 0;
  double ram_bytes = 0;      // MemTotal
  // Share of CPU time the hypervisor took away (/proc/stat "steal") during MeasureHost: on a
  // shared VM every rate above drops when this is high (docs/host_calibration.md).
  double steal_fraction = 0;
};

// Runs every probe; `log` receives one human-readable line per result. The all-reduce
// probe forks its 2 ranks before this process runs any LibTorch op (libgomp is not
// fork-safe once its pool exists), so call MeasureHost before other multi-threaded LibTorch
// work in the same process. A rank that fails or outlives options.timeout_s is killed and
// reported as an Error; both children are always reaped. Bad options → ConfigError.
Measurements MeasureHost(const CalibrationOptions& options,
                         const std::function<void(const std::string&)>& log);

// Least-squares fit of t = a + S / bw over (bytes, seconds) points, relative (1/t²)
// weights so that the small sizes count (a ≥ 0, bw > 0; throws Error when t does not grow).
void FitLatencyBandwidth(const std::vector<std::pair<double, double>>& points, double* a, double* bw);

// Least-squares fit of rate(n) = peak·n/(n + half) (as 1/rate = 1/peak + (half/peak)/n) over
// (n, FLOP/s) points; half = 0 when the rate does not grow with n.
void FitMatmulCurve(const std::vector<std::pair<int, double>>& points, double* peak, double* half);

// One `chip { name: "host" ... }` block in the catalogue format, each measured number in a
// comment. Encoding (the model's all-reduce on mesh host:2 reproduces the fit exactly):
//   ici { topology: RING links_per_chip: 1 wrap_min_axis: 0 }: a 2-chip ring without
//   wraparound, where the model's all-reduce is 2·(α + ½·S/B) = 2α + S/B, so
//   hop_latency_s = α = a/2 and link_bw_one_way = B = bw;
//   efficiency { matmul: 1 memory: 1 collective_bw: 1 }: the rates are achieved, not peaks;
//   launch_overhead_s = small_op_s; latency_floor_s = a/2 (one hop: the smallest collective).
std::string HostChipText(const Measurements& m);
// `catalog_text` (a catalogue in protobuf text) with every `host` chip block removed and
// HostChipText(m) appended; comments elsewhere are kept. Throws Error if the result does
// not parse as a catalogue.
std::string WithHostChip(const std::string& catalog_text, const Measurements& m);
// WithHostChip(the embedded default catalogue, m).
std::string HostCatalogText(const Measurements& m);

}  // namespace placerl::host
