#include "experiments/lib/nas/nas_search_state.h"

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
#include "experiments/lib/nas/nas_search_config.h"

namespace placerl::nas_search {
namespace {

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

}  // namespace

// The state's text: RunStateJson with the population written in place of its mark.
std::string RunStateText(const RunState& s, const config::NasSearchConfig& c, bool learner_meta) {
  std::string text = RunStateJson(s, c, learner_meta).dump();
  const size_t mark = text.find(std::string("\"") + kPopulationMark + "\"");
  if (mark != std::string::npos) text.replace(mark, std::strlen(kPopulationMark) + 2, PopulationText(s.current.population));
  return text;
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

}  // namespace placerl::nas_search
