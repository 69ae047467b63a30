#include "env/block/block_env.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "datasets/util/errors.h"

namespace placerl::env {

namespace {

const std::vector<std::string> kInfoNames = {"quality", "cost",    "cost_budget",  "penalty",
                                             "reward",  "decided", "skip_fraction", "skip_penalty"};

// KL(Bernoulli(f) ‖ Bernoulli(t)) with 0·log 0 = 0.
double BernoulliKl(double f, double t) {
  double kl = 0;
  if (f > 0) kl += f * std::log(f / t);
  if (f < 1) kl += (1 - f) * std::log((1 - f) / (1 - t));
  return kl;
}

// 0/1 skip flags: a decision of a template named skip… with the choices "0" and "1".
std::vector<int32_t> SkipDecisions(const nas::SearchSpace& s) {
  std::vector<int32_t> out;
  for (int32_t d = 0; d < s.num_decisions(); ++d) {
    const nas::Decision& x = s.decisions()[d];
    const size_t slash = x.kind.rfind('/');
    const std::string last = x.kind.substr(slash == std::string::npos ? 0 : slash + 1);
    if (last.compare(0, 4, "skip") == 0 && x.choices == std::vector<std::string>{"0", "1"}) out.push_back(d);
  }
  return out;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string Quoted(const std::string& v) {
  if (v.find_first_of(",()='\" ") == std::string::npos) return v;
  return v.find('\'') == std::string::npos ? "'" + v + "'" : "\"" + v + "\"";
}

// The space and its two models from the options (options.quality / table resolved in place).
struct Parts {
  std::shared_ptr<const nas::SearchSpace> space;
  std::shared_ptr<const QualityModel> quality;
  std::shared_ptr<const StepTimeModel> step_time;
};

Parts MakeParts(BlockEnvOptions* o) {
  Parts p;
  p.space = std::make_shared<const nas::SearchSpace>(nas::LoadSearchSpace(o->space));
  const std::string& table = p.space->table();
  if (o->quality.empty()) o->quality = table.empty() ? "synthetic" : "table";
  if (o->quality != "table" && o->quality != "synthetic")
    throw ConfigError("block: quality must be table or synthetic, not '" + o->quality + "'");
  if (o->quality == "table" && table.empty())
    throw ConfigError("block: space " + p.space->name() + " has no table (use quality=synthetic)");
  if (o->table.empty() && o->quality == "table")
    o->table = table == "nb201" ? kDefaultNb201Table : kDefaultMacroTable;
  if (table == "nb201") {
    const nas::Nb201Dataset d = nas::Nb201DatasetFromName(o->dataset);
    if (o->quality == "table") p.quality = std::make_shared<Nb201Quality>(CachedNb201Table(o->table), d);
    p.step_time = std::make_shared<Nb201MacsCost>();
  } else if (table == "nas_bench_macro") {
    if (o->dataset != "cifar10") throw ConfigError("block: NAS-Bench-Macro has only dataset=cifar10");
    if (o->quality == "table") {
      auto t = CachedMacroTable(o->table);
      p.quality = std::make_shared<MacroQuality>(t);
      p.step_time = std::make_shared<MacroFlopsCost>(t);
    } else {
      p.step_time = std::make_shared<NoCost>();
    }
  } else {
    p.step_time = std::make_shared<NoCost>();
  }
  const bool brainformer = p.space->DecisionIndex("block/model_dim") >= 0 && p.space->DecisionIndex("sub0/type") >= 0;
  const std::string def = brainformer ? "perf" : table.empty() ? "none" : "proxy";
  if (o->step_time.empty()) o->step_time = def;
  if (o->step_time != "perf" && o->step_time != "proxy" && o->step_time != "none")
    throw ConfigError("block: step_time must be perf, proxy or none, not '" + o->step_time + "'");
  if (o->step_time == "perf") {
    if (!brainformer)
      throw ConfigError("block: step_time=perf needs a space with Brainformer decisions (block/model_dim, sub0/type); " +
                        p.space->name() + " has none");
    p.step_time = std::make_shared<BrainformerStepTime>(*p.space, o->scale);
  } else if (o->step_time == "proxy") {
    if (table.empty()) throw ConfigError("block: step_time=proxy needs a table space (nb201, nas_bench_macro)");
  } else {
    p.step_time = std::make_shared<NoCost>();
  }
  if (o->quality == "synthetic") p.quality = std::make_shared<SyntheticQuality>(*p.space, o->seed);
  return p;
}

}  // namespace

BlockEnv::BlockEnv(const BlockEnvOptions& options) : o_(options) {
  Parts p = MakeParts(&o_);
  space_ = p.space;
  quality_ = p.quality;
  step_time_ = p.step_time;
  CheckOptionsAndBuild();
}

BlockEnv::BlockEnv(std::shared_ptr<const nas::SearchSpace> space, std::shared_ptr<const QualityModel> quality,
                   std::shared_ptr<const StepTimeModel> step_time, const BlockEnvOptions& options)
    : o_(options), space_(std::move(space)), quality_(std::move(quality)), step_time_(std::move(step_time)) {
  if (!space_ || !quality_ || !step_time_) throw ConfigError("block: space, quality and step-time models are required");
  o_.space = space_->name();
  CheckOptionsAndBuild();
}

// The checks both constructors share, then the observation graph.
void BlockEnv::CheckOptionsAndBuild() {
  if (!(o_.cost_budget >= 0 && std::isfinite(o_.cost_budget))) throw ConfigError("block: budget must be finite and >= 0");
  if (!(o_.penalty >= 0 && std::isfinite(o_.penalty))) throw ConfigError("block: penalty must be finite and >= 0");
  if (!(o_.under_penalty >= 0 && std::isfinite(o_.under_penalty)))
    throw ConfigError("block: under_penalty must be finite and >= 0");
  if (o_.under_penalty > 0 && o_.cost_budget == 0)
    throw ConfigError("block: under_penalty needs a budget (budget > 0): it weighs the shortfall below it");
  if (!(o_.skip_penalty >= 0 && std::isfinite(o_.skip_penalty))) throw ConfigError("block: skip_penalty must be finite and >= 0");
  if (!(o_.skip_target > 0 && o_.skip_target < 1)) throw ConfigError("block: skip_target must be in (0, 1)");
  skip_decisions_ = SkipDecisions(*space_);
  if (o_.skip_penalty > 0 && skip_decisions_.empty())
    throw ConfigError("block: skip_penalty needs a space with 0/1 skip flags (skip… decisions), not " + space_->name());
  BuildGraph();
}

std::unique_ptr<Environment> BlockEnv::Make(EnvParams& p) {
  BlockEnvOptions o;
  o.space = p.GetString("space", o.space);
  o.quality = p.GetString("quality", "");
  o.dataset = p.GetString("dataset", o.dataset);
  o.table = p.GetString("table", "");
  o.step_time = p.GetString("step_time", "");
  o.scale.blocks = static_cast<int>(p.GetInt("blocks", o.scale.blocks));
  o.scale.seq = static_cast<int>(p.GetInt("seq", o.scale.seq));
  o.scale.vocab = static_cast<int>(p.GetInt("vocab", o.scale.vocab));
  o.scale.batch = p.GetInt("batch", o.scale.batch);
  o.scale.mesh = p.GetString("mesh", o.scale.mesh);
  o.scale.plan = p.GetString("plan", o.scale.plan);
  if (o.scale.blocks < 1 || o.scale.blocks > 4096 || o.scale.seq < 1 || o.scale.seq > (1 << 24) ||
      o.scale.vocab < 0 || o.scale.vocab > (1 << 24) || o.scale.batch < 1 || o.scale.batch > (1LL << 30))
    throw ConfigError("block: blocks in [1, 4096], seq in [1, 2^24], vocab in [0, 2^24], batch in [1, 2^30]");
  // budget=glam: the step time of the GLaM-like block (GlamLikeArchitecture) at this scale.
  const bool glam_budget = p.GetString("budget", "") == "glam";
  if (!glam_budget) o.cost_budget = p.GetDouble("budget", o.cost_budget);
  o.penalty = p.GetDouble("penalty", o.penalty);
  o.under_penalty = p.GetDouble("under_penalty", o.under_penalty);
  o.skip_penalty = p.GetDouble("skip_penalty", o.skip_penalty);
  o.skip_target = p.GetDouble("skip_target", o.skip_target);
  const int64_t seed = p.GetInt("seed", 1);
  if (seed < 0) throw ConfigError("block: seed must be >= 0");
  o.seed = static_cast<uint64_t>(seed);
  if (glam_budget) {
    BlockEnvOptions probe = o;
    Parts parts = MakeParts(&probe);
    if (probe.step_time != "perf") throw ConfigError("block: budget=glam needs step_time=perf (a Brainformer space)");
    o.cost_budget = parts.step_time->StepTime(GlamLikeArchitecture(*parts.space));
  }
  return std::make_unique<BlockEnv>(o);
}

std::string BlockEnv::name() const {
  return "block(space=" + Quoted(o_.space) + ",quality=" + o_.quality + ",dataset=" + Quoted(o_.dataset) +
         ",table=" + (o_.table.empty() ? "''" : Quoted(o_.table)) + ",budget=" + Num(o_.cost_budget) +
         ",penalty=" + Num(o_.penalty) + (o_.under_penalty > 0 ? ",under_penalty=" + Num(o_.under_penalty) : "") +
         ",seed=" + std::to_string(o_.seed) + StepTimeKeys() +
         (o_.skip_penalty > 0 ? ",skip_penalty=" + Num(o_.skip_penalty) + ",skip_target=" + Num(o_.skip_target) : "") +
         ")";
}

// The step-time keys of name(): step_time always for Brainformer spaces or when not the
// space's default, the scale keys with step_time=perf (so that name() re-creates the env).
std::string BlockEnv::StepTimeKeys() const {
  if (o_.step_time == "perf") {
    const BrainformerScale& s = o_.scale;
    return ",step_time=perf,blocks=" + std::to_string(s.blocks) + ",seq=" + std::to_string(s.seq) +
           ",vocab=" + std::to_string(s.vocab) + ",batch=" + std::to_string(s.batch) + ",mesh=" + Quoted(s.mesh) +
           ",plan=" + s.plan;
  }
  const bool brainformer = space_->DecisionIndex("block/model_dim") >= 0 && space_->DecisionIndex("sub0/type") >= 0;
  if (o_.step_time.empty()) return "";  // models given to the constructor
  if (brainformer || (o_.step_time == "none" && !space_->table().empty())) return ",step_time=" + o_.step_time;
  return "";
}

const std::vector<std::string>& BlockEnv::info_names() const { return kInfoNames; }

void BlockEnv::BuildGraph() {
  const nas::SearchSpace& s = *space_;
  const int32_t n = s.num_decisions();
  const int32_t kinds = static_cast<int32_t>(s.kinds().size());
  auto g = std::make_shared<StaticGraph>();
  g->num_nodes = n;
  g->node_feature_dim = 2 + kinds;
  g->node_feature_names = {"position", "choices"};
  for (const std::string& k : s.kinds()) g->node_feature_names.push_back("kind:" + k);
  g->node_features.assign(static_cast<size_t>(n) * g->node_feature_dim, 0.f);
  for (int32_t d = 0; d < n; ++d) {
    float* f = &g->node_features[static_cast<size_t>(d) * g->node_feature_dim];
    f[0] = n > 1 ? static_cast<float>(d) / (n - 1) : 0.f;
    f[1] = static_cast<float>(s.decisions()[d].num_choices()) / s.max_choices();
    f[2 + s.decisions()[d].kind_index] = 1.f;
    g->node_names.push_back(s.decisions()[d].name);
  }
  // Edges: the order decisions are taken in, each decision to the first of its layer/cell node,
  // every rule (the decision it reads → the one it restricts), and each decision to the node
  // it acts on (source_node).
  std::set<std::pair<int32_t, int32_t>> edges;
  std::vector<int32_t> first_of_node(s.node_names().size(), -1);
  for (int32_t d = 0; d < n; ++d) {
    if (d + 1 < n) edges.insert({d, d + 1});
    int32_t& first = first_of_node[s.decisions()[d].node];
    if (first < 0) first = d;
    else if (first != d) edges.insert({first, d});
  }
  for (const nas::Rule& r : s.rules()) edges.insert({r.if_decision, r.then_decision});
  // A decision to the first decision of the node it acts on (ENAS macro's skip flag from layer
  // j, NB201's edge from node j).
  for (int32_t d = 0; d < n; ++d) {
    const int32_t j = s.decisions()[d].source_node;
    if (j >= 0 && first_of_node[j] >= 0 && first_of_node[j] != d)
      edges.insert({std::min(first_of_node[j], d), std::max(first_of_node[j], d)});
  }
  for (const auto& [a, b] : edges) {
    g->edge_src.push_back(a);
    g->edge_dst.push_back(b);
    g->edge_weight.push_back(1.f);
  }
  g->metadata = {static_cast<float>(n) / 1000.f, static_cast<float>(s.max_choices()) / 100.f,
                 static_cast<float>(s.Log10Size()) / 100.f, o_.cost_budget > 0 ? 1.f : 0.f};
  g->metadata_names = {"decisions", "max_choices", "log10_size", "has_cost_budget"};
  g->Validate();
  graph_ = g;
  state_.node_dynamic_dim = 1 + s.max_choices();
  state_.node_dynamic_names = {"decided"};
  for (int32_t c = 0; c < s.max_choices(); ++c) state_.node_dynamic_names.push_back("choice_" + std::to_string(c));
  state_.node_dynamic.assign(static_cast<size_t>(n) * state_.node_dynamic_dim, 0.f);
  state_.action_mask.assign(s.max_choices(), 0);
  info_.assign(kInfoNames.size(), 0.0);
  Reset(0);
}

void BlockEnv::Reset(uint64_t) {
  arch_.assign(space_->num_decisions(), -1);
  std::fill(state_.node_dynamic.begin(), state_.node_dynamic.end(), 0.f);
  state_.current_node = 0;
  state_.step = 0;
  std::fill(info_.begin(), info_.end(), 0.0);
  info_[2] = o_.cost_budget;
  UpdateMask();
}

void BlockEnv::UpdateMask() {
  if (state_.current_node < 0) {
    std::fill(state_.action_mask.begin(), state_.action_mask.end(), 0);
    return;
  }
  space_->AllowedChoices(arch_.data(), state_.current_node, state_.action_mask.data());
}

StepResult BlockEnv::Step(int32_t action) {
  if (done()) throw InfeasibleAction("block: the episode is over");
  const int32_t d = state_.current_node;
  if (action < 0 || action >= space_->max_choices() || !state_.action_mask[action])
    throw InfeasibleAction("block: choice " + std::to_string(action) + " is not allowed for decision " +
                           space_->decisions()[d].name);
  arch_[d] = action;
  float* dyn = &state_.node_dynamic[static_cast<size_t>(d) * state_.node_dynamic_dim];
  dyn[0] = 1.f;
  dyn[1 + action] = 1.f;
  ++state_.step;
  state_.current_node = d + 1 < space_->num_decisions() ? d + 1 : -1;
  UpdateMask();
  info_[5] = state_.step;
  StepResult r;
  if (done()) {
    const BlockScore s = Evaluate(arch_);
    info_[0] = s.quality;
    info_[1] = s.cost;
    info_[3] = s.penalty;
    info_[4] = s.reward;
    info_[6] = s.skip_fraction;
    info_[7] = s.skip_penalty;
    r.reward = s.reward;
    r.done = true;
  }
  return r;
}

double BlockEnv::BudgetPenalty(double cost) const {
  if (o_.cost_budget <= 0) return 0;
  const double r = cost / o_.cost_budget;
  return o_.penalty * std::max(0.0, r - 1.0) + o_.under_penalty * std::max(0.0, 1.0 - r);
}

BlockScore BlockEnv::Evaluate(const nas::Architecture& a) const {
  const std::string why = space_->Check(a);
  if (!why.empty()) throw ConfigError("block: the architecture " + why);
  BlockScore s;
  s.quality = quality_->Quality(a);
  s.cost = step_time_->StepTime(a);
  s.penalty = BudgetPenalty(s.cost);
  if (!skip_decisions_.empty()) {
    int32_t set = 0;
    for (int32_t d : skip_decisions_) set += a[d] == 1;
    s.skip_fraction = static_cast<double>(set) / static_cast<double>(skip_decisions_.size());
    s.skip_penalty = o_.skip_penalty * BernoulliKl(s.skip_fraction, o_.skip_target);
  }
  s.reward = s.quality - s.penalty - s.skip_penalty;
  return s;
}

std::string BlockEnv::Encoding(const nas::Architecture& a) const {
  if (space_->table() == "nb201") return nas::Nb201ArchString(a.data());
  if (space_->table() == "nas_bench_macro") return nas::MacroArchString(a.data());
  return "";
}

}  // namespace placerl::env
