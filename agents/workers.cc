#include "agents/workers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "datasets/util/errors.h"

namespace placerl::workers {

namespace {

std::string Short(const std::exception& e) {
  std::string w = e.what();
  const size_t nl = w.find('\n');  // c10::Error appends a backtrace
  if (nl != std::string::npos) w = w.substr(0, nl);
  return w.substr(0, 300);
}

bool ParseInt(const char* text, int lo, int hi, int* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

bool RendezvousFromEnvironment(Rendezvous* r) {
  const char* names[] = {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"};
  int set = 0;
  for (const char* n : names) set += std::getenv(n) != nullptr;
  if (set == 0) return false;
  if (set != 4) throw ConfigError("set all of MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE, or none of them");
  r->master_addr = std::getenv("MASTER_ADDR");
  if (r->master_addr.empty()) throw ConfigError("MASTER_ADDR is empty");
  if (!ParseInt(std::getenv("MASTER_PORT"), 1, 65535, &r->master_port))
    throw ConfigError(std::string("MASTER_PORT=") + std::getenv("MASTER_PORT") + ": expected a port in [1, 65535]");
  if (!ParseInt(std::getenv("WORLD_SIZE"), 1, 1 << 20, &r->world_size))
    throw ConfigError(std::string("WORLD_SIZE=") + std::getenv("WORLD_SIZE") + ": expected an integer >= 1");
  if (!ParseInt(std::getenv("RANK"), 0, r->world_size - 1, &r->rank))
    throw ConfigError(std::string("RANK=") + std::getenv("RANK") + ": expected an integer in [0, WORLD_SIZE)");
  r->store_dir.clear();
  return true;
}

// ---------------------------------------------------------------- the process group

struct ProcessGroup::Impl {
  Rendezvous r;
  c10::intrusive_ptr<::c10d::Store> store;
  c10::intrusive_ptr<::c10d::ProcessGroupGloo> pg;

  // While the main thread waits in a collective, a helper thread keeps the heartbeat fresh
  // (about once a second): waiting for a slow or hung peer is progress of this rank.
  std::function<void()> heartbeat;
  std::thread beater;
  std::mutex mu;
  std::condition_variable cv;
  bool waiting = false, quit = false;

  void StartBeater() {
    beater = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu);
      while (!quit) {
        cv.wait_for(lock, std::chrono::milliseconds(500));
        if (waiting && !quit) heartbeat();
      }
    });
  }
  ~Impl() {
    if (beater.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        quit = true;
      }
      cv.notify_all();
      beater.join();
    }
  }
  struct Waiting {
    Impl* impl;
    explicit Waiting(Impl* i) : impl(i) {
      if (!impl->beater.joinable()) return;
      std::lock_guard<std::mutex> lock(impl->mu);
      impl->waiting = true;
    }
    ~Waiting() {
      if (!impl->beater.joinable()) return;
      std::lock_guard<std::mutex> lock(impl->mu);
      impl->waiting = false;
    }
  };

  void Wait(const c10::intrusive_ptr<::c10d::Work>& work, const char* what) {
    try {
      const Waiting waiting_now(this);
      work->wait();
    } catch (const std::exception& e) {
      // A moment's delay: the rank that failed first exits first, and the launcher names it.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      throw PeerFailure("rank " + std::to_string(r.rank) + ": " + what + " failed (a peer died or hung?): " + Short(e));
    }
  }
  template <typename T>
  void AllReduce(T* values, int64_t n, c10::ScalarType type, ::c10d::ReduceOp op, const char* what) {
    if (n == 0 || r.world_size == 1) return;
    std::vector<torch::Tensor> v = {torch::from_blob(values, {n}, type)};
    ::c10d::AllreduceOptions o;
    o.reduceOp = op;
    Wait(pg->allreduce(v, o), what);
  }
};

