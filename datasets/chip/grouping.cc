// Circuit Training's grouper re-implemented on the shared Netlist (see grouping.h and
// docs/grouping.md for the definition each step follows).
#include "datasets/chip/grouping.h"

#include <metis.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {

// ---------------------------------------------------------------- group files

std::vector<int32_t> ParseGroupText(const std::string& text, const std::string& file_label,
                                    int32_t num_nodes) {
  // The line count is checked below, but a cut last id ("12" from "123") would not be.
  RefuseTruncatedLastLine(text, file_label);
  std::vector<int32_t> groups;
  groups.reserve(num_nodes > 0 ? num_nodes : 0);
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string s = text.substr(pos, end - pos);
    pos = end + 1;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (static_cast<int64_t>(groups.size()) >= num_nodes) {
      throw ParseError(file_label, line,
                       "more lines than the netlist's " + std::to_string(num_nodes) + " nodes");
    }
    // Exactly one whole number, optional surrounding blanks.
    size_t a = s.find_first_not_of(" \t");
    size_t b = s.find_last_not_of(" \t");
    if (a == std::string::npos) throw ParseError(file_label, line, "empty line (want one group id per node)");
    const std::string tok = s.substr(a, b - a + 1);
    errno = 0;
    char* e = nullptr;
    const long long v = std::strtoll(tok.c_str(), &e, 10);
    if (e != tok.c_str() + tok.size()) {
      throw ParseError(file_label, line, "'" + tok + "' is not a whole number (want one group id per line)");
    }
    if (errno == ERANGE || v > std::numeric_limits<int32_t>::max()) {
      throw ParseError(file_label, line, "group id " + tok + " is too large");
    }
    if (v < -1) throw ParseError(file_label, line, "negative group id " + tok + " (only -1 = no group)");
    groups.push_back(static_cast<int32_t>(v));
  }
  if (static_cast<int64_t>(groups.size()) != num_nodes) {
    throw ParseError(file_label, line,
                     "has " + std::to_string(groups.size()) + " group ids but the netlist has " +
                         std::to_string(num_nodes) + " nodes (want one line per node)");
  }
  return groups;
}

std::vector<int32_t> ReadGroupFile(const std::string& path, int32_t num_nodes) {
  return ParseGroupText(ReadFile(path), path, num_nodes);
}

// ---------------------------------------------------------------- node counts

bool NodeTypeCounts::operator==(const NodeTypeCounts& o) const {
  return hard_macros == o.hard_macros && hard_macro_pins == o.hard_macro_pins &&
         macros == o.macros && macro_pins == o.macro_pins && ports == o.ports &&
         soft_macros == o.soft_macros && soft_macro_pins == o.soft_macro_pins &&
         stdcells == o.stdcells;
}

NodeTypeCounts CountNodeTypes(const Netlist& nl) {
  NodeTypeCounts c;
  c.hard_macros = nl.CountType(NodeType::kHardMacro);
  c.hard_macro_pins = nl.CountType(NodeType::kHardMacroPin);
  c.soft_macros = nl.CountType(NodeType::kSoftMacro);
  c.soft_macro_pins = nl.CountType(NodeType::kSoftMacroPin);
  c.ports = nl.CountType(NodeType::kPort);
  c.stdcells = nl.CountType(NodeType::kStdCell);
  c.macros = c.hard_macros + c.soft_macros;
  c.macro_pins = c.hard_macro_pins + c.soft_macro_pins;
  return c;
}

namespace {

struct CountField {
  const char* key;
  int64_t NodeTypeCounts::*field;
};
constexpr CountField kCountFields[] = {
    {"HARD_MACROs", &NodeTypeCounts::hard_macros},   {"HARD_MACRO_PINs", &NodeTypeCounts::hard_macro_pins},
    {"MACROs", &NodeTypeCounts::macros},             {"MACRO_PINs", &NodeTypeCounts::macro_pins},
    {"PORTs", &NodeTypeCounts::ports},               {"SOFT_MACROs", &NodeTypeCounts::soft_macros},
    {"SOFT_MACRO_PINs", &NodeTypeCounts::soft_macro_pins}, {"STDCELLs", &NodeTypeCounts::stdcells},
};

}  // namespace

std::optional<NodeTypeCounts> ParsePlcNodeCounts(const std::string& plc_text,
                                                 const std::string& file_label) {
  NodeTypeCounts c;
  int found = 0;
  size_t pos = 0;
  int line = 0;
  while (pos < plc_text.size()) {
    size_t end = plc_text.find('\n', pos);
    if (end == std::string::npos) end = plc_text.size();
    ++line;
    const std::string s = plc_text.substr(pos, end - pos);
    pos = end + 1;
    if (s.empty() || s[0] != '#') continue;
    // Both layouts: one count per line ("# HARD_MACROs     :       136") and several on one
    // line ("# HARD_MACROs : 133  HARD_MACRO_PINs : 7847 ...").
    size_t i = 1;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      size_t k = i;
      while (k < s.size() && s[k] != ' ' && s[k] != '\t' && s[k] != ':') ++k;
      const std::string key = s.substr(i, k - i);
      const CountField* f = nullptr;
      for (const CountField& cf : kCountFields) {
        if (key == cf.key) f = &cf;
      }
      if (!f) break;  // not a counts line (or past its counts)
      size_t colon = s.find(':', k);
      if (colon == std::string::npos) break;
      char* e = nullptr;
      const char* num = s.c_str() + colon + 1;
      const long long v = std::strtoll(num, &e, 10);
      if (e == num) throw ParseError(file_label, line, "count of " + key + " is not a number");
      c.*(f->field) = v;
      ++found;
      i = static_cast<size_t>(e - s.c_str());
    }
  }
  if (found == 0) return std::nullopt;
  return c;
}

