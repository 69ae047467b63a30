// .plc reader and writer (Circuit Training layout) and the default placement settings.
#include "datasets/chip/plc.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/warnings.h"

namespace placerl::chip {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> w;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == ':' || line[i] == ',')) ++i;
    size_t j = i;
    while (j < line.size() && !(line[j] == ' ' || line[j] == '\t' || line[j] == '\r' || line[j] == ':' || line[j] == ',')) ++j;
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j;
  }
  return w;
}

bool ToDouble(std::string_view s, double* v) {
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool ToInt(std::string_view s, long long* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Value that follows the word `key` in `w` (e.g. "Columns" → next word).
bool After(const std::vector<std::string_view>& w, std::string_view key, std::string_view* out, size_t from = 0) {
  for (size_t i = from; i + 1 < w.size(); ++i) {
    if (w[i] == key) {
      *out = w[i + 1];
      return true;
    }
  }
  return false;
}

// Shortest text that reads back to exactly `v` (so written files re-read bit for bit).
std::string Num(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

}  // namespace

PlcFile ParsePlcText(const std::string& text, const std::string& file) {
  // A last line without a newline may be cut. Circuit Training's own files end that way after
  // a whole row, so it is read when it cannot have been cut: a body row with all five fields
  // (its last field, the fixed flag, is one character) or a comment without digits. A shorter
  // row or a header line with numbers is refused ("19882 240.781 10" may be "… 1006.2 N 0").
  RefuseTruncatedLastLine(text, file, [](std::string_view line) {
    const std::vector<std::string_view> w = Words(line);
    if (!w.empty() && w[0][0] == '#') return line.find_first_of("0123456789") == std::string_view::npos;
    return w.size() == 5;
  });
  PlcFile plc;
  PlacementSettings& s = plc.settings;
  int line_no = 0;
  size_t pos = 0;
  auto fail = [&](const std::string& why) { throw ParseError(file, line_no, why); };
  auto num = [&](std::string_view v, const char* what) {
    double d;
    if (!ToDouble(v, &d) || !std::isfinite(d)) fail(std::string("malformed ") + what + " '" + std::string(v) + "'");
    return d;
  };
  auto positive_int = [&](std::string_view v, const char* what) {
    long long d;
    if (!ToInt(v, &d) || d <= 0 || d > 100000) fail(std::string("malformed ") + what + " '" + std::string(v) + "'");
    return static_cast<int>(d);
  };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.size() > (1 << 16)) fail("line longer than 64 KiB");
    for (unsigned char c : line) {
      if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) fail("unexpected control byte (binary data?)");
    }
    const std::vector<std::string_view> w = Words(line);
    if (w.empty()) continue;
    if (w[0][0] == '#') {
      std::vector<std::string_view> h(w.begin(), w.end());
      if (h[0] == "#") h.erase(h.begin()); else h[0].remove_prefix(1);
      if (h.empty()) continue;
      std::string_view v, v2;
      if (h[0] == "Columns" && After(h, "Columns", &v) && After(h, "Rows", &v2)) {
        s.cols = positive_int(v, "Columns");
        s.rows = positive_int(v2, "Rows");
      } else if (h[0] == "Congestion" && h.size() > 1 && h[1] == "Columns" && After(h, "Columns", &v) && After(h, "Rows", &v2)) {
        plc.has_congestion_grid = true;
        plc.congestion_cols = positive_int(v, "Congestion Columns");
        plc.congestion_rows = positive_int(v2, "Congestion Rows");
      } else if (h[0] == "Width" && After(h, "Width", &v) && After(h, "Height", &v2)) {
        s.canvas_width = num(v, "Width");
        s.canvas_height = num(v2, "Height");
        if (s.canvas_width <= 0 || s.canvas_height <= 0) fail("canvas Width and Height must be positive");
      } else if (h[0] == "Area") {
        plc.header_area = num(h.back(), "Area");
      } else if (h[0] == "Wirelength" && h.size() == 2) {
        plc.header_wirelength = num(h[1], "Wirelength");
      } else if (h[0] == "Wirelength" && h.size() == 3 && h[1] == "cost") {
        plc.header_wirelength_cost = num(h[2], "Wirelength cost");
      } else if (h[0] == "Congestion" && h.size() == 3 && h[1] == "cost") {
        plc.header_congestion_cost = num(h[2], "Congestion cost");
      } else if (h[0] == "Density" && h.size() == 3 && h[1] == "cost") {
        plc.header_density_cost = num(h[2], "Density cost");
      } else if (h[0] == "Project" && h.size() >= 2) {
        s.project = std::string(h[1]);
      } else if (h[0] == "Block" && h.size() >= 2) {
        s.block = std::string(h[1]);
      } else if (h[0] == "Routes" && h.size() >= 3 && h[1] == "per") {
        if (!After(h, "hor", &v) || !After(h, "ver", &v2)) fail("'Routes per micron' needs hor and ver values");
        s.h_routes_per_micron = num(v, "routes per micron");
        s.v_routes_per_micron = num(v2, "routes per micron");
        // The defaults apply only when the line is absent: a written 0 is a mistake, not "default".
        if (!(s.h_routes_per_micron > 0) || !(s.v_routes_per_micron > 0)) {
          fail("routes per micron must be positive (hor and ver); leave the line out to get the defaults");
        }
      } else if (h[0] == "Routes" && h.size() >= 3 && h[1] == "used") {
        if (!After(h, "hor", &v) || !After(h, "ver", &v2)) fail("'Routes used by macros' needs hor and ver values");
        s.h_macro_alloc = num(v, "macro routing allocation");
        s.v_macro_alloc = num(v2, "macro routing allocation");
        if (s.h_macro_alloc < 0 || s.v_macro_alloc < 0) fail("negative macro routing allocation");
      } else if (h[0] == "Smoothing" && h.size() >= 3) {
        s.smooth_range = num(h[2], "Smoothing factor");
        if (s.smooth_range < 0 || s.smooth_range > 1e6) fail("Smoothing factor out of range");
      } else if (h[0] == "Overlap" && h.size() >= 3) {
        s.overlap_threshold = num(h[2], "Overlap threshold");
      } else if (h[0] == "Blockage") {
        if (h.size() < 6) fail("Blockage needs: minx miny maxx maxy rate");
        Blockage b{num(h[1], "blockage"), num(h[2], "blockage"), num(h[3], "blockage"), num(h[4], "blockage"), num(h[5], "blockage")};
        if (b.minx > b.maxx || b.miny > b.maxy) fail("Blockage min is greater than max (minx miny maxx maxy rate)");
        if (!(b.rate >= 0 && b.rate <= 1)) fail("Blockage rate " + std::string(h[5]) + " is outside [0, 1]");
        s.blockages.push_back(b);
      }
      continue;  // other comments: ignored
    }
    // Body row: index x y orientation fixed (orientation and fixed optional).
    if (w.size() < 3 || w.size() > 5) fail("expected 'node_index x y orientation fixed'");
    PlcRow row;
    row.line = line_no;
    long long idx;
    if (!ToInt(w[0], &idx) || idx < 0 || idx > (1LL << 31) - 1) fail("malformed node index '" + std::string(w[0]) + "'");
    row.node = static_cast<int32_t>(idx);
    row.x = num(w[1], "x");
    row.y = num(w[2], "y");
    if (w.size() >= 4 && w[3] != "-") {
      if (!ParseOrientation(std::string(w[3]), &row.orientation)) fail("unknown orientation '" + std::string(w[3]) + "'");
      row.has_orientation = true;
    }
    if (w.size() == 5) {
      if (w[4] == "1") row.fixed = true;
      else if (w[4] == "0") row.fixed = false;
      else fail("fixed flag must be 0 or 1");
    }
    plc.rows.push_back(row);
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    line_no = 0;
    fail("empty file (neither a header nor placement rows)");
  }
  // One row per node: with two, which one applies would be an accident of order.
  std::vector<std::pair<int32_t, int>> seen;  // (node, line)
  seen.reserve(plc.rows.size());
  for (const PlcRow& r : plc.rows) seen.emplace_back(r.node, r.line);
  std::sort(seen.begin(), seen.end());
  for (size_t i = 1; i < seen.size(); ++i) {
    if (seen[i].first == seen[i - 1].first) {
      line_no = seen[i].second;
      fail("second row for node " + std::to_string(seen[i].first) + " (first at line " +
           std::to_string(seen[i - 1].second) + ")");
    }
  }
  return plc;
}

