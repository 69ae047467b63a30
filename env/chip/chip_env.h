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
//
// mode=refine (the regulator, MaskRegulate-style learned coordinate descent; docs/chip_regulator.md):
// an episode starts from a COMPLETE placement (start=greedy: the greedy pass's hard macros with the
// soft macros by CT's full FD schedule; start=input: the .plc's, hard macros snapped to the nearest
// free legal cell centres; computed once per environment, shared by its copies), and each step
// moves the next hard macro of the order (cyclically, from (seed · steps) mod #macros) to a grid
// cell: its current cell = stay; mask = the cells where it is legal with every OTHER hard macro
// where it stands. Soft macros never move. Reward = reward_scale · (cost before − cost after),
// the exact incremental proxy cost, so an episode's return is reward_scale · (start − end). The
// info after each step is the cost of the placement as it stands (exact: no FD at the end).
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
// constructive: one macro per step onto an empty canvas (CT). refine: the regulator (above).
enum class ChipMode : uint8_t { kConstructive, kRefine };
// refine: the complete placement the episodes start from.
enum class RefineStart : uint8_t { kGreedy, kInput };
enum class SoftMacroPlacement : uint8_t { kKeep, kForceDirected };
// The cost-change maps (cost_map=…): what placing the current macro on each cell would change.
enum class CostMap : uint8_t { kWirelength, kProxy, kSplit };
// "wirelength" | "proxy" | "split" → the map. Throws ConfigError naming `what`.
CostMap ParseCostMap(const std::string& s, const std::string& what = "chip: cost_map");
const char* CostMapName(CostMap m);

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
  // The fifth map. kWirelength: the one above (channel "wirelength_change"). kProxy (channel
  // "proxy_cost_change"): per legal cell a, the change of the weighted proxy cost if the current
  // macro m moved from where it stands now (unplaced: its input position) to a's centre,
  //   Δ(a) = w_wl·Δwirelength_cost + w_den·Δdensity_cost + w_cong·Δcongestion_blockage,
  // min-max scaled to [0, 1] over the LEGAL cells (0 = the cheapest legal cell; illegal cells
  // are 1; all legal cells equal → 0). See CostChangeByCell for what each term includes.
  // kSplit: SEVEN maps — the fifth is kWirelength's "wirelength_change" (bit-identical), then
  // "density_change" = Δdensity_cost and "congestion_change" = Δcongestion_blockage of
  // CostChangeByCell (unweighted), each min-max scaled on its own to [0, 1] over the legal cells
  // (illegal 1; all legal cells equal → 0).
  CostMap cost_map = CostMap::kWirelength;
  // --- mode=refine (the regulator; ignored by the constructive mode) ---
  ChipMode mode = ChipMode::kConstructive;
  RefineStart start = RefineStart::kGreedy;
  // episode_start=best: each reset starts from the best placement this copy has reached at any
  // step since it was built (its copies inherit it); otherwise (start) from the start placement.
  bool episode_start_best = false;
  // episode_result=best: the episode's last step returns to the best placement it visited (its
  // start included; the last reward counts that change), so an episode never ends worse than it
  // started; otherwise (last) it ends where its last move left it.
  bool episode_result_best = false;
  // Decisions per episode (0: one pass over the movable hard macros).
  int32_t steps = 0;
  // Rewards are reward_scale · (cost before − cost after) (> 0, finite).
  double reward_scale = 1.0;
  // episode_end_fd: after the last step (and episode_result=best's return), the soft macros are
  // re-placed by force-directed placement from where they stand (CT's schedule,
  // use_current_loc — as coordinate descent does after each epoch), kept only if the cost does
  // not rise; the last reward counts the change. The only time soft macros move.
  bool episode_end_fd = false;
};
const char* ChipModeName(ChipMode m);  // "constructive" | "refine"
const char* RefineStartName(RefineStart s);  // "greedy" | "input"
// "greedy" | "input" → the start. Throws ConfigError naming `what`.
RefineStart ParseRefineStart(const std::string& s, const std::string& what = "chip: start");
// "best" → true, `other` → false (episode_start: start|best, episode_result: last|best);
// anything else: ConfigError naming `what`.
bool ParseStartOrBest(const std::string& s, const std::string& other, const std::string& what);

