#include "search/chip/learned_proposer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::search {

namespace {
constexpr int K = ProposerWeights::kKinds;
constexpr int F = ProposerWeights::kFeatures;
constexpr double kMaxWeight = 30;  // logits stay finite; e^30 is a certainty for any practical purpose
constexpr const char* kFormat = "placerl-sa-proposer";
}  // namespace

const char* ProposalKindName(int kind) {
  static const char* names[K] = {"swap", "shift", "mirror", "move", "shuffle", "soft_shift", "soft_pull", "hard_pull"};
  return kind >= 0 && kind < K ? names[kind] : "?";
}

const char* ProposerFeatureName(int feature) {
  static const char* names[F] = {"bias", "progress", "progress_squared", "acceptance_rate"};
  return feature >= 0 && feature < F ? names[feature] : "?";
}

const char* ProposerSelectFeatureName(int feature) {
  static const char* names[ProposerWeights::kSelectFeatures] = {"congestion", "density", "congestion_4"};
  return feature >= 0 && feature < ProposerWeights::kSelectFeatures ? names[feature] : "?";
}

const char* ProposerHardSelectFeatureName(int feature) {
  static const char* names[ProposerWeights::kHardSelectFeatures] = {"pull_distance", "congestion", "density"};
  return feature >= 0 && feature < ProposerWeights::kHardSelectFeatures ? names[feature] : "?";
}
const char* ProposerTargetSelectFeatureName(int feature) {
  static const char* names[ProposerWeights::kTargetSelectFeatures] = {"pull_gain", "congestion", "density"};
  return feature >= 0 && feature < ProposerWeights::kTargetSelectFeatures ? names[feature] : "?";
}

namespace {
// Samples i ∈ [0, count) with probability ∝ exp(Σ_f w[f] · phi[i·N + f]); z receives the
// unnormalised probabilities, *sum their sum.
template <size_t N>
int SampleSoftmax(const std::array<double, N>& w, const double* phi, int count, std::mt19937_64& rng, double* z,
                  double* sum) {
  double top = -1e300;
  for (int i = 0; i < count; ++i) {
    z[i] = 0;
    for (size_t f = 0; f < N; ++f) z[i] += w[f] * phi[i * N + f];
    top = std::max(top, z[i]);
  }
  *sum = 0;
  for (int i = 0; i < count; ++i) *sum += (z[i] = std::exp(z[i] - top));
  double u = std::uniform_real_distribution<double>(0.0, *sum)(rng);
  for (int i = 0; i < count; ++i) {
    if (u < z[i]) return i;
    u -= z[i];
  }
  return count - 1;
}
}  // namespace

double ProposerTemperatureFactor(const ProposerWeights& w, double p, double length_log) {
  const double h = w.control_handover;
  const auto& L = w.length;
  const bool length = w.length_on && length_log != 0;
  if (w.schedule_handover && w.control_on && h < 1 && p > h) {
    const double at_h = w.schedule[0] + w.schedule[1] * h + w.schedule[2] * h * h +
                        (length ? length_log * (L[2] + L[3] * h) : 0.0);
    return std::exp(at_h * std::max(0.0, 1 - p) / (1 - h));
  }
  const double log_factor = w.schedule[0] + w.schedule[1] * p + w.schedule[2] * p * p;
  return std::exp(length ? log_factor + length_log * (L[2] + L[3] * p) : log_factor);
}

double ProposerLengthLog(const ProposerWeights& w, double evaluations) {
  if (!w.length_on || !(evaluations > ProposerWeights::kLengthReference)) return 0;
  return std::min(ProposerWeights::kMaxLengthLog, std::log(evaluations / ProposerWeights::kLengthReference));
}

double ProposerSoftStepFactor(const ProposerWeights& w, double p) {
  return std::exp(w.schedule[3] + w.schedule[4] * p + w.schedule[5] * p * p);
}

double ProposerLateStart(const ProposerWeights& w) {
  return w.control_on && w.control_handover < 1 ? w.control_handover : kDefaultHandover;
}

double AcceptanceController::target(double p) const {
  const auto& c = w_.control;
  double log_target = c[0] + c[1] * p + c[2] * p * p;
  if (w_.length_on && length_log_ != 0) log_target += length_log_ * (w_.length[0] + w_.length[1] * p);
  return std::clamp(std::exp(w_.control_state_on ? log_target + w_.control_state * state() : log_target), kMinTarget,
                    kMaxTarget);
}

