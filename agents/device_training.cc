#include "agents/device_training.h"

#include <algorithm>
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
  // A start placer (mode=iterative, start=heft, heft_ls, …) runs where the episodes run: on the fused
  // graph when the graph is fused. So the environment that decides (and, fused, scores on the
  // original graph) is built without it, and rebuilt with it only when the graph is not fused —
  // otherwise the start would run (and be charged) twice.
  const bool placer_start = options.mode == "iterative" && options.start != "single" &&
                            options.start != "random" && options.start != "round_robin";
  env::DeviceEnvOptions probe = options;
  if (fuse_above_groups > 0 && placer_start) probe.start = "single";
  t.env = std::make_unique<env::DeviceEnv>(probe);
  // The graph's groups decide, not the episode's length (episode_groups=K makes episodes K long).
  if (fuse_above_groups <= 0 || t.env->num_groups() <= fuse_above_groups) {
    if (probe.start != options.start) t.env = std::make_unique<env::DeviceEnv>(options);
    return t;
  }
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
  const bool infeasible = agents::PlayEpisode(policy, *task.env, seed, rng, greedy, buffer);
  return infeasible ? INFINITY : task.Score();
}

bool DeviceUpdateStats::Add(const DeviceTask& task, double time) {
  if (!std::isfinite(time)) {
    ++infeasible;
    return false;
  }
  ++complete;
  oom += task.last_oom;
  sum_time += time;
  sum_speedup += task.original().instance().single_device_time / time;
  return true;
}

void DeviceUpdateStats::AppendColumns(double episodic_return, double best_speedup, double best_time,
                                      LogRow* row) const {
  row->insert(row->end(), {{"charts/episodic_return", episodic_return},
                           {"charts/mean_step_time_s", complete ? sum_time / complete : NAN},
                           {"charts/mean_speedup_vs_single", complete ? sum_speedup / complete : NAN},
                           {"charts/best_speedup_vs_single", best_speedup},
                           {"charts/best_step_time_s", best_time},
                           {"charts/oom_episodes", static_cast<double>(oom)},
                           {"charts/infeasible_episodes", static_cast<double>(infeasible)}});
}

void OfferBestDevice(const DeviceTask& task, size_t k, double time, DeviceTrainingState* st) {
  if (!(time < st->best_time[k])) return;
  st->best_time[k] = time;
  st->best[k] = task.OpPlacement();
}

namespace {

// Episodes over the tasks' environments (one copy each: the score reads the task's own), each
// complete placement offered as its graph's best; graphs differ in scale, so the update's quality
// is the mean speed-up over a single device.
class DeviceTrainingTask : public agents::CollectorTask {
 public:
  DeviceTrainingTask(std::vector<DeviceTask>& tasks, DeviceTrainingState* st)
      : agents::CollectorTask(Designs(tasks), 1), tasks_(tasks), st_(st) {}

  void Columns(const agents::RolloutBuffer& buffer, LogRow* row) override {
    double best_speedup = 0;
    int with_best = 0;
    for (size_t k = 0; k < tasks_.size(); ++k)
      if (std::isfinite(st_->best_time[k]))
        best_speedup += tasks_[k].original().instance().single_device_time / st_->best_time[k], ++with_best;
    stats_.AppendColumns(buffer.MeanEpisodeReturn(), with_best ? best_speedup / with_best : NAN,
                         tasks_.size() == 1 && with_best ? st_->best_time[0] : NAN, row);
    stats_ = {};
  }

 protected:
  void EpisodeEnded(size_t k, env::Environment&, bool infeasible) override {
    DeviceTask& task = tasks_[k];
    const double t = infeasible ? INFINITY : task.Score();
    if (stats_.Add(task, t)) OfferBestDevice(task, k, t, st_);
  }

 private:
  static std::vector<env::Environment*> Designs(std::vector<DeviceTask>& tasks) {
    std::vector<env::Environment*> d;
    for (DeviceTask& t : tasks) d.push_back(t.env.get());
    return d;
  }
  std::vector<DeviceTask>& tasks_;
  DeviceTrainingState* st_;
  DeviceUpdateStats stats_;
};

}  // namespace

void TrainDevice(std::vector<DeviceTask>& tasks, agents::Learner& learner, int episodes_per_update,
                 uint64_t seed, double budget_s, DeviceTrainingState* st, const std::function<bool()>& stop,
                 const std::function<void(int64_t, const LogRow&)>& log,
                 const std::function<void(const DeviceTrainingState&, double)>& every_update, BudgetClock clock) {
  agents::TrainerOptions o;
  o.episodes_per_update = episodes_per_update;
  o.seed = seed;
  o.budget_s = budget_s;
  o.clock = clock;
  DeviceTrainingTask task(tasks, st);
  agents::Train(task, learner, o, st, nullptr, stop, log, [&](double elapsed_s) {
    if (every_update) every_update(*st, elapsed_s);
  });
}

}  // namespace placerl
