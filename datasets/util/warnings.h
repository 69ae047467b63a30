// The one warning sink of the project. A warning is something the program works around
// and goes on with (a `.plc` that places only some macros, macros clamped to the canvas);
// it has a stable id (`PLC-0001`) so that users can search for it and scripts can match it,
// as OpenROAD's message ids. By default warnings go to stderr as one line
// `<program>: warning [ID]: message`; tests capture them with ScopedWarningCapture.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace placerl {

struct Warning {
  std::string id;       // "PLC-0001": <area>-<number>, never reused for another meaning
  std::string message;  // one line, no trailing newline
};

// The ids in use (docs/conventions.md lists them with their meaning).
namespace warning_id {
inline constexpr const char* kPlcPartialPlacement = "PLC-0001";  // rows cover only part of the macros
inline constexpr const char* kPlcMacroOffCanvas = "PLC-0002";    // macro centre outside the canvas
inline constexpr const char* kBookshelfMergedNets = "BKS-0001";  // nets merged into a shared driver's net
inline constexpr const char* kSlowEvaluation = "COST-0001";      // a full evaluation takes seconds
inline constexpr const char* kSlowRender = "RND-0001";           // a large picture takes seconds
inline constexpr const char* kGroupUnplacedCells = "GRP-0001";   // group-netlist: the standard cells look unplaced
}  // namespace warning_id

// Reports a warning to the current sink.
void Warn(const std::string& id, const std::string& message);

// Name printed before "warning" by the default sink (RunMain sets it to the binary's name).
void SetWarningProgram(const std::string& program);

// Sends every warning to `sink` while alive (nested captures: the innermost wins), then
// restores the previous sink. Not thread-safe: warnings are raised by readers on the main thread.
class ScopedWarningCapture {
 public:
  ScopedWarningCapture();
  ~ScopedWarningCapture();
  ScopedWarningCapture(const ScopedWarningCapture&) = delete;
  ScopedWarningCapture& operator=(const ScopedWarningCapture&) = delete;
  const std::vector<Warning>& warnings() const { return warnings_; }
  // Ids in the order they were raised.
  std::vector<std::string> ids() const;

 private:
  std::vector<Warning> warnings_;
  std::function<void(const Warning&)> previous_;
};

// Drops every warning while alive (fuzz targets, which see millions of inputs), then
// restores the previous sink.
class ScopedWarningSilence {
 public:
  ScopedWarningSilence();
  ~ScopedWarningSilence();
  ScopedWarningSilence(const ScopedWarningSilence&) = delete;
  ScopedWarningSilence& operator=(const ScopedWarningSilence&) = delete;

 private:
  std::function<void(const Warning&)> previous_;
};

}  // namespace placerl
