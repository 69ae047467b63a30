// Architecture search spaces as data (datasets/proto/nas_space.proto; docs/nas.md): the space's
// text expanded into a flat list of decisions (node templates repeated, per-earlier and
// input-index decisions made concrete, rules resolved to choice masks), so that an
// architecture is one choice index per decision and checking a choice is a few array reads.
// Built-in spaces (enas_macro, enas_micro, nb201, nas_bench_macro, brainformer) are embedded from
// datasets/nas/spaces/*.pbtxt; any other space is loaded from a file. Malformed text is a
// ParseError `file:line: what`; text that does not parse is `file:line:col: what` at the bad token
// (run::ParseTextFormat).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/text_format.h>

#include "datasets/proto/nas_space.pb.h"

namespace placerl::nas {

// One choice index per decision of a space, in the space's order.
using Architecture = std::vector<int32_t>;

struct Decision {
  std::string name;                  // "layer3/skip1": node instance / decision
  std::string kind;                  // the template it came from: "layer{i}/skip{j}"
  int32_t kind_index = 0;            // index into SearchSpace::kinds()
  int32_t node = 0;                  // index into SearchSpace::node_names()
  int32_t source_node = -1;          // the node instance it acts on (per_earlier: j; source_node), or -1
  std::vector<std::string> choices;  // at least 1
  int32_t num_choices() const { return static_cast<int32_t>(choices.size()); }
};

// "When decision `if_decision` took a choice with if_choice[c] = 1, decision `then_decision`
// may only take choices with allowed[c'] = 1" (if_decision < then_decision).
struct Rule {
  int32_t if_decision = 0;
  std::vector<uint8_t> if_choice;  // size: choices of if_decision
  int32_t then_decision = 0;
  std::vector<uint8_t> allowed;    // size: choices of then_decision
};

class SearchSpace {
 public:
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& table() const { return table_; }  // "nb201", "nas_bench_macro" or ""
  const std::vector<Decision>& decisions() const { return decisions_; }
  int32_t num_decisions() const { return static_cast<int32_t>(decisions_.size()); }
  const std::vector<std::string>& node_names() const { return node_names_; }
  const std::vector<std::string>& kinds() const { return kinds_; }
  const std::vector<Rule>& rules() const { return rules_; }
  // Largest number of choices of any decision: the k of the environment's kChoice{k}.
  int32_t max_choices() const { return max_choices_; }
  // Index of a decision by full name, -1 if none.
  int32_t DecisionIndex(const std::string& name) const;
  // log10 of the number of architectures, ignoring rules (an upper bound when there are rules).
  double Log10Size() const;

  // Choices decision `d` may take given the choices of decisions 0..d-1 in `prefix` (only those
  // are read): mask[c] = 1 for c < num_choices of d that no applicable rule forbids, 0 for the
  // rest of the max_choices() entries. Never all zero (checked when the space is built).
  void AllowedChoices(const int32_t* prefix, int32_t d, uint8_t* mask) const;
  bool IsAllowed(const int32_t* prefix, int32_t d, int32_t choice) const;
  // Empty when `a` is a complete, allowed architecture; otherwise what is wrong.
  std::string Check(const Architecture& a) const;

  // The ArchitectureDef message (space name, every decision by name) and back. FromDef throws
  // ConfigError for another space, a missing, repeated or unknown decision or choice, or a
  // choice the rules forbid.
  ArchitectureDef ToDef(const Architecture& a) const;
  Architecture FromDef(const ArchitectureDef& def) const;
  // "layer0/op=conv3x3 layer1/op=…": every decision, for logs.
  std::string Describe(const Architecture& a) const;

  // Builds the space from its parsed definition; `tree` (the parser's locations, may be null)
  // and `file` give error lines.
  static SearchSpace Build(const SearchSpaceDef& def, const std::string& file,
                           const google::protobuf::TextFormat::ParseInfoTree* tree);

 private:
  // Build's steps after the decisions (errors name `file` and the definition's lines): the
  // rules (their definition's lines into *rule_lines), sorted by the decision they constrain,
  // checked for dead ends; a table's layout.
  void AddRules(const SearchSpaceDef& def, const std::string& file,
                const google::protobuf::TextFormat::ParseInfoTree* tree, int32_t max_repeat,
                std::vector<int>* rule_lines);
  void SortRules(std::vector<int>* rule_lines);
  void CheckNoDeadEnds(const std::string& file, const std::vector<int>& rule_lines) const;
  void CheckTableLayout(const SearchSpaceDef& def, const std::string& file,
                        const google::protobuf::TextFormat::ParseInfoTree* tree) const;

  std::string name_, description_, table_;
  std::vector<Decision> decisions_;
  std::map<std::string, int32_t> decision_index_;  // by full name
  std::vector<std::string> node_names_, kinds_;
  std::vector<Rule> rules_;                        // sorted by then_decision
  std::vector<std::pair<int32_t, int32_t>> rule_range_;  // per decision: [begin, end) in rules_
  int32_t max_choices_ = 0;
};

// Names of the built-in spaces, in a fixed order.
std::vector<std::string> BuiltinSpaceNames();
// The text of a built-in space; throws ConfigError naming the built-in ones for another name.
const std::string& BuiltinSpaceText(const std::string& name);
// Parses a space's text; throws ParseError `file:line: what` (line 0 = the whole text), or
// `file:line:col: what` (ParseNasText) when the text does not parse.
SearchSpace ParseSearchSpace(const std::string& text, const std::string& file);
// A built-in space by name, or else a .pbtxt file (ReadFile: regular file, gz ok). A name
// without '/' or '.' is taken as a built-in name (ConfigError listing them when unknown).
SearchSpace LoadSearchSpace(const std::string& name_or_path);

// Parses protobuf text into `msg` (cleared first) through run::ParseTextFormat
// (datasets/util/config_text.h): unknown fields and enum values (names, and numbers that are
// none) are errors; throws run::ConfigParseError (a ParseError) `file:line:col: what`, 1-based,
// at the bad token itself (a bad bool, an unknown enum name or field name too, which protobuf
// reports at the next token). When `tree` is given, the parser's field locations are written
// into it.
void ParseNasText(const std::string& text, const std::string& file, google::protobuf::Message* msg,
                  google::protobuf::TextFormat::ParseInfoTree* tree = nullptr);

}  // namespace placerl::nas
