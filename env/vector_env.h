// Batched stepping (EnvPool style): B environment copies stepped in parallel (OpenMP) into
// buffers the caller owns, with no allocation per step. An environment whose episode ends
// records its final reward and info in the buffers and starts its next episode at once
// (auto-reset), so the caller always sees B live environments.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "env/environment.h"

namespace placerl::env {

// What one batched step writes. Strides are the largest of the batch (environments may differ
// in action count or node count, e.g. several netlists); unused tails are zero.
struct BatchBuffers {
  int32_t batch = 0, mask_stride = 0, dynamic_stride = 0, info_stride = 0;
  std::vector<float> reward;          // [B] reward of the last step
  std::vector<uint8_t> done;          // [B] the last step ended an episode (the env was reset)
  std::vector<uint8_t> infeasible;    // [B] … and ended it early
  std::vector<double> episode_return; // [B] where done: the finished episode's return
  std::vector<double> final_info;     // [B, info_stride] where done: the finished episode's info
  std::vector<int32_t> current_node;  // [B] of the (new) current state
  std::vector<uint8_t> mask;          // [B, mask_stride]
  std::vector<float> node_dynamic;    // [B, dynamic_stride]
};

class VectorEnv {
 public:
  // Seeds: environment i starts with seed `seed + i` and each further episode of it adds B.
  VectorEnv(std::vector<std::unique_ptr<Environment>> envs, uint64_t seed);
  // B clones of `prototype`.
  static VectorEnv Replicate(const Environment& prototype, int32_t batch, uint64_t seed);

  int32_t size() const { return static_cast<int32_t>(envs_.size()); }
  Environment& env(int32_t i) { return *envs_[i]; }
  const Environment& env(int32_t i) const { return *envs_[i]; }

  // Sizes `out` for this batch (the only allocation), resets every environment and writes the
  // first observations.
  void Reset(BatchBuffers* out);
  // Steps environment i with actions[i] (all in parallel); after the whole batch has run, throws
  // the InfeasibleAction (or other error) of the lowest-numbered environment that failed — the
  // same one whatever order the threads ran in.
  void Step(const int32_t* actions, BatchBuffers* out);

 private:
  void Write(int32_t i, BatchBuffers* out) const;
  std::vector<std::unique_ptr<Environment>> envs_;
  std::vector<uint64_t> next_seed_;
  std::vector<double> returns_;
};

}  // namespace placerl::env
