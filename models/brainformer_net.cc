#include "models/brainformer_net.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::brainformer {

MoeRouting RouteTokens(const torch::Tensor& logits, Gating gating, double capacity_factor) {
  if (logits.dim() != 2 || logits.size(0) < 1 || logits.size(1) < 1)
    throw ConfigError("RouteTokens: logits must be [tokens, experts] with both > 0");
  if (gating == Gating::kNone) throw ConfigError("RouteTokens: an MoE sub-layer needs a gating");
  const int64_t n = logits.size(0), e = logits.size(1);
  const torch::Tensor probs = torch::softmax(logits, 1);
  MoeRouting r;
  r.capacity = ExpertCapacity(gating, capacity_factor, n, static_cast<int32_t>(e));
  const int64_t c = r.capacity;
  const auto long_opts = torch::TensorOptions().dtype(torch::kLong);
  if (gating == Gating::kExpertChoice) {
    // Each expert takes the c tokens it gives the highest probability (Zhou et al. 2022).
    auto [gates, tokens] = probs.t().topk(c, 1);  // [E, c]
    r.token = tokens.reshape(-1);
    r.slot = torch::arange(e * c, long_opts);
    r.gate = gates.reshape(-1);
    const torch::Tensor covered = torch::zeros({n}, torch::kBool).index_fill_(0, r.token, true);
    r.dropped_tokens = n - covered.sum().item<int64_t>();
    r.aux_loss = torch::zeros({}, logits.options());
    return r;
  }
  const int64_t k = std::min<int64_t>(gating == Gating::kTop2 ? 2 : 1, e);
  auto [top_probs, top_experts] = probs.topk(k, 1);  // [N, k]
  // Top-2 renormalises its two weights (GShard); top-1 keeps the probability (Switch).
  const torch::Tensor gates = k > 1 ? top_probs / top_probs.sum(1, true) : top_probs;
  torch::Tensor filled = torch::zeros({e}, long_opts);  // slots taken so far per expert
  const torch::Tensor token_ids = torch::arange(n, long_opts);
  std::vector<torch::Tensor> tokens, slots, kept_gates;
  torch::Tensor token_kept = torch::zeros({n}, torch::kBool);
  torch::Tensor first_choice;
  for (int64_t j = 0; j < k; ++j) {
    const torch::Tensor expert = top_experts.select(1, j);
    const torch::Tensor onehot = torch::one_hot(expert, e);  // [N, E] long
    if (j == 0) first_choice = onehot;
    // Position of each token in its expert's buffer: earlier tokens (and earlier rounds) first.
    const torch::Tensor position = ((onehot.cumsum(0) - 1 + filled.unsqueeze(0)) * onehot).sum(1);
    filled = filled + onehot.sum(0);
    const torch::Tensor keep = position < c;
    tokens.push_back(token_ids.masked_select(keep));
    slots.push_back((expert * c + position).masked_select(keep));
    kept_gates.push_back(gates.select(1, j).masked_select(keep));
    token_kept = token_kept | keep;
  }
  r.token = torch::cat(tokens);
  r.slot = torch::cat(slots);
  r.gate = torch::cat(kept_gates);
  r.dropped_assignments = n * k - r.token.size(0);
  r.dropped_tokens = n - token_kept.sum().item<int64_t>();
  // Switch Transformer's load-balancing loss: E · Σ_e (fraction of first choices) · (mean probability).
  const torch::Tensor fraction = first_choice.to(probs.scalar_type()).mean(0);
  r.aux_loss = static_cast<double>(e) * (fraction * probs.mean(0)).sum();
  return r;
}

namespace {
// Linear's default initialisation: U(−1/√fan_in, 1/√fan_in).
torch::Tensor Uniform(std::vector<int64_t> sizes, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::empty(sizes).uniform_(-bound, bound);
}
}  // namespace

MoeFfnImpl::MoeFfnImpl(int64_t width, int64_t hidden, int64_t experts, Gating gating, double capacity_factor)
    : width_(width), hidden_(hidden), experts_(experts), gating_(gating), capacity_factor_(capacity_factor) {
  router_ = register_module("router", torch::nn::Linear(torch::nn::LinearOptions(width, experts).bias(false)));
  w1_ = register_parameter("w1", Uniform({experts, width, hidden}, width));
  b1_ = register_parameter("b1", torch::zeros({experts, 1, hidden}));
  w2_ = register_parameter("w2", Uniform({experts, hidden, width}, hidden));
  b2_ = register_parameter("b2", torch::zeros({experts, 1, width}));
}

