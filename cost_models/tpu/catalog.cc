#include "cost_models/tpu/catalog.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <sstream>

#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {

namespace {

// Keeps the first error of the text-format parser (0-based line and column).
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (line_ < 0) {
      line_ = line;
      column_ = column;
      message_ = message;
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  int line_ = -1;
  int column_ = 0;
  std::string message_;
};

// The token an error is about when the parser reports it only after reading that token — at
// the next token, which is on the next line when the bad value ends its line (`dropout: maybe`
// on line 2 was reported as line 3): a bad boolean, an unknown enum value, an unknown field
// name. "" for the other errors (reported at the token they are about).
std::string ConsumedToken(const std::string& message) {
  // The first or the last "…" of the message.
  auto quoted = [&](bool last) -> std::string {
    std::vector<size_t> q;
    for (size_t i = message.find('"'); i != std::string::npos; i = message.find('"', i + 1)) q.push_back(i);
    if (q.size() < 2) return "";
    const size_t a = last ? q[q.size() - 2] : q[0], b = last ? q.back() : q[1];
    return message.substr(a + 1, b - a - 1);
  };
  if (message.rfind("Invalid value for boolean field", 0) == 0) return quoted(true);
  if (message.rfind("Unknown enumeration value", 0) == 0) return quoted(false);
  if (message.find("has no field named") != std::string::npos) return quoted(true);
  return "";
}

// Moves *line / *column (0-based, where the parser reported the error) back to the last token
// before it whose text is `token`, tokenising `text` as TextFormat does. Unchanged when there
// is none.
void PointAtToken(const std::string& text, const std::string& token, int* line, int* column) {
  if (token.empty()) return;
  class Ignore : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  } ignore;
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  google::protobuf::io::Tokenizer tokens(&input, &ignore);
  tokens.set_comment_style(google::protobuf::io::Tokenizer::SH_COMMENT_STYLE);
  tokens.set_allow_f_after_float(true);
  tokens.set_require_space_after_number(false);
  tokens.set_allow_multiline_strings(true);
  while (tokens.Next()) {
    const auto& t = tokens.current();
    if (t.line > *line || (t.line == *line && t.column >= *column)) break;
    if (t.text == token) {
      *line = t.line;
      *column = t.column;  // keep the last one before the reported position
    }
  }
}

// Every enum value set in `msg` (recursively) must be one of its enum's: proto3 enums are open,
// so the text parser accepts any number (`remat: 77`), which no name, table or printer knows.
void CheckEnumValues(const google::protobuf::Message& msg, const std::string& filename,
                     const google::protobuf::TextFormat::ParseInfoTree* tree) {
  const auto* desc = msg.GetDescriptor();
  const auto* refl = msg.GetReflection();
  for (int i = 0; i < desc->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = desc->field(i);
    const int n = f->is_repeated() ? refl->FieldSize(msg, f) : (refl->HasField(msg, f) ? 1 : 0);
    for (int k = 0; k < n; ++k) {
      const int index = f->is_repeated() ? k : -1;
      if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        const auto& sub = f->is_repeated() ? refl->GetRepeatedMessage(msg, f, k) : refl->GetMessage(msg, f);
        CheckEnumValues(sub, filename, tree == nullptr ? nullptr : tree->GetTreeForNested(f, index));
      } else if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_ENUM) {
        const int v = f->is_repeated() ? refl->GetRepeatedEnumValue(msg, f, k) : refl->GetEnumValue(msg, f);
        if (f->enum_type()->FindValueByNumber(v) != nullptr) continue;
        const auto at = tree == nullptr ? google::protobuf::TextFormat::ParseLocation() : tree->GetLocation(f, index);
        throw run::ConfigParseError(filename, at.line + 1, at.column + 1,
                                    "Unknown enumeration value " + std::to_string(v) + " for field \"" +
                                        f->name() + "\" (" + f->enum_type()->name() + ")");
      }
    }
  }
}

