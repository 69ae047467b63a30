// nas-search: architecture search on the block environment (env/block/, docs/nas.md) with
// random search, regularised evolution, or — in LibTorch builds — REINFORCE (the ENAS
// controller's algorithm) or PPO with the shared GNN policy and learner (experiments/torch/
// nas_rl.h), on the tabular benchmarks (NAS-Bench-201, NAS-Bench-Macro) or any space with a
// synthetic quality, over one or many seeds, writing a run directory (docs/conventions.md):
//   nas-search --space nb201 --method evolution --dataset table --budget 100 --seeds 1-100 --out runs/rea
//   nas-search --space nb201 --method reinforce --budget 100 --seeds 1-20 --out runs/reinforce
// Every method spends the same budget: evaluated architectures, repeats included (for the
// learned methods one episode = one architecture). One seed: metrics.csv has one row per
// evaluated architecture. Several seeds: one row per seed (its best), and result.json has
// mean ± std over the seeds. With --dataset fashion-mnist the children are trained for real; the
// run is handed to the space's trainer (enas_micro: ENAS weight sharing, search/nas/
// enas_search.h, its run directory experiments/lib/torch/enas_programs.h; --method enas | random):
//   nas-search --space enas_micro --dataset fashion-mnist --method enas --budget-minutes 10 --out runs/enas
// or, without weight sharing, each cell trained from scratch briefly (enas::MakeTrainedSearchSetup;
// --method evolution | reinforce | ppo, or random with --train-steps) in the generic loop:
//   nas-search --space enas_micro --dataset fashion-mnist --method evolution --budget 100 --train-steps 200 --out runs/rea
// --space brainformer --dataset fashion-mnist trains each candidate block as a patch Transformer
// (search/nas/brainformer_search.h):
//   nas-search --space brainformer --dataset fashion-mnist --method evolution --budget 40 --out runs/bf
// Checkpoints (every checkpoint_minutes and at the end) let `--resume DIR` continue a killed or
// finished search exactly as if it had not stopped, or a longer one (--budget N); ENAS weight
// sharing from its last search epoch (--budget-minutes M: the new total; docs/nas.md "Resume"):
//   nas-search --resume runs/rea --budget 200
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include "agents/learner.h"
#include "datasets/nas/search_space.h"
#include "datasets/nas/tables.h"
#include "datasets/proto/nas_search.pb.h"
#include "datasets/util/data_path.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"
#include "encoders/policy.h"
#include "env/block/block_env.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/config.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/metrics_csv.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "datasets/util/stop_signal.h"
#include "search/nas/nas_search.h"
#if PLACERL_HAVE_TORCH
#include "search/nas/brainformer_search.h"
#include "experiments/lib/torch/enas_programs.h"
#include "experiments/lib/torch/training_state.h"
#include "search/nas/nas_rl.h"
#endif

using namespace placerl;

namespace {

int argc_ = 0;
char** argv_ = nullptr;

struct Options {
  std::string space, method, dataset, table_dataset, seeds, nb201_table, macro_table;
  int64_t budget = 0, train_steps = 0;
  int32_t population = 0, tournament = 0, episodes_per_update = 0;
  double cost_budget = -1, penalty = -1, under_penalty = -1;
  double budget_minutes = -1, final_epochs = -1;  // --dataset fashion-mnist
  int32_t random_cells = -1, max_images = 0;
  int32_t derive_samples = -1, derive_images = -1, final_candidates = -1;  // enas_micro / fashion-mnist
  double uniform_fraction = -1;
  std::string fashion_mnist_dir;
  std::string clock;  // --clock wall | cpu (enas_micro / fashion-mnist: the search budget's clock)
  bool json = false;
  bool verbose = false;
  bool allow_slow = false;
  std::string print_space;
  run::RunDirFlags dir;
  int test_kill_after_checkpoints = 0;  // tests: SIGKILL right after the k-th checkpoint
};

bool Learned(const std::string& method) { return method == "reinforce" || method == "ppo"; }

bool TrainsBrainformer(const std::string& space, const std::string& dataset) {
  return space == "brainformer" && dataset == "fashion-mnist";
}

// enas_micro on Fashion-MNIST without weight sharing: every candidate cell trained from scratch
// briefly (enas::MakeTrainedSearchSetup) for evolution / reinforce / ppo, and for random when
// --train-steps is given (random without it: the ENAS path's random cells, each trained fully).
bool TrainsEnasCells(const config::NasSearchConfig& c) {
  return c.space() == "enas_micro" && c.dataset() == "fashion-mnist" && c.method() != "enas" && c.has_enas_training();
}

// enas_micro on Fashion-MNIST with ENAS weight sharing (--method enas, or random's fully trained
// cells): its own run directory (experiments/lib/torch/enas_programs.h).
bool SharesEnasWeights(const config::NasSearchConfig& c) {
  return c.dataset() == "fashion-mnist" && c.space() == "enas_micro" && !TrainsEnasCells(c);
}

// The defaults of `method` (the learned methods add their policy and learner blocks; Brainformer
// on Fashion-MNIST its training).
config::NasSearchConfig DefaultConfig(const std::string& method = "evolution", const std::string& space = "",
                                      const std::string& dataset = "") {
  config::NasSearchConfig c;
  c.set_space("nb201");
  c.set_method(method);
  c.set_dataset("table");
  c.set_table_dataset("cifar10");
  c.set_budget(100);
  c.add_seeds(1);
  c.set_population(10);
  c.set_tournament(3);
  c.set_cost_budget(0);
  c.set_penalty(1);
  c.set_under_penalty(0);
  // The benchmarks' tables next to the repository, found from the working directory or from the
  // binary's own place (datasets/util/data_path.h), so that nas-search runs from anywhere.
  c.set_nb201_table(FindDefaultData(env::kDefaultNb201Table));
  c.set_macro_table(FindDefaultData(env::kDefaultMacroTable));
  c.set_checkpoint_minutes(5);
  if (Learned(method)) {
    // The shared policy's defaults (encoders/policy.h).
    FillDefaultPolicyConfig(c.mutable_policy());
    // The shared learner's defaults (CT's PPO, agents/learner.h), then per method:
    config::AgentConfig* ac = c.mutable_agent();
    FillDefaultAgentConfig(ac);
    ac->set_algorithm(method);
    if (method == "reinforce") {
      // The ENAS controller (nas_notes.md §4.1): Adam lr 1e-3, entropy bonus 1e-4; the
      // moving-average baseline decays with 0.9 (NAS-Bench-201's REINFORCE, EMA momentum 0.9;
      // ENAS's 0.99 would barely move in a 100-architecture budget). Rewards in percent as
      // NAS-Bench-201's REINFORCE has them.
      ac->set_learning_rate(1e-3);
      ac->set_entropy_coef(1e-4);
      ac->set_baseline_decay(0.9);
      c.set_episodes_per_update(10);  // ENAS micro: 10 samples per update; tuned on seeds 101-130
      c.set_reward_scale(100);
    } else {
      c.set_episodes_per_update(10);
      c.set_reward_scale(1);  // PPO normalises its advantages
    }
  }
#if PLACERL_HAVE_TORCH
  if (method == "enas") enas::FillEnasControllerDefaults(&c);  // ENAS on real data (enas_programs.h)
  if (TrainsBrainformer(space, dataset)) brainformer::FillDefaultTrainingConfig(c.mutable_brainformer());
#else
  (void)space, (void)dataset;
#endif
  return c;
}

// "1-100", "1,2,7", "3": at most 100,000 seeds.
std::vector<uint64_t> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  for (const std::string& part : SplitCommaList(text)) {
    const size_t dash = part.find('-', 1);
    auto number = [&](const std::string& s) {
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
        throw UsageError("--seeds: '" + part + "' is not a seed or a range a-b of seeds");
      return static_cast<uint64_t>(std::stoull(s));
    };
    const uint64_t lo = number(part.substr(0, dash));
    const uint64_t hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo || hi - lo >= 100000) throw UsageError("--seeds: range '" + part + "' is empty or longer than 100000");
    for (uint64_t s = lo; s <= hi; ++s) seeds.push_back(s);
    if (seeds.size() > 100000) throw UsageError("--seeds: more than 100000 seeds");
  }
  if (seeds.empty()) throw UsageError("--seeds: no seed given");
  return seeds;
}

