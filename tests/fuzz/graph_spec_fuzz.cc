// Fuzz target for the graph-spec strings (GraphFromSpec, datasets/graphs/graph_spec.cc:
// `layered(...)`, `chain(...)`, `resnet(...)`) and the graph run on a catalogue mesh that
// `perf-model run --graph` does with the graph (EvaluateGraphOnMesh). Input: the spec up
// to the first NUL; control bytes pick the replica layout / pipeline. Strings that are not
// a built-in family are skipped (GraphFromSpec would read them as a file path), as are
// sizes beyond ops=3000 / fan_in=64 (fuzz_graph.h: legal, but too slow to fuzz).
// Contract: a graph or placerl::Error; the graph is sound; the run gives no NaN.
#include <cstdint>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/graph_training.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  if (in.text.size() > 256 || !placerl::fuzz::BoundedGraphSpec(in.text)) return 0;
  placerl::graphs::NamedGraph ng;
  try {
    ng = placerl::graphs::GraphFromSpec(in.text);
  } catch (const placerl::Error&) {
    return 0;
  }
  placerl::fuzz::CheckGraph(ng.graph);
  if (!(ng.examples >= 0)) placerl::fuzz::Finding("negative or NaN examples");
  for (int i = 0; i < ng.graph.num_ops(); ++i)
    for (double v : {ng.graph.flops[i], ng.graph.bytes[i], ng.graph.output_bytes[i], ng.graph.param_bytes[i],
                     ng.graph.temp_bytes[i]})
      if (!(v >= 0) || !std::isfinite(v)) placerl::fuzz::Finding("op size negative or non-finite");
  // Run on 4 TPU v4 chips: 4 replicas of 1 device, 2 of 2 (ops alternating), or a 2-stage pipeline.
  const uint8_t b = in.Byte();
  placerl::perf::Mesh mesh;
  mesh.set_chip("tpu_v4");
  mesh.add_dims(2);
  mesh.add_dims(2);
  placerl::perf::GraphRunPlan plan;
  plan.examples_per_replica = ng.examples;
  plan.shard_optimizer = (b & 8) != 0;
  plan.grad_reduce_after_backward = (b & 16) == 0;
  if ((b & 3) == 1) {
    plan.devices_per_replica = 2;
    for (int i = 0; i < ng.graph.num_ops(); ++i) plan.placement.push_back(i % 2);
  } else if ((b & 3) == 2) {
    plan.pipeline = 2;
    plan.microbatches = 1 + (b >> 5);
  }
  try {
    const placerl::perf::GraphRunResult r =
        placerl::perf::EvaluateGraphOnMesh(ng.graph, mesh, placerl::perf::DefaultCatalog(), plan);
    placerl::fuzz::NotNaN(r.step_s, "step_s");
    placerl::fuzz::NotNaN(r.examples_per_s, "examples_per_s");
    placerl::fuzz::NotNaN(r.hbm_per_device, "hbm_per_device");
    placerl::fuzz::NotNaN(r.mfu, "mfu");
  } catch (const placerl::Error&) {
  }
  return 0;
}
