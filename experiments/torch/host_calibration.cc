#include "experiments/torch/host_calibration.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::host {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `fn` repeatedly (after one warm-up call) for about `budget` seconds, at least 3
// times; returns the median seconds per call.
template <typename Fn>
double TimeIt(Fn fn, double budget) {
  fn();
  std::vector<double> t;
  const auto start = Clock::now();
  while (t.size() < 3 || (Seconds(start) < budget && t.size() < 10000)) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(Seconds(t0));
  }
  return Median(t);
}

std::string CpuName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  }
  return "unknown CPU";
}

double RamBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

// One rank of the all-reduce probe (in a forked child). Rank 0 writes "bytes seconds" lines.
void AllReduceRank(int rank, const std::string& dir, const CalibrationOptions& o,
                   const std::vector<int64_t>& sizes) {
  torch::set_num_threads(1);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  auto store = c10::make_intrusive<::c10d::FileStore>(dir + "/store", 2);
  store->setTimeout(timeout);
  auto opts = ::c10d::ProcessGroupGloo::Options::create(timeout);
  opts->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  opts->threads = 1;
  auto pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(store, rank, 2, opts);
  std::ostringstream out;
  for (int64_t bytes : sizes) {
    std::vector<at::Tensor> t{torch::ones({bytes / 4}, torch::kFloat32)};
    // Both ranks must run the same number of calls: a fixed count from the size.
    const int reps = static_cast<int>(std::clamp<int64_t>((int64_t(64) << 20) / bytes, 3, 200));
    pg->allreduce(t)->wait();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      pg->allreduce(t)->wait();
      times.push_back(Seconds(t0));
    }
    out << bytes << " " << Median(times) << "\n";
  }
  pg->barrier()->wait();
  if (rank == 0) WriteFileAtomic(dir + "/result.txt", out.str());
}

std::vector<std::pair<double, double>> RunAllReduceProbe(const CalibrationOptions& o) {
  char tmpl[] = "/tmp/placerl_calib_XXXXXX";
  if (!mkdtemp(tmpl)) throw IoError("calibrate-host: cannot create a temporary directory");
  const std::string dir = tmpl;
  std::vector<int64_t> sizes;
  for (int64_t s = 4 << 10; s <= (int64_t(64) << 20); s *= 4) sizes.push_back(s);
  std::fflush(nullptr);
  pid_t kids[2] = {-1, -1};
  for (int r = 0; r < 2; ++r) {
    kids[r] = fork();
    if (kids[r] < 0) throw IoError("calibrate-host: fork failed");
    if (kids[r] == 0) {
      int code = 0;
      try {
        AllReduceRank(r, dir, o, sizes);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "calibrate-host: all-reduce rank %d: %.300s\n", r, e.what());
        code = 1;
      }
      std::fflush(nullptr);
      _exit(code);
    }
  }
  // Reap both; a child that fails or outlives the timeout takes the other one down.
  int alive = 2, failed = 0;
  const auto start = Clock::now();
  while (alive > 0) {
    for (pid_t& k : kids) {
      if (k < 0) continue;
      int st = 0;
      const pid_t w = waitpid(k, &st, WNOHANG);
      if (w == k) {
        k = -1;
        --alive;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
      }
    }
    if (alive > 0 && (failed > 0 || Seconds(start) > o.timeout_s)) {
      for (pid_t k : kids)
        if (k > 0) kill(k, SIGKILL);
      for (pid_t& k : kids)
        if (k > 0) {
          waitpid(k, nullptr, 0);
          k = -1;
        }
      alive = 0;
      failed = std::max(failed, 1);
    }
    if (alive > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::pair<double, double>> pts;
  if (!failed) {
    std::istringstream in(ReadFile(dir + "/result.txt"));
    double b, t;
    while (in >> b >> t) pts.emplace_back(b, t);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (failed || pts.size() != sizes.size())
    throw Error("calibrate-host: the 2-process Gloo all-reduce probe failed (see the messages above)");
  return pts;
}

}  // namespace

void FitLatencyBandwidth(const std::vector<std::pair<double, double>>& points, double* a, double* bw) {
  // Least squares of t = a + c·S, weighted by 1/t² (relative error: small sizes count).
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [s, t] : points) {
    if (!(t > 0)) continue;
    const double w = 1 / (t * t);
    sw += w;
    sx += w * s;
    sy += w * t;
    sxx += w * s * s;
    sxy += w * s * t;
  }
  const double den = sw * sxx - sx * sx;
  double c = den > 0 ? (sw * sxy - sx * sy) / den : 0;
  double a0 = sw > 0 ? (sy - c * sx) / sw : 0;
  if (a0 < 0) {  // refit through the origin
    a0 = 0;
    c = sxx > 0 ? sxy / sxx : 0;
  }
  if (!(c > 0)) throw Error("calibrate-host: all-reduce times do not grow with size; cannot fit a bandwidth");
  *a = a0;
  *bw = 1 / c;
}

