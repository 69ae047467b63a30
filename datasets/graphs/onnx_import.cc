// ONNX model → forward ops (FLOPs, bytes, weights) → training graph. Conventions and errors:
// onnx_import.h. The only file of the project that sees ONNX's headers.
#include "datasets/graphs/onnx_import.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <sys/wait.h>
#include <unistd.h>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

// How the importer treats an operator.
enum class Rule {
  kFold,         // output is a constant once shapes are known (Constant, Shape, Size)
  kAlias,        // output is the first input (Identity, Dropout)
  kElementwise,  // |Y| · per-element cost
  kView,         // Reshape and friends: 0 FLOPs, 0 bytes accessed
  kCopy,         // 0 FLOPs, bytes = in + out
  kConv,
  kConvTranspose,
  kGemm,
  kMatMul,
  kEinsum,      // 2·∏(sizes of all subscripts) for two or more operands
  kNorm,
  kSoftmax,
  kPool,        // |Y| · ∏kernel_shape
  kReduceAll,   // |X| (+|Y| for means)
  kGather,
  kLstm,
  kGru,
  kRnn,
};

struct OpRule {
  Rule rule;
  double per_element = 1;  // kElementwise: flops per output element (0 = inputs − 1)
};

const std::unordered_map<std::string, OpRule>& Rules() {
  static const std::unordered_map<std::string, OpRule> rules = [] {
    std::unordered_map<std::string, OpRule> r;
    for (const char* op : {"Constant", "Shape", "Size"}) r[op] = {Rule::kFold};
    for (const char* op : {"Identity", "Dropout"}) r[op] = {Rule::kAlias};
    for (const char* op : {"Relu", "Neg", "Abs", "Sqrt", "Exp", "Log", "Erf", "Reciprocal", "Floor", "Ceil",
                           "Round", "Sign", "Not", "Cast", "Clip", "Sin", "Cos", "Tanh", "Sigmoid",
                           "IsNaN", "IsInf", "ConstantOfShape", "Range", "Trilu", "Tan", "Asin", "Acos", "Atan",
                           "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "CastLike", "Shrink", "CumSum", "EyeLike",
                           "Resize", "Upsample"})
      r[op] = {Rule::kElementwise, 1};
    for (const char* op : {"LeakyRelu", "Elu", "HardSigmoid", "Softplus", "Softsign", "Celu", "ThresholdedRelu"})
      r[op] = {Rule::kElementwise, 2};
    for (const char* op : {"Selu", "HardSwish"}) r[op] = {Rule::kElementwise, 3};
    r["Gelu"] = {Rule::kElementwise, 5};  // x/√2, erf, +1, ·x, ·½ (opset 20; shape: the importer's)
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal", "Less",
                           "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "Mod",
                           "PRelu", "BitShift"})
      r[op] = {Rule::kElementwise, 0};
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r[op] = {Rule::kView};
    for (const char* op : {"Transpose", "Concat", "Split", "Slice", "Pad", "Expand", "Tile", "GatherElements",
                           "GatherND", "DepthToSpace", "SpaceToDepth", "OneHot", "Scatter", "ScatterElements",
                           "ScatterND"})
      r[op] = {Rule::kCopy};
    r["Conv"] = {Rule::kConv};
    r["ConvTranspose"] = {Rule::kConvTranspose};
    r["Gemm"] = {Rule::kGemm};
    r["MatMul"] = {Rule::kMatMul};
    r["Einsum"] = {Rule::kEinsum};
    for (const char* op : {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "LRN"})
      r[op] = {Rule::kNorm};
    for (const char* op : {"Softmax", "LogSoftmax", "SoftmaxCrossEntropyLoss"}) r[op] = {Rule::kSoftmax};
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) r[op] = {Rule::kPool};
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ReduceMean", "ReduceSum",
                           "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                           "ReduceLogSumExp", "ReduceLogSum", "ArgMax", "ArgMin", "Hardmax", "TopK",
                           "NegativeLogLikelihoodLoss"})
      r[op] = {Rule::kReduceAll};
    r["Gather"] = {Rule::kGather};
    r["LSTM"] = {Rule::kLstm};
    r["GRU"] = {Rule::kGru};
    r["RNN"] = {Rule::kRnn};
    return r;
  }();
  return rules;
}

double ElementBytes(int elem_type) {
  using T = onnx::TensorProto;
  switch (elem_type) {
    case T::BOOL: case T::INT8: case T::UINT8: return 1;
    case T::INT16: case T::UINT16: case T::FLOAT16: case T::BFLOAT16: return 2;
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::DOUBLE: case T::INT64: case T::UINT64: case T::COMPLEX64: return 8;
    case T::COMPLEX128: return 16;
    default: return 4;  // strings and unknown types: counted like fp32
  }
}

bool IsFloat(int elem_type) {
  using T = onnx::TensorProto;
  return elem_type == T::FLOAT || elem_type == T::FLOAT16 || elem_type == T::BFLOAT16 || elem_type == T::DOUBLE;
}

// A tensor's inferred type: element size and dims (known = every dim has a value ≥ 0).
struct Tensor {
  double element_bytes = 4;
  int elem_type = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  bool known = false;
  double elements() const {
    double n = 1;
    for (int64_t d : dims) n *= static_cast<double>(d);
    return n;
  }
  double bytes() const { return elements() * element_bytes; }
};

Tensor FromTypeProto(const onnx::TypeProto& t) {
  Tensor out;
  if (!t.has_tensor_type()) return out;
  out.elem_type = t.tensor_type().elem_type();
  out.element_bytes = ElementBytes(out.elem_type);
  if (!t.tensor_type().has_shape()) return out;
  out.known = true;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) out.known = false;
    out.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return out;
}

