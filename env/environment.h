// The one Environment contract shared by the three domains (chip macros → grid cells, ops →
// devices, block slots → layer choices) and the GraphObservation every encoder reads
// (../shared/DESIGN.md "The shared contract"; docs/environments.md).
//
// An episode is a sequence of per-node decisions. The observation is split as Circuit Training
// splits it: a StaticGraph that never changes for an instance (node features, weighted edges,
// metadata — encoders embed it once per instance) and a DynamicState that changes every step
// (the node being decided, per-node dynamic features, the action mask, optional per-action
// feature maps). Plain C++ arrays, no LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace placerl::env {

enum class ActionKind : uint8_t {
  kGrid,    // a cell of a cols × rows grid; action = row * cols + col
  kDevice,  // one of n devices
  kChoice,  // one of k choices
};
const char* ActionKindName(ActionKind k);  // "grid", "device", "choice"

struct ActionSpec {
  ActionKind kind = ActionKind::kChoice;
  int32_t cols = 0, rows = 0;  // kGrid
  int32_t n = 0;               // kDevice: devices; kChoice: choices
  static ActionSpec Grid(int32_t cols, int32_t rows) { return {ActionKind::kGrid, cols, rows, cols * rows}; }
  static ActionSpec Device(int32_t n) { return {ActionKind::kDevice, 0, 0, n}; }
  static ActionSpec Choice(int32_t k) { return {ActionKind::kChoice, 0, 0, k}; }
  int32_t num_actions() const { return n; }
  std::string ToString() const;  // "grid(cols=35,rows=33)", "device(n=4)", "choice(k=5)"
  bool operator==(const ActionSpec& o) const {
    return kind == o.kind && cols == o.cols && rows == o.rows && n == o.n;
  }
};

// The part of an observation that is fixed for a problem instance. Shared (read-only) by every
// step, clone and copy of the environment.
struct StaticGraph {
  int32_t num_nodes = 0;
  // Node features [num_nodes, node_feature_dim], row-major.
  int32_t node_feature_dim = 0;
  std::vector<float> node_features;
  std::vector<std::string> node_feature_names;  // size node_feature_dim
  // Edges: the [2, E] edge list as two arrays; each undirected edge appears once (src < dst
  // unless the environment says it is directed). Weights [E] (1 when the domain has none).
  bool directed = false;
  std::vector<int32_t> edge_src, edge_dst;
  std::vector<float> edge_weight;
  // Optional edge features [E, edge_feature_dim].
  int32_t edge_feature_dim = 0;
  std::vector<float> edge_features;
  // Metadata features of the instance [metadata_dim].
  std::vector<float> metadata;
  std::vector<std::string> metadata_names;
  // Human-readable node names (optional; empty or size num_nodes).
  std::vector<std::string> node_names;

  int32_t num_edges() const { return static_cast<int32_t>(edge_src.size()); }
  int32_t metadata_dim() const { return static_cast<int32_t>(metadata.size()); }
  // Throws ConfigError when sizes disagree or an edge index is out of range.
  void Validate() const;
};

// The part of an observation that changes every step. Buffers keep their sizes for the whole
// life of an environment, so a step writes into them without allocating.
struct DynamicState {
  int32_t current_node = -1;  // graph node decided by the next action; -1 when done
  int32_t step = 0;           // decisions taken so far in this episode
  // Per-node dynamic features [num_nodes, node_dynamic_dim] (placed?, where, …).
  int32_t node_dynamic_dim = 0;
  std::vector<float> node_dynamic;
  std::vector<std::string> node_dynamic_names;
  // 1 = the action is legal now. Size num_actions. All zero when done.
  std::vector<uint8_t> action_mask;
  // Optional per-action features, channel-major [action_feature_dim, num_actions] (for grids:
  // one cols × rows map per channel — occupancy, density, congestion, cost change, …).
  int32_t action_feature_dim = 0;
  std::vector<float> action_features;
  std::vector<std::string> action_feature_names;
};

struct GraphObservation {
  std::shared_ptr<const StaticGraph> graph;
  const DynamicState* state = nullptr;  // owned by the environment; valid until its next step/reset
};

struct StepResult {
  double reward = 0;
  bool done = false;
  bool infeasible = false;  // the episode ended early: no legal action was left
};

class Environment {
 public:
  virtual ~Environment() = default;

  // The registry string that re-creates this environment, every parameter with its value,
  // defaults included: "chip(netlist=…,plc=…,reward=sparse,…)".
  virtual std::string name() const = 0;
  virtual ActionSpec action_spec() const = 0;
  int32_t num_actions() const { return action_spec().num_actions(); }
  // Decisions in a complete episode (an infeasible episode ends earlier).
  virtual int32_t episode_length() const = 0;

  // Starts a new episode. Deterministic: the same seed and the same actions give the same
  // observations, rewards and info.
  virtual void Reset(uint64_t seed) = 0;
  // Takes `action` for the current node. Throws InfeasibleAction (and changes nothing) when
  // the episode is done or the action is masked out.
  virtual StepResult Step(int32_t action) = 0;
  virtual bool done() const = 0;

  virtual std::shared_ptr<const StaticGraph> static_graph() const = 0;
  virtual const DynamicState& state() const = 0;
  GraphObservation observation() const { return {static_graph(), &state()}; }
  const std::vector<uint8_t>& action_mask() const { return state().action_mask; }

  // Every cost component of the current state (at the end of an episode: of the result), by
  // name; names never change for an environment. Logs and plots read these, never recompute.
  virtual const std::vector<std::string>& info_names() const = 0;
  virtual const std::vector<double>& info() const = 0;
  double info_value(const std::string& key) const;  // throws ConfigError for an unknown key

  // An independent copy in the same state (same episode prefix). Cheap: the static parts are
  // shared.
  virtual std::unique_ptr<Environment> Clone() const = 0;
};

}  // namespace placerl::env
