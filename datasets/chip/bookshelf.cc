// Bookshelf reader (.aux/.nodes/.nets/.wts/.pl/.scl → Netlist) and the conversion to nets
// that Circuit Training's one-net-per-driver format can express. See bookshelf.h.
#include "datasets/chip/bookshelf.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

constexpr size_t kMaxLine = size_t(1) << 20;

bool IEqualsEnd(std::string_view w) {
  return w.size() == 3 && (w[0] == 'E' || w[0] == 'e') && (w[1] == 'N' || w[1] == 'n') && (w[2] == 'D' || w[2] == 'd');
}

// Lines of a Bookshelf file, tokenised on whitespace with ':' as a token of its own;
// `#` starts a comment; blank lines are skipped.
class LineSource {
 public:
  // A last line without a newline may be cut ("a1 16 1" from "a1 16 16", a pin without its
  // offsets): refused, unless it is only a comment or the .scl's closing "End".
  LineSource(const std::string& text, std::string file) : text_(text), file_(std::move(file)) {
    RefuseTruncatedLastLine(text_, file_, [](std::string_view l) {
      l = l.substr(0, l.find('#'));
      const size_t a = l.find_first_not_of(" \t\r\v\f");
      if (a == std::string_view::npos) return true;
      const size_t b = l.find_last_not_of(" \t\r\v\f");
      return IEqualsEnd(l.substr(a, b - a + 1));
    });
  }

  bool Next() {
    tok_.clear();
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string::npos) end = text_.size();
      ++line_;
      std::string_view l(text_.data() + pos_, end - pos_);
      pos_ = end + 1;
      if (l.size() > kMaxLine) Fail("line longer than 1 MiB");
      for (unsigned char c : l) {
        // Control bytes mean a binary file; bytes >= 0x80 (UTF-8 in comments) are allowed.
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f) {
          Fail("binary data (control byte 0x" + Hex(c) + ")");
        }
      }
      const size_t hash = l.find('#');
      if (hash != std::string_view::npos) l = l.substr(0, hash);
      size_t i = 0;
      while (i < l.size()) {
        const char c = l[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
          ++i;
        } else if (c == ':') {
          tok_.push_back(l.substr(i, 1));
          ++i;
        } else {
          size_t j = i;
          while (j < l.size() && l[j] != ' ' && l[j] != '\t' && l[j] != '\r' && l[j] != ':' &&
                 l[j] != '\v' && l[j] != '\f') {
            ++j;
          }
          tok_.push_back(l.substr(i, j - i));
          i = j;
        }
      }
      if (!tok_.empty()) return true;
    }
    return false;
  }

  const std::vector<std::string_view>& tok() const { return tok_; }
  int line() const { return line_; }
  const std::string& file() const { return file_; }
  [[noreturn]] void Fail(const std::string& reason) const { throw ParseError(file_, line_, reason); }
  [[noreturn]] void FailAt(int line, const std::string& reason) const {
    throw ParseError(file_, line, reason);
  }

  double Number(std::string_view s, const char* what) const {
    std::string buf(s);
    char* end = nullptr;
    const double v = std::strtod(buf.c_str(), &end);
    if (buf.empty() || end != buf.c_str() + buf.size()) {
      Fail(std::string("expected a number for ") + what + ", got '" + buf + "'");
    }
    if (!std::isfinite(v)) Fail(std::string(what) + " is not finite ('" + buf + "')");
    return v;
  }
  int64_t Count(std::string_view s, const char* what) const {
    const double v = Number(s, what);
    if (v < 0 || v != std::floor(v) || v > std::numeric_limits<int32_t>::max()) {
      Fail(std::string(what) + " must be a non-negative integer, got '" + std::string(s) + "'");
    }
    return static_cast<int64_t>(v);
  }
  // "Key : value" → value (token after the colon); fails when the shape is different.
  int64_t KeyCount(const char* key) const {
    if (tok_.size() != 3 || tok_[1] != ":") Fail(std::string("expected '") + key + " : <count>'");
    return Count(tok_[2], key);
  }
  // Skips the "UCLA <kind> 1.0" header line if it is the current line; true if it was.
  bool IsHeader() const { return !tok_.empty() && tok_[0] == "UCLA"; }

 private:
  static std::string Hex(unsigned char c) {
    const char* d = "0123456789abcdef";
    return std::string{d[c >> 4], d[c & 15]};
  }
  const std::string& text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string_view> tok_;
};

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