// Defaults (of the method asked for), then `config_file` (--config, or a resumed run's
// config.pbtxt), then the named flags, then --set.
config::NasSearchConfig ResolveConfig(const Options& o, const std::string& config_file) {
  std::string method = DefaultConfig().method(), space = DefaultConfig().space(), dataset = DefaultConfig().dataset();
  {  // the method, space and dataset decide the defaults: find them first
    config::NasSearchConfig probe;
    if (!config_file.empty()) run::MergeConfigFile(config_file, &probe);
    if (!probe.method().empty()) method = probe.method();
    if (!probe.space().empty()) space = probe.space();
    if (!probe.dataset().empty()) dataset = probe.dataset();
    if (!o.method.empty()) method = o.method;
    if (!o.space.empty()) space = o.space;
    if (!o.dataset.empty()) dataset = o.dataset;
    for (const std::string& a : o.dir.sets) {
      if (a.rfind("method=", 0) == 0) method = a.substr(7);
      if (a.rfind("space=", 0) == 0) space = a.substr(6);
      if (a.rfind("dataset=", 0) == 0) dataset = a.substr(8);
    }
  }
  config::NasSearchConfig c = DefaultConfig(method, space, dataset);
  if (!config_file.empty()) run::MergeConfigFile(config_file, &c);
  if (!o.space.empty()) c.set_space(o.space);
  if (!o.method.empty()) c.set_method(o.method);
  if (!o.dataset.empty()) c.set_dataset(o.dataset);
  if (!o.table_dataset.empty()) c.set_table_dataset(o.table_dataset);
  if (o.budget > 0) c.set_budget(o.budget);
  if (!o.seeds.empty()) {
    c.clear_seeds();
    for (uint64_t s : ParseSeeds(o.seeds)) c.add_seeds(s);
  }
  if (o.population > 0) c.set_population(o.population);
  if (o.tournament > 0) c.set_tournament(o.tournament);
  if (o.cost_budget >= 0) c.set_cost_budget(o.cost_budget);
  if (o.penalty >= 0) c.set_penalty(o.penalty);
  if (o.under_penalty >= 0) c.set_under_penalty(o.under_penalty);
  if (!o.nb201_table.empty()) c.set_nb201_table(o.nb201_table);
  if (!o.macro_table.empty()) c.set_macro_table(o.macro_table);
  if (o.episodes_per_update > 0) c.set_episodes_per_update(o.episodes_per_update);
#if PLACERL_HAVE_TORCH
  if (c.space() == "enas_micro" && c.dataset() == "fashion-mnist" && !c.has_enas_training() &&
      ((c.method() != "enas" && c.method() != "random") || (c.method() == "random" && o.train_steps > 0)))
    enas::FillDefaultTrainingConfig(c.mutable_enas_training());
#endif
  if (o.train_steps > 0) {
    if (c.has_brainformer()) c.mutable_brainformer()->set_train_steps(o.train_steps);
    else if (c.has_enas_training()) c.mutable_enas_training()->set_train_steps(o.train_steps);
    else
      throw ConfigError("--train-steps applies to --space brainformer --dataset fashion-mnist and to --space enas_micro "
                        "--dataset fashion-mnist with --method random | evolution | reinforce | ppo (in LibTorch builds)");
  }
  if (c.has_enas_training()) {  // the Fashion-MNIST flags the ENAS path takes, for trained cells
    if (o.final_epochs > 0) c.mutable_enas_training()->set_final_epochs(o.final_epochs);
    if (!o.fashion_mnist_dir.empty()) c.mutable_enas_training()->set_data_dir(o.fashion_mnist_dir);
    if (o.max_images > 0) c.mutable_enas_training()->set_max_images(o.max_images);
  }
  run::ApplyOverrides(o.dir.sets, &c);
  // Checks of meaning.
  if (c.method() == "enas" && c.dataset() != "fashion-mnist")
    throw ConfigError("--method enas trains shared weights on --dataset fashion-mnist; on a table use --method "
                      "reinforce (the ENAS controller's algorithm) with --config experiments/configs/enas_controller.pbtxt "
                      "(its LSTM controller, policy.preset=lstm) or on the shared GNN policy");
  if (c.method() == "enas" && c.space() != "enas_micro")
    throw ConfigError("--method enas (weight sharing) is built for --space enas_micro; for " + c.space() +
                      " use random, evolution, reinforce or ppo");
  if (c.method() != "random" && c.method() != "evolution" && c.method() != "enas" && !Learned(c.method()))
    throw ConfigError("unknown method '" + c.method() + "' (random, evolution, reinforce, ppo, enas)");
#if !PLACERL_HAVE_TORCH
  if (Learned(c.method()))
    throw ConfigError("--method " + c.method() + " needs a build with LibTorch (PLACERL_WITH_TORCH=ON)");
#endif
  if (Learned(c.method())) {
    if (c.agent().algorithm() != c.method())
      throw ConfigError("agent.algorithm '" + c.agent().algorithm() + "' differs from method '" + c.method() + "'");
    CheckAgentConfig(c.agent());
    CheckPolicyConfig(c.policy());
#if PLACERL_HAVE_TORCH
    if (!c.policy().preset().empty()) encoders::ParsePolicyPreset(c.policy().preset());
#endif
    if (c.episodes_per_update() < 1 || c.episodes_per_update() > 1000000)
      throw ConfigError("episodes_per_update must be in [1, 1e6]");
    if (!(c.reward_scale() > 0 && std::isfinite(c.reward_scale()))) throw ConfigError("reward_scale must be > 0");
  }
  if (c.dataset() == "fashion-mnist") {
#if PLACERL_HAVE_TORCH
    if (c.space() == "enas_micro" && !TrainsEnasCells(c)) {
      if (c.method() != "enas" && c.method() != "random")
        throw ConfigError("--space enas_micro --dataset fashion-mnist: method '" + c.method() + "' needs the "
                          "enas_training block (nas-search fills it unless a --config or --set removed it)");
      if (c.has_enas_training())
        throw ConfigError("enas_training settings apply to --method random (with --train-steps) | evolution | "
                          "reinforce | ppo, not to --method " + c.method());
      return c;  // ENAS weight sharing (enas_search.h) checks the rest
    }
    if (TrainsEnasCells(c)) {
      enas::CheckTrainingConfig(c.enas_training());
    } else {
      if (c.space() != "brainformer")
        throw ConfigError("--dataset fashion-mnist is built for --space enas_micro (ENAS weight sharing or trained "
                          "cells) and --space brainformer (trained patch Transformers); use --dataset table for " +
                          c.space());
      if (!c.has_brainformer())
        throw ConfigError("--space brainformer --dataset fashion-mnist: no brainformer training config");
      brainformer::RecipeFrom(c.brainformer());  // checks it
    }
#else
    throw ConfigError("--dataset fashion-mnist needs a build with LibTorch (PLACERL_WITH_TORCH=ON)");
#endif
  } else if (c.dataset() != "table") {
    throw ConfigError("unknown dataset '" + c.dataset() + "' (table, fashion-mnist)");
  } else if (c.has_brainformer()) {
    throw ConfigError("brainformer training settings apply to --space brainformer --dataset fashion-mnist only");
  }
  if (c.has_enas_training() && !TrainsEnasCells(c))
    throw ConfigError("enas_training settings apply to --space enas_micro --dataset fashion-mnist with --method random "
                      "(with --train-steps) | evolution | reinforce | ppo only");
  if (c.budget() < 1 || c.budget() > cli::kMaxCount) throw ConfigError("budget must be in [1, 1e9] architectures");
  if (c.seeds_size() < 1 || c.seeds_size() > 100000) throw ConfigError("seeds: between 1 and 100000 seeds");
  if (c.population() < 2 || c.population() > 1000000) throw ConfigError("population must be in [2, 1e6]");
  if (c.tournament() < 1 || c.tournament() > c.population()) throw ConfigError("tournament must be in [1, population]");
  if (!(c.cost_budget() >= 0 && std::isfinite(c.cost_budget()))) throw ConfigError("cost_budget must be finite and >= 0");
  if (!(c.penalty() >= 0 && std::isfinite(c.penalty()))) throw ConfigError("penalty must be finite and >= 0");
  if (!(c.under_penalty() >= 0 && std::isfinite(c.under_penalty())))
    throw ConfigError("under_penalty must be finite and >= 0");
  if (c.under_penalty() > 0 && c.cost_budget() == 0)
    throw ConfigError("under_penalty needs a step-time budget (--step-time-budget > 0): it weighs the shortfall below it");
  if (!(c.checkpoint_minutes() > 0 && std::isfinite(c.checkpoint_minutes())))
    throw ConfigError("checkpoint_minutes must be finite and > 0");
  return c;
}

// --resume DIR: the run's config.pbtxt with the flags over it. Only the budget and
// checkpoint_minutes may change (the budget not in a run over several seeds: the finished
// seeds keep theirs); anything else is refused before the directory is touched.
config::NasSearchConfig ResolveResumeConfig(const Options& o) {
  if (!o.dir.config.empty())
    throw ConfigError("--config with --resume: a resumed run keeps its config.pbtxt (a longer search: --budget N)");
  const std::string saved_path = o.dir.resume + "/config.pbtxt";
  const config::NasSearchConfig saved = ResolveConfig(Options{}, saved_path);
  const config::NasSearchConfig c = ResolveConfig(o, saved_path);
  config::NasSearchConfig a = saved, b = c;
  for (config::NasSearchConfig* x : {&a, &b}) {
    x->clear_budget();
    x->clear_checkpoint_minutes();
  }
  const std::string before = run::ResolvedConfigText(a), after = run::ResolvedConfigText(b);
  if (before != after) {
    std::string changed;  // the first line of the new config that the run's does not have
    std::istringstream lines(after);
    for (std::string line; std::getline(lines, line);)
      if (before.find(line + "\n") == std::string::npos) {
        changed = line;
        break;
      }
    throw ConfigError("--resume " + o.dir.resume + " keeps the run's space, method, seeds and settings (only --budget "
                      "and checkpoint_minutes may change); asked for `" + changed + "`");
  }
  if (c.budget() != saved.budget() && c.seeds_size() > 1)
    throw ConfigError("--resume of a run over several seeds keeps its budget (" + std::to_string(saved.budget()) +
                      "): the finished seeds searched that many");
  return c;
}

// The state of a nas-search run (docs/nas.md "Resume"): the seeds finished, the Pareto points so
// far and the current seed's search state (search::NasSearchState: every evaluation in order,
// the RNG, evolution's population). Random search and evolution keep it in
// checkpoints/state.json (one atomic write). The learned methods keep it inside their learner's
// checkpoints/latest.ckpt (agents::Learner's format), as the extra run::kRunStateExtra written
// with the weights in one atomic write, as place-train does: a kill between writing latest.ckpt
// and state.json (beside it, for people) cannot pair the learner of one update with the state
// of another. state.json names latest.ckpt's size and hash too: checkpoints written before the
// extra existed resume from state.json when the two match.
constexpr const char* kStateKind = "nas-search";

