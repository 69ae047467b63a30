// block(space=nb201,…): architecture search as an episode (docs/environments.md, docs/nas.md).
// An episode builds one architecture of a search space (datasets/nas/search_space.h) decision by
// decision. Action kind kChoice{k}, k = the space's largest number of choices; the mask allows
// the current decision's own choices that the space's rules allow given the choices so far.
// Observation: one graph node per decision (static features: position, number of choices, kind
// one-hot; edges: decision order, decisions of the same layer/cell node, rules), dynamic
// features: decided + one-hot of the choice made so far. Reward 0 per step and, at the end,
//   quality − penalty · max(0, cost / cost_budget − 1)       (no penalty when cost_budget = 0)
//           − under_penalty · max(0, 1 − cost / cost_budget)  (off by default: the budget as a target)
//           − skip_penalty · KL(Bernoulli(f) ‖ Bernoulli(skip_target))
// with quality and cost (a step time or its proxy) from the QualityModel / StepTimeModel
// interfaces (env/block/block_models.h); both terms and the penalty are in info. Brainformer
// blocks' cost is the performance model's step time in seconds (step_time=perf, the scale keys
// blocks=, seq=, vocab=, batch=, mesh=, plan=; budget=glam = the GLaM-like block's step time).
// The last term
// is ENAS's skip regulariser (nas_notes.md: KL to a skip density of 0.4, weight 0.8) for spaces
// with skip flags (ENAS macro: decisions `skip{j}` with choices "0", "1"): f = the fraction of
// the architecture's skip flags set to 1. ENAS puts the KL of the controller's skip
// probabilities into the controller's LOSS; here it is a term of the episode's REWARD on the
// sampled fraction, so that every method (random, evolution, REINFORCE, PPO) sees the same
// objective — the same target, a different estimator. info: skip_fraction, skip_penalty.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/nas/search_space.h"
#include "env/block/block_models.h"
#include "env/environment.h"
#include "env/registry.h"

namespace placerl::env {

struct BlockEnvOptions {
  std::string space = "nb201";   // a built-in space or a .pbtxt file
  std::string quality;           // table | synthetic; empty = table when the space has one
  std::string dataset = "cifar10";  // nb201: cifar10 | cifar100 | imagenet16-120
  std::string table;             // the benchmark file; empty = the shared one for the space
  double cost_budget = 0;        // in the step-time model's unit; 0 = no penalty
  double penalty = 1;            // weight of the relative excess over the budget
  // Weight of the relative shortfall below the budget (needs cost_budget > 0; 0 = off, and the name
  // omits it). With it the budget is a target: a search whose quality estimate favours cheap
  // architectures (ENAS's shared weights) is pushed to use the budget (docs/nas.md).
  double under_penalty = 0;
  uint64_t seed = 1;             // synthetic quality's weights
  // perf: the TPU performance model's step time at `scale` (spaces with the Brainformer
  // decisions; their default); proxy: the table spaces' MACs / FLOPs (their default);
  // none: cost 0 (the other spaces' default). Empty = the space's default.
  std::string step_time;
  BrainformerScale scale;        // step_time=perf: blocks=, seq=, vocab=, batch=, mesh=, plan=
  double skip_penalty = 0;       // weight of the skip KL (ENAS: 0.8); 0 = off (the name omits both then)
  double skip_target = 0.4;      // ENAS's controller_skip_target
};

// The value of one complete architecture.
struct BlockScore {
  double quality = 0, cost = 0, penalty = 0, reward = 0;
  double skip_fraction = 0, skip_penalty = 0;  // skip_fraction: 0 in spaces without skip flags
};

class BlockEnv : public Environment {
 public:
  explicit BlockEnv(const BlockEnvOptions& options);
  // A space with given models (tests, later weight-sharing quality / the performance model).
  BlockEnv(std::shared_ptr<const nas::SearchSpace> space, std::shared_ptr<const QualityModel> quality,
           std::shared_ptr<const StepTimeModel> step_time, const BlockEnvOptions& options);
  static std::unique_ptr<Environment> Make(EnvParams& p);

  std::string name() const override;
  ActionSpec action_spec() const override { return ActionSpec::Choice(space_->max_choices()); }
  int32_t episode_length() const override { return space_->num_decisions(); }
  void Reset(uint64_t seed) override;
  StepResult Step(int32_t action) override;
  bool done() const override { return state_.current_node < 0; }
  std::shared_ptr<const StaticGraph> static_graph() const override { return graph_; }
  const DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override;
  const std::vector<double>& info() const override { return info_; }
  std::unique_ptr<Environment> Clone() const override { return std::make_unique<BlockEnv>(*this); }

  // The score of any complete, allowed architecture (what an episode that builds it ends
  // with). Throws ConfigError for an architecture the space does not allow. Thread-safe.
  BlockScore Evaluate(const nas::Architecture& a) const;
  // The budget terms of the reward for a cost in step_time_model().unit():
  // penalty · max(0, cost / budget − 1) + under_penalty · max(0, 1 − cost / budget); 0 without a budget.
  double BudgetPenalty(double cost) const;
  const nas::SearchSpace& space() const { return *space_; }
  std::shared_ptr<const nas::SearchSpace> shared_space() const { return space_; }
  const QualityModel& quality_model() const { return *quality_; }
  const StepTimeModel& step_time_model() const { return *step_time_; }
  const BlockEnvOptions& options() const { return o_; }
  // The choices made so far (size num_decisions; -1 where not decided yet).
  const nas::Architecture& architecture() const { return arch_; }
  // The benchmark's string of `a` ("|nor_conv_3x3~0|+…", "01201122"), or "" for a space with no table.
  std::string Encoding(const nas::Architecture& a) const;

 private:
  void CheckOptionsAndBuild();
  void BuildGraph();
  void UpdateMask();
  std::string StepTimeKeys() const;
  std::vector<int32_t> skip_decisions_;  // decisions that are 0/1 skip flags
  BlockEnvOptions o_;
  std::shared_ptr<const nas::SearchSpace> space_;
  std::shared_ptr<const QualityModel> quality_;
  std::shared_ptr<const StepTimeModel> step_time_;
  std::shared_ptr<const StaticGraph> graph_;
  DynamicState state_;
  nas::Architecture arch_;
  std::vector<double> info_;
};

}  // namespace placerl::env
