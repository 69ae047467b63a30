#include "env/block/block_models.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <mutex>
#include <random>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "datasets/util/errors.h"

namespace placerl::env {

namespace {

template <typename T, typename Read>
std::shared_ptr<const T> Cached(const std::string& path, Read read) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const T>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto t = std::make_shared<const T>(read(path));
  cache[path] = t;
  return t;
}

}  // namespace

std::shared_ptr<const nas::Nb201Table> CachedNb201Table(const std::string& path) {
  return Cached<nas::Nb201Table>(path, [](const std::string& p) { return nas::ReadNb201Csv(p); });
}

std::shared_ptr<const nas::MacroTable> CachedMacroTable(const std::string& path) {
  return Cached<nas::MacroTable>(path, [](const std::string& p) { return nas::ReadNasBenchMacroJson(p); });
}

double Nb201Quality::Quality(const nas::Architecture& a) const {
  const float acc = table_->Accuracy(dataset_, nas::Nb201Code(a.data()));
  if (!std::isfinite(acc)) throw ConfigError("NAS-Bench-201 has no row for " + nas::Nb201ArchString(a.data()));
  return acc / 100.0;
}

std::string Nb201Quality::Describe() const {
  return std::string("NAS-Bench-201 ") + nas::Nb201DatasetName(dataset_) + " 200-epoch test accuracy / 100";
}

double MacroQuality::Quality(const nas::Architecture& a) const {
  const float acc = table_->mean_accuracy[nas::MacroCode(a.data())];
  if (!std::isfinite(acc)) throw ConfigError("NAS-Bench-Macro has no row for " + nas::MacroArchString(a.data()));
  return acc / 100.0;
}

double MacroFlopsCost::StepTime(const nas::Architecture& a) const {
  const int64_t f = table_->flops[nas::MacroCode(a.data())];
  if (f < 0) throw ConfigError("NAS-Bench-Macro has no row for " + nas::MacroArchString(a.data()));
  return static_cast<double>(f) / 1e6;
}

SyntheticQuality::SyntheticQuality(const nas::SearchSpace& space, uint64_t seed) : seed_(seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double lo = 0, hi = 0;
  for (const nas::Decision& d : space.decisions()) {
    std::vector<double> w(d.num_choices());
    for (double& x : w) x = u(rng);
    lo += *std::min_element(w.begin(), w.end());
    hi += *std::max_element(w.begin(), w.end());
    w_.push_back(std::move(w));
  }
  lo_ = lo;
  hi_ = hi > lo ? hi : lo + 1;
}

double SyntheticQuality::Quality(const nas::Architecture& a) const {
  double s = 0;
  for (size_t d = 0; d < w_.size(); ++d) s += w_[d].at(a.at(d));
  return (s - lo_) / (hi_ - lo_);
}

std::string SyntheticQuality::Describe() const {
  return "synthetic additive quality (seed " + std::to_string(seed_) + ")";
}

nas::Architecture SyntheticQuality::Optimum() const {
  nas::Architecture a;
  for (const auto& w : w_) a.push_back(static_cast<int32_t>(std::max_element(w.begin(), w.end()) - w.begin()));
  return a;
}

}  // namespace placerl::env

// ---- Brainformer step time ----