nlohmann::json EvaluationJson(const search::NasEvaluation& e) {
  return {{"arch", e.arch},       {"quality", e.score.quality},   {"cost", e.score.cost},
          {"penalty", e.score.penalty}, {"reward", e.score.reward}, {"skip_fraction", e.score.skip_fraction},
          {"skip_penalty", e.score.skip_penalty}};
}

search::NasEvaluation EvaluationFrom(const nlohmann::json& j) {
  search::NasEvaluation e;
  e.arch = j.at("arch").get<nas::Architecture>();
  e.score.quality = j.at("quality").get<double>();
  e.score.cost = j.at("cost").get<double>();
  e.score.penalty = j.at("penalty").get<double>();
  e.score.reward = j.at("reward").get<double>();
  e.score.skip_fraction = j.at("skip_fraction").get<double>();
  e.score.skip_penalty = j.at("skip_penalty").get<double>();
  return e;
}

uint64_t Fnv1a(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A finished seed as the aggregates need it.
struct SeedSummary {
  uint64_t seed = 0;
  search::NasSearchResult result;  // best, evaluations, unique, seconds (the curves: RunState's sums)
};

nlohmann::json SeedSummaryJson(const SeedSummary& s) {
  return {{"seed", s.seed},         {"best", EvaluationJson(s.result.best)}, {"evaluations", s.result.evaluations},
          {"unique", s.result.unique}, {"unique_exact", s.result.unique_exact}, {"seconds", s.result.seconds}};
}

SeedSummary SeedSummaryFrom(const nlohmann::json& j) {
  SeedSummary s;
  s.seed = j.at("seed").get<uint64_t>();
  s.result.best = EvaluationFrom(j.at("best"));
  s.result.evaluations = j.at("evaluations").get<int64_t>();
  s.result.unique = j.at("unique").get<int64_t>();
  s.result.seconds = j.at("seconds").get<double>();
  s.result.unique_exact = j.value("unique_exact", true);
  if (j.contains("best_reward")) s.result.best_reward = j.at("best_reward").get<std::vector<double>>();  // version 1
  return s;
}

// The state of a run at a checkpoint.
struct RunState {
  std::vector<SeedSummary> done;              // seeds finished, in order
  std::vector<search::NasEvaluation> pareto;  // ParetoFront::points
  size_t seed_index = 0;                      // the current seed: seeds[seed_index]
  search::NasSearchState current;             // its search
  double current_seconds = 0;                 // its search time so far, over every start
  std::map<std::string, double> last_stats;   // reinforce / ppo: the last update's, for the metrics rows
  std::string learner_checkpoint;             // reinforce / ppo: latest.ckpt's bytes
  int64_t curve_stride = 1;                   // the curves keep every curve_stride-th evaluation (kept on resume)
  std::vector<double> curve_sum;              // the seeds in `done`: sum of their best-reward curves
  std::vector<int64_t> curve_count;           // and how many of them reach each point
  void AddCurve(const std::vector<double>& best_reward) {
    if (curve_sum.size() < best_reward.size()) {
      curve_sum.resize(best_reward.size(), 0.0);
      curve_count.resize(best_reward.size(), 0);
    }
    for (size_t i = 0; i < best_reward.size(); ++i) curve_sum[i] += best_reward[i], ++curve_count[i];
  }
};

// Evolution's population in state.json, written as text without a JSON tree (a population of
// 10^6 takes ~1 s, not the ~40 s and 2 GB of a tree): [[arch…], quality, cost, penalty, reward,
// skip_fraction, skip_penalty] per member, oldest first; a non-finite number as null.
constexpr const char* kPopulationMark = "@@population@@";

std::string PopulationText(const std::vector<search::NasEvaluation>& population) {
  std::string t = "[";
  auto num = [&](double x) { t += std::isfinite(x) ? run::ShortestDouble(x) : std::string("null"); };
  for (size_t i = 0; i < population.size(); ++i) {
    const search::NasEvaluation& e = population[i];
    t += i ? ",[[" : "[[";
    for (size_t d = 0; d < e.arch.size(); ++d) (t += d ? "," : "") += std::to_string(e.arch[d]);
    t += "]";
    for (double x : {e.score.quality, e.score.cost, e.score.penalty, e.score.reward, e.score.skip_fraction,
                     e.score.skip_penalty}) {
      t += ",";
      num(x);
    }
    t += "]";
  }
  return t + "]";
}

search::NasEvaluation PopulationMemberFrom(const nlohmann::json& j) {
  if (j.is_object()) return EvaluationFrom(j);
  auto num = [&](size_t k) { return j.at(k).is_null() ? NAN : j.at(k).get<double>(); };
  search::NasEvaluation e;
  e.arch = j.at(0).get<nas::Architecture>();
  e.score.quality = num(1);
  e.score.cost = num(2);
  e.score.penalty = num(3);
  e.score.reward = num(4);
  e.score.skip_fraction = num(5);
  e.score.skip_penalty = num(6);
  return e;
}

// A search's state (search::NasSearchState) in state.json; version 2 (bounded: no history). The
// population is kPopulationMark here: RunStateText puts PopulationText in its place.
nlohmann::json SearchStateJson(const search::NasSearchState& st) {
  std::vector<uint64_t> seen(st.seen.begin(), st.seen.end());
  std::sort(seen.begin(), seen.end());
  return {{"evaluations", st.evaluations},
          {"best", st.evaluations > 0 ? EvaluationJson(st.best) : nlohmann::json(nullptr)},
          {"population", kPopulationMark}, {"seen", seen}, {"unique_exact", st.unique_exact},
          {"reward", st.reward}, {"best_reward", st.best_reward}, {"rng", st.rng}};
}

// `learner_meta`: with latest.ckpt's size and hash (state.json; not in the copy inside it).
nlohmann::json RunStateJson(const RunState& s, const config::NasSearchConfig& c, bool learner_meta) {
  nlohmann::json done = nlohmann::json::array(), pareto = nlohmann::json::array();
  int64_t evaluations = s.current.evaluations;
  double elapsed = s.current_seconds;
  for (const SeedSummary& d : s.done) {
    done.push_back(SeedSummaryJson(d));
    evaluations += d.result.evaluations;
    elapsed += d.result.seconds;
  }
  for (const auto& p : s.pareto) pareto.push_back(EvaluationJson(p));
  nlohmann::json current = SearchStateJson(s.current);
  current["seed"] = c.seeds(static_cast<int>(s.seed_index));
  current["seconds"] = s.current_seconds;
  current["last_stats"] = s.last_stats;
  nlohmann::json j = {{"kind", kStateKind}, {"version", 2}, {"space", c.space()}, {"method", c.method()},
                      {"evaluations", evaluations}, {"elapsed_s", elapsed}, {"seed_index", s.seed_index},
                      {"seeds_done", done}, {"pareto", pareto}, {"curve_stride", s.curve_stride},
                      {"curve_sum", s.curve_sum}, {"curve_count", s.curve_count}, {"current", current}};
  if (learner_meta && Learned(c.method()))
    j["learner_checkpoint"] = {{"file", "latest.ckpt"}, {"bytes", s.learner_checkpoint.size()},
                               {"fnv1a", Fnv1a(s.learner_checkpoint)}};
  return j;
}

// The state's text: RunStateJson with the population written in place of its mark.
std::string RunStateText(const RunState& s, const config::NasSearchConfig& c, bool learner_meta) {
  std::string text = RunStateJson(s, c, learner_meta).dump();
  const size_t mark = text.find(std::string("\"") + kPopulationMark + "\"");
  if (mark != std::string::npos) text.replace(mark, std::strlen(kPopulationMark) + 2, PopulationText(s.current.population));
  return text;
}

// A run's state from its JSON (`path` names where it was read in errors), checked against the
// resumed run's config `c`. Throws ConfigError.
RunState RunStateFrom(const nlohmann::json& j, const config::NasSearchConfig& c, const std::string& path) {
  RunState s;
  try {
    if (j.value("kind", "") != kStateKind) throw ConfigError(path + ": not a nas-search state file");
    if (j.at("space") != c.space() || j.at("method") != c.method())
      throw ConfigError(path + ": a " + j.at("method").get<std::string>() + " search of " +
                        j.at("space").get<std::string>() + ", config.pbtxt says " + c.method() + " of " + c.space());
    const int version = j.value("version", 1);
    if (version != 1 && version != 2) throw ConfigError(path + ": state version " + std::to_string(version) + " is unknown");
    for (const auto& d : j.at("seeds_done")) s.done.push_back(SeedSummaryFrom(d));
    for (const auto& p : j.at("pareto")) s.pareto.push_back(EvaluationFrom(p));
    s.seed_index = j.at("seed_index").get<size_t>();
    const nlohmann::json& cur = j.at("current");
    s.current.rng = cur.at("rng").get<std::string>();
    if (version == 1) {  // every evaluation in order, the population as indices into them; curves per seed
      std::vector<search::NasEvaluation> history;
      for (const auto& e : cur.at("history")) history.push_back(EvaluationFrom(e));
      for (const auto& e : history) search::RecordEvaluation(e, 1, &s.current);
      for (int64_t i : cur.at("population").get<std::vector<int64_t>>()) {
        if (i < 0 || i >= static_cast<int64_t>(history.size()))
          throw ConfigError(path + ": the population points outside the history");
        s.current.population.push_back(history[static_cast<size_t>(i)]);
      }
      for (SeedSummary& d : s.done) s.AddCurve(d.result.best_reward), d.result.best_reward.clear();
    } else {
      s.current.evaluations = cur.at("evaluations").get<int64_t>();
      if (s.current.evaluations > 0) s.current.best = EvaluationFrom(cur.at("best"));
      for (const auto& e : cur.at("population")) s.current.population.push_back(PopulationMemberFrom(e));
      for (uint64_t h : cur.at("seen").get<std::vector<uint64_t>>()) s.current.seen.insert(h);
      s.current.unique_exact = cur.at("unique_exact").get<bool>();
      s.current.reward = cur.at("reward").get<std::vector<double>>();
      s.current.best_reward = cur.at("best_reward").get<std::vector<double>>();
      s.curve_stride = j.at("curve_stride").get<int64_t>();
      s.curve_sum = j.at("curve_sum").get<std::vector<double>>();
      s.curve_count = j.at("curve_count").get<std::vector<int64_t>>();
      if (s.curve_stride < 1 || s.curve_sum.size() != s.curve_count.size())
        throw ConfigError(path + ": its curves are inconsistent");
    }
    s.current_seconds = cur.at("seconds").get<double>();
    s.last_stats = cur.at("last_stats").get<std::map<std::string, double>>();
    if (s.seed_index >= static_cast<size_t>(c.seeds_size()) || s.done.size() != s.seed_index ||
        cur.at("seed").get<uint64_t>() != c.seeds(static_cast<int>(s.seed_index)))
      throw ConfigError(path + ": its seeds do not match config.pbtxt's");
    for (size_t k = 0; k < s.done.size(); ++k)
      if (s.done[k].seed != c.seeds(static_cast<int>(k))) throw ConfigError(path + ": its seeds do not match config.pbtxt's");
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path + ": not a nas-search state file (" + e.what() + ")");
  }
  return s;
}

