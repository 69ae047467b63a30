// ONNX import: small models built here with ONNX's protobuf API (a CNN, an MLP, a 1-head
// attention, an LSTM), FLOPs and param bytes checked by hand, training ops and co-location,
// graph specs, and malformed models (errors name the node).
#include "datasets/graphs/onnx_import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "datasets/graphs/graph_spec.h"
#include "datasets/graphs/model_graphs.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

// Builds a ModelProto node by node. Dims given as strings: a number is a fixed dim, anything
// else a symbolic dim_param.
class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("placerl-test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g_ = model_.mutable_graph();
    g_->set_name("test");
  }
  void Input(const std::string& name, const std::vector<std::string>& dims, int type = onnx::TensorProto::FLOAT) {
    auto* v = g_->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (const std::string& d : dims) {
      auto* dim = s->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }
  void Output(const std::string& name) {
    auto* v = g_->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  // A float weight (no data: the importer and shape inference only need its dims).
  void Weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
  }
  void FloatScalar(const std::string& name, float v) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
  }
  // An int64 constant (1-D, or 0-D when `scalar`).
  void Ints(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* Node(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void IntList(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void Str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto* graph() { return g_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* g_;
};

int IndexOf(const ComputeGraph& g, const std::string& name) {
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == name) return i;
  return -1;
}

// x[batch,3,8,8] → Conv(4, 3×3, pad 1, bias) → Relu → MaxPool(2, stride 2) → Flatten → Gemm(10).
ModelBuilder Cnn() {
  ModelBuilder m;
  m.Input("x", {"batch", "3", "8", "8"});
  m.Weight("conv.w", {4, 3, 3, 3});
  m.Weight("conv.b", {4});
  m.Weight("fc.w", {10, 64});
  m.Weight("fc.b", {10});
  auto* conv = m.Node("Conv", "conv", {"x", "conv.w", "conv.b"}, {"c"});
  ModelBuilder::IntList(conv, "kernel_shape", {3, 3});
  ModelBuilder::IntList(conv, "pads", {1, 1, 1, 1});
  m.Node("Relu", "relu", {"c"}, {"r"});
  auto* pool = m.Node("MaxPool", "pool", {"r"}, {"p"});
  ModelBuilder::IntList(pool, "kernel_shape", {2, 2});
  ModelBuilder::IntList(pool, "strides", {2, 2});
  m.Node("Flatten", "flatten", {"p"}, {"f"});
  auto* fc = m.Node("Gemm", "fc", {"f", "fc.w", "fc.b"}, {"y"});
  ModelBuilder::Int(fc, "transB", 1);
  m.Output("y");
  return m;
}

TEST(OnnxImport, CnnForwardOpsFlopsParamsAndShapes) {
  OnnxImportOptions o;
  o.batch = 2;
  const OnnxForward f = ReadOnnxForward(Cnn().Bytes(), "cnn.onnx", o);
  ASSERT_EQ(f.ops.size(), 5u);
  EXPECT_EQ(f.num_nodes, 5);
  EXPECT_EQ(f.folded_nodes, 0);
  EXPECT_EQ(f.op_types, (std::vector<std::string>{"Conv", "Relu", "MaxPool", "Flatten", "Gemm"}));
  EXPECT_EQ(f.output_shapes[0], (std::vector<int64_t>{2, 4, 8, 8}));
  EXPECT_EQ(f.output_shapes[2], (std::vector<int64_t>{2, 4, 4, 4}));
  EXPECT_EQ(f.output_shapes[3], (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(f.output_shapes[4], (std::vector<int64_t>{2, 10}));
  // Conv: |Y| = 2·4·8·8 = 512; 2·512·3·9 + 512 (bias) = 28160.
  EXPECT_EQ(f.ops[0].kind, "conv");
  EXPECT_DOUBLE_EQ(f.ops[0].flops, 28160);
  EXPECT_DOUBLE_EQ(f.ops[0].param_bytes, (108 + 4) * 4);
  EXPECT_DOUBLE_EQ(f.ops[0].output_bytes, 512 * 4);
  // bytes = x (2·3·64·4) + w (432) + b (16) + y (2048).
  EXPECT_DOUBLE_EQ(f.ops[0].bytes, 1536 + 432 + 16 + 2048);
  EXPECT_TRUE(f.ops[0].inputs.empty());  // x is a graph input, not an op
  EXPECT_DOUBLE_EQ(f.ops[1].flops, 512);
  EXPECT_EQ(f.ops[1].inputs, std::vector<int>{0});
  EXPECT_EQ(f.ops[2].kind, "reduction");
  EXPECT_DOUBLE_EQ(f.ops[2].flops, 128 * 4);  // |Y| · 2·2
  EXPECT_DOUBLE_EQ(f.ops[3].flops, 0);
  EXPECT_DOUBLE_EQ(f.ops[3].bytes, 0);  // a view
  EXPECT_EQ(f.ops[4].kind, "matmul");
  EXPECT_DOUBLE_EQ(f.ops[4].flops, 2 * 20 * 64 + 20);
  EXPECT_DOUBLE_EQ(f.ops[4].param_bytes, (640 + 10) * 4);
  EXPECT_DOUBLE_EQ(f.weight_bytes, (108 + 4 + 640 + 10) * 4);
}

TEST(OnnxImport, CnnTrainingOpsAndColocation) {
  OnnxImportOptions o;
  o.batch = 2;
  const ComputeGraph g = ImportOnnxBytes(Cnn().Bytes(), "cnn.onnx", o);
  // 5 forward, 5 grad (every op has an input or weights), 2 updates (conv, fc).
  ASSERT_EQ(g.num_ops(), 12);
  const int conv = IndexOf(g, "conv"), grad = IndexOf(g, "grad/conv"), update = IndexOf(g, "update/conv");
  ASSERT_GE(grad, 0);
  ASSERT_GE(update, 0);
  EXPECT_GE(IndexOf(g, "update/fc"), 0);
  EXPECT_LT(IndexOf(g, "update/relu"), 0);
  EXPECT_EQ(g.coloc_group[conv], g.coloc_group[grad]);
  EXPECT_EQ(g.coloc_group[conv], g.coloc_group[update]);
  EXPECT_NE(g.coloc_group[conv], g.coloc_group[IndexOf(g, "fc")]);
  EXPECT_DOUBLE_EQ(g.flops[grad], 2 * 28160);
  EXPECT_DOUBLE_EQ(g.param_bytes[update], 2 * 448);  // Adam m and v
  // Forward only.
  o.training = false;
  EXPECT_EQ(ImportOnnxBytes(Cnn().Bytes(), "cnn.onnx", o).num_ops(), 5);
}

TEST(OnnxImport, ConvGroupsStridesDilationsAndConvTranspose) {
  ModelBuilder m;
  m.Input("x", {"1", "4", "9", "9"});
  m.Weight("w", {8, 2, 3, 3});
  auto* conv = m.Node("Conv", "gconv", {"x", "w"}, {"c"});
  ModelBuilder::Int(conv, "group", 2);
  ModelBuilder::IntList(conv, "strides", {2, 2});
  ModelBuilder::IntList(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::IntList(conv, "dilations", {2, 2});
  m.Weight("wt", {8, 3, 2, 2});
  auto* up = m.Node("ConvTranspose", "up", {"c", "wt"}, {"y"});
  ModelBuilder::IntList(up, "strides", {2, 2});
  m.Output("y");
  const OnnxForward f = ReadOnnxForward(m.Bytes(), "conv.onnx");
  ASSERT_EQ(f.ops.size(), 2u);
  // Ho = (9 + 2 − 2·2 − 1)/2 + 1 = 4; |Y| = 8·16 = 128; 2·128·(4/2)·9 = 4608.
  EXPECT_EQ(f.output_shapes[0], (std::vector<int64_t>{1, 8, 4, 4}));
  EXPECT_DOUBLE_EQ(f.ops[0].flops, 4608);
  // ConvTranspose: Y = (4−1)·2 + 2 = 8; 2·|X|·(Cout/group)·∏k = 2·128·3·4 = 3072.
  EXPECT_EQ(f.output_shapes[1], (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_DOUBLE_EQ(f.ops[1].flops, 3072);
  EXPECT_EQ(f.ops[1].kind, "conv");
  EXPECT_DOUBLE_EQ(f.ops[1].param_bytes, 8 * 3 * 4 * 4);
}

// x[batch,16] → MatMul(16×32) → Add(b1) → Relu → MatMul(32×4) → Add(b2).
ModelBuilder Mlp() {
  ModelBuilder m;
  m.Input("x", {"N", "16"});
  m.Weight("w1", {16, 32});
  m.Weight("b1", {32});
  m.Weight("w2", {32, 4});
  m.Weight("b2", {4});
  m.Node("MatMul", "mm1", {"x", "w1"}, {"h"});
  m.Node("Add", "add1", {"h", "b1"}, {"hb"});
  m.Node("Relu", "relu", {"hb"}, {"a"});
  m.Node("MatMul", "mm2", {"a", "w2"}, {"o"});
  m.Node("Add", "add2", {"o", "b2"}, {"y"});
  m.Output("y");
  return m;
}

TEST(OnnxImport, MlpMatMulAddByHand) {
  OnnxImportOptions o;
  o.batch = 8;
  const OnnxForward f = ReadOnnxForward(Mlp().Bytes(), "mlp.onnx", o);
  ASSERT_EQ(f.ops.size(), 5u);
  EXPECT_DOUBLE_EQ(f.ops[0].flops, 2.0 * 8 * 32 * 16);
  EXPECT_DOUBLE_EQ(f.ops[0].param_bytes, 16 * 32 * 4);
  EXPECT_DOUBLE_EQ(f.ops[1].flops, 8 * 32);
  EXPECT_DOUBLE_EQ(f.ops[1].param_bytes, 32 * 4);  // the bias is the Add's weight
  EXPECT_EQ(f.ops[1].inputs, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(f.ops[3].flops, 2.0 * 8 * 4 * 32);
  EXPECT_DOUBLE_EQ(f.ops[4].output_bytes, 8 * 4 * 4);
  double total = 0;
  for (const OpInfo& op : f.ops) total += op.flops;
  EXPECT_DOUBLE_EQ(total, 8192 + 256 + 256 + 2048 + 32);
  // The batch changes every activation but no weight.
  o.batch = 16;
  const OnnxForward g = ReadOnnxForward(Mlp().Bytes(), "mlp.onnx", o);
  EXPECT_DOUBLE_EQ(g.ops[0].flops, 2 * f.ops[0].flops);
  EXPECT_DOUBLE_EQ(g.ops[0].param_bytes, f.ops[0].param_bytes);
}

// One attention head over x[batch,4,8], then a reshape to [batch, 32] whose target shape is
// computed from Shape(x) (the pattern PyTorch exports): Shape/Gather/Unsqueeze/Concat fold.
ModelBuilder Attention() {
  ModelBuilder m;
  m.Input("x", {"batch", "seq", "8"});
  for (const char* w : {"wq", "wk", "wv", "wo"}) m.Weight(w, {8, 8});
  m.FloatScalar("sqrt_d", 2.828427f);
  m.Node("MatMul", "q", {"x", "wq"}, {"Q"});
  m.Node("MatMul", "k", {"x", "wk"}, {"K"});
  m.Node("MatMul", "v", {"x", "wv"}, {"V"});
  auto* t = m.Node("Transpose", "kt", {"K"}, {"Kt"});
  ModelBuilder::IntList(t, "perm", {0, 2, 1});
  m.Node("MatMul", "scores", {"Q", "Kt"}, {"S"});
  m.Node("Div", "scale", {"S", "sqrt_d"}, {"Ss"});
  auto* sm = m.Node("Softmax", "softmax", {"Ss"}, {"P"});
  ModelBuilder::Int(sm, "axis", -1);
  m.Node("MatMul", "context", {"P", "V"}, {"C"});
  m.Node("MatMul", "out", {"C", "wo"}, {"O"});
  m.Node("Dropout", "drop", {"O"}, {"Od"});
  m.Ints("zero", {0}, /*scalar=*/true);
  m.Ints("axes0", {0});
  m.Ints("minus1", {-1});
  m.Node("Shape", "shape", {"x"}, {"xs"});
  m.Node("Gather", "batch_dim", {"xs", "zero"}, {"b"});
  m.Node("Unsqueeze", "unsq", {"b", "axes0"}, {"b1"});
  auto* cat = m.Node("Concat", "target", {"b1", "minus1"}, {"shape2"});
  ModelBuilder::Int(cat, "axis", 0);
  m.Node("Reshape", "flat", {"Od", "shape2"}, {"y"});
  m.Output("y");
  return m;
}

TEST(OnnxImport, AttentionFoldsShapeSubgraphAndCountsBatchedMatMul) {
  OnnxImportOptions o;
  o.batch = 2;
  o.dims["seq"] = 4;
  const OnnxForward f = ReadOnnxForward(Attention().Bytes(), "attn.onnx", o);
  // 15 nodes: Shape, Gather, Unsqueeze, Concat and Dropout fold; 10 ops remain.
  EXPECT_EQ(f.num_nodes, 15);
  EXPECT_EQ(f.folded_nodes, 5);
  EXPECT_EQ(f.shape_rounds, 2);  // the second sees the computed Reshape target
  ASSERT_EQ(f.ops.size(), 10u);
  std::map<std::string, int> at;
  for (size_t i = 0; i < f.ops.size(); ++i) at[f.ops[i].name] = static_cast<int>(i);
  ASSERT_EQ(at.count("flat"), 1u);
  EXPECT_EQ(f.output_shapes[at["flat"]], (std::vector<int64_t>{2, 32}));
  // Reshape reads the dropout's input directly (Dropout is an identity); no shape op as input.
  EXPECT_EQ(f.ops[at["flat"]].inputs, std::vector<int>{at["out"]});
  // scores: [2,4,8]·[2,8,4] → 2·(2·4·4)·8 = 512.
  EXPECT_EQ(f.output_shapes[at["scores"]], (std::vector<int64_t>{2, 4, 4}));
  EXPECT_DOUBLE_EQ(f.ops[at["scores"]].flops, 512);
  EXPECT_EQ(f.ops[at["scores"]].inputs, (std::vector<int>{at["q"], at["kt"]}));
  EXPECT_DOUBLE_EQ(f.ops[at["q"]].flops, 2.0 * 2 * 4 * 8 * 8);
  EXPECT_DOUBLE_EQ(f.ops[at["q"]].param_bytes, 256);
  EXPECT_EQ(f.ops[at["softmax"]].kind, "softmax");
  EXPECT_DOUBLE_EQ(f.ops[at["softmax"]].flops, 5 * 32);
  EXPECT_DOUBLE_EQ(f.ops[at["scale"]].param_bytes, 0);  // a scalar is a constant, not a weight
  EXPECT_DOUBLE_EQ(f.ops[at["kt"]].flops, 0);
  EXPECT_DOUBLE_EQ(f.ops[at["kt"]].bytes, 2 * 64 * 4);  // a copy: in + out
  EXPECT_DOUBLE_EQ(f.weight_bytes, 4 * 256);
  // Training graph: every forward op but none of the folded nodes.
  const ComputeGraph g = ImportOnnxBytes(Attention().Bytes(), "attn.onnx", o);
  EXPECT_EQ(IndexOf(g, "shape"), -1);
  EXPECT_EQ(g.num_ops(), 10 + 10 + 4);
}

// A torchvision ResNet-18 as PyTorch exports it in eval mode (BatchNorm folded into the
// convolutions' biases), at batch 2, 64×64 images, 10 classes.
ModelBuilder ResNet18Onnx() {
  ModelBuilder m;
  m.Input("image", {"batch", "3", "64", "64"});
  int id = 0;
  auto conv = [&](const std::string& x, int cin, int cout, int k, int stride) {
    const std::string w = "w" + std::to_string(id), b = "b" + std::to_string(id), y = "conv" + std::to_string(id);
    ++id;
    m.Weight(w, {cout, cin, k, k});
    m.Weight(b, {cout});
    auto* n = m.Node("Conv", y, {x, w, b}, {y});
    ModelBuilder::IntList(n, "kernel_shape", {k, k});
    ModelBuilder::IntList(n, "strides", {stride, stride});
    ModelBuilder::IntList(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    return y;
  };
  auto relu = [&](const std::string& x) {
    m.Node("Relu", x + ".relu", {x}, {x + ".relu"});
    return x + ".relu";
  };
  std::string x = relu(conv("image", 3, 64, 7, 2));
  auto* pool = m.Node("MaxPool", "maxpool", {x}, {"pooled"});
  ModelBuilder::IntList(pool, "kernel_shape", {3, 3});
  ModelBuilder::IntList(pool, "strides", {2, 2});
  ModelBuilder::IntList(pool, "pads", {1, 1, 1, 1});
  x = "pooled";
  int channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage;
    for (int block = 0; block < 2; ++block) {
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      const std::string h = conv(relu(conv(x, channels, width, 3, stride)), width, width, 3, 1);
      const std::string skip = stride != 1 || channels != width ? conv(x, channels, width, 1, stride) : x;
      m.Node("Add", h + ".add", {h, skip}, {h + ".add"});
      x = relu(h + ".add");
      channels = width;
    }
  }
  m.Node("GlobalAveragePool", "avgpool", {x}, {"gap"});
  m.Node("Flatten", "flatten", {"gap"}, {"flat"});
  m.Weight("fc.w", {10, 512});
  m.Weight("fc.b", {10});
  auto* fc = m.Node("Gemm", "fc", {"flat", "fc.w", "fc.b"}, {"logits"});
  ModelBuilder::Int(fc, "transB", 1);
  m.Output("logits");
  return m;
}

// The importer and the ResNet generator (model_graphs.h) count the same convolution and
// fully-connected FLOPs; the export's extra are exactly the folded biases (|Y| per conv/fc).
TEST(OnnxImport, ResNet18AgreesWithTheGenerator) {
  OnnxImportOptions o;
  o.batch = 2;
  const OnnxForward f = ReadOnnxForward(ResNet18Onnx().Bytes(), "resnet18.onnx", o);
  double dense = 0, biases = 0, weights = 0;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    weights += f.ops[i].param_bytes;
    if (f.ops[i].kind != "conv" && f.ops[i].kind != "matmul") continue;
    dense += f.ops[i].flops;
    double y = 1;
    for (int64_t d : f.output_shapes[i]) y *= static_cast<double>(d);
    biases += y;
  }
  EXPECT_EQ(f.output_shapes.back(), (std::vector<int64_t>{2, 10}));
  ResNetConfig c;
  c.depth = 18;
  c.batch = 2;
  c.image = 64;
  c.classes = 10;
  c.backward = false;
  const ComputeGraph g = MakeResNetGraph(c);
  double generator_dense = 0, generator_params = 0, bn_params = 0;
  for (int i = 0; i < g.num_ops(); ++i) {
    generator_params += g.param_bytes[i];
    if (g.kinds[i] == "conv" || g.kinds[i] == "matmul") generator_dense += g.flops[i];
    if (g.kinds[i] == "norm") bn_params += g.param_bytes[i];
  }
  EXPECT_NEAR(dense - biases, generator_dense, 1e-9 * generator_dense);
  // Weights: the generator's BatchNorm γ, β (2 per channel) become one conv bias per channel
  // in the export; the convolution and fc weights are the same.
  double conv_bias_bytes = 0;
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == "conv") conv_bias_bytes += 4.0 * static_cast<double>(f.output_shapes[i][1]);
  EXPECT_DOUBLE_EQ(conv_bias_bytes, bn_params / 2);
  EXPECT_DOUBLE_EQ(generator_params - bn_params, weights - conv_bias_bytes);
}

// Shape arithmetic ONNX 1.12 cannot propagate (ConstantOfShape, as in the expanded
// LayerNormalization function) is evaluated by the importer; Einsum counts like MatMul;
// Resize's scales configure the op and are no weight.
TEST(OnnxImport, FoldsConstantOfShapeEinsumAndResizeScales) {
  ModelBuilder m;
  m.Input("x", {"batch", "4", "8"});
  m.Weight("w", {8, 5});
  m.Ints("zero", {0});
  m.Ints("one", {1});
  m.Node("Shape", "shape", {"x"}, {"xs"});
  m.Node("Slice", "prefix", {"xs", "zero", "one"}, {"b"});
  auto* fill = m.Node("ConstantOfShape", "minus_one", {"one"}, {"m1"});
  auto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(-1);
  auto* cat = m.Node("Concat", "target", {"b", "m1"}, {"target_shape"});
  ModelBuilder::Int(cat, "axis", 0);
  auto* es = m.Node("Einsum", "proj", {"x", "w"}, {"p"});
  ModelBuilder::Str(es, "equation", "bij,jk->bik");
  m.Node("Reshape", "flat", {"p", "target_shape"}, {"f"});
  m.Node("Unsqueeze", "as_image", {"f", "one"}, {"img"});  // [batch, 1, 20]
  m.Node("Unsqueeze", "as_image2", {"img", "one"}, {"img2"});  // [batch, 1, 1, 20]
  auto* scales = m.graph()->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float v : {1.f, 1.f, 2.f, 2.f}) scales->add_float_data(v);
  m.Node("Resize", "up", {"img2", "", "scales"}, {"y"});
  m.Output("y");
  OnnxImportOptions o;
  o.batch = 3;
  const OnnxForward f = ReadOnnxForward(m.Bytes(), "fold.onnx", o);
  std::map<std::string, int> at;
  for (size_t i = 0; i < f.ops.size(); ++i) at[f.ops[i].name] = static_cast<int>(i);
  EXPECT_EQ(f.ops.size(), 5u);  // proj, flat, as_image, as_image2, up
  EXPECT_EQ(f.folded_nodes, 4);
  EXPECT_EQ(f.output_shapes[at["flat"]], (std::vector<int64_t>{3, 20}));
  EXPECT_DOUBLE_EQ(f.ops[at["proj"]].flops, 2.0 * 3 * 4 * 8 * 5);
  EXPECT_EQ(f.ops[at["proj"]].kind, "matmul");
  EXPECT_EQ(f.output_shapes[at["up"]], (std::vector<int64_t>{3, 1, 2, 40}));
  EXPECT_DOUBLE_EQ(f.ops[at["up"]].param_bytes, 0);
  EXPECT_DOUBLE_EQ(f.weight_bytes, 8 * 5 * 4);
}

// Integer shape values beyond the folding limit: Size of a large tensor is exact; a huge
// ConstantOfShape is not evaluated (its node still folds) and costs no memory.
TEST(OnnxImport, LargeShapeValues) {
  ModelBuilder m;
  m.Input("x", {"batch", "1000", "1000"});
  m.Ints("axes0", {0});
  m.Node("Size", "size", {"x"}, {"n"});
  m.Node("Unsqueeze", "as_list", {"n", "axes0"}, {"shape1"});
  m.Node("Reshape", "flatten_all", {"x", "shape1"}, {"flat"});
  m.Ints("huge", {int64_t(1) << 32, int64_t(1) << 32});
  m.Node("ConstantOfShape", "zeros", {"huge"}, {"z"});
  m.Node("Relu", "relu", {"flat"}, {"y"});
  m.Output("y");
  OnnxImportOptions o;
  o.batch = 3;
  const OnnxForward f = ReadOnnxForward(m.Bytes(), "big.onnx", o);
  ASSERT_EQ(f.ops.size(), 2u);
  EXPECT_EQ(f.output_shapes[0], (std::vector<int64_t>{3000000}));
  EXPECT_EQ(f.folded_nodes, 3);
}

// Gelu (ONNX opset 20, newer than Debian's libonnx 1.12): the importer gives its output the
// input's shape.
TEST(OnnxImport, GeluWithoutAnOnnxSchema) {
  ModelBuilder m;
  m.Input("x", {"batch", "8"});
  m.Weight("w", {8, 8});
  m.Node("MatMul", "fc", {"x", "w"}, {"h"});
  m.Node("Gelu", "gelu", {"h"}, {"g"});
  m.Node("MatMul", "fc2", {"g", "w"}, {"y"});
  m.Output("y");
  OnnxImportOptions o;
  o.batch = 4;
  const OnnxForward f = ReadOnnxForward(m.Bytes(), "gelu.onnx", o);
  ASSERT_EQ(f.ops.size(), 3u);
  EXPECT_EQ(f.output_shapes[1], (std::vector<int64_t>{4, 8}));
  EXPECT_DOUBLE_EQ(f.ops[1].flops, 5 * 32);
  EXPECT_EQ(f.output_shapes[2], (std::vector<int64_t>{4, 8}));
  EXPECT_DOUBLE_EQ(f.ops[0].param_bytes, 256);  // tied: the first reader holds the weight
  EXPECT_DOUBLE_EQ(f.ops[2].param_bytes, 0);
}

TEST(OnnxImport, SymbolicDimsNeedValues) {
  OnnxImportOptions o;
  try {
    ReadOnnxForward(Attention().Bytes(), "attn.onnx", o);
    FAIL() << "seq has no value";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'seq'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("attn.onnx"), std::string::npos) << e.what();
  }
  o.dims["seq"] = 4;
  o.dims["sequence"] = 4;
  EXPECT_THROW(ReadOnnxForward(Attention().Bytes(), "attn.onnx", o), ConfigError);
  o.dims.erase("sequence");
  o.batch = 0;
  EXPECT_THROW(ReadOnnxForward(Attention().Bytes(), "attn.onnx", o), ConfigError);
}

// X[seq 5, batch 3, 4] → LSTM(hidden 8) → Y[5,1,3,8] (Y_h unused).
ModelBuilder Lstm(const std::string& direction = "forward") {
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  ModelBuilder m;
  m.Input("X", {"5", "batch", "4"});
  m.Weight("W", {dirs, 32, 4});
  m.Weight("R", {dirs, 32, 8});
  m.Weight("B", {dirs, 64});
  auto* n = m.Node("LSTM", "lstm", {"X", "W", "R", "B"}, {"Y", "Y_h"});
  ModelBuilder::Int(n, "hidden_size", 8);
  ModelBuilder::Str(n, "direction", direction);
  m.Node("Relu", "act", {"Y"}, {"out"});
  m.Output("out");
  return m;
}

TEST(OnnxImport, LstmIsOneOpWithThePapersFormula) {
  OnnxImportOptions o;
  o.batch = 3;
  const OnnxForward f = ReadOnnxForward(Lstm().Bytes(), "lstm.onnx", o);
  ASSERT_EQ(f.ops.size(), 2u);
  EXPECT_EQ(f.ops[0].kind, "matmul");
  // seq · (2·B·(I+H)·4H + 10·B·H) = 5 · (2·3·12·32 + 240) = 12720.
  EXPECT_DOUBLE_EQ(f.ops[0].flops, 12720);
  EXPECT_DOUBLE_EQ(f.ops[0].param_bytes, (32 * 4 + 32 * 8 + 64) * 4);
  EXPECT_EQ(f.output_shapes[0], (std::vector<int64_t>{5, 1, 3, 8}));
  EXPECT_DOUBLE_EQ(f.ops[0].output_bytes, 5 * 3 * 8 * 4);  // only Y is consumed
  {
    // Time-major with a named length: 'seq' at dimension 0 must be given (not the batch).
    ModelBuilder m = Lstm();
    m.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
        "seq");
    EXPECT_THROW(ReadOnnxForward(m.Bytes(), "lstm.onnx", o), ConfigError);
    OnnxImportOptions with_seq = o;
    with_seq.dims["seq"] = 5;
    EXPECT_DOUBLE_EQ(ReadOnnxForward(m.Bytes(), "lstm.onnx", with_seq).ops[0].flops, 12720);
  }
  const OnnxForward bi = ReadOnnxForward(Lstm("bidirectional").Bytes(), "lstm.onnx", o);
  EXPECT_DOUBLE_EQ(bi.ops[0].flops, 2 * 12720);
  const ComputeGraph g = ImportOnnxBytes(Lstm().Bytes(), "lstm.onnx", o);
  EXPECT_EQ(g.num_ops(), 2 + 2 + 1);
  EXPECT_EQ(g.coloc_group[IndexOf(g, "lstm")], g.coloc_group[IndexOf(g, "update/lstm")]);
}

TEST(OnnxImport, EmbeddingGatherLayerNormAndUnsortedNodes) {
  ModelBuilder m;
  m.Input("ids", {"batch", "6"}, onnx::TensorProto::INT64);
  m.Weight("table", {100, 16});
  m.Weight("gamma", {16});
  m.Weight("beta", {16});
  // Listed consumer first: the importer sorts the nodes.
  auto* ln = m.Node("LayerNormalization", "", {"e", "gamma", "beta"}, {"y"});
  ModelBuilder::Int(ln, "axis", -1);
  m.Node("Gather", "embed", {"table", "ids"}, {"e"});
  m.Output("y");
  ModelBuilder bad = m;
  OnnxImportOptions o;
  o.batch = 2;
  // LayerNormalization is opset 17.
  m.model().mutable_opset_import(0)->set_version(17);
  const OnnxForward f = ReadOnnxForward(m.Bytes(), "emb.onnx", o);
  ASSERT_EQ(f.ops.size(), 2u);
  EXPECT_EQ(f.ops[0].name, "embed");
  EXPECT_EQ(f.ops[0].kind, "embedding");
  EXPECT_DOUBLE_EQ(f.ops[0].param_bytes, 100 * 16 * 4);
  EXPECT_EQ(f.ops[1].name, "LayerNormalization_1");  // unnamed: op type and index
  EXPECT_EQ(f.ops[1].kind, "norm");
  EXPECT_DOUBLE_EQ(f.ops[1].flops, 8 * 2 * 6 * 16);
  EXPECT_EQ(f.ops[1].inputs, std::vector<int>{0});
  // At opset 13 there is no LayerNormalization schema: shape inference fails, naming it.
  try {
    ReadOnnxForward(bad.Bytes(), "emb.onnx", o);
    FAIL() << "opset 13 has no LayerNormalization";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("emb.onnx:0:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("LayerNormalization"), std::string::npos) << e.what();
  }
}

void ExpectParseError(const std::string& bytes, const std::vector<std::string>& parts) {
  try {
    ReadOnnxForward(bytes, "bad.onnx");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("bad.onnx:0: ", 0), 0u) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << " lacks " << p;
  }
}

TEST(OnnxImport, MalformedModelsNameTheNode) {
  const std::string good = Mlp().Bytes();
  ExpectParseError(good.substr(0, good.size() - 3), {"protobuf"});
  ExpectParseError(good.substr(0, good.size() / 2), {"protobuf"});
  ExpectParseError("", {"no graph nodes"});
  {
    ModelBuilder m = Mlp();
    m.Node("FooBar", "mystery", {"y"}, {"z"});
    ExpectParseError(m.Bytes(), {"node #5 'mystery' (FooBar)", "unsupported operator"});
  }
  {
    ModelBuilder m = Mlp();
    m.graph()->mutable_node(3)->set_input(0, "nope");
    ExpectParseError(m.Bytes(), {"node #3 'mm2' (MatMul)", "'nope'"});
  }
  {
    ModelBuilder m = Mlp();
    m.graph()->mutable_node(1)->set_input(0, "a");  // add1 reads relu's output: add1 → relu → add1
    ExpectParseError(m.Bytes(), {"cycle"});
  }
  {
    ModelBuilder m = Mlp();
    m.graph()->mutable_node(2)->set_output(0, "h");  // relu writes mm1's output again
    ExpectParseError(m.Bytes(), {"node #2 'relu' (Relu)", "already produced"});
  }
  {
    ModelBuilder m = Mlp();
    auto* n = m.Node("If", "branch", {"y"}, {"z"});
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name("then");
    ExpectParseError(m.Bytes(), {"node #5 'branch' (If)", "subgraphs"});
  }
  {
    ModelBuilder m = Mlp();
    m.graph()->mutable_node(2)->set_domain("com.microsoft");
    ExpectParseError(m.Bytes(), {"node #2 'relu' (Relu)", "domain"});
  }
  {
    ModelBuilder m = Mlp();
    m.graph()->mutable_initializer(0)->set_dims(0, 15);  // [8,15]·[16? no: 15,32] vs x[.,16]
    ExpectParseError(m.Bytes(), {"shape inference", "mm1"});
  }
  {
    ModelBuilder m = Mlp();
    m.model().clear_opset_import();
    ExpectParseError(m.Bytes(), {"opset"});
  }
  // Values libonnx 1.12's shape inference would divide by or index with (found by fuzzing).
  {
    ModelBuilder m = Cnn();
    m.graph()->mutable_node(2)->mutable_attribute(1)->set_ints(1, 0);  // pool strides {2, 0}
    ExpectParseError(m.Bytes(), {"node #2 'pool' (MaxPool)", "'strides' has 0"});
  }
  {
    ModelBuilder m = Cnn();
    m.graph()->mutable_initializer(2)->clear_dims();
    m.graph()->mutable_initializer(2)->add_dims(640);  // fc.w of rank 1
    ExpectParseError(m.Bytes(), {"node #4 'fc' (Gemm)", "rank 1"});
  }
  {
    ModelBuilder m(17);
    m.Input("x", {"2", "3", "4"});
    m.Weight("gamma", {4});
    auto* ln = m.Node("LayerNormalization", "ln", {"x", "gamma"}, {"y", "mean"});
    ModelBuilder::Int(ln, "axis", -5);
    m.Output("y");
    m.Output("mean");
    ExpectParseError(m.Bytes(), {"node #0 'ln' (LayerNormalization)", "axis -5 is out of range for rank 3"});
    ln->mutable_attribute(0)->set_i(-1);  // valid: Mean is [2, 3, 1]
    const OnnxForward f = ReadOnnxForward(m.Bytes(), "ln.onnx");
    ASSERT_EQ(f.ops.size(), 1u);
    EXPECT_DOUBLE_EQ(f.ops[0].output_bytes, (24 + 6) * 4);
  }
}

TEST(OnnxImport, FilesSpecsAndSizeLimit) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("placerl_onnx_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "mlp.onnx").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << Mlp().Bytes();
  }
  EXPECT_TRUE(IsOnnxSpec(path));
  EXPECT_TRUE(IsOnnxSpec(path + "?batch=4"));
  EXPECT_FALSE(IsOnnxSpec("resnet(depth=50)"));
  EXPECT_FALSE(IsOnnxSpec("graph.txt"));
  const NamedGraph a = GraphFromSpec(path + "?batch=4");
  EXPECT_DOUBLE_EQ(a.examples, 4);
  EXPECT_EQ(a.graph.num_ops(), 5 + 5 + 4);
  EXPECT_DOUBLE_EQ(a.graph.flops[IndexOf(a.graph, "mm1")], 2.0 * 4 * 32 * 16);
  const NamedGraph b = GraphFromSpec(path + "?batch=4,backward=0");
  EXPECT_EQ(b.graph.num_ops(), 5);
  EXPECT_EQ(GraphFromSpec(path + "?update=0").graph.num_ops(), 5 + 5);
  EXPECT_DOUBLE_EQ(GraphFromSpec(path).examples, 1);
  EXPECT_THROW(GraphFromSpec(path + "?batch=x"), ConfigError);
  EXPECT_THROW(GraphFromSpec(path + "?batch=0"), ConfigError);
  EXPECT_THROW(GraphFromSpec(path + "?seq=4"), ConfigError);  // the MLP has no dim 'seq'
  OnnxImportOptions small;
  small.max_bytes = 10;
  EXPECT_THROW(ImportOnnx(path, small), ParseError);
  EXPECT_THROW(ImportOnnx((dir / "missing.onnx").string()), IoError);
  fs::remove_all(dir);
}

// Corrupted models (bytes flipped, inserted, cut) end in a graph or a placerl::Error — never
// another exception or a crash (ONNX's shape inference sees the corrupted graphs too).
TEST(OnnxImport, CorruptedBytesGiveAGraphOrAnError) {
  std::mt19937 rng(15);
  int graphs = 0, errors = 0;
  for (const std::string& good : {Cnn().Bytes(), Mlp().Bytes(), Attention().Bytes(), Lstm().Bytes()}) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string bytes = good;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !bytes.empty(); ++e) {
        const size_t at = rng() % bytes.size();
        switch (rng() % 3) {
          case 0: bytes[at] = static_cast<char>(rng()); break;
          case 1: bytes.insert(bytes.begin() + static_cast<long>(at), static_cast<char>(rng())); break;
          default: bytes.resize(at); break;
        }
      }
      OnnxImportOptions o;
      o.batch = 2;
      o.dims["seq"] = 4;
      try {
        const ComputeGraph g = ImportOnnxBytes(bytes, "bad.onnx", o);
        for (int i = 0; i < g.num_ops(); ++i) ASSERT_TRUE(g.flops[i] >= 0 && std::isfinite(g.flops[i]));
        ++graphs;
      } catch (const Error&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_EQ(graphs + errors, 4 * 300);
}

// Debian's libonnx-testdata (optional): a few of its toy node models import when present.
TEST(OnnxImport, DebianTestDataSmoke) {
  const std::string root = "/usr/share/libonnx-testdata/data";
  const std::vector<std::string> models = {
      "node/test_conv_with_strides_padding", "node/test_gemm_default_single_elem_vector_bias", "node/test_matmul_3d",
      "node/test_lstm_with_initial_bias", "node/test_layer_normalization_4d_axis_negative_1_expanded",
      "node/test_einsum_batch_matmul", "pytorch-converted/test_Conv2d_depthwise_strided",
      "pytorch-converted/test_Embedding"};
  int imported = 0;
  for (const std::string& m : models) {
    const std::string path = root + "/" + m + "/model.onnx";
    if (!std::filesystem::exists(path)) continue;
    const ComputeGraph g = ImportOnnx(path);
    EXPECT_GE(g.num_ops(), 1) << path;
    ++imported;
  }
  if (imported == 0) GTEST_SKIP() << "libonnx-testdata not installed (" << root << ")";
}

// onnx_fuzz regressions (tests/fuzz/corpus/onnx_fuzz/regression_*.onnx): shape arithmetic
// that overflowed int64 while folding (a Reshape shape of 3.3e15 · 4.5e15, a Mul of 1.4e17 ·
// 1.4e17 — undefined behaviour that ASan/UBSan caught) and a Gemm that crashed libonnx. Such
// values are no longer folded: each file gives a graph with finite sizes or an error naming it.
TEST(OnnxImport, FuzzRegressionsGiveAGraphOrAnErrorNamingTheFile) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("tests/fuzz/corpus/onnx_fuzz")) {
    const std::string path = entry.path().string();
    if (entry.path().filename().string().rfind("regression_", 0) != 0) continue;
    ++files;
    try {
      const ComputeGraph g = ImportOnnx(path);
      for (int i = 0; i < g.num_ops(); ++i)
        EXPECT_TRUE(std::isfinite(g.flops[i]) && g.flops[i] >= 0 && std::isfinite(g.output_bytes[i])) << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(entry.path().filename().string()), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(files, 3);
}

// onnx_fuzz (tests/fuzz/corpus/onnx_fuzz/regression_gemm_rank1_constant.onnx): a Gemm whose B
// is a rank-1 Constant crashed libonnx 1.12's Gemm inference (SEGV); the rank a Constant
// declares is now checked before inference: an error naming the node.
TEST(OnnxImport, FuzzRegressionGemmOfARankOneConstant) {
  try {
    ImportOnnx("tests/fuzz/corpus/onnx_fuzz/regression_gemm_rank1_constant.onnx");
    FAIL() << "a Gemm of a rank-1 Constant was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Gemm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has rank 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace placerl::graphs
