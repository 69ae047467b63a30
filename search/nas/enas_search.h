// ENAS on Fashion-MNIST (Pham et al. 2018; nas_notes.md §4.1; docs/nas.md "ENAS weight sharing
// on Fashion-MNIST"): the enas_micro space searched with ONE super-network whose weights every
// sampled child shares (models/enas_supernet.h), and the comparison issue 16 asks for.
//   per epoch: S minibatches of shared-weight training (SGD, cosine lr over the time budget),
//              each with a child the controller samples; then M controller episodes, each a
//              child whose reward is its accuracy on the next validation minibatch (a
//              QualityModel plugged into the block environment), REINFORCE updates every
//              episodes_per_update children (moving-average baseline, entropy bonus).
//   derive:    K children sampled from the trained controller, the best on a larger validation
//              batch with the shared weights is the found cell.
//   final:     the found cell trained from scratch (FixedNet) for E epochs; test accuracy on the
//              10k test images (never seen before); parameters, MACs, times.
//   compare:   `random_cells` random cells trained from scratch with the same recipe, the best by
//              validation accuracy; and a hand-designed cell (a ResNet-like chain of
//              sep_conv3x3 with identity skips; max-pool skips in the reduction cell).
// The controller is the shared GNN policy + learner with REINFORCE (search/nas/nas_rl.h
// NasRlController) on a BlockEnv of enas_micro. Data: the 60,000 training images split into
// train (the first 60,000 − validation_images) and validation (the last ones).
// Torch-free header (nas-search calls it). The nas-search --dataset fashion-mnist program around it:
// experiments/lib/torch/enas_programs.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/nas/idx.h"
#include "datasets/nas/search_space.h"
#include "datasets/proto/nas_search.pb.h"
#include "env/block/block_env.h"
#include "search/nas/nas_rl.h"

