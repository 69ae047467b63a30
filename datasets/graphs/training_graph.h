// From a forward computation graph to one training step: backward ops ("grad/<op>") and
// optimizer ops ("update/<op>"), with each op, its gradient and its weights' update in one
// co-location group (TensorFlow's `colocate_gradients_with_ops`; device_placement_notes §4
// "Fusion / co-location", §3.3 "backward ≈ 2× forward"). Generators and the ONNX importer
// build the forward ops and call this; the ResNet generator (model_graphs.h) keeps its own
// backward (no update ops: the TPU evaluator adds the weight update itself).
//
// Conventions:
//  * grad/X exists for every forward op X with inputs or parameters; same kind as X, 2× X's
//    flops and bytes, X's temp; inputs = the grad ops of X's consumers (reverse order of the
//    forward pass), X's inputs (saved activations) and X; output_bytes = Σ output_bytes of X's
//    inputs (the gradients w.r.t. them; 0 for an op without inputs); param_bytes 0.
//  * update/X exists for every X with param_bytes > 0: kind "elementwise", input grad/X,
//    flops = update_flops_per_param × parameters, bytes = update_bytes_factor × param_bytes,
//    output 0, persistent state = optimizer_state_factor × param_bytes (Adam: m and v).
//  * Co-location (when `colocate`): X, grad/X and update/X get X's group name, or X's name
//    when X has none (ops already sharing a name keep sharing it).
// Order: forward ops unchanged, then grad ops in reverse forward order, then update ops.
#pragma once

#include <vector>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct TrainingOpsOptions {
  bool update = true;                     // add optimizer ops
  double param_element_bytes = 4;         // fp32 weights: parameters = param_bytes / 4
  double update_flops_per_param = 10;     // Adam: m, v, bias corrections, sqrt, divide, step
  double update_bytes_factor = 7;         // read w, g, m, v; write w, m, v
  double optimizer_state_factor = 2;      // Adam m and v, resident like the weights
  bool colocate = true;
};

// Forward ops (inputs index earlier or later ops of `forward`; acyclic) → forward + backward
// + update ops. Throws ConfigError when a generated name collides with a forward op's name.
std::vector<OpInfo> AddTrainingOps(const std::vector<OpInfo>& forward, const TrainingOpsOptions& options = {});

}  // namespace placerl::graphs