ProcessGroup::ProcessGroup(const Rendezvous& r) : impl_(std::make_unique<Impl>()) {
  impl_->r = r;
  if (r.world_size < 1 || r.rank < 0 || r.rank >= r.world_size)
    throw ConfigError("rank " + std::to_string(r.rank) + " is not in a world of " + std::to_string(r.world_size));
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(r.timeout_s * 1000));
  try {
    std::shared_ptr<::gloo::transport::Device> device;
    if (!r.store_dir.empty()) {
      impl_->store = c10::make_intrusive<::c10d::FileStore>(r.store_dir + "/store", r.world_size);
      impl_->store->setTimeout(timeout);
      device = ::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
    } else {
      ::c10d::TCPStoreOptions so;
      so.port = static_cast<uint16_t>(r.master_port);
      so.isServer = r.rank == 0;
      so.numWorkers = static_cast<size_t>(r.world_size);
      so.waitWorkers = true;
      so.timeout = timeout;
      impl_->store = c10::make_intrusive<::c10d::TCPStore>(r.master_addr, so);
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
        device = ::c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
      else if (r.master_addr == "127.0.0.1" || r.master_addr == "localhost")
        device = ::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
      else
        device = ::c10d::ProcessGroupGloo::createDefaultDevice();
    }
    auto opts = ::c10d::ProcessGroupGloo::Options::create(timeout);
    opts->devices.push_back(device);
    opts->threads = 1;
    impl_->pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(impl_->store, r.rank, r.world_size, opts);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(r.rank) + ": rendezvous of " + std::to_string(r.world_size) +
                " workers failed: " + Short(e));
  }
}

ProcessGroup::~ProcessGroup() = default;
int ProcessGroup::rank() const { return impl_->r.rank; }
int ProcessGroup::world_size() const { return impl_->r.world_size; }
c10d::ProcessGroupGloo& ProcessGroup::gloo() { return *impl_->pg; }

void ProcessGroup::AllReduceSum(float* values, int64_t n) {
  impl_->AllReduce(values, n, torch::kFloat32, ::c10d::ReduceOp::SUM, "all-reduce");
}
void ProcessGroup::AllReduceSum(double* values, int64_t n) {
  impl_->AllReduce(values, n, torch::kFloat64, ::c10d::ReduceOp::SUM, "all-reduce");
}
void ProcessGroup::AllReduceMax(double* values, int64_t n) {
  impl_->AllReduce(values, n, torch::kFloat64, ::c10d::ReduceOp::MAX, "all-reduce");
}

void ProcessGroup::SetHeartbeat(std::function<void()> heartbeat) {
  if (impl_->beater.joinable() || !heartbeat) throw Error("ProcessGroup::SetHeartbeat: call it once, with a function");
  impl_->heartbeat = std::move(heartbeat);
  impl_->StartBeater();
}

void ProcessGroup::Barrier() {
  if (impl_->r.world_size > 1) impl_->Wait(impl_->pg->barrier(), "barrier");
}

void ProcessGroup::Broadcast(std::string* bytes, int root) {
  if (impl_->r.world_size == 1) return;
  ::c10d::BroadcastOptions o;
  o.rootRank = root;
  std::vector<torch::Tensor> size = {torch::full({1}, static_cast<int64_t>(bytes->size()), torch::kInt64)};
  impl_->Wait(impl_->pg->broadcast(size, o), "broadcast");
  const int64_t n = size[0].item<int64_t>();
  if (n == 0) {
    bytes->clear();
    return;
  }
  std::vector<torch::Tensor> data = {torch::empty({n}, torch::kUInt8)};
  if (impl_->r.rank == root) std::memcpy(data[0].data_ptr<uint8_t>(), bytes->data(), static_cast<size_t>(n));
  impl_->Wait(impl_->pg->broadcast(data, o), "broadcast");
  bytes->assign(reinterpret_cast<const char*>(data[0].data_ptr<uint8_t>()), static_cast<size_t>(n));
}

std::vector<std::string> ProcessGroup::AllGather(const std::string& bytes) {
  std::vector<std::string> all(impl_->r.world_size);
  for (int root = 0; root < impl_->r.world_size; ++root) {
    if (root == impl_->r.rank) all[root] = bytes;
    Broadcast(&all[root], root);
  }
  return all;
}

// ---------------------------------------------------------------- launcher

