#include "experiments/torch/nas_rl.h"

#include <chrono>
#include <memory>
#include <random>
#include <set>

#include "agents/rollout.h"
#include "datasets/util/errors.h"

namespace placerl {

search::NasSearchResult RunNasRl(
    const env::BlockEnv& env, const NasRlOptions& o, const std::function<bool()>& stop,
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation,
    const std::function<void(int64_t, const NasRlStats&)>& on_update) {
  if (o.budget < 1) throw ConfigError("nas rl: the budget must be >= 1 architecture");
  if (o.episodes_per_update < 1) throw ConfigError("nas rl: episodes_per_update must be >= 1");
  if (!(o.reward_scale > 0)) throw ConfigError("nas rl: reward_scale must be > 0");
  const auto start = std::chrono::steady_clock::now();
  env::BlockEnv play(env);  // episodes change its state; the caller's stays as it is
  encoders::PolicyOptions po = o.policy;
  po.init_seed = o.seed;
  encoders::Policy policy(po, encoders::FeatureLayout::Of(play));
  agents::AgentOptions ao = o.agent;
  ao.seed = o.seed;
  agents::Learner learner(&policy, ao);
  std::mt19937_64& rng = learner.rng();

  search::NasSearchResult r;
  r.best.score.reward = -1e300;
  std::set<nas::Architecture> seen;
  agents::RolloutBuffer buffer;
  auto more = [&] { return r.evaluations < o.budget && !(stop && stop()); };
  while (more()) {
    buffer.Clear();
    for (int32_t e = 0; e < o.episodes_per_update && more(); ++e) {
      play.Reset(o.seed + static_cast<uint64_t>(r.evaluations));
      while (!play.done()) {
        const encoders::PolicyStep a = policy.Act(play, &rng);
        buffer.Record(play, a);
        const env::StepResult s = play.Step(a.action);
        buffer.SetOutcome(play, o.reward_scale * s.reward, s.done, s.infeasible);
      }
      // The bookkeeping uses the environment's own score of the architecture built (the
      // episode's reward is the same number: tests/experiments/torch/nas_rl_test.cc).
      search::NasEvaluation ev{play.architecture(), play.Evaluate(play.architecture())};
      r.reward.push_back(ev.score.reward);
      if (r.evaluations == 0 || ev.score.reward > r.best.score.reward) r.best = ev;
      r.best_reward.push_back(r.best.score.reward);
      seen.insert(ev.arch);
      if (on_evaluation) on_evaluation(r.evaluations, ev, r.best);
      ++r.evaluations;
    }
    // No update after the budget's last architecture: nothing would sample from it.
    if (buffer.transitions.empty() || !more()) break;
    const agents::Stats stats = learner.Update(&buffer);
    if (on_update) on_update(learner.updates(), stats);
  }
  r.unique = static_cast<int64_t>(seen.size());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace placerl
