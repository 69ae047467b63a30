#include "agents/hdp_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

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

void TrainHdp(DeviceTask& base, encoders::HdpGrouper& grouper, agents::Learner& learner, int placements_per_update,
              uint64_t seed, double budget_s, BudgetClock clock, DeviceTrainingState* st, HdpState* hs,
              const std::function<bool()>& stop, const std::function<void(int64_t, const LogRow&)>& log,
              const std::function<void(const DeviceTrainingState&, double)>& every_update) {
  if (base.fused) throw ConfigError("hdp: the grouper replaces fusion; give it the unfused task");
  if (learner.options().algorithm != agents::Algorithm::kReinforce)
    throw ConfigError("method=hdp trains grouper and placer with one REINFORCE loss: set agent.algorithm=reinforce");
  using Clock = std::chrono::steady_clock;
  const Stopwatch watch(clock);
  auto elapsed = [&] { return st->elapsed_s + watch.Elapsed(); };
  const env::DeviceEnv& units_env = *base.env;
  const env::StaticGraph& units = *units_env.static_graph();
  const double single = units_env.instance().single_device_time;
  const double decay = learner.options().baseline_decay;
  // The out-of-memory time of the environment's oom rule (what a failed episode scores).
  const env::DeviceEnvOptions& eo = units_env.options();
  const double failing_time = eo.oom == "fixed" ? eo.failing_time_s : eo.oom == "relative" ? eo.oom_factor * single
                                                                                             : single + eo.placeto_cap_s;
  agents::RolloutBuffer buffer;
  std::mt19937_64& rng = learner.rng();
  encoders::Policy& policy = learner.policy();
  while (elapsed() < budget_s && !(stop && stop())) {
    buffer.Clear();
    const auto c0 = Clock::now();
    const encoders::Grouping grouping = grouper.Sample(units, &rng);
    std::vector<double> returns;
    double sum_time = 0, sum_speedup = 0;
    int complete = 0, infeasible = 0, oom = 0, placed_groups = 0;
    bool realisable = true;
    DeviceTask task;
    try {
      task = MakeGroupedTask(units_env, grouping.unit_group);
      placed_groups = task.env->episode_length();
    } catch (const ConfigError&) {
      realisable = false;  // a learned group fits no device: HDP's invalid placement
    }
    for (int e = 0; e < placements_per_update && !(stop && stop()); ++e) {
      ++st->episodes;
      if (!realisable) {
        ++infeasible;
        returns.push_back(-units_env.Transform(failing_time));
        continue;
      }
      const double t = PlayDeviceEpisode(policy, task, seed + static_cast<uint64_t>(st->episodes), &rng, false, &buffer);
      returns.push_back(buffer.episodes.back().episode_return);
      if (!std::isfinite(t)) {
        ++infeasible;
        continue;
      }
      ++complete;
      oom += task.last_oom;
      sum_time += t;
      sum_speedup += single / t;
      const double before = st->best_time[0];
      OfferBestDevice(task, 0, t, st);
      if (st->best_time[0] < before) hs->best_groups = placed_groups;
    }
    if (returns.empty()) break;
    const int64_t steps = buffer.size();
    const double collect_s = std::chrono::duration<double>(Clock::now() - c0).count();
    const auto u0 = Clock::now();
    // The grouper's half of (R − b)·(−log p_placer − log p_grouper), normalised as the
    // learner normalises its half (÷ the update's placer decisions; one per placement when none).
    double mean_return = 0;
    for (double r : returns) mean_return += r / static_cast<double>(returns.size());
    if (std::isnan(hs->baseline)) hs->baseline = mean_return;  // the learner starts its b_t the same way
    double weight = 0;
    for (double r : returns) weight += r - hs->baseline;
    weight /= static_cast<double>(steps > 0 ? steps : static_cast<int64_t>(returns.size()));
    const std::map<std::string, double> gstats = grouper.Update(units, {&grouping}, {weight});
    hs->baseline = decay * hs->baseline + (1 - decay) * mean_return;
    agents::Stats stats;
    if (!buffer.transitions.empty()) stats = learner.Update(&buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    st->steps += steps;
    ++st->iteration;
    const bool with_best = std::isfinite(st->best_time[0]);
    LogRow row = {{"time_s", elapsed()},
                        {"charts/episodes", static_cast<double>(st->episodes)},
                        {"charts/episodic_return", mean_return},
                        {"charts/mean_step_time_s", complete ? sum_time / complete : NAN},
                        {"charts/mean_speedup_vs_single", complete ? sum_speedup / complete : NAN},
                        {"charts/best_speedup_vs_single", with_best ? single / st->best_time[0] : NAN},
                        {"charts/best_step_time_s", with_best ? st->best_time[0] : NAN},
                        {"charts/oom_episodes", static_cast<double>(oom)},
                        {"charts/infeasible_episodes", static_cast<double>(infeasible)},
                        {"charts/groups", static_cast<double>(placed_groups)},
                        {"charts/grouper_log_prob", grouping.log_prob},
                        {"charts/grouper_baseline", hs->baseline},
                        {"charts/SPS", steps / std::max(1e-9, collect_s + update_s)},
                        {"perf/collect_s", collect_s},
                        {"perf/update_s", update_s}};
    for (const auto& [key, v] : stats) row.emplace_back(key, v);
    for (const auto& [key, v] : gstats) row.emplace_back(key, v);
    if (log) log(st->iteration, row);
    if (every_update) every_update(*st, elapsed());
  }
  st->elapsed_s = elapsed();
}

}  // namespace placerl
