#include "cost_models/chip/plc_client.h"

#include <algorithm>
#include <cmath>

#include "datasets/chip/design.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {

namespace {

void CheckPositive(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) throw ConfigError(std::string(what) + " must be a finite number > 0");
}

}  // namespace

PlcClient::PlcClient(const std::string& netlist_path) : nl_(ReadNetlist(netlist_path)) {
  if (nl_.num_nodes() == 0) throw ConfigError(netlist_path + ": the netlist has no nodes");
  settings_ = ResolveDefaults(PlacementSettings{}, nl_);
  pc_ = std::make_unique<ProxyCost>(nl_, settings_);
  placed_.assign(nl_.num_nodes(), 1);
  placed_macro_.assign(nl_.num_nodes(), 0);
  for (const int32_t m : nl_.macros) placed_macro_[m] = 1;
}

PlcClient::~PlcClient() = default;

ProxyCost& PlcClient::cost() { return *pc_; }

void PlcClient::Resettle(const PlacementSettings& s) {
  const PlacementSettings resolved = ResolveDefaults(s, nl_);
  pc_->CopyPlacementTo(&nl_);
  auto next = std::make_unique<ProxyCost>(nl_, resolved);  // throws before anything changes
  settings_ = resolved;
  pc_ = std::move(next);
}

void PlcClient::SetCanvasSize(double width, double height) {
  CheckPositive(width, "the canvas width");
  CheckPositive(height, "the canvas height");
  PlacementSettings s = settings_;
  s.canvas_width = width;
  s.canvas_height = height;
  Resettle(s);
}

void PlcClient::SetPlacementGrid(int32_t cols, int32_t rows) {
  if (cols < 1 || rows < 1 || cols > 4096 || rows > 4096)
    throw ConfigError("the placement grid must be 1..4096 columns and rows (got " + std::to_string(cols) + " x " +
                      std::to_string(rows) + ")");
  PlacementSettings s = settings_;
  s.cols = cols;
  s.rows = rows;
  Resettle(s);
}

void PlcClient::SetRoutesPerMicron(double horizontal, double vertical) {
  CheckPositive(horizontal, "the horizontal routes per micron");
  CheckPositive(vertical, "the vertical routes per micron");
  PlacementSettings s = settings_;
  s.h_routes_per_micron = horizontal;
  s.v_routes_per_micron = vertical;
  Resettle(s);
}

void PlcClient::SetMacroRoutingAllocation(double horizontal, double vertical) {
  if (!(horizontal >= 0) || !(vertical >= 0) || !std::isfinite(horizontal) || !std::isfinite(vertical))
    throw ConfigError("the macro routing allocation must be finite numbers >= 0");
  PlacementSettings s = settings_;
  s.h_macro_alloc = horizontal;
  s.v_macro_alloc = vertical;
  Resettle(s);
}

void PlcClient::SetCongestionSmoothRange(double range) {
  if (!(range >= 0) || !std::isfinite(range)) throw ConfigError("the congestion smooth range must be a finite number >= 0");
  PlacementSettings s = settings_;
  s.smooth_range = range;
  Resettle(s);
}

void PlcClient::SetOverlapThreshold(double threshold) {
  if (!(threshold >= 0) || !std::isfinite(threshold)) throw ConfigError("the overlap threshold must be a finite number >= 0");
  PlacementSettings s = settings_;
  s.overlap_threshold = threshold;
  Resettle(s);
}

std::pair<double, double> PlcClient::CanvasWidthHeight() const { return {settings_.canvas_width, settings_.canvas_height}; }
std::pair<int32_t, int32_t> PlcClient::GridColumnsRows() const { return {settings_.cols, settings_.rows}; }
std::pair<double, double> PlcClient::RoutesPerMicron() const {
  return {settings_.h_routes_per_micron, settings_.v_routes_per_micron};
}
std::pair<double, double> PlcClient::MacroRoutingAllocation() const {
  return {settings_.h_macro_alloc, settings_.v_macro_alloc};
}
double PlcClient::CongestionSmoothRange() const { return settings_.smooth_range; }
double PlcClient::OverlapThreshold() const { return settings_.overlap_threshold; }

