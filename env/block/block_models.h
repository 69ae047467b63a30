// What the block environment asks of an architecture (docs/nas.md): its quality and its step
// time. Both are interfaces, so that later parts plug in weight-sharing accuracy (ENAS) and
// the TPU performance model's step time without touching the environment. Built here:
//   - quality: the tabular benchmarks (NAS-Bench-201 test accuracy of a dataset, NAS-Bench-Macro
//     mean test accuracy; as a fraction, accuracy / 100) and a synthetic additive quality for
//     any space (tests, and spaces that have no real quality yet);
//   - step time: no performance model applies to these CIFAR cells, so a PROXY stands in —
//     NB201's analytic multiply-accumulates (datasets/nas/tables.h Nb201MegaMacs) and
//     NAS-Bench-Macro's table FLOPs, both in millions; spaces without either have cost 0;
//   - Brainformer blocks: the TPU performance model's training step time of the block stacked
//     to a stated scale (BrainformerStepTime, cost_models/tpu/training_eval.h), in seconds.
// Tables are read once per process and path (CachedNb201Table / CachedMacroTable) and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mutex>
#include <unordered_map>

#include "cost_models/tpu/training_eval.h"
#include "datasets/nas/search_space.h"
#include "datasets/nas/tables.h"

namespace placerl::env {

class QualityModel {
 public:
  virtual ~QualityModel() = default;
  // Quality of a complete, allowed architecture, higher is better (a fraction in [0, 1] for the
  // built-in models). Throws ConfigError when the model has no value for it.
  virtual double Quality(const nas::Architecture& a) const = 0;
  virtual std::string Describe() const = 0;  // "NAS-Bench-201 cifar10 test accuracy / 100"
};

class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  // The architecture's step time, or the proxy standing in for it, in unit().
  virtual double StepTime(const nas::Architecture& a) const = 0;
  virtual std::string unit() const = 0;  // "s", "MMACs (proxy)", "none"
};

// Default paths of the shared tables, relative to the repository root.
inline constexpr const char* kDefaultNb201Table = "../shared/datasets/nas/nats_bench_tss.csv";
inline constexpr const char* kDefaultMacroTable = "../shared/datasets/nas/nas_bench_macro_cifar10.json";

std::shared_ptr<const nas::Nb201Table> CachedNb201Table(const std::string& path);
std::shared_ptr<const nas::MacroTable> CachedMacroTable(const std::string& path);

class Nb201Quality : public QualityModel {
 public:
  Nb201Quality(std::shared_ptr<const nas::Nb201Table> table, nas::Nb201Dataset dataset)
      : table_(std::move(table)), dataset_(dataset) {}
  double Quality(const nas::Architecture& a) const override;
  std::string Describe() const override;
  double Accuracy(const nas::Architecture& a) const { return 100 * Quality(a); }

 private:
  std::shared_ptr<const nas::Nb201Table> table_;
  nas::Nb201Dataset dataset_;
};

class MacroQuality : public QualityModel {
 public:
  explicit MacroQuality(std::shared_ptr<const nas::MacroTable> table) : table_(std::move(table)) {}
  double Quality(const nas::Architecture& a) const override;
  std::string Describe() const override { return "NAS-Bench-Macro cifar10 mean test accuracy / 100"; }

 private:
  std::shared_ptr<const nas::MacroTable> table_;
};

// Quality = Σ_d w[d][choice_d], w drawn uniformly from [0, 1) by `seed`, rescaled so that the
// best choice everywhere gives 1 and the worst 0 (rules ignored). Additive, so its optimum is
// known: Optimum().
class SyntheticQuality : public QualityModel {
 public:
  SyntheticQuality(const nas::SearchSpace& space, uint64_t seed);
  double Quality(const nas::Architecture& a) const override;
  std::string Describe() const override;
  // The best architecture, ignoring rules (allowed when the space has none).
  nas::Architecture Optimum() const;

 private:
  uint64_t seed_;
  std::vector<std::vector<double>> w_;
  double lo_ = 0, hi_ = 1;
};

class Nb201MacsCost : public StepTimeModel {
 public:
  double StepTime(const nas::Architecture& a) const override { return nas::Nb201MegaMacs(a.data()); }
  std::string unit() const override { return "MMACs (proxy)"; }
};

