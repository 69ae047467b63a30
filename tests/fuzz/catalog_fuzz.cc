// Fuzz target for the hardware catalogue reader (ParseCatalog, cost_models/tpu/catalog.cc:
// protobuf text + validation of every chip and efficiency block) and the evaluators on
// each chip it accepts. Input: catalogue text up to the first NUL (control bytes after it).
// Per chip (first 4): peaks and efficiencies looked up, then a small fixed Transformer and a
// chain graph evaluated data parallel on one chip (or two DCN slices), as `perf-model run`
// would with `--catalog`. Contract: ParseCatalog returns or throws placerl::Error; the
// evaluators on an accepted catalogue return or throw placerl::Error, without NaN.
#include <cstdint>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/op_cost.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_perf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::perf;
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  Catalog catalog;
  try {
    catalog = ParseCatalog(in.text, "fuzz_hardware.pbtxt");
  } catch (const placerl::Error&) {
    return 0;
  }
  TransformerModel model;
  model.set_layers(2);
  model.set_d_model(256);
  model.set_d_ff(1024);
  model.set_heads(4);
  model.set_seq(128);
  model.set_vocab(1000);
  for (int c = 0; c < catalog.chip_size() && c < 4; ++c) {
    const Chip& chip = catalog.chip(c);
    try {
      if (FindChip(catalog, chip.name()).name() != chip.name()) placerl::fuzz::Finding("FindChip found another chip");
      const Efficiency e = EffectiveEfficiency(catalog, chip);
      for (int dt = FP32; dt <= INT4; ++dt) {
        try {
          placerl::fuzz::NotNaN(PeakFlops(chip, DType(dt)), "peak");
          const DeviceRates r = MakeDeviceRates(chip, DType(dt), e);
          placerl::fuzz::NotNaN(OpTime(r, OpKind::kMatmul, 1e9, 1e6), "matmul op time");
          placerl::fuzz::NotNaN(OpTime(r, OpKind::kElementwise, 1e6, 1e6), "elementwise op time");
        } catch (const placerl::Error&) {
        }
      }
    } catch (const placerl::Error&) {
      continue;
    }
    const uint8_t b = in.Byte();
    Mesh mesh;
    mesh.set_chip(chip.name());
    mesh.add_dims(1);
    if (b & 1) mesh.set_slices(2);
    Plan plan;
    const int devices = std::max(1, std::min(chip.devices_per_chip(), 64)) * ((b & 1) ? 2 : 1);
    plan.set_data(devices);
    plan.set_global_batch(8 * devices);
    placerl::fuzz::RunPerf(&model, mesh, plan, catalog, &in);
  }
  return 0;
}
