// Fuzz target for the `.pbtxt` forms of the perf-model inputs (ParseModelSpec / ParseMeshSpec
// / ParsePlanSpec given a file: ParseTextProto, cost_models/tpu/catalog.cc, then
// NormalizedModel for the model). Input: "model text\n%%\nmesh text\n%%\nplan text" up to
// the first NUL (control bytes after it); a missing section is an empty file. Contract: each
// reader returns or throws placerl::Error; the evaluators behave (fuzz_perf.h).
#include <cstdint>
#include <string>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_perf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::perf;
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  std::vector<std::string> sec = placerl::fuzz::Sections(in.text);
  sec.resize(3);
  TransformerModel model;
  Mesh mesh;
  Plan plan;
  bool has_model = true, has_mesh = true, has_plan = true;
  try {
    ParseTextProto(sec[0], "model.pbtxt", &model);
    model = NormalizedModel(model);
  } catch (const placerl::Error&) {
    has_model = false;
  }
  try {
    ParseTextProto(sec[1], "mesh.pbtxt", &mesh);
  } catch (const placerl::Error&) {
    has_mesh = false;
  }
  try {
    ParseTextProto(sec[2], "plan.pbtxt", &plan);
  } catch (const placerl::Error&) {
    has_plan = false;
  }
  if (has_mesh && has_plan) placerl::fuzz::RunPerf(has_model ? &model : nullptr, mesh, plan, DefaultCatalog(), &in);
  return 0;
}
