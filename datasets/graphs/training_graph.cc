// Backward and optimizer ops for a forward graph (see training_graph.h for the conventions).
#include "datasets/graphs/training_graph.h"

#include <string>
#include <unordered_set>

#include "datasets/util/errors.h"

namespace placerl::graphs {

std::vector<OpInfo> AddTrainingOps(const std::vector<OpInfo>& forward, const TrainingOpsOptions& options) {
  const int n = static_cast<int>(forward.size());
  std::vector<std::vector<int>> inputs(n);
  for (int i = 0; i < n; ++i) inputs[i] = forward[i].inputs;
  if (FindCycleOp(inputs) >= 0) throw ConfigError("training graph: the forward graph has a cycle");
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i)
    for (int p : forward[i].inputs) {
      if (p < 0 || p >= n) throw ConfigError("training graph: op '" + forward[i].name + "' input index out of range");
      consumers[p].push_back(i);
    }
  // Backward visits the forward ops in reverse topological order: Kahn's order of the forward
  // graph (smallest index first), reversed.
  std::vector<int> indegree(n, 0), topo;
  for (int i = 0; i < n; ++i) indegree[i] = static_cast<int>(forward[i].inputs.size());
  std::vector<int> ready;
  for (int i = n - 1; i >= 0; --i)
    if (indegree[i] == 0) ready.push_back(i);
  while (!ready.empty()) {  // a stack of ready ops, smallest index on top
    const int v = ready.back();
    ready.pop_back();
    topo.push_back(v);
    std::vector<int> now;
    for (int c : consumers[v])
      if (--indegree[c] == 0) now.push_back(c);
    for (auto it = now.rbegin(); it != now.rend(); ++it) ready.push_back(*it);
  }

  std::unordered_set<std::string> names;
  for (const OpInfo& o : forward) names.insert(o.name);
  auto fresh = [&](const std::string& name) {
    if (!names.insert(name).second)
      throw ConfigError("training graph: generated op name '" + name + "' is already a forward op");
    return name;
  };
  std::vector<OpInfo> ops = forward;
  auto group = [&](int x) { return forward[x].colocation.empty() ? forward[x].name : forward[x].colocation; };
  if (options.colocate)
    for (int x = 0; x < n; ++x) ops[x].colocation = group(x);

  std::vector<int> grad(n, -1);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int x = *it;
    const OpInfo& f = forward[x];
    if (f.inputs.empty() && f.param_bytes <= 0) continue;
    OpInfo g;
    g.name = fresh("grad/" + f.name);
    g.kind = f.kind;
    g.flops = 2 * f.flops;
    g.bytes = 2 * f.bytes;
    g.temp_bytes = f.temp_bytes;
    for (int p : f.inputs) g.output_bytes += forward[p].output_bytes;
    for (int c : consumers[x])
      if (grad[c] >= 0) g.inputs.push_back(grad[c]);
    for (int p : f.inputs) g.inputs.push_back(p);
    g.inputs.push_back(x);
    if (options.colocate) g.colocation = group(x);
    grad[x] = static_cast<int>(ops.size());
    ops.push_back(std::move(g));
  }
  if (options.update) {
    for (int x = 0; x < n; ++x) {
      const OpInfo& f = forward[x];
      if (f.param_bytes <= 0 || grad[x] < 0) continue;
      OpInfo u;
      u.name = fresh("update/" + f.name);
      u.kind = "elementwise";  // the optimizer apply is elementwise over the weights
      u.flops = options.update_flops_per_param * f.param_bytes / options.param_element_bytes;
      u.bytes = options.update_bytes_factor * f.param_bytes;
      u.param_bytes = options.optimizer_state_factor * f.param_bytes;
      u.inputs = {grad[x]};
      if (options.colocate) u.colocation = group(x);
      ops.push_back(std::move(u));
    }
  }
  return ops;
}

}  // namespace placerl::graphs
