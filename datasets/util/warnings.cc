// The warning sink: stderr by default, a vector while a ScopedWarningCapture lives.
#include "datasets/util/warnings.h"

#include <cstdio>

namespace placerl {
namespace {

std::string& Program() {
  static std::string program = "placerl";
  return program;
}

void PrintToStderr(const Warning& w) {
  std::fprintf(stderr, "%s: warning [%s]: %s\n", Program().c_str(), w.id.c_str(), w.message.c_str());
}

std::function<void(const Warning&)>& Sink() {
  static std::function<void(const Warning&)> sink = PrintToStderr;
  return sink;
}

}  // namespace

void Warn(const std::string& id, const std::string& message) { Sink()(Warning{id, message}); }

void SetWarningProgram(const std::string& program) { Program() = program; }

ScopedWarningCapture::ScopedWarningCapture() : previous_(Sink()) {
  Sink() = [this](const Warning& w) { warnings_.push_back(w); };
}

ScopedWarningCapture::~ScopedWarningCapture() { Sink() = previous_; }

std::vector<std::string> ScopedWarningCapture::ids() const {
  std::vector<std::string> out;
  for (const Warning& w : warnings_) out.push_back(w.id);
  return out;
}

ScopedWarningSilence::ScopedWarningSilence() : previous_(Sink()) {
  Sink() = [](const Warning&) {};
}

ScopedWarningSilence::~ScopedWarningSilence() { Sink() = previous_; }

}  // namespace placerl