// Each hard macro of `order` (movable ones) onto the free legal cell centre nearest its centre in
// `pc` (Euclidean; first come first served, in `order`), fixed hard macros blocking where they
// stand; orientations kept. Returns false (and leaves `pc` partly moved) if a macro finds no cell;
// then *which = that macro.
bool SnapHardMacrosToLegalCells(const chip::Netlist& nl, const chip::PlacementSettings& s,
                                const std::vector<int32_t>& order, chip::ProxyCost* pc, int32_t* which = nullptr);

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
  int32_t episode_length() const override {
    return refine() ? refine_steps_ : static_cast<int32_t>(order_.size());
  }
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
  // Netlist node of the macro to place (refine: to move) next (-1 when done).
  int32_t current_macro() const { return done_ ? -1 : order_[OrderIndex()]; }
  bool refine() const { return opt_.mode == ChipMode::kRefine; }
  // refine: the start placement (costed; shared by the copies) and the best cost this copy has
  // reached (episode_start=best starts from it).
  const chip::ProxyCost& start_placement() const { return *start_; }
  double start_cost() const { return start_cost_; }
  double best_reached_cost() const { return best_cost_; }
  // Graph node of netlist macro m (macros come first in the graph, in netlist order).
  int32_t graph_node_of_macro(int32_t m) const { return graph_node_[m]; }
  const chip::ProxyCost& cost() const { return *cost_; }
  chip::CostBreakdown CurrentCost() { return cost_->Cost(); }
  // Cell centre of an action.
  void ActionCentre(int32_t action, double* x, double* y) const;
  // The proxy cost if the current macro were placed on `action`'s cell now (state unchanged;
  // legality not checked). Greedy placers call it for every legal cell.
  chip::CostBreakdown PeekCost(int32_t action);
  // The un-normalised terms of the proxy cost map for the current macro m (any cost_map; empty
  // vectors when the episode is over), per cell (cols·rows; 0 on illegal cells):
  //   wirelength: Δ wirelength_cost, EXACT (m's nets' weighted HPWL with m at each column /
  //     row centre, decomposed per column and row, minus now, ÷ ((W+H)·Σw));
  //   density: Δ density_cost, EXACT (m's occupied area leaves its current cells and is added
  //     at a's footprint — ProxyCost::FootprintAt, fractional overlaps —; the new top-10 %
  //     mean from the sorted top k of the values without m: the footprint cells only increase);
  //   congestion: Δ congestion_cost from m's MACRO ROUTING BLOCKAGE only (v/h_macro_alloc over
  //     the footprint, partial row/column rule, leaving its current cells; the exact top-5 %
  //     mean over V ++ H with every other value as it is now). NOT included: the re-routing of
  //     m's nets (their demand moves with m's pins, and its smoothing); exact when m has no nets.
  // The wirelength and density terms equal PeekCost(a)'s minus CurrentCost()'s breakdown.
  void CostChangeByCell(std::vector<double>* wirelength, std::vector<double>* density,
                        std::vector<double>* congestion);
  // The grid cell (action) whose centre is nearest the centre of macro m as it stands now.
  int32_t CellOf(int32_t m) const;
  // The force-directed options of an episode end (CT's schedule scaled by fd_steps_scale).
  chip::ForceDirectedOptions EpisodeEndFdOptions() const;
  // True when episode ends place the soft macros as CT's full schedule does (fd_steps_scale 1,
  // soft=keep, or no soft macros) or place none (mode=refine: the cost is exact as it stands):
  // the final cost then is FullScheduleCost's.
  bool episode_end_is_full_schedule() const;
  // Places the soft macros of `pc` (a copy of cost(), or any placement of this design) as CT's
  // episode end does — the full FD schedule whatever fd_steps_scale says; soft=keep: where they
  // stand — and returns its cost. The environment is unchanged (it owns the placer's scratch:
  // not thread-safe on one environment, like Step).
  chip::CostBreakdown FullScheduleCost(chip::ProxyCost* pc) const;

 private:
  void BuildStaticGraph();
  // Index into order_ of the current macro.
  size_t OrderIndex() const {
    return refine() ? (refine_first_ + static_cast<size_t>(state_.step)) % order_.size()
                    : static_cast<size_t>(state_.step);
  }
  // --- mode=refine (chip_refine.cc) ---
  void BuildRefineStart();
  void ResetRefine(uint64_t seed);
  StepResult StepRefine(int32_t action);
  // Mask, occupancy (hard macros but the current one), node features and current-cell channel
  // from the placement cost_ holds, for the current macro (the mask, grid and occupancy from
  // scratch: after a reset or a return to the episode's best).
  void RebuildRefineState();
  void PrepareRefineMacro();           // the current macro's mask and occupancy (after a move)
  void RecordBest(double cost, std::vector<double>* xy, double* best);
  void MoveHardMacro(int32_t m, double x, double y);
  void RestoreTracked(const std::vector<double>& xy);  // tracked_ macros to xy (only those that differ)
  void EpisodeEndFd();                                 // episode_end_fd (keeps it only if not worse)
  std::vector<double> soft_xy_;                        // scratch of EpisodeEndFd
  void RefreshMask();
  void SetClusterFeatures();  // the port clusters' node features (they never move)
  void Finish(StepResult* r);
  void SetInfo(const chip::CostBreakdown& c);
  // The episode-start lines both modes share: step 0, not done, return 0, the cost of the
  // placement now in cost_ as last cost and info (info[5] = `placed`, info[6] = 0); returns it.
  chip::CostBreakdown BeginEpisode(double placed);
  void PlaceSoftMacros();
  void FillMaps();
  void AddOccupancy(int32_t macro, double x, double y, double sign = 1.0);
  // HPWL (weighted, microns) of the current macro's nets with it at each column / row centre
  // (into wl_col_ / wl_row_; returns their weighted HPWL with the macro where it stands now).
  double WirelengthByColumnAndRow(int32_t macro);
  // wl_col_ + wl_row_ min-max scaled over the grid (the wirelength map).
  void WirelengthByCell(int32_t macro, float* out);
  // wl_col_ + wl_row_ (as WirelengthByColumnAndRow left them) min-max scaled over the grid.
  void ScaleWirelength(float* out) const;
  // The three maps of cost_map=split (out: 3 · cols · rows).
  void SplitCostByCell(float* out);
  // The proxy cost map (cost_map=proxy).
  void ProxyCostByCell(float* out);
  // Mean of the k largest of `val` (n values) for every candidate footprint: ComputeTop once
  // (the k + extra largest, sorted), then MeanWithIncreases per candidate (increases ≥ 0, at
  // most `extra` elements; false when the sorted list is too short: compute from scratch).
  struct TopK {
    std::vector<double> val;             // per element, with the current macro removed
    std::vector<int32_t> order;          // scratch: element indices
    std::vector<double> top;             // the k + extra largest values, descending
    std::vector<int32_t> top_elem;       // their elements
    std::vector<int32_t> rank;           // per element: position in top, or -1
    std::vector<int64_t> stamp;          // per element: the candidate that increases it
    std::vector<double> entering;        // scratch: the new values of the increased elements
    double top_sum = 0;                  // of the k largest
    size_t k = 0;
    int64_t cur_stamp = 0;
    void ComputeTop(size_t k, size_t extra);
    // increases: (element, amount) pairs, one per element.
    bool MeanWithIncreases(const std::pair<int32_t, double>* inc, size_t n, double* mean);
  };

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
  // Scratch of CostChangeByCell.
  TopK den_topk_, cong_topk_;
  std::vector<chip::ProxyCost::FootprintCell> footprint_;
  std::vector<std::pair<int32_t, double>> inc_;
  std::vector<double> dwl_, dden_, dcong_;
  // mode=refine.
  std::shared_ptr<const chip::ProxyCost> start_;  // the start placement, costed (shared)
  double start_cost_ = 0;
  int32_t refine_steps_ = 0;
  size_t refine_first_ = 0;                 // order_ index of the episode's first macro
  std::vector<int32_t> tracked_;            // the macros a refine episode may move (hard; soft with episode_end_fd)
  std::vector<double> best_xy_;             // best reached by this copy: (x, y) per tracked_ macro
  double best_cost_ = 0;
  std::vector<double> ep_best_xy_;          // the best this episode visited
  double ep_best_cost_ = 0;
  int32_t occupancy_excluded_ = -1;         // the macro left out of occupancy_ (the current one)
  size_t current_cell_channel_ = 0;         // offset of the current_cell map (0: none)
};

}  // namespace placerl::env
