// The seq2seq / ENAS LSTM policy (the lstm preset); see lstm_policy.h for the model.
#include "encoders/lstm_policy.h"

#include <string>

#include "datasets/util/errors.h"

namespace placerl::encoders {

namespace {
// The first of `count` consecutive names prefix0, prefix1, … in `names`, or -1.
int32_t FindOneHot(const std::vector<std::string>& names, const std::string& prefix, int32_t count) {
  for (size_t i = 0; i + count <= names.size(); ++i) {
    bool all = true;
    for (int32_t k = 0; k < count && all; ++k) all = names[i + k] == prefix + std::to_string(k);
    if (all) return static_cast<int32_t>(i);
  }
  return -1;
}
}  // namespace

LstmPolicyNetImpl::LstmPolicyNetImpl(const PolicyOptions& o, const FeatureLayout& l) : opt_(o), layout_(l) {
  if (o.embedding_dim < 1 || o.hidden_dim < 1) throw ConfigError("policy (lstm): embedding_dim and hidden_dim must be >= 1");
  if (l.kind == env::ActionKind::kGrid)
    throw ConfigError("policy (lstm): grid actions are not supported (devices and choices only)");
  if (l.fixed_actions < 1) throw ConfigError("policy (lstm): needs the number of actions");
  if (o.lstm_attention && o.lstm_encoder == LstmEncoder::kNone)
    throw ConfigError("policy (lstm): attention needs an encoder (lstm_encoder=none has nothing to attend to)");
  num_actions_ = l.fixed_actions;
  dyn_channels_ = static_cast<int32_t>(l.node_dynamic_names.size());
  action_channel_ = FindOneHot(l.node_dynamic_names, "on_device_", num_actions_);
  if (action_channel_ < 0) action_channel_ = FindOneHot(l.node_dynamic_names, "choice_", num_actions_);
  if (action_channel_ < 0)
    throw ConfigError("policy (lstm): the environment's node_dynamic has no one-hot of the action taken (on_device_0.." +
                      std::to_string(num_actions_ - 1) + " or choice_0.." + std::to_string(num_actions_ - 1) +
                      "): the decoder could not follow an episode");
  torch::manual_seed(o.init_seed);
  const int64_t e = o.embedding_dim, h = o.hidden_dim;
  const int64_t f = std::max<int64_t>(1, static_cast<int64_t>(l.node_feature_names.size()));
  node_in_ = register_module("node_in", torch::nn::Linear(2 * f, e));
  if (o.lstm_encoder != LstmEncoder::kNone) {
    const bool bi = o.lstm_encoder == LstmEncoder::kBidirectional;
    encoder_ = register_module("encoder", torch::nn::LSTM(torch::nn::LSTMOptions(e, h).bidirectional(bi)));
    enc_dim_ = static_cast<int32_t>(bi ? 2 * h : h);
  } else {
    enc_dim_ = static_cast<int32_t>(e);
  }
  decoder_ = register_module("decoder", torch::nn::LSTM(torch::nn::LSTMOptions(e + enc_dim_, h)));
  action_embedding_ = register_parameter("action_embedding", torch::randn({num_actions_ + 1, e}) * 0.1);
  if (o.lstm_attention)
    att_key_ = register_module("att_key", torch::nn::Linear(torch::nn::LinearOptions(enc_dim_, h).bias(false)));
  combine_ = register_module("combine", torch::nn::Linear((o.lstm_attention ? h + enc_dim_ : h), h));
  logits_ = register_module("logits", torch::nn::Linear(h, num_actions_));
  value_ = register_module("value", torch::nn::Linear(h, 1));
  torch::NoGradGuard no_grad;
  logits_->weight.mul_(0.1);  // start near the uniform policy
  logits_->bias.zero_();
}

void LstmPolicyNetImpl::CheckDecisionOrder(const env::DynamicState& s, const std::string& env_name) {
  if (s.current_node != s.step)
    throw ConfigError("policy (lstm): environment " + env_name + " decides node " + std::to_string(s.current_node) +
                      " at step " + std::to_string(s.step) +
                      "; the lstm preset needs node t decided at step t (decision order = node order)");
}

int32_t LstmPolicyNetImpl::ActionOf(const float* node_dynamic, int32_t node) const {
  const float* row = node_dynamic + static_cast<size_t>(node) * dyn_channels_ + action_channel_;
  for (int32_t a = 0; a < num_actions_; ++a)
    if (row[a] > 0.5f) return a;
  return -1;
}

StaticEmbedding LstmPolicyNetImpl::Encode(const GraphTensors& g) {
  StaticEmbedding emb;
  // Adjacency: the mean of the neighbours' features (both directions).
  const torch::Tensor x = g.node_features;
  torch::Tensor neighbours = torch::zeros_like(x);
  if (g.edge_src.numel() > 0)
    neighbours = neighbours.index_add(0, g.edge_src, x.index_select(0, g.edge_dst))
                     .index_add(0, g.edge_dst, x.index_select(0, g.edge_src)) *
                 g.inv_degree;
  const torch::Tensor u = torch::relu(node_in_(torch::cat({x, neighbours}, 1)));  // [N, E]
  if (encoder_) {
    emb.node = std::get<0>(encoder_->forward(u.unsqueeze(1))).squeeze(1);  // [N, De]
  } else {
    emb.node = u;
  }
  if (att_key_) emb.keys = att_key_(emb.node);  // [N, H]
  return emb;
}

void LstmPolicyNetImpl::PrecomputeForInference(StaticEmbedding* emb) {
  torch::NoGradGuard no_grad;
  const int64_t e = opt_.embedding_dim;
  const torch::Tensor w_ih = decoder_->named_parameters()["weight_ih_l0"];  // [4H, E + De]
  const torch::Tensor bias = decoder_->named_parameters()["bias_ih_l0"] + decoder_->named_parameters()["bias_hh_l0"];
  emb->action_gates = action_embedding_.matmul(w_ih.slice(1, 0, e).t()).contiguous();          // [A + 1, 4H]
  emb->node_gates = (emb->node.matmul(w_ih.slice(1, e).t()) + bias).contiguous();              // [N, 4H]
}

std::pair<torch::Tensor, torch::Tensor> LstmPolicyNetImpl::Cell(const StaticEmbedding& emb, const torch::Tensor& node,
                                                                const torch::Tensor& previous_action,
                                                                const torch::Tensor& h, const torch::Tensor& c) {
  torch::Tensor gates = emb.node_gates.index_select(0, node) + emb.action_gates.index_select(0, previous_action);
  if (h.defined()) gates = gates.addmm_(h, decoder_->named_parameters()["weight_hh_l0"].t());
  // PyTorch's gate order: input, forget, cell, output.
  const auto chunks = gates.chunk(4, 1);
  const torch::Tensor i = torch::sigmoid(chunks[0]), f = torch::sigmoid(chunks[1]), g = torch::tanh(chunks[2]),
                      o = torch::sigmoid(chunks[3]);
  const torch::Tensor c_new = c.defined() ? f * c + i * g : i * g;
  return {o * torch::tanh(c_new), c_new};
}

torch::Tensor LstmPolicyNetImpl::Decode(const StaticEmbedding& emb, const torch::Tensor& previous_actions) {
  const int64_t t = previous_actions.size(0), s = previous_actions.size(1);
  if (t > emb.node.size(0))
    throw ConfigError("policy (lstm): an episode has more decisions (" + std::to_string(t) + ") than nodes (" +
                      std::to_string(emb.node.size(0)) + ")");
  const torch::Tensor acts = action_embedding_.index_select(0, previous_actions.reshape({-1})).reshape({t, s, -1});
  const torch::Tensor enc = emb.node.slice(0, 0, t).unsqueeze(1).expand({t, s, enc_dim_});
  return std::get<0>(decoder_->forward(torch::cat({acts, enc}, 2)));  // [T, S, H]
}

std::pair<torch::Tensor, torch::Tensor> LstmPolicyNetImpl::Head(const StaticEmbedding& emb, const torch::Tensor& h,
                                                                const torch::Tensor& illegal) {
  torch::Tensor z;
  if (att_key_) {
    const torch::Tensor alpha = torch::softmax(h.matmul(emb.keys.t()), 1);  // [B, N]
    z = torch::tanh(combine_(torch::cat({h, alpha.matmul(emb.node)}, 1)));
  } else {
    z = torch::tanh(combine_(h));
  }
  const torch::Tensor logits = BoundLogits(logits_(z), opt_);
  return {logits.masked_fill(illegal, -1e9), value_(z).squeeze(1)};
}

}  // namespace placerl::encoders
