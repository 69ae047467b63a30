#include "agents/rollout.h"

#include "datasets/util/errors.h"

namespace placerl::agents {

int32_t RolloutBuffer::InstanceOf(const env::Environment& env) {
  const auto g = env.static_graph();
  for (size_t i = 0; i < instances.size(); ++i)
    if (instances[i].graph == g) return static_cast<int32_t>(i);
  instances.push_back({g, env.action_spec()});
  return static_cast<int32_t>(instances.size() - 1);
}

void RolloutBuffer::Record(const env::Environment& env, const encoders::PolicyStep& step) {
  const env::DynamicState& s = env.state();
  Transition t;
  t.instance = InstanceOf(env);
  t.step = s.step;
  t.current_node = s.current_node;
  t.action = step.action;
  t.log_prob = step.log_prob;
  t.value = step.value;
  t.node_dynamic = s.node_dynamic;
  t.mask = s.action_mask;
  t.action_features = s.action_features;
  transitions.push_back(std::move(t));
}

void RolloutBuffer::SetOutcome(const env::Environment& env, double reward, bool done, bool infeasible) {
  if (transitions.empty() || transitions.back().done) throw ConfigError("rollout: no open decision to complete");
  transitions.back().reward = static_cast<float>(reward);
  transitions.back().done = done;
  open_return_ += reward;
  ++open_length_;
  if (done) {
    episodes.push_back({transitions.back().instance, open_return_, open_length_, infeasible, env.info()});
    open_return_ = 0;
    open_length_ = 0;
  }
}

void RolloutBuffer::ComputeReturns(double gamma) {
  const size_t n = transitions.size();
  if (n > 0 && !transitions.back().done) throw ConfigError("rollout: the last episode is not complete");
  returns.assign(n, 0.f);
  advantages.assign(n, 0.f);
  double g = 0;
  for (size_t i = n; i-- > 0;) {
    if (transitions[i].done) g = 0;
    g = transitions[i].reward + gamma * g;
    returns[i] = static_cast<float>(g);
    advantages[i] = static_cast<float>(g - transitions[i].value);
  }
}

void RolloutBuffer::Clear() {
  instances.clear();
  transitions.clear();
  returns.clear();
  advantages.clear();
  episodes.clear();
  open_return_ = 0;
  open_length_ = 0;
}

double RolloutBuffer::MeanEpisodeReturn() const {
  if (episodes.empty()) return 0;
  double s = 0;
  for (const auto& e : episodes) s += e.episode_return;
  return s / episodes.size();
}

void CollectEpisodes(encoders::Policy& policy, env::Environment& env, int32_t episodes, uint64_t seed,
                     std::mt19937_64* rng, RolloutBuffer* buffer) {
  for (int32_t k = 0; k < episodes; ++k) {
    env.Reset(seed + static_cast<uint64_t>(k));
    while (!env.done()) {
      const encoders::PolicyStep step = policy.Act(env, rng);
      buffer->Record(env, step);
      const env::StepResult r = env.Step(step.action);
      buffer->SetOutcome(env, r.reward, r.done || env.done(), r.infeasible);
    }
  }
}

}  // namespace placerl::agents