enum class TermKind : uint8_t { kMovable, kTerminal, kTerminalNI };

struct RawNode {
  std::string name;
  double w = 0, h = 0;
  TermKind term = TermKind::kMovable;
  double llx = 0, lly = 0;
  Orientation orient = Orientation::kN;
  bool fixed = false;
};

struct RawPin {
  int32_t node;
  char dir;  // 'I', 'O', 'B' or '?'
  double dx, dy;
};

struct RawNet {
  std::string name;
  int line;
  std::vector<RawPin> pins;
};

struct AuxFiles {
  std::string nodes, nets, wts, pl, scl;
};

AuxFiles ReadAux(const std::string& aux_path) {
  const std::string text = ReadFile(aux_path, size_t(1) << 24);
  LineSource ls(text, aux_path);
  AuxFiles f;
  const std::string dir = DirOf(aux_path);
  bool seen = false;
  while (ls.Next()) {
    const auto& t = ls.tok();
    size_t i = 0;
    if (t.size() >= 2 && t[1] == ":") i = 2;  // "RowBasedPlacement : a.nodes ..."
    for (; i < t.size(); ++i) {
      const std::string name(t[i]);
      const std::string path = (!name.empty() && name[0] == '/') ? name : dir + name;
      if (EndsWith(name, ".nodes")) f.nodes = path;
      else if (EndsWith(name, ".nets")) f.nets = path;
      else if (EndsWith(name, ".wts")) f.wts = path;
      else if (EndsWith(name, ".pl")) f.pl = path;
      else if (EndsWith(name, ".scl")) f.scl = path;
      else if (EndsWith(name, ".shapes") || EndsWith(name, ".route")) continue;  // not used
      else ls.Fail("unknown file kind '" + name + "' in .aux");
      seen = true;
    }
  }
  if (!seen) throw ParseError(aux_path, 0, "no file names in .aux");
  if (f.nodes.empty()) throw ParseError(aux_path, 0, ".aux names no .nodes file");
  if (f.nets.empty()) throw ParseError(aux_path, 0, ".aux names no .nets file");
  if (f.pl.empty()) throw ParseError(aux_path, 0, ".aux names no .pl file");
  return f;
}

void ReadNodes(const std::string& path, std::vector<RawNode>* nodes,
               std::unordered_map<std::string, int32_t>* index, BookshelfDesign* d) {
  const std::string text = ReadFile(path);
  LineSource ls(text, path);
  int64_t num_nodes = -1, num_terminals = -1;
  int num_nodes_line = 0, num_terminals_line = 0;
  int32_t terminals = 0;
  bool first = true;
  while (ls.Next()) {
    const auto& t = ls.tok();
    if (first && ls.IsHeader()) { first = false; continue; }
    first = false;
    if (IEquals(t[0], "NumNodes")) {
      num_nodes = ls.KeyCount("NumNodes");
      num_nodes_line = ls.line();
      continue;
    }
    if (IEquals(t[0], "NumTerminals")) {
      num_terminals = ls.KeyCount("NumTerminals");
      num_terminals_line = ls.line();
      continue;
    }
    if (t.size() != 3 && t.size() != 4) {
      ls.Fail("expected '<name> <width> <height> [terminal|terminal_NI]'");
    }
    RawNode n;
    n.name = std::string(t[0]);
    n.w = ls.Number(t[1], "width");
    n.h = ls.Number(t[2], "height");
    if (n.w < 0 || n.h < 0) ls.Fail("node '" + n.name + "' has a negative size");
    if (t.size() == 4) {
      if (t[3] == "terminal") n.term = TermKind::kTerminal;
      else if (t[3] == "terminal_NI") n.term = TermKind::kTerminalNI;
      else ls.Fail("unknown node kind '" + std::string(t[3]) + "' (expected terminal or terminal_NI)");
      ++terminals;
    }
    if (!index->emplace(n.name, static_cast<int32_t>(nodes->size())).second) {
      ls.Fail("duplicate node '" + n.name + "'");
    }
    nodes->push_back(std::move(n));
  }
  if (nodes->empty()) throw ParseError(path, ls.line(), "no nodes");
  if (num_nodes >= 0 && num_nodes != static_cast<int64_t>(nodes->size())) {
    ls.FailAt(num_nodes_line, "NumNodes is " + std::to_string(num_nodes) + " but " +
                                  std::to_string(nodes->size()) + " nodes follow");
  }
  if (num_terminals >= 0 && num_terminals != terminals) {
    ls.FailAt(num_terminals_line, "NumTerminals is " + std::to_string(num_terminals) + " but " +
                                      std::to_string(terminals) + " terminals follow");
  }
  d->bookshelf_nodes = static_cast<int32_t>(nodes->size());
  d->bookshelf_terminals = terminals;
}

