// Runs a binary the way a user at a terminal stops it: in its own process group with a limit on
// its address space (`ulimit -v`), then, once it is working, Ctrl-C (SIGINT to the whole group,
// as a terminal sends it: the launcher of a multi-process run and its ranks alike). The CLI
// tests of the long-running binaries use it to check that every budget/count option at its
// maximum either is refused up front or runs with bounded memory and stops within seconds.
// (A background job of a non-interactive shell ignores SIGINT, so the shell cannot be used.)
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "tests/experiments/test_dir.h"

namespace placerl::testing {

struct InterruptedRun {
  bool signalled = false;      // the signal was sent (the process was still running when ready)
  bool ended = false;          // it ended by itself within the bound (else it was killed)
  int exit_code = -1;          // its exit status (-1 when it died of a signal)
  int signal = 0;              // the signal it died of, if it did
  double seconds_to_end = 0;   // from the signal (or from the start when none was sent) to its end
  std::string out, err;        // stdout, stderr
};

// Runs `command` (a shell command line; it is exec'd, so the binary is the group leader's
// image) with RLIMIT_AS = `address_space_kb` KiB (0: unlimited). Polls `ready()` every 50 ms
// for up to `ready_within_s` seconds (a null `ready` waits the whole time); then, if it is still
// running, sends `sig` to its process group and waits up to `bound_s` seconds for it to end
// (after that it is killed: ended = false).
inline InterruptedRun RunAndInterrupt(const std::string& command, const std::function<bool()>& ready,
                                      double ready_within_s, int sig, double bound_s, long address_space_kb) {
  InterruptedRun r;
  TempDir tmp;
  const std::string out = tmp / "out", err = tmp / "err";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (address_space_kb > 0) {
      struct rlimit lim;
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(address_space_kb) * 1024;
      setrlimit(RLIMIT_AS, &lim);
    }
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int n = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0) _exit(126);
    dup2(n, 0);
    dup2(o, 1);
    dup2(e, 2);
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // (either side may win the race; both ask for the same)
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  int status = 0;
  bool done = false;
  const auto start = Clock::now();
  while (!done && since(start) < ready_within_s) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      done = true;
      break;
    }
    if (ready && ready()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto t0 = start;
  if (!done) {
    t0 = Clock::now();
    kill(-pid, sig);
    r.signalled = true;
    while (since(t0) < bound_s) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        done = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  r.seconds_to_end = since(t0);
  if (!done) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  kill(-pid, SIGKILL);  // anything the run left behind in its group
  r.ended = done;
  if (done && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (done && WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// Lines of a text file (0 when it does not exist): "a run has logged k rows".
inline int FileLines(const std::string& path) {
  const std::string s = Slurp(path);
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace placerl::testing
