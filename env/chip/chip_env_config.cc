#include "env/chip/chip_env_config.h"

#include <cmath>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/design.h"
#include "datasets/util/errors.h"

namespace placerl {

config::ChipEnvConfig DefaultChipEnvConfig() {
  config::ChipEnvConfig c;
  c.set_synthetic_seed(1);
  c.set_wirelength_weight(1.0);
  c.set_density_weight(0.5);     // Google-internal and all published comparisons
  c.set_congestion_weight(0.5);
  c.set_reward("sparse");        // CT
  c.set_soft("fd");              // CT's force-directed schedule
  c.set_infeasible_reward(-4.0); // CT HEAD
  c.set_off_canvas_nets("clamp"); // TILOS's rule; "skip" = Google's (docs/proxy_cost.md)
  c.set_fd_steps_scale(1.0);      // CT's 3 × 100 FD steps at every episode end
  c.set_cost_map("wirelength");   // the fifth map: MaskPlace's wiremask (proxy: the full proxy-cost change; split: + density and congestion changes)
  return c;
}

void CheckNonNegativeSetting(double v, const std::string& name) {
  if (!std::isfinite(v) || v < 0) throw ConfigError(name + " must be a finite number >= 0 (got " + std::to_string(v) + ")");
}

void CheckChipEnvConfig(const config::ChipEnvConfig& c) {
  CheckNonNegativeSetting(c.wirelength_weight(), "chip.wirelength_weight");
  CheckNonNegativeSetting(c.density_weight(), "chip.density_weight");
  CheckNonNegativeSetting(c.congestion_weight(), "chip.congestion_weight");
  if (c.reward() != "sparse" && c.reward() != "dense")
    throw ConfigError("chip.reward must be sparse or dense (got '" + c.reward() + "')");
  if (c.soft() != "fd" && c.soft() != "keep") throw ConfigError("chip.soft must be fd or keep (got '" + c.soft() + "')");
  if (!std::isfinite(c.infeasible_reward())) throw ConfigError("chip.infeasible_reward must be finite");
  if (!c.off_canvas_nets().empty() && c.off_canvas_nets() != "clamp" && c.off_canvas_nets() != "skip")
    throw ConfigError("chip.off_canvas_nets must be clamp or skip (got '" + c.off_canvas_nets() + "')");
  if (!(c.fd_steps_scale() >= 0.01 && c.fd_steps_scale() <= 1))
    throw ConfigError("chip.fd_steps_scale must be in [0.01, 1] (got " + std::to_string(c.fd_steps_scale()) + ")");
  if (!c.cost_map().empty()) env::ParseCostMap(c.cost_map(), "chip.cost_map");
  const bool refine = c.mode() == "refine";
  if (!c.mode().empty() && !refine && c.mode() != "constructive")
    throw ConfigError("chip.mode must be constructive or refine (got '" + c.mode() + "')");
  if (!c.start().empty()) env::ParseRefineStart(c.start(), "chip.start");
  if (!c.episode_start().empty()) env::ParseStartOrBest(c.episode_start(), "start", "chip.episode_start");
  if (!c.episode_result().empty()) env::ParseStartOrBest(c.episode_result(), "last", "chip.episode_result");
  if (c.steps() < 0 || c.steps() > 1000000)
    throw ConfigError("chip.steps must be in [0, 1e6] (0 = one pass over the hard macros; got " + std::to_string(c.steps()) + ")");
  if (!std::isfinite(c.reward_scale()) || c.reward_scale() < 0)
    throw ConfigError("chip.reward_scale must be a finite number > 0 (0 = 1; got " + std::to_string(c.reward_scale()) + ")");
  if (!refine && (!c.start().empty() || !c.episode_start().empty() || !c.episode_result().empty() || c.steps() != 0 ||
                  c.reward_scale() != 0 || c.episode_end_fd()))
    throw ConfigError(
        "chip.start, chip.episode_start, chip.episode_result, chip.steps, chip.reward_scale and chip.episode_end_fd need "
        "chip.mode=refine");
}

std::unique_ptr<env::ChipEnv> MakeChipEnv(const config::ChipEnvConfig& c, bool maps) {
  CheckChipEnvConfig(c);
  auto inst = std::make_shared<env::ChipInstance>();
  inst->netlist_path = c.netlist();
  inst->plc_path = c.plc();
  inst->synthetic_seed = c.synthetic_seed();
  inst->design = chip::LoadChipDesign(c.netlist(), c.plc(), c.synthetic_seed());
  env::ChipEnvOptions o;
  o.weights.wirelength = c.wirelength_weight();
  o.weights.density = c.density_weight();
  o.weights.congestion = c.congestion_weight();
  if (!c.off_canvas_nets().empty()) o.weights.off_canvas_nets = chip::ParseOffCanvasNets(c.off_canvas_nets(), "chip.off_canvas_nets");
  o.reward = c.reward() == "dense" ? env::ChipReward::kDense : env::ChipReward::kSparse;
  o.soft = c.soft() == "keep" ? env::SoftMacroPlacement::kKeep : env::SoftMacroPlacement::kForceDirected;
  o.infeasible_reward = c.infeasible_reward();
  o.fd_steps_scale = c.fd_steps_scale();
  o.maps = maps;
  if (!c.cost_map().empty()) o.cost_map = env::ParseCostMap(c.cost_map(), "chip.cost_map");
  if (c.mode() == "refine") {
    o.mode = env::ChipMode::kRefine;
    if (!c.start().empty()) o.start = env::ParseRefineStart(c.start(), "chip.start");
    o.episode_start_best = c.episode_start() == "best";
    o.episode_result_best = c.episode_result() == "best";
    o.steps = c.steps();
    if (c.reward_scale() > 0) o.reward_scale = c.reward_scale();
    o.episode_end_fd = c.episode_end_fd();
  }
  return std::make_unique<env::ChipEnv>(inst, o);
}

}  // namespace placerl