void PlcClient::RestorePlacement(const std::string& plc_path) {
  const PlcFile plc = ReadPlc(plc_path);
  pc_->CopyPlacementTo(&nl_);  // nodes the file does not list keep where they are
  // The placement part of the netlist, to put back if the file does not fit it (cheaper than
  // copying the netlist with its names).
  const std::vector<double> x = nl_.x, y = nl_.y;
  const std::vector<Orientation> orientation = nl_.orientation;
  const std::vector<uint8_t> fixed = nl_.fixed;
  try {
    ApplyPlc(plc, &nl_, plc_path);
    const PlacementSettings resolved = ResolveDefaults(OverlayPlcSettings(plc.settings, settings_), nl_);
    auto next = std::make_unique<ProxyCost>(nl_, resolved);
    settings_ = resolved;
    pc_ = std::move(next);
  } catch (...) {
    nl_.x = x;
    nl_.y = y;
    nl_.orientation = orientation;
    nl_.fixed = fixed;
    pc_ = std::make_unique<ProxyCost>(nl_, settings_);
    throw;
  }
}

void PlcClient::SavePlacement(const std::string& path, const std::string& info) const {
  Netlist out = nl_;
  pc_->CopyPlacementTo(&out);
  ProxyCost scored(out, settings_);
  const CostBreakdown c = scored.EvaluateFull();
  const PlcCosts costs{c.hpwl, c.wirelength_cost, c.congestion_cost, c.density_cost};
  std::string text = PlcToText(out, settings_, &costs, nl_.sources.empty() ? "" : nl_.sources[0], path);
  if (!info.empty()) {  // CT's `info`: comment lines after the header's first line
    std::string comment;
    size_t start = 0;
    while (start <= info.size()) {
      const size_t end = info.find('\n', start);
      comment += "# " + info.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    const size_t first = text.find('\n');
    text.insert(first == std::string::npos ? text.size() : first + 1, comment);
  }
  WriteFileAtomic(path, text);
}

double PlcClient::WirelengthCost() { return cost().Cost().wirelength_cost; }
double PlcClient::Wirelength() { return cost().Cost().hpwl; }
double PlcClient::DensityCost() { return cost().Cost().density_cost; }
double PlcClient::CongestionCost() { return cost().Cost().congestion_cost; }
CostBreakdown PlcClient::Costs() { return cost().Cost(); }

void PlcClient::CheckNode(int32_t node, const char* what) const {
  if (node < 0 || node >= nl_.num_nodes())
    throw ConfigError(std::string(what) + ": node index " + std::to_string(node) + " is out of range [0, " +
                      std::to_string(nl_.num_nodes()) + ")");
}

void PlcClient::CheckMacro(int32_t node, const char* what) const {
  CheckNode(node, what);
  if (!nl_.is_macro(node))
    throw ConfigError(std::string(what) + ": node " + std::to_string(node) + " (" + nl_.name[node] + ") is a " +
                      NodeTypeName(nl_.type[node]) + ", not a macro");
}

int32_t PlcClient::NodeIndex(const std::string& name) const {
  const auto it = nl_.index_of.find(name);
  if (it == nl_.index_of.end()) throw ConfigError("get_node_index: no node named '" + name + "'");
  return it->second;
}

const std::string& PlcClient::NodeName(int32_t node) const {
  CheckNode(node, "get_node_name");
  return nl_.name[node];
}

std::string PlcClient::NodeType(int32_t node) const {
  CheckNode(node, "get_node_type");
  switch (nl_.type[node]) {
    case chip::NodeType::kPort: return "PORT";
    case chip::NodeType::kHardMacro:
    case chip::NodeType::kSoftMacro: return "MACRO";
    case chip::NodeType::kHardMacroPin:
    case chip::NodeType::kSoftMacroPin: return "MACRO_PIN";
    case chip::NodeType::kStdCell: return "STDCELL";
  }
  return "UNKNOWN";
}

bool PlcClient::IsNodeSoftMacro(int32_t node) const {
  CheckNode(node, "is_node_soft_macro");
  return nl_.type[node] == chip::NodeType::kSoftMacro;
}

bool PlcClient::IsNodeHardMacro(int32_t node) const {
  CheckNode(node, "is_node_hard_macro");
  return nl_.type[node] == chip::NodeType::kHardMacro;
}

std::pair<double, double> PlcClient::NodeLocation(int32_t node) const {
  CheckNode(node, "get_node_location");
  const int32_t m = nl_.parent[node];
  if (m < 0) return {pc_->x(node), pc_->y(node)};
  double ox = 0, oy = 0;
  OrientOffset(pc_->orientation(m), nl_.pin_dx[node], nl_.pin_dy[node], &ox, &oy);
  return {pc_->x(m) + ox, pc_->y(m) + oy};
}

std::pair<double, double> PlcClient::NodeWidthHeight(int32_t node) const {
  CheckNode(node, "get_node_width_height");
  return {nl_.width[node], nl_.height[node]};
}

void PlcClient::UpdateNodeCoords(int32_t node, double x, double y) {
  CheckNode(node, "update_node_coords");
  if (nl_.parent[node] >= 0)
    throw ConfigError("update_node_coords: node " + std::to_string(node) + " (" + nl_.name[node] +
                      ") is a macro pin: move its macro");
  if (!std::isfinite(x) || !std::isfinite(y)) throw ConfigError("update_node_coords: the coordinates must be finite");
  cost().MoveNode(node, x, y);
}

std::string PlcClient::MacroOrientation(int32_t node) const {
  CheckMacro(node, "get_macro_orientation");
  return OrientationName(pc_->orientation(node));
}

void PlcClient::UpdateMacroOrientation(int32_t node, const std::string& orientation) {
  CheckMacro(node, "update_macro_orientation");
  if (nl_.type[node] != chip::NodeType::kHardMacro)
    throw ConfigError("update_macro_orientation: node " + std::to_string(node) + " is a soft macro");
  Orientation o;
  if (!ParseOrientation(orientation, &o))
    throw ConfigError("update_macro_orientation: unknown orientation '" + orientation + "' (N, FN, S, FS, E, FE, W, FW)");
  cost().SetOrientation(node, o);
}

bool PlcClient::IsNodeFixed(int32_t node) const {
  CheckNode(node, "is_node_fixed");
  return nl_.fixed[node] != 0;
}

void PlcClient::FixNodeCoord(int32_t node) {
  CheckNode(node, "fix_node_coord");
  nl_.fixed[node] = 1;
}

void PlcClient::UnfixNodeCoord(int32_t node) {
  CheckNode(node, "unfix_node_coord");
  nl_.fixed[node] = 0;
}

std::pair<double, double> PlcClient::CellCentre(int32_t cell) const {
  if (cell < 0 || cell >= settings_.cols * settings_.rows)
    throw ConfigError("grid cell " + std::to_string(cell) + " is out of range [0, " +
                      std::to_string(settings_.cols * settings_.rows) + ")");
  const double gw = settings_.canvas_width / settings_.cols, gh = settings_.canvas_height / settings_.rows;
  return {(cell % settings_.cols + 0.5) * gw, (cell / settings_.cols + 0.5) * gh};
}

void PlcClient::PlaceNode(int32_t node, int32_t cell) {
  CheckMacro(node, "place_node");
  const auto [x, y] = CellCentre(cell);
  if (nl_.fixed[node]) return;  // as TILOS: a fixed node stays
  cost().MoveNode(node, x, y);
  placed_[node] = 1;
  ++placed_macro_[node];
}

namespace {

void CheckPlaceable(const Netlist& nl, int32_t node, const char* what) {
  if (nl.parent[node] >= 0)
    throw ConfigError(std::string(what) + ": node " + std::to_string(node) + " (" + nl.name[node] +
                      ") is a macro pin: only ports, macros and standard cells are placed");
}

}  // namespace

bool PlcClient::IsNodePlaced(int32_t node) const {
  CheckNode(node, "is_node_placed");
  CheckPlaceable(nl_, node, "is_node_placed");
  return placed_[node] != 0;
}

void PlcClient::UnplaceNode(int32_t node) {
  CheckNode(node, "unplace_node");
  CheckPlaceable(nl_, node, "unplace_node");
  if (nl_.fixed[node]) return;
  placed_[node] = 0;
  if (nl_.type[node] == chip::NodeType::kHardMacro && placed_macro_[node] > 0) --placed_macro_[node];
}

void PlcClient::UnplaceAllNodes() {
  for (int32_t i = 0; i < nl_.num_nodes(); ++i) {
    if (nl_.parent[i] < 0 && !nl_.fixed[i]) placed_[i] = 0;
    placed_macro_[i] = 0;
  }
}

std::vector<int32_t> PlcClient::NodeMask(int32_t node) const {
  CheckNode(node, "get_node_mask");
  const bool point = nl_.type[node] == chip::NodeType::kPort || nl_.parent[node] >= 0;
  const double w = point ? 1e-3 : nl_.width[node], h = point ? 1e-3 : nl_.height[node];
  const double W = settings_.canvas_width, H = settings_.canvas_height;
  const int32_t cols = settings_.cols, rows = settings_.rows;
  const double gw = W / cols, gh = H / rows;
  struct Box {
    double x0, y0, x1, y1;
  };
  auto overlap = [](const Box& a, const Box& b) {
    const double dx = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    const double dy = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    return dx >= 0 && dy >= 0 ? dx * dy : 0.0;
  };
  std::vector<Box> placed;
  for (const int32_t m : nl_.macros) {
    if (placed_macro_[m] == 0 || !placed_[m]) continue;
    const double px = pc_->x(m), py = pc_->y(m), pw = nl_.width[m], ph = nl_.height[m];
    placed.push_back({px - pw / 2, py - ph / 2, px + pw / 2, py + ph / 2});
  }
  const Box canvas{0, 0, W, H};
  std::vector<int32_t> mask(static_cast<size_t>(cols) * rows, 1);
  for (int32_t i = 0; i < rows; ++i) {
    for (int32_t j = 0; j < cols; ++j) {
      const double cx = j * gw + gw / 2, cy = i * gh + gh / 2;
      const Box b{cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
      int32_t& m = mask[static_cast<size_t>(i) * cols + j];
      if (std::fabs(overlap(canvas, b) - w * h) > 1e-8) {
        m = 0;
        continue;
      }
      for (const Box& p : placed) {
        if (overlap(p, b) > 0) {
          m = 0;
          break;
        }
      }
    }
  }
  return mask;
}

int32_t PlcClient::GridCellOfNode(int32_t node) const {
  CheckMacro(node, "get_grid_cell_of_node");
  const double gw = settings_.canvas_width / settings_.cols, gh = settings_.canvas_height / settings_.rows;
  const auto clamp = [](double v, int32_t n) {
    const double f = std::floor(v);
    return f < 0 ? 0 : f > n - 1 ? n - 1 : static_cast<int32_t>(f);
  };
  const int32_t row = clamp(pc_->y(node) / gh, settings_.rows), col = clamp(pc_->x(node) / gw, settings_.cols);
  return row * settings_.cols + col;
}

std::vector<int32_t> PlcClient::FanOutsOfNode(int32_t node) const {
  CheckNode(node, "get_fan_outs_of_node");
  if (driver_net_.empty()) {
    driver_net_.assign(nl_.num_nodes(), -1);
    for (int32_t k = 0; k < nl_.num_nets(); ++k) driver_net_[nl_.net_pins[nl_.net_start[k]]] = k;
  }
  const int32_t k = driver_net_[node];
  if (k < 0) return {};
  return std::vector<int32_t>(nl_.net_pins.begin() + nl_.net_start[k] + 1, nl_.net_pins.begin() + nl_.net_start[k + 1]);
}

namespace {

// c[a·k + b] = c(a→b) over the nodes `row_of` maps to 0 … k-1 (macros through their pins, ports
// themselves): per net driven by a, its weight per sink in b.
std::vector<double> DirectedConnections(const Netlist& nl, const std::vector<int32_t>& row_of, size_t k) {
  auto row = [&](int32_t node) { return nl.parent[node] >= 0 ? row_of[nl.parent[node]] : row_of[node]; };
  std::vector<double> c(k * k, 0.0);
  for (int32_t n = 0; n < nl.num_nets(); ++n) {
    const int32_t a = row(nl.net_pins[nl.net_start[n]]);
    if (a < 0) continue;
    for (int32_t p = nl.net_start[n] + 1; p < nl.net_start[n + 1]; ++p) {
      const int32_t b = row(nl.net_pins[p]);
      if (b >= 0) c[static_cast<size_t>(a) * k + b] += nl.net_weight[n];
    }
  }
  return c;
}

}  // namespace

std::vector<double> PlcClient::MacroAdjacency() const {
  const size_t m = nl_.macros.size();
  std::vector<int32_t> row_of(nl_.num_nodes(), -1);
  for (size_t i = 0; i < m; ++i) row_of[nl_.macros[i]] = static_cast<int32_t>(i);
  const std::vector<double> c = DirectedConnections(nl_, row_of, m);
  std::vector<double> adj(m * m);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < m; ++j) adj[i * m + j] = c[j * m + i] + c[i * m + j];
  return adj;
}

std::pair<std::vector<double>, std::vector<int32_t>> PlcClient::MacroAndClusteredPortAdjacency() const {
  const size_t m = nl_.macros.size();
  const double gw = settings_.canvas_width / settings_.cols, gh = settings_.canvas_height / settings_.rows;
  const auto clamp = [](double v, int32_t n) {
    const double f = std::floor(v);
    return f < 0 ? 0 : f > n - 1 ? n - 1 : static_cast<int32_t>(f);
  };
  std::vector<int32_t> port_cell(nl_.ports.size());
  std::vector<int32_t> cells;
  for (size_t i = 0; i < nl_.ports.size(); ++i) {
    const int32_t p = nl_.ports[i];
    port_cell[i] = clamp(pc_->y(p) / gh, settings_.rows) * settings_.cols + clamp(pc_->x(p) / gw, settings_.cols);
    cells.push_back(port_cell[i]);
  }
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  // Rows: the macros, then the clusters (a port counts in its cluster's row).
  const size_t k = m + cells.size();
  std::vector<int32_t> row_of(nl_.num_nodes(), -1);
  for (size_t i = 0; i < m; ++i) row_of[nl_.macros[i]] = static_cast<int32_t>(i);
  for (size_t i = 0; i < nl_.ports.size(); ++i)
    row_of[nl_.ports[i]] =
        static_cast<int32_t>(m + (std::lower_bound(cells.begin(), cells.end(), port_cell[i]) - cells.begin()));
  const std::vector<double> c = DirectedConnections(nl_, row_of, k);
  std::vector<double> adj(k * k, 0.0);
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j)
      if (i < m || j < m) adj[i * k + j] = c[j * k + i] + c[i * k + j];  // no port-to-port entries
  return {adj, cells};
}

