// HDP's grouper (Mirhoseini, Goldie et al., ICLR 2018; reference device_placement_notes.md §1.3):
// a feed-forward network over per-unit features that gives every unit a softmax over G groups;
// one group is sampled per unit, independently (the grouping's probability factorises over the
// units), all units in one batched forward. The placer (encoders/policy.h, usually the `lstm`
// preset) then places the non-empty groups; both are trained by one REINFORCE loss
// (R − b)·(−log p_placer − log p_grouper) — agents/hdp_training.h owns that loop.
//
// Units are the nodes of a device environment's static graph (env/device/device_env.h: one node
// per co-location group), so an op, its gradient and its weights' update always share a group:
// co-location is kept by construction. Inputs per unit: the environment's static node features
// x_u (FLOPs, bytes, output/param/temp bytes, op count, time, memory need, op-kind fractions,
// position — HDP's "op type, output shape, adjacency" as far as the environment computes them)
// and the mean of its graph neighbours' x (the adjacency, as the lstm preset's encoder does),
// each of the 2F columns standardised over the graph's units (z-scores; constant columns 0):
//   logits_u = W_2·ReLU(W_1·[x_u, mean_{v ~ u} x_v] + b_1) + b_2   (hidden 64, HDP),  p_u = softmax(logits_u).
// The grouper's own Adam step applies the grouper's half of the joint loss: the two networks
// share no parameter and Adam is per parameter, so two optimisers with the same settings take
// the step one optimiser over both would (the global-norm gradient clip is applied per network).
//
// Torch-free header (pimpl); hdp_grouper.cc holds the LibTorch module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/environment.h"

namespace placerl::encoders {

struct HdpGrouperOptions {
  int32_t num_groups = 256;   // G (HDP paper: 256; TF code: min(256, 20·#devices))
  int32_t hidden_dim = 64;    // HDP: 64
  uint64_t init_seed = 1;
  // The grouper's optimiser: the learner's settings (agents::AgentOptions), so that the joint
  // loss takes one kind of step.
  double learning_rate = 0.1;
  double adam_eps = 1e-5;
  double max_grad_norm = 1.0;
  double entropy_coef = 0;    // bonus on the mean per-unit entropy (HDP: none)
};

// One sampled grouping of the units of a static graph.
struct Grouping {
  std::vector<int32_t> unit_group;  // unit → group in [0, G)
  double log_prob = 0;              // Σ_u log p_u(group of u)
  double mean_entropy = 0;          // mean over units of H(p_u), nats
  int32_t used_groups = 0;          // distinct groups in unit_group
};

// Dense ids for the used groups in order of first appearance over the units (empty groups
// skipped): out[u] in [0, used). Returns `used`.
int32_t CompactGroups(const std::vector<int32_t>& unit_group, std::vector<int32_t>* out);

class HdpGrouper {
 public:
  // `feature_dim`: the static node feature count of the units' graphs (the input is 2·that).
  HdpGrouper(const HdpGrouperOptions& options, int32_t feature_dim);
  ~HdpGrouper();
  HdpGrouper(const HdpGrouper&) = delete;
  HdpGrouper& operator=(const HdpGrouper&) = delete;

  const HdpGrouperOptions& options() const;

  // Samples a group per unit of `units` with `rng` (the most likely group per unit when
  // `greedy`). ConfigError when the graph's feature count differs from the grouper's.
  Grouping Sample(const env::StaticGraph& units, std::mt19937_64* rng, bool greedy = false);
  // Per-unit probabilities [U, G] under the current weights (tests, diagnostics).
  std::vector<float> Probabilities(const env::StaticGraph& units);

  // The grouper's half of the joint REINFORCE loss and one Adam step:
  //   loss = −Σ_k weight_k · log p(groupings_k) − entropy_coef · mean_k H̄(groupings_k),
  // weight_k = Σ over the placements of grouping k of (R − b) ÷ the number of placer decisions
  // in the update (the learner's normalisation of its half). Returns losses/grouper_loss,
  // losses/grouper_entropy, charts/grouper_used_groups, losses/grouper_grad_norm.
  std::map<std::string, double> Update(const env::StaticGraph& units, const std::vector<const Grouping*>& groupings,
                                       const std::vector<double>& weights);

  // Weights, optimiser state and options to `path` (atomically) / from it (ConfigError when the
  // options or the feature count differ).
  void Save(const std::string& path) const;
  void Load(const std::string& path);
  // The same as bytes (place-train keeps them inside the placer's checkpoint); `name` names
  // them in errors.
  std::string Bytes() const;
  void LoadBytes(const std::string& bytes, const std::string& name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace placerl::encoders
