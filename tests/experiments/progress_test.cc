// Tests of progress reporting with an injected clock: plain lines every N seconds off a
// terminal, a bar redrawn at most redraw_hz times a second on one, never both, ETA from a
// count or a time budget, and the final line.
#include "experiments/lib/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace placerl::run {
namespace {

// Everything written to a FILE* (a temporary file: never a terminal).
class Capture {
 public:
  Capture() : f_(std::tmpfile()) {}
  ~Capture() { std::fclose(f_); }
  FILE* file() { return f_; }
  std::string Text() {
    std::fflush(f_);
    std::string s;
    std::rewind(f_);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f_)) > 0) s.append(buf, n);
    std::fseek(f_, 0, SEEK_END);
    return s;
  }

 private:
  FILE* f_;
};

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Progress, PlainLinesEveryNSecondsAndAFinalLine) {
  Capture out;
  double t = 100;
  ProgressOptions o;
  o.label = "sa";
  o.unit = "moves";
  o.total = 1000;
  o.log_every_seconds = 10;
  o.out = out.file();  // not a terminal: kAuto picks lines
  o.clock = [&] { return t; };
  {
    Progress p(o);
    EXPECT_FALSE(p.bar());
    for (int i = 1; i <= 25; ++i) {
      t = 100 + i;
      p.Update(10.0 * i, {{"best", 1.0523}});
    }
    p.Finish("best.plc written");
  }
  const std::string s = out.Text();
  EXPECT_EQ(Count(s, "\n"), 3u) << s;  // t = 110, 120, final
  EXPECT_EQ(Count(s, "\r"), 0u) << s;  // never the bar
  EXPECT_NE(s.find("sa: 10% (100/1000 moves) elapsed 0:10 eta 1:30, 10 moves/s, best 1.0523\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("sa: 20% (200/1000 moves) elapsed 0:20 eta 1:20"), std::string::npos) << s;
  EXPECT_NE(s.find("sa: done 250 moves in 0:25 (10 moves/s), best 1.0523; best.plc written\n"), std::string::npos)
      << s;
}

TEST(Progress, BarRedrawnAtMostTenTimesASecond) {
  Capture out;
  double t = 0;
  ProgressOptions o;
  o.label = "train";
  o.unit = "episodes";
  o.budget_seconds = 60;
  o.mode = ProgressOptions::Mode::kBar;
  o.width = 70;
  o.out = out.file();
  o.clock = [&] { return t; };
  Progress p(o);
  EXPECT_TRUE(p.bar());
  // 1000 updates within 0.5 s: at most one draw per 0.1 s.
  for (int i = 0; i < 1000; ++i) {
    t = i * 0.0005;
    p.Update(i);
  }
  std::string s = out.Text();
  EXPECT_GE(Count(s, "\r"), 5u);
  EXPECT_LE(Count(s, "\r"), 6u);
  EXPECT_EQ(Count(s, "\n"), 0u);  // a bar, not lines
  t = 15;
  p.Update(1500, {{"best", 0.98}});
  s = out.Text();
  const std::string last = s.substr(s.rfind('\r') + 1);
  EXPECT_LE(last.size(), 69u + 3u);  // width - 1, plus the erase-to-end escape
  EXPECT_NE(last.find("train ["), std::string::npos) << last;
  EXPECT_NE(last.find(" 25%  0:15<0:45  100 episodes/s  best 0.98"), std::string::npos) << last;
  p.Finish();
  s = out.Text();
  EXPECT_EQ(Count(s, "\n"), 1u);
  EXPECT_NE(s.find("train: done 1500 episodes in 0:15 (100 episodes/s), best 0.98\n"), std::string::npos) << s;
}

TEST(Progress, EtaIsTheEarlierOfCountAndBudget) {
  Capture out;
  double t = 0;
  ProgressOptions o;
  o.label = "x";
  o.total = 100;
  o.budget_seconds = 100;
  o.log_every_seconds = 1;
  o.out = out.file();
  o.clock = [&] { return t; };
  Progress p(o);
  t = 10;
  p.Update(50);  // count: 10 s left; budget: 90 s left
  EXPECT_NE(out.Text().find("x: 50% (50/100 it) elapsed 0:10 eta 0:10"), std::string::npos) << out.Text();
  t = 20;
  p.Update(51);  // count: ~19 s; budget: 80 s
  EXPECT_NE(out.Text().find("elapsed 0:20 eta 0:19"), std::string::npos) << out.Text();
}

TEST(Progress, NoTotalAndNoBudgetShowsCountAndRate) {
  Capture out;
  double t = 0;
  ProgressOptions o;
  o.label = "search";
  o.log_every_seconds = 5;
  o.out = out.file();
  o.clock = [&] { return t; };
  Progress p(o);
  t = 5;
  p.Update(20);
  EXPECT_NE(out.Text().find("search: 20 it elapsed 0:05, 4 it/s\n"), std::string::npos) << out.Text();
}

TEST(Progress, MessageKeepsTheBar) {
  Capture out;
  double t = 0;
  ProgressOptions o;
  o.label = "b";
  o.total = 10;
  o.mode = ProgressOptions::Mode::kBar;
  o.width = 60;
  o.out = out.file();
  o.clock = [&] { return t; };
  Progress p(o);
  p.Update(1);
  p.Message("new best 1.2");
  const std::string s = out.Text();
  EXPECT_NE(s.find("\r\x1b[Knew best 1.2\nb ["), std::string::npos) << s;
}

TEST(Progress, FinishIsIdempotentAndRunsFromTheDestructor) {
  Capture out;
  ProgressOptions o;
  o.label = "d";
  o.out = out.file();
  { Progress p(o); }
  EXPECT_EQ(Count(out.Text(), "d: done 0 it"), 1u);
  {
    Progress p(o);
    p.Finish();
    p.Finish();
    p.Update(5);
  }
  EXPECT_EQ(Count(out.Text(), "d: done 0 it"), 2u);
}

TEST(FormatDuration, Forms) {
  EXPECT_EQ(FormatDuration(7), "0:07");
  EXPECT_EQ(FormatDuration(754), "12:34");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_EQ(FormatDuration(1.0 / 0.0), "?");
}

}  // namespace
}  // namespace placerl::run
