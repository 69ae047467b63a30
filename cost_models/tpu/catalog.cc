#include "cost_models/tpu/catalog.h"

#include <google/protobuf/text_format.h>

#include <cmath>
#include <sstream>

#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {

namespace {

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
  // (errors at the bad token, enum numbers checked: the shared reader of every .pbtxt)
  google::protobuf::TextFormat::ParseInfoTree tree;
  run::ParseTextFormat(text, filename, msg, &tree);
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
    auto check_rate = [&](double v, const char* name) {
      if (v >= 0 && v <= 1) return;  // (false for NaN)
      throw ParseError(filename, LineOf(text, name),
                       where + "efficiency." + name + " must be in [0, 1] (0 = the attention core as a matmul)");
    };
    check_rate(e.flash_attention(), "flash_attention");
    check_rate(e.flash_attention_bwd(), "flash_attention_bwd");
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
