// train-proposer: evolution strategies for the learned SA proposer (search/chip/proposer_es.h):
// the proposer's weights judged by the best proxy cost at the end of whole annealing runs on the
// training designs, written as proposer.json for `place-baseline --method sa --set
// sa.proposer=learned --set sa.proposer_weights=…` (docs/learned_sa.md):
//   train-proposer --netlist A.pb.txt.gz --plc A.plc --netlist B.pb.txt.gz --plc B.plc --minutes 30 --out runs/es
// After every iteration the search's state goes to DIR/checkpoints/state.json (one atomic write), so
// that `--resume DIR` continues a killed or finished run to the result an uninterrupted one gives
// (a longer run: --iterations N or --minutes M, the new totals):
//   train-proposer --resume runs/es --iterations 60
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "datasets/util/budget_clock.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stop_signal.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "search/chip/proposer_es.h"

using namespace placerl;

namespace {

int argc_ = 0;
char** argv_ = nullptr;

struct Options {
  std::vector<std::string> netlists, plcs;
  std::string clock, start;
  double minutes = 0;
  int iterations = -1, pairs = 0, threads = 0, test_kill_after_checkpoints = 0;
  int64_t seed = -1, moves = 0;
  bool json = false, verbose = false;
  run::RunDirFlags dir;
};

// Defaults, then `config_file` (--config, or a resumed run's config.pbtxt), then the named flags,
// then --set.
config::TrainProposerConfig ResolveConfig(const Options& o, const std::string& config_file) {
  config::TrainProposerConfig c = DefaultTrainProposerConfig();
  if (!config_file.empty()) run::MergeConfigFile(config_file, &c);
  if (!o.netlists.empty()) {
    c.clear_netlists();
    for (const auto& n : o.netlists) c.add_netlists(n);
  }
  if (!o.plcs.empty()) {
    c.clear_plcs();
    for (const auto& p : o.plcs) c.add_plcs(p);
  }
  if (o.minutes > 0) c.set_minutes(o.minutes);
  if (!o.clock.empty()) c.set_clock(o.clock);
  if (o.seed >= 0) c.set_seed(static_cast<uint64_t>(o.seed));
  if (o.iterations >= 0) c.set_iterations(o.iterations);
  if (o.pairs > 0) c.set_pairs(o.pairs);
  if (o.threads > 0) c.set_threads(o.threads);
  if (o.moves > 0) c.mutable_run()->set_max_evaluations(o.moves);
  if (!o.start.empty()) c.set_start(o.start);
  run::ApplyOverrides(o.dir.sets, &c);
  CheckTrainProposerConfig(c);
  return c;
}

// --resume DIR: the run's config.pbtxt with the flags over it; only the budget (minutes,
// iterations) and the threads (which do not change the result) may differ from the run's.
config::TrainProposerConfig ResolveResumeConfig(const Options& o) {
  if (!o.dir.config.empty())
    throw ConfigError("--config with --resume: a resumed run keeps its config.pbtxt (a longer search: --iterations N, --minutes M)");
  if (!std::filesystem::exists(o.dir.resume + "/checkpoints/state.json"))
    throw ConfigError("nothing to resume in " + o.dir.resume + ": no checkpoints/state.json (not a train-proposer run, or "
                      "one stopped before its first checkpoint)");
  const std::string saved_path = o.dir.resume + "/config.pbtxt";
  const config::TrainProposerConfig saved = ResolveConfig(Options{}, saved_path);
  config::TrainProposerConfig c = ResolveConfig(o, saved_path);
  run::MakeInputPathsAbsolute(&c);  // as config.pbtxt has them
  const std::vector<run::ConfigDifference> changed = run::ConfigDifferences(saved, c, {"minutes", "iterations", "threads"});
  if (!changed.empty())
    throw ConfigError("--resume " + o.dir.resume + " keeps the run's designs, start and settings (only --iterations, "
                      "--minutes and --threads may change); asked for " + changed.front().path + " " +
                      changed.front().after + " (the run's: " + changed.front().before + ")");
  return c;
}

search::ProposerWeights StartWeights(const config::TrainProposerConfig& c) {
  if (c.start() == "uniform") return {};
  if (c.start() == "mixture") {
    const auto& sa = c.run().sa();
    return search::WeightsOfPrior(search::MixtureLogPrior(
        sa.soft_move_prob(), std::vector<double>(sa.action_probs().begin(), sa.action_probs().end())));
  }
  return search::LoadProposerWeights(c.start());
}

nlohmann::json Probabilities(const search::ProposerWeights& w, int64_t moves) {
  // π(kind | progress) at the start, the middle and the end of a run (acceptance rate 0.5), every kind
  // legal, and the schedule's temperature and soft-step multipliers there (and the acceptance
  // controller's target, when the weights have one) — for a run of the training runs' `moves` (the
  // run-length term's λ, when the weights have one).
  std::array<bool, search::ProposerWeights::kKinds> legal;
  legal.fill(true);
  search::ProposerOptions po;
  po.learning_rate = 0;
  search::LearnedProposer p(w, po, legal);
  const double length_log = search::ProposerLengthLog(w, static_cast<double>(moves));
  nlohmann::json j = nlohmann::json::object();
  for (double at : {0.0, 0.5, 1.0}) {
    const auto prob = p.Probabilities(at, 0.5);
    nlohmann::json row = nlohmann::json::object();
    for (int k = 0; k < search::ProposerWeights::kKinds; ++k) row[search::ProposalKindName(k)] = prob[k];
    row["temperature_factor"] = search::ProposerTemperatureFactor(w, at, length_log);
    row["soft_step_factor"] = search::ProposerSoftStepFactor(w, at);
    if (w.control_on) {
      search::AcceptanceController control(w);
      control.set_length_log(length_log);
      row["target_acceptance"] = control.target(at);
    }
    char key[32];
    std::snprintf(key, sizeof(key), "progress_%.1f", at);
    j[key] = row;
  }
  return j;
}

int TrainProposer(const Options& o) {
  const bool resuming = !o.dir.resume.empty();
  const config::TrainProposerConfig cfg = resuming ? ResolveResumeConfig(o) : ResolveConfig(o, o.dir.config);
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  // The designs, one environment per design and thread (built before the run directory: bad input leaves nothing).
  const int designs = std::max(1, cfg.netlists_size());
  std::vector<std::vector<std::unique_ptr<env::ChipEnv>>> envs(designs);
  std::vector<std::string> labels;
  for (int d = 0; d < designs; ++d) {
    config::ChipEnvConfig chip = cfg.run().chip();
    if (cfg.netlists_size() > 0) chip.set_netlist(cfg.netlists(d));
    if (cfg.plcs_size() > 0) chip.set_plc(cfg.plcs(d));
    for (int t = 0; t < cfg.threads(); ++t) envs[d].push_back(MakeChipEnv(chip, /*maps=*/false));
    labels.push_back(envs[d][0]->instance().design.label);
  }
  search::ProposerEsState state;
  if (resuming) {
    const std::string path = o.dir.resume + "/checkpoints/state.json";
    state = search::ParseProposerEsState(ReadFile(path), path);
    if (state.iterations > cfg.iterations())  // refused before the run's config.pbtxt is rewritten
      throw ConfigError("--resume " + o.dir.resume + ": the run has done " + std::to_string(state.iterations) +
                        " iterations; --iterations is the new total and cannot be fewer");
  }
  const search::ProposerWeights start = resuming ? state.start : StartWeights(cfg);
  search::ChipBaselineOptions bo = BaselineOptionsFromConfig(cfg.run());
  bo.seconds = cli::kMaxSeconds;  // each run ends after its moves (max_evaluations)
  bo.clock = BudgetClock::kWall;
  bo.sa_proposer = "learned";
  search::ProposerEsOptions eo;
  eo.iterations = cfg.iterations();
  eo.pairs = cfg.pairs();
  eo.sigma = cfg.sigma();
  eo.learning_rate = cfg.learning_rate();
  eo.features = cfg.features().empty() ? std::vector<int>{} : ProposerEsFeatures(cfg.features());
  eo.select = cfg.select();
  eo.schedule = cfg.schedule();
  eo.control = cfg.control();
  eo.control_state = cfg.control_state();
  eo.hard_select = cfg.hard_select();
  eo.target_select = cfg.target_select();
  eo.late_kinds = cfg.late_kinds();
  eo.length = cfg.length();
  eo.seed = cfg.seed();
  eo.threads = cfg.threads();

  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.SetNeedsCheckpoint();
  dir.WriteConfig(cfg, run::CommandLineText(argc_, argv_));
  if (resuming) dir.ResumeFrom(state.iterations + 1);
  run::InstallStopOnSignal();
  const BudgetClock clock = ParseBudgetClock(cfg.clock());
  auto now = [clock] {
    return clock == BudgetClock::kCpu
               ? ProcessCpuSeconds()
               : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double t0 = now(), before = state.seconds;  // a resumed run's budget counts its earlier starts
  auto elapsed = [&] { return before + now() - t0; };
  const double budget = cfg.minutes() * 60;
  run::ProgressOptions po;
  po.label = "train-proposer";
  po.unit = "iterations";
  po.total = eo.iterations;
  run::Progress progress(po);
  if (resuming) progress.Update(state.iterations, {});

  auto run_one = [&](const search::ProposerWeights& w, int d, uint64_t seed, int thread) {
    search::ChipBaselineOptions ro = bo;
    ro.seed = seed;
    ro.sa_proposer_weights = w;
    const search::BaselineResult r = search::RunChipBaseline("sa", envs[d][thread].get(), ro, {}, {});
    if (!r.best.valid) throw Error("train-proposer: no placement on " + labels[d] + ": " + r.infeasible);
    return r.best.cost.proxy_cost;
  };
  std::vector<viz::PlotSeries> curves(designs + 1);
  curves[0].label = "mean, relative to the start";
  for (int d = 0; d < designs; ++d) curves[d + 1].label = labels[d];
  for (const auto& it : state.history) {  // a resumed run's earlier iterations
    curves[0].x.push_back(it.iteration);
    curves[0].y.push_back(it.mean_relative);
  }
  auto on_iteration = [&](const search::ProposerEsIteration& it, const search::ProposerWeights&) {
    run::Scalars s = {{"charts/mean_relative_cost", it.mean_relative},
                                    {"charts/mean_cost", it.mean_cost},
                                    {"charts/gradient_norm", it.gradient_norm},
                                    {"charts/elapsed_s", it.seconds}};
    for (int d = 0; d < designs; ++d)
      if (std::isfinite(it.design_cost[d])) s.push_back({"design/" + labels[d], it.design_cost[d]});
    dir.Log(it.iteration, s);
    curves[0].x.push_back(it.iteration);
    curves[0].y.push_back(it.mean_relative);
    progress.Update(it.iteration, {{"relative", it.mean_relative}});
  };
  search::ProposerEsCheckpoints checkpoints;
  checkpoints.state = &state;
  int written = 0;
  checkpoints.on_checkpoint = [&](const search::ProposerEsState& s) {
    WriteFileAtomic(dir.CheckpointPath("state.json"), search::ProposerEsStateJson(s));
    if (o.test_kill_after_checkpoints > 0 && ++written == o.test_kill_after_checkpoints) std::raise(SIGKILL);
  };
  const search::ProposerEsResult r = search::TrainProposerEs(
      designs, run_one, start, eo, [&] { return run::StopRequested() || elapsed() > budget; }, on_iteration, elapsed,
      checkpoints);

  search::ProposerWeights out = r.weights;
  out.trained_on = start.trained_on;
  for (const auto& l : labels) search::AddTrainedOn(&out, l);
  out.proposals_trained = start.proposals_trained + r.runs * cfg.run().max_evaluations();
  dir.WriteFile("proposer.json", search::ProposerWeightsJson(out));
  viz::PlotOptions plot;
  plot.title = "train-proposer: mean final proxy cost ÷ the start's, per iteration";
  plot.x_label = "iteration";
  plot.y_label = "relative final proxy cost";
  plot.markers = curves[0].x.size() < 3;
  viz::PlotCurves({curves[0]}, plot, dir.PicturePath("curve"));

  nlohmann::json j;
  j["designs"] = labels;
  j["start"] = cfg.start();
  j["moves_per_run"] = cfg.run().max_evaluations();
  j["iterations"] = r.history.size();
  j["runs"] = r.runs;
  j["seconds"] = elapsed();
  j["clock"] = cfg.clock();
  j["budget_seconds"] = budget;
  j["stopped"] = r.stopped;
  j["stopped_by_signal"] = run::StopRequested();
  j["resumed"] = resuming;
  j["start_cost"] = r.scale;
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& it : r.history)
    hist.push_back({{"iteration", it.iteration}, {"mean_relative_cost", it.mean_relative}, {"mean_cost", it.mean_cost},
                    {"gradient_norm", it.gradient_norm}, {"seconds", it.seconds}});
  j["history"] = hist;
  j["probabilities_start"] = Probabilities(start, cfg.run().max_evaluations());
  j["probabilities_end"] = Probabilities(r.weights, cfg.run().max_evaluations());
  j["weights_out"] = dir.Path("proposer.json");
  j["out"] = dir.path();
  MarkFeasible(&j);
  dir.WriteFile("result.json", j.dump(2) + "\n");
  char summary[160];
  std::snprintf(summary, sizeof(summary), "%zu iterations, %lld runs, last mean relative cost %.5f", r.history.size(),
                static_cast<long long>(r.runs), r.history.empty() ? 1.0 : r.history.back().mean_relative);
  progress.Finish(summary);
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("train-proposer on %d design(s): %s%s\n", designs, summary, run::StopRequested() ? " (stopped by signal)" : "");
    std::printf("wrote %s (proposer.json, curve.%s, metrics.csv, config.pbtxt, result.json, checkpoints/state.json)\n", dir.path().c_str(),
                o.dir.pictures.c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  argc_ = argc;
  argv_ = argv;
  return RunMain("train-proposer", [&] {
    CLI::App app{"Trains the learned simulated-annealing proposer by evolution strategies: its weights are judged by the "
                 "best proxy cost at the end of whole annealing runs (sa-soft's settings, a fixed number of moves) on "
                 "the training designs, and written as proposer.json for place-baseline --method sa --set "
                 "sa.proposer=learned --set sa.proposer_weights=FILE (docs/learned_sa.md)."};
    Options o;
    app.add_option("--netlist", o.netlists, "a design to train on (repeat for several); default: the built-in synthetic chip");
    app.add_option("--plc", o.plcs, "its .plc (repeat: none, or one per --netlist)");
    app.add_option("--minutes", o.minutes, "budget (default 60; with --resume: the new total over every start); the "
                   "unfinished iteration is dropped")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--clock", o.clock, "the budget's clock: cpu (default; this process's CPU time) or wall")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_option("--iterations", o.iterations, "ES iterations (default 30; with --resume: the new total)")->check(cli::IntRange(0, 1000000));
    app.add_option("--pairs", o.pairs, "antithetic pairs per iteration (default 4)")->check(cli::IntRange(1, 10000));
    app.add_option("--moves", o.moves, "moves per annealing run (default 200000)")->check(cli::IntRange(1, 1000000000));
    app.add_option("--threads", o.threads, "annealing runs in parallel (default 1)")->check(cli::IntRange(1, 256));
    app.add_option("--start", o.start, "mixture (default: sa-soft's mixture) | uniform | shipped (place-baseline --method learned-sa's proposer) | a proposer.json");
    app.add_option("--seed", o.seed, "random seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    app.add_option("--test-kill-after-checkpoints", o.test_kill_after_checkpoints)->group("");  // tests: SIGKILL itself
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "train-proposer", [] { return DefaultTrainProposerConfig(); });
    cli::Parse(app, argc, argv);
    return TrainProposer(o);
  });
}
