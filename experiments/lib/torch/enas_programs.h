// The nas-search --space enas_micro --dataset fashion-mnist program (nas_search_main.cc dispatches
// to it): the ENAS controller's config defaults, the run directory of an ENAS or random-cells run
// on Fashion-MNIST and its --resume. The search itself: search/nas/enas_search.h.
// Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/proto/nas_search.pb.h"
#include "experiments/lib/run_dir.h"
#include "search/nas/enas_search.h"

namespace placerl::enas {

// The ENAS controller's defaults (nas_notes.md §4.1) on the shared policy / learner: REINFORCE,
// Adam lr 3.5e-3 (ENAS micro), entropy bonus 1e-4, 10 children per update, rewards = accuracy
// (reward scale 1); the baseline decays with 0.9 (ENAS 0.99: too slow for the few hundred
// children of a short run, as for NB201's REINFORCE in nas-search).
void FillEnasControllerDefaults(config::NasSearchConfig* c);

// The extra flags of `nas-search --dataset fashion-mnist` (negative = the default).
struct FashionMnistFlags {
  double budget_minutes = -1;
  double final_epochs = -1;
  int32_t random_cells = -1;  // 0 (method enas): no comparison cells (neither random nor hand-designed)
  int32_t derive_samples = -1, derive_images = -1, final_candidates = -1;
  double uniform_fraction = -1;
  int32_t max_images = 0;  // > 0: at most this many images of each split (quick runs, tests)
  std::string data_dir;    // empty: nas::kFashionMnistDir
  int test_kill_after_checkpoints = 0;  // tests: SIGKILL right after the k-th checkpoint
  std::string clock;  // the search budget's clock: "wall" | "cpu" (this process's CPU time); empty: wall
};

// nas-search --space enas_micro --dataset fashion-mnist --method enas|random: runs RunEnas and
// writes the run directory (config.pbtxt with the ENAS options in its header, metrics.csv and
// TensorBoard per search epoch, best.pbtxt, result.json, curve.png, checkpoints/ of the search:
// latest.ckpt + state.json, which `--resume DIR` continues from). Returns the exit code.
int RunFashionMnistNasSearch(const config::NasSearchConfig& cfg, const FashionMnistFlags& flags,
                             const run::RunDirFlags& dir_flags, const std::string& command_line, bool json);

}  // namespace placerl::enas
