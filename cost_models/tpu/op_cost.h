// Cost of one operation on one device: roofline of FLOPs and bytes with a per-kind
// efficiency and a fixed launch overhead:
//   t = max(flops / (peak · eff_flops(kind)), bytes / (hbm_bw · eff_memory)) + launch
// Matmul-like kinds (matmul/einsum, conv) run on the MXU/tensor cores at eff.matmul of
// peak; vector kinds (elementwise, reduction, softmax, norm, embedding, MoE dispatch/
// combine) run at kVectorFraction of peak — they are memory-bound in practice.
#pragma once

#include "datasets/proto/hardware.pb.h"

namespace placerl::perf {

enum class OpKind {
  kMatmul, kConv, kElementwise, kReduction, kSoftmax, kNorm, kEmbedding, kMoeDispatch, kMoeCombine
};
const char* OpKindName(OpKind kind);
// Parses "matmul", "einsum", "conv", "elementwise", ... ; false when unknown.
bool ParseOpKind(const char* name, OpKind* kind);

// Vector-unit throughput as a fraction of MXU peak (structural constant, not fitted:
// a TPU VPU does ~1/16 of the MXU FLOP/s; GPUs' CUDA cores ~1/16 of tensor cores).
constexpr double kVectorFraction = 1.0 / 16;

// Per-device rates: what OpTime needs, copied out of the catalogue once.
struct DeviceRates {
  double peak_flops = 0;    // FLOP/s of one device in the compute dtype
  double hbm_bw = 0;        // bytes/s of one device
  double eff_matmul = 1;
  double eff_memory = 1;
  double launch = 0;        // seconds per op
  double matmul_half = 0;   // Efficiency.matmul_half_size (0 = no size effect)
};
// Per-device rates of `chip` (divided by devices_per_chip) in `dtype`, with `eff`.
DeviceRates MakeDeviceRates(const Chip& chip, DType dtype, const Efficiency& eff);

double OpTime(const DeviceRates& r, OpKind kind, double flops, double bytes);

// A matmul (or batched matmul) whose smallest dimension is `min_dim`: as OpTime(kMatmul)
// with the compute rate scaled by min_dim / (min_dim + matmul_half) when matmul_half > 0.
double MatmulOpTime(const DeviceRates& r, double min_dim, double flops, double bytes);

// Convenience for a [m,k]@[k,n] matmul with element sizes a (activations) and w (weights).
inline double MatmulFlops(double m, double k, double n) { return 2 * m * k * n; }
inline double MatmulBytes(double m, double k, double n, double a, double w) {
  return (m * k + m * n) * a + k * n * w;
}

}  // namespace placerl::perf