void ReadPl(const std::string& path, std::vector<RawNode>* nodes,
            const std::unordered_map<std::string, int32_t>& index) {
  const std::string text = ReadFile(path);
  LineSource ls(text, path);
  bool first = true;
  while (ls.Next()) {
    const auto& t = ls.tok();
    if (first && ls.IsHeader()) { first = false; continue; }
    first = false;
    if (t.size() < 3) ls.Fail("expected '<name> <x> <y> [: <orientation>] [/FIXED]'");
    const auto it = index.find(std::string(t[0]));
    if (it == index.end()) ls.Fail("unknown node '" + std::string(t[0]) + "'");
    RawNode& n = (*nodes)[it->second];
    n.llx = ls.Number(t[1], "x");
    n.lly = ls.Number(t[2], "y");
    size_t i = 3;
    if (i < t.size() && t[i] == ":") {
      ++i;
      if (i >= t.size()) ls.Fail("missing orientation after ':'");
      if (!ParseOrientation(std::string(t[i]), &n.orient)) {
        ls.Fail("unknown orientation '" + std::string(t[i]) + "'");
      }
      ++i;
    }
    for (; i < t.size(); ++i) {
      if (t[i] == "/FIXED" || t[i] == "/FIXED_NI") n.fixed = true;
      else ls.Fail("unexpected '" + std::string(t[i]) + "'");
    }
  }
}

struct Rows {
  int32_t count = 0;
  double minx = 0, miny = 0, maxx = 0, maxy = 0, first_height = 0;
};

