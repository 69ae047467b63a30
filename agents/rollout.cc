#include "agents/rollout.h"

#include "agents/collector.h"

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
  SetOutcome(reward, done, infeasible, env.info());
}

void RolloutBuffer::SetOutcome(double reward, bool done, bool infeasible, const std::vector<double>& final_info) {
  if (transitions.empty() || transitions.back().done) throw ConfigError("rollout: no open decision to complete");
  transitions.back().reward = static_cast<float>(reward);
  transitions.back().done = done;
  open_return_ += reward;
  ++open_length_;
  if (done) {
    episodes.push_back({transitions.back().instance, open_return_, open_length_, infeasible, final_info});
    open_return_ = 0;
    open_length_ = 0;
  }
}

void RolloutBuffer::Append(RolloutBuffer&& other) {
  if (!other.transitions.empty() && !other.transitions.back().done)
    throw ConfigError("rollout: cannot append an unfinished episode");
  std::vector<int32_t> remap(other.instances.size());
  for (size_t i = 0; i < other.instances.size(); ++i) {
    remap[i] = -1;
    for (size_t j = 0; j < instances.size(); ++j)
      if (instances[j].graph == other.instances[i].graph) remap[i] = static_cast<int32_t>(j);
    if (remap[i] < 0) {
      instances.push_back(other.instances[i]);
      remap[i] = static_cast<int32_t>(instances.size() - 1);
    }
  }
  for (Transition& t : other.transitions) {
    t.instance = remap[t.instance];
    transitions.push_back(std::move(t));
  }
  for (EpisodeSummary& e : other.episodes) {
    e.instance = remap[e.instance];
    episodes.push_back(std::move(e));
  }
  returns.clear();
  advantages.clear();
  other.Clear();
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
  for (int32_t k = 0; k < episodes; ++k)
    PlayEpisode(policy, env, seed + static_cast<uint64_t>(k), rng, /*greedy=*/false, buffer);
}

void CollectEpisodes(encoders::Policy& policy, env::VectorEnv& venv, int32_t episodes, std::mt19937_64* rng,
                     RolloutBuffer* buffer) {
  const int32_t b = venv.size();
  env::BatchBuffers out;
  venv.Reset(&out);
  std::vector<RolloutBuffer> open(b);  // the running episode of each environment
  std::vector<int32_t> actions(b);
  std::vector<const env::Environment*> envs(b);
  for (int32_t i = 0; i < b; ++i) envs[i] = &venv.env(i);
  std::vector<encoders::PolicyStep> steps(b);
  int32_t finished = 0;
  while (finished < episodes) {
    // One batched head forward per instance; the same actions as Act per environment in turn.
    policy.ActBatch(envs.data(), b, rng, /*greedy=*/false, steps.data());
    for (int32_t i = 0; i < b; ++i) {
      open[i].Record(venv.env(i), steps[i]);
      actions[i] = steps[i].action;
    }
    venv.Step(actions.data(), &out);
    for (int32_t i = 0; i < b; ++i) {
      const bool done = out.done[i] != 0;
      std::vector<double> info;
      if (done) {
        const size_t n = venv.env(i).info_names().size();
        const double* fi = &out.final_info[static_cast<size_t>(i) * out.info_stride];
        info.assign(fi, fi + n);
      }
      open[i].SetOutcome(out.reward[i], done, out.infeasible[i] != 0, info);
      if (done) {
        buffer->Append(std::move(open[i]));
        ++finished;
      }
    }
  }
}

}  // namespace placerl::agents
