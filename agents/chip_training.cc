#include "agents/chip_training.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cmath>
#include <random>

#include <time.h>

#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl {

namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds of this process (all threads): the breakdown of ChipTrainingTimes in CPU time, so
// that it means the same on a loaded machine (wall time there mostly measures the neighbours).
double CpuSeconds() { return ProcessCpuSeconds(); }

// The episode's proxy cost (+inf when it ended infeasible).
double FinalCost(const env::ChipEnv& env) {
  return env.info_value("infeasible") == 0 ? env.info_value("proxy_cost") : INFINITY;
}

}  // namespace

double PlayChipEpisode(encoders::Policy& policy, env::ChipEnv& env, uint64_t seed, std::mt19937_64* rng, bool greedy,
                       agents::RolloutBuffer* buffer) {
  env.Reset(seed);
  while (!env.done()) {
    const encoders::PolicyStep a = policy.Act(env, rng, greedy);
    if (buffer) buffer->Record(env, a);
    const env::StepResult r = env.Step(a.action);
    if (buffer) buffer->SetOutcome(env, r.reward, r.done, r.infeasible);
  }
  return FinalCost(env);
}

ChipCollector::ChipCollector(std::vector<std::unique_ptr<env::ChipEnv>>* envs, int32_t batch)
    : envs_(envs), batch_(batch), copies_(envs->size()) {
  if (batch < 1) throw ConfigError("collect_batch must be >= 1");
  if (envs->empty()) throw ConfigError("chip training: no designs");
}

ChipCollector::~ChipCollector() = default;

env::ChipEnv& ChipCollector::Copy(size_t design, int32_t slot) {
  if (slot == 0) return *(*envs_)[design];
  auto& c = copies_[design];
  while (static_cast<int32_t>(c.size()) < slot) c.push_back(std::make_unique<env::ChipEnv>(*(*envs_)[design]));
  return *c[slot - 1];
}

int32_t ChipCollector::Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                               const std::function<bool()>& may_start,
                               const std::function<void(size_t, const env::ChipEnv&, double)>& on_end,
                               agents::RolloutBuffer* buffer, ChipTrainingTimes* times) {
  struct Slot {
    int32_t episode = -1;  // -1: free
    size_t design = 0;
    env::ChipEnv* env = nullptr;
  };
  const size_t designs = envs_->size();
  const int32_t b = std::max(1, std::min(batch_, episodes));
  std::vector<Slot> slots(b);
  std::vector<agents::RolloutBuffer> open(b), finished;  // finished[e]: episode e, complete
  finished.reserve(std::max(0, episodes));
  ChipTrainingTimes local;
  ChipTrainingTimes& t = times ? *times : local;
  int32_t next = 0, live = 0;
  // Starts the next episode in copy s (if any may start). An episode that is over at its reset
  // (no legal cell for the first macro) ends there without a decision, as in PlayChipEpisode.
  auto start = [&](int32_t s) {
    Slot& slot = slots[s];
    while (next < episodes && !(may_start && !may_start())) {
      slot.design = designs == 1 ? 0 : std::uniform_int_distribution<size_t>(0, designs - 1)(*rng);
      slot.env = &Copy(slot.design, s);
      const int32_t e = next++;
      finished.emplace_back();
      const double t0 = CpuSeconds();
      slot.env->Reset(first_seed + static_cast<uint64_t>(e));
      t.env_s += CpuSeconds() - t0;
      if (!slot.env->done()) {
        slot.episode = e;
        ++live;
        return;
      }
      if (on_end) on_end(slot.design, *slot.env, FinalCost(*slot.env));
    }
  };
  for (int32_t s = 0; s < b; ++s) start(s);
  std::vector<const env::Environment*> acting;
  std::vector<int32_t> acting_slot;
  std::vector<encoders::PolicyStep> steps;
  while (live > 0) {
    const double p0 = CpuSeconds();
    acting.clear();
    acting_slot.clear();
    for (int32_t s = 0; s < b; ++s)
      if (slots[s].episode >= 0) {
        acting.push_back(slots[s].env);
        acting_slot.push_back(s);
      }
    const int32_t n = static_cast<int32_t>(acting.size());
    steps.resize(n);
    // One environment: Act, so that B = 1 is exactly the one-environment loop.
    if (n == 1)
      steps[0] = policy.Act(*acting[0], rng, false);
    else
      policy.ActBatch(acting.data(), n, rng, false, steps.data());
    for (int32_t i = 0; i < n; ++i) open[acting_slot[i]].Record(*acting[i], steps[i]);
    t.policy_s += CpuSeconds() - p0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t s = acting_slot[i];
      Slot& slot = slots[s];
      const double e0 = CpuSeconds();
      const env::StepResult r = slot.env->Step(steps[i].action);
      open[s].SetOutcome(*slot.env, r.reward, r.done, r.infeasible);
      const double e1 = CpuSeconds();
      if (!r.done) {
        t.env_s += e1 - e0;
        continue;
      }
      t.episode_end_s += e1 - e0;
      finished[slot.episode] = std::move(open[s]);
      open[s].Clear();
      slot.episode = -1;
      --live;
      if (on_end) on_end(slot.design, *slot.env, FinalCost(*slot.env));
      start(s);
    }
  }
  for (agents::RolloutBuffer& f : finished) buffer->Append(std::move(f));
  return static_cast<int32_t>(finished.size());
}

