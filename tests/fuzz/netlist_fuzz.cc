// Fuzz target for the Circuit Training netlist reader (datasets/chip/netlist_reader.cc)
// and the proxy cost on what it accepts. Input: netlist text, optionally followed by a NUL
// byte and control bytes for the proxy cost (fuzz_proxy_cost.h). Contract: the reader
// either returns a finalized netlist or throws placerl::Error; no crash, hang, leak or
// out-of-bounds access; the proxy cost never yields NaN.
#include <cstdint>
#include <cstring>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "tests/fuzz/fuzz_proxy_cost.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placerl::ScopedWarningSilence quiet;  // warnings are expected on fuzzed input; printing them slows the run
  const void* nul = std::memchr(data, 0, size);
  const size_t text_size = nul ? static_cast<const uint8_t*>(nul) - data : size;
  const std::string text(reinterpret_cast<const char*>(data), text_size);
  placerl::chip::Netlist nl;
  try {
    nl = placerl::chip::ParseNetlistText(text, "fuzz.pb.txt");
  } catch (const placerl::Error&) {
    return 0;
  }
  const size_t ctl = nul ? text_size + 1 : size;
  placerl::fuzz::FuzzProxyCost(nl, {}, {data + ctl, size - ctl});
  return 0;
}
