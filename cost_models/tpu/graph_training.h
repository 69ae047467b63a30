// Data-parallel training of any compute graph (datasets/graphs): the graph holds one
// replica's step (forward and backward ops, as device-placement graphs do), placed on that
// replica's devices; `replicas` copies run it in lock step on their own devices, then device d
// of every replica all-reduces the gradients of the parameters placed on d over a ring of the
// replicas, then every device updates its parameters (a memory-bound stream). No overlap of
// the all-reduce with the backward ops (a plain bucketed all-reduce after the step):
//   step = makespan(placed graph) + max_d AR_ring(grad bytes on d) + max_d optimizer_d
#pragma once

#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"

namespace placerl::perf {

struct GraphTrainingConfig {
  int replicas = 1;
  double ring_bw = 25e9;          // one-way bytes/s of each link of the replicas' ring
  double ring_hop_latency = 5e-6;  // seconds per hop
  bool bidirectional = false;     // ring sends both ways (2× bandwidth, ⌈n/2⌉ hops)
  double grad_bytes_per_param_byte = 1;  // e.g. 0.5 for bf16 gradients of fp32 weights
  // Bytes streamed by the update per parameter byte (Adam, fp32: read p, g, m, v and write
  // p, m, v = 7).
  double optimizer_traffic = 7;
};

struct GraphTrainingResult {
  double step_s = 0;
  double compute_s = 0;    // the placed graph's makespan
  double allreduce_s = 0;  // slowest device's gradient all-reduce
  double optimizer_s = 0;  // slowest device's update
  std::vector<double> grad_bytes;  // per device
  bool oom = false;        // from the simulation (parameters, activations, copies)
};

// Runs `sim` on `placement` and adds the data-parallel terms. Throws ConfigError on
// replicas < 1 or a non-positive ring bandwidth.
GraphTrainingResult EvaluateGraphTraining(Simulator* sim, const graphs::ComputeGraph& graph,
                                          const std::vector<int>& placement, const SimConfig& sim_config,
                                          const GraphTrainingConfig& config);

}  // namespace placerl::perf
