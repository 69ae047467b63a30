// place-train: learns to place a chip's macros with the shared GNN policy and PPO (or
// REINFORCE) on the chip environment — one netlist or several (pretraining: an episode draws one
// at random) — and writes a run directory (docs/conventions.md "Run directories"): the resolved
// config, metrics.csv and TensorBoard events (CleanRL tags), checkpoints/ (resumable with
// --resume DIR; `place` loads them), best.plc per design, pictures of the best placement and of
// the learning curve.
//   place-train --netlist N.pb.txt.gz --plc initial.plc --minutes 60 --out runs/ariane_ppo
//   place-train --resume runs/ariane_ppo --set minutes=120
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "agents/learner.h"
#include "agents/rollout.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/plc.h"
#include "datasets/proto/chip_placement.pb.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/policy.h"
#include "experiments/torch/device_training.h"  // --env device
#include "experiments/lib/chip_config.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/render.h"
#include "experiments/lib/run_dir.h"
#include "experiments/lib/stop_signal.h"
#include "experiments/torch/chip_training.h"

using namespace placerl;

namespace {

int g_argc = 0;
char** g_argv = nullptr;

config::PlaceTrainConfig DefaultPlaceTrainConfig() {
  config::PlaceTrainConfig c;
  *c.mutable_chip() = DefaultChipEnvConfig();
  c.set_minutes(10);
  c.set_seed(1);
  c.set_episodes_per_update(16);
  c.set_checkpoint_minutes(5);
  c.set_maps(true);
  const encoders::PolicyOptions p;
  c.mutable_policy()->set_embedding_dim(p.embedding_dim);
  c.mutable_policy()->set_gcn_layers(p.gcn_layers);
  c.mutable_policy()->set_hidden_dim(p.hidden_dim);
  c.mutable_policy()->set_action_hidden_dim(p.action_hidden_dim);
  const agents::AgentOptions a;
  config::AgentConfig* ac = c.mutable_agent();
  ac->set_algorithm(a.algorithm == agents::Algorithm::kPpo ? "ppo" : "reinforce");
  ac->set_learning_rate(a.learning_rate);
  ac->set_adam_eps(a.adam_eps);
  ac->set_max_grad_norm(a.max_grad_norm);
  ac->set_entropy_coef(a.entropy_coef);
  ac->set_gamma(a.gamma);
  ac->set_clip(a.clip);
  ac->set_value_coef(a.value_coef);
  ac->set_epochs(a.epochs);
  ac->set_minibatch_size(a.minibatch_size);
  ac->set_normalize_advantages(a.normalize_advantages);
  ac->set_baseline_decay(a.baseline_decay);
  return c;
}

void CheckPlaceTrainConfig(const config::PlaceTrainConfig& c) {
  CheckChipEnvConfig(c.chip());
  if (!c.netlists().empty() && (!c.chip().netlist().empty() || !c.chip().plc().empty()))
    throw ConfigError("give the designs either as netlists/plcs or as chip.netlist/chip.plc, not both");
  if (c.plcs_size() != 0 && c.plcs_size() != c.netlists_size())
    throw ConfigError("plcs: give none or one per netlist (" + std::to_string(c.netlists_size()) + " netlists, " +
                      std::to_string(c.plcs_size()) + " plcs)");
  if (!std::isfinite(c.minutes()) || c.minutes() <= 0 || c.minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("minutes must be in (0, " + std::to_string(static_cast<int>(cli::kMaxSeconds / 60)) + "]");
  if (c.episodes_per_update() < 1 || c.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  if (!std::isfinite(c.checkpoint_minutes()) || c.checkpoint_minutes() <= 0) throw ConfigError("checkpoint_minutes must be > 0");
  const auto& p = c.policy();
  if (p.embedding_dim() < 1 || p.embedding_dim() > 1024 || p.gcn_layers() < 0 || p.gcn_layers() > 16 ||
      p.hidden_dim() < 1 || p.hidden_dim() > 4096 || p.action_hidden_dim() < 1 || p.action_hidden_dim() > 4096)
    throw ConfigError("policy sizes out of range (embedding_dim, hidden_dim, action_hidden_dim in [1, 1024/4096], gcn_layers in [0, 16])");
  const auto& a = c.agent();
  if (a.algorithm() != "ppo" && a.algorithm() != "reinforce")
    throw ConfigError("agent.algorithm must be ppo or reinforce (got '" + a.algorithm() + "')");
  auto positive = [](double v, const char* n) {
    if (!std::isfinite(v) || v <= 0) throw ConfigError(std::string("agent.") + n + " must be > 0");
  };
  auto nonneg = [](double v, const char* n) {
    if (!std::isfinite(v) || v < 0) throw ConfigError(std::string("agent.") + n + " must be >= 0");
  };
  positive(a.learning_rate(), "learning_rate");
  positive(a.adam_eps(), "adam_eps");
  positive(a.max_grad_norm(), "max_grad_norm");
  positive(a.clip(), "clip");
  nonneg(a.entropy_coef(), "entropy_coef");
  nonneg(a.value_coef(), "value_coef");
  if (!(a.gamma() >= 0 && a.gamma() <= 1)) throw ConfigError("agent.gamma must be in [0, 1]");
  if (!(a.baseline_decay() >= 0 && a.baseline_decay() < 1)) throw ConfigError("agent.baseline_decay must be in [0, 1)");
  if (a.epochs() < 1 || a.epochs() > 1000) throw ConfigError("agent.epochs must be in [1, 1000]");
  if (a.minibatch_size() < 1 || a.minibatch_size() > 1000000) throw ConfigError("agent.minibatch_size must be in [1, 1e6]");
}

agents::AgentOptions AgentOptionsFrom(const config::PlaceTrainConfig& c) {
  agents::AgentOptions o;
  const auto& a = c.agent();
  o.algorithm = a.algorithm() == "ppo" ? agents::Algorithm::kPpo : agents::Algorithm::kReinforce;
  o.learning_rate = a.learning_rate();
  o.adam_eps = a.adam_eps();
  o.max_grad_norm = a.max_grad_norm();
  o.entropy_coef = a.entropy_coef();
  o.gamma = a.gamma();
  o.clip = a.clip();
  o.value_coef = a.value_coef();
  o.epochs = a.epochs();
  o.minibatch_size = a.minibatch_size();
  o.normalize_advantages = a.normalize_advantages();
  o.baseline_decay = a.baseline_decay();
  o.seed = c.seed();
  return o;
}

encoders::PolicyOptions PolicyOptionsFrom(const config::PlaceTrainConfig& c) {
  encoders::PolicyOptions o;
  o.embedding_dim = c.policy().embedding_dim();
  o.gcn_layers = c.policy().gcn_layers();
  o.hidden_dim = c.policy().hidden_dim();
  o.action_hidden_dim = c.policy().action_hidden_dim();
  o.init_seed = c.seed();
  return o;
}

// The run's progress that a checkpoint carries besides the learner (state.json).
nlohmann::json StateJson(const ChipTrainingState& s) {
  nlohmann::json best = nlohmann::json::array();
  for (double b : s.best_cost) best.push_back(std::isfinite(b) ? nlohmann::json(b) : nlohmann::json(nullptr));
  return {{"iteration", s.iteration}, {"episodes", s.episodes}, {"steps", s.steps}, {"elapsed_s", s.elapsed_s}, {"best_cost", best}};
}

struct Options {
  std::vector<std::string> netlists, plcs;
  double minutes = 0;
  int64_t seed = -1;
  std::string algorithm;
  int workers = 1;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
};

int PlaceTrain(const Options& o) {
  if (o.workers != 1)
    throw ConfigError("--workers " + std::to_string(o.workers) +
                      ": training over several c10d processes is not built yet (issue 14); use --workers 1");
  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  config::PlaceTrainConfig cfg = DefaultPlaceTrainConfig();
  if (!dir.resuming()) {
    for (const auto& n : o.netlists) cfg.add_netlists(n);
    for (const auto& p : o.plcs) cfg.add_plcs(p);
    if (o.minutes > 0) cfg.set_minutes(o.minutes);
    if (o.seed >= 0) cfg.set_seed(static_cast<uint64_t>(o.seed));
    if (!o.algorithm.empty()) cfg.mutable_agent()->set_algorithm(o.algorithm);
  } else if (!o.netlists.empty() || !o.plcs.empty() || o.seed >= 0 || !o.algorithm.empty()) {
    throw ConfigError("--resume keeps the run's designs, seed and algorithm; change the budget with --minutes or --set");
  }
  run::ResolveRunConfig(o.dir, dir, &cfg, run::CommandLineText(g_argc, g_argv));
  if (dir.resuming() && o.minutes > 0) cfg.set_minutes(o.minutes);
  CheckPlaceTrainConfig(cfg);
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());

  // The designs.
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
  const encoders::FeatureLayout layout = encoders::FeatureLayout::Of(*envs[0]);
  for (size_t i = 1; i < envs.size(); ++i) {
    const std::string why = layout.Mismatch(encoders::FeatureLayout::Of(*envs[i]));
    if (!why.empty()) throw ConfigError("design " + std::to_string(i) + " has another feature layout: " + why);
  }
  encoders::Policy policy(PolicyOptionsFrom(cfg), layout);
  agents::Learner learner(&policy, AgentOptionsFrom(cfg));
  ChipTrainingState st;
  st.best_cost.assign(envs.size(), INFINITY);
  st.best.resize(envs.size());
  const std::string ckpt = dir.CheckpointPath("latest.ckpt"), state_path = dir.CheckpointPath("state.json");
  if (dir.resuming()) {
    if (!std::filesystem::exists(ckpt)) throw ConfigError(dir.path() + ": no checkpoint to resume from (" + ckpt + ")");
    learner.LoadCheckpoint(ckpt);
    const auto j = nlohmann::json::parse(ReadFile(state_path));
    st.iteration = j.at("iteration");
    st.episodes = j.at("episodes");
    st.steps = j.at("steps");
    st.elapsed_s = j.at("elapsed_s");
    dir.ResumeFrom(st.iteration + 1);  // the next update's step: rows logged after the checkpoint go
    // Best placements of the earlier run stay in best*.plc; their costs are the bar to beat.
    for (size_t i = 0; i < envs.size() && i < j.at("best_cost").size(); ++i)
      if (!j.at("best_cost")[i].is_null()) st.best_cost[i] = j.at("best_cost")[i];
  }

  const double budget = cfg.minutes() * 60;
  run::InstallStopOnSignal();
  run::ProgressOptions po;
  po.label = "place-train";
  po.unit = "episodes";
  po.budget_seconds = std::max(1e-3, budget - st.elapsed_s);
  run::Progress progress(po);
  double last_ckpt = st.elapsed_s;
  auto checkpoint = [&](const ChipTrainingState& s, double elapsed_s) {
    learner.SaveCheckpoint(ckpt);
    ChipTrainingState copy = s;
    copy.elapsed_s = elapsed_s;
    WriteFileAtomic(state_path, StateJson(copy).dump(2) + "\n");
    last_ckpt = elapsed_s;
  };
  TrainChip(envs, learner, cfg.episodes_per_update(), cfg.seed(), budget, &st, [] { return run::StopRequested(); },
            [&](int64_t step, const run::Scalars& row) { dir.Log(step, row); },
            [&](const ChipTrainingState& s, double elapsed_s) {
              double best_all = INFINITY;
              for (double b : s.best_cost) best_all = std::min(best_all, b);
              progress.Update(static_cast<double>(s.episodes), {{"best", best_all}});
              if (elapsed_s - last_ckpt >= cfg.checkpoint_minutes() * 60) checkpoint(s, elapsed_s);
            });
  checkpoint(st, st.elapsed_s);
  double best_all = INFINITY;
  for (double b : st.best_cost) best_all = std::min(best_all, b);
  char summary[200];
  std::snprintf(summary, sizeof(summary), "best proxy cost %.6f after %lld episodes", best_all, static_cast<long long>(st.episodes));
  progress.Finish(summary);

  // Best placements of this run (a resumed run keeps the earlier best files when it found none better).
  nlohmann::json designs = nlohmann::json::array();
  for (size_t k = 0; k < envs.size(); ++k) {
    const std::string stem = envs.size() == 1 ? "best" : "best_" + std::to_string(k);
    nlohmann::json d = WriteBestPlacement(dir, *envs[k], st.best[k], stem, "place-train: " + envs[k]->instance().design.label);
    d["best_proxy_cost"] = std::isfinite(st.best_cost[k]) ? nlohmann::json(st.best_cost[k]) : nlohmann::json(nullptr);
    designs.push_back(d);
  }
  if (st.iteration > 0) {
    viz::PlotOptions plot;
    plot.title = "place-train: proxy cost of sampled placements";
    plot.x_label = "time (s)";
    plot.y_label = "proxy cost";
    dir.PlotMetrics("curve", "time_s", {"charts/best_proxy_cost", "charts/mean_proxy_cost"}, plot, {"best so far", "mean of the update's episodes"});
  }
  auto elapsed = [&] { return st.elapsed_s; };
  nlohmann::json j = {{"designs", designs},
                      {"episodes", st.episodes},
                      {"updates", st.iteration},
                      {"steps", st.steps},
                      {"seconds", elapsed()},
                      {"episodes_per_hour", st.episodes / std::max(1e-9, elapsed()) * 3600},
                      {"algorithm", cfg.agent().algorithm()},
                      {"checkpoint", ckpt},
                      {"stopped_by_signal", run::StopRequested()},
                      {"out", dir.path()}};
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("place-train: %lld episodes, %lld updates in %.1f s (%.0f episodes/hour); best proxy cost %.6f\n",
                static_cast<long long>(st.episodes), static_cast<long long>(st.iteration), elapsed(),
                st.episodes / std::max(1e-9, elapsed()) * 3600, best_all);
    std::printf("wrote %s (best.plc, pictures, metrics.csv, TensorBoard events, checkpoints/)\n", dir.path().c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (DeviceEnvSelected(argc, argv)) return DevicePlaceTrainMain(argc, argv);  // device_training.h
  g_argc = argc;
  g_argv = argv;
  return RunMain("place-train", [&] {
    CLI::App app{"Learns to place a chip's macros with the shared GNN policy and PPO or REINFORCE on the exact "
                 "proxy cost, on one netlist or several, and writes a resumable run directory (checkpoints, best "
                 "placement, learning curve, metrics.csv, TensorBoard events)."};
    Options o;
    app.add_option("--netlist", o.netlists, "netlist.pb.txt[.gz] (repeat for several designs); default: the built-in synthetic chip")
        ->check(cli::NonEmpty());
    app.add_option("--plc", o.plcs, ".plc per netlist (canvas, grid, routing, initial placement)")->check(cli::NonEmpty());
    app.add_option("--minutes", o.minutes, "training budget (default 10; with --resume: the new total)")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--algorithm", o.algorithm, "ppo | reinforce (default ppo)");
    app.add_option("--workers", o.workers, "training processes (c10d; only 1 for now)")->check(cli::IntRange(1, 1024));
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    cli::Parse(app, argc, argv);
    return PlaceTrain(o);
  });
}
