// Reader of Circuit Training netlists: protobuf text format of tensorflow.GraphDef with
// `node { name input* attr { key value { f | placeholder | s | i | b } }* }` blocks.
// A hand-written tokenizer (no descriptor needed, ~50 MB/s); every error names file:line.
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "datasets/chip/netlist.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::chip {
namespace {

constexpr size_t kMaxToken = 1 << 20;  // a name longer than 1 MiB is not a netlist

enum class Tok { kIdent, kString, kNumber, kColon, kOpen, kClose, kEnd };

// Character classes without the locale lookups of <cctype> (the hot loop of the reader).
struct CharClass {
  bool space[256] = {}, ident_start[256] = {}, ident[256] = {}, number[256] = {};
  constexpr CharClass() {
    for (int c = 0; c < 256; ++c) {
      const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      const bool digit = c >= '0' && c <= '9';
      space[c] = c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ';';
      ident_start[c] = alpha || c == '_';
      ident[c] = alpha || digit || c == '_' || c == '.';
      number[c] = alpha || digit || c == '.' || c == '-' || c == '+';
    }
  }
};
constexpr CharClass kClass;
inline unsigned char U(char c) { return static_cast<unsigned char>(c); }

struct Lexer {
  const char* p;
  const char* end;
  const std::string& file;
  int line = 1;
  Tok tok = Tok::kEnd;
  std::string_view text;  // identifier / number text
  std::string_view str;   // string literal (points into the input, or into `owned`)
  std::deque<std::string>* owned;  // decoded literals that had escapes
  int tok_line = 1;

  [[noreturn]] void Fail(const std::string& why, int at_line = -1) const {
    throw ParseError(file, at_line < 0 ? tok_line : at_line, why);
  }

  void Next() {
    for (;;) {
      while (p < end && kClass.space[U(*p)]) {
        if (*p == '\n') ++line;
        ++p;
      }
      if (p < end && *p == '#') {
        while (p < end && *p != '\n') ++p;
        continue;
      }
      break;
    }
    tok_line = line;
    if (p >= end) {
      tok = Tok::kEnd;
      return;
    }
    const char c = *p;
    if (c == ':') { tok = Tok::kColon; ++p; return; }
    if (c == '{' || c == '<') { tok = Tok::kOpen; ++p; return; }
    if (c == '}' || c == '>') { tok = Tok::kClose; ++p; return; }
    if (c == '"' || c == '\'') {
      const char q = c;
      ++p;
      const char* s = p;
      bool escaped = false;
      while (p < end && *p != q) {
        if (*p == '\n') Fail("unterminated string");
        if (*p == '\\' && p + 1 < end) {
          escaped = true;
          ++p;
        }
        ++p;
        if (static_cast<size_t>(p - s) > kMaxToken) Fail("string longer than 1 MiB");
      }
      if (p >= end) Fail("unterminated string at end of file");
      if (!escaped) {
        str = std::string_view(s, p - s);
      } else {
        std::string d;
        for (const char* t = s; t < p; ++t) {
          if (*t == '\\' && t + 1 < p) {
            ++t;
            d.push_back(*t == 'n' ? '\n' : *t == 't' ? '\t' : *t);
          } else {
            d.push_back(*t);
          }
        }
        owned->push_back(std::move(d));
        str = owned->back();
      }
      ++p;
      tok = Tok::kString;
      return;
    }
    if (kClass.ident_start[U(c)]) {
      const char* s = p;
      while (p < end && kClass.ident[U(*p)]) ++p;
      if (static_cast<size_t>(p - s) > kMaxToken) Fail("identifier longer than 1 MiB");
      text = std::string_view(s, p - s);
      tok = Tok::kIdent;
      return;
    }
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
      const char* s = p;
      ++p;
      while (p < end && kClass.number[U(*p)]) ++p;
      if (static_cast<size_t>(p - s) > 512) Fail("number too long");
      text = std::string_view(s, p - s);
      tok = Tok::kNumber;
      return;
    }
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned char>(c));
      Fail(std::string("unexpected byte ") + buf + " (binary data?)");
    }
    Fail(std::string("unexpected character '") + c + "'");
  }

  bool IsIdent(const char* s) const { return tok == Tok::kIdent && text == s; }

  void Expect(Tok t, const char* what) {
    if (tok != t) Fail(std::string("expected ") + what + (tok == Tok::kEnd ? " but the file ended" : ""));
    Next();
  }
  // Optional ':' before '{' is legal text format.
  void ExpectOpen() {
    if (tok == Tok::kColon) Next();
    Expect(Tok::kOpen, "'{'");
  }
  std::string_view ExpectString(const char* field) {
    if (tok == Tok::kColon) Next(); else Fail(std::string("expected ':' after ") + field);
    if (tok != Tok::kString) Fail(std::string("expected a quoted string for ") + field);
    const std::string_view s = str;
    Next();
    return s;
  }
  // Skips a value or a message after a field name we do not use.
  void SkipField() {
    if (tok == Tok::kColon) {
      Next();
      if (tok == Tok::kOpen) { SkipMessage(); return; }
      if (tok == Tok::kString || tok == Tok::kNumber || tok == Tok::kIdent) { Next(); return; }
      Fail("expected a value");
    }
    if (tok == Tok::kOpen) { SkipMessage(); return; }
    Fail("expected ':' or '{'");
  }
  void SkipMessage() {
    int depth = 0;
    do {
      if (tok == Tok::kOpen) ++depth;
      else if (tok == Tok::kClose) --depth;
      else if (tok == Tok::kEnd) Fail("unterminated block at end of file");
      Next();
    } while (depth > 0);
  }
};

