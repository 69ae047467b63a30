// Inception-V3 (torchvision's `inception_v3`, shapes and parameter counts included) as an
// op-level training graph for device placement (ColocRL/HDP/Placeto/Baechi benchmark,
// device_placement_notes §3.1: b32, 299×299).
//
// Ops: every BasicConv2d is three ops "<block>/<conv>/conv" (no bias), ".../bn" (norm, 2·C
// params: gamma, beta) and ".../relu"; blocks "Conv2d_1a_3x3" … "Mixed_7c" name their branches
// as torchvision does ("Mixed_5b/branch5x5_2/conv"), pools "<block>/branch_pool/avgpool",
// "maxpool1", "Mixed_6a/branch_pool/maxpool", concats "<block>/concat" (InceptionE also
// "…/branch3x3/concat", "…/branch3x3dbl/concat"); head "avgpool", "fc", "xent"; the auxiliary
// head (training only, `aux`) "AuxLogits/avgpool", "AuxLogits/conv0/…", "AuxLogits/conv1/…",
// "AuxLogits/pool", "AuxLogits/fc", "AuxLogits/xent"; "loss" sums the losses.
// Costs as model_graphs.h's ResNet with element_bytes for activations and weights: conv
// 2·B·Ho·Wo·Kh·Kw·Cin·Cout flops, bytes (input + output + weights); BN 8 flops/element; ReLU
// 1; k×k pools k² flops per output element (the global pools 1 per input element); concat no
// flops; fc 2·B·in·out; xent 5·B·classes. Backward / update / co-location: AddTrainingOps.
#pragma once

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct InceptionConfig {
  int batch = 32;
  int image = 299;  // >= 75 (the smallest input torchvision accepts)
  int classes = 1000;
  bool aux = true;  // the auxiliary classifier (trained with the main head)
  double element_bytes = 4;
  bool update = true;
};

// Throws ConfigError on a size < 1 or image < 75.
ComputeGraph MakeInceptionV3Graph(const InceptionConfig& config);
// Weights incl. BN gamma/beta, fc biases and (with aux) the auxiliary head.
double InceptionV3ParamCount(const InceptionConfig& config);
// Multiply-accumulates per image of the forward convs and fcs (main head only, as torchvision
// reports them).
double InceptionV3ForwardMacs(const InceptionConfig& config);

}  // namespace placerl::graphs