bool AcceptanceController::Feedback(bool accepted, double progress, bool hard, bool improved) {
  if (progress > w_.control_handover) return false;
  ++evaluated_;
  accepted_ += accepted;
  hard_ += hard;
  hard_improved_ += hard && improved;
  if (evaluated_ < kControlWindow) return false;
  if (w_.control_state_on) {  // the state term's moving average of the log share (smoothed: finite)
    const double share = std::log((hard_improved_ + 0.5) / (hard_ + 1.0));
    if (state_seen_) {
      state_ += kStateDecay * (share - state_);
    } else {
      state_ = state0_ = share;  // the first window is the reference
      state_seen_ = true;
    }
  }
  // log of the window's acceptance, smoothed so that a window with no accepted move is finite
  const double observed = std::log((accepted_ + 0.5) / (evaluated_ + 1.0));
  u_ = std::clamp(u_ + kControlGain * std::exp(w_.control[3]) * (std::log(target(progress)) - observed), -kMaxControlU,
                  kMaxControlU);
  evaluated_ = accepted_ = hard_ = hard_improved_ = 0;
  return true;
}

double AcceptanceController::factor(double progress) const {
  const double h = w_.control_handover;
  if (progress <= h || h >= 1) return std::exp(u_);
  return std::exp(u_ * std::max(0.0, 1 - progress) / (1 - h));
}

void AddTrainedOn(ProposerWeights* w, const std::string& design) {
  if (std::find(w->trained_on.begin(), w->trained_on.end(), design) == w->trained_on.end())
    w->trained_on.push_back(design);
}

std::string ProposerWeightsJson(const ProposerWeights& w) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = 1;
  nlohmann::json kinds = nlohmann::json::array(), features = nlohmann::json::array(), rows = nlohmann::json::array();
  for (int k = 0; k < K; ++k) kinds.push_back(ProposalKindName(k));
  for (int f = 0; f < F; ++f) features.push_back(ProposerFeatureName(f));
  for (int k = 0; k < K; ++k) {
    nlohmann::json row = nlohmann::json::array();
    for (int f = 0; f < F; ++f) row.push_back(w.w[k * F + f]);
    rows.push_back(row);
  }
  j["kinds"] = kinds;
  j["features"] = features;
  j["weights"] = rows;
  nlohmann::json sel_names = nlohmann::json::array(), sel = nlohmann::json::array();
  for (int f = 0; f < ProposerWeights::kSelectFeatures; ++f) {
    sel_names.push_back(ProposerSelectFeatureName(f));
    sel.push_back(w.select[f]);
  }
  j["select_features"] = sel_names;
  j["select_weights"] = sel;
  if (std::any_of(w.schedule.begin(), w.schedule.end(), [](double v) { return v != 0; }))
    j["schedule_weights"] = w.schedule;
  if (w.hard_select_on) {
    nlohmann::json names = nlohmann::json::array();
    for (int f = 0; f < ProposerWeights::kHardSelectFeatures; ++f) names.push_back(ProposerHardSelectFeatureName(f));
    j["hard_select_features"] = names;
    j["hard_select_weights"] = w.hard_select;
  }
  if (w.target_select_on) {
    nlohmann::json names = nlohmann::json::array();
    for (int f = 0; f < ProposerWeights::kTargetSelectFeatures; ++f) names.push_back(ProposerTargetSelectFeatureName(f));
    j["target_select_features"] = names;
    j["target_select_weights"] = w.target_select;
  }
  if (w.late_kinds_on) j["late_kind_weights"] = w.late_kinds;
  if (w.control_on) j["control_weights"] = w.control;
  if (w.control_on && w.control_handover < 1) j["control_handover"] = w.control_handover;
  if (w.control_on && w.control_state_on) j["control_state_weight"] = w.control_state;
  if (w.control_on && w.schedule_handover) j["schedule_handover"] = true;
  if (w.length_on) j["length_weights"] = w.length;
  if (w.median_pull) j["soft_pull_point"] = "median";
  if (w.shift_carry_on()) j["shift_carry_from"] = w.shift_carry_from;
  if (w.shift_carry_on() && w.shift_carry_cells != 1) j["shift_carry_cells"] = w.shift_carry_cells;
  if (w.shift_carry_on() && w.carry_kinds != (1u << kShift)) {
    nlohmann::json names = nlohmann::json::array();
    for (int k = 0; k < ProposerWeights::kKinds; ++k)
      if ((w.carry_kinds >> k) & 1u) names.push_back(ProposalKindName(k));
    j["carry_kinds"] = names;
  }
  if (w.hot_soft_on()) {
    j["hot_soft_from"] = w.hot_soft_from;
    j["hot_soft_share"] = w.hot_soft_share;
    if (w.hot_soft_cells > 0) j["hot_soft_cells"] = w.hot_soft_cells;
  }
  if (w.hot_macro_on()) {
    j["hot_macro_from"] = w.hot_macro_from;
    j["hot_macro_share"] = w.hot_macro_share;
  }
  j["trained_on"] = w.trained_on;
  j["proposals_trained"] = w.proposals_trained;
  return j.dump() + "\n";
}

