// Runs a shell command the way a user would (stdout and stderr together) for the binaries'
// CLI tests: exit status (-1 when it did not exit normally) and everything it printed.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace placerl::testing {

// The folder of the built binaries: `<build>/bin`, next to `<build>/tests` where the test
// executables are. Found at run time (not compiled in) so that the compile commands hold no
// absolute path and two clones share one ccache.
inline std::string BinDir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "build/bin";
  return (exe.parent_path().parent_path() / "bin").string();
}

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

// Like Sh, but stdout and stderr apart (`out` = stdout only, `err` = stderr): for output
// that must parse (one JSON document) while warnings go to stderr.
struct CmdResultSplit {
  int status;
  std::string out, err;
};

inline CmdResultSplit ShSplit(const std::string& cmd) {
  char name[] = "/tmp/placerl_sh_err_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return CmdResultSplit{-1, "", ""};
  close(fd);
  const CmdResult r = Sh("{ { " + cmd + " ; } 2>" + name + " ; }");
  std::string err;
  if (FILE* f = std::fopen(name, "rb")) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) err.append(buf.data(), n);
    std::fclose(f);
  }
  std::remove(name);
  return CmdResultSplit{r.status, r.out, err};
}

// `bin --help`'s stdout with the binary's path (in "Usage: …") written as `name`, for the tests
// that pin a binary's help to the text it printed before its code moved (tests/data/*_help.txt).
// "" when it does not exit 0.
inline std::string HelpAsNamed(const std::string& bin, const std::string& name, const std::string& args = "--help") {
  const CmdResultSplit r = ShSplit(bin + " " + args);
  if (r.status != 0) return "";
  std::string help = r.out;
  const size_t at = help.find(bin);
  if (at != std::string::npos) help.replace(at, bin.size(), name);
  return help;
}

}  // namespace placerl::testing
