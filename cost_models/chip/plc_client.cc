#include "cost_models/chip/plc_client.h"

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
  cost().MoveNode(node, x, y);
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