struct AttrValue {
  bool is_number = false;
  double f = 0;
  std::string_view s;
  int line = 0;
};

// One `node` block as read; string views point into the file texts, which outlive it.
struct RawNode {
  std::string_view name;
  std::vector<std::pair<std::string_view, int>> inputs;  // name, line
  std::vector<std::pair<std::string_view, AttrValue>> attrs;  // few: linear search
  int line = 0;
  int file = 0;
  const AttrValue* Find(std::string_view key) const {
    for (const auto& [k, v] : attrs) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

double ParseNumber(Lexer& lx, std::string_view t) {
  double v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) {
    // text format also allows a trailing 'f' and the words inf/nan.
    std::string s(t);
    if (!s.empty() && (s.back() == 'f' || s.back() == 'F')) s.pop_back();
    char* endp = nullptr;
    v = std::strtod(s.c_str(), &endp);
    if (s.empty() || endp != s.c_str() + s.size()) lx.Fail("malformed number '" + std::string(t) + "'");
  }
  return v;
}

void ParseAttr(Lexer& lx, RawNode* node) {
  const int attr_line = lx.tok_line;
  lx.ExpectOpen();
  std::string_view key;
  bool has_key = false;
  AttrValue val;
  bool has_value = false;
  while (lx.tok != Tok::kClose) {
    if (lx.tok == Tok::kEnd) lx.Fail("unterminated attr block at end of file");
    if (lx.IsIdent("key")) {
      lx.Next();
      key = lx.ExpectString("key");
      has_key = true;
    } else if (lx.IsIdent("value")) {
      lx.Next();
      lx.ExpectOpen();
      while (lx.tok != Tok::kClose) {
        if (lx.tok == Tok::kEnd) lx.Fail("unterminated value block at end of file");
        if (lx.tok != Tok::kIdent) lx.Fail("expected a field name in value");
        const std::string_view field = lx.text;
        val.line = lx.tok_line;
        lx.Next();
        if (field == "f" || field == "i" || field == "b") {
          if (lx.tok != Tok::kColon) lx.Fail("expected ':' after " + std::string(field));
          lx.Next();
          if (lx.tok == Tok::kNumber || (lx.tok == Tok::kIdent && field != "b")) {
            val.f = ParseNumber(lx, lx.text);
          } else if (lx.tok == Tok::kIdent) {
            val.f = (lx.text == "true") ? 1.0 : 0.0;
          } else {
            lx.Fail("expected a number for " + std::string(field));
          }
          val.is_number = true;
          lx.Next();
        } else if (field == "placeholder" || field == "s") {
          val.s = lx.ExpectString(field == "s" ? "s" : "placeholder");
          val.is_number = false;
        } else {
          lx.SkipField();
          continue;
        }
        has_value = true;
      }
      lx.Next();
    } else if (lx.tok == Tok::kIdent) {
      lx.Next();
      lx.SkipField();
    } else {
      lx.Fail("expected 'key' or 'value' in attr");
    }
  }
  lx.Next();
  if (!has_key) lx.Fail("attr without a key", attr_line);
  if (!has_value) lx.Fail("attr '" + std::string(key) + "' without a value", attr_line);
  for (auto& kv : node->attrs) {
    if (kv.first == key) {
      kv.second = val;
      return;
    }
  }
  node->attrs.emplace_back(key, val);
}

void ParseFile(const std::string& text, const std::string& label, int file_index,
               std::vector<RawNode>* nodes, std::deque<std::string>* owned,
               std::unordered_map<std::string, double>* metadata) {
  Lexer lx{text.data(), text.data() + text.size(), label, 1, Tok::kEnd, {}, {}, owned, 1};
  lx.Next();
  while (lx.tok != Tok::kEnd) {
    if (!lx.IsIdent("node")) {
      if (lx.tok == Tok::kIdent) {  // other GraphDef fields (versions, library): skip
        lx.Next();
        lx.SkipField();
        continue;
      }
      lx.Fail("expected 'node'");
    }
    RawNode node;
    node.line = lx.tok_line;
    node.file = file_index;
    lx.Next();
    lx.ExpectOpen();
    bool has_name = false;
    while (lx.tok != Tok::kClose) {
      if (lx.tok == Tok::kEnd) lx.Fail("node block not closed at end of file (truncated?)", node.line);
      if (lx.IsIdent("name")) {
        lx.Next();
        node.name = lx.ExpectString("name");
        has_name = true;
      } else if (lx.IsIdent("input")) {
        const int in_line = lx.tok_line;
        lx.Next();
        node.inputs.emplace_back(lx.ExpectString("input"), in_line);
      } else if (lx.IsIdent("attr")) {
        lx.Next();
        ParseAttr(lx, &node);
      } else if (lx.tok == Tok::kIdent) {
        lx.Next();
        lx.SkipField();
      } else {
        lx.Fail("expected a field of node");
      }
    }
    lx.Next();
    if (!has_name) lx.Fail("node without a name", node.line);
    if (node.name == "__metadata__") {
      for (const auto& [k, v] : node.attrs) {
        if (v.is_number) (*metadata)[std::string(k)] = v.f;
      }
      continue;
    }
    nodes->push_back(std::move(node));
  }
  // Circuit Training's netlists end with a '}' and no newline. A file cut inside a block fails
  // above (block not closed); one cut after a top-level scalar ("versions_x: 12" from "123")
  // would not: a last line without a newline must end with '}' or be a comment.
  RefuseTruncatedLastLine(text, label, [](std::string_view l) {
    const size_t b = l.find_last_not_of(" \t\r");
    const size_t a = l.find_first_not_of(" \t\r");
    return l[b] == '}' || l[a] == '#';
  });
}

}  // namespace

