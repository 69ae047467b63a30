#include "datasets/nas/tables.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::nas {

const std::array<const char*, kNb201Ops> kNb201OpNames = {"none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3",
                                                          "avg_pool_3x3"};

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

// A number in [lo, hi] written in full ("93.5", "1e2"); false otherwise (NaN, junk, empty).
bool ParseNumber(const std::string& s, double lo, double hi, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v) && *v >= lo && *v <= hi;
}

int LineAt(const std::string& text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

}  // namespace

const char* Nb201DatasetName(Nb201Dataset d) {
  switch (d) {
    case Nb201Dataset::kCifar10: return "cifar10";
    case Nb201Dataset::kCifar100: return "cifar100";
    case Nb201Dataset::kImageNet16: return "imagenet16-120";
  }
  return "?";
}

Nb201Dataset Nb201DatasetFromName(const std::string& name) {
  for (Nb201Dataset d : {Nb201Dataset::kCifar10, Nb201Dataset::kCifar100, Nb201Dataset::kImageNet16})
    if (name == Nb201DatasetName(d)) return d;
  throw ConfigError("unknown NAS-Bench-201 dataset '" + name + "' (known: cifar10, cifar100, imagenet16-120)");
}

std::string Nb201ArchString(const int32_t* ops) {
  std::string s;
  int32_t e = 0;
  for (int32_t node = 1; node <= 3; ++node) {
    if (node > 1) s += "+";
    s += "|";
    for (int32_t from = 0; from < node; ++from) s += std::string(kNb201OpNames.at(ops[e++])) + "~" + std::to_string(from) + "|";
  }
  return s;
}

std::string ParseNb201ArchString(const std::string& s, int32_t* ops) {
  const std::vector<std::string> nodes = Split(s, '+');
  if (nodes.size() != 3) return "architecture string '" + s + "' does not have 3 nodes separated by '+'";
  int32_t e = 0;
  for (int32_t node = 1; node <= 3; ++node) {
    const std::string& part = nodes[node - 1];
    if (part.size() < 2 || part.front() != '|' || part.back() != '|')
      return "node " + std::to_string(node) + " of '" + s + "' is not written |op~j|…|";
    const std::vector<std::string> edges = Split(part.substr(1, part.size() - 2), '|');
    if (static_cast<int32_t>(edges.size()) != node)
      return "node " + std::to_string(node) + " of '" + s + "' needs " + std::to_string(node) + " edges";
    for (int32_t from = 0; from < node; ++from) {
      const std::string& edge = edges[from];
      const size_t tilde = edge.find('~');
      if (tilde == std::string::npos || edge.substr(tilde + 1) != std::to_string(from))
        return "edge '" + edge + "' of '" + s + "' should read from node " + std::to_string(from);
      const std::string op = edge.substr(0, tilde);
      int32_t k = 0;
      while (k < kNb201Ops && op != kNb201OpNames[k]) ++k;
      if (k == kNb201Ops) return "unknown operation '" + op + "' in '" + s + "'";
      ops[e++] = k;
    }
  }
  return "";
}

int32_t Nb201Code(const int32_t* ops) {
  int32_t code = 0;
  for (int32_t e = 0; e < kNb201Edges; ++e) code = code * kNb201Ops + ops[e];
  return code;
}

void Nb201Ops(int32_t code, int32_t* ops) {
  for (int32_t e = kNb201Edges - 1; e >= 0; --e) {
    ops[e] = code % kNb201Ops;
    code /= kNb201Ops;
  }
}

double Nb201MegaMacs(const int32_t* ops) {
  // Stem 3→16 3×3 at 32²; two ResNet reduction blocks (3×3 stride 2, 3×3, 1×1 shortcut);
  // classifier 64→10.
  const double base = 9.0 * 3 * 16 * 1024 + 2 * (9.0 * 16 * 32 * 256 + 9.0 * 32 * 32 * 256 + 16.0 * 32 * 256) + 640;
  // Per edge and per stage (C, H·W) = (16, 1024), (32, 256), (64, 64): C²·HW is the same, 262,144;
  // pooling C·HW·9 differs per stage. Five cells per stage.
  double per_cell = 0;
  for (int32_t e = 0; e < kNb201Edges; ++e) {
    switch (ops[e]) {
      case 2: per_cell += 3 * 262144.0; break;                                // conv 1×1, 3 stages
      case 3: per_cell += 3 * 9 * 262144.0; break;                            // conv 3×3
      case 4: per_cell += 9.0 * (16 * 1024 + 32 * 256 + 64 * 64); break;      // avg pool 3×3
      default: break;                                                         // none, skip
    }
  }
  return (base + 5 * per_cell) / 1e6;
}

