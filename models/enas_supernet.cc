#include "models/enas_supernet.h"

#include <map>

#include "datasets/util/errors.h"

namespace placerl::enas {
namespace {

namespace F = torch::nn::functional;

constexpr int32_t kDecisionsPerCell = 4 * kNodes;

int32_t KernelOf(int32_t op) { return op == static_cast<int32_t>(Op::kSepConv3) ? 3 : op == static_cast<int32_t>(Op::kSepConv5) ? 5 : 0; }

// Where each cell sits: the one place the layout is decided (the module and ChildCostOf read it).
struct CellShape {
  bool reduce = false;
  int32_t channels = 0, resolution = 0;
  int32_t in_pp = 0, in_p = 0;          // channels of h[0] and h[1] before calibration
  int32_t stride_pp = 1, stride_p = 1;
};

std::vector<CellShape> Shapes(const EnasNetOptions& o) {
  std::vector<CellShape> shapes;
  int32_t c_pp = o.channels, c_p = o.channels, r_pp = o.image_size, r_p = o.image_size;  // the stem, twice
  int32_t channels = o.channels, resolution = o.image_size;
  for (int32_t stage = 0; stage < 3; ++stage) {
    for (int32_t k = (stage > 0 ? -1 : 0); k < o.cells_per_stage; ++k) {
      CellShape s;
      s.reduce = k < 0;
      if (s.reduce) {
        channels *= 2;
        resolution /= 2;
      }
      s.channels = channels;
      s.resolution = resolution;
      s.in_pp = c_pp;
      s.in_p = c_p;
      s.stride_pp = r_pp / resolution;
      s.stride_p = r_p / resolution;
      shapes.push_back(s);
      c_pp = c_p, r_pp = r_p;
      c_p = channels, r_p = resolution;
    }
  }
  return shapes;
}

torch::nn::Conv2d Conv(int32_t in, int32_t out, int32_t kernel, int32_t stride = 1, int32_t groups = 1) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).groups(groups).bias(false));
}
torch::nn::BatchNorm2d Bn(int32_t c) { return torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(c).affine(false)); }

bool SameCell(const CellArch& a, const CellArch& b) { return a.input == b.input && a.op == b.op; }

}  // namespace

const char* OpName(int32_t op) {
  static const char* const kNames[kNumOps] = {"sep_conv3x3", "sep_conv5x5", "avg_pool3x3", "max_pool3x3", "identity"};
  return op >= 0 && op < kNumOps ? kNames[op] : "?";
}

std::vector<int32_t> CellArch::LooseEnds() const {
  std::array<bool, kNodes> read{};
  for (int32_t i = 0; i < kNodes; ++i)
    for (int32_t s = 0; s < 2; ++s)
      if (input[i][s] >= 2) read[input[i][s] - 2] = true;
  std::vector<int32_t> loose;
  for (int32_t i = 0; i < kNodes; ++i)
    if (!read[i]) loose.push_back(i);
  return loose;  // the last node is never read: never empty
}

bool CellArch::ReadsInput(int32_t k) const {
  for (int32_t i = 0; i < kNodes; ++i)
    if (input[i][0] == k || input[i][1] == k) return true;
  return false;
}

ChildArch DecodeEnasMicro(const nas::Architecture& a) {
  if (static_cast<int32_t>(a.size()) != 2 * kDecisionsPerCell)
    throw ConfigError("enas_micro architecture: " + std::to_string(a.size()) + " choices, expected " +
                      std::to_string(2 * kDecisionsPerCell));
  ChildArch c;
  for (int32_t cell = 0; cell < 2; ++cell) {
    CellArch& ca = cell == 0 ? c.normal : c.reduce;
    for (int32_t i = 0; i < kNodes; ++i)
      for (int32_t s = 0; s < 2; ++s) {
        const int32_t input = a[cell * kDecisionsPerCell + 4 * i + 2 * s];
        const int32_t op = a[cell * kDecisionsPerCell + 4 * i + 2 * s + 1];
        if (input < 0 || input >= i + 2)
          throw ConfigError("enas_micro architecture: node " + std::to_string(i) + " reads input " +
                            std::to_string(input) + " (0.." + std::to_string(i + 1) + ")");
        if (op < 0 || op >= kNumOps) throw ConfigError("enas_micro architecture: operation " + std::to_string(op));
        ca.input[i][s] = input;
        ca.op[i][s] = op;
      }
  }
  return c;
}

nas::Architecture EncodeEnasMicro(const ChildArch& c) {
  nas::Architecture a;
  for (const CellArch* ca : {&c.normal, &c.reduce})
    for (int32_t i = 0; i < kNodes; ++i)
      for (int32_t s = 0; s < 2; ++s) {
        a.push_back(ca->input[i][s]);
        a.push_back(ca->op[i][s]);
      }
  return a;
}

