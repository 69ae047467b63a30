// What every placerl binary does the same way: catch placerl::Error (and anything else),
// print one line `<binary>: error: <what>` to stderr and return a non-zero exit code.
#pragma once

#include <cstdio>
#include <exception>
#include <functional>

#include "datasets/util/errors.h"

namespace placerl {

inline int RunMain(const char* binary, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", binary, e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", binary);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", binary, e.what());
    return 1;
  }
}

}  // namespace placerl
