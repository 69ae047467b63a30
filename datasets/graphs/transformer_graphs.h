// Transformer training graphs for device placement (GDP's Transformer(-XL) benchmark family,
// device_placement_notes §3.1) and a GShard-style mixture-of-experts Transformer whose experts
// are separate ops so that a placer can spread them (expert parallelism). Not the TPU perf
// model's analytic `transformer(...)` MODEL strings (cost_models/tpu/spec.h): these are op
// graphs, named transformer_graph(...) / moe_graph(...) in GraphFromSpec.
//
// Ops per layer (B batch, s sequence, d model width, f FFN width, h heads; post-LN):
//   self-attention "l<k>/attn/": q, k, v (matmul 2·B·s·d·d each, weights d·d + d), scores
//   (matmul 2·B·s·s·d), softmax (5·B·h·s·s), context (matmul 2·B·s·s·d), out (matmul
//   2·B·s·d·d), residual (add), ln (norm, 8 flops/element, 2·d params);
//   decoder layers of an encoder–decoder also "l<k>/cross/" with q from the decoder and k, v
//   from the encoder output (same ops);
//   FFN "l<k>/ffn/": ffn1 (matmul 2·B·s·d·f, weights d·f + f), relu, ffn2 (2·B·s·f·d, f·d + d),
//   residual, ln.
// MoE FFN (every `moe_every`-th encoder and decoder layer; GShard: top-2 gating, capacity
// c = 2·B·s / E tokens per expert, rounded up): "l<k>/moe/gate" (matmul 2·B·s·d·E),
// "…/dispatch" (softmax + top-2 + dispatch einsum, 2·B·s·E·c·d), per expert
// "l<k>/moe/e<j>/ffn1", "…/relu", "…/ffn2" on c tokens, "…/combine" (2·B·s·E·c·d),
// residual, ln.
// Embedding: "emb/lookup" (gather), "emb/pos" (add of the learned positions, s·d params);
// encoder ops carry "enc/" in front ("enc/l1/attn/q", "enc/emb/lookup"); head "logits"
// (matmul 2·B·s·d·V, V·d + V params), "xent" (5·B·s·V), "loss". Weights are part of each
// op's param_bytes (the op owns its weights); backward / update / co-location: AddTrainingOps.
#pragma once

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct TransformerGraphConfig {
  int layers = 6;      // decoder (LM) layers
  int enc_layers = 0;  // 0 = decoder-only LM; > 0 = encoder–decoder with cross-attention
  int d_model = 512;
  int d_ff = 2048;
  int heads = 8;
  int seq = 256;
  int batch = 16;
  int vocab = 32000;
  int experts = 0;    // > 0: MoE FFNs with this many experts
  int moe_every = 2;  // every n-th layer (k % n == 0) gets the MoE FFN
  double element_bytes = 4;
  bool update = true;
};

// Throws ConfigError on a size < 1 (enc_layers and experts may be 0), heads not dividing
// d_model, or moe_every < 1.
ComputeGraph MakeTransformerGraph(const TransformerGraphConfig& config);

}  // namespace placerl::graphs
