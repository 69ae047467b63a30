// Summary statistics the binaries print and write (mean, sample standard deviation, median) —
// one definition for every tool. Each returns `otherwise` (NaN by default) when v has too few
// values: none for the mean and the median, fewer than two for the standard deviation.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace placerl::stats {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double Mean(const std::vector<double>& v, double otherwise = kNaN) {
  if (v.empty()) return otherwise;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Sample standard deviation (divides by n − 1).
inline double SampleSd(const std::vector<double>& v, double otherwise = kNaN) {
  if (v.size() < 2) return otherwise;
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

inline double Median(std::vector<double> v, double otherwise = kNaN) {
  if (v.empty()) return otherwise;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace placerl::stats
