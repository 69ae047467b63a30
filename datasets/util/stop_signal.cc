#include "datasets/util/stop_signal.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace placerl::run {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kNumSignals = 2;

std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the flag is set from a signal handler");
struct sigaction g_previous[kNumSignals];
std::atomic<bool> g_installed{false};

void OnStopSignal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  if (g_stop_signal.compare_exchange_strong(expected, sig)) {
    static const char kMessage[] =
        "\nstop requested: finishing the current step and writing the best result so far "
        "(signal again to abort)\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    errno = saved_errno;
    return;
  }
  // Second signal: hand it to whoever was there before us (default: terminate).
  for (int i = 0; i < kNumSignals; ++i) {
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  }
  ::raise(sig);
  errno = saved_errno;
}

}  // namespace

void InstallStopOnSignal() {
  if (g_installed.exchange(true)) return;
  g_stop_signal.store(0);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one handler at a time for both
  sa.sa_flags = SA_RESTART;  // interrupted writes of checkpoints resume instead of failing
  for (int i = 0; i < kNumSignals; ++i) {
    ::sigaction(kSignals[i], &sa, &g_previous[i]);
    // A signal ignored by whoever started us (nohup, a non-interactive shell's background
    // job) stays ignored.
    if (g_previous[i].sa_handler == SIG_IGN && !(g_previous[i].sa_flags & SA_SIGINFO)) {
      ::sigaction(kSignals[i], &g_previous[i], nullptr);
    }
  }
}

void UninstallStopOnSignal() {
  if (!g_installed.exchange(false)) return;
  for (int i = 0; i < kNumSignals; ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  g_stop_signal.store(0);
}

bool StopRequested() { return g_stop_signal.load(std::memory_order_relaxed) != 0; }

int StopSignal() { return g_stop_signal.load(std::memory_order_relaxed); }

}  // namespace placerl::run
