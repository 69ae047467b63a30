// ENAS-like cifar10 / ptb cell graphs (conventions in enas_graphs.h).
#include "datasets/graphs/enas_graphs.h"

#include <string>
#include <vector>

#include "datasets/graphs/op_list.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

// One drawn cell: per node i ≥ 2, inputs (a, b) among earlier nodes and their op types.
struct ConvCellArch {
  std::vector<int> a, b, op_a, op_b;
};

constexpr int kConvOpTypes = 7;  // conv3, conv5, sep3, sep5, avgpool, maxpool, identity

ConvCellArch DrawConvCell(SplitMix& rng, int nodes) {
  ConvCellArch arch;
  for (int i = 2; i < nodes + 2; ++i) {
    arch.a.push_back(rng.Below(i));
    arch.b.push_back(rng.Below(i));
    arch.op_a.push_back(rng.Below(kConvOpTypes));
    arch.op_b.push_back(rng.Below(kConvOpTypes));
  }
  return arch;
}

struct Fmap {  // feature map: producing op and per-image shape (square)
  Tensor t;
  int c, hw;
};

class ConvCellBuilder {
 public:
  explicit ConvCellBuilder(const EnasConfig& c) : c_(c), ops_(c.element_bytes), B_(c.batch) {}

  ComputeGraph Build() {
    SplitMix rng(c_.seed);
    const ConvCellArch normal = DrawConvCell(rng, c_.nodes), reduce = DrawConvCell(rng, c_.nodes);
    int C = c_.channels, hw = c_.image;
    Fmap x = Conv("stem/conv", {Tensor{-1, B_ * 3 * hw * hw}, 3, hw}, C, 3, 1);
    x = Norm("stem/bn", x);
    Fmap prev2 = x, prev = x;
    int k = 0;
    for (int stage = 0; stage < 3; ++stage) {
      if (stage > 0) {
        C *= 2;
        hw = (hw + 1) / 2;
        const Fmap y = Cell("cell" + std::to_string(++k) + "/", reduce, prev2, prev, C, hw);
        prev2 = prev;
        prev = y;
      }
      for (int n = 0; n < c_.cells; ++n) {
        const Fmap y = Cell("cell" + std::to_string(++k) + "/", normal, prev2, prev, C, hw);
        prev2 = prev;
        prev = y;
      }
    }
    const double in = prev.c, out = c_.classes;
    const Tensor pool =
        ops_.Add("avgpool", "reduction", prev.t.elems, ops_.Bytes(prev.t.elems + B_ * in), B_ * in, 0, {prev.t});
    const Tensor fc = ops_.Add("fc", "matmul", 2 * B_ * in * out, ops_.Bytes(B_ * (in + out) + in * out), B_ * out,
                               (in + 1) * out, {pool});
    const Tensor xent = ops_.Add("xent", "softmax", 5 * B_ * out, ops_.Bytes(B_ * out + B_), B_, 0, {fc});
    ops_.Add("loss", "reduction", B_, ops_.Bytes(B_ + 1), 1, 0, {xent});
    return BuildComputeGraph(ops_.Finish(c_.update));
  }

 private:
  static int Out(int in, int stride) { return (in + stride - 1) / stride; }  // "same" padding
  double Elems(int c, int hw) const { return B_ * c * static_cast<double>(hw) * hw; }