void SaveProposerWeights(const std::string& path, const ProposerWeights& w) {
  WriteFileAtomic(path, ProposerWeightsJson(w));
}

ProposerWeights LoadProposerWeights(const std::string& path) {
  if (path == kShippedProposer)
    return ParseProposerWeights(ShippedProposerText(), std::string("the shipped proposer (") + kShippedProposerFile + ")");
  return ParseProposerWeights(ReadFile(path, size_t(1) << 24), path);
}

ProposerWeights ParseProposerWeights(const std::string& text, const std::string& path) {
  auto bad = [&](const std::string& why) { return ParseError(path, 0, "not a learned SA proposer: " + why); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw bad(std::string("invalid JSON (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) throw bad("no \"format\": \"placerl-sa-proposer\"");
  if (!j.contains("version") || j["version"] != 1) throw bad("unknown version (this build reads version 1)");
  const nlohmann::json& kinds = j.value("kinds", nlohmann::json());
  const nlohmann::json& features = j.value("features", nlohmann::json());
  const nlohmann::json& rows = j.value("weights", nlohmann::json());
  if (!kinds.is_array() || kinds.size() != K) throw bad("\"kinds\" must list the " + std::to_string(K) + " move kinds");
  for (int k = 0; k < K; ++k)
    if (kinds[k] != ProposalKindName(k)) throw bad("kind " + std::to_string(k) + " must be " + ProposalKindName(k));
  if (!features.is_array() || features.size() != F) throw bad("\"features\" must list " + std::to_string(F) + " features");
  for (int f = 0; f < F; ++f)
    if (features[f] != ProposerFeatureName(f)) throw bad("feature " + std::to_string(f) + " must be " + ProposerFeatureName(f));
  if (!rows.is_array() || rows.size() != K) throw bad("\"weights\" must have one row per kind");
  ProposerWeights w;
  for (int k = 0; k < K; ++k) {
    if (!rows[k].is_array() || rows[k].size() != F) throw bad("weights row " + std::to_string(k) + " must have " + std::to_string(F) + " numbers");
    for (int f = 0; f < F; ++f) {
      if (!rows[k][f].is_number()) throw bad("weight [" + std::to_string(k) + "][" + std::to_string(f) + "] is not a number");
      const double v = rows[k][f].get<double>();
      if (!std::isfinite(v) || std::fabs(v) > kMaxWeight)
        throw bad("weight [" + std::to_string(k) + "][" + std::to_string(f) + "] is not finite or beyond ±30");
      w.w[k * F + f] = v;
    }
  }
  const nlohmann::json& sel_names = j.value("select_features", nlohmann::json());
  const nlohmann::json& sel = j.value("select_weights", nlohmann::json());
  constexpr int S = ProposerWeights::kSelectFeatures;
  if (!sel_names.is_array() || sel_names.size() != S) throw bad("\"select_features\" must list " + std::to_string(S) + " features");
  for (int f = 0; f < S; ++f)
    if (sel_names[f] != ProposerSelectFeatureName(f))
      throw bad("select feature " + std::to_string(f) + " must be " + ProposerSelectFeatureName(f));
  if (!sel.is_array() || sel.size() != S) throw bad("\"select_weights\" must have " + std::to_string(S) + " numbers");
  for (int f = 0; f < S; ++f) {
    if (!sel[f].is_number() || !std::isfinite(sel[f].get<double>()) || std::fabs(sel[f].get<double>()) > kMaxWeight)
      throw bad("select weight " + std::to_string(f) + " is not a finite number within ±30");
    w.select[f] = sel[f].get<double>();
  }
  // An optional array of N numbers, each finite and within ±bound ("schedule", "control").
  auto bounded = [&](const char* name, auto* out, double bound) {
    const std::string key = std::string(name) + "_weights";
    const nlohmann::json& a = j[key];
    const int n = static_cast<int>(out->size());
    if (!a.is_array() || static_cast<int>(a.size()) != n)
      throw bad("\"" + key + "\" must have " + std::to_string(n) + " numbers");
    for (int i = 0; i < n; ++i) {
      if (!a[i].is_number() || !std::isfinite(a[i].get<double>()) || std::fabs(a[i].get<double>()) > bound) {
        char range[16];
        std::snprintf(range, sizeof range, "%g", bound);
        throw bad(std::string(name) + " weight " + std::to_string(i) + " is not a finite number within ±" + range);
      }
      (*out)[i] = a[i].get<double>();
    }
  };
  if (j.contains("schedule_weights")) bounded("schedule", &w.schedule, ProposerWeights::kMaxSchedule);
  // An optional candidate selection ("NAME_features" naming each feature in order, "NAME_weights").
  auto selection = [&](const std::string& name, const char* (*feature_name)(int), auto* out, bool* on) {
    if (!j.contains(name + "_weights") && !j.contains(name + "_features")) return;
    const nlohmann::json& names = j.value(name + "_features", nlohmann::json());
    const int n = static_cast<int>(out->size());
    if (!names.is_array() || static_cast<int>(names.size()) != n)
      throw bad("\"" + name + "_features\" must list " + std::to_string(n) + " features");
    for (int f = 0; f < n; ++f)
      if (names[f] != feature_name(f))
        throw bad(name + " feature " + std::to_string(f) + " must be " + feature_name(f));
    bounded(name.c_str(), out, kMaxWeight);
    *on = true;
  };
  if (j.contains("late_kind_weights")) {
    bounded("late_kind", &w.late_kinds, kMaxWeight);
    w.late_kinds_on = true;
  }
  selection("hard_select", ProposerHardSelectFeatureName, &w.hard_select, &w.hard_select_on);
  selection("target_select", ProposerTargetSelectFeatureName, &w.target_select, &w.target_select_on);
  if (j.contains("control_weights")) {
    bounded("control", &w.control, ProposerWeights::kMaxControl);
    w.control_on = true;
  }
  if (j.contains("control_handover")) {
    const nlohmann::json& h = j["control_handover"];
    if (!w.control_on) throw bad("\"control_handover\" without \"control_weights\"");
    if (!h.is_number() || !(h.get<double>() > 0 && h.get<double>() <= 1))
      throw bad("\"control_handover\" must be a number in (0, 1]");
    w.control_handover = h.get<double>();
  }
  if (j.contains("schedule_handover")) {
    const nlohmann::json& h = j["schedule_handover"];
    if (!w.control_on) throw bad("\"schedule_handover\" without \"control_weights\"");
    if (!h.is_boolean()) throw bad("\"schedule_handover\" must be true or false");
    w.schedule_handover = h.get<bool>();
  }
  if (j.contains("control_state_weight")) {
    const nlohmann::json& c = j["control_state_weight"];
    if (!w.control_on) throw bad("\"control_state_weight\" without \"control_weights\"");
    if (!c.is_number() || !std::isfinite(c.get<double>()) || std::fabs(c.get<double>()) > ProposerWeights::kMaxControl)
      throw bad("\"control_state_weight\" must be a finite number within ±10");
    w.control_state = c.get<double>();
    w.control_state_on = true;
  }
  if (j.contains("length_weights")) {
    bounded("length", &w.length, ProposerWeights::kMaxLength);
    w.length_on = true;
  }
  if (j.contains("soft_pull_point")) {
    const nlohmann::json& v = j["soft_pull_point"];
    if (v != "mean" && v != "median") throw bad("\"soft_pull_point\" must be \"mean\" or \"median\"");
    w.median_pull = v == "median";
  }
  if (j.contains("shift_carry_from")) {
    const nlohmann::json& v = j["shift_carry_from"];
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
      throw bad("\"shift_carry_from\" must be a number in [0, 1]");
    w.shift_carry_from = v.get<double>();
  }
  if (j.contains("shift_carry_cells")) {
    const nlohmann::json& v = j["shift_carry_cells"];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 10))
      throw bad("\"shift_carry_cells\" must be a number in (0, 10]");
    w.shift_carry_cells = v.get<double>();
  }
  if (j.contains("carry_kinds")) {
    const nlohmann::json& v = j["carry_kinds"];
    const std::string why = "\"carry_kinds\" must be a non-empty list of swap, shift, move, shuffle, hard_pull";
    if (!v.is_array() || v.empty()) throw bad(why);
    w.carry_kinds = 0;
    for (const auto& name : v) {
      int kind = -1;
      for (int k : {kSwap, kShift, kMove, kShuffle, kHardPull})
        if (name.is_string() && name.get<std::string>() == ProposalKindName(k)) kind = k;
      if (kind < 0) throw bad(why);
      w.carry_kinds |= 1u << kind;
    }
    if (!w.shift_carry_on()) throw bad("\"carry_kinds\" without \"shift_carry_from\"");
  }
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  auto number_in = [&](const char* key, double lo, bool lo_open, double hi, double* out) {
    if (!j.contains(key)) return false;
    const nlohmann::json& v = j[key];
    const double x = v.is_number() ? v.get<double>() : std::nan("");
    if (!v.is_number() || !(lo_open ? x > lo : x >= lo) || !(x <= hi))
      throw bad(std::string("\"") + key + "\" must be a number in " + (lo_open ? "(" : "[") + num(lo) + ", " +
                num(hi) + "]");
    *out = x;
    return true;
  };
  const bool hot_from = number_in("hot_soft_from", 0, false, 1, &w.hot_soft_from);
  const bool hot_share = number_in("hot_soft_share", 0, true, 1, &w.hot_soft_share);
  const bool hot_cells = number_in("hot_soft_cells", 0, false, 10, &w.hot_soft_cells);
  if ((hot_share || hot_cells) && !hot_from)
    throw bad("\"hot_soft_share\" / \"hot_soft_cells\" without \"hot_soft_from\"");
  const bool hot_macro_from = number_in("hot_macro_from", 0, false, 1, &w.hot_macro_from);
  if (number_in("hot_macro_share", 0, true, 1, &w.hot_macro_share) && !hot_macro_from)
    throw bad("\"hot_macro_share\" without \"hot_macro_from\"");
  if (j.contains("trained_on")) {
    if (!j["trained_on"].is_array()) throw bad("\"trained_on\" must be a list of names");
    for (const auto& d : j["trained_on"]) {
      if (!d.is_string()) throw bad("\"trained_on\" must be a list of names");
      AddTrainedOn(&w, d.get<std::string>());  // files written before session 29 may repeat a design
    }
  }
  if (j.contains("proposals_trained")) {
    if (!j["proposals_trained"].is_number_integer() || j["proposals_trained"].get<int64_t>() < 0)
      throw bad("\"proposals_trained\" must be a count");
    w.proposals_trained = j["proposals_trained"].get<int64_t>();
  }
  return w;
}

