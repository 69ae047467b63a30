// The budget clocks: names parse (anything else is a ConfigError), and a CPU stopwatch advances
// with work done by this process and not with sleeping.
#include "datasets/util/budget_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "datasets/util/errors.h"

namespace placerl {
namespace {

TEST(BudgetClock, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(ParseBudgetClock(""), BudgetClock::kWall);
  EXPECT_EQ(ParseBudgetClock("wall"), BudgetClock::kWall);
  EXPECT_EQ(ParseBudgetClock("cpu"), BudgetClock::kCpu);
  EXPECT_STREQ(BudgetClockName(BudgetClock::kCpu), "cpu");
  EXPECT_THROW(ParseBudgetClock("CPU"), ConfigError);
  EXPECT_THROW(ParseBudgetClock("gpu"), ConfigError);
}

TEST(BudgetClock, CpuStopwatchCountsWorkNotSleep) {
  const Stopwatch cpu(BudgetClock::kCpu), wall(BudgetClock::kWall);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double slept_cpu = cpu.Elapsed();
  EXPECT_GE(wall.Elapsed(), 0.2);
  EXPECT_LT(slept_cpu, 0.1);  // sleeping uses (almost) no CPU
  volatile double x = 0;
  const double before = cpu.Elapsed();
  while (cpu.Elapsed() - before < 0.05) x = x + 1;  // ends only because the CPU clock advances
  EXPECT_GE(cpu.Elapsed(), before + 0.05);
  EXPECT_GT(x, 0);
}

}  // namespace
}  // namespace placerl
