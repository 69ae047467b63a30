#include "datasets/graphs/model_graphs.h"

#include <cmath>
#include <string>
#include <vector>

#include "datasets/graphs/training_graph.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

struct Shape {
  int c, h, w;
  double elems() const { return static_cast<double>(c) * h * w; }
};

// A tensor: the producing forward op (-1 = the input image) and its per-image shape.
struct T {
  int op;
  Shape s;
};

// Builds the forward ops of a ResNet and counts weights and per-image MACs on the way.
class ResNetBuilder {
 public:
  explicit ResNetBuilder(const ResNetConfig& c) : cfg_(c) {
    static const int kBlocks[][4] = {{2, 2, 2, 2}, {3, 4, 6, 3}, {3, 4, 6, 3}, {3, 4, 23, 3},
                                     {3, 8, 36, 3}};
    static const int kDepths[] = {18, 34, 50, 101, 152};
    int which = -1;
    for (int i = 0; i < 5; ++i)
      if (c.depth == kDepths[i]) which = i;
    if (which < 0)
      throw ConfigError("ResNet: depth " + std::to_string(c.depth) +
                        " is not one of 18, 34, 50, 101, 152");
    if (c.batch <= 0 || c.image <= 0 || c.classes <= 0)
      throw ConfigError("ResNet: batch, image and classes must be > 0");
    if (!(c.act_bytes > 0) || !(c.param_bytes > 0) || !std::isfinite(c.act_bytes) ||
        !std::isfinite(c.param_bytes))
      throw ConfigError("ResNet: act_bytes and param_bytes must be finite and > 0");
    const bool bottleneck = c.depth >= 50;

    T x = Conv("conv1", T{-1, {3, c.image, c.image}}, 64, 7, 2);
    x = Relu("relu", Norm("bn1", x));
    x = Pool("maxpool", "reduction", x, 9, {64, Out(x.s.h, 3, 2), Out(x.s.w, 3, 2)});
    for (int stage = 0; stage < 4; ++stage) {
      const int width = 64 << stage;
      for (int b = 0; b < kBlocks[which][stage]; ++b) {
        const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
        const int stride = (stage > 0 && b == 0) ? 2 : 1;
        x = bottleneck ? Bottleneck(p, x, width, stride) : Basic(p, x, width, stride);
      }
    }
    x = Pool("avgpool", "reduction", x, static_cast<double>(x.s.h) * x.s.w, {x.s.c, 1, 1});
    const double in = x.s.c, out = c.classes, batch = c.batch;
    const int fc = Emit("fc", "matmul", 2 * batch * in * out,
                        (batch * (in + out) + in * out) * c.act_bytes, {x.s.c, 1, 1},
                        classes_shape(), (in + 1) * out, {x});
    macs_ += in * out;
    Emit("loss", "softmax", 5 * batch * out, batch * (out + 1) * c.act_bytes,
         {c.classes, 1, 1}, {1, 1, 1}, 0, {T{fc, classes_shape()}});
  }

  std::vector<OpInfo>& ops() { return ops_; }
  const std::vector<double>& first_input_bytes() const { return first_in_bytes_; }
  double params() const { return params_; }
  double macs() const { return macs_; }

 private:
  static int Out(int in, int k, int stride) { return (in + 2 * (k / 2) - k) / stride + 1; }
  Shape classes_shape() const { return {cfg_.classes, 1, 1}; }
  double Act(const Shape& s) const { return cfg_.batch * s.elems() * cfg_.act_bytes; }

  // Appends a forward op; `in` is the shape of the first input, `weights` in elements.
  int Emit(const std::string& name, const char* kind, double flops, double bytes, Shape in,
           Shape out, double weights, const std::vector<T>& inputs) {
    OpInfo o;
    o.name = name;
    o.kind = kind;
    o.flops = flops;
    o.bytes = bytes;
    o.output_bytes = Act(out);
    o.param_bytes = weights * cfg_.param_bytes;
    for (const T& t : inputs)
      if (t.op >= 0) o.inputs.push_back(t.op);
    ops_.push_back(o);
    first_in_bytes_.push_back(Act(in));
    params_ += weights;
    return static_cast<int>(ops_.size()) - 1;
  }