namespace placerl::enas {

// The child network's size (enas_supernet.h EnasNetOptions, repeated here torch-free).
// C = 8 by default: on this machine's shared cores a batch-64 shared-weight step of C = 16 cost
// about 0.5 s of CPU (depthwise convolutions on small maps are slow in LibTorch's CPU kernels).
struct NetSize {
  int32_t channels = 8;        // C of the first stage
  int32_t cells_per_stage = 1; // normal cells per stage (3 stages, 2 reduction cells)
};

struct EnasSearchOptions {
  std::string data_dir = nas::kFashionMnistDir;
  int32_t validation_images = 5000;  // the last ones of the 60,000 training images
  int32_t max_train_images = 0;      // > 0: use only the first ones (tests)
  int32_t max_test_images = 0;       // > 0: use only the first ones of the test set (tests)
  NetSize search_net;                // the super-network's size
  NetSize final_net;                 // the size trained from scratch
  double budget_minutes = 10;        // time of the search (epochs of shared + controller training)
  bool cpu_clock = false;            // the budget counts this process's CPU seconds, not wall seconds
  int32_t shared_steps = 50;         // S per epoch
  int32_t controller_steps = 20;     // M per epoch (children the controller learns from)
  int32_t batch = 64;                // shared-weight and final-training minibatch
  int32_t reward_batch = 128;        // validation images per child reward
  int32_t epoch_val_images = 500;    // per epoch: the greedy child's accuracy on these (shared weights)
  double lr_max = 0.05, lr_min = 0.0005;  // ENAS micro: SGD cosine 0.05 → 0.0005
  double momentum = 0.9;
  double weight_decay = 1e-4;        // ENAS micro l2
  double grad_clip = 5;              // ENAS: grad bound 5
  int32_t derive_samples = 10;       // K
  int32_t derive_images = 1000;      // validation images that rank the K children
  // R: the R best derived children (by shared-weight accuracy) are trained from scratch and the
  // best of them by validation accuracy is the found cell (1 = ENAS: the top one only). At equal
  // cost, compare with the best of R random cells (random_cells = R).
  int32_t final_candidates = 1;
  // Shared steps whose child is drawn uniformly at random instead of by the controller while the
  // search has spent less than this fraction of its budget (0 = ENAS: always the controller;
  // 1 = uniform throughout: weights not biased towards what the controller samples).
  double uniform_fraction = 0;
  double final_epochs = 1;           // E (fractions: part of an epoch)
  int32_t random_cells = 4;          // random cells trained from scratch (compare / --method random)
  bool compare = true;               // method enas: also train the random cells and the hand-designed one
  int32_t threads = 1;               // torch intra-op threads
  uint64_t seed = 1;
  double cost_budget = 0, penalty = 1;  // the block environment's MACs budget (proxy step time), 0 = off
  double under_penalty = 0;             // its weight below the budget (env/block/block_env.h)
  NasRlOptions controller;           // budget unused; seed set from `seed`
};

// Throws ConfigError for values out of range.
void CheckSearchOptions(const EnasSearchOptions& o);

// The hand-designed baseline: node i = sep_conv3x3(h[i+1]) + identity(h[i]) (a chain with skips),
// the reduction cell with max_pool3x3 skips.
nas::Architecture HandDesignedCell();

struct TrainedChild {
  std::string label;  // "enas", "random3", "hand"
  nas::Architecture arch;
  int64_t params = 0, macs = 0;
  double shared_val_accuracy = -1;  // with the super-network's weights (enas candidates), −1 if not
  double derive_penalty = 0;        // the budget terms of the reward at derive (candidates rank by
                                    // shared_val_accuracy − derive_penalty)
  double val_accuracy = 0, test_accuracy = 0;  // after training from scratch (fractions)
  double train_seconds = 0, train_cpu_seconds = 0;  // training and evaluation, wall and process CPU
  bool stopped = false;  // the training was cut short by a stop (accuracies NaN)
};

struct EnasEpochStats {
  int32_t epoch = 0;
  double seconds = 0, lr = 0;
  double shared_loss = 0, shared_accuracy = 0;  // mean over the epoch's S minibatches
  double controller_reward = 0;                 // mean reward of the epoch's M children
  double val_accuracy = 0;                      // the greedy child, shared weights
  double entropy = 0, policy_loss = 0;          // the last controller update's
};

struct EnasResult {
  std::vector<EnasEpochStats> epochs;
  int64_t shared_steps = 0, controller_children = 0, controller_updates = 0;
  // Distinct architectures among all the children the controller sampled in the search (one per
  // shared step and one per rewarded child): how far it has narrowed its distribution.
  int64_t distinct_children = 0;
  double search_seconds = 0, derive_seconds = 0;
  double search_cpu_seconds = 0;         // process CPU time of the search (std::clock)
  int64_t uniform_steps = 0;             // shared steps with a uniformly random child (uniform_fraction)
  std::vector<TrainedChild> candidates;  // the K derived children (shared_val_accuracy), best first
  std::vector<TrainedChild> finalists;   // the final_candidates best candidates trained from scratch
  TrainedChild enas;                     // the found cell: the finalist with the best validation accuracy
  std::vector<TrainedChild> random;      // random cells trained from scratch
  int32_t best_random = -1;              // index into random (highest validation accuracy)
  TrainedChild hand;                     // the hand-designed cell (trained when compare)
  bool have_enas = false, have_hand = false;
  bool stopped = false;                  // `stop` ended it early
};

// Checkpoints of the search phase (nas-search --resume), taken after a search epoch: the
// super-network's weights and SGD state, the controller (learner, episode and sample counts),
// the minibatch order, the validation cursor, the epochs so far, the search time. `resume` (may
// be empty) is such a checkpoint to continue the search from (the options must be the ones it was
// made with; budget_minutes may be larger). `on_checkpoint` gets one after an epoch when
// `checkpoint_due` says so and one at the end of the search (before derive and the final
// trainings, which a resumed run does again).
// `run_state` (may be empty) gives, for the epoch a checkpoint goes on from, the caller's progress
// (e.g. the state a resume reads) to carry inside it as one more entry, written with the search
// in one file so that a kill between two writes cannot pair them wrongly (EnasCheckpointRunState
// reads it back).
struct EnasCheckpoints {
  std::string resume;
  std::function<bool()> checkpoint_due;
  std::function<void(const std::string& bytes, int32_t next_epoch)> on_checkpoint;
  std::function<std::string(int32_t next_epoch)> run_state;
};

// The `run_state` text a checkpoint of RunEnas carries ("": none, a checkpoint written without
// it). Throws ConfigError "<name>: <reason>" for bytes that are not a checkpoint.
std::string EnasCheckpointRunState(const std::string& checkpoint_bytes, const std::string& name);

// "phase" (search | derive | final:<label>), fraction done of the phase, a short status.
using EnasProgressFn = std::function<void(const std::string& phase, double fraction, const std::string& status)>;

// method "enas": search + derive + final (+ compare); "random": only the random cells.
// `stop` (may be empty) ends the current phase early (what is done is reported); `on_epoch`
// (may be empty) sees each search epoch. Throws ConfigError / IoError (missing IDX files).
EnasResult RunEnas(const std::string& method, const EnasSearchOptions& o, const std::function<bool()>& stop = {},
                   const EnasProgressFn& progress = {}, const std::function<void(const EnasEpochStats&)>& on_epoch = {},
                   const EnasCheckpoints& checkpoints = {});

// Ranking measurement (enas-rank): the accuracy of each cell with the shared weights of a search
// checkpoint (`checkpoint_bytes`: a checkpoints/latest.ckpt of RunEnas, made with o.search_net) on
// validation images [0, images) (capped at the validation split), evaluated as the derive step
// does (super-network in training mode: BN with the statistics of chunks of 500 images).
// `progress` (may be empty) sees each cell done. Throws ConfigError for a checkpoint that is not
// one of an enas_micro search of that size, IoError for missing IDX files.
std::vector<double> SharedWeightAccuracies(const std::string& checkpoint_bytes, const std::vector<nas::Architecture>& cells,
                                           const EnasSearchOptions& o, int64_t images,
                                           const std::function<void(size_t done)>& progress = {});

// Final training of given cells (enas-rank --retrain-seeds): every cell trained from scratch
// once per seed exactly as RunEnas's final training does (o.final_net, o.final_epochs, the cosine
// schedule; the seed sets the initialisation and the minibatch order, the same for every cell),
// then validation and test accuracy. result[c][s] is cell c with seeds[s] (fewer when `stop`
// ended it). `progress` (may be empty) sees each training done (cell, seed index). Throws ConfigError / IoError as RunEnas.
std::vector<std::vector<TrainedChild>> TrainCellsFromScratch(const std::vector<nas::Architecture>& cells,
                                                             const EnasSearchOptions& o, const std::vector<uint64_t>& seeds,
                                                             const std::function<bool()>& stop = {},
                                                             const std::function<void(size_t cell, size_t seed)>& progress = {});

// Rank correlations of two equally long lists (NaN with fewer than 2 entries or when a list is
// constant): Kendall's tau-b (ties counted as in tau-b) and Spearman's rho (Pearson's r of the
// average ranks).
double KendallTau(const std::vector<double>& x, const std::vector<double>& y);
double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y);

