// The project's one small error hierarchy (see ../shared/STYLE.md). Thrown at boundaries:
// readers throw ParseError{file, line}; option/config checks throw ConfigError; an
// environment step that cannot be taken throws InfeasibleAction. Every `main` catches
// placerl::Error, prints what() on one line and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace placerl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A malformed input file. what() is "file:line: reason" (line 0 = the whole file).
class ParseError : public Error {
 public:
  ParseError(std::string file, int line, const std::string& reason)
      : Error(file + ":" + std::to_string(line) + ": " + reason),
        file_(std::move(file)),
        line_(line),
        reason_(reason) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_;
  int line_;
  std::string reason_;
};

// An option, setting or configuration that cannot be used as given.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error(what) {}
};

// An action that the current state of an environment does not allow.
class InfeasibleAction : public Error {
 public:
  explicit InfeasibleAction(const std::string& what) : Error(what) {}
};

// A file that cannot be opened, read or written.
class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what) {}
};

}  // namespace placerl
