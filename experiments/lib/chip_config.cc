#include "experiments/lib/chip_config.h"

#include <algorithm>
#include <cmath>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/plc.h"
#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/render.h"
#include "search/chip/learned_proposer.h"  // kShippedProposer
#include "search/chip/proposer_es.h"

namespace placerl {

config::PlaceBaselineConfig DefaultPlaceBaselineConfig() {
  config::PlaceBaselineConfig c;
  const search::ChipBaselineOptions d;
  c.set_method("sa");
  c.set_minutes(1.0);
  c.set_seed(1);
  *c.mutable_chip() = DefaultChipEnvConfig();
  c.mutable_greedy()->set_top_k(d.greedy_top_k);
  config::SaConfig* sa = c.mutable_sa();
  sa->set_t_max(d.sa_t_max);
  sa->set_t_min(d.sa_t_min);
  for (double p : d.sa_action_probs) sa->add_action_probs(p);
  sa->set_actions_per_step(d.sa_actions_per_step);
  sa->set_fd_every_steps(d.sa_fd_every_steps);
  sa->set_init(d.sa_init);
  sa->set_soft_move_prob(d.sa_soft_move_prob);
  sa->set_soft_move_cells(d.sa_soft_move_cells);
  sa->set_proposer(d.sa_proposer);
  sa->set_proposer_lr(d.sa_proposer_lr);
  sa->set_proposer_reward(d.sa_proposer_reward_per_second ? "per_second" : "per_proposal");
  sa->set_proposer_prior(d.sa_proposer_prior);
  return c;
}

void ApplySaSoftPreset(config::SaConfig* sa) {
  sa->set_init("snapped");
  sa->set_fd_every_steps(0);
  sa->set_soft_move_prob(0.5);
  sa->set_soft_move_cells(1);
}

void ApplyLearnedSaPreset(config::SaConfig* sa) {
  ApplySaSoftPreset(sa);
  sa->set_proposer("learned");
  sa->set_proposer_lr(0);
  sa->set_proposer_weights(search::kShippedProposer);
}

void CheckPlaceBaselineConfig(const config::PlaceBaselineConfig& c) {
  CheckChipEnvConfig(c.chip());
  ParseBudgetClock(c.clock());
  bool known = false;
  for (const auto& m : search::ChipBaselineMethods()) known |= m == c.method();
  if (!known) throw ConfigError("method must be random, greedy, sa, fd or cd (got '" + c.method() + "')");
  if (!std::isfinite(c.minutes()) || c.minutes() <= 0 || c.minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("minutes must be in (0, " + std::to_string(static_cast<int>(cli::kMaxSeconds / 60)) +
                      "] (got " + std::to_string(c.minutes()) + ")");
  if (c.max_evaluations() < 0) throw ConfigError("max_evaluations must be >= 0 (0 = the time budget only)");
  if (c.greedy().top_k() < 1 || c.greedy().top_k() > 1000) throw ConfigError("greedy.top_k must be in [1, 1000]");
  const auto& sa = c.sa();
  if (!(sa.t_max() > 0) || !std::isfinite(sa.t_max()) || !(sa.t_min() > 0) || sa.t_min() > sa.t_max())
    throw ConfigError("sa.t_max and sa.t_min must satisfy 0 < t_min <= t_max (got " + std::to_string(sa.t_min()) +
                      ", " + std::to_string(sa.t_max()) + ")");
  if (sa.action_probs_size() != 5) throw ConfigError("sa.action_probs needs 5 values: swap, shift, mirror, move, shuffle");
  double sum = 0;
  for (double p : sa.action_probs()) {
    CheckNonNegativeSetting(p, "sa.action_probs");
    sum += p;
  }
  if (!(sum > 0)) throw ConfigError("sa.action_probs must not all be 0");
  if (sa.actions_per_step() < 0 || sa.actions_per_step() > 100000000) throw ConfigError("sa.actions_per_step must be in [0, 1e8]");
  if (sa.fd_every_steps() < 0) throw ConfigError("sa.fd_every_steps must be >= 0");
  if (!(sa.soft_move_prob() >= 0 && sa.soft_move_prob() <= 1)) throw ConfigError("sa.soft_move_prob must be in [0, 1]");
  if (!(sa.soft_move_cells() > 0 && sa.soft_move_cells() <= 1e6))
    throw ConfigError("sa.soft_move_cells must be in (0, 1e6]");
  if (sa.init() != "greedy" && sa.init() != "random" && sa.init() != "input" && sa.init() != "snapped")
    throw ConfigError("sa.init must be greedy, random, input or snapped (got '" + sa.init() + "')");
  if (sa.proposer() != "uniform" && sa.proposer() != "learned")
    throw ConfigError("sa.proposer must be uniform or learned (got '" + sa.proposer() + "')");
  if (!sa.proposer_reward().empty() && sa.proposer_reward() != "per_proposal" && sa.proposer_reward() != "per_second")
    throw ConfigError("sa.proposer_reward must be per_proposal or per_second (got '" + sa.proposer_reward() + "')");
  if (!(sa.proposer_lr() >= 0 && sa.proposer_lr() <= 100)) throw ConfigError("sa.proposer_lr must be in [0, 100]");
  if (!sa.proposer_prior().empty() && sa.proposer_prior() != "uniform" && sa.proposer_prior() != "mixture")
    throw ConfigError("sa.proposer_prior must be uniform or mixture (got '" + sa.proposer_prior() + "')");
  if (!sa.proposer_weights().empty() && sa.proposer() != "learned")
    throw ConfigError("sa.proposer_weights needs sa.proposer=learned");
}

config::TrainProposerConfig DefaultTrainProposerConfig() {
  config::TrainProposerConfig c;
  const search::ProposerEsOptions d;
  *c.mutable_run() = DefaultPlaceBaselineConfig();
  config::SaConfig* sa = c.mutable_run()->mutable_sa();
  ApplySaSoftPreset(sa);
  sa->set_proposer("learned");
  sa->set_proposer_lr(0);  // the weights are what the search changes; no learning inside a run
  c.mutable_run()->set_max_evaluations(200000);
  c.set_iterations(d.iterations);
  c.set_pairs(d.pairs);
  c.set_sigma(d.sigma);
  c.set_learning_rate(d.learning_rate);
  c.set_features("bias,progress,progress_squared");
  c.set_select(d.select);
  c.set_schedule(d.schedule);
  c.set_control(d.control);
  c.set_seed(d.seed);
  c.set_minutes(60);
  c.set_clock("cpu");
  c.set_threads(d.threads);
  c.set_start("mixture");
  return c;
}

std::vector<int> ProposerEsFeatures(const std::string& list) {
  std::vector<int> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    int found = -1;
    for (int f = 0; f < search::ProposerWeights::kFeatures; ++f)
      if (name == search::ProposerFeatureName(f)) found = f;
    if (found < 0)
      throw ConfigError("features: '" + name + "' is not bias, progress, progress_squared or acceptance_rate");
    if (std::find(out.begin(), out.end(), found) != out.end()) throw ConfigError("features: '" + name + "' is listed twice");
    out.push_back(found);
    begin = end + 1;
  }
  return out;
}

void CheckTrainProposerConfig(const config::TrainProposerConfig& c) {
  config::PlaceBaselineConfig run = c.run();
  run.set_method("sa");
  if (run.minutes() <= 0) run.set_minutes(1);
  CheckPlaceBaselineConfig(run);
  if (c.run().sa().proposer() != "learned") throw ConfigError("run.sa.proposer must be learned (the weights are what is trained)");
  if (c.run().max_evaluations() < 1 || c.run().max_evaluations() > 1000000000)
    throw ConfigError("run.max_evaluations must be in [1, 1e9] (the moves of each run)");
  if (c.plcs_size() != 0 && c.plcs_size() != c.netlists_size())
    throw ConfigError("plcs: give none or one per netlist (" + std::to_string(c.netlists_size()) + " netlists, " +
                      std::to_string(c.plcs_size()) + " plcs)");
  if (c.iterations() < 0 || c.iterations() > 1000000) throw ConfigError("iterations must be in [0, 1e6]");
  if (c.pairs() < 1 || c.pairs() > 10000) throw ConfigError("pairs must be in [1, 10000]");
  if (!(c.sigma() > 0 && c.sigma() <= 10)) throw ConfigError("sigma must be in (0, 10]");
  if (!(c.learning_rate() >= 0 && c.learning_rate() <= 10)) throw ConfigError("learning_rate must be in [0, 10]");
  if (c.threads() < 1 || c.threads() > 256) throw ConfigError("threads must be in [1, 256]");
  if (!std::isfinite(c.minutes()) || c.minutes() <= 0 || c.minutes() * 60 > cli::kMaxSeconds)
    throw ConfigError("minutes must be in (0, " + std::to_string(static_cast<int>(cli::kMaxSeconds / 60)) + "]");
  ParseBudgetClock(c.clock());
  if (c.start().empty()) throw ConfigError("start must be mixture, uniform or a proposer.json");
  if (c.features().empty() && !c.select() && !c.schedule() && !c.control() && !c.hard_select() && !c.target_select() &&
      !c.late_kinds() && !c.length())
    throw ConfigError(
        "features is empty and select, schedule, control, hard_select, target_select, late_kinds and length are off: "
        "nothing to search");
  if (!c.features().empty()) ProposerEsFeatures(c.features());
}

search::ChipBaselineOptions BaselineOptionsFromConfig(const config::PlaceBaselineConfig& c) {
  search::ChipBaselineOptions o;
  o.seconds = c.minutes() * 60;
  o.seed = c.seed();
  o.greedy_top_k = c.greedy().top_k();
  o.sa_t_max = c.sa().t_max();
  o.sa_t_min = c.sa().t_min();
  o.sa_action_probs.assign(c.sa().action_probs().begin(), c.sa().action_probs().end());
  o.sa_actions_per_step = c.sa().actions_per_step();
  o.sa_fd_every_steps = c.sa().fd_every_steps();
  o.sa_init = c.sa().init();
  o.sa_soft_move_prob = c.sa().soft_move_prob();
  o.sa_soft_move_cells = c.sa().soft_move_cells();
  o.sa_proposer = c.sa().proposer();
  o.sa_proposer_lr = c.sa().proposer_lr();
  o.sa_proposer_reward_per_second = c.sa().proposer_reward() == "per_second";
  o.sa_proposer_prior = c.sa().proposer_prior().empty() ? "uniform" : c.sa().proposer_prior();
  if (!c.sa().proposer_weights().empty()) o.sa_proposer_weights = search::LoadProposerWeights(c.sa().proposer_weights());
  o.refine_cd = c.refine_cd();
  o.max_evaluations = c.max_evaluations();
  o.clock = ParseBudgetClock(c.clock());
  return o;
}

nlohmann::json WriteBestPlacement(const run::RunDirectory& dir, const env::ChipEnv& env, const env::ChipSolution& best,
                                  const std::string& stem, const std::string& title) {
  nlohmann::json d = {{"design", env.instance().design.label}};
  if (!best.valid) return d;
  const chip::Netlist placed = env::PlacedNetlist(env.netlist(), best);
  // Re-scored from scratch: the number reported is a full evaluation.
  const chip::CostBreakdown c = chip::EvaluateProxyCost(placed, env.settings(), env.options().weights);
  const chip::PlcCosts costs{c.hpwl, c.wirelength_cost, c.congestion_cost, c.density_cost};
  chip::WritePlc(placed, env.settings(), &costs, dir.Path(stem + ".plc"));
  chip::ProxyCost pc(placed, env.settings(), env.options().weights);
  viz::RenderOptions ro;
  ro.title = title;
  ro.costs = c;
  viz::RenderPlacement(pc, ro, dir.PicturePath(stem));
  d["proxy_cost"] = c.proxy_cost;
  d["wirelength_cost"] = c.wirelength_cost;
  d["density_cost"] = c.density_cost;
  d["congestion_cost"] = c.congestion_cost;
  d["plc"] = dir.Path(stem + ".plc");
  return d;
}

}  // namespace placerl
