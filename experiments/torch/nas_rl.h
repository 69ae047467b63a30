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
#include <string>

#include "agents/learner.h"
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
};

// The learner's numbers of the last update (empty before the first).
using NasRlStats = agents::Stats;

// Searches `env`'s space with a fresh policy and learner (a copy of `env` plays the episodes).
// `stop` (may be empty) ends it early; `on_evaluation` sees every sampled architecture and the
// best so far, `on_update` (may be empty) the learner's stats after each update. Throws
// ConfigError for options out of range.
search::NasSearchResult RunNasRl(
    const env::BlockEnv& env, const NasRlOptions& options, const std::function<bool()>& stop = {},
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation = {},
    const std::function<void(int64_t updates, const NasRlStats&)>& on_update = {});

}  // namespace placerl
