// partition(nodes=8,devices=2,…): a tiny second environment of another action kind (kDevice), so
// that the Environment contract, the conformance suite and the agents are exercised beyond grids.
// Put each node of a small random weighted graph on one of `devices` devices, at most
// `capacity` nodes per device (the mask), nodes in index order; the reward at the end is
// −(weight of the edges cut) / (total edge weight). Small enough to know the optimum exactly
// (OptimalCutFraction), so learning tests can check that an agent finds it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "env/environment.h"
#include "env/registry.h"

namespace placerl::env {

struct PartitionOptions {
  int32_t nodes = 8;
  int32_t devices = 2;
  int32_t capacity = 0;      // 0 = ceil(nodes / devices)
  int32_t extra_edges = 8;   // random chords added to the ring
  uint64_t graph_seed = 1;
};

class PartitionEnv : public Environment {
 public:
  explicit PartitionEnv(const PartitionOptions& o);
  static std::unique_ptr<Environment> Make(EnvParams& p);

  std::string name() const override;
  ActionSpec action_spec() const override { return ActionSpec::Device(o_.devices); }
  int32_t episode_length() const override { return o_.nodes; }
  void Reset(uint64_t seed) override;
  StepResult Step(int32_t action) override;
  bool done() const override { return state_.current_node < 0; }
  std::shared_ptr<const StaticGraph> static_graph() const override { return graph_; }
  const DynamicState& state() const override { return state_; }
  const std::vector<std::string>& info_names() const override;
  const std::vector<double>& info() const override { return info_; }
  std::unique_ptr<Environment> Clone() const override { return std::make_unique<PartitionEnv>(*this); }

  // The smallest cut fraction over all assignments that respect the capacity (brute force;
  // devices^nodes ≤ 2^24).
  double OptimalCutFraction() const;
  const std::vector<int32_t>& assignment() const { return assign_; }

 private:
  double CutFraction(const std::vector<int32_t>& a) const;
  void UpdateMask();
  PartitionOptions o_;
  std::shared_ptr<const StaticGraph> graph_;
  double total_weight_ = 0;
  DynamicState state_;
  std::vector<int32_t> assign_, load_;
  std::vector<double> info_;
};

}  // namespace placerl::env
