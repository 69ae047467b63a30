#include "experiments/lib/torch/place_train_program.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "agents/chip_training.h"
#include "agents/learner.h"
#include "agents/rollout.h"
#include "agents/workers.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/plc.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stop_signal.h"
#include "encoders/policy.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/render.h"
#include "experiments/lib/torch/training_state.h"

namespace placerl::place_train {

config::PlaceTrainConfig DefaultConfig() {
  config::PlaceTrainConfig c;
  *c.mutable_chip() = DefaultChipEnvConfig();
  c.mutable_run()->set_minutes(10);
  c.mutable_run()->set_seed(1);
  c.set_episodes_per_update(16);
  c.set_collect_batch(kDefaultCollectBatch);
  c.mutable_run()->set_checkpoint_minutes(5);
  c.set_maps(true);
  FillDefaultPolicyConfig(c.mutable_policy());
  c.mutable_policy()->set_preset(encoders::PolicyPresetName(encoders::PolicyOptions().preset));
  FillDefaultAgentConfig(c.mutable_agent());
  // The best-known chip settings (docs/chip_learning.md's protocol: Adam at 2e-3, minibatches of
  // 512 steps; 0.708 on Ariane133 at 60 CPU-minutes, where the agents' defaults, CT's 4e-4 and 128,
  // reach 0.7594 at 10): what the docs report is what the defaults do.
  c.mutable_agent()->set_learning_rate(0.002);
  c.mutable_agent()->set_minibatch_size(512);
  return c;
}

namespace {

// The regulator (chip.mode=refine, docs/chip_regulator.md) learns only with each move judged by
// its own exact cost change (γ = 0: with γ = 1 and episode_result=best a bad move's penalty is
// repaid by the final return to the best) and did better with a 3× larger step: when the user's
// config file and --set ask for mode=refine, those are the defaults under them (a user's own
// agent.gamma / agent.learning_rate still win).
void ApplyModeDefaults(const run::RunDirFlags& flags, config::PlaceTrainConfig* cfg) {
  config::PlaceTrainConfig probe = *cfg;
  if (!flags.config.empty()) run::MergeConfigFile(flags.config, &probe);
  run::ApplyOverrides(flags.sets, &probe);
  if (probe.chip().mode() != "refine") return;
  cfg->mutable_agent()->set_gamma(0);
  cfg->mutable_agent()->set_learning_rate(0.006);
}

void CheckPlaceTrainConfig(const config::PlaceTrainConfig& c) {
  CheckChipEnvConfig(c.chip());
  if (!c.netlists().empty() && (!c.chip().netlist().empty() || !c.chip().plc().empty()))
    throw ConfigError("give the designs either as netlists/plcs or as chip.netlist/chip.plc, not both");
  if (c.plcs_size() != 0 && c.plcs_size() != c.netlists_size())
    throw ConfigError("plcs: give none or one per netlist (" + std::to_string(c.netlists_size()) + " netlists, " +
                      std::to_string(c.plcs_size()) + " plcs)");
  if (!std::isfinite(c.run().minutes()) || c.run().minutes() <= 0 || c.run().minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("minutes must be in (0, " + std::to_string(static_cast<int>(cli::kMaxSeconds / 60)) + "]");
  if (c.episodes_per_update() < 1 || c.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  if (c.collect_batch() < 1 || c.collect_batch() > 1024) throw ConfigError("collect_batch must be in [1, 1024]");
  if (!std::isfinite(c.run().checkpoint_minutes()) || c.run().checkpoint_minutes() <= 0) throw ConfigError("checkpoint_minutes must be > 0");
  ParseBudgetClock(c.run().clock());
  CheckPolicyConfig(c.policy());
  if (!c.policy().preset().empty()) encoders::ParsePolicyPreset(c.policy().preset());  // "policy preset must be default or ct_faithful"
  CheckAgentConfig(c.agent());
}

encoders::PolicyOptions ChipPolicyOptions(const config::PlaceTrainConfig& c) {
  encoders::PolicyOptions o = PolicyOptionsFrom(c.policy());
  if (!c.policy().preset().empty()) o.preset = encoders::ParsePolicyPreset(c.policy().preset());
  o.init_seed = c.run().seed();
  return o;
}

// The run's progress that a checkpoint carries besides the learner (state.json): counters,
// best costs, and the sampling RNG of every rank but 0 (rank 0's is in the checkpoint).
nlohmann::json StateJson(const ChipTrainingState& s, const std::vector<std::string>& rank_rngs) {
  return run::TrainingProgressJson({s, s.best_cost}, "best_cost", rank_rngs);
}

// What every rank trains with: the resolved config (and its text) and, resumed, the checkpoint
// and state.json's text. Rank 0 opens the run directory (`dir`), resolves the config and reads
// the checkpoint; the other ranks receive them.
struct TrainStart {
  std::unique_ptr<run::RunDirectory> dir;  // rank 0
  config::PlaceTrainConfig cfg;
  std::string config_text, checkpoint_bytes, state_text;
};

TrainStart StartTraining(const Options& o, workers::ProcessGroup* group, bool launched) {
  const int rank = group ? group->rank() : 0;
  TrainStart start;
  std::unique_ptr<run::RunDirectory>& dir = start.dir;
  config::PlaceTrainConfig& cfg = start.cfg;
  cfg = DefaultConfig();
  std::string& config_text = start.config_text;
  std::string& checkpoint_bytes = start.checkpoint_bytes;
  std::string& state_text = start.state_text;
  if (rank == 0) {
    dir = std::make_unique<run::RunDirectory>(run::ResolveRunDirFlags(o.dir));
    dir->SetNeedsCheckpoint();  // killed or failed before its first checkpoint: nothing to resume, no directory
    run::RunDirFlags flags = o.dir;
    if (!dir->resuming()) {
      for (const auto& n : o.netlists) cfg.add_netlists(n);
      for (const auto& p : o.plcs) cfg.add_plcs(p);
      if (o.minutes > 0) cfg.mutable_run()->set_minutes(o.minutes);
      if (o.seed >= 0) cfg.mutable_run()->set_seed(static_cast<uint64_t>(o.seed));
      if (!o.algorithm.empty()) cfg.mutable_agent()->set_algorithm(o.algorithm);
      if (!o.clock.empty()) cfg.mutable_run()->set_clock(o.clock);
      if (o.checkpoint_minutes > 0) cfg.mutable_run()->set_checkpoint_minutes(o.checkpoint_minutes);
    } else if (!o.netlists.empty() || !o.plcs.empty() || o.seed >= 0 || !o.algorithm.empty() || !o.clock.empty()) {
      throw ConfigError("--resume keeps the run's designs, seed, algorithm and clock; change the budget with --minutes");
    } else {
      // The budget flags of a resumed run, as --set (under the user's): recorded in config.pbtxt.
      const std::vector<std::string> budget = run::BudgetOverrides(o.minutes, o.checkpoint_minutes, "run.");
      flags.sets.insert(flags.sets.begin(), budget.begin(), budget.end());
    }
    if (!dir->resuming()) ApplyModeDefaults(flags, &cfg);
    // (A launched rank's command line is the user's plus the launcher's 6 hidden arguments.)
    run::ResolveRunConfig(flags, *dir, &cfg, run::CommandLineText(launched ? o.argc - 6 : o.argc, o.argv),
                          run::TrainingRunResumeChangeable());
    CheckPlaceTrainConfig(cfg);
    if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
    config_text = run::ResolvedConfigText(cfg);
    if (dir->resuming()) {
      run::ResumePoint resume = run::ReadResumePoint(*dir);  // training_state.h, shared with --env device
      checkpoint_bytes = std::move(resume.checkpoint_bytes);
      state_text = resume.state.dump();
    }
  }
  if (group) {
    group->Broadcast(&config_text, 0);
    group->Broadcast(&checkpoint_bytes, 0);
    group->Broadcast(&state_text, 0);
    if (rank != 0) run::ParseConfigText(config_text, "config from rank 0", &cfg);
  }
  return start;
}

// The designs' environments (one, the config's chip block, without netlists), all of one
// feature layout (ConfigError naming the first that differs).
std::vector<std::unique_ptr<env::ChipEnv>> MakeDesigns(const config::PlaceTrainConfig& cfg) {
  std::vector<std::unique_ptr<env::ChipEnv>> envs;
  if (cfg.netlists().empty()) {
    envs.push_back(MakeChipEnv(cfg.chip(), cfg.maps()));
  } else {
    for (int i = 0; i < cfg.netlists_size(); ++i) {
      config::ChipEnvConfig c = cfg.chip();
      c.set_netlist(cfg.netlists(i));
      c.set_plc(cfg.plcs_size() ? cfg.plcs(i) : "");
      envs.push_back(MakeChipEnv(c, cfg.maps()));
    }
  }
  return envs;
}

// The feature layout of the designs; ConfigError naming the first design of another one.
encoders::FeatureLayout CommonLayout(const std::vector<std::unique_ptr<env::ChipEnv>>& envs) {
  const encoders::FeatureLayout layout = encoders::FeatureLayout::Of(*envs[0]);
  for (size_t i = 1; i < envs.size(); ++i) {
    const std::string why = layout.Mismatch(encoders::FeatureLayout::Of(*envs[i]));
    if (!why.empty()) throw ConfigError("design " + std::to_string(i) + " has another feature layout: " + why);
  }
  return layout;
}

// Resumed: the learner from the checkpoint, the counters and best costs from the run state it
// carries (state.json's for checkpoints written without it), this rank's sampling RNG.
void RestoreTraining(const Options& o, const TrainStart& start, size_t designs, int rank, uint64_t rank_seed,
                     agents::Learner* learner_ptr, ChipTrainingState* state) {
  agents::Learner& learner = *learner_ptr;
  ChipTrainingState& st = *state;
  const std::string& checkpoint_bytes = start.checkpoint_bytes;
  const std::string& state_text = start.state_text;
  agents::Learner::Extras extras;
  const std::string ckpt_name = o.dir.resume + "/checkpoints/latest.ckpt";  // errors name the run's file
  learner.LoadCheckpointBytes(checkpoint_bytes, ckpt_name, &extras);
  const auto j = run::ResumeState(extras, nlohmann::json::parse(state_text), ckpt_name);
  // Best placements of the earlier run stay in best*.plc; their costs are the bar to beat.
  const run::TrainingProgress p = run::ParseTrainingProgress(j, "best_cost", designs, o.dir.resume + "/checkpoints/state.json");
  static_cast<agents::TrainingProgress&>(st) = p;  // the counters
  st.best_cost = p.best;
  if (rank > 0) {  // the checkpoint holds rank 0's RNG; the others' are in state.json (same worker count)
    const nlohmann::json rngs = j.value("rank_rng", nlohmann::json::array());
    if (static_cast<size_t>(rank) <= rngs.size()) {
      std::istringstream in(rngs[rank - 1].get<std::string>());
      in >> learner.rng();
      if (!in) throw ConfigError("checkpoints/state.json: the RNG state of rank " + std::to_string(rank) + " is unreadable");
    } else {
      learner.rng().seed(rank_seed + 7919ULL * static_cast<uint64_t>(st.iteration));
    }
  }
}

// Rank 0 at the end: the best placements, the curve, result.json (exit 2 when a design has no
// complete placement, cli.h ReportInfeasible) and the summary line.
int WriteTrainingResult(const Options& o, const config::PlaceTrainConfig& cfg,
                        const std::vector<std::unique_ptr<env::ChipEnv>>& envs, const ChipTrainingState& st,
                        run::RunDirectory* dir, run::Progress* progress, const std::string& ckpt, int world,
                        bool launched) {
  double best_all = INFINITY;
  for (double b : st.best_cost) best_all = std::min(best_all, b);
  char summary[200];
  if (std::isfinite(best_all))
    std::snprintf(summary, sizeof(summary), "best proxy cost %.6f after %lld episodes", best_all, static_cast<long long>(st.episodes));
  else
    std::snprintf(summary, sizeof(summary), "no complete placement after %lld episodes", static_cast<long long>(st.episodes));
  progress->Finish(summary);

  // Best placements of this run (a resumed run keeps the earlier best files when it found none better).
  // A design on which no episode completed (in this run or, resumed, an earlier one) has no
  // best placement: the run is infeasible (exit 2, cli.h ReportInfeasible), its costs null.
  nlohmann::json designs = nlohmann::json::array();
  std::string infeasible;  // the designs without a complete placement
  std::vector<std::string> null_costs;
  for (size_t k = 0; k < envs.size(); ++k) {
    const std::string stem = envs.size() == 1 ? "best" : "best_" + std::to_string(k);
    nlohmann::json d = WriteBestPlacement(*dir, *envs[k], st.best[k], stem, "place-train: " + envs[k]->instance().design.label);
    d["best_proxy_cost"] = FiniteOrNull(st.best_cost[k]);
    d["feasible"] = std::isfinite(st.best_cost[k]);
    if (!std::isfinite(st.best_cost[k])) {
      const env::ChipEnv& e = *envs[k];
      infeasible += std::string(infeasible.empty() ? "" : "; ") + e.instance().design.label + " (grid " +
                    std::to_string(e.settings().cols) + "x" + std::to_string(e.settings().rows) + ", " +
                    std::to_string(e.order().size()) + " hard macros)";
      for (const char* c : {"proxy_cost", "wirelength_cost", "density_cost", "congestion_cost", "plc"})
        null_costs.push_back("/designs/" + std::to_string(k) + "/" + c);
    }
    designs.push_back(d);
  }
  if (st.iteration > 0 && infeasible.empty()) {
    viz::PlotOptions plot;
    plot.title = "place-train: proxy cost of sampled placements";
    plot.x_label = "time (s)";
    plot.y_label = "proxy cost";
    dir->PlotMetrics("curve", "time_s", {"charts/best_proxy_cost", "charts/mean_proxy_cost"}, plot, {"best so far", "mean of the update's episodes"});
  }
  auto elapsed = [&] { return st.elapsed_s; };
  nlohmann::json j = {{"designs", designs},
                      {"episodes", st.episodes},
                      {"updates", st.iteration},
                      {"steps", st.steps},
                      {"seconds", elapsed()},
                      {"episodes_per_hour", st.episodes / std::max(1e-9, elapsed()) * 3600},
                      {"algorithm", cfg.agent().algorithm()},
                      {"workers", world},
                      {"collect_batch", cfg.collect_batch()},
                      {"cpu_s", {{"policy", st.times.policy_s}, {"env", st.times.env_s},
                                  {"episode_end", st.times.episode_end_s}, {"update", st.times.update_s},
                                  {"best_rescore", st.times.rescore_s}}},
                      {"fd_steps_scale", cfg.chip().fd_steps_scale()},
                      {"cost_map", cfg.chip().cost_map().empty() ? std::string("wirelength") : cfg.chip().cost_map()},
                      {"best_rescores", st.times.rescores},
                      {"checkpoint", ckpt},
                      {"budget_minutes", cfg.run().minutes()},
                      {"max_updates", o.max_updates > 0 ? nlohmann::json(o.max_updates) : nlohmann::json(nullptr)},
                      {"stopped_by_signal", run::StopRequested()},
                      {"out", dir->path()}};
  if (!infeasible.empty()) {
    InfeasibleRun bad;
    bad.reason = "no complete placement: every episode ran out of legal cells on " + infeasible;
    bad.document = j;
    bad.null_costs = null_costs;
    bad.out = dir->path();
    const int code = ReportInfeasible("place-train", bad, o.json, [&](const std::string& text) { dir->WriteFile("result.json", text); });
    return launched ? kExitOk : code;  // launched: the launcher reads result.json for the exit code
  }
  MarkFeasible(&j);
  dir->WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("place-train: %lld episodes, %lld updates in %.1f s (%.0f episodes/hour)%s; best proxy cost %.6f%s\n",
                static_cast<long long>(st.episodes), static_cast<long long>(st.iteration), elapsed(),
                st.episodes / std::max(1e-9, elapsed()) * 3600,
                world > 1 ? (" with " + std::to_string(world) + " workers").c_str() : "", best_all,
                run::StopRequested() ? " (stopped by signal)" : "");
    std::printf("wrote %s (best.plc, pictures, metrics.csv, TensorBoard events, checkpoints/)\n", dir->path().c_str());
  }
  return kExitOk;
}

// One rank's training (the whole run when `group` is null). Rank 0 owns the run directory:
// it resolves the config and reads the checkpoint, the others receive both; every rank
// builds the same policy; rank 0 logs the global rows, writes the checkpoints (with every
// rank's sampling RNG) and, at the end, the best placement over all ranks.
int Train(const Options& o, workers::ProcessGroup* group, bool launched) {
  const int rank = group ? group->rank() : 0, world = group ? group->world_size() : 1;
  TrainStart start = StartTraining(o, group, launched);
  const config::PlaceTrainConfig& cfg = start.cfg;
  run::RunDirectory* dir = start.dir.get();
  const bool resuming = !start.checkpoint_bytes.empty();
  std::vector<std::unique_ptr<env::ChipEnv>> envs = MakeDesigns(cfg);
  if (launched) workers::Heartbeat(o.rendezvous, rank);  // loading large designs takes a while
  const encoders::FeatureLayout layout = CommonLayout(envs);
  encoders::Policy policy(ChipPolicyOptions(cfg), layout);  // the same initial weights on every rank
  agents::AgentOptions agent_options = AgentOptionsFrom(cfg.agent(), cfg.run().seed());
  agent_options.seed = cfg.run().seed() + 1000003ULL * static_cast<uint64_t>(rank);  // each rank samples its own episodes
  agents::Learner learner(&policy, agent_options);
  learner.SetCollective(group);
  ChipTrainingState st;
  st.best_cost.assign(envs.size(), INFINITY);
  st.best.resize(envs.size());
  if (resuming) {
    RestoreTraining(o, start, envs.size(), rank, agent_options.seed, &learner, &st);
    if (rank == 0) dir->ResumeFrom(st.iteration + 1);  // the next update's step: rows logged after the checkpoint go
  }
  agents::CheckSameWeights(learner, group, resuming ? "after loading the checkpoint" : "at the start");

  const double budget = cfg.run().minutes() * 60;
  run::InstallStopOnSignal();
  std::unique_ptr<run::Progress> progress;
  if (rank == 0) {
    run::ProgressOptions po;
    po.label = "place-train";
    po.unit = "episodes";
    po.budget_seconds = std::max(1e-3, budget - st.elapsed_s);
    if (ParseBudgetClock(cfg.run().clock()) == BudgetClock::kCpu) po.clock = ProcessCpuSeconds;
    progress = std::make_unique<run::Progress>(po);
  }
  const std::string ckpt = rank == 0 ? dir->CheckpointPath("latest.ckpt") : "";
  const std::string state_path = rank == 0 ? dir->CheckpointPath("state.json") : "";
  double last_ckpt = st.elapsed_s;
  int checkpoints = 0;
  // Collective: every rank calls it together (its RNG goes into state.json).
  auto checkpoint = [&](const ChipTrainingState& s, double elapsed_s) {
    std::ostringstream rng_text;
    rng_text << learner.rng();
    const std::vector<std::string> rngs = group ? group->AllGather(rng_text.str()) : std::vector<std::string>{};
    if (rank == 0) {
      ChipTrainingState copy = s;
      copy.elapsed_s = elapsed_s;
      const std::string state = StateJson(copy, rngs).dump(2) + "\n";
      // The copy of the progress a resume reads, and the run's settings (`place` takes the
      // environment's from them).
      learner.SaveCheckpoint(ckpt, {{run::kRunStateExtra, state}, {run::kRunConfigExtra, run::RecordedConfigText(cfg)}});
      WriteFileAtomic(state_path, state);
    }
    last_ckpt = elapsed_s;
    if (o.test_kill_after_checkpoints > 0 && ++checkpoints == o.test_kill_after_checkpoints && rank == 0)
      std::raise(SIGKILL);  // tests: a crash right after a checkpoint
  };
  ChipTrainingOptions to;
  to.episodes_per_update = cfg.episodes_per_update();
  to.collect_batch = cfg.collect_batch();
  to.seed = cfg.run().seed();
  to.budget_s = budget;
  to.clock = ParseBudgetClock(cfg.run().clock());
  to.max_updates = o.max_updates;
  to.collective = group;
  if (launched) to.heartbeat = [&] { workers::Heartbeat(o.rendezvous, rank); };
  TrainChip(envs, learner, to, &st, [] { return run::StopRequested(); },
            [&](int64_t step, const run::Scalars& row) {
              if (rank == 0) dir->Log(step, row);
            },
            [&](const ChipTrainingState& s, double elapsed_s) {
              if (rank == o.test_fail_rank) {
                std::fprintf(stderr, "place-train: rank %d exits on purpose (--test-fail-rank)\n", rank);
                std::_Exit(3);
              }
              if (rank == o.test_hang_rank)
                for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
              double best_all = INFINITY;
              for (double b : s.best_cost) best_all = std::min(best_all, b);
              if (progress) {  // no "best inf" while no episode has completed
                if (std::isfinite(best_all)) progress->Update(static_cast<double>(s.episodes), {{"best", best_all}});
                else progress->Update(static_cast<double>(s.episodes), {});
              }
              // The first update's checkpoint makes the run resumable early (checkpointing leaves the
              // RNG streams alone: metrics.csv is the same with or without it).
              std::vector<double> due = {
                  rank == 0 && (s.iteration == 1 || elapsed_s - last_ckpt >= cfg.run().checkpoint_minutes() * 60) ? 1.0 : 0.0};
              if (group) group->AllReduceMax(due.data(), 1);
              if (due[0] > 0) checkpoint(s, elapsed_s);
            });
  checkpoint(st, st.elapsed_s);
  GatherBestPlacements(group, envs.size(), &st);  // agents/chip_training.h
  if (rank != 0) return kExitOk;
  return WriteTrainingResult(o, cfg, envs, st, dir, progress.get(), ckpt, world, launched);
}

// --workers N > 1 on this machine: re-executes this binary once per rank (hidden --rank,
// --world, --rendezvous: a FileStore in a fresh temporary directory that also holds the
// heartbeats), and waits; when one rank fails or stops making progress the others are killed
// and the run fails with one line naming the rank.
int LaunchWorkers(const Options& o) {
  const run::RunDirOptions ro = run::ResolveRunDirFlags(o.dir);  // bad directory flags fail here, once
  // Rank 0 owns the run directory; when the run fails before its first checkpoint (a worker
  // killed early) and rank 0 could not clean up (killed too), the launcher removes what it left.
  std::error_code ec;
  const bool fresh = !ro.resume && (!std::filesystem::exists(ro.path, ec) || std::filesystem::is_empty(ro.path, ec) || ro.force);
  const std::vector<std::string> made = fresh ? run::MissingDirectories(ro.path) : std::vector<std::string>{};
  const workers::TempDirectory rendezvous("place-train");
  workers::LaunchOptions lo;
  lo.exe = "/proc/self/exe";
  lo.argv0 = o.argv[0];
  lo.world_size = o.workers;
  lo.args = [&](int rank) {
    std::vector<std::string> a(o.argv + 1, o.argv + o.argc);
    for (const std::string& s : {std::string("--rank"), std::to_string(rank), std::string("--world"),
                                 std::to_string(o.workers), std::string("--rendezvous"), rendezvous.path()})
      a.push_back(s);
    return a;
  };
  lo.heartbeat_dir = rendezvous.path();
  lo.timeout_s = o.worker_timeout;
  try {
    workers::Launch(lo);
  } catch (...) {
    if (fresh) run::RemoveRunWithoutResults(ro.path, made, /*logs_too=*/true);
    throw;
  }
  // Rank 0 reported the result; an infeasible one (result.json "feasible": false) exits 2.
  try {
    const nlohmann::json r = nlohmann::json::parse(ReadFile(run::ResolveRunDirFlags(o.dir).path + "/result.json"));
    if (r.value("feasible", true) == false) return kExitInfeasible;
  } catch (const std::exception&) {
    // No readable result.json (a stop before it was written): rank 0 said what happened.
  }
  return kExitOk;
}

// Workers on one machine: each is a process with one thread and its own copy of the policy and
// the designs. More than a few per CPU only time-share the CPUs and multiply the memory, so
// they are refused up front (across machines: one process per rank, MASTER_ADDR etc.).
void CheckLocalWorkers(int workers) {
  const int cpus = std::max(1u, std::thread::hardware_concurrency());
  const int most = std::max(2, 4 * cpus);
  if (workers > most)
    throw ConfigError("--workers " + std::to_string(workers) + ": at most " + std::to_string(most) + " on this machine (" +
                      std::to_string(cpus) + " CPUs, 4 workers per CPU); across machines set MASTER_ADDR, MASTER_PORT, "
                      "RANK, WORLD_SIZE and start one process per rank");
}

}  // namespace

int Run(const Options& o) {
  workers::Rendezvous rv;
  bool launched = false;
  if (o.rank >= 0 || !o.rendezvous.empty()) {
    if (o.rank < 0 || o.rendezvous.empty() || o.world < 1) throw ConfigError("--rank, --world and --rendezvous go together");
    rv.rank = o.rank;
    rv.world_size = o.world;
    rv.store_dir = o.rendezvous;
    // Longer than the launcher's heartbeat timeout: a hung rank is named by the launcher.
    rv.timeout_s = 1.5 * o.worker_timeout + 10;
    launched = true;
    workers::Heartbeat(o.rendezvous, o.rank);
  } else if (workers::RendezvousFromEnvironment(&rv)) {
    if (o.workers != 1 && o.workers != rv.world_size)
      throw ConfigError("--workers " + std::to_string(o.workers) + " contradicts WORLD_SIZE=" + std::to_string(rv.world_size) +
                        " (with MASTER_ADDR etc. set, start one process per rank yourself)");
    rv.timeout_s = o.worker_timeout;
  } else if (o.workers > 1) {
    CheckLocalWorkers(o.workers);
    return LaunchWorkers(o);
  } else {
    return Train(o, nullptr, false);
  }
  if (rv.world_size == 1) return Train(o, nullptr, false);
  workers::ProcessGroup group(rv);
  if (launched) {
    workers::Heartbeat(o.rendezvous, rv.rank);
    group.SetHeartbeat([&] { workers::Heartbeat(o.rendezvous, rv.rank); });
  }
  try {
    return Train(o, &group, launched);
  } catch (const workers::PeerFailure&) {
    if (launched) throw ExitRequest{kExitError};  // the launcher names the rank that failed first
    throw;
  }
}

}  // namespace placerl::place_train
