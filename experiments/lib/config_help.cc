// `--help-config` from the embedded schema (see config_help.h).
#include "experiments/lib/config_help.h"

#include <map>
#include <set>
#include <sstream>

#include <google/protobuf/text_format.h>

#include "datasets/util/config_text.h"

namespace placerl::run {
namespace {

namespace pb = google::protobuf;

std::string TypeName(const pb::FieldDescriptor* f) {
  std::string t;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: t = "int32"; break;
    case pb::FieldDescriptor::CPPTYPE_INT64: t = "int64"; break;
    case pb::FieldDescriptor::CPPTYPE_UINT32: t = "uint32"; break;
    case pb::FieldDescriptor::CPPTYPE_UINT64: t = "uint64"; break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: t = "double"; break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: t = "float"; break;
    case pb::FieldDescriptor::CPPTYPE_BOOL: t = "bool"; break;
    case pb::FieldDescriptor::CPPTYPE_STRING: t = "string"; break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      t = "enum{";
      for (int i = 0; i < f->enum_type()->value_count(); ++i) t += (i ? "|" : "") + f->enum_type()->value(i)->name();
      t += "}";
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: t = f->message_type()->name(); break;
  }
  return f->is_repeated() ? "list<" + t + ">" : t;
}

// The default as `--set` would take it: a comma list for repeated scalars, text format for
// messages (repeated message fields), "" shown as "(empty)".
std::string DefaultText(const pb::Message& m, const pb::FieldDescriptor* f) {
  const pb::Reflection* r = m.GetReflection();
  std::string out;
  if (f->is_repeated()) {
    const int n = r->FieldSize(m, f);
    for (int i = 0; i < n; ++i) {
      std::string v;
      pb::TextFormat::PrintFieldValueToString(m, f, i, &v);
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) v = "{" + v + "}";
      out += (i ? "," : "") + v;
    }
    return n == 0 ? "(none)" : out;
  }
  pb::TextFormat::PrintFieldValueToString(m, f, -1, &out);
  return out == "\"\"" ? "(empty)" : out;
}

struct Row {
  std::string path, type, value, description;
};

// Keys in field order, message fields followed by their keys; deprecated aliases (config_text.h
// AliasTarget) go to `aliases` instead.
void Walk(const pb::Message& m, const std::string& prefix, std::set<const pb::Descriptor*>* open,
          std::vector<Row>* rows, std::vector<Row>* aliases) {
  const pb::Descriptor* d = m.GetDescriptor();
  open->insert(d);
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (!AliasTarget(f).empty()) {
      aliases->push_back({path, TypeName(f), "", FieldDescription(f)});
      continue;
    }
    const bool nested = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated() &&
                        !open->count(f->message_type());
    if (nested) {
      // The message's own line, then its keys.
      rows->push_back({path, TypeName(f), "", FieldDescription(f)});
      Walk(m.GetReflection()->GetMessage(m, f), path + ".", open, rows, aliases);
    } else {
      rows->push_back({path, TypeName(f), DefaultText(m, f), FieldDescription(f)});
    }
  }
  open->erase(d);
}

void WalkType(const pb::Descriptor* d, const std::string& prefix, std::set<const pb::Descriptor*>* open,
              std::vector<std::string>* missing) {
  open->insert(d);
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (FieldDescription(f).empty()) missing->push_back(path);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated() && !open->count(f->message_type()))
      WalkType(f->message_type(), path + ".", open, missing);
  }
  open->erase(d);
}

}  // namespace

std::string ConfigHelp(const pb::Message& defaults, const std::string& binary) {
  std::vector<Row> rows, aliases;
  std::set<const pb::Descriptor*> open;
  Walk(defaults, "", &open, &rows, &aliases);
  size_t wp = 0, wt = 0, wv = 0;
  for (const auto& r : rows) {
    wp = std::max(wp, r.path.size());
    wt = std::max(wt, r.type.size());
    if (r.value.size() <= 24) wv = std::max(wv, r.value.size());
  }
  std::ostringstream out;
  out << binary << ": every key of --set KEY=VALUE and of --config FILE.pbtxt (" << defaults.GetDescriptor()->full_name()
      << ", datasets/proto/), with its default here\n\n";
  auto pad = [](const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size() + 1, ' '); };
  out << pad("key", wp) << pad("type", wt) << pad("default", wv) << "description\n";
  for (const auto& r : rows) out << pad(r.path, wp) << pad(r.type, wt) << pad(r.value, wv) << r.description << "\n";
  if (!aliases.empty()) {
    out << "\nold keys, still read from --set, --config files, run directories and checkpoints (a config is written "
           "with the key each names):\n";
    for (const auto& r : aliases) out << pad(r.path, wp) << pad(r.type, wt) << pad(r.value, wv) << r.description << "\n";
  }
  return out.str();
}

std::vector<std::string> UndocumentedFields(const pb::Descriptor* type) {
  std::vector<std::string> missing;
  std::set<const pb::Descriptor*> open;
  WalkType(type, "", &open, &missing);
  return missing;
}

}  // namespace placerl::run
