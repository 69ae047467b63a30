// Expert placements from layer-structured op names (rules in expert_placement.h).
#include "datasets/graphs/expert_placement.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

// What an op's name says about its place in the model.
struct NameInfo {
  bool encoder = false;
  int layer = 0;    // 0 = none
  int expert = -1;  // MoE expert index, -1 = none
  bool embedding = false;
  bool training = false;  // a grad/ or update/ op
};

// "l12" → 12 (and "e3" → 3 with prefix 'e'); -1 when the component is not of that form.
int Numbered(const std::string& c, char prefix) {
  if (c.size() < 2 || c[0] != prefix) return -1;
  for (size_t i = 1; i < c.size(); ++i)
    if (c[i] < '0' || c[i] > '9') return -1;
  return std::atoi(c.c_str() + 1);
}

NameInfo Parse(const std::string& name) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t end = name.find('/', start);
    parts.push_back(name.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  NameInfo info;
  size_t first = 0;
  if (parts.size() > 1 && (parts[0] == "grad" || parts[0] == "update")) {
    info.training = true;
    first = 1;
  }
  info.encoder = parts[first] == "enc";
  for (size_t k = first; k < parts.size(); ++k) {
    if (info.layer == 0 && Numbered(parts[k], 'l') > 0) info.layer = Numbered(parts[k], 'l');
    if (k > first && parts[k - 1] == "moe" && Numbered(parts[k], 'e') >= 0) info.expert = Numbered(parts[k], 'e');
    if (parts[k].rfind("emb", 0) == 0) info.embedding = true;
  }
  return info;
}

}  // namespace

std::vector<int> ExpertPlacement(const ComputeGraph& g, int num_devices, const ExpertOptions& options) {
  if (num_devices < 1) throw ConfigError("expert placement: num_devices must be >= 1");
  const int n = g.num_ops(), D = num_devices;
  std::vector<NameInfo> info(n);
  int layers[2] = {0, 0};  // per stack: decoder / LM, encoder
  for (int i = 0; i < n; ++i) {
    info[i] = Parse(g.names[i]);
    int& L = layers[info[i].encoder ? 1 : 0];
    L = std::max(L, info[i].layer);
  }
  std::vector<int> device(n, 0);
  if (layers[0] == 0 && layers[1] == 0) {
    if (options.split_unlayered && D > 1) {
      // Forward ops (not grad/ or update/) in topological order, D parts of equal flops.
      double total = 0;
      for (int i = 0; i < n; ++i)
        if (!info[i].training) total += g.flops[i];
      double done = 0;
      for (int i : g.topo_order) {
        if (info[i].training) continue;
        device[i] = total > 0 ? std::min(D - 1, static_cast<int>(done / total * D)) : 0;
        done += g.flops[i];
      }
    }
  } else {
    auto of_layer = [&](int stack, int k) {
      const int L = std::max(1, layers[stack]);
      return L <= D ? std::min(k, D) - 1 : (k - 1) * D / L;
    };
    for (int i = 0; i < n; ++i) {
      const NameInfo& f = info[i];
      const int stack = f.encoder && layers[1] > 0 ? 1 : 0;
      if (f.expert >= 0 && options.spread_experts) {
        device[i] = f.expert % D;
      } else if (f.layer > 0) {
        device[i] = of_layer(stack, f.layer);
      } else if (f.embedding) {
        device[i] = of_layer(stack, 1);
      } else {
        const int last = layers[0] > 0 ? 0 : 1;  // the decoder's (or the only stack's) last layer
        device[i] = of_layer(last, layers[last]);
      }
    }
  }
  // Co-location: a group follows its first op (the forward op for generated graphs).
  std::vector<int> group_device(g.num_coloc_groups, -1);
  for (int i = 0; i < n; ++i) {
    int& d = group_device[g.coloc_group[i]];
    if (d < 0) d = device[i];
    device[i] = d;
  }
  return device;
}

}  // namespace placerl::graphs