  Fmap Conv(const std::string& name, const Fmap& x, int cout, int k, int stride) {
    const int hw = Out(x.hw, stride);
    const double out = Elems(cout, hw), w = static_cast<double>(k) * k * x.c * cout;
    const Tensor t = ops_.Add(name, "conv", 2 * out * k * k * x.c, ops_.Bytes(x.t.elems + out + w), out, w, {x.t});
    return {t, cout, hw};
  }
  Fmap Depthwise(const std::string& name, const Fmap& x, int k) {
    const double w = static_cast<double>(k) * k * x.c;
    const Tensor t = ops_.Add(name, "conv", 2 * x.t.elems * k * k, ops_.Bytes(2 * x.t.elems + w), x.t.elems, w, {x.t});
    return {t, x.c, x.hw};
  }
  Fmap Norm(const std::string& name, const Fmap& x) {
    return {ops_.Add(name, "norm", 8 * x.t.elems, ops_.Bytes(2 * x.t.elems), x.t.elems, 2.0 * x.c, {x.t}), x.c, x.hw};
  }
  Fmap Relu(const std::string& name, const Fmap& x) {
    return {ops_.Elementwise(name, "elementwise", x.t.elems, {x.t}), x.c, x.hw};
  }
  Fmap Op(const std::string& p, int type, const Fmap& x) {
    switch (type) {
      case 0:
      case 1:
        return Norm(p + "bn", Conv(p + "conv", Relu(p + "relu", x), x.c, type == 0 ? 3 : 5, 1));
      case 2:
      case 3: {
        const Fmap d = Depthwise(p + "depthwise", Relu(p + "relu", x), type == 2 ? 3 : 5);
        return Norm(p + "bn", Conv(p + "pointwise", d, x.c, 1, 1));
      }
      case 4:
      case 5: {
        const Tensor t = ops_.Add(p + (type == 4 ? "avgpool" : "maxpool"), "reduction", 9 * x.t.elems,
                                  ops_.Bytes(2 * x.t.elems), x.t.elems, 0, {x.t});
        return {t, x.c, x.hw};
      }
      default:
        return x;  // identity
    }
  }
  Fmap Cell(const std::string& p, const ConvCellArch& arch, const Fmap& in0, const Fmap& in1, int C, int hw) {
    std::vector<Fmap> node;
    node.push_back(Conv(p + "in0/calib", in0, C, 1, in0.hw > hw ? 2 : 1));
    node.push_back(Conv(p + "in1/calib", in1, C, 1, in1.hw > hw ? 2 : 1));
    std::vector<bool> used(arch.a.size() + 2, false);
    for (size_t j = 0; j < arch.a.size(); ++j) {
      const std::string n = p + "node" + std::to_string(j + 2) + "/";
      const Fmap a = Op(n + "op0/", arch.op_a[j], node[arch.a[j]]);
      const Fmap b = Op(n + "op1/", arch.op_b[j], node[arch.b[j]]);
      used[arch.a[j]] = used[arch.b[j]] = true;
      node.push_back({ops_.Elementwise(n + "add", "elementwise", a.t.elems, {a.t, b.t}), C, hw});
    }
    std::vector<Tensor> loose;
    for (size_t i = 2; i < node.size(); ++i)
      if (!used[i]) loose.push_back(node[i].t);
    const Tensor cat = ops_.Concat(p + "out/concat", loose);
    const Fmap joined{cat, static_cast<int>(loose.size()) * C, hw};
    return Conv(p + "out/conv", joined, C, 1, 1);
  }

  const EnasConfig& c_;
  OpList ops_;
  double B_;
};

// The drawn recurrent cell (node i ≥ 1 reads node prev[i], activation act[i]) and the ops
// of one unrolled step.
class RecurrentCellBuilder {
 public:
  explicit RecurrentCellBuilder(const EnasConfig& c)
      : ops(c.element_bytes), N_(c.nodes), B_(c.batch), H_(c.hidden), prev_(c.nodes, -1), act_(c.nodes) {
    SplitMix rng(c.seed);
    for (int i = 0; i < N_; ++i) {
      if (i > 0) prev_[i] = rng.Below(i);
      act_[i] = rng.Below(4);
    }
  }

