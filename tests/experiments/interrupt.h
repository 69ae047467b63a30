// Stopping a binary the way a user does, for the CLI tests of the long-running binaries: every
// budget/count option at its maximum either is refused up front or runs with bounded memory and
// stops within seconds of Ctrl-C. Three ways to run it, for three kinds of check:
//  - RunAndInterrupt(command, ready(), …) → InterruptedRun: the binary in its own process group
//    under RLIMIT_AS, SIGINT (or any signal) to the whole group once a C++ condition holds — as a
//    terminal sends it to the launcher of a multi-process run and its ranks alike;
//  - RunAndInterrupt(cmd, "shell condition", …) → InterruptResult: under `ulimit -v` in a job-control
//    shell, SIGINT once a shell condition on the run's files or output so far holds, timed from the
//    signal to the exit;
//  - ShLimited(cmd) + SweepVerdict: the limits sweep — under `ulimit -v` and `timeout`, SIGINT after
//    a few seconds, SIGKILL 30 s later; the verdict accepts refused (one line, exit 1), done or stopped.
// (A background job of a non-interactive shell ignores SIGINT, hence `set -m` or the fork.)
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl::testing {

// ---------------------------------------------------------------- the process group, ready()

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

// ---------------------------------------------------------------- a job-control shell, a shell condition

struct InterruptResult {
  bool ready = false;      // `ready` held before the signal (the run was under way)
  bool exited_before = false;  // the command had already exited when the signal was due
  bool hung = false;       // still running `exit_timeout_s` after SIGINT (then killed)
  int status = -1;         // exit status (128 + n when killed by signal n)
  double seconds_to_exit = 0;  // from SIGINT to the exit
  std::string out;         // stdout and stderr
};

// Runs `cmd` under `ulimit -v limit_kib`; waits until the shell condition `ready` holds (e.g.
// "test -e DIR/metrics.csv", "grep -q 'final training' \"$log\"": $log is the output so far), at
// most `ready_timeout_s`, then `delay_s` more; sends SIGINT and waits at most `exit_timeout_s`.
inline InterruptResult RunAndInterrupt(const std::string& cmd, const std::string& ready, double delay_s = 1,
                                       long limit_kib = 4000000, int ready_timeout_s = 120, int exit_timeout_s = 30) {
  const std::string script =
      "set -m\n"  // job control: a background job does not ignore SIGINT (as it does in a plain script)
      "log=$(mktemp); ( ulimit -v " + std::to_string(limit_kib) + "; exec " + cmd + " ) >\"$log\" 2>&1 & pid=$!\n"
      "alive() { [ -e /proc/$pid ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$pid/stat 2>/dev/null; }\n"
      "ready=0; t=0; while [ $t -lt " + std::to_string(ready_timeout_s * 10) + " ]; do\n"
      "  if " + ready + "; then ready=1; break; fi; alive || break; sleep 0.1; t=$((t+1)); done\n"
      "sleep " + std::to_string(delay_s) + "\n"
      "before=0; alive || before=1\n"
      "start=$(date +%s%N); kill -INT $pid 2>/dev/null\n"
      "t=0; while alive && [ $t -lt " + std::to_string(exit_timeout_s * 10) + " ]; do sleep 0.1; t=$((t+1)); done\n"
      "hung=0; if alive; then hung=1; kill -9 $pid; fi\n"
      "wait $pid; st=$?; end=$(date +%s%N)\n"
      "echo \"@@ready=$ready before=$before hung=$hung status=$st ms=$(( (end - start) / 1000000 ))\"\n"
      "cat \"$log\"; rm -f \"$log\"\n";
  const std::string file = "/tmp/placerl_interrupt_" + std::to_string(::getpid()) + ".sh";
  if (FILE* f = std::fopen(file.c_str(), "w")) {
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const CmdResult r = Sh("bash " + file);
  std::remove(file.c_str());
  InterruptResult x;
  const size_t at = r.out.find("@@ready=");
  if (at == std::string::npos) {
    x.out = r.out;
    return x;
  }
  int ready_flag = 0, before = 0, hung = 0, status = -1;
  long ms = 0;
  std::sscanf(r.out.c_str() + at, "@@ready=%d before=%d hung=%d status=%d ms=%ld", &ready_flag, &before, &hung, &status, &ms);
  x.ready = ready_flag != 0;
  x.exited_before = before != 0;
  x.hung = hung != 0;
  x.status = status;
  x.seconds_to_exit = ms / 1000.0;
  x.out = r.out.substr(r.out.find('\n', at) + 1);
  return x;
}

// ---------------------------------------------------------------- the limits sweep

// Exit status of ShLimited when SIGINT ended the program (128 + 2), and when it ignored
// SIGINT and only SIGKILL ended it (128 + 9).
constexpr int kEndedBySigint = 130;
constexpr int kIgnoredSigint = 137;

// `cmd` must be a plain command (a binary and its arguments, quoted for the shell): it runs
// under `timeout`, not a shell. Status as the program's own; kEndedBySigint / kIgnoredSigint.
inline CmdResult ShLimited(const std::string& cmd, int sigint_after_s = 5, long address_space_kb = 4000000) {
  return Sh("ulimit -v " + std::to_string(address_space_kb) + "; timeout --preserve-status -s INT -k 30 " +
            std::to_string(sigint_after_s) + " " + cmd);
}

// Outcomes the sweep accepts, as a gtest message ("" when fine): refused with one line
// `<binary>: error: …` and exit 1, done (exit 0), or stopped by SIGINT (exit 130, or 0 when
// the binary handles the stop itself).
inline std::string SweepVerdict(const CmdResult& r, const std::string& binary) {
  const auto lines = std::count(r.out.begin(), r.out.end(), '\n');
  if (r.status == 1) {
    if (r.out.rfind(binary + ": error: ", 0) != 0 || lines != 1) return "exit 1 but not one error line: " + r.out;
    return "";
  }
  if (r.status == 0 || r.status == kEndedBySigint) return "";
  if (r.status == kIgnoredSigint) return "SIGINT ignored for 30 s (killed): " + r.out.substr(0, 2000);
  return "unexpected status " + std::to_string(r.status) + ": " + r.out.substr(0, 2000);
}

// Files under `dir` whose name holds ".tmp." (a temporary left behind).
inline std::string LeftoverTemporaries(const std::string& dir) {
  std::string found;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) found += e.path().string() + " ";
  }
  return found;
}

}  // namespace placerl::testing