Rows ReadScl(const std::string& path) {
  const std::string text = ReadFile(path);
  LineSource ls(text, path);
  Rows r;
  int64_t declared = -1;
  int declared_line = 0;
  bool first = true, in_row = false;
  int row_line = 0;
  double coord = 0, height = -1, sitewidth = 1, sitespacing = 0;
  std::vector<std::pair<double, double>> subrows;  // origin, numsites
  auto close_row = [&]() {
    if (height <= 0) ls.FailAt(row_line, "row without a positive Height");
    if (subrows.empty()) ls.FailAt(row_line, "row without SubrowOrigin/Numsites");
    const double pitch = sitespacing > 0 ? sitespacing : sitewidth;
    for (const auto& [origin, sites] : subrows) {
      const double x0 = origin, x1 = origin + sites * pitch;
      if (r.count == 0) {
        r.minx = x0; r.maxx = x1; r.miny = coord; r.maxy = coord + height;
        r.first_height = height;
      } else {
        r.minx = std::min(r.minx, x0); r.maxx = std::max(r.maxx, x1);
        r.miny = std::min(r.miny, coord); r.maxy = std::max(r.maxy, coord + height);
      }
    }
    ++r.count;
  };
  while (ls.Next()) {
    const auto& t = ls.tok();
    if (first && ls.IsHeader()) { first = false; continue; }
    first = false;
    if (IEquals(t[0], "NumRows")) {
      declared = ls.KeyCount("NumRows");
      declared_line = ls.line();
    } else if (t[0] == "CoreRow") {
      if (in_row) ls.Fail("CoreRow inside a CoreRow (missing End)");
      in_row = true;
      row_line = ls.line();
      coord = 0; height = -1; sitewidth = 1; sitespacing = 0;
      subrows.clear();
    } else if (t[0] == "End") {
      if (!in_row) ls.Fail("End without CoreRow");
      close_row();
      in_row = false;
    } else {
      if (!in_row) ls.Fail("unexpected '" + std::string(t[0]) + "' outside a CoreRow");
      if (t.size() < 3 || t[1] != ":") ls.Fail("expected '<Key> : <value>'");
      const std::string_view key = t[0];
      if (key == "Coordinate") coord = ls.Number(t[2], "Coordinate");
      else if (key == "Height") height = ls.Number(t[2], "Height");
      else if (key == "Sitewidth") sitewidth = ls.Number(t[2], "Sitewidth");
      else if (key == "Sitespacing") sitespacing = ls.Number(t[2], "Sitespacing");
      else if (key == "SubrowOrigin") {
        if (t.size() != 6 || t[3] != "Numsites" || t[4] != ":") {
          ls.Fail("expected 'SubrowOrigin : <x> Numsites : <n>'");
        }
        subrows.emplace_back(ls.Number(t[2], "SubrowOrigin"),
                             static_cast<double>(ls.Count(t[5], "Numsites")));
      }
      // Siteorient, Sitesymmetry and unknown keys do not change the canvas.
      if ((key == "Height" && height <= 0) || sitewidth < 0 || sitespacing < 0) {
        ls.Fail("negative or zero row dimension");
      }
    }
  }
  if (in_row) ls.FailAt(row_line, "CoreRow not closed by End (truncated file?)");
  if (r.count == 0) throw ParseError(path, ls.line(), "no rows");
  if (declared >= 0 && declared != r.count) {
    ls.FailAt(declared_line, "NumRows is " + std::to_string(declared) + " but " +
                                 std::to_string(r.count) + " rows follow");
  }
  return r;
}

void ReadNets(const std::string& path, const std::unordered_map<std::string, int32_t>& index,
              std::vector<RawNet>* nets, BookshelfDesign* d) {
  const std::string text = ReadFile(path);
  LineSource ls(text, path);
  int64_t num_nets = -1, num_pins = -1;
  int num_nets_line = 0, num_pins_line = 0;
  int64_t pins = 0;
  int64_t remaining = 0;  // pins still expected by the current net
  bool first = true;
  auto check_closed = [&]() {
    if (remaining > 0) {
      const RawNet& n = nets->back();
      ls.FailAt(n.line, "net '" + n.name + "' declares " + std::to_string(n.pins.size() + remaining) +
                            " pins but " + std::to_string(n.pins.size()) + " follow (truncated?)");
    }
  };
  while (ls.Next()) {
    const auto& t = ls.tok();
    if (first && ls.IsHeader()) { first = false; continue; }
    first = false;
    if (IEquals(t[0], "NumNets")) {
      num_nets = ls.KeyCount("NumNets");
      num_nets_line = ls.line();
      continue;
    }
    if (IEquals(t[0], "NumPins")) {
      num_pins = ls.KeyCount("NumPins");
      num_pins_line = ls.line();
      continue;
    }
    if (t[0] == "NetDegree") {
      check_closed();
      if (t.size() < 3 || t.size() > 4 || t[1] != ":") ls.Fail("expected 'NetDegree : <k> [name]'");
      RawNet n;
      remaining = ls.Count(t[2], "NetDegree");
      n.name = t.size() == 4 ? std::string(t[3]) : "n" + std::to_string(nets->size());
      n.line = ls.line();
      n.pins.reserve(static_cast<size_t>(std::min<int64_t>(remaining, 1024)));
      nets->push_back(std::move(n));
      continue;
    }
    if (nets->empty()) ls.Fail("pin line before the first NetDegree");
    if (remaining == 0) {
      ls.Fail("net '" + nets->back().name + "' has more pins than its NetDegree");
    }
    const auto it = index.find(std::string(t[0]));
    if (it == index.end()) ls.Fail("pin names unknown node '" + std::string(t[0]) + "'");
    RawPin p{it->second, '?', 0, 0};
    size_t i = 1;
    if (i < t.size() && t[i] != ":") {
      if (t[i] == "I" || t[i] == "O" || t[i] == "B") p.dir = t[i][0];
      else ls.Fail("unknown pin direction '" + std::string(t[i]) + "' (expected I, O or B)");
      ++i;
    }
    if (i < t.size()) {
      if (t[i] != ":" || t.size() != i + 3) ls.Fail("expected '<node> <dir> : <dx> <dy>'");
      p.dx = ls.Number(t[i + 1], "pin x offset");
      p.dy = ls.Number(t[i + 2], "pin y offset");
    }
    nets->back().pins.push_back(p);
    --remaining;
    ++pins;
  }
  check_closed();
  if (num_nets >= 0 && num_nets != static_cast<int64_t>(nets->size())) {
    ls.FailAt(num_nets_line, "NumNets is " + std::to_string(num_nets) + " but " +
                                 std::to_string(nets->size()) + " nets follow");
  }
  if (num_pins >= 0 && num_pins != pins) {
    ls.FailAt(num_pins_line, "NumPins is " + std::to_string(num_pins) + " but " +
                                 std::to_string(pins) + " pins follow");
  }
  d->bookshelf_nets = static_cast<int32_t>(nets->size());
  d->bookshelf_pins = static_cast<int32_t>(pins);
}

