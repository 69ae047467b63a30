// The pieces of a run directory together, as a binary's loop uses them, in a child process:
// Ctrl-C (SIGINT) ends the loop cleanly with the best result, the logs and the curve written;
// kill -9 keeps every step logged before it, readable (metrics.csv and TensorBoard).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "datasets/proto/perf_model.pb.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "datasets/util/stop_signal.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

namespace fs = std::filesystem;
using placerl::testing::Slurp;
using placerl::testing::TempDir;

// A stand-in for a search loop: the "cost" improves every step; signals itself at
// `signal_at` with `sig`. Returns the process exit code.
int RunLoop(const std::string& dir, int signal_at, int sig) {
  InstallStopOnSignal();
  RunDirOptions o;
  o.path = dir;
  RunDirectory rd(o);
  perf::RunSpec config;
  config.mutable_model()->set_layers(2);
  rd.WriteConfig(config, "run_loop_test");
  FILE* log = std::fopen((dir + "/../progress.log").c_str(), "w");
  ProgressOptions po;
  po.label = "loop";
  po.total = 1000;
  po.out = log;
  po.log_every_seconds = 0;  // a line per update: the test checks the mode, not the timing
  Progress progress(po);
  double best = 1e9;
  int step = 0;
  for (; step < 1000 && !StopRequested(); ++step) {
    const double cost = 1.0 + 1.0 / (1 + step);
    best = std::min(best, cost);
    rd.Log(step, {{"charts/best_cost", best}});
    progress.Update(step + 1, {{"best", best}});
    if (step == signal_at) kill(getpid(), sig);
  }
  rd.WriteFile("best.txt", std::to_string(step) + " " + std::to_string(best) + "\n");
  rd.PlotMetrics("curve", "step", {"charts/best_cost"}, viz::PlotOptions());
  progress.Finish("stopped by signal " + std::to_string(StopSignal()));
  std::fclose(log);
  return 0;
}

int Child(const std::string& dir, int signal_at, int sig) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(RunLoop(dir, signal_at, sig));
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(RunLoop, CtrlCStopsCleanlyWithTheBestResultWritten) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  const int status = Child(dir, 49, SIGINT);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The step that saw the signal finished; the loop stopped before the next one.
  EXPECT_EQ(Slurp(dir + "/best.txt"), "50 1.020000\n");
  const MetricsTable t = ReadMetricsCsv(dir + "/metrics.csv");
  EXPECT_EQ(t.rows.size(), 50u);
  EXPECT_TRUE(fs::exists(dir + "/curve.png"));
  EXPECT_TRUE(fs::exists(dir + "/config.pbtxt"));
  const std::string log = Slurp(tmp / "progress.log");
  EXPECT_EQ(log.find('\r'), std::string::npos);  // not a terminal: lines only
  EXPECT_NE(log.find("loop: done 50 it"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped by signal 2"), std::string::npos) << log;
}

TEST(RunLoop, KillNineKeepsEveryLoggedStep) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  const int status = Child(dir, 20, SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_FALSE(fs::exists(dir + "/best.txt"));
  EXPECT_EQ(ReadMetricsCsv(dir + "/metrics.csv").rows.size(), 21u);
  int events = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find("tfevents") == std::string::npos) continue;
    ++events;
    const TensorBoardFile f = ReadTensorBoardFile(e.path().string());
    ASSERT_EQ(f.scalars.size(), 21u);
    EXPECT_EQ(f.scalars.back().step, 20);
  }
  EXPECT_EQ(events, 1);
}

}  // namespace
}  // namespace placerl::run
