// Environments registered by name with parameters, as OpenSpiel registers games:
//   MakeEnvironment("chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz)")
// A factory reads its parameters through EnvParams, giving a default for each; unknown keys
// are an error that lists the known ones, and Environment::name() prints every parameter with
// its resolved value. Binaries call RegisterBuiltinEnvironments() explicitly (no static
// initialisers: the linker drops them from static libraries).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"

namespace placerl::env {

// Parameters of one environment string. Values may be quoted ('a,b' or "a,b") when they contain
// commas or parentheses.
class EnvParams {
 public:
  // Parses "name(k=v,k2=v2)" or "name". Throws ConfigError("…") on malformed strings and on a
  // key given twice.
  static std::pair<std::string, EnvParams> Parse(const std::string& spec);

  std::string GetString(const std::string& key, const std::string& def);
  double GetDouble(const std::string& key, double def);
  int64_t GetInt(const std::string& key, int64_t def);
  bool GetBool(const std::string& key, bool def);
  bool Has(const std::string& key) const { return given_.count(key) > 0; }

  // Throws ConfigError naming the keys that no Get* asked for (and listing the known ones).
  void CheckAllUsed(const std::string& env_name) const;
  // "env(k=v,…)" with every key asked for, in the order asked, values quoted when needed.
  std::string Canonical(const std::string& env_name) const;

  void Set(const std::string& key, const std::string& value) { given_[key] = value; }

 private:
  std::string Raw(const std::string& key, const std::string& def);
  std::map<std::string, std::string> given_;
  std::vector<std::pair<std::string, std::string>> resolved_;  // in the order asked
};

using EnvFactory = std::function<std::unique_ptr<Environment>(EnvParams&)>;

struct EnvRegistration {
  std::string name;
  std::string description;
  // A small instance for tests and examples ("chip(netlist=../shared/…/macro_tiles_10x10/…)").
  std::string example;
  EnvFactory factory;
};

class EnvRegistry {
 public:
  void Register(EnvRegistration r);  // throws ConfigError on a duplicate name
  std::unique_ptr<Environment> Make(const std::string& spec) const;
  const std::vector<EnvRegistration>& registrations() const { return regs_; }
  std::vector<std::string> Names() const;

 private:
  std::vector<EnvRegistration> regs_;
};

// The registry of this process with every built-in environment registered (first call
// registers them; thread-safe).
EnvRegistry& BuiltinRegistry();
inline std::unique_ptr<Environment> MakeEnvironment(const std::string& spec) {
  return BuiltinRegistry().Make(spec);
}

// Registers the built-in environments (chip, partition, …) into `r`.
void RegisterBuiltinEnvironments(EnvRegistry* r);

}  // namespace placerl::env
