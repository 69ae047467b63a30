// Compute graphs of real models for device placement and the TPU evaluator: ResNet
// (torchvision v1.5). Other models: rnn_graphs.h, inception_graph.h, transformer_graphs.h,
// enas_graphs.h.
//
// Op and cost conventions (one OpInfo per layer; sizes in bytes, `batch` images per step):
//  * Names follow torchvision: "conv1", "bn1", "relu", "maxpool", "layer2.0.conv2",
//    "layer2.0.bn2", "layer2.0.relu2", "layer2.0.add", "layer2.0.downsample.conv",
//    "layer2.0.downsample.bn", "avgpool", "fc", "loss"; backward ops are "grad/<forward name>".
//  * conv ("conv"): flops = 2·MACs·batch; bytes = (input + output activations)·act_bytes +
//    weights·act_bytes (weights read in compute precision); param_bytes = weights·param_bytes.
//    Convs have no bias; padding k/2, out = (in + 2·(k/2) − k)/stride + 1.
//  * BN ("norm"): 8 flops/element, bytes = 2·elements·act_bytes, params = 2·C (gamma, beta).
//  * ReLU, residual add ("elementwise"): 1 flop/output element, bytes = (inputs + output).
//  * max-pool ("reduction"): 9 flops/output element; global avg pool ("reduction"): 1 flop per
//    input element; fc ("matmul"): 2·batch·in·out flops, params (in+1)·out; "loss"
//    ("softmax"): 5·batch·classes flops, output = one loss value per image.
//  * output_bytes of a forward op = its output activation. The first conv reads the image
//    (batch·3·image²) from outside the graph (no input op).
//  * Backward (config.backward): for each forward op X in reverse order an op "grad/X" of the
//    same kind with 2× X's flops and bytes, inputs = grad ops of X's consumers, X's forward
//    inputs (saved activations) and X itself; output_bytes = size of X's first input
//    activation (the gradient w.r.t. it; the image for "grad/conv1"); param_bytes = 0.
//    No optimizer op: the evaluator adds the weight update.
#pragma once

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct ResNetConfig {
  int depth = 50;          // 18, 34 (basic blocks), 50, 101, 152 (bottleneck blocks)
  int batch = 32;          // images per replica (one step)
  int image = 224;         // square input resolution
  int classes = 1000;
  double act_bytes = 2;    // bytes per activation element (bf16)
  double param_bytes = 4;  // bytes per weight element (fp32)
  bool backward = true;    // add the backward ops (one training step) or forward only
  // XLA-style fusion (TPU): ReLU and residual add run fused into their neighbours (no HBM
  // pass of their own: bytes 0), BN makes one pass (its statistics read; the normalisation
  // rides on the consumer's read). Op structure and FLOPs are unchanged.
  bool fused = false;
  // Training ops through AddTrainingOps (training_graph.h) instead of the backward above:
  // grad ops, Adam update ops and op + gradient + update co-location groups (device
  // placement). Needs `backward`.
  bool update = false;
};

// ResNet graph; forward ops come first in topological (index) order, then the grad ops (and
// with `update` the update ops). Throws ConfigError on an unsupported depth, a size <= 0, or
// `update` without `backward`.
ComputeGraph MakeResNetGraph(const ResNetConfig& config);
// Number of weights incl. BN gamma/beta and the fc bias (independent of batch / image).
double ResNetParamCount(const ResNetConfig& config);
// Multiply-accumulates of conv + fc per image, forward.
double ResNetForwardMacs(const ResNetConfig& config);

}  // namespace placerl::graphs