// Reads the state of a resumed run whose config is `c` from DIR/checkpoints: latest.ckpt's
// embedded state for the learned methods (state.json, checked against latest.ckpt's hash, for
// checkpoints written without it), state.json for the others. Throws ConfigError naming the file.
RunState ReadRunState(const std::string& dir, const config::NasSearchConfig& c) {
  const std::string path = dir + "/checkpoints/state.json", ckpt = dir + "/checkpoints/latest.ckpt";
  nlohmann::json file_state;  // null: no state.json
  if (std::filesystem::exists(path) || !Learned(c.method())) {
    try {
      file_state = nlohmann::json::parse(ReadFile(path));
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(path + ": not JSON (" + e.what() + ")");
    }
  }
  if (!Learned(c.method())) return RunStateFrom(file_state, c, path);
#if PLACERL_HAVE_TORCH
  const std::string learner = ReadFile(ckpt);
  const agents::Learner::Extras extras = agents::Learner::ReadExtras(ckpt);
  const bool embedded = extras.count(run::kRunStateExtra) > 0;
  RunState s = RunStateFrom(run::ResumeState(extras, file_state, ckpt), c, embedded ? ckpt : path);
  s.learner_checkpoint = learner;
  if (!embedded) {  // written before the state went inside: state.json must be the one written with it
    try {
      const auto& meta = file_state.at("learner_checkpoint");
      if (meta.at("bytes").get<size_t>() != learner.size() || meta.at("fnv1a").get<uint64_t>() != Fnv1a(learner))
        throw ConfigError(ckpt + " is not the learner state.json was written with (killed between the two writes?)");
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(path + ": not a nas-search state file (" + e.what() + ")");
    }
  }
  return s;
#else
  throw ConfigError("--method " + c.method() + " needs a build with LibTorch (PLACERL_WITH_TORCH=ON)");
#endif
}

std::unique_ptr<env::BlockEnv> MakeEnv(const config::NasSearchConfig& c) {
  env::BlockEnvOptions eo;
  eo.space = c.space();
  eo.dataset = c.table_dataset();
  eo.cost_budget = c.cost_budget();
  eo.penalty = c.penalty();
  eo.under_penalty = c.under_penalty();
  eo.skip_penalty = c.skip_penalty();
  // The table of the space's benchmark (the environment picks table or synthetic quality).
  const nas::SearchSpace probe = nas::LoadSearchSpace(c.space());
  if (probe.table() == "nb201") eo.table = c.nb201_table();
  if (probe.table() == "nas_bench_macro") eo.table = c.macro_table();
  auto e = std::make_unique<env::BlockEnv>(eo);
  if (TrainsBrainformer(c.space(), c.dataset())) return e;  // its step time: brainformer::MakeSearchSetup
  if (TrainsEnasCells(c)) return e;                          // its step time: enas::MakeTrainedSearchSetup
  if (c.cost_budget() > 0 && e->step_time_model().unit() == "none")
    throw ConfigError("space " + e->space().name() + " has no step-time model yet: a cost budget would have no effect");
  return e;
}

// The best architecture of the table (all of it evaluated), for the regret.
struct TableOptimum {
  bool known = false;
  search::NasEvaluation best;
};

TableOptimum FindTableOptimum(const env::BlockEnv& e) {
  TableOptimum t;
  const nas::SearchSpace& s = e.space();
  if (s.table().empty() || s.Log10Size() > 6) return t;
  nas::Architecture a(s.num_decisions(), 0);
  while (true) {
    const env::BlockScore score = e.Evaluate(a);
    if (!t.known || score.reward > t.best.score.reward) t.best = {a, score};
    t.known = true;
    int32_t d = s.num_decisions() - 1;
    while (d >= 0 && ++a[d] == s.decisions()[d].num_choices()) a[d--] = 0;
    if (d < 0) break;
  }
  return t;
}

// The architectures no other evaluated one beats in both quality (higher) and cost (lower),
// by increasing cost; repeats kept once.
struct ParetoFront {
  std::vector<search::NasEvaluation> points;
  void Add(const search::NasEvaluation& e) {
    for (const auto& p : points)
      if (p.score.cost <= e.score.cost && p.score.quality >= e.score.quality) return;  // dominated or equal
    std::vector<search::NasEvaluation> kept;
    for (auto& p : points)
      if (!(e.score.cost <= p.score.cost && e.score.quality >= p.score.quality)) kept.push_back(std::move(p));
    auto at = std::lower_bound(kept.begin(), kept.end(), e.score.cost,
                               [](const search::NasEvaluation& p, double c) { return p.score.cost < c; });
    kept.insert(at, e);
    points = std::move(kept);
  }
};

nlohmann::json ArchJson(const env::BlockEnv& e, const search::NasEvaluation& x) {
  return {{"encoding", e.Encoding(x.arch)}, {"quality", x.score.quality}, {"cost", x.score.cost},
          {"penalty", x.score.penalty}, {"reward", x.score.reward}, {"architecture", e.space().Describe(x.arch)}};
}

double Mean(const std::vector<double>& v) { return stats::Mean(v, 0); }
double Std(const std::vector<double>& v) { return stats::SampleSd(v, 0); }  // sample (n − 1); 0 for one seed

// One seed of reinforce / ppo (search/nas/nas_rl.h).
search::NasSearchResult RunLearned(
    const env::BlockEnv& env, const config::NasSearchConfig& c, uint64_t seed,
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_eval,
    std::map<std::string, double>* last_stats, RunState* state, const std::function<bool()>& checkpoint_due,
    const std::function<std::string()>& run_state_text, const std::function<void()>& on_checkpoint) {
#if PLACERL_HAVE_TORCH
  NasRlOptions o;
  o.agent = AgentOptionsFrom(c.agent(), seed);
  o.policy = PolicyOptionsFrom(c.policy());
  if (!c.policy().preset().empty()) o.policy.preset = encoders::ParsePolicyPreset(c.policy().preset());
  o.budget = c.budget();
  o.episodes_per_update = c.episodes_per_update();
  o.reward_scale = c.reward_scale();
  o.seed = seed;
  o.curve_stride = state->curve_stride;
  NasRlCheckpoints ck;
  ck.state = &state->current;
  ck.learner_checkpoint = &state->learner_checkpoint;
  ck.checkpoint_due = checkpoint_due;
  ck.on_checkpoint = [&](const search::NasSearchState&, const std::string&) { on_checkpoint(); };
  // The run's state goes inside the learner checkpoint (ReadRunState).
  ck.extras = [&](const search::NasSearchState&) { return agents::Learner::Extras{{run::kRunStateExtra, run_state_text()}}; };
  return RunNasRl(env, o, [] { return run::StopRequested(); }, on_eval,
                  [&](int64_t, const NasRlStats& s) { *last_stats = s; }, ck);
#else
  (void)env, (void)c, (void)seed, (void)on_eval, (void)last_stats, (void)state, (void)checkpoint_due, (void)run_state_text,
      (void)on_checkpoint;
  throw ConfigError("--method " + c.method() + " needs a build with LibTorch");
#endif
}

// Bounded logs and curves: rows of metrics.csv per seed before they thin out, points per curve.
constexpr int64_t kMaxLoggedRows = 100000;
constexpr int64_t kCurvePoints = 10000;

// The memory this process may still take: physical memory, or what `ulimit -v` leaves.
double MemoryAvailableBytes() {
  double total = 0;
  {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    double kib = 0;
    while (in >> key >> kib >> unit)
      if (key == "MemTotal:") {
        total = kib * 1024;
        break;
      }
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    double vm_pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> vm_pages;
    const double left = static_cast<double>(rl.rlim_cur) - vm_pages * static_cast<double>(sysconf(_SC_PAGESIZE));
    total = total > 0 ? std::min(total, left) : left;
  }
  return total > 0 ? total : 1e18;
}

