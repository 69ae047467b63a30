#include "env/chip/trained_env.h"

#include <filesystem>

#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "env/trained_settings.h"

namespace placerl {

TrainedChipEnv TrainedChipEnvOf(const std::string& checkpoint, const std::string* run_config,
                                const std::vector<std::string>& action_feature_names,
                                const config::ChipEnvConfig& base) {
  TrainedChipEnv t;
  t.chip = base;
  if (run_config != nullptr) {
    config::PlaceTrainConfig c;
    try {
      run::ParseConfigText(*run_config, checkpoint + " (its training config)", &c);
    } catch (const ParseError& e) {
      throw ConfigError(checkpoint + ": not a chip placement checkpoint, or a damaged one (" + e.what() + ")");
    }
    t.chip = c.chip();
    t.chip.set_netlist(base.netlist());
    t.chip.set_plc(base.plc());
    t.chip.set_synthetic_seed(base.synthetic_seed());
    if (t.chip.cost_map().empty()) t.chip.set_cost_map("wirelength");  // (the same map)
    t.maps = c.maps();
    t.recorded = true;
    if (c.netlists_size() == 0) t.designs.emplace_back(c.chip().netlist(), c.chip().plc());
    for (int i = 0; i < c.netlists_size(); ++i) t.designs.emplace_back(c.netlists(i), i < c.plcs_size() ? c.plcs(i) : "");
    return t;
  }
  // Written before checkpoints carried their config: the cost-change maps are part of the
  // policy's inputs, so its action features name chip.cost_map; the rest are the defaults.
  const std::vector<std::string>& a = action_feature_names;
  if (a.size() == 5 && a[4] == "proxy_cost_change")
    t.chip.set_cost_map("proxy");
  else if (a.size() == 5 && a[4] == "wirelength_change")
    t.chip.set_cost_map("wirelength");
  else if (a.size() == 7 && a[4] == "wirelength_change" && a[5] == "density_change")
    t.chip.set_cost_map("split");
  return t;
}

nlohmann::json ReconcileTrainedChipEnv(const TrainedChipEnv& trained, const std::string& checkpoint,
                                       config::ChipEnvConfig* used) {
  const std::string map = trained.chip.cost_map().empty() ? "wirelength" : trained.chip.cost_map();
  if (!used->cost_map().empty() && used->cost_map() != map)
    Warn(run::kTrainedSettingChanged, "chip.cost_map " + used->cost_map() + " ignored: the policy's inputs are the " + map +
                                          " maps of " + checkpoint);
  used->set_cost_map(map);
  if (!trained.recorded) return nlohmann::json::object();
  nlohmann::json changed =
      run::ReportTrainedSettingChanges(trained.chip, *used, {"netlist", "plc", "synthetic_seed"}, checkpoint, "chip.");
  // A training design placed with another canvas and grid (.plc) than it was trained with.
  auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return a == b || (!a.empty() && !b.empty() && std::filesystem::equivalent(a, b, ec));
  };
  for (const auto& [netlist, plc] : trained.designs) {
    if (netlist.empty() || !same_file(netlist, used->netlist()) || same_file(plc, used->plc())) continue;
    const std::string given = used->plc().empty() ? "no .plc (the default grid)" : used->plc();
    const std::string then = plc.empty() ? "no .plc (the default grid)" : plc;
    Warn(run::kTrainedSettingChanged, "placing " + used->netlist() + " with " + given + "; " + checkpoint +
                                          " was trained on it with " + then);
    changed["chip.plc"] = {{"trained", then}, {"used", given}};
    break;
  }
  return changed;
}

}  // namespace placerl
