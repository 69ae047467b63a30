#include "datasets/graphs/compute_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <unordered_map>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::graphs {
namespace {

bool ValidNumber(double v) { return std::isfinite(v) && v >= 0; }

// Kahn's algorithm with a min-heap of indices (deterministic: smallest ready index first).
// Returns the order; shorter than n when there is a cycle.
std::vector<int> KahnOrder(const std::vector<std::vector<int>>& inputs) {
  const int n = static_cast<int>(inputs.size());
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> outs(n);
  for (int i = 0; i < n; ++i) {
    indeg[i] = static_cast<int>(inputs[i].size());
    for (int p : inputs[i]) outs[p].push_back(i);
  }
  std::vector<int> heap, order;
  order.reserve(n);
  for (int i = 0; i < n; ++i)
    if (indeg[i] == 0) heap.push_back(i);
  std::make_heap(heap.begin(), heap.end(), std::greater<int>());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<int>());
    const int v = heap.back();
    heap.pop_back();
    order.push_back(v);
    for (int c : outs[v])
      if (--indeg[c] == 0) {
        heap.push_back(c);
        std::push_heap(heap.begin(), heap.end(), std::greater<int>());
      }
  }
  return order;
}

// Whitespace-separated tokens of a text line, '#' to the end of the line ignored.
std::vector<std::string> Tokens(const std::string& line) {
  std::istringstream ls(line.substr(0, line.find('#')));
  std::vector<std::string> tok;
  for (std::string t; ls >> t;) tok.push_back(t);
  return tok;
}

// Calls fn(line number, tokens) for every line of `text` with at least one token.
template <typename Fn>
void ForEachLine(const std::string& text, Fn fn) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::vector<std::string> tok = Tokens(line);
    if (!tok.empty()) fn(line_no, tok);
  }
}

std::string FormatNumber(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace

int FindCycleOp(const std::vector<std::vector<int>>& inputs) {
  const std::vector<int> order = KahnOrder(inputs);
  if (order.size() == inputs.size()) return -1;
  std::vector<char> done(inputs.size(), 0);
  for (int v : order) done[v] = 1;
  // An op left over by Kahn's is on a cycle or downstream of one; walk inputs among the
  // left-over ops until a repeat, which is on a cycle.
  int v = 0;
  while (done[v]) ++v;
  std::vector<char> seen(inputs.size(), 0);
  while (!seen[v]) {
    seen[v] = 1;
    for (int p : inputs[v])
      if (!done[p]) {
        v = p;
        break;
      }
  }
  return v;
}

OpInfo ComputeGraph::op(int i) const {
  OpInfo o;
  o.name = names[i];
  o.kind = kinds[i];
  o.flops = flops[i];
  o.bytes = bytes[i];
  o.output_bytes = output_bytes[i];
  o.param_bytes = param_bytes[i];
  o.temp_bytes = temp_bytes[i];
  o.time_s = time_s[i];
  o.colocation = colocation[i];
  o.inputs.assign(in_sources.begin() + in_offsets[i], in_sources.begin() + in_offsets[i + 1]);
  return o;
}

ComputeGraph BuildComputeGraph(const std::vector<OpInfo>& ops) {
  const int n = static_cast<int>(ops.size());
  ComputeGraph g;
  std::unordered_map<std::string, int> by_name;
  std::vector<std::vector<int>> inputs(n);
  // last_consumer[p] == i once op i listed p: duplicate inputs in O(1) (a std::find over the
  // list made one op with k inputs cost O(k²)).
  std::vector<int> last_consumer(n, -1);
  for (int i = 0; i < n; ++i) {
    const OpInfo& o = ops[i];
    if (o.name.empty()) throw ConfigError("compute graph: op " + std::to_string(i) + " has no name");
    if (!by_name.emplace(o.name, i).second)
      throw ConfigError("compute graph: duplicate op name '" + o.name + "'");
    for (double v : {o.flops, o.bytes, o.output_bytes, o.param_bytes, o.temp_bytes})
      if (!ValidNumber(v))
        throw ConfigError("compute graph: op '" + o.name + "' has a negative or non-finite size");
    if (!std::isfinite(o.time_s))
      throw ConfigError("compute graph: op '" + o.name + "' has a non-finite time");
    if (o.colocation.find_first_of(" \t\r\n,=#") != std::string::npos)
      throw ConfigError("compute graph: op '" + o.name + "' has a co-location name with whitespace, ',', '=' or '#'");
    for (int p : o.inputs) {
      if (p < 0 || p >= n)
        throw ConfigError("compute graph: op '" + o.name + "' input index out of range");
      if (last_consumer[p] == i)
        throw ConfigError("compute graph: op '" + o.name + "' has a duplicate input");
      last_consumer[p] = i;
      inputs[i].push_back(p);
    }
  }
  g.topo_order = KahnOrder(inputs);
  if (static_cast<int>(g.topo_order.size()) != n)
    throw ConfigError("compute graph: cycle through op '" + ops[FindCycleOp(inputs)].name + "'");
  g.names.reserve(n);
  for (const OpInfo& o : ops) {
    g.names.push_back(o.name);
    g.kinds.push_back(o.kind);
    g.flops.push_back(o.flops);
    g.bytes.push_back(o.bytes);
    g.output_bytes.push_back(o.output_bytes);
    g.param_bytes.push_back(o.param_bytes);
    g.temp_bytes.push_back(o.temp_bytes);
    g.time_s.push_back(o.time_s < 0 ? -1 : o.time_s);
  }
  g.colocation.reserve(n);
  g.coloc_group.reserve(n);
  std::unordered_map<std::string, int> group_of;
  for (const OpInfo& o : ops) {
    g.colocation.push_back(o.colocation);
    if (o.colocation.empty()) {
      g.coloc_group.push_back(g.num_coloc_groups++);
    } else {
      auto it = group_of.emplace(o.colocation, g.num_coloc_groups).first;
      if (it->second == g.num_coloc_groups) ++g.num_coloc_groups;
      g.coloc_group.push_back(it->second);
    }
  }
  g.in_offsets.assign(n + 1, 0);
  g.out_offsets.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    g.in_offsets[i + 1] = g.in_offsets[i] + static_cast<int>(inputs[i].size());
    for (int p : inputs[i]) ++g.out_offsets[p + 1];
  }
  for (int i = 0; i < n; ++i) g.out_offsets[i + 1] += g.out_offsets[i];
  g.in_sources.reserve(g.in_offsets[n]);
  g.out_targets.assign(g.out_offsets[n], 0);
  std::vector<int> fill(g.out_offsets.begin(), g.out_offsets.end() - 1);
  for (int i = 0; i < n; ++i)  // consumers in ascending index order
    for (int p : inputs[i]) {
      g.in_sources.push_back(p);
      g.out_targets[fill[p]++] = i;
    }
  return g;
}

