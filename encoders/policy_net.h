// The LibTorch module behind encoders::Policy: CT's edge-centric GCN on the static graph
// (reference notes §1.8) and one head for every action kind. Only LibTorch code includes this.
//
// Encoder (once per instance; in training once per minibatch, with gradient):
//   h = ReLU(Dense(node_features));  per layer ℓ, for every edge (i, j, w):
//   e_ij = (ReLU(W_ℓ[h_i, h_j, w]) + ReLU(W_ℓ[h_j, h_i, w])) / 2,  h_i += mean of e over i's edges.
//   W_ℓ[a, b, w] is factored as A·a + B·b + c·w + d so that A·h and B·h are computed per node,
//   not per edge. Context = [mean_i h_i, max_i h_i, ReLU(Dense(metadata))].
// Head (per step; B steps of one instance at a time):
//   s = [context, h_cur, attention readout over h with query from h_cur,
//        mean_i (node_dynamic_i ⊗ h_i), edge-weighted mean of node_dynamic over the current
//        node's neighbours] → z = MLP(s);  value = Dense(z);
//   grid cell a: logit_a = v · ReLU(F·action_features_a + P·pos_a + Z·z + N·neighbour) + c, pos_a
//   = the cell centre in [0,1]² (so the head is not tied to cols × rows; F only when the env has
//   action_features); devices / choices: logit_a = (Q·z)·E_a + M_a·neighbour, E_a a learned
//   action embedding (plus the MLP term when they have action_features); −1e9 where mask = 0.
// Inference caches (PrecomputeForInference): every node's readout and the P·pos term.
//
// With PolicyOptions::preset = kCtFaithful the module holds CT's network instead
// (encoders/ct_faithful.h, registered as "ct"), behind the same Encode / Forward, so that
// Policy, the rollouts and the learners run either. With kLstm it holds the autoregressive
// seq2seq / ENAS network (encoders/lstm_policy.h, registered as "lstm"): Encode is shared,
// the per-step part needs the episode's action prefix (lstm_policy.h's Step / Decode).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "encoders/policy.h"

namespace placerl::encoders {

// The static graph as tensors and a CSR adjacency, built once per instance (no gradient).
struct GraphTensors {
  int32_t num_nodes = 0;
  torch::Tensor node_features;  // [N, F]
  torch::Tensor edge_src, edge_dst;  // [E] int64
  torch::Tensor edge_input;     // [E, 1 + edge_feature_dim] (weight, edge features)
  torch::Tensor inv_degree;     // [N, 1] 1 / (count + 1e-6)
  torch::Tensor metadata;       // [M]
  // CSR of the undirected adjacency with row-normalised weights (neighbour summaries).
  std::vector<int32_t> adj_offset, adj_node;
  std::vector<float> adj_weight;
};
GraphTensors MakeGraphTensors(const env::StaticGraph& g);

// Edge-weighted mean of node_dynamic [N, C] over the neighbours of `node` → out[C].
void NeighbourDynamic(const GraphTensors& g, int32_t node, const float* node_dynamic, int32_t channels,
                      float* out);

struct StaticEmbedding {
  torch::Tensor node;     // [N, D]
  torch::Tensor context;  // [3D] (or [2D] without metadata)
  torch::Tensor keys, values;  // [N, D] attention
  torch::Tensor node_t;        // [D, N] (contiguous) for the placed-state summary
  // Inference only (PrecomputeForInference; no gradient): the attention readout of every node
  // as the current one [N, D], and the grid cells' position term [A, K].
  torch::Tensor readout, pos_hidden;
  // ct_faithful: the graph itself (its GCN runs per step on the step's node inputs).
  torch::Tensor node_static, edge_src, edge_dst, edge_input, inv_degree, metadata;
  // lstm (inference only): the decoder input's gate terms enc_t·W_ih + biases [N, 4H] and
  // Emb_a·W_ih [A + 1, 4H].
  torch::Tensor node_gates, action_gates;
};

// B decisions on one instance.
struct StepBatch {
  torch::Tensor current_node;       // [B] int64
  torch::Tensor node_dynamic;       // [B, N, C] (undefined when C = 0)
  torch::Tensor neighbour_dynamic;  // [B, C]
  torch::Tensor illegal;            // [B, A] bool: mask == 0
  torch::Tensor action_features;    // [B, Ca, A] (undefined when Ca = 0)
  env::ActionSpec spec;
};

class CtFaithfulNetImpl;  // encoders/ct_faithful.h
class LstmPolicyNetImpl;  // encoders/lstm_policy.h

// l ← C·tanh(l / T) (C = logit_tanh_constant, 0 = no tanh; T = logit_temperature): what every
// preset but ct_faithful applies to its logits before masking.
torch::Tensor BoundLogits(const torch::Tensor& logits, const PolicyOptions& o);

class PolicyNetImpl : public torch::nn::Module {
 public:
  PolicyNetImpl(const PolicyOptions& options, const FeatureLayout& layout);

