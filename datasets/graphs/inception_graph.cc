// Inception-V3 training graph (conventions in inception_graph.h; block structure follows
// torchvision's inception.py: InceptionA–E and InceptionAux).
#include "datasets/graphs/inception_graph.h"

#include <string>
#include <vector>

#include "datasets/graphs/op_list.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

struct Map {  // a feature map: producing op (-1 = the image) and per-image shape
  int op;
  int c, h, w;
  double elems() const { return static_cast<double>(c) * h * w; }
};

class InceptionBuilder {
 public:
  explicit InceptionBuilder(const InceptionConfig& cfg) : cfg_(cfg), ops_(cfg.element_bytes), B_(cfg.batch) {
    if (cfg.batch < 1 || cfg.classes < 1) throw ConfigError("inception_v3: batch and classes must be >= 1");
    if (cfg.image < 75) throw ConfigError("inception_v3: image must be >= 75, got " + std::to_string(cfg.image));
    Map x{-1, 3, cfg.image, cfg.image};
    x = Basic("Conv2d_1a_3x3", x, 32, 3, 3, 2, 0, 0);
    x = Basic("Conv2d_2a_3x3", x, 32, 3, 3, 1, 0, 0);
    x = Basic("Conv2d_2b_3x3", x, 64, 3, 3, 1, 1, 1);
    x = Pool("maxpool1", x, 3, 2, 0);
    x = Basic("Conv2d_3b_1x1", x, 80, 1, 1, 1, 0, 0);
    x = Basic("Conv2d_4a_3x3", x, 192, 3, 3, 1, 0, 0);
    x = Pool("maxpool2", x, 3, 2, 0);
    x = A("Mixed_5b", x, 32);
    x = A("Mixed_5c", x, 64);
    x = A("Mixed_5d", x, 64);
    x = B("Mixed_6a", x);
    x = C("Mixed_6b", x, 128);
    x = C("Mixed_6c", x, 160);
    x = C("Mixed_6d", x, 160);
    x = C("Mixed_6e", x, 192);
    std::vector<Tensor> losses;
    if (cfg.aux) {
      aux_ = true;  // the auxiliary head's MACs are not part of torchvision's reported count
      Map a = Pool("AuxLogits/avgpool", x, 5, 3, 0);
      a = Basic("AuxLogits/conv0", a, 128, 1, 1, 1, 0, 0);
      a = Basic("AuxLogits/conv1", a, 768, 5, 5, 1, 0, 0);
      losses.push_back(Head("AuxLogits/", a));
      aux_ = false;
    }
    x = D("Mixed_7a", x);
    x = E("Mixed_7b", x);
    x = E("Mixed_7c", x);
    losses.insert(losses.begin(), Head("", x));
    ops_.Add("loss", "reduction", B_ * losses.size(), ops_.Bytes(B_ * losses.size() + 1), 1, 0, losses);
  }

  OpList& ops() { return ops_; }
  double params() const { return params_; }
  double macs() const { return macs_; }

 private:
  static int Out(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }
  double Act(const Map& m) const { return B_ * m.elems(); }
  Tensor Of(const Map& m) const { return {m.op, Act(m)}; }

