// Transformer and MoE Transformer training graphs (conventions in transformer_graphs.h).
#include "datasets/graphs/transformer_graphs.h"

#include <cmath>
#include <string>
#include <vector>

#include "datasets/graphs/op_list.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

class TransformerBuilder {
 public:
  explicit TransformerBuilder(const TransformerGraphConfig& c)
      : c_(c), ops_(c.element_bytes), N_(static_cast<double>(c.batch) * c.seq), d_(c.d_model) {}

  ComputeGraph Build() {
    Tensor memory;
    if (c_.enc_layers > 0) {
      Tensor x = Embed("enc/");
      for (int k = 1; k <= c_.enc_layers; ++k) x = Layer("enc/l" + std::to_string(k) + "/", k, x, {});
      memory = x;
    }
    Tensor x = Embed("");
    for (int k = 1; k <= c_.layers; ++k) x = Layer("l" + std::to_string(k) + "/", k, x, memory);
    const double V = c_.vocab;
    const Tensor logits =
        ops_.Add("logits", "matmul", 2 * N_ * d_ * V, ops_.Bytes(N_ * d_ + d_ * V + N_ * V), N_ * V, V * d_ + V, {x});
    const Tensor xent = ops_.Add("xent", "softmax", 5 * N_ * V, ops_.Bytes(N_ * V + N_), N_, 0, {logits});
    ops_.Add("loss", "reduction", N_, ops_.Bytes(N_ + 1), 1, 0, {xent});
    return BuildComputeGraph(ops_.Finish(c_.update));
  }

 private:
  // A dense layer on `rows` rows owning its weights (in·out + out).
  Tensor Dense(const std::string& name, const Tensor& x, double rows, double in, double out) {
    return ops_.Add(name, "matmul", 2 * rows * in * out, ops_.Bytes(rows * in + in * out + rows * out), rows * out,
                    in * out + out, {x});
  }
  Tensor Norm(const std::string& name, const Tensor& x) {
    return ops_.Add(name, "norm", 8 * x.elems, ops_.Bytes(2 * x.elems), x.elems, 2 * d_, {x});
  }
  Tensor Embed(const std::string& p) {
    const Tensor lookup = ops_.Add(p + "emb/lookup", "gather", 0, ops_.Bytes(2 * N_ * d_), N_ * d_,
                                   static_cast<double>(c_.vocab) * d_, {});
    return ops_.Add(p + "emb/pos", "elementwise", N_ * d_, ops_.Bytes(2 * N_ * d_ + c_.seq * d_), N_ * d_,
                    static_cast<double>(c_.seq) * d_, {lookup});
  }
  // Multi-head attention with queries from x and keys/values from kv; then residual + LN.
  Tensor Attention(const std::string& p, const Tensor& x, const Tensor& kv) {
    const double s = c_.seq, B = c_.batch, h = c_.heads;
    const Tensor q = Dense(p + "q", x, N_, d_, d_), k = Dense(p + "k", kv, N_, d_, d_),
                 v = Dense(p + "v", kv, N_, d_, d_);
    const double scores = B * h * s * s;
    const Tensor sc =
        ops_.Add(p + "scores", "matmul", 2 * B * s * s * d_, ops_.Bytes(2 * N_ * d_ + scores), scores, 0, {q, k});
    const Tensor sm = ops_.Add(p + "softmax", "softmax", 5 * scores, ops_.Bytes(2 * scores), scores, 0, {sc});
    const Tensor ctx =
        ops_.Add(p + "context", "matmul", 2 * B * s * s * d_, ops_.Bytes(scores + 2 * N_ * d_), N_ * d_, 0, {sm, v});
    const Tensor out = Dense(p + "out", ctx, N_, d_, d_);
    return Norm(p + "ln", ops_.Elementwise(p + "residual", "elementwise", N_ * d_, {out, x}));
  }
  Tensor Ffn(const std::string& p, const Tensor& x) {
    const double f = c_.d_ff;
    const Tensor h1 = Dense(p + "ffn1", x, N_, d_, f);
    const Tensor r = ops_.Elementwise(p + "relu", "elementwise", N_ * f, {h1});
    const Tensor h2 = Dense(p + "ffn2", r, N_, f, d_);
    return Norm(p + "ln", ops_.Elementwise(p + "residual", "elementwise", N_ * d_, {h2, x}));
  }
  Tensor Moe(const std::string& p, const Tensor& x) {
    const double E = c_.experts, f = c_.d_ff;
    const double cap = std::ceil(2 * N_ / E);  // top-2 routing, capacity factor 1
    const Tensor gate = Dense(p + "gate", x, N_, d_, E);
    const Tensor dispatch = ops_.Add(p + "dispatch", "softmax", 2 * N_ * E * cap * d_ + 5 * N_ * E,
                                     ops_.Bytes(N_ * d_ + N_ * E + E * cap * d_), E * cap * d_, 0, {gate, x});
    std::vector<Tensor> outs;
    for (int j = 0; j < c_.experts; ++j) {
      const std::string e = p + "e" + std::to_string(j) + "/";
      const Tensor part{dispatch.op, cap * d_};
      const Tensor h1 = Dense(e + "ffn1", part, cap, d_, f);
      const Tensor r = ops_.Elementwise(e + "relu", "elementwise", cap * f, {h1});
      outs.push_back(Dense(e + "ffn2", r, cap, f, d_));
    }
    outs.push_back(gate);
    const Tensor combine = ops_.Add(p + "combine", "matmul", 2 * N_ * E * cap * d_,
                                    ops_.Bytes(E * cap * d_ + N_ * E + N_ * d_), N_ * d_, 0, outs);
    return Norm(p + "ln", ops_.Elementwise(p + "residual", "elementwise", N_ * d_, {combine, x}));
  }
  Tensor Layer(const std::string& p, int k, Tensor x, const Tensor& memory) {
    x = Attention(p + "attn/", x, x);
    if (memory.op >= 0) x = Attention(p + "cross/", x, memory);
    const bool moe = c_.experts > 0 && k % c_.moe_every == 0;
    return moe ? Moe(p + "moe/", x) : Ffn(p + "ffn/", x);
  }

  const TransformerGraphConfig& c_;
  OpList ops_;
  const double N_, d_;  // tokens per step, model width
};

}  // namespace

ComputeGraph MakeTransformerGraph(const TransformerGraphConfig& c) {
  for (int v : {c.layers, c.d_model, c.d_ff, c.heads, c.seq, c.batch, c.vocab, c.moe_every})
    if (v < 1)
      throw ConfigError(
          "transformer graph: layers, d_model, d_ff, heads, seq, batch, vocab and moe_every must be >= 1");
  if (c.enc_layers < 0 || c.experts < 0) throw ConfigError("transformer graph: enc_layers and experts must be >= 0");
  if (c.d_model % c.heads != 0)
    throw ConfigError("transformer graph: heads (" + std::to_string(c.heads) + ") must divide d_model (" +
                      std::to_string(c.d_model) + ")");
  OpList::CheckOpEstimate("transformer graph",
                          (static_cast<double>(c.layers) + c.enc_layers) * (30.0 + 3.0 * c.experts));
  return TransformerBuilder(c).Build();
}

}  // namespace placerl::graphs
