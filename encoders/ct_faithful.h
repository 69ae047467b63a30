// The `ct_faithful` policy preset: Circuit Training's network (reference notes §1.8,
// circuit_training/model/model_lib.py) in LibTorch, for comparison with the default policy.
// Only LibTorch code includes this; encoders::Policy selects it with PolicyOptions::preset.
//
// Per step (B steps of one instance at a time; nothing is cached across steps, because the
// node inputs change with every placement):
//   x_i = [static node features_i, node_dynamic_i]   (chip: w, h, is_hard, is_soft,
//         is_port_cluster, x, y, placed — CT's 8 inputs)
//   h = ReLU(Dense_D(x));  per layer ℓ, for every edge (i, j, w):
//   e_ij = (ReLU(Dense_ℓ[h_i, h_j, w]) + ReLU(Dense_ℓ[h_j, h_i, w])) / 2,
//   h_i ← h_i + Σ_{edges ∋ i} e / (count_i + 1e-6)
//   (Dense_ℓ is one [2D + 1 + edge features → D] layer, applied as A·h_i + B·h_j + C·w + d so
//   that A·h and B·h are computed per node — the same function, fewer FLOPs).
//   r = [ReLU(Dense_D(metadata)), mean_e e, var_e e, max_e e, min_e e, attention, h_cur]
//   (7·D; the e of the last layer; attention: Luong dot product, query Dense_D(h_cur),
//   keys and values Dense_D(h)).
//   value = Dense_1(ReLU(Dense_8(ReLU(Dense_32(r))))).
//   grid logits: Dense_2048(r) → ReLU → [32, 8, 8] → ConvT(16, 3, s2) → ReLU → ConvT(8) → ReLU
//   → ConvT(4) → ReLU → ConvT(2) → ReLU → ConvT(1, 3, s1) → 128 × 128, of which the real
//   cols × rows grid is the top-left corner (row-major, action = row · cols + col); −1e9 where
//   the mask is 0. Grids above 128 × 128 are a ConfigError (CT's max_grid_size).
//   device / choice logits (not in CT, which only places on grids): Dense_n(ReLU(Dense_32(r))).
// Weights start Glorot-normal with zero biases (CT's initialiser).
#pragma once

#include <torch/torch.h>

#include <utility>

#include "encoders/policy_net.h"

namespace placerl::encoders {

class CtFaithfulNetImpl : public torch::nn::Module {
 public:
  static constexpr int32_t kGridSize = 128;  // CT's max_grid_size: the deconvolution's output
  static constexpr int64_t kChunk = 32;       // steps per GCN pass in a large batch (see Forward)

  CtFaithfulNetImpl(const PolicyOptions& options, const FeatureLayout& layout);

  // Keeps the instance's graph tensors in the embedding (nothing weight-dependent can be
  // computed before a step's node inputs are known).
  StaticEmbedding Encode(const GraphTensors& g);

  // The per-step GCN: node embeddings [B, N, D] and the readout r [B, 7·D] (6·D without
  // metadata).
  struct StepEncoding {
    torch::Tensor node, readout;
  };
  StepEncoding EncodeSteps(const StaticEmbedding& emb, const StepBatch& batch);

  // Masked logits [B, A] and values [B].
  std::pair<torch::Tensor, torch::Tensor> Forward(const StaticEmbedding& emb, const StepBatch& batch);

 private:
  PolicyOptions opt_;
  FeatureLayout layout_;
  torch::nn::Linear node_in_{nullptr}, meta_in_{nullptr};
  std::vector<torch::nn::Linear> edge_fc_;  // [2D + 1 + edge features → D] per layer
  torch::nn::Linear att_query_{nullptr}, att_key_{nullptr}, att_value_{nullptr};
  torch::nn::Linear value1_{nullptr}, value2_{nullptr}, value3_{nullptr};
  // Grid head.
  torch::nn::Linear deconv_in_{nullptr};
  std::vector<torch::nn::ConvTranspose2d> deconv_;
  // Device / choice head.
  torch::nn::Linear choice_hidden_{nullptr}, choice_out_{nullptr};
};
TORCH_MODULE(CtFaithfulNet);

}  // namespace placerl::encoders
