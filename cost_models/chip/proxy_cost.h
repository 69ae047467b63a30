// The Circuit Training proxy cost, exactly as Google's plc_wrapper_main and its open
// re-implementation (TILOS MacroPlacement plc_client_os.py, with grid-index clamping)
// define it — see ../shared/reference/chip_placement_notes.md §1.4 and docs/proxy_cost.md:
//   proxy = w_wl · HPWL/((W+H)·Σw_net) + w_den · 0.5·top10%(density) + w_cong · top5%(V ++ H)
// Full evaluation from scratch, and incremental updates when one node moves, flips or two
// macros swap: only the nets of the moved node are re-measured and re-routed and only the
// grid cells its rectangle covers are touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

// How congestion treats a net with a pin outside the canvas [0, W] × [0, H]:
//   kClamp — the pin counts in the nearest border cell and the net is routed (TILOS's
//            plc_client_os.py; the default, which the golden tests check);
//   kSkip  — the net is not routed at all (Google's plc_wrapper_main: docs/grouping.md shows
//            the published headers' congestion follows this rule). Its wirelength counts
//            either way. Moving a pin across the canvas boundary routes or unroutes its nets.
enum class OffCanvasNets { kClamp, kSkip };

// "clamp" | "skip" → the rule. Throws ConfigError naming `what`.
OffCanvasNets ParseOffCanvasNets(const std::string& s, const std::string& what = "--off-canvas-nets");
const char* OffCanvasNetsName(OffCanvasNets rule);

// The weights of the three terms, and the one rule in which the cost definitions of Google
// and TILOS differ (it travels with the weights to every place a cost is made).
struct CostWeights {
  double wirelength = 1.0;
  double density = 0.5;     // Google-internal and all published comparisons (CT HEAD code: 1.0)
  double congestion = 0.5;
  OffCanvasNets off_canvas_nets = OffCanvasNets::kClamp;
};

// "1,0.5,0.5" → weights (off-canvas rule: clamp); each a number in [0, 1e6]. Throws
// ConfigError naming `what`.
CostWeights ParseCostWeights(const std::string& s, const std::string& what = "--weights");

struct CostBreakdown {
  double hpwl = 0;             // Σ_net w·HPWL, microns
  double wirelength_cost = 0;  // hpwl / ((W+H)·Σ_net w)
  double density_cost = 0;
  double congestion_cost = 0;
  double proxy_cost = 0;       // weighted sum
};

// What one full evaluation costs for given settings, from the grid size and the smoothing
// range alone (the netlist adds little for grids beyond ~1000×1000): memory of the per-cell
// arrays and CPU time, both measured on the machine of docs/proxy_cost.md (2 vCPU, Release
// build). A guide for refusing or announcing slow runs, not a promise.
struct EvaluationEstimate {
  double bytes = 0;
  double seconds = 0;
  int smoothing_range = 0;  // the range used: floor(smoothing), capped by the grid
};

// Smoothing spreads a cell's demand over the cells within k of it along its row (or
// column), clipped to the grid. A k of max(cols, rows) − 1 already reaches every cell of a
// line, so any larger k gives bit-identical values; the range used is capped there.
int EffectiveSmoothingRange(const PlacementSettings& settings);
EvaluationEstimate EstimateEvaluation(const PlacementSettings& settings);

class ProxyCost {
 public:
  // `settings` must be resolved (canvas, grid and routes given; see ResolveDefaults).
  // Positions, orientations are copied from the netlist; the netlist must outlive this.
  ProxyCost(const Netlist& nl, const PlacementSettings& settings, CostWeights weights = {});

  // Everything recomputed from scratch from the current positions.
  CostBreakdown EvaluateFull();
  // Current cost. Maintained incrementally: a read after a move costs O(cells whose
  // value changed + rows/columns whose routing changed + the top-k candidates).
  CostBreakdown Cost();

  // Moves node `i` (macro, port or standard cell) to centre (x, y). Macro pins follow.
  void MoveNode(int32_t i, double x, double y);
  // Sets the orientation of hard macro `i` (pins are re-oriented from their N offsets).
  void SetOrientation(int32_t i, Orientation o);
  // Exchanges the centres of nodes a and b.
  void SwapNodes(int32_t a, int32_t b);

