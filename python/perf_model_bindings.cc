// placerl._core.perf_model(subcommand, options_json) -> (document_json, status): the documents
// `perf-model run / search / infer / simulate --json` print (cost_models/tpu/perf_json.h), for
// placerl.perf_model (python/placerl/perf_model.py), which passes the keyword arguments as one
// JSON object and returns the document as a dict. Bindings only: the options are read, checked
// and evaluated by the library (ConfigError / ParseError with the binary's messages); the GIL is
// released while it runs.
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "cost_models/tpu/perf_json.h"
#include "cost_models/tpu/perf_options.h"
#include "datasets/util/errors.h"

namespace py = pybind11;

namespace placerl {

namespace {

// The checks `perf-model` makes on its command line before the library reads the options, in the
// binary's order and with its messages (experiments/lib/perf_model_cli.cc): each option's range
// and choice validators (perf_options.h; a number that is not whole for a whole-number option
// is "'2.5' is not a whole number", as the text 2.5 on the command line), then simulate's
// exclusions of --machine (CLI11's message). The library makes the same range and choice checks
// again; only the order and those two messages are the command line's.
void CheckAsTheCommandLine(const std::string& subcommand, const nlohmann::json& options) {
  if (!options.is_object()) return;
  for (const auto& [key, value] : options.items()) {
    std::string option = key;
    for (char& c : option)
      if (c == '_') c = '-';
    if (value.is_number()) {
      const perf::OptionRange* range = nullptr;
      try {
        range = &perf::PerfOptionRange(subcommand, option);
      } catch (const std::logic_error&) {
        continue;  // no range: the library checks it
      }
      const double v = value.get<double>();
      if (range->integer && std::floor(v) != v) perf::CheckOptionText(*range, value.dump());
      perf::CheckOptionValue(*range, v, value.dump());
    } else if (value.is_string()) {
      try {
        perf::PerfOptionChoices(subcommand, option);
      } catch (const std::logic_error&) {
        continue;  // not a choice
      }
      perf::CheckOptionChoice(subcommand, option, value.get<std::string>());
    }
  }
  auto given = [&](const char* k) { return options.contains(k) && !options[k].is_null(); };
  if (subcommand == "simulate" && given("machine"))
    for (const char* k : {"devices", "preset", "device", "memory"})  // the binary's option order
      if (given(k)) throw ConfigError(std::string("--machine excludes --") + k + " (see --help)");
}

}  // namespace

void BindPerfModel(py::module_& m) {
  m.def(
      "perf_model",
      [](const std::string& subcommand, const std::string& options_json) {
        nlohmann::json options;
        try {
          options = nlohmann::json::parse(options_json);
        } catch (const nlohmann::json::exception& e) {
          throw ConfigError(subcommand + ": options are not a JSON object: " + e.what());
        }
        CheckAsTheCommandLine(subcommand, options);
        int status = 0;
        std::string doc;
        {
          py::gil_scoped_release release;
          doc = perf::PerfModelDocument(subcommand, options, &status).dump();
        }
        return py::make_tuple(doc, status);
      },
      py::arg("subcommand"), py::arg("options_json"),
      "The JSON document of `perf-model <subcommand> --json` for the options (a JSON object of the "
      "binary's option names with '_' for '-') and the binary's exit status (0, or 2: infeasible)");
}

}  // namespace placerl
