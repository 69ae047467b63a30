// The physical device mesh of one run: the chip's TensorCores (v2/v3), the slice's ICI axes
// (torus with or without wraparound, or a switched node) and the slices joined by DCN, and
// how logical parallel axes (tensor, fsdp, data, pipeline — innermost first) land on them.
// Shared by the Transformer training evaluator and the graph (any model) evaluator.
#pragma once

#include "cost_models/tpu/collectives.h"
#include "datasets/proto/hardware.pb.h"
#include "datasets/proto/perf_model.pb.h"

namespace placerl::perf {

// At most this many devices in one mesh (chips × slices × TensorCores per chip; the largest
// published TPU jobs use ~50,000 chips). Counts are computed in 64-bit and checked against
// it, so a typo such as 16x268435457 is an error instead of a wrapped-around count.
constexpr long long kMaxDevices = 1LL << 20;

class MeshTopology {
 public:
  MeshTopology() = default;
  // Throws ConfigError on a bad mesh (no dims, > 4 dims, dims < 1, slices < 0, more chips
  // than the chip's ICI domain, more than kMaxDevices devices, slices without DCN).
  MeshTopology(const Mesh& mesh, const Chip& chip);

  int num_devices() const { return num_devices_; }  // healthy ones (failed chips removed)
  int num_chips() const { return num_chips_; }
  int failed_chips() const { return failed_; }
  // Lays logical axes of `sizes` (innermost first) onto the physical dims, in order; each
  // gets the AxisGroup it spans (ICI axes, strided sub-rings share links, DCN slices).
  void MapAxes(const int* sizes, int num_axes, AxisGroup* groups) const;

 private:
  struct PhysDim {
    int extent;
    bool wrap;
    bool dcn;
    bool switched;
    bool onchip;
    double bw;
  };
  PhysDim phys_[8] = {};
  int nphys_ = 0;
  int num_devices_ = 0, num_chips_ = 0;
  double hop_latency_ = 0, dcn_bw_ = 0, dcn_latency_ = 0;
  int failed_ = 0, dpc_ = 1;
  long long chips_per_slice_ = 1;
};

}  // namespace placerl::perf
