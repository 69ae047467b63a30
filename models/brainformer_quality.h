// Real quality for the Brainformer space: a candidate block is built into the patch Transformer
// of brainformer_net.h and trained from scratch on Fashion-MNIST for a fixed number of steps,
// with the same seed (initialisation) and the same data order for every candidate; its quality
// is the accuracy on held-out images of the 60k training set (the last `validation_size`).
// The test set is touched only by FinalTraining (more steps), for the final numbers.
// Torch-free header: nas-search includes it; only brainformer_quality.cc includes LibTorch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "datasets/nas/idx.h"
#include "datasets/nas/search_space.h"
#include "env/block/block_models.h"
#include "models/brainformer_block.h"

namespace placerl::brainformer {

// Fashion-MNIST split for search: train = the first 60000 − validation_size training images,
// validation = the rest, test = the 10k test images.
struct PatchData {
  nas::ImageSet train, validation, test;
};
// Throws IoError / ParseError as LoadFashionMnist does, ConfigError for a validation size not
// in [1, training images − 1].
std::shared_ptr<const PatchData> LoadPatchData(const std::string& dir, int32_t validation_size);

// How every candidate is trained (one options struct; nas-search fills it from its config).
struct TrainRecipe {
  NetShape shape;
  int64_t steps = 300;              // optimiser steps
  int32_t batch_size = 64;
  double learning_rate = 2e-3;      // Adam; linear warm-up over 5 % of the steps, then cosine to 0
  double aux_loss_weight = 0.01;    // × the MoE load-balancing losses (Switch: 0.01)
  double grad_clip = 1.0;           // global norm
  int32_t eval_size = 2000;         // validation images scored (the first ones); 0 = all
  uint64_t seed = 1;                // initialisation and data order: the same for every candidate
  int32_t threads = 1;              // LibTorch intra-op threads
};
// Throws ConfigError for a recipe out of range.
void CheckRecipe(const TrainRecipe& r);

struct TrainResult {
  double validation_accuracy = 0;  // on eval_size validation images
  double test_accuracy = -1;       // FinalTraining only (all test images)
  double first_loss = 0, last_loss = 0;  // mean training loss of the first / last 10 % of steps
  int64_t params = 0;                    // trained network (module count)
  NetCost cost;                          // analytic (params, activated params, FLOPs / sample)
  double dropped_token_fraction = 0;     // MoE: dropped / routed tokens over the last 10 % of steps
  double seconds = 0;                    // wall time of training and evaluation
  bool stopped = false;                  // a stop (Ctrl-C, run::StopRequested) cut the training short: accuracies NaN
};

// Trains `block` with `recipe` on data.train and scores it on data.validation (and on
// data.test when `with_test`). Deterministic for a recipe (single-threaded LibTorch CPU). A stop
// request (run::StopRequested: Ctrl-C, SIGTERM) ends it within a step, `stopped` set.
TrainResult TrainBlock(const Block& block, const TrainRecipe& recipe, const PatchData& data, bool with_test);

// TrainBlock with `final_steps` steps, all validation images and the test set.
TrainResult FinalTraining(const Block& block, TrainRecipe recipe, int64_t final_steps, const PatchData& data);

// QualityModel: validation accuracy (a fraction) after TrainBlock; each architecture is trained
// once and cached. NOT thread-safe (the cache and LibTorch's global seed): nas-search evaluates
// architectures one at a time.
class PatchTransformerQuality : public env::QualityModel {
 public:
  PatchTransformerQuality(std::shared_ptr<const nas::SearchSpace> space, std::shared_ptr<const PatchData> data,
                          const TrainRecipe& recipe);
  double Quality(const nas::Architecture& a) const override;
  std::string Describe() const override;
  // The training of `a` if Quality(a) ran, else null.
  const TrainResult* Find(const nas::Architecture& a) const;
  int64_t trainings() const { return static_cast<int64_t>(cache_.size()); }
  double training_seconds() const { return seconds_; }
  const TrainRecipe& recipe() const { return recipe_; }
  const PatchData& data() const { return *data_; }

 private:
  std::shared_ptr<const nas::SearchSpace> space_;
  std::shared_ptr<const PatchData> data_;
  TrainRecipe recipe_;
  mutable std::map<nas::Architecture, TrainResult> cache_;
  mutable double seconds_ = 0;
};

}  // namespace placerl::brainformer
