// nas-search's learned methods (docs/nas.md "Learned controllers"): REINFORCE with a
// moving-average baseline and an entropy bonus (the ENAS controller's algorithm, Pham et al.
// 2018) and PPO, both with the shared GNN policy (encoders/policy.h, choice head) and learner
// (agents/learner.h) on the block environment. One episode = one sampled architecture = one
// evaluation of the budget, exactly as random search and evolution count them (repeats
// included), so the four methods compare at equal budget. Torch-free header: nas-search calls
// it only when built with LibTorch.
//
// The policy is the shared edge-centric GCN over the partial architecture (one node per
// decision, the choices made so far as dynamic features) by default; policy.preset = lstm with
// lstm_encoder = none is ENAS's LSTM controller (encoders/lstm_policy.h,
// experiments/configs/enas_controller.pbtxt).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "encoders/policy.h"
#include "env/block/block_env.h"
#include "search/nas/nas_search.h"

namespace placerl {

struct NasRlOptions {
  agents::AgentOptions agent;      // algorithm, learning rate, entropy bonus, baseline decay, PPO's clip…
  encoders::PolicyOptions policy;  // init_seed is set from `seed`
  int64_t budget = 100;            // evaluated architectures (= episodes)
  int32_t episodes_per_update = 5; // architectures per learner update (the last batch may be smaller)
  // The learner sees reward_scale × the environment's reward (NB201's REINFORCE rewards with the
  // accuracy in percent); the bookkeeping (best, curves, result) keeps the environment's reward.
  double reward_scale = 1;
  uint64_t seed = 1;               // policy initialisation and action sampling
  int64_t curve_stride = 1;        // the result's curves keep every curve_stride-th evaluation (search::NasSearchOptions)
};

// The learner's numbers of the last update (empty before the first).
using NasRlStats = agents::Stats;

// The controller of a search that interleaves sampling and learning with other work (ENAS
// trains its shared weights between controller updates, search/nas/enas_search.h): the
// policy and learner live as long as it does. RunNasRl below is this controller's loop.
class NasRlController {
 public:
  // A fresh policy and learner for `env`'s space (a copy of `env` plays the episodes);
  // options.budget is not used here. Throws ConfigError for options out of range.
  NasRlController(const env::BlockEnv& env, const NasRlOptions& options);
  ~NasRlController();
  NasRlController(const NasRlController&) = delete;
  NasRlController& operator=(const NasRlController&) = delete;

  // One episode: an architecture sampled from the policy, scored by the environment (its
  // quality model), and recorded for the next Update.
  search::NasEvaluation PlayEpisode();
  // The same, recorded into `buffer` instead (a trainer's: agents::Train).
  search::NasEvaluation PlayEpisode(agents::RolloutBuffer* buffer);
  // One learner update from the episodes played since the last one; empty stats when none.
  NasRlStats Update();
  // An architecture sampled from the policy without scoring or recording it (the environment's
  // quality model is not asked); the most likely one when `greedy`.
  nas::Architecture Sample(bool greedy = false);
  int64_t episodes() const;
  int64_t updates() const;
  // The learner's checkpoint (weights, optimiser, RNG, REINFORCE baseline, update count;
  // agents::Learner::CheckpointBytes), with `extras` saved inside it (agents::Learner::Extras:
  // e.g. the run's progress). Meaningful between updates: played episodes not yet learned from
  // are not in it.
  std::string CheckpointBytes(const agents::Learner::Extras& extras = {}) const;
  // Continues from a checkpoint taken after `episodes` episodes (the episodes' environment
  // seeds go on from there). Throws ConfigError for a checkpoint of another policy.
  // `samples`: Sample() calls so far (their environment seeds go on from there too).
  void Restore(const std::string& checkpoint_bytes, int64_t episodes, int64_t samples = 0);
  int64_t samples() const;
  // The learner (and through it the policy and the sampling RNG) the episodes are played with.
  agents::Learner& learner();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Checkpoints of RunNasRl (nas-search --resume), taken right after a learner update. `state`
// (may be null) holds on entry the bookkeeping to continue from (no evaluations: a fresh search)
// and `learner_checkpoint` the learner after its last episode; on return both are the last
// update's (the episodes after it, not learned from, are played again by a resumed search, the
// same way). An episode whose quality is not finite while `stop` says so (a training cut short)
// is not counted.
// `on_checkpoint` gets both after an update when `checkpoint_due` says so.
// `extras` (may be empty) gives what the learner checkpoint handed to `on_checkpoint` and the one
// left in `learner_checkpoint` on return carry inside (agents::Learner::Extras), for the state
// they go with: the caller's progress (e.g. the state as a resume reads it), written in the same
// file as the learner so that a kill between two writes cannot pair them wrongly.
struct NasRlCheckpoints {
  search::NasSearchState* state = nullptr;  // counters, best, distinct architectures, curves
  std::string* learner_checkpoint = nullptr;
  std::function<bool()> checkpoint_due;
  std::function<void(const search::NasSearchState&, const std::string& learner_checkpoint)> on_checkpoint;
  std::function<agents::Learner::Extras(const search::NasSearchState&)> extras;
};

// Searches `env`'s space with a fresh policy and learner (a copy of `env` plays the episodes),
// as a task of the one on-policy trainer (agents::Train: one update per episodes_per_update
// architectures; none after the budget's last).
// `stop` (may be empty) ends it early; `on_evaluation` sees every sampled architecture and the
// best so far, `on_update` (may be empty) the learner's stats after each update. Throws
// ConfigError for options out of range.
search::NasSearchResult RunNasRl(
    const env::BlockEnv& env, const NasRlOptions& options, const std::function<bool()>& stop = {},
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation = {},
    const std::function<void(int64_t updates, const NasRlStats&)>& on_update = {},
    const NasRlCheckpoints& checkpoints = {});

}  // namespace placerl