PlcFile ReadPlc(const std::string& path) { return ParsePlcText(ReadFile(path), path); }

void ApplyPlc(const PlcFile& plc, Netlist* nl, const std::string& file) {
  int macros_placed = 0;
  for (const PlcRow& r : plc.rows) {
    if (r.node >= nl->num_nodes()) {
      throw ParseError(file, r.line, "row for node " + std::to_string(r.node) + " but the netlist has " +
                                    std::to_string(nl->num_nodes()) + " nodes");
    }
    const NodeType t = nl->type[r.node];
    if (t == NodeType::kHardMacroPin || t == NodeType::kSoftMacroPin) {
      throw ParseError(file, r.line, "row for node " + std::to_string(r.node) + " ('" + nl->name[r.node] + "'), which is a pin");
    }
    macros_placed += t == NodeType::kHardMacro || t == NodeType::kSoftMacro;
    nl->x[r.node] = r.x;
    nl->y[r.node] = r.y;
    if (r.has_orientation && (t == NodeType::kHardMacro || t == NodeType::kSoftMacro)) {
      nl->orientation[r.node] = r.orientation;
    }
    nl->fixed[r.node] = r.fixed || t == NodeType::kPort;  // ports are fixed after a restore
  }
  // A header-only .plc (settings, no rows) is a normal use; rows for only some macros
  // usually mean a truncated or mismatched file.
  const int macros = static_cast<int>(nl->macros.size());
  if (macros_placed > 0 && macros_placed < macros) {
    Warn(warning_id::kPlcPartialPlacement,
         file + ": rows place " + std::to_string(macros_placed) + " of " + std::to_string(macros) +
             " macros; the other " + std::to_string(macros - macros_placed) + " keep the netlist's positions");
  }
}

