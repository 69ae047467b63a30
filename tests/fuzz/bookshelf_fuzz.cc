// Fuzz target for the Bookshelf reader (ReadBookshelf, datasets/chip/bookshelf.cc), the
// conversion to Circuit Training nets, and the proxy cost on the design it reads. The
// reader only reads files named by an .aux, so each input is written into a per-process
// directory under /dev/shm (or $TMPDIR): sections separated by lines "%%" are, in order,
// .nodes, .nets, .pl, .scl, .wts (the last two optional: a missing section is a missing
// file; the .aux names exactly the sections present). A NUL byte ends the text; bytes
// after it steer the proxy cost (fuzz_proxy_cost.h).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "datasets/chip/bookshelf.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_proxy_cost.h"

namespace {

std::string g_dir;

void RemoveDir() {
  for (const char* ext : {"aux", "nodes", "nets", "pl", "scl", "wts"}) {
    std::remove((g_dir + "/d." + ext).c_str());
  }
  rmdir(g_dir.c_str());
}

void WriteOrDie(const std::string& path, const std::string& content) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(content.data(), 1, content.size(), f) != content.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
}


}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  std::string templ = std::string(base) + "/placerl_bookshelf_fuzz.XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dir = templ;
  std::atexit(RemoveDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placerl::ScopedWarningSilence quiet;  // warnings are expected on fuzzed input; printing them slows the run
  const void* nul = std::memchr(data, 0, size);
  const size_t text_size = nul ? static_cast<const uint8_t*>(nul) - data : size;
  const std::vector<std::string> sec = placerl::fuzz::Sections(std::string(reinterpret_cast<const char*>(data), text_size));
  static const char* kExt[5] = {"nodes", "nets", "pl", "scl", "wts"};
  std::string aux = "RowBasedPlacement :";
  for (size_t i = 0; i < 5; ++i) {
    const std::string path = g_dir + "/d." + kExt[i];
    if (i < sec.size()) {
      WriteOrDie(path, sec[i]);
      aux += std::string(" d.") + kExt[i];
    } else {
      std::remove(path.c_str());
    }
  }
  WriteOrDie(g_dir + "/d.aux", aux + "\n");

  placerl::chip::BookshelfDesign d;
  try {
    d = placerl::chip::ReadBookshelf(g_dir + "/d.aux");
  } catch (const placerl::Error&) {
    return 0;
  }
  try {
    placerl::chip::CtConversionReport rep;
    const placerl::chip::Netlist ct = placerl::chip::ToCircuitTrainingNets(d.netlist, &rep);
    if (rep.nets_out + rep.nets_merged != rep.nets_in) {
      std::fprintf(stderr, "ToCircuitTrainingNets: %d in, %d out, %d merged\n", rep.nets_in, rep.nets_out, rep.nets_merged);
      std::abort();
    }
  } catch (const placerl::Error&) {
  }
  const size_t ctl = nul ? text_size + 1 : size;
  placerl::fuzz::FuzzProxyCost(d.netlist, d.settings, {data + ctl, size - ctl});
  return 0;
}