std::string DescribeCountDifferences(const NodeTypeCounts& ours, const NodeTypeCounts& theirs) {
  std::string out;
  for (const CountField& f : kCountFields) {
    if (ours.*(f.field) == theirs.*(f.field)) continue;
    if (!out.empty()) out += ", ";
    out += std::string(f.key) + " " + std::to_string(ours.*(f.field)) + " vs " +
           std::to_string(theirs.*(f.field));
  }
  return out;
}

// ---------------------------------------------------------------- the fan-out graph

namespace {

// CT's MetaNetlist connectivity: per node its distinct sinks (output_indices, file order)
// and its drivers (input_indices), after dropping nets of more than max_fanout sinks.
struct FanoutGraph {
  std::vector<int32_t> out_start, out;
  std::vector<int32_t> in_start, in;
  int32_t dropped = 0;
};

FanoutGraph BuildFanoutGraph(const Netlist& nl, int32_t max_fanout) {
  const int32_t n = nl.num_nodes();
  FanoutGraph g;
  // Nets by driver (a node may drive several nets in hand-built netlists: concatenate).
  std::vector<int32_t> first_net(n, -1), next_net(nl.num_nets(), -1);
  for (int32_t k = nl.num_nets() - 1; k >= 0; --k) {
    const int32_t d = nl.net_pins[nl.net_start[k]];
    next_net[k] = first_net[d];
    first_net[d] = k;
  }
  std::vector<int32_t> stamp(n, -1);
  g.out_start.assign(n + 1, 0);
  std::vector<int32_t> buf;
  for (int32_t d = 0; d < n; ++d) {
    buf.clear();
    for (int32_t k = first_net[d]; k >= 0; k = next_net[k]) {
      for (int32_t j = nl.net_start[k] + 1; j < nl.net_start[k + 1]; ++j) {
        const int32_t s = nl.net_pins[j];
        if (stamp[s] == d) continue;
        stamp[s] = d;
        buf.push_back(s);
      }
    }
    const bool can_drop = nl.type[d] == NodeType::kPort || nl.type[d] == NodeType::kStdCell ||
                          nl.type[d] == NodeType::kHardMacroPin || nl.type[d] == NodeType::kSoftMacroPin;
    if (can_drop && static_cast<int32_t>(buf.size()) > max_fanout) {
      ++g.dropped;
      buf.clear();
    }
    g.out.insert(g.out.end(), buf.begin(), buf.end());
    g.out_start[d + 1] = static_cast<int32_t>(g.out.size());
  }
  // Drivers of each node, in driver order.
  g.in_start.assign(n + 1, 0);
  for (int32_t s : g.out) ++g.in_start[s + 1];
  for (int32_t i = 0; i < n; ++i) g.in_start[i + 1] += g.in_start[i];
  g.in.resize(g.out.size());
  std::vector<int32_t> fill(g.in_start.begin(), g.in_start.end() - 1);
  for (int32_t d = 0; d < n; ++d) {
    for (int32_t j = g.out_start[d]; j < g.out_start[d + 1]; ++j) g.in[fill[g.out[j]]++] = d;
  }
  return g;
}

// The sinks of node i as the clustered netlist sees them (CT get_node_outputs): a sink that
// is a grouped standard cell becomes its group (key −g−1), one in the driver's own group
// is dropped, an ungrouped standard cell is dropped; other sinks stay (key = node index).
// Sorted ascending and distinct, as CT's SortedSet.
void GroupedSinks(const Netlist& nl, const FanoutGraph& g, const std::vector<int32_t>& groups,
                  int32_t i, std::vector<int64_t>* keys) {
  keys->clear();
  const int32_t current = nl.type[i] == NodeType::kStdCell ? groups[i] : -1;
  for (int32_t j = g.out_start[i]; j < g.out_start[i + 1]; ++j) {
    const int32_t o = g.out[j];
    int64_t key = o;
    if (nl.type[o] == NodeType::kStdCell) {
      const int32_t go = groups[o];
      if (go < 0 || go == current) continue;
      key = -static_cast<int64_t>(go) - 1;
    }
    keys->push_back(key);
  }
  std::sort(keys->begin(), keys->end());
  keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
}

std::string GroupName(int32_t g) { return "Grp_" + std::to_string(g); }

}  // namespace

// ---------------------------------------------------------------- the clustered netlist