void CheckNetOptions(const EnasNetOptions& o) {
  if (o.channels < 1 || o.channels > 1024) throw ConfigError("enas net: channels must be in [1, 1024]");
  if (o.cells_per_stage < 1 || o.cells_per_stage > 64) throw ConfigError("enas net: cells_per_stage must be in [1, 64]");
  if (o.num_classes < 2 || o.num_classes > 100000) throw ConfigError("enas net: num_classes must be in [2, 1e5]");
  if (o.image_size < 4 || o.image_size % 4 != 0 || o.image_size > 4096)
    throw ConfigError("enas net: image_size must be a multiple of 4 in [4, 4096]");
  if (o.in_channels < 1 || o.in_channels > 64) throw ConfigError("enas net: in_channels must be in [1, 64]");
}

ChildCost ChildCostOf(const EnasNetOptions& o, const ChildArch& c) {
  CheckNetOptions(o);
  ChildCost cost;
  auto conv = [&](int64_t in, int64_t out, int64_t k, int64_t groups, int64_t resolution) {
    const int64_t p = out * (in / groups) * k * k;
    cost.params += p;
    cost.macs += p * resolution * resolution;
  };
  conv(o.in_channels, o.channels, 3, 1, o.image_size);
  for (const CellShape& s : Shapes(o)) {
    const CellArch& a = s.reduce ? c.reduce : c.normal;
    if (a.ReadsInput(0)) conv(s.in_pp, s.channels, 1, 1, s.resolution);
    if (a.ReadsInput(1)) conv(s.in_p, s.channels, 1, 1, s.resolution);
    for (int32_t i = 0; i < kNodes; ++i)
      for (int32_t slot = 0; slot < 2; ++slot)
        if (const int32_t k = KernelOf(a.op[i][slot]); k > 0) {
          conv(s.channels, s.channels, k, s.channels, s.resolution);
          conv(s.channels, s.channels, 1, 1, s.resolution);
        }
    for (int32_t j : a.LooseEnds()) (void)j, conv(s.channels, s.channels, 1, 1, s.resolution);
  }
  const int64_t last = Shapes(o).back().channels;
  cost.params += last * o.num_classes + o.num_classes;
  cost.macs += last * o.num_classes;
  return cost;
}

EnasNetImpl::Cell::Cell()
    : depthwise(kNodes * 2 * kNumOps, torch::nn::Conv2d{nullptr}),
      pointwise(kNodes * 2 * kNumOps, torch::nn::Conv2d{nullptr}),
      op_bn(kNodes * 2 * kNumOps, torch::nn::BatchNorm2d{nullptr}),
      out_conv(kNodes, torch::nn::Conv2d{nullptr}) {}

EnasNetImpl::EnasNetImpl(const EnasNetOptions& options, const std::optional<ChildArch>& fixed)
    : o_(options), fixed_(fixed) {
  CheckNetOptions(o_);
  stem_ = register_module("stem", Conv(o_.in_channels, o_.channels, 3));
  stem_bn_ = register_module("stem_bn", Bn(o_.channels));
  const std::vector<CellShape> shapes = Shapes(o_);
  cells_.resize(shapes.size());
  for (size_t k = 0; k < shapes.size(); ++k) {
    const CellShape& s = shapes[k];
    Cell& cell = cells_[k];
    const std::string p = "cell" + std::to_string(k) + (s.reduce ? "_reduce_" : "_normal_");
    cell_prefix_.push_back(p);
    cell.reduce = s.reduce;
    cell.channels = s.channels;
    cell.stride_pp = s.stride_pp;
    cell.stride_p = s.stride_p;
    const CellArch* chosen = fixed_ ? (s.reduce ? &fixed_->reduce : &fixed_->normal) : nullptr;
    if (!chosen || chosen->ReadsInput(0)) {
      cell.calib_pp = register_module(p + "calib_pp", Conv(s.in_pp, s.channels, 1, s.stride_pp));
      cell.bn_pp = register_module(p + "calib_pp_bn", Bn(s.channels));
    }
    if (!chosen || chosen->ReadsInput(1)) {
      cell.calib_p = register_module(p + "calib_p", Conv(s.in_p, s.channels, 1, s.stride_p));
      cell.bn_p = register_module(p + "calib_p_bn", Bn(s.channels));
    }
    cell.bn_out = register_module(p + "out_bn", Bn(s.channels));
    for (int32_t i = 0; i < kNodes; ++i)
      for (int32_t slot = 0; slot < 2; ++slot)
        for (int32_t op = 0; op < kNumOps; ++op) {
          const int32_t kernel = KernelOf(op);
          if (kernel == 0 || (chosen && chosen->op[i][slot] != op)) continue;
          const std::string q = p + "n" + std::to_string(i) + "_s" + std::to_string(slot) + "_" + OpName(op);
          cell.depthwise[Cell::OpIndex(i, slot, op)] =
              register_module(q + "_dw", Conv(s.channels, s.channels, kernel, 1, s.channels));
          cell.pointwise[Cell::OpIndex(i, slot, op)] = register_module(q + "_pw", Conv(s.channels, s.channels, 1));
          cell.op_bn[Cell::OpIndex(i, slot, op)] = register_module(q + "_bn", Bn(s.channels));
        }
    std::array<bool, kNodes> loose{};
    if (chosen) {
      for (int32_t j : chosen->LooseEnds()) loose[j] = true;
    } else {
      loose.fill(true);
    }
    for (int32_t j = 0; j < kNodes; ++j)
      if (loose[j]) cell.out_conv[j] = register_module(p + "out_n" + std::to_string(j), Conv(s.channels, s.channels, 1));
  }
  classifier_ = register_module("classifier", torch::nn::Linear(shapes.back().channels, o_.num_classes));
}

