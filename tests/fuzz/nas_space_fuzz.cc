// Fuzz target for the search-space reader (ParseSearchSpace, datasets/nas/search_space.cc:
// protobuf text, template expansion, rules, the dead-end check, table layouts). Input: space
// text up to the first NUL (control bytes after it pick choices). On an accepted space: walks
// one architecture in order, each decision's mask must allow a choice (no dead ends — the
// reader promises it) and the pick must pass Check; the architecture must round trip through
// ArchitectureDef. Contract: the reader returns or throws placerl::Error.
#include <cstdint>
#include <string>

#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl::nas;
  placerl::fuzz::Input in = placerl::fuzz::Split(data, size);
  SearchSpace s;
  try {
    s = ParseSearchSpace(in.text, "fuzz_space.pbtxt");
  } catch (const placerl::Error&) {
    return 0;
  }
  if (s.num_decisions() < 1 || s.max_choices() < 1) placerl::fuzz::Finding("an accepted space without decisions");
  Architecture a(s.num_decisions(), 0);
  std::vector<uint8_t> mask(s.max_choices());
  for (int32_t d = 0; d < s.num_decisions(); ++d) {
    s.AllowedChoices(a.data(), d, mask.data());
    std::vector<int32_t> allowed;
    for (int32_t c = 0; c < s.max_choices(); ++c)
      if (mask[c]) allowed.push_back(c);
    if (allowed.empty()) placerl::fuzz::Finding("dead end in an accepted space");
    a[d] = allowed[in.Byte() % allowed.size()];
    if (!s.IsAllowed(a.data(), d, a[d])) placerl::fuzz::Finding("IsAllowed disagrees with AllowedChoices");
  }
  if (!s.Check(a).empty()) placerl::fuzz::Finding("Check refuses an architecture built from the masks");
  try {
    if (s.FromDef(s.ToDef(a)) != a) placerl::fuzz::Finding("ArchitectureDef round trip changed the architecture");
  } catch (const placerl::Error&) {
    placerl::fuzz::Finding("ArchitectureDef round trip threw");
  }
  return 0;
}