Netlist BuildGroupedNetlist(const Netlist& flat, const std::vector<int32_t>& groups,
                            const GroupingOptions& options, GroupingReport* report) {
  const int32_t n = flat.num_nodes();
  if (static_cast<int32_t>(groups.size()) != n) {
    throw ConfigError("grouping: " + std::to_string(groups.size()) + " group ids for " +
                      std::to_string(n) + " nodes");
  }
  if (!(options.canvas_width > 0) || options.cols <= 0) {
    throw ConfigError("grouping: canvas width and grid columns are needed (soft-macro width = canvas width / columns)");
  }
  if (!(options.cell_area_utilization > 0) || !std::isfinite(options.cell_area_utilization)) {
    throw ConfigError("grouping: cell area utilization must be positive");
  }
  const FanoutGraph g = BuildFanoutGraph(flat, options.max_fanout);
  GroupingReport rep;
  rep.dropped_high_fanout_nets = g.dropped;

  Netlist out;
  out.metadata["soft_macro_area_bloating_ratio"] = 1.0 / options.cell_area_utilization;
  out.sources = flat.sources;
  // Sinks of each output node, as (output node, sink key) resolved after all nodes exist.
  struct PendingNet {
    int32_t driver;
    std::vector<int64_t> keys;  // CT keys: node index of `flat`, or −g−1 for group g
  };
  std::vector<PendingNet> nets;
  std::vector<int32_t> new_index(n, -1);
  std::vector<int64_t> keys;

  // 1. Kept nodes in file order; grouped standard cells are collected per group.
  for (int32_t i = 0; i < n; ++i) {
    if (flat.type[i] == NodeType::kStdCell) {
      if (groups[i] >= 0) {
        ++rep.grouped_stdcells;
        continue;
      }
      ++rep.ungrouped_stdcells;
    }
    const int32_t k = out.AddNode(flat.name[i], flat.type[i]);
    new_index[i] = k;
    out.x[k] = flat.x[i];
    out.y[k] = flat.y[i];
    out.width[k] = flat.width[i];
    out.height[k] = flat.height[i];
    out.orientation[k] = flat.orientation[i];
    out.weight[k] = flat.weight[i];
    out.pin_dx[k] = flat.pin_dx[i];
    out.pin_dy[k] = flat.pin_dy[i];
    out.side[k] = flat.side[i];
    out.fixed[k] = flat.fixed[i];
    if (!flat.is_macro(i)) {
      GroupedSinks(flat, g, groups, i, &keys);
      if (!keys.empty()) nets.push_back({k, keys});
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    if (flat.parent[i] >= 0 && new_index[i] >= 0) out.parent[new_index[i]] = new_index[flat.parent[i]];
  }

  // 2. One soft macro per group holding standard cells (ascending id; ids may be sparse).
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < n; ++i) {
    if (flat.type[i] == NodeType::kStdCell && groups[i] >= 0) ids.push_back(groups[i]);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto rank_of = [&](int32_t grp) {
    return static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), grp) - ids.begin());
  };
  std::vector<std::vector<int32_t>> cells_of(ids.size());
  for (int32_t i = 0; i < n; ++i) {
    if (flat.type[i] == NodeType::kStdCell && groups[i] >= 0) cells_of[rank_of(groups[i])].push_back(i);
  }
  std::vector<int32_t> input_pin_of(ids.size(), -1);
  const double soft_width = options.canvas_width / options.cols;
  for (size_t rank = 0; rank < ids.size(); ++rank) {
    const int32_t grp = ids[rank];
    const std::vector<int32_t>& cells = cells_of[rank];
    double area = 0, sx = 0, sy = 0;
    for (int32_t c : cells) {
      const double a = flat.width[c] * flat.height[c];
      area += a;
      sx += flat.x[c] * a;
      sy += flat.y[c] * a;
    }
    // Centre of mass of the cells (CT: (0, 0) when they have no area).
    const double cx = area < 1e-9 ? 0.0 : sx / area, cy = area < 1e-9 ? 0.0 : sy / area;
    const std::string macro_name = GroupName(grp);
    const int32_t m = out.AddNode(macro_name, NodeType::kSoftMacro);
    out.width[m] = soft_width;
    out.height[m] = (area / options.cell_area_utilization) / soft_width;
    out.x[m] = cx;
    out.y[m] = cy;
    ++rep.soft_macros;
    auto add_pin = [&](const std::string& pin_name, double weight) {
      const int32_t p = out.AddNode(pin_name, NodeType::kSoftMacroPin);
      out.parent[p] = m;
      out.x[p] = cx;
      out.y[p] = cy;
      out.weight[p] = weight;
      ++rep.soft_macro_pins;
      return p;
    };
    // Cells driving several targets get a pin each; cells driving one target share one
    // pin per target, whose weight counts the merged wires.
    std::map<int64_t, double> single;  // key → summed weight (ascending key, as CT)
    int32_t multi = 0;
    for (int32_t c : cells) {
      GroupedSinks(flat, g, groups, c, &keys);
      if (keys.empty()) continue;
      if (keys.size() == 1) {
        single[keys[0]] += flat.weight[c];
        continue;
      }
      const int32_t p = add_pin(macro_name + "/Poutput_multi_" + std::to_string(multi++), flat.weight[c]);
      nets.push_back({p, keys});
    }
    int32_t single_index = 0;
    for (const auto& [key, w] : single) {
      const int32_t p = add_pin(macro_name + "/Poutput_single_" + std::to_string(single_index++), w);
      nets.push_back({p, {key}});
    }
    input_pin_of[rank] = add_pin(macro_name + "/Pinput", 1.0);
  }

  // 3. Nets: driver first, then its sinks in CT's key order.
  for (const PendingNet& pn : nets) {
    out.net_pins.push_back(pn.driver);
    for (int64_t key : pn.keys) {
      const int32_t s = key >= 0 ? new_index[key] : input_pin_of[rank_of(static_cast<int32_t>(-key - 1))];
      if (s < 0) throw ConfigError("grouping: internal: a sink has no node in the clustered netlist");
      out.net_pins.push_back(s);
    }
    out.net_start.push_back(static_cast<int32_t>(out.net_pins.size()));
    // As the netlist reader counts them: ports 1, pins and cells their weight.
    out.net_weight.push_back(out.type[pn.driver] == NodeType::kPort ? 1.0 : out.weight[pn.driver]);
  }
  out.Finalize();
  if (report) *report = rep;
  return out;
}