  double x(int32_t i) const { return x_[i]; }
  double y(int32_t i) const { return y_[i]; }
  Orientation orientation(int32_t i) const { return orient_[i]; }
  const Netlist& netlist() const { return nl_; }
  const PlacementSettings& settings() const { return s_; }
  const CostWeights& weights() const { return w_; }
  double grid_width() const { return gw_; }
  double grid_height() const { return gh_; }

  // Per-cell maps, row-major (index = row·cols + col), for pictures and observations
  // (as of the last Cost() / EvaluateFull()).
  std::vector<double> DensityMap() const;             // occupied area / cell area
  std::vector<double> VerticalCongestionMap() const;  // smoothed net routing + macro blockage
  std::vector<double> HorizontalCongestionMap() const;
  // The same maps written into caller buffers of cols·rows floats (observations, no allocation).
  void DensityMapInto(float* out) const;
  void CongestionMapsInto(float* vertical, float* horizontal) const;

  // Writes the current positions/orientations back into a netlist (e.g. to save a .plc).
  void CopyPlacementTo(Netlist* nl) const;

  // What node `i` adds to the grid were it centred at (x, y), with the arithmetic of the cost's
  // own updates (its width × height rectangle, as the density and blockage terms see it): per
  // cell the occupied area (if the node counts for density) and, for a hard macro, the routing
  // blockage (unnormalised, as in the congestion maps before dividing by grid_v_routes() /
  // grid_h_routes(); partial first/last row and column rule included). One entry per cell the
  // rectangle's corners span (row-major); entries may be all zero. Costing a move of i from
  // where it is to (x, y): remove FootprintAt(i, x(i), y(i)), add FootprintAt(i, x, y).
  struct FootprintCell {
    int32_t cell;
    double area, v_blockage, h_blockage;
  };
  void FootprintAt(int32_t i, double x, double y, std::vector<FootprintCell>* out) const;
  // The exact per-cell values the cost's top-k means read (as of the last Cost()), in double:
  // density = occupied / cell area; congestion = (smoothed demand + blockage) / supply.
  void DensityValuesInto(double* out) const;
  void CongestionValuesInto(double* vertical, double* horizontal) const;
  // The macro-blockage part of those congestion values (blockage / supply); the rest is the
  // smoothed net routing.
  void CongestionBlockageInto(double* vertical, double* horizontal) const;
  // The congestion values the cost's top-k mean reads (the top 5 % of [V ++ H], at least one; as of
  // the last Cost()), largest first (ties: lower index first), followed by the next `extra` values:
  // `index` < cols·rows is vertical cell `index`, else horizontal cell `index` − cols·rows; `blockage`
  // its macro-blockage part. CongestionCountedK() is how many the cost counts.
  struct CongestionValue {
    double value, blockage;
    int32_t index;
  };
  std::vector<CongestionValue> CountedCongestion(size_t extra = 0) const;
  size_t CongestionCountedK() const;
  double grid_v_routes() const { return grid_v_routes_; }
  double grid_h_routes() const { return grid_h_routes_; }
  // Σ net weights as the wirelength cost divides by it (1 when there are no nets).
  double net_weight_sum() const { return net_weight_sum_; }

 private:
  struct Rect { double xmin, ymin, xmax, ymax; };
  void PinXY(int32_t pin, double* px, double* py) const;
  void CellOf(double px, double py, int* row, int* col) const;
  Rect NodeRect(int32_t i) const;
  void AddDensity(int32_t node, double sign);
  void AddMacroBlockage(int32_t node, double sign);
  void RouteNet(int32_t net, double sign);
  double RerouteNet(int32_t net);  // returns the net's new (unweighted) HPWL
  void RouteCells(const int* cells, int ncells, int src, double w);
  // hpwl and on_canvas may be null; *on_canvas: every pin inside [0, W] × [0, H].
  int NetCells(int32_t net, int* cells, int* src, double* hpwl, bool* on_canvas = nullptr) const;
  double NetRouteWeight(int32_t net) const {
    const double nw = nl_.net_weight[net];
    return nw > 1 ? nw : 1.0;  // the routing load of a net: its weight if above 1
  }
  void AddHRange(int row, int c0, int c1, double w);
  void AddVRange(int col, int r0, int r1, double w);
  void UpdatePins(int32_t i);
  double NetHpwl(int32_t net) const;
  void ResetArrays();
  void BeforeMove(int32_t i);
  void AfterMove(int32_t i);

