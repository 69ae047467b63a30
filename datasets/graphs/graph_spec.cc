#include "datasets/graphs/graph_spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "datasets/graphs/enas_graphs.h"
#include "datasets/graphs/inception_graph.h"
#include "datasets/graphs/model_graphs.h"
#include "datasets/graphs/op_list.h"
#include "datasets/graphs/rnn_graphs.h"
#include "datasets/graphs/transformer_graphs.h"
#include "datasets/graphs/onnx_import.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::graphs {
namespace {

using Keys = std::map<std::string, long>;

Keys TransformerKeys(bool moe) {
  Keys k = {{"layers", 6}, {"enc_layers", 0}, {"d_model", 512}, {"d_ff", 2048}, {"heads", 8},
            {"seq", 256},  {"batch", 16},     {"vocab", 32000}, {"update", 1},  {"dtype_bytes", 4}};
  if (moe) {
    k["experts"] = 8;
    k["moe_every"] = 2;
  }
  return k;
}

// Keys whose value may be 0 (switches, seeds, optional parts).
bool MayBeZero(const std::string& k) {
  return k == "backward" || k == "seed" || k == "fused" || k == "update" || k == "aux" || k == "enc_layers";
}

// Largest value of a key. Graphs are bounded by op count (OpList::kMaxOps, checked by the
// generators from an estimate before they build); the chain and the layered random graph take
// their op count directly, so it is bounded here, and so is the fan-in, whose draws cost
// fan_in² per op.
long MaxValue(const std::string& k) {
  if (k == "ops") return OpList::kMaxOps;
  if (k == "fan_in") return 64;
  return 100000000;
}

// The generated families and their keys with their defaults.
std::map<std::string, Keys> FamilyDefaults() {
  const Keys rnn = {{"layers", 2}, {"hidden", 1024}, {"batch", 64}, {"steps", 40}, {"vocab", 40000}, {"update", 1}, {"dtype_bytes", 4}};
  return {
      {"layered", {{"ops", 1000}, {"width", 100}, {"fan_in", 3}, {"seed", 1}}},
      {"chain", {{"ops", 1000}}},
      {"resnet",
       {{"depth", 50}, {"batch", 32}, {"image", 224}, {"classes", 1000}, {"backward", 1}, {"fused", 0}, {"update", 0}}},
      {"rnnlm", {{"layers", 2}, {"hidden", 2048}, {"batch", 64}, {"steps", 40}, {"vocab", 10000}, {"update", 1}, {"dtype_bytes", 4}}},
      {"nmt", rnn},
      {"gnmt", {{"layers", 4}, {"hidden", 512}, {"batch", 128}, {"steps", 40}, {"vocab", 30000}, {"update", 1}, {"dtype_bytes", 4}}},
      {"inception_v3", {{"batch", 32}, {"image", 299}, {"classes", 1000}, {"aux", 1}, {"update", 1}, {"dtype_bytes", 4}}},
      {"transformer_graph", TransformerKeys(false)},
      {"moe_graph", TransformerKeys(true)},
      {"enas_cell",
       {{"seed", 1},
        {"nodes", 5},
        {"cells", 2},
        {"channels", 20},
        {"image", 32},
        {"classes", 10},
        {"hidden", 256},
        {"steps", 20},
        {"vocab", 10000},
        {"batch", 32},
        {"update", 1},
        {"dtype_bytes", 4}}}};
}

// The graph of family `name` with the keys `v` (checked); `family`: enas_cell's.
ComputeGraph MakeFamilyGraph(const std::string& name, Keys v, const std::string& family) {
  auto i = [&](const char* k) { return static_cast<int>(v.at(k)); };
  if (name == "chain") {
    return MakeChainGraph(i("ops"), 1e9, 1e6, 1e6);
  } else if (name == "layered") {
    const double edges = static_cast<double>(v["ops"]) * std::min(v["fan_in"], v["width"]);
    if (edges > 2e7)
      throw ConfigError("graph: layered with ops=" + std::to_string(v["ops"]) + " and fan_in=" + std::to_string(v["fan_in"]) +
                        " draws up to " + std::to_string(static_cast<long long>(edges)) +
                        " edges, more than 20000000; choose fewer ops or a smaller fan_in");
    return MakeLayeredRandomGraph(i("ops"), i("width"), i("fan_in"), static_cast<uint64_t>(v["seed"]));
  } else if (name == "resnet") {
    ResNetConfig c;
    c.depth = i("depth");
    c.batch = i("batch");
    c.image = i("image");
    c.classes = i("classes");
    c.backward = v["backward"] != 0;
    c.fused = v["fused"] != 0;
    c.update = v["update"] != 0;
    return MakeResNetGraph(c);
  } else if (name == "rnnlm") {
    RnnLmConfig c;
    c.element_bytes = i("dtype_bytes");
    c.layers = i("layers");
    c.hidden = i("hidden");
    c.batch = i("batch");
    c.steps = i("steps");
    c.vocab = i("vocab");
    c.update = v["update"] != 0;
    return MakeRnnLmGraph(c);
  } else if (name == "nmt" || name == "gnmt") {
    Seq2SeqConfig c;
    c.element_bytes = i("dtype_bytes");
    c.layers = i("layers");
    c.hidden = i("hidden");
    c.batch = i("batch");
    c.steps = i("steps");
    c.vocab = i("vocab");
    c.update = v["update"] != 0;
    return name == "nmt" ? MakeNmtGraph(c) : MakeGnmtGraph(c);
  } else if (name == "inception_v3") {
    InceptionConfig c;
    c.element_bytes = i("dtype_bytes");
    c.batch = i("batch");
    c.image = i("image");
    c.classes = i("classes");
    c.aux = v["aux"] != 0;
    c.update = v["update"] != 0;
    return MakeInceptionV3Graph(c);
  } else if (name == "transformer_graph" || name == "moe_graph") {
    TransformerGraphConfig c;
    c.element_bytes = i("dtype_bytes");
    c.layers = i("layers");
    c.enc_layers = i("enc_layers");
    c.d_model = i("d_model");
    c.d_ff = i("d_ff");
    c.heads = i("heads");
    c.seq = i("seq");
    c.batch = i("batch");
    c.vocab = i("vocab");
    c.update = v["update"] != 0;
    if (name == "moe_graph") {
      c.experts = i("experts");
      c.moe_every = i("moe_every");
    }
    return MakeTransformerGraph(c);
  } else {
    EnasConfig c;
    c.element_bytes = i("dtype_bytes");
    c.family = family;
    c.seed = static_cast<uint64_t>(v["seed"]);
    c.nodes = i("nodes");
    c.cells = i("cells");
    c.channels = i("channels");
    c.image = i("image");
    c.classes = i("classes");
    c.hidden = i("hidden");
    c.steps = i("steps");
    c.vocab = i("vocab");
    c.batch = i("batch");
    c.update = v["update"] != 0;
    return MakeEnasGraph(c);
  }
}

}  // namespace

