#include "datasets/util/budget_clock.h"

#include <time.h>

#include <chrono>

#include "datasets/util/errors.h"

namespace placerl {

BudgetClock ParseBudgetClock(const std::string& name) {
  if (name.empty() || name == "wall") return BudgetClock::kWall;
  if (name == "cpu") return BudgetClock::kCpu;
  throw ConfigError("clock: '" + name + "' is not a budget clock (wall | cpu)");
}

const char* BudgetClockName(BudgetClock clock) { return clock == BudgetClock::kCpu ? "cpu" : "wall"; }

double ProcessCpuSeconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Stopwatch::Stopwatch(BudgetClock clock) : clock_(clock), start_(Now()) {}

double Stopwatch::Now() const {
  if (clock_ == BudgetClock::kCpu) return ProcessCpuSeconds();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Stopwatch::Elapsed() const { return Now() - start_; }

}  // namespace placerl
