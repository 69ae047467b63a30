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
  ChipTrainingOptions o;
  o.episodes_per_update = episodes_per_update;
  o.seed = seed;
  o.budget_s = budget_s;
  TrainChip(envs, learner, o, st, stop, log, every_update);
}

void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& o, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const run::Scalars&)>& log,
               const std::function<void(const ChipTrainingState&, double)>& every_update) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return st->elapsed_s + std::chrono::duration<double>(Clock::now() - t0).count(); };
  agents::Collective* const group = o.collective && o.collective->world_size() > 1 ? o.collective : nullptr;
  const int rank = group ? group->rank() : 0, world = group ? group->world_size() : 1;
  auto beat = [&] {
    if (o.heartbeat) o.heartbeat();
  };
  // This rank's share of an update's episodes and the index of its first one within the update.
  const int share = o.episodes_per_update / world + (rank < o.episodes_per_update % world ? 1 : 0);
  const int offset = rank * (o.episodes_per_update / world) + std::min(rank, o.episodes_per_update % world);
  const size_t designs = envs.size();
  agents::RolloutBuffer buffer;
  std::mt19937_64& rng = learner.rng();
  encoders::Policy& policy = learner.policy();
  for (;;) {
    // One decision for all ranks (their clocks differ).
    std::vector<double> done = {elapsed() >= o.budget_s || (stop && stop()) ||
                                        (o.max_updates > 0 && st->iteration >= o.max_updates)
                                    ? 1.0
                                    : 0.0};
    if (group) group->AllReduceMax(done.data(), 1);
    if (done[0] > 0) break;
    buffer.Clear();
    const auto c0 = Clock::now();
    // Sums: episodes, complete, infeasible, Σ cost, steps, Σ return; then −min cost of the update
    // and −best cost per design (maxima).
    std::vector<double> sums(6, 0.0), maxima(1 + designs, -INFINITY);
    for (int e = 0; e < share && (group || !(stop && stop())); ++e) {
      const size_t k = designs == 1 ? 0 : std::uniform_int_distribution<size_t>(0, designs - 1)(rng);
      const uint64_t episode_seed = o.seed + static_cast<uint64_t>(st->episodes + offset + e);
      const double cost = PlayChipEpisode(policy, *envs[k], episode_seed, &rng, false, &buffer);
      sums[0] += 1;
      if (std::isfinite(cost)) {
        sums[1] += 1;
        sums[3] += cost;
        maxima[0] = std::max(maxima[0], -cost);
        OfferBest(*envs[k], k, cost, st);
      } else {
        sums[2] += 1;
      }
      beat();
    }
    if (!group && buffer.transitions.empty()) break;  // stopped before the first episode of this update
    sums[4] = buffer.size();
    for (const auto& ep : buffer.episodes) sums[5] += ep.episode_return;
    for (size_t k = 0; k < designs; ++k) maxima[1 + k] = -st->best_cost[k];
    std::vector<double> collect = {std::chrono::duration<double>(Clock::now() - c0).count()};
    if (group) {
      group->AllReduceSum(sums.data(), static_cast<int64_t>(sums.size()));
      group->AllReduceMax(maxima.data(), static_cast<int64_t>(maxima.size()));
      group->AllReduceMax(collect.data(), 1);  // the slowest rank's collection
    }
    const double collect_s = collect[0];
    const auto u0 = Clock::now();
    const agents::Stats stats = learner.Update(&buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    beat();
    const int64_t steps = static_cast<int64_t>(sums[4]);
    st->episodes += static_cast<int64_t>(sums[0]);
    st->steps += steps;
    ++st->iteration;
    double best_all = INFINITY;
    for (size_t k = 0; k < designs; ++k) {
      st->best_cost[k] = std::min(st->best_cost[k], -maxima[1 + k]);  // the best over the ranks
      best_all = std::min(best_all, st->best_cost[k]);
    }
    const double complete = sums[1];
    run::Scalars row = {{"time_s", elapsed()},
                        {"charts/episodes", static_cast<double>(st->episodes)},
                        {"charts/episodic_return", sums[0] > 0 ? sums[5] / sums[0] : 0.0},
                        {"charts/mean_proxy_cost", complete > 0 ? sums[3] / complete : NAN},
                        {"charts/min_proxy_cost", complete > 0 ? -maxima[0] : NAN},
                        {"charts/best_proxy_cost", std::isfinite(best_all) ? best_all : NAN},
                        {"charts/infeasible_episodes", sums[2]},
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