int WarnMacrosOffCanvas(const Netlist& nl, const PlacementSettings& s, const std::string& label) {
  int off = 0;
  int32_t first = -1;
  for (int32_t i : nl.macros) {
    const bool inside = nl.x[i] >= 0 && nl.x[i] <= s.canvas_width && nl.y[i] >= 0 && nl.y[i] <= s.canvas_height;
    if (!inside) {
      if (off++ == 0) first = i;
    }
  }
  if (off > 0) {
    char where[128];
    std::snprintf(where, sizeof(where), "(%.6g, %.6g)", nl.x[first], nl.y[first]);
    char canvas[96];
    std::snprintf(canvas, sizeof(canvas), "%.6g x %.6g", s.canvas_width, s.canvas_height);
    Warn(warning_id::kPlcMacroOffCanvas,
         label + ": " + std::to_string(off) + " macro" + (off == 1 ? " has its" : "s have their") +
             " centre outside the " + canvas + " canvas (first: '" + nl.name[first] + "' at " + where +
             "); the cost counts them in the nearest grid cell");
  }
  return off;
}

PlacementSettings ResolveDefaults(const PlacementSettings& in, const Netlist& nl) {
  PlacementSettings s = in;
  if (!s.has_canvas()) {
    const double side = std::sqrt(nl.TotalArea() / 0.6);
    if (!(side > 0)) throw ConfigError("cannot choose a default canvas: the netlist has no area");
    s.canvas_width = s.canvas_height = side;
  }
  if (!s.has_grid()) s.cols = s.rows = 10;
  if (s.h_routes_per_micron == 0 && s.v_routes_per_micron == 0) {
    s.h_routes_per_micron = 70.33;
    s.v_routes_per_micron = 74.51;
    if (s.h_macro_alloc == 0 && s.v_macro_alloc == 0) {
      s.h_macro_alloc = 51.79;
      s.v_macro_alloc = 51.79;
    }
    if (s.smooth_range == 0) s.smooth_range = 5;
  }
  if (!s.has_routes()) throw ConfigError("routes per micron must be positive (hor and ver)");
  return s;
}