std::string Duration(double s) {
  char b[64];
  if (s < 120) std::snprintf(b, sizeof(b), "%.3g s", s);
  else if (s < 7200) std::snprintf(b, sizeof(b), "%.3g min", s / 60);
  else if (s < 3 * 86400) std::snprintf(b, sizeof(b), "%.3g h", s / 3600);
  else std::snprintf(b, sizeof(b), "%.3g days", s / 86400);
  return b;
}

// The search's time and memory, estimated before anything is written: refused (ConfigError with
// the estimate) when beyond the machine — more than cli::kMaxSeconds (a week), or more memory
// than it has (or `ulimit -v` leaves) — unless `allow_slow` (docs/nas.md "Reliability").
// Per evaluation: a table or synthetic quality is timed here on a few architectures; a learned
// method adds its policy's episode; a trained candidate costs its training steps.
void CheckSearchEstimate(const config::NasSearchConfig& c, const env::BlockEnv& env, int64_t done_evaluations,
                         bool allow_slow) {
  const nas::SearchSpace& space = env.space();
  const double seeds = c.seeds_size();
  const double evaluations = std::max(0.0, static_cast<double>(c.budget()) * seeds - static_cast<double>(done_evaluations));
  const double decisions = space.num_decisions();
  double per_eval = 0;  // seconds
  std::string what;
  if (TrainsBrainformer(c.space(), c.dataset())) {
    // Measured: ≈ 20 ms per step of the default patch Transformer (batch 64, one thread).
    per_eval = c.brainformer().train_steps() * 0.02 * c.brainformer().batch_size() / 64.0;
    what = std::to_string(c.brainformer().train_steps()) + " training steps each";
  } else if (TrainsEnasCells(c)) {
    // Measured: ≈ 0.12 s per SGD step of a cell (batch 64, one thread; 200 steps ≈ 25 s).
    per_eval = c.enas_training().train_steps() * 0.12;
    what = std::to_string(c.enas_training().train_steps()) + " training steps each";
  } else {
    std::mt19937_64 rng(1);
    const int n = 200;
    std::vector<nas::Architecture> archs;
    for (int i = 0; i < n; ++i) archs.push_back(search::RandomArchitecture(space, rng));
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = 0;
    for (const auto& a : archs) sink = sink + env.Evaluate(a).reward;
    // + the search's own work per evaluation (bookkeeping, progress, a thinned metrics row): ≈ 1 µs
    per_eval = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n + 1e-6;
    what = "evaluated";
  }
  if (Learned(c.method())) per_eval += 2e-4 * decisions;  // the policy's steps and the learner's share
  if (c.method() == "evolution") per_eval += c.tournament() * 2e-7;  // a tournament draw: ≈ 0.1–0.3 µs measured
  const double seconds = evaluations * per_eval;
  // Memory that does not grow with the budget, but with the options: evolution's population, the
  // learner's episodes of an update, the distinct architectures remembered, the per-seed summary.
  const double arch_bytes = 1200 + 4 * decisions;  // an evaluation, and its JSON in a checkpoint
  double bytes = 0;
  if (c.method() == "evolution") bytes += c.population() * arch_bytes;
  if (Learned(c.method())) bytes += static_cast<double>(c.episodes_per_update()) * decisions * 16384;
  bytes += std::min<double>(static_cast<double>(c.budget()), search::kMaxTrackedArchitectures) * 48;
  bytes += seeds * 600;
  char text[512];
  std::snprintf(text, sizeof(text),
                "%.6g architecture(s) (%lld x %d seed(s)) of %s, %s, estimated at %s (%.3g s each) and %.3g GiB of "
                "memory",
                evaluations, static_cast<long long>(c.budget()), c.seeds_size(), space.name().c_str(), what.c_str(),
                Duration(seconds).c_str(), per_eval, bytes / double(1ull << 30));
  const double memory = MemoryAvailableBytes();
  if (!allow_slow && (seconds > cli::kMaxSeconds || bytes > memory)) {
    char limits[200];
    std::snprintf(limits, sizeof(limits), " (limits %s and the %.3g GiB of memory this machine leaves; --allow-slow "
                  "runs it anyway)", Duration(cli::kMaxSeconds).c_str(), memory / double(1ull << 30));
    throw ConfigError(std::string(text) + limits);
  }
}

// --resume DIR or a new run: the resolved config, input paths absolute as config.pbtxt records
// them (a resumed run's outputs name them as the first start's); flags that do not apply to it
// are refused.
config::NasSearchConfig ResolveRunConfig(const Options& o) {
  const bool resuming = !o.dir.resume.empty();
  if (resuming && !std::filesystem::exists(o.dir.resume + "/checkpoints/state.json") &&
      !std::filesystem::exists(o.dir.resume + "/checkpoints/latest.ckpt"))
    throw ConfigError("nothing to resume in " + o.dir.resume + ": no checkpoints/state.json (not a nas-search run, or "
                      "one stopped before its first checkpoint)");
  config::NasSearchConfig cfg = resuming ? ResolveResumeConfig(o) : ResolveConfig(o, o.dir.config);
  run::MakeInputPathsAbsolute(&cfg);
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  if (TrainsEnasCells(cfg) && (o.budget_minutes > 0 || o.random_cells >= 0))
    throw ConfigError("--budget-minutes and --random-cells apply to --method enas (and random without --train-steps); "
                      "trained cells count architectures: --budget N (compare with --method random --train-steps S "
                      "--budget N)");
  if (!o.clock.empty() && !SharesEnasWeights(cfg))
    throw ConfigError("--clock applies to the time budget of --space enas_micro --dataset fashion-mnist --method enas "
                      "(or random without --train-steps); the other searches count architectures: --budget");
  if ((o.derive_samples > 0 || o.derive_images > 0 || o.final_candidates > 0 || o.uniform_fraction >= 0) &&
      !(cfg.dataset() == "fashion-mnist" && cfg.space() == "enas_micro" && cfg.method() == "enas"))
    throw ConfigError("--derive-samples, --derive-images, --final-candidates and --uniform-fraction apply to --space "
                      "enas_micro --dataset fashion-mnist --method enas");
  return cfg;
}

#if PLACERL_HAVE_TORCH
// ENAS weight sharing on Fashion-MNIST (and its random cells): its own run (enas_programs.h).
int RunSharedWeightsSearch(const Options& o, const config::NasSearchConfig& cfg) {
  enas::FashionMnistFlags f;
  f.budget_minutes = o.budget_minutes;
  f.final_epochs = o.final_epochs;
  f.random_cells = o.random_cells;
  f.max_images = o.max_images;
  f.data_dir = o.fashion_mnist_dir;
  f.test_kill_after_checkpoints = o.test_kill_after_checkpoints;
  f.clock = o.clock;
  f.derive_samples = o.derive_samples;
  f.derive_images = o.derive_images;
  f.final_candidates = o.final_candidates;
  f.uniform_fraction = o.uniform_fraction;
  return enas::RunFashionMnistNasSearch(cfg, f, o.dir, run::CommandLineText(argc_, argv_), o.json);
}
#endif

// The best per seed and over the seeds, as result.json and the summary line give them.
struct SeedAggregates {
  std::vector<double> best_quality, best_reward, unique, seconds;
  search::NasEvaluation overall;
  bool have_overall = false;
  nlohmann::json per_seed = nlohmann::json::array();
  double evaluations = 0;  // over the seeds added

  // A finished seed (the seeds of an earlier start too).
  void Add(const env::BlockEnv& env, uint64_t seed, const search::NasSearchResult& r) {
    evaluations += r.evaluations;
    best_quality.push_back(r.best.score.quality);
    best_reward.push_back(r.best.score.reward);
    unique.push_back(static_cast<double>(r.unique));
    seconds.push_back(r.seconds);
    nlohmann::json sj = ArchJson(env, r.best);
    sj["seed"] = seed;
    sj["evaluations"] = r.evaluations;
    sj["unique"] = r.unique;
    if (!r.unique_exact) sj["unique_exact"] = false;
    per_seed.push_back(sj);
    if (!have_overall || r.best.score.reward > overall.score.reward) overall = r.best;
    have_overall = true;
  }
};

// A search on a table, a synthetic quality, Brainformer's or trained ENAS cells (every method
// but ENAS weight sharing), over one or many seeds: environments → estimate → run directory →
// the seeds' searches (with checkpoints) → best.pbtxt, curves, result.json, the summary line.
class SeedsSearch {
 public:
  SeedsSearch(const Options& o, const config::NasSearchConfig& cfg)
      : o_(o), cfg_(cfg), seeds_(cfg.seeds().begin(), cfg.seeds().end()), many_(seeds_.size() > 1) {}

  int Run() {
    if (!o_.dir.resume.empty()) state_ = ReadRunState(o_.dir.resume, cfg_);
    MakeEnvironments();  // before the directory: bad input leaves nothing
    CheckEstimate();
    OpenRunDirectory();
    TrainReference();
    SearchSeeds();
    if (agg_.have_overall) WriteCheckpoint();
    FinishProgress();
    if (!agg_.have_overall) return WriteStoppedBeforeFirst();
    WriteBestAndPlots();
    const nlohmann::json j = ResultJson();
    dir_->WriteFile("result.json", j.dump(2) + "\n");
    PrintSummary(j);
    return kExitOk;
  }

