// Fuzz target for the compute-graph text reader (ParseComputeGraph, datasets/graphs/
// compute_graph.cc), its writer, and the placed-graph simulator on what it reads. Input:
// graph text, optionally followed by a NUL byte and control bytes (device count, placement,
// link model, capacities; fuzz_graph.h). Contract: the reader returns a graph or throws
// placerl::Error; an accepted graph is structurally sound (CheckGraph), survives a write →
// read round trip unchanged, and simulates (graphs up to 512 ops) without NaN.
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_input.h"

using placerl::graphs::ComputeGraph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  ComputeGraph g;
  try {
    g = placerl::graphs::ParseComputeGraph(in.text, "fuzz.graph");
  } catch (const placerl::Error&) {
    return 0;
  }
  placerl::fuzz::CheckGraph(g);
  const std::string text = placerl::graphs::ComputeGraphToText(g);
  ComputeGraph back;
  try {
    back = placerl::graphs::ParseComputeGraph(text, "roundtrip.graph");
  } catch (const placerl::Error& e) {
    placerl::fuzz::Finding(std::string("written graph does not read back: ") + e.what());
  }
  if (back.names != g.names || back.kinds != g.kinds || back.flops != g.flops || back.bytes != g.bytes ||
      back.output_bytes != g.output_bytes || back.param_bytes != g.param_bytes ||
      back.temp_bytes != g.temp_bytes || back.time_s != g.time_s || back.in_sources != g.in_sources ||
      back.in_offsets != g.in_offsets || back.out_targets != g.out_targets || back.topo_order != g.topo_order ||
      back.colocation != g.colocation || back.coloc_group != g.coloc_group)
    placerl::fuzz::Finding("graph changed in a write -> read round trip");
  if (g.num_ops() == 0 || g.num_ops() > 512) return 0;
  const int nd = 1 + in.Byte() % 4;
  std::vector<int> placement(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) placement[i] = in.ctl_size > 0 ? in.Byte() % nd : i % nd;
  placerl::fuzz::Simulate(g, placement, nd, &in);
  return 0;
}
