// What every placerl binary does the same way (docs/conventions.md):
//   - exit codes: 0 = done, 1 = error (bad input, bad option, I/O, internal), 2 = ran, but the
//     result is infeasible (OOM, dead end);
//   - every failure is ONE line on stderr, `<binary>: error: <what>` (`file:line: ` first for
//     file input), command-line parsing errors included;
//   - numeric options are checked: non-finite, negative or absurd values are refused by the
//     validators below, never passed on.
// Usage in a main:
//   return placerl::RunMain("proxy-cost", [&] {
//     CLI::App app{"..."};
//     ... add options (with ->check(placerl::cli::FiniteRange(0, 1e6)) etc.) ...
//     placerl::cli::Parse(app, argc, argv);   // --help prints and exits 0; errors throw
//     ...
//     return placerl::kExitOk;
//   });
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitInfeasible = 2;

// Thrown to end a binary early with a given exit code after it printed what it had to say
// (`--help`): RunMain returns the code without printing anything.
struct ExitRequest {
  int code;
};

// A command line that cannot be used (unknown option, missing value, value out of range).
class UsageError : public ConfigError {
 public:
  explicit UsageError(const std::string& what) : ConfigError(what) {}
};

inline int RunMain(const char* binary, const std::function<int()>& body) {
  SetWarningProgram(binary);  // warnings: `<binary>: warning [ID]: what`
  try {
    return body();
  } catch (const ExitRequest& e) {
    return e.code;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", binary, e.what());
    return kExitError;
  } catch (const CLI::Error& e) {  // a CLI11 error raised outside cli::Parse
    std::fprintf(stderr, "%s: error: %s\n", binary, e.what());
    return kExitError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", binary);
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: internal: %s\n", binary, e.what());
    return kExitError;
  }
}

namespace cli {

// Parses the command line. `--help` (of the app or a subcommand) prints the help on stdout and
// ends the binary with exit 0; any parsing error becomes a UsageError (one line, exit 1).
inline void Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    throw ExitRequest{kExitOk};
  } catch (const CLI::CallForAllHelp& e) {
    app.exit(e);
    throw ExitRequest{kExitOk};
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    throw ExitRequest{kExitOk};
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = e.get_name();
    throw UsageError(what + " (see --help)");
  }
}

// Parses a finite double in [lo, hi] (NaN and infinities are refused: CLI::Range lets NaN
// through). CLI11 puts the option's name in front of the message.
inline CLI::Validator FiniteRange(double lo, double hi) {
  std::ostringstream desc;
  desc << "FLOAT in [" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) return "'" + s + "' is not a number";
        if (!std::isfinite(v)) return "'" + s + "' is not finite";
        if (v < lo || v > hi) {
          std::ostringstream o;
          o << s << " is outside [" << lo << ", " << hi << "]";
          return o.str();
        }
        return std::string();
      },
      desc.str());
}

// Parses an integer in [lo, hi] written in decimal digits (no "1.5", no "1e3").
inline CLI::Validator IntRange(long long lo, long long hi) {
  std::ostringstream desc;
  desc << "INT in [" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || end != s.c_str() + s.size()) return "'" + s + "' is not a whole number";
        if (errno == ERANGE || v < lo || v > hi) {
          std::ostringstream o;
          o << s << " is outside [" << lo << ", " << hi << "]";
          return o.str();
        }
        return std::string();
      },
      desc.str());
}

// Refuses an empty value: `--netlist ""` is a mistake (an unset variable in a script), not a
// request for the default that leaving the option out gives.
inline CLI::Validator NonEmpty() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s.empty() ? "empty value (leave the option out to get its default)" : std::string();
      },
      "NON-EMPTY");
}

// Upper bounds for options that set work, so that a typo cannot start a run of years.
constexpr double kMaxSeconds = 7 * 24 * 3600.0;  // a time budget of at most a week
constexpr long long kMaxCount = 1000000000LL;    // iterations, samples, episodes

}  // namespace cli

// A run that ended without a feasible solution (no complete placement, out of memory on the
// device, a dead end), reported the same way by every binary (docs/conventions.md "Errors and
// exit codes"): exit 2 (kExitInfeasible); one line on stderr, `<binary>: infeasible: <reason>`;
// the run's document — the same shape as a feasible run's, with "feasible": false, the reason
// as "infeasible", and every cost named in `null_costs` (JSON pointers, "/best/proxy_cost")
// null — written as result.json (when the run has a directory) and printed by --json; in text
// mode stdout says what was written (no best.* file is).
struct InfeasibleRun {
  std::string reason;
  nlohmann::json document = nlohmann::json::object();
  std::vector<std::string> null_costs;  // JSON pointers to set null (created when missing)
  std::string out;                      // the run directory ("" = none): its files are listed
};

// A feasible run's document says so too: "feasible": true.
inline void MarkFeasible(nlohmann::json* document) { (*document)["feasible"] = true; }

// Completes `run.document`, hands its text (pretty, with a final newline) to `write_result`
// (may be empty: no result.json), prints as described above, and returns kExitInfeasible.
inline int ReportInfeasible(const char* binary, InfeasibleRun run, bool json,
                            const std::function<void(const std::string&)>& write_result) {
  nlohmann::json& d = run.document;
  d["feasible"] = false;
  d["infeasible"] = run.reason;
  for (const std::string& p : run.null_costs) d[nlohmann::json::json_pointer(p)] = nullptr;
  if (!run.out.empty()) d["out"] = run.out;
  if (write_result) write_result(d.dump(2) + "\n");
  std::fflush(stdout);
  std::fprintf(stderr, "%s: infeasible: %s\n", binary, run.reason.c_str());
  if (json) {
    std::printf("%s\n", d.dump().c_str());
  } else if (!run.out.empty()) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(run.out, ec))
      names.push_back(e.path().filename().string() + (e.is_directory(ec) ? "/" : ""));
    std::sort(names.begin(), names.end());
    std::string files;
    for (const std::string& f : names) files += (files.empty() ? "" : ", ") + f;
    std::printf("no feasible solution; wrote %s (%s)\n", run.out.c_str(), files.c_str());
  } else {
    std::printf("no feasible solution\n");
  }
  return kExitInfeasible;
}

}  // namespace placerl
