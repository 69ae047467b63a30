// Cost of one operation on one device: roofline of FLOPs and bytes with a per-kind
// efficiency and a fixed launch overhead:
//   t = max(flops / (peak · eff_flops(kind)), bytes / (hbm_bw · eff_memory)) + launch
// Matmul-like kinds (matmul/einsum, conv) run on the MXU/tensor cores at eff.matmul of
// peak; vector kinds (elementwise, reduction, softmax, norm, embedding, MoE dispatch/
// combine) run at kVectorFraction of peak — they are memory-bound in practice.
#pragma once

#include <algorithm>
#include <cmath>

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
  // Shape model (Efficiency.shape_model): off → the matmul terms above only.
  // eff_shaped: the matmul fraction ShapedMatmulTime uses (Efficiency.matmul under the shape model).
  bool shape = false;
  double eff_shaped = 1, tile = 0, units = 1, fill = 0;
  // Set with the above by MakeDeviceRates: fill·tile; 1/tile and 1/units when they are powers
  // of two (exact reciprocals), else 0 (divide).
  double fill_rows = 0, inv_tile = 0, inv_units = 0;
  bool output_stationary = false;  // Chip.output_stationary: [m, n] output tiles, k streams
  // Efficiency.flash_attention / flash_attention_bwd (0 = the attention core as a matmul).
  double flash_fwd = 0, flash_bwd = 0;
};
// Per-device rates of `chip` (divided by devices_per_chip) in `dtype`, with `eff`.
DeviceRates MakeDeviceRates(const Chip& chip, DType dtype, const Efficiency& eff);

double OpTime(const DeviceRates& r, OpKind kind, double flops, double bytes);

// A matmul (or batched matmul) whose smallest dimension is `min_dim`: as OpTime(kMatmul)
// with the compute rate scaled by min_dim / (min_dim + matmul_half) when matmul_half > 0.
double MatmulOpTime(const DeviceRates& r, double min_dim, double flops, double bytes);

// Rows enter a matrix unit in groups of 8 (TPU: bf16[8,128] per 8 cycles, book [V]).
constexpr double kMatmulRowGranule = 8;

// Shape factor (0, 1] of a batch of `batch` [m,k]@[k,n] matmuls under the shape model (1 when
// r.shape is off or the chip has no tile), weight-stationary like a TPU MXU: the weights
// [k, n] are cut in T×T tiles (k and n padded to T), the m rows stream through each tile
// (padded to 8 rows); the ⌈k/T⌉⌈n/T⌉·batch weight tiles are shared out over the units in
// waves (wave = tiles/(⌈tiles/units⌉·units)); each tile pays a fill/drain of fill·T rows
// (m/(m + fill·T)). GPUs are described with the same dataflow ([A]: their thread blocks) unless the chip says
// output_stationary (OutputStationaryShapeFactor below).
// (Inline: the plan search's hot path calls it for every matmul.)
//
// Speed (bit for bit the plain expressions): x/T is x·(1/T) when T is a power of two (exact);
// a padding or wave ratio whose dimension is already a whole number of tiles is 1 without a
// division (x/x = 1 exactly).
namespace shape_detail {
// ⌈x/T⌉ (into *tiles) and x / (⌈x/T⌉·T).
inline double Pad(double x, double T, double inv_T, double* tiles) {
  const double c = std::ceil(inv_T > 0 ? x * inv_T : x / T);
  *tiles = c;
  const double padded = c * T;
  return padded == x ? 1.0 : x / padded;
}
// tiles / (⌈tiles/units⌉·units).
inline double Wave(const DeviceRates& r, double tiles) {
  const double den = std::ceil(r.inv_units > 0 ? tiles * r.inv_units : tiles / r.units) * r.units;
  return den == tiles ? 1.0 : tiles / den;
}
}  // namespace shape_detail

// Output-stationary units (Chip.output_stationary, GPUs): [m, n] output tiles of T×T (m and n
// padded to T) in waves over the units, the contraction k streams through each tile (padded to
// 8) and pays the fill/drain k/(k + fill·T).
inline double OutputStationaryShapeFactor(const DeviceRates& r, double m, double k, double n, double batch) {
  const double T = r.tile;
  double tm, tk, tn;
  const double pm = shape_detail::Pad(m, T, r.inv_tile, &tm);
  const double pk = shape_detail::Pad(k, kMatmulRowGranule, 1 / kMatmulRowGranule, &tk);
  const double pn = shape_detail::Pad(n, T, r.inv_tile, &tn);
  return pm * pk * pn * shape_detail::Wave(r, tm * tn * std::max(1.0, batch)) * (k / (k + r.fill_rows));
}

