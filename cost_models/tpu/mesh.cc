#include "cost_models/tpu/mesh.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::perf {

namespace {
constexpr double kOnChipBw = 1e12;  // between the TensorCores of one chip (v2/v3) [A]
}

MeshTopology::MeshTopology(const Mesh& mesh, const Chip& chip) {
  if (mesh.dims_size() == 0) throw ConfigError("mesh: needs dims (e.g. 4x4x4)");
  if (mesh.dims_size() > 4) throw ConfigError("mesh: at most 4 dims");
  const int dpc = std::max(1, chip.devices_per_chip());
  const Ici& ici = chip.ici();
  const bool switched = ici.topology() == SWITCHED;
  const double link_bw = ici.link_bw_one_way() / dpc;
  if (dpc > 1) phys_[nphys_++] = {dpc, false, false, false, true, kOnChipBw};
  num_chips_ = 1;
  for (int d : mesh.dims()) {
    if (d < 1) throw ConfigError("mesh: dims must be >= 1");
    // 64-bit and bounded after every factor (fuzzing: 16x268435457 wrapped to 16 chips).
    if (static_cast<long long>(num_chips_) * d * dpc > (1 << 24))
      throw ConfigError("mesh: more than 2^24 devices");
    num_chips_ *= d;
    const int w = ici.wrap_min_axis();
    const bool wrap = !switched && w > 0 && d >= w && d % w == 0;
    // Switched nodes: one group reaching every peer at the whole per-GPU NVLink bandwidth.
    const double bw = switched ? ici.link_bw_one_way() * ici.links_per_chip() / dpc : link_bw;
    phys_[nphys_++] = {d, wrap, false, switched, false, bw};
  }
  if (ici.max_chips_per_domain() > 0 && num_chips_ > ici.max_chips_per_domain())
    throw ConfigError("mesh: " + std::to_string(num_chips_) + " chips exceed the " +
                      std::to_string(ici.max_chips_per_domain()) + "-chip ICI domain of " +
                      chip.name() + " (use slices=)");
  const int slices = std::max(1, mesh.slices());
  if (slices > 1) {
    if (chip.dcn_bw_per_chip() <= 0)
      throw ConfigError("mesh: chip " + chip.name() + " has no DCN bandwidth for slices > 1");
    phys_[nphys_++] = {slices, false, true, false, false, chip.dcn_bw_per_chip() / dpc};
  }
  if (static_cast<long long>(num_chips_) * slices * dpc > (1 << 24))
    throw ConfigError("mesh: more than 2^24 devices");
  num_chips_ *= slices;
  num_devices_ = num_chips_ * dpc;
  hop_latency_ = ici.hop_latency_s();
  dcn_bw_ = chip.dcn_bw_per_chip() / dpc;
  dcn_latency_ = chip.dcn_latency_s();
}

void MeshTopology::MapAxes(const int* sizes, int num_axes, AxisGroup* groups) const {
  int consumed[8];
  for (int i = 0; i < nphys_; ++i) consumed[i] = 1;
  int i = 0;
  for (int a = 0; a < num_axes; ++a) {
    AxisGroup& g = groups[a];
    g = AxisGroup();
    g.hop_latency = hop_latency_;
    g.dcn_bw = dcn_bw_;
    g.dcn_latency = dcn_latency_;
    int need = sizes[a];
    while (need > 1 && i < nphys_) {
      const PhysDim& p = phys_[i];
      const int avail = p.extent / consumed[i];
      if (avail <= 1) {
        ++i;
        continue;
      }
      int take = std::gcd(need, avail);
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
      }
      consumed[i] *= take;
      need = (need + take - 1) / take;
    }
    if (need > 1 && g.ndims < 4) {  // more devices than the mesh: should not happen
      g.extent[g.ndims] = need;
      g.dim_bw[g.ndims++] = phys_[0].bw;
    }
  }
}

}  // namespace placerl::perf
