// Brainformer quality (models/brainformer_quality.h) on the real Fashion-MNIST
// files: the validation split, a few steps lower the loss and beat chance, the same recipe gives
// the same accuracy (same seed, same data order), the quality model trains each architecture
// once, final training reports test accuracy, bad recipes and missing files are errors.
#include <gtest/gtest.h>

#include <cstdio>

#include "datasets/nas/idx.h"
#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "models/brainformer_quality.h"

namespace placerl::brainformer {
namespace {

std::shared_ptr<const PatchData> Data() {
  static const auto data = LoadPatchData(nas::kFashionMnistDir, 1000);
  return data;
}

TrainRecipe Small(int64_t steps) {
  TrainRecipe r;
  r.steps = steps;
  r.batch_size = 32;
  r.eval_size = 500;
  r.shape.width_divisor = 32;  // widths 16…48: fast
  return r;
}

TEST(BrainformerQuality, ValidationSplitHoldsOutTheLastTrainingImages) {
  const PatchData& d = *Data();
  EXPECT_EQ(d.train.count, 59000);
  EXPECT_EQ(d.validation.count, 1000);
  EXPECT_EQ(d.test.count, 10000);
  EXPECT_EQ(d.validation.pixels.size(), 1000u * 28 * 28);
  const nas::ImageSet all = nas::LoadFashionMnist(nas::kFashionMnistDir, "train");
  EXPECT_EQ(d.validation.labels[0], all.labels[59000]);
  EXPECT_EQ(d.validation.pixels.back(), all.pixels.back());
}

TEST(BrainformerQuality, FewStepsLowerTheLossAndAreDeterministic) {
  const Block b{512, {SubLayer{SubLayerType::kAttention, 4}, SubLayer{SubLayerType::kMoeFfn, 0, 2, 8, Gating::kTop2, 1.25}}};
  const TrainResult r = TrainBlock(b, Small(80), *Data(), false);
  std::printf("80 steps: loss %.3f -> %.3f, validation accuracy %.3f, %.2f s, dropped %.3f\n", r.first_loss,
              r.last_loss, r.validation_accuracy, r.seconds, r.dropped_token_fraction);
  EXPECT_LT(r.last_loss, r.first_loss - 0.3);
  EXPECT_GT(r.validation_accuracy, 0.4);  // chance is 0.1
  EXPECT_EQ(r.test_accuracy, -1);
  EXPECT_EQ(r.params, r.cost.params);
  EXPECT_GE(r.dropped_token_fraction, 0);
  EXPECT_LT(r.dropped_token_fraction, 0.5);
  const TrainResult again = TrainBlock(b, Small(80), *Data(), false);
  EXPECT_EQ(again.validation_accuracy, r.validation_accuracy);
  EXPECT_EQ(again.last_loss, r.last_loss);
}

TEST(BrainformerQuality, QualityModelTrainsEachArchitectureOnce) {
  auto space = std::make_shared<const nas::SearchSpace>(nas::LoadSearchSpace("brainformer"));
  PatchTransformerQuality q(space, Data(), Small(20));
  const nas::Architecture glam = GlamLikeArchitecture(*space);
  EXPECT_EQ(q.Find(glam), nullptr);
  const double a = q.Quality(glam);
  EXPECT_GT(a, 0);
  EXPECT_LE(a, 1);
  EXPECT_EQ(q.trainings(), 1);
  EXPECT_EQ(q.Quality(glam), a);
  EXPECT_EQ(q.trainings(), 1);
  ASSERT_NE(q.Find(glam), nullptr);
  EXPECT_EQ(q.Find(glam)->validation_accuracy, a);
  EXPECT_NE(q.Describe().find("after 20 steps"), std::string::npos) << q.Describe();
  EXPECT_THROW(q.Quality(nas::Architecture(space->num_decisions(), 0)), ConfigError);  // not allowed
}

TEST(BrainformerQuality, FinalTrainingReportsTestAccuracy) {
  const Block b{512, {SubLayer{SubLayerType::kDenseFfn, 0, 2}}};
  const TrainResult r = FinalTraining(b, Small(10), 150, *Data());
  EXPECT_GT(r.test_accuracy, 0.3);
  EXPECT_LE(r.test_accuracy, 1);
  EXPECT_GT(r.validation_accuracy, 0.3);
}

TEST(BrainformerQuality, BadRecipesAndMissingFilesAreErrors) {
  const Block b{512, {SubLayer{SubLayerType::kDenseFfn, 0, 2}}};
  for (auto change : std::vector<void (*)(TrainRecipe&)>{
           [](TrainRecipe& r) { r.steps = 0; }, [](TrainRecipe& r) { r.batch_size = 0; },
           [](TrainRecipe& r) { r.learning_rate = -1; }, [](TrainRecipe& r) { r.eval_size = -1; },
           [](TrainRecipe& r) { r.shape.repeats = 0; }, [](TrainRecipe& r) { r.shape.width_divisor = 0; },
           [](TrainRecipe& r) { r.threads = 0; }}) {
    TrainRecipe r = Small(1);
    change(r);
    EXPECT_THROW(TrainBlock(b, r, *Data(), false), ConfigError);
  }
  EXPECT_THROW(LoadPatchData("/nonexistent/fashion", 1000), IoError);
  EXPECT_THROW(LoadPatchData(nas::kFashionMnistDir, 0), ConfigError);
  EXPECT_THROW(LoadPatchData(nas::kFashionMnistDir, 60000), ConfigError);
}

}  // namespace
}  // namespace placerl::brainformer
