// What the block environment asks of an architecture (docs/nas.md): its quality and its step
// time. Both are interfaces, so that later parts plug in weight-sharing accuracy (ENAS) and
// the TPU performance model's step time without touching the environment. Built here:
//   - quality: the tabular benchmarks (NAS-Bench-201 test accuracy of a dataset, NAS-Bench-Macro
//     mean test accuracy; as a fraction, accuracy / 100) and a synthetic additive quality for
//     any space (tests, and spaces that have no real quality yet);
//   - step time: no performance model applies to these CIFAR cells, so a PROXY stands in —
//     NB201's analytic multiply-accumulates (datasets/nas/tables.h Nb201MegaMacs) and
//     NAS-Bench-Macro's table FLOPs, both in millions; spaces without either have cost 0.
// Tables are read once per process and path (CachedNb201Table / CachedMacroTable) and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace placerl::env
