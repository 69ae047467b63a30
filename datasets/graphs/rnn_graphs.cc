// RNNLM, attention NMT and GNMT v2 as op-level training graphs (conventions in rnn_graphs.h).
#include "datasets/graphs/rnn_graphs.h"

#include <string>
#include <vector>

#include "datasets/graphs/op_list.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

std::string Step(int t) { return "t" + std::to_string(t); }
std::string Layer(int l) { return "l" + std::to_string(l); }

struct LstmState {
  Tensor h, c;  // op -1: the zero state from outside the graph
};

class RnnBuilder {
 public:
  RnnBuilder(double element_bytes, double batch, double hidden) : ops(element_bytes), B(batch), H(hidden) {}

  // One LSTM cell step (12 ops) under prefix `p` ("enc/l1/t3/lstm/"); xs concatenate to width I.
  LstmState LstmStep(const std::string& p, std::vector<Tensor> xs, double I, const LstmState& prev, const Tensor& w) {
    xs.push_back(prev.h);
    const double bh = B * H, g4 = B * 4 * H;
    const Tensor x = ops.Add(p + "concat", "concat", 0, ops.Bytes(2 * B * (I + H)), B * (I + H), 0, xs);
    const Tensor mm = ops.MatMul(p + "matmul", x, w, B, I + H, 4 * H);
    const Tensor ba = ops.Add(p + "bias_add", "elementwise", g4, ops.Bytes(2 * g4 + 4 * H), g4, 0, {mm, w});
    auto ew = [&](const char* name, int reads, const std::vector<Tensor>& in) {
      return ops.Add(p + name, "elementwise", bh, ops.Bytes((reads + 1) * bh), bh, 0, in);
    };
    const Tensor si = ew("sigmoid_i", 1, {ba}), tg = ew("tanh_g", 1, {ba});
    const Tensor sf = ew("sigmoid_f", 1, {ba}), so = ew("sigmoid_o", 1, {ba});
    const Tensor fc = ew("mul_fc", 2, {sf, prev.c}), ig = ew("mul_ig", 2, {si, tg});
    const Tensor c = ew("add_c", 2, {fc, ig});
    const Tensor tc = ew("tanh_c", 1, {c});
    return {ew("mul_h", 2, {so, tc}), c};
  }
  Tensor LstmWeights(const std::string& name, double I) { return ops.Variable(name, 4 * H * (I + H) + 4 * H); }

  // Embedding row lookup: reads and writes B·H elements (its gradient: the rows, op_list.h).
  Tensor Lookup(const std::string& name, const Tensor& table) {
    return ops.Add(name, "gather", 0, ops.Bytes(2 * B * H), B * H, 0, {table});
  }
  // Softmax projection + cross entropy of one step under prefix `p`; returns the loss tensor.
  Tensor Predict(const std::string& p, const Tensor& h, const Tensor& w, double V) {
    const Tensor mm = ops.MatMul(p + "matmul", h, w, B, H, V);
    const Tensor ba = ops.Add(p + "bias_add", "elementwise", B * V, ops.Bytes(2 * B * V + V), B * V, 0, {mm, w});
    return ops.Add(p + "xent", "softmax", 5 * B * V, ops.Bytes(B * V + B), B, 0, {ba});
  }
  Tensor Loss(const std::vector<Tensor>& losses) {
    const double n = B * static_cast<double>(losses.size());
    return ops.Add("loss", "reduction", n, ops.Bytes(n + 1), 1, 0, losses);
  }

