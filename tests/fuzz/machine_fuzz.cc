// Fuzz target for the machine readers (cost_models/tpu/machine.cc): the `.pbtxt` form
// (ParseMachineText: protobuf text + validation of devices, counts, link overrides, CPU-only
// kinds) and the preset strings (MachineFromSpec on `k80(...)`, `baechi(...)`, `tpu(...)`,
// `gpu(...)`). Input: "machine text\n%%\npreset spec" up to the first NUL (control bytes after
// it choose the placement). Contract: each reader returns or throws placerl::Error; an accepted
// machine has as many names and types as devices, at least one device, and the simulator on
// a small chain graph placed by the control bytes returns a non-negative step time (inf allowed)
// and peak memories without NaN.
#include <cstdint>
#include <string>
#include <vector>

#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void Check(const placerl::perf::Machine& m, placerl::fuzz::Input* in) {
  using namespace placerl;
  const int nd = m.num_devices();
  if (nd < 1) fuzz::Finding("a machine without devices was accepted");
  if (static_cast<int>(m.device_names.size()) != nd || static_cast<int>(m.device_types.size()) != nd)
    fuzz::Finding("device names/types do not match the devices");
  if (m.FastestDevice() < 0 || m.FastestDevice() >= nd) fuzz::Finding("FastestDevice out of range");
  static const graphs::ComputeGraph g = graphs::MakeChainGraph(6, 1e9, 1e6, 1e6);
  std::vector<int> p(g.num_ops());
  for (int& d : p) d = in->Byte() % nd;
  try {
    const perf::SimResult r = perf::SimulatePlacement(g, p, m.sim);
    fuzz::NotNaN(r.makespan, "makespan");
    if (!(r.makespan >= 0)) fuzz::Finding("negative makespan");
    for (double b : r.peak_memory) fuzz::NotNaN(b, "peak memory");
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace placerl;
  fuzz::Input in = fuzz::Split(data, size);
  std::vector<std::string> sec = fuzz::Sections(in.text);
  sec.resize(2);
  try {
    Check(perf::ParseMachineText(sec[0], "fuzz_machine.pbtxt"), &in);
  } catch (const Error&) {
  }
  // Only preset strings: a spec without '(' would be read as a file path.
  if (sec[1].find('(') != std::string::npos && sec[1].size() < 512) {
    try {
      Check(perf::MachineFromSpec(sec[1]), &in);
    } catch (const Error&) {
    }
  }
  return 0;
}
