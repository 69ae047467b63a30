#include "experiments/lib/torch/training_state.h"

#include <cmath>
#include <filesystem>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/json_number.h"

namespace placerl::run {

nlohmann::json TrainingProgressJson(const TrainingProgress& p, const std::string& best_key,
                                    const std::vector<std::string>& rank_rngs) {
  nlohmann::json best = nlohmann::json::array();
  for (double b : p.best) best.push_back(FiniteOrNull(b));
  nlohmann::json j = {{"iteration", p.iteration}, {"episodes", p.episodes}, {"steps", p.steps},
                      {"elapsed_s", p.elapsed_s}, {best_key, best}};
  if (rank_rngs.size() > 1) j["rank_rng"] = std::vector<std::string>(rank_rngs.begin() + 1, rank_rngs.end());
  return j;
}

TrainingProgress ParseTrainingProgress(const nlohmann::json& state, const std::string& best_key, size_t tasks,
                                       const std::string& label) {
  TrainingProgress p;
  p.best.assign(tasks, INFINITY);
  try {
    p.iteration = state.at("iteration").get<int64_t>();
    p.episodes = state.at("episodes").get<int64_t>();
    p.steps = state.at("steps").get<int64_t>();
    p.elapsed_s = state.at("elapsed_s").get<double>();
    const nlohmann::json& best = state.at(best_key);
    // Best values of the earlier starts are the bar to beat.
    for (size_t i = 0; i < tasks && i < best.size(); ++i)
      if (!best[i].is_null()) p.best[i] = best[i].get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(label + ": not a place-train state file (" + e.what() + ")");
  }
  if (p.iteration < 0 || p.episodes < 0 || p.steps < 0 || !(p.elapsed_s >= 0) || !std::isfinite(p.elapsed_s))
    throw ConfigError(label + ": negative or non-finite counters");
  return p;
}

ResumePoint ReadResumePoint(RunDirectory& dir) {
  const std::string ckpt = dir.CheckpointPath("latest.ckpt");
  if (!std::filesystem::exists(ckpt))
    throw ConfigError(dir.path() + ": no checkpoint to resume from (" + ckpt +
                      " is missing: the run stopped before its first checkpoint; start it again with --force)");
  const std::string state_path = dir.CheckpointPath("state.json");
  ResumePoint r;
  r.checkpoint_bytes = ReadFile(ckpt);
  if (!std::filesystem::exists(state_path)) return r;  // (the checkpoint may carry it: ResumeState)
  try {
    r.state = nlohmann::json::parse(ReadFile(state_path));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(state_path + ": not JSON (" + e.what() + ")");
  }
  return r;
}

nlohmann::json ResumeState(const std::map<std::string, std::string>& extras, const nlohmann::json& file_state,
                           const std::string& checkpoint) {
  const auto it = extras.find(kRunStateExtra);
  if (it == extras.end()) {
    if (file_state.is_null())
      throw ConfigError(checkpoint + ": carries no run state, and state.json beside it is missing");
    return file_state;
  }
  try {
    return nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(checkpoint + ": its run state is not JSON (" + e.what() + ")");
  }
}

}  // namespace placerl::run
