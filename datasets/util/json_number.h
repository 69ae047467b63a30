// A result that may be missing in a JSON document: a non-finite double (NaN or ±inf: not
// measured, no complete placement, no update) is written as null, which JSON has, instead of a
// number JSON does not have.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace placerl {

inline nlohmann::json FiniteOrNull(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace placerl