std::string PlcToText(const Netlist& nl, const PlacementSettings& s, const PlcCosts* costs,
                      const std::string& netlist_source, const std::string& this_file) {
  std::string out;
  char buf[512];
  auto line = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof(buf), fmt, args...);
    out.append(buf);
  };
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  out.append("# Placement file for Circuit Training\n");
  line("# Source input file(s) : %s\n", netlist_source.c_str());
  line("# This file : %s\n", this_file.c_str());
  line("# Date : %s\n", date);
  line("# Columns : %d  Rows : %d\n", s.cols, s.rows);
  line("# Width : %s  Height : %s\n", Num(s.canvas_width).c_str(), Num(s.canvas_height).c_str());
  line("# Area : %.17g\n", nl.TotalArea());
  if (costs) {
    line("# Wirelength : %.3f\n", costs->wirelength);
    line("# Wirelength cost : %.4f\n", costs->wirelength_cost);
    line("# Congestion cost : %.4f\n", costs->congestion_cost);
    line("# Density cost : %.4f\n", costs->density_cost);
  }
  line("# Project : %s\n", s.project.c_str());
  line("# Block : %s\n", s.block.empty() ? "unset_block" : s.block.c_str());
  line("# Routes per micron, hor : %s  ver : %s\n", Num(s.h_routes_per_micron).c_str(), Num(s.v_routes_per_micron).c_str());
  line("# Routes used by macros, hor : %s  ver : %s\n", Num(s.h_macro_alloc).c_str(), Num(s.v_macro_alloc).c_str());
  line("# Smoothing factor : %s\n", Num(s.smooth_range).c_str());
  line("# Overlap threshold : %s\n", Num(s.overlap_threshold).c_str());
  for (const Blockage& b : s.blockages) {
    line("# Blockage : %.17g %.17g %.17g %.17g %.17g\n", b.minx, b.miny, b.maxx, b.maxy, b.rate);
  }
  out.append("#\n# Counts of node types:\n");
  const int hm = nl.CountType(NodeType::kHardMacro), sm = nl.CountType(NodeType::kSoftMacro);
  const int hp = nl.CountType(NodeType::kHardMacroPin), sp = nl.CountType(NodeType::kSoftMacroPin);
  line("# HARD_MACROs     : %9d\n", hm);
  line("# HARD_MACRO_PINs : %9d\n", hp);
  line("# MACROs          : %9d\n", hm + sm);
  line("# MACRO_PINs      : %9d\n", hp + sp);
  line("# PORTs           : %9d\n", nl.CountType(NodeType::kPort));
  line("# SOFT_MACROs     : %9d\n", sm);
  line("# SOFT_MACRO_PINs : %9d\n", sp);
  line("# STDCELLs        : %9d\n", nl.CountType(NodeType::kStdCell));
  out.append("#\n# node_index x y orientation fixed\n");
  for (int32_t i = 0; i < nl.num_nodes(); ++i) {
    const NodeType t = nl.type[i];
    if (t == NodeType::kHardMacroPin || t == NodeType::kSoftMacroPin) continue;
    // Shortest exact text: a written .plc re-reads to the same cost.
    const char* o = (t == NodeType::kHardMacro || t == NodeType::kSoftMacro) ? OrientationName(nl.orientation[i]) : "-";
    line("%d %s %s %s %d\n", i, Num(nl.x[i]).c_str(), Num(nl.y[i]).c_str(), o, nl.fixed[i] ? 1 : 0);
  }
  return out;
}

void WritePlc(const Netlist& nl, const PlacementSettings& settings, const PlcCosts* costs,
              const std::string& path) {
  const std::string src = nl.sources.empty() ? std::string("(generated)") : nl.sources.front();
  WriteFileAtomic(path, PlcToText(nl, settings, costs, src, path));
}

}  // namespace placerl::chip