void OfferBest(const env::ChipEnv& env, size_t k, double cost, ChipTrainingState* st) {
  if (env.episode_end_is_full_schedule()) {
    if (!(cost < st->best_cost[k])) return;
    st->best_cost[k] = cost;
    env::ChipSolution& b = st->best[k];
    env::CopyPlacement(env.cost(), &b);
    b.cost.proxy_cost = cost;
    b.cost.hpwl = env.info_value("hpwl");
    b.cost.wirelength_cost = env.info_value("wirelength_cost");
    b.cost.density_cost = env.info_value("density_cost");
    b.cost.congestion_cost = env.info_value("congestion_cost");
    b.valid = true;
    return;
  }
  // A cheaper FD schedule: only a new lowest episode cost is re-scored with the full one (as much
  // work as a full episode end, ~30 ms on Ariane133: not for every episode); cheap and full costs
  // of one placement differ, so the full cost decides.
  if (st->best_episode_cost.size() <= k) st->best_episode_cost.resize(st->best_cost.size(), INFINITY);
  if (!(cost < st->best_episode_cost[k])) return;
  st->best_episode_cost[k] = cost;
  const double t0 = CpuSeconds();
  chip::ProxyCost full = env.cost();
  const chip::CostBreakdown c = env.FullScheduleCost(&full);
  st->times.rescore_s += CpuSeconds() - t0;
  ++st->times.rescores;
  if (!(c.proxy_cost < st->best_cost[k])) return;
  st->best_cost[k] = c.proxy_cost;
  env::ChipSolution& b = st->best[k];
  env::CopyPlacement(full, &b);
  b.cost = c;
  b.valid = true;
}

void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner, int episodes_per_update,
               uint64_t seed, double budget_s, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double)>& every_update) {
  ChipTrainingOptions o;
  o.episodes_per_update = episodes_per_update;
  o.seed = seed;
  o.budget_s = budget_s;
  o.collect_batch = kDefaultCollectBatch;
  TrainChip(envs, learner, o, st, stop, log, every_update);
}

void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& o, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double)>& every_update) {
  const Stopwatch watch(o.clock);
  auto elapsed = [&] { return st->elapsed_s + watch.Elapsed(); };
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
  ChipCollector collector(&envs, o.collect_batch);
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
    collector.Collect(
        policy, &rng, share, o.seed + static_cast<uint64_t>(st->episodes + offset),
        [&] { return group || !(stop && stop()); },
        [&](size_t k, const env::ChipEnv& env, double cost) {
          sums[0] += 1;
          if (std::isfinite(cost)) {
            sums[1] += 1;
            sums[3] += cost;
            maxima[0] = std::max(maxima[0], -cost);
            OfferBest(env, k, cost, st);
          } else {
            sums[2] += 1;
          }
          beat();
        },
        &buffer, &st->times);
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
    const double u0_cpu = CpuSeconds();
    const agents::Stats stats = learner.Update(&buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    st->times.update_s += CpuSeconds() - u0_cpu;
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
    LogRow row = {{"time_s", elapsed()},
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
