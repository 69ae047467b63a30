// Circuit Training's `plc_client.PlacementCost` API (as TILOS's `plc_client_os.py` implements
// it) over placerl's exact proxy cost: a netlist, its placement settings and the current
// placement, queried and changed node by node, the costs kept incrementally. What the Python
// module exposes under CT's method names (python/, docs/python.md); C++ users may use it too.
//
// Node indices are Circuit Training's: the order of `node` blocks in the netlist file
// (`__metadata__` excluded). Settings given with the Set… calls override the defaults and are in
// turn overridden by a .plc header read with RestorePlacement (TILOS `ifReadComment=True`).
// Errors (a bad index, a file that cannot be read, an unknown orientation) throw
// placerl::ConfigError / ParseError with one line naming what is wrong; the object is unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cost_models/chip/fd_placer.h"
#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"

namespace placerl::chip {

class PlcClient {
 public:
  // Reads the netlist (CT protobuf text, plain or gzipped). Settings: Circuit Training's defaults
  // (ResolveDefaults) until set or read from a .plc.
  explicit PlcClient(const std::string& netlist_path);
  ~PlcClient();

  // --- settings ---
  void SetCanvasSize(double width, double height);
  void SetPlacementGrid(int32_t cols, int32_t rows);
  void SetRoutesPerMicron(double horizontal, double vertical);
  void SetMacroRoutingAllocation(double horizontal, double vertical);
  void SetCongestionSmoothRange(double range);
  void SetOverlapThreshold(double threshold);
  std::pair<double, double> CanvasWidthHeight() const;
  std::pair<int32_t, int32_t> GridColumnsRows() const;
  std::pair<double, double> RoutesPerMicron() const;
  std::pair<double, double> MacroRoutingAllocation() const;
  double CongestionSmoothRange() const;
  double OverlapThreshold() const;
  const PlacementSettings& settings() const { return settings_; }

  // --- .plc files ---
  // Positions and orientations of the nodes the file lists, and its header's settings.
  void RestorePlacement(const std::string& plc_path);
  // Writes the current placement as a .plc (atomic) with its costs in the header, `info` as
  // comment lines after the header's first line.
  void SavePlacement(const std::string& path, const std::string& info = "") const;

  // --- costs (CT: get_cost is the wirelength cost) ---
  double WirelengthCost();
  double Wirelength();  // Σ_net w·HPWL, microns
  double DensityCost();
  double CongestionCost();
  CostBreakdown Costs();  // all of them, with the proxy cost of `weights` (1, 0.5, 0.5)

  // --- nodes ---
  int32_t NumNodes() const { return nl_.num_nodes(); }
  const std::vector<int32_t>& MacroIndices() const { return nl_.macros; }  // hard and soft, ascending
  int32_t NodeIndex(const std::string& name) const;
  const std::string& NodeName(int32_t node) const;
  std::string NodeType(int32_t node) const;  // "PORT", "MACRO" (hard or soft), "MACRO_PIN", "STDCELL"
  bool IsNodeSoftMacro(int32_t node) const;
  bool IsNodeHardMacro(int32_t node) const;
  std::pair<double, double> NodeLocation(int32_t node) const;  // centre; a macro pin: its position
  std::pair<double, double> NodeWidthHeight(int32_t node) const;
  void UpdateNodeCoords(int32_t node, double x, double y);  // a port, macro or standard cell
  std::string MacroOrientation(int32_t node) const;
  void UpdateMacroOrientation(int32_t node, const std::string& orientation);  // a hard macro
  // The fixed flag (ports are fixed once a .plc is read): what force-directed placement and the
  // environments respect; the setters above move a node whatever its flag, as CT's do.
  bool IsNodeFixed(int32_t node) const;
  void FixNodeCoord(int32_t node);
  void UnfixNodeCoord(int32_t node);
  // Places a macro's centre at the centre of grid cell `cell` (row-major: row·cols + col).
  void PlaceNode(int32_t node, int32_t cell);
  std::pair<double, double> CellCentre(int32_t cell) const;