void Heartbeat(const std::string& dir, int rank) {
  if (dir.empty()) return;
  const std::string path = dir + "/progress." + std::to_string(rank);
  if (FILE* f = std::fopen(path.c_str(), "w")) std::fclose(f);
}

namespace {

double Mtime(const std::string& path, double fallback) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return fallback;
  return double(st.st_mtim.tv_sec) + 1e-9 * double(st.st_mtim.tv_nsec);
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

volatile sig_atomic_t g_launcher_signal = 0;
void RecordSignal(int sig) { g_launcher_signal = sig; }

// While the launcher waits: Ctrl-C reaches the ranks directly (same process group) and they
// stop cleanly together, so the launcher must not die of it; a SIGTERM sent to the launcher
// alone is passed on. The previous handlers come back afterwards.
struct LauncherSignals {
  struct sigaction old_int{}, old_term{};
  LauncherSignals() {
    g_launcher_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = RecordSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~LauncherSignals() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

struct Children {
  std::vector<pid_t> pids;
  std::vector<bool> alive;
  ~Children() { KillAll(); }
  void KillAll() {
    for (size_t i = 0; i < pids.size(); ++i)
      if (alive[i]) kill(pids[i], SIGKILL);
    for (size_t i = 0; i < pids.size(); ++i)
      if (alive[i]) {
        waitpid(pids[i], nullptr, 0);
        alive[i] = false;
      }
  }
};

}  // namespace

void Launch(const LaunchOptions& o) {
  if (access(o.exe.c_str(), X_OK) != 0) throw IoError("worker binary " + o.exe + " is not executable");
  LauncherSignals signals;
  Children ch;
  const double start = Now();
  for (int r = 0; r < o.world_size; ++r) {
    std::vector<std::string> args = o.args(r);
    args.insert(args.begin(), o.argv0.empty() ? o.exe : o.argv0);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      execv(o.exe.c_str(), argv.data());
      std::fprintf(stderr, "exec %s: %s\n", o.exe.c_str(), std::strerror(errno));
      std::_Exit(127);
    }
    ch.pids.push_back(pid);
    ch.alive.push_back(true);
  }
  std::string failure;
  double kill_at = -1;
  for (;;) {
    if (g_launcher_signal == SIGTERM) {
      g_launcher_signal = 0;
      for (size_t i = 0; i < ch.pids.size(); ++i)
        if (ch.alive[i]) kill(ch.pids[i], SIGTERM);
    }
    bool any_alive = false;
    for (int r = 0; r < o.world_size; ++r) {
      if (!ch.alive[r]) continue;
      int status = 0;
      const pid_t got = waitpid(ch.pids[r], &status, WNOHANG);
      if (got == ch.pids[r]) {
        ch.alive[r] = false;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && failure.empty()) {
          failure = "rank " + std::to_string(r) +
                    (WIFEXITED(status) ? " exited with status " + std::to_string(WEXITSTATUS(status))
                                       : " was killed by signal " + std::to_string(WTERMSIG(status)));
          kill_at = Now() + o.grace_s;  // the peers report their own error first
        }
      } else {
        any_alive = true;
      }
    }
    if (!any_alive) break;
    const double now = Now();
    if (kill_at > 0 && now >= kill_at) {
      ch.KillAll();
      break;
    }
    if (failure.empty()) {
      for (int r = 0; r < o.world_size; ++r) {
        if (!ch.alive[r]) continue;
        const double last = Mtime(o.heartbeat_dir + "/progress." + std::to_string(r), start);
        if (now - last > o.timeout_s) {
          failure = "rank " + std::to_string(r) + " made no progress for " +
                    std::to_string(static_cast<int>(std::round(now - last))) + " s (hung?)";
          ch.KillAll();
          break;
        }
      }
      if (!failure.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!failure.empty()) throw Error(failure + "; stopped the other workers");
}

TempDirectory::TempDirectory(const std::string& stem) {
  std::string tmpl = "/tmp/" + stem + ".XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw IoError(std::string("mkdtemp: ") + std::strerror(errno));
  path_ = tmpl;
}

TempDirectory::~TempDirectory() {
  if (DIR* d = opendir(path_.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") unlink((path_ + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(path_.c_str());
}

}  // namespace placerl::workers
