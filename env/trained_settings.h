// A trained policy's environment settings against the ones it is used with: `place` on a
// checkpoint (chip and device, and the Python module's Policy.make_env) builds its environment
// from the settings the policy was trained with (the training run's config that the checkpoint
// carries, agents/checkpoint_extras.h kRunConfigExtra) unless the user asks for others; each
// setting that differs is a warning naming both values.
#pragma once

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace placerl::run {

// The warning of a setting other than the trained one (docs/conventions.md).
inline constexpr const char* kTrainedSettingChanged = "CKPT-0001";
// Compares `used` with `trained` (one message type; `skip`: dotted paths not compared, such as
// the design; `prefix` goes before the paths printed, e.g. "chip."), warns once per difference
// ("using chip.density_weight 0.5 as asked; <checkpoint> was trained with 1") and returns them
// for result.json: {path: {"trained": …, "used": …}}.
nlohmann::json ReportTrainedSettingChanges(const google::protobuf::Message& trained,
                                           const google::protobuf::Message& used,
                                           const std::vector<std::string>& skip, const std::string& checkpoint,
                                           const std::string& prefix = "");

}  // namespace placerl::run