// Values of small integer tensors computed at import time (shape arithmetic).
// libonnx 1.12's shape inference indexes the dims of some inputs unchecked (Gemm, Conv, pool,
// RNN rules): a malformed model whose wrong rank only shows in an intermediate tensor crashes
// it (onnx_fuzz). It therefore runs in a forked child; the inferred model and the propagated
// shape data come back through a pipe, and a child killed by a signal becomes an error.
// Result bytes: 'E' + message, or 'M' + u64 size + ModelProto + GraphProto whose value_info
// carries the data map (name → shape).
void InferShapesIsolated(onnx::ModelProto* model, std::unordered_map<std::string, onnx::TensorShapeProto>* data,
                         const std::string& label) {
  int fds[2];
  if (pipe(fds) != 0) throw IoError(label + ": pipe: " + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw IoError(label + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {  // child: infer, write, _exit (no destructors, no atexit handlers)
    close(fds[0]);
    std::string out;
    try {
      std::unordered_map<std::string, onnx::TensorShapeProto> d;
      onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 1, true), &d);
      onnx::GraphProto carrier;
      for (const auto& [name, shape] : d) {
        auto* v = carrier.add_value_info();
        v->set_name(name);
        *v->mutable_type()->mutable_tensor_type()->mutable_shape() = shape;
      }
      const std::string m = model->SerializeAsString();
      const uint64_t size = m.size();
      out = "M" + std::string(reinterpret_cast<const char*>(&size), sizeof(size)) + m + carrier.SerializeAsString();
    } catch (const std::exception& e) {
      out = std::string("E") + e.what();
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t w = write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) _exit(3);
      done += static_cast<size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof(buf));
    if (r > 0) in.append(buf, static_cast<size_t>(r));
    else if (r == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw ParseError(label, 0, "ONNX shape inference (libonnx) crashed on this model (signal " +
                                   std::to_string(WTERMSIG(status)) + "): a malformed model — check the ranks of its "
                                   "Gemm/Conv/pool/RNN inputs");
  if (in.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw ParseError(label, 0, "ONNX shape inference failed (no result from the inference process)");
  if (in[0] == 'E') throw ParseError(label, 0, "ONNX shape inference failed: " + in.substr(1));
  uint64_t size = 0;
  if (in[0] != 'M' || in.size() < 1 + sizeof(size)) throw ParseError(label, 0, "ONNX shape inference: bad result");
  std::memcpy(&size, in.data() + 1, sizeof(size));
  const size_t at = 1 + sizeof(size);
  onnx::GraphProto carrier;
  if (size > in.size() - at || !model->ParseFromArray(in.data() + at, static_cast<int>(size)) ||
      !carrier.ParseFromArray(in.data() + at + size, static_cast<int>(in.size() - at - size)))
    throw ParseError(label, 0, "ONNX shape inference: bad result");
  data->clear();
  for (const auto& v : carrier.value_info()) (*data)[v.name()] = v.type().tensor_type().shape();
}

struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> data;
};

// Shape tensors are tiny; larger integer values are not computed (their nodes still fold).
constexpr size_t kMaxFoldedElements = 1 << 16;

// Elements of a tensor of `dims`, or false when a dim is negative or there are more than
// kMaxFoldedElements (checked before multiplying on: no overflow).
bool SmallCount(const std::vector<int64_t>& dims, size_t* n) {
  *n = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d == 0) {
      *n = 0;
      continue;
    }
    if (*n > kMaxFoldedElements / static_cast<size_t>(d) + 1) return false;
    *n *= static_cast<size_t>(d);
  }
  return *n <= kMaxFoldedElements;
}

bool IsIntegerType(int t) {
  using T = onnx::TensorProto;
  return t == T::INT64 || t == T::INT32 || t == T::INT16 || t == T::INT8 || t == T::UINT8 || t == T::UINT16 ||
         t == T::UINT32 || t == T::BOOL;
}

// An integer TensorProto's values (typed fields or little-endian raw_data); false when it is
// not an integer tensor, too large, or its data are external / inconsistent.
bool ReadIntTensor(const onnx::TensorProto& t, IntTensor* out) {
  using T = onnx::TensorProto;
  if (!IsIntegerType(t.data_type()) || t.data_location() == T::EXTERNAL) return false;
  out->dims.assign(t.dims().begin(), t.dims().end());
  size_t n = 0;
  if (!SmallCount(out->dims, &n)) return false;
  out->data.clear();
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const size_t width = t.data_type() == T::INT64 ? 8 : t.data_type() == T::INT32 || t.data_type() == T::UINT32 ? 4
                         : t.data_type() == T::INT16 || t.data_type() == T::UINT16                              ? 2
                                                                                                                : 1;
    if (raw.size() != n * width) return false;
    const bool is_signed = t.data_type() == T::INT64 || t.data_type() == T::INT32 || t.data_type() == T::INT16 ||
                           t.data_type() == T::INT8;
    for (size_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      for (size_t b = 0; b < width; ++b) v |= static_cast<uint64_t>(static_cast<unsigned char>(raw[i * width + b])) << (8 * b);
      if (is_signed && width < 8 && (v >> (8 * width - 1)) & 1) v |= ~uint64_t(0) << (8 * width);  // sign-extend
      out->data.push_back(static_cast<int64_t>(v));
    }
  } else if (t.data_type() == T::INT64) {
    out->data.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (t.data_type() == T::UINT32 || t.data_type() == T::UINT64) {
    out->data.assign(t.uint64_data().begin(), t.uint64_data().end());
  } else {
    out->data.assign(t.int32_data().begin(), t.int32_data().end());
  }
  return out->data.size() == n;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = FindAttribute(n, name);
  return a ? a->i() : fallback;
}

// Evaluates the integer shape arithmetic of exported models (Shape, Size, Constant, Gather,
// Unsqueeze, Squeeze, Concat, Slice, Cast, Reshape, Identity, ConstantOfShape, Range and
// element-wise Add/Sub/Mul/Div/Mod/Max/Min/Neg/Abs/Equal/Less/Greater/Where with
// broadcasting) over values already known; anything else leaves its outputs unknown.
class IntFolder {
 public:
  // `values`: known tensors (integer initializers to start); `shape_of` gives the fully known
  // dims of a tensor or nullptr.
  template <typename ShapeOf>
  void Run(const onnx::GraphProto& g, ShapeOf shape_of) {
    for (const auto& n : g.node()) {
      std::vector<const IntTensor*> in;
      for (const std::string& x : n.input()) {
        auto it = values.find(x);
        in.push_back(x.empty() || it == values.end() ? nullptr : &it->second);
      }
      IntTensor out;
      if (n.output_size() == 0 || n.output(0).empty() || values.count(n.output(0))) continue;
      // Every value kept has as many elements as its dims say: the evaluators index by dims.
      size_t count = 0;
      if (Eval(n, in, shape_of, &out) && SmallCount(out.dims, &count) && count == out.data.size())
        values[n.output(0)] = std::move(out);
    }
  }
  std::unordered_map<std::string, IntTensor> values;

