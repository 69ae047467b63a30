// CT's network (the ct_faithful preset): the per-step edge GCN, CT's readout, value head and
// 128×128 deconvolution policy head; see ct_faithful.h for the model.
#include "encoders/ct_faithful.h"

#include <algorithm>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::encoders {

CtFaithfulNetImpl::CtFaithfulNetImpl(const PolicyOptions& o, const FeatureLayout& l) : opt_(o), layout_(l) {
  if (o.embedding_dim < 1 || o.gcn_layers < 0)
    throw ConfigError("policy (ct_faithful): embedding_dim must be >= 1 and gcn_layers >= 0");
  torch::manual_seed(o.init_seed);
  const int64_t d = o.embedding_dim;
  const int64_t f = std::max<int64_t>(1, static_cast<int64_t>(l.node_feature_names.size())) +
                    static_cast<int64_t>(l.node_dynamic_names.size());
  const int64_t m = static_cast<int64_t>(l.metadata_names.size());
  node_in_ = register_module("node_in", torch::nn::Linear(f, d));
  if (m > 0) meta_in_ = register_module("meta_in", torch::nn::Linear(m, d));
  for (int32_t i = 0; i < o.gcn_layers; ++i)
    edge_fc_.push_back(
        register_module("gcn" + std::to_string(i), torch::nn::Linear(2 * d + 1 + l.edge_feature_dim, d)));
  att_query_ = register_module("att_query", torch::nn::Linear(d, d));
  att_key_ = register_module("att_key", torch::nn::Linear(d, d));
  att_value_ = register_module("att_value", torch::nn::Linear(d, d));
  const int64_t readout = (m > 0 ? 7 : 6) * d;
  value1_ = register_module("value1", torch::nn::Linear(readout, 32));
  value2_ = register_module("value2", torch::nn::Linear(32, 8));
  value3_ = register_module("value3", torch::nn::Linear(8, 1));
  if (l.kind == env::ActionKind::kGrid) {
    deconv_in_ = register_module("deconv_in", torch::nn::Linear(readout, 8 * 8 * 32));
    const int64_t channels[] = {32, 16, 8, 4, 2, 1};
    for (int i = 0; i < 5; ++i) {
      const bool last = i == 4;  // the last one keeps the size (stride 1)
      auto opts = torch::nn::ConvTranspose2dOptions(channels[i], channels[i + 1], 3)
                      .stride(last ? 1 : 2)
                      .padding(1)
                      .output_padding(last ? 0 : 1);
      deconv_.push_back(register_module("deconv" + std::to_string(i), torch::nn::ConvTranspose2d(opts)));
    }
  } else {
    if (l.fixed_actions < 1) throw ConfigError("policy: a device/choice policy needs the number of actions");
    choice_hidden_ = register_module("choice_hidden", torch::nn::Linear(readout, 32));
    choice_out_ = register_module("choice_out", torch::nn::Linear(32, l.fixed_actions));
  }
  // CT: Glorot-normal kernels, zero biases.
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    if (p.key().size() >= 4 && p.key().compare(p.key().size() - 4, 4, "bias") == 0) p.value().zero_();
    else torch::nn::init::xavier_normal_(p.value());
  }
}

StaticEmbedding CtFaithfulNetImpl::Encode(const GraphTensors& g) {
  StaticEmbedding s;
  s.node_static = g.node_features;
  s.edge_src = g.edge_src;
  s.edge_dst = g.edge_dst;
  s.edge_input = g.edge_input;
  s.inv_degree = g.inv_degree;
  s.metadata = g.metadata;
  return s;
}

