#include "agents/chip_training.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "agents/workers.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl {

namespace {

// The episode's proxy cost (+inf when it ended infeasible).
double FinalCost(const env::ChipEnv& env) {
  return env.info_value("infeasible") == 0 ? env.info_value("proxy_cost") : INFINITY;
}

}  // namespace

double PlayChipEpisode(encoders::Policy& policy, env::ChipEnv& env, uint64_t seed, std::mt19937_64* rng, bool greedy,
                       agents::RolloutBuffer* buffer) {
  agents::PlayEpisode(policy, env, seed, rng, greedy, buffer);
  return FinalCost(env);
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
  const double t0 = ProcessCpuSeconds();
  chip::ProxyCost full = env.cost();
  const chip::CostBreakdown c = env.FullScheduleCost(&full);
  st->times.rescore_s += ProcessCpuSeconds() - t0;
  ++st->times.rescores;
  if (!(c.proxy_cost < st->best_cost[k])) return;
  st->best_cost[k] = c.proxy_cost;
  env::ChipSolution& b = st->best[k];
  env::CopyPlacement(full, &b);
  b.cost = c;
  b.valid = true;
}

namespace {

// The chip task: episodes over the designs' environments, each ended episode's cost offered as
// its design's best; the update's columns are CleanRL's plus the proxy costs.
class ChipTask : public agents::CollectorTask {
 public:
  ChipTask(std::vector<std::unique_ptr<env::ChipEnv>>& envs, int32_t collect_batch, ChipTrainingState* st)
      : agents::CollectorTask(Designs(envs), collect_batch), st_(st), designs_(envs.size()) {}

  void Reduce(const agents::RolloutBuffer& buffer, agents::Collective* group) override {
    sums_[4] = buffer.size();
    for (const auto& ep : buffer.episodes) sums_[5] += ep.episode_return;
    for (size_t k = 0; k < designs_; ++k) maxima_[1 + k] = -st_->best_cost[k];
    if (group) {
      group->AllReduceSum(sums_.data(), static_cast<int64_t>(sums_.size()));
      group->AllReduceMax(maxima_.data(), static_cast<int64_t>(maxima_.size()));
    }
    for (size_t k = 0; k < designs_; ++k)
      st_->best_cost[k] = std::min(st_->best_cost[k], -maxima_[1 + k]);  // the best over the ranks
  }

  void Columns(const agents::RolloutBuffer&, LogRow* row) override {
    double best_all = INFINITY;
    for (size_t k = 0; k < designs_; ++k) best_all = std::min(best_all, st_->best_cost[k]);
    const double complete = sums_[1];
    row->insert(row->end(), {{"charts/episodic_return", sums_[0] > 0 ? sums_[5] / sums_[0] : 0.0},
                             {"charts/mean_proxy_cost", complete > 0 ? sums_[3] / complete : NAN},
                             {"charts/min_proxy_cost", complete > 0 ? -maxima_[0] : NAN},
                             {"charts/best_proxy_cost", std::isfinite(best_all) ? best_all : NAN},
                             {"charts/infeasible_episodes", sums_[2]}});
    sums_.assign(sums_.size(), 0.0);
    maxima_.assign(maxima_.size(), -INFINITY);
  }

 protected:
  void EpisodeEnded(size_t k, env::Environment& e, bool) override {
    const auto& env = static_cast<const env::ChipEnv&>(e);
    const double cost = FinalCost(env);
    sums_[0] += 1;
    if (std::isfinite(cost)) {
      sums_[1] += 1;
      sums_[3] += cost;
      maxima_[0] = std::max(maxima_[0], -cost);
      OfferBest(env, k, cost, st_);
    } else {
      sums_[2] += 1;
    }
  }

 private:
  static std::vector<env::Environment*> Designs(std::vector<std::unique_ptr<env::ChipEnv>>& envs) {
    std::vector<env::Environment*> d;
    for (auto& e : envs) d.push_back(e.get());
    return d;
  }
  ChipTrainingState* st_;
  size_t designs_;
  // This update's episodes, complete, infeasible, Σ cost, steps, Σ return; −min cost of the update
  // and −best cost per design (maxima).
  std::vector<double> sums_ = std::vector<double>(6, 0.0), maxima_ = std::vector<double>(1 + designs_, -INFINITY);
};

}  // namespace

void TrainChip(std::vector<std::unique_ptr<env::ChipEnv>>& envs, agents::Learner& learner,
               const ChipTrainingOptions& o, ChipTrainingState* st, const std::function<bool()>& stop,
               const std::function<void(int64_t, const LogRow&)>& log,
               const std::function<void(const ChipTrainingState&, double)>& every_update) {
  ChipTask task(envs, o.collect_batch, st);
  agents::Train(task, learner, o, st, &st->times, stop, log, [&](double elapsed_s) {
    if (every_update) every_update(*st, elapsed_s);
  });
}

namespace {

// A best placement as bytes (to rank 0 from the rank that found it).
std::string SolutionBytes(const env::ChipSolution& s) {
  std::vector<double> v = {static_cast<double>(s.x.size()), s.cost.hpwl, s.cost.wirelength_cost, s.cost.density_cost,
                           s.cost.congestion_cost, s.cost.proxy_cost, s.valid ? 1.0 : 0.0};
  v.insert(v.end(), s.x.begin(), s.x.end());
  v.insert(v.end(), s.y.begin(), s.y.end());
  for (auto o : s.orientation) v.push_back(static_cast<double>(o));
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

env::ChipSolution SolutionFromBytes(const std::string& bytes) {
  std::vector<double> v(bytes.size() / sizeof(double));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(double));
  env::ChipSolution s;
  const size_t n = static_cast<size_t>(v.at(0));
  if (v.size() < 7 + 2 * n) throw Error("a worker sent a malformed placement");
  s.cost.hpwl = v[1], s.cost.wirelength_cost = v[2], s.cost.density_cost = v[3], s.cost.congestion_cost = v[4];
  s.cost.proxy_cost = v[5];
  s.valid = v[6] != 0;
  s.x.assign(v.begin() + 7, v.begin() + 7 + n);
  s.y.assign(v.begin() + 7 + n, v.begin() + 7 + 2 * n);
  for (size_t i = 7 + 2 * n; i < v.size(); ++i) s.orientation.push_back(static_cast<chip::Orientation>(v[i]));
  return s;
}

}  // namespace

void GatherBestPlacements(workers::ProcessGroup* group, size_t designs, ChipTrainingState* state) {
  if (!group) return;
  const int rank = group->rank(), world = group->world_size();
  ChipTrainingState& st = *state;
  for (size_t k = 0; k < designs; ++k) {
    const double mine = st.best[k].valid ? st.best[k].cost.proxy_cost : INFINITY;
    std::vector<double> costs(world, -INFINITY);
    costs[rank] = -mine;
    group->AllReduceMax(costs.data(), world);
    int winner = 0;
    for (int r = 1; r < world; ++r)
      if (costs[r] > costs[winner]) winner = r;
    if (winner == 0 || !std::isfinite(costs[winner])) continue;
    std::string bytes = rank == winner ? SolutionBytes(st.best[k]) : "";
    group->Broadcast(&bytes, winner);
    if (rank == 0) st.best[k] = SolutionFromBytes(bytes);
  }
}

}  // namespace placerl
