#include "datasets/util/config_text.h"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "datasets/proto/descriptors.h"
#include "datasets/util/files.h"

namespace placerl::run {

namespace pb = google::protobuf;

ConfigParseError::ConfigParseError(const std::string& file, int line, int column, const std::string& reason)
    : ParseError(file, line, reason),
      column_(column),
      message_(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + reason) {}

namespace {

// Keeps the first error of the text-format parser (zero-based line/column).
class FirstError : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!has) {
      has = true;
      this->line = line;
      this->column = column;
      this->message = message;
    }
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  bool has = false;
  int line = 0;
  int column = 0;
  std::string message;
};

// The token an error is about when protobuf's parser reports it only after reading that token
// — at the next token, which is on the next line when the bad value ends its line
// (`dropout: maybe` on line 2 was reported as line 3): a bad boolean, an unknown enum value, an
// unknown field name. "" for the other errors (reported at the token they are about).
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
  class Ignore : public pb::io::ErrorCollector {
   public:
    void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
  } ignore;
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::io::Tokenizer tokens(&input, &ignore);
  tokens.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
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
// Refused at the field's location in `tree` (0:0 when the text did not write it).
void CheckEnumValues(const pb::Message& msg, const std::string& file, const pb::TextFormat::ParseInfoTree* tree) {
  const pb::Descriptor* desc = msg.GetDescriptor();
  const pb::Reflection* refl = msg.GetReflection();
  for (int i = 0; i < desc->field_count(); ++i) {
    const pb::FieldDescriptor* f = desc->field(i);
    const int n = f->is_repeated() ? refl->FieldSize(msg, f) : (refl->HasField(msg, f) ? 1 : 0);
    for (int k = 0; k < n; ++k) {
      const int index = f->is_repeated() ? k : -1;
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        const pb::Message& sub = f->is_repeated() ? refl->GetRepeatedMessage(msg, f, k) : refl->GetMessage(msg, f);
        CheckEnumValues(sub, file, tree == nullptr ? nullptr : tree->GetTreeForNested(f, index));
      } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
        const int v = f->is_repeated() ? refl->GetRepeatedEnumValue(msg, f, k) : refl->GetEnumValue(msg, f);
        if (f->enum_type()->FindValueByNumber(v) != nullptr) continue;
        const auto at = tree == nullptr ? pb::TextFormat::ParseLocation() : tree->GetLocation(f, index);
        throw ConfigParseError(file, at.line + 1, at.column + 1,
                               "Unknown enumeration value " + std::to_string(v) + " for field \"" + f->name() +
                                   "\" (" + f->enum_type()->name() + ")");
      }
    }
  }
}

std::string FieldNames(const pb::Descriptor* d) {
  std::string s;
  for (int i = 0; i < d->field_count(); ++i) s += (i ? ", " : "") + d->field(i)->name();
  return s;
}

[[noreturn]] void Fail(const std::string& assignment, const std::string& what) {
  throw ConfigError("--set '" + assignment + "': " + what);
}

template <typename T>
T ParseInteger(const std::string& assignment, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  if (v.empty()) Fail(assignment, "empty value for an integer field");
  if (std::is_signed<T>::value) {
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (end != v.c_str() + v.size()) Fail(assignment, "'" + v + "' is not a whole number");
    if (errno == ERANGE || x < static_cast<long long>(std::numeric_limits<T>::min()) ||
        x > static_cast<long long>(std::numeric_limits<T>::max())) {
      Fail(assignment, "'" + v + "' is out of range for the field");
    }
    return static_cast<T>(x);
  } else {
    if (v[0] == '-') Fail(assignment, "'" + v + "' is negative; the field is unsigned");
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (end != v.c_str() + v.size()) Fail(assignment, "'" + v + "' is not a whole number");
    if (errno == ERANGE || x > static_cast<unsigned long long>(std::numeric_limits<T>::max())) {
      Fail(assignment, "'" + v + "' is out of range for the field");
    }
    return static_cast<T>(x);
  }
}

double ParseFloating(const std::string& assignment, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size()) Fail(assignment, "'" + v + "' is not a number");
  // As the command-line validators: NaN and infinities never reach a run.
  if (!std::isfinite(x)) Fail(assignment, "'" + v + "' is not finite");
  return x;
}

