// The greedy chip placer's step (the refine mode's start=greedy, env/chip/chip_refine.cc
// BuildRefineStart, and the greedy baseline, search/chip/baselines.cc GreedyEpisode): every legal cell of the current macro scored by the exact proxy cost after placing it there.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "env/chip/chip_env.h"

namespace placerl::env {

// (proxy cost after placing the current macro at cell a, a) for every legal cell a, by
// increasing a, into `scored` (cleared first). The cheapest is the least pair (ties: the lowest
// cell).
inline void ScoreLegalCells(ChipEnv& env, std::vector<std::pair<double, int32_t>>* scored) {
  scored->clear();
  const std::vector<uint8_t>& mask = env.action_mask();
  for (int32_t a = 0; a < static_cast<int32_t>(mask.size()); ++a)
    if (mask[a]) scored->emplace_back(env.PeekCost(a).proxy_cost, a);
}

}  // namespace placerl::env
