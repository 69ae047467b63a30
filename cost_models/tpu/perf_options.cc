#include "cost_models/tpu/perf_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "datasets/util/errors.h"

namespace placerl::perf {

namespace {

const OptionRange kRanges[] = {
    {"search", "top", true, 1, 1000000},
    {"infer", "batch", true, 1, kPerfMaxCount},
    {"infer", "prompt", true, 1, double(1LL << 30)},
    {"infer", "generate", true, 0, double(1LL << 30)},
    {"infer", "idle-capacity", false, 0, 10},
    {"infer", "power-w", false, 1, 10000},
    {"infer", "pue", false, 1, 3},
    {"infer", "grid", false, 0, 2},
    {"bench", "seconds", false, 0.001, kPerfMaxSeconds},
    {"failures", "max-failed", true, 0, 64},
    {"diloco", "dcn-gbps", false, 1e-6, 1e7},
    {"diloco", "overlap-steps", false, 0, 1e9},
    {"diloco", "straggler", false, 1, 100},
    {"diloco", "failed-islands", false, 0, 1e6},
    {"diloco", "restart-s", false, 0, 1e7},
    {"energy", "chips", true, 1, 100000000},
    {"energy", "days", false, 1e-6, 36500},
    {"energy", "hours", false, 1e-6, 876000},
    {"energy", "tokens", false, 1, 1e18},
    {"energy", "pue", false, 1, 3},
    {"energy", "grid", false, 0, 2},
    {"energy", "net-grid", false, 0, 2},
    {"energy", "power-w", false, 1, 10000},
    {"energy", "utilisation", false, 0, 1},
    {"energy", "idle-capacity", false, 0, 10},
    {"simulate", "devices", true, 1, 4096},
    {"simulate", "memory", false, 1, 1e18},
    {"simulate", "bench", false, 0, kPerfMaxSeconds},
    {"simulate", "replicas", true, 1, double(1 << 20)},
    {"simulate", "ring-bw", false, 1, 1e15},
    {"simulate", "ring-latency", false, 0, 1},
    {"calibrate-host", "threads", true, 1, 1024},
    {"calibrate-host", "seconds", false, 0.001, 3600},
};

struct Choices {
  const char* subcommand;
  const char* option;
  std::vector<std::string> values;
};
const std::vector<Choices>& AllChoices() {
  static const std::vector<Choices> kChoices = {
      {"infer", "layout", {"ws", "wg-x", "wg-xy", "wg-xyz"}},
      {"simulate", "preset", {"baechi", "placeto"}},
      {"validate", "lopo-prior", {"global", "vendor", "era"}},
  };
  return kChoices;
}

// The bounds as the messages and the help write them (integers in full, reals as %g).
std::string Bounds(const OptionRange& r) {
  std::ostringstream o;
  if (r.integer)
    o << "[" << static_cast<long long>(r.lo) << ", " << static_cast<long long>(r.hi) << "]";
  else
    o << "[" << r.lo << ", " << r.hi << "]";
  return o.str();
}

[[noreturn]] void Refuse(const OptionRange& r, const std::string& why) {
  throw ConfigError(std::string(r.subcommand) + ": --" + r.option + ": " + why);
}

}  // namespace

std::string OptionRange::Description() const { return std::string(integer ? "INT in " : "FLOAT in ") + Bounds(*this); }

const OptionRange& PerfOptionRange(const std::string& subcommand, const std::string& option) {
  for (const OptionRange& r : kRanges)
    if (subcommand == r.subcommand && option == r.option) return r;
  throw std::logic_error("perf-model: no range for " + subcommand + " --" + option);
}

double CheckOptionText(const OptionRange& r, const std::string& text) {
  char* end = nullptr;
  if (r.integer) {
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size()) Refuse(r, "'" + text + "' is not a whole number");
    if (errno == ERANGE || v < r.lo || v > r.hi) Refuse(r, text + " is outside " + Bounds(r));
    return static_cast<double>(v);
  }
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) Refuse(r, "'" + text + "' is not a number");
  if (!std::isfinite(v)) Refuse(r, "'" + text + "' is not finite");
  CheckOptionValue(r, v, text);
  return v;
}

void CheckOptionValue(const OptionRange& r, double value, const std::string& as_written) {
  if (!std::isfinite(value)) Refuse(r, "'" + as_written + "' is not finite");
  if (value < r.lo || value > r.hi) Refuse(r, as_written + " is outside " + Bounds(r));
}

const std::vector<std::string>& PerfOptionChoices(const std::string& subcommand, const std::string& option) {
  for (const Choices& c : AllChoices())
    if (subcommand == c.subcommand && option == c.option) return c.values;
  throw std::logic_error("perf-model: no choices for " + subcommand + " --" + option);
}

std::string ChoicesDescription(const std::vector<std::string>& choices) {
  std::string s = "{";
  for (size_t i = 0; i < choices.size(); ++i) s += (i ? "," : "") + choices[i];
  return s + "}";
}

void CheckOptionChoice(const std::string& subcommand, const std::string& option, const std::string& value) {
  const std::vector<std::string>& values = PerfOptionChoices(subcommand, option);
  for (const std::string& v : values)
    if (v == value) return;
  throw ConfigError(subcommand + ": --" + option + ": " + value + " not in " + ChoicesDescription(values));
}

}  // namespace placerl::perf