  // --- placed flags and masks (CT's environment: unplace_all_nodes, then place_node one macro
  // at a time, asking get_node_mask before each) ---
  // A port, macro or standard cell is "placed" from the start; UnplaceAllNodes clears every
  // flag but those of fixed nodes and forgets every placed macro; PlaceNode (a macro that is
  // not fixed) sets it again. A macro pin is refused (ConfigError).
  bool IsNodePlaced(int32_t node) const;
  void UnplaceNode(int32_t node);  // not a fixed node; a hard macro is also forgotten as placed
  void UnplaceAllNodes();
  // 1 per grid cell (row-major) where `node` (its width × height; a port or pin: 1e-3 square)
  // centred on the cell's centre lies inside the canvas (|overlap − area| ≤ 1e-8) and overlaps
  // (area > 0) no placed macro — every macro initially (soft ones too), after UnplaceAllNodes
  // those placed since (TILOS's semantics; blockages are not part of it there either).
  std::vector<int32_t> NodeMask(int32_t node) const;
  // The grid cell (row·cols + col) of a macro's centre: floor(y / cell height), floor(x / cell
  // width), clamped to the grid.
  int32_t GridCellOfNode(int32_t node) const;

  // --- connectivity ---
  // The nodes a port, macro pin or standard cell drives (its net's sinks, file order); empty
  // for a node that drives nothing and for macros.
  std::vector<int32_t> FanOutsOfNode(int32_t node) const;
  // M × M row-major, M = hard + soft macros in ascending node index: entry (i, j) = c(i→j) +
  // c(j→i), c(a→b) = Σ over nets driven by a pin of a, of the net's weight per sink that is a
  // pin of b (the diagonal counts a macro's nets into itself twice), as TILOS computes it.
  std::vector<double> MacroAdjacency() const;
  // The same over the macros and the "clustered ports" (one per grid cell holding a port, at the
  // port's grid cell as GridCellOfNode computes it, in ascending cell order): (K × K row-major,
  // K = M + clusters; a cluster's entries with a macro sum its ports' c both ways, the
  // port-to-port block is 0) and the clusters' cells.
  std::pair<std::vector<double>, std::vector<int32_t>> MacroAndClusteredPortAdjacency() const;

  // --- blockages (the .plc header's `Blockage` lines and those created) ---
  const std::vector<Blockage>& Blockages() const { return settings_.blockages; }
  void CreateBlockage(double minx, double miny, double maxx, double maxy, double rate);

  // --- force-directed placement of the soft macros (cost_models/chip/fd_placer.h) ---
  // CT's optimize_stdcells: `opt` carries io_factor, the per-phase lists and use_current_loc;
  // hard macros, ports and standard cells do not move. The placed flags are not changed.
  void OptimizeStdcells(const ForceDirectedOptions& opt);

  // --- grids (row-major, cols·rows values, as of the current placement) ---
  std::vector<double> GridCellsDensity();
  std::vector<double> HorizontalRoutingCongestion();
  std::vector<double> VerticalRoutingCongestion();

  const Netlist& netlist() const { return nl_; }

 private:
  void CheckNode(int32_t node, const char* what) const;
  void CheckMacro(int32_t node, const char* what) const;
  // The settings changed: the cost is rebuilt from the current placement.
  void Resettle(const PlacementSettings& settings);
  ProxyCost& cost();
  Netlist nl_;
  PlacementSettings settings_;
  std::unique_ptr<ProxyCost> pc_;
  std::vector<uint8_t> placed_;          // per node (pins: unused)
  std::vector<int32_t> placed_macro_;    // per node: how often it is on TILOS's placed-macro list
  mutable std::vector<int32_t> driver_net_;  // per node: the net it drives or -1 (built on first use)
};

}  // namespace placerl::chip
