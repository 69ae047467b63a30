// The clock a time budget is counted on: wall time (the default) or this process's CPU time.
// CPU time makes budgets comparable when the machine is shared: a run next to other work gets
// less of a core per wall second, but the same CPU seconds of work (place-train / place-baseline
// --clock cpu; the published "60 minutes on 2 cores" protocols assume an otherwise idle core).
#pragma once

#include <string>

namespace placerl {

enum class BudgetClock { kWall, kCpu };

// "wall" | "cpu" ("" = wall); anything else throws ConfigError naming the choices.
BudgetClock ParseBudgetClock(const std::string& name);
const char* BudgetClockName(BudgetClock clock);

// Seconds of CPU time (user + system, all threads) this process has used.
double ProcessCpuSeconds();

// Seconds since construction on the chosen clock (a wall read ~25 ns, a CPU read ~0.3 µs).
class Stopwatch {
 public:
  explicit Stopwatch(BudgetClock clock = BudgetClock::kWall);
  double Elapsed() const;
  BudgetClock clock() const { return clock_; }

 private:
  double Now() const;
  BudgetClock clock_;
  double start_;
};

}  // namespace placerl