  // BasicConv2d: conv (no bias) → BN → ReLU.
  Map Basic(const std::string& p, const Map& x, int cout, int kh, int kw, int stride, int ph, int pw) {
    const Map o{-1, cout, Out(x.h, kh, stride, ph), Out(x.w, kw, stride, pw)};
    const double weights = static_cast<double>(kh) * kw * x.c * cout;
    const double macs = o.elems() * kh * kw * x.c;
    if (!aux_) macs_ += macs;
    params_ += weights + 2.0 * cout;
    const Tensor conv =
        ops_.Add(p + "/conv", "conv", 2 * B_ * macs, ops_.Bytes(Act(x) + Act(o) + weights), Act(o), weights, {Of(x)});
    const Tensor bn = ops_.Add(p + "/bn", "norm", 8 * Act(o), ops_.Bytes(2 * Act(o)), Act(o), 2.0 * cout, {conv});
    const Tensor relu = ops_.Elementwise(p + "/relu", "elementwise", Act(o), {bn});
    return {relu.op, o.c, o.h, o.w};
  }
  // k×k pooling (max for stride 2 without padding in the stem and reduction blocks, avg
  // with padding 1 in the branch pools); k² flops per output element.
  Map Pool(const std::string& name, const Map& x, int k, int stride, int pad) {
    const Map o{-1, x.c, Out(x.h, k, stride, pad), Out(x.w, k, stride, pad)};
    const Tensor t = ops_.Add(name, "reduction", static_cast<double>(k) * k * Act(o), ops_.Bytes(Act(x) + Act(o)),
                              Act(o), 0, {Of(x)});
    return {t.op, o.c, o.h, o.w};
  }
  Map AvgPool3(const std::string& p, const Map& x) { return Pool(p + "/branch_pool/avgpool", x, 3, 1, 1); }
  Map Concat(const std::string& name, const std::vector<Map>& parts) {
    std::vector<Tensor> in;
    int c = 0;
    for (const Map& m : parts) {
      in.push_back(Of(m));
      c += m.c;
    }
    const Tensor t = ops_.Concat(name, in);
    return {t.op, c, parts[0].h, parts[0].w};
  }

