// Runs a shell command the way a user would (stdout and stderr together) for the binaries'
// CLI tests: exit status (-1 when it did not exit normally) and everything it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace placerl::testing {

struct CmdResult {
  int status;
  std::string out;
};

inline CmdResult Sh(const std::string& cmd) {
  std::array<char, 4096> buf;
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return CmdResult{-1, ""};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return CmdResult{WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace placerl::testing