// Generator spec (family(key=value,…)) → checked keys → the family's graph; else an ONNX
// model or a compute-graph file.
NamedGraph GraphFromSpec(const std::string& spec) {
  if (IsOnnxSpec(spec)) {  // model.onnx[?batch=32,seq=128,backward=0]
    NamedGraph g = GraphFromOnnxSpec(spec);
    if (g.canonical.empty()) g.canonical = spec;
    return g;
  }
  const size_t open = spec.find('(');
  const std::string name = spec.substr(0, open);
  const std::map<std::string, Keys> defaults = FamilyDefaults();
  const auto known = defaults.find(name);
  NamedGraph out;
  if (open == std::string::npos && known != defaults.end()) return GraphFromSpec(spec + "()");
  if (open == std::string::npos || spec.back() != ')' || known == defaults.end()) {
    out.graph = ReadComputeGraph(spec);
    out.canonical = spec;
    return out;
  }
  Keys v = known->second;
  std::string family = "cifar10";  // enas_cell's one name-valued key
  std::set<std::string> given;
  for (const std::string& kv : SplitCommaList(spec.substr(open + 1, spec.size() - open - 2))) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq);
    if (eq != std::string::npos && !given.insert(k).second) throw ConfigError("graph: key '" + k + "' given twice");
    if (name == "enas_cell" && k == "family" && eq != std::string::npos) {
      family = kv.substr(eq + 1);
      if (family != "cifar10" && family != "ptb" && family != "nmt")
        throw ConfigError("graph: enas_cell family must be cifar10, ptb or nmt, got '" + family + "'");
      continue;
    }
    // An integer (digits, optionally a '-'); its range is checked after the key is known.
    const std::string value = eq == std::string::npos ? std::string() : kv.substr(eq + 1);
    const size_t digits_from = !value.empty() && value[0] == '-' ? 1 : 0;
    if (eq == std::string::npos || value.size() == digits_from ||
        value.find_first_not_of("0123456789", digits_from) != std::string::npos)
      throw ConfigError("graph: expected key=non-negative integer, got '" + kv + "'");
    if (v.count(k) == 0) {
      std::string keys = name == "enas_cell" ? "family" : "";
      for (const auto& [key, unused] : known->second) keys += (keys.empty() ? "" : ", ") + key;
      throw ConfigError("graph: unknown key '" + k + "' for " + name + " (" + keys + ")");
    }
    const long lo = MayBeZero(k) ? 0 : 1, hi = MaxValue(k);
    errno = 0;
    const long long x = std::strtoll(value.c_str(), nullptr, 10);
    if (errno == ERANGE || x < lo || x > hi)
      throw ConfigError("graph: " + k + "=" + value + " is out of range: " + name + "'s " + k + " takes [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
    v[k] = static_cast<long>(x);
  }
  auto i = [&](const char* k) { return static_cast<int>(v.at(k)); };
  out.canonical = name + "(" + (name == "enas_cell" ? "family=" + family + "," : std::string());
  for (const auto& [key, value] : v) out.canonical += key + "=" + std::to_string(value) + ",";
  out.canonical.back() = ')';
  if (v.count("batch")) out.examples = i("batch");
  out.graph = MakeFamilyGraph(name, v, family);
  return out;
}

}  // namespace placerl::graphs