 private:
  void MakeEnvironments() {
    base_env_ = MakeEnv(cfg_);
    env_ = base_env_.get();
#if PLACERL_HAVE_TORCH
    // Brainformer on Fashion-MNIST: trained quality, step time, the GLaM-like reference.
    if (TrainsBrainformer(cfg_.space(), cfg_.dataset())) {
      bf_ = std::make_unique<brainformer::SearchSetup>(brainformer::MakeSearchSetup(base_env_, cfg_.brainformer()));
      env_ = bf_->env.get();
    }
    // enas_micro cells trained from scratch briefly: quality and MMACs step time.
    if (TrainsEnasCells(cfg_)) {
      cells_ = std::make_unique<enas::TrainedSearchSetup>(enas::MakeTrainedSearchSetup(base_env_, cfg_.enas_training()));
      env_ = cells_->env.get();
    }
#endif
  }

  // Beyond the machine: refused before the directory is made.
  void CheckEstimate() const {
    int64_t done_evaluations = state_.current.evaluations;
    for (const SeedSummary& d : state_.done) done_evaluations += d.result.evaluations;
    CheckSearchEstimate(cfg_, *env_, done_evaluations, o_.allow_slow);
  }

  void OpenRunDirectory() {
    dir_ = std::make_unique<run::RunDirectory>(run::ResolveRunDirFlags(o_.dir));
    dir_->WriteConfig(cfg_, run::CommandLineText(argc_, argv_));
    if (!o_.dir.resume.empty())  // the rows logged after the checkpoint go (they are logged again, the same)
      dir_->ResumeFrom(many_ ? static_cast<int64_t>(state_.seed_index) : state_.current.evaluations);
    run::InstallStopOnSignal();  // from here on a Ctrl-C ends the run within a step (a training step too)
  }

  // Brainformer: the GLaM-like block, trained like every candidate.
  void TrainReference() {
#if PLACERL_HAVE_TORCH
    if (bf_) {
      reference_ = {bf_->reference, brainformer::EvaluateReference(*bf_)};
      have_reference_ = true;
      std::fprintf(stderr, "GLaM-like reference: validation accuracy %.4f, step time %.4g %s (budget %.4g, %s)\n",
                   reference_.score.quality, reference_.score.cost, env_->step_time_model().unit().c_str(), bf_->budget,
                   bf_->budget_source.c_str());
    }
#endif
  }

  void SearchSeeds() {
    // Bounded logs and curves (docs/nas.md "Reliability"): one metrics row per evaluation up to
    // kMaxLoggedRows per seed, beyond that every log_stride-th, each new best and the last; the
    // curves keep at most about kCurvePoints points per seed.
    log_stride_ = std::max<int64_t>(1, (cfg_.budget() + kMaxLoggedRows - 1) / kMaxLoggedRows);
    run::ProgressOptions po;
    po.label = cfg_.method();
    po.unit = "archs";
    po.total = static_cast<double>(cfg_.budget()) * seeds_.size();
    progress_ = std::make_unique<run::Progress>(po);
    tabular_ = !env_->space().table().empty() && env_->options().quality == "table";
    has_cost_ = env_->step_time_model().unit() != "none";
    // Checkpoints (docs/nas.md "Resume"): state.json (+ latest.ckpt) every checkpoint_minutes and at the end.
    if (o_.dir.resume.empty())
      state_.curve_stride = std::max<int64_t>(1, (cfg_.budget() + kCurvePoints - 1) / kCurvePoints);
    last_checkpoint_ = std::chrono::steady_clock::now();
    for (size_t k = 0; k < state_.done.size(); ++k) agg_.Add(*env_, seeds_[k], state_.done[k].result);
    pareto_.points = state_.pareto;
    for (size_t k = state_.seed_index; k < seeds_.size() && !run::StopRequested(); ++k)
      if (!SearchSeed(k)) break;
  }