namespace placerl::env {

namespace {

int DecisionOrThrow(const nas::SearchSpace& space, const std::string& name) {
  const int d = space.DecisionIndex(name);
  if (d < 0) throw ConfigError("brainformer step time: space " + space.name() + " has no decision '" + name + "'");
  return d;
}

double ParseChoiceNumber(const std::string& choice, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(choice.c_str(), &end);
  if (end == choice.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
    throw ConfigError("brainformer step time: " + what + " choice '" + choice + "' is not a positive number");
  return v;
}

}  // namespace

BrainformerStepTime::BrainformerStepTime(const nas::SearchSpace& space, const BrainformerScale& scale)
    : scale_(scale) {
  if (scale_.blocks < 1 || scale_.seq < 1 || scale_.vocab < 0 || scale_.batch < 1)
    throw ConfigError("brainformer step time: blocks, seq and batch must be >= 1, vocab >= 0");
  if (scale_.plan != "fsdp" && scale_.plan != "search")
    throw ConfigError("brainformer step time: plan must be fsdp or search, not '" + scale_.plan + "'");
  mesh_ = perf::ParseMeshSpec(scale_.mesh);
  // An unknown chip or a batch the fsdp plan cannot split fails here, not per architecture.
  const perf::TrainingEvaluator probe(perf::DefaultModel(), mesh_, perf::DefaultCatalog());
  if (scale_.batch < probe.num_devices())
    throw ConfigError("brainformer step time: batch=" + std::to_string(scale_.batch) + " sequences < the mesh's " +
                      std::to_string(probe.num_devices()) + " devices");
  model_dim_ = DecisionOrThrow(space, "block/model_dim");
  for (int i = 0;; ++i) {
    const std::string sub = "sub" + std::to_string(i) + "/";
    if (space.DecisionIndex(sub + "type") < 0) break;
    subs_.push_back({DecisionOrThrow(space, sub + "type"), DecisionOrThrow(space, sub + "heads"),
                     DecisionOrThrow(space, sub + "ffn_ratio"), DecisionOrThrow(space, sub + "experts"),
                     DecisionOrThrow(space, sub + "gating"), DecisionOrThrow(space, sub + "capacity_factor")});
  }
  if (subs_.empty()) throw ConfigError("brainformer step time: space " + space.name() + " has no sub0/type");
  for (const nas::Decision& d : space.decisions()) choices_.push_back(d.choices);
  for (const std::string& c : choices_[model_dim_]) ParseChoiceNumber(c, "model_dim");
}

perf::TransformerModel BrainformerStepTime::ModelOf(const nas::Architecture& a) const {
  auto choice = [&](int d) -> const std::string& { return choices_.at(d).at(a.at(d)); };
  perf::TransformerModel m;
  const int d_model = static_cast<int>(ParseChoiceNumber(choice(model_dim_), "model_dim"));
  m.set_layers(scale_.blocks);
  m.set_d_model(d_model);
  m.set_d_ff(4 * d_model);  // model-level defaults; every sub-layer below sets its own
  m.set_heads(8);
  m.set_seq(scale_.seq);
  m.set_vocab(scale_.vocab);
  m.set_flash_attention(true);
  for (const SubIndex& s : subs_) {
    const std::string& type = choice(s.type);
    if (type == "none") continue;
    perf::SubLayer* l = m.add_block();
    if (type == "attention") {
      l->set_type(perf::ATTENTION);
      l->set_heads(static_cast<int>(ParseChoiceNumber(choice(s.heads), "heads")));
      continue;
    }
    l->set_type(type == "moe_ffn" ? perf::MOE_FFN : perf::DENSE_FFN);
    if (type != "moe_ffn" && type != "dense_ffn")
      throw ConfigError("brainformer step time: unknown sub-layer type '" + type + "'");
    l->set_ffn_ratio(ParseChoiceNumber(choice(s.ffn_ratio), "ffn_ratio"));
    if (type == "dense_ffn") continue;
    l->set_num_experts(static_cast<int>(ParseChoiceNumber(choice(s.experts), "experts")));
    const std::string& gating = choice(s.gating);
    if (gating == "expert_choice") {
      l->set_gating(perf::GATING_EXPERT_CHOICE);
    } else if (gating == "top1" || gating == "top2") {
      l->set_top_k(gating == "top1" ? 1 : 2);
    } else {
      throw ConfigError("brainformer step time: unknown gating '" + gating + "'");
    }
    l->set_capacity_factor(ParseChoiceNumber(choice(s.capacity_factor), "capacity_factor"));
  }
  if (m.block_size() == 0) {
    perf::SubLayer* l = m.add_block();
    l->set_type(perf::DENSE_FFN);
    l->set_d_ff(1);
  }
  return m;
}

BrainformerStepTime::Result BrainformerStepTime::Evaluate(const nas::Architecture& a) const {
  const perf::TrainingEvaluator ev(ModelOf(a), mesh_, perf::DefaultCatalog());
  int expert = ev.num_devices();
  for (const perf::SubLayerC& s : ev.block())
    if (s.type == perf::MOE_FFN) expert = std::gcd(expert, static_cast<int>(s.experts));
  if (!ev.has_experts()) expert = 1;
  perf::PlanC base;
  base.fsdp = ev.num_devices();
  base.expert = expert;
  base.global_batch = static_cast<double>(scale_.batch);
  Result r;
  if (scale_.plan == "search") {
    const std::vector<std::string> fixed = {"expert"};
    const std::vector<perf::RankedPlan> best = perf::SearchPlans(ev, base, 1, nullptr, &fixed);
    if (!best.empty()) {
      r.plan = best[0].plan;
      r.breakdown = best[0].result;
      r.step_s = r.breakdown.step_s;
      return r;
    }
  }
  bool have = false;
  for (perf::Remat remat : {perf::REMAT_NONE, perf::REMAT_MINIMAL, perf::REMAT_FULL}) {
    perf::PlanC p = base;
    p.remat = remat;
    const perf::StepBreakdown b = ev.Evaluate(p);
    if (!b.valid) throw ConfigError(std::string("brainformer step time: the fsdp plan is invalid: ") + b.invalid_reason);
    if (remat == perf::REMAT_NONE) {  // the fallback when nothing fits
      r.plan = p;
      r.breakdown = b;
    }
    if (!b.oom && (!have || b.step_s < r.breakdown.step_s)) {
      r.plan = p;
      r.breakdown = b;
      have = true;
    }
  }
  r.oom = !have;
  r.step_s = r.breakdown.step_s;
  return r;
}

double BrainformerStepTime::StepTime(const nas::Architecture& a) const {
  const std::string key(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(a[0]));
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  const double t = Evaluate(a).step_s;  // outside the lock: evaluations run in parallel
  std::lock_guard<std::mutex> lock(mu_);
  cache_.emplace(key, t);
  return t;
}

size_t BrainformerStepTime::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

nas::Architecture ArchitectureFromChoices(const nas::SearchSpace& space,
                                          const std::vector<std::pair<std::string, std::string>>& choices) {
  std::map<std::string, std::string> want;
  for (const auto& [d, c] : choices) {
    if (space.DecisionIndex(d) < 0) throw ConfigError("space " + space.name() + " has no decision '" + d + "'");
    want[d] = c;
  }
  nas::Architecture a(space.num_decisions(), -1);
  std::vector<uint8_t> mask(space.max_choices());
  for (int32_t d = 0; d < space.num_decisions(); ++d) {
    const nas::Decision& dec = space.decisions()[d];
    space.AllowedChoices(a.data(), d, mask.data());
    auto it = want.find(dec.name);
    if (it == want.end()) {
      a[d] = static_cast<int32_t>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
      continue;
    }
    const auto c = std::find(dec.choices.begin(), dec.choices.end(), it->second);
    if (c == dec.choices.end())
      throw ConfigError("decision " + dec.name + " has no choice '" + it->second + "'");
    a[d] = static_cast<int32_t>(c - dec.choices.begin());
    if (!mask[a[d]]) throw ConfigError("decision " + dec.name + " = '" + it->second + "' is not allowed here");
  }
  return a;
}

nas::Architecture GlamLikeArchitecture(const nas::SearchSpace& space) {
  std::vector<std::pair<std::string, std::string>> c = {{"block/model_dim", "1024"}};
  for (int i = 0; space.DecisionIndex("sub" + std::to_string(i) + "/type") >= 0; ++i) {
    const std::string sub = "sub" + std::to_string(i) + "/";
    const bool attention = i % 2 == 0, moe = i % 4 == 3;
    c.push_back({sub + "type", attention ? "attention" : moe ? "moe_ffn" : "dense_ffn"});
    if (attention) {
      c.push_back({sub + "heads", "16"});
      continue;
    }
    c.push_back({sub + "ffn_ratio", "4"});
    if (moe) {
      c.push_back({sub + "experts", "64"});
      c.push_back({sub + "gating", "top2"});
      c.push_back({sub + "capacity_factor", "2"});
    }
  }
  return ArchitectureFromChoices(space, c);
}

}  // namespace placerl::env