torch::Tensor EnasNetImpl::RunOp(Cell& cell, int32_t node, int32_t slot, int32_t op, const torch::Tensor& x) {
  switch (static_cast<Op>(op)) {
    case Op::kSepConv3:
    case Op::kSepConv5:
    {
      const int32_t k = Cell::OpIndex(node, slot, op);
      return cell.op_bn[k](cell.pointwise[k](cell.depthwise[k](torch::relu(x))));
    }
    case Op::kAvgPool3:
      return F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1).count_include_pad(false));
    case Op::kMaxPool3:
      return F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(1).padding(1));
    case Op::kIdentity:
      return x;
  }
  throw ConfigError("enas net: operation " + std::to_string(op));
}

torch::Tensor EnasNetImpl::RunCell(Cell& cell, const CellArch& a, const torch::Tensor& h_pp, const torch::Tensor& h_p) {
  std::vector<torch::Tensor> h;
  h.reserve(2 + kNodes);
  // An input no node reads is not calibrated (its weights get no gradient, a FixedNet lacks them).
  h.push_back(a.ReadsInput(0) ? cell.bn_pp(cell.calib_pp(torch::relu(h_pp))) : torch::Tensor());
  h.push_back(a.ReadsInput(1) ? cell.bn_p(cell.calib_p(torch::relu(h_p))) : torch::Tensor());
  for (int32_t i = 0; i < kNodes; ++i)
    h.push_back(RunOp(cell, i, 0, a.op[i][0], h[a.input[i][0]]) + RunOp(cell, i, 1, a.op[i][1], h[a.input[i][1]]));
  torch::Tensor out;
  for (int32_t j : a.LooseEnds()) {
    torch::Tensor y = cell.out_conv[j](torch::relu(h[2 + j]));
    out = out.defined() ? out + y : y;
  }
  return cell.bn_out(out);
}

torch::Tensor EnasNetImpl::Forward(const torch::Tensor& images, const ChildArch& arch) {
  if (fixed_ && !(SameCell(arch.normal, fixed_->normal) && SameCell(arch.reduce, fixed_->reduce)))
    throw ConfigError("enas net: a FixedNet runs only its own child");
  if (images.dim() != 4 || images.size(1) != o_.in_channels || images.size(2) != o_.image_size ||
      images.size(3) != o_.image_size)
    throw ConfigError("enas net: images must be [batch, " + std::to_string(o_.in_channels) + ", " +
                      std::to_string(o_.image_size) + ", " + std::to_string(o_.image_size) + "]");
  torch::Tensor x = stem_bn_(stem_(images));
  torch::Tensor h_pp = x, h_p = x;
  for (Cell& cell : cells_) {
    torch::Tensor out = RunCell(cell, cell.reduce ? arch.reduce : arch.normal, h_pp, h_p);
    h_pp = h_p;
    h_p = out;
  }
  return classifier_(torch::relu(h_p).mean({2, 3}));
}

torch::Tensor EnasNetImpl::forward(const torch::Tensor& images) {
  if (!fixed_) throw ConfigError("enas net: the super-network needs an architecture (Forward)");
  return Forward(images, *fixed_);
}

std::vector<std::string> EnasNetImpl::ChildParameterNames(const ChildArch& c) const {
  std::vector<std::string> names = {"stem.weight", "classifier.weight", "classifier.bias"};
  for (size_t k = 0; k < cells_.size(); ++k) {
    const std::string& p = cell_prefix_[k];
    const CellArch& a = cells_[k].reduce ? c.reduce : c.normal;
    if (a.ReadsInput(0)) names.push_back(p + "calib_pp.weight");
    if (a.ReadsInput(1)) names.push_back(p + "calib_p.weight");
    for (int32_t i = 0; i < kNodes; ++i)
      for (int32_t slot = 0; slot < 2; ++slot)
        if (KernelOf(a.op[i][slot]) > 0) {
          const std::string q = p + "n" + std::to_string(i) + "_s" + std::to_string(slot) + "_" + OpName(a.op[i][slot]);
          names.push_back(q + "_dw.weight");
          names.push_back(q + "_pw.weight");
        }
    for (int32_t j : a.LooseEnds()) names.push_back(p + "out_n" + std::to_string(j) + ".weight");
  }
  return names;
}

void CopySharedWeights(EnasNet& from, EnasNet& to) {
  torch::NoGradGuard no_grad;
  const auto source = from->named_parameters();
  for (auto& p : to->named_parameters()) {
    const torch::Tensor* s = source.find(p.key());
    if (!s) throw ConfigError("enas net: the source has no parameter " + p.key());
    if (!s->sizes().equals(p.value().sizes())) throw ConfigError("enas net: shapes differ for " + p.key());
    p.value().copy_(*s);
  }
}

int64_t CountParameters(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace placerl::enas