class MacroFlopsCost : public StepTimeModel {
 public:
  explicit MacroFlopsCost(std::shared_ptr<const nas::MacroTable> table) : table_(std::move(table)) {}
  double StepTime(const nas::Architecture& a) const override;
  std::string unit() const override { return "MFLOPs (proxy)"; }

 private:
  std::shared_ptr<const nas::MacroTable> table_;
};

class NoCost : public StepTimeModel {
 public:
  double StepTime(const nas::Architecture&) const override { return 0; }
  std::string unit() const override { return "none"; }
};

// The target scale a Brainformer block is evaluated at (docs/nas.md "Brainformer step time").
// The block's model_dim decision is d_model; the block is repeated `blocks` times.
struct BrainformerScale {
  int blocks = 8;                // repetitions of the block (TransformerModel.layers)
  int seq = 1024;                // tokens per sequence
  int vocab = 32000;
  int64_t batch = 256;           // sequences per step (global batch)
  std::string mesh = "tpu_v4:4x4";  // cost_models/tpu/spec.h mesh string
  // fsdp: FSDP over every device, experts sharded expert = gcd(devices, every MoE sub-layer's
  //   experts) ways, bf16 compute, fp32 params, Adam; remat the fastest of none / minimal / full
  //   that fits in HBM (none when nothing fits). Three evaluations per architecture.
  // search: plan_search's fastest plan that fits (data, fsdp, tensor, pipeline, microbatches,
  //   remat enumerated; expert fixed as above), falling back to `fsdp` when none fits.
  std::string plan = "fsdp";
};

// Step time (s) of a Brainformer-space architecture (datasets/nas/spaces/brainformer.pbtxt):
// the heterogeneous TransformerModel of ModelOf() on the scale's mesh and plan. Results are
// cached per architecture (the environment evaluates every sampled one); thread-safe.
class BrainformerStepTime : public StepTimeModel {
 public:
  // Throws ConfigError when the space lacks the Brainformer decisions or the scale is bad.
  BrainformerStepTime(const nas::SearchSpace& space, const BrainformerScale& scale);
  double StepTime(const nas::Architecture& a) const override;
  std::string unit() const override { return "s"; }

  struct Result {
    double step_s = 0;
    bool oom = false;          // no plan fits in HBM (step time of the remat=none plan)
    perf::PlanC plan;
    perf::StepBreakdown breakdown;
  };
  Result Evaluate(const nas::Architecture& a) const;  // not cached
  // d_model = model_dim, one SubLayer per sub-layer that is not "none" (heads; d_ff = ratio ×
  // d_model; experts, top1 / top2 / expert_choice, capacity factor), layers = blocks, seq,
  // vocab, flash attention. A block of only "none" sub-layers is evaluated as one dense FFN of
  // width 1 (embeddings + logits; the stand-in costs one tiny matmul).
  perf::TransformerModel ModelOf(const nas::Architecture& a) const;
  const BrainformerScale& scale() const { return scale_; }
  size_t cache_size() const;

 private:
  BrainformerScale scale_;
  perf::Mesh mesh_;
  int model_dim_ = -1;
  struct SubIndex {
    int type, heads, ffn_ratio, experts, gating, capacity_factor;
  };
  std::vector<SubIndex> subs_;
  std::vector<std::vector<std::string>> choices_;  // per decision
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, double> cache_;
};

// The GLaM-like uniform block in the Brainformer space (Du et al. 2022, values recalled [M]:
// every other Transformer layer's FFN is a top-2 MoE with 64 experts, FFN ratio 4; GShard's
// training capacity factor 2): model_dim 1024 and, filling the space's sub-layers,
// [attention (16 heads), dense FFN ×4, attention (16 heads), MoE FFN ×4 64 experts top-2 cf 2]
// repeated (× 2 in the 8-sub-layer space). The baseline a found block must beat at equal step
// time: its step time is budget=glam, and nas-search trains it as the quality reference.
nas::Architecture GlamLikeArchitecture(const nas::SearchSpace& space);
// An architecture from "decision=choice" pairs (every other decision: its first allowed
// choice, in order). Throws ConfigError for an unknown decision / choice or a forbidden one.
nas::Architecture ArchitectureFromChoices(const nas::SearchSpace& space,
                                          const std::vector<std::pair<std::string, std::string>>& choices);

}  // namespace placerl::env