 private:
  static size_t Count(const std::vector<int64_t>& dims) {  // kMaxFoldedElements + 1 when too many
    size_t n = 0;
    return SmallCount(dims, &n) ? n : kMaxFoldedElements + 1;
  }
  static bool Axes(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in, size_t input,
                   std::vector<int64_t>* axes) {
    if (const auto* a = FindAttribute(n, "axes")) {
      axes->assign(a->ints().begin(), a->ints().end());
      return true;
    }
    if (input < in.size()) {
      if (!in[input]) return false;
      *axes = in[input]->data;
      return true;
    }
    axes->clear();
    return true;
  }
  template <typename ShapeOf>
  static bool Eval(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in, ShapeOf shape_of,
                   IntTensor* out) {
    const std::string& op = n.op_type();
    auto all_in = [&](size_t k) {
      if (in.size() < k) return false;
      for (size_t i = 0; i < k; ++i)
        if (!in[i]) return false;
      return true;
    };
    if (op == "Constant") {
      if (const auto* a = FindAttribute(n, "value")) return ReadIntTensor(a->t(), out);
      if (const auto* a = FindAttribute(n, "value_int")) {
        *out = {{}, {a->i()}};
        return true;
      }
      if (const auto* a = FindAttribute(n, "value_ints")) {
        out->data.assign(a->ints().begin(), a->ints().end());
        out->dims = {static_cast<int64_t>(out->data.size())};
        return true;
      }
      return false;
    }
    if (op == "Shape" || op == "Size") {
      const std::vector<int64_t>* dims = n.input_size() > 0 ? shape_of(n.input(0)) : nullptr;
      if (!dims) return false;
      if (op == "Size") {
        int64_t size = 1;
        for (int64_t d : *dims) {
          if (d < 0 || (d > 0 && size > (int64_t(1) << 62) / d)) return false;
          size *= d;
        }
        *out = {{}, {size}};
        return true;
      }
      const int64_t r = static_cast<int64_t>(dims->size());
      int64_t start = IntAttribute(n, "start", 0), end = IntAttribute(n, "end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, 0, r);
      for (int64_t i = start; i < end; ++i) out->data.push_back((*dims)[i]);
      out->dims = {static_cast<int64_t>(out->data.size())};
      return true;
    }
    if (op == "Identity" || op == "Cast") {
      if (!all_in(1)) return false;
      if (op == "Cast" && !IsIntegerType(static_cast<int>(IntAttribute(n, "to", 0)))) return false;
      *out = *in[0];
      if (op == "Cast" && IntAttribute(n, "to", 0) == onnx::TensorProto::BOOL)
        for (int64_t& v : out->data) v = v != 0;
      return true;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      if (!all_in(1)) return false;
      std::vector<int64_t> axes;
      if (!Axes(n, in, 1, &axes)) return false;
      *out = *in[0];
      if (op == "Unsqueeze") {
        const int64_t r = static_cast<int64_t>(out->dims.size() + axes.size());
        for (int64_t& a : axes) a = a < 0 ? a + r : a;
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) {
          if (a < 0 || a > static_cast<int64_t>(out->dims.size())) return false;
          out->dims.insert(out->dims.begin() + a, 1);
        }
      } else {
        const int64_t r = static_cast<int64_t>(out->dims.size());
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < r; ++i) {
          const bool listed = std::find_if(axes.begin(), axes.end(), [&](int64_t a) { return (a < 0 ? a + r : a) == i; }) != axes.end();
          if ((axes.empty() && out->dims[i] == 1) || listed) continue;
          dims.push_back(out->dims[i]);
        }
        out->dims = dims;
      }
      return true;
    }
    if (op == "Reshape") {
      if (!all_in(2)) return false;
      std::vector<int64_t> dims = in[1]->data;
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 0 && i < in[0]->dims.size()) dims[i] = in[0]->dims[i];
        if (dims[i] == -1) {
          if (infer >= 0) return false;  // two inferred dimensions: not a shape
          infer = static_cast<int64_t>(i);
        } else if (dims[i] < 0 || __builtin_mul_overflow(known, dims[i], &known)) {
          return false;  // not a shape (onnx_fuzz: 3.3e15 · 4.5e15 overflowed here)
        }
      }
      if (infer >= 0) dims[infer] = known == 0 ? 0 : static_cast<int64_t>(in[0]->data.size()) / known;
      if (Count(dims) != in[0]->data.size()) return false;
      *out = {dims, in[0]->data};
      return true;
    }
    if (op == "Concat") {
      if (!all_in(n.input_size())) return false;
      for (const IntTensor* t : in)
        if (t->dims.size() != 1) return false;
      for (const IntTensor* t : in) out->data.insert(out->data.end(), t->data.begin(), t->data.end());
      out->dims = {static_cast<int64_t>(out->data.size())};
      return true;
    }
    if (op == "Gather") {
      if (!all_in(2) || in[0]->dims.empty()) return false;
      int64_t axis = IntAttribute(n, "axis", 0);
      if (axis != 0 && axis != -static_cast<int64_t>(in[0]->dims.size())) return false;
      const int64_t rows = in[0]->dims[0];
      const size_t row = in[0]->data.size() / static_cast<size_t>(std::max<int64_t>(rows, 1));
      out->dims = in[1]->dims;
      out->dims.insert(out->dims.end(), in[0]->dims.begin() + 1, in[0]->dims.end());
      if (in[1]->data.size() * row > kMaxFoldedElements) return false;
      for (int64_t i : in[1]->data) {
        if (i < 0) i += rows;
        if (i < 0 || i >= rows) return false;
        out->data.insert(out->data.end(), in[0]->data.begin() + i * row, in[0]->data.begin() + (i + 1) * row);
      }
      return true;
    }
    if (op == "Slice") {
      if (!all_in(3) || in[0]->dims.size() != 1 || in[1]->data.size() != 1 || in[2]->data.size() != 1) return false;
      if (in.size() > 3 && in[3] && (in[3]->data.size() != 1 || (in[3]->data[0] != 0 && in[3]->data[0] != -1)))
        return false;
      int64_t step = 1;
      if (in.size() > 4 && in[4]) {
        if (in[4]->data.size() != 1 || in[4]->data[0] == 0) return false;
        step = in[4]->data[0];
      }
      const int64_t len = in[0]->dims[0];
      int64_t start = in[1]->data[0], end = in[2]->data[0];
      if (start < 0) start += len;
      if (end < 0) end += len;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, len);
        end = std::clamp<int64_t>(end, 0, len);
        for (int64_t i = start; i < end; i += step) out->data.push_back(in[0]->data[i]);
      } else {
        start = std::clamp<int64_t>(start, -1, len - 1);
        end = std::clamp<int64_t>(end, -1, len - 1);
        for (int64_t i = start; i > end; i += step) out->data.push_back(in[0]->data[i]);
      }
      out->dims = {static_cast<int64_t>(out->data.size())};
      return true;
    }
    if (op == "ConstantOfShape") {
      if (!all_in(1)) return false;
      int64_t fill = 0;
      if (const auto* a = FindAttribute(n, "value")) {
        IntTensor v;
        if (!ReadIntTensor(a->t(), &v) || v.data.size() != 1) return false;
        fill = v.data[0];
      }
      for (int64_t d : in[0]->data)
        if (d < 0) return false;
      out->dims = in[0]->data;
      const size_t count = Count(out->dims);
      if (count > kMaxFoldedElements) return false;
      out->data.assign(count, fill);
      return true;
    }
    if (op == "Range") {
      if (!all_in(3) || in[0]->data.size() != 1 || in[1]->data.size() != 1 || in[2]->data.size() != 1 ||
          in[2]->data[0] == 0)
        return false;
      const int64_t start = in[0]->data[0], limit = in[1]->data[0], delta = in[2]->data[0];
      for (int64_t v = start; delta > 0 ? v < limit : v > limit;) {
        out->data.push_back(v);
        if (out->data.size() > kMaxFoldedElements) return false;
        if (__builtin_add_overflow(v, delta, &v)) break;  // the next value is beyond int64: past limit
      }
      out->dims = {static_cast<int64_t>(out->data.size())};
      return true;
    }
    if (op == "Neg" || op == "Abs" || op == "Not") {
      if (!all_in(1)) return false;
      *out = *in[0];
      for (int64_t& v : out->data) {
        if (v == std::numeric_limits<int64_t>::min() && op != "Not") return false;  // −v overflows
        v = op == "Neg" ? -v : op == "Abs" ? std::abs(v) : !v;
      }
      return true;
    }
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min",
                                                  "Equal", "Less", "Greater", "Where"};
    if (kBinary.count(op)) {
      const size_t k = op == "Where" ? 3 : 2;
      if (n.input_size() != static_cast<int>(k) || !all_in(k)) return false;
      // Numpy broadcasting of k inputs.
      size_t rank = 0;
      for (size_t i = 0; i < k; ++i) rank = std::max(rank, in[i]->dims.size());
      std::vector<int64_t> dims(rank, 1);
      for (size_t i = 0; i < k; ++i)
        for (size_t d = 0; d < in[i]->dims.size(); ++d) {
          const int64_t x = in[i]->dims[d];
          int64_t& y = dims[rank - in[i]->dims.size() + d];
          if (y == 1) y = x;
          else if (x != 1 && x != y) return false;
        }
      const size_t total = Count(dims);
      if (total > kMaxFoldedElements) return false;
      out->dims = dims;
      out->data.resize(total);
      std::vector<int64_t> index(rank, 0);
      for (size_t e = 0; e < total; ++e) {
        int64_t v[3] = {0, 0, 0};
        for (size_t i = 0; i < k; ++i) {
          size_t flat = 0;
          const size_t r = in[i]->dims.size();
          for (size_t d = 0; d < r; ++d) {
            const int64_t extent = in[i]->dims[d];
            flat = flat * static_cast<size_t>(extent) + static_cast<size_t>(extent == 1 ? 0 : index[rank - r + d]);
          }
          v[i] = in[i]->data[flat];
        }
        int64_t r = 0;
        // Values beyond int64 are not shapes: such a node is not folded (onnx_fuzz found the
        // overflow of 1.4e17 · 1.4e17).
        if (op == "Add") {
          if (__builtin_add_overflow(v[0], v[1], &r)) return false;
        } else if (op == "Sub") {
          if (__builtin_sub_overflow(v[0], v[1], &r)) return false;
        } else if (op == "Mul") {
          if (__builtin_mul_overflow(v[0], v[1], &r)) return false;
        } else if (op == "Div" || op == "Mod") {
          if (v[1] == 0 || (v[1] == -1 && v[0] == std::numeric_limits<int64_t>::min())) return false;
          r = op == "Div" ? v[0] / v[1] : v[0] % v[1];
        } else if (op == "Max") r = std::max(v[0], v[1]);
        else if (op == "Min") r = std::min(v[0], v[1]);
        else if (op == "Equal") r = v[0] == v[1];
        else if (op == "Less") r = v[0] < v[1];
        else if (op == "Greater") r = v[0] > v[1];
        else r = v[0] ? v[1] : v[2];
        out->data[e] = r;
        for (size_t d = rank; d-- > 0;) {  // next multi-index
          if (++index[d] < dims[d]) break;
          index[d] = 0;
        }
      }
      return true;
    }
    return false;
  }
};

