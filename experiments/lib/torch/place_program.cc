#include "experiments/lib/torch/place_program.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "agents/chip_training.h"
#include "agents/learner.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stop_signal.h"
#include "encoders/policy.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/torch/trained_chip_env.h"
#include "search/chip/baselines.h"

namespace placerl::place {

config::PlaceConfig DefaultConfig() {
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

namespace {

void CheckPlaceConfig(const config::PlaceConfig& c) {
  CheckChipEnvConfig(c.chip());
  if (c.checkpoint().empty()) throw ConfigError("a checkpoint is needed (--checkpoint FILE or run directory)");
  if (c.samples() < 0 || c.samples() > 1000000) throw ConfigError("samples must be in [0, 1e6]");
  if (!std::isfinite(c.finetune_minutes()) || c.finetune_minutes() < 0 || c.finetune_minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("finetune_minutes must be in [0, a week]");
  if (c.episodes_per_update() < 1 || c.episodes_per_update() > 100000) throw ConfigError("episodes_per_update must be in [1, 100000]");
  if (c.refine() != "none" && c.refine() != "sa" && c.refine() != "cd" && c.refine() != "learned-sa")
    throw ConfigError("refine must be none, sa, learned-sa or cd (got '" + c.refine() + "')");
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


// The costs of a placement for result.json (nulls when there is none).
nlohmann::json CostsJson(const chip::CostBreakdown* c) {
  return {{"proxy_cost", c ? nlohmann::json(c->proxy_cost) : nlohmann::json(nullptr)},
          {"wirelength_cost", c ? nlohmann::json(c->wirelength_cost) : nlohmann::json(nullptr)},
          {"density_cost", c ? nlohmann::json(c->density_cost) : nlohmann::json(nullptr)},
          {"congestion_cost", c ? nlohmann::json(c->congestion_cost) : nlohmann::json(nullptr)}};
}

// Stage 1, zero-shot: the most likely placement, then K samples (until a stop request); rows
// logged from *logged on; `st` gets the bests. Returns its stage entry.
nlohmann::json ZeroShot(const config::PlaceConfig& cfg, encoders::Policy& policy, env::ChipEnv& env, const Stopwatch& watch,
                        run::RunDirectory& dir, int64_t* logged_rows, ChipTrainingState* state) {
  auto elapsed = [&] { return watch.Elapsed(); };
  int64_t& logged = *logged_rows;
  ChipTrainingState& st = *state;
  std::mt19937_64 rng(cfg.seed());
  const double greedy = PlayChipEpisode(policy, env, cfg.seed(), &rng, /*greedy=*/true, nullptr);
  OfferBest(env, 0, greedy, &st);
  dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", greedy}, {"charts/best_proxy_cost", st.best_cost[0]}});
  double sum = 0;
  int complete = 0, sampled = 0;  // what was done (a stop request ends the samples early)
  for (int k = 0; k < cfg.samples() && !run::StopRequested(); ++k) {
    const double c = PlayChipEpisode(policy, env, cfg.seed() + 1 + k, &rng, false, nullptr);
    ++sampled;
    OfferBest(env, 0, c, &st);
    if (std::isfinite(c)) sum += c, ++complete;
    dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", c}, {"charts/best_proxy_cost", st.best_cost[0]}});
  }
  nlohmann::json stage = {{"greedy_proxy_cost", FiniteOrNull(greedy)},
                          {"samples", sampled},
                          {"samples_requested", cfg.samples()},
                          {"complete_samples", complete},
                          {"mean_sampled_proxy_cost", complete ? nlohmann::json(sum / complete) : nlohmann::json(nullptr)},
                          {"best_proxy_cost", FiniteOrNull(st.best_cost[0])},
                          {"seconds", elapsed()}};
  auto cost_text = [](double c) {  // "none" for an episode that did not complete
    char b[32];
    std::snprintf(b, sizeof b, "%.6f", c);
    return std::isfinite(c) ? std::string(b) : std::string("none");
  };
  std::fprintf(stderr, "place: zero-shot best %s (greedy %s, %d of %d samples%s) in %.1f s\n",
               cost_text(st.best_cost[0]).c_str(), cost_text(greedy).c_str(), sampled, cfg.samples(),
               sampled < cfg.samples() ? ", stopped" : "", elapsed());
  return stage;
}

// Stage 2: fine-tuning of `policy` (PPO with the config's agent options, fresh optimiser) for
// finetune_minutes; rows logged from *logged on; `st` gets the bests. Returns its stage entry.
nlohmann::json FineTune(const config::PlaceConfig& cfg, std::vector<std::unique_ptr<env::ChipEnv>>& envs,
                        encoders::Policy* policy, BudgetClock clock, const Stopwatch& watch, run::RunDirectory& dir,
                        int64_t* logged_rows, ChipTrainingState* state) {
  auto elapsed = [&] { return watch.Elapsed(); };
  int64_t& logged = *logged_rows;
  ChipTrainingState& st = *state;
  agents::Learner learner(policy, AgentOptionsFrom(cfg.agent(), cfg.seed()));
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
            [&](const ChipTrainingState& s, double) {
              if (std::isfinite(s.best_cost[0])) progress.Update(static_cast<double>(s.episodes), {{"best", s.best_cost[0]}});
              else progress.Update(static_cast<double>(s.episodes));  // no "best inf"
            });
  progress.Finish();
  st.best_cost = ft.best_cost;
  st.best = ft.best;
  return {{"episodes", ft.episodes}, {"updates", ft.iteration},
                        {"best_proxy_cost", FiniteOrNull(st.best_cost[0])},
                        {"seconds", elapsed() - start},
                        {"budget_seconds", cfg.finetune_minutes() * 60},
                        {"entropy_first_update", FiniteOrNull(entropy_first)},
                        {"entropy_last_update", FiniteOrNull(entropy_last)}};
}

// Stage 3: refinement of the best placement by a classic placer (cfg.refine), starting from
// it; `st` gets its result when better. Returns its stage entry.
nlohmann::json Refine(const config::PlaceConfig& cfg, const env::ChipEnv& env, BudgetClock clock, const Stopwatch& watch,
                      run::RunDirectory& dir, int64_t* logged_rows, ChipTrainingState* state) {
  auto elapsed = [&] { return watch.Elapsed(); };
  int64_t& logged = *logged_rows;
  ChipTrainingState& st = *state;
  auto inst = std::make_shared<env::ChipInstance>(env.instance());
  inst->design.netlist = env::PlacedNetlist(env.netlist(), st.best[0]);
  env::ChipEnv start_env(inst, env.options());
  search::ChipBaselineOptions bo;
  if (cfg.refine() == "learned-sa") {  // place-baseline --method learned-sa's settings (the start is legal: input)
    config::PlaceBaselineConfig preset = DefaultPlaceBaselineConfig();
    ApplyLearnedSaPreset(preset.mutable_sa());
    bo = BaselineOptionsFromConfig(preset);
  }
  bo.seconds = cfg.refine_minutes() * 60;
  bo.clock = clock;
  bo.seed = cfg.seed();
  bo.sa_init = "input";
  const double start = elapsed();
  const search::BaselineResult r = search::RunChipBaseline(cfg.refine() == "learned-sa" ? "sa" : cfg.refine(), &start_env,
                                                           bo, [] { return run::StopRequested(); }, {});
  if (r.best.valid && r.best.cost.proxy_cost < st.best_cost[0]) {
    st.best_cost[0] = r.best.cost.proxy_cost;
    st.best[0] = r.best;
  }
  dir.Log(logged++, {{"time_s", elapsed()}, {"charts/proxy_cost", r.best.valid ? r.best.cost.proxy_cost : NAN},
                     {"charts/best_proxy_cost", st.best_cost[0]}});
  return {{"method", cfg.refine()}, {"evaluations", r.evaluations}, {"best_proxy_cost", FiniteOrNull(st.best_cost[0])},
                      {"seconds", elapsed() - start}, {"budget_seconds", cfg.refine_minutes() * 60}};
}

// The summary lines: the result's costs, and the input placement next to it.
void PrintSummary(const nlohmann::json& best, const env::ChipEnv& env, const ChipTrainingState& st,
                  const env::ChipSolution& input, bool input_legal, bool input_wins, bool keep_input,
                  double result_cost, double seconds, const run::RunDirectory& dir) {
  std::printf("place on %s: proxy %.6f (wirelength %.6f, density %.6f, congestion %.6f) in %.1f s%s\n",
              env.instance().design.label.c_str(), best["proxy_cost"].get<double>(), best["wirelength_cost"].get<double>(),
              best["density_cost"].get<double>(), best["congestion_cost"].get<double>(), seconds,
              run::StopRequested() ? " (stopped by signal)" : "");
  // The input placement next to the policy's result.
  std::string verdict;
  if (!st.best[0].valid) {
    verdict = "no complete placement";
  } else {
    char buf[96];
    const double d = result_cost - input.cost.proxy_cost;
    std::snprintf(buf, sizeof buf, "%.6f (%s by %.6f)", result_cost, d > 0 ? "worse" : d < 0 ? "better" : "equal",
                  std::fabs(d));
    verdict = buf;
  }
  std::printf("input placement: %.6f%s, result: %s%s\n", input.cost.proxy_cost, input_legal ? "" : " (illegal)",
              verdict.c_str(),
              keep_input ? "; kept the input as best.plc (--keep-better)"
              : input_wins ? "; --keep-better writes the input as best.plc" : "");
  std::printf("wrote %s (best.plc, best and curve pictures, metrics.csv, TensorBoard events, result.json)\n", dir.path().c_str());
}

}  // namespace

// Config (the checkpoint's training environment under what the user asks) → policy and the
// input placement → zero-shot samples → fine-tuning → refinement → best.plc, result.json.
int Run(const Options& o) {
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
  config::PlaceConfig cfg = resolve(DefaultConfig());
  const std::string ckpt = CheckpointFile(cfg.checkpoint());
  // The environment the policy was trained in (weights, cost map, reward, FD schedule, …, the
  // checkpoint's), under what the user asks for: every difference is a warning.
  config::PlaceConfig trained = DefaultConfig();
  const TrainedChipEnv trained_env = ReadTrainedChipEnv(ckpt, trained.chip());
  *trained.mutable_chip() = trained_env.chip;
  cfg = resolve(trained);
  const nlohmann::json changed = ReconcileTrainedChipEnv(trained_env, ckpt, cfg.mutable_chip());
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  std::vector<std::unique_ptr<env::ChipEnv>> envs;
  envs.push_back(MakeChipEnv(cfg.chip(), trained_env.maps));
  env::ChipEnv& env = *envs[0];
  std::unique_ptr<encoders::Policy> policy = encoders::Policy::Load(ckpt, env);  // checks the layout
  // The input placement (the .plc's, else the netlist's positions), scored as proxy-cost would:
  // the result is reported next to it, and --keep-better keeps it when it is legal and better.
  env::ChipSolution input;
  input.x = env.netlist().x;
  input.y = env.netlist().y;
  input.orientation = env.netlist().orientation;
  input.cost = chip::EvaluateProxyCost(env.netlist(), env.settings(), env.options().weights);
  input.valid = true;
  std::string input_illegal;
  const bool input_legal = env::IsLegalPlacement(env.netlist(), env.settings(), input, &input_illegal);
  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.WriteConfig(cfg, run::CommandLineText(o.argc, o.argv));
  run::InstallStopOnSignal();
  const BudgetClock clock = ParseBudgetClock(cfg.clock());
  const Stopwatch watch(clock);  // every stage's budget and time_s are on the run's clock
  auto elapsed = [&] { return watch.Elapsed(); };

  ChipTrainingState st;
  st.best_cost.assign(1, INFINITY);
  st.best.resize(1);
  nlohmann::json stages = nlohmann::json::object();
  // 1. Zero-shot: the most likely placement, then K samples.
  int64_t logged = 0;
  stages["zero_shot"] = ZeroShot(cfg, *policy, env, watch, dir, &logged, &st);
  // 2. Fine-tuning (PPO with the default hyper-parameters, fresh optimiser).
  if (cfg.finetune_minutes() > 0 && !run::StopRequested())
    stages["finetune"] = FineTune(cfg, envs, policy.get(), clock, watch, dir, &logged, &st);
  // 3. Refinement of the best placement by a classic placer, starting from it.
  if (cfg.refine() != "none" && st.best[0].valid && !run::StopRequested())
    stages["refine"] = Refine(cfg, env, clock, watch, dir, &logged, &st);
  // The stages that did not run because of a stop request are named.
  nlohmann::json skipped = nlohmann::json::array();
  if (run::StopRequested()) {
    if (cfg.finetune_minutes() > 0 && !stages.contains("finetune")) skipped.push_back("finetune");
    if (cfg.refine() != "none" && !stages.contains("refine")) skipped.push_back("refine");
  }
  // The input placement against the result; --keep-better keeps the input when it is legal and
  // better (or when the policy found no complete placement).
  const double result_cost = st.best[0].valid ? st.best[0].cost.proxy_cost : INFINITY;
  const bool input_wins = input_legal && input.cost.proxy_cost < result_cost;
  const bool keep_input = o.keep_better && input_wins;
  nlohmann::json input_j = CostsJson(&input.cost);
  input_j["legal"] = input_legal;
  if (!input_legal) input_j["illegal"] = input_illegal;
  nlohmann::json j = {{"checkpoint", ckpt}, {"design", env.instance().design.label},
                      {"input", input_j}, {"input_cost", input.cost.proxy_cost},
                      {"result_cost", FiniteOrNull(result_cost)},
                      {"kept", keep_input ? "input" : "result"}, {"keep_better", o.keep_better},
                      {"stages", stages}, {"stopped_by_signal", run::StopRequested()}, {"skipped_stages", skipped},
                      {"clock", BudgetClockName(clock)}};
  if (!st.best[0].valid && !keep_input) {
    InfeasibleRun bad;
    bad.reason = "no complete placement: every episode of the policy ran out of legal cells " +
                 NoCompletePlacementHint(env.instance().design);
    j["best"] = CostsJson(nullptr);
    j["best"]["design"] = env.instance().design.label;
    j["best"]["plc"] = nullptr;
    j["seconds"] = elapsed();
    bad.document = j;
    bad.out = dir.path();
    return ReportInfeasible("place", bad, o.json, [&](const std::string& text) { dir.WriteFile("result.json", text); });
  }
  nlohmann::json best = WriteBestPlacement(dir, env, keep_input ? input : st.best[0], "best",
                                           "place: " + env.instance().design.label + (keep_input ? " (the input placement)" : ""));
  viz::PlotOptions plot;
  plot.title = "place: " + env.instance().design.label + " (zero-shot samples, fine-tuning, refinement)";
  plot.x_label = "time (s)";
  plot.y_label = "proxy cost";
  plot.markers = true;
  dir.PlotMetrics("curve", "time_s", {"charts/proxy_cost", "charts/best_proxy_cost"}, plot, {"placement", "best so far"});
  j["best"] = best;
  j["trained_settings"] = {{"recorded", trained_env.recorded}, {"changed", changed}};
  j["seconds"] = elapsed();
  j["out"] = dir.path();
  MarkFeasible(&j);
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    PrintSummary(best, env, st, input, input_legal, input_wins, keep_input, result_cost, elapsed(), dir);
  }
  return kExitOk;
}

}  // namespace placerl::place