Netlist WithoutOffCanvasNets(const Netlist& nl, double canvas_width, double canvas_height,
                             int32_t* dropped) {
  Netlist out = nl;
  out.net_start.assign(1, 0);
  out.net_pins.clear();
  out.net_weight.clear();
  int32_t n_dropped = 0;
  for (int32_t k = 0; k < nl.num_nets(); ++k) {
    bool inside = true;
    for (int32_t j = nl.net_start[k]; j < nl.net_start[k + 1] && inside; ++j) {
      double x, y;
      PinPosition(nl, nl.x.data(), nl.y.data(), nl.orientation.data(), nl.net_pins[j], &x, &y);
      inside = x >= 0 && y >= 0 && x <= canvas_width && y <= canvas_height;
    }
    if (!inside) {
      ++n_dropped;
      continue;
    }
    out.net_pins.insert(out.net_pins.end(), nl.net_pins.begin() + nl.net_start[k],
                        nl.net_pins.begin() + nl.net_start[k + 1]);
    out.net_start.push_back(static_cast<int32_t>(out.net_pins.size()));
    out.net_weight.push_back(nl.net_weight[k]);
  }
  out.Finalize();
  if (dropped) *dropped = n_dropped;
  return out;
}

// ---------------------------------------------------------------- grouping without hMETIS

namespace {

// Group membership as CT's Grouping keeps it: per node its group, per group its members in
// ascending node index, and the largest id ever used (new groups get max + 1).
class Groups {
 public:
  explicit Groups(int32_t n) : of_(n, -1) {}
  int32_t of(int32_t i) const { return of_[i]; }
  const std::vector<int32_t>& assignment() const { return of_; }
  int32_t max_id() const { return max_id_; }
  const std::vector<int32_t>& members(int32_t g) const {
    static const std::vector<int32_t> kEmpty;
    return g >= 0 && g < static_cast<int32_t>(members_.size()) ? members_[g] : kEmpty;
  }
  std::vector<int32_t> ids() const {  // non-empty groups, ascending
    std::vector<int32_t> r;
    for (int32_t g = 0; g < static_cast<int32_t>(members_.size()); ++g) {
      if (!members_[g].empty()) r.push_back(g);
    }
    return r;
  }
  int32_t count() const { return static_cast<int32_t>(ids().size()); }
  void Set(int32_t i, int32_t g) {
    Remove(i);
    if (g < 0) return;
    of_[i] = g;
    if (g >= static_cast<int32_t>(members_.size())) members_.resize(g + 1);
    std::vector<int32_t>& m = members_[g];
    m.insert(std::upper_bound(m.begin(), m.end(), i), i);
    max_id_ = std::max(max_id_, g);
  }
  // Moves all members of `from` into `to` (kept sorted).
  void MergeInto(int32_t from, int32_t to) {
    if (from == to) return;
    std::vector<int32_t> moving;
    moving.swap(members_[from]);
    for (int32_t i : moving) of_[i] = to;
    if (to >= static_cast<int32_t>(members_.size())) members_.resize(to + 1);
    std::vector<int32_t> merged;
    merged.reserve(moving.size() + members_[to].size());
    std::merge(moving.begin(), moving.end(), members_[to].begin(), members_[to].end(),
               std::back_inserter(merged));
    members_[to].swap(merged);
    max_id_ = std::max(max_id_, to);
  }

