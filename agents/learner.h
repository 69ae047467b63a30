// On-policy learners for any Environment: PPO (CleanRL's update, CT's hyper-parameters as
// defaults — reference notes §1.9) and REINFORCE with a moving-average baseline (the 2017
// device-placement / ENAS style), plus checkpoints (weights, optimiser state, RNG state, agent
// state and the policy's metadata) written atomically. Torch-free header; learner.cc holds
// the two update functions. With a Collective (agents/distributed.h) attached, an update on
// each rank's local buffer equals the single-process update on the ranks' combined buffers:
// counts, advantage moments, losses and the REINFORCE baseline statistics are global, the
// gradients are summed over the ranks before the global-norm clip, and every rank takes the
// same optimiser step.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "agents/distributed.h"
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
  // Entropy target (off when 0): after every update the entropy coefficient adapts so that the
  // policy's mean entropy per decision (losses/entropy, nats) is held near this value, as SAC
  // adapts its temperature: log coef += entropy_coef_rate · (target − entropy), the coefficient
  // kept in [1e-6, 10]; entropy_coef is its start (> 0). The adapted coefficient is logged
  // (charts/entropy_coef) and saved in checkpoints. Off: the fixed entropy_coef, as before.
  double entropy_target = 0;
  double entropy_coef_rate = 1.0;
  double gamma = 1.0;           // Monte-Carlo returns (CT: no GAE)
  // PPO
  double clip = 0.2;
  double value_coef = 0.5;
  int32_t epochs = 4;
  int32_t minibatch_size = 128;
  bool normalize_advantages = true;  // per minibatch
  // REINFORCE: baseline_t ← decay·baseline_t + (1 − decay)·mean return at step t.
  double baseline_decay = 0.9;
  // Fine-tuning: the policy's static encoder (what PolicyNet::Encode computes — the GCN, the
  // attention keys and values, the graph context; default and lstm presets) keeps its weights and
  // only the head and value learn. Not for ct_faithful (its GCN runs inside the head): ConfigError.
  bool freeze_encoder = false;
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
  // Clears the policy's embedding cache (the weights changed). Distributed: every rank calls
  // it once per update with its own buffer (which may be empty when others are not); the
  // stats are global, plus perf/allreduce_s (this rank's time in the gradient all-reduces),
  // and the weights are checked identical on all ranks afterwards (a checksum; Error if not).
  Stats Update(RolloutBuffer* buffer);

  // Attaches the ranks' collective operations (null: one process). Not owned.
  void SetCollective(Collective* collective);
  // Σ of all weights in double precision (equal on every rank of a distributed run).
  double WeightChecksum() const;

  std::mt19937_64& rng();
  int64_t updates() const;
  const AgentOptions& options() const;
  encoders::Policy& policy();

  // Named byte strings saved inside the checkpoint beside the weights (a run's progress, a
  // second model such as HDP's grouper): what a resume needs is then one atomically written
  // file, so a kill between two writes cannot leave the weights and the progress apart.
  // Keys: non-empty, no newline.
  using Extras = std::map<std::string, std::string>;
  // Weights + optimiser + RNG + agent state + metadata (+ extras), to `path` atomically.
  void SaveCheckpoint(const std::string& path, const Extras& extras = {}) const;
  // The same checkpoint as bytes (what SaveCheckpoint writes).
  std::string CheckpointBytes(const Extras& extras = {}) const;
  // Restores all of it; throws ConfigError when the checkpoint's metadata (encoder, sizes,
  // feature layout, action kind, algorithm) does not match this learner's policy.
  void LoadCheckpoint(const std::string& path);
  // … from bytes; `name` names them in errors. `extras` (may be null) receives the saved
  // extras (none for checkpoints written without them).
  void LoadCheckpointBytes(const std::string& bytes, const std::string& name, Extras* extras = nullptr);
  // The extras of a checkpoint file (none when it was written without them), without a policy:
  // e.g. `place` reads the training run's settings. The file is checked as a load checks it.
  static Extras ReadExtras(const std::string& path);

  // Checkpoint files (encoders/checkpoint_file.h) start with a header carrying the archive's
  // length and CRC-32C; every load checks them and refuses weights that are not finite, with
  // the file named (files written before the header load unchecked).

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The ranks of a distributed run start from one seed or one checkpoint: throws Error naming this
// rank ("rank 1: the workers' weights differ " + when) when their weights differ (collective:
// every rank calls it; nothing with a null collective).
void CheckSameWeights(Learner& learner, Collective* collective, const char* when);

}  // namespace placerl::agents
