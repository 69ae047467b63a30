// Unrolled recurrent models of the device-placement papers (device_placement_notes §3.1, §3.3),
// op-level at TensorFlow-like granularity, one training step (forward + backward + update,
// co-location groups from AddTrainingOps):
//   RNNLM          ColocRL/HDP's language model: L stacked LSTM layers, unrolled `steps`.
//   NMT            ColocRL/HDP's attention NMT: L-layer LSTM encoder and decoder, Luong
//                  attention on the top decoder layer with input feeding.
//   GNMT v2        Baechi's GNMT: bidirectional first encoder layer, residual adds from layer 3,
//                  normalised-Bahdanau attention from the bottom decoder layer fed to every
//                  upper layer (TF nmt's GNMTAttentionMultiCell, use_new_attention).
//
// One LSTM cell step = 12 ops (TF BasicLSTMCell): concat [x, h], matmul, bias_add,
// sigmoid_i, tanh_g, sigmoid_f, sigmoid_o, mul_fc, mul_ig, add_c, tanh_c, mul_h. Costs (B batch,
// I input width, H hidden): matmul 2·B·(I+H)·4H flops; every element-wise op 1 flop per output
// element (bias_add B·4H, the others B·H: 13·B·H in total per step); outputs h and c are B·H.
// A layer's weights (4H·(I+H) + 4H) are one "variable" op read by every step's matmul and
// bias_add. The first step has no h/c input (zero state from outside the graph).
// Per step: embedding lookup ("gather", B·H out, reads its rows) and, where a model predicts,
// the softmax projection matmul (2·B·H·V), bias_add (B·V) and "xent" (softmax, 5·B·V flops,
// one loss per example); "loss" sums the per-step losses (1 flop per input element).
// Attention per decoder step (S source steps): Luong: score bmm 2·B·S·H, softmax 5·B·S,
// context bmm 2·B·S·H, concat [context, h], attention matmul 2·B·2H·H, tanh.
// Bahdanau (normalised): query matmul 2·B·H·H, score_add B·S·H, score_tanh B·S·H,
// score_v 2·B·S·H, softmax 5·B·S, context bmm 2·B·S·H. The encoder's top outputs are packed
// once ("enc/memory") and projected once ("attn/keys", 2·B·S·H·H).
// Names: "<part>/l<k>/t<t>/lstm/<op>" with part "enc" / "dec" (none in RNNLM), "…/fw/…" and
// "…/bw/…" for the bidirectional layer, "<part>/emb/t<t>/lookup", "dec/attn/t<t>/<op>",
// "[dec/]softmax/t<t>/<op>", weights "<part>/l<k>/weights", "loss" (names carry the layer
// for expert placements: expert_placement.h).
#pragma once

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct RnnLmConfig {
  int layers = 2;
  int hidden = 2048;
  int batch = 64;
  int steps = 40;  // unrolled time steps
  int vocab = 10000;
  double element_bytes = 4;  // fp32 activations and weights
  bool update = true;        // optimizer ops (Adam)
};

struct Seq2SeqConfig {
  int layers = 2;  // encoder layers = decoder layers
  int hidden = 1024;
  int batch = 64;
  int steps = 40;     // source length = target length
  int vocab = 40000;  // source and target vocabulary
  double element_bytes = 4;
  bool update = true;
};

// Baechi's GNMT v2 (4 layers, LSTM 512, b128, seq 40, vocab 30000).
Seq2SeqConfig GnmtV2Config();

// Throw ConfigError on a size < 1.
ComputeGraph MakeRnnLmGraph(const RnnLmConfig& config);
ComputeGraph MakeNmtGraph(const Seq2SeqConfig& config);
ComputeGraph MakeGnmtGraph(const Seq2SeqConfig& config);

}  // namespace placerl::graphs