// A cut last line ("flops=12" from "flops=1234", a device "1" from "13") reads as other
// numbers: a last line without a newline is refused unless it is only a comment.
static bool CommentOnly(std::string_view line) { return Tokens(std::string(line)).empty(); }

ComputeGraph ParseComputeGraph(const std::string& text, const std::string& label) {
  RefuseTruncatedLastLine(text, label, CommentOnly);
  std::vector<OpInfo> ops;
  std::vector<int> op_line;
  std::vector<std::vector<std::string>> input_names;
  std::unordered_map<std::string, int> by_name;
  ForEachLine(text, [&](int line_no, const std::vector<std::string>& tok) {
    auto fail = [&](const std::string& reason) { throw ParseError(label, line_no, reason); };
    if (tok[0] != "op") fail("expected 'op', got '" + tok[0] + "'");
    if (tok.size() < 3) fail("expected 'op <name> <kind> key=value...'");
    OpInfo o;
    o.name = tok[1];
    o.kind = tok[2];
    if (o.name.find_first_of(",=") != std::string::npos)
      fail("op name '" + o.name + "' contains ',' or '='");
    if (o.kind.find('=') != std::string::npos) fail("missing op kind before '" + o.kind + "'");
    if (!by_name.emplace(o.name, static_cast<int>(ops.size())).second)
      fail("duplicate op name '" + o.name + "'");
    std::vector<std::string> names;
    for (size_t k = 3; k < tok.size(); ++k) {
      const size_t eq = tok[k].find('=');
      if (eq == std::string::npos || eq == 0) fail("expected key=value, got '" + tok[k] + "'");
      const std::string key = tok[k].substr(0, eq), val = tok[k].substr(eq + 1);
      if (key == "coloc") {
        if (val.empty()) fail("empty co-location name in '" + tok[k] + "'");
        if (val.find_first_of(",=") != std::string::npos) fail("co-location name '" + val + "' contains ',' or '='");
        o.colocation = val;
        continue;
      }
      if (key == "inputs") {
        size_t start = 0;
        while (start <= val.size()) {
          size_t comma = val.find(',', start);
          if (comma == std::string::npos) comma = val.size();
          const std::string nm = val.substr(start, comma - start);
          if (nm.empty()) fail("empty input name in '" + tok[k] + "'");
          names.push_back(nm);  // duplicates are found when names are resolved (linear)
          start = comma + 1;
        }
        continue;
      }
      char* end = nullptr;
      const double v = std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0') fail("bad number '" + val + "' for " + key);
      if (!ValidNumber(v)) fail(key + " must be finite and >= 0, got '" + val + "'");
      if (key == "flops") o.flops = v;
      else if (key == "bytes") o.bytes = v;
      else if (key == "out") o.output_bytes = v;
      else if (key == "params") o.param_bytes = v;
      else if (key == "temp") o.temp_bytes = v;
      else if (key == "time") o.time_s = v;
      else fail("unknown key '" + key + "'");
    }
    ops.push_back(std::move(o));
    op_line.push_back(line_no);
    input_names.push_back(std::move(names));
  });
  if (ops.empty()) {
    int lines = 0;
    for (char c : text) lines += c == '\n';
    throw ParseError(label, std::max(1, lines), "no ops (an empty graph)");
  }
  std::vector<std::vector<int>> inputs(ops.size());
  std::vector<int> last_consumer(ops.size(), -1);  // as in BuildComputeGraph: linear
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].inputs.reserve(input_names[i].size());
    for (const std::string& nm : input_names[i]) {
      auto it = by_name.find(nm);
      if (it == by_name.end()) throw ParseError(label, op_line[i], "unknown input '" + nm + "'");
      if (last_consumer[it->second] == static_cast<int>(i))
        throw ParseError(label, op_line[i], "duplicate input '" + nm + "'");
      last_consumer[it->second] = static_cast<int>(i);
      ops[i].inputs.push_back(it->second);
    }
    inputs[i] = ops[i].inputs;
  }
  const int cyc = FindCycleOp(inputs);
  if (cyc >= 0) throw ParseError(label, op_line[cyc], "cycle through op '" + ops[cyc].name + "'");
  return BuildComputeGraph(ops);
}