  const Netlist& nl_;
  PlacementSettings s_;
  CostWeights w_;
  int cols_, rows_, k_;
  bool skip_off_canvas_nets_ = false;  // weights.off_canvas_nets == kSkip
  double gw_, gh_, inv_gw_, inv_gh_, grid_v_routes_, grid_h_routes_;
  double net_weight_sum_;
  std::vector<double> x_, y_;
  std::vector<Orientation> orient_;
  std::vector<uint8_t> counts_density_;  // node kinds that occupy area
  // State maintained incrementally.
  std::vector<double> net_hpwl_;   // per net, unweighted
  double hpwl_ = 0;
  std::vector<double> occupied_;   // per cell, area
  std::vector<double> h_diff_, v_diff_;      // routing demand as difference arrays (per row / per column)
  std::vector<double> h_raw_, v_raw_;        // net routing demand per cell, in routes (unnormalised)
  std::vector<double> h_macro_, v_macro_;    // macro blockage, unnormalised
  std::vector<double> h_smooth_, v_smooth_;  // smoothed routing demand, unnormalised
  std::vector<double> slot_x_, slot_y_;      // per net slot (parallel to net_pins): pin position
  std::vector<int> slot_code_;               // and its grid cell, row<<16 | col
  std::vector<int32_t> pin_slot_start_, pin_slots_;  // per node: the net slots it occupies
  std::vector<int32_t> touched_nets_;  // scratch
  std::vector<int32_t> net_mark_;      // scratch, per net: stamp
  int32_t stamp_ = 0;
  // Exact mean of the k largest of a fixed-size array of values that change a few at a
  // time (see proxy_cost.cc): the elements ≥ a threshold are kept sorted.
  struct TopKSet {
    struct Entry {
      double v;
      int32_t i;
      bool operator<(const Entry& o) const { return v > o.v || (v == o.v && i < o.i); }  // descending
    };
    std::vector<double> val;      // current value per element
    std::vector<Entry> members;   // the elements with val ≥ t, sorted by descending value
    std::vector<double> scratch;
    double t = 0;
    bool valid = false;           // false: members are rebuilt from val on the next read
    void Reset(size_t n);
    // Most updates touch neither the members nor the threshold: one store, one
    // well-predicted branch.
    void Set(int32_t i, double v) {
      const double old = val[i];
      val[i] = v;
      if (valid & ((old >= t) | (v >= t))) Update(i, old, v);
    }
    void Update(int32_t i, double old, double v);
    double MeanTopK(size_t k);
    void Rebuild(size_t k);
  };
  TopKSet density_topk_, congestion_topk_;  // congestion: V cells [0, n), H cells [n, 2n)
  // What changed since the last read. Raw rows/columns: their routing difference array
  // changed (the prefix sums and, with smoothing, the smoothed neighbours must be
  // recomputed); cells: a macro's density or blockage changed (duplicates are harmless).
  std::vector<int32_t> dirty_h_rows_, dirty_v_cols_, dirty_density_, dirty_blockage_;
  std::vector<uint8_t> h_row_dirty_, v_col_dirty_, h_smooth_dirty_, v_smooth_dirty_;
  std::vector<int32_t> smooth_rows_, smooth_cols_;  // scratch
  bool all_dirty_ = true;
  void MarkAllDirty();
  void RefreshCongestion();
  double Smoothed(const double* line, int pos, int len, int stride) const;
  std::vector<int> net_cells_;    // per net (CSR like net_pins): distinct cells of its last route
  std::vector<int> net_ncells_, net_src_;
  std::vector<uint8_t> net_routed_;  // per net: its route is in the demand (skip rule: all pins on the canvas)
  std::vector<int> new_cells_;     // scratch of RerouteNet
};

// Convenience: netlist + optional .plc → settings, then one full evaluation.
CostBreakdown EvaluateProxyCost(const Netlist& nl, const PlacementSettings& settings,
                                CostWeights weights = {});

}  // namespace placerl::chip
