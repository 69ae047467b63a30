#include "env/environment.h"

#include <algorithm>

#include "datasets/util/errors.h"

namespace placerl::env {

const char* ActionKindName(ActionKind k) {
  switch (k) {
    case ActionKind::kGrid: return "grid";
    case ActionKind::kDevice: return "device";
    case ActionKind::kChoice: return "choice";
  }
  return "?";
}

std::string ActionSpec::ToString() const {
  switch (kind) {
    case ActionKind::kGrid:
      return "grid(cols=" + std::to_string(cols) + ",rows=" + std::to_string(rows) + ")";
    case ActionKind::kDevice: return "device(n=" + std::to_string(n) + ")";
    case ActionKind::kChoice: return "choice(k=" + std::to_string(n) + ")";
  }
  return "?";
}

void StaticGraph::Validate() const {
  auto fail = [](const std::string& what) { throw ConfigError("static graph: " + what); };
  if (num_nodes < 0) fail("negative node count");
  if (node_features.size() != static_cast<size_t>(num_nodes) * node_feature_dim)
    fail("node_features has " + std::to_string(node_features.size()) + " values, expected " +
         std::to_string(num_nodes) + " x " + std::to_string(node_feature_dim));
  if (node_feature_names.size() != static_cast<size_t>(node_feature_dim)) fail("node_feature_names size");
  if (edge_dst.size() != edge_src.size() || edge_weight.size() != edge_src.size())
    fail("edge_src, edge_dst and edge_weight differ in length");
  if (edge_features.size() != edge_src.size() * static_cast<size_t>(edge_feature_dim))
    fail("edge_features size");
  for (size_t e = 0; e < edge_src.size(); ++e) {
    if (edge_src[e] < 0 || edge_src[e] >= num_nodes || edge_dst[e] < 0 || edge_dst[e] >= num_nodes)
      fail("edge " + std::to_string(e) + " has a node index out of range");
  }
  if (metadata_names.size() != metadata.size()) fail("metadata_names size");
  if (!node_names.empty() && node_names.size() != static_cast<size_t>(num_nodes)) fail("node_names size");
}

double Environment::info_value(const std::string& key) const {
  const auto& names = info_names();
  const auto it = std::find(names.begin(), names.end(), key);
  if (it == names.end()) throw ConfigError("no info value '" + key + "' in " + name());
  return info()[it - names.begin()];
}

}  // namespace placerl::env