  T Conv(const std::string& name, T x, int cout, int k, int stride) {
    const Shape out{cout, Out(x.s.h, k, stride), Out(x.s.w, k, stride)};
    const double weights = static_cast<double>(cout) * x.s.c * k * k;
    const double macs = out.elems() * x.s.c * k * k;
    macs_ += macs;
    const double bytes = Act(x.s) + Act(out) + weights * cfg_.act_bytes;
    return {Emit(name, "conv", 2 * macs * cfg_.batch, bytes, x.s, out, weights, {x}), out};
  }
  T Norm(const std::string& name, T x) {
    const double n = cfg_.batch * x.s.elems();
    return {Emit(name, "norm", 8 * n, (cfg_.fused ? 1 : 2) * Act(x.s), x.s, x.s, 2.0 * x.s.c, {x}),
            x.s};
  }
  T Relu(const std::string& name, T x) {
    return {Emit(name, "elementwise", cfg_.batch * x.s.elems(), cfg_.fused ? 0 : 2 * Act(x.s), x.s,
                 x.s, 0, {x}),
            x.s};
  }
  T Add(const std::string& name, T a, T b) {
    return {Emit(name, "elementwise", cfg_.batch * a.s.elems(), cfg_.fused ? 0 : 3 * Act(a.s), a.s,
                 a.s, 0, {a, b}),
            a.s};
  }
  // A pooling op with `per_out` flops per output element.
  T Pool(const std::string& name, const char* kind, T x, double per_out, Shape out) {
    return {Emit(name, kind, per_out * cfg_.batch * out.elems(), Act(x.s) + Act(out), x.s, out, 0,
                 {x}),
            out};
  }
  T Shortcut(const std::string& p, T x, int cout, int stride) {
    if (stride == 1 && x.s.c == cout) return x;
    return Norm(p + "downsample.bn", Conv(p + "downsample.conv", x, cout, 1, stride));
  }
  T Basic(const std::string& p, T x, int width, int stride) {
    T y = Relu(p + "relu1", Norm(p + "bn1", Conv(p + "conv1", x, width, 3, stride)));
    y = Norm(p + "bn2", Conv(p + "conv2", y, width, 3, 1));
    const T sc = Shortcut(p, x, width, stride);
    return Relu(p + "relu2", Add(p + "add", y, sc));
  }
  T Bottleneck(const std::string& p, T x, int width, int stride) {  // v1.5: stride on the 3×3
    T y = Relu(p + "relu1", Norm(p + "bn1", Conv(p + "conv1", x, width, 1, 1)));
    y = Relu(p + "relu2", Norm(p + "bn2", Conv(p + "conv2", y, width, 3, stride)));
    y = Norm(p + "bn3", Conv(p + "conv3", y, 4 * width, 1, 1));
    const T sc = Shortcut(p, x, 4 * width, stride);
    return Relu(p + "relu3", Add(p + "add", y, sc));
  }

  const ResNetConfig& cfg_;
  std::vector<OpInfo> ops_;
  std::vector<double> first_in_bytes_;
  double params_ = 0, macs_ = 0;
};

}  // namespace

ComputeGraph MakeResNetGraph(const ResNetConfig& config) {
  ResNetBuilder b(config);
  std::vector<OpInfo>& ops = b.ops();
  if (config.update) {
    if (!config.backward) throw ConfigError("ResNet: update needs backward");
    TrainingOpsOptions t;
    t.param_element_bytes = config.param_bytes;
    return BuildComputeGraph(AddTrainingOps(ops, t));
  }
  if (config.backward) {
    const int f = static_cast<int>(ops.size());
    std::vector<std::vector<int>> consumers(f);
    for (int i = 0; i < f; ++i)
      for (int p : ops[i].inputs) consumers[p].push_back(i);
    auto grad_of = [f](int x) { return f + (f - 1 - x); };  // grad ops in reverse order
    for (int x = f - 1; x >= 0; --x) {
      OpInfo g;
      g.name = "grad/" + ops[x].name;
      g.kind = ops[x].kind;
      g.flops = 2 * ops[x].flops;
      g.bytes = 2 * ops[x].bytes;
      g.output_bytes = b.first_input_bytes()[x];
      for (int c : consumers[x]) g.inputs.push_back(grad_of(c));
      for (int p : ops[x].inputs) g.inputs.push_back(p);
      g.inputs.push_back(x);
      ops.push_back(std::move(g));
    }
  }
  return BuildComputeGraph(ops);
}

double ResNetParamCount(const ResNetConfig& config) { return ResNetBuilder(config).params(); }

double ResNetForwardMacs(const ResNetConfig& config) { return ResNetBuilder(config).macs(); }

}  // namespace placerl::graphs
