#include "env/vector_env.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "datasets/util/errors.h"

namespace placerl::env {

VectorEnv::VectorEnv(std::vector<std::unique_ptr<Environment>> envs, uint64_t seed)
    : envs_(std::move(envs)) {
  if (envs_.empty()) throw ConfigError("VectorEnv: no environments");
  for (size_t i = 0; i < envs_.size(); ++i) next_seed_.push_back(seed + i);
  returns_.assign(envs_.size(), 0.0);
}

VectorEnv VectorEnv::Replicate(const Environment& prototype, int32_t batch, uint64_t seed) {
  if (batch < 1) throw ConfigError("VectorEnv: batch must be ≥ 1");
  std::vector<std::unique_ptr<Environment>> envs;
  for (int32_t i = 0; i < batch; ++i) envs.push_back(prototype.Clone());
  return VectorEnv(std::move(envs), seed);
}

void VectorEnv::Reset(BatchBuffers* out) {
  const int32_t b = size();
  int32_t ms = 0, ds = 0, is = 0;
  for (const auto& e : envs_) {
    ms = std::max(ms, e->num_actions());
    ds = std::max(ds, static_cast<int32_t>(e->state().node_dynamic.size()));
    is = std::max(is, static_cast<int32_t>(e->info_names().size()));
  }
  out->batch = b;
  out->mask_stride = ms;
  out->dynamic_stride = ds;
  out->info_stride = is;
  out->reward.assign(b, 0.f);
  out->done.assign(b, 0);
  out->infeasible.assign(b, 0);
  out->episode_return.assign(b, 0.0);
  out->final_info.assign(static_cast<size_t>(b) * is, 0.0);
  out->current_node.assign(b, -1);
  out->mask.assign(static_cast<size_t>(b) * ms, 0);
  out->node_dynamic.assign(static_cast<size_t>(b) * ds, 0.f);
  for (int32_t i = 0; i < b; ++i) {
    envs_[i]->Reset(next_seed_[i]);
    next_seed_[i] += b;
    returns_[i] = 0;
    Write(i, out);
  }
}

void VectorEnv::Write(int32_t i, BatchBuffers* out) const {
  const DynamicState& s = envs_[i]->state();
  out->current_node[i] = s.current_node;
  uint8_t* m = &out->mask[static_cast<size_t>(i) * out->mask_stride];
  std::memcpy(m, s.action_mask.data(), s.action_mask.size());
  std::memset(m + s.action_mask.size(), 0, out->mask_stride - s.action_mask.size());
  float* d = &out->node_dynamic[static_cast<size_t>(i) * out->dynamic_stride];
  std::memcpy(d, s.node_dynamic.data(), s.node_dynamic.size() * sizeof(float));
  std::fill(d + s.node_dynamic.size(), d + out->dynamic_stride, 0.f);
}

void VectorEnv::Step(const int32_t* actions, BatchBuffers* out) {
  const int32_t b = size();
  if (out->batch != b) throw ConfigError("VectorEnv::Step: buffers not sized by Reset");
  std::exception_ptr error;  // of the lowest-numbered environment that failed (whatever the threads' order)
  int32_t error_at = b;
#pragma omp parallel for schedule(dynamic, 1)
  for (int32_t i = 0; i < b; ++i) {
    try {
      Environment& e = *envs_[i];
      const StepResult r = e.Step(actions[i]);
      out->reward[i] = static_cast<float>(r.reward);
      out->done[i] = r.done;
      out->infeasible[i] = r.infeasible;
      returns_[i] += r.reward;
      if (r.done) {
        out->episode_return[i] = returns_[i];
        const auto& info = e.info();
        double* fi = &out->final_info[static_cast<size_t>(i) * out->info_stride];
        std::copy(info.begin(), info.end(), fi);
        e.Reset(next_seed_[i]);
        next_seed_[i] += b;
        returns_[i] = 0;
      }
      Write(i, out);
    } catch (...) {
#pragma omp critical
      if (i < error_at) {
        error_at = i;
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace placerl::env