  bool CheckpointDue() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_).count() >=
           cfg_.checkpoint_minutes() * 60;
  }

  // The learned methods' latest.ckpt (their state inside it: RunLearned), then state.json.
  void WriteCheckpoint() {
    if (Learned(cfg_.method())) WriteFileAtomic(dir_->CheckpointPath("latest.ckpt"), state_.learner_checkpoint);
    WriteFileAtomic(dir_->CheckpointPath("state.json"), RunStateText(state_, cfg_, /*learner_meta=*/true) + "\n");
    last_checkpoint_ = std::chrono::steady_clock::now();
    if (o_.test_kill_after_checkpoints > 0 && ++checkpoints_written_ == o_.test_kill_after_checkpoints)
      std::raise(SIGKILL);  // tests: a crash right after a checkpoint
  }

  // Seed seeds_[k]'s search (a resumed one goes on from state_.current); false when it was
  // stopped before its first evaluation (nothing to add).
  bool SearchSeed(size_t k) {
    if (k != state_.seed_index) {  // a new seed's search
      state_.seed_index = k;
      state_.current = {};
      state_.current_seconds = 0;
      state_.last_stats.clear();
      state_.learner_checkpoint.clear();
    }
    search::NasSearchOptions so;
    so.method = cfg_.method();
    so.budget = cfg_.budget();
    so.seed = seeds_[k];
    so.population = cfg_.population();
    so.tournament = cfg_.tournament();
    so.curve_stride = state_.curve_stride;
    double best_quality_so_far = -1e300;
    std::map<std::string, double>& last_stats = state_.last_stats;
    const double seconds_before = state_.current_seconds;
    const auto seed_start = std::chrono::steady_clock::now();
    auto update_state = [&] {
      state_.pareto = pareto_.points;
      state_.current_seconds =
          seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - seed_start).count();
    };
    auto on_checkpoint = [&] {
      if (!Learned(cfg_.method())) update_state();  // (the learned: done in run_state_text, before the learner's bytes)
      WriteCheckpoint();
    };
    auto run_state_text = [&] {  // what latest.ckpt of a learned method carries
      update_state();
      return RunStateText(state_, cfg_, /*learner_meta=*/false);
    };
    // Every new best is logged: the last logged best is the best so far (a resumed seed's too).
    double last_logged_best = state_.current.evaluations > 0 ? state_.current.best.score.reward : -1e300;
    auto on_eval = [&](int64_t i, const search::NasEvaluation& e, const search::NasEvaluation& best) {
      // The best over every seed so far, not only this seed's.
      const double overall_best =
          agg_.have_overall ? std::max(agg_.overall.score.reward, best.score.reward) : best.score.reward;
      progress_->Update(agg_.evaluations + i + 1, {{"best", overall_best}});
      if (has_cost_) pareto_.Add(e);
      if (many_) return;
      best_quality_so_far = best.score.quality;
      const bool improved = best.score.reward > last_logged_best;
      if (!(improved || (i + 1) % log_stride_ == 0 || i + 1 == cfg_.budget())) return;
      last_logged_best = best.score.reward;
      run::Scalars row = {{"charts/reward", e.score.reward},
                          {"charts/quality", e.score.quality},
                          {"charts/cost", e.score.cost},
                          {"charts/best_reward", best.score.reward},
                          {"charts/best_quality", best_quality_so_far}};
      if (Learned(cfg_.method()))  // the learner's last update (empty before the first)
        for (const char* key : {"losses/policy_loss", "losses/entropy"}) {
          const auto it = last_stats.find(key);
          row.emplace_back(key, it == last_stats.end() ? NAN : it->second);
        }
      dir_->Log(i, row);
    };
    auto checkpoint_due = [this] { return CheckpointDue(); };
    search::NasSearchCheckpoints ck;
    ck.state = &state_.current;
    ck.checkpoint_due = checkpoint_due;
    ck.on_checkpoint = [&](const search::NasSearchState&) { on_checkpoint(); };
    search::NasSearchResult r =
        Learned(cfg_.method())
            ? RunLearned(*env_, cfg_, seeds_[k], on_eval, &last_stats, &state_, checkpoint_due, run_state_text,
                         on_checkpoint)
            : search::RunNasSearch(env_->space(), [&](const nas::Architecture& a) { return env_->Evaluate(a); }, so,
                                   [] { return run::StopRequested(); }, on_eval, ck);
    r.seconds += seconds_before;
    state_.current_seconds = r.seconds;
    state_.pareto = pareto_.points;
    if (r.evaluations == 0) return false;  // stopped before this seed's first evaluation: nothing to add
    agg_.Add(*env_, seeds_[k], r);
    if (many_)
      dir_->Log(static_cast<int64_t>(k), {{"charts/seed", static_cast<double>(seeds_[k])},
                                          {"charts/best_reward", r.best.score.reward},
                                          {"charts/best_quality", r.best.score.quality},
                                          {"charts/best_cost", r.best.score.cost},
                                          {"charts/unique", static_cast<double>(r.unique)}});
    // The last seed (or one stopped) stays the current one: --resume with a larger --budget goes on with it.
    if (k + 1 < seeds_.size() && !run::StopRequested()) {
      state_.AddCurve(r.best_reward);
      r.best_reward.clear();
      r.reward.clear();
      state_.done.push_back({seeds_[k], r});
    } else {
      last_curve_ = r.best_reward;
    }
    return true;
  }

  void FinishProgress() {
    char summary[200];
    if (agg_.have_overall)
      std::snprintf(summary, sizeof(summary), "best reward %.6g over %zu seed(s)", agg_.overall.score.reward,
                    agg_.best_reward.size());
    else
      std::snprintf(summary, sizeof(summary), "stopped before the first architecture");
    progress_->Finish(summary);
  }

  // Stopped (Ctrl-C) before the first evaluation: result.json says so and what was done.
  int WriteStoppedBeforeFirst() {
    if (!run::StopRequested()) throw ConfigError("no architecture was evaluated");
    nlohmann::json j = {{"space", env_->space().name()}, {"method", cfg_.method()}, {"dataset", cfg_.dataset()},
                        {"budget", cfg_.budget()}, {"seeds", seeds_.size()}, {"evaluations", 0},
                        {"stopped_by_signal", true}, {"out", dir_->path()}};
    dir_->WriteFile("result.json", j.dump(2) + "\n");
    if (o_.json) std::printf("%s\n", j.dump().c_str());
    else std::printf("stopped by signal before the first architecture was evaluated; wrote %s (config.pbtxt, result.json)\n",
                     dir_->path().c_str());
    return kExitOk;
  }

  // Best architecture (.pbtxt), the curve, the Pareto front's picture.
  void WriteBestAndPlots() {
    const search::NasEvaluation& overall = agg_.overall;
    nas::ArchitectureDef best_def = env_->space().ToDef(overall.arch);
    best_def.set_encoding(env_->Encoding(overall.arch));
    best_def.set_quality(overall.score.quality);
    best_def.set_cost(overall.score.cost);
    best_def.set_reward(overall.score.reward);
    dir_->WriteFile("best.pbtxt", "# nas-search " + cfg_.method() + " on " + env_->name() + "\n" +
                                      run::ResolvedConfigText(best_def));
    viz::PlotSeries curve{
        cfg_.method() + (many_ ? " (mean of " + std::to_string(agg_.best_reward.size()) + " seeds)" : ""), {}, {}};
    {
      RunState all;  // the finished seeds' curves and the last one's
      all.curve_sum = state_.curve_sum;
      all.curve_count = state_.curve_count;
      all.AddCurve(last_curve_);
      for (size_t i = 0; i < all.curve_sum.size(); ++i)
        if (all.curve_count[i] > 0) {
          curve.x.push_back(static_cast<double>((static_cast<int64_t>(i) + 1) * state_.curve_stride));
          curve.y.push_back(all.curve_sum[i] / all.curve_count[i]);
        }
    }
    viz::PlotOptions plot;
    plot.title = "best reward, " + cfg_.method() + ", " + env_->space().name();
    plot.x_label = "architectures evaluated";
    plot.y_label = tabular_ && cfg_.cost_budget() == 0 ? "best test accuracy / 100" : "best reward";
    plot.markers = curve.x.size() < 3;
    viz::PlotCurves({curve}, plot, dir_->PicturePath("curve"));
    if (has_cost_) {  // quality against cost: the non-dominated architectures among those evaluated
      viz::PlotSeries front{"non-dominated (" + std::to_string(pareto_.points.size()) + ")", {}, {}};
      for (const auto& p : pareto_.points) {
        front.x.push_back(p.score.cost);
        front.y.push_back(p.score.quality);
      }
      viz::PlotOptions po2;
      po2.title = "quality vs cost of the architectures evaluated, " + cfg_.method() + ", " + env_->space().name();
      po2.x_label = "cost, " + env_->step_time_model().unit();
      po2.y_label = "quality";
      po2.markers = true;
      std::vector<viz::PlotSeries> series = {front};
      if (have_reference_)
        series.push_back({"GLaM-like reference", {reference_.score.cost}, {reference_.score.quality}});
      viz::PlotCurves(series, po2, dir_->PicturePath("pareto"));
    }
  }

  nlohmann::json ResultJson() {
    const env::BlockEnv& env = *env_;
    nlohmann::json j;
    j["space"] = env.space().name();
    j["environment"] = env.name();
    j["method"] = cfg_.method();
    j["dataset"] = cfg_.dataset();
    if (env.space().table() == "nb201") j["table_dataset"] = cfg_.table_dataset();
    j["quality"] = env.quality_model().Describe();
    j["cost_unit"] = env.step_time_model().unit();
    j["budget"] = cfg_.budget();
    if (cfg_.method() == "evolution") {
      j["population"] = cfg_.population();
      j["tournament"] = cfg_.tournament();
    }
    if (Learned(cfg_.method())) {
      j["episodes_per_update"] = cfg_.episodes_per_update();
      j["learning_rate"] = cfg_.agent().learning_rate();
      j["entropy_coef"] = cfg_.agent().entropy_coef();
      j["reward_scale"] = cfg_.reward_scale();
      if (cfg_.method() == "reinforce") j["baseline_decay"] = cfg_.agent().baseline_decay();
    }
    j["seeds"] = seeds_.size();
    j["best"] = ArchJson(env, agg_.overall);
    j["best_quality"] = {{"mean", Mean(agg_.best_quality)}, {"std", Std(agg_.best_quality)}};
    j["best_reward"] = {{"mean", Mean(agg_.best_reward)}, {"std", Std(agg_.best_reward)}};
    if (tabular_) {
      std::vector<double> acc;
      for (double q : agg_.best_quality) acc.push_back(100 * q);
      j["best_test_accuracy"] = {{"mean", Mean(acc)}, {"std", Std(acc)}};
    }
    const TableOptimum opt = FindTableOptimum(env);
    if (opt.known) j["table_optimum"] = ArchJson(env, opt.best);
    if (has_cost_) {
      nlohmann::json front = nlohmann::json::array();
      for (const auto& p : pareto_.points) front.push_back(ArchJson(env, p));
      j["pareto"] = front;
    }
    AddFinalTrainings(&j);
    const double total_seconds = std::accumulate(agg_.seconds.begin(), agg_.seconds.end(), 0.0);
    j["unique_mean"] = Mean(agg_.unique);
    j["search_seconds"] = total_seconds;
    j["evaluations_per_second"] = total_seconds > 0 ? agg_.evaluations / total_seconds : 0;
    j["evaluations"] = static_cast<int64_t>(agg_.evaluations);  // what was done (the budget is what was asked)
    j["seeds_done"] = agg_.best_reward.size();
    if (!std::all_of(agg_.per_seed.begin(), agg_.per_seed.end(),
                     [](const nlohmann::json& p) { return !p.contains("unique_exact"); }))
      j["unique_exact"] = false;  // more distinct architectures than a search remembers: unique counts are lower bounds
    j["stopped_by_signal"] = run::StopRequested();
    if (many_) j["per_seed"] = agg_.per_seed;
    j["out"] = dir_->path();
    return j;
  }

  // Brainformer and trained cells: the best one and the reference trained longer, tested.
  void AddFinalTrainings(nlohmann::json* j) {
#if PLACERL_HAVE_TORCH
    if (bf_) {  // final training of the best block and of the reference: test accuracy
      std::fprintf(stderr, "final training (%lld steps) of the best block and the GLaM-like reference...\n",
                   static_cast<long long>(cfg_.brainformer().final_train_steps()));
      (*j)["brainformer"] = brainformer::FinalReport(*bf_, agg_.overall.arch, cfg_.brainformer());
      (*j)["brainformer"]["reference_search"] = ArchJson(*env_, reference_);
    }
    if (cells_) {  // final training of the best cell and of the hand-designed one: test accuracy
      std::fprintf(stderr, "final training (%g epochs) of the best cell and the hand-designed one...\n",
                   cfg_.enas_training().final_epochs());
      run::ProgressOptions fo;
      fo.label = "final";
      fo.unit = "cells";
      fo.total = 2;
      run::Progress final_progress(fo);
      double base = 0;
      std::string phase;
      (*j)["enas_training"] = enas::TrainedFinalReport(
          *cells_, agg_.overall.arch, cfg_.enas_training(),
          [&](const std::string& p, double fraction, const std::string& status) {
            if (p != phase && !phase.empty()) base += 1;
            phase = p;
            final_progress.Update(base + fraction, {run::ProgressField("cell", p.substr(p.find(':') + 1)),
                                                    run::ProgressField("status", status)});
          });
      final_progress.Finish();
    }
#else
    (void)j;
#endif
  }

  void PrintSummary(const nlohmann::json& j) const {
    if (o_.json) {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    const env::BlockEnv& env = *env_;
    const search::NasEvaluation& overall = agg_.overall;
    const std::vector<double>& best_quality = agg_.best_quality;
    const std::vector<double>& best_reward = agg_.best_reward;
    // The archs counted: those evaluated (fewer than the budget when stopped). A final training
    // stopped by a signal has no numbers to print (result.json says what it did).
    const long long archs = static_cast<long long>(agg_.evaluations);
    if (run::StopRequested())
      std::printf("stopped by signal after %lld architecture(s)%s\n", archs,
                  j.contains("brainformer") || j.contains("enas_training") ? " (final training cut short or skipped)" : "");
    if (!run::StopRequested() && j.contains("brainformer")) {
      const auto& b = j["brainformer"];
      std::printf("%s on brainformer / Fashion-MNIST, %lld archs: best %s val %.4f test %.4f step %.4g; GLaM-like val %.4f "
                  "test %.4f step %.4g (%s)\n",
                  cfg_.method().c_str(), archs, b["best"]["block"].get<std::string>().c_str(),
                  b["best"]["validation_accuracy"].get<double>(), b["best"]["test_accuracy"].get<double>(),
                  b["best"]["step_time"].get<double>(), b["reference"]["validation_accuracy"].get<double>(),
                  b["reference"]["test_accuracy"].get<double>(), b["reference"]["step_time"].get<double>(),
                  b["step_time_unit"].get<std::string>().c_str());
    } else if (!run::StopRequested() && j.contains("enas_training")) {
      const auto& e = j["enas_training"];
      std::printf("%s on enas_micro / Fashion-MNIST, %lld archs (each cell trained %lld steps): best val %.4f (search), after "
                  "%g epoch(s) val %.4f test %.4f, %.3g MMACs; hand-designed test %.4f, %.3g MMACs\n",
                  cfg_.method().c_str(), archs,
                  static_cast<long long>(cfg_.enas_training().train_steps()), e["best"]["search_val_accuracy"].get<double>(),
                  cfg_.enas_training().final_epochs(), e["best"]["val_accuracy"].get<double>(),
                  e["best"]["test_accuracy"].get<double>(), e["best"]["mmacs"].get<double>(),
                  e["hand"]["test_accuracy"].get<double>(), e["hand"]["mmacs"].get<double>());
    } else if (tabular_)
      std::printf("%s on %s (%s), %zu seed(s), %lld archs: best test accuracy %.2f +- %.2f %%; best %s %.2f %%\n",
                  cfg_.method().c_str(), env.space().name().c_str(), env.quality_model().Describe().c_str(),
                  best_quality.size(), archs, 100 * Mean(best_quality),
                  100 * Std(best_quality), env.Encoding(overall.arch).c_str(), 100 * overall.score.quality);
    else
      std::printf("%s on %s, %zu seed(s), %lld archs: best reward %.6g +- %.3g; best %s\n", cfg_.method().c_str(),
                  env.space().name().c_str(), best_reward.size(), archs,
                  Mean(best_reward), Std(best_reward), env.space().Describe(overall.arch).c_str());
    std::printf("wrote %s (best.pbtxt, curve.%s%s, metrics.csv, TensorBoard events, config.pbtxt, result.json)\n",
                dir_->path().c_str(), o_.dir.pictures.c_str(), has_cost_ ? (", pareto." + o_.dir.pictures).c_str() : "");
  }

  const Options& o_;
  const config::NasSearchConfig& cfg_;
  const std::vector<uint64_t> seeds_;
  const bool many_;
  RunState state_;  // checkpointed (docs/nas.md "Resume")
  std::shared_ptr<const env::BlockEnv> base_env_;
  const env::BlockEnv* env_ = nullptr;  // base_env_, or Brainformer's / the trained cells' over it
#if PLACERL_HAVE_TORCH
  std::unique_ptr<brainformer::SearchSetup> bf_;
  std::unique_ptr<enas::TrainedSearchSetup> cells_;
#endif
  std::unique_ptr<run::RunDirectory> dir_;
  search::NasEvaluation reference_;  // Brainformer: the GLaM-like block, trained like every candidate
  bool have_reference_ = false;
  std::unique_ptr<run::Progress> progress_;
  int64_t log_stride_ = 1;
  bool tabular_ = false, has_cost_ = false;
  SeedAggregates agg_;
  ParetoFront pareto_;
  std::vector<double> last_curve_;  // the last seed's best-reward curve (not in state_.done)
  std::chrono::steady_clock::time_point last_checkpoint_;
  int checkpoints_written_ = 0;
};