void PlcClient::CreateBlockage(double minx, double miny, double maxx, double maxy, double rate) {
  if (!std::isfinite(minx) || !std::isfinite(miny) || !std::isfinite(maxx) || !std::isfinite(maxy) || minx > maxx ||
      miny > maxy)
    throw ConfigError("create_blockage: the rectangle must be finite with min <= max");
  if (!(rate >= 0 && rate <= 1)) throw ConfigError("create_blockage: the rate must be in [0, 1]");
  PlacementSettings s = settings_;
  s.blockages.push_back(Blockage{minx, miny, maxx, maxy, rate});
  Resettle(s);
}

void PlcClient::OptimizeStdcells(const ForceDirectedOptions& opt) {
  ForceDirectedPlacer fd(nl_, settings_, opt);  // throws ConfigError on bad options, before any change
  fd.Run(pc_.get());
}

std::vector<double> PlcClient::GridCellsDensity() {
  cost().Cost();
  return pc_->DensityMap();
}

std::vector<double> PlcClient::HorizontalRoutingCongestion() {
  cost().Cost();
  return pc_->HorizontalCongestionMap();
}

std::vector<double> PlcClient::VerticalRoutingCongestion() {
  cost().Cost();
  return pc_->VerticalCongestionMap();
}

}  // namespace placerl::chip
