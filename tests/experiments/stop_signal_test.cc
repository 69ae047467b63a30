// Tests of the clean stop: the first SIGINT/SIGTERM only sets the flag; the second goes to
// the handler installed before (in-process with a counting handler; in a child with the
// default action, which must then die of that signal); an ignored signal stays ignored.
#include "datasets/util/stop_signal.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace placerl::run {
namespace {

volatile sig_atomic_t g_previous_calls = 0;
void CountingHandler(int) { g_previous_calls = g_previous_calls + 1; }

TEST(StopSignal, FirstSetsTheFlagSecondGoesToThePreviousHandler) {
  struct sigaction counting {}, saved{};
  counting.sa_handler = CountingHandler;
  sigemptyset(&counting.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &counting, &saved), 0);
  g_previous_calls = 0;

  InstallStopOnSignal();
  InstallStopOnSignal();  // idempotent: must not make our handler its own "previous"
  EXPECT_FALSE(StopRequested());
  raise(SIGINT);
  EXPECT_TRUE(StopRequested());
  EXPECT_EQ(StopSignal(), SIGINT);
  EXPECT_EQ(g_previous_calls, 0);
  raise(SIGINT);
  EXPECT_EQ(g_previous_calls, 1);
  EXPECT_TRUE(StopRequested());

  UninstallStopOnSignal();
  EXPECT_FALSE(StopRequested());
  raise(SIGINT);  // the counting handler is back
  EXPECT_EQ(g_previous_calls, 2);
  sigaction(SIGINT, &saved, nullptr);
}

TEST(StopSignal, SecondSignalWithTheDefaultActionKillsTheProcess) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGTERM, SIG_DFL);
    InstallStopOnSignal();
    kill(getpid(), SIGTERM);
    if (!StopRequested() || StopSignal() != SIGTERM) _exit(3);
    kill(getpid(), SIGTERM);
    _exit(4);  // not reached: the default action terminates
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit code " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(StopSignal, AnIgnoredSignalStaysIgnored) {
  struct sigaction saved {};
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &saved);
  InstallStopOnSignal();
  raise(SIGINT);
  EXPECT_FALSE(StopRequested());
  raise(SIGTERM);  // SIGTERM is still ours
  EXPECT_TRUE(StopRequested());
  EXPECT_EQ(StopSignal(), SIGTERM);
  UninstallStopOnSignal();
  sigaction(SIGINT, &saved, nullptr);
}

}  // namespace
}  // namespace placerl::run