ComputeGraph ReadComputeGraph(const std::string& path) {
  return ParseComputeGraph(ReadFile(path), path);
}

std::vector<std::vector<int>> ColocationMembers(const ComputeGraph& g) {
  std::vector<std::vector<int>> members(g.num_coloc_groups);
  for (int i = 0; i < g.num_ops(); ++i) members[g.coloc_group[i]].push_back(i);
  return members;
}

std::string ColocationViolation(const ComputeGraph& g, const std::vector<int>& op_to_device) {
  std::vector<int> first(g.num_coloc_groups, -1);
  for (int i = 0; i < g.num_ops() && i < static_cast<int>(op_to_device.size()); ++i) {
    int& f = first[g.coloc_group[i]];
    if (f < 0) {
      f = i;
    } else if (op_to_device[f] != op_to_device[i]) {
      return "co-location group '" + g.colocation[i] + "': op '" + g.names[f] + "' on device " +
             std::to_string(op_to_device[f]) + ", op '" + g.names[i] + "' on device " +
             std::to_string(op_to_device[i]);
    }
  }
  return "";
}

std::vector<int> ParsePlacement(const std::string& text, const std::string& label,
                                const ComputeGraph& g, int num_devices) {
  RefuseTruncatedLastLine(text, label, CommentOnly);
  std::unordered_map<std::string, int> by_name;
  for (int i = 0; i < g.num_ops(); ++i) by_name.emplace(g.names[i], i);
  std::vector<int> dev(g.num_ops(), -1);
  int last_line = 0;
  ForEachLine(text, [&](int line_no, const std::vector<std::string>& tok) {
    last_line = line_no;
    auto fail = [&](const std::string& reason) { throw ParseError(label, line_no, reason); };
    if (tok.size() != 2) fail("expected '<op name> <device index>'");
    auto it = by_name.find(tok[0]);
    if (it == by_name.end()) fail("unknown op '" + tok[0] + "'");
    char* end = nullptr;
    const long d = std::strtol(tok[1].c_str(), &end, 10);
    if (*end != '\0' || d < 0 || d >= num_devices)
      fail("device '" + tok[1] + "' is not an index in [0, " + std::to_string(num_devices) + ")");
    if (dev[it->second] >= 0) fail("op '" + tok[0] + "' placed twice");
    dev[it->second] = static_cast<int>(d);
  });
  for (int i = 0; i < g.num_ops(); ++i)
    if (dev[i] < 0) throw ParseError(label, last_line, "op '" + g.names[i] + "' has no device");
  return dev;
}