  StaticEmbedding Encode(const GraphTensors& g);
  // Masked logits [B, A] and values [B].
  std::pair<torch::Tensor, torch::Tensor> Forward(const StaticEmbedding& emb, const StepBatch& batch);
  // Fills emb's inference caches (readout of every node, grid position term); call without
  // gradient, and again after the weights change.
  void PrecomputeForInference(StaticEmbedding* emb, const env::ActionSpec& spec);

  const PolicyOptions& options() const { return opt_; }
  const FeatureLayout& layout() const { return layout_; }
  // CT's network when options().preset is kCtFaithful, else null.
  CtFaithfulNetImpl* ct_faithful() const { return ct_.get(); }
  // The seq2seq / ENAS network when options().preset is kLstm, else null. Its decisions depend
  // on the episode's previous actions, which a StepBatch does not carry: Policy and the
  // learners call it directly (Forward throws for it).
  LstmPolicyNetImpl* lstm() const { return lstm_.get(); }

 private:
  torch::Tensor ActionPositions(const env::ActionSpec& spec);  // [A, 2] for grids, cached
  torch::Tensor Readout(const StaticEmbedding& emb, const torch::Tensor& h_cur);  // [B, D]
  // mean_i h_i ⊗ node_dynamic_i → [B, D, C]; a hand-written loop for one step without gradient.
  torch::Tensor PlacedSummary(const StaticEmbedding& emb, const torch::Tensor& node_dynamic);

  PolicyOptions opt_;
  FeatureLayout layout_;
  int32_t dyn_channels_ = 0, action_channels_ = 0;
  torch::nn::Linear node_in_{nullptr}, meta_in_{nullptr};
  std::vector<torch::nn::Linear> edge_self_, edge_other_, edge_weight_;
  torch::nn::Linear att_query_{nullptr}, att_key_{nullptr}, att_value_{nullptr};
  torch::nn::Linear trunk1_{nullptr}, trunk2_{nullptr}, value_{nullptr};
  torch::nn::Linear action_feat_{nullptr}, action_pos_{nullptr}, action_ctx_{nullptr}, action_out_{nullptr}, action_query_{nullptr},
      action_neighbour_{nullptr};
  torch::Tensor action_embedding_;  // [n, K] for devices / choices
  torch::Tensor action_dynamic_;    // [n, C]: logit_a += Σ_c M[a, c] · neighbour_dynamic_c
  int32_t pos_cols_ = -1, pos_rows_ = -1;
  torch::Tensor pos_cache_;
  std::shared_ptr<CtFaithfulNetImpl> ct_;
  std::shared_ptr<LstmPolicyNetImpl> lstm_;
};
TORCH_MODULE(PolicyNet);

// Builds a one-step batch from an environment's current state (tensors view env's buffers:
// valid until its next step).
StepBatch StepBatchOf(const GraphTensors& g, const env::Environment& env, std::vector<float>* neighbour_scratch);
// A batch of the current states of `count` environments of the SAME instance (graph `g`),
// copied into new tensors.
StepBatch StepBatchOf(const GraphTensors& g, const env::Environment* const* envs, int32_t count);

// Named parameters as an archive, and back (checking names and shapes; weights that are not
// all finite — NaN or infinity — are refused: ConfigError naming the weight).
void SaveWeights(PolicyNetImpl& net, torch::serialize::OutputArchive& archive);
void LoadWeights(PolicyNetImpl& net, torch::serialize::InputArchive& archive);

// A checkpoint file's bytes (encoders/checkpoint_file.h: header with length and checksum, then
// the archive) read into `archive`; ConfigError "<name>: <reason>" (truncated, damaged, not a
// checkpoint).
void LoadCheckpointArchive(const std::string& file_bytes, const std::string& name,
                           torch::serialize::InputArchive* archive);
// `archive` as checkpoint file bytes (with the header).
std::string CheckpointFileBytes(torch::serialize::OutputArchive& archive);
// Runs `load` (reading entries of an opened checkpoint); a ConfigError / ParseError / LibTorch
// error it throws that does not name `name` yet is re-thrown as ConfigError "<name>: <reason>".
void WithCheckpointName(const std::string& name, const std::function<void()>& load);

// A string stored in an archive as a uint8 tensor.
void WriteString(torch::serialize::OutputArchive& a, const std::string& key, const std::string& s);
std::string ReadString(torch::serialize::InputArchive& a, const std::string& key);

}  // namespace placerl::encoders