// Line (1-based) of the first occurrence of `name {` or `name:` in text, 0 if none.
int LineOf(const std::string& text, const std::string& needle) {
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return 0;
  int line = 1;
  for (size_t i = 0; i < pos; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace

void ParseTextProto(const std::string& text, const std::string& filename,
                    google::protobuf::Message* msg, std::vector<std::string>* keys,
                    std::vector<int>* key_lines) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  google::protobuf::TextFormat::ParseInfoTree tree;
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, msg)) {
    if (errors.line() < 0) throw ParseError(filename, 0, "cannot parse");
    int line = errors.line(), column = errors.column();
    PointAtToken(text, ConsumedToken(errors.message()), &line, &column);
    // The parser counts from 0; editors (and our file:line:col) from 1.
    throw run::ConfigParseError(filename, line + 1, column + 1, errors.message());
  }
  CheckEnumValues(*msg, filename, &tree);
  if (keys == nullptr) return;
  // Top-level fields written in the text, even when written with their default value (proto3
  // has no presence for scalars; the parser's locations have).
  const auto* desc = msg->GetDescriptor();
  for (int i = 0; i < desc->field_count(); ++i) {
    const auto* f = desc->field(i);
    const int line = tree.GetLocation(f, f->is_repeated() ? 0 : -1).line;
    if (line < 0) continue;
    keys->push_back(f->name());
    if (key_lines != nullptr) key_lines->push_back(line + 1);
  }
}

Catalog ParseCatalog(const std::string& text, const std::string& filename) {
  Catalog catalog;
  ParseTextProto(text, filename, &catalog);
  for (const Chip& chip : catalog.chip()) {
    const int line = LineOf(text, "\"" + chip.name() + "\"");
    auto fail = [&](const std::string& what) {
      throw ParseError(filename, line, "chip \"" + chip.name() + "\": " + what);
    };
    if (chip.name().empty()) throw ParseError(filename, 0, "a chip has no name");
    // Text format accepts nan and inf: every rate and size must be finite (fuzzing found
    // a NaN peak accepted and NaN step times).
    auto positive = [](double v) { return v > 0 && std::isfinite(v); };
    auto non_negative = [](double v) { return v >= 0 && std::isfinite(v); };
    bool has_bf16 = false;
    for (const DTypePeak& p : chip.peak()) {
      if (!positive(p.flops_per_s())) fail("peak flops_per_s must be finite and > 0");
      has_bf16 |= p.dtype() == BF16;
    }
    if (!has_bf16) fail("needs a BF16 peak");
    if (!positive(chip.hbm_bytes())) fail("hbm_bytes must be finite and > 0");
    if (!positive(chip.hbm_bw())) fail("hbm_bw must be finite and > 0");
    if (chip.devices_per_chip() < 1) fail("devices_per_chip must be >= 1");
    if (!chip.has_ici() || !positive(chip.ici().link_bw_one_way()) || chip.ici().links_per_chip() < 1)
      fail("ici needs links_per_chip >= 1 and link_bw_one_way > 0");
    if (chip.mxu_tile() < 0 || chip.mxu_tile() > 4096 || chip.matmul_units() < 0 || chip.matmul_units() > 1000000)
      fail("mxu_tile must be in [0, 4096] and matmul_units in [0, 1000000]");
    if (!non_negative(chip.ici().hop_latency_s()) || !non_negative(chip.dcn_bw_per_chip()) ||
        !non_negative(chip.dcn_latency_s()))
      fail("hop_latency_s, dcn_bw_per_chip and dcn_latency_s must be finite and >= 0");
  }
  auto check = [&](const Efficiency& e, const std::string& where) {
    auto check01 = [&](double v, const char* name) {
      if (!(v > 0 && v <= 1))
        throw ParseError(filename, LineOf(text, name),
                         where + "efficiency." + name + " must be in (0, 1]");
    };
    check01(e.matmul(), "matmul");
    check01(e.memory(), "memory");
    check01(e.collective_bw(), "collective_bw");
    check01(e.hbm_usable(), "hbm_usable");
    if (!(e.dcn_bw() >= 0 && e.dcn_bw() <= 1))
      throw ParseError(filename, LineOf(text, "dcn_bw"),
                       where + "efficiency.dcn_bw must be in [0, 1] (0 = collective_bw)");
    if (!(e.tp_overlap() >= 0 && e.tp_overlap() <= 1))
      throw ParseError(filename, LineOf(text, "tp_overlap"),
                       where + "efficiency.tp_overlap must be in [0, 1]");
    if (!(e.matmul_half_size() >= 0 && e.matmul_half_size() < 1e9))
      throw ParseError(filename, LineOf(text, "matmul_half_size"),
                       where + "efficiency.matmul_half_size must be in [0, 1e9)");
    if (!(e.matmul_fill() >= 0 && e.matmul_fill() <= 64))
      throw ParseError(filename, LineOf(text, "matmul_fill"),
                       where + "efficiency.matmul_fill must be in [0, 64] (tiles of rows)");
    // Latencies (seconds): finite, >= 0 and below an upper bound; the message names the key,
    // its range and the value given, at the key's line.
    auto check_latency = [&](double v, const char* name, double upper, const char* range) {
      if (v >= 0 && v < upper) return;  // (false for NaN)
      std::ostringstream msg;
      msg << where << "efficiency." << name << " must be in " << range << " s, got " << v;
      throw ParseError(filename, LineOf(text, name), msg.str());
    };
    check_latency(e.latency_floor_s(), "latency_floor_s", 1e9, "[0, 1e9)");
    check_latency(e.launch_overhead_s(), "launch_overhead_s", 1e9, "[0, 1e9)");
    check_latency(e.collective_fixed_s(), "collective_fixed_s", 1, "[0, 1)");
    check_latency(e.dcn_hop_sync_s(), "dcn_hop_sync_s", 1, "[0, 1)");
  };
  check(catalog.efficiency(), "");
  for (const Chip& chip : catalog.chip())
    if (chip.has_efficiency()) check(EffectiveEfficiency(catalog, chip), "chip " + chip.name() + ": ");
  if (catalog.has_shape_efficiency()) {
    const Catalog shaped = WithShapeModel(catalog, true);
    check(shaped.efficiency(), "shape_");
    for (const Chip& chip : shaped.chip())
      if (chip.has_efficiency()) check(EffectiveEfficiency(shaped, chip), "chip " + chip.name() + ": shape_");
  }
  return catalog;
}

