// placerl._core.perf_model(subcommand, options_json) -> (document_json, status): the documents
// `perf-model run / search / infer / simulate --json` print (cost_models/tpu/perf_json.h), for
// placerl.perf_model (python/placerl/perf_model.py), which passes the keyword arguments as one
// JSON object and returns the document as a dict. Bindings only: the options are read, checked
// and evaluated by the library (ConfigError / ParseError with the binary's messages); the GIL is
// released while it runs.
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cost_models/tpu/perf_json.h"
#include "datasets/util/errors.h"

namespace py = pybind11;

namespace placerl {

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