  // The cell's weights "<p>cell/n<i>/weights": node 0 maps [x, h] (2H) to 2H, the others H to 2H.
  std::vector<Tensor> Weights(const std::string& p) {
    std::vector<Tensor> w(N_);
    for (int i = 0; i < N_; ++i)
      w[i] = ops.Variable(p + "cell/n" + std::to_string(i) + "/weights", (i == 0 ? 2 : 1) * H_ * 2 * H_);
    return w;
  }
  // One step under prefix `T` ("t3/", "enc/t3/"): x and h_{t-1} (op -1 = zero state) → h_t.
  Tensor Step(const std::string& T, const Tensor& x, const Tensor& h, const std::vector<Tensor>& w) {
    static const char* kAct[] = {"tanh", "relu", "sigmoid", "identity"};
    const double bh = B_ * H_;
    const Tensor cat = ops.Add(T + "cell/concat", "concat", 0, ops.Bytes(4 * bh), 2 * bh, 0, {x, h});
    std::vector<Tensor> node(N_);
    std::vector<bool> used(N_, false);
    for (int i = 0; i < N_; ++i) {
      const std::string n = T + "cell/n" + std::to_string(i) + "/";
      const Tensor in = i == 0 ? cat : node[prev_[i]];
      const Tensor skip = i == 0 ? h : node[prev_[i]];
      if (i > 0) used[prev_[i]] = true;
      const Tensor mm = ops.MatMul(n + "matmul", in, w[i], B_, i == 0 ? 2 * H_ : H_, 2 * H_);
      const Tensor gate = ops.Add(n + "gate", "elementwise", bh, ops.Bytes(2 * bh), bh, 0, {mm});
      const Tensor a = ops.Add(n + "act_" + kAct[act_[i]], "elementwise", bh, ops.Bytes(2 * bh), bh, 0, {mm});
      node[i] = ops.Add(n + "mix", "elementwise", 3 * bh, ops.Bytes(4 * bh), bh, 0, {gate, a, skip});
    }
    std::vector<Tensor> loose;
    for (int i = 0; i < N_; ++i)
      if (!used[i]) loose.push_back(node[i]);
    const double k = static_cast<double>(loose.size());
    return ops.Add(T + "cell/avg", "elementwise", k * bh, ops.Bytes((k + 1) * bh), bh, 0, loose);
  }
  Tensor Lookup(const std::string& name, const Tensor& table) {
    return ops.Add(name, "gather", 0, ops.Bytes(2 * B_ * H_), B_ * H_, 0, {table});
  }
  // Softmax projection + cross entropy under prefix `p` ("t3/softmax/").
  Tensor Predict(const std::string& p, const Tensor& h, const Tensor& w, double V) {
    const Tensor mm = ops.MatMul(p + "matmul", h, w, B_, H_, V);
    const Tensor ba = ops.Add(p + "bias_add", "elementwise", B_ * V, ops.Bytes(2 * B_ * V + V), B_ * V, 0, {mm, w});
    return ops.Add(p + "xent", "softmax", 5 * B_ * V, ops.Bytes(B_ * V + B_), B_, 0, {ba});
  }
  void Loss(const std::vector<Tensor>& losses) {
    const double n = B_ * static_cast<double>(losses.size());
    ops.Add("loss", "reduction", n, ops.Bytes(n + 1), 1, 0, losses);
  }

  OpList ops;

 private:
  const int N_;
  const double B_, H_;
  std::vector<int> prev_, act_;
};

ComputeGraph PtbGraph(const EnasConfig& c) {
  RecurrentCellBuilder b(c);
  const double V = c.vocab, H = c.hidden;
  const Tensor emb = b.ops.Variable("emb/weights", V * H);
  const std::vector<Tensor> w = b.Weights("");
  const Tensor ws = b.ops.Variable("softmax/weights", H * V + V);
  Tensor h;  // zero state at t = 1
  std::vector<Tensor> losses;
  for (int t = 1; t <= c.steps; ++t) {
    const std::string T = "t" + std::to_string(t) + "/";
    h = b.Step(T, b.Lookup(T + "emb/lookup", emb), h, w);
    losses.push_back(b.Predict(T + "softmax/", h, ws, V));
  }
  b.Loss(losses);
  return BuildComputeGraph(b.ops.Finish(c.update));
}

