#include "experiments/lib/nas/nas_search_config.h"

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
#include "datasets/util/config_text.h"
#include "datasets/util/data_path.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"
#include "encoders/policy.h"
#include "env/block/block_env.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/cli.h"
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

namespace placerl::nas_search {

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
config::NasSearchConfig DefaultConfig(const std::string& method, const std::string& space, const std::string& dataset) {
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

}  // namespace placerl::nas_search
