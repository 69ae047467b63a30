// Shared by the graph fuzz targets: structural checks of a ComputeGraph a reader accepted,
// the placed-graph simulator (and the data-parallel training step on top) run on it, and
// the size bounds that keep graph specs cheap enough to fuzz (a target must not hang by
// its own doing: `layered(ops=100000000)` is a legal, 100-million-op request).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "tests/fuzz/fuzz_input.h"

namespace placerl::fuzz {

// CSR arrays consistent with each other; topo_order a permutation that respects every edge.
inline void CheckGraph(const graphs::ComputeGraph& g) {
  const int n = g.num_ops();
  const auto sized = [n](size_t s) { return s == static_cast<size_t>(n); };
  if (!sized(g.kinds.size()) || !sized(g.flops.size()) || !sized(g.bytes.size()) ||
      !sized(g.output_bytes.size()) || !sized(g.param_bytes.size()) || !sized(g.temp_bytes.size()) ||
      !sized(g.time_s.size()) || !sized(g.topo_order.size()) || g.in_offsets.size() != g.out_offsets.size() ||
      !sized(g.in_offsets.size() - 1) || g.in_offsets.back() != g.out_offsets.back() ||
      g.in_sources.size() != g.out_targets.size() || g.in_sources.size() != static_cast<size_t>(g.in_offsets.back()))
    Finding("graph arrays of inconsistent sizes");
  std::vector<int> pos(n, -1);
  for (int k = 0; k < n; ++k) {
    const int v = g.topo_order[k];
    if (v < 0 || v >= n || pos[v] >= 0) Finding("topo_order is not a permutation");
    pos[v] = k;
  }
  for (int i = 0; i < n; ++i)
    for (int e = g.in_offsets[i]; e < g.in_offsets[i + 1]; ++e) {
      const int p = g.in_sources[e];
      if (p < 0 || p >= n || pos[p] >= pos[i]) Finding("edge against the topological order");
    }
}

// Simulates `placement` on `nd` plain devices with the Placeto or Baechi link model (chosen
// by a control byte) and the training step on top; capacities from control bytes, so OOM
// paths run too. The simulator accepts or throws ConfigError; results are never NaN.
inline void Simulate(const graphs::ComputeGraph& g, const std::vector<int>& placement, int nd, Input* in) {
  const uint8_t mode = in->Byte();
  std::vector<perf::SimDevice> devs;
  for (int d = 0; d < nd; ++d) {
    const uint8_t b = in->Byte();
    const double capacity = b == 0 ? 1e300 : b * 1e4;
    devs.push_back(perf::PlainDevice(1e12 * (1 + (b & 3)), 1e11, capacity));
  }
  perf::SimConfig cfg = (mode & 1) ? perf::PlacetoConfig(devs) : perf::BaechiConfig(devs);
  cfg.ready_list_order = (mode & 2) != 0;
  try {
    perf::Simulator sim(g, cfg);
    const perf::SimResult& r = sim.Run(placement);
    NotNaN(r.makespan, "makespan");
    NotNaN(r.busy_until, "busy_until");
    if (r.busy_until < r.makespan) Finding("busy_until < makespan");
    for (int d = 0; d < nd; ++d) {
      NotNaN(r.peak_memory[d], "peak_memory");
      NotNaN(r.utilisation[d], "utilisation");
      double live = 0;
      for (const auto& t : sim.LiveAt(d, r.peak_time[d])) live += t.bytes;
      NotNaN(live, "live bytes");
    }
    for (int i = 0; i < g.num_ops(); ++i)
      if (!(r.op_start[i] <= r.op_end[i])) Finding("op ends before it starts (or NaN)");
    perf::GraphTrainingConfig tc;
    tc.replicas = 1 + (mode >> 4);
    tc.bidirectional = (mode & 4) != 0;
    const perf::GraphTrainingResult t = perf::EvaluateGraphTraining(&sim, g, placement, cfg, tc);
    NotNaN(t.step_s, "training step");
  } catch (const Error&) {
  }
}

// True when the graph spec names a built-in family (not a file: GraphFromSpec reads any
// other string as a path) with sizes that build and simulate in about a millisecond.
inline bool BoundedGraphSpec(const std::string& spec) {
  const size_t open = spec.find('(');
  if (open == std::string::npos || spec.empty() || spec.back() != ')') return false;
  const std::string name = spec.substr(0, open);
  if (name != "layered" && name != "chain" && name != "resnet") return false;
  for (const std::string& kv : SplitCommaList(spec.substr(open + 1, spec.size() - open - 2))) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;  // the reader's error
    const std::string k = kv.substr(0, eq);
    const long v = std::strtol(kv.c_str() + eq + 1, nullptr, 10);
    if ((k == "ops" && v > 3000) || (k == "fan_in" && v > 64)) return false;
  }
  // Defaults: layered has 1000 ops, chain 1000.
  return true;
}

}  // namespace placerl::fuzz
