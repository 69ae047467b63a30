// The ENAS micro super-network for 28×28×1 images (Pham et al. 2018; nas_notes.md §4.1;
// docs/nas.md "ENAS weight sharing on Fashion-MNIST"), and the same network with only one
// child's operations (FixedNet, final training from scratch). Owns the child's layout, its
// parameter count and its multiply-accumulates.
//
// Layout (datasets/nas/spaces/enas_micro.pbtxt decides the cells):
//   stem conv3×3 (1 → C) + BN
//   stage 0: N normal cells, C channels, 28×28
//   reduction cell (2C, 14×14), stage 1: N normal cells
//   reduction cell (4C, 7×7),  stage 2: N normal cells
//   global average pool → linear → 10 classes
// A cell has two inputs (the two previous cells' outputs, the stem counting as both at first),
// each calibrated to the cell's channels by ReLU-conv1×1-BN (stride 2 where the input has twice
// the cell's resolution: as in ENAS, a reduction cell reduces its inputs, so every operation
// runs at stride 1). Node i = op0(h[input0]) + op1(h[input1]), h[0..1] = the calibrated inputs,
// h[2 + k] = node k. The cell's output is the sum over its loose ends (nodes no other node
// reads) of a 1×1 conv each, then BN: ENAS's concatenation + 1×1 conv, split by node so that a
// child uses the weights of exactly its loose ends.
// Operations, each with its OWN weights per (cell type, cell, node, input slot, operation) in
// the super-network: sep_conv k×k = ReLU → depthwise k×k → pointwise 1×1 → BN; avg / max pool
// 3×3 stride 1; identity. BN has no affine parameters and normalises with the batch's
// statistics in training mode (the super-network is always run in training mode: its running
// statistics mix every child and are never used); FixedNet uses running statistics in eval mode.
// ENAS's sep-conv applies the ReLU-sepconv-BN twice; once here, to keep a child step in tens of
// milliseconds on one core. No auxiliary head, no drop-path.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datasets/nas/search_space.h"

namespace placerl::enas {

inline constexpr int32_t kNodes = 5;  // B of the enas_micro space
inline constexpr int32_t kNumOps = 5;
enum class Op : int32_t { kSepConv3 = 0, kSepConv5 = 1, kAvgPool3 = 2, kMaxPool3 = 3, kIdentity = 4 };
const char* OpName(int32_t op);  // the space's choice names: sep_conv3x3, …

// One cell's choices: node i reads h[input[i][s]] through op[i][s], s = 0, 1.
struct CellArch {
  std::array<std::array<int32_t, 2>, kNodes> input{}, op{};
  // Nodes no node reads (the cell's output), in order; never empty.
  std::vector<int32_t> LooseEnds() const;
  // Whether some node reads cell input `k` (0: two cells back, 1: the previous cell).
  bool ReadsInput(int32_t k) const;
};
struct ChildArch {
  CellArch normal, reduce;
};

// An enas_micro architecture (40 decisions: normal0/input0, normal0/op0, normal0/input1, …,
// reduce4/op1) as cells. Throws ConfigError for another size or a choice out of range.
ChildArch DecodeEnasMicro(const nas::Architecture& a);
nas::Architecture EncodeEnasMicro(const ChildArch& c);

struct EnasNetOptions {
  int32_t channels = 16;         // C of stage 0 (2C, 4C after the reductions)
  int32_t cells_per_stage = 1;   // N normal cells per stage
  int32_t num_classes = 10;
  int32_t image_size = 28;       // square, divisible by 4
  int32_t in_channels = 1;
};
// Throws ConfigError for values out of range.
void CheckNetOptions(const EnasNetOptions& o);

// What one child costs, per image: parameters (weights of its convolutions and classifier; BN
// has none) and multiply-accumulates of its convolutions and classifier (pools, BN, sums and
// ReLUs not counted). FLOPs ≈ 2 × MACs.
struct ChildCost {
  int64_t params = 0;
  int64_t macs = 0;
};
ChildCost ChildCostOf(const EnasNetOptions& o, const ChildArch& c);

class EnasNetImpl : public torch::nn::Module {
 public:
  // The super-network (every operation of every node and slot), or with `fixed` only that
  // child's operations and loose-end convolutions (FixedNet). Parameter names are the same in
  // both, so a FixedNet can take a super-network's weights by name (CopySharedWeights).
  explicit EnasNetImpl(const EnasNetOptions& options, const std::optional<ChildArch>& fixed = std::nullopt);
  // Logits [batch, classes] of the child `arch` for images [batch, in_channels, S, S]. A FixedNet
  // runs its own child and throws ConfigError when `arch` is another one.
  torch::Tensor Forward(const torch::Tensor& images, const ChildArch& arch);
  torch::Tensor forward(const torch::Tensor& images);  // FixedNet only
  const EnasNetOptions& options() const { return o_; }
  bool fixed() const { return fixed_.has_value(); }
  // Parameters a child uses (named as in named_parameters()).
  std::vector<std::string> ChildParameterNames(const ChildArch& c) const;

 private:
  struct Cell {
    bool reduce = false;
    int32_t channels = 0;
    int32_t stride_pp = 1, stride_p = 1;  // calibration strides of h[0] (two cells back) and h[1]
    torch::nn::Conv2d calib_pp{nullptr}, calib_p{nullptr};
    torch::nn::BatchNorm2d bn_pp{nullptr}, bn_p{nullptr}, bn_out{nullptr};
    // Index OpIndex(node, slot, op): depthwise + pointwise + BN of a sep conv (empty for pools /
    // identity and for operations a FixedNet does not have).
    std::vector<torch::nn::Conv2d> depthwise, pointwise;
    std::vector<torch::nn::BatchNorm2d> op_bn;
    std::vector<torch::nn::Conv2d> out_conv;  // per node: its 1×1 share of the output conv
    static int32_t OpIndex(int32_t node, int32_t slot, int32_t op) { return (node * 2 + slot) * kNumOps + op; }
    Cell();
  };
  torch::Tensor RunOp(Cell& cell, int32_t node, int32_t slot, int32_t op, const torch::Tensor& x);
  torch::Tensor RunCell(Cell& cell, const CellArch& a, const torch::Tensor& h_pp, const torch::Tensor& h_p);

  EnasNetOptions o_;
  std::optional<ChildArch> fixed_;
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<Cell> cells_;
  std::vector<std::string> cell_prefix_;
  torch::nn::Linear classifier_{nullptr};
};
TORCH_MODULE(EnasNet);

// Copies every parameter of `to` from the parameter of the same name in `from` (a FixedNet from
// its super-network). Throws ConfigError when `from` lacks one or the shapes differ.
void CopySharedWeights(EnasNet& from, EnasNet& to);
int64_t CountParameters(torch::nn::Module& m);

}  // namespace placerl::enas
