// Run configuration: any protobuf message read from protobuf text format (`.pbtxt`),
// changed by `--set a.b.c=value` overrides through reflection, and written back resolved
// (every scalar printed, defaults included) as a run directory's `config.pbtxt`; the
// deprecated aliases of moved keys, and the fields' descriptions they are read from.
// Checks of a field's meaning (a probability in [0, 1], a positive budget) are the binary's,
// on the resolved message. The message types are the binaries' own (e.g. a place-train config in datasets/proto/);
// this file knows none of them. No CLI11 and no run directories here (experiments/lib: the
// flags, run_dir.h, `--help-config`): the Python module and the library layers read configs
// with the same code as the binaries.
#pragma once

#include <string>
#include <vector>

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include "datasets/util/errors.h"

namespace placerl::run {

// A text-format config that does not parse: what() is `file:line:col: what` (1-based).
class ConfigParseError : public ParseError {
 public:
  ConfigParseError(const std::string& file, int line, int column, const std::string& reason);
  int column() const { return column_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  int column_;
  std::string message_;
};

// The one text-format reader of every .pbtxt (ParseConfigText / MergeConfigText, perf-model's
// ParseTextProto, `--set key={...}`): protobuf's parser into `message` (cleared first, or merged
// into it when `merge`), the fields' locations into `tree` (optional). Throws ConfigParseError
// `file:line:col: reason` (1-based) at the bad token itself: protobuf 3.21 reports a bad boolean,
// an unknown enum name and an unknown field name at the token after it (the next line when the
// bad value ends its line: `refine_cd: maybe` on line 2 was "cfg.pbtxt:3:1"). A number that is
// no value of its enum (proto3 enums are open: the parser takes `remat: 77`) is refused at its
// field.
void ParseTextFormat(const std::string& text, const std::string& file, google::protobuf::Message* message,
                     google::protobuf::TextFormat::ParseInfoTree* tree = nullptr, bool merge = false);

// Parses `text` into `message` (cleared first; ParseTextFormat). Unknown fields, unknown enum
// values (names, and numbers that are none) and a non-repeated field given twice are errors.
// `file` names the text in errors. Throws ConfigParseError (the first error).
void ParseConfigText(const std::string& text, const std::string& file, google::protobuf::Message* message);

// ReadFile(path) + ParseConfigText. Throws IoError / ConfigParseError.
void LoadConfig(const std::string& path, google::protobuf::Message* message);

// Like ParseConfigText, but over the values already in `message` (a binary's defaults): every
// field the text names replaces the default — zeros and `false` too, which a plain proto3
// MergeFrom would drop — and every field it does not name keeps it. A repeated field named
// in the text replaces the default list.
void MergeConfigText(const std::string& text, const std::string& file, google::protobuf::Message* message);
void MergeConfigFile(const std::string& path, google::protobuf::Message* message);

// Applies one override `path=value`:
//   - `path` is a dotted field path through singular message fields (`ppo.clip`);
//   - scalars: integers (decimal, range-checked for the field's type), floating point (finite),
//     bool (true/false/1/0), enums (value name or number; a number that is no value is
//     refused), strings (the rest of the argument, verbatim);
//   - repeated scalars: a comma list that replaces the field (`mesh.dims=4,4,8`; empty
//     value = clear);
//   - a message field: text format merged into it (`plan={data: 2 fsdp: 4}`).
// Throws ConfigError: `--set 'plan.dta=2': no field 'dta' in placerl.perf.Plan (fields: data,
// fsdp, ...)` for a path that does not exist, and a one-line reason for a bad value.
void ApplyOverride(const std::string& assignment, google::protobuf::Message* message);
void ApplyOverrides(const std::vector<std::string>& assignments, google::protobuf::Message* message);

// The description of one field: its comment in the .proto (trailing, else leading), on one
// line; empty when it has none. Read from the schemas embedded at build time
// (datasets/proto/descriptors.h); `--help-config` (experiments/lib/config_help.h) prints them.
std::string FieldDescription(const google::protobuf::FieldDescriptor* field);

// Deprecated aliases (docs/conventions.md "Run directories"): a key that moved keeps its old
// field in the schema, `optional` (so that it is printed only when set), with a comment that
// starts "deprecated alias of <path>" — the dotted path of the new key, relative to the
// message that holds the alias, of the same type. ParseConfigText / MergeConfigText /
// ApplyOverride read an alias into its target and clear it, so every config these functions
// return holds the new keys only (and config.pbtxt files are written in the new form); a text
// or a --set list that gives an alias and its target different values is refused, one line.
// AliasTarget: the target path of `field`, "" when it is not an alias.
std::string AliasTarget(const google::protobuf::FieldDescriptor* field);
// Moves every alias that is set in `message` (recursively) into its target, and clears it.
void MoveAliases(google::protobuf::Message* message);

// A field whose value differs between two configs of one type: its dotted path ("agent.clip";
// a repeated field as a whole) and both values as text format prints them (a list as
// "[a, b]"; a message field present on one side only as "{…}" / "(unset)").
struct ConfigDifference {
  std::string path, before, after;
};
// Every difference, in field order, recursively; `skip` lists dotted paths not compared.
std::vector<ConfigDifference> ConfigDifferences(const google::protobuf::Message& before,
                                                const google::protobuf::Message& after,
                                                const std::vector<std::string>& skip = {});

// Text format of `message` with every field printed: scalars without presence (proto3) at
// their defaults too, so the file says what the run used; message fields and fields with
// presence only when set. Parses back to an equal message.
std::string ResolvedConfigText(const google::protobuf::Message& message);

}  // namespace placerl::run
