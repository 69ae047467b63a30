// The state of a nas-search run at a checkpoint (docs/nas.md "Resume"), its text and how a
// resumed run reads it back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/proto/nas_search.pb.h"
#include "search/nas/nas_search.h"

namespace placerl::nas_search {

// A finished seed as the aggregates need it.
struct SeedSummary {
  uint64_t seed = 0;
  search::NasSearchResult result;  // best, evaluations, unique, seconds (the curves: RunState's sums)
};

// The state of a run at a checkpoint.
struct RunState {
  std::vector<SeedSummary> done;              // seeds finished, in order
  std::vector<search::NasEvaluation> pareto;  // ParetoFront::points
  size_t seed_index = 0;                      // the current seed: seeds[seed_index]
  search::NasSearchState current;             // its search
  double current_seconds = 0;                 // its search time so far, over every start
  std::map<std::string, double> last_stats;   // reinforce / ppo: the last update's, for the metrics rows
  std::string learner_checkpoint;             // reinforce / ppo: latest.ckpt's bytes
  int64_t curve_stride = 1;                   // the curves keep every curve_stride-th evaluation (kept on resume)
  std::vector<double> curve_sum;              // the seeds in `done`: sum of their best-reward curves
  std::vector<int64_t> curve_count;           // and how many of them reach each point
  void AddCurve(const std::vector<double>& best_reward) {
    if (curve_sum.size() < best_reward.size()) {
      curve_sum.resize(best_reward.size(), 0.0);
      curve_count.resize(best_reward.size(), 0);
    }
    for (size_t i = 0; i < best_reward.size(); ++i) curve_sum[i] += best_reward[i], ++curve_count[i];
  }
};


// The state's text (state.json; the copy inside a learned method's latest.ckpt). `learner_meta`:
// with latest.ckpt's size and hash (state.json; not in the copy inside it).
std::string RunStateText(const RunState& s, const config::NasSearchConfig& c, bool learner_meta);

// Reads the state of a resumed run whose config is `c` from DIR/checkpoints: latest.ckpt's
// embedded state for the learned methods (state.json, checked against latest.ckpt's hash, for
// checkpoints written without it), state.json for the others. Throws ConfigError naming the file.
RunState ReadRunState(const std::string& dir, const config::NasSearchConfig& c);

}  // namespace placerl::nas_search