  Map A(const std::string& p, const Map& x, int pool_features) {
    const Map b1 = Basic(p + "/branch1x1", x, 64, 1, 1, 1, 0, 0);
    Map b5 = Basic(p + "/branch5x5_1", x, 48, 1, 1, 1, 0, 0);
    b5 = Basic(p + "/branch5x5_2", b5, 64, 5, 5, 1, 2, 2);
    Map b3 = Basic(p + "/branch3x3dbl_1", x, 64, 1, 1, 1, 0, 0);
    b3 = Basic(p + "/branch3x3dbl_2", b3, 96, 3, 3, 1, 1, 1);
    b3 = Basic(p + "/branch3x3dbl_3", b3, 96, 3, 3, 1, 1, 1);
    const Map bp = Basic(p + "/branch_pool", AvgPool3(p, x), pool_features, 1, 1, 1, 0, 0);
    return Concat(p + "/concat", {b1, b5, b3, bp});
  }
  Map B(const std::string& p, const Map& x) {
    const Map b3 = Basic(p + "/branch3x3", x, 384, 3, 3, 2, 0, 0);
    Map bd = Basic(p + "/branch3x3dbl_1", x, 64, 1, 1, 1, 0, 0);
    bd = Basic(p + "/branch3x3dbl_2", bd, 96, 3, 3, 1, 1, 1);
    bd = Basic(p + "/branch3x3dbl_3", bd, 96, 3, 3, 2, 0, 0);
    const Map bp = Pool(p + "/branch_pool/maxpool", x, 3, 2, 0);
    return Concat(p + "/concat", {b3, bd, bp});
  }
  Map C(const std::string& p, const Map& x, int c7) {
    const Map b1 = Basic(p + "/branch1x1", x, 192, 1, 1, 1, 0, 0);
    Map b7 = Basic(p + "/branch7x7_1", x, c7, 1, 1, 1, 0, 0);
    b7 = Basic(p + "/branch7x7_2", b7, c7, 1, 7, 1, 0, 3);
    b7 = Basic(p + "/branch7x7_3", b7, 192, 7, 1, 1, 3, 0);
    Map bd = Basic(p + "/branch7x7dbl_1", x, c7, 1, 1, 1, 0, 0);
    bd = Basic(p + "/branch7x7dbl_2", bd, c7, 7, 1, 1, 3, 0);
    bd = Basic(p + "/branch7x7dbl_3", bd, c7, 1, 7, 1, 0, 3);
    bd = Basic(p + "/branch7x7dbl_4", bd, c7, 7, 1, 1, 3, 0);
    bd = Basic(p + "/branch7x7dbl_5", bd, 192, 1, 7, 1, 0, 3);
    const Map bp = Basic(p + "/branch_pool", AvgPool3(p, x), 192, 1, 1, 1, 0, 0);
    return Concat(p + "/concat", {b1, b7, bd, bp});
  }
  Map D(const std::string& p, const Map& x) {
    Map b3 = Basic(p + "/branch3x3_1", x, 192, 1, 1, 1, 0, 0);
    b3 = Basic(p + "/branch3x3_2", b3, 320, 3, 3, 2, 0, 0);
    Map b7 = Basic(p + "/branch7x7x3_1", x, 192, 1, 1, 1, 0, 0);
    b7 = Basic(p + "/branch7x7x3_2", b7, 192, 1, 7, 1, 0, 3);
    b7 = Basic(p + "/branch7x7x3_3", b7, 192, 7, 1, 1, 3, 0);
    b7 = Basic(p + "/branch7x7x3_4", b7, 192, 3, 3, 2, 0, 0);
    const Map bp = Pool(p + "/branch_pool/maxpool", x, 3, 2, 0);
    return Concat(p + "/concat", {b3, b7, bp});
  }
  Map E(const std::string& p, const Map& x) {
    const Map b1 = Basic(p + "/branch1x1", x, 320, 1, 1, 1, 0, 0);
    const Map b3 = Basic(p + "/branch3x3_1", x, 384, 1, 1, 1, 0, 0);
    const Map b3a = Basic(p + "/branch3x3_2a", b3, 384, 1, 3, 1, 0, 1);
    const Map b3b = Basic(p + "/branch3x3_2b", b3, 384, 3, 1, 1, 1, 0);
    const Map b3c = Concat(p + "/branch3x3/concat", {b3a, b3b});
    Map bd = Basic(p + "/branch3x3dbl_1", x, 448, 1, 1, 1, 0, 0);
    bd = Basic(p + "/branch3x3dbl_2", bd, 384, 3, 3, 1, 1, 1);
    const Map bda = Basic(p + "/branch3x3dbl_3a", bd, 384, 1, 3, 1, 0, 1);
    const Map bdb = Basic(p + "/branch3x3dbl_3b", bd, 384, 3, 1, 1, 1, 0);
    const Map bdc = Concat(p + "/branch3x3dbl/concat", {bda, bdb});
    const Map bp = Basic(p + "/branch_pool", AvgPool3(p, x), 192, 1, 1, 1, 0, 0);
    return Concat(p + "/concat", {b1, b3c, bdc, bp});
  }
  // Global average pool → fc → softmax cross entropy; returns the loss.
  Tensor Head(const std::string& p, const Map& x) {
    const double in = x.c, out = cfg_.classes;
    const Tensor pool = ops_.Add(p + (p.empty() ? "avgpool" : "pool"), "reduction", Act(x),
                                 ops_.Bytes(Act(x) + B_ * in), B_ * in, 0, {Of(x)});
    if (!aux_) macs_ += in * out;
    params_ += (in + 1) * out;
    const Tensor fc = ops_.Add(p + "fc", "matmul", 2 * B_ * in * out, ops_.Bytes(B_ * (in + out) + in * out), B_ * out,
                               (in + 1) * out, {pool});
    return ops_.Add(p + "xent", "softmax", 5 * B_ * out, ops_.Bytes(B_ * out + B_), B_, 0, {fc});
  }

  const InceptionConfig& cfg_;
  OpList ops_;
  double B_;
  double params_ = 0, macs_ = 0;
  bool aux_ = false;
};

}  // namespace

ComputeGraph MakeInceptionV3Graph(const InceptionConfig& config) {
  InceptionBuilder b(config);
  return BuildComputeGraph(b.ops().Finish(config.update));
}

double InceptionV3ParamCount(const InceptionConfig& config) { return InceptionBuilder(config).params(); }

double InceptionV3ForwardMacs(const InceptionConfig& config) { return InceptionBuilder(config).macs(); }

}  // namespace placerl::graphs
