#include "agents/hdp_training.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "agents/collector.h"
#include "agents/trainer.h"
#include "datasets/util/errors.h"

namespace placerl {

graphs::ComputeGraph GroupedGraph(const env::DeviceEnv& base, const std::vector<int32_t>& unit_group) {
  const env::DeviceInstance& inst = base.instance();
  if (unit_group.size() != inst.order.size())
    throw ConfigError("hdp: a grouping of " + std::to_string(unit_group.size()) + " units for a graph of " +
                      std::to_string(inst.order.size()) + " co-location groups");
  std::vector<int32_t> dense;
  const int32_t used = encoders::CompactGroups(unit_group, &dense);
  graphs::ComputeGraph g = inst.graph;
  for (size_t u = 0; u < dense.size(); ++u)
    for (int op : inst.group_ops[inst.order[u]]) {
      g.coloc_group[op] = dense[u];
      g.colocation[op] = "hdp_" + std::to_string(dense[u]);
    }
  // Group ids numbered by first appearance in op order, as BuildComputeGraph numbers them.
  std::vector<int> renumber(used, -1);
  int next = 0;
  for (int op = 0; op < g.num_ops(); ++op) {
    int& id = renumber[g.coloc_group[op]];
    if (id < 0) id = next++;
    g.coloc_group[op] = id;
  }
  g.num_coloc_groups = used;
  return g;
}

DeviceTask MakeGroupedTask(const env::DeviceEnv& base, const std::vector<int32_t>& unit_group) {
  DeviceTask t;
  env::DeviceEnvOptions o = base.options();
  t.label = o.graph;
  o.graph_data = std::make_shared<const graphs::ComputeGraph>(GroupedGraph(base, unit_group));
  t.env = std::make_unique<env::DeviceEnv>(o);
  return t;
}

namespace {

// HDP as a task of the one trainer: each update's collection samples ONE grouping and places
// its groups; the update is the joint REINFORCE step (the learner's and the grouper's).
class HdpTask : public agents::TrainingTask {
 public:
  HdpTask(DeviceTask& base, encoders::HdpGrouper& grouper, double decay, DeviceTrainingState* st, HdpState* hs)
      : units_env_(*base.env), units_(*units_env_.static_graph()), grouper_(grouper), decay_(decay), st_(st),
        hs_(hs) {
    single_ = units_env_.instance().single_device_time;
    // The out-of-memory time of the environment's oom rule (what a failed episode scores).
    const env::DeviceEnvOptions& eo = units_env_.options();
    failing_time_ = eo.oom == "fixed"      ? eo.failing_time_s
                    : eo.oom == "relative" ? eo.oom_factor * single_
                                           : single_ + eo.placeto_cap_s;
  }

  int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                  const std::function<bool()>& may_start, const std::function<void()>& ended,
                  agents::RolloutBuffer* buffer, agents::TrainingTimes* times) override {
    grouping_ = grouper_.Sample(units_, rng);
    returns_.clear();
    stats_ = {};
    placed_groups_ = 0;
    DeviceTask task;
    try {
      task = MakeGroupedTask(units_env_, grouping_.unit_group);
      placed_groups_ = task.env->episode_length();
    } catch (const ConfigError&) {  // a learned group fits no device: HDP's invalid placement
      int32_t played = 0;
      for (; played < episodes && !(may_start && !may_start()); ++played) {
        ++stats_.infeasible;
        returns_.push_back(-units_env_.Transform(failing_time_));
        if (ended) ended();
      }
      return played;
    }
    // HDP's placement e of an update resets with seed + (episodes before it) + 1.
    agents::Collector collector({task.env.get()}, 1);
    const int32_t played = collector.Collect(
        policy, rng, episodes, first_seed + 1, may_start,
        [&](size_t, env::Environment&, bool infeasible) {
          const double t = infeasible ? INFINITY : task.Score();
          if (ended) ended();
          if (!stats_.Add(task, t)) return;
          const double before = st_->best_time[0];
          OfferBestDevice(task, 0, t, st_);
          if (st_->best_time[0] < before) hs_->best_groups = placed_groups_;
        },
        buffer, times);
    for (const agents::EpisodeSummary& ep : buffer->episodes) returns_.push_back(ep.episode_return);
    return played;
  }

  bool Learnable(const agents::RolloutBuffer&, int32_t played) const override { return played > 0; }

  LogRow Update(agents::Learner& learner, agents::RolloutBuffer* buffer) override {
    // The grouper's half of (R − b)·(−log p_placer − log p_grouper), normalised as the
    // learner normalises its half (÷ the update's placer decisions; one per placement when none).
    const int64_t steps = buffer->size();
    mean_return_ = 0;
    for (double r : returns_) mean_return_ += r / static_cast<double>(returns_.size());
    if (std::isnan(hs_->baseline)) hs_->baseline = mean_return_;  // the learner starts its b_t the same way
    double weight = 0;
    for (double r : returns_) weight += r - hs_->baseline;
    weight /= static_cast<double>(steps > 0 ? steps : static_cast<int64_t>(returns_.size()));
    const std::map<std::string, double> gstats = grouper_.Update(units_, {&grouping_}, {weight});
    hs_->baseline = decay_ * hs_->baseline + (1 - decay_) * mean_return_;
    LogRow row;
    if (!buffer->transitions.empty()) row = TrainingTask::Update(learner, buffer);
    row.insert(row.end(), gstats.begin(), gstats.end());
    return row;
  }

  void Columns(const agents::RolloutBuffer&, LogRow* row) override {
    const bool with_best = std::isfinite(st_->best_time[0]);
    stats_.AppendColumns(mean_return_, with_best ? single_ / st_->best_time[0] : NAN,
                         with_best ? st_->best_time[0] : NAN, row);
    row->insert(row->end(), {{"charts/groups", static_cast<double>(placed_groups_)},
                             {"charts/grouper_log_prob", grouping_.log_prob},
                             {"charts/grouper_baseline", hs_->baseline}});
  }

 private:
  const env::DeviceEnv& units_env_;
  const env::StaticGraph& units_;
  encoders::HdpGrouper& grouper_;
  double decay_, single_ = 0, failing_time_ = 0;
  DeviceTrainingState* st_;
  HdpState* hs_;
  encoders::Grouping grouping_;
  std::vector<double> returns_;
  double mean_return_ = 0;
  DeviceUpdateStats stats_;
  int placed_groups_ = 0;
};

}  // namespace

void TrainHdp(DeviceTask& base, encoders::HdpGrouper& grouper, agents::Learner& learner, int placements_per_update,
              uint64_t seed, double budget_s, BudgetClock clock, DeviceTrainingState* st, HdpState* hs,
              const std::function<bool()>& stop, const std::function<void(int64_t, const LogRow&)>& log,
              const std::function<void(const DeviceTrainingState&, double)>& every_update) {
  if (base.fused) throw ConfigError("hdp: the grouper replaces fusion; give it the unfused task");
  if (learner.options().algorithm != agents::Algorithm::kReinforce)
    throw ConfigError("method=hdp trains grouper and placer with one REINFORCE loss: set agent.algorithm=reinforce");
  agents::TrainerOptions o;
  o.episodes_per_update = placements_per_update;
  o.seed = seed;
  o.budget_s = budget_s;
  o.clock = clock;
  HdpTask task(base, grouper, learner.options().baseline_decay, st, hs);
  agents::Train(task, learner, o, st, nullptr, stop, log, [&](double elapsed_s) {
    if (every_update) every_update(*st, elapsed_s);
  });
}

}  // namespace placerl