// .wts: "<name> <weight>". Names of nets set net weights; names of nodes are node weights
// (ICCAD04 gives one per node), which the proxy cost does not use.
void ReadWts(const std::string& path, const std::unordered_map<std::string, int32_t>& node_index,
             const std::vector<RawNet>& nets, std::vector<double>* net_weight, BookshelfDesign* d) {
  const std::string text = ReadFile(path);
  LineSource ls(text, path);
  std::unordered_map<std::string, int32_t> net_index;
  net_index.reserve(nets.size());
  for (size_t k = 0; k < nets.size(); ++k) net_index.emplace(nets[k].name, static_cast<int32_t>(k));
  bool first = true;
  while (ls.Next()) {
    const auto& t = ls.tok();
    if (first && ls.IsHeader()) { first = false; continue; }
    first = false;
    if (t.size() != 2) ls.Fail("expected '<net or node name> <weight>'");
    const std::string name(t[0]);
    const double w = ls.Number(t[1], "weight");
    if (w < 0) ls.Fail("negative weight for '" + name + "'");
    if (const auto it = net_index.find(name); it != net_index.end()) {
      (*net_weight)[it->second] = w;
      ++d->weighted_nets;
    } else if (node_index.count(name)) {
      ++d->ignored_node_weights;
    } else {
      ls.Fail("'" + name + "' names neither a net nor a node");
    }
  }
}

Side NearestSide(double x, double y, double w, double h) {
  const double dl = std::abs(x), dr = std::abs(w - x), db = std::abs(y), dt = std::abs(h - y);
  const double m = std::min(std::min(dl, dr), std::min(db, dt));
  if (m == dl) return Side::kLeft;
  if (m == dr) return Side::kRight;
  if (m == db) return Side::kBottom;
  return Side::kTop;
}

}  // namespace

