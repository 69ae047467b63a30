#include "models/host_calibration.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"

namespace placerl::host {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double Median(const std::vector<double>& v) { return stats::Median(v, 0); }

// Mean without the slowest 5 % of the samples (rare disturbances by other processes).
double TrimmedMean(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t keep = std::max<size_t>(1, v.size() - v.size() / 20);
  double s = 0;
  for (size_t i = 0; i < keep; ++i) s += v[i];
  return s / keep;
}

// Process CPU time (all threads), seconds.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs `fn` once to warm up, then repeatedly for about `budget` seconds (at least 3 times,
// at most 10000); returns the median seconds per call.
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
      if (c != std::string::npos && c + 2 <= line.size()) return line.substr(c + 2);
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

// (steal, total) jiffies of all CPUs from /proc/stat.
std::pair<double, double> StealJiffies() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0}, total = 0;
  for (double& x : v) {
    if (!(in >> x)) x = 0;
    total += x;
  }
  return {v[7], total};
}

// 1-minute load average (other processes on a shared machine skew every probe).
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string l;
  in >> l;
  return l.empty() ? std::string("?") : l;
}

// Shortest decimal form that reads back as exactly `v` (catalogue values round-trip).
std::string Num(double v) {
  char buf[40];
  for (int p = 6; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string SizeName(double bytes) {
  if (bytes >= (1 << 20)) return Fixed("%.0f MiB", bytes / (1 << 20));
  if (bytes >= (1 << 10)) return Fixed("%.0f KiB", bytes / (1 << 10));
  return Fixed("%.0f B", bytes);
}

// ------------------------------------------------------------------ all-reduce probe

constexpr int kProbeRanks = 2;

// All-reduce sizes: 4 KiB .. 64 MiB in steps of 4.
std::vector<int64_t> AllReduceSizes() {
  std::vector<int64_t> sizes;
  for (int64_t s = 4 << 10; s <= (int64_t(64) << 20); s *= 4) sizes.push_back(s);
  return sizes;
}

// One rank of the all-reduce probe (in a forked child). Rank 0 writes "bytes median mean" lines.
// Both ranks run the same fixed number of calls per size (derived from the size only:
// min(320, 64 MiB / size), at least 8 — 320 up to 64 KiB, 8 at 16 and 64 MiB), after 2
// warm-up calls.
void AllReduceRank(int rank, const std::string& dir, const CalibrationOptions& o,
                   const std::vector<int64_t>& sizes) {
  torch::set_num_threads(1);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  auto store = c10::make_intrusive<::c10d::FileStore>(dir + "/store", kProbeRanks);
  store->setTimeout(timeout);
  auto opts = ::c10d::ProcessGroupGloo::Options::create(timeout);
  opts->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  opts->threads = 1;
  auto pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(store, rank, kProbeRanks, opts);
  std::ostringstream out;
  out.precision(17);
  // Sizes are visited round-robin in kPasses passes so that a passing disturbance (another
  // process on the shared machine) spreads over all sizes instead of skewing one.
  constexpr int kPasses = 4;
  std::vector<at::Tensor> buf;
  std::vector<std::vector<double>> times(sizes.size());
  for (int64_t bytes : sizes) {
    buf.push_back(torch::ones({bytes / 4}, torch::kFloat32));
    std::vector<at::Tensor> t{buf.back()};
    for (int w = 0; w < 2; ++w) pg->allreduce(t)->wait();  // warm-up (connections, buffers)
  }
  for (int pass = 0; pass < kPasses; ++pass) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<at::Tensor> t{buf[i]};
      const int64_t total = std::clamp<int64_t>((int64_t(64) << 20) / sizes[i], 8, 320);
      for (int64_t r = 0; r < total / kPasses; ++r) {
        const auto t0 = Clock::now();
        pg->allreduce(t)->wait();
        times[i].push_back(Seconds(t0));
      }
    }
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    out << sizes[i] << " " << Median(times[i]) << " " << TrimmedMean(times[i]) << "\n";
  pg->barrier()->wait();
  if (rank == 0) WriteFileAtomic(dir + "/result.txt", out.str());
}

// (bytes, median seconds) and (bytes, trimmed-mean seconds) per size.
struct ProbeResult {
  std::vector<std::pair<double, double>> median, mean;
};

ProbeResult RunAllReduceProbe(const CalibrationOptions& o) {
  char tmpl[] = "/tmp/placerl_calib_XXXXXX";
  if (!mkdtemp(tmpl)) throw IoError("calibrate-host: cannot create a temporary directory in /tmp");
  const std::string dir = tmpl;
  const std::vector<int64_t> sizes = AllReduceSizes();
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t parent = getpid();
  pid_t kids[kProbeRanks];
  std::fill(kids, kids + kProbeRanks, pid_t(-1));
  bool fork_failed = false;
  for (int r = 0; r < kProbeRanks && !fork_failed; ++r) {
    kids[r] = fork();
    if (kids[r] < 0) {
      fork_failed = true;
    } else if (kids[r] == 0) {
      // Child: die with the parent; never return into the caller's stack.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(3);
      int code = 0;
      try {
        AllReduceRank(r, dir, o, sizes);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "calibrate-host: all-reduce rank %d: %.300s\n", r, e.what());
        code = 1;
      } catch (...) {
        code = 2;
      }
      std::fflush(nullptr);
      _exit(code);
    }
  }
  // Reap every child; one that fails or outlives the timeout takes the others down.
  int failed = fork_failed ? 1 : 0;
  bool timed_out = false;
  const auto start = Clock::now();
  for (;;) {
    int alive = 0;
    for (pid_t& k : kids) {
      if (k <= 0) continue;
      int st = 0;
      const pid_t w = waitpid(k, &st, WNOHANG);
      if (w == k || (w < 0 && errno != EINTR)) {
        k = -1;
        if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
      } else {
        ++alive;
      }
    }
    if (alive == 0) break;
    if (failed > 0 || Seconds(start) > o.timeout_s) {
      timed_out = failed == 0;
      for (pid_t k : kids)
        if (k > 0) kill(k, SIGKILL);
      for (pid_t& k : kids)
        if (k > 0) {
          while (waitpid(k, nullptr, 0) < 0 && errno == EINTR) {
          }
          k = -1;
        }
      ++failed;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProbeResult pts;
  if (!failed) {
    try {
      std::istringstream in(ReadFile(dir + "/result.txt"));
      double b, t, mean;
      while (in >> b >> t >> mean) {
        pts.median.emplace_back(b, t);
        pts.mean.emplace_back(b, mean);
      }
    } catch (const Error&) {
      pts = ProbeResult();
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (fork_failed) throw Error("calibrate-host: fork failed for the all-reduce probe");
  if (timed_out)
    throw Error("calibrate-host: the 2-process Gloo all-reduce probe did not finish within " +
                Fixed("%.0f", o.timeout_s) + " s (children killed)");
  if (failed || pts.median.size() != sizes.size())
    throw Error("calibrate-host: the 2-process Gloo all-reduce probe failed (see the messages above)");
  return pts;
}

// ------------------------------------------------------------------ catalogue text

// A top-level `chip { ... }` block of a catalogue text: [begin, end) to cut (whole lines
// when the block stands on its own lines), body = the text between the braces.
struct ChipBlock {
  size_t begin, end, body_begin, body_end;
};

std::vector<ChipBlock> TopLevelChipBlocks(const std::string& t) {
  std::vector<ChipBlock> blocks;
  const size_t n = t.size();
  int depth = 0;
  bool in_chip = false;
  ChipBlock cur{};
  size_t i = 0;
  auto line_start = [&](size_t pos) {
    size_t b = pos;
    while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t')) --b;
    return (b == 0 || t[b - 1] == '\n') ? b : pos;
  };
  while (i < n) {
    const char c = t[i];
    if (c == '#') {
      while (i < n && t[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < n && t[i] != c; ++i)
        if (t[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (depth == 0 && (std::isalpha(static_cast<unsigned char>(c)) || c == '_')) {
      const size_t w0 = i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
      if (t.compare(w0, i - w0, "chip") == 0) {
        size_t j = i;
        while (j < n && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
        if (j < n && t[j] == ':') ++j;
        while (j < n && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
        if (j < n && (t[j] == '{' || t[j] == '<')) {
          in_chip = true;
          cur = ChipBlock{line_start(w0), 0, j + 1, 0};
          depth = 1;
          i = j + 1;
        }
      }
      continue;
    }
    if (c == '{' || c == '<') {
      ++depth;
    } else if ((c == '}' || c == '>') && depth > 0) {
      if (--depth == 0 && in_chip) {
        cur.body_end = i;
        size_t e = i + 1;
        while (e < n && (t[e] == ' ' || t[e] == '\t')) ++e;
        if (e < n && t[e] == '#')
          while (e < n && t[e] != '\n') ++e;
        cur.end = (e >= n) ? n : (t[e] == '\n' ? e + 1 : i + 1);
        blocks.push_back(cur);
        in_chip = false;
      }
    }
    ++i;
  }
  return blocks;
}

}  // namespace

void FitLatencyBandwidth(const std::vector<std::pair<double, double>>& points, double* a, double* bw) {
  // Least squares of t = a + c·S, weighted by 1/t² (relative error: small sizes count).
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [s, t] : points) {
    if (!(t > 0) || !std::isfinite(t) || !(s >= 0)) continue;
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
  if (!(c > 0) || !std::isfinite(c))
    throw Error("calibrate-host: all-reduce times do not grow with size; cannot fit a bandwidth");
  *a = a0;
  *bw = 1 / c;
}

void FitMatmulCurve(const std::vector<std::pair<int, double>>& points, double* peak, double* half) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, best = 0;
  for (const auto& [size, rate] : points) {
    if (!(rate > 0) || size <= 0) continue;
    const double x = 1.0 / size, y = 1.0 / rate;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    best = std::max(best, rate);
  }
  if (n == 0) throw Error("calibrate-host: no matmul rates to fit");
  const double den = n * sxx - sx * sx;
  const double b = den > 0 ? (n * sxy - sx * sy) / den : 0;
  const double a = (sy - b * sx) / n;
  if (b <= 0 || a <= 0) {  // no size effect measurable: a constant rate
    *peak = best;
    *half = 0;
    return;
  }
  *peak = 1 / a;
  *half = b / a;
}

Measurements MeasureHost(const CalibrationOptions& o, const std::function<void(const std::string&)>& log) {
  if (o.threads < 1 || o.threads > 1024) throw ConfigError("calibrate-host: threads must be in [1, 1024]");
  if (!(o.seconds_per_probe > 0) || o.seconds_per_probe > 60)
    throw ConfigError("calibrate-host: seconds per probe must be in (0, 60]");
  if (o.ranks < 1 || o.ranks > 1024) throw ConfigError("calibrate-host: ranks must be in [1, 1024]");
  if (!(o.timeout_s > 0)) throw ConfigError("calibrate-host: timeout must be > 0 s");
  Measurements m;
  m.cpu = CpuName();
  m.threads = o.threads;
  m.ranks = o.ranks;
  m.ram_bytes = RamBytes();
  if (!(m.ram_bytes > 0)) throw IoError("calibrate-host: cannot read MemTotal from /proc/meminfo");
  const auto steal0 = StealJiffies();
  log("cpu: " + m.cpu + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical cores, " +
      Fixed("%.1f GiB RAM", m.ram_bytes / (1 << 30)) + ", load average " + LoadAverage());
  // The all-reduce children are forked before this process starts any LibTorch thread pool.
  if (o.allreduce) {
    log("all-reduce: 2 processes, c10d Gloo on 127.0.0.1, 4 KiB .. 64 MiB, 8..320 calls per size");
    ProbeResult r = RunAllReduceProbe(o);
    m.allreduce_by_size = std::move(r.median);
    m.allreduce_mean_by_size = std::move(r.mean);
    FitLatencyBandwidth(m.allreduce_by_size, &m.allreduce_median_latency_s, &m.allreduce_median_bw);
    FitLatencyBandwidth(m.allreduce_mean_by_size, &m.allreduce_mean_latency_s, &m.allreduce_mean_bw);
    m.allreduce_statistic = o.allreduce_fit_means ? "mean" : "median";
    m.allreduce_latency_s = o.allreduce_fit_means ? m.allreduce_mean_latency_s : m.allreduce_median_latency_s;
    m.allreduce_bw = o.allreduce_fit_means ? m.allreduce_mean_bw : m.allreduce_median_bw;
    for (size_t i = 0; i < m.allreduce_by_size.size(); ++i) {
      const auto [b, t] = m.allreduce_by_size[i];
      const double mean = m.allreduce_mean_by_size[i].second;
      const double fit_med = m.allreduce_median_latency_s + b / m.allreduce_median_bw;
      const double fit_mean = m.allreduce_mean_latency_s + b / m.allreduce_mean_bw;
      log("  " + SizeName(b) + ": median " + Fixed("%.3f ms", t * 1e3) + " (fit " + Fixed("%+.0f%%", 100 * (fit_med / t - 1)) +
          "), mean " + Fixed("%.3f ms", mean * 1e3) + " (fit " + Fixed("%+.0f%%", 100 * (fit_mean / mean - 1)) + ")");
    }
    log("  fit of the medians t = a + S/bw: a = " + Fixed("%.1f us", m.allreduce_median_latency_s * 1e6) +
        ", bw = " + Fixed("%.3f GB/s", m.allreduce_median_bw / 1e9) + (o.allreduce_fit_means ? "" : "  (catalogue)"));
    log("  fit of the means:                a = " + Fixed("%.1f us", m.allreduce_mean_latency_s * 1e6) +
        ", bw = " + Fixed("%.3f GB/s", m.allreduce_mean_bw / 1e9) + (o.allreduce_fit_means ? "  (catalogue)" : ""));
  }
  torch::set_num_threads(o.threads);
  torch::NoGradGuard no_grad;
  {
    const double cpu0 = CpuSeconds();
    const auto wall0 = Clock::now();
    for (int n : {256, 512, 1024, 2048}) {
      auto a = torch::randn({n, n}), b = torch::randn({n, n});
      const double t = TimeIt([&] { (void)torch::mm(a, b); }, o.seconds_per_probe);
      const double f = 2.0 * n * n * n / t;
      m.matmul_fp32_by_size.emplace_back(n, f);
      m.matmul_fp32_flops = std::max(m.matmul_fp32_flops, f);
      log("matmul fp32 " + std::to_string(n) + "^3: " + Fixed("%.1f GFLOP/s", f / 1e9));
    }
    m.matmul_cpu_per_wall = (CpuSeconds() - cpu0) / std::max(1e-9, Seconds(wall0));
    log("  cores busy during the fp32 matmuls: " + Fixed("%.2f", m.matmul_cpu_per_wall) + " (threads " +
        std::to_string(o.threads) + ")");
  }
  for (int n : {256, 512, 1024}) {
    auto a = torch::randn({n, n}).to(torch::kBFloat16), b = torch::randn({n, n}).to(torch::kBFloat16);
    const double t = TimeIt([&] { (void)torch::mm(a, b); }, o.seconds_per_probe);
    const double f = 2.0 * n * n * n / t;
    m.matmul_bf16_by_size.emplace_back(n, f);
    m.matmul_bf16_flops = std::max(m.matmul_bf16_flops, f);
    log("matmul bf16 " + std::to_string(n) + "^3: " + Fixed("%.1f GFLOP/s", f / 1e9));
  }
  // rate(n) = peak·n/(n + half): the catalogue's peak and efficiency.matmul_half_size, so
  // that the model charges small matmuls at the rate measured for their size.
  FitMatmulCurve(m.matmul_fp32_by_size, &m.matmul_fp32_peak, &m.matmul_half_size);
  {
    double sum = 0;
    for (const auto& [n, f] : m.matmul_bf16_by_size) sum += f * (n + m.matmul_half_size) / n;
    m.matmul_bf16_peak = m.matmul_bf16_by_size.empty() ? 0 : sum / m.matmul_bf16_by_size.size();
  }
  log("matmul fit: rate(n) = " + Fixed("%.1f GFLOP/s", m.matmul_fp32_peak / 1e9) + " * n / (n + " +
      Fixed("%.0f", m.matmul_half_size) + ") fp32; bf16 peak " + Fixed("%.1f GFLOP/s", m.matmul_bf16_peak / 1e9));
  {
    const int64_t n = (int64_t(64) << 20) / 4;
    auto a = torch::rand({n}), b = torch::rand({n}), c = torch::empty({n});
    const double t = TimeIt([&] { torch::add_out(c, a, b); }, o.seconds_per_probe);
    m.memory_bw = 3.0 * n * 4 / t;
    log("memory: c = a + b on 64 MiB fp32 (3 x 64 MiB moved): " + Fixed("%.2f GB/s", m.memory_bw / 1e9));
  }
  {
    auto a = torch::rand({16}), b = torch::rand({16}), c = torch::empty({16});
    m.small_op_s = TimeIt([&] { torch::add_out(c, a, b); }, std::max(0.01, o.seconds_per_probe / 4));
    log("tiny op (16-element add): " + Fixed("%.2f us", m.small_op_s * 1e6));
  }
  const auto steal1 = StealJiffies();
  if (steal1.second > steal0.second)
    m.steal_fraction = (steal1.first - steal0.first) / (steal1.second - steal0.second);
  log("load average at the end: " + LoadAverage() + ", CPU time stolen by the hypervisor during the run: " +
      Fixed("%.0f%%", 100 * m.steal_fraction));
  return m;
}

std::string HostChipText(const Measurements& m) {
  const bool have_ar = m.allreduce_bw > 0;
  const double bw = have_ar ? m.allreduce_bw : 1e9;
  const double alpha = have_ar ? m.allreduce_latency_s / 2 : 0;
  const int ranks = std::max(1, m.ranks);
  auto rates = [](const std::vector<std::pair<int, double>>& v) {
    std::string s;
    for (const auto& [n, f] : v) s += (s.empty() ? "" : ", ") + std::to_string(n) + "^3 " + Fixed("%.1f", f / 1e9);
    return s.empty() ? std::string("not measured") : s;
  };
  const bool fitted = m.matmul_half_size > 0 && m.matmul_fp32_peak > 0;
  std::ostringstream s;
  s << "chip {\n"
    << "  # This machine, measured by `perf-model calibrate-host` (models/host_calibration.cc,\n"
    << "  # docs/host_calibration.md): " << m.cpu << "; one chip = one process with " << m.threads
    << " LibTorch thread(s).\n"
    << "  # CPU time stolen by the hypervisor while measuring: " << Fixed("%.0f%%", 100 * m.steal_fraction)
    << " (rates drop when it is high).\n"
    << "  name: \"host\"\n"
    << "  # fp32 n^3 matmul GFLOP/s: " << rates(m.matmul_fp32_by_size) << "; peak = "
    << (fitted ? "fit of rate(n) = peak*n/(n + matmul_half_size)" : "the best") << "\n"
    << "  peak { dtype: FP32 flops_per_s: " << Num(fitted ? m.matmul_fp32_peak : m.matmul_fp32_flops) << " }\n"
    << "  # bf16 n^3 matmul GFLOP/s: " << rates(m.matmul_bf16_by_size) << "; peak = "
    << (fitted ? "mean of rate*(n + matmul_half_size)/n" : "the best") << "\n"
    << "  peak { dtype: BF16 flops_per_s: " << Num(fitted && m.matmul_bf16_peak > 0 ? m.matmul_bf16_peak : m.matmul_bf16_flops) << " }\n"
    << "  hbm_bytes: " << Num(m.ram_bytes / ranks) << "  # MemTotal " << Fixed("%.2f GiB", m.ram_bytes / (1 << 30))
    << " / " << ranks << " process(es)\n"
    << "  hbm_bw: " << Num(m.memory_bw) << "  # c = a + b on 64 MiB fp32, read a, b + write c: "
    << Fixed("%.2f GB/s", m.memory_bw / 1e9) << "\n"
    << "  devices_per_chip: 1\n";
  if (have_ar) {
    s << "  # 2-process c10d Gloo all-reduce on 127.0.0.1, median ms:";
    int k = 0;
    for (const auto& [b, t] : m.allreduce_by_size)
      s << (k++ % 4 == 0 ? "\n  #  " : ", ") << SizeName(b) << " " << Fixed("%.3f", t * 1e3);
    if (!m.allreduce_mean_by_size.empty()) {
      s << "\n  # means (slowest 5 % dropped), ms:";
      k = 0;
      for (const auto& [b, t] : m.allreduce_mean_by_size)
        s << (k++ % 4 == 0 ? "\n  #  " : ", ") << SizeName(b) << " " << Fixed("%.3f", t * 1e3);
    }
    if (m.allreduce_median_bw > 0)
      s << "\n  # fit t = a + S/bw of the medians: a = " << Fixed("%.1f us", m.allreduce_median_latency_s * 1e6)
        << ", bw = " << Fixed("%.4g GB/s", m.allreduce_median_bw / 1e9);
    if (m.allreduce_mean_bw > 0)
      s << "\n  # fit t = a + S/bw of the means: a = " << Fixed("%.1f us", m.allreduce_mean_latency_s * 1e6)
        << ", bw = " << Fixed("%.4g GB/s", m.allreduce_mean_bw / 1e9);
    s << "\n  # used here (" << (m.allreduce_statistic.empty() ? "given" : m.allreduce_statistic)
      << "): a = " << Fixed("%.1f us", m.allreduce_latency_s * 1e6)
      << ", bw = " << Fixed("%.4g GB/s", m.allreduce_bw / 1e9) << ". Encoded as a 2-chip ring without\n"
      << "  # wraparound, whose all-reduce the model prices 2*hop_latency_s + S/link_bw_one_way:\n"
      << "  # hop_latency_s = a/2, link_bw_one_way = bw.\n";
  } else {
    s << "  # all-reduce not measured: link_bw_one_way 1e9 and hop_latency_s 0 are placeholders\n";
  }
  s << "  ici { topology: RING links_per_chip: 1 link_bw_one_way: " << Num(bw) << " hop_latency_s: " << Num(alpha)
    << " wrap_min_axis: 0 max_chips_per_domain: " << std::max(2, ranks) << " }\n"
    << "  chips_per_host: " << std::max(2, ranks) << "\n"
    << "  # Achieved rates, not peaks: matmul, memory and collective efficiency 1. launch_overhead_s =\n"
    << "  # the 16-element add (" << Fixed("%.2f us", m.small_op_s * 1e6)
    << "); latency_floor_s = one hop (a/2), the smallest collective.\n"
    << "  efficiency { matmul: 1 memory: 1 collective_bw: 1 latency_floor_s: " << Num(std::max(1e-9, alpha))
    << " launch_overhead_s: " << Num(std::max(1e-9, m.small_op_s))
    << (fitted ? " matmul_half_size: " + Num(m.matmul_half_size) : std::string()) << " }\n"
    << "  source: \"measured by perf-model calibrate-host: " << m.cpu << ", " << m.threads
    << " thread(s) per process\"\n"
    << "}\n";
  return s.str();
}

std::string WithHostChip(const std::string& catalog_text, const Measurements& m) {
  std::string out;
  size_t pos = 0;
  for (const ChipBlock& b : TopLevelChipBlocks(catalog_text)) {
    perf::Chip chip;
    perf::ParseTextProto(catalog_text.substr(b.body_begin, b.body_end - b.body_begin), "<catalogue chip block>",
                         &chip);
    if (chip.name() != "host") continue;
    out.append(catalog_text, pos, b.begin - pos);
    pos = b.end;
  }
  out.append(catalog_text, pos, std::string::npos);
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!out.empty()) out += '\n';
  out += HostChipText(m);
  perf::Catalog c;
  try {
    c = perf::ParseCatalog(out, "<catalogue with host>");
  } catch (const Error& e) {
    throw Error(std::string("calibrate-host: the catalogue with the measured host does not load: ") + e.what());
  }
  int hosts = 0;
  for (const perf::Chip& chip : c.chip()) hosts += chip.name() == "host";
  if (hosts != 1) throw Error("calibrate-host: could not remove the catalogue's existing host entry");
  return out;
}

std::string HostCatalogText(const Measurements& m) { return WithHostChip(perf::DefaultCatalogText(), m); }

}  // namespace placerl::host
