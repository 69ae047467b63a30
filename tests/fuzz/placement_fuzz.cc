// Fuzz target for the op → device placement reader (ParsePlacement, datasets/graphs/
// compute_graph.cc) and the simulation of the placement it accepts. Input: placement text,
// or "graph text\n%%\nplacement text" to place a fuzzed graph instead of the fixed one
// below; optionally a NUL byte and control bytes (device count, link model, capacities).
// Contract: the reader returns one device in [0, devices) per op or throws placerl::Error;
// PlacementToText of the result reads back identically; the simulation does not fail.
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// Seven ops: a fan-out, a join, a given-time op, parameters and temporaries.
const char kGraph[] = R"(op in elementwise out=1000
op a matmul flops=1e9 bytes=4e6 out=1e6 params=2e6 inputs=in
op b conv flops=5e8 bytes=1e6 out=5e5 temp=1e5 inputs=in
op c softmax flops=1e6 bytes=1e6 out=1e6 time=1e-5 inputs=a
op d.1/x norm flops=1e6 bytes=2e6 out=1e6 inputs=b,a
op e elementwise bytes=2e6 out=1e6 inputs=c,d.1/x
op loss softmax flops=10 bytes=10 out=4 inputs=e
)";

const placerl::graphs::ComputeGraph& Fixed() {
  static const placerl::graphs::ComputeGraph g = placerl::graphs::ParseComputeGraph(kGraph, "fixed");
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  const std::vector<std::string> sec = placerl::fuzz::Sections(in.text);
  placerl::graphs::ComputeGraph own;
  if (sec.size() >= 2) {
    try {
      own = placerl::graphs::ParseComputeGraph(sec[0], "fuzz.graph");
    } catch (const placerl::Error&) {
      return 0;
    }
    if (own.num_ops() > 512) return 0;
  }
  const placerl::graphs::ComputeGraph& g = sec.size() >= 2 ? own : Fixed();
  // Mostly small device counts; sometimes 0 or a negative count (every index then fails).
  const uint8_t b = in.Byte();
  const int nd = b >= 250 ? 250 - b : 1 + b % 8;
  std::vector<int> placement;
  try {
    placement = placerl::graphs::ParsePlacement(sec.back(), "fuzz.placement", g, nd);
  } catch (const placerl::Error&) {
    return 0;
  }
  if (placement.size() != static_cast<size_t>(g.num_ops())) placerl::fuzz::Finding("placement of the wrong size");
  for (int d : placement)
    if (d < 0 || d >= nd) placerl::fuzz::Finding("device index out of range");
  const std::string text = placerl::graphs::PlacementToText(g, placement);
  try {
    if (placerl::graphs::ParsePlacement(text, "roundtrip.placement", g, nd) != placement)
      placerl::fuzz::Finding("placement changed in a write -> read round trip");
  } catch (const placerl::Error& e) {
    placerl::fuzz::Finding(std::string("written placement does not read back: ") + e.what());
  }
  if (g.num_ops() > 0) placerl::fuzz::Simulate(g, placement, nd, &in);
  return 0;
}