Measurements MeasureHost(const CalibrationOptions& o, const std::function<void(const std::string&)>& log) {
  if (o.threads < 1 || o.threads > 1024) throw ConfigError("calibrate-host: threads must be in [1, 1024]");
  if (!(o.seconds_per_probe > 0) || o.seconds_per_probe > 60)
    throw ConfigError("calibrate-host: seconds per probe must be in (0, 60]");
  Measurements m;
  m.cpu = CpuName();
  m.threads = o.threads;
  m.ranks = o.ranks;
  m.ram_bytes = RamBytes();
  char buf[256];
  // The all-reduce children are forked before this process starts any LibTorch thread pool.
  if (o.allreduce) {
    log("all-reduce: 2 processes, c10d Gloo on 127.0.0.1, 4 KiB .. 64 MiB");
    m.allreduce_by_size = RunAllReduceProbe(o);
    FitLatencyBandwidth(m.allreduce_by_size, &m.allreduce_latency_s, &m.allreduce_bw);
    for (const auto& [b, t] : m.allreduce_by_size) {
      std::snprintf(buf, sizeof buf, "  %10.0f bytes  %9.3f ms  (fit %9.3f ms)", b, t * 1e3,
                    (m.allreduce_latency_s + b / m.allreduce_bw) * 1e3);
      log(buf);
    }
    std::snprintf(buf, sizeof buf, "  fit: %.1f us + bytes / %.3g GB/s", m.allreduce_latency_s * 1e6,
                  m.allreduce_bw / 1e9);
    log(buf);
  }
  torch::set_num_threads(o.threads);
  torch::NoGradGuard no_grad;
  for (int n : {256, 512, 1024, 2048}) {
    auto a = torch::randn({n, n}), b = torch::randn({n, n});
    const double t = TimeIt([&] { (void)torch::mm(a, b); }, o.seconds_per_probe);
    const double f = 2.0 * n * n * n / t;
    m.matmul_fp32_by_size.emplace_back(n, f);
    m.matmul_fp32_flops = std::max(m.matmul_fp32_flops, f);
    std::snprintf(buf, sizeof buf, "matmul fp32 %4d^3: %.3g GFLOP/s", n, f / 1e9);
    log(buf);
  }
  for (int n : {512, 1024}) {
    auto a = torch::randn({n, n}).to(torch::kBFloat16), b = torch::randn({n, n}).to(torch::kBFloat16);
    const double t = TimeIt([&] { (void)torch::mm(a, b); }, o.seconds_per_probe);
    m.matmul_bf16_flops = std::max(m.matmul_bf16_flops, 2.0 * n * n * n / t);
  }
  std::snprintf(buf, sizeof buf, "matmul bf16 best: %.3g GFLOP/s", m.matmul_bf16_flops / 1e9);
  log(buf);
  {
    const int64_t n = (int64_t(64) << 20) / 4;
    auto a = torch::rand({n}), b = torch::rand({n}), c = torch::empty({n});
    const double t = TimeIt([&] { torch::add_out(c, a, b); }, o.seconds_per_probe);
    m.memory_bw = 3.0 * n * 4 / t;
    std::snprintf(buf, sizeof buf, "memory: c = a + b on 64 MiB: %.3g GB/s", m.memory_bw / 1e9);
    log(buf);
  }
  {
    auto a = torch::rand({16}), b = torch::rand({16}), c = torch::empty({16});
    m.small_op_s = TimeIt([&] { torch::add_out(c, a, b); }, o.seconds_per_probe / 4);
    std::snprintf(buf, sizeof buf, "tiny op (16-element add): %.2f us", m.small_op_s * 1e6);
    log(buf);
  }
  return m;
}

std::string HostChipText(const Measurements& m) {
  const double bw = m.allreduce_bw > 0 ? m.allreduce_bw : 1e9;
  std::ostringstream s;
  s.precision(6);
  s << "chip {\n"
    << "  name: \"host\"\n"
    << "  peak { dtype: FP32 flops_per_s: " << m.matmul_fp32_flops << " }  # best n^3 matmul, "
    << m.threads << " thread(s)\n"
    << "  peak { dtype: BF16 flops_per_s: " << m.matmul_bf16_flops << " }\n"
    << "  hbm_bytes: " << m.ram_bytes / std::max(1, m.ranks) << "  # RAM / " << m.ranks << " processes\n"
    << "  hbm_bw: " << m.memory_bw << "  # c = a + b on 64 MiB, read + write bytes\n"
    << "  devices_per_chip: 1\n"
    << "  ici { topology: RING links_per_chip: 1 link_bw_one_way: " << bw
    << " hop_latency_s: " << m.allreduce_latency_s / 2 << " wrap_min_axis: 0 max_chips_per_domain: "
    << std::max(2, m.ranks) << " }  # 2-rank Gloo all-reduce = 2·hop + S/bw\n"
    << "  chips_per_host: " << std::max(2, m.ranks) << "\n"
    << "  efficiency { matmul: 1 memory: 1 collective_bw: 1 latency_floor_s: "
    << std::max(1e-9, m.allreduce_latency_s) << " launch_overhead_s: " << std::max(1e-9, m.small_op_s)
    << " }\n"
    << "  source: \"measured by perf-model calibrate-host: " << m.cpu << ", " << m.threads
    << " thread(s) per process\"\n"
    << "}\n";
  return s.str();
}

std::string HostCatalogText(const Measurements& m) {
  for (const perf::Chip& chip : perf::DefaultCatalog().chip())
    if (chip.name() == "host") throw Error("calibrate-host: the embedded catalogue already has a host entry");
  return perf::DefaultCatalogText() + "\n# ---- this machine (perf-model calibrate-host) ----\n" + HostChipText(m);
}

}  // namespace placerl::host
