#include "env/registry.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "datasets/util/errors.h"

namespace placerl::env {
namespace {

bool NeedsQuotes(const std::string& v) {
  return v.find_first_of(",()='\" ") != std::string::npos || v.empty();
}

std::string Quote(const std::string& v) {
  if (!NeedsQuotes(v)) return v;
  const char q = v.find('\'') == std::string::npos ? '\'' : '"';
  return std::string(1, q) + v + std::string(1, q);
}

bool ValidKey(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

std::pair<std::string, EnvParams> EnvParams::Parse(const std::string& spec) {
  auto fail = [&](const std::string& what) {
    throw ConfigError("environment '" + spec + "': " + what);
  };
  EnvParams p;
  const size_t open = spec.find('(');
  std::string name = spec.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  if (!ValidKey(name)) fail("expected a name like chip(...)");
  if (open == std::string::npos) return {name, p};
  size_t end = spec.size();
  while (end > 0 && spec[end - 1] == ' ') --end;
  if (end == 0 || spec[end - 1] != ')') fail("missing ')' at the end");
  size_t i = open + 1;
  const size_t stop = end - 1;
  auto skip_spaces = [&] { while (i < stop && spec[i] == ' ') ++i; };
  skip_spaces();
  if (i == stop) return {name, p};
  while (true) {
    skip_spaces();
    const size_t eq = spec.find('=', i);
    if (eq == std::string::npos || eq >= stop) fail("expected key=value at position " + std::to_string(i));
    std::string key = spec.substr(i, eq - i);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    if (!ValidKey(key)) fail("bad key '" + key + "'");
    i = eq + 1;
    skip_spaces();
    std::string value;
    if (i < stop && (spec[i] == '\'' || spec[i] == '"')) {
      const char q = spec[i];
      const size_t close = spec.find(q, i + 1);
      if (close == std::string::npos || close >= stop) fail("unterminated quote in '" + key + "'");
      value = spec.substr(i + 1, close - i - 1);
      i = close + 1;
      skip_spaces();
    } else {
      int depth = 0;
      const size_t start = i;
      while (i < stop && (depth > 0 || spec[i] != ',')) {
        if (spec[i] == '(') ++depth;
        if (spec[i] == ')' && --depth < 0) fail("unbalanced ')' in '" + key + "'");
        ++i;
      }
      if (depth != 0) fail("unbalanced '(' in '" + key + "'");
      value = spec.substr(start, i - start);
      while (!value.empty() && value.back() == ' ') value.pop_back();
    }
    if (p.given_.count(key)) fail("key '" + key + "' given twice");
    p.given_[key] = value;
    if (i >= stop) break;
    if (spec[i] != ',') fail("expected ',' after the value of '" + key + "'");
    ++i;
  }
  return {name, p};
}

std::string EnvParams::Raw(const std::string& key, const std::string& def) {
  const auto it = given_.find(key);
  const std::string v = it == given_.end() ? def : it->second;
  bool seen = false;
  for (auto& kv : resolved_)
    if (kv.first == key) {
      kv.second = v;
      seen = true;
    }
  if (!seen) resolved_.emplace_back(key, v);
  return v;
}

std::string EnvParams::GetString(const std::string& key, const std::string& def) { return Raw(key, def); }

double EnvParams::GetDouble(const std::string& key, double def) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", def);
  const std::string s = Raw(key, buf);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    throw ConfigError("parameter " + key + "='" + s + "' is not a finite number");
  // Print the default in its shortest form.
  for (auto& kv : resolved_)
    if (kv.first == key && !given_.count(key)) {
      std::snprintf(buf, sizeof(buf), "%g", def);
      if (std::strtod(buf, nullptr) == def) kv.second = buf;
    }
  return v;
}

int64_t EnvParams::GetInt(const std::string& key, int64_t def) {
  const std::string s = Raw(key, std::to_string(def));
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
    throw ConfigError("parameter " + key + "='" + s + "' is not a whole number");
  return v;
}

bool EnvParams::GetBool(const std::string& key, bool def) {
  const std::string s = Raw(key, def ? "true" : "false");
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  throw ConfigError("parameter " + key + "='" + s + "' is not true/false");
}

void EnvParams::CheckAllUsed(const std::string& env_name) const {
  std::string unknown, known;
  for (const auto& kv : given_) {
    bool used = false;
    for (const auto& r : resolved_) used |= r.first == kv.first;
    if (!used) unknown += (unknown.empty() ? "" : ", ") + kv.first;
  }
  if (unknown.empty()) return;
  for (const auto& r : resolved_) known += (known.empty() ? "" : ", ") + r.first;
  throw ConfigError(env_name + ": unknown parameter(s) " + unknown + " (known: " + known + ")");
}

std::string EnvParams::Canonical(const std::string& env_name) const {
  std::string s = env_name + "(";
  for (size_t i = 0; i < resolved_.size(); ++i) {
    if (i) s += ",";
    s += resolved_[i].first + "=" + Quote(resolved_[i].second);
  }
  return s + ")";
}

void EnvRegistry::Register(EnvRegistration r) {
  for (const auto& e : regs_)
    if (e.name == r.name) throw ConfigError("environment '" + r.name + "' registered twice");
  regs_.push_back(std::move(r));
}

std::vector<std::string> EnvRegistry::Names() const {
  std::vector<std::string> n;
  for (const auto& e : regs_) n.push_back(e.name);
  return n;
}

std::unique_ptr<Environment> EnvRegistry::Make(const std::string& spec) const {
  auto [name, params] = EnvParams::Parse(spec);
  for (const auto& e : regs_) {
    if (e.name != name) continue;
    auto env = e.factory(params);
    params.CheckAllUsed(name);
    return env;
  }
  std::string names;
  for (const auto& e : regs_) names += (names.empty() ? "" : ", ") + e.name;
  throw ConfigError("unknown environment '" + name + "' (known: " + names + ")");
}

EnvRegistry& BuiltinRegistry() {
  static EnvRegistry* r = [] {
    auto* reg = new EnvRegistry;
    RegisterBuiltinEnvironments(reg);
    return reg;
  }();
  return *r;
}

}  // namespace placerl::env