// Einsum ("bij,jk->bik", "...ij,...jk", implicit output): the output dims and the number of
// points of the iteration space (∏ sizes of all subscripts × broadcast '...' dims). Returns ""
// or what does not fit.
std::string EinsumShape(const std::string& equation, const std::vector<std::vector<int64_t>>& inputs,
                        std::vector<int64_t>* out_dims, double* iterations) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    const size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != inputs.size()) return "equation '" + equation + "' has " + std::to_string(terms.size()) +
                                            " operands, the node " + std::to_string(inputs.size());
  std::map<char, int64_t> sizes;
  std::map<char, int> uses;
  std::vector<int64_t> ellipsis;  // broadcast dims of '...', right-aligned
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::string& term = terms[k];
    const size_t dots = term.find("...");
    std::string letters;
    for (char c : term)
      if (std::isalpha(static_cast<unsigned char>(c))) letters += c;
    const std::vector<int64_t>& dims = inputs[k];
    if (letters.size() > dims.size() || (dots == std::string::npos && letters.size() != dims.size()))
      return "equation '" + equation + "' does not match the rank of input " + std::to_string(k);
    const size_t before = dots == std::string::npos ? letters.size() : dots;
    const size_t extra = dims.size() - letters.size();
    std::vector<int64_t> e(dims.begin() + before, dims.begin() + before + extra);
    if (e.size() > ellipsis.size()) ellipsis.insert(ellipsis.begin(), e.size() - ellipsis.size(), 1);
    for (size_t d = 0; d < e.size(); ++d) {
      int64_t& y = ellipsis[ellipsis.size() - e.size() + d];
      y = std::max(y, e[d]);
    }
    for (size_t li = 0; li < letters.size(); ++li) {
      const int64_t size = dims[li < before ? li : li + extra];
      sizes[letters[li]] = std::max(sizes[letters[li]], size);
      ++uses[letters[li]];
    }
  }
  std::string rhs;
  bool rhs_dots = false;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
    rhs_dots = rhs.find("...") != std::string::npos;
  } else {  // implicit: the letters used once, in alphabetical order, after '...'
    rhs_dots = !ellipsis.empty();
    for (const auto& [c, n] : uses)
      if (n == 1) rhs += c;
  }
  out_dims->clear();
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs[i] == '.') {
      if (rhs.compare(i, 3, "...") == 0) {
        out_dims->insert(out_dims->end(), ellipsis.begin(), ellipsis.end());
        i += 2;
      }
      continue;
    }
    auto it = sizes.find(rhs[i]);
    if (it == sizes.end()) return "output subscript '" + std::string(1, rhs[i]) + "' is in no input";
    out_dims->push_back(it->second);
  }
  if (arrow == std::string::npos && rhs_dots) {
    std::vector<int64_t> dims = ellipsis;
    dims.insert(dims.end(), out_dims->begin(), out_dims->end());
    *out_dims = dims;
  }
  *iterations = 1;
  for (int64_t e : ellipsis) *iterations *= static_cast<double>(e);
  for (const auto& [c, size] : sizes) *iterations *= static_cast<double>(size);
  return "";
}

// A dim_param that names the batch ("batch", "batch_size", "N", "Batch"): takes options.batch
// wherever it is (time-major RNN inputs have the batch at dimension 1).
bool IsBatchName(const std::string& param) {
  std::string lower;
  for (char c : param) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "n" || lower.find("batch") != std::string::npos;
}

std::string Sanitized(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == ',' || c == '=' || c == '#')
      c = '_';
  return s;
}

// What a value (tensor name) is at import time.
struct Value {
  int op = -1;               // producing forward op; -1 = a graph input or a constant
  bool constant = false;     // an initializer, or computed from constants only
  std::vector<int> weights;  // weight initializers this constant derives from (ids)
};

class Importer {
 public:
  Importer(const std::string& label, const OnnxImportOptions& options) : label_(label), options_(options) {}

