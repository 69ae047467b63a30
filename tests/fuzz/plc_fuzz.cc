// Fuzz target for the .plc reader (ParsePlcText + ApplyPlc, datasets/chip/plc.cc) and the
// proxy cost with the settings it read. The rows are applied to a small fixed netlist
// (ports, hard macros with pins, a soft macro, standard cells). Input: .plc text,
// optionally followed by a NUL byte and proxy-cost control bytes (fuzz_proxy_cost.h).
#include <cstdint>
#include <cstring>
#include <string>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "tests/fuzz/fuzz_proxy_cost.h"

namespace {

// Node indices: 0 p0 (port), 1 p1 (port), 2 m0, 3 m1 (hard macros), 4..7 their pins,
// 8 Grp_0 (soft macro), 9 Grp_0/P (its pin), 10 c0, 11 c1 (standard cells).
const char kNetlist[] = R"(
node { name: "p0" input: "m0/A" input: "c0" attr { key: "type" value { placeholder: "PORT" } }
  attr { key: "x" value { f: 0 } } attr { key: "y" value { f: 10 } } attr { key: "side" value { placeholder: "LEFT" } } }
node { name: "p1" attr { key: "type" value { placeholder: "PORT" } } attr { key: "x" value { f: 100 } } attr { key: "y" value { f: 50 } } }
node { name: "m0" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 20 } }
  attr { key: "height" value { f: 30 } } attr { key: "x" value { f: 20 } } attr { key: "y" value { f: 20 } } }
node { name: "m1" attr { key: "type" value { placeholder: "MACRO" } } attr { key: "width" value { f: 25 } }
  attr { key: "height" value { f: 10 } } attr { key: "x" value { f: 70 } } attr { key: "y" value { f: 70 } } attr { key: "orientation" value { placeholder: "FS" } } }
node { name: "m0/A" input: "m1/A" input: "Grp_0/P" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m0" } }
  attr { key: "x_offset" value { f: -5 } } attr { key: "y_offset" value { f: 7 } } }
node { name: "m0/B" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m0" } } attr { key: "x_offset" value { f: 9 } } }
node { name: "m1/A" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m1" } } }
node { name: "m1/B" input: "m0/B" input: "p1" input: "c1" attr { key: "type" value { placeholder: "MACRO_PIN" } } attr { key: "macro_name" value { placeholder: "m1" } }
  attr { key: "weight" value { f: 2 } } attr { key: "y_offset" value { f: -4 } } }
node { name: "Grp_0" attr { key: "type" value { placeholder: "macro" } } attr { key: "width" value { f: 15 } } attr { key: "height" value { f: 15 } } }
node { name: "Grp_0/P" input: "c1" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "Grp_0" } } }
node { name: "c0" input: "c1" attr { key: "type" value { placeholder: "STDCELL" } } attr { key: "width" value { f: 1 } } attr { key: "height" value { f: 2 } } }
node { name: "c1" attr { key: "type" value { placeholder: "STDCELL" } } attr { key: "width" value { f: 1 } } attr { key: "height" value { f: 2 } } }
)";

const placerl::chip::Netlist& Base() {
  static const placerl::chip::Netlist nl = placerl::chip::ParseNetlistText(kNetlist, "plc_fuzz_netlist");
  return nl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placerl::ScopedWarningSilence quiet;  // warnings are expected on fuzzed input; printing them slows the run
  const void* nul = std::memchr(data, 0, size);
  const size_t text_size = nul ? static_cast<const uint8_t*>(nul) - data : size;
  const std::string text(reinterpret_cast<const char*>(data), text_size);
  placerl::chip::Netlist nl = Base();
  placerl::chip::PlcFile plc;
  try {
    plc = placerl::chip::ParsePlcText(text, "fuzz.plc");
    placerl::chip::ApplyPlc(plc, &nl, "fuzz.plc");
  } catch (const placerl::Error&) {
    return 0;
  }
  // The proxy cost is O(cells · smoothing range) by design (up to 4096² cells): keep the
  // grid small enough for ~1 ms per input; large grids are not what this target is about.
  const auto& s = plc.settings;
  if (static_cast<int64_t>(s.cols) * s.rows > 128 * 128 || s.smooth_range > 64) return 0;
  const size_t ctl = nul ? text_size + 1 : size;
  placerl::fuzz::FuzzProxyCost(nl, s, {data + ctl, size - ctl});
  return 0;
}
