// Fuzz target for the group-file reader (ParseGroupText, datasets/chip/grouping.cc) and the
// clustered netlist built from what it read (BuildGroupedNetlist) on a small fixed flat
// netlist (ports, two hard macros with pins, five standard cells), then its proxy cost.
// Input: group-file text (up to the first NUL byte).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/netlist.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace {

// 14 nodes: 0 P0, 1 P1 (ports), 2 M0, 3 M0/a, 4 M0/b, 5 M1, 6 M1/a, 7 M1/b, 8..12 S0..S4, 13 P2.
const char kFlat[] = R"(
node { name: "P0" input: "S0" input: "M0/a" attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 0 } } attr { key: "y" value { f: 50 } } }
node { name: "P1" attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 100 } } attr { key: "y" value { f: 50 } } }
node { name: "M0" attr { key: "type" value { placeholder: "macro" } } attr { key: "width" value { f: 20 } } attr { key: "height" value { f: 20 } } attr { key: "x" value { f: 30 } } attr { key: "y" value { f: 30 } } }
node { name: "M0/a" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M0" } } attr { key: "x_offset" value { f: -10 } } }
node { name: "M0/b" input: "S1" input: "S2" input: "S4" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M0" } } attr { key: "x_offset" value { f: 10 } } }
node { name: "M1" attr { key: "type" value { placeholder: "macro" } } attr { key: "width" value { f: 20 } } attr { key: "height" value { f: 20 } } attr { key: "x" value { f: 70 } } attr { key: "y" value { f: 70 } } }
node { name: "M1/a" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M1" } } attr { key: "x_offset" value { f: -10 } } }
node { name: "M1/b" input: "P1" attr { key: "type" value { placeholder: "macro_pin" } } attr { key: "macro_name" value { placeholder: "M1" } } attr { key: "weight" value { f: 3 } } }
node { name: "S0" input: "S1" input: "S2" attr { key: "type" value { placeholder: "stdcell" } } attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 10 } } attr { key: "y" value { f: 10 } } }
node { name: "S1" input: "S3" input: "S3" input: "M1/a" attr { key: "type" value { placeholder: "stdcell" } } attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 20 } } attr { key: "y" value { f: 40 } } }
node { name: "S2" input: "S0" attr { key: "type" value { placeholder: "stdcell" } } attr { key: "width" value { f: 0 } } attr { key: "height" value { f: 0 } } attr { key: "x" value { f: 80 } } attr { key: "y" value { f: 20 } } }
node { name: "S3" input: "S0" input: "S3" attr { key: "type" value { placeholder: "stdcell" } } attr { key: "width" value { f: 4 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 90 } } attr { key: "y" value { f: 30 } } }
node { name: "S4" input: "S2" attr { key: "type" value { placeholder: "stdcell" } } attr { key: "width" value { f: 2 } } attr { key: "height" value { f: 1 } } attr { key: "x" value { f: 50 } } attr { key: "y" value { f: 50 } } }
node { name: "P2" input: "S0" input: "S1" input: "S2" input: "S3" input: "S4" attr { key: "type" value { placeholder: "port" } } attr { key: "x" value { f: 50 } } attr { key: "y" value { f: 0 } } }
)";

const placerl::chip::Netlist& Flat() {
  static const placerl::chip::Netlist nl = placerl::chip::ParseNetlistText(kFlat, "groups_fuzz_netlist");
  return nl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placerl::ScopedWarningSilence quiet;  // warnings are expected on fuzzed input; printing them slows the run
  using namespace placerl::chip;
  const size_t n = strnlen(reinterpret_cast<const char*>(data), size);
  const std::string text(reinterpret_cast<const char*>(data), n);
  std::vector<int32_t> groups;
  try {
    groups = ParseGroupText(text, "fuzz.groups", Flat().num_nodes());
  } catch (const placerl::Error&) {
    return 0;
  }
  GroupingOptions opt;
  opt.canvas_width = 100;
  opt.cols = 10;
  opt.max_fanout = 4;
  try {
    const Netlist nl = BuildGroupedNetlist(Flat(), groups, opt);
    PlacementSettings s;
    s.canvas_width = s.canvas_height = 100;
    s.cols = s.rows = 10;
    const CostBreakdown c = EvaluateProxyCost(nl, ResolveDefaults(s, nl));
    if (std::isnan(c.proxy_cost) || std::isnan(c.hpwl)) std::abort();
    WithoutOffCanvasNets(nl, 100, 100);
  } catch (const placerl::Error&) {
    // Within the contract: a reasoned refusal.
  }
  return 0;
}