  OnnxForward Run(const std::string& bytes) {
    if (options_.batch < 1) throw ConfigError("onnx: batch must be >= 1, got " + std::to_string(options_.batch));
    for (const auto& [name, v] : options_.dims)
      if (v < 1) throw ConfigError("onnx: dimension '" + name + "' must be >= 1, got " + std::to_string(v));
    if (bytes.size() > options_.max_bytes)
      Fail("the model is " + std::to_string(bytes.size()) + " bytes, more than the limit of " +
           std::to_string(options_.max_bytes));
    if (bytes.size() > static_cast<size_t>(INT32_MAX) || !model_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      Fail("not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)");
    if (!model_.has_graph() || model_.graph().node_size() == 0) Fail("the ONNX model has no graph nodes");
    bool default_opset = false;
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") default_opset = true;
    if (!default_opset) Fail("the ONNX model imports no opset of the default domain");

    CheckNodes();
    SortNodes();
    FixInputDims();
    InferShapesFoldingShapeData();  // leaves the final shapes in tensors_
    return BuildOps();
  }

 private:
  [[noreturn]] void Fail(const std::string& reason) const { throw ParseError(label_, 0, reason); }
  std::string NodeLabel(int i) const {
    const auto& n = model_.graph().node(i);
    return "node #" + std::to_string(i) + " '" + n.name() + "' (" + n.op_type() + ")";
  }
  [[noreturn]] void FailNode(int i, const std::string& reason) const { Fail(NodeLabel(i) + ": " + reason); }

  // Operators, domains, subgraphs, SSA form, missing inputs, cycles.
  void CheckNodes() {
    const auto& g = model_.graph();
    for (const auto& t : g.initializer()) initializers_.emplace(t.name(), &t);
    for (const auto& in : g.input()) graph_inputs_.insert(in.name());
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (!n.domain().empty() && n.domain() != "ai.onnx")
        FailNode(i, "operator domain '" + n.domain() + "' is not supported (only the default ONNX domain)");
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
            a.graphs_size() > 0)
          FailNode(i, "subgraphs (control flow: If, Loop, Scan) are not supported");
      if (Rules().count(n.op_type()) == 0) FailNode(i, "unsupported operator '" + n.op_type() + "'");
      // libonnx 1.12's conv/pool shape inference divides by strides and trusts the rest.
      for (const auto& a : n.attribute()) {
        const bool positive = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape";
        if (!positive && a.name() != "pads") continue;
        for (int64_t v : a.ints())
          if (positive ? v < 1 : v < 0)
            FailNode(i, "attribute '" + a.name() + "' has " + std::to_string(v) + " (must be " +
                            (positive ? ">= 1)" : ">= 0)"));
      }
      for (const std::string& out : n.output()) {
        if (out.empty()) continue;
        if (initializers_.count(out) || graph_inputs_.count(out))
          FailNode(i, "output '" + out + "' is also a graph input or initializer");
        if (!producer.emplace(out, i).second)
          FailNode(i, "output '" + out + "' is already produced by " + NodeLabel(producer[out]));
      }
    }
    node_inputs_.assign(g.node_size(), {});
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& in : g.node(i).input()) {
        if (in.empty()) continue;  // an omitted optional input
        auto it = producer.find(in);
        if (it != producer.end()) {
          node_inputs_[i].push_back(it->second);
        } else if (!initializers_.count(in) && !graph_inputs_.count(in)) {
          FailNode(i, "input '" + in + "' is produced by no node and is no graph input or initializer");
        }
      }
      std::sort(node_inputs_[i].begin(), node_inputs_[i].end());
      node_inputs_[i].erase(std::unique(node_inputs_[i].begin(), node_inputs_[i].end()), node_inputs_[i].end());
    }
    for (const auto& out : g.output())
      if (!producer.count(out.name()) && !initializers_.count(out.name()) && !graph_inputs_.count(out.name()))
        Fail("graph output '" + out.name() + "' is produced by no node");
    const int cycle = FindCycleOp(node_inputs_);
    if (cycle >= 0) FailNode(cycle, "is on a cycle of the graph");
  }

  // Topological order (Kahn's, smallest node index first), which shape inference needs.
  void SortNodes() {
    auto* g = model_.mutable_graph();
    const int n = g->node_size();
    std::vector<std::vector<int>> consumers(n);
    std::vector<int> indegree(n);
    for (int i = 0; i < n; ++i) {
      indegree[i] = static_cast<int>(node_inputs_[i].size());
      for (int p : node_inputs_[i]) consumers[p].push_back(i);
    }
    std::set<int> ready;
    for (int i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.insert(i);
    std::vector<int> order;
    while (!ready.empty()) {
      const int v = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(v);
      for (int c : consumers[v])
        if (--indegree[c] == 0) ready.insert(c);
    }
    bool sorted = true;
    for (int i = 0; i < n; ++i) sorted = sorted && order[i] == i;
    if (sorted) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order) *nodes.Add() = g->node(i);
    g->mutable_node()->Swap(&nodes);
  }

  // Symbolic dims of data inputs → values (dims by name, else batch for dim 0).
  void FixInputDims() {
    auto* g = model_.mutable_graph();
    std::set<std::string> used, seen;
    // When some input names its batch dimension, dimension 0 is not assumed to be the batch
    // (a time-major [seq, batch] input would otherwise take the batch size as its length).
    bool has_batch_name = false;
    for (const auto& in : g->input())
      if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
        for (const auto& dim : in.type().tensor_type().shape().dim())
          has_batch_name = has_batch_name || (dim.has_dim_param() && IsBatchName(dim.dim_param()));
    for (auto& in : *g->mutable_input()) {
      if (auto init = initializers_.find(in.name()); init != initializers_.end()) {
        // An initializer listed as an input (IR < 4): its declared type is the initializer's
        // (libonnx 1.12 crashes merging some malformed declared shapes).
        auto* t = in.mutable_type()->mutable_tensor_type();
        t->set_elem_type(init->second->data_type());
        t->clear_shape();
        auto* shape = t->mutable_shape();
        for (int64_t d : init->second->dims()) shape->add_dim()->set_dim_value(d);
        continue;
      }
      if (!in.type().has_tensor_type()) Fail("graph input '" + in.name() + "' is not a tensor");
      if (!in.type().tensor_type().has_shape()) Fail("graph input '" + in.name() + "' has no shape");
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < shape->dim_size(); ++d) {
        auto* dim = shape->mutable_dim(d);
        if (dim->has_dim_value()) {
          if (dim->dim_value() < 0) Fail("graph input '" + in.name() + "' has a negative dimension");
          continue;
        }
        const std::string param = dim->has_dim_param() ? dim->dim_param() : "";
        if (!param.empty()) seen.insert(param);
        auto it = options_.dims.find(param);
        if (!param.empty() && it != options_.dims.end()) {
          dim->set_dim_value(it->second);
          used.insert(param);
        } else if (IsBatchName(param) || (d == 0 && !has_batch_name)) {
          dim->set_dim_value(options_.batch);
        } else {
          throw ConfigError(label_ + ": graph input '" + in.name() + "' dimension " + std::to_string(d) +
                            (param.empty() ? " is unknown" : " '" + param + "' is symbolic") +
                            ": give its value (onnx dims, or model.onnx?" +
                            (param.empty() ? std::string("NAME") : param) + "=N)");
        }
      }
    }
    for (const auto& [name, v] : options_.dims)
      if (!used.count(name)) {
        std::string names;
        for (const std::string& s : seen) names += (names.empty() ? "" : ", ") + s;
        throw ConfigError(label_ + ": the model has no symbolic input dimension '" + name + "' (it has: " +
                          (names.empty() ? "none" : names) + ")");
      }
    // libonnx 1.12's Gemm, Conv, ConvTranspose, pool and RNN inference index their inputs'
    // dims unchecked (found by fuzzing): ranks declared on graph inputs, initializers and
    // Constant nodes must fit. (A wrong rank that only ONNX's inference of an intermediate
    // tensor reveals can still reach those unchecked rules: docs/fuzzing.md.)
    std::unordered_map<std::string, int> declared_rank;
    for (const auto& in : g->input())
      if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
        declared_rank[in.name()] = in.type().tensor_type().shape().dim_size();
    for (const auto& t : g->initializer()) declared_rank[t.name()] = t.dims_size();
    // Constant nodes declare their output's rank in their attribute (onnx_fuzz: a Gemm fed by a
    // rank-1 Constant crashed libonnx's inference).
    for (const auto& n : g->node()) {
      if (n.op_type() != "Constant" || n.output_size() < 1) continue;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) declared_rank[n.output(0)] = a.t().dims_size();
        else if (a.name() == "value_float" || a.name() == "value_int") declared_rank[n.output(0)] = 0;
        else if (a.name() == "value_floats" || a.name() == "value_ints") declared_rank[n.output(0)] = 1;
      }
    }
    for (int i = 0; i < g->node_size(); ++i) {
      const auto& n = g->node(i);
      const std::string& op = n.op_type();
      auto rank = [&](int k) {
        if (k >= n.input_size()) return -1;
        auto it = declared_rank.find(n.input(k));
        return it == declared_rank.end() ? -1 : it->second;
      };
      auto need = [&](int k, bool ok, const std::string& what) {
        if (rank(k) >= 0 && !ok)
          FailNode(i, "input '" + n.input(k) + "' has rank " + std::to_string(rank(k)) + ", " + op + " needs " + what);
      };
      if (op == "Gemm") {
        need(0, rank(0) == 2, "2");
        need(1, rank(1) == 2, "2");
      } else if (op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
        need(0, rank(0) >= 3, "at least 3");
        if (op == "Conv" || op == "ConvTranspose") {
          need(1, rank(1) >= 3, "at least 3");
          need(1, rank(0) < 0 || rank(1) == rank(0), "the rank of X (" + std::to_string(rank(0)) + ")");
        }
        const auto* k = FindAttribute(n, "kernel_shape");
        if (k && rank(0) >= 3 && k->ints_size() != rank(0) - 2)
          FailNode(i, "kernel_shape has " + std::to_string(k->ints_size()) + " values for an input of rank " +
                          std::to_string(rank(0)));
      } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
        for (int k = 0; k < 3; ++k) need(k, rank(k) == 3, "3");
      }
    }
    // Declared intermediate shapes may carry the old symbols; inference recomputes them.
    g->clear_value_info();
  }

  // ONNX 1.12's Reshape (and Expand, Tile, ConstantOfShape, …) infers its output shape only
  // from a constant shape input, but exported models compute it (Shape → Gather → Unsqueeze →
  // Concat → Reshape). So each round infers shapes, evaluates the integer shape arithmetic
  // (IntFolder, else ONNX's data propagation) and feeds the values of such inputs back as
  // int64 initializers; rounds repeat until nothing changes (one per dependent chain).
  void InferShapesFoldingShapeData() {
    // (op_type, input index) pairs whose shape inference needs the input's values.
    static const std::set<std::pair<std::string, int>> kDataInputs = {
        {"Reshape", 1}, {"Expand", 1},    {"Tile", 1},    {"ConstantOfShape", 0}, {"Pad", 1},
        {"Slice", 1},   {"Slice", 2},     {"Slice", 3},   {"Slice", 4},           {"Unsqueeze", 1},
        {"Squeeze", 1}, {"Split", 1},     {"Range", 0},   {"Range", 1},           {"Range", 2},
        {"ReduceSum", 1}, {"OneHot", 1},  {"TopK", 1},    {"Resize", 3}};
    std::unordered_map<std::string, std::string> folded;  // tensor → initializer holding its values
    std::map<std::string, std::pair<int, std::vector<int64_t>>> own_shapes;  // name → (elem type, dims)
    auto* g = model_.mutable_graph();
    for (;;) {  // ends: every round rewires at least one more input
      std::unordered_map<std::string, onnx::TensorShapeProto> data;
      g->clear_value_info();  // rebuilt by each round, from the shapes ONNX cannot infer
      for (const auto& [name, dims] : own_shapes) {
        auto* v = g->add_value_info();
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(dims.first);
        auto* shape = t->mutable_shape();
        for (int64_t d : dims.second) shape->add_dim()->set_dim_value(d);
      }
      // libonnx 1.12 sizes LayerNormalization's optional Mean/InvStdDev outputs with an
      // unchecked axis (an axis < −rank crashes it): ONNX infers Y only, the importer the rest.
      std::vector<std::pair<int, std::vector<std::string>>> layer_norm_stats;
      for (int i = 0; i < g->node_size(); ++i) {
        auto* n = g->mutable_node(i);
        if (n->op_type() != "LayerNormalization" || n->output_size() <= 1) continue;
        layer_norm_stats.push_back({i, std::vector<std::string>(n->output().begin() + 1, n->output().end())});
        while (n->output_size() > 1) n->mutable_output()->RemoveLast();
      }
      InferShapesIsolated(&model_, &data, label_);
      for (const auto& [i, outputs] : layer_norm_stats)
        for (const std::string& o : outputs) g->mutable_node(i)->add_output(o);
      CollectTensors();
      int rewired = 0;
      for (const auto& [i, outputs] : layer_norm_stats) {
        const auto& n = g->node(i);
        auto x = tensors_.find(n.input_size() > 0 ? n.input(0) : "");
        if (x == tensors_.end() || !x->second.known) continue;
        const int64_t rank = static_cast<int64_t>(x->second.dims.size());
        int64_t axis = IntAttribute(n, "axis", -1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank)
          FailNode(i, "axis " + std::to_string(IntAttribute(n, "axis", -1)) + " is out of range for rank " +
                          std::to_string(rank));
        std::vector<int64_t> dims = x->second.dims;
        for (int64_t d = axis; d < rank; ++d) dims[d] = 1;
        const int type = static_cast<int>(IntAttribute(n, "stash_type", onnx::TensorProto::FLOAT));
        for (const std::string& o : outputs) {
          if (o.empty()) continue;
          Tensor t;
          t.elem_type = type;
          t.element_bytes = ElementBytes(type);
          t.dims = dims;
          t.known = true;
          tensors_[o] = t;
          if (own_shapes.emplace(o, std::make_pair(type, dims)).second) ++rewired;
        }
      }
      IntFolder fold;
      for (const auto& t : g->initializer()) {
        IntTensor v;
        if (ReadIntTensor(t, &v)) fold.values[t.name()] = std::move(v);
      }
      fold.Run(*g, [&](const std::string& name) -> const std::vector<int64_t>* {
        auto it = tensors_.find(name);
        return it != tensors_.end() && it->second.known ? &it->second.dims : nullptr;
      });
      // ONNX 1.12 infers only the rank of an Einsum's output and knows no Gelu (opset 20).
      for (const auto& n : g->node()) {
        if ((n.op_type() != "Einsum" && n.op_type() != "Gelu") || n.output_size() == 0 || n.output(0).empty() ||
            own_shapes.count(n.output(0)))
          continue;
        std::vector<std::vector<int64_t>> dims;
        for (const std::string& x : n.input()) {
          auto it = tensors_.find(x);
          if (it == tensors_.end() || !it->second.known) break;
          dims.push_back(it->second.dims);
        }
        if (dims.empty() || static_cast<int>(dims.size()) != n.input_size()) continue;
        std::vector<int64_t> out_dims = dims[0];
        if (n.op_type() == "Einsum") {
          const auto* eq = FindAttribute(n, "equation");
          double iterations = 0;
          if (!eq || !EinsumShape(eq->s(), dims, &out_dims, &iterations).empty()) continue;
        }
        own_shapes[n.output(0)] = {tensors_[n.input(0)].elem_type, out_dims};
        ++rewired;
      }
      for (auto& n : *g->mutable_node())
        for (int k = 0; k < n.input_size(); ++k) {
          const std::string& in = n.input(k);
          if (in.empty() || !kDataInputs.count({n.op_type(), k}) || initializers_.count(in)) continue;
          auto known = folded.find(in);
          if (known == folded.end()) {
            IntTensor v;
            if (auto f = fold.values.find(in); f != fold.values.end()) {
              v = f->second;
            } else if (auto d = data.find(in); d != data.end()) {
              for (const auto& x : d->second.dim()) {
                if (!x.has_dim_value()) break;
                v.data.push_back(x.dim_value());
              }
              if (static_cast<int>(v.data.size()) != d->second.dim_size()) continue;
              v.dims = {static_cast<int64_t>(v.data.size())};
            } else {
              continue;
            }
            auto* t = g->add_initializer();
            t->set_name("placerl.folded/" + in);
            t->set_data_type(onnx::TensorProto::INT64);
            for (int64_t x : v.dims) t->add_dims(x);
            for (int64_t x : v.data) t->add_int64_data(x);
            known = folded.emplace(in, t->name()).first;
          }
          n.set_input(k, known->second);
          ++rewired;
        }
      ++shape_rounds_;
      if (rewired == 0) break;
      initializers_.clear();
      for (const auto& t : g->initializer()) initializers_.emplace(t.name(), &t);
    }
  }

  void CollectTensors() {
    const auto& g = model_.graph();
    tensors_.clear();
    for (const auto& v : g.input()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& v : g.value_info()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& v : g.output()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& t : g.initializer()) {
      Tensor x;
      x.elem_type = t.data_type();
      x.element_bytes = ElementBytes(t.data_type());
      x.dims.assign(t.dims().begin(), t.dims().end());
      x.known = true;
      tensors_[t.name()] = x;
    }
  }

  const std::string& FirstOutput(int node) const {
    for (const std::string& o : model_.graph().node(node).output())
      if (!o.empty()) return o;
    FailNode(node, "has no outputs");
  }

  const Tensor& Shape(int node, const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end() || !it->second.known)
      FailNode(node, "tensor '" + name + "' has no inferred shape (set its dimensions: batch / dims)");
    return it->second;
  }

  OnnxForward BuildOps() {
    const auto& g = model_.graph();
    OnnxForward out;
    out.num_nodes = g.node_size();
    out.shape_rounds = shape_rounds_;
    std::unordered_map<std::string, Value> values;
    std::vector<double> weight_bytes;
    std::vector<bool> weight_claimed;
    // Float inputs that configure an op rather than hold learnt values.
    static const std::set<std::pair<std::string, int>> kSettingInputs = {
        {"Resize", 1}, {"Resize", 2}, {"Upsample", 1}, {"Pad", 2}, {"Clip", 1}, {"Clip", 2}};
    std::unordered_set<std::string> weight_inputs;  // consumed where a weight can be
    for (const auto& n : g.node())
      for (int k = 0; k < n.input_size(); ++k)
        if (!kSettingInputs.count({n.op_type(), k})) weight_inputs.insert(n.input(k));
    for (const auto& t : g.initializer()) {
      Value v;
      v.constant = true;
      const Tensor& x = tensors_[t.name()];
      if (IsFloat(t.data_type()) && x.elements() > 1 && weight_inputs.count(t.name())) {
        v.weights.push_back(static_cast<int>(weight_bytes.size()));
        weight_bytes.push_back(x.bytes());
        weight_claimed.push_back(false);
        out.weight_bytes += x.bytes();
      }
      values[t.name()] = v;
    }
    for (const auto& in : g.input())
      if (!initializers_.count(in.name())) values[in.name()] = Value{};
    for (const auto& n : g.node())
      for (const std::string& in : n.input()) consumed_.insert(in);
    for (const auto& o : g.output()) consumed_.insert(o.name());

    std::unordered_set<std::string> names;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      const OpRule rule = Rules().at(n.op_type());
      std::vector<const Value*> ins;
      bool all_constant = true;
      for (const std::string& in : n.input()) {
        if (in.empty()) continue;
        ins.push_back(&values.at(in));
        all_constant = all_constant && ins.back()->constant;
      }
      std::vector<int> weights;  // weights reaching this node through its constant inputs
      for (const Value* v : ins)
        if (v->constant) weights.insert(weights.end(), v->weights.begin(), v->weights.end());
      if (rule.rule == Rule::kAlias && !ins.empty()) {
        for (const std::string& o : n.output())
          if (!o.empty()) values[o] = *ins[0];
        ++out.folded_nodes;
        continue;
      }
      if (rule.rule == Rule::kFold || all_constant) {
        Value v;
        v.constant = true;
        if (rule.rule != Rule::kFold) v.weights = weights;  // Shape/Size read no data
        if (rule.rule == Rule::kFold)
          for (const std::string& in : n.input())
            if (!in.empty()) Shape(i, in);  // the shape must be static to fold
        for (const std::string& o : n.output())
          if (!o.empty()) values[o] = v;
        ++out.folded_nodes;
        continue;
      }
      const bool reads_weight = n.input_size() > 0 && !n.input(0).empty() && values.at(n.input(0)).constant &&
                                !values.at(n.input(0)).weights.empty();
      OpInfo op = Cost(i, rule, reads_weight);
      std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : Sanitized(n.name());
      if (names.count(name)) name += "_" + std::to_string(i);
      if (!names.insert(name).second) FailNode(i, "cannot give the op a unique name ('" + name + "')");
      op.name = name;
      for (int w : weights)
        if (!weight_claimed[w]) {
          weight_claimed[w] = true;
          op.param_bytes += weight_bytes[w];
        }
      for (const Value* v : ins)
        if (v->op >= 0 && std::find(op.inputs.begin(), op.inputs.end(), v->op) == op.inputs.end())
          op.inputs.push_back(v->op);
      const int index = static_cast<int>(out.ops.size());
      for (const std::string& o : n.output())
        if (!o.empty()) values[o] = Value{index, false, {}};
      out.ops.push_back(std::move(op));
      out.op_types.push_back(n.op_type());
      out.output_shapes.push_back(Shape(i, FirstOutput(i)).dims);
    }
    if (out.ops.empty()) Fail("the model has no compute ops (every node folds to a constant)");
    return out;
  }

  // FLOPs, bytes, output bytes and kind of node i (conventions: onnx_import.h); `reads_weight`:
  // input 0 is (derived from) a weight (Gather → "embedding").
  OpInfo Cost(int i, OpRule rule, bool reads_weight) {
    const auto& n = model_.graph().node(i);
    auto in = [&](int k) -> const Tensor& {
      if (k >= n.input_size() || n.input(k).empty()) FailNode(i, "input " + std::to_string(k) + " is missing");
      return Shape(i, n.input(k));
    };
    auto has_input = [&](int k) { return k < n.input_size() && !n.input(k).empty(); };
    double in_bytes = 0, out_bytes = 0, used_out_bytes = 0;
    for (const std::string& x : n.input())
      if (!x.empty()) in_bytes += Shape(i, x).bytes();
    for (const std::string& o : n.output()) {
      if (o.empty()) continue;
      const double b = Shape(i, o).bytes();
      out_bytes += b;
      if (consumed_.count(o)) used_out_bytes += b;
    }
    const Tensor& y = Shape(i, FirstOutput(i));
    OpInfo op;
    op.kind = "elementwise";
    op.bytes = in_bytes + out_bytes;
    op.output_bytes = used_out_bytes > 0 ? used_out_bytes : y.bytes();
    const double outs = y.elements();
    auto kernel_elements = [&](const Tensor& w) {
      double k = 1;
      for (size_t d = 2; d < w.dims.size(); ++d) k *= static_cast<double>(w.dims[d]);
      return k;
    };
    auto rank_at_least = [&](const Tensor& t, size_t r, const char* what) {
      if (t.dims.size() < r) FailNode(i, std::string(what) + " has rank " + std::to_string(t.dims.size()) +
                                             ", expected at least " + std::to_string(r));
    };
    switch (rule.rule) {
      case Rule::kElementwise: {
        int real_inputs = 0;
        for (const std::string& x : n.input()) real_inputs += x.empty() ? 0 : 1;
        op.flops = outs * (rule.per_element > 0 ? rule.per_element : std::max(1, real_inputs - 1));
        break;
      }
      case Rule::kView: op.bytes = 0; break;
      case Rule::kCopy: break;
      case Rule::kConv: {
        const Tensor& w = in(1);
        rank_at_least(w, 3, "the weight");
        op.kind = "conv";
        op.flops = 2 * outs * static_cast<double>(w.dims[1]) * kernel_elements(w) + (has_input(2) ? outs : 0);
        break;
      }
      case Rule::kConvTranspose: {
        const Tensor& x = in(0);
        const Tensor& w = in(1);
        rank_at_least(w, 3, "the weight");
        op.kind = "conv";
        op.flops = 2 * x.elements() * static_cast<double>(w.dims[1]) * kernel_elements(w) + (has_input(2) ? outs : 0);
        break;
      }
      case Rule::kGemm: {
        const Tensor& a = in(0);
        rank_at_least(a, 2, "input A");
        int trans_a = 0;
        for (const auto& at : n.attribute())
          if (at.name() == "transA") trans_a = static_cast<int>(at.i());
        op.kind = "matmul";
        const double k = static_cast<double>(trans_a ? a.dims[0] : a.dims[1]);
        op.flops = 2 * outs * k + (has_input(2) ? outs : 0);
        break;
      }
      case Rule::kMatMul: {
        const Tensor& a = in(0);
        rank_at_least(a, 1, "input A");
        op.kind = "matmul";
        op.flops = 2 * outs * static_cast<double>(a.dims.back());
        break;
      }
      case Rule::kEinsum: {
        const auto* eq = FindAttribute(n, "equation");
        if (!eq) FailNode(i, "has no equation");
        std::vector<std::vector<int64_t>> dims;
        for (int k = 0; k < n.input_size(); ++k) dims.push_back(in(k).dims);
        std::vector<int64_t> out_dims;
        double iterations = 0;
        const std::string error = EinsumShape(eq->s(), dims, &out_dims, &iterations);
        if (!error.empty()) FailNode(i, error);
        op.kind = "matmul";
        op.flops = (dims.size() >= 2 ? 2 : 1) * iterations;
        break;
      }
      case Rule::kNorm: op.kind = "norm"; op.flops = 8 * in(0).elements(); break;
      case Rule::kSoftmax: op.kind = "softmax"; op.flops = 5 * in(0).elements(); break;
      case Rule::kPool: {
        double k = 1;
        bool has_kernel = false;
        for (const auto& at : n.attribute())
          if (at.name() == "kernel_shape") {
            has_kernel = true;
            for (int64_t v : at.ints()) k *= static_cast<double>(v);
          }
        if (!has_kernel) FailNode(i, "has no kernel_shape");
        op.kind = "reduction";
        op.flops = outs * k;
        break;
      }
      case Rule::kReduceAll:
        op.kind = "reduction";
        op.flops = in(0).elements() + (n.op_type() == "ReduceMean" || n.op_type() == "GlobalAveragePool" ? outs : 0);
        break;
      case Rule::kGather:
        op.kind = reads_weight ? "embedding" : "elementwise";
        break;
      case Rule::kLstm: case Rule::kGru: case Rule::kRnn: {
        const Tensor& x = in(0);
        const Tensor& r = in(2);  // R: [dirs, gates·H, H]
        rank_at_least(x, 3, "input X");
        rank_at_least(r, 3, "R");
        int layout = 0;
        for (const auto& at : n.attribute())
          if (at.name() == "layout") layout = static_cast<int>(at.i());
        const double seq = static_cast<double>(layout ? x.dims[1] : x.dims[0]);
        const double b = static_cast<double>(layout ? x.dims[0] : x.dims[1]);
        const double input = static_cast<double>(x.dims[2]);
        const double dirs = static_cast<double>(r.dims[0]), h = static_cast<double>(r.dims[2]);
        const double gates = rule.rule == Rule::kLstm ? 4 : rule.rule == Rule::kGru ? 3 : 1;
        const double cell = rule.rule == Rule::kLstm ? 10 : rule.rule == Rule::kGru ? 8 : 2;
        op.kind = "matmul";
        op.flops = dirs * seq * (2 * b * (input + h) * gates * h + cell * b * h);
        break;
      }
      case Rule::kFold: case Rule::kAlias: break;  // handled by the caller
    }
    return op;
  }

  std::string label_;
  OnnxImportOptions options_;
  onnx::ModelProto model_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_set<std::string> graph_inputs_;
  std::vector<std::vector<int>> node_inputs_;  // producer node indices (before sorting)
  std::unordered_map<std::string, Tensor> tensors_;
  std::unordered_set<std::string> consumed_;  // values some node reads or the graph returns
  int shape_rounds_ = 0;
};

}  // namespace

