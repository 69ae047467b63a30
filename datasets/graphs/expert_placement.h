// The papers' hand-made ("expert") placements of a model's ops onto devices
// (device_placement_notes §1.2, §5.2–5.3), read off the layer-structured op names of the
// generators (rnn_graphs.h, transformer_graphs.h, inception_graph.h, model_graphs.h,
// enas_graphs.h; grad/ and update/ ops follow their forward op):
//  * Layered models (a name component "l<k>": RNNLM, NMT, GNMT, Transformer, MoE): one layer
//    per device — layer k of a stack with L layers on device k−1 when L ≤ D, else contiguous
//    blocks, device ⌊(k−1)·D/L⌋; encoder ("enc/…") and decoder layers k share a device.
//    Embeddings (a component starting with "emb") go with the first layer, everything else
//    without a layer (attention, softmax, loss, encoder memory) with the last layer — ColocRL's
//    "attention and softmax with the top layer, embedding with the first".
//  * MoE experts ("…/moe/e<j>/…") are spread: expert j on device j mod D (expert parallelism),
//    when `spread_experts`; otherwise they stay with their layer.
//  * Graphs without layers (Inception, ResNet, ENAS cells, files): one device (HDP's expert for
//    Inception-V3 and ResNet-152), or with `split_unlayered` ColocRL's Inception expert:
//    the forward ops in topological order cut into D contiguous parts of equal forward flops.
// Device indices are 0..D−1 (the accelerators; callers with a CPU device add their offset).
// Finally every co-location group goes to the device of its first op, so the result always
// respects co-location (ColocationViolation is "").
#pragma once

#include <vector>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct ExpertOptions {
  bool spread_experts = true;
  bool split_unlayered = false;
};

// Op → device in [0, num_devices). Throws ConfigError when num_devices < 1.
std::vector<int> ExpertPlacement(const ComputeGraph& g, int num_devices, const ExpertOptions& options = {});

}  // namespace placerl::graphs
