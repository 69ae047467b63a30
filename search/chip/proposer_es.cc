#include "search/chip/proposer_es.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "datasets/util/errors.h"

namespace placerl::search {

namespace {
constexpr int K = ProposerWeights::kKinds;
constexpr int F = ProposerWeights::kFeatures;
constexpr double kMaxWeight = 30;  // as learned_proposer.cc: logits stay finite

// The searched parameters as pointers into a ProposerWeights (kinds × features, then select, then
// schedule), each with its bound.
struct Parameter {
  double* value;
  double bound;
};
std::vector<Parameter> Parameters(ProposerWeights* w, const ProposerEsOptions& o) {
  std::vector<Parameter> p;
  for (int k = 0; k < K; ++k)
    for (int f : o.features) p.push_back({&w->w[k * F + f], kMaxWeight});
  if (o.select)
    for (double& v : w->select) p.push_back({&v, kMaxWeight});
  if (o.schedule)
    for (double& v : w->schedule) p.push_back({&v, ProposerWeights::kMaxSchedule});
  if (o.control)
    for (double& v : w->control) p.push_back({&v, ProposerWeights::kMaxControl});
  if (o.control && w->control_state_on) p.push_back({&w->control_state, ProposerWeights::kMaxControl});
  if (o.hard_select)
    for (double& v : w->hard_select) p.push_back({&v, kMaxWeight});
  if (o.target_select)
    for (double& v : w->target_select) p.push_back({&v, kMaxWeight});
  if (o.late_kinds)
    for (double& v : w->late_kinds) p.push_back({&v, kMaxWeight});
  if (o.length)
    for (double& v : w->length) p.push_back({&v, ProposerWeights::kMaxLength});
  return p;
}

void Check(int designs, const ProposerEsOptions& o) {
  if (designs < 1) throw ConfigError("proposer ES: no design to train on");
  if (o.iterations < 0 || o.iterations > 1000000) throw ConfigError("proposer ES: iterations must be in [0, 1e6]");
  if (o.pairs < 1 || o.pairs > 10000) throw ConfigError("proposer ES: pairs must be in [1, 10000]");
  if (!(o.sigma > 0) || !std::isfinite(o.sigma) || o.sigma > 10) throw ConfigError("proposer ES: sigma must be in (0, 10]");
  if (!(o.learning_rate >= 0) || !std::isfinite(o.learning_rate) || o.learning_rate > 10)
    throw ConfigError("proposer ES: the learning rate must be in [0, 10]");
  if (o.threads < 1 || o.threads > 256) throw ConfigError("proposer ES: threads must be in [1, 256]");
  if (o.control_state && !o.control)
    throw ConfigError("proposer ES: control_state searches the controller's state term: it needs control=true");
  if (o.features.empty() && !o.select && !o.schedule && !o.control && !o.hard_select && !o.target_select &&
      !o.late_kinds && !o.length)
    throw ConfigError(
        "proposer ES: no parameter to search (no feature, no select, no schedule, no control, no hard_select, no "
        "target_select, no late_kinds, no length)");
  std::vector<int> seen;
  for (int f : o.features) {
    if (f < 0 || f >= F)
      throw ConfigError("proposer ES: feature " + std::to_string(f) + " is not one of 0.." + std::to_string(F - 1));
    if (std::find(seen.begin(), seen.end(), f) != seen.end())
      throw ConfigError("proposer ES: feature " + std::to_string(f) + " is listed twice");
    seen.push_back(f);
  }
}

// Runs jobs [0, n) on `threads` threads; job(i, thread). Stops taking jobs when stop() is true.
template <typename Job>
void RunJobs(int n, int threads, const std::function<bool()>& stop, Job&& job) {
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;  // the first job's exception, rethrown on the calling thread
  auto worker = [&](int thread) {
    for (int i; !failed && (i = next.fetch_add(1)) < n;) {
      if (stop && stop()) return;
      try {
        job(i, thread);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(threads, n); ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}
}  // namespace

namespace {
constexpr const char* kStateFormat = "placerl-proposer-es-state";

nlohmann::json NumbersJson(const std::vector<double>& x) {  // NaN (a design not run) as null
  nlohmann::json j = nlohmann::json::array();
  for (double v : x) j.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
  return j;
}

std::vector<double> NumbersFrom(const nlohmann::json& j, const std::string& field, bool nan_allowed) {
  if (!j.is_array()) throw ConfigError(field + " is not a list");
  std::vector<double> x;
  for (const auto& v : j) {
    if (v.is_null() && nan_allowed) {
      x.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    if (!v.is_number() || !std::isfinite(v.get<double>())) throw ConfigError(field + " holds a value that is not a finite number");
    x.push_back(v.get<double>());
  }
  return x;
}
}  // namespace

std::string ProposerEsStateJson(const ProposerEsState& s) {
  nlohmann::json j;
  j["format"] = kStateFormat;
  j["version"] = 1;
  j["scaled"] = s.scaled;
  j["iterations"] = s.iterations;
  j["weights"] = nlohmann::json::parse(ProposerWeightsJson(s.weights));
  j["m"] = NumbersJson(s.m);
  j["v"] = NumbersJson(s.v);
  j["rng"] = s.rng;
  j["scale"] = NumbersJson(s.scale);
  j["runs"] = s.runs;
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& it : s.history)
    hist.push_back({{"iteration", it.iteration}, {"seconds", it.seconds}, {"mean_cost", it.mean_cost},
                    {"mean_relative", it.mean_relative}, {"gradient_norm", it.gradient_norm},
                    {"design_cost", NumbersJson(it.design_cost)}});
  j["history"] = hist;
  j["seconds"] = s.seconds;
  j["start"] = nlohmann::json::parse(ProposerWeightsJson(s.start));
  return j.dump() + "\n";
}

ProposerEsState ParseProposerEsState(const std::string& text, const std::string& label) {
  ProposerEsState s;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", "") != kStateFormat)
      throw ConfigError(std::string("not a train-proposer state (no \"format\": \"") + kStateFormat + "\")");
    if (j.at("version") != 1) throw ConfigError("version " + j.at("version").dump() + " is not 1");
    s.scaled = j.at("scaled").get<bool>();
    s.iterations = j.at("iterations").get<int>();
    if (s.iterations < 0 || (!s.scaled && s.iterations > 0)) throw ConfigError("iterations out of range");
    s.weights = ParseProposerWeights(j.at("weights").dump(), label + " (its weights)");
    s.m = NumbersFrom(j.at("m"), "m", false);
    s.v = NumbersFrom(j.at("v"), "v", false);
    if (s.m.size() != s.v.size()) throw ConfigError("m and v differ in length");
    for (double x : s.v)
      if (x < 0) throw ConfigError("v holds a negative value");
    s.rng = j.at("rng").get<std::string>();
    s.scale = NumbersFrom(j.at("scale"), "scale", false);
    for (double x : s.scale)
      if (!(x > 0)) throw ConfigError("scale holds a value that is not > 0");
    s.runs = j.at("runs").get<int64_t>();
    if (s.runs < 0) throw ConfigError("runs is negative");
    for (const auto& h : j.at("history")) {
      ProposerEsIteration it;
      it.iteration = h.at("iteration").get<int>();
      it.seconds = h.at("seconds").get<double>();
      it.mean_cost = h.at("mean_cost").get<double>();
      it.mean_relative = h.at("mean_relative").get<double>();
      it.gradient_norm = h.at("gradient_norm").get<double>();
      it.design_cost = NumbersFrom(h.at("design_cost"), "design_cost", true);
      if (it.iteration != static_cast<int>(s.history.size()) + 1)
        throw ConfigError("history is not iterations 1, 2, … in order");
      s.history.push_back(it);
    }
    if (static_cast<int>(s.history.size()) != s.iterations) throw ConfigError("history does not hold every iteration");
    s.seconds = j.at("seconds").get<double>();
    if (!std::isfinite(s.seconds) || s.seconds < 0) throw ConfigError("seconds is not a finite number >= 0");
    s.start = ParseProposerWeights(j.at("start").dump(), label + " (its start)");
  } catch (const ConfigError& e) {
    throw ConfigError(label + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(label + ": damaged train-proposer state (" + e.what() + ")");
  }
  return s;
}

int ProposerEsDimensions(const ProposerEsOptions& o) {
  return K * static_cast<int>(o.features.size()) + (o.select ? ProposerWeights::kSelectFeatures : 0) +
         (o.schedule ? ProposerWeights::kScheduleWeights : 0) + (o.control ? ProposerWeights::kControlWeights : 0) +
         (o.control && o.control_state ? 1 : 0) + (o.hard_select ? ProposerWeights::kHardSelectFeatures : 0) +
         (o.target_select ? ProposerWeights::kTargetSelectFeatures : 0) + (o.late_kinds ? ProposerWeights::kKinds : 0) +
         (o.length ? ProposerWeights::kLengthWeights : 0);
}

ProposerEsResult TrainProposerEs(int designs, const ProposerRunFn& run, const ProposerWeights& start,
                                 const ProposerEsOptions& o, const std::function<bool()>& stop,
                                 const std::function<void(const ProposerEsIteration&, const ProposerWeights&)>& on_iteration,
                                 const std::function<double()>& clock, const ProposerEsCheckpoints& checkpoints) {
  Check(designs, o);
  ProposerEsState local;
  ProposerEsState& st = checkpoints.state ? *checkpoints.state : local;
  const bool resumed = st.scaled;
  const ProposerWeights start_of_search = resumed ? st.start : start;
  ProposerEsResult r;
  r.weights = resumed ? st.weights : start;
  if (o.control && !r.weights.control_on) {  // searching a controller the start does not have
    r.weights.control = kDefaultControl;
    r.weights.control_handover = kDefaultHandover;
    r.weights.control_on = true;
  }
  if (o.hard_select && !r.weights.hard_select_on) {  // searching a hard selection the start does not have
    r.weights.hard_select = {};
    r.weights.hard_select_on = true;
  }
  if (o.target_select && !r.weights.target_select_on) {  // searching a target selection the start does not have
    r.weights.target_select = {};
    r.weights.target_select_on = true;
  }
  if (o.late_kinds && !r.weights.late_kinds_on) {  // searching a late adjustment the start does not have
    r.weights.late_kinds = {};
    r.weights.late_kinds_on = true;
  }
  if (o.length && !r.weights.length_on) {  // searching a run-length term the start does not have
    r.weights.length = {};
    r.weights.length_on = true;
  }
  if (o.control_state && !r.weights.control_state_on) {  // searching a state term the start does not have
    r.weights.control_state = 0;
    r.weights.control_state_on = true;
  }
  // (ProposerEsDimensions(o), + 1 for the controller's state term when the start has one)
  const int dims = static_cast<int>(Parameters(&r.weights, o).size());
  auto checked = [&](double cost, int design) {
    if (!std::isfinite(cost) || !(cost > 0))
      throw ConfigError("proposer ES: a run on design " + std::to_string(design) + " returned a cost that is not a finite "
                        "number > 0");
    return cost;
  };
  std::vector<double> m(dims, 0.0), v(dims, 0.0);
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ULL + 12345);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto snapshot = [&](int iterations) {
    st.scaled = true;
    st.iterations = iterations;
    st.weights = r.weights;
    st.m = m;
    st.v = v;
    std::ostringstream out;
    out << rng << ' ' << normal;
    st.rng = out.str();
    st.scale = r.scale;
    st.runs = r.runs;
    st.history = r.history;
    st.seconds = clock ? clock() : 0;
    st.start = start_of_search;
  };
  auto checkpoint = [&](int iterations) {  // the state kept, and handed over, only when asked for
    if (checkpoints.state || checkpoints.on_checkpoint) snapshot(iterations);
    if (checkpoints.on_checkpoint) checkpoints.on_checkpoint(st);
  };
  int first = 0;
  if (resumed) {
    auto misfit = [](const std::string& what) {
      throw ConfigError("proposer ES: the state to continue from does not fit this search: " + what);
    };
    if (static_cast<int>(st.scale.size()) != designs)
      misfit(std::to_string(st.scale.size()) + " designs, not " + std::to_string(designs));
    if (static_cast<int>(st.m.size()) != dims || static_cast<int>(st.v.size()) != dims)
      misfit(std::to_string(st.m.size()) + " searched parameters, not " + std::to_string(dims));
    if (st.iterations > o.iterations)
      misfit(std::to_string(st.iterations) + " iterations done, more than the " + std::to_string(o.iterations) + " asked for");
    std::istringstream in(st.rng);
    if (!(in >> rng >> normal)) misfit("its random state is damaged");
    m = st.m;
    v = st.v;
    r.scale = st.scale;
    r.runs = st.runs;
    r.history = st.history;
    first = st.iterations;
  } else {
    // The designs' scales: the start's final cost with the first seed (the start with its default
    // controller when the search adds one).
    r.scale.assign(designs, std::numeric_limits<double>::quiet_NaN());
    RunJobs(designs, o.threads, stop, [&](int d, int thread) { r.scale[d] = checked(run(r.weights, d, o.seed, thread), d); });
    r.runs += designs;
    for (double s : r.scale)
      if (std::isnan(s)) {
        r.stopped = true;
        return r;
      }
    checkpoint(0);
  }

  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  for (int t = first; t < o.iterations; ++t) {
    std::vector<std::vector<double>> noise(o.pairs, std::vector<double>(dims));
    for (auto& e : noise)
      for (double& x : e) x = normal(rng);
    // Job 2i: θ + σε_i, job 2i+1: θ − σε_i, the same design and seed.
    std::vector<double> cost(2 * o.pairs, std::numeric_limits<double>::quiet_NaN());
    auto design_of = [&](int pair) { return static_cast<int>((static_cast<int64_t>(t) * o.pairs + pair) % designs); };
    RunJobs(2 * o.pairs, o.threads, stop, [&](int job, int thread) {
      const int pair = job / 2;
      const double sign = job % 2 == 0 ? 1.0 : -1.0;
      ProposerWeights w = r.weights;
      std::vector<Parameter> p = Parameters(&w, o);
      for (int j = 0; j < dims; ++j)
        *p[j].value = std::clamp(*p[j].value + sign * o.sigma * noise[pair][j], -p[j].bound, p[j].bound);
      const uint64_t seed = o.seed + 1 + static_cast<uint64_t>(t) * o.pairs + pair;
      cost[job] = checked(run(w, design_of(pair), seed, thread), design_of(pair));
    });
    if (std::any_of(cost.begin(), cost.end(), [](double c) { return std::isnan(c); })) {
      r.stopped = true;
      break;
    }
    r.runs += 2 * o.pairs;
    ProposerEsIteration it;
    it.iteration = t + 1;
    it.design_cost.assign(designs, 0.0);
    std::vector<int> count(designs, 0);
    std::vector<double> g(dims, 0.0);
    for (int i = 0; i < o.pairs; ++i) {
      const int d = design_of(i);
      const double plus = cost[2 * i] / r.scale[d], minus = cost[2 * i + 1] / r.scale[d];
      for (int j = 0; j < dims; ++j) g[j] += (plus - minus) / (2 * o.sigma) * noise[i][j] / o.pairs;
      it.mean_cost += (cost[2 * i] + cost[2 * i + 1]) / (2.0 * o.pairs);
      it.mean_relative += (plus + minus) / (2.0 * o.pairs);
      it.design_cost[d] += cost[2 * i] + cost[2 * i + 1];
      count[d] += 2;
    }
    for (int d = 0; d < designs; ++d)
      it.design_cost[d] = count[d] ? it.design_cost[d] / count[d] : std::numeric_limits<double>::quiet_NaN();
    double norm = 0;
    for (double x : g) norm += x * x;
    it.gradient_norm = std::sqrt(norm);
    // Adam, descending the relative cost.
    std::vector<Parameter> p = Parameters(&r.weights, o);
    for (int j = 0; j < dims; ++j) {
      m[j] = b1 * m[j] + (1 - b1) * g[j];
      v[j] = b2 * v[j] + (1 - b2) * g[j] * g[j];
      const double mh = m[j] / (1 - std::pow(b1, t + 1)), vh = v[j] / (1 - std::pow(b2, t + 1));
      *p[j].value = std::clamp(*p[j].value - o.learning_rate * mh / (std::sqrt(vh) + eps), -p[j].bound, p[j].bound);
    }
    it.seconds = clock ? clock() : 0;
    r.history.push_back(it);
    if (on_iteration) on_iteration(it, r.weights);
    checkpoint(t + 1);
  }
  return r;
}

}  // namespace placerl::search
