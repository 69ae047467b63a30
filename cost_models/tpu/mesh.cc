#include "cost_models/tpu/mesh.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::perf {

namespace {
constexpr double kOnChipBw = 1e12;  // between the TensorCores of one chip (v2/v3) [A]

// a / b and gcd(a, b) for positive ints, with a shift / min when b (and a) are powers of two —
// the usual mesh and plan sizes — instead of an integer division (MapAxes runs once per plan
// evaluation). Same results as a / b and std::gcd.
inline bool IsPow2(int x) { return (x & (x - 1)) == 0; }
inline int DivPos(int a, int b) { return IsPow2(b) ? a >> __builtin_ctz(static_cast<unsigned>(b)) : a / b; }
inline int GcdPos(int a, int b) { return IsPow2(a) && IsPow2(b) ? std::min(a, b) : std::gcd(a, b); }
}  // namespace

MeshTopology::MeshTopology(const Mesh& mesh, const Chip& chip) {
  if (mesh.dims_size() == 0) throw ConfigError("mesh: needs dims (e.g. 4x4x4)");
  if (mesh.dims_size() > 4) throw ConfigError("mesh: at most 4 dims");
  const int dpc = std::max(1, chip.devices_per_chip());
  const Ici& ici = chip.ici();
  const bool switched = ici.topology() == SWITCHED;
  const double link_bw = ici.link_bw_one_way() / dpc;
  if (dpc > 1) phys_[nphys_++] = {dpc, false, false, false, true, kOnChipBw};
  if (mesh.slices() < 0) throw ConfigError("mesh: slices must be >= 1, got " + std::to_string(mesh.slices()));
  const int slices = std::max(1, mesh.slices());
  // 64-bit, checked after every factor: each factor is < 2^31 and the running product stays
  // <= kMaxDevices, so nothing can overflow.
  long long devices = dpc;
  std::string product = std::to_string(dpc) + " device(s) per chip";
  long long chips_per_slice = 1;
  auto grow = [&](long long factor, const std::string& what) {
    devices *= factor;
    product += " x " + std::to_string(factor) + what;
    if (devices > kMaxDevices)
      throw ConfigError("mesh: " + product + " exceeds the limit of " + std::to_string(kMaxDevices) + " devices");
  };
  for (int d : mesh.dims()) {
    if (d < 1) throw ConfigError("mesh: dims must be >= 1, got " + std::to_string(d));
    grow(d, "");
    chips_per_slice *= d;
    const int w = ici.wrap_min_axis();
    const bool wrap = !switched && w > 0 && d >= w && d % w == 0;
    // Switched nodes: one group reaching every peer at the whole per-GPU NVLink bandwidth.
    const double bw = switched ? ici.link_bw_one_way() * ici.links_per_chip() / dpc : link_bw;
    phys_[nphys_++] = {d, wrap, false, switched, false, bw};
  }
  grow(slices, " slice(s)");
  if (ici.max_chips_per_domain() > 0 && chips_per_slice > ici.max_chips_per_domain())
    throw ConfigError("mesh: " + std::to_string(chips_per_slice) + " chips exceed the " +
                      std::to_string(ici.max_chips_per_domain()) + "-chip ICI domain of " +
                      chip.name() + " (use slices=)");
  if (slices > 1) {
    if (chip.dcn_bw_per_chip() <= 0)
      throw ConfigError("mesh: chip " + chip.name() + " has no DCN bandwidth for slices > 1");
    phys_[nphys_++] = {slices, false, true, false, false, chip.dcn_bw_per_chip() / dpc};
  }
  num_chips_ = static_cast<int>(chips_per_slice * slices);
  num_devices_ = static_cast<int>(devices);
  chips_per_slice_ = chips_per_slice;
  if (mesh.failed() != 0) {
    if (mesh.failed() < 0 || mesh.failed() >= chips_per_slice)
      throw ConfigError("mesh: failed=" + std::to_string(mesh.failed()) + " must be in [0, " +
                        std::to_string(chips_per_slice - 1) + "] (chips of the slice)");
    if (slices > 1) throw ConfigError("mesh: failed chips are modelled on one slice only (slices=1)");
    if (switched) throw ConfigError("mesh: failed chips are modelled on tori / meshes, not switched nodes");
    failed_ = mesh.failed();
    dpc_ = dpc;
    num_chips_ -= failed_;
    num_devices_ -= failed_ * dpc;
  }
  hop_latency_ = ici.hop_latency_s();
  dcn_bw_ = chip.dcn_bw_per_chip() / dpc;
  dcn_latency_ = chip.dcn_latency_s();
}

