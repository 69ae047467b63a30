#include "cost_models/tpu/op_cost.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cost_models/tpu/catalog.h"

namespace placerl::perf {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kMatmul: return "matmul";
    case OpKind::kConv: return "conv";
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kReduction: return "reduction";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kNorm: return "norm";
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kMoeDispatch: return "moe_dispatch";
    case OpKind::kMoeCombine: return "moe_combine";
  }
  return "?";
}

bool ParseOpKind(const char* name, OpKind* kind) {
  static const struct { const char* name; OpKind kind; } kNames[] = {
      {"matmul", OpKind::kMatmul}, {"einsum", OpKind::kMatmul}, {"conv", OpKind::kConv},
      {"elementwise", OpKind::kElementwise}, {"reduction", OpKind::kReduction},
      {"softmax", OpKind::kSoftmax}, {"norm", OpKind::kNorm}, {"embedding", OpKind::kEmbedding},
      {"moe_dispatch", OpKind::kMoeDispatch}, {"moe_combine", OpKind::kMoeCombine}};
  for (const auto& n : kNames)
    if (std::strcmp(n.name, name) == 0) {
      *kind = n.kind;
      return true;
    }
  return false;
}

DeviceRates MakeDeviceRates(const Chip& chip, DType dtype, const Efficiency& eff) {
  DeviceRates r;
  const double dpc = std::max(1, chip.devices_per_chip());
  r.peak_flops = PeakFlops(chip, dtype) / dpc;
  r.hbm_bw = chip.hbm_bw() / dpc;
  r.eff_matmul = eff.matmul();
  r.eff_memory = eff.memory();
  r.launch = eff.launch_overhead_s();
  r.matmul_half = eff.matmul_half_size();
  r.flash_fwd = eff.flash_attention();
  r.flash_bwd = eff.flash_attention_bwd() > 0 ? eff.flash_attention_bwd() : eff.flash_attention();
  if (eff.shape_model()) {
    r.shape = true;
    r.eff_shaped = eff.matmul();
    r.tile = std::max(0, chip.mxu_tile());
    r.units = std::max(1, chip.matmul_units());
    r.fill = std::max(0.0, eff.matmul_fill());
    r.fill_rows = r.fill * r.tile;
    auto exact_inverse = [](int x) {  // 1/x is exact for a power of two
      return x > 0 && (x & (x - 1)) == 0 ? 1.0 / x : 0.0;
    };
    r.inv_tile = exact_inverse(std::max(0, chip.mxu_tile()));
    r.inv_units = exact_inverse(std::max(1, chip.matmul_units()));
    r.output_stationary = chip.output_stationary();
  }
  return r;
}

double MatmulOpTime(const DeviceRates& r, double min_dim, double flops, double bytes) {
  const double size_eff = r.matmul_half > 0 ? min_dim / (min_dim + r.matmul_half) : 1.0;
  const double t_compute = flops / (r.peak_flops * r.eff_matmul * size_eff);
  const double t_memory = bytes / (r.hbm_bw * r.eff_memory);
  return std::max(t_compute, t_memory) + r.launch;
}

double OpTime(const DeviceRates& r, OpKind kind, double flops, double bytes) {
  const bool mxu = kind == OpKind::kMatmul || kind == OpKind::kConv;
  const double flop_rate = r.peak_flops * (mxu ? r.eff_matmul : kVectorFraction);
  const double t_compute = flops / flop_rate;
  const double t_memory = bytes / (r.hbm_bw * r.eff_memory);
  return std::max(t_compute, t_memory) + r.launch;
}

}  // namespace placerl::perf
