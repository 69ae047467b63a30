// Shared by the fuzz targets of the graph and perf-model readers: how one fuzz input is cut
// into reader text and control bytes, and the checks whose failure is a finding. A finding
// prints one line to stderr and aborts (libFuzzer then saves the input as crash-*).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace placerl::fuzz {

// Reader text = the input up to the first NUL byte; the bytes after it steer the
// downstream checks (0 once they run out).
struct Input {
  std::string text;
  const uint8_t* ctl;
  size_t ctl_size;
  uint8_t Byte() {
    if (ctl_size == 0) return 0;
    --ctl_size;
    return *ctl++;
  }
};

inline Input Split(const uint8_t* data, size_t size) {
  const void* nul = std::memchr(data, 0, size);
  const size_t n = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - data) : size;
  const size_t skip = nul ? n + 1 : size;
  return {std::string(reinterpret_cast<const char*>(data), n), data + skip, size - skip};
}

// Splits at lines that are exactly "%%" (several files in one input).
inline std::vector<std::string> Sections(const std::string& text) {
  std::vector<std::string> out(1);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    if (line == "%%") {
      out.emplace_back();
    } else {
      out.back().append(line);
      if (end < text.size()) out.back().push_back('\n');
    }
    pos = end + 1;
  }
  return out;
}

[[noreturn]] inline void Finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::abort();
}

// Results of the evaluators must not be NaN (inf is allowed: e.g. a zero bandwidth).
inline void NotNaN(double v, const char* what) {
  if (std::isnan(v)) Finding(std::string(what) + " is NaN");
}

}  // namespace placerl::fuzz
