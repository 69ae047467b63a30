// ONNX import for device placement: an ONNX model (exported from any framework, e.g.
// `torch.onnx.export(model, x, "m.onnx")`) → forward ops with FLOPs and bytes per op →
// AddTrainingOps (training_graph.h) → ComputeGraph. Uses Debian's libonnx (protobuf schema and
// shape inference with data propagation); ONNX types never appear in this header.
//
// Conventions (docs/simulator.md "ONNX import" has the full operator table):
//  * Symbolic dimensions of graph inputs are fixed before shape inference: a dimension whose
//    dim_param is named in `dims` takes that value, else `batch` when its name contains
//    "batch" (or is "N"), or when it is dimension 0 and no input names a batch dimension; any
//    remaining symbolic dimension is an error. Every
//    tensor an op reads or writes must have a fully known shape after inference. Integer shape
//    arithmetic libonnx 1.12 does not propagate into Reshape/Expand/… and the output shapes of
//    Einsum, Gelu and LayerNormalization's Mean/InvStdDev are computed by the importer.
//  * Weights are not ops: a floating-point initializer with more than one element is a weight;
//    its bytes become param_bytes of the first op (in topological order) that consumes it,
//    directly or through folded nodes (tied weights count once). Integer and scalar
//    initializers, and float settings (Resize scales, Pad values, Clip bounds), are constants.
//  * Constant folding: Constant nodes, Shape/Size, and every node whose inputs are all
//    constants (the Shape→Gather→Unsqueeze→Concat→Reshape chains of exported models) are
//    folded away — no op, no cost, no edge. Identity and Dropout are folded too: their output
//    is their input (Dropout as at inference). Graph inputs are not ops either.
//  * Per op: bytes = Σ input bytes (activations and weights) + Σ output bytes (fp32 = 4 B per
//    element, else the tensor's element size); output_bytes = Σ bytes of the outputs that
//    something consumes (or the graph returns); FLOPs count a multiply-add as 2:
//      Conv         2·|Y|·(Cin/group)·∏kernel (+|Y| with bias); strides, pads and dilations
//                   enter through |Y|                                               "conv"
//      ConvTranspose 2·|X|·(Cout/group)·∏kernel (+|Y| with bias)                    "conv"
//      Gemm, MatMul 2·|Y|·K (batched MatMul broadcasts; +|Y| for Gemm's C)         "matmul"
//      Einsum       2·∏(sizes of all subscripts and '...' dims)                     "matmul"
//      LSTM         dirs·seq·(2·B·(I+H)·4H + 10·B·H), one op for the whole sequence
//                   (not unrolled per step); GRU 3H and 8·B·H; RNN H and 2·B·H      "matmul"
//      elementwise  |Y|·max(1, inputs−1) (Add/Sub/Mul/Div/Relu/Sigmoid/Tanh/Erf/Clip/Cast/
//                   Where/…; one flop per elementary function and element; Gelu 5)
//                                                                            "elementwise"
//      BatchNormalization, LayerNormalization, InstanceNormalization 8·|X|          "norm"
//      Softmax, LogSoftmax 5·|X|                                                 "softmax"
//      MaxPool/AveragePool |Y|·∏kernel; Global*Pool, Reduce*, ArgMax/ArgMin |X|  "reduction"
//      Gather       0 FLOPs; "embedding" when it reads a weight, else "elementwise"
//      Reshape/Flatten/Squeeze/Unsqueeze: views, 0 FLOPs and 0 bytes accessed; Transpose/
//                   Concat/Split/Slice/Pad/Expand/Tile: copies, 0 FLOPs    "elementwise"
//  * Op names: the node's name with whitespace, ',', '=' and '#' replaced by '_'; an unnamed
//    node is `<op_type>_<node index>`; a name seen before gets `_<node index>` appended.
//
// Errors: a malformed protobuf, a file larger than max_bytes, a node with an unknown or
// unsupported operator (or another domain), a subgraph attribute (If/Loop/Scan), an input
// nothing produces, an output produced twice, a cycle, a failed shape inference or a missing
// shape, attribute values and declared ranks libonnx 1.12's inference would crash on
// (strides < 1, a LayerNormalization axis out of range, Gemm inputs of rank ≠ 2, …) →
// ParseError(label or path, 0, reason naming the node as `node #i 'name' (OpType)`);
// bad options (batch < 1, a dims name the model does not have) → ConfigError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/graphs/training_graph.h"
#include "datasets/util/files.h"

namespace placerl::graphs {

struct OnnxImportOptions {
  int64_t batch = 1;                      // value of symbolic dimension 0 of graph inputs
  std::map<std::string, int64_t> dims;    // dim_param name → value (e.g. {"seq", 128})
  bool training = true;                   // add grad/ and update/ ops (AddTrainingOps)
  TrainingOpsOptions training_ops;
  size_t max_bytes = kMaxInputBytes;      // largest model file read
};

// The forward ops of a model and what the importer saw (for tests and reports).
struct OnnxForward {
  std::vector<OpInfo> ops;                          // topological order, inputs index ops
  std::vector<std::string> op_types;                // ONNX op_type per op
  std::vector<std::vector<int64_t>> output_shapes;  // shape of each op's first output
  int num_nodes = 0;                                // nodes in the ONNX graph
  int folded_nodes = 0;                             // constant / shape / Identity / Dropout nodes
  double weight_bytes = 0;                          // Σ weight initializers
  int shape_rounds = 0;                             // shape inference passes (onnx_import.cc)
};

// `bytes` is a serialized ModelProto; `label` names it in errors (the path).
OnnxForward ReadOnnxForward(const std::string& bytes, const std::string& label,
                            const OnnxImportOptions& options = {});
// Forward ops (+ training ops when options.training) as a graph.
ComputeGraph ImportOnnxBytes(const std::string& bytes, const std::string& label,
                             const OnnxImportOptions& options = {});
ComputeGraph ImportOnnx(const std::string& path, const OnnxImportOptions& options = {});

// Graph specs naming an ONNX file: `model.onnx` or `model.onnx?batch=32,seq=128,backward=0`
// (keys: batch; backward = 0/1: grad/ and update/ ops; update = 0/1: only the update/ ops —
// 0 with perf-model's training-step line, which adds the update itself; any other key a
// dim_param name; values non-negative integers, batch and dims ≥ 1). True when `spec` ends
// in ".onnx" or has ".onnx?" in it.
bool IsOnnxSpec(const std::string& spec);
// Imports the file; examples = batch. Throws ConfigError on a bad key or value.
NamedGraph GraphFromOnnxSpec(const std::string& spec);

}  // namespace placerl::graphs
