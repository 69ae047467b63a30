// place: a trained chip policy (a place-train checkpoint) on a design — usually one it was not
// trained on: the best of one greedy and K sampled placements (zero-shot), then optionally
// PPO fine-tuning on this design and refinement of the best placement by simulated annealing or
// coordinate descent; writes a run directory (best.plc, best picture, metrics, result.json).
//   place --checkpoint runs/pretrain --netlist N.pb.txt.gz --plc initial.plc --samples 64 --out runs/zs
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "agents/learner.h"
#include "datasets/proto/chip_placement.pb.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "encoders/policy.h"
#include "experiments/torch/device_training.h"  // --env device
#include "experiments/lib/chip_config.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/config.h"
#include "experiments/lib/json_number.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "experiments/lib/stop_signal.h"
#include "experiments/torch/chip_training.h"
#include "search/chip/baselines.h"

using namespace placerl;

namespace {

int g_argc = 0;
char** g_argv = nullptr;

config::PlaceConfig DefaultPlaceConfig() {
  config::PlaceConfig c;
  *c.mutable_chip() = DefaultChipEnvConfig();
  c.set_samples(16);
  c.set_finetune_minutes(0);
  c.set_episodes_per_update(16);
  c.set_refine("none");
  c.set_refine_minutes(1);
  c.set_seed(1);
  FillDefaultAgentConfig(c.mutable_agent());
  c.set_collect_batch(kDefaultCollectBatch);
  c.set_clock("wall");
  return c;
}

void CheckPlaceConfig(const config::PlaceConfig& c) {
  CheckChipEnvConfig(c.chip());
  if (c.checkpoint().empty()) throw ConfigError("a checkpoint is needed (--checkpoint FILE or run directory)");
  if (c.samples() < 0 || c.samples() > 1000000) throw ConfigError("samples must be in [0, 1e6]");
  if (!std::isfinite(c.finetune_minutes()) || c.finetune_minutes() < 0 || c.finetune_minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("finetune_minutes must be in [0, a week]");
  if (c.episodes_per_update() < 1 || c.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  if (c.refine() != "none" && c.refine() != "sa" && c.refine() != "cd")
    throw ConfigError("refine must be none, sa or cd (got '" + c.refine() + "')");
  if (!std::isfinite(c.refine_minutes()) || c.refine_minutes() <= 0 || c.refine_minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("refine_minutes must be in (0, a week]");
  CheckAgentConfig(c.agent());
  if (c.collect_batch() < 1 || c.collect_batch() > 1024) throw ConfigError("collect_batch must be in [1, 1024]");
  ParseBudgetClock(c.clock());
}

// A run directory names its latest checkpoint.
std::string CheckpointFile(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    const std::string f = path + "/checkpoints/latest.ckpt";
    if (!std::filesystem::exists(f)) throw ConfigError(path + ": no checkpoints/latest.ckpt in this directory");
    return f;
  }
  return path;
}

struct Options {
  std::string checkpoint, netlist, plc, refine, clock;
  int samples = -1;
  double finetune_minutes = -1, refine_minutes = 0;
  int64_t seed = -1;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
};

int Place(const Options& o) {
  if (!o.dir.resume.empty()) throw ConfigError("place runs cannot be resumed; start a new one with --out");
  // What the user asks for, over `cfg`: --config, the flags, --set.
  auto resolve = [&](config::PlaceConfig cfg) {
  if (!o.dir.config.empty()) run::MergeConfigFile(o.dir.config, &cfg);
  if (!o.checkpoint.empty()) cfg.set_checkpoint(o.checkpoint);
  if (!o.netlist.empty()) cfg.mutable_chip()->set_netlist(o.netlist);
  if (!o.plc.empty()) cfg.mutable_chip()->set_plc(o.plc);
  if (o.samples >= 0) cfg.set_samples(o.samples);
  if (o.finetune_minutes >= 0) cfg.set_finetune_minutes(o.finetune_minutes);
  if (!o.refine.empty()) cfg.set_refine(o.refine);
  if (o.refine_minutes > 0) cfg.set_refine_minutes(o.refine_minutes);
  if (o.seed >= 0) cfg.set_seed(static_cast<uint64_t>(o.seed));
  if (!o.clock.empty()) cfg.set_clock(o.clock);
  run::ApplyOverrides(o.dir.sets, &cfg);
  CheckPlaceConfig(cfg);
  return cfg;
  };
  config::PlaceConfig cfg = resolve(DefaultPlaceConfig());
  const std::string ckpt = CheckpointFile(cfg.checkpoint());
  // The environment the policy was trained in (weights, cost map, reward, FD schedule, …, the
  // checkpoint's), under what the user asks for: every difference is a warning.
  config::PlaceConfig trained = DefaultPlaceConfig();
  const TrainedChipEnv trained_env = ReadTrainedChipEnv(ckpt, trained.chip());
  *trained.mutable_chip() = trained_env.chip;
  cfg = resolve(trained);
  const nlohmann::json changed = ReconcileTrainedChipEnv(trained_env, ckpt, cfg.mutable_chip());
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  std::vector<std::unique_ptr<env::ChipEnv>> envs;
  envs.push_back(MakeChipEnv(cfg.chip(), trained_env.maps));
  env::ChipEnv& env = *envs[0];
  std::unique_ptr<encoders::Policy> policy = encoders::Policy::Load(ckpt, env);  // checks the layout
  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.WriteConfig(cfg, run::CommandLineText(g_argc, g_argv));
  run::InstallStopOnSignal();
  const BudgetClock clock = ParseBudgetClock(cfg.clock());
  const Stopwatch watch(clock);  // every stage's budget and time_s are on the run's clock
  auto elapsed = [&] { return watch.Elapsed(); };

  ChipTrainingState st;
  st.best_cost.assign(1, INFINITY);
  st.best.resize(1);
  nlohmann::json stages = nlohmann::json::object();
  // 1. Zero-shot: the most likely placement, then K samples.
  std::mt19937_64 rng(cfg.seed());
  const double greedy = PlayChipEpisode(*policy, env, cfg.seed(), &rng, /*greedy=*/true, nullptr);
  OfferBest(env, 0, greedy, &st);
  int64_t logged = 0;
  dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", greedy}, {"charts/best_proxy_cost", st.best_cost[0]}});
  double sum = 0;
  int complete = 0;
  for (int k = 0; k < cfg.samples() && !run::StopRequested(); ++k) {
    const double c = PlayChipEpisode(*policy, env, cfg.seed() + 1 + k, &rng, false, nullptr);
    OfferBest(env, 0, c, &st);
    if (std::isfinite(c)) sum += c, ++complete;
    dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", c}, {"charts/best_proxy_cost", st.best_cost[0]}});
  }
  stages["zero_shot"] = {{"greedy_proxy_cost", FiniteOrNull(greedy)},
                         {"samples", cfg.samples()},
                         {"mean_sampled_proxy_cost", complete ? nlohmann::json(sum / complete) : nlohmann::json(nullptr)},
                         {"best_proxy_cost", FiniteOrNull(st.best_cost[0])},
                         {"seconds", elapsed()}};
  std::fprintf(stderr, "place: zero-shot best %.6f (greedy %.6f, %d samples) in %.1f s\n", st.best_cost[0], greedy,
               cfg.samples(), elapsed());
  // 2. Fine-tuning (PPO with the default hyper-parameters, fresh optimiser).
  if (cfg.finetune_minutes() > 0 && !run::StopRequested()) {
    agents::Learner learner(policy.get(), AgentOptionsFrom(cfg.agent(), cfg.seed()));
    const double start = elapsed();
    run::ProgressOptions po;
    po.label = "place fine-tune";
    po.unit = "episodes";
    po.budget_seconds = cfg.finetune_minutes() * 60;
    if (clock == BudgetClock::kCpu) po.clock = ProcessCpuSeconds;
    run::Progress progress(po);
    ChipTrainingState ft = st;
    double entropy_first = NAN, entropy_last = NAN;  // the policy's entropy at the first and last update
    ft.elapsed_s = 0;
    ChipTrainingOptions to;
    to.episodes_per_update = cfg.episodes_per_update();
    to.collect_batch = cfg.collect_batch();
    to.seed = cfg.seed() + 1000000;
    to.budget_s = cfg.finetune_minutes() * 60;
    to.clock = clock;
    TrainChip(envs, learner, to, &ft, [] { return run::StopRequested(); },
              [&](int64_t, const run::Scalars& row) {
                // One column set for every stage: the update's mean cost and the best so far.
                double mean = NAN, best_so_far = NAN;
                run::Scalars losses;  // PPO's own scalars go to TensorBoard (metrics.csv keeps one column set)
                for (const auto& [k, v] : row) {
                  if (k == "charts/mean_proxy_cost") mean = v;
                  if (k == "charts/best_proxy_cost") best_so_far = v;
                  if (k.rfind("losses/", 0) == 0) losses.emplace_back(k, v);
                  if (k == "losses/entropy") {
                    if (std::isnan(entropy_first)) entropy_first = v;
                    entropy_last = v;
                  }
                }
                dir.Log(logged, {{"time_s", start + row[0].second}, {"charts/proxy_cost", mean},
                                 {"charts/best_proxy_cost", best_so_far}});
                dir.tensorboard().AddScalars(logged++, losses);
              },
              [&](const ChipTrainingState& s, double) { progress.Update(static_cast<double>(s.episodes), {{"best", s.best_cost[0]}}); });
    progress.Finish();
    st.best_cost = ft.best_cost;
    st.best = ft.best;
    stages["finetune"] = {{"episodes", ft.episodes}, {"updates", ft.iteration},
                          {"best_proxy_cost", FiniteOrNull(st.best_cost[0])},
                          {"seconds", elapsed() - start},
                          {"entropy_first_update", FiniteOrNull(entropy_first)},
                          {"entropy_last_update", FiniteOrNull(entropy_last)}};
  }
  // 3. Refinement of the best placement by a classic placer, starting from it.
  if (cfg.refine() != "none" && st.best[0].valid && !run::StopRequested()) {
    auto inst = std::make_shared<env::ChipInstance>(env.instance());
    inst->design.netlist = search::PlacedNetlist(env.netlist(), st.best[0]);
    env::ChipEnv start_env(inst, env.options());
    search::ChipBaselineOptions bo;
    bo.seconds = cfg.refine_minutes() * 60;
    bo.clock = clock;
    bo.seed = cfg.seed();
    bo.sa_init = "input";
    const double start = elapsed();
    const search::BaselineResult r = search::RunChipBaseline(cfg.refine(), &start_env, bo, [] { return run::StopRequested(); }, {});
    if (r.best.valid && r.best.cost.proxy_cost < st.best_cost[0]) {
      st.best_cost[0] = r.best.cost.proxy_cost;
      st.best[0] = r.best;
    }
    dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", r.best.valid ? r.best.cost.proxy_cost : NAN},
                       {"charts/best_proxy_cost", st.best_cost[0]}});
    stages["refine"] = {{"method", cfg.refine()}, {"evaluations", r.evaluations}, {"best_proxy_cost", st.best_cost[0]},
                        {"seconds", elapsed() - start}};
  }
  if (!st.best[0].valid) {
    std::fprintf(stderr, "place: the policy found no complete placement (every episode ran out of legal cells)\n");
    return kExitInfeasible;
  }
  nlohmann::json best = WriteBestPlacement(dir, env, st.best[0], "best", "place: " + env.instance().design.label);
  viz::PlotOptions plot;
  plot.title = "place: " + env.instance().design.label + " (zero-shot samples, fine-tuning, refinement)";
  plot.x_label = "time (s)";
  plot.y_label = "proxy cost";
  plot.markers = true;
  dir.PlotMetrics("curve", "time_s", {"charts/proxy_cost", "charts/best_proxy_cost"}, plot, {"placement", "best so far"});
  nlohmann::json j = {{"checkpoint", ckpt}, {"design", env.instance().design.label}, {"best", best},
                      {"trained_settings", {{"recorded", trained_env.recorded}, {"changed", changed}}},
                      {"stages", stages}, {"seconds", elapsed()}, {"clock", BudgetClockName(clock)},
                      {"out", dir.path()}};
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("place on %s: proxy %.6f (wirelength %.6f, density %.6f, congestion %.6f) in %.1f s\n",
                env.instance().design.label.c_str(), best["proxy_cost"].get<double>(), best["wirelength_cost"].get<double>(),
                best["density_cost"].get<double>(), best["congestion_cost"].get<double>(), elapsed());
    std::printf("wrote %s (best.plc, best and curve pictures, metrics.csv, TensorBoard events, result.json)\n", dir.path().c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (DeviceEnvSelected(argc, argv)) return DevicePlaceMain(argc, argv);  // device_training.h
  g_argc = argc;
  g_argv = argv;
  return RunMain("place", [&] {
    CLI::App app{"Places a chip's macros with a trained policy (a place-train checkpoint): best of a greedy and K "
                 "sampled placements, optional PPO fine-tuning on this design, optional refinement by simulated "
                 "annealing or coordinate descent; writes a run directory."};
    Options o;
    app.add_option("--checkpoint", o.checkpoint, "checkpoint file, or a place-train run directory")->check(cli::NonEmpty());
    app.add_option("--netlist", o.netlist, "netlist.pb.txt[.gz]; default: the built-in synthetic chip")->check(cli::NonEmpty());
    app.add_option("--plc", o.plc, ".plc: canvas, grid, routing, the input placement")->check(cli::NonEmpty());
    app.add_option("--samples", o.samples, "sampled placements besides the greedy one (default 16)")
        ->check(cli::IntRange(0, 1000000));
    app.add_option("--finetune-minutes", o.finetune_minutes, "PPO fine-tuning on this design (default 0)")
        ->check(cli::FiniteRange(0, cli::kMaxSeconds / 60));
    app.add_option("--refine", o.refine, "none | sa | cd: refine the best placement at the end (default none)");
    app.add_option("--refine-minutes", o.refine_minutes, "budget of --refine (default 1)")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--clock", o.clock,
                   "the budgets' clock: wall (default) or cpu (this process's CPU seconds, for fair budgets on a "
                   "shared machine); time_s in metrics.csv is on it");
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    cli::Parse(app, argc, argv);
    return Place(o);
  });
}
