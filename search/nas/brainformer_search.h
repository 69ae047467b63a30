// nas-search --space brainformer --dataset fashion-mnist (docs/nas.md "Brainformer on
// Fashion-MNIST patches"): the block environment with the trained-quality model
// (brainformer_quality.h) and a step-time model, the GLaM-like reference block trained with the
// same recipe, and the final training of the best block and the reference. Torch-free header.
//
// Step time: the performance model's, when the environment built for the space has one (unit ≠
// "none"); until then the stand-in BlockFlopsProxy (activated GFLOPs/token at target scale).
// Step-time budget: the one given, or, when 0, the GLaM-like block's own step time — the
// Brainformer search's constraint (step time no worse than GLaM's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/proto/nas_search.pb.h"
#include "env/block/block_env.h"
#include "models/brainformer_quality.h"

namespace placerl::brainformer {

// The defaults of the training (the one place they live).
void FillDefaultTrainingConfig(config::BrainformerTrainingConfig* c);
// The recipe of a config; throws ConfigError for values out of range.
TrainRecipe RecipeFrom(const config::BrainformerTrainingConfig& c);

struct SearchSetup {
  std::shared_ptr<const env::BlockEnv> base;  // the space's own environment (owns its step-time model)
  std::shared_ptr<PatchTransformerQuality> quality;
  std::shared_ptr<const env::StepTimeModel> step_time;
  std::unique_ptr<env::BlockEnv> env;  // trained quality, step time, budget
  nas::Architecture reference;         // GLaM-like
  double budget = 0;
  std::string budget_source;           // "given" | "GLaM-like step time"
};

// `base` is the environment nas-search built for the space (its step-time model is used when it
// has one). Loads the data (IoError / ParseError), checks the recipe (ConfigError).
SearchSetup MakeSearchSetup(std::shared_ptr<const env::BlockEnv> base, const config::BrainformerTrainingConfig& training);

// Trains the reference with the search recipe (cached in the quality model) and returns its score.
env::BlockScore EvaluateReference(const SearchSetup& s);

// Final training (final_train_steps, all validation images, test set) of `best` and of the
// reference: {"best": {...}, "reference": {...}, "recipe": {...}, "search_training_seconds": …}.
// Each entry: block summary, search validation accuracy, final validation and test accuracy,
// step time, params, activated params, FLOPs per sample, dropped-token fraction, seconds.
nlohmann::json FinalReport(const SearchSetup& s, const nas::Architecture& best,
                           const config::BrainformerTrainingConfig& training);

}  // namespace placerl::brainformer