Efficiency EffectiveEfficiency(const Catalog& catalog, const Chip& chip) {
  Efficiency e = catalog.efficiency();
  if (chip.has_efficiency()) e.MergeFrom(chip.efficiency());  // proto3: non-zero fields only
  return e;
}

Catalog WithShapeModel(const Catalog& catalog, bool on) {
  Catalog c = catalog;
  if (c.efficiency().shape_model() == on) return c;
  // Swap the two calibrations (so that switching back restores the first one exactly).
  if (c.has_shape_efficiency()) c.mutable_efficiency()->Swap(c.mutable_shape_efficiency());
  for (Chip& chip : *c.mutable_chip())
    if (chip.has_shape_efficiency()) chip.mutable_efficiency()->Swap(chip.mutable_shape_efficiency());
  c.mutable_efficiency()->set_shape_model(on);
  if (c.has_shape_efficiency()) c.mutable_shape_efficiency()->set_shape_model(!on);
  return c;
}

const Catalog& DefaultCatalog() {
  static const Catalog catalog = ParseCatalog(DefaultCatalogText(), "<embedded hardware.pbtxt>");
  return catalog;
}

Catalog LoadCatalog(const std::string& path) {
  if (path.empty()) return DefaultCatalog();
  return ParseCatalog(ReadFile(path), path);
}

const Chip& FindChip(const Catalog& catalog, const std::string& name) {
  std::ostringstream known;
  for (const Chip& chip : catalog.chip()) {
    if (chip.name() == name) return chip;
    known << (known.tellp() > 0 ? ", " : "") << chip.name();
  }
  throw ConfigError("unknown chip \"" + name + "\" (catalogue has: " + known.str() + ")");
}

double PeakFlops(const Chip& chip, DType dtype) {
  for (const DTypePeak& p : chip.peak())
    if (p.dtype() == dtype) return p.flops_per_s();
  throw ConfigError("chip \"" + chip.name() + "\" has no peak for dtype " + DType_Name(dtype));
}

double BytesPerElement(DType dtype) {
  switch (dtype) {
    case FP32: return 4;
    case BF16: case FP16: return 2;
    case INT8: case FP8: return 1;
    case INT4: return 0.5;
    default: return 2;
  }
}

}  // namespace placerl::perf
