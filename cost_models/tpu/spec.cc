#include "cost_models/tpu/spec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

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
    // Range first: casting a double beyond long long is undefined (fuzzing: "2x6422...2").
    if (pos != v.size() || !(std::fabs(x) < 9e18) || x != double((long long)x)) throw std::invalid_argument(v);
    return (long long)x;
  } catch (const std::exception&) {
    throw ConfigError(where + ": \"" + v + "\" is not an integer");
  }
}

double ToDouble(const std::string& v, const std::string& where) {
  try {
    size_t pos = 0;
    double x = std::stod(v, &pos);
    if (pos != v.size()) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    throw ConfigError(where + ": \"" + v + "\" is not a number");
  }
}

template <class Msg>
Msg FromFile(const std::string& path) {
  Msg msg;
  ParseTextProto(ReadFile(path), path, &msg);
  return msg;
}

std::string FieldsToString(const google::protobuf::Message& msg) {
  std::ostringstream out;
  const auto* desc = msg.GetDescriptor();
  const auto* refl = msg.GetReflection();
  bool first = true;
  for (int i = 0; i < desc->field_count(); ++i) {
    const FieldDescriptor* f = desc->field(i);
    if (f->is_repeated()) continue;
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
                         google::protobuf::Message* msg) {
  const auto* desc = msg->GetDescriptor();
  const auto* refl = msg->GetReflection();
  std::stringstream in(kvs);
  std::string item;
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

TransformerModel ParseModelSpec(const std::string& spec) {
  if (EndsWith(spec, ".pbtxt")) return NormalizedModel(FromFile<TransformerModel>(spec));
  const size_t open = spec.find('(');
  if (open == std::string::npos || spec.back() != ')')
    throw ConfigError("model \"" + spec + "\": expected transformer(k=v,...), moe(k=v,...) or a .pbtxt file");
  const std::string name = Trim(spec.substr(0, open));
  if (name != "transformer" && name != "moe")
    throw ConfigError("model \"" + spec + "\": unknown model family \"" + name + "\" (transformer, moe)");
  TransformerModel m;
  m.set_vocab(32000);
  m.set_flash_attention(true);
  SetFieldsFromString(spec.substr(open + 1, spec.size() - open - 2), "model", &m);
  if (name == "moe" && m.num_experts() == 0) m.set_num_experts(8);
  return NormalizedModel(m);
}

Mesh ParseMeshSpec(const std::string& spec) {
  if (EndsWith(spec, ".pbtxt")) return FromFile<Mesh>(spec);
  const size_t colon = spec.find(':');
  if (colon == std::string::npos)
    throw ConfigError("mesh \"" + spec + "\": expected chip:AxBxC[,slices=N] or a .pbtxt file");
  Mesh mesh;
  mesh.set_chip(Trim(spec.substr(0, colon)));
  std::string rest = spec.substr(colon + 1), dims = rest, opts;
  const size_t comma = rest.find(',');
  if (comma != std::string::npos) {
    dims = rest.substr(0, comma);
    opts = rest.substr(comma + 1);
  }
  std::stringstream ds(dims);
  std::string dim;
  while (std::getline(ds, dim, 'x')) mesh.add_dims(int(ToInt(Trim(dim), "mesh dims")));
  if (mesh.dims_size() == 0) throw ConfigError("mesh \"" + spec + "\": no dims");
  SetFieldsFromString(opts, "mesh", &mesh);
  return mesh;
}

Plan ParsePlanSpec(const std::string& spec) {
  if (EndsWith(spec, ".pbtxt")) return FromFile<Plan>(spec);
  Plan plan;
  SetFieldsFromString(spec, "plan", &plan);
  return plan;
}

std::string ModelToString(const TransformerModel& model) {
  return (model.num_experts() > 0 ? "moe(" : "transformer(") + FieldsToString(model) + ")";
}

std::string MeshToString(const Mesh& mesh) {
  std::string s = mesh.chip() + ":";
  for (int i = 0; i < mesh.dims_size(); ++i) s += (i ? "x" : "") + std::to_string(mesh.dims(i));
  if (mesh.slices() > 1) s += ",slices=" + std::to_string(mesh.slices());
  return s;
}

std::string PlanToString(const Plan& plan) { return FieldsToString(plan); }

}  // namespace placerl::perf
