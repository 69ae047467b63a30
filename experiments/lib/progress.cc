#include "experiments/lib/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace placerl::run {
namespace {

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}

std::string Rate(double r) { return r >= 100 ? Fmt("%.0f", r) : Fmt("%.3g", r); }

}  // namespace

ProgressField::ProgressField(std::string n, double v) : name(std::move(n)), value(Fmt("%.6g", v)) {}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = static_cast<long long>(std::llround(seconds));
  char b[48];
  if (s >= 3600) {
    std::snprintf(b, sizeof(b), "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(b, sizeof(b), "%lld:%02lld", s / 60, s % 60);
  }
  return b;
}

Progress::Progress(ProgressOptions options) : opt_(std::move(options)) {
  out_ = opt_.out ? opt_.out : stderr;
  if (opt_.mode == ProgressOptions::Mode::kAuto) {
    bar_ = ::isatty(::fileno(out_)) == 1;
  } else {
    bar_ = opt_.mode == ProgressOptions::Mode::kBar;
  }
  if (bar_ && opt_.width <= 0) {
    struct winsize ws;
    opt_.width = (::ioctl(::fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) ? ws.ws_col : 80;
  }
  start_ = now_ = Now();
}

Progress::~Progress() { Finish(); }

double Progress::Now() const {
  if (opt_.clock) return opt_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Progress::Update(double done, const std::vector<ProgressField>& fields) {
  if (finished_) return;
  done_ = done;
  if (!fields.empty()) fields_ = fields;
  now_ = Now();
  const double interval = bar_ ? 1.0 / std::max(opt_.redraw_hz, 1e-3) : opt_.log_every_seconds;
  const double since = now_ - (last_draw_ < 0 ? (bar_ ? -1e300 : start_) : last_draw_);
  if (since >= interval) Draw();
}

std::string Progress::Status(bool for_bar, int width) const {
  const double elapsed = std::max(0.0, now_ - start_);
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  double fraction = -1, eta = -1;
  if (opt_.total > 0) {
    fraction = std::clamp(done_ / opt_.total, 0.0, 1.0);
    if (rate > 0) eta = std::max(0.0, (opt_.total - done_) / rate);
  }
  if (opt_.budget_seconds > 0) {
    const double tf = std::clamp(elapsed / opt_.budget_seconds, 0.0, 1.0);
    const double te = std::max(0.0, opt_.budget_seconds - elapsed);
    fraction = std::max(fraction, tf);
    eta = eta < 0 ? te : std::min(eta, te);
  }
  const std::string count = Fmt("%.0f", done_) + (opt_.total > 0 ? "/" + Fmt("%.0f", opt_.total) : "") + " " + opt_.unit;
  std::string fields;
  for (const ProgressField& f : fields_) fields += (for_bar ? "  " : ", ") + f.name + " " + f.value;
  const std::string rate_s = elapsed > 0 ? Rate(rate) + " " + opt_.unit + "/s" : "";
  if (!for_bar) {
    std::string s = opt_.label + ":";
    if (fraction >= 0) s += " " + Fmt("%.0f", 100 * fraction) + "% (" + count + ")";
    else s += " " + count;
    s += " elapsed " + FormatDuration(elapsed);
    if (eta >= 0) s += " eta " + FormatDuration(eta);
    if (!rate_s.empty()) s += ", " + rate_s;
    return s + fields;
  }
  std::string tail = " " + (fraction >= 0 ? Fmt("%3.0f", 100 * fraction) + "%  " : count + "  ") +
                     FormatDuration(elapsed) + (eta >= 0 ? "<" + FormatDuration(eta) : "") +
                     (rate_s.empty() ? "" : "  " + rate_s) + fields;
  std::string head = opt_.label;
  const int room = width - 1 - static_cast<int>(head.size() + tail.size()) - 3;
  if (fraction >= 0 && room >= 10) {
    const int cells = std::min(room, 30);
    const int filled = static_cast<int>(std::floor(fraction * cells));
    head += " [" + std::string(filled, '#') + std::string(cells - filled, '-') + "]";
  }
  std::string s = head + tail;
  // Never wrap: a wrapped line cannot be redrawn with '\r'.
  if (width > 1 && static_cast<int>(s.size()) > width - 1) s.resize(width - 1);
  return s;
}

void Progress::Draw() {
  last_draw_ = now_;
  if (bar_) {
    std::fprintf(out_, "\r%s\x1b[K", Status(true, opt_.width).c_str());
    bar_visible_ = true;
  } else {
    std::fprintf(out_, "%s\n", Status(false, 0).c_str());
  }
  std::fflush(out_);
}

void Progress::Message(const std::string& line) {
  if (bar_ && bar_visible_) std::fprintf(out_, "\r\x1b[K");
  std::fprintf(out_, "%s\n", line.c_str());
  if (bar_ && bar_visible_ && !finished_) {
    std::fprintf(out_, "%s\x1b[K", Status(true, opt_.width).c_str());
  }
  std::fflush(out_);
}

void Progress::Finish(const std::string& summary) {
  if (finished_) return;
  finished_ = true;
  now_ = Now();
  const double elapsed = std::max(0.0, now_ - start_);
  std::string s = opt_.label + ": done " + Fmt("%.0f", done_) + " " + opt_.unit + " in " + FormatDuration(elapsed);
  if (elapsed > 0) s += " (" + Rate(done_ / elapsed) + " " + opt_.unit + "/s)";
  for (const ProgressField& f : fields_) s += ", " + f.name + " " + f.value;
  if (!summary.empty()) s += "; " + summary;
  if (bar_ && bar_visible_) std::fprintf(out_, "\r\x1b[K");
  std::fprintf(out_, "%s\n", s.c_str());
  std::fflush(out_);
}

}  // namespace placerl::run
