// The small patch Transformer built from a Brainformer block (brainformer_block.h) that
// nas-search trains on Fashion-MNIST: 28 × 28 images as 16 patches of 7 × 7, a linear patch
// embedding plus learned positions, the block's sub-layers in order as pre-norm residual
// sub-layers (x + f(LayerNorm(x)); "none" skipped), the block stacked `repeats` times, a final
// LayerNorm, mean pooling over the patches and a linear classifier.
//   attention: multi-head self-attention over the 16 patches;
//   dense FFN: Linear(d, ratio·d) → GELU → Linear(ratio·d, d);
//   MoE FFN: a bias-free linear router and E such FFNs; the tokens of a whole batch (B·16) are
//     routed together (RouteTokens): top-1 / top-2 token choice with a per-expert capacity and
//     dropped tokens (GShard order: all first choices before any second choice, in token
//     order; a token whose choices are all dropped passes through the residual only) and the
//     Switch load-balancing loss E · Σ_e f_e · P_e; or expert choice (each expert takes its
//     `capacity` tokens of highest router probability; no auxiliary loss needed).
// Experts run batched: tokens are gathered into an [E, capacity, d] buffer and go through two
// batched matrix products. Includes LibTorch: only brainformer_net.cc, brainformer_quality.cc
// and the tests include it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "models/brainformer_block.h"

namespace placerl::brainformer {

// Which token goes to which expert slot, with which weight.
struct MoeRouting {
  torch::Tensor token;  // int64 [A]: token of each kept assignment
  torch::Tensor slot;   // int64 [A]: expert · capacity + position in the expert's buffer
  torch::Tensor gate;   // float [A]: the weight its expert's output is added with
  int64_t capacity = 0;
  int64_t dropped_assignments = 0;  // token choice: chosen (token, expert) pairs over capacity
  int64_t dropped_tokens = 0;       // tokens no expert processes
  torch::Tensor aux_loss;           // scalar; 0 for expert choice
};

// Routes `logits` [N tokens, E experts] (router outputs, before softmax).
MoeRouting RouteTokens(const torch::Tensor& logits, Gating gating, double capacity_factor);

class MoeFfnImpl : public torch::nn::Module {
 public:
  MoeFfnImpl(int64_t width, int64_t hidden, int64_t experts, Gating gating, double capacity_factor);
  // x [N, width] → [N, width]; the routing of the last call is kept in last_routing().
  torch::Tensor forward(const torch::Tensor& x);
  const MoeRouting& last_routing() const { return last_; }

 private:
  int64_t width_, hidden_, experts_;
  Gating gating_;
  double capacity_factor_;
  torch::nn::Linear router_{nullptr};
  torch::Tensor w1_, b1_, w2_, b2_;  // [E, d, h], [E, 1, h], [E, h, d], [E, 1, d]
  MoeRouting last_;
};
TORCH_MODULE(MoeFfn);

class BrainformerNetImpl : public torch::nn::Module {
 public:
  BrainformerNetImpl(const Block& block, const NetShape& shape);
  // images [B, 28, 28] (already normalised) → logits [B, classes]. After it, aux_loss() is the
  // sum of the MoE sub-layers' load-balancing losses of this call.
  torch::Tensor forward(const torch::Tensor& images);
  torch::Tensor aux_loss() const { return aux_loss_; }
  // Over the MoE sub-layers of the last forward: dropped tokens and routed tokens.
  int64_t last_dropped_tokens() const;
  int64_t last_routed_tokens() const { return last_routed_; }
  int64_t num_parameters() const;
  const NetShape& shape() const { return shape_; }

 private:
  torch::Tensor Attention(size_t k, const torch::Tensor& x);
  Block block_;
  NetShape shape_;
  int64_t width_;
  torch::nn::Linear patch_embed_{nullptr}, head_{nullptr};
  torch::Tensor positions_;
  torch::nn::LayerNorm final_norm_{nullptr};
  // Per sub-layer instance (repeats × non-"none" layers): its kind, norm and parts.
  std::vector<SubLayer> kinds_;
  std::vector<torch::nn::LayerNorm> norms_;
  std::vector<torch::nn::Linear> first_, second_;  // attention: qkv, out; dense: up, down
  std::vector<MoeFfn> moes_;                        // MoE sub-layers (null for the others)
  torch::Tensor aux_loss_;
  int64_t last_routed_ = 0;
};
TORCH_MODULE(BrainformerNet);

}  // namespace placerl::brainformer
