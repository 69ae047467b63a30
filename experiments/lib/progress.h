// Progress of long work (training, search, baselines) on stderr, in one of two modes, never
// both: on a terminal a one-line bar redrawn at most `redraw_hz` times a second
//   sa [########--------]  45%  0:12<0:15  1.23e+04 moves/s  best 1.0523
// and otherwise (a log file, CI) a plain line every `log_every_seconds`
//   sa: 45% (4500/10000 moves) elapsed 0:12 eta 0:15, 1.23e+04 moves/s, best 1.0523
// and in both a final line from Finish(). The ETA is count based (`total`), time based
// (`budget_seconds`) or the earlier of the two. Update() is cheap when nothing is drawn (a
// clock read), so call it every step.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace placerl::run {

// A caller's value shown after the rate: "best 1.0523".
struct ProgressField {
  ProgressField(std::string name, double value);  // %.6g
  ProgressField(std::string name, std::string value) : name(std::move(name)), value(std::move(value)) {}
  ProgressField(std::string name, const char* value) : name(std::move(name)), value(value) {}
  std::string name;
  std::string value;
};

struct ProgressOptions {
  enum class Mode { kAuto, kBar, kLines };
  std::string label;               // first word of every line ("sa", "place-train")
  std::string unit = "it";         // what `done` counts ("moves", "episodes")
  double total = 0;                // > 0: count-based fraction and ETA
  double budget_seconds = 0;       // > 0: time-based fraction and ETA
  double log_every_seconds = 10;   // plain-line mode
  double redraw_hz = 10;           // bar mode
  Mode mode = Mode::kAuto;         // kAuto: bar iff `out` is a terminal
  FILE* out = nullptr;             // nullptr = stderr
  int width = 0;                   // bar mode line width; 0 = the terminal's (80 if unknown)
  std::function<double()> clock;   // monotonic seconds; empty = steady_clock (tests inject one)
};

class Progress {
 public:
  explicit Progress(ProgressOptions options);
  ~Progress();  // Finish() if not called
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` units so far; redraws the bar or prints a line when it is time to.
  void Update(double done, const std::vector<ProgressField>& fields = {});
  // Prints `line` on its own line without breaking the bar (which is redrawn below it).
  void Message(const std::string& line);
  // Prints the final line ("label: done ... in 0:27 ..., <fields>[; summary]"); idempotent.
  void Finish(const std::string& summary = "");

  bool bar() const { return bar_; }

 private:
  double Now() const;
  std::string Status(bool for_bar, int width) const;
  void Draw();
  ProgressOptions opt_;
  FILE* out_;
  bool bar_;
  bool finished_ = false;
  double start_ = 0;
  double now_ = 0;
  double last_draw_ = -1;
  double done_ = 0;
  bool bar_visible_ = false;
  std::vector<ProgressField> fields_;
};

// "0:07", "12:34", "1:02:03".
std::string FormatDuration(double seconds);

}  // namespace placerl::run