std::array<double, K> MixtureLogPrior(double soft_prob, const std::vector<double>& action_probs, double floor) {
  if (action_probs.size() != 5) throw ConfigError("learned SA proposer: the mixture needs TILOS's five action probabilities");
  if (!(soft_prob >= 0 && soft_prob <= 1)) throw ConfigError("learned SA proposer: soft_move_prob must be in [0, 1]");
  if (!(floor > 0 && floor < 1)) throw ConfigError("learned SA proposer: the prior's floor must be in (0, 1)");
  double total = 0;
  for (double a : action_probs) {
    if (!(a >= 0) || !std::isfinite(a)) throw ConfigError("learned SA proposer: an action probability is not >= 0");
    total += a;
  }
  if (!(total > 0)) throw ConfigError("learned SA proposer: the action probabilities sum to 0");
  std::array<double, K> q{};
  for (int k = 0; k < 5; ++k) q[k] = (1 - soft_prob) * action_probs[k] / total;
  q[kSoftShift] = soft_prob;
  q[kSoftPull] = q[kHardPull] = 0;
  std::array<double, K> log_q{};
  double sum = 0;
  for (double& v : q) sum += (v = std::max(v, floor));
  for (int k = 0; k < K; ++k) log_q[k] = std::log(q[k] / sum);
  return log_q;
}