 private:
  void Remove(int32_t i) {
    const int32_t g = of_[i];
    if (g < 0) return;
    std::vector<int32_t>& m = members_[g];
    m.erase(std::lower_bound(m.begin(), m.end(), i));
    of_[i] = -1;
  }
  std::vector<int32_t> of_;
  std::vector<std::vector<int32_t>> members_;
  int32_t max_id_ = 0;
};

// Position of any node as CT's MetaNetlist has it (macro pins: placed on their macro).
void NodeXY(const Netlist& nl, int32_t i, double* x, double* y) {
  if (nl.parent[i] >= 0) {
    PinPosition(nl, nl.x.data(), nl.y.data(), nl.orientation.data(), i, x, y);
  } else {
    *x = nl.x[i];
    *y = nl.y[i];
  }
}

// CT group_coordinates: area-weighted centre of the group's standard cells, (0, 0) if none.
std::pair<double, double> GroupCentre(const Netlist& nl, const Groups& gr, int32_t g) {
  double sx = 0, sy = 0, a = 0;
  for (int32_t i : gr.members(g)) {
    if (nl.type[i] != NodeType::kStdCell) continue;
    const double ai = nl.width[i] * nl.height[i];
    sx += nl.x[i] * ai;
    sy += nl.y[i] * ai;
    a += ai;
  }
  if (a < 1e-9) return {0.0, 0.0};
  return {sx / a, sy / a};
}

// CT get_side: the canvas split by its two diagonals. 0 TOP, 1 RIGHT, 2 BOTTOM, 3 LEFT.
int PortSide(double x, double y, double w, double h) {
  const double mx = x * h / w;
  if (y > mx) return y > h - mx ? 0 : 3;
  return y > h - mx ? 1 : 2;
}

void SetupFixedGroups(const Netlist& nl, const FanoutGraph& g, const GroupingOptions& opt,
                      const MetisGroupingOptions& mopt, Groups* gr) {
  int32_t group_index = 0;
  for (int32_t m : nl.hard_macros) {
    bool has_pins = false;
    for (int32_t j = nl.macro_pin_start[m]; j < nl.macro_pin_start[m + 1]; ++j) {
      gr->Set(nl.macro_pins[j], group_index);
      has_pins = true;
    }
    if (has_pins) ++group_index;
  }
  // Ports: per side sorted by the coordinate along the side; a new group starts whenever a
  // port is more than one grid cell away from the first port of the current group.
  std::vector<std::pair<double, int32_t>> side_ports[4];
  for (int32_t p : nl.ports) {
    const int s = PortSide(nl.x[p], nl.y[p], opt.canvas_width, mopt.canvas_height);
    side_ports[s].push_back({(s == 1 || s == 3) ? nl.y[p] : nl.x[p], p});
  }
  for (int s = 0; s < 4; ++s) {
    if (s > 0 && !side_ports[s - 1].empty()) ++group_index;
    auto& v = side_ports[s];
    if (v.empty()) continue;
    const double distance = (s == 1 || s == 3) ? mopt.canvas_height / mopt.rows : opt.canvas_width / opt.cols;
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double last = v.front().first;
    for (const auto& [c, p] : v) {
      if (c - last > distance) {
        ++group_index;
        last = c;
      }
      gr->Set(p, group_index);
    }
  }
  // Pull standard cells one level of logic (fan-out and fan-in) into the groups per level;
  // first come (ascending node index of the grouped node) first served.
  for (int level = 0; level < mopt.fixed_logic_levels; ++level) {
    std::vector<std::pair<int32_t, int32_t>> initial;
    for (int32_t i = 0; i < nl.num_nodes(); ++i) {
      if (gr->of(i) >= 0) initial.push_back({i, gr->of(i)});
    }
    auto take = [&](int32_t j, int32_t grp) {
      if (gr->of(j) >= 0 || nl.type[j] != NodeType::kStdCell) return;
      gr->Set(j, grp);
    };
    for (const auto& [i, grp] : initial) {
      for (int32_t j = g.out_start[i]; j < g.out_start[i + 1]; ++j) take(g.out[j], grp);
      for (int32_t j = g.in_start[i]; j < g.in_start[i + 1]; ++j) take(g.in[j], grp);
    }
  }
}

// CT x_bucket / y_bucket: which slice of width `cut` around the centre a coordinate is in.
int Bucket(double v, double lo, double hi, double cut, double centre) {
  if (hi - lo < cut) return 0;
  if (v > centre) return static_cast<int>(0.5 + (v - centre) / cut);
  return static_cast<int>(-0.5 + (v - centre) / cut);
}

void BreakupGroups(const Netlist& nl, double threshold, Groups* gr) {
  for (int32_t grp : gr->ids()) {
    double minx = 1e10, miny = 1e10, maxx = -1e10, maxy = -1e10;
    for (int32_t i : gr->members(grp)) {
      double x, y;
      NodeXY(nl, i, &x, &y);
      minx = std::min(minx, x);
      maxx = std::max(maxx, x);
      miny = std::min(miny, y);
      maxy = std::max(maxy, y);
    }
    if (!(maxx - minx > threshold || maxy - miny > threshold)) continue;
    const auto [cx, cy] = GroupCentre(nl, *gr, grp);
    std::map<std::pair<int, int>, int32_t> bucket_group;
    const std::vector<int32_t> copy = gr->members(grp);
    for (int32_t i : copy) {
      double x, y;
      NodeXY(nl, i, &x, &y);
      const int xb = Bucket(x, minx, maxx, threshold, cx), yb = Bucket(y, miny, maxy, threshold, cy);
      if (xb == 0 && yb == 0) continue;
      auto it = bucket_group.find({xb, yb});
      if (it == bucket_group.end()) it = bucket_group.emplace(std::make_pair(xb, yb), gr->max_id() + 1).first;
      gr->Set(i, it->second);
    }
  }
}

// One pass of CT merge_small_adj_close_groups; true when nothing more can merge.
bool MergeSmallGroups(const Netlist& nl, const FanoutGraph& g, int32_t max_nodes, double distance,
                      Groups* gr) {
  const int32_t total = gr->max_id() + 1;
  // Group adjacency: every grouped driver adds 1 between each pair of groups its net touches.
  std::vector<int32_t> adj(static_cast<size_t>(total) * total, 0);
  std::vector<int32_t> in_net;
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    const int32_t gi = gr->of(i);
    if (gi < 0) continue;
    in_net.assign(1, gi);
    for (int32_t j = g.out_start[i]; j < g.out_start[i + 1]; ++j) {
      const int32_t go = gr->of(g.out[j]);
      if (go >= 0) in_net.push_back(go);
    }
    std::sort(in_net.begin(), in_net.end());
    in_net.erase(std::unique(in_net.begin(), in_net.end()), in_net.end());
    for (int32_t a : in_net) {
      for (int32_t b : in_net) {
        if (a != b) ++adj[static_cast<size_t>(a) * total + b];
      }
    }
  }
  const std::vector<int32_t> ids = gr->ids();
  std::vector<std::pair<double, double>> centre(total, {0.0, 0.0});
  for (int32_t id : ids) centre[id] = GroupCentre(nl, *gr, id);
  bool finished = true;
  for (int32_t id : ids) {
    const auto& mem = gr->members(id);
    if (mem.empty() || static_cast<int32_t>(mem.size()) > max_nodes) continue;
    int32_t best = -1, best_adj = 0;
    for (int32_t i = 0; i < total; ++i) {
      const int32_t a = adj[static_cast<size_t>(i) * total + id];
      if (i == id || a == 0) continue;
      const double d = std::abs(centre[i].first - centre[id].first) + std::abs(centre[i].second - centre[id].second);
      if (d <= distance && best_adj < a) {
        best_adj = a;
        best = i;
      }
    }
    if (best < 0) continue;
    gr->MergeInto(id, best);
    if (static_cast<int32_t>(gr->members(best).size()) <= max_nodes) finished = false;
  }
  return finished;
}

}  // namespace