// Encoder and decoder built from the drawn cell, Luong attention as in rnn_graphs.h.
ComputeGraph NmtCellGraph(const EnasConfig& c) {
  RecurrentCellBuilder b(c);
  OpList& ops = b.ops;
  const double V = c.vocab, H = c.hidden, B = c.batch, S = c.steps, bh = B * H, bs = B * S, bsh = B * S * H;
  const Tensor enc_emb = ops.Variable("enc/emb/weights", V * H);
  const std::vector<Tensor> enc_w = b.Weights("enc/");
  Tensor h;
  std::vector<Tensor> outputs;
  for (int t = 1; t <= c.steps; ++t) {
    const std::string T = "enc/t" + std::to_string(t) + "/";
    h = b.Step(T, b.Lookup(T + "emb/lookup", enc_emb), h, enc_w);
    outputs.push_back(h);
  }
  const Tensor memory = ops.Concat("enc/memory", outputs);
  const Tensor keys = ops.MatMul("attn/keys", memory, ops.Variable("attn/keys/weights", H * H), bs, H, H);
  const Tensor dec_emb = ops.Variable("dec/emb/weights", V * H);
  const std::vector<Tensor> dec_w = b.Weights("dec/");
  const Tensor wa = ops.Variable("dec/attn/weights", 2 * H * H);
  const Tensor ws = ops.Variable("dec/softmax/weights", H * V + V);
  std::vector<Tensor> losses;
  for (int t = 1; t <= c.steps; ++t) {
    const std::string T = "dec/t" + std::to_string(t) + "/";
    h = b.Step(T, b.Lookup(T + "emb/lookup", dec_emb), h, dec_w);
    const std::string A = T + "attn/";
    const Tensor score = ops.Add(A + "score", "matmul", 2 * bsh, ops.Bytes(bh + bsh + bs), bs, 0, {h, keys});
    const Tensor sm = ops.Add(A + "softmax", "softmax", 5 * bs, ops.Bytes(2 * bs), bs, 0, {score});
    const Tensor ctx = ops.Add(A + "context", "matmul", 2 * bsh, ops.Bytes(bs + bsh + bh), bh, 0, {sm, memory});
    const Tensor att = ops.MatMul(A + "matmul", ops.Concat(A + "concat", {ctx, h}), wa, B, 2 * H, H);
    losses.push_back(b.Predict(T + "softmax/", ops.Elementwise(A + "tanh", "elementwise", bh, {att}), ws, V));
  }
  b.Loss(losses);
  return BuildComputeGraph(ops.Finish(c.update));
}

}  // namespace

ComputeGraph MakeEnasGraph(const EnasConfig& c) {
  for (int v : {c.nodes, c.cells, c.channels, c.image, c.classes, c.hidden, c.steps, c.vocab, c.batch})
    if (v < 1)
      throw ConfigError(
          "enas_cell: nodes, cells, channels, image, classes, hidden, steps, vocab and batch must be >= 1");
  OpList::CheckOpEstimate("enas_cell", c.family == "ptb" ? static_cast<double>(c.steps) * (4.0 * c.nodes + 6)
                                                         : (3.0 * c.cells + 2) * (10.0 * c.nodes + 4));
  if (c.family == "cifar10") {
    if (c.image < 4) throw ConfigError("enas_cell: image must be >= 4 (two stride-2 reductions)");
    return ConvCellBuilder(c).Build();
  }
  if (c.family == "ptb") return PtbGraph(c);
  if (c.family == "nmt") return NmtCellGraph(c);
  throw ConfigError("enas_cell: unknown family '" + c.family + "' (cifar10, ptb, nmt)");
}

}  // namespace placerl::graphs
