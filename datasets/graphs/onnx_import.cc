// ONNX model → forward ops (FLOPs, bytes, weights) → training graph. Conventions and errors:
// onnx_import.h. The only file of the project that sees ONNX's headers.
#include "datasets/graphs/onnx_import.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <set>
#include <unordered_map>
#include <unordered_set>

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
                           "IsNaN", "IsInf", "ConstantOfShape", "Range", "Trilu"})
      r[op] = {Rule::kElementwise, 1};
    for (const char* op : {"LeakyRelu", "Elu", "HardSigmoid", "Softplus", "Softsign", "Celu", "ThresholdedRelu"})
      r[op] = {Rule::kElementwise, 2};
    for (const char* op : {"Selu", "HardSwish"}) r[op] = {Rule::kElementwise, 3};
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal", "Less",
                           "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "Mod",
                           "PRelu"})
      r[op] = {Rule::kElementwise, 0};
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r[op] = {Rule::kView};
    for (const char* op : {"Transpose", "Concat", "Split", "Slice", "Pad", "Expand", "Tile", "GatherElements",
                           "GatherND", "DepthToSpace", "SpaceToDepth"})
      r[op] = {Rule::kCopy};
    r["Conv"] = {Rule::kConv};
    r["ConvTranspose"] = {Rule::kConvTranspose};
    r["Gemm"] = {Rule::kGemm};
    r["MatMul"] = {Rule::kMatMul};
    for (const char* op : {"BatchNormalization", "LayerNormalization", "InstanceNormalization"})
      r[op] = {Rule::kNorm};
    for (const char* op : {"Softmax", "LogSoftmax"}) r[op] = {Rule::kSoftmax};
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) r[op] = {Rule::kPool};
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ReduceMean", "ReduceSum",
                           "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                           "ReduceLogSumExp", "ArgMax", "ArgMin"})
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
  out.element_bytes = ElementBytes(t.tensor_type().elem_type());
  if (!t.tensor_type().has_shape()) return out;
  out.known = true;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) out.known = false;
    out.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return out;
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
    InferShapesFoldingShapeData();
    CollectTensors();
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
    for (auto& in : *g->mutable_input()) {
      if (initializers_.count(in.name())) continue;
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
        } else if (d == 0 || IsBatchName(param)) {
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
    // Declared intermediate shapes may carry the old symbols; inference recomputes them.
    g->clear_value_info();
  }

  // ONNX's data propagation computes the values of shape subgraphs (Shape → Gather →
  // Unsqueeze → Concat), but ONNX 1.12's Reshape (and Expand, Tile, …) only reads constant
  // inputs. So each round feeds the propagated values of such inputs back as int64
  // initializers and infers again, until nothing changes (one round per dependent chain).
  void InferShapesFoldingShapeData() {
    // (op_type, input index) pairs whose shape inference needs the input's values.
    static const std::set<std::pair<std::string, int>> kDataInputs = {
        {"Reshape", 1}, {"Expand", 1}, {"Tile", 1}, {"ConstantOfShape", 0}, {"Pad", 1}, {"Slice", 1},
        {"Slice", 2},   {"Slice", 3},  {"Slice", 4}, {"Unsqueeze", 1},      {"Squeeze", 1}, {"Split", 1}};
    std::unordered_map<std::string, std::string> folded;  // tensor → initializer holding its values
    auto* g = model_.mutable_graph();
    for (;;) {  // ends: every round rewires at least one more input

      std::unordered_map<std::string, onnx::TensorShapeProto> data;
      g->clear_value_info();  // rebuilt by each round
      try {
        onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, 1, true), &data);
      } catch (const std::exception& e) {
        Fail(std::string("ONNX shape inference failed: ") + e.what());
      }
      int rewired = 0;
      for (auto& n : *g->mutable_node())
        for (int k = 0; k < n.input_size(); ++k) {
          const std::string& in = n.input(k);
          if (in.empty() || !kDataInputs.count({n.op_type(), k}) || initializers_.count(in)) continue;
          auto known = folded.find(in);
          if (known == folded.end()) {
            auto it = data.find(in);
            if (it == data.end()) continue;
            bool all = true;
            for (const auto& d : it->second.dim()) all = all && d.has_dim_value();
            if (!all) continue;
            auto* t = g->add_initializer();
            t->set_name("placerl.folded/" + in);
            t->set_data_type(onnx::TensorProto::INT64);
            t->add_dims(it->second.dim_size());
            for (const auto& d : it->second.dim()) t->add_int64_data(d.dim_value());
            known = folded.emplace(in, t->name()).first;
          }
          n.set_input(k, known->second);
          ++rewired;
        }
      if (rewired == 0) break;
      initializers_.clear();
      for (const auto& t : g->initializer()) initializers_.emplace(t.name(), &t);
    }
  }

  void CollectTensors() {
    const auto& g = model_.graph();
    for (const auto& v : g.input()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& v : g.value_info()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& v : g.output()) tensors_[v.name()] = FromTypeProto(v.type());
    for (const auto& t : g.initializer()) {
      Tensor x;
      x.element_bytes = ElementBytes(t.data_type());
      x.dims.assign(t.dims().begin(), t.dims().end());
      x.known = true;
      tensors_[t.name()] = x;
    }
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
    std::unordered_map<std::string, Value> values;
    std::vector<double> weight_bytes;
    std::vector<bool> weight_claimed;
    for (const auto& t : g.initializer()) {
      Value v;
      v.constant = true;
      const Tensor& x = tensors_[t.name()];
      if (IsFloat(t.data_type()) && x.elements() > 1) {
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
      out.output_shapes.push_back(Shape(i, n.output(0)).dims);
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
    const Tensor& y = Shape(i, n.output(0));
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
      if (eq == std::string::npos || k.empty() || *end != '\0' || end == kv.c_str() + eq + 1 || x < 0 ||
          x > 100000000)
        throw ConfigError("graph: expected key=non-negative integer after '.onnx?', got '" + kv + "'");
      if (k == "backward") {
        options.training = x != 0;
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
