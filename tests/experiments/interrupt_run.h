// Ctrl-C as a user gives it, for the binaries' CLI tests: a command started in the background
// under a memory limit (`ulimit -v`), interrupted with SIGINT once it is under way, and timed
// from the signal to its exit (killed with SIGKILL after a generous bound).
#pragma once

#include <string>

#include "tests/experiments/run_command.h"

namespace placerl::testing {

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

}  // namespace placerl::testing
