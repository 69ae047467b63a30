// On-policy learners for any Environment: PPO (CleanRL's update, CT's hyper-parameters as
// defaults — reference notes §1.9) and REINFORCE with a moving-average baseline (the 2017
// device-placement / ENAS style), plus checkpoints (weights, optimiser state, RNG state, agent
// state and the policy's metadata) written atomically. Torch-free header; learner.cc holds
// the two update functions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "agents/rollout.h"
#include "encoders/policy.h"

namespace placerl::agents {

enum class Algorithm : uint8_t { kPpo, kReinforce };

struct AgentOptions {
  Algorithm algorithm = Algorithm::kPpo;
  double learning_rate = 4e-4;  // CT ARIANE.md; Adam
  double adam_eps = 1e-5;
  double max_grad_norm = 1.0;   // global norm
  double entropy_coef = 0.01;
  double gamma = 1.0;           // Monte-Carlo returns (CT: no GAE)
  // PPO
  double clip = 0.2;
  double value_coef = 0.5;
  int32_t epochs = 4;
  int32_t minibatch_size = 128;
  bool normalize_advantages = true;  // per minibatch
  // REINFORCE: baseline_t ← decay·baseline_t + (1 − decay)·mean return at step t.
  double baseline_decay = 0.9;
  uint64_t seed = 1;  // the learner's RNG: action sampling and minibatch shuffling
};

// TensorBoard-style name → value (CleanRL tags: losses/policy_loss, losses/value_loss,
// losses/entropy, losses/approx_kl, losses/clipfrac, charts/learning_rate, …).
using Stats = std::map<std::string, double>;

class Learner {
 public:
  Learner(encoders::Policy* policy, const AgentOptions& options);
  ~Learner();

  // One update from a buffer of complete episodes (computes its returns with options.gamma).
  // Clears the policy's embedding cache (the weights changed).
  Stats Update(RolloutBuffer* buffer);

  std::mt19937_64& rng();
  int64_t updates() const;
  const AgentOptions& options() const;
  encoders::Policy& policy();

  // Weights + optimiser + RNG + agent state + metadata, to `path` atomically.
  void SaveCheckpoint(const std::string& path) const;
  // Restores all of it; throws ConfigError when the checkpoint's metadata (encoder, sizes,
  // feature layout, action kind, algorithm) does not match this learner's policy.
  void LoadCheckpoint(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace placerl::agents