static Netlist BuildNetlist(std::vector<RawNode>& raw, const std::vector<std::string>& labels,
                            std::unordered_map<std::string, double> metadata) {
  Netlist nl;
  nl.metadata = std::move(metadata);
  nl.sources = labels;
  const int32_t n = static_cast<int32_t>(raw.size());
  nl.index_of.reserve(n * 2);
  for (auto* v : {&nl.name}) v->reserve(n);
  auto fail = [&](const RawNode& r, int line, const std::string& why) -> void {
    throw ParseError(labels[r.file], line > 0 ? line : r.line, why);
  };
  auto attr = [&](const RawNode& r, const char* key) -> const AttrValue* { return r.Find(key); };
  auto number = [&](const RawNode& r, const char* key, bool required, double dflt) -> double {
    const AttrValue* a = attr(r, key);
    if (!a) {
      if (required) fail(r, 0, "node '" + std::string(r.name) + "' has no '" + key + "' attribute");
      return dflt;
    }
    if (!a->is_number) fail(r, a->line, std::string("attribute '") + key + "' must be a number");
    if (!std::isfinite(a->f)) fail(r, a->line, std::string("attribute '") + key + "' is not finite");
    return a->f;
  };

  // Uppercase MACRO anywhere → lowercase `macro` nodes are soft macros (the convention of
  // grouping output); otherwise lowercase `macro` is soft only when named Grp*.
  bool has_upper_macro = false;
  for (const RawNode& r : raw) {
    const AttrValue* t = attr(r, "type");
    if (t && !t->is_number && t->s == "MACRO") has_upper_macro = true;
  }

  for (int32_t i = 0; i < n; ++i) {
    const RawNode& r = raw[i];
    const AttrValue* t = attr(r, "type");
    const std::string name(r.name);
    if (!t) fail(r, 0, "node '" + name + "' has no 'type' attribute");
    if (t->is_number) fail(r, t->line, "attribute 'type' must be a string");
    const std::string_view ts = t->s;
    NodeType type;
    if (ts == "PORT" || ts == "port") {
      type = NodeType::kPort;
    } else if (ts == "MACRO") {
      type = NodeType::kHardMacro;
    } else if (ts == "macro") {
      type = (has_upper_macro || r.name.rfind("Grp", 0) == 0) ? NodeType::kSoftMacro : NodeType::kHardMacro;
    } else if (ts == "MACRO_PIN" || ts == "macro_pin") {
      type = NodeType::kHardMacroPin;  // hard/soft decided by the parent below
    } else if (ts == "STDCELL" || ts == "stdcell") {
      type = NodeType::kStdCell;
    } else {
      fail(r, t->line, "unknown node type '" + std::string(ts) + "'");
    }
    const int32_t idx = nl.AddNode(name, type);
    if (nl.index_of.size() != static_cast<size_t>(idx) + 1) fail(r, 0, "duplicate node name '" + name + "'");
    nl.fixed[idx] = 0;
    const bool sized = type == NodeType::kHardMacro || type == NodeType::kSoftMacro || type == NodeType::kStdCell;
    if (sized) {
      nl.width[idx] = number(r, "width", true, 0);
      nl.height[idx] = number(r, "height", true, 0);
      if (nl.width[idx] < 0 || nl.height[idx] < 0) fail(r, attr(r, nl.width[idx] < 0 ? "width" : "height")->line, "negative size of node '" + name + "'");
    }
    // Positions may be absent (an unplaced netlist; the .plc gives them), except on ports.
    const bool is_pin = type == NodeType::kHardMacroPin;
    nl.x[idx] = number(r, "x", type == NodeType::kPort, 0);
    nl.y[idx] = number(r, "y", type == NodeType::kPort, 0);
    nl.weight[idx] = number(r, "weight", false, 1.0);
    if (nl.weight[idx] < 0) fail(r, attr(r, "weight")->line, "negative weight");
    if (type == NodeType::kHardMacro || type == NodeType::kSoftMacro) {
      if (const AttrValue* o = attr(r, "orientation")) {
        if (o->is_number || !ParseOrientation(std::string(o->s), &nl.orientation[idx])) {
          fail(r, o->line, "unknown orientation '" + std::string(o->s) + "'");
        }
      }
    }
    if (type == NodeType::kPort) {
      if (const AttrValue* s = attr(r, "side")) {
        std::string v(s->s);
        for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (v == "LEFT") nl.side[idx] = Side::kLeft;
        else if (v == "RIGHT") nl.side[idx] = Side::kRight;
        else if (v == "TOP") nl.side[idx] = Side::kTop;
        else if (v == "BOTTOM") nl.side[idx] = Side::kBottom;
        else fail(r, s->line, "unknown port side '" + std::string(s->s) + "'");
      }
    }
    if (is_pin) {
      nl.pin_dx[idx] = number(r, "x_offset", false, 0);
      nl.pin_dy[idx] = number(r, "y_offset", false, 0);
    }
  }
  // Pins → their macros.
  for (int32_t i = 0; i < n; ++i) {
    if (nl.type[i] != NodeType::kHardMacroPin) continue;
    const RawNode& r = raw[i];
    const AttrValue* m = attr(r, "macro_name");
    const std::string pin_name(r.name);
    if (!m || m->is_number) fail(r, 0, "macro pin '" + pin_name + "' has no 'macro_name' attribute");
    const std::string macro_name(m->s);
    auto it = nl.index_of.find(macro_name);
    if (it == nl.index_of.end()) fail(r, m->line, "macro pin '" + pin_name + "' refers to missing macro '" + macro_name + "'");
    const int32_t p = it->second;
    if (!nl.is_macro(p)) fail(r, m->line, "macro pin '" + pin_name + "' refers to '" + macro_name + "', which is not a macro");
    nl.parent[i] = p;
    if (nl.type[p] == NodeType::kSoftMacro) nl.type[i] = NodeType::kSoftMacroPin;
  }
  // Nets: one per driver with inputs; the driver first.
  for (int32_t i = 0; i < n; ++i) {
    const RawNode& r = raw[i];
    if (r.inputs.empty()) continue;
    if (nl.is_macro(i)) fail(r, r.inputs.front().second, "macro '" + nl.name[i] + "' has inputs; only pins, ports and standard cells drive nets");
    nl.net_pins.push_back(i);
    for (const auto& [in_view, line] : r.inputs) {
      const std::string in(in_view);
      auto it = nl.index_of.find(in);
      if (it == nl.index_of.end()) fail(r, line, "input '" + in + "' of node '" + nl.name[i] + "' refers to a missing node");
      nl.net_pins.push_back(it->second);
    }
    nl.net_start.push_back(static_cast<int32_t>(nl.net_pins.size()));
    // Ports always count 1 (as the reference implementation does); pins use their weight.
    nl.net_weight.push_back(nl.type[i] == NodeType::kPort ? 1.0 : nl.weight[i]);
  }
  raw.clear();
  nl.Finalize();
  return nl;
}

