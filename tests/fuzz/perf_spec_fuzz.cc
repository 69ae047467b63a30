// Fuzz target for the string forms of the perf-model inputs (cost_models/tpu/spec.cc):
// ParseModelSpec ("transformer(k=v,...)", "moe(...)"), ParseMeshSpec ("chip:AxB,slices=N"),
// ParsePlanSpec ("k=v,..."). Input: three lines — model, mesh, plan — up to the first NUL
// (control bytes after it). Each reader runs on its line alone; strings ending in ".pbtxt"
// are skipped (they name files: perf_pbtxt_fuzz covers that reader). Contract: each reader
// returns or throws placerl::Error; ModelToString / MeshToString / PlanToString read back to
// the same message; the evaluators on what was read behave (fuzz_perf.h).
#include <google/protobuf/util/message_differencer.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/spec.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_perf.h"

namespace {

bool EndsWithPbtxt(const std::string& s) { return s.size() >= 6 && s.compare(s.size() - 6, 6, ".pbtxt") == 0; }

std::string Line(const std::string& text, int k) {
  size_t pos = 0;
  for (int i = 0; i < k; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  return text.substr(pos, text.find('\n', pos) - pos);
}

template <class Msg, class Parse>
bool Reads(const std::string& s, Parse parse, Msg* out) {
  if (EndsWithPbtxt(s)) return false;
  try {
    *out = parse(s);
    return true;
  } catch (const placerl::Error&) {
    return false;
  }
}

template <class Msg, class Parse>
void RoundTrip(const Msg& m, const std::string& text, Parse parse, const char* what) {
  Msg back;
  try {
    back = parse(text);
  } catch (const placerl::Error& e) {
    placerl::fuzz::Finding(std::string(what) + " written as \"" + text + "\" does not read back: " + e.what());
  }
  google::protobuf::util::MessageDifferencer diff;
  // Doubles are written with 6 significant digits.
  google::protobuf::util::DefaultFieldComparator cmp;
  cmp.set_float_comparison(google::protobuf::util::DefaultFieldComparator::APPROXIMATE);
  cmp.SetDefaultFractionAndMargin(1e-5, 0);
  diff.set_field_comparator(&cmp);
  if (!diff.Compare(m, back))
    placerl::fuzz::Finding(std::string(what) + " changed in a write -> read round trip: \"" + text + "\"");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::perf;
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  TransformerModel model;
  Mesh mesh;
  Plan plan;
  const bool has_model = Reads(Line(in.text, 0), ParseModelSpec, &model);
  const bool has_mesh = Reads(Line(in.text, 1), ParseMeshSpec, &mesh);
  const bool has_plan = Reads(Line(in.text, 2), ParsePlanSpec, &plan);
  if (has_model) RoundTrip(model, ModelToString(model), ParseModelSpec, "model");
  if (has_mesh) {
    Mesh m = mesh;  // slices 0 and 1 (and, today, any value < 1) all mean one slice
    if (m.slices() < 1) m.set_slices(1);
    RoundTrip(m, MeshToString(m), [](const std::string& s) {
      Mesh back = ParseMeshSpec(s);
      if (back.slices() < 1) back.set_slices(1);
      return back;
    }, "mesh");
  }
  if (has_plan) RoundTrip(plan, PlanToString(plan), ParsePlanSpec, "plan");
  if (has_mesh && has_plan) placerl::fuzz::RunPerf(has_model ? &model : nullptr, mesh, plan, DefaultCatalog(), &in);
  return 0;
}
