// The progress of a place-train run that its checkpoint carries besides the learner (weights,
// optimiser, rank 0's sampling RNG): checkpoints/state.json. One format and one reader for the
// chip and the device paths, so that `place-train --resume DIR` continues either the same way:
// update / episode / step counters, the training time so far, the best value per design or
// graph (JSON null: none yet), the sampling RNG of every rank but 0, and whatever a path adds
// (the device path: its best placements). Torch-free header.
#pragma once

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agents/checkpoint_extras.h"
#include "agents/trainer.h"
#include "env/trained_settings.h"
#include "experiments/lib/run_dir.h"

namespace placerl::run {

// The trainer's counters (agents::TrainingProgress: iteration, episodes, steps, elapsed_s — the
// training time over every start of the run) and the best value per design / graph.
struct TrainingProgress : agents::TrainingProgress {
  std::vector<double> best;  // per design / graph; +inf = none yet (null in the file)
};

// state.json's object: `best_key` names the per-task bests ("best_cost" chip, "best_time"
// device); `rank_rngs` (rank 0's first, it is not written) as place-train --workers gathers them.
nlohmann::json TrainingProgressJson(const TrainingProgress& p, const std::string& best_key,
                                    const std::vector<std::string>& rank_rngs = {});

// Reads state.json's object back: `tasks` best values (+inf where absent or null). Throws
// ConfigError naming `label` when a counter is missing or of the wrong type.
TrainingProgress ParseTrainingProgress(const nlohmann::json& state, const std::string& best_key, size_t tasks,
                                       const std::string& label);

// place-train saves state.json's object also inside latest.ckpt, as the learner extra of this
// name (agents::Learner::Extras), in the same atomic write as the weights: a resume reads that
// copy, so a kill between writing the checkpoint and state.json cannot pair the weights of one
// update with the counters of another. state.json stays beside it for people (and for
// checkpoints written before the extra existed, which resume from it).
inline constexpr const char* kRunStateExtra = "run_state";
// … and the run's resolved config (config.pbtxt's text, without its header) as this extra, so
// that a checkpoint carries the environment settings it was trained with: `place` builds its
// environment from them (a checkpoint file travels without its run directory).
inline constexpr const char* kRunConfigExtra = agents::kRunConfigExtra;

// `place` on a checkpoint: kTrainedSettingChanged and ReportTrainedSettingChanges are
// env/trained_settings.h (shared with the Python module).

// What a resumed run starts from: checkpoints/latest.ckpt (bytes) and checkpoints/state.json
// (parsed; null when the file is absent). Throws ConfigError when the checkpoint is missing or
// state.json is not JSON.
struct ResumePoint {
  std::string checkpoint_bytes;
  nlohmann::json state;
};
ResumePoint ReadResumePoint(RunDirectory& dir);

// After the learner loaded the checkpoint with `extras`: the embedded state when there is one,
// else state.json's (`file_state`); ConfigError naming `checkpoint` (the file's path) when
// neither exists or the embedded copy is not JSON.
nlohmann::json ResumeState(const std::map<std::string, std::string>& extras, const nlohmann::json& file_state,
                           const std::string& checkpoint = "checkpoints/latest.ckpt");

}  // namespace placerl::run