// An enas_micro architecture from the text nas-search logs and writes in result.json
// ("normal0/input0=0 normal0/op0=sep_conv3x3 …": every decision once, any order). Throws
// ConfigError saying what is wrong.
nas::Architecture ParseDescribedArchitecture(const nas::SearchSpace& space, const std::string& text);

// A trained child as result.json reports it: label, architecture (space.Describe), params, macs,
// mflops; shared_val_accuracy and derive_penalty when set; accuracies and training times when trained.
nlohmann::json ChildJson(const nas::SearchSpace& space, const TrainedChild& c);

// Searching enas_micro WITHOUT weight sharing (nas-search --space enas_micro --dataset
// fashion-mnist --method evolution | reinforce | ppo, or random with --train-steps; docs/nas.md
// "Cells trained briefly"): the generic search loop on a block environment whose quality is the cell's
// validation accuracy after config::EnasTrainingConfig's short training from scratch (cached per
// cell: a cell asked again costs nothing) and whose step time is the cell's MMACs (the proxy the
// ENAS search uses). Then the best cell and the hand-designed one are trained for final_epochs.
void FillDefaultTrainingConfig(config::EnasTrainingConfig* c);
// Throws ConfigError for values out of range.
void CheckTrainingConfig(const config::EnasTrainingConfig& c);

struct TrainedSearchSetup {
  std::shared_ptr<const env::BlockEnv> base;     // the space's own environment
  std::shared_ptr<const env::QualityModel> quality;  // trained from scratch briefly
  std::shared_ptr<const env::StepTimeModel> step_time;  // MMACs (proxy)
  std::unique_ptr<env::BlockEnv> env;            // the two with base's budget options
  std::shared_ptr<const void> data;              // the loaded Fashion-MNIST splits
};
// Loads the data (IoError / ParseError for bad IDX files), checks the config (ConfigError).
TrainedSearchSetup MakeTrainedSearchSetup(std::shared_ptr<const env::BlockEnv> base, const config::EnasTrainingConfig& c);
// How many cells the quality model has trained (not answered from its cache) and their CPU seconds.
struct TrainedQualityStats {
  int64_t trained = 0;
  double cpu_seconds = 0;
};
TrainedQualityStats QualityStats(const TrainedSearchSetup& s);
// The final training of `best` and of the hand-designed cell (final_epochs, seed train_seed + 1,
// as the ENAS finalists): {"best": {...}, "hand": {...}, "recipe": {...}, "cells_trained",
// "search_training_cpu_seconds"} with validation and test accuracy, the short-training (search)
// validation accuracy, params, MACs, seconds; cells_trained = the distinct cells the search trained
// by this process (a resumed run: since the resume; not the hand-designed one, whose short
// training the report adds). `progress`
// (may be empty) sees each training's fraction done.
nlohmann::json TrainedFinalReport(const TrainedSearchSetup& s, const nas::Architecture& best,
                                  const config::EnasTrainingConfig& c, const EnasProgressFn& progress = {});

}  // namespace placerl::enas
