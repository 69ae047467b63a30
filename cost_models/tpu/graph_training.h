// Data-parallel training of any compute graph (datasets/graphs): the graph holds one
// replica's step (forward and backward ops, as device-placement graphs do), placed on that
// replica's devices; `replicas` copies run it in lock step on their own devices, then device d
// of every replica all-reduces the gradients of the parameters placed on d over a ring of the
// replicas, then every device updates its parameters (a memory-bound stream). No overlap of
// the all-reduce with the backward ops (a plain bucketed all-reduce after the step):
//   step = makespan(placed graph) + max_d AR_ring(grad bytes on d) + max_d optimizer_d
// Graphs that carry their own optimizer ops ("update/<op>", datasets/graphs/training_graph.h)
// get no second update (optimizer_d = 0), and those ops' param_bytes (optimizer state) are
// not gradients. The same holds for the mesh evaluator below.
#pragma once

#include <vector>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/proto/hardware.pb.h"
#include "datasets/proto/perf_model.pb.h"

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

// ---- Any graph on a catalogue mesh (ResNet, graphs from datasets/) ----
// One replica's step (forward + backward ops; its batch is inside the graph) runs on
// `devices_per_replica` devices of the mesh (ops placed by `placement`, empty = all on the
// first), op times from the chip's roofline with the catalogue's efficiencies (op_cost.h),
// transfers inside a replica over one ICI link. replicas = mesh devices / devices_per_replica
// run in lock step (data parallel over the outer mesh axes, hierarchical over DCN). Then each
// device's gradients are all-reduced over the data axis with the mesh's collective model
// (CollectiveTime, efficiencies collective_bw / dcn_bw) and the device updates its weights —
// or, with `shard_optimizer` (weight-update sharding, Xu et al. 2020), the gradients are
// reduce-scattered, each replica updates 1/replicas of them and the new weights are
// all-gathered. The gradient communication starts after the backward pass
// (`grad_reduce_after_backward`, default) or hides under the backward ops (the ops whose kind
// is a "grad/" name, i.e. their summed time; only what exceeds it is exposed).
// Pipeline (GPipe) over a graph: with pipeline = K > 1 a replica is K devices; the graph is one
// microbatch; the forward ops are cut in topological order into K contiguous stages of about
// equal time (forward + backward), each "grad/X" op goes to X's stage, and
//   step = (M + K − 1) · max_k (stage k's op time + its outgoing activation bytes / ICI link)
// (bubble (K−1)·that), M = microbatches. Without "grad/" ops the cut balances all ops in order.
struct GraphRunPlan {
  int devices_per_replica = 1;      // ignored with pipeline > 1 (= pipeline)
  int pipeline = 1, microbatches = 1;
  std::vector<int> placement;       // op → device in [0, devices_per_replica); empty = all on 0 (or stages)
  DType compute_dtype = BF16;       // picks the chip's peak
  DType param_dtype = FP32;         // graph param_bytes are weights at this width
  DType grad_dtype = FP32;
  Optimizer optimizer = ADAM;
  bool shard_optimizer = false;
  bool grad_reduce_after_backward = true;
  double examples_per_replica = 0;  // per microbatch, for examples/s (0 = unknown)
};

struct GraphRunResult {
  int replicas = 0, devices = 0, chips = 0;
  double step_s = 0, compute_s = 0, exposed_dp_s = 0, dp_comm_s = 0, optimizer_s = 0;
  double bubble_s = 0, pipeline_comm_s = 0;  // pipeline only
  std::vector<int> stage_of_op;              // pipeline only: the cut
  double examples_per_s = 0;
  double flops_per_step = 0;  // whole job: graph FLOPs × replicas
  double mfu = 0;             // flops_per_step / (step · devices · peak)
  double hbm_per_device = 0, hbm_capacity = 0;  // peak of the simulation + grads + optimizer
  // ... and its parts on the fullest device: weights, gradients, optimizer state, activations
  // (the simulation's peak minus the weights, × microbatches in flight).
  double hbm_params = 0, hbm_grads = 0, hbm_optimizer = 0, hbm_activations = 0;
  bool oom = false;
};

// The graph-run settings of a Plan (pipeline, microbatches, dtypes, optimizer,
// shard_optimizer, grad_reduce_after_backward). ConfigError if it asks for fsdp, tensor or
// expert parallelism, which graph runs do not model.
GraphRunPlan GraphRunPlanFromPlan(const Plan& plan, double examples_per_replica);

// Throws ConfigError on a bad mesh, unknown chip, devices_per_replica not dividing the
// mesh's devices, or a placement of the wrong size / out of range.
GraphRunResult EvaluateGraphOnMesh(const graphs::ComputeGraph& graph, const Mesh& mesh,
                                   const Catalog& catalog, const GraphRunPlan& plan);

}  // namespace placerl::perf