BookshelfDesign ReadBookshelf(const std::string& aux_path) {
  BookshelfDesign d;
  const AuxFiles files = ReadAux(aux_path);
  std::vector<RawNode> raw;
  std::unordered_map<std::string, int32_t> index;
  ReadNodes(files.nodes, &raw, &index, &d);
  ReadPl(files.pl, &raw, index);
  Rows rows;
  if (!files.scl.empty()) rows = ReadScl(files.scl);
  std::vector<RawNet> nets;
  ReadNets(files.nets, index, &nets, &d);
  std::vector<double> net_weight(nets.size(), 1.0);
  if (!files.wts.empty()) ReadWts(files.wts, index, nets, &net_weight, &d);

  // Row height: from .scl, else the smallest height of a movable node.
  double row_h = rows.first_height;
  if (row_h <= 0) {
    row_h = std::numeric_limits<double>::infinity();
    for (const RawNode& n : raw) {
      if (n.term == TermKind::kMovable && n.h > 0) row_h = std::min(row_h, n.h);
    }
    if (!std::isfinite(row_h)) row_h = 0;
  }
  d.row_height = row_h;
  d.num_rows = rows.count;
  if (rows.count > 0) {
    d.origin_x = rows.minx;
    d.origin_y = rows.miny;
    d.settings.canvas_width = rows.maxx - rows.minx;
    d.settings.canvas_height = rows.maxy - rows.miny;
  }

  Netlist& nl = d.netlist;
  nl.sources = {aux_path};
  const int32_t nb = static_cast<int32_t>(raw.size());
  for (int32_t i = 0; i < nb; ++i) {
    const RawNode& r = raw[i];
    NodeType t;
    if (r.term != TermKind::kMovable) {
      const bool pad = r.term == TermKind::kTerminalNI || r.w * r.h == 0 ||
                       (r.w <= row_h && r.h <= row_h);
      t = pad ? NodeType::kPort : NodeType::kHardMacro;
      if (t == NodeType::kHardMacro) ++d.fixed_macros;
    } else if (r.h > row_h) {
      t = NodeType::kHardMacro;
      ++d.movable_macros;
    } else {
      t = NodeType::kStdCell;
    }
    nl.AddNode(r.name, t);
    const bool turned = r.orient == Orientation::kE || r.orient == Orientation::kFE ||
                        r.orient == Orientation::kW || r.orient == Orientation::kFW;
    const double fw = turned ? r.h : r.w, fh = turned ? r.w : r.h;  // footprint as placed
    nl.x[i] = r.llx + fw / 2 - d.origin_x;
    nl.y[i] = r.lly + fh / 2 - d.origin_y;
    if (t != NodeType::kPort) {
      nl.width[i] = r.w;
      nl.height[i] = r.h;
    }
    if (t == NodeType::kHardMacro) nl.orientation[i] = r.orient;
    nl.fixed[i] = (t == NodeType::kPort || r.term != TermKind::kMovable || r.fixed) ? 1 : 0;
  }
  // Port sides, against the canvas (or the bounding box of the nodes without .scl).
  double cw = d.settings.canvas_width, ch = d.settings.canvas_height;
  if (cw <= 0 || ch <= 0) {
    for (int32_t i = 0; i < nb; ++i) {
      cw = std::max(cw, nl.x[i] + nl.width[i] / 2);
      ch = std::max(ch, nl.y[i] + nl.height[i] / 2);
    }
  }
  for (int32_t i = 0; i < nb; ++i) {
    if (nl.type[i] == NodeType::kPort) nl.side[i] = NearestSide(nl.x[i], nl.y[i], cw, ch);
  }

  // Nets: driver = first O pin, else the first pin; macro connections get their own pin.
  std::unordered_map<int64_t, int32_t> occurrences;  // (macro, net) → count, per net
  nl.net_pins.reserve(static_cast<size_t>(d.bookshelf_pins));
  for (size_t k = 0; k < nets.size(); ++k) {
    const RawNet& net = nets[k];
    if (net.pins.size() < 2) continue;  // nothing to connect (CT nets need a sink)
    size_t drv = 0;
    for (size_t j = 0; j < net.pins.size(); ++j) {
      if (net.pins[j].dir == 'O') { drv = j; break; }
    }
    occurrences.clear();
    auto add_pin = [&](const RawPin& p) {
      const int32_t node = p.node;
      if (nl.type[node] != NodeType::kHardMacro) {
        nl.net_pins.push_back(node);
        return;
      }
      const int32_t j = occurrences[node]++;
      std::string pin_name = nl.name[node] + "/" + net.name + "_" + std::to_string(j);
      while (nl.index_of.count(pin_name)) pin_name += "_";
      const int32_t pin = nl.AddNode(pin_name, NodeType::kHardMacroPin);
      nl.parent[pin] = node;
      nl.pin_dx[pin] = p.dx;
      nl.pin_dy[pin] = p.dy;
      double ox = 0, oy = 0;
      OrientOffset(nl.orientation[node], p.dx, p.dy, &ox, &oy);
      nl.x[pin] = nl.x[node] + ox;
      nl.y[pin] = nl.y[node] + oy;
      nl.fixed[pin] = nl.fixed[node];
      nl.net_pins.push_back(pin);
    };
    add_pin(net.pins[drv]);
    for (size_t j = 0; j < net.pins.size(); ++j) {
      if (j != drv) add_pin(net.pins[j]);
    }
    nl.net_start.push_back(static_cast<int32_t>(nl.net_pins.size()));
    nl.net_weight.push_back(net_weight[k]);
  }
  nl.Finalize();
  return d;
}