ProposerWeights WeightsOfPrior(const std::array<double, K>& log_prior) {
  ProposerWeights w;
  for (int k = 0; k < K; ++k) w.w[k * F] = log_prior[k];
  return w;
}

LearnedProposer::LearnedProposer(const ProposerWeights& w, const ProposerOptions& o,
                                 const std::array<bool, K>& legal)
    : w_(w), o_(o), legal_(legal) {
  if (std::none_of(legal_.begin(), legal_.end(), [](bool b) { return b; }))
    throw ConfigError("learned SA proposer: no move kind applies to this design");
  if (!(o_.learning_rate >= 0) || !std::isfinite(o_.learning_rate))
    throw ConfigError("learned SA proposer: the learning rate must be a finite number >= 0");
  if (!(o_.entropy_coef >= 0) || !std::isfinite(o_.entropy_coef))
    throw ConfigError("learned SA proposer: the entropy coefficient must be a finite number >= 0");
  if (o_.batch < 1) throw ConfigError("learned SA proposer: the batch must be >= 1");
  for (double v : w_.select)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: a weight is not finite");
  for (double v : w_.hard_select)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: a weight is not finite");
  for (double v : w_.target_select)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: a weight is not finite");
  for (double v : w_.w)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: a weight is not finite");
  for (double v : w_.late_kinds)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: a weight is not finite");
  for (double v : o_.log_prior)
    if (!std::isfinite(v)) throw ConfigError("learned SA proposer: the prior has a non-finite log-probability");
}

