// Fuzz target for the IDX reader (datasets/nas/idx.cc ReadIdx: raw or gzipped bytes, header,
// sizes). The whole input is the file, written to a per-process file under /dev/shm. On an
// accepted file: the data holds exactly the product of the sizes, each size >= 1. Contract:
// returns or throws placerl::Error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "datasets/nas/idx.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::nas;
  const std::string path = "/dev/shm/idx_fuzz_" + std::to_string(::getpid()) + ".idx";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    const IdxArray a = ReadIdx(path);
    uint64_t n = 1;
    for (int32_t d : a.dims) {
      if (d < 1) placerl::fuzz::Finding("IDX size < 1 accepted");
      n *= static_cast<uint64_t>(d);
    }
    if (a.data.size() != n) placerl::fuzz::Finding("IDX data size != product of sizes");
  } catch (const placerl::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