Netlist ToCircuitTrainingNets(const Netlist& nl, CtConversionReport* report) {
  const int32_t nn = nl.num_nets(), n = nl.num_nodes();
  auto pins_of = [&](int32_t k) {
    return std::vector<int32_t>(nl.net_pins.begin() + nl.net_start[k],
                                nl.net_pins.begin() + nl.net_start[k + 1]);
  };
  // Maximum matching nets → driver nodes (each node drives at most one net), found with
  // breadth-first augmenting paths; a net tries its own driver first.
  std::vector<int32_t> match(n, -1), drv(nn, -1);
  std::vector<int32_t> seen(n, -1);
  std::vector<std::pair<int32_t, int32_t>> from(nn);  // net reached ← (net, node it takes)
  std::vector<int32_t> queue, touched_nets;
  std::vector<int32_t> net_seen(nn, -1);
  for (int32_t k = 0; k < nn; ++k) {
    queue.assign(1, k);
    net_seen[k] = k;
    bool done = false;
    for (size_t qi = 0; qi < queue.size() && !done; ++qi) {
      const int32_t u = queue[qi];
      for (int32_t j = nl.net_start[u]; j < nl.net_start[u + 1] && !done; ++j) {
        const int32_t c = nl.net_pins[j];
        if (match[c] < 0) {
          // Augment: u takes c; walk back along the path.
          int32_t v = u, node = c;
          while (true) {
            drv[v] = node;
            match[node] = v;
            if (v == k) break;
            node = from[v].second;
            v = from[v].first;
          }
          done = true;
        } else if (seen[c] != k) {
          seen[c] = k;
          const int32_t v = match[c];
          if (net_seen[v] != k) {
            net_seen[v] = k;
            from[v] = {u, c};
            queue.push_back(v);
          }
        }
      }
    }
  }
  CtConversionReport rep;
  rep.nets_in = nn;
  std::vector<std::vector<int32_t>> pins(nn);
  std::vector<double> weight(nl.net_weight);
  std::vector<uint8_t> alive(nn, 1);
  for (int32_t k = 0; k < nn; ++k) {
    pins[k] = pins_of(k);
    if (drv[k] >= 0 && drv[k] != pins[k][0]) ++rep.drivers_reassigned;
  }
  for (int32_t k = 0; k < nn; ++k) {
    if (drv[k] >= 0) continue;
    const int32_t target = match[pins[k][0]];  // the net its own driver drives
    std::vector<int32_t> a = pins[k], b = pins[target];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (a == b) {
      weight[target] += weight[k];
      ++rep.nets_merged_exact;
    } else {
      std::unordered_set<int32_t> have(pins[target].begin(), pins[target].end());
      for (int32_t p : pins[k]) {
        if (have.insert(p).second) pins[target].push_back(p);
      }
      weight[target] = std::max(weight[target], weight[k]);
    }
    alive[k] = 0;
    ++rep.nets_merged;
  }
  Netlist out = nl;
  out.net_start.assign(1, 0);
  out.net_pins.clear();
  out.net_weight.clear();
  for (int32_t k = 0; k < nn; ++k) {
    if (!alive[k]) continue;
    const int32_t d = drv[k];
    out.net_pins.push_back(d);
    bool skipped = false;
    for (int32_t p : pins[k]) {
      if (p == d && !skipped) { skipped = true; continue; }
      out.net_pins.push_back(p);
    }
    out.net_start.push_back(static_cast<int32_t>(out.net_pins.size()));
    out.net_weight.push_back(weight[k]);
    out.weight[d] = weight[k];
  }
  out.Finalize();
  rep.nets_out = out.num_nets();
  if (report) *report = rep;
  return out;
}

}  // namespace placerl::chip
