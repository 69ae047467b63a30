// Netlist helpers: names of enums, derived index lists (Finalize), the netlist writer.
#include "datasets/chip/netlist.h"

#include <charconv>
#include <cmath>
#include <map>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {

const char* NodeTypeName(NodeType t) {
  switch (t) {
    case NodeType::kPort: return "PORT";
    case NodeType::kHardMacro: return "HARD_MACRO";
    case NodeType::kSoftMacro: return "SOFT_MACRO";
    case NodeType::kHardMacroPin: return "HARD_MACRO_PIN";
    case NodeType::kSoftMacroPin: return "SOFT_MACRO_PIN";
    case NodeType::kStdCell: return "STDCELL";
  }
  return "?";
}

static const char* const kOrientNames[] = {"N", "FN", "S", "FS", "E", "FE", "W", "FW"};

const char* OrientationName(Orientation o) { return kOrientNames[static_cast<int>(o)]; }

bool ParseOrientation(const std::string& s, Orientation* o) {
  for (int i = 0; i < 8; ++i) {
    if (s == kOrientNames[i]) {
      *o = static_cast<Orientation>(i);
      return true;
    }
  }
  return false;
}

const char* SideName(Side s) {
  switch (s) {
    case Side::kNone: return "";
    case Side::kLeft: return "LEFT";
    case Side::kRight: return "RIGHT";
    case Side::kTop: return "TOP";
    case Side::kBottom: return "BOTTOM";
  }
  return "";
}

double Netlist::TotalArea() const {
  double a = 0;
  for (int32_t i = 0; i < num_nodes(); ++i) {
    if (type[i] == NodeType::kHardMacro || type[i] == NodeType::kSoftMacro ||
        type[i] == NodeType::kStdCell) {
      a += width[i] * height[i];
    }
  }
  return a;
}

int32_t Netlist::CountType(NodeType t) const {
  int32_t n = 0;
  for (NodeType u : type) n += (u == t);
  return n;
}

int32_t Netlist::AddNode(const std::string& node_name, NodeType t) {
  const int32_t i = num_nodes();
  name.push_back(node_name);
  type.push_back(t);
  x.push_back(0);
  y.push_back(0);
  width.push_back(0);
  height.push_back(0);
  orientation.push_back(Orientation::kN);
  weight.push_back(1.0);
  parent.push_back(-1);
  pin_dx.push_back(0);
  pin_dy.push_back(0);
  side.push_back(Side::kNone);
  fixed.push_back(t == NodeType::kPort ? 1 : 0);
  index_of.emplace(node_name, i);
  return i;
}

