// nas-search's configuration: its flags, the defaults of each method (and space / dataset), and
// the resolved config of a new or resumed run (defaults, then --config or the run's config.pbtxt,
// then the flags, then --set), checked for meaning (ConfigError / UsageError).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/proto/nas_search.pb.h"
#include "experiments/lib/run_dir.h"

namespace placerl::nas_search {

// The flags of nas-search (0, -1 or empty: not given).
struct Options {
  std::string space, method, dataset, table_dataset, seeds, nb201_table, macro_table;
  int64_t budget = 0, train_steps = 0;
  int32_t population = 0, tournament = 0, episodes_per_update = 0;
  double cost_budget = -1, penalty = -1, under_penalty = -1;
  double budget_minutes = -1, final_epochs = -1;  // --dataset fashion-mnist
  int32_t random_cells = -1, max_images = 0;
  int32_t derive_samples = -1, derive_images = -1, final_candidates = -1;  // enas_micro / fashion-mnist
  double uniform_fraction = -1;
  std::string fashion_mnist_dir;
  std::string clock;  // --clock wall | cpu (enas_micro / fashion-mnist: the search budget's clock)
  bool json = false;
  bool verbose = false;
  bool allow_slow = false;
  std::string print_space;
  run::RunDirFlags dir;
  int test_kill_after_checkpoints = 0;  // tests: SIGKILL right after the k-th checkpoint
};

// reinforce / ppo: the learned controllers (search/nas/nas_rl.h).
bool Learned(const std::string& method);
// brainformer on Fashion-MNIST: each candidate block trained (search/nas/brainformer_search.h).
bool TrainsBrainformer(const std::string& space, const std::string& dataset);
// enas_micro on Fashion-MNIST, each candidate cell trained from scratch briefly (not weight sharing).
bool TrainsEnasCells(const config::NasSearchConfig& c);
// enas_micro on Fashion-MNIST with ENAS weight sharing (--method enas, or random's fully trained cells).
bool SharesEnasWeights(const config::NasSearchConfig& c);

// The defaults of `method` (the learned methods add their policy and learner blocks; Brainformer
// on Fashion-MNIST its training): what --help-config prints.
config::NasSearchConfig DefaultConfig(const std::string& method = "evolution", const std::string& space = "",
                                      const std::string& dataset = "");

// --resume DIR or a new run: the resolved config, input paths absolute as config.pbtxt records
// them; flags that do not apply to it are refused.
config::NasSearchConfig ResolveRunConfig(const Options& o);

}  // namespace placerl::nas_search