Nb201Table ReadNb201Csv(const std::string& path, const TableReadOptions& options) {
  const std::string text = ReadFile(path, size_t(256) << 20);
  // A cut last row with all its fields reads as another accuracy ("93" from "93.5").
  RefuseTruncatedLastLine(text, path);
  Nb201Table t;
  for (auto& v : t.test_accuracy) v.assign(kNb201Cells, kNaN);
  size_t pos = 0;
  int line = 0;
  int col_acc[3] = {-1, -1, -1}, col_arch = -1;
  size_t fields = 0;
  std::vector<uint8_t> seen(kNb201Cells, 0);
  std::vector<int> seen_line(kNb201Cells, 0);
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string row = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.pop_back();
    if (row.empty()) continue;
    const std::vector<std::string> f = Split(row, ',');
    if (col_arch < 0) {  // header
      const char* names[3] = {"CIFAR10TestAccuracy200Epochs", "CIFAR100TestAccuracy200Epochs",
                              "ImageNetTestAccuracy200Epochs"};
      for (size_t k = 0; k < f.size(); ++k) {
        for (int d = 0; d < 3; ++d)
          if (f[k] == names[d]) col_acc[d] = static_cast<int>(k);
        if (f[k] == "ArchitectureString") col_arch = static_cast<int>(k);
      }
      for (int d = 0; d < 3; ++d)
        if (col_acc[d] < 0) throw ParseError(path, line, std::string("the header has no column ") + names[d]);
      if (col_arch < 0) throw ParseError(path, line, "the header has no column ArchitectureString");
      fields = f.size();
      continue;
    }
    if (f.size() != fields)
      throw ParseError(path, line, "expected " + std::to_string(fields) + " fields, found " + std::to_string(f.size()));
    int32_t ops[kNb201Edges];
    const std::string why = ParseNb201ArchString(f[col_arch], ops);
    if (!why.empty()) throw ParseError(path, line, why);
    const int32_t code = Nb201Code(ops);
    if (seen[code])
      throw ParseError(path, line, "cell " + f[col_arch] + " already given on line " + std::to_string(seen_line[code]));
    seen[code] = 1;
    seen_line[code] = line;
    for (int d = 0; d < 3; ++d) {
      double v = 0;
      if (!ParseNumber(f[col_acc[d]], 0, 100, &v))
        throw ParseError(path, line, "accuracy '" + f[col_acc[d]] + "' is not a number in [0, 100]");
      t.test_accuracy[d][code] = static_cast<float>(v);
    }
    ++t.rows;
  }
  if (col_arch < 0) throw ParseError(path, 0, "empty file (no header)");
  if (options.require_all && t.rows != kNb201Cells)
    throw ParseError(path, 0, "has " + std::to_string(t.rows) + " of the 15625 cells");
  return t;
}

std::string MacroArchString(const int32_t* choices) {
  std::string s;
  for (int32_t l = 0; l < kMacroLayers; ++l) s += static_cast<char>('0' + choices[l]);
  return s;
}

std::string ParseMacroArchString(const std::string& s, int32_t* choices) {
  if (s.size() != kMacroLayers) return "architecture '" + s + "' is not 8 digits";
  for (int32_t l = 0; l < kMacroLayers; ++l) {
    if (s[l] < '0' || s[l] > '2') return "architecture '" + s + "' has a digit outside 0-2";
    choices[l] = s[l] - '0';
  }
  return "";
}

int32_t MacroCode(const int32_t* choices) {
  int32_t code = 0;
  for (int32_t l = 0; l < kMacroLayers; ++l) code = code * kMacroChoices + choices[l];
  return code;
}

MacroTable ReadNasBenchMacroJson(const std::string& path, const TableReadOptions& options) {
  const std::string text = ReadFile(path, size_t(256) << 20);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ParseError(path, LineAt(text, e.byte > 0 ? e.byte - 1 : 0), std::string("not JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // a number too large for a double (fuzzing found it)
    throw ParseError(path, 0, std::string("not readable JSON: ") + e.what());
  }
  if (!j.is_object()) throw ParseError(path, 1, "expected one JSON object keyed by architecture");
  MacroTable t;
  t.mean_accuracy.assign(kMacroNetworks, kNaN);
  t.std_accuracy.assign(kMacroNetworks, kNaN);
  t.params.assign(kMacroNetworks, -1);
  t.flops.assign(kMacroNetworks, -1);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    // The key's line, looked up only for an error (nlohmann keeps keys sorted, not in file order).
    auto line = [&] {
      const size_t at = text.find("\"" + key + "\"");
      return at == std::string::npos ? 0 : LineAt(text, at);
    };
    auto fail = [&](const std::string& what) {
      throw ParseError(path, line(), "architecture \"" + key + "\": " + what);
    };
    int32_t choices[kMacroLayers];
    const std::string why = ParseMacroArchString(key, choices);
    if (!why.empty()) throw ParseError(path, line(), why);
    const nlohmann::json& v = it.value();
    if (!v.is_object()) fail("the value is not an object");
    auto number = [&](const char* field, double lo, double hi, bool required, double* out) {
      auto f = v.find(field);
      if (f == v.end()) {
        if (required) fail(std::string("no ") + field);
        return false;
      }
      if (!f->is_number() || !std::isfinite(f->get<double>()) || f->get<double>() < lo || f->get<double>() > hi)
        fail(std::string(field) + " is not a number in [" + std::to_string(static_cast<int64_t>(lo)) + ", " +
             (hi > 1e15 ? std::string("inf") : std::to_string(static_cast<int64_t>(hi))) + "]");
      *out = f->get<double>();
      return true;
    };
    double mean = 0, sd = 0, params = 0, flops = 0;
    number("mean_acc", 0, 100, true, &mean);
    const bool has_std = number("std", 0, 100, false, &sd);
    number("params", 0, 1e18, true, &params);
    number("flops", 0, 1e18, true, &flops);
    if (params != std::floor(params) || flops != std::floor(flops)) fail("params and flops must be whole numbers");
    const int32_t code = MacroCode(choices);
    t.mean_accuracy[code] = static_cast<float>(mean);
    t.std_accuracy[code] = has_std ? static_cast<float>(sd) : kNaN;
    t.params[code] = static_cast<int64_t>(params);
    t.flops[code] = static_cast<int64_t>(flops);
    ++t.rows;
  }
  if (options.require_all && t.rows != kMacroNetworks)
    throw ParseError(path, 0, "has " + std::to_string(t.rows) + " of the 6561 architectures");
  return t;
}

}  // namespace placerl::nas
