// Fuzz target for the ONNX importer (ImportOnnxBytes, datasets/graphs/onnx_import.cc) — the
// protobuf parse, libonnx's shape inference behind our guards, the shape-arithmetic folding,
// the FLOP/byte rules and AddTrainingOps. Input: the bytes of a model (seed it with real
// models, e.g. Debian's libonnx-testdata: `find /usr/share -name model.onnx`). Contract: a
// graph or placerl::Error — any other exception or a crash is a finding; an accepted graph is
// structurally sound (CheckGraph), with finite non-negative sizes and every co-location group
// dense.
#include <cmath>
#include <cstdint>
#include <string>

#include "datasets/graphs/onnx_import.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  placerl::graphs::OnnxImportOptions options;
  options.batch = 2;
  placerl::graphs::ComputeGraph g;
  try {
    g = placerl::graphs::ImportOnnxBytes(bytes, "fuzz.onnx", options);
  } catch (const placerl::Error&) {
    return 0;
  }
  placerl::fuzz::CheckGraph(g);
  for (int i = 0; i < g.num_ops(); ++i) {
    for (double v : {g.flops[i], g.bytes[i], g.output_bytes[i], g.param_bytes[i], g.temp_bytes[i]})
      if (!std::isfinite(v) || v < 0) placerl::fuzz::Finding("op size negative or not finite");
    if (g.coloc_group[i] < 0 || g.coloc_group[i] >= g.num_coloc_groups) placerl::fuzz::Finding("co-location id out of range");
  }
  return 0;
}
