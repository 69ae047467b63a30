#include "env/block/block_models.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <random>

#include "datasets/util/errors.h"

namespace placerl::env {

namespace {

template <typename T, typename Read>
std::shared_ptr<const T> Cached(const std::string& path, Read read) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const T>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto t = std::make_shared<const T>(read(path));
  cache[path] = t;
  return t;
}

}  // namespace

std::shared_ptr<const nas::Nb201Table> CachedNb201Table(const std::string& path) {
  return Cached<nas::Nb201Table>(path, [](const std::string& p) { return nas::ReadNb201Csv(p); });
}

std::shared_ptr<const nas::MacroTable> CachedMacroTable(const std::string& path) {
  return Cached<nas::MacroTable>(path, [](const std::string& p) { return nas::ReadNasBenchMacroJson(p); });
}

double Nb201Quality::Quality(const nas::Architecture& a) const {
  const float acc = table_->Accuracy(dataset_, nas::Nb201Code(a.data()));
  if (!std::isfinite(acc)) throw ConfigError("NAS-Bench-201 has no row for " + nas::Nb201ArchString(a.data()));
  return acc / 100.0;
}

std::string Nb201Quality::Describe() const {
  return std::string("NAS-Bench-201 ") + nas::Nb201DatasetName(dataset_) + " 200-epoch test accuracy / 100";
}

double MacroQuality::Quality(const nas::Architecture& a) const {
  const float acc = table_->mean_accuracy[nas::MacroCode(a.data())];
  if (!std::isfinite(acc)) throw ConfigError("NAS-Bench-Macro has no row for " + nas::MacroArchString(a.data()));
  return acc / 100.0;
}

double MacroFlopsCost::StepTime(const nas::Architecture& a) const {
  const int64_t f = table_->flops[nas::MacroCode(a.data())];
  if (f < 0) throw ConfigError("NAS-Bench-Macro has no row for " + nas::MacroArchString(a.data()));
  return static_cast<double>(f) / 1e6;
}

SyntheticQuality::SyntheticQuality(const nas::SearchSpace& space, uint64_t seed) : seed_(seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double lo = 0, hi = 0;
  for (const nas::Decision& d : space.decisions()) {
    std::vector<double> w(d.num_choices());
    for (double& x : w) x = u(rng);
    lo += *std::min_element(w.begin(), w.end());
    hi += *std::max_element(w.begin(), w.end());
    w_.push_back(std::move(w));
  }
  lo_ = lo;
  hi_ = hi > lo ? hi : lo + 1;
}

double SyntheticQuality::Quality(const nas::Architecture& a) const {
  double s = 0;
  for (size_t d = 0; d < w_.size(); ++d) s += w_[d].at(a.at(d));
  return (s - lo_) / (hi_ - lo_);
}

std::string SyntheticQuality::Describe() const {
  return "synthetic additive quality (seed " + std::to_string(seed_) + ")";
}

nas::Architecture SyntheticQuality::Optimum() const {
  nas::Architecture a;
  for (const auto& w : w_) a.push_back(static_cast<int32_t>(std::max_element(w.begin(), w.end()) - w.begin()));
  return a;
}

}  // namespace placerl::env