Netlist ParseNetlistText(const std::string& text, const std::string& file_label) {
  std::vector<RawNode> raw;
  std::unordered_map<std::string, double> metadata;
  std::vector<std::string> labels{file_label};
  std::deque<std::string> owned;
  ParseFile(text, file_label, 0, &raw, &owned, &metadata);
  if (raw.empty()) throw ParseError(file_label, 0, "no nodes (not a Circuit Training netlist?)");
  return BuildNetlist(raw, labels, std::move(metadata));
}

Netlist ReadNetlist(const std::string& paths) {
  const std::vector<std::string> files = SplitCommaList(paths);
  if (files.empty()) throw ConfigError("no netlist file given");
  std::vector<RawNode> raw;
  std::unordered_map<std::string, double> metadata;
  std::vector<std::string> labels;
  std::deque<std::string> texts, owned;  // outlive `raw`, whose strings point into them
  for (size_t f = 0; f < files.size(); ++f) {
    labels.push_back(files[f]);
    texts.push_back(ReadFile(files[f]));
    ParseFile(texts.back(), files[f], static_cast<int>(f), &raw, &owned, &metadata);
  }
  if (raw.empty()) throw ParseError(files[0], 0, "no nodes (not a Circuit Training netlist?)");
  return BuildNetlist(raw, labels, std::move(metadata));
}

}  // namespace placerl::chip