CtFaithfulNetImpl::StepEncoding CtFaithfulNetImpl::EncodeSteps(const StaticEmbedding& emb, const StepBatch& batch) {
  const int64_t b = batch.current_node.size(0), n = emb.node_static.size(0), d = opt_.embedding_dim;
  torch::Tensor x = emb.node_static.unsqueeze(0).expand({b, n, emb.node_static.size(1)});
  if (batch.node_dynamic.defined()) x = torch::cat({x, batch.node_dynamic}, 2);
  torch::Tensor h = torch::relu(node_in_(x));  // [B, N, D]
  torch::Tensor e;                             // [B, E, D] of the last layer
  for (auto& fc : edge_fc_) {
    // Dense([h_i, h_j, w]) = A·h_i + B·h_j + C·w + bias with [A | B | C] = its weight.
    const torch::Tensor w_self = fc->weight.slice(1, 0, d), w_other = fc->weight.slice(1, d, 2 * d);
    const torch::Tensor w_edge = fc->weight.slice(1, 2 * d);
    const torch::Tensor a = h.matmul(w_self.t()), o = h.matmul(w_other.t());  // [B, N, D]
    const torch::Tensor c = emb.edge_input.matmul(w_edge.t()) + fc->bias;      // [E, D]
    const torch::Tensor a_src = a.index_select(1, emb.edge_src), a_dst = a.index_select(1, emb.edge_dst);
    const torch::Tensor o_src = o.index_select(1, emb.edge_src), o_dst = o.index_select(1, emb.edge_dst);
    e = (torch::relu(a_src + o_dst + c) + torch::relu(a_dst + o_src + c)) * 0.5;
    const torch::Tensor agg = torch::zeros_like(h).index_add(1, emb.edge_src, e).index_add(1, emb.edge_dst, e);
    h = h + agg * emb.inv_degree;  // [N, 1] broadcasts over B
  }
  if (!e.defined()) e = torch::zeros({b, 1, d});  // no GCN layers: the edge statistics are 0
  // The current node's embedding per step: rows b·N + current_node of h as [B·N, D].
  const torch::Tensor rows = torch::arange(b, torch::kLong) * n + batch.current_node;
  const torch::Tensor h_cur = h.reshape({b * n, d}).index_select(0, rows);  // [B, D]
  // Luong attention (dot product, no scaling — tf.keras.layers.Attention's default).
  const torch::Tensor scores = att_key_(h).matmul(att_query_(h_cur).unsqueeze(2)).squeeze(2);  // [B, N]
  const torch::Tensor attention =
      torch::softmax(scores, 1).unsqueeze(1).matmul(att_value_(h)).squeeze(1);  // [B, D]
  std::vector<torch::Tensor> parts;
  if (meta_in_) parts.push_back(torch::relu(meta_in_(emb.metadata)).expand({b, d}));
  const torch::Tensor e_mean = e.mean(1);
  parts.push_back(e_mean);
  parts.push_back((e - e_mean.unsqueeze(1)).pow(2).mean(1));  // population variance (tf.nn.moments)
  parts.push_back(std::get<0>(e.max(1)));
  parts.push_back(std::get<0>(e.min(1)));
  parts.push_back(attention);
  parts.push_back(h_cur);
  return {h, torch::cat(parts, 1)};
}

std::pair<torch::Tensor, torch::Tensor> CtFaithfulNetImpl::Forward(const StaticEmbedding& emb, const StepBatch& batch) {
  const env::ActionSpec& spec = batch.spec;
  if (spec.kind == env::ActionKind::kGrid && (spec.cols > kGridSize || spec.rows > kGridSize))
    throw ConfigError("policy (ct_faithful): grid " + std::to_string(spec.cols) + "x" + std::to_string(spec.rows) +
                      " exceeds CT's 128x128 policy head");
  const int64_t total = batch.current_node.size(0);
  if (total > kChunk) {
    // Chunks keep every per-edge tensor [chunk, E, D] below glibc's mmap threshold (32 MB at
    // most): a 128-sample minibatch on Ariane133 would otherwise map and fault in ~40 MB per
    // tensor on every op (measured: half the CPU time in the kernel).
    std::vector<torch::Tensor> logits, values;
    for (int64_t begin = 0; begin < total; begin += kChunk) {
      const int64_t end = std::min(total, begin + kChunk);
      StepBatch part;
      part.spec = spec;
      part.current_node = batch.current_node.slice(0, begin, end);
      if (batch.node_dynamic.defined()) part.node_dynamic = batch.node_dynamic.slice(0, begin, end);
      part.illegal = batch.illegal.slice(0, begin, end);
      auto [l, v] = Forward(emb, part);
      logits.push_back(l);
      values.push_back(v);
    }
    return {torch::cat(logits), torch::cat(values)};
  }
  const torch::Tensor r = EncodeSteps(emb, batch).readout;
  const int64_t b = r.size(0);
  const torch::Tensor value = value3_(torch::relu(value2_(torch::relu(value1_(r))))).squeeze(1);
  torch::Tensor logits;
  if (deconv_in_) {
    torch::Tensor x = torch::relu(deconv_in_(r)).reshape({b, 32, 8, 8});
    for (size_t i = 0; i < deconv_.size(); ++i) {
      x = deconv_[i](x);
      if (i + 1 < deconv_.size()) x = torch::relu(x);
    }
    // [B, 1, 128, 128] → the real grid in the top-left corner, row-major.
    logits = x.squeeze(1).slice(1, 0, spec.rows).slice(2, 0, spec.cols).reshape({b, spec.num_actions()});
  } else {
    logits = choice_out_(torch::relu(choice_hidden_(r)));
  }
  return {logits.masked_fill(batch.illegal, -1e9), value};
}

}  // namespace placerl::encoders
