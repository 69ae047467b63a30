// The in-memory chip netlist shared by every reader (Circuit Training protobuf text,
// Bookshelf), the proxy cost, the renderer and the chip environment. Flat arrays indexed
// by node (node index = 0-based order of `node` blocks in the file, `__metadata__`
// excluded, as Circuit Training numbers them); nets in CSR form (DREAMPlace style).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace placerl::chip {

enum class NodeType : uint8_t {
  kPort,
  kHardMacro,
  kSoftMacro,      // a standard-cell cluster produced by grouping ("Grp_*")
  kHardMacroPin,
  kSoftMacroPin,
  kStdCell,
};
const char* NodeTypeName(NodeType t);  // "PORT", "HARD_MACRO", ...

// Macro orientations of LEF/DEF. Offsets in the netlist are given for N.
enum class Orientation : uint8_t { kN, kFN, kS, kFS, kE, kFE, kW, kFW };
const char* OrientationName(Orientation o);                // "N", "FN", ...
bool ParseOrientation(const std::string& s, Orientation* o);  // false if unknown

// Rotates/flips an N-orientation pin offset (dx, dy) into orientation `o`.
inline void OrientOffset(Orientation o, double dx, double dy, double* ox, double* oy) {
  switch (o) {
    case Orientation::kN: *ox = dx; *oy = dy; break;
    case Orientation::kFN: *ox = -dx; *oy = dy; break;
    case Orientation::kS: *ox = -dx; *oy = -dy; break;
    case Orientation::kFS: *ox = dx; *oy = -dy; break;
    case Orientation::kE: *ox = dy; *oy = -dx; break;
    case Orientation::kFE: *ox = -dy; *oy = -dx; break;
    case Orientation::kW: *ox = -dy; *oy = dx; break;
    case Orientation::kFW: *ox = dy; *oy = dx; break;
  }
}

enum class Side : uint8_t { kNone, kLeft, kRight, kTop, kBottom };
const char* SideName(Side s);

struct Netlist {
  // ---- nodes (size = num_nodes()) ----
  std::vector<std::string> name;
  std::vector<NodeType> type;
  std::vector<double> x, y;            // centre in microns (pins: the file's x/y, informational)
  std::vector<double> width, height;   // 0 for ports and pins
  std::vector<Orientation> orientation;
  std::vector<double> weight;          // `weight` attribute, 1 when absent
  std::vector<int32_t> parent;         // pins: index of their macro; others: -1
  std::vector<double> pin_dx, pin_dy;  // pins: offset from the macro centre in orientation N
  std::vector<Side> side;              // ports
  std::vector<uint8_t> fixed;          // 1 = must not move (ports after a .plc is read)

  // ---- nets: one per driver that has at least one input (sink) ----
  // pins of net k: net_pins[net_start[k] .. net_start[k+1]), the driver first.
  // A "pin" is a port, a macro pin or a standard cell.
  std::vector<int32_t> net_start{0};
  std::vector<int32_t> net_pins;
  std::vector<double> net_weight;  // multiplies the net's HPWL and its count (ports: 1)

  // ---- derived index lists (ascending node index) ----
  std::vector<int32_t> ports, hard_macros, soft_macros, stdcells, macros /*hard+soft*/;
  // pins of each macro, CSR over node index: pins of macro m are
  // macro_pins[macro_pin_start[m] .. macro_pin_start[m+1]) (empty for non-macros).
  std::vector<int32_t> macro_pin_start;
  std::vector<int32_t> macro_pins;
  // nets touching each node (through itself or its pins), CSR over node index, no duplicates.
  std::vector<int32_t> node_net_start;
  std::vector<int32_t> node_nets;

  std::unordered_map<std::string, int32_t> index_of;
  std::unordered_map<std::string, double> metadata;  // attrs of the `__metadata__` node
  std::vector<std::string> sources;                  // files it was read from

  int32_t num_nodes() const { return static_cast<int32_t>(name.size()); }
  int32_t num_nets() const { return static_cast<int32_t>(net_weight.size()); }
  bool is_macro(int32_t i) const {
    return type[i] == NodeType::kHardMacro || type[i] == NodeType::kSoftMacro;
  }
  bool is_pin(int32_t i) const {
    return type[i] == NodeType::kPort || type[i] == NodeType::kHardMacroPin ||
           type[i] == NodeType::kSoftMacroPin || type[i] == NodeType::kStdCell;
  }
  // Area of hard macros + soft macros + standard cells (the "Area" of a .plc header).
  double TotalArea() const;
  // Counts for the .plc header.
  int32_t CountType(NodeType t) const;

  // Appends a node and returns its index (builders: readers, generators, tests).
  int32_t AddNode(const std::string& node_name, NodeType t);
  // Recomputes the derived lists from name/type/parent/net arrays; checks them and throws
  // ConfigError on an inconsistency (a pin without a macro, a net pin out of range, ...).
  void Finalize();
};

// Position of a pin (port, macro pin, standard cell) given node centres `nx, ny` and
// orientations: a macro pin sits at its macro's centre plus its oriented offset.
inline void PinPosition(const Netlist& nl, const double* nx, const double* ny,
                        const Orientation* orient, int32_t pin, double* px, double* py) {
  const int32_t m = nl.parent[pin];
  if (m < 0) {
    *px = nx[pin];
    *py = ny[pin];
    return;
  }
  double ox = 0, oy = 0;
  OrientOffset(orient[m], nl.pin_dx[pin], nl.pin_dy[pin], &ox, &oy);
  *px = nx[m] + ox;
  *py = ny[m] + oy;
}

// Reads a Circuit Training netlist (`netlist.pb.txt`, text-format tensorflow.GraphDef),
// plain or gzipped; `paths` may list several files separated by commas (a netlist split
// into shards). Throws ParseError("file:line: reason") on malformed input.
Netlist ReadNetlist(const std::string& paths);
// Same, from text already in memory (`file_label` is used in error messages).
Netlist ParseNetlistText(const std::string& text, const std::string& file_label);

// Writes `nl` (at its current x/y/orientation) as a Circuit Training netlist.pb.txt.
std::string NetlistToText(const Netlist& nl);
void WriteNetlist(const Netlist& nl, const std::string& path);

}  // namespace placerl::chip
