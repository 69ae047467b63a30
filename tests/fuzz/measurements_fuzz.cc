// Fuzz target for the validation measurements reader (LoadMeasurements: ParseTextProto of a
// MeasurementSet, cost_models/tpu/validation.cc) and `perf-model validate` on what it reads
// (Validate against the default catalogue, ReportMarkdown). Input: measurements text up to
// the first NUL. Bounded: at most 8 rows, and graph rows only with a built-in graph spec of
// bounded size (fuzz_graph.h; any other string would be read as a file path). The fit
// (FitEfficiency, thousands of Validate calls) is not run. Contract: the reader returns or
// throws placerl::Error; Validate records per-row errors and never throws or crashes.
#include <cstdint>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::perf;
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  MeasurementSet set;
  try {
    ParseTextProto(in.text, "fuzz_measurements.pbtxt", &set);
  } catch (const placerl::Error&) {
    return 0;
  }
  if (set.row_size() > 8) return 0;
  for (const Measurement& m : set.row())
    if (!m.run().graph().empty() && !placerl::fuzz::BoundedGraphSpec(m.run().graph())) return 0;
  const ValidationReport rep = Validate(set, DefaultCatalog());
  if (rep.rows.size() != static_cast<size_t>(set.row_size())) placerl::fuzz::Finding("Validate lost rows");
  if (rep.evaluated > set.row_size()) placerl::fuzz::Finding("more rows evaluated than given");
  const std::string md = ReportMarkdown(rep, DefaultCatalog(), &rep);
  if (md.empty()) placerl::fuzz::Finding("empty report");
  return 0;
}
