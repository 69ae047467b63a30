// Fuzz target for the tabular NAS benchmark readers (datasets/nas/tables.cc): the first byte
// picks the reader (even: NAS-Bench-201 CSV, odd: NAS-Bench-Macro JSON), the rest is the file,
// written to a per-process file under /dev/shm and read with require_all = false. On an
// accepted table: every present accuracy is in [0, 100], the row count equals the entries
// present, and Macro's params/flops are >= 0 where present. Contract: returns or throws
// placerl::Error.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "datasets/nas/tables.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::nas;
  if (size < 1) return 0;
  const bool macro = data[0] & 1;
  const std::string path = "/dev/shm/nas_tables_fuzz_" + std::to_string(::getpid()) + (macro ? ".json" : ".csv");
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    if (macro) {
      const MacroTable t = ReadNasBenchMacroJson(path, {false});
      int32_t present = 0;
      for (int32_t c = 0; c < kMacroNetworks; ++c) {
        if (std::isnan(t.mean_accuracy[c])) continue;
        ++present;
        if (t.mean_accuracy[c] < 0 || t.mean_accuracy[c] > 100) placerl::fuzz::Finding("Macro accuracy out of range");
        if (t.params[c] < 0 || t.flops[c] < 0) placerl::fuzz::Finding("Macro params/flops negative");
      }
      if (present != t.rows) placerl::fuzz::Finding("Macro rows != entries present");
    } else {
      const Nb201Table t = ReadNb201Csv(path, {false});
      int32_t present = 0;
      for (int32_t c = 0; c < kNb201Cells; ++c) {
        if (std::isnan(t.test_accuracy[0][c])) continue;
        ++present;
        for (int d = 0; d < 3; ++d)
          if (!(t.test_accuracy[d][c] >= 0 && t.test_accuracy[d][c] <= 100)) placerl::fuzz::Finding("NB201 accuracy out of range");
      }
      if (present != t.rows) placerl::fuzz::Finding("NB201 rows != cells present");
    }
  } catch (const placerl::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
