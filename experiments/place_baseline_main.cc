// place-baseline: the classic chip macro placers (random, greedy, simulated annealing,
// force-directed soft macros, coordinate descent) on the chip environment and the exact proxy cost, with a time
// budget, writing a run directory (docs/conventions.md "Run directories"):
//   place-baseline --method sa --netlist N.pb.txt.gz --plc initial.plc --minutes 10 --out runs/sa
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/plc.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/render.h"
#include "experiments/lib/run_dir.h"
#include "datasets/util/stop_signal.h"
#include "experiments/lib/place_baseline_device.h"
#include "search/chip/baselines.h"

using namespace placerl;

namespace {

int argc_ = 0;
char** argv_ = nullptr;

struct Options {
  std::string method, netlist, plc, clock;
  double minutes = 0;
  int64_t seed = -1;
  bool json = false;
  bool verbose = false;
  bool refine_cd = false;
  run::RunDirFlags dir;
};

// Defaults, then --config, then the named flags, then --set.
config::PlaceBaselineConfig ResolveConfig(const Options& o) {
  config::PlaceBaselineConfig c = DefaultPlaceBaselineConfig();
  if (!o.dir.config.empty()) run::MergeConfigFile(o.dir.config, &c);
  if (o.method == "sa-soft" || o.method == "learned-sa") {  // named presets: sa with sa-soft's settings (before --set)
    c.set_method("sa");
    if (o.method == "learned-sa")
      ApplyLearnedSaPreset(c.mutable_sa());  // + the shipped proposer, frozen (docs/learned_sa.md)
    else
      ApplySaSoftPreset(c.mutable_sa());
  } else if (!o.method.empty()) {
    c.set_method(o.method);
  }
  if (!o.netlist.empty()) c.mutable_chip()->set_netlist(o.netlist);
  if (!o.plc.empty()) c.mutable_chip()->set_plc(o.plc);
  if (o.minutes > 0) c.set_minutes(o.minutes);
  if (!o.clock.empty()) c.set_clock(o.clock);
  if (o.seed >= 0) c.set_seed(static_cast<uint64_t>(o.seed));
  if (o.refine_cd) c.set_refine_cd(true);
  run::ApplyOverrides(o.dir.sets, &c);
  CheckPlaceBaselineConfig(c);
  return c;
}

int PlaceBaseline(const Options& o) {
  const config::PlaceBaselineConfig cfg = ResolveConfig(o);
  if (!o.dir.resume.empty()) throw ConfigError("place-baseline runs cannot be resumed; start a new one with --out");
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  auto env = MakeChipEnv(cfg.chip(), /*maps=*/false);  // before the directory: bad input leaves nothing
  const search::ChipBaselineOptions bo = BaselineOptionsFromConfig(cfg);  // (reads sa.proposer_weights)
  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.WriteConfig(cfg, run::CommandLineText(argc_, argv_));

  run::InstallStopOnSignal();
  run::ProgressOptions po;
  po.label = cfg.method();
  po.unit = cfg.method() == "random" ? "episodes" : cfg.method() == "sa" ? "moves" : "cost reads";
  po.budget_seconds = bo.seconds;
  if (bo.max_evaluations > 0) po.total = static_cast<double>(bo.max_evaluations);  // the earlier of the two ends the run
  if (bo.clock == BudgetClock::kCpu) po.clock = ProcessCpuSeconds;
  run::Progress progress(po);
  int64_t logged = 0;
  auto on_progress = [&](const search::BaselineProgress& p) {
    if (p.best_cost > 0) {  // (0: no complete placement yet)
      progress.Update(static_cast<double>(p.evaluations), {{"best", p.best_cost}});
      run::Scalars row = {{"charts/best_proxy_cost", p.best_cost},
                          {"charts/current_proxy_cost", p.current_cost},
                          {"charts/evaluations", static_cast<double>(p.evaluations)},
                          {"charts/elapsed_s", p.elapsed_s}};
      if (cfg.method() == "sa") {  // the schedule as it ran (acceptance rate = Δaccepted ÷ Δevaluations)
        row.emplace_back("charts/accepted", static_cast<double>(p.accepted));
        row.emplace_back("charts/temperature", p.temperature);
      }
      dir.Log(logged++, row);
    } else {
      progress.Update(static_cast<double>(p.evaluations));
    }
  };
  const search::BaselineResult r =
      search::RunChipBaseline(cfg.method(), env.get(), bo, [] { return run::StopRequested(); }, on_progress);
  char summary[256];
  if (r.best.valid)
    std::snprintf(summary, sizeof(summary), "best proxy cost %.6f, %.4g %s/s", r.best.cost.proxy_cost,
                  r.evaluations_per_second(), po.unit.c_str());
  else
    std::snprintf(summary, sizeof(summary), "no complete placement, %.4g %s/s", r.evaluations_per_second(), po.unit.c_str());
  progress.Finish(summary);

  // What the run was asked for and what it did, feasible or not.
  nlohmann::json j;
  j["method"] = cfg.method();
  j["netlist"] = cfg.chip().netlist().empty() ? env->instance().design.label : cfg.chip().netlist();
  j["plc"] = cfg.chip().plc();
  j["canvas"] = {env->settings().canvas_width, env->settings().canvas_height};
  j["grid"] = {env->settings().cols, env->settings().rows};
  j["weights"] = {cfg.chip().wirelength_weight(), cfg.chip().density_weight(), cfg.chip().congestion_weight()};
  j["seed"] = cfg.seed();
  j["budget_seconds"] = bo.seconds;
  // What it did, feasible or not.
  j["seconds"] = r.seconds;
  j["evaluations"] = r.evaluations;
  j["evaluations_per_second"] = r.evaluations_per_second();
  j["episodes"] = r.episodes;
  j["accepted"] = r.accepted;
  if (!r.anneal_profile.empty()) {
    // What the evaluated proposals did per tenth of the run, hard- and soft-macro moves apart:
    // fractions of the evaluated ones that lowered / kept / raised the cost, the share of the raising
    // ones accepted, and the geometric mean of their increase (the scale the temperature meets).
    nlohmann::json tenths = nlohmann::json::array();
    for (const auto& t : r.anneal_profile) {
      nlohmann::json row = {{"temperature", t.temperature}};
      for (int g = 0; g < 2; ++g) {
        const auto& k = t.kinds[g];
        const double n = std::max<double>(1, k.evaluated), up = std::max<double>(1, k.uphill);
        row[g == 0 ? "hard" : "soft"] = {{"evaluated", k.evaluated},
                                         {"downhill", k.downhill / n},
                                         {"unchanged", k.unchanged / n},
                                         {"uphill", k.uphill / n},
                                         {"uphill_accepted", k.uphill_accepted / up},
                                         {"uphill_increase", k.uphill > 0 ? std::exp(k.sum_log_uphill / up) : 0.0}};
      }
      // The acceptance controller (a learned proposer with control weights): its factor on the
      // temperature, the acceptance it aims at and, with the state term, d — at the end of the tenth.
      if (r.proposer.used && r.proposer.weights.control_on) {
        row["control"] = {{"factor", t.control_factor}, {"target", t.control_target}};
        if (r.proposer.weights.control_state_on) row["control"]["state"] = t.control_state;
      }
      // The current placement at the end of the tenth (proxy-cost --hotspots's split of the congestion).
      row["placement"] = {{"wirelength_cost", t.wirelength_cost},
                          {"congestion_cost", t.congestion_cost},
                          {"congestion_routing", t.congestion_routing}};
      tenths.push_back(row);
    }
    j["anneal_profile"] = tenths;
    if (std::isfinite(r.control_first_log_share)) j["control_first_log_share"] = r.control_first_log_share;
    if (std::isfinite(r.length_log)) j["length_log"] = r.length_log;
    if (r.carried_soft_moves > 0) j["carried_soft_moves"] = r.carried_soft_moves;
    if (r.hot_soft_moves > 0) j["hot_soft_moves"] = r.hot_soft_moves, j["hot_soft_macros"] = r.hot_soft_macros;
    if (r.hot_macro_moves > 0) j["hot_macro_moves"] = r.hot_macro_moves, j["hot_macros"] = r.hot_macros;
  }
  j["stopped_by_signal"] = run::StopRequested();
  if (r.proposer.used) {
    // The learned proposer: its weights at the end (proposer.json, to continue from) and what it did.
    search::ProposerWeights w = r.proposer.weights;
    search::AddTrainedOn(&w, env->instance().design.label);
    dir.WriteFile("proposer.json", search::ProposerWeightsJson(w));
    nlohmann::json kinds = nlohmann::json::object();
    for (int k = 0; k < search::ProposerWeights::kKinds; ++k) {
      const auto& st = r.proposer.stats[k];
      kinds[search::ProposalKindName(k)] = {{"proposed", st.proposed}, {"evaluated", st.evaluated}, {"accepted", st.accepted},
                                            {"reward", st.reward},
                                            {"probability_start", r.proposer.start_probabilities[k]},
                                            {"probability_end", r.proposer.end_probabilities[k]}};
    }
    j["proposer"] = {{"weights_in", cfg.sa().proposer_weights()}, {"learning_rate", cfg.sa().proposer_lr()},
                     {"updates", r.proposer.updates}, {"kinds", kinds}, {"weights_out", dir.Path("proposer.json")}};
  }
  if (!r.best.valid) {
    // No complete placement (every episode ran out of legal cells, or sa/cd could not make their
    // start): infeasible, exit 2, the same document with null costs (cli.h ReportInfeasible).
    InfeasibleRun bad;
    bad.reason = r.infeasible;
    // The grid and how to set a larger one, when the macros did not fit.
    if (bad.reason.rfind("no complete placement", 0) == 0)
      bad.reason = "no complete placement: every episode ran out of legal cells " + NoCompletePlacementHint(env->instance().design);
    j["best"] = {{"proxy_cost", nullptr}, {"wirelength_cost", nullptr}, {"density_cost", nullptr},
                 {"congestion_cost", nullptr}, {"hpwl", nullptr}};
    j["legal"] = nullptr;
    bad.document = j;
    bad.out = dir.path();
    return ReportInfeasible("place-baseline", bad, o.json, [&](const std::string& text) { dir.WriteFile("result.json", text); });
  }

  // Best placement (.plc with its costs), its picture and the cost-versus-time curve.
  const nlohmann::json best = WriteBestPlacement(dir, *env, r.best, "best",
                                                 "place-baseline " + cfg.method() + ": " + env->instance().design.label);
  const chip::CostBreakdown& c = r.best.cost;
  viz::PlotSeries curve{cfg.method(), {}, {}};
  for (const auto& [t, cost] : r.curve) {
    curve.x.push_back(t);
    curve.y.push_back(cost);
  }
  viz::PlotOptions plot;
  plot.title = "best proxy cost, " + cfg.method() + ", " + env->instance().design.label;
  plot.x_label = "time (s)";
  plot.y_label = "proxy cost";
  plot.markers = curve.x.size() < 3;
  viz::PlotCurves({curve}, plot, dir.PicturePath("curve"));

  j["best"] = {{"proxy_cost", c.proxy_cost}, {"wirelength_cost", c.wirelength_cost}, {"density_cost", c.density_cost},
               {"congestion_cost", c.congestion_cost}, {"hpwl", c.hpwl}};
  std::string why;
  j["legal"] = env::IsLegalPlacement(env->netlist(), env->settings(), r.best, &why);
  if (!why.empty()) j["illegal"] = why;
  j["out"] = dir.path();
  MarkFeasible(&j);
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s on %s: proxy %.6f (wirelength %.6f, density %.6f, congestion %.6f) after %.1f s of %.1f s, %lld %s "
                "(%.4g/s)%s\n",
                cfg.method().c_str(), env->instance().design.label.c_str(), c.proxy_cost, c.wirelength_cost,
                c.density_cost, c.congestion_cost, r.seconds, bo.seconds, static_cast<long long>(r.evaluations),
                po.unit.c_str(), r.evaluations_per_second(), run::StopRequested() ? " (stopped by signal)" : "");
    std::printf("wrote %s (best.plc, best.%s, curve.%s, metrics.csv, TensorBoard events, config.pbtxt, result.json)\n",
                dir.path().c_str(), o.dir.pictures.c_str(), o.dir.pictures.c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // --env device: the device placers (experiments/lib/place_baseline_device.cc).
  if (device_baseline::SelectsDeviceEnv(argc, argv)) return device_baseline::PlaceBaselineDeviceMain(argc, argv);
  argc_ = argc;
  argv_ = argv;
  return RunMain("place-baseline", [&] {
    CLI::App app{"Places a chip's macros with a classic baseline (random, greedy, simulated annealing, "
                 "force-directed soft macros, coordinate descent) on the exact Circuit Training proxy cost, within a "
                 "time budget, and writes a run directory (best.plc, pictures, metrics.csv, TensorBoard events). Exit 2 "
                 "when no placement completes. --env device: the device placers (single, round_robin, random, HEFT, "
                 "m-SCT, METIS, ...) on a computation graph and a machine (see place-baseline --env device --help)."};
    Options o;
    std::string env_name = "chip";
    app.add_option("--env", env_name, "chip (default: this help) | device (see --env device --help)")
        ->check(CLI::IsMember({"chip", "device"}));
    app.add_option("--method", o.method,
                   "random | greedy | sa | fd | cd (default sa) | sa-soft (sa with sa.init=snapped, "
                   "sa.fd_every_steps=0, sa.soft_move_prob=0.5, sa.soft_move_cells=1; --set still overrides) | "
                   "learned-sa (sa-soft whose schedule, acceptance controller and late kind mixture come from the shipped learned proposer: "
                   "sa.proposer=learned, sa.proposer_lr=0, sa.proposer_weights=shipped; docs/learned_sa.md)");
    app.add_flag("--refine-cd", o.refine_cd, "run coordinate descent on the best placement at the end");
    app.add_option("--netlist", o.netlist, "netlist.pb.txt[.gz]; default: the built-in synthetic chip")
        ->check([](const std::string& s) { return s.empty() ? std::string("--netlist is empty") : std::string(); });
    app.add_option("--plc", o.plc, "placement .plc: canvas, grid, routing and the input placement");
    app.add_option("--minutes", o.minutes, "time budget (default 1)")->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "random seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--clock", o.clock,
                   "the budget's clock: wall (default) or cpu (this process's CPU seconds, for fair budgets on a "
                   "shared machine)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place-baseline", [] { return DefaultPlaceBaselineConfig(); });
    cli::Parse(app, argc, argv);
    return PlaceBaseline(o);
  });
}