torch::Tensor MoeFfnImpl::forward(const torch::Tensor& x) {
  last_ = RouteTokens(router_(x), gating_, capacity_factor_);
  const int64_t c = last_.capacity;
  const torch::Tensor buffer =
      torch::zeros({experts_ * c, width_}, x.options()).index_add(0, last_.slot, x.index_select(0, last_.token));
  const torch::Tensor h = torch::gelu(torch::baddbmm(b1_, buffer.view({experts_, c, width_}), w1_));
  const torch::Tensor y = torch::baddbmm(b2_, h, w2_).view({experts_ * c, width_});
  return torch::zeros_like(x).index_add(0, last_.token, y.index_select(0, last_.slot) * last_.gate.unsqueeze(1));
}

BrainformerNetImpl::BrainformerNetImpl(const Block& block, const NetShape& shape)
    : block_(block), shape_(shape), width_(TrainWidth(block, shape)) {
  if (shape.patch_size < 1 || shape.image_size % shape.patch_size != 0)
    throw ConfigError("patch size " + std::to_string(shape.patch_size) + " does not divide image size " +
                      std::to_string(shape.image_size));
  if (shape.repeats < 1) throw ConfigError("the block must be repeated at least once");
  const int64_t d = width_;
  patch_embed_ = register_module("patch_embed", torch::nn::Linear(shape.patch_pixels(), d));
  positions_ = register_parameter("positions", torch::randn({1, shape.tokens(), d}) * 0.02);
  for (int32_t rep = 0; rep < shape.repeats; ++rep)
    for (const SubLayer& l : block.layers) {
      if (l.type == SubLayerType::kNone) continue;
      const std::string name = "sub" + std::to_string(kinds_.size());
      kinds_.push_back(l);
      norms_.push_back(register_module(name + "_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}))));
      torch::nn::Linear first{nullptr}, second{nullptr};
      MoeFfn moe{nullptr};
      if (l.type == SubLayerType::kAttention) {
        const int64_t inner = AttentionInnerWidth(d, l.heads);
        first = register_module(name + "_qkv", torch::nn::Linear(d, 3 * inner));
        second = register_module(name + "_out", torch::nn::Linear(inner, d));
      } else if (l.type == SubLayerType::kDenseFfn) {
        first = register_module(name + "_up", torch::nn::Linear(d, l.ffn_ratio * d));
        second = register_module(name + "_down", torch::nn::Linear(l.ffn_ratio * d, d));
      } else {
        moe = register_module(name + "_moe", MoeFfn(d, l.ffn_ratio * d, TrainExperts(l, shape), l.gating,
                                                     l.capacity_factor));
      }
      first_.push_back(first);
      second_.push_back(second);
      moes_.push_back(moe);
    }
  final_norm_ = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  head_ = register_module("head", torch::nn::Linear(d, shape.num_classes));
}

torch::Tensor BrainformerNetImpl::Attention(size_t k, const torch::Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1), heads = kinds_[k].heads;
  const int64_t inner = AttentionInnerWidth(width_, heads), hd = inner / heads;
  const torch::Tensor qkv = first_[k](x).view({b, t, 3, heads, hd}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, hd]
  const torch::Tensor q = qkv[0], key = qkv[1], v = qkv[2];
  const torch::Tensor weights = torch::softmax(torch::matmul(q, key.transpose(-2, -1)) / std::sqrt(double(hd)), -1);
  return second_[k](torch::matmul(weights, v).transpose(1, 2).reshape({b, t, inner}));
}

torch::Tensor BrainformerNetImpl::forward(const torch::Tensor& images) {
  const int64_t b = images.size(0), p = shape_.patch_size, g = shape_.image_size / p, t = g * g;
  torch::Tensor x = images.reshape({b, g, p, g, p}).permute({0, 1, 3, 2, 4}).reshape({b, t, p * p});
  x = patch_embed_(x) + positions_;
  aux_loss_ = torch::zeros({}, x.options());
  last_routed_ = 0;
  for (size_t k = 0; k < kinds_.size(); ++k) {
    const torch::Tensor y = norms_[k](x);
    switch (kinds_[k].type) {
      case SubLayerType::kAttention:
        x = x + Attention(k, y);
        break;
      case SubLayerType::kDenseFfn:
        x = x + second_[k](torch::gelu(first_[k](y)));
        break;
      case SubLayerType::kMoeFfn:
        x = x + moes_[k](y.reshape({b * t, width_})).view({b, t, width_});
        aux_loss_ = aux_loss_ + moes_[k]->last_routing().aux_loss;
        last_routed_ += b * t;
        break;
      case SubLayerType::kNone:
        break;
    }
  }
  return head_(final_norm_(x).mean(1));
}

int64_t BrainformerNetImpl::last_dropped_tokens() const {
  int64_t dropped = 0;
  for (const MoeFfn& m : moes_)
    if (m) dropped += m->last_routing().dropped_tokens;
  return dropped;
}

int64_t BrainformerNetImpl::num_parameters() const {
  int64_t n = 0;
  for (const torch::Tensor& p : parameters()) n += p.numel();
  return n;
}

}  // namespace placerl::brainformer
