// placerl's C++ exceptions as Python exceptions, the same in every extension module of the
// package: InfeasibleAction, ConfigError and ParseError raise the classes of those names (also
// ValueErrors), any other placerl::Error raises placerl.Error (a RuntimeError), each with the
// same one-line message. placerl._core defines the classes; placerl._policy raises _core's.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

#include "datasets/util/errors.h"

namespace placerl::python {

// Registers this extension module's translator to the classes Error, ConfigError, ParseError
// and InfeasibleAction of `core` (placerl._core). Call once, when the module is initialised.
inline void RegisterErrorTranslator(const pybind11::module_& core) {
  // (The translator is a plain function: the classes live in statics of this module.)
  static pybind11::object error, config_error, parse_error, infeasible_action;
  error = core.attr("Error");
  config_error = core.attr("ConfigError");
  parse_error = core.attr("ParseError");
  infeasible_action = core.attr("InfeasibleAction");
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InfeasibleAction& e) {
      PyErr_SetString(infeasible_action.ptr(), e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(config_error.ptr(), e.what());
    } catch (const ParseError& e) {
      PyErr_SetString(parse_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
}

}  // namespace placerl::python
