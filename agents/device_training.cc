#include "agents/device_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <unistd.h>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"

namespace placerl {

std::vector<int> DeviceTask::OpPlacement() const {
  return fused ? graphs::ExpandPlacement(*fused, env->OpPlacement()) : env->OpPlacement();
}

double DeviceTask::Score() {
  if (!fused) {
    last_oom = env->info_value("oom") != 0;
    return env->info_value("effective_time_s");
  }
  const perf::SimResult& r = sim->Run(OpPlacement());
  last_oom = r.oom;
  return scoring->EffectiveTime(r);
}

DeviceTask MakeDeviceTask(const env::DeviceEnvOptions& options, int fuse_above_groups, int fuse_target_groups,
                          double fuse_max_group_fraction) {
  env::CheckFuseMaxGroupFraction(fuse_max_group_fraction);
  DeviceTask t;
  t.label = options.graph;
  t.env = std::make_unique<env::DeviceEnv>(options);
  if (fuse_above_groups <= 0 || t.env->episode_length() <= fuse_above_groups) return t;
  t.scoring = std::move(t.env);
  const env::DeviceInstance& original = t.scoring->instance();
  graphs::FusionOptions fo;
  fo.target_groups = fuse_target_groups;
  // The memory cap: only where a mask refuses devices by memory (device_training.h).
  graphs::OpLiveRanges ranges;
  if (options.memory_mask) fo.max_group_bytes = env::FuseMaxGroupBytes(original.machine, fuse_max_group_fraction);
  if (fo.max_group_bytes > 0 && options.memory_estimate == "lifetime") {
    ranges = env::DeviceEnv::LiveRanges(original.graph, original.machine, options.memory_buckets);
    fo.live_ranges = &ranges;
  }
  t.fused = std::make_shared<const graphs::FusedGraph>(graphs::FuseGraph(original.graph, fo));
  // The device env reads graphs from specs or files: the coarse graph goes through a temporary file.
  static int counter = 0;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("placerl_fused_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".graph"))
                               .string();
  graphs::WriteComputeGraph(path, t.fused->coarse);
  env::DeviceEnvOptions fo_env = options;
  fo_env.graph = path;
  if (options.memory_estimate == "lifetime") {  // count memory on the original ops (fused activations too)
    fo_env.memory_graph = std::make_shared<const graphs::ComputeGraph>(t.scoring->instance().graph);
    fo_env.memory_op_map = t.fused->op_to_node;
  }
  try {
    t.env = std::make_unique<env::DeviceEnv>(fo_env);
  } catch (...) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);
  t.sim = std::make_unique<perf::Simulator>(t.scoring->instance().graph, t.scoring->instance().machine.sim);
  return t;
}

double PlayDeviceEpisode(encoders::Policy& policy, DeviceTask& task, uint64_t seed, std::mt19937_64* rng,
                         bool greedy, agents::RolloutBuffer* buffer) {
  env::DeviceEnv& env = *task.env;
  env.Reset(seed);
  bool infeasible = false;
  while (!env.done()) {
    const encoders::PolicyStep a = policy.Act(env, rng, greedy);
    if (buffer) buffer->Record(env, a);
    const env::StepResult r = env.Step(a.action);
    infeasible |= r.infeasible;
    if (buffer) buffer->SetOutcome(env, r.reward, r.done, r.infeasible);
  }
  return infeasible ? INFINITY : task.Score();
}

void OfferBestDevice(const DeviceTask& task, size_t k, double time, DeviceTrainingState* st) {
  if (!(time < st->best_time[k])) return;
  st->best_time[k] = time;
  st->best[k] = task.OpPlacement();
}

void TrainDevice(std::vector<DeviceTask>& tasks, agents::Learner& learner, int episodes_per_update,
                 uint64_t seed, double budget_s, DeviceTrainingState* st, const std::function<bool()>& stop,
                 const std::function<void(int64_t, const LogRow&)>& log,
                 const std::function<void(const DeviceTrainingState&, double)>& every_update, BudgetClock clock) {
  using Clock = std::chrono::steady_clock;
  const Stopwatch watch(clock);
  auto elapsed = [&] { return st->elapsed_s + watch.Elapsed(); };
  agents::RolloutBuffer buffer;
  std::mt19937_64& rng = learner.rng();
  encoders::Policy& policy = learner.policy();
  while (elapsed() < budget_s && !(stop && stop())) {
    buffer.Clear();
    const auto c0 = Clock::now();
    // Graphs differ in scale: the update's quality is the mean speed-up over single device.
    double sum_time = 0, sum_speedup = 0;
    int complete = 0, infeasible = 0, oom = 0;
    for (int e = 0; e < episodes_per_update && !(stop && stop()); ++e) {
      const size_t k = tasks.size() == 1 ? 0 : std::uniform_int_distribution<size_t>(0, tasks.size() - 1)(rng);
      DeviceTask& task = tasks[k];
      const double t = PlayDeviceEpisode(policy, task, seed + static_cast<uint64_t>(st->episodes), &rng, false, &buffer);
      ++st->episodes;
      if (!std::isfinite(t)) {
        ++infeasible;
        continue;
      }
      ++complete;
      const double single = task.original().instance().single_device_time;
      oom += task.last_oom;
      sum_time += t;
      sum_speedup += single / t;
      OfferBestDevice(task, k, t, st);
    }
    if (buffer.transitions.empty()) break;
    const int64_t steps = buffer.size();
    const double collect_s = std::chrono::duration<double>(Clock::now() - c0).count();
    const auto u0 = Clock::now();
    const agents::Stats stats = learner.Update(&buffer);
    const double update_s = std::chrono::duration<double>(Clock::now() - u0).count();
    st->steps += steps;
    ++st->iteration;
    double best_speedup = 0;
    int with_best = 0;
    for (size_t k = 0; k < tasks.size(); ++k)
      if (std::isfinite(st->best_time[k])) best_speedup += tasks[k].original().instance().single_device_time / st->best_time[k], ++with_best;
    LogRow row = {{"time_s", elapsed()},
                        {"charts/episodes", static_cast<double>(st->episodes)},
                        {"charts/episodic_return", buffer.MeanEpisodeReturn()},
                        {"charts/mean_step_time_s", complete ? sum_time / complete : NAN},
                        {"charts/mean_speedup_vs_single", complete ? sum_speedup / complete : NAN},
                        {"charts/best_speedup_vs_single", with_best ? best_speedup / with_best : NAN},
                        {"charts/best_step_time_s", tasks.size() == 1 && with_best ? st->best_time[0] : NAN},
                        {"charts/oom_episodes", static_cast<double>(oom)},
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
