#include "agents/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace placerl::agents {

bool TrainingTask::Learnable(const RolloutBuffer& buffer, int32_t) const { return !buffer.transitions.empty(); }

LogRow TrainingTask::Update(Learner& learner, RolloutBuffer* buffer) {
  const Stats stats = learner.Update(buffer);
  return LogRow(stats.begin(), stats.end());
}

CollectorTask::CollectorTask(std::vector<env::Environment*> designs, int32_t collect_batch)
    : collector_(std::move(designs), collect_batch) {}

int32_t CollectorTask::Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                               const std::function<bool()>& may_start, const std::function<void()>& ended,
                               RolloutBuffer* buffer, TrainingTimes* times) {
  return collector_.Collect(
      policy, rng, episodes, first_seed, may_start,
      [&](size_t design, env::Environment& env, bool infeasible) {
        EpisodeEnded(design, env, infeasible);
        if (ended) ended();
      },
      buffer, times);
}

void Train(TrainingTask& task, Learner& learner, const TrainerOptions& o, TrainingProgress* st, TrainingTimes* times,
           const std::function<bool()>& stop, const std::function<void(int64_t, const LogRow&)>& log,
           const std::function<void(double)>& every_update) {
  using Clock = std::chrono::steady_clock;
  const Stopwatch watch(o.clock);
  auto elapsed = [&] { return st->elapsed_s + watch.Elapsed(); };
  Collective* const group = o.collective && o.collective->world_size() > 1 ? o.collective : nullptr;
  const int rank = group ? group->rank() : 0, world = group ? group->world_size() : 1;
  auto beat = [&] {
    if (o.heartbeat) o.heartbeat();
  };
  // This rank's share of an update's episodes and the index of its first one within the update.
  const int share = o.episodes_per_update / world + (rank < o.episodes_per_update % world ? 1 : 0);
  const int offset = rank * (o.episodes_per_update / world) + std::min(rank, o.episodes_per_update % world);
  RolloutBuffer buffer;
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
    // A rank keeps collecting its share after a stop: the ranks stop together at the next decision.
    const int32_t played = task.Collect(
        policy, &rng, share, o.seed + static_cast<uint64_t>(st->episodes + offset),
        [&] { return group || !(stop && stop()); }, beat, &buffer, times);
    if (!group && !task.Learnable(buffer, played)) break;  // stopped before the first episode of this update
    std::vector<double> counts = {static_cast<double>(played), static_cast<double>(buffer.size())};
    std::vector<double> collect = {std::chrono::duration<double>(Clock::now() - c0).count()};
    if (group) {
      group->AllReduceSum(counts.data(), static_cast<int64_t>(counts.size()));
      group->AllReduceMax(collect.data(), 1);  // the slowest rank's collection
    }
    task.Reduce(buffer, group);
    const double collect_s = collect[0];
    const auto u0 = Clock::now();
    const double u0_cpu = ProcessCpuSeconds();
    const LogRow stats = task.Update(learner, &buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    if (times) times->update_s += ProcessCpuSeconds() - u0_cpu;
    beat();
    const int64_t steps = static_cast<int64_t>(counts[1]);
    st->episodes += static_cast<int64_t>(counts[0]);
    st->steps += steps;
    ++st->iteration;
    LogRow row = {{"time_s", elapsed()}, {"charts/episodes", static_cast<double>(st->episodes)}};
    task.Columns(buffer, &row);
    row.insert(row.end(), {{"charts/SPS", steps / std::max(1e-9, collect_s + update_s)},
                           {"perf/collect_s", collect_s},
                           {"perf/update_s", update_s}});
    row.insert(row.end(), stats.begin(), stats.end());
    if (log) log(st->iteration, row);
    if (every_update) every_update(elapsed());
  }
  st->elapsed_s = elapsed();
}

}  // namespace placerl::agents