inline double MatmulShapeFactor(const DeviceRates& r, double m, double k, double n, double batch = 1) {
  if (!r.shape || r.tile <= 0 || !(m > 0 && k > 0 && n > 0)) return 1.0;
  if (r.output_stationary) return OutputStationaryShapeFactor(r, m, k, n, batch);
  const double T = r.tile;
  double tm, tk, tn;
  const double pm = shape_detail::Pad(m, kMatmulRowGranule, 1 / kMatmulRowGranule, &tm);
  const double pk = shape_detail::Pad(k, T, r.inv_tile, &tk);
  const double pn = shape_detail::Pad(n, T, r.inv_tile, &tn);
  const double pad = pm * pk * pn;
  const double tiles = tk * tn * std::max(1.0, batch);
  return pad * shape_detail::Wave(r, tiles) * (m / (m + r.fill_rows));
}

// The forward [m,k]@[k,n] and the backward weight-gradient dW = Xᵀ·dY ([k,m]@[m,n]) factors
// of one matmul: = MatmulShapeFactor(r, m, k, n, batch) and MatmulShapeFactor(r, k, m, n,
// batch), bit for bit, sharing their common terms. `dx`: the input gradient dX = dY·Wᵀ
// ([m,n]@[n,k]); weight-stationary units stream the same m rows through the same (transposed)
// weight tiles, so it is the forward's factor; output-stationary units tile [m, k] and stream n.
inline void MatmulShapeFactorsFwdDw(const DeviceRates& r, double m, double k, double n, double batch,
                                    double* fwd, double* dw, double* dx = nullptr) {
  if (!r.shape || r.tile <= 0 || !(m > 0 && k > 0 && n > 0)) {
    *fwd = *dw = 1.0;
    if (dx != nullptr) *dx = 1.0;
    return;
  }
  if (r.output_stationary) {
    *fwd = OutputStationaryShapeFactor(r, m, k, n, batch);
    *dw = OutputStationaryShapeFactor(r, k, m, n, batch);
    if (dx != nullptr) *dx = OutputStationaryShapeFactor(r, m, n, k, batch);
    return;
  }
  const double T = r.tile, b = std::max(1.0, batch);
  double tm8, tk8, tmT, tkT, tn;
  const double pn = shape_detail::Pad(n, T, r.inv_tile, &tn);
  const double pm8 = shape_detail::Pad(m, kMatmulRowGranule, 1 / kMatmulRowGranule, &tm8);
  const double pkT = shape_detail::Pad(k, T, r.inv_tile, &tkT);
  *fwd = pm8 * pkT * pn * shape_detail::Wave(r, tkT * tn * b) * (m / (m + r.fill_rows));
  const double pk8 = shape_detail::Pad(k, kMatmulRowGranule, 1 / kMatmulRowGranule, &tk8);
  const double pmT = shape_detail::Pad(m, T, r.inv_tile, &tmT);
  *dw = pk8 * pmT * pn * shape_detail::Wave(r, tmT * tn * b) * (k / (k + r.fill_rows));
  if (dx != nullptr) *dx = *fwd;
}

// The two batched matmuls of attention, [m,a]@[a,c] and [m,c]@[c,a] (`batch` of each): =
// MatmulShapeFactor(r, m, a, c, batch) and MatmulShapeFactor(r, m, c, a, batch), bit for bit.
inline void MatmulShapeFactorsSwapped(const DeviceRates& r, double m, double a, double c, double batch,
                                      double* ac, double* ca) {
  if (!r.shape || r.tile <= 0 || !(m > 0 && a > 0 && c > 0)) {
    *ac = *ca = 1.0;
    return;
  }
  if (r.output_stationary) {
    *ac = OutputStationaryShapeFactor(r, m, a, c, batch);
    *ca = OutputStationaryShapeFactor(r, m, c, a, batch);
    return;
  }
  const double T = r.tile;
  double tm, ta, tc;
  const double pm = shape_detail::Pad(m, kMatmulRowGranule, 1 / kMatmulRowGranule, &tm);
  const double pa = shape_detail::Pad(a, T, r.inv_tile, &ta);
  const double pc = shape_detail::Pad(c, T, r.inv_tile, &tc);
  const double b = std::max(1.0, batch);
  const double fill = m / (m + r.fill_rows);
  *ac = pm * pa * pc * shape_detail::Wave(r, ta * tc * b) * fill;
  *ca = pm * pc * pa * shape_detail::Wave(r, tc * ta * b) * fill;
}

// A matmul of `flops` and `bytes` whose compute rate is peak·eff_shaped·shape_factor.
inline double ShapedMatmulTime(const DeviceRates& r, double shape_factor, double flops, double bytes) {
  return std::max(flops / (r.peak_flops * r.eff_shaped * shape_factor), bytes / (r.hbm_bw * r.eff_memory)) + r.launch;
}
// The same with the memory term given (bytes / (hbm_bw · eff_memory)).
inline double ShapedMatmulTimeMem(const DeviceRates& r, double shape_factor, double flops, double t_memory) {
  return std::max(flops / (r.peak_flops * r.eff_shaped * shape_factor), t_memory) + r.launch;
}

// Convenience for a [m,k]@[k,n] matmul with element sizes a (activations) and w (weights).
inline double MatmulFlops(double m, double k, double n) { return 2 * m * k * n; }
inline double MatmulBytes(double m, double k, double n, double a, double w) {
  return (m * k + m * n) * a + k * n * w;
}

}  // namespace placerl::perf
