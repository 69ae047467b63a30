#include "experiments/lib/torch/trained_chip_env.h"

#include "agents/learner.h"
#include "encoders/policy.h"
#include "experiments/lib/torch/training_state.h"

namespace placerl {

TrainedChipEnv ReadTrainedChipEnv(const std::string& checkpoint, const config::ChipEnvConfig& base) {
  const agents::Learner::Extras extras = agents::Learner::ReadExtras(checkpoint);
  const auto it = extras.find(run::kRunConfigExtra);
  if (it != extras.end()) return TrainedChipEnvOf(checkpoint, &it->second, {}, base);
  return TrainedChipEnvOf(checkpoint, nullptr, encoders::Policy::ReadLayout(checkpoint).action_feature_names, base);
}

}  // namespace placerl