std::array<double, K> LearnedProposer::Probabilities(double progress, double acceptance) const {
  const double feat[F] = {1.0, progress, progress * progress, acceptance};
  const double h = ProposerLateStart(w_);
  const bool late = w_.late_kinds_on && progress > h;  // before h: the file's own logits, to the bit
  const double ramp = late ? std::min(1.0, (progress - h) / (1 - h)) : 0.0;
  std::array<double, K> logit{}, p{};
  double top = -1e300;
  for (int k = 0; k < K; ++k) {
    if (!legal_[k]) continue;
    double z = 0;
    for (int f = 0; f < F; ++f) z += w_.w[k * F + f] * feat[f];
    if (late) z += w_.late_kinds[k] * ramp;
    logit[k] = z;
    top = std::max(top, z);
  }
  double sum = 0;
  for (int k = 0; k < K; ++k) {
    p[k] = legal_[k] ? std::exp(logit[k] - top) : 0.0;
    sum += p[k];
  }
  for (double& v : p) v /= sum;
  return p;
}

void LearnedProposer::Refresh(double progress) {
  progress = std::clamp(progress, 0.0, 1.0);
  features_ = {1.0, progress, progress * progress, acceptance_};
  prob_ = Probabilities(progress, acceptance_);
  double c = 0;
  for (int k = 0; k < K; ++k) cumulative_[k] = (c += prob_[k]);
  double h = 0;
  for (int k = 0; k < K; ++k)
    if (prob_[k] > 0) h -= prob_[k] * std::log(prob_[k]);
  for (int k = 0; k < K; ++k) entropy_grad_[k] = prob_[k] > 0 ? -prob_[k] * (std::log(prob_[k]) + h) : 0.0;
  // −KL(π ‖ q) = H(π) + Σ π log q: the second term's gradient is π_k (log q_k − Σ π log q).
  double mean_log_q = 0;
  for (int k = 0; k < K; ++k) mean_log_q += prob_[k] * o_.log_prior[k];
  for (int k = 0; k < K; ++k)
    if (prob_[k] > 0) entropy_grad_[k] += prob_[k] * (o_.log_prior[k] - mean_log_q);
  since_refresh_ = 0;
}

int LearnedProposer::Sample(double progress, std::mt19937_64& rng) {
  if (++since_refresh_ >= 64) Refresh(progress);
  const double u = std::uniform_real_distribution<double>(0.0, cumulative_[K - 1])(rng);
  int k = 0;
  while (k < K - 1 && (!legal_[k] || u >= cumulative_[k])) ++k;
  while (!legal_[k]) --k;  // u at the very top: the last legal kind
  last_kind_ = k;
  ++stats_[k].proposed;
  return k;
}

