#include "env/trained_settings.h"

#include "datasets/util/config_text.h"
#include "datasets/util/warnings.h"

namespace placerl::run {

nlohmann::json ReportTrainedSettingChanges(const google::protobuf::Message& trained, const google::protobuf::Message& used,
                                           const std::vector<std::string>& skip, const std::string& checkpoint,
                                           const std::string& prefix) {
  nlohmann::json changed = nlohmann::json::object();
  for (const ConfigDifference& d : ConfigDifferences(trained, used, skip)) {
    Warn(kTrainedSettingChanged, "using " + prefix + d.path + " " + d.after + " as asked; " + checkpoint +
                                     " was trained with " + d.before);
    changed[prefix + d.path] = {{"trained", d.before}, {"used", d.after}};
  }
  return changed;
}

}  // namespace placerl::run