bool ParseBool(const std::string& assignment, const std::string& v) {
  if (v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  Fail(assignment, "'" + v + "' is not a bool (true/false/1/0)");
}

const pb::EnumValueDescriptor* ParseEnum(const std::string& assignment, const pb::FieldDescriptor* f,
                                         const std::string& v) {
  const pb::EnumDescriptor* e = f->enum_type();
  if (const pb::EnumValueDescriptor* ev = e->FindValueByName(v)) return ev;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  // (a number outside int must not wrap onto a value: 4294967298 is not 2)
  if (!v.empty() && end == v.c_str() + v.size() && errno != ERANGE && n >= std::numeric_limits<int>::min() &&
      n <= std::numeric_limits<int>::max()) {
    if (const pb::EnumValueDescriptor* ev = e->FindValueByNumber(static_cast<int>(n))) return ev;
  }
  std::string names;
  for (int i = 0; i < e->value_count(); ++i) names += (i ? ", " : "") + e->value(i)->name();
  Fail(assignment, "'" + v + "' is not a value of " + e->full_name() + " (" + names + ")");
}

void SetScalar(const std::string& assignment, pb::Message* m, const pb::FieldDescriptor* f,
               const std::string& v) {
  const pb::Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      const auto x = ParseInteger<int32_t>(assignment, v);
      rep ? r->AddInt32(m, f, x) : r->SetInt32(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      const auto x = ParseInteger<int64_t>(assignment, v);
      rep ? r->AddInt64(m, f, x) : r->SetInt64(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      const auto x = ParseInteger<uint32_t>(assignment, v);
      rep ? r->AddUInt32(m, f, x) : r->SetUInt32(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      const auto x = ParseInteger<uint64_t>(assignment, v);
      rep ? r->AddUInt64(m, f, x) : r->SetUInt64(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      const double x = ParseFloating(assignment, v);
      rep ? r->AddDouble(m, f, x) : r->SetDouble(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      const float x = static_cast<float>(ParseFloating(assignment, v));
      rep ? r->AddFloat(m, f, x) : r->SetFloat(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      const bool x = ParseBool(assignment, v);
      rep ? r->AddBool(m, f, x) : r->SetBool(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* x = ParseEnum(assignment, f, v);
      rep ? r->AddEnum(m, f, x) : r->SetEnum(m, f, x);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_STRING:
      rep ? r->AddString(m, f, v) : r->SetString(m, f, v);
      break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;  // handled by the caller
  }
}

}  // namespace

void ParseTextFormat(const std::string& text, const std::string& file, pb::Message* message,
                     pb::TextFormat::ParseInfoTree* tree, bool merge) {
  FirstError errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  pb::TextFormat::ParseInfoTree own;
  if (tree == nullptr) tree = &own;  // the enum check needs the fields' locations
  parser.WriteLocationsTo(tree);
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  if (!merge) message->Clear();
  const bool ok = merge ? parser.MergeFromString(text, message) : parser.ParseFromString(text, message);
  if (!ok || errors.has) {
    if (!errors.has) throw ConfigParseError(file, 0, 0, "not a valid " + message->GetTypeName());
    if (errors.line < 0) throw ConfigParseError(file, 0, 0, errors.message);  // about the whole text
    int line = errors.line, column = errors.column;
    PointAtToken(text, ConsumedToken(errors.message), &line, &column);
    // The parser counts from 0; editors (and our file:line:col) from 1.
    throw ConfigParseError(file, line + 1, column + 1, errors.message);
  }
  CheckEnumValues(*message, file, tree);
}

namespace {

// Copies into `to` the fields of `from` that the text named (per `tree`), recursively.
void MergeNamed(const pb::Message& from, const pb::TextFormat::ParseInfoTree& tree, pb::Message* to) {
  const pb::Descriptor* d = from.GetDescriptor();
  const pb::Reflection* r = from.GetReflection();
  const pb::Reflection* tr = to->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const int index = f->is_repeated() ? 0 : -1;
    if (tree.GetLocation(f, index).line < 0) continue;
    if (f->is_repeated()) {
      tr->ClearField(to, f);
      for (int k = 0; k < r->FieldSize(from, f); ++k) {
        switch (f->cpp_type()) {
          case pb::FieldDescriptor::CPPTYPE_INT32: tr->AddInt32(to, f, r->GetRepeatedInt32(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_INT64: tr->AddInt64(to, f, r->GetRepeatedInt64(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_UINT32: tr->AddUInt32(to, f, r->GetRepeatedUInt32(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_UINT64: tr->AddUInt64(to, f, r->GetRepeatedUInt64(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_DOUBLE: tr->AddDouble(to, f, r->GetRepeatedDouble(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_FLOAT: tr->AddFloat(to, f, r->GetRepeatedFloat(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_BOOL: tr->AddBool(to, f, r->GetRepeatedBool(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_ENUM: tr->AddEnumValue(to, f, r->GetRepeatedEnumValue(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_STRING: tr->AddString(to, f, r->GetRepeatedString(from, f, k)); break;
          case pb::FieldDescriptor::CPPTYPE_MESSAGE: tr->AddMessage(to, f)->CopyFrom(r->GetRepeatedMessage(from, f, k)); break;
        }
      }
      continue;
    }
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32: tr->SetInt32(to, f, r->GetInt32(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_INT64: tr->SetInt64(to, f, r->GetInt64(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_UINT32: tr->SetUInt32(to, f, r->GetUInt32(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_UINT64: tr->SetUInt64(to, f, r->GetUInt64(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE: tr->SetDouble(to, f, r->GetDouble(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_FLOAT: tr->SetFloat(to, f, r->GetFloat(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_BOOL: tr->SetBool(to, f, r->GetBool(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_ENUM: tr->SetEnumValue(to, f, r->GetEnumValue(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_STRING: tr->SetString(to, f, r->GetString(from, f)); break;
      case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
        const pb::TextFormat::ParseInfoTree* nested = tree.GetTreeForNested(f, -1);
        pb::Message* sub = tr->MutableMessage(to, f);
        if (nested != nullptr) MergeNamed(r->GetMessage(from, f), *nested, sub);
        break;
      }
    }
  }
}

}  // namespace

namespace {

std::string ValueText(const pb::Message& m, const pb::FieldDescriptor* f);  // (below)

// The field at the dotted `path` below `m` (through singular message fields, created on the
// way), or {m, nullptr} when there is none.
std::pair<pb::Message*, const pb::FieldDescriptor*> MutableLeaf(pb::Message* m, const std::string& path) {
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const pb::FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(name);
    if (f == nullptr) return {m, nullptr};
    if (dot == std::string::npos) return {m, f};
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) return {m, nullptr};
    m = m->GetReflection()->MutableMessage(m, f);
    start = dot + 1;
  }
}

// to.tf = from.ff (singular fields of one type).
void CopySingular(const pb::Message& from, const pb::FieldDescriptor* ff, pb::Message* to, const pb::FieldDescriptor* tf) {
  const pb::Reflection* r = from.GetReflection();
  const pb::Reflection* tr = to->GetReflection();
  switch (ff->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: tr->SetInt32(to, tf, r->GetInt32(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_INT64: tr->SetInt64(to, tf, r->GetInt64(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_UINT32: tr->SetUInt32(to, tf, r->GetUInt32(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_UINT64: tr->SetUInt64(to, tf, r->GetUInt64(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: tr->SetDouble(to, tf, r->GetDouble(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: tr->SetFloat(to, tf, r->GetFloat(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_BOOL: tr->SetBool(to, tf, r->GetBool(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: tr->SetEnumValue(to, tf, r->GetEnumValue(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_STRING: tr->SetString(to, tf, r->GetString(from, ff)); break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: tr->MutableMessage(to, tf)->CopyFrom(r->GetMessage(from, ff)); break;
  }
}

// A text that gives an alias and its target different values is refused at the alias's line.
void CheckAliasConflicts(const pb::Message& m, const pb::TextFormat::ParseInfoTree& tree, const std::string& file) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int k = 0; k < n; ++k) {
        const pb::TextFormat::ParseInfoTree* nested = tree.GetTreeForNested(f, f->is_repeated() ? k : -1);
        if (nested != nullptr)
          CheckAliasConflicts(f->is_repeated() ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f), *nested, file);
      }
    }
    const std::string target = AliasTarget(f);
    if (target.empty() || f->is_repeated()) continue;
    const pb::TextFormat::ParseLocation at = tree.GetLocation(f, -1);
    if (at.line < 0) continue;
    // The target, if this text names it too.
    const pb::Message* tm = &m;
    const pb::TextFormat::ParseInfoTree* tt = &tree;
    const pb::FieldDescriptor* tf = nullptr;
    for (size_t start = 0; tt != nullptr;) {
      const size_t dot = target.find('.', start);
      tf = tm->GetDescriptor()->FindFieldByName(target.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (tf == nullptr || dot == std::string::npos) break;
      if (tf->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || tf->is_repeated()) {
        tf = nullptr;
        break;
      }
      tt = tt->GetTreeForNested(tf, -1);
      tm = &tm->GetReflection()->GetMessage(*tm, tf);
      start = dot + 1;
    }
    if (tt == nullptr || tf == nullptr || tt->GetLocation(tf, -1).line < 0) continue;
    const std::string a = ValueText(m, f), b = ValueText(*tm, tf);
    if (a != b)
      throw ConfigParseError(file, at.line + 1, at.column + 1,
                             f->name() + " (a deprecated alias of " + target + ") is " + a + " but " + target +
                                 " is " + b + " in the same text; give " + target + " only");
  }
}

}  // namespace

namespace {

// Comments by full field name ("placerl.config.AgentConfig.epochs"), from every file's source
// info. A location path [4, m, (3, n,)* 2, f] is field f of (nested) message m.
const std::map<std::string, std::string>& Comments() {
  static const std::map<std::string, std::string> comments = [] {
    std::map<std::string, std::string> out;
    pb::FileDescriptorSet set;
    const auto data = config::ProtoDescriptorSet();
    if (!set.ParseFromArray(data.data(), static_cast<int>(data.size()))) return out;
    for (const auto& file : set.file()) {
      const std::string prefix = file.package().empty() ? "" : file.package() + ".";
      for (const auto& loc : file.source_code_info().location()) {
        const auto& p = loc.path();
        if (p.size() < 4 || p[0] != 4 || p.size() % 2 != 0 || p[p.size() - 2] != 2) continue;
        const pb::DescriptorProto* msg = &file.message_type(p[1]);
        std::string name = prefix + msg->name();
        bool ok = true;
        for (int i = 2; i + 2 < p.size(); i += 2) {
          if (p[i] != 3 || p[i + 1] >= msg->nested_type_size()) { ok = false; break; }
          msg = &msg->nested_type(p[i + 1]);
          name += "." + msg->name();
        }
        if (!ok || p[p.size() - 1] >= msg->field_size()) continue;
        std::string text = loc.trailing_comments().empty() ? loc.leading_comments() : loc.trailing_comments();
        // One line: comment lines joined, runs of blanks folded.
        std::string line;
        bool space = false;
        for (char c : text) {
          if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
            space = !line.empty();
            continue;
          }
          if (space) line += ' ';
          space = false;
          line += c;
        }
        out[name + "." + msg->field(p[p.size() - 1]).name()] = line;
      }
    }
    return out;
  }();
  return comments;
}

}  // namespace

std::string FieldDescription(const pb::FieldDescriptor* field) {
  const auto& c = Comments();
  const auto it = c.find(field->full_name());
  return it == c.end() ? "" : it->second;
}

std::string AliasTarget(const pb::FieldDescriptor* field) {
  static const std::string kPrefix = "deprecated alias of ";
  const std::string d = FieldDescription(field);
  if (d.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  size_t end = kPrefix.size();
  while (end < d.size() && (std::isalnum(static_cast<unsigned char>(d[end])) || d[end] == '_' || d[end] == '.')) ++end;
  std::string target = d.substr(kPrefix.size(), end - kPrefix.size());
  while (!target.empty() && target.back() == '.') target.pop_back();
  return target;
}

void MoveAliases(pb::Message* message) {
  const pb::Descriptor* d = message->GetDescriptor();
  const pb::Reflection* r = message->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE)
        for (int k = 0; k < r->FieldSize(*message, f); ++k) MoveAliases(r->MutableRepeatedMessage(message, f, k));
      continue;
    }
    const std::string target = AliasTarget(f);
    if (!target.empty()) {
      if (!f->has_presence()) throw ConfigError("config schema: alias " + f->full_name() + " must be `optional`");
      if (!r->HasField(*message, f)) continue;
      const auto [holder, tf] = MutableLeaf(message, target);
      if (tf == nullptr || tf->is_repeated() || tf->cpp_type() != f->cpp_type())
        throw ConfigError("config schema: " + f->full_name() + " is an alias of '" + target +
                          "', which is not a field of the same type");
      CopySingular(*message, f, holder, tf);
      r->ClearField(message, f);
      continue;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && r->HasField(*message, f))
      MoveAliases(r->MutableMessage(message, f));
  }
}

void ParseConfigText(const std::string& text, const std::string& file, pb::Message* message) {
  pb::TextFormat::ParseInfoTree tree;
  ParseTextFormat(text, file, message, &tree);
  CheckAliasConflicts(*message, tree, file);
  MoveAliases(message);
}

void MergeConfigText(const std::string& text, const std::string& file, pb::Message* message) {
  std::unique_ptr<pb::Message> given(message->New());
  pb::TextFormat::ParseInfoTree tree;
  ParseTextFormat(text, file, given.get(), &tree);
  CheckAliasConflicts(*given, tree, file);
  MergeNamed(*given, tree, message);
  MoveAliases(message);  // the aliases the text named (a config holds none otherwise) into their targets
}

void MergeConfigFile(const std::string& path, pb::Message* message) {
  MergeConfigText(ReadFile(path), path, message);
}

void LoadConfig(const std::string& path, pb::Message* message) {
  ParseConfigText(ReadFile(path), path, message);
}


namespace {

// One --set: the key it set in the end (an alias resolved to its target), whether it went
// through an alias, and the value the key holds after it.
struct Applied {
  std::string path;
  bool via_alias = false;
  std::string value;
};

Applied ApplyOne(const std::string& assignment, pb::Message* message) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) Fail(assignment, "expected path=value, e.g. ppo.clip=0.1");
  std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);

  Applied applied;
  pb::Message* m = message;
  size_t start = 0;
  int hops = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const pb::Descriptor* d = m->GetDescriptor();
    const pb::FieldDescriptor* f = d->FindFieldByName(name);
    if (f == nullptr) {
      const std::string where = start == 0 ? d->full_name() : "'" + path.substr(0, start - 1) + "' (" + d->full_name() + ")";
      Fail(assignment, "no field '" + name + "' in " + where + " (fields: " + FieldNames(d) + ")");
    }
    // A deprecated alias: the same assignment to the key it names (relative to this message).
    const std::string target = AliasTarget(f);
    if (!target.empty()) {
      if (++hops > 8) Fail(assignment, "'" + name + "' is an alias of an alias of … (a loop in the schema)");
      path = path.substr(0, start) + target + (dot == std::string::npos ? "" : path.substr(dot));
      applied.via_alias = true;
      continue;
    }
    const pb::Reflection* r = m->GetReflection();
    if (dot != std::string::npos) {
      if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
        Fail(assignment, "'" + path.substr(0, dot) + "' is " +
                             (f->is_repeated() ? "a repeated field" : "not a message") +
                             "; it has no field '" + path.substr(dot + 1) + "'");
      }
      m = r->MutableMessage(m, f);
      start = dot + 1;
      continue;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) Fail(assignment, "'" + path + "' is a repeated message; set it in the config file");
      pb::Message* sub = r->MutableMessage(m, f);
      std::string text = value;
      const bool braces = text.size() >= 2 && text.front() == '{' && text.back() == '}';
      if (braces) text = text.substr(1, text.size() - 2);
      try {
        ParseTextFormat(text, "", sub, nullptr, /*merge=*/true);
      } catch (const ConfigParseError& e) {
        // The column in the value as written (with its '{').
        const int column = e.line() <= 1 ? e.column() + (braces ? 1 : 0) : e.column();
        Fail(assignment, (e.line() > 1 ? "line " + std::to_string(e.line()) + ", " : std::string()) + "column " +
                             std::to_string(column) + " of the value: " + e.reason());
      }
      MoveAliases(sub);
    } else if (f->is_repeated()) {
      r->ClearField(m, f);
      for (const std::string& piece : SplitCommaList(value)) SetScalar(assignment, m, f, piece);
    } else {
      SetScalar(assignment, m, f, value);
    }
    applied.path = path;
    applied.value = ValueText(*m, f);
    return applied;
  }
}

}  // namespace

void ApplyOverride(const std::string& assignment, pb::Message* message) { ApplyOne(assignment, message); }

void ApplyOverrides(const std::vector<std::string>& assignments, pb::Message* message) {
  // Per key: the last assignment through an alias and the last direct one, with the value each
  // left; the two kinds disagreeing is refused (the same kind twice: the last wins, as ever).
  std::map<std::string, std::pair<std::string, std::string>> last[2];
  for (const std::string& a : assignments) {
    const Applied now = ApplyOne(a, message);
    last[now.via_alias][now.path] = {a, now.value};
    const auto other = last[!now.via_alias].find(now.path);
    if (other == last[!now.via_alias].end() || other->second.second == now.value) continue;
    const std::string& alias = now.via_alias ? a : other->second.first;
    const std::string& direct = now.via_alias ? other->second.first : a;
    throw ConfigError("--set '" + alias + "' and --set '" + direct + "' ask for different values of " + now.path + " (" +
                      alias.substr(0, alias.find('=')) + " is a deprecated alias of it); give " + now.path + " once");
  }
}

namespace {

void PrintMessage(const pb::Message& m, int indent, std::string* out) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  pb::TextFormat::Printer printer;
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      const int n = f->is_repeated() ? r->FieldSize(m, f) : (r->HasField(m, f) ? 1 : 0);
      for (int k = 0; k < n; ++k) {
        const pb::Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f);
        *out += pad + f->name() + " {\n";
        PrintMessage(sub, indent + 1, out);
        *out += pad + "}\n";
      }
      continue;
    }
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(m, f); ++k) {
        std::string v;
        printer.PrintFieldValueToString(m, f, k, &v);
        *out += pad + f->name() + ": " + v + "\n";
      }
      continue;
    }
    // Fields with presence (oneof members, `optional`, proto2) only when set; proto3 plain
    // scalars always, so that the defaults the run used are on record.
    if (f->has_presence() && !r->HasField(m, f)) continue;
    std::string v;
    printer.PrintFieldValueToString(m, f, -1, &v);
    *out += pad + f->name() + ": " + v + "\n";
  }
}

}  // namespace

namespace {

std::string ValueText(const pb::Message& m, const pb::FieldDescriptor* f) {
  const pb::Reflection* r = m.GetReflection();
  pb::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  if (f->is_repeated()) {
    std::string s = "[";
    for (int k = 0; k < r->FieldSize(m, f); ++k) {
      std::string v;
      printer.PrintFieldValueToString(m, f, k, &v);
      s += (k ? ", " : "") + v;
    }
    return s + "]";
  }
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) return r->HasField(m, f) ? "{...}" : "(unset)";
  if (f->has_presence() && !r->HasField(m, f)) return "(unset)";
  std::string v;
  printer.PrintFieldValueToString(m, f, -1, &v);
  return v;
}

void Differences(const pb::Message& a, const pb::Message& b, const std::string& prefix,
                 const std::vector<std::string>& skip, std::vector<ConfigDifference>* out) {
  const pb::Descriptor* d = a.GetDescriptor();
  const pb::Reflection* ra = a.GetReflection();
  const pb::Reflection* rb = b.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (std::find(skip.begin(), skip.end(), path) != skip.end()) continue;
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      const bool ha = ra->HasField(a, f), hb = rb->HasField(b, f);
      if (ha && hb) {
        Differences(ra->GetMessage(a, f), rb->GetMessage(b, f), path + ".", skip, out);
      } else if (ha != hb) {
        out->push_back({path, ValueText(a, f), ValueText(b, f)});
      }
      continue;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {  // repeated messages: as text
      std::string ta, tb;
      for (int k = 0; k < ra->FieldSize(a, f); ++k) ta += ResolvedConfigText(ra->GetRepeatedMessage(a, f, k)) + ";";
      for (int k = 0; k < rb->FieldSize(b, f); ++k) tb += ResolvedConfigText(rb->GetRepeatedMessage(b, f, k)) + ";";
      if (ta != tb) out->push_back({path, std::to_string(ra->FieldSize(a, f)) + " entries", std::to_string(rb->FieldSize(b, f)) + " entries"});
      continue;
    }
    const std::string va = ValueText(a, f), vb = ValueText(b, f);
    if (va != vb) out->push_back({path, va, vb});
  }
}

}  // namespace

std::vector<ConfigDifference> ConfigDifferences(const pb::Message& before, const pb::Message& after,
                                                const std::vector<std::string>& skip) {
  if (before.GetDescriptor() != after.GetDescriptor())
    throw ConfigError("ConfigDifferences: " + before.GetTypeName() + " vs " + after.GetTypeName());
  std::vector<ConfigDifference> out;
  Differences(before, after, "", skip, &out);
  return out;
}

std::string ResolvedConfigText(const pb::Message& message) {
  std::string out;
  PrintMessage(message, 0, &out);
  return out;
}

}  // namespace placerl::run