  // Luong attention of one decoder step (query h over S memory rows); returns tanh(W[c; h]).
  Tensor Luong(const std::string& p, const Tensor& h, const Tensor& keys, const Tensor& memory, const Tensor& w,
               double S) {
    const double bs = B * S, bsh = B * S * H;
    const Tensor score = ops.Add(p + "score", "matmul", 2 * bsh, ops.Bytes(B * H + bsh + bs), bs, 0, {h, keys});
    const Tensor sm = ops.Add(p + "softmax", "softmax", 5 * bs, ops.Bytes(2 * bs), bs, 0, {score});
    const Tensor ctx = ops.Add(p + "context", "matmul", 2 * bsh, ops.Bytes(bs + bsh + B * H), B * H, 0, {sm, memory});
    const Tensor cat = ops.Concat(p + "concat", {ctx, h});
    const Tensor mm = ops.MatMul(p + "matmul", cat, w, B, 2 * H, H);
    return ops.Elementwise(p + "tanh", "elementwise", B * H, {mm});
  }
  // Normalised Bahdanau attention of one decoder step; returns the context.
  Tensor Bahdanau(const std::string& p, const Tensor& h, const Tensor& keys, const Tensor& memory, const Tensor& w,
                  double S) {
    const double bs = B * S, bsh = B * S * H;
    const Tensor q = ops.MatMul(p + "query", h, w, B, H, H);
    const Tensor add = ops.Add(p + "score_add", "elementwise", bsh, ops.Bytes(B * H + 2 * bsh), bsh, 0, {q, keys});
    const Tensor th = ops.Add(p + "score_tanh", "elementwise", bsh, ops.Bytes(2 * bsh), bsh, 0, {add});
    const Tensor sv = ops.Add(p + "score_v", "matmul", 2 * bsh, ops.Bytes(bsh + H + bs), bs, 0, {th, w});
    const Tensor sm = ops.Add(p + "softmax", "softmax", 5 * bs, ops.Bytes(2 * bs), bs, 0, {sv});
    return ops.Add(p + "context", "matmul", 2 * bsh, ops.Bytes(bs + bsh + B * H), B * H, 0, {sm, memory});
  }

  ComputeGraph Finish(bool update) { return BuildComputeGraph(ops.Finish(update)); }

  OpList ops;
  const double B, H;
};

void CheckSizes(const char* model, std::initializer_list<int> sizes) {
  for (int s : sizes)
    if (s < 1) throw ConfigError(std::string(model) + ": layers, hidden, batch, steps and vocab must be >= 1");
}

// Encoder + bridge shared by NMT and GNMT: returns the top outputs per step and the final state
// per layer (the decoder's initial state).
struct Encoded {
  std::vector<Tensor> top;
  std::vector<LstmState> final_state;
};

Encoded Encode(RnnBuilder& b, const Seq2SeqConfig& c, bool gnmt) {
  const double H = b.H;
  const Tensor emb = b.ops.Variable("enc/emb/weights", static_cast<double>(c.vocab) * H);
  std::vector<Tensor> x(c.steps + 1);
  for (int t = 1; t <= c.steps; ++t) x[t] = b.Lookup("enc/emb/" + Step(t) + "/lookup", emb);
  Encoded e;
  double width = H;  // input width of the next layer
  for (int l = 1; l <= c.layers; ++l) {
    const std::string L = "enc/" + Layer(l) + "/";
    if (gnmt && l == 1) {  // bidirectional bottom layer: fw over t = 1..S, bw over t = S..1
      const Tensor wf = b.LstmWeights(L + "fw/weights", width), wb = b.LstmWeights(L + "bw/weights", width);
      std::vector<LstmState> fw(c.steps + 2), bw(c.steps + 2);
      for (int t = 1; t <= c.steps; ++t)
        fw[t] = b.LstmStep(L + "fw/" + Step(t) + "/lstm/", {x[t]}, width, fw[t - 1], wf);
      for (int t = c.steps; t >= 1; --t)
        bw[t] = b.LstmStep(L + "bw/" + Step(t) + "/lstm/", {x[t]}, width, bw[t + 1], wb);
      for (int t = 1; t <= c.steps; ++t) x[t] = b.ops.Concat(L + Step(t) + "/concat", {fw[t].h, bw[t].h});
      e.final_state.push_back(fw[c.steps]);
      width = 2 * H;
      continue;
    }
    const Tensor w = b.LstmWeights(L + "weights", width);
    LstmState s;
    for (int t = 1; t <= c.steps; ++t) {
      s = b.LstmStep(L + Step(t) + "/lstm/", {x[t]}, width, s, w);
      x[t] = gnmt && l >= 3 ? b.ops.Elementwise(L + Step(t) + "/residual", "elementwise", b.B * H, {s.h, x[t]}) : s.h;
    }
    e.final_state.push_back(s);
    width = H;
  }
  e.top.assign(x.begin() + 1, x.end());
  return e;
}

