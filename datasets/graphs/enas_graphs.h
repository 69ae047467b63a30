// ENAS-like random cell families for generalisation experiments (Placeto's cifar10 / ptb / nmt
// families, device_placement_notes §3.3 G7): a seed draws one architecture; the macro
// structure and sizes are fixed by the config, so graphs of one family are alike but not equal.
//
// cifar10 (conv cells): stem "stem/conv", "stem/bn"; 3 stages of `cells` normal cells with a
// reduction cell (channels ×2, stride 2) between stages. A cell ("cell<k>/") first calibrates
// its two inputs (the outputs of the two previous cells) with 1×1 convs "in0/calib",
// "in1/calib" (stride 2 in a reduction cell); node i (2 ≤ i < nodes + 2) takes two earlier
// nodes a, b and two op types and adds them ("node<i>/add"); op types: conv 3×3, conv 5×5
// (relu, conv, bn), separable 3×3, 5×5 (relu, depthwise, pointwise, bn), avg / max pool 3×3, and
// identity (no op). Unused nodes are concatenated ("out/concat") and projected back to the
// cell's channels ("out/conv"). Head: "avgpool", "fc", "xent", "loss". The normal and
// reduction cell architectures are drawn once per seed.
// ptb (recurrent cells, unrolled `steps`): per step "t<t>/emb/lookup"; node 0 of the cell
// reads concat [x, h_prev] ("t<t>/cell/concat"), node i ≥ 1 reads an earlier node; every node
// is "t<t>/cell/n<i>/matmul" (→ 2H: gate and candidate), "gate" (sigmoid), "act_<f>" (f =
// tanh / relu / sigmoid / identity, drawn), "mix" (c·a + (1 − c)·input, 3 flops/element);
// h_t = "t<t>/cell/avg" of the unused nodes; then the softmax projection and xent as in
// rnn_graphs.h; weights "cell/n<i>/weights".
// nmt (Placeto's third family): the drawn recurrent cell as encoder ("enc/t<t>/…", weights
// "enc/cell/n<i>/weights") and decoder ("dec/t<t>/…", starting from the encoder's last h),
// Luong attention per decoder step ("dec/t<t>/attn/score", softmax, context, concat, matmul,
// tanh; keys "attn/keys" over "enc/memory") and the softmax projection on the attention.
// Costs follow op_list.h; training ops from AddTrainingOps.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct EnasConfig {
  std::string family = "cifar10";  // "cifar10", "ptb" or "nmt"
  uint64_t seed = 1;
  int nodes = 5;      // nodes per cell (ENAS micro: 5; ptb cells often use more)
  int cells = 2;      // cifar10: normal cells per stage
  int channels = 20;  // cifar10: channels of the first stage
  int image = 32;     // cifar10: input resolution
  int classes = 10;   // cifar10 classes
  int hidden = 256;   // ptb, nmt: hidden width
  int steps = 20;     // ptb, nmt: unrolled steps (source = target length)
  int vocab = 10000;  // ptb, nmt vocabulary
  int batch = 32;
  double element_bytes = 4;
  bool update = true;
};

// Throws ConfigError on an unknown family or a size < 1.
ComputeGraph MakeEnasGraph(const EnasConfig& config);

}  // namespace placerl::graphs