int LearnedProposer::Select(const double* phi, int count, std::mt19937_64& rng) {
  constexpr int S = ProposerWeights::kSelectFeatures;
  count = std::clamp(count, 1, ProposerWeights::kCandidates);
  double z[ProposerWeights::kCandidates], sum = 0;
  const int chosen = SampleSoftmax(w_.select, phi, count, rng, z, &sum);
  for (int f = 0; f < S; ++f) {
    double mean = 0;
    for (int i = 0; i < count; ++i) mean += z[i] / sum * phi[i * S + f];
    select_score_[f] = phi[chosen * S + f] - mean;
  }
  selected_ = true;
  return chosen;
}

int LearnedProposer::SelectHard(const double* phi, int count, std::mt19937_64& rng) const {
  count = std::clamp(count, 1, ProposerWeights::kCandidates);
  double z[ProposerWeights::kCandidates], sum = 0;
  return SampleSoftmax(w_.hard_select, phi, count, rng, z, &sum);
}

int LearnedProposer::SelectTarget(const double* phi, int count, std::mt19937_64& rng) const {
  count = std::clamp(count, 1, ProposerWeights::kCandidates);
  double z[ProposerWeights::kCandidates], sum = 0;
  return SampleSoftmax(w_.target_select, phi, count, rng, z, &sum);
}

void LearnedProposer::Feedback(bool evaluated, bool accepted, double reward, double seconds) {
  if (last_kind_ < 0) return;
  const int a = last_kind_;
  last_kind_ = -1;
  const bool selected = selected_;
  selected_ = false;
  if (!std::isfinite(reward)) reward = 0;
  KindStats& s = stats_[a];
  if (evaluated) {
    ++s.evaluated;
    acceptance_ += o_.acceptance_decay * ((accepted ? 1.0 : 0.0) - acceptance_);
  }
  if (accepted) ++s.accepted;
  s.reward += reward;
  if (o_.reward_per_second && seconds >= 0 && std::isfinite(seconds)) {
    double& ks = kind_seconds_[a];
    ks = ks > 0 ? ks + 0.01 * (seconds - ks) : seconds;
    constexpr double beta = 1e-3;
    rate_reward_ += beta * (reward - rate_reward_);
    rate_seconds_ = rate_seconds_ > 0 ? rate_seconds_ + beta * (seconds - rate_seconds_) : seconds;
    if (rate_seconds_ > 0) reward -= rate_reward_ / rate_seconds_ * ks;
  }
  if (o_.learning_rate <= 0) return;
  // Running mean and variance of the reward: the baseline and the scale of the advantage.
  if (!reward_seen_) {
    reward_mean_ = reward;
    reward_var_ = 1;
    reward_seen_ = true;
  }
  const double beta = 1e-3;
  const double d = reward - reward_mean_;
  reward_mean_ += beta * d;
  reward_var_ = (1 - beta) * (reward_var_ + beta * d * d);
  const double advantage = d / std::sqrt(reward_var_ + 1e-12);
  for (int k = 0; k < K; ++k) {
    if (!legal_[k]) continue;
    const double g = advantage * ((k == a ? 1.0 : 0.0) - prob_[k]) + o_.entropy_coef * entropy_grad_[k];
    for (int f = 0; f < F; ++f) grad_[k * F + f] += g * features_[f];
  }
  if (selected)
    for (int f = 0; f < ProposerWeights::kSelectFeatures; ++f) select_grad_[f] += advantage * select_score_[f];
  if (++in_batch_ >= o_.batch) Update();
}

void LearnedProposer::Update() {
  const double step = o_.learning_rate / in_batch_;
  for (int i = 0; i < K * F; ++i) {
    w_.w[i] = std::clamp(w_.w[i] + step * grad_[i], -kMaxWeight, kMaxWeight);
    grad_[i] = 0;
  }
  for (int f = 0; f < ProposerWeights::kSelectFeatures; ++f) {
    w_.select[f] = std::clamp(w_.select[f] + step * select_grad_[f], -kMaxWeight, kMaxWeight);
    select_grad_[f] = 0;
  }
  w_.proposals_trained += in_batch_;
  in_batch_ = 0;
  ++updates_;
  since_refresh_ = 1 << 30;  // the next proposal samples from the updated policy
}

}  // namespace placerl::search
