#include "search/nas/brainformer_search.h"

#include "datasets/util/errors.h"

namespace placerl::brainformer {

namespace {

// A step-time model owned elsewhere (the base environment), shared without copying it.
class BorrowedStepTime : public env::StepTimeModel {
 public:
  explicit BorrowedStepTime(std::shared_ptr<const env::BlockEnv> owner) : owner_(std::move(owner)) {}
  double StepTime(const nas::Architecture& a) const override { return owner_->step_time_model().StepTime(a); }
  std::string unit() const override { return owner_->step_time_model().unit(); }

 private:
  std::shared_ptr<const env::BlockEnv> owner_;
};

nlohmann::json TrainingJson(const SearchSetup& s, const nas::Architecture& a, const TrainResult& final) {
  const Block b = BlockFromArchitecture(s.base->space(), a);
  const TrainResult* search = s.quality->Find(a);
  nlohmann::json j = {{"block", b.Summary()},
          {"architecture", s.base->space().Describe(a)},
          {"search_validation_accuracy", search ? search->validation_accuracy : NAN},
          {"validation_accuracy", final.validation_accuracy},
          {"test_accuracy", final.test_accuracy},
          {"step_time", s.step_time->StepTime(a)},
          {"params", final.params},
          {"activated_params", final.cost.activated_params},
          {"flops_per_sample", final.cost.flops_per_sample},
          {"dropped_token_fraction", final.dropped_token_fraction},
          {"final_loss", final.last_loss},
          {"seconds", final.seconds}};
  if (final.stopped) j["stopped_by_signal"] = true;  // the final training was cut short (accuracies null)
  return j;
}

}  // namespace

void FillDefaultTrainingConfig(config::BrainformerTrainingConfig* c) {
  c->set_data_dir(nas::kFashionMnistDir);
  c->set_train_steps(200);
  c->set_final_train_steps(1000);
  c->set_batch_size(64);
  c->set_learning_rate(4e-3);
  c->set_validation_size(10000);
  c->set_eval_size(2000);
  c->set_width_divisor(16);
  c->set_expert_divisor(4);
  c->set_repeats(1);
  c->set_aux_loss_weight(0.01);
  c->set_threads(1);
  c->set_train_seed(1);
}

TrainRecipe RecipeFrom(const config::BrainformerTrainingConfig& c) {
  TrainRecipe r;
  r.steps = c.train_steps();
  r.batch_size = c.batch_size();
  r.learning_rate = c.learning_rate();
  r.aux_loss_weight = c.aux_loss_weight();
  r.eval_size = c.eval_size();
  r.seed = c.train_seed();
  r.threads = c.threads();
  r.shape.width_divisor = c.width_divisor();
  r.shape.expert_divisor = c.expert_divisor();
  r.shape.repeats = c.repeats();
  CheckRecipe(r);
  if (c.final_train_steps() < 1 || c.final_train_steps() > 10000000)
    throw ConfigError("brainformer.final_train_steps must be in [1, 1e7]");
  if (c.validation_size() < 1) throw ConfigError("brainformer.validation_size must be >= 1");
  if (c.data_dir().empty()) throw ConfigError("brainformer.data_dir is empty");
  return r;
}

SearchSetup MakeSearchSetup(std::shared_ptr<const env::BlockEnv> base, const config::BrainformerTrainingConfig& training) {
  const TrainRecipe recipe = RecipeFrom(training);
  SearchSetup s;
  s.base = std::move(base);
  s.reference = GlamLikeArchitecture(s.base->space());  // also checks that the space is a Brainformer one
  if (s.base->step_time_model().unit() != "none") s.step_time = std::make_shared<BorrowedStepTime>(s.base);
  else s.step_time = std::make_shared<BlockFlopsProxy>(s.base->shared_space());
  s.quality = std::make_shared<PatchTransformerQuality>(s.base->shared_space(),
                                                        LoadPatchData(training.data_dir(), training.validation_size()), recipe);
  env::BlockEnvOptions eo = s.base->options();
  s.budget_source = eo.cost_budget > 0 ? "given" : "GLaM-like step time";
  if (eo.cost_budget <= 0) eo.cost_budget = s.step_time->StepTime(s.reference);
  s.budget = eo.cost_budget;
  s.env = std::make_unique<env::BlockEnv>(s.base->shared_space(), s.quality, s.step_time, eo);
  return s;
}

env::BlockScore EvaluateReference(const SearchSetup& s) { return s.env->Evaluate(s.reference); }

nlohmann::json FinalReport(const SearchSetup& s, const nas::Architecture& best,
                           const config::BrainformerTrainingConfig& training) {
  const TrainRecipe recipe = RecipeFrom(training);
  const PatchData& data = s.quality->data();
  const TrainResult best_final =
      FinalTraining(BlockFromArchitecture(s.base->space(), best), recipe, training.final_train_steps(), data);
  const TrainResult ref_final = best == s.reference
      ? best_final
      : FinalTraining(BlockFromArchitecture(s.base->space(), s.reference), recipe, training.final_train_steps(), data);
  nlohmann::json j;
  j["best"] = TrainingJson(s, best, best_final);
  j["reference"] = TrainingJson(s, s.reference, ref_final);
  j["reference_name"] = "GLaM-like (attention + dense FFN / attention + top-2 MoE alternating)";
  j["step_time_unit"] = s.step_time->unit();
  j["step_time_budget"] = s.budget;
  j["step_time_budget_source"] = s.budget_source;
  j["train_steps"] = recipe.steps;
  j["final_train_steps"] = training.final_train_steps();
  j["batch_size"] = recipe.batch_size;
  j["validation_images"] = data.validation.count;
  j["search_eval_images"] = recipe.eval_size > 0 ? std::min(recipe.eval_size, data.validation.count) : data.validation.count;
  j["test_images"] = data.test.count;
  j["candidates_trained"] = s.quality->trainings();
  j["search_training_seconds"] = s.quality->training_seconds();
  j["scale_mapping"] = "trained width = model_dim / " + std::to_string(recipe.shape.width_divisor) +
                       ", experts / " + std::to_string(recipe.shape.expert_divisor) + ", block x" +
                       std::to_string(recipe.shape.repeats) + ", 16 patches of 7x7, mean pooling";
  return j;
}

}  // namespace placerl::brainformer
