#include "cost_models/tpu/spec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <unordered_set>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {

namespace {

using google::protobuf::FieldDescriptor;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

long long ToInt(const std::string& v, const std::string& where) {
  try {
    size_t pos = 0;
    // Accept 1e3-style integers too.
    double x = std::stod(v, &pos);
    // Range first: converting NaN or a double beyond 2^63 to an integer is undefined.
    if (pos != v.size() || !(std::fabs(x) < 9e18) || x != std::floor(x)) throw std::invalid_argument(v);
    return static_cast<long long>(x);
  } catch (const std::exception&) {
    throw ConfigError(where + ": \"" + v + "\" is not an integer");
  }
}

double ToDouble(const std::string& v, const std::string& where) {
  try {
    size_t pos = 0;
    double x = std::stod(v, &pos);
    if (pos != v.size() || !std::isfinite(x)) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    throw ConfigError(where + ": \"" + v + "\" is not a finite number");
  }
}

// Copies the fields named in `keys` from `src` onto `dst` (singular scalars and repeated
// fields alike), so that written values override defaults even when they equal 0 / false.
void CopyFields(const google::protobuf::Message& src, const std::vector<std::string>& keys,
                google::protobuf::Message* dst) {
  const auto* desc = src.GetDescriptor();
  const auto* in = src.GetReflection();
  const auto* out = dst->GetReflection();
  for (const std::string& key : keys) {
    const FieldDescriptor* f = desc->FindFieldByName(key);
    if (f == nullptr) continue;
    if (f->is_repeated()) {
      out->ClearField(dst, f);
      for (int i = 0; i < in->FieldSize(src, f); ++i) {
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_INT32: out->AddInt32(dst, f, in->GetRepeatedInt32(src, f, i)); break;
          case FieldDescriptor::CPPTYPE_INT64: out->AddInt64(dst, f, in->GetRepeatedInt64(src, f, i)); break;
          case FieldDescriptor::CPPTYPE_DOUBLE: out->AddDouble(dst, f, in->GetRepeatedDouble(src, f, i)); break;
          case FieldDescriptor::CPPTYPE_STRING: out->AddString(dst, f, in->GetRepeatedString(src, f, i)); break;
          case FieldDescriptor::CPPTYPE_MESSAGE: out->AddMessage(dst, f)->CopyFrom(in->GetRepeatedMessage(src, f, i)); break;
          default: throw ConfigError("field " + key + ": unsupported repeated type");
        }
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: out->SetInt32(dst, f, in->GetInt32(src, f)); break;
      case FieldDescriptor::CPPTYPE_INT64: out->SetInt64(dst, f, in->GetInt64(src, f)); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: out->SetDouble(dst, f, in->GetDouble(src, f)); break;
      case FieldDescriptor::CPPTYPE_BOOL: out->SetBool(dst, f, in->GetBool(src, f)); break;
      case FieldDescriptor::CPPTYPE_ENUM: out->SetEnumValue(dst, f, in->GetEnumValue(src, f)); break;
      case FieldDescriptor::CPPTYPE_STRING: out->SetString(dst, f, in->GetString(src, f)); break;
      default: throw ConfigError("field " + key + ": unsupported type");
    }
  }
}

// Where the keys of an input were written: a .pbtxt file (errors about a key name its line)
// or a string (file empty: ConfigError).
struct Source {
  std::string file;
  std::vector<int> lines;  // per key, when file is set
  [[noreturn]] void Fail(const std::vector<std::string>& keys, const std::string& key,
                         const std::string& what) const {
    if (file.empty()) throw ConfigError(what);
    int line = 1;
    for (size_t i = 0; i < keys.size() && i < lines.size(); ++i)
      if (keys[i] == key) line = lines[i];
    throw ParseError(file, line, what);
  }
};

// A .pbtxt file: the message as written and the keys it gives (with their lines).
template <class Msg>
Msg FromFile(const std::string& path, std::vector<std::string>* keys, Source* source) {
  Msg msg;
  source->file = path;
  ParseTextProto(ReadFile(path), path, &msg, keys, &source->lines);
  return msg;
}

bool Given(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Fails (ConfigError, or ParseError at the key's line) unless every given int field among
// `names` is in [lo, hi].
template <class Msg>
void CheckRange(const Msg& msg, const std::vector<std::string>& keys, const Source& source,
                const std::string& what, std::initializer_list<const char*> names, long long lo,
                long long hi) {
  const auto* desc = msg.GetDescriptor();
  const auto* refl = msg.GetReflection();
  for (const char* name : names) {
    const FieldDescriptor* f = desc->FindFieldByName(name);
    if (f == nullptr || f->is_repeated()) continue;
    const long long v = f->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ? refl->GetInt64(msg, f)
                                                                        : refl->GetInt32(msg, f);
    // Not written and 0 = "use the default": only written values (and negatives) are checked.
    if (!Given(keys, name) && v == 0) continue;
    if (v < lo || v > hi)
      source.Fail(keys, name, what + ": " + name + "=" + std::to_string(v) + " is outside [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
}

std::string FieldsToString(const google::protobuf::Message& msg) {
  std::ostringstream out;
  const auto* desc = msg.GetDescriptor();
  const auto* refl = msg.GetReflection();
  bool first = true;
  for (int i = 0; i < desc->field_count(); ++i) {
    const FieldDescriptor* f = desc->field(i);
    if (f->is_repeated()) continue;
    // A field with presence that is unset means its documented default (model dropout: on);
    // it is not printed, so that strings written before the field existed stay the same.
    if (f->has_presence() && !refl->HasField(msg, f)) continue;
    out << (first ? "" : ",") << f->name() << "=";
    first = false;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: out << refl->GetInt32(msg, f); break;
      case FieldDescriptor::CPPTYPE_INT64: out << refl->GetInt64(msg, f); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: out << refl->GetDouble(msg, f); break;
      case FieldDescriptor::CPPTYPE_BOOL: out << (refl->GetBool(msg, f) ? "true" : "false"); break;
      case FieldDescriptor::CPPTYPE_ENUM: out << refl->GetEnum(msg, f)->name(); break;
      case FieldDescriptor::CPPTYPE_STRING: out << refl->GetString(msg, f); break;
      default: out << "?";
    }
  }
  return out.str();
}

}  // namespace

void SetFieldsFromString(const std::string& kvs, const std::string& what,
                         google::protobuf::Message* msg, std::vector<std::string>* keys) {
  const auto* desc = msg->GetDescriptor();
  const auto* refl = msg->GetReflection();
  std::stringstream in(kvs);
  std::string item;
  std::unordered_set<std::string> seen;
  while (std::getline(in, item, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw ConfigError(what + ": expected key=value, got \"" + item + "\"");
    const std::string key = Trim(item.substr(0, eq)), value = Trim(item.substr(eq + 1));
    const FieldDescriptor* f = desc->FindFieldByName(key);
    if (f == nullptr || f->is_repeated()) {
      std::string known;
      for (int i = 0; i < desc->field_count(); ++i)
        if (!desc->field(i)->is_repeated()) known += (known.empty() ? "" : ", ") + desc->field(i)->name();
      throw ConfigError(what + ": unknown key \"" + key + "\" (known: " + known + ")");
    }
    if (!seen.insert(key).second) throw ConfigError(what + ": key \"" + key + "\" given twice");
    if (keys != nullptr) keys->push_back(key);
    const std::string where = what + " " + key;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        long long v = ToInt(value, where);
        if (v < INT32_MIN || v > INT32_MAX) throw ConfigError(where + ": out of range");
        refl->SetInt32(msg, f, int32_t(v));
        break;
      }
      case FieldDescriptor::CPPTYPE_INT64: refl->SetInt64(msg, f, ToInt(value, where)); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: refl->SetDouble(msg, f, ToDouble(value, where)); break;
      case FieldDescriptor::CPPTYPE_BOOL: {
        const std::string u = Upper(value);
        if (u == "TRUE" || u == "1") refl->SetBool(msg, f, true);
        else if (u == "FALSE" || u == "0") refl->SetBool(msg, f, false);
        else throw ConfigError(where + ": expected true/false, got \"" + value + "\"");
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: refl->SetString(msg, f, value); break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* ed = f->enum_type();
        const std::string u = Upper(value);
        const google::protobuf::EnumValueDescriptor* ev = ed->FindValueByName(u);
        for (int i = 0; ev == nullptr && i < ed->value_count(); ++i) {
          const std::string& n = ed->value(i)->name();  // REMAT_FULL matches "full"
          if (n.size() > u.size() && EndsWith(n, "_" + u)) ev = ed->value(i);
        }
        if (ev == nullptr) throw ConfigError(where + ": unknown value \"" + value + "\"");
        refl->SetEnum(msg, f, ev);
        break;
      }
      default: throw ConfigError(where + ": unsupported field type");
    }
  }
}

TransformerModel DefaultModel() {
  TransformerModel m;
  m.set_layers(24);
  m.set_d_model(2048);
  m.set_d_ff(8192);
  m.set_heads(16);
  m.set_seq(2048);
  m.set_vocab(32000);
  m.set_flash_attention(true);
  return m;
}

namespace {

// Range checks of a model as written (NormalizedModel checks the relations between keys).
TransformerModel CheckedModel(const TransformerModel& m, const std::vector<std::string>& keys,
                              const Source& source) {
  CheckRange(m, keys, source, "model", {"layers", "d_model", "d_ff", "heads", "seq"}, 1, kMaxModelSize);
  CheckRange(m, keys, source, "model",
             {"head_dim", "kv_heads", "vocab", "num_experts", "top_k", "moe_every"}, 0, kMaxModelSize);
  if (!std::isfinite(m.capacity_factor()) || m.capacity_factor() < 0 || m.capacity_factor() > 1e6)
    source.Fail(keys, "capacity_factor", "model: capacity_factor must be finite and in [0, 1e6]");
  if (m.block_size() > kMaxBlockSubLayers)
    source.Fail(keys, "block", "model: block has " + std::to_string(m.block_size()) + " sub-layers (at most " +
                                   std::to_string(kMaxBlockSubLayers) + ")");
  for (int i = 0; i < m.block_size(); ++i) {
    const SubLayer& b = m.block(i);
    const std::string at = "model: block sub-layer " + std::to_string(i + 1) + ": ";
    for (long long v : {(long long)b.heads(), (long long)b.kv_heads(), (long long)b.head_dim(), (long long)b.d_ff(),
                        (long long)b.num_experts(), (long long)b.top_k()})
      if (v < 0 || v > kMaxModelSize)
        source.Fail(keys, "block", at + std::to_string(v) + " is outside [0, " + std::to_string(kMaxModelSize) + "]");
    if (!std::isfinite(b.capacity_factor()) || b.capacity_factor() < 0 || b.capacity_factor() > 1e6 ||
        !std::isfinite(b.ffn_ratio()) || b.ffn_ratio() < 0 || b.ffn_ratio() > 1e4)
      source.Fail(keys, "block", at + "capacity_factor must be in [0, 1e6] and ffn_ratio in [0, 1e4]");
  }
  try {
    return NormalizedModel(m);
  } catch (const ConfigError& e) {
    if (source.file.empty()) throw;
    throw ParseError(source.file, 1, e.what());  // a relation between keys: no one line
  }
}

}  // namespace

TransformerModel ParseModelSpec(const std::string& spec) {
  std::vector<std::string> keys;
  Source source;
  TransformerModel m = DefaultModel();
  if (EndsWith(spec, ".pbtxt")) {
    const TransformerModel written = FromFile<TransformerModel>(spec, &keys, &source);
    CopyFields(written, keys, &m);
    return CheckedModel(m, keys, source);
  }
  const size_t open = spec.find('(');
  if (open == std::string::npos || spec.back() != ')')
    throw ConfigError("model \"" + spec + "\": expected transformer(k=v,...), moe(k=v,...) or a .pbtxt file");
  const std::string name = Trim(spec.substr(0, open));
  if (name != "transformer" && name != "moe")
    throw ConfigError("model \"" + spec + "\": unknown model family \"" + name + "\" (transformer, moe)");
  // `block=…` is a repeated message: parsed here, the other keys by reflection.
  std::string rest, block;
  bool has_block = false;
  {
    std::stringstream in(spec.substr(open + 1, spec.size() - open - 2));
    std::string item;
    while (std::getline(in, item, ',')) {
      const size_t eq = item.find('=');
      if (eq != std::string::npos && Trim(item.substr(0, eq)) == "block") {
        if (has_block) throw ConfigError("model: key \"block\" given twice");
        has_block = true;
        block = Trim(item.substr(eq + 1));
      } else {
        rest += (rest.empty() ? "" : ",") + item;
      }
    }
  }
  SetFieldsFromString(rest, "model", &m, &keys);
  if (has_block) {
    for (const SubLayer& s : ParseBlockSpec(block)) *m.add_block() = s;
    keys.push_back("block");
  }
  if (name == "moe" && !Given(keys, "num_experts")) m.set_num_experts(8);
  if (name == "moe" && m.num_experts() == 0) throw ConfigError("model: moe(...) needs num_experts >= 1");
  return CheckedModel(m, keys, source);
}

Mesh ParseMeshSpec(const std::string& spec) {
  Mesh mesh;
  std::vector<std::string> keys;
  Source source;
  if (EndsWith(spec, ".pbtxt")) {
    mesh = FromFile<Mesh>(spec, &keys, &source);
  } else {
    const size_t colon = spec.find(':');
    if (colon == std::string::npos)
      throw ConfigError("mesh \"" + spec + "\": expected chip:AxBxC[,slices=N] or a .pbtxt file");
    mesh.set_chip(Trim(spec.substr(0, colon)));
    std::string rest = spec.substr(colon + 1), dims = rest, opts;
    const size_t comma = rest.find(',');
    if (comma != std::string::npos) {
      dims = rest.substr(0, comma);
      opts = rest.substr(comma + 1);
    }
    std::stringstream ds(dims);
    std::string dim;
    while (std::getline(ds, dim, 'x')) {
      const long long d = ToInt(Trim(dim), "mesh dims");
      if (d < 1 || d > kMaxDevices)
        throw ConfigError("mesh \"" + spec + "\": dim " + Trim(dim) + " is outside [1, " +
                          std::to_string(kMaxDevices) + "]");
      if (mesh.dims_size() == 4) throw ConfigError("mesh \"" + spec + "\": at most 4 dims");
      mesh.add_dims(int(d));
    }
    SetFieldsFromString(opts, "mesh", &mesh, &keys);
    if (Given(keys, "dims") || Given(keys, "chip"))
      throw ConfigError("mesh \"" + spec + "\": give chip and dims as chip:AxBxC");
  }
  if (mesh.chip().empty()) source.Fail(keys, "chip", "mesh \"" + spec + "\": no chip");
  if (mesh.dims_size() == 0) source.Fail(keys, "dims", "mesh \"" + spec + "\": no dims");
  if (mesh.dims_size() > 4) source.Fail(keys, "dims", "mesh \"" + spec + "\": at most 4 dims");
  CheckRange(mesh, keys, source, "mesh", {"slices"}, 1, kMaxDevices);
  CheckRange(mesh, keys, source, "mesh", {"failed"}, 0, kMaxDevices);
  // Chips in 64-bit, stopping as soon as the product passes the limit (no overflow).
  long long chips = 1;
  std::string product;
  auto grow = [&](long long factor, const std::string& what) {
    chips *= factor;
    product += (product.empty() ? "" : " x ") + std::to_string(factor) + what;
    if (chips > kMaxDevices)
      source.Fail(keys, "dims", "mesh \"" + spec + "\": " + product + " = " + std::to_string(chips) +
                                    " chips exceed the limit of " + std::to_string(kMaxDevices) + " devices");
  };
  for (int d : mesh.dims()) {
    if (d < 1) source.Fail(keys, "dims", "mesh \"" + spec + "\": dims must be >= 1, got " + std::to_string(d));
    grow(d, "");
  }
  grow(std::max(1, mesh.slices()), " slice(s)");
  return mesh;
}

bool PlanSpec::Has(const std::string& key) const { return Given(keys, key); }

PlanSpec ParsePlanSpecWithKeys(const std::string& spec) {
  PlanSpec out;
  Source source;
  if (EndsWith(spec, ".pbtxt")) {
    out.plan = FromFile<Plan>(spec, &out.keys, &source);
  } else {
    SetFieldsFromString(spec, "plan", &out.plan, &out.keys);
  }
  CheckRange(out.plan, out.keys, source, "plan",
             {"data", "fsdp", "tensor", "pipeline", "microbatches", "expert", "tensor_x", "interleave"}, 1,
             kMaxDevices);
  CheckRange(out.plan, out.keys, source, "plan", {"global_batch"}, 1, kMaxGlobalBatch);
  CheckRange(out.plan, out.keys, source, "plan", {"weight_bits", "grad_bits", "optimizer_bits", "activation_bits"}, 2,
             32);
  return out;
}

Plan ParsePlanSpec(const std::string& spec) { return ParsePlanSpecWithKeys(spec).plan; }

PlanC ResolvePlan(const PlanSpec& spec, long long devices, FillAxis fill) {
  PlanC p = PlanFromProto(spec.plan);
  if (!spec.Has("global_batch") && spec.plan.global_batch() == 0) p.global_batch = kDefaultGlobalBatch;
  int* axis[4] = {&p.data, &p.fsdp, &p.tensor, &p.pipeline};
  const char* names[4] = {"data", "fsdp", "tensor", "pipeline"};
  const int fill_index = fill == FillAxis::kData ? 0 : fill == FillAxis::kFsdp ? 1 : 2;
  // Product of the written degrees (each <= kMaxDevices, so four fit in 64 bits only when
  // checked step by step).
  long long written = 1;
  std::string product;
  for (int i = 0; i < 4; ++i) {
    if (i == fill_index && !spec.Has(names[i])) continue;
    written *= *axis[i];
    product += (product.empty() ? "" : " x ") + std::string(names[i]) + "=" + std::to_string(*axis[i]);
    if (written > kMaxDevices) break;
  }
  if (!spec.Has(names[fill_index])) {
    if (written > devices || devices % written != 0)
      throw ConfigError("plan: " + product + " = " + std::to_string(written) + " does not divide the mesh's " +
                        std::to_string(devices) + " devices (the rest would go to " + names[fill_index] + ")");
    *axis[fill_index] = int(devices / written);
  } else if (written != devices) {
    throw ConfigError("plan: " + product + " = " + std::to_string(written) + " devices, but the mesh has " +
                      std::to_string(devices));
  }
  if (p.tensor_x > 1 && p.tensor % p.tensor_x != 0)
    throw ConfigError("plan: tensor_x=" + std::to_string(p.tensor_x) + " does not divide tensor=" +
                      std::to_string(p.tensor));
  if (p.expert > 1 && (static_cast<long long>(p.data) * p.fsdp) % p.expert != 0)
    throw ConfigError("plan: expert=" + std::to_string(p.expert) + " does not divide data x fsdp = " +
                      std::to_string(static_cast<long long>(p.data) * p.fsdp));
  return p;
}

std::string ResolvedPlanString(const PlanC& p, int microbatches) {
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::ostringstream o;
  o << "data=" << p.data << ",fsdp=" << p.fsdp << ",tensor=" << p.tensor;
  if (p.tensor_x > 1) o << ",tensor_x=" << p.tensor_x;
  o << ",pipeline=" << p.pipeline << ",microbatches=" << microbatches << ",expert=" << p.expert;
  if (p.interleave > 1) o << ",interleave=" << p.interleave;
  if (p.schedule == SCHEDULE_GPIPE) o << ",schedule=gpipe";
  if (p.weight_bits > 0) o << ",weight_bits=" << p.weight_bits;
  if (p.grad_bits > 0) o << ",grad_bits=" << p.grad_bits;
  if (p.optimizer_bits > 0) o << ",optimizer_bits=" << p.optimizer_bits;
  if (p.activation_bits > 0) o << ",activation_bits=" << p.activation_bits;
  o << ",remat=" << lower(Remat_Name(p.remat).substr(6)) << ",global_batch=" << static_cast<long long>(p.global_batch)
    << ",param_dtype=" << lower(DType_Name(p.param_dtype)) << ",compute_dtype=" << lower(DType_Name(p.compute_dtype))
    << ",grad_dtype=" << lower(DType_Name(p.grad_dtype)) << ",optimizer=" << lower(Optimizer_Name(p.optimizer))
    << ",shard_optimizer=" << (p.shard_optimizer ? "true" : "false");
  if (p.grad_reduce_after_backward) o << ",grad_reduce_after_backward=true";
  if (p.flat_dcn_collectives) o << ",flat_dcn_collectives=true";
  if (p.no_sequence_parallel) o << ",no_sequence_parallel=true";
  if (p.update_consumes_gradients) o << ",update_consumes_gradients=true";
  if (p.serial_tensor_collectives) o << ",serial_tensor_collectives=true";
  if (p.fsdp_gather_on_demand) o << ",fsdp_gather_on_demand=true";
  if (p.serial_collectives) o << ",serial_collectives=true";
  return o.str();
}

std::string ModelToString(const TransformerModel& model) {
  const std::string block = model.block_size() > 0 ? ",block=" + BlockToString(model) : "";
  return (model.num_experts() > 0 ? "moe(" : "transformer(") + FieldsToString(model) + block + ")";
}

std::vector<SubLayer> ParseBlockSpec(const std::string& text) {
  std::vector<SubLayer> out;
  if (Trim(text).empty()) throw ConfigError("model block: empty (expected e.g. attn:h16+moe:e64:k2+ffn:r4)");
  std::stringstream in(text);
  std::string sub;
  while (std::getline(in, sub, '+')) {
    const int index = int(out.size()) + 1;
    sub = Trim(sub);
    std::stringstream parts(sub);
    std::string tok;
    std::getline(parts, tok, ':');
    const std::string where = "model block: sub-layer " + std::to_string(index) + " \"" + sub + "\"";
    SubLayer s;
    if (tok == "attn" || tok == "attention") s.set_type(ATTENTION);
    else if (tok == "ffn" || tok == "dense" || tok == "dense_ffn") s.set_type(DENSE_FFN);
    else if (tok == "moe" || tok == "moe_ffn") s.set_type(MOE_FFN);
    else throw ConfigError(where + ": bad token \"" + tok + "\" (sub-layer types: attn, ffn, moe)");
    std::unordered_set<std::string> seen;
    while (std::getline(parts, tok, ':')) {
      tok = Trim(tok);
      auto bad = [&](const std::string& why) -> ConfigError {
        return ConfigError(where + ": bad token \"" + tok + "\" (" + why + ")");
      };
      // Longest prefixes first: kv before k, hd before h, cf before f, ec.
      std::string key, value;
      for (const char* k : {"kv", "hd", "cf", "ec", "h", "r", "f", "e", "k"}) {
        const size_t n = std::strlen(k);
        if (tok.compare(0, n, k) == 0) {
          key = k;
          value = tok.substr(n);
          break;
        }
      }
      const bool attn = s.type() == ATTENTION, moe = s.type() == MOE_FFN;
      const bool ok = (attn && (key == "h" || key == "kv" || key == "hd")) ||
                      (!attn && (key == "r" || key == "f")) ||
                      (moe && (key == "e" || key == "k" || key == "cf" || key == "ec"));
      if (!ok)
        throw bad(attn ? "attn takes h<heads>, kv<kv_heads>, hd<head_dim>"
                       : moe ? "moe takes r<ffn_ratio>, f<d_ff>, e<experts>, k<top_k>, ec, cf<capacity_factor>"
                             : "ffn takes r<ffn_ratio>, f<d_ff>");
      if (!seen.insert(key).second) throw bad("given twice");
      if (key == "ec") {
        if (!value.empty()) throw bad("ec takes no value");
        s.set_gating(GATING_EXPERT_CHOICE);
        continue;
      }
      if (value.empty()) throw bad("missing value");
      if (key == "r" || key == "cf") {
        double x = 0;
        try {
          x = ToDouble(value, where);
        } catch (const ConfigError&) {
          throw bad("not a number");
        }
        if (!(x > 0) || x > (key == "r" ? 1e4 : 1e6)) throw bad("must be > 0 and at most " + std::string(key == "r" ? "1e4" : "1e6"));
        if (key == "r") s.set_ffn_ratio(x);
        else s.set_capacity_factor(x);
        continue;
      }
      long long v = 0;
      try {
        v = ToInt(value, where);
      } catch (const ConfigError&) {
        throw bad("not an integer");
      }
      if (v < 1 || v > kMaxModelSize) throw bad("outside [1, " + std::to_string(kMaxModelSize) + "]");
      if (key == "h") s.set_heads(int(v));
      else if (key == "kv") s.set_kv_heads(int(v));
      else if (key == "hd") s.set_head_dim(int(v));
      else if (key == "f") s.set_d_ff(int(v));
      else if (key == "e") s.set_num_experts(int(v));
      else s.set_top_k(int(v));
    }
    if (seen.count("k") && s.gating() == GATING_EXPERT_CHOICE)
      throw ConfigError(where + ": bad token \"ec\" (expert choice has no top_k: give k or ec, not both)");
    out.push_back(s);
    if (int(out.size()) > kMaxBlockSubLayers)
      throw ConfigError("model block: more than " + std::to_string(kMaxBlockSubLayers) + " sub-layers");
  }
  if (!text.empty() && text.back() == '+') throw ConfigError("model block: bad token \"+\" at the end (empty sub-layer)");
  return out;
}

std::string BlockToString(const TransformerModel& model) {
  std::string out;
  auto num = [](double x) {
    char buf[40];  // shortest of %.15g / %.17g that reads back exactly
    std::snprintf(buf, sizeof buf, "%.15g", x);
    if (std::strtod(buf, nullptr) != x) std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string(buf);
  };
  for (const SubLayer& s : model.block()) {
    if (!out.empty()) out += "+";
    if (s.type() == ATTENTION) {
      out += "attn";
      if (s.heads() > 0) out += ":h" + std::to_string(s.heads());
      if (s.kv_heads() > 0) out += ":kv" + std::to_string(s.kv_heads());
      if (s.head_dim() > 0) out += ":hd" + std::to_string(s.head_dim());
      continue;
    }
    out += s.type() == DENSE_FFN ? "ffn" : "moe";
    if (s.ffn_ratio() > 0) out += ":r" + num(s.ffn_ratio());
    if (s.d_ff() > 0) out += ":f" + std::to_string(s.d_ff());
    if (s.type() == DENSE_FFN) continue;
    if (s.num_experts() > 0) out += ":e" + std::to_string(s.num_experts());
    if (s.gating() == GATING_EXPERT_CHOICE) out += ":ec";
    else if (s.top_k() > 0) out += ":k" + std::to_string(s.top_k());
    if (s.capacity_factor() > 0) out += ":cf" + num(s.capacity_factor());
  }
  return out;
}

std::string MeshToString(const Mesh& mesh) {
  std::string s = mesh.chip() + ":";
  for (int i = 0; i < mesh.dims_size(); ++i) s += (i ? "x" : "") + std::to_string(mesh.dims(i));
  if (mesh.slices() > 1) s += ",slices=" + std::to_string(mesh.slices());
  if (mesh.failed() > 0) s += ",failed=" + std::to_string(mesh.failed());
  return s;
}

std::string PlanToString(const Plan& plan) { return FieldsToString(plan); }

int FormatBits(const std::string& format) {
  std::string f;
  for (char c : Trim(format)) f += char(std::tolower(static_cast<unsigned char>(c)));
  const std::pair<const char*, int> named[] = {{"fp32", 32}, {"bf16", 16}, {"fp16", 16},
                                               {"fp8", 8},   {"int8", 8},  {"int4", 4}};
  for (const auto& [name, bits] : named)
    if (f == name) return bits;
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  long long bits = -1;
  const size_t m = f.find('m');
  if (f.size() >= 4 && f[0] == 'e' && m != std::string::npos && digits(f.substr(1, m - 1)) && digits(f.substr(m + 1)))
    bits = 1 + std::stoll(f.substr(1, m - 1)) + std::stoll(f.substr(m + 1));
  else if (digits(f))
    bits = std::stoll(f);
  if (bits < 2 || bits > 32)
    throw ConfigError("number format \"" + format +
                      "\": expected eXmY (1 + X + Y bits, 2..32), fp32, bf16, fp16, fp8, int8, int4 or a width 2..32");
  return int(bits);
}

}  // namespace placerl::perf
