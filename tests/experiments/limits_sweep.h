// The limits sweep of the CLI tests: every budget or count option at its largest accepted
// value is either refused up front (one line, exit 1) or runs with bounded memory and ends
// when asked to stop. ShLimited runs a binary as a user would, under an address-space limit,
// sends it SIGINT (Ctrl-C) after a few seconds and SIGKILL 30 s later if it is still running.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/experiments/run_command.h"

namespace placerl::testing {

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
