#include "experiments/lib/torch/device_programs.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <filesystem>

#include <unistd.h>

#include "agents/device_training.h"
#include "agents/hdp_training.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/proto/chip_placement.pb.h"
#include "datasets/proto/device_placement.pb.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "experiments/lib/tensorboard.h"
#include "datasets/util/stop_signal.h"
#include "experiments/lib/place_baseline_device.h"
#include "experiments/lib/torch/training_state.h"

namespace placerl {

std::vector<std::string> SplitGraphSpecs(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

namespace {

using nlohmann::json;

// Checks of meaning of the device environment's settings (place-train's and place's `env`).
void CheckEnvConfig(const config::DeviceEnvConfig& e) {
  env::CheckFuseMaxGroupFraction(e.fuse_max_group_fraction());
  if (e.fuse_above_groups() < 0) throw ConfigError("fuse_above_groups must be >= 0 (0 = never fuse)");
  if (e.fuse_above_groups() > 0 && e.fuse_target_groups() < 1) throw ConfigError("fuse_target_groups must be >= 1");
  if (e.reward() != "sqrt" && e.reward() != "id" && e.reward() != "log" && e.reward() != "relative")
    throw ConfigError("reward must be sqrt, id, log or relative (got '" + e.reward() + "')");
  if (e.oom() != "relative" && e.oom() != "fixed" && e.oom() != "placeto")
    throw ConfigError("oom must be relative, fixed or placeto (got '" + e.oom() + "')");
  if (!std::isfinite(e.oom_factor()) || e.oom_factor() < 0) throw ConfigError("oom_factor must be >= 0");
}

// The episode settings of place-train's and place's configs (the same keys in both; "" = the
// environment's defaults, mode "" = oneshot; docs/device_regulator.md).
template <typename Config>
void SetEpisode(const Config& c, env::DeviceEnvOptions* eo) {
  device_baseline::RegisterDeviceStartPlacers();
  eo->mode = c.mode().empty() ? "oneshot" : c.mode();
  if (!c.start().empty()) eo->start = c.start();
  if (!c.episode_start().empty()) eo->episode_start = c.episode_start();
  if (!c.episode_result().empty()) eo->episode_result = c.episode_result();
  eo->episode_groups = c.episode_groups();
  if (c.start_minutes() != 0) eo->start_minutes = c.start_minutes();  // the environment checks the range
}

// What the tasks' start placers cost on `clock` (start=heft_ls searches for start_minutes; a list
// scheduler takes milliseconds): the environments run them when they are built, before a trainer's
// clock starts, so the runs charge it to their budgets.
double StartPlacerSeconds(const std::vector<DeviceTask>& tasks, BudgetClock clock) {
  double s = 0;
  for (const DeviceTask& t : tasks)
    for (const env::DeviceEnv* e : {t.env.get(), t.scoring.get()})
      if (e) s += clock == BudgetClock::kCpu ? e->instance().start_cpu_s : e->instance().start_wall_s;
  return s;
}

// A start placer's placement is the first complete placement a run has: offered as each graph's
// best before any episode (so a budget the start spent entirely still has a result).
void OfferStartPlacements(std::vector<DeviceTask>& tasks, DeviceTrainingState* st) {
  for (size_t k = 0; k < tasks.size(); ++k)
    if (!tasks[k].env->instance().start_nodes.empty()) OfferBestDevice(tasks[k], k, tasks[k].Score(), st);
}

// The task of `graph` on `machine` in the environment `e` ("" features / order / memory_estimate:
// basic / topological / all_outputs) with the episode settings of `episode` (place-train's or
// place's config; nullptr = one-shot episodes).
template <typename Config = config::DevicePlaceTrainConfig>
DeviceTask MakeTask(const std::string& graph, const std::string& machine, const config::DeviceEnvConfig& e,
                    const Config* episode = nullptr) {
  env::DeviceEnvOptions eo;
  if (episode) SetEpisode(*episode, &eo);
  eo.graph = graph;
  eo.machine = machine;
  if (!episode) eo.mode = "oneshot";
  eo.memory_mask = e.memory_mask();
  eo.reward = e.reward();
  eo.oom = e.oom();
  eo.oom_factor = e.oom_factor();
  eo.features = e.features().empty() ? "basic" : e.features();
  eo.order = e.order().empty() ? "topological" : e.order();
  eo.memory_estimate = e.memory_estimate().empty() ? "all_outputs" : e.memory_estimate();
  return MakeDeviceTask(eo, e.fuse_above_groups(), e.fuse_target_groups(), e.fuse_max_group_fraction());
}

// best.placement (the text perf-model simulate --placement reads), the timeline picture, and
// the graph's entry of result.json: the placement simulated again from scratch.
json WriteDeviceBest(run::RunDirectory& dir, const DeviceTask& task, const std::vector<int>& placement,
                     const std::string& stem, const std::string& who) {
  const env::DeviceEnv& env = task.original();
  const env::DeviceInstance& inst = env.instance();
  const graphs::ComputeGraph& g = inst.graph;
  const perf::Machine& m = inst.machine;
  json j = {{"graph", env.options().graph}, {"ops", g.num_ops()}, {"groups", env.episode_length()},
            {"placed_groups", task.env->episode_length()}, {"fused", task.fused != nullptr},
            {"single_device_time_s", inst.single_device_time}};
  if (placement.empty()) {
    j["step_time_s"] = nullptr;
    return j;
  }
  perf::Simulator sim(g, m.sim);
  const perf::SimResult r = sim.Run(placement);
  std::string devices;
  for (int d = 0; d < m.num_devices(); ++d) devices += (d ? ", " : "") + std::to_string(d) + "=" + m.device_names[d];
  dir.WriteFile(stem + ".placement", "# " + who + "\n# graph " + env.options().graph + "\n# machine " + m.spec + " (" +
                                         std::to_string(m.num_devices()) + " devices: " + devices + ")\n" +
                                         graphs::PlacementToText(g, placement));
  const std::string title = who + " on " + env.options().graph + ", " + m.spec + ": step " +
                            device_baseline::StepTimeLabel(r.makespan) + (r.oom ? " (OOM)" : "");
  device_baseline::WriteTimelinePicture(dir.PicturePath(stem), title, g, m, placement, sim, r);
  json per_device = json::array();
  for (int d = 0; d < m.num_devices(); ++d)
    per_device.push_back({{"name", m.device_names[d]}, {"utilisation", r.utilisation[d]}, {"peak_memory_bytes", r.peak_memory[d]}});
  j["placement"] = stem + ".placement";
  j["step_time_s"] = r.makespan;
  j["effective_time_s"] = env.EffectiveTime(r);
  j["oom"] = r.oom;
  j["speedup_vs_single"] = r.makespan > 0 ? inst.single_device_time / r.makespan : 0.0;
  j["bytes_transferred"] = r.bytes_transferred;
  j["devices"] = per_device;
  return j;
}

std::string Ratio(double single, double t) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3gx", t > 0 ? single / t : 0.0);
  return b;
}

// ------------------------------------------------------------------ place-train --env device

struct TrainOptions {
  std::string env = "device", machine, algorithm, method, clock;
  std::vector<std::string> graphs;
  double minutes = 0, checkpoint_minutes = 0;
  int64_t seed = -1;
  int64_t max_updates = 0;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
  int test_kill_after_checkpoints = 0;  // hidden: SIGKILL right after this many checkpoints (tests)
};

config::DevicePlaceTrainConfig DefaultTrainConfig() {
  config::DevicePlaceTrainConfig c;
  c.set_machine("k80(gpus=2)");
  c.mutable_run()->set_minutes(10);
  c.mutable_run()->set_seed(1);
  c.set_episodes_per_update(16);
  c.mutable_run()->set_checkpoint_minutes(5);
  config::DeviceEnvConfig& e = *c.mutable_env();
  e.set_memory_mask(false);
  e.set_reward("sqrt");
  e.set_oom("relative");
  e.set_oom_factor(10);
  e.set_fuse_above_groups(300);
  e.set_fuse_target_groups(128);
  e.set_features("basic");
  e.set_order("topological");
  e.set_memory_estimate("lifetime");  // with memory_mask=true (docs/device_placement.md "Memory mask")
  e.set_fuse_max_group_fraction(0.5);  // with memory_mask=true (docs/device_placement.md "Memory cap of fusion")
  c.mutable_hdp()->set_num_groups(0);  // HDP's TF code: min(256, 20 x devices)
  c.mutable_hdp()->set_hidden_dim(64);
  FillDefaultPolicyConfig(c.mutable_policy());
  FillDefaultAgentConfig(c.mutable_agent());
  return c;
}

// The run's config: a resumed run's config.pbtxt (its directory opened into `dir`) with the
// budget flags over it, or the defaults, --config, the flags and --set of a new run.
config::DevicePlaceTrainConfig ResolveTrainConfig(const TrainOptions& o, int argc, char** argv,
                                                  std::unique_ptr<run::RunDirectory>* dir_ptr) {
  std::unique_ptr<run::RunDirectory>& dir = *dir_ptr;
  config::DevicePlaceTrainConfig cfg = DefaultTrainConfig();
  if (!o.dir.resume.empty()) {
    if (!o.graphs.empty() || !o.machine.empty() || o.seed >= 0 || !o.algorithm.empty() || !o.method.empty() ||
        !o.clock.empty())
      throw ConfigError("--resume keeps the run's graphs, machine, seed, method, algorithm and clock; change the budget with --minutes");
    dir = std::make_unique<run::RunDirectory>(run::ResolveRunDirFlags(o.dir));
    // A run started before fuse_max_group_fraction existed has no such line: it keeps its fusion
    // (uncapped); config.pbtxt lists every field, so runs since then have the line.
    cfg.mutable_env()->set_fuse_max_group_fraction(0);
    // The budget flags as --set under the user's: config.pbtxt records the new budget.
    run::RunDirFlags flags = o.dir;
    const std::vector<std::string> budget = run::BudgetOverrides(o.minutes, o.checkpoint_minutes, "run.");
    flags.sets.insert(flags.sets.begin(), budget.begin(), budget.end());
    run::ResolveRunConfig(flags, *dir, &cfg, run::CommandLineText(argc, argv), run::TrainingRunResumeChangeable());
  } else {
    if (!o.dir.config.empty()) run::MergeConfigFile(o.dir.config, &cfg);
    if (!o.graphs.empty()) {
      cfg.clear_graphs();
      for (const std::string& g : o.graphs)
        for (const std::string& s : SplitGraphSpecs(g)) cfg.add_graphs(s);
    }
    if (!o.machine.empty()) cfg.set_machine(o.machine);
    if (o.minutes > 0) cfg.mutable_run()->set_minutes(o.minutes);
    if (o.seed >= 0) cfg.mutable_run()->set_seed(static_cast<uint64_t>(o.seed));
    if (!o.algorithm.empty()) cfg.mutable_agent()->set_algorithm(o.algorithm);
    if (!o.method.empty()) {
      // --method ppo | reinforce: the policy alone, with that algorithm; hdp: grouper + placer (REINFORCE).
      const std::string algorithm = o.method == "hdp" ? "reinforce" : o.method;
      if (!o.algorithm.empty() && o.algorithm != algorithm)
        throw ConfigError("--method " + o.method + " trains with " + algorithm + ", not --algorithm " + o.algorithm);
      cfg.set_method(o.method == "hdp" ? "hdp" : "");
      cfg.mutable_agent()->set_algorithm(algorithm);
    }
    if (!o.clock.empty()) cfg.mutable_run()->set_clock(o.clock);
    if (o.checkpoint_minutes > 0) cfg.mutable_run()->set_checkpoint_minutes(o.checkpoint_minutes);
    run::ApplyOverrides(o.dir.sets, &cfg);
    run::MakeInputPathsAbsolute(&cfg);  // as config.pbtxt has them: a resumed run names its graphs alike
  }
  return cfg;
}

// Checks of meaning (ConfigError naming the field).
void CheckTrainConfig(const config::DevicePlaceTrainConfig& cfg) {
  if (cfg.graphs().empty()) throw ConfigError("give at least one graph (--graph SPEC[,SPEC2,...])");
  if (!std::isfinite(cfg.run().minutes()) || cfg.run().minutes() <= 0 || cfg.run().minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("minutes must be in (0, a week]");
  if (cfg.episodes_per_update() < 1 || cfg.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  if (!std::isfinite(cfg.run().checkpoint_minutes()) || cfg.run().checkpoint_minutes() <= 0) throw ConfigError("checkpoint_minutes must be > 0");
  CheckPolicyConfig(cfg.policy());
  CheckAgentConfig(cfg.agent());
  CheckEnvConfig(cfg.env());
  (void)ParseBudgetClock(cfg.run().clock());  // throws on anything but wall | cpu
  const bool hdp = cfg.method() == "hdp";
  if (!hdp && !cfg.method().empty())
    throw ConfigError("method must be hdp or empty (the policy alone, agent.algorithm), got '" + cfg.method() + "'");
  if (hdp) {
    if (cfg.agent().algorithm() != "reinforce")
      throw ConfigError("method=hdp trains grouper and placer with one REINFORCE loss: agent.algorithm must be reinforce");
    if (cfg.graphs_size() != 1) throw ConfigError("method=hdp learns the grouping of one graph: give exactly one --graph");
    if (cfg.hdp().num_groups() < 0 || cfg.hdp().num_groups() > 65536)
      throw ConfigError("hdp.num_groups must be in [0, 65536] (0 = min(256, 20 x devices))");
    if (cfg.hdp().hidden_dim() < 1 || cfg.hdp().hidden_dim() > 65536) throw ConfigError("hdp.hidden_dim must be in [1, 65536]");
    if (!cfg.mode().empty() && cfg.mode() != "oneshot") throw ConfigError("method=hdp needs mode=oneshot");
    if (cfg.env().features() == "heft")
      throw ConfigError("method=hdp needs features=basic (features=heft's estimates are per co-location group of the graph, not per learned group)");
  }
}

// method=hdp: the grouper (learned with the placer's learner settings).
std::unique_ptr<encoders::HdpGrouper> MakeGrouper(const config::DevicePlaceTrainConfig& cfg, const DeviceTask& task,
                                                  const agents::AgentOptions& ao) {
  std::unique_ptr<encoders::HdpGrouper> grouper;
  encoders::HdpGrouperOptions go;
  const int devices = task.env->num_actions();
  go.num_groups = cfg.hdp().num_groups() > 0 ? cfg.hdp().num_groups() : std::min(256, 20 * devices);
  go.hidden_dim = cfg.hdp().hidden_dim();
  go.init_seed = cfg.run().seed() + 1;
  go.learning_rate = ao.learning_rate;
  go.adam_eps = ao.adam_eps;
  go.max_grad_norm = ao.max_grad_norm;
  go.entropy_coef = ao.entropy_coef;
  grouper = std::make_unique<encoders::HdpGrouper>(go, task.env->static_graph()->node_feature_dim);
  return grouper;
}

// Resumed: the learner (weights, optimiser, sampling RNG), the grouper, the counters, the bests
// and the best op placement per graph from the checkpoint (state.json's for checkpoints written
// without the state inside): the run continues exactly.
void RestoreDeviceTraining(run::RunDirectory* dir, const config::DevicePlaceTrainConfig& cfg,
                           const std::vector<DeviceTask>& envs, agents::Learner* learner_ptr,
                           encoders::HdpGrouper* grouper, HdpState* hdp_state, DeviceTrainingState* state) {
  agents::Learner& learner = *learner_ptr;
  HdpState& hs = *hdp_state;
  DeviceTrainingState& st = *state;
  const bool hdp = grouper != nullptr;
  const std::string ckpt = dir->CheckpointPath("latest.ckpt");
  const std::string state_path = dir->CheckpointPath("state.json");
  const std::string grouper_path = dir->CheckpointPath("grouper.ckpt");
  run::ResumePoint resume = run::ReadResumePoint(*dir);
  agents::Learner::Extras extras;
  learner.LoadCheckpointBytes(resume.checkpoint_bytes, ckpt, &extras);  // errors name the run's file
  resume.state = run::ResumeState(extras, resume.state, ckpt);
  if (hdp) {
    const auto g = extras.find("hdp_grouper");  // (older runs: grouper.ckpt beside it)
    if (g != extras.end()) {
      grouper->LoadBytes(g->second, ckpt + " (grouper)");
    } else {
      grouper->Load(grouper_path);
    }
    hs.baseline = resume.state.value("hdp_baseline", json(nullptr)).is_number()
                      ? resume.state["hdp_baseline"].get<double>() : NAN;
    hs.best_groups = resume.state.value("hdp_best_groups", 0);
  }
  const run::TrainingProgress p =
      run::ParseTrainingProgress(resume.state, "best_time", envs.size(), state_path);
  static_cast<agents::TrainingProgress&>(st) = p;  // the counters
  st.best_time = p.best;
  const json best = resume.state.value("best_placement", json::array());
  for (size_t k = 0; k < envs.size() && k < best.size(); ++k) {
    if (!std::isfinite(st.best_time[k])) continue;
    std::vector<int> placement = best[k].get<std::vector<int>>();
    const env::DeviceInstance& inst = envs[k].original().instance();
    bool valid = placement.size() == static_cast<size_t>(inst.graph.num_ops());
    for (int d : placement) valid &= d >= 0 && d < inst.machine.num_devices();
    if (!valid) throw ConfigError(state_path + ": best_placement " + std::to_string(k) + " does not fit " + cfg.graphs(static_cast<int>(k)));
    st.best[k] = std::move(placement);
  }
  dir->ResumeFrom(st.iteration + 1);  // rows logged after the checkpoint are dropped
}

// The best placements, the curve, result.json (exit 2 when a graph has no complete placement
// or its best does not fit, cli.h ReportInfeasible) and the summary lines.
int WriteDeviceTrainingResult(const TrainOptions& o, const config::DevicePlaceTrainConfig& cfg,
                              const std::vector<DeviceTask>& envs, const DeviceTrainingState& st, const HdpState& hs,
                              bool hdp, BudgetClock clock, run::RunDirectory* dir, const std::string& ckpt) {
  json graphs = json::array();
  for (size_t k = 0; k < envs.size(); ++k) {
    const std::string stem = envs.size() == 1 ? "best" : "best_" + std::to_string(k);
    graphs.push_back(WriteDeviceBest(*dir, envs[k], st.best[k], stem,
                                     hdp ? "place-train --env device --method hdp" : "place-train --env device"));
    if (hdp) graphs.back()["hdp_groups"] = hs.best_groups;  // learned groups of the best placement
  }
  if (st.iteration > 0) {
    viz::PlotOptions plot;
    plot.title = "place-train --env device: speed-up over single device";
    plot.x_label = "time (s)";
    plot.y_label = "single-device step time / step time";
    dir->PlotMetrics("curve", "time_s", {"charts/best_speedup_vs_single", "charts/mean_speedup_vs_single"}, plot,
                    {"best so far", "mean of the update's episodes"});
  }
  json j = {{"env", "device"},
            {"machine", envs[0].original().instance().machine.spec},
            {"graphs", graphs},
            {"episodes", st.episodes},
            {"updates", st.iteration},
            {"steps", st.steps},
            {"seconds", st.elapsed_s},
            {"start_placer_seconds", StartPlacerSeconds(envs, clock)},
            {"algorithm", cfg.agent().algorithm()},
            {"method", hdp ? "hdp" : cfg.agent().algorithm()},
            {"clock", BudgetClockName(clock)},
            {"checkpoint", ckpt},
            {"budget_minutes", cfg.run().minutes()},
            {"max_updates", o.max_updates > 0 ? json(o.max_updates) : json(nullptr)},
            {"stopped_by_signal", run::StopRequested()},
            {"out", dir->path()}};
  // A graph without a complete placement, or whose best does not fit in memory: infeasible
  // (exit 2, cli.h ReportInfeasible; the checkpoints stay).
  std::string infeasible;
  std::vector<std::string> null_costs;
  for (size_t k = 0; k < envs.size(); ++k) {
    const json& g = graphs[k];
    if (st.best[k].empty()) {
      infeasible += std::string(infeasible.empty() ? "" : "; ") + cfg.graphs(static_cast<int>(k)) + ": no complete placement";
      for (const char* c : {"step_time_s", "effective_time_s", "oom", "speedup_vs_single"})
        null_costs.push_back("/graphs/" + std::to_string(k) + "/" + c);
    } else if (g.value("oom", false)) {
      infeasible += std::string(infeasible.empty() ? "" : "; ") + cfg.graphs(static_cast<int>(k)) +
                    ": the best placement does not fit the devices' memory";
    }
  }
  if (!infeasible.empty()) {
    InfeasibleRun bad;
    bad.reason = infeasible;
    bad.document = j;
    bad.null_costs = null_costs;
    bad.out = dir->path();
    return ReportInfeasible("place-train", bad, o.json, [&](const std::string& t) { dir->WriteFile("result.json", t); });
  }
  MarkFeasible(&j);
  dir->WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("place-train --env device: %lld episodes, %lld updates in %.1f s\n", static_cast<long long>(st.episodes),
                static_cast<long long>(st.iteration), st.elapsed_s);
    for (size_t k = 0; k < envs.size(); ++k)
      if (!st.best[k].empty())
        std::printf("  %s: step time %s (%s single device)%s\n", cfg.graphs(static_cast<int>(k)).c_str(),
                    device_baseline::StepTimeLabel(graphs[k]["step_time_s"].get<double>()).c_str(),
                    Ratio(envs[k].original().instance().single_device_time, graphs[k]["step_time_s"].get<double>()).c_str(),
                    graphs[k]["oom"].get<bool>() ? " OUT OF MEMORY" : "");
    std::printf("wrote %s (best.placement, pictures, metrics.csv, TensorBoard events, checkpoints/, result.json)\n",
                dir->path().c_str());
  }
  return kExitOk;
}

// Config (resolved, checked) → graphs → policy, learner (and HDP's grouper) → run directory
// (resumed: the checkpoint) → training with checkpoints → best placements, result.json.
int RunPlaceTrain(const TrainOptions& o, int argc, char** argv) {
  // A resumed run (--resume DIR) reads DIR/config.pbtxt, as the chip path does; a new run's
  // directory is created once its graphs have loaded (bad input leaves nothing).
  std::unique_ptr<run::RunDirectory> dir;
  const config::DevicePlaceTrainConfig cfg = [&] {
    config::DevicePlaceTrainConfig c = ResolveTrainConfig(o, argc, argv, &dir);
    CheckTrainConfig(c);
    return c;
  }();
  const BudgetClock clock = ParseBudgetClock(cfg.run().clock());
  const bool hdp = cfg.method() == "hdp";
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());

  // The graphs before the directory: bad input leaves nothing. HDP: the grouper replaces fusion.
  config::DeviceEnvConfig env_config = cfg.env();
  if (hdp) env_config.set_fuse_above_groups(0);
  std::vector<DeviceTask> envs;
  for (const std::string& g : cfg.graphs()) envs.push_back(MakeTask(g, cfg.machine(), env_config, &cfg));
  const encoders::FeatureLayout layout = encoders::FeatureLayout::Of(*envs[0].env);
  encoders::PolicyOptions po = PolicyOptionsFrom(cfg.policy());
  if (!cfg.policy().preset().empty()) po.preset = encoders::ParsePolicyPreset(cfg.policy().preset());
  po.init_seed = cfg.run().seed();
  encoders::Policy policy(po, layout);
  const agents::AgentOptions ao = AgentOptionsFrom(cfg.agent(), cfg.run().seed());
  agents::Learner learner(&policy, ao);
  std::unique_ptr<encoders::HdpGrouper> grouper;
  HdpState hs;
  if (hdp) grouper = MakeGrouper(cfg, envs[0], ao);

  if (!dir) {
    dir = std::make_unique<run::RunDirectory>(run::ResolveRunDirFlags(o.dir));
    dir->WriteConfig(cfg, run::CommandLineText(argc, argv));
  }
  dir->SetNeedsCheckpoint();  // failed before its first checkpoint: nothing to resume, no directory
  const std::string config_text = run::RecordedConfigText(cfg);  // into every checkpoint (`place` reads it)
  const std::string ckpt = dir->CheckpointPath("latest.ckpt");
  const std::string state_path = dir->CheckpointPath("state.json");
  DeviceTrainingState st;
  st.best_time.assign(envs.size(), INFINITY);
  st.best.resize(envs.size());
  if (dir->resuming()) {
    RestoreDeviceTraining(dir.get(), cfg, envs, &learner, grouper.get(), &hs, &st);
  } else {  // the start placers' time is the run's (a resumed run charged it when it began)
    st.elapsed_s = StartPlacerSeconds(envs, clock);
    OfferStartPlacements(envs, &st);
  }
  run::InstallStopOnSignal();
  run::ProgressOptions pgo;
  pgo.label = "place-train";
  pgo.unit = "episodes";
  pgo.budget_seconds = std::max(1e-3, cfg.run().minutes() * 60 - st.elapsed_s);
  if (clock == BudgetClock::kCpu) pgo.clock = ProcessCpuSeconds;
  run::Progress progress(pgo);
  double last_ckpt = st.elapsed_s;
  int checkpoints = 0;
  auto checkpoint = [&](const DeviceTrainingState& s, double elapsed_s) {
    run::TrainingProgress progress{s, s.best_time};
    progress.elapsed_s = elapsed_s;
    json state = run::TrainingProgressJson(progress, "best_time");
    state["best_placement"] = s.best;
    if (grouper) {
      state["hdp_baseline"] = std::isnan(hs.baseline) ? json(nullptr) : json(hs.baseline);
      state["hdp_best_groups"] = hs.best_groups;
    }
    // One atomic write holds the placer, the grouper and the progress (training_state.h).
    const std::string state_text = state.dump() + "\n";
    agents::Learner::Extras extras = {{run::kRunStateExtra, state_text}, {run::kRunConfigExtra, config_text}};
    if (grouper) extras["hdp_grouper"] = grouper->Bytes();
    learner.SaveCheckpoint(ckpt, extras);
    WriteFileAtomic(state_path, state_text);
    last_ckpt = elapsed_s;
    if (o.test_kill_after_checkpoints > 0 && ++checkpoints == o.test_kill_after_checkpoints)
      std::raise(SIGKILL);  // tests: a crash right after a checkpoint
  };
  auto stop = [&] { return run::StopRequested() || (o.max_updates > 0 && st.iteration >= o.max_updates); };
  auto log = [&](int64_t step, const run::Scalars& row) { dir->Log(step, row); };
  auto every_update = [&](const DeviceTrainingState& s, double elapsed_s) {
    progress.Update(static_cast<double>(s.episodes));
    // The first update's checkpoint makes the run resumable early (it leaves the RNG alone).
    if (s.iteration == 1 || elapsed_s - last_ckpt >= cfg.run().checkpoint_minutes() * 60) checkpoint(s, elapsed_s);
  };
  if (hdp) {
    TrainHdp(envs[0], *grouper, learner, cfg.episodes_per_update(), cfg.run().seed(), cfg.run().minutes() * 60, clock, &st, &hs,
             stop, log, every_update);
  } else {
    TrainDevice(envs, learner, cfg.episodes_per_update(), cfg.run().seed(), cfg.run().minutes() * 60, &st, stop, log, every_update,
                clock);
  }
  checkpoint(st, st.elapsed_s);
  progress.Finish();

  return WriteDeviceTrainingResult(o, cfg, envs, st, hs, hdp, clock, dir.get(), ckpt);
}

// ------------------------------------------------------------------ place --env device

struct PlaceOptions {
  std::string env = "device", checkpoint, graph, machine, clock;
  int samples = -1;
  double samples_minutes = -1;
  double finetune_minutes = -1;
  int64_t seed = -1;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
};

std::string CheckpointFile(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    const std::string f = path + "/checkpoints/latest.ckpt";
    if (!std::filesystem::exists(f)) throw ConfigError(path + ": no checkpoints/latest.ckpt in this directory");
    return f;
  }
  if (!std::filesystem::exists(path)) throw ConfigError(path + ": no such checkpoint");
  return path;
}

// DevicePlaceConfig fields that are not the environment's (not compared with the training run's);
// `env` is compared key by key (the names as before it was one message: memory_mask, …).
const std::vector<std::string> kNotEnvironment = {"checkpoint", "graph", "samples", "samples_minutes", "finetune_minutes",
                                                  "episodes_per_update", "seed", "agent", "clock", "env"};

struct TrainedDeviceEnv {
  config::DevicePlaceConfig config;  // `base` with the training run's environment settings
  bool recorded = false;             // the checkpoint carries its training config
};

// The environment settings of the run that wrote `checkpoint` (its kRunConfigExtra: place-train
// --env device's resolved config) over `base`; `base` itself for a checkpoint without them.
TrainedDeviceEnv ReadTrainedDeviceEnv(const std::string& checkpoint, const config::DevicePlaceConfig& base) {
  TrainedDeviceEnv t;
  t.config = base;
  const agents::Learner::Extras extras = agents::Learner::ReadExtras(checkpoint);
  const auto it = extras.find(run::kRunConfigExtra);
  if (it == extras.end()) return t;
  config::DevicePlaceTrainConfig c;
  try {
    run::ParseConfigText(it->second, checkpoint + " (its training config)", &c);
  } catch (const ParseError& e) {
    throw ConfigError(checkpoint + ": not a device placement checkpoint, or a damaged one (" + e.what() + ")");
  }
  // (A checkpoint written before `env` existed has the old top-level keys: read into env.)
  config::DevicePlaceConfig& p = t.config;
  p.set_machine(c.machine());
  *p.mutable_env() = c.env();
  // The episode (a regulator: mode=iterative from a list scheduler's placement).
  p.set_mode(c.mode());
  p.set_start(c.start());
  p.set_episode_start(c.episode_start());
  p.set_episode_result(c.episode_result());
  p.set_episode_groups(c.episode_groups());
  p.set_start_minutes(c.start_minutes());
  // HDP learns its own groups instead of fusing (TrainHdp): its placer saw the unfused graph.
  if (c.method() == "hdp") p.mutable_env()->set_fuse_above_groups(0);
  t.recorded = true;
  return t;
}

// place --env device's defaults (RunPlace's and --help-config's); the environment settings a
// checkpoint records replace them (ReadTrainedDeviceEnv).
config::DevicePlaceConfig DefaultDevicePlaceConfig() {
  config::DevicePlaceConfig defaults;
  defaults.set_machine("k80(gpus=2)");
  defaults.set_samples(16);
  defaults.set_finetune_minutes(0);
  defaults.set_episodes_per_update(16);
  defaults.set_seed(1);
  config::DeviceEnvConfig& e = *defaults.mutable_env();
  e.set_reward("sqrt");
  e.set_oom("relative");
  e.set_oom_factor(10);
  e.set_fuse_above_groups(300);
  e.set_fuse_target_groups(128);
  e.set_memory_estimate("lifetime");
  e.set_fuse_max_group_fraction(0.5);
  FillDefaultAgentConfig(defaults.mutable_agent());
  return defaults;
}

// The checkpoint's policy and the graph's environment (envs[0]) with its feature set: the
// config's, or ("") the checkpoint's — basic, else heft (the policy's layout names its features).
std::unique_ptr<encoders::Policy> LoadDevicePolicy(const std::string& ckpt, config::DevicePlaceConfig* config,
                                                   std::vector<DeviceTask>* tasks) {
  config::DevicePlaceConfig& cfg = *config;
  std::vector<DeviceTask>& envs = *tasks;
  std::unique_ptr<encoders::Policy> policy;
  for (const std::string& features : {std::string("basic"), std::string("heft")}) {
    if (!cfg.env().features().empty() && cfg.env().features() != features) continue;
    config::DeviceEnvConfig e = cfg.env();
    e.set_features(features);
    envs.clear();
    envs.push_back(MakeTask(cfg.graph(), cfg.machine(), e, &cfg));
    try {
      policy = encoders::Policy::Load(ckpt, *envs[0].env);  // checks the layout (device count, features)
      cfg.mutable_env()->set_features(features);
      break;
    } catch (const ConfigError&) {
      if (!cfg.env().features().empty() || features == "heft") throw;
    }
  }
  return policy;
}

// Fine-tuning of `policy` on the graph for finetune_minutes (its rows logged after the
// zero-shot ones, from *logged on; time_s = charged_s + watch); `st` gets the bests. Returns result.json's stage.
json FineTune(const config::DevicePlaceConfig& cfg, std::vector<DeviceTask>& envs, encoders::Policy* policy,
              BudgetClock clock, const Stopwatch& watch, double charged_s, run::RunDirectory& dir,
              int64_t* logged_rows, DeviceTrainingState* state) {
  auto elapsed = [&] { return charged_s + watch.Elapsed(); };
  auto nullable = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  int64_t& logged = *logged_rows;
  DeviceTrainingState& st = *state;
  agents::Learner learner(policy, AgentOptionsFrom(cfg.agent(), cfg.seed()));
  const double start = elapsed();
  DeviceTrainingState ft = st;
  TrainDevice(envs, learner, cfg.episodes_per_update(), cfg.seed() + 1000000, cfg.finetune_minutes() * 60, &ft,
              [] { return run::StopRequested(); },
              [&](int64_t, const run::Scalars& row) {
                double mean = NAN;
                for (const auto& [k, v] : row)
                  if (k == "charts/mean_step_time_s") mean = v;
                dir.Log(logged++, {{"time_s", start + row[0].second},
                                   {"charts/effective_time_s", mean},
                                   {"charts/best_effective_time_s", ft.best_time[0]}});
              },
              {}, clock);
  st.best_time = ft.best_time;
  st.best = ft.best;
  return {{"episodes", ft.episodes}, {"updates", ft.iteration},
          {"best_effective_time_s", nullable(st.best_time[0])}, {"seconds", elapsed() - start}};
}

// Config (the checkpoint's training environment under what the user asks) → policy → zero-shot
// samples → fine-tuning → best placement, result.json.
int RunPlace(const PlaceOptions& o, int argc, char** argv) {
  if (!o.dir.resume.empty()) throw ConfigError("place runs cannot be resumed; start a new one with --out");
  const config::DevicePlaceConfig defaults = DefaultDevicePlaceConfig();
  // What the user asks for (--config, the flags, --set) over `cfg`.
  auto resolve = [&](config::DevicePlaceConfig cfg) {
    if (!o.dir.config.empty()) run::MergeConfigFile(o.dir.config, &cfg);
    if (!o.checkpoint.empty()) cfg.set_checkpoint(o.checkpoint);
    if (!o.graph.empty()) cfg.set_graph(o.graph);
    if (!o.machine.empty()) cfg.set_machine(o.machine);
    if (o.samples >= 0) cfg.set_samples(o.samples);
    if (o.samples_minutes >= 0) cfg.set_samples_minutes(o.samples_minutes);
    if (o.finetune_minutes >= 0) cfg.set_finetune_minutes(o.finetune_minutes);
    if (o.seed >= 0) cfg.set_seed(static_cast<uint64_t>(o.seed));
    if (!o.clock.empty()) cfg.set_clock(o.clock);
    run::ApplyOverrides(o.dir.sets, &cfg);
    cfg.set_clock(BudgetClockName(ParseBudgetClock(cfg.clock())));
    if (cfg.checkpoint().empty()) throw ConfigError("a checkpoint is needed (--checkpoint FILE or run directory)");
    if (cfg.graph().empty()) throw ConfigError("a graph is needed (--graph SPEC)");
    return cfg;
  };
  const std::string ckpt = CheckpointFile(resolve(defaults).checkpoint());
  // The environment the policy was trained in (machine, memory mask, reward, OOM rule, fusion,
  // features, order — the checkpoint's training config), under what the user asks for: every
  // difference is a warning. Checkpoints without it: the defaults.
  const TrainedDeviceEnv trained = ReadTrainedDeviceEnv(ckpt, defaults);
  config::DevicePlaceConfig cfg = resolve(trained.config);
  const BudgetClock clock = ParseBudgetClock(cfg.clock());
  json changed = json::object();
  if (trained.recorded) {
    changed = run::ReportTrainedSettingChanges(trained.config, cfg, kNotEnvironment, ckpt);
    changed.update(run::ReportTrainedSettingChanges(trained.config.env(), cfg.env(), {}, ckpt));
  }
  if (cfg.samples() < 0 || cfg.samples() > 1000000) throw ConfigError("samples must be in [0, 1e6]");
  if (!std::isfinite(cfg.samples_minutes()) || cfg.samples_minutes() < 0 || cfg.samples_minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("samples_minutes must be in [0, a week] (0 = no limit)");
  if (!std::isfinite(cfg.finetune_minutes()) || cfg.finetune_minutes() < 0 || cfg.finetune_minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("finetune_minutes must be in [0, a week]");
  if (cfg.episodes_per_update() < 1 || cfg.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  CheckAgentConfig(cfg.agent());
  CheckEnvConfig(cfg.env());
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  std::vector<DeviceTask> envs;
  const std::unique_ptr<encoders::Policy> policy = LoadDevicePolicy(ckpt, &cfg, &envs);
  DeviceTask& task = envs[0];
  const env::DeviceEnv& env = task.original();
  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.WriteConfig(cfg, run::CommandLineText(argc, argv));
  run::InstallStopOnSignal();
  const Stopwatch watch(clock);  // time_s, the stages' seconds and the fine-tuning budget
  const double start_placer_s = StartPlacerSeconds(envs, clock);  // charged to the zero-shot search
  auto elapsed = [&] { return start_placer_s + watch.Elapsed(); };
  auto nullable = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };

  DeviceTrainingState st;
  st.best_time.assign(1, INFINITY);
  st.best.resize(1);
  OfferStartPlacements(envs, &st);
  json stages = json::object();
  // 1. Zero-shot: the most likely placement, then K samples.
  std::mt19937_64 rng(cfg.seed());
  const double greedy = PlayDeviceEpisode(*policy, task, cfg.seed(), &rng, /*greedy=*/true, nullptr);
  OfferBestDevice(task, 0, greedy, &st);
  int64_t logged = 0;
  dir.Log(logged++, {{"time_s", elapsed()}, {"charts/effective_time_s", greedy}, {"charts/best_effective_time_s", st.best_time[0]}});
  double sum = 0;
  int complete = 0, sampled = 0;  // what was done (a stop request ends the samples early)
  const double samples_seconds = cfg.samples_minutes() * 60;  // 0 = no limit
  for (int k = 0; k < cfg.samples() && !run::StopRequested() && (samples_seconds <= 0 || elapsed() < samples_seconds);
       ++k) {
    const double t = PlayDeviceEpisode(*policy, task, cfg.seed() + 1 + k, &rng, false, nullptr);
    ++sampled;
    OfferBestDevice(task, 0, t, &st);
    if (std::isfinite(t)) sum += t, ++complete;
    dir.Log(logged++, {{"time_s", elapsed()}, {"charts/effective_time_s", t}, {"charts/best_effective_time_s", st.best_time[0]}});
  }
  stages["zero_shot"] = {{"greedy_effective_time_s", nullable(greedy)},
                         {"samples", sampled},
                         {"samples_requested", cfg.samples()},
                         {"mean_sampled_effective_time_s", complete ? json(sum / complete) : json(nullptr)},
                         {"best_effective_time_s", nullable(st.best_time[0])},
                         {"seconds", elapsed()}};
  // 2. Fine-tuning on this graph (fresh optimiser, the config's agent options).
  if (cfg.finetune_minutes() > 0 && !run::StopRequested())
    stages["finetune"] = FineTune(cfg, envs, policy.get(), clock, watch, start_placer_s, dir, &logged, &st);
  json j = {{"env", "device"}, {"checkpoint", ckpt}, {"machine", env.instance().machine.spec},
            {"start_placer_seconds", start_placer_s}, {"stages", stages}, {"clock", BudgetClockName(clock)}, {"stopped_by_signal", run::StopRequested()}};
  auto write_result = [&](const std::string& text) { dir.WriteFile("result.json", text); };
  if (st.best[0].empty()) {  // infeasible: exit 2, result.json with null results (cli.h)
    InfeasibleRun bad;
    bad.reason = "no complete placement: the memory mask left a group no device in every episode";
    j["best"] = WriteDeviceBest(dir, task, st.best[0], "best", "place --env device");
    j["seconds"] = elapsed();
    bad.document = j;
    bad.null_costs = {"/best/step_time_s", "/best/effective_time_s", "/best/oom", "/best/speedup_vs_single"};
    bad.out = dir.path();
    return ReportInfeasible("place", bad, o.json, write_result);
  }
  json best = WriteDeviceBest(dir, task, st.best[0], "best", "place --env device");
  viz::PlotOptions plot;
  plot.title = "place --env device: " + cfg.graph() + " (zero-shot samples, fine-tuning)";
  plot.x_label = "time (s)";
  plot.y_label = "effective step time (s)";
  plot.markers = true;
  dir.PlotMetrics("curve", "time_s", {"charts/effective_time_s", "charts/best_effective_time_s"}, plot,
                  {"placement", "best so far"});
  j["best"] = best;
  j["trained_settings"] = {{"recorded", trained.recorded}, {"changed", changed}};
  j["seconds"] = elapsed();
  j["out"] = dir.path();
  if (best["oom"].get<bool>()) {  // the best placement does not fit: infeasible (its step time stays)
    InfeasibleRun bad;
    bad.reason = "out of memory: the best placement found does not fit the devices' memory";
    bad.document = j;
    bad.out = dir.path();
    return ReportInfeasible("place", bad, o.json, write_result);
  }
  MarkFeasible(&j);
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("place --env device on %s: step time %s (%s single device)%s in %.1f s\n", cfg.graph().c_str(),
                device_baseline::StepTimeLabel(best["step_time_s"].get<double>()).c_str(),
                Ratio(env.instance().single_device_time, best["step_time_s"].get<double>()).c_str(),
                best["oom"].get<bool>() ? " OUT OF MEMORY" : "", elapsed());
    std::printf("wrote %s (best.placement, best and curve pictures, metrics.csv, TensorBoard events, result.json)\n",
                dir.path().c_str());
  }
  return kExitOk;
}

const char* kGraphHelp =
    "graph spec (rnnlm, nmt(layers=2), enas_cell(family=cifar10,seed=1), layered(...), a compute-graph file)";
const char* kMachineHelp = "machine: k80(gpus=2,memory_fraction=0.39) | baechi(...) | tpu(...) | a machine .pbtxt (default k80(gpus=2))";

}  // namespace

bool DeviceEnvSelected(int argc, char** argv) { return device_baseline::SelectsDeviceEnv(argc, argv); }

int DevicePlaceTrainMain(int argc, char** argv) {
  return RunMain("place-train", [&] {
    CLI::App app{"Learns to place a computation graph's co-location groups onto a machine's devices with the shared GNN "
                 "policy and PPO (one-shot episodes, reward -sqrt(simulated step time)); several graphs = pretraining. "
                 "Writes a run directory (checkpoints, best.placement + timeline per graph, curve, metrics.csv, "
                 "TensorBoard events, result.json)."};
    TrainOptions o;
    app.add_option("--env", o.env, "device (this help) | chip")->check(CLI::IsMember({"device"}));
    app.add_option("--graph", o.graphs, std::string(kGraphHelp) + "; several: comma-separated or repeated")
        ->check(cli::NonEmpty());
    app.add_option("--machine", o.machine, kMachineHelp)->check(cli::NonEmpty());
    app.add_option("--minutes", o.minutes, "training budget (default 10)")->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--algorithm", o.algorithm, "ppo | reinforce (default ppo)");
    app.add_option("--method", o.method,
                   "ppo | reinforce: the policy places the co-location groups (= --algorithm); hdp: HDP's grouper + "
                   "placer, one REINFORCE loss (preset experiments/configs/hdp_2018.pbtxt)")
        ->check(CLI::IsMember({"ppo", "reinforce", "hdp"}));
    app.add_option("--clock", o.clock, "the budget's clock: wall (default) | cpu (this process's CPU time)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_option("--max-updates", o.max_updates, "stop after this many updates in total (default: no limit)")
        ->check(cli::IntRange(1, INT64_MAX));
    app.add_option("--checkpoint-minutes", o.checkpoint_minutes,
                   "minutes between checkpoints (default 5; also after the first update and at the end; with "
                   "--resume: the new interval)")
        ->check(cli::FiniteRange(1e-9, cli::kMaxSeconds / 60));
    app.add_option("--test-kill-after-checkpoints", o.test_kill_after_checkpoints)->group("");
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place-train --env device", [] { return DefaultTrainConfig(); });
    cli::Parse(app, argc, argv);
    return RunPlaceTrain(o, argc, argv);
  });
}

int DevicePlaceMain(int argc, char** argv) {
  return RunMain("place", [&] {
    CLI::App app{"Places a computation graph onto a machine's devices with a trained device policy (place-train --env "
                 "device checkpoint): best of a greedy and K sampled placements (zero-shot), optional PPO fine-tuning; "
                 "writes a run directory."};
    PlaceOptions o;
    app.add_option("--env", o.env, "device (this help) | chip")->check(CLI::IsMember({"device"}));
    app.add_option("--checkpoint", o.checkpoint, "checkpoint file, or a place-train run directory")->check(cli::NonEmpty());
    app.add_option("--graph", o.graph, kGraphHelp)->check(cli::NonEmpty());
    app.add_option("--machine", o.machine, kMachineHelp)->check(cli::NonEmpty());
    app.add_option("--samples", o.samples, "sampled placements besides the greedy one (default 16)")->check(cli::IntRange(0, 1000000));
    app.add_option("--samples-minutes", o.samples_minutes,
                   "stop the samples after this many minutes on --clock (default 0: no limit). With a regulator "
                   "checkpoint (mode=iterative, start=heft, ...: docs/device_regulator.md) every sample is a search "
                   "episode from the best placement so far, so this is the frozen policy's search budget")
        ->check(cli::FiniteRange(0, cli::kMaxSeconds / 60));
    app.add_option("--finetune-minutes", o.finetune_minutes, "PPO fine-tuning on this graph (default 0)")
        ->check(cli::FiniteRange(0, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--clock", o.clock,
                   "the clock of the samples' and the fine-tuning's budgets, time_s and the stages' seconds: wall (default) | cpu (this "
                   "process's CPU time)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place --env device", [] { return DefaultDevicePlaceConfig(); });
    cli::Parse(app, argc, argv);
    return RunPlace(o, argc, argv);
  });
}

}  // namespace placerl
