// The checked options of `perf-model`'s subcommands, written once: their ranges and choices. The
// binary's validators (experiments/lib/perf_model_cli.cc) and the options objects of
// PerfModelDocument (Python's placerl.perf_model) both check through these functions, so both
// refuse the same value with the same one-line message, e.g.
// `search: --top: 0 is outside [1, 1000000]` (a ConfigError; the binary prints it after
// `perf-model: error: `). Options are named as the binary spells them (without `--`); the
// options objects' keys are the same names with '_' for '-'.
#pragma once

#include <string>
#include <vector>

namespace placerl::perf {

struct OptionRange {
  const char* subcommand;
  const char* option;  // the binary's long name without "--"
  bool integer;        // whole numbers (decimal digits on the command line)
  double lo, hi;
  // The --help text of the value: "INT in [lo, hi]" or "FLOAT in [lo, hi]".
  std::string Description() const;
};

// The range of `subcommand`'s `option` (an internal error when there is none).
const OptionRange& PerfOptionRange(const std::string& subcommand, const std::string& option);

// The command-line value `text` of an option with range `r`, parsed and checked: a finite number
// (a whole number in decimal digits for integer options) in [lo, hi]. Throws ConfigError
// `<subcommand>: --<option>: <why>` otherwise.
double CheckOptionText(const OptionRange& r, const std::string& text);
// A value already parsed (an options object's number, `as_written` its JSON text): throws the
// same ConfigError as CheckOptionText when it is outside [lo, hi] or not finite.
void CheckOptionValue(const OptionRange& r, double value, const std::string& as_written);

// The values an enumerated option takes (layout, preset, lopo-prior).
const std::vector<std::string>& PerfOptionChoices(const std::string& subcommand, const std::string& option);
// "{a,b,c}": the --help text of the choices.
std::string ChoicesDescription(const std::vector<std::string>& choices);
// Throws ConfigError `<subcommand>: --<option>: <value> not in {a,b,c}` unless `value` is one of them.
void CheckOptionChoice(const std::string& subcommand, const std::string& option, const std::string& value);

// The bounds of work-setting options (the binaries' cli::kMaxSeconds and cli::kMaxCount).
constexpr double kPerfMaxSeconds = 7 * 24 * 3600.0;
constexpr long long kPerfMaxCount = 1000000000LL;

}  // namespace placerl::perf