ComputeGraph Seq2Seq(const Seq2SeqConfig& c, bool gnmt) {
  const char* model = gnmt ? "gnmt" : "nmt";
  CheckSizes(model, {c.layers, c.hidden, c.batch, c.steps, c.vocab});
  OpList::CheckOpEstimate(model, 2.0 * c.steps * (13.0 * c.layers + 12));
  if (gnmt && c.layers < 2)
    throw ConfigError("gnmt: layers must be >= 2 (a bidirectional layer and the decoder's attention layer)");
  RnnBuilder b(c.element_bytes, c.batch, c.hidden);
  const double H = b.H, S = c.steps, V = c.vocab;
  const Encoded e = Encode(b, c, gnmt);
  const Tensor memory = b.ops.Concat("enc/memory", e.top);
  const Tensor wk = b.ops.Variable("attn/keys/weights", H * H);
  const Tensor keys = b.ops.MatMul("attn/keys", memory, wk, b.B * S, H, H);

  const Tensor emb = b.ops.Variable("dec/emb/weights", V * H);
  std::vector<Tensor> w(c.layers + 1);
  for (int l = 1; l <= c.layers; ++l) w[l] = b.LstmWeights("dec/" + Layer(l) + "/weights", 2 * H);
  const Tensor wa = b.ops.Variable("dec/attn/weights", gnmt ? H * H + 2 * H + 1 : 2 * H * H);
  const Tensor ws = b.ops.Variable("dec/softmax/weights", H * V + V);
  std::vector<LstmState> s = e.final_state;
  s.insert(s.begin(), LstmState{});  // 1-based layers
  Tensor attention;                  // previous step's attention (input feeding); zero at t = 1
  std::vector<Tensor> losses;
  for (int t = 1; t <= c.steps; ++t) {
    const std::string T = Step(t);
    const Tensor y = b.Lookup("dec/emb/" + T + "/lookup", emb);
    Tensor x = y;
    for (int l = 1; l <= c.layers; ++l) {
      const std::string L = "dec/" + Layer(l) + "/" + T;
      const std::vector<Tensor> in = gnmt && l > 1 ? std::vector<Tensor>{x, attention}
                                     : l == 1      ? std::vector<Tensor>{y, attention}
                                                   : std::vector<Tensor>{x};
      const double width = (l == 1 || gnmt) ? 2 * H : H;
      s[l] = b.LstmStep(L + "/lstm/", in, width, s[l], w[l]);
      Tensor out = s[l].h;
      if (gnmt && l >= 3) out = b.ops.Elementwise(L + "/residual", "elementwise", b.B * H, {s[l].h, x});
      if (gnmt && l == 1) attention = b.Bahdanau("dec/attn/" + T + "/", s[1].h, keys, memory, wa, S);
      x = out;
    }
    if (!gnmt) {
      attention = b.Luong("dec/attn/" + T + "/", x, keys, memory, wa, S);
      x = attention;
    }
    losses.push_back(b.Predict("dec/softmax/" + T + "/", x, ws, V));
  }
  b.Loss(losses);
  return b.Finish(c.update);
}

}  // namespace

Seq2SeqConfig GnmtV2Config() {
  Seq2SeqConfig c;
  c.layers = 4;
  c.hidden = 512;
  c.batch = 128;
  c.steps = 40;
  c.vocab = 30000;
  return c;
}

ComputeGraph MakeRnnLmGraph(const RnnLmConfig& c) {
  CheckSizes("rnnlm", {c.layers, c.hidden, c.batch, c.steps, c.vocab});
  OpList::CheckOpEstimate("rnnlm", static_cast<double>(c.steps) * (12.0 * c.layers + 4));
  RnnBuilder b(c.element_bytes, c.batch, c.hidden);
  const double H = b.H, V = c.vocab;
  const Tensor emb = b.ops.Variable("emb/weights", V * H);
  std::vector<Tensor> w(c.layers + 1);
  for (int l = 1; l <= c.layers; ++l) w[l] = b.LstmWeights(Layer(l) + "/weights", H);
  const Tensor ws = b.ops.Variable("softmax/weights", H * V + V);
  std::vector<LstmState> s(c.layers + 1);
  std::vector<Tensor> losses;
  for (int t = 1; t <= c.steps; ++t) {
    Tensor x = b.Lookup("emb/" + Step(t) + "/lookup", emb);
    for (int l = 1; l <= c.layers; ++l) {
      s[l] = b.LstmStep(Layer(l) + "/" + Step(t) + "/lstm/", {x}, H, s[l], w[l]);
      x = s[l].h;
    }
    losses.push_back(b.Predict("softmax/" + Step(t) + "/", x, ws, V));
  }
  b.Loss(losses);
  return b.Finish(c.update);
}

ComputeGraph MakeNmtGraph(const Seq2SeqConfig& config) { return Seq2Seq(config, false); }
ComputeGraph MakeGnmtGraph(const Seq2SeqConfig& config) { return Seq2Seq(config, true); }

}  // namespace placerl::graphs