std::vector<int> ReadPlacement(const std::string& path, const ComputeGraph& g, int num_devices) {
  return ParsePlacement(ReadFile(path), path, g, num_devices);
}

std::string PlacementToText(const ComputeGraph& g, const std::vector<int>& op_to_device) {
  std::string out;
  for (int i = 0; i < g.num_ops() && i < static_cast<int>(op_to_device.size()); ++i)
    out += g.names[i] + " " + std::to_string(op_to_device[i]) + "\n";
  return out;
}

std::string ComputeGraphToText(const ComputeGraph& g) {
  std::string s = "# placerl compute graph: " + std::to_string(g.num_ops()) + " ops, " +
                  std::to_string(g.num_edges()) + " edges\n";
  for (int i = 0; i < g.num_ops(); ++i) {
    s += "op " + g.names[i] + " " + g.kinds[i];
    s += " flops=" + FormatNumber(g.flops[i]);
    s += " bytes=" + FormatNumber(g.bytes[i]);
    s += " out=" + FormatNumber(g.output_bytes[i]);
    s += " params=" + FormatNumber(g.param_bytes[i]);
    s += " temp=" + FormatNumber(g.temp_bytes[i]);
    if (g.time_s[i] >= 0) s += " time=" + FormatNumber(g.time_s[i]);
    if (!g.colocation[i].empty()) s += " coloc=" + g.colocation[i];
    if (g.in_offsets[i + 1] > g.in_offsets[i]) {
      s += " inputs=";
      for (int e = g.in_offsets[i]; e < g.in_offsets[i + 1]; ++e) {
        if (e > g.in_offsets[i]) s += ",";
        s += g.names[g.in_sources[e]];
      }
    }
    s += "\n";
  }
  return s;
}

void WriteComputeGraph(const std::string& path, const ComputeGraph& g) {
  WriteFileAtomic(path, ComputeGraphToText(g));
}

ComputeGraph MakeChainGraph(int n, double flops, double bytes, double out) {
  std::vector<OpInfo> ops(n);
  for (int i = 0; i < n; ++i) {
    ops[i].name = "op" + std::to_string(i);
    ops[i].kind = "matmul";
    ops[i].flops = flops;
    ops[i].bytes = bytes;
    ops[i].output_bytes = out;
    if (i > 0) ops[i].inputs = {i - 1};
  }
  return BuildComputeGraph(ops);
}

ComputeGraph MakeDiamondGraph(double flops, double bytes, double out) {
  std::vector<OpInfo> ops(4);
  const char* names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    ops[i].name = names[i];
    ops[i].kind = "matmul";
    ops[i].flops = flops;
    ops[i].bytes = bytes;
    ops[i].output_bytes = out;
  }
  ops[1].inputs = {0};
  ops[2].inputs = {0};
  ops[3].inputs = {1, 2};
  return BuildComputeGraph(ops);
}

ComputeGraph MakeLayeredRandomGraph(int num_ops, int width, int max_fan_in, uint64_t seed) {
  if (num_ops < 0 || width < 1 || max_fan_in < 1)
    throw ConfigError("MakeLayeredRandomGraph: need num_ops >= 0, width >= 1, max_fan_in >= 1");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> scale(0.5, 1.5);
  static const char* kKinds[] = {"matmul", "elementwise", "conv", "softmax", "norm"};
  std::vector<OpInfo> ops(num_ops);
  for (int i = 0; i < num_ops; ++i) {
    OpInfo& o = ops[i];
    o.name = "n" + std::to_string(i);
    o.kind = kKinds[rng() % 5];
    o.flops = 1e9 * scale(rng);
    o.bytes = 4e6 * scale(rng);
    o.output_bytes = 1e6 * scale(rng);
    o.param_bytes = 2e6 * scale(rng);
    o.temp_bytes = 5e5 * scale(rng);
    const int layer = i / width;
    if (layer == 0) continue;
    const int lo = (layer - 1) * width, hi = layer * width;  // previous layer [lo, hi)
    const int fan = 1 + static_cast<int>(rng() % max_fan_in);
    for (int k = 0; k < fan; ++k) {
      const int p = lo + static_cast<int>(rng() % (hi - lo));
      if (std::find(o.inputs.begin(), o.inputs.end(), p) == o.inputs.end()) o.inputs.push_back(p);
    }
  }
  return BuildComputeGraph(ops);
}

}  // namespace placerl::graphs