int NasSearch(const Options& o) {
  if (!o.print_space.empty()) {  // the text of a built-in space, to copy and change
    std::printf("%s", nas::BuiltinSpaceText(o.print_space).c_str());
    return kExitOk;
  }
  const config::NasSearchConfig cfg = ResolveRunConfig(o);
#if PLACERL_HAVE_TORCH
  if (SharesEnasWeights(cfg)) return RunSharedWeightsSearch(o, cfg);
#endif
  return SeedsSearch(o, cfg).Run();
}

}  // namespace

int main(int argc, char** argv) {
  argc_ = argc;
  argv_ = argv;
  return RunMain("nas-search", [&] {
    CLI::App app{"Searches a block / cell architecture space (nb201, nas_bench_macro, enas_macro, enas_micro, "
                 "brainformer or a .pbtxt) with random search, regularised evolution, REINFORCE (the ENAS "
                 "controller's algorithm) or PPO on the tabular benchmarks (or a synthetic quality), over one or "
                 "many seeds, and writes a run directory."};
    Options o;
    app.add_option("--space", o.space, "nb201 | nas_bench_macro | enas_macro | enas_micro | brainformer | FILE.pbtxt "
                                       "(default nb201)")->check(cli::NonEmpty());
    app.add_option("--method", o.method, "random | evolution (default) | reinforce | ppo (the shared GNN policy; "
                                         "learner options with --set agent.learning_rate=…)")->check(cli::NonEmpty());
    app.add_option("--dataset", o.dataset, "table (default) | fashion-mnist (children trained for real: enas_micro with "
                                           "--method enas (weight sharing) | random (fully trained random cells); with "
                                           "evolution | reinforce | ppo, or random with --train-steps, each cell "
                                           "trained briefly, settings with --set enas_training.…; brainformer with any method, settings with "
                                           "--set brainformer.…)")->check(cli::NonEmpty());
    app.add_option("--budget-minutes", o.budget_minutes, "fashion-mnist: search time (default 10) on --clock")
        ->check(cli::FiniteRange(1e-4, 1e6));
    app.add_option("--clock", o.clock,
                   "enas_micro / fashion-mnist: the search budget's clock, wall (default) or cpu (this process's CPU "
                   "seconds, for fair budgets on a shared machine)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_option("--final-epochs", o.final_epochs, "fashion-mnist: epochs of training from scratch (default 1; "
                                                     "fractions allowed)")->check(cli::FiniteRange(1e-6, 1e4));
    app.add_option("--random-cells", o.random_cells, "fashion-mnist: random cells trained from scratch (default 4; "
                                                     "0 with --method enas: no random or hand-designed cells)")
        ->check(cli::IntRange(0, 10000));
    app.add_option("--derive-samples", o.derive_samples,
                   "enas: children sampled from the trained controller and ranked with the shared weights (default 10)")
        ->check(cli::IntRange(1, 100000));
    app.add_option("--derive-images", o.derive_images, "enas: validation images that rank them (default 1000)")
        ->check(cli::IntRange(1, 1000000));
    app.add_option("--final-candidates", o.final_candidates,
                   "enas: the R best-ranked children trained from scratch, the best by validation is the found cell "
                   "(default 1; compare with --random-cells R)")->check(cli::IntRange(1, 10000));
    app.add_option("--uniform-fraction", o.uniform_fraction,
                   "enas: shared steps train a uniformly random child (not the controller's) during this first "
                   "fraction of the budget (default 0)")->check(cli::FiniteRange(0, 1));
    app.add_option("--max-images", o.max_images, "fashion-mnist: at most N images of each split (quick runs, tests)")
        ->check(cli::IntRange(1, 60000));
    app.add_option("--fashion-mnist-dir", o.fashion_mnist_dir, "the IDX files (default /usr/share/datasets/fashion-mnist, "
                                                               "Debian dataset-fashion-mnist)")->check(cli::NonEmpty());
    app.add_option("--train-steps", o.train_steps, "fashion-mnist: training steps per candidate (default 200) for brainformer "
                                                   "and for enas_micro with random | evolution | reinforce | ppo")
        ->check(cli::IntRange(1, 10000000));
    app.add_option("--table-dataset", o.table_dataset, "nb201: cifar10 (default) | cifar100 | imagenet16-120")
        ->check(cli::NonEmpty());
    app.add_option("--budget", o.budget, "evaluated architectures per seed (default 100; with --resume: the new total, "
                                       "one seed only)")->check(cli::IntRange(1, cli::kMaxCount));
    app.add_option("--seeds", o.seeds, "seeds: 7 | 1,2,5 | 1-100 (default 1)")->check(cli::NonEmpty());
    app.add_option("--population", o.population, "evolution: population P (default 10)")->check(cli::IntRange(2, 1000000));
    app.add_option("--tournament", o.tournament, "evolution: tournament size S (default 3)")->check(cli::IntRange(1, 1000000));
    app.add_option("--episodes-per-update", o.episodes_per_update,
                   "reinforce / ppo: architectures per learner update")->check(cli::IntRange(1, 1000000));
    app.add_option("--step-time-budget,--cost-budget", o.cost_budget,
                   "penalise a step time (or its proxy: nb201 MMACs, nas_bench_macro MFLOPs) above this; 0 = off")
        ->check(cli::FiniteRange(0, 1e18));
    app.add_option("--penalty", o.penalty, "penalty weight (default 1)")->check(cli::FiniteRange(0, 1e9));
    app.add_option("--under-penalty", o.under_penalty,
                   "weight of the shortfall below the step-time budget, reward -= W * max(0, 1 - cost / budget): "
                   "the budget as a target (default 0 = off)")->check(cli::FiniteRange(0, 1e9));
    app.add_option("--nb201-table", o.nb201_table, "nats_bench_tss.csv (default ../shared/datasets/nas/…)")->check(cli::NonEmpty());
    app.add_option("--macro-table", o.macro_table, "nas_bench_macro_cifar10.json (default ../shared/datasets/nas/…)")
        ->check(cli::NonEmpty());
    app.add_option("--print-space", o.print_space, "print the .pbtxt of a built-in space and exit (no --out needed)")
        ->check(cli::NonEmpty());
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    app.add_flag("--allow-slow", o.allow_slow, "run even when the search is estimated to take more than a week or more "
                                                "memory than the machine has (refused otherwise, with the estimate)");
    run::AddRunDirFlags(app, &o.dir);
    // Defined after --method/--space/--dataset: its defaults are those of the given ones.
    run::AddHelpConfig(app, "nas-search", [&o] {
      return DefaultConfig(o.method.empty() ? DefaultConfig().method() : o.method, o.space, o.dataset);
    });
    app.add_option("--test-kill-after-checkpoints", o.test_kill_after_checkpoints)->group("");
    cli::Parse(app, argc, argv);
    return NasSearch(o);
  });
}