std::vector<int32_t> MetisGroups(const Netlist& flat, const GroupingOptions& options,
                                 const MetisGroupingOptions& metis, MetisGroupingReport* report) {
  if (!(options.canvas_width > 0) || options.cols <= 0 || !(metis.canvas_height > 0) || metis.rows <= 0) {
    throw ConfigError("METIS grouping: canvas width/height and grid columns/rows are needed");
  }
  if (metis.num_groups < 1) throw ConfigError("METIS grouping: the number of groups must be at least 1");
  if (!(metis.imbalance >= 0) || metis.imbalance > 10) throw ConfigError("METIS grouping: imbalance must be in [0, 10]");
  const int32_t n = flat.num_nodes();
  const FanoutGraph g = BuildFanoutGraph(flat, options.max_fanout);
  MetisGroupingReport rep;
  Groups gr(n);
  SetupFixedGroups(flat, g, options, metis, &gr);
  rep.fixed_groups = gr.count();
  const int32_t first_free_group = gr.ids().empty() ? 0 : gr.max_id() + 1;

  // Free standard cells → METIS vertices.
  std::vector<int32_t> vertex_of(n, -1), cells;
  for (int32_t i : flat.stdcells) {
    if (gr.of(i) >= 0) {
      ++rep.fixed_stdcells;
      continue;
    }
    vertex_of[i] = static_cast<int32_t>(cells.size());
    cells.push_back(i);
  }
  rep.free_stdcells = static_cast<int32_t>(cells.size());
  const idx_t n_free = static_cast<idx_t>(cells.size());
  // As hMETIS sees the fixed vertices (their nets pull free cells towards them), each fixed
  // group takes part as one vertex weighing its member count.
  std::vector<idx_t> vwgt(cells.size(), 1);
  int32_t supers = 0;
  if (metis.fixed_group_vertices && n_free > 0) {
    for (int32_t id : gr.ids()) {
      if (id >= first_free_group) continue;
      for (int32_t i : gr.members(id)) vertex_of[i] = static_cast<int32_t>(n_free + supers);
      vwgt.push_back(static_cast<idx_t>(gr.members(id).size()));
      ++supers;
    }
  }
  const idx_t nv = n_free + supers;
  if (n_free > 0) {
    // Clique model of each net restricted to free cells, weight ~ 1/(pins−1) (integers for
    // METIS), parallel edges summed.
    std::vector<std::pair<int64_t, int32_t>> edges;  // (u·nv + v, w), u != v
    std::vector<int32_t> pins;
    for (int32_t d = 0; d < n; ++d) {
      pins.clear();
      if (vertex_of[d] >= 0) pins.push_back(vertex_of[d]);
      for (int32_t j = g.out_start[d]; j < g.out_start[d + 1]; ++j) {
        if (vertex_of[g.out[j]] >= 0) pins.push_back(vertex_of[g.out[j]]);
      }
      std::sort(pins.begin(), pins.end());
      pins.erase(std::unique(pins.begin(), pins.end()), pins.end());
      const int32_t s = static_cast<int32_t>(pins.size());
      if (s < 2 || s > metis.max_clique_pins) continue;
      const int32_t w = std::max(1, static_cast<int32_t>(std::lround(12.0 / (s - 1))));
      for (int32_t a = 0; a < s; ++a) {
        for (int32_t b = 0; b < s; ++b) {
          if (a != b) edges.push_back({static_cast<int64_t>(pins[a]) * nv + pins[b], w});
        }
      }
    }
    std::sort(edges.begin(), edges.end());
    std::vector<idx_t> xadj(nv + 1, 0), adjncy, adjwgt;
    for (size_t e = 0; e < edges.size();) {
      size_t f = e;
      int64_t w = 0;
      while (f < edges.size() && edges[f].first == edges[e].first) w += edges[f++].second;
      const idx_t u = static_cast<idx_t>(edges[e].first / nv), v = static_cast<idx_t>(edges[e].first % nv);
      adjncy.push_back(v);
      adjwgt.push_back(static_cast<idx_t>(std::min<int64_t>(w, std::numeric_limits<idx_t>::max() / 4)));
      ++xadj[u + 1];
      e = f;
    }
    for (idx_t i = 0; i < nv; ++i) xadj[i + 1] += xadj[i];
    rep.graph_edges = static_cast<int64_t>(adjncy.size()) / 2;
    idx_t nparts = std::min<idx_t>(metis.num_groups + supers, nv);
    rep.metis_parts = static_cast<int32_t>(nparts);
    std::vector<idx_t> part(nv, 0);
    if (nparts > 1) {
      idx_t ncon = 1, objval = 0;
      real_t ubvec = static_cast<real_t>(1.0 + metis.imbalance);
      idx_t opts[METIS_NOPTIONS];
      METIS_SetDefaultOptions(opts);
      opts[METIS_OPTION_SEED] = metis.seed;
      opts[METIS_OPTION_NUMBERING] = 0;
      idx_t nvtxs = nv;
      const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(),
                                         vwgt.data(), nullptr, adjncy.empty() ? nullptr : adjwgt.data(), &nparts,
                                         nullptr, &ubvec, opts, &objval, part.data());
      if (rc != METIS_OK) throw ConfigError("METIS grouping: METIS_PartGraphKway failed (code " + std::to_string(rc) + ")");
      rep.metis_edgecut = objval;
    }
    for (idx_t v = 0; v < n_free; ++v) gr.Set(cells[v], first_free_group + static_cast<int32_t>(part[v]));
  }

  if (metis.breakup) {
    // CT: cut groups spanning more than a quarter of the (square-equivalent) canvas side,
    // then merge groups of fewer than a quarter of the average size into the most connected
    // group within half that distance.
    const double threshold = std::sqrt(options.canvas_width * metis.canvas_height / 16.0);
    BreakupGroups(flat, threshold, &gr);
    rep.groups_after_breakup = gr.count();
    const int32_t merge_threshold = rep.groups_after_breakup > 0 ? n / rep.groups_after_breakup / 4 : 0;
    if (merge_threshold > 0) {
      while (!MergeSmallGroups(flat, g, merge_threshold, threshold / 2.0, &gr)) {
      }
    }
  } else {
    rep.groups_after_breakup = gr.count();
  }
  rep.groups_final = gr.count();
  if (report) *report = rep;
  return gr.assignment();
}

}  // namespace placerl::chip