OnnxForward ReadOnnxForward(const std::string& bytes, const std::string& label, const OnnxImportOptions& options) {
  return Importer(label, options).Run(bytes);
}

ComputeGraph ImportOnnxBytes(const std::string& bytes, const std::string& label, const OnnxImportOptions& options) {
  OnnxForward f = ReadOnnxForward(bytes, label, options);
  if (!options.training) return BuildComputeGraph(f.ops);
  return BuildComputeGraph(AddTrainingOps(f.ops, options.training_ops));
}

ComputeGraph ImportOnnx(const std::string& path, const OnnxImportOptions& options) {
  return ImportOnnxBytes(ReadFile(path, options.max_bytes), path, options);
}

bool IsOnnxSpec(const std::string& spec) {
  const std::string ext = ".onnx";
  return (spec.size() > ext.size() && spec.compare(spec.size() - ext.size(), ext.size(), ext) == 0) ||
         spec.find(ext + "?") != std::string::npos;
}

NamedGraph GraphFromOnnxSpec(const std::string& spec) {
  const size_t q = spec.find(".onnx?");
  const std::string path = q == std::string::npos ? spec : spec.substr(0, q + 5);
  OnnxImportOptions options;
  if (q != std::string::npos) {
    for (const std::string& kv : SplitCommaList(spec.substr(q + 6))) {
      const size_t eq = kv.find('=');
      char* end = nullptr;
      const long long x = eq == std::string::npos ? -1 : std::strtoll(kv.c_str() + eq + 1, &end, 10);
      const std::string k = kv.substr(0, eq);
      if (eq == std::string::npos || k.empty() || *end != '\0' || end == kv.c_str() + eq + 1)
        throw ConfigError("graph: expected key=non-negative integer after '.onnx?', got '" + kv + "'");
      const bool is_switch = k == "backward" || k == "update";
      if (x < (is_switch ? 0 : 1) || x > 100000000 || x == std::numeric_limits<long long>::max())
        throw ConfigError("graph: " + kv + " is out of range: " + k + " takes [" + (is_switch ? "0" : "1") +
                          ", 100000000]");
      if (k == "backward") {
        options.training = x != 0;
      } else if (k == "update") {
        options.training_ops.update = x != 0;
      } else if (x == 0) {
        throw ConfigError("graph: " + k + " must be >= 1, got '" + kv + "'");
      } else if (k == "batch") {
        options.batch = x;
      } else {
        options.dims[k] = x;
      }
    }
  }
  NamedGraph out;
  out.graph = ImportOnnx(path, options);
  out.examples = static_cast<double>(options.batch);
  return out;
}

}  // namespace placerl::graphs
