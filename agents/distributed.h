// The collective operations a learner (and a training loop) needs when several processes train
// one policy together (decentralised PPO / REINFORCE): every rank collects its own episodes,
// computes gradients on them, and the gradients — and the few statistics that make the update
// equal to the single-process update on the combined batch (counts, advantage moments, the
// REINFORCE baseline's per-step sums) — are summed over the ranks, so that every rank takes the
// same optimiser step and the weights stay identical.
//
// Torch-free and transport-free: agents/ only calls this interface; the c10d / Gloo
// implementation lives with the binaries (agents/workers.h). A null Collective, or
// one of world size 1, is the single-process update.
#pragma once

#include <cstdint>

namespace placerl::agents {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Element-wise over the ranks, in place; every rank passes the same n. Blocking; throws
  // placerl::Error naming this rank when a peer is gone or the operation times out.
  virtual void AllReduceSum(float* values, int64_t n) = 0;
  virtual void AllReduceSum(double* values, int64_t n) = 0;
  virtual void AllReduceMax(double* values, int64_t n) = 0;
};

}  // namespace placerl::agents