void Netlist::Finalize() {
  const int32_t n = num_nodes();
  const auto sizes_ok = [&](const auto& v) { return static_cast<int32_t>(v.size()) == n; };
  if (!sizes_ok(type) || !sizes_ok(x) || !sizes_ok(y) || !sizes_ok(width) || !sizes_ok(height) ||
      !sizes_ok(orientation) || !sizes_ok(weight) || !sizes_ok(parent) || !sizes_ok(pin_dx) ||
      !sizes_ok(pin_dy) || !sizes_ok(side) || !sizes_ok(fixed)) {
    throw ConfigError("netlist: per-node arrays have different sizes");
  }
  if (net_start.empty() || net_start.front() != 0 ||
      static_cast<size_t>(net_start.back()) != net_pins.size() ||
      net_start.size() != net_weight.size() + 1) {
    throw ConfigError("netlist: net CSR arrays are inconsistent");
  }
  if (index_of.size() != static_cast<size_t>(n)) {
    index_of.clear();
    for (int32_t i = 0; i < n; ++i) index_of.emplace(name[i], i);
  }
  ports.clear(); hard_macros.clear(); soft_macros.clear(); stdcells.clear(); macros.clear();
  for (int32_t i = 0; i < n; ++i) {
    switch (type[i]) {
      case NodeType::kPort: ports.push_back(i); break;
      case NodeType::kHardMacro: hard_macros.push_back(i); macros.push_back(i); break;
      case NodeType::kSoftMacro: soft_macros.push_back(i); macros.push_back(i); break;
      case NodeType::kStdCell: stdcells.push_back(i); break;
      case NodeType::kHardMacroPin:
      case NodeType::kSoftMacroPin: {
        const int32_t p = parent[i];
        if (p < 0 || p >= n || !is_macro(p)) {
          throw ConfigError("netlist: pin '" + name[i] + "' has no macro");
        }
        break;
      }
    }
    if (!(std::isfinite(width[i]) && std::isfinite(height[i]) && width[i] >= 0 && height[i] >= 0)) {
      throw ConfigError("netlist: node '" + name[i] + "' has an invalid size");
    }
  }
  // Pins of each macro.
  macro_pin_start.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    if (parent[i] >= 0) macro_pin_start[parent[i] + 1]++;
  }
  for (int32_t i = 0; i < n; ++i) macro_pin_start[i + 1] += macro_pin_start[i];
  macro_pins.assign(macro_pin_start[n], 0);
  {
    std::vector<int32_t> fill(macro_pin_start.begin(), macro_pin_start.end() - 1);
    for (int32_t i = 0; i < n; ++i) {
      if (parent[i] >= 0) macro_pins[fill[parent[i]]++] = i;
    }
  }
  // Nets touching each node, directly or through its pins (no duplicates).
  const int32_t nn = num_nets();
  std::vector<int32_t> stamp(n, -1);
  std::vector<int32_t> count(n + 1, 0);
  auto owner_of = [&](int32_t pin) { return parent[pin] >= 0 ? parent[pin] : pin; };
  for (int32_t k = 0; k < nn; ++k) {
    for (int32_t j = net_start[k]; j < net_start[k + 1]; ++j) {
      const int32_t p = net_pins[j];
      if (p < 0 || p >= n) throw ConfigError("netlist: net pin index out of range");
      for (int32_t who : {p, owner_of(p)}) {
        if (stamp[who] != k) {
          stamp[who] = k;
          count[who + 1]++;
        }
      }
    }
  }
  node_net_start.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) node_net_start[i + 1] = node_net_start[i] + count[i + 1];
  node_nets.assign(node_net_start[n], 0);
  std::vector<int32_t> fill(node_net_start.begin(), node_net_start.end() - 1);
  std::fill(stamp.begin(), stamp.end(), -1);
  for (int32_t k = 0; k < nn; ++k) {
    for (int32_t j = net_start[k]; j < net_start[k + 1]; ++j) {
      const int32_t p = net_pins[j];
      for (int32_t who : {p, owner_of(p)}) {
        if (stamp[who] != k) {
          stamp[who] = k;
          node_nets[fill[who]++] = k;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Writer

namespace {

void AppendNumber(std::string* out, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void AppendString(std::string* out, const std::string& s) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

void AttrF(std::string* out, const char* key, double v) {
  out->append("  attr {\n    key: \"").append(key).append("\"\n    value {\n      f: ");
  AppendNumber(out, v);
  out->append("\n    }\n  }\n");
}

void AttrS(std::string* out, const char* key, const std::string& v) {
  out->append("  attr {\n    key: \"").append(key).append("\"\n    value {\n      placeholder: ");
  AppendString(out, v);
  out->append("\n    }\n  }\n");
}

}  // namespace

std::string NetlistToText(const Netlist& nl) {
  std::string out;
  out.reserve(static_cast<size_t>(nl.num_nodes()) * 300);
  out.append("# proto-file: tensorflow/core/framework/graph.proto\n");
  out.append("# proto-message: tensorflow.GraphDef\n");
  if (!nl.metadata.empty()) {
    out.append("node {\n  name: \"__metadata__\"\n");
    std::map<std::string, double> sorted(nl.metadata.begin(), nl.metadata.end());
    for (const auto& [k, v] : sorted) AttrF(&out, k.c_str(), v);
    out.append("}\n");
  }
  // Sinks of each driver, in net order.
  std::vector<int32_t> net_of_driver(nl.num_nodes(), -1);
  for (int32_t k = 0; k < nl.num_nets(); ++k) net_of_driver[nl.net_pins[nl.net_start[k]]] = k;
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    out.append("node {\n  name: ");
    AppendString(&out, nl.name[i]);
    out.push_back('\n');
    if (const int32_t k = net_of_driver[i]; k >= 0) {
      for (int32_t j = nl.net_start[k] + 1; j < nl.net_start[k + 1]; ++j) {
        out.append("  input: ");
        AppendString(&out, nl.name[nl.net_pins[j]]);
        out.push_back('\n');
      }
    }
    const NodeType t = nl.type[i];
    const bool pin = t == NodeType::kHardMacroPin || t == NodeType::kSoftMacroPin;
    double px = nl.x[i], py = nl.y[i];
    if (pin) PinPosition(nl, nl.x.data(), nl.y.data(), nl.orientation.data(), i, &px, &py);
    if (t == NodeType::kHardMacro || t == NodeType::kSoftMacro || t == NodeType::kStdCell) {
      AttrF(&out, "height", nl.height[i]);
    }
    if (pin) AttrS(&out, "macro_name", nl.name[nl.parent[i]]);
    if (t == NodeType::kHardMacro || t == NodeType::kSoftMacro) {
      AttrS(&out, "orientation", OrientationName(nl.orientation[i]));
    }
    if (t == NodeType::kPort && nl.side[i] != Side::kNone) AttrS(&out, "side", SideName(nl.side[i]));
    const char* type_name = "PORT";
    switch (t) {
      case NodeType::kPort: type_name = "PORT"; break;
      case NodeType::kHardMacro: type_name = "MACRO"; break;
      case NodeType::kSoftMacro: type_name = "macro"; break;
      case NodeType::kHardMacroPin: type_name = "MACRO_PIN"; break;
      case NodeType::kSoftMacroPin: type_name = "macro_pin"; break;
      case NodeType::kStdCell: type_name = "STDCELL"; break;
    }
    AttrS(&out, "type", type_name);
    if (nl.weight[i] != 1.0) AttrF(&out, "weight", nl.weight[i]);
    if (t == NodeType::kHardMacro || t == NodeType::kSoftMacro || t == NodeType::kStdCell) {
      AttrF(&out, "width", nl.width[i]);
    }
    AttrF(&out, "x", px);
    if (pin) AttrF(&out, "x_offset", nl.pin_dx[i]);
    AttrF(&out, "y", py);
    if (pin) AttrF(&out, "y_offset", nl.pin_dy[i]);
    out.append("}\n");
  }
  return out;
}

void WriteNetlist(const Netlist& nl, const std::string& path) {
  WriteFileAtomic(path, NetlistToText(nl));
}

}  // namespace placerl::chip
