#include "datasets/graphs/graph_spec.h"

#include <cstdlib>
#include <map>

#include "datasets/graphs/model_graphs.h"
#include "datasets/graphs/onnx_import.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::graphs {

NamedGraph GraphFromSpec(const std::string& spec) {
  if (IsOnnxSpec(spec)) return GraphFromOnnxSpec(spec);  // model.onnx[?batch=32,seq=128,backward=0]
  const size_t open = spec.find('(');
  const std::string name = spec.substr(0, open);
  const std::map<std::string, std::map<std::string, long>> defaults = {
      {"layered", {{"ops", 1000}, {"width", 100}, {"fan_in", 3}, {"seed", 1}}},
      {"chain", {{"ops", 1000}}},
      {"resnet", {{"depth", 50}, {"batch", 32}, {"image", 224}, {"classes", 1000}, {"backward", 1}, {"fused", 0}}}};
  const auto known = defaults.find(name);
  NamedGraph out;
  if (open == std::string::npos || spec.back() != ')' || known == defaults.end()) {
    out.graph = ReadComputeGraph(spec);
    return out;
  }
  std::map<std::string, long> v = known->second;
  for (const std::string& kv : SplitCommaList(spec.substr(open + 1, spec.size() - open - 2))) {
    const size_t eq = kv.find('=');
    char* end = nullptr;
    const long x = eq == std::string::npos ? -1 : std::strtol(kv.c_str() + eq + 1, &end, 10);
    const std::string k = kv.substr(0, eq);
    if (eq == std::string::npos || *end != '\0' || x < 0 || x > 100000000)
      throw ConfigError("graph: expected key=non-negative integer, got '" + kv + "'");
    if (v.count(k) == 0) {
      std::string keys;
      for (const auto& [key, unused] : known->second) keys += (keys.empty() ? "" : ", ") + key;
      throw ConfigError("graph: unknown key '" + k + "' for " + name + " (" + keys + ")");
    }
    if (x == 0 && k != "backward" && k != "seed" && k != "fused")
      throw ConfigError("graph: " + k + " must be >= 1, got '" + kv + "'");
    v[k] = x;
  }
  if (name == "chain") {
    out.graph = MakeChainGraph(static_cast<int>(v["ops"]), 1e9, 1e6, 1e6);
  } else if (name == "layered") {
    out.graph = MakeLayeredRandomGraph(static_cast<int>(v["ops"]), static_cast<int>(v["width"]),
                                       static_cast<int>(v["fan_in"]), static_cast<uint64_t>(v["seed"]));
  } else {
    ResNetConfig c;
    c.depth = static_cast<int>(v["depth"]);
    c.batch = static_cast<int>(v["batch"]);
    c.image = static_cast<int>(v["image"]);
    c.classes = static_cast<int>(v["classes"]);
    c.backward = v["backward"] != 0;
    c.fused = v["fused"] != 0;
    out.graph = MakeResNetGraph(c);
    out.examples = c.batch;
  }
  return out;
}

}  // namespace placerl::graphs