// ---------------------------------------------------------------- grid selection

namespace placerl::chip {

namespace {

// CT get_span_and_extra_piece: a segment centred on a cell spans an odd number of cells;
// returns that span and the length it occupies in its last cell.
std::pair<int, double> SpanAndExtraPiece(double seg, double cell) {
  int span = -1;
  double extra_space = -1.0;
  for (int i = 0; extra_space < 0.0; ++i) {
    span = 2 * i + 1;
    extra_space = (span * cell - seg) / 2.0;
  }
  return {span, cell - extra_space};
}

// CT get_waste_ratio: segments laid side by side, each centred on a cell, neighbours
// sharing a cell when their end pieces fit; the unused share of the spanned length.
double WasteRatio(const std::vector<double>& segs, double cell) {
  double total = 0;
  for (double s : segs) total += s;
  int index = 0;
  double prev_extra = 0.0;
  for (double s : segs) {
    const auto [span, extra] = SpanAndExtraPiece(s, cell);
    const bool fit_in_one = extra + prev_extra <= cell;
    index += span;
    if (fit_in_one) index -= 1;
    prev_extra = extra;
  }
  const double spanned = (index + 1) * cell;
  return (spanned - total) / spanned;
}

struct Box {
  double xmin, ymin, xmax, ymax;
};

// Places the macros (sizes w, h in order) at the first free cell centre, row-major; fills
// `density` (macro area per cell / cell area). False if one does not fit.
bool PackMacros(const std::vector<double>& w, const std::vector<double>& h, double W, double H, int cols, int rows,
                std::vector<double>* density) {
  const double gw = W / cols, gh = H / rows;
  const double eps = 1e-9;
  std::vector<std::vector<int32_t>> in_cell(static_cast<size_t>(cols) * rows);
  std::vector<Box> placed;
  placed.reserve(w.size());
  density->assign(static_cast<size_t>(cols) * rows, 0.0);
  auto cell_range = [&](const Box& b, int* c0, int* c1, int* r0, int* r1) {
    *c0 = std::max(0, static_cast<int>(std::floor(b.xmin / gw)));
    *c1 = std::min(cols - 1, static_cast<int>(std::floor(b.xmax / gw)));
    *r0 = std::max(0, static_cast<int>(std::floor(b.ymin / gh)));
    *r1 = std::min(rows - 1, static_cast<int>(std::floor(b.ymax / gh)));
  };
  int start = 0;
  for (size_t m = 0; m < w.size(); ++m) {
    // Same size as the previous macro: the positions before the previous one stay blocked.
    if (m == 0 || w[m] != w[m - 1] || h[m] != h[m - 1]) start = 0;
    int found = -1;
    for (int idx = start; idx < cols * rows && found < 0; ++idx) {
      const int r = idx / cols, c = idx % cols;
      const double cx = (c + 0.5) * gw, cy = (r + 0.5) * gh;
      const Box b{cx - w[m] / 2, cy - h[m] / 2, cx + w[m] / 2, cy + h[m] / 2};
      if (b.xmin < -eps || b.ymin < -eps || b.xmax > W + eps || b.ymax > H + eps) continue;
      int c0, c1, r0, r1;
      cell_range(b, &c0, &c1, &r0, &r1);
      bool free = true;
      for (int rr = r0; rr <= r1 && free; ++rr) {
        for (int cc = c0; cc <= c1 && free; ++cc) {
          for (int32_t p : in_cell[static_cast<size_t>(rr) * cols + cc]) {
            const Box& o = placed[p];
            if (b.xmin < o.xmax - eps && o.xmin < b.xmax - eps && b.ymin < o.ymax - eps && o.ymin < b.ymax - eps) {
              free = false;
              break;
            }
          }
        }
      }
      if (free) found = idx;
    }
    if (found < 0) return false;
    start = found;
    const int r = found / cols, c = found % cols;
    const double cx = (c + 0.5) * gw, cy = (r + 0.5) * gh;
    const Box b{cx - w[m] / 2, cy - h[m] / 2, cx + w[m] / 2, cy + h[m] / 2};
    int c0, c1, r0, r1;
    cell_range(b, &c0, &c1, &r0, &r1);
    for (int rr = r0; rr <= r1; ++rr) {
      for (int cc = c0; cc <= c1; ++cc) {
        in_cell[static_cast<size_t>(rr) * cols + cc].push_back(static_cast<int32_t>(placed.size()));
        const double ox = std::min(b.xmax, (cc + 1) * gw) - std::max(b.xmin, cc * gw);
        const double oy = std::min(b.ymax, (rr + 1) * gh) - std::max(b.ymin, rr * gh);
        if (ox > 0 && oy > 0) (*density)[static_cast<size_t>(rr) * cols + cc] += ox * oy / (gw * gh);
      }
    }
    placed.push_back(b);
  }
  return true;
}

}  // namespace

std::optional<GridChoice> SelectGrid(const Netlist& nl, double canvas_width, double canvas_height,
                                     const GridSelectionOptions& o) {
  if (!(canvas_width > 0 && canvas_height > 0)) throw ConfigError("grid selection: the canvas is not set");
  // Movable hard macros (fixed ones are left out, as CT does by default).
  std::vector<int32_t> macros;
  for (int32_t m : nl.hard_macros) {
    if (!nl.fixed[m]) macros.push_back(m);
  }
  if (macros.empty()) return std::nullopt;
  std::vector<double> widths, heights;  // node order (CT get_macro_widths_heights)
  for (int32_t m : macros) {
    widths.push_back(nl.width[m] + o.macro_spacing_x);
    heights.push_back(nl.height[m] + o.macro_spacing_y);
  }
  // Packing order: descending area, stable.
  std::vector<int32_t> order(macros.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return nl.width[macros[a]] * nl.height[macros[a]] > nl.width[macros[b]] * nl.height[macros[b]];
  });
  std::vector<double> pw, ph;
  for (int32_t i : order) {
    pw.push_back(nl.width[macros[i]]);
    ph.push_back(nl.height[macros[i]]);
  }
  std::vector<GridChoice> choices;
  std::map<int, double> hor_waste, ver_waste;
  std::vector<double> density;
  for (int rows = o.min_num; rows < o.max_num; ++rows) {
    for (int cols = o.min_num; cols < o.max_num; ++cols) {
      const double gw = canvas_width / cols, gh = canvas_height / rows;
      const int cells = cols * rows;
      if (rows > o.max_grid_size || cols > o.max_grid_size) continue;
      if (cells > o.max_cells || cells < o.min_cells) continue;
      if ((gw > gh ? gw / gh : gh / gw) > o.max_aspect_ratio) continue;
      if (!PackMacros(pw, ph, canvas_width, canvas_height, cols, rows, &density)) continue;
      if (!hor_waste.count(cols)) hor_waste[cols] = WasteRatio(widths, gw);
      if (!ver_waste.count(rows)) ver_waste[rows] = WasteRatio(heights, gh);
      GridChoice c;
      c.cols = cols;
      c.rows = rows;
      int empty = 0;
      for (double d : density) empty += d < 1e-5;
      c.empty_ratio = static_cast<double>(empty) / cells;
      c.hor_waste = hor_waste[cols];
      c.ver_waste = ver_waste[rows];
      c.key_metric = c.empty_ratio + (1.0 - c.hor_waste) + (1.0 - c.ver_waste);
      choices.push_back(c);
    }
  }
  if (choices.empty()) return std::nullopt;
  std::stable_sort(choices.begin(), choices.end(),
                   [](const GridChoice& a, const GridChoice& b) { return a.key_metric > b.key_metric; });
  const double threshold = choices.front().key_metric * (1.0 - o.tolerance);
  const GridChoice* best = nullptr;
  for (const GridChoice& c : choices) {
    if (c.key_metric < threshold) continue;
    if (!best || c.key_metric / (c.cols * c.rows) > best->key_metric / (best->cols * best->rows)) best = &c;
  }
  GridChoice r = *best;
  r.candidates = static_cast<int32_t>(choices.size());
  return r;
}

}  // namespace placerl::chip
