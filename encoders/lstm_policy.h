// The `lstm` policy preset: the autoregressive LSTM policy of the 2017 seq2seq device placer
// (Mirhoseini et al., ICML 2017; HDP's placer — reference device_placement_notes.md §1.2–§1.3)
// and of the ENAS controller (Pham et al. 2018; nas_notes.md), in LibTorch. Only LibTorch code
// includes this; encoders::Policy selects it with PolicyOptions::preset = kLstm.
//
// Decision order (checked, ConfigError otherwise): decision t of an episode decides graph node
// t (DynamicState::current_node == step). Both the device environment (one decision per
// co-location group, nodes numbered in decision order) and the block environment (one node per
// decision) do this. The action taken at step t is readable from node t's dynamic features as
// a one-hot over the channels `on_device_0…` (device) or `choice_0…` (block); the layout must
// have them (ConfigError otherwise) so that inference can follow an episode without being told
// its actions.
//
// Encoder (once per instance, like the GCN's static embedding; in training once per minibatch,
// with gradient):
//   x_i = [node_features_i, mean of node_features over i's graph neighbours]  (2017's "op type,
//         output shape, adjacency": what the environment's static node features carry, plus the
//         adjacency as the neighbours' mean)
//   u_i = ReLU(Dense_E(x_i));  enc = LSTM(u_0 … u_{N−1})  bidirectional (2H) / unidirectional
//   (H) in decision order, or enc = u with lstm_encoder = none (ENAS: no encoder).
// Decoder (one LSTM layer, H units): input at step t = [Emb(a_{t−1}), enc_t], Emb a learned
//   [A + 1, E] table whose last row is the start symbol (t = 0). Content attention (Luong's
//   "general" score) over the encoder outputs: α = softmax_i(enc_i·W_k·h_t), ctx = Σ α_i enc_i;
//   z = tanh(Dense_H([h_t, ctx])) (z = tanh(Dense_H(h_t)) without attention);
//   logits = C·tanh(Dense_A(z) / T) (PolicyOptions::logit_tanh_constant / logit_temperature,
//   ENAS's bounded logits; none when C = 0), −1e9 where masked; value = Dense_1(z) (PPO).
// Inference: the decoder input's gate terms are precomputed per instance (enc_t·W_ih and
// Emb·W_ih), so a step costs one [B, H]·[H, 4H] product and the attention; Policy keeps each
// environment's decoder state between its steps (O(1) cells per step). Training: the decoder
// runs teacher-forced over every episode of a minibatch in one LSTM call over [T, S, ·].
#pragma once

#include <torch/torch.h>

#include <utility>

#include "encoders/policy_net.h"

namespace placerl::encoders {

class LstmPolicyNetImpl : public torch::nn::Module {
 public:
  LstmPolicyNetImpl(const PolicyOptions& options, const FeatureLayout& layout);

  int32_t num_actions() const { return num_actions_; }
  int32_t hidden() const { return opt_.hidden_dim; }
  int32_t start_symbol() const { return num_actions_; }  // the decoder input at t = 0

  // enc [N, De] in emb.node, attention keys W_k·enc [N, H] in emb.keys.
  StaticEmbedding Encode(const GraphTensors& g);
  // The decoder input's gate terms (no gradient; again after the weights change).
  void PrecomputeForInference(StaticEmbedding* emb);

  // One decoder cell for B environments: node t [B], previous action (or start_symbol()) [B],
  // state (h, c) [B, H] each (undefined = zeros) → the new state. Needs PrecomputeForInference.
  std::pair<torch::Tensor, torch::Tensor> Cell(const StaticEmbedding& emb, const torch::Tensor& node,
                                               const torch::Tensor& previous_action, const torch::Tensor& h,
                                               const torch::Tensor& c);
  // Teacher-forced decoder over S sequences: previous_actions [T, S] (row 0 = start_symbol())
  // → decoder outputs h_t [T, S, H] (one LSTM call; decision t reads enc_t).
  torch::Tensor Decode(const StaticEmbedding& emb, const torch::Tensor& previous_actions);
  // Masked logits [B, A] and values [B] from decoder outputs h [B, H]; illegal [B, A] bool.
  std::pair<torch::Tensor, torch::Tensor> Head(const StaticEmbedding& emb, const torch::Tensor& h,
                                               const torch::Tensor& illegal);

  // The action taken at node `node` read from node_dynamic [N, C] (its one-hot channels), or -1
  // when none is set.
  int32_t ActionOf(const float* node_dynamic, int32_t node) const;
  // ConfigError unless node t is decided at step t (see the header).
  static void CheckDecisionOrder(const env::DynamicState& s, const std::string& env_name);

 private:
  PolicyOptions opt_;
  FeatureLayout layout_;
  int32_t num_actions_ = 0, action_channel_ = 0, dyn_channels_ = 0, enc_dim_ = 0;
  torch::nn::Linear node_in_{nullptr};
  torch::nn::LSTM encoder_{nullptr}, decoder_{nullptr};
  torch::Tensor action_embedding_;  // [A + 1, E]
  torch::nn::Linear att_key_{nullptr}, combine_{nullptr}, logits_{nullptr}, value_{nullptr};
};
TORCH_MODULE(LstmPolicyNet);

}  // namespace placerl::encoders
