// Collective-communication cost on rings, multi-dimensional tori, switched nodes and two
// levels (ICI inside a slice + DCN between slices). Formulas of perf_model_notes.md §2
// (JAX scaling book): latency (hops × α) + size / bandwidth, with S = bytes of the FULL
// (unsharded) array. Plain functions of POD inputs: no allocation, usable in hot loops.
#pragma once

namespace placerl::perf {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kPermute, kBroadcast };
const char* CollectiveName(Collective c);

// One ring of n participants. link_bw: one-way bandwidth per link (B); a bidirectional
// ring (a torus axis with wraparound) sends both ways (W = 2B).
struct Ring {
  int n = 1;
  double link_bw = 1;
  double hop_latency = 0;
  bool bidirectional = false;
};

// Ideal time (no efficiency factors) of `c` over one ring. Formulas (notes §2):
//   AG/RS uni: (n-1)α + (n-1)/n·S/B          bidi: ⌈n/2⌉α + (n-1)/n·S/(2B)
//   AR = 2 × RS;  A2A = AG/2 (uni), AG/4 (bidi) with the same latency as AG
//   permute (shift by one): α + (S/n)/B;  broadcast (pipelined): AG latency + S/B (uni), S/(2B) (bidi)
double RingTime(Collective c, const Ring& ring, double bytes);

// A group of devices spanning up to 4 physical axes of a slice (the book's "multiple axes"
// rule: the bandwidth of every spanned axis adds up; latencies add per axis), optionally
// continued over `dcn_n` slices joined by DCN (two-level, hierarchical).
struct AxisGroup {
  int ndims = 0;
  int extent[4] = {1, 1, 1, 1};
  bool wrap[4] = {false, false, false, false};
  double dim_bw[4] = {0, 0, 0, 0};   // one-way bandwidth per link on that axis
  double hop_latency = 0;            // α on ICI
  bool switched = false;             // NVSwitch-like: one "axis", no hops (α once per step)
  // TensorCores of one chip in the group (v2/v3: 2 devices per chip joined on-chip). The
  // fastest, innermost level: its phase runs on the whole S, the ICI phase on S/onchip_n.
  int onchip_n = 1;
  double onchip_bw = 0;
  int dcn_n = 1;                     // slices in the group
  double dcn_bw = 0;                 // per-chip DCN bandwidth
  double dcn_latency = 0;
  // The collective runs as ONE flat ring over all members instead of hierarchically: each
  // DCN hop of the ring is one chip's DCN share, so the whole S crosses it (DeepSpeed ZeRO-3
  // on NCCL rings; XLA and multi-channel NCCL are hierarchical, the default).
  bool flat_dcn = false;
  // Hops added to the ICI latency term by detours around failed chips (mesh `failed`).
  double extra_hops = 0;
  int ici_size() const {
    int s = 1;
    for (int i = 0; i < ndims; ++i) s *= extent[i];
    return s;
  }
  int size() const { return onchip_n * ici_size() * dcn_n; }
};

// Ideal time over the ICI part only, all spanned axes at once (multi-axis rule):
//   bandwidth term: (N-1)/N · S / Σ_i (wrap_i ? 2 : 1)·B_i   (× 2 for AR, × ½/¼ for A2A)
//   latency term:   Σ_i hops_i · α, hops_i = ⌈n_i/2⌉ with wrap, n_i − 1 without (× 2 for AR)
double IciGroupTime(Collective c, const AxisGroup& g, double bytes);

// Ying et al. 2-D torus all-reduce done one dimension after the other, in one order only:
// RS along dim 0, AR along dim 1 on S/n0, AG along dim 0 (no multi-axis bandwidth gain).
double PhasedTorusAllReduce(const AxisGroup& g, double bytes);

// Efficiency-applied time over the whole group (on-chip + ICI + DCN, hierarchical, the
// faster inner level on the larger message; with a on-chip devices, N = a·N_ici):
//   AG/RS = onchip(S) + ICI(S / a) + DCN(S / N);  AR = 2 × that (RS then AG);
//   A2A = ICI(S) + DCN direct ((d-1)/d · S/N per chip);  permute = ICI + DCN ring on S/N_ici;
//   broadcast = ICI(S) + DCN(S).
// Bandwidth terms are divided by `bw_eff`; the result is at least `latency_floor` (when the
// group has > 1 member). DCN is a ring over dcn_n slices, each chip with its own DCN share.
// With `flat_dcn` (AG, RS, AR only; the other collectives stay hierarchical) the time is one
// ring over all N members whose slowest hops are DCN: AG/RS = (N-dcn_n)·α + dcn_n·α_dcn +
// (N-1)/N · S / dcn_bw, AR = 2 × that.
// `dcn_eff` is the bandwidth efficiency of the DCN phase (0 = the same as `bw_eff`).
double CollectiveTime(Collective c, const AxisGroup& g, double bytes, double bw_eff,
                      double latency_floor, double dcn_eff = 0);

}  // namespace placerl::perf