void MeshTopology::MapAxes(const int* sizes_in, int num_axes, AxisGroup* groups) const {
  // With failed chips the groups span the whole (holed) mesh: the outermost axis that fills
  // the healthy devices is mapped as if the holes were members (its rings run through them,
  // routed around; below).
  int grown[8];
  const int* sizes = sizes_in;
  if (failed_ > 0 && num_axes <= 8) {
    long long prod = 1;
    int last = -1;
    for (int a = 0; a < num_axes; ++a) {
      prod *= sizes_in[a];
      grown[a] = sizes_in[a];
      if (sizes_in[a] > 1) last = a;
    }
    const long long full = num_devices_ + static_cast<long long>(failed_) * dpc_;
    if (last >= 0 && prod == num_devices_) {
      const long long others = prod / sizes_in[last];
      if (full % others == 0) {
        grown[last] = static_cast<int>(full / others);
        sizes = grown;
      }
    }
  }
  int consumed[8];
  for (int i = 0; i < nphys_; ++i) consumed[i] = 1;
  int i = 0;
  // Every group starts as this one (copied: assigning a fresh AxisGroup() per axis compiled to
  // a rep-stos fill plus overlapping stores, a quarter of a plan evaluation; perf-model bench).
  AxisGroup blank;
  blank.hop_latency = hop_latency_;
  blank.dcn_bw = dcn_bw_;
  blank.dcn_latency = dcn_latency_;
  for (int a = 0; a < num_axes; ++a) {
    AxisGroup& g = groups[a];
    g = blank;
    int need = sizes[a];
    while (need > 1 && i < nphys_) {
      const PhysDim& p = phys_[i];
      const int avail = DivPos(p.extent, consumed[i]);
      if (avail <= 1) {
        ++i;
        continue;
      }
      int take = GcdPos(need, avail);
      if (take == 1) take = std::min(need, avail);  // irregular fit: approximate
      if (p.dcn) {
        g.dcn_n *= take;
      } else if (p.onchip) {
        g.onchip_n *= take;
        g.onchip_bw = p.bw;
      } else if (g.ndims < 4) {
        const int k = g.ndims++;
        g.extent[k] = take;
        const bool full = take * consumed[i] == p.extent;
        g.wrap[k] = p.wrap && full;
        // A strided sub-ring shares each link with (stride) sibling rings.
        g.dim_bw[k] = p.switched ? p.bw : p.bw / consumed[i];
        g.switched = p.switched;
        if (failed_ > 0) {
          // Rings along this axis: chips / extent; the holes in distinct rows and columns, so a
          // ring meets ⌈failed / rings⌉ of them. Routed around: no wraparound, the detour
          // shares the neighbouring ring's links (half the bandwidth), 2 hops per hole.
          const double rings = double(chips_per_slice_) / p.extent;
          g.wrap[k] = false;
          g.dim_bw[k] /= 2;
          g.extra_hops += 2 * std::ceil(failed_ / rings);
        }
      }
      consumed[i] *= take;
      need = DivPos(need + take - 1, take);
    }
    if (need > 1 && g.ndims < 4) {  // more devices than the mesh: should not happen
      g.extent[g.ndims] = need;
      g.dim_bw[g.ndims++] = phys_[0].bw;
    }
  }
}

}  // namespace placerl::perf
