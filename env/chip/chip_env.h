// chip(netlist=…,plc=…): Circuit Training's macro placement MDP on the exact incremental proxy
// cost (../shared/reference/chip_placement_notes.md §1.6–§1.7; docs/environments.md).
//
// Episode: the hard macros in descending area order (stable: ties keep netlist order), one per
// step, each onto a grid-cell centre; action = row·cols + col; mask = inside the canvas and no
// overlap with placed hard macros or blockages (GridMask). After the last hard macro the soft
// macros are placed (force-directed with CT's schedule — or a cheaper one, fd_steps_scale —, or
// kept where they are) and the episode ends. An empty mask ends the episode early with `infeasible_reward` (CT: −4).
// Rewards: `sparse` (CT): 0 per step, −proxy cost at the end. `dense`: the change of the exact
// incremental proxy cost at every step (unplaced hard macros stay where the input put them, soft
// macros where they stand), with −(initial cost) added to the first step, so that an episode's
// return is −(final cost) in both modes (and `infeasible_reward` for an infeasible one).
// Observation (CT §1.7): nodes = all macros (hard and soft, netlist order) then port clusters
// (ports of one grid cell merged, placed at that cell's boundary point); edge weight = number of
// driver→sink connections between two nodes (× the net's weight), divided by the mean weight.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/chip/fd_placer.h"
#include "cost_models/chip/grid_mask.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/design.h"
#include "env/environment.h"
#include "env/registry.h"

namespace placerl::env {

enum class ChipReward : uint8_t { kSparse, kDense };
enum class SoftMacroPlacement : uint8_t { kKeep, kForceDirected };

struct ChipEnvOptions {
  chip::CostWeights weights;                 // 1 / 0.5 / 0.5
  ChipReward reward = ChipReward::kSparse;
  SoftMacroPlacement soft = SoftMacroPlacement::kForceDirected;
  double infeasible_reward = -4.0;           // CT HEAD
  // soft=fd: the force-directed work of an episode end as a fraction of CT's 100 steps per phase:
  // each phase runs max(1, round(100 · scale)) steps (CT's step length is factor·max(W, H) /
  // num_steps, so fewer steps move farther). 1 = CT's schedule exactly; in [0.01, 1]. Training
  // rewards may come from a cheaper schedule; FullScheduleCost() re-scores a placement with CT's.
  double fd_steps_scale = 1.0;
  // Per-cell maps in DynamicState::action_features (for learned policies; baselines turn them
  // off): occupancy by placed hard macros, density, vertical and horizontal congestion (as the
  // proxy cost sees them now), and the current macro's wirelength change per cell (min-max
  // scaled to [0, 1] over the grid: MaskPlace's "wiremask", exact for our HPWL).
  bool maps = true;
};

// The loaded design, shared read-only by an environment and all its clones.
struct ChipInstance {
  chip::ChipDesign design;
  std::string netlist_path, plc_path;  // as given (for name())
  uint64_t synthetic_seed = 1;
};

class ChipEnv : public Environment {
 public:
  ChipEnv(std::shared_ptr<const ChipInstance> instance, const ChipEnvOptions& options);
  static std::unique_ptr<Environment> Make(EnvParams& p);

  std::string name() const override;
  env::ActionSpec action_spec() const override;
  int32_t episode_length() const override { return static_cast<int32_t>(order_.size()); }
  void Reset(uint64_t seed) override;
  StepResult Step(int32_t action) override;
  bool done() const override { return done_; }
  std::shared_ptr<const StaticGraph> static_graph() const override { return graph_; }
  const DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override;
  const std::vector<double>& info() const override { return info_; }
  std::unique_ptr<Environment> Clone() const override { return std::make_unique<ChipEnv>(*this); }

  // --- chip-specific access (baselines, renderers, writers) ---
  const chip::Netlist& netlist() const { return inst_->design.netlist; }
  const chip::PlacementSettings& settings() const { return inst_->design.settings; }
  const ChipInstance& instance() const { return *inst_; }
  const ChipEnvOptions& options() const { return opt_; }
  // Hard macros in placement order (node indices of the netlist).
  const std::vector<int32_t>& order() const { return order_; }
  // Netlist node of the macro to place next (-1 when done).
  int32_t current_macro() const { return done_ ? -1 : order_[state_.step]; }
  // Graph node of netlist macro m (macros come first in the graph, in netlist order).
  int32_t graph_node_of_macro(int32_t m) const { return graph_node_[m]; }
  const chip::ProxyCost& cost() const { return *cost_; }
  chip::CostBreakdown CurrentCost() { return cost_->Cost(); }
  // Cell centre of an action.
  void ActionCentre(int32_t action, double* x, double* y) const;
  // The proxy cost if the current macro were placed on `action`'s cell now (state unchanged;
  // legality not checked). Greedy placers call it for every legal cell.
  chip::CostBreakdown PeekCost(int32_t action);
  // The force-directed options of an episode end (CT's schedule scaled by fd_steps_scale).
  chip::ForceDirectedOptions EpisodeEndFdOptions() const;
  // True when episode ends place the soft macros as CT's full schedule does (fd_steps_scale 1,
  // soft=keep, or no soft macros): the final cost then is FullScheduleCost's.
  bool episode_end_is_full_schedule() const;
  // Places the soft macros of `pc` (a copy of cost(), or any placement of this design) as CT's
  // episode end does — the full FD schedule whatever fd_steps_scale says; soft=keep: where they
  // stand — and returns its cost. The environment is unchanged (it owns the placer's scratch:
  // not thread-safe on one environment, like Step).
  chip::CostBreakdown FullScheduleCost(chip::ProxyCost* pc) const;

 private:
  void BuildStaticGraph();
  void RefreshMask();
  void Finish(StepResult* r);
  void SetInfo(const chip::CostBreakdown& c);
  void PlaceSoftMacros();
  void FillMaps();
  void AddOccupancy(int32_t macro, double x, double y);
  // HPWL (weighted, microns) of the current macro's nets with it at each column / row centre.
  void WirelengthByCell(int32_t macro, float* out);

  std::shared_ptr<const ChipInstance> inst_;
  ChipEnvOptions opt_;
  std::shared_ptr<const StaticGraph> graph_;
  std::vector<int32_t> order_;       // hard macros, descending area
  std::vector<int32_t> graph_node_;  // netlist node → graph node (-1 for pins / std cells)
  std::vector<std::pair<double, double>> cluster_xy_;  // port-cluster positions
  std::shared_ptr<const chip::ProxyCost> pristine_;  // the input placement, costed once
  std::optional<chip::ProxyCost> cost_;
  std::optional<chip::GridMask> mask_;
  std::optional<chip::ForceDirectedPlacer> fd_;  // soft=fd (each copy owns its scratch)
  // CT's full schedule for FullScheduleCost when fd_ is cheaper (built on first use).
  mutable std::optional<chip::ForceDirectedPlacer> fd_full_;
  DynamicState state_;
  bool done_ = false;
  double last_cost_ = 0;  // dense reward: proxy cost after the previous step
  double return_ = 0;
  std::vector<double> info_;
  std::vector<double> occupancy_;            // per cell: area of placed hard macros
  std::vector<double> wl_col_, wl_row_;      // scratch of WirelengthByCell
};

}  // namespace placerl::env
