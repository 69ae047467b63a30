// The checked options of perf-model (cost_models/tpu/perf_options.h): one range and one message
// for the binary's command line and for the options objects of PerfModelDocument (Python).
#include "cost_models/tpu/perf_options.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "cost_models/tpu/perf_json.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

std::string TextError(const char* sub, const char* option, const std::string& text) {
  try {
    CheckOptionText(PerfOptionRange(sub, option), text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string DocumentError(const std::string& sub, const nlohmann::json& options) {
  try {
    PerfModelDocument(sub, options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PerfOptions, CommandLineTextIsCheckedWithTheOptionsName) {
  EXPECT_EQ(TextError("search", "top", "0"), "search: --top: 0 is outside [1, 1000000]");
  EXPECT_EQ(TextError("search", "top", "1.5"), "search: --top: '1.5' is not a whole number");
  EXPECT_EQ(TextError("search", "top", "1e3"), "search: --top: '1e3' is not a whole number");
  EXPECT_EQ(TextError("search", "top", "99999999999999999999"),
            "search: --top: 99999999999999999999 is outside [1, 1000000]");
  EXPECT_EQ(TextError("simulate", "memory", "nan"), "simulate: --memory: 'nan' is not finite");
  EXPECT_EQ(TextError("simulate", "memory", "0"), "simulate: --memory: 0 is outside [1, 1e+18]");
  EXPECT_EQ(TextError("infer", "pue", "x"), "infer: --pue: 'x' is not a number");
  EXPECT_EQ(TextError("search", "top", "1000000"), "");
  EXPECT_EQ(CheckOptionText(PerfOptionRange("infer", "grid"), "0.5"), 0.5);
}

TEST(PerfOptions, TheOptionsObjectGivesTheCommandLinesMessage) {
  // The same value refused with the same text, whether typed or passed as a JSON number.
  EXPECT_EQ(DocumentError("search", {{"top", 0}}), TextError("search", "top", "0"));
  EXPECT_EQ(DocumentError("infer", {{"idle_capacity", 11}}), TextError("infer", "idle-capacity", "11"));
  EXPECT_EQ(DocumentError("infer", {{"generate", -1}}), TextError("infer", "generate", "-1"));
  EXPECT_EQ(DocumentError("simulate", {{"ring_latency", 2}}), TextError("simulate", "ring-latency", "2"));
  EXPECT_EQ(DocumentError("search", {{"top", 18446744073709551615ULL}}),
            "search: --top: 18446744073709551615 is outside [1, 1000000]");
  EXPECT_EQ(DocumentError("infer", {{"layout", "zz"}}), "infer: --layout: zz not in {ws,wg-x,wg-xy,wg-xyz}");
  EXPECT_EQ(DocumentError("simulate", {{"preset", "x"}}), "simulate: --preset: x not in {baechi,placeto}");
  EXPECT_EQ(DocumentError("infer", {{"batch", 2.5}}), "infer: --batch: expected a whole number, got 2.5");
}

TEST(PerfOptions, HelpTextsAndLookups) {
  EXPECT_EQ(PerfOptionRange("search", "top").Description(), "INT in [1, 1000000]");
  EXPECT_EQ(PerfOptionRange("bench", "seconds").Description(), "FLOAT in [0.001, 604800]");
  EXPECT_EQ(PerfOptionRange("infer", "batch").Description(), "INT in [1, 1000000000]");
  EXPECT_EQ(ChoicesDescription(PerfOptionChoices("validate", "lopo-prior")), "{global,vendor,era}");
  EXPECT_THROW(PerfOptionRange("search", "no-such-option"), std::logic_error);
  EXPECT_NO_THROW(CheckOptionChoice("infer", "layout", "wg-xyz"));
}

}  // namespace
}  // namespace placerl::perf
