#include "experiments/torch/chip_training.h"

#include <chrono>
#include <cmath>
#include <random>


namespace placerl {

double PlayChipEpisode(encoders::Policy& policy, env::ChipEnv& env, uint64_t seed, std::mt19937_64* rng, bool greedy,
                       agents::RolloutBuffer* buffer) {
  env.Reset(seed);
  while (!env.done()) {
    const encoders::PolicyStep a = policy.Act(env, rng, greedy);
    if (buffer) buffer->Record(env, a);
    const env::StepResult r = env.Step(a.action);
    if (buffer) buffer->SetOutcome(env, r.reward, r.done, r.infeasible);
  }
  return env.info_value("infeasible") == 0 ? env.info_value("proxy_cost") : INFINITY;
}

void OfferBest(const env::ChipEnv& env, size_t k, double cost, ChipTrainingState* st) {
  if (!(cost < st->best_cost[k])) return;
  st->best_cost[k] = cost;
  search::ChipSolution& b = st->best[k];
  search::CopyPlacement(env.cost(), &b);
  b.cost.proxy_cost = cost;
  b.cost.hpwl = env.info_value("hpwl");
  b.cost.wirelength_cost = env.info_value("wirelength_cost");
  b.cost.density_cost = env.info_value("density_cost");
  b.cost.congestion_cost = env.info_value("congestion_cost");
  b.valid = true;
}

void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner, int episodes_per_update,
               uint64_t seed, double budget_s, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const run::Scalars&)>& log,
               const std::function<void(const ChipTrainingState&, double)>& every_update) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return st->elapsed_s + std::chrono::duration<double>(Clock::now() - t0).count(); };
  agents::RolloutBuffer buffer;
  std::mt19937_64& rng = learner.rng();
  encoders::Policy& policy = learner.policy();
  while (elapsed() < budget_s && !(stop && stop())) {
    buffer.Clear();
    const auto c0 = Clock::now();
    double sum_cost = 0, min_cost = INFINITY;
    int complete = 0, infeasible = 0;
    const int32_t steps_before = buffer.size();
    for (int e = 0; e < episodes_per_update && !(stop && stop()); ++e) {
      const size_t k = envs.size() == 1 ? 0 : std::uniform_int_distribution<size_t>(0, envs.size() - 1)(rng);
      const double cost = PlayChipEpisode(policy, *envs[k], seed + static_cast<uint64_t>(st->episodes), &rng, false, &buffer);
      ++st->episodes;
      if (std::isfinite(cost)) {
        ++complete;
        sum_cost += cost;
        min_cost = std::min(min_cost, cost);
        OfferBest(*envs[k], k, cost, st);
      } else {
        ++infeasible;
      }
    }
    if (buffer.transitions.empty()) break;  // stopped before the first episode of this update
    const int64_t steps = buffer.size() - steps_before;
    const double collect_s = std::chrono::duration<double>(Clock::now() - c0).count();
    const auto u0 = Clock::now();
    const agents::Stats stats = learner.Update(&buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    st->steps += steps;
    ++st->iteration;
    double best_all = INFINITY;
    for (double b : st->best_cost) best_all = std::min(best_all, b);
    run::Scalars row = {{"time_s", elapsed()},
                        {"charts/episodes", static_cast<double>(st->episodes)},
                        {"charts/episodic_return", buffer.MeanEpisodeReturn()},
                        {"charts/mean_proxy_cost", complete ? sum_cost / complete : NAN},
                        {"charts/min_proxy_cost", complete ? min_cost : NAN},
                        {"charts/best_proxy_cost", std::isfinite(best_all) ? best_all : NAN},
                        {"charts/infeasible_episodes", static_cast<double>(infeasible)},
                        {"charts/SPS", steps / std::max(1e-9, collect_s + update_s)},
                        {"perf/collect_s", collect_s},
                        {"perf/update_s", update_s}};
    for (const auto& [key, v] : stats) row.emplace_back(key, v);
    if (log) log(st->iteration, row);
    if (every_update) every_update(*st, elapsed());
  }
  st->elapsed_s = elapsed();
}

}  // namespace placerl
