#include "datasets/nas/search_space.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::nas {

// Generated at build time from datasets/nas/spaces/*.pbtxt (datasets/nas/embed_spaces.cmake).
const std::vector<std::pair<std::string, std::string>>& BuiltinSpaceTexts();

namespace {

namespace pb = google::protobuf;

constexpr int32_t kMaxChoices = 4096;
constexpr int32_t kMaxRepeat = 4096;
constexpr size_t kMaxDecisions = 100000;
constexpr size_t kMaxTotalChoices = 1000000;        // Σ choices over all decisions
constexpr double kMaxDeadEndCombinations = 1e6;     // per decision
constexpr double kMaxDeadEndWork = 1e7;             // Σ combinations × rules over the space

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool BadName(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s)
    if (c == ' ' || c == '\t' || c == '\n' || c == '=' || c == ',') return true;
  return false;
}

int LineOf(const pb::TextFormat::ParseInfoTree* tree, const pb::Message& msg, const char* field, int index) {
  if (tree == nullptr) return 0;
  const pb::FieldDescriptor* f = msg.GetDescriptor()->FindFieldByName(field);
  const int line = tree->GetLocation(f, f->is_repeated() ? index : -1).line;
  return line < 0 ? 0 : line + 1;
}

const pb::TextFormat::ParseInfoTree* Nested(const pb::TextFormat::ParseInfoTree* tree, const pb::Message& msg,
                                            const char* field, int index) {
  if (tree == nullptr) return nullptr;
  return tree->GetTreeForNested(msg.GetDescriptor()->FindFieldByName(field), index);
}

}  // namespace

void ParseNasText(const std::string& text, const std::string& file, pb::Message* msg,
                  pb::TextFormat::ParseInfoTree* tree) {
  // The shared text-format reader: the error names the bad token's file:line:col (protobuf 3.21
  // reports a bad bool, an unknown enum name or field name at the next token), and an enum
  // number that is no value is refused. Throws run::ConfigParseError (a ParseError).
  run::ParseTextFormat(text, file, msg, tree);
}

std::vector<std::string> BuiltinSpaceNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : BuiltinSpaceTexts()) names.push_back(name);
  return names;
}

const std::string& BuiltinSpaceText(const std::string& name) {
  for (const auto& entry : BuiltinSpaceTexts())
    if (entry.first == name) return entry.second;
  std::string known;
  for (const auto& n : BuiltinSpaceNames()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("no built-in search space '" + name + "' (built-in: " + known + "; or give a .pbtxt file)");
}

SearchSpace ParseSearchSpace(const std::string& text, const std::string& file) {
  SearchSpaceDef def;
  pb::TextFormat::ParseInfoTree tree;
  ParseNasText(text, file, &def, &tree);
  return SearchSpace::Build(def, file, &tree);
}

SearchSpace LoadSearchSpace(const std::string& name_or_path) {
  for (const auto& [name, text] : BuiltinSpaceTexts())
    if (name == name_or_path) return ParseSearchSpace(text, "<built-in " + name + ".pbtxt>");
  if (!Contains(name_or_path, "/") && !Contains(name_or_path, ".")) BuiltinSpaceText(name_or_path);  // throws
  const std::string text = ReadFile(name_or_path, size_t(64) << 20);
  // Cut inside a block it fails to parse; cut in a last top-level value ("table: \"nb2") it
  // would not: a last line without a newline must end with '}' or be a comment.
  RefuseTruncatedLastLine(text, name_or_path, [](std::string_view l) {
    const size_t a = l.find_first_not_of(" \t\r"), b = l.find_last_not_of(" \t\r");
    return l[b] == '}' || l[a] == '#';
  });
  return ParseSearchSpace(text, name_or_path);
}

void SearchSpace::AddRules(const SearchSpaceDef& def, const std::string& file, const pb::TextFormat::ParseInfoTree* tree,
                           int32_t max_repeat, std::vector<int>* rule_lines) {
  size_t rule_mask_bytes = 0;
  for (int r = 0; r < def.rule_size(); ++r) {
    const RuleDef& rd = def.rule(r);
    const int line = LineOf(tree, def, "rule", r);
    auto fail = [&](const std::string& what) { throw ParseError(file, line, "rule: " + what); };
    if (rd.then_decision_size() == 0) fail("needs then_decision");
    if (rd.if_choice_size() == 0) fail("needs if_choice");
    if ((rd.allow_size() > 0) == (rd.deny_size() > 0)) fail("give exactly one of allow or deny");
    bool templated = Contains(rd.if_decision(), "{i}");
    for (const auto& t : rd.then_decision()) templated |= Contains(t, "{i}");
    const int32_t instances = templated ? max_repeat : 1;
    int32_t made = 0;
    for (int32_t i = 0; i < instances; ++i) {
      auto sub = [&](const std::string& n) { return templated ? Replace(n, "{i}", std::to_string(i)) : n; };
      const std::string if_name = sub(rd.if_decision());
      bool all = decision_index_.count(if_name) > 0;
      for (const auto& t : rd.then_decision()) all = all && decision_index_.count(sub(t)) > 0;
      if (!all) {
        if (templated) continue;
        if (!decision_index_.count(if_name)) fail("no decision '" + if_name + "'");
        for (const auto& t : rd.then_decision())
          if (!decision_index_.count(t)) fail("no decision '" + t + "'");
      }
      const int32_t a = decision_index_[if_name];
      const Decision& da = decisions_[a];
      std::vector<uint8_t> if_mask(da.choices.size(), 0);
      for (const std::string& c : rd.if_choice()) {
        auto it = std::find(da.choices.begin(), da.choices.end(), c);
        if (it == da.choices.end()) fail("'" + c + "' is not a choice of " + da.name);
        if_mask[it - da.choices.begin()] = 1;
      }
      for (const std::string& t : rd.then_decision()) {
        const int32_t b = decision_index_[sub(t)];
        const Decision& db = decisions_[b];
        if (b <= a) fail(db.name + " must come after " + da.name);
        const bool allow = rd.allow_size() > 0;
        std::vector<uint8_t> allowed(db.choices.size(), allow ? 0 : 1);
        for (const std::string& c : allow ? rd.allow() : rd.deny()) {
          auto it = std::find(db.choices.begin(), db.choices.end(), c);
          if (it == db.choices.end()) fail("'" + c + "' is not a choice of " + db.name);
          allowed[it - db.choices.begin()] = allow ? 1 : 0;
        }
        if (std::find(allowed.begin(), allowed.end(), 1) == allowed.end()) fail("leaves " + db.name + " no choice");
        rule_mask_bytes += if_mask.size() + allowed.size();
        if (rule_mask_bytes > kMaxTotalChoices * 4) fail("the rules expand to more than 4000000 choices in all");
        rules_.push_back({a, if_mask, b, allowed});
        rule_lines->push_back(line);
      }
      ++made;
    }
    if (made == 0) fail("matches no decision");
  }
}

void SearchSpace::SortRules(std::vector<int>* rule_lines) {
  std::vector<size_t> order(rules_.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return rules_[x].then_decision < rules_[y].then_decision; });
  std::vector<Rule> sorted;
  std::vector<int> sorted_lines;
  for (size_t k : order) {
    sorted.push_back(rules_[k]);
    sorted_lines.push_back((*rule_lines)[k]);
  }
  rules_ = std::move(sorted);
  rule_range_.assign(decisions_.size(), {0, 0});
  for (size_t k = 0; k < rules_.size();) {
    size_t e = k;
    while (e < rules_.size() && rules_[e].then_decision == rules_[k].then_decision) ++e;
    rule_range_[rules_[k].then_decision] = {static_cast<int32_t>(k), static_cast<int32_t>(e)};
    k = e;
  }
  *rule_lines = std::move(sorted_lines);
}

void SearchSpace::CheckNoDeadEnds(const std::string& file, const std::vector<int>& rule_lines) const {
  // No dead ends: for every decision with rules, every combination of the decisions its rules
  // read leaves it a choice (so a walk in order never gets stuck). Bounded work: a space whose
  // check would take more is refused, not accepted unchecked.
  double dead_end_work = 0;
  for (int32_t d = 0; d < num_decisions(); ++d) {
    const auto [b, e] = rule_range_[d];
    if (b == e) continue;
    std::vector<int32_t> readers;
    for (int32_t k = b; k < e; ++k) readers.push_back(rules_[k].if_decision);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    double combos = 1;
    for (int32_t r : readers) combos *= decisions_[r].num_choices();
    dead_end_work += combos * (e - b);
    if (combos > kMaxDeadEndCombinations || dead_end_work > kMaxDeadEndWork)
      throw ParseError(file, rule_lines[b], "rule: " + decisions_[d].name +
                                                  " depends on too many combinations to check (> 1e6, or 1e7 for the space)");
    std::vector<int32_t> prefix(d, 0), digit(readers.size(), 0);
    std::vector<uint8_t> mask(max_choices_);
    while (true) {
      for (size_t q = 0; q < readers.size(); ++q) prefix[readers[q]] = digit[q];
      AllowedChoices(prefix.data(), d, mask.data());
      if (std::find(mask.begin(), mask.end(), 1) == mask.end()) {
        std::string when;
        for (int32_t r : readers) when += (when.empty() ? "" : ", ") + decisions_[r].name + "=" + decisions_[r].choices[prefix[r]];
        throw ParseError(file, rule_lines[b], "rules leave " + decisions_[d].name + " no choice when " + when);
      }
      size_t q = 0;
      while (q < readers.size() && ++digit[q] == decisions_[readers[q]].num_choices()) digit[q++] = 0;
      if (q == readers.size()) break;
    }
  }
}

void SearchSpace::CheckTableLayout(const SearchSpaceDef& def, const std::string& file,
                                   const pb::TextFormat::ParseInfoTree* tree) const {
  // A space that names a table follows that table's layout (its index is the architecture).
  if (!table_.empty()) {
    const int line = LineOf(tree, def, "table", 0);
    if (table_ == "nb201") {
      const std::vector<std::string> ops = {"none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"};
      if (num_decisions() != 6 || !rules_.empty())
        throw ParseError(file, line, "table nb201 needs exactly 6 decisions (the cell's edges) and no rules");
      for (const Decision& d : decisions_)
        if (d.choices != ops)
          throw ParseError(file, line, "table nb201: decision " + d.name +
                                           " must have the choices none, skip_connect, nor_conv_1x1, nor_conv_3x3, avg_pool_3x3");
    } else if (table_ == "nas_bench_macro") {
      if (num_decisions() != 8 || !rules_.empty())
        throw ParseError(file, line, "table nas_bench_macro needs exactly 8 decisions (the layers) and no rules");
      for (const Decision& d : decisions_)
        if (d.num_choices() != 3)
          throw ParseError(file, line, "table nas_bench_macro: decision " + d.name + " must have 3 choices");
    } else {
      throw ParseError(file, line, "unknown table '" + table_ + "' (known: nb201, nas_bench_macro)");
    }
  }
}

// The decisions (nodes × repeats × decisions, choices, sources), then the rules and the
// table layout.
SearchSpace SearchSpace::Build(const SearchSpaceDef& def, const std::string& file,
                               const pb::TextFormat::ParseInfoTree* tree) {
  SearchSpace s;
  if (BadName(def.name())) throw ParseError(file, LineOf(tree, def, "name", 0), "the space needs a name without spaces, '=' or ','");
  s.name_ = def.name();
  s.description_ = def.description();
  s.table_ = def.table();

  std::map<std::string, std::vector<std::string>> lists;
  for (int k = 0; k < def.choice_list_size(); ++k) {
    const ChoiceList& l = def.choice_list(k);
    const int line = LineOf(tree, def, "choice_list", k);
    if (BadName(l.name())) throw ParseError(file, line, "a choice_list needs a name");
    if (lists.count(l.name())) throw ParseError(file, line, "choice_list '" + l.name() + "' defined twice");
    lists[l.name()] = {l.choice().begin(), l.choice().end()};
  }

  std::map<std::string, int32_t> node_index, decision_index, kind_index;
  int32_t max_repeat = 1;
  size_t total_choices = 0;
  struct PendingSource {
    int32_t decision;
    std::string node;
    int line;
  };
  std::vector<PendingSource> pending_sources;
  for (int n = 0; n < def.node_size(); ++n) {
    const NodeDef& nd = def.node(n);
    const int node_line = LineOf(tree, def, "node", n);
    const auto* node_tree = Nested(tree, def, "node", n);
    if (nd.repeat() < 0 || nd.repeat() > kMaxRepeat)
      throw ParseError(file, node_line, "node '" + nd.name() + "': repeat must be in [0, " + std::to_string(kMaxRepeat) + "]");
    const int32_t reps = std::max(1, nd.repeat());
    max_repeat = std::max(max_repeat, reps);
    if (BadName(nd.name()) || Contains(nd.name(), "/"))
      throw ParseError(file, node_line, "a node needs a name without spaces, '/', '=' or ','");
    if (reps > 1 && !Contains(nd.name(), "{i}"))
      throw ParseError(file, node_line, "node '" + nd.name() + "' is repeated: its name needs {i}");
    if (nd.decision_size() == 0) throw ParseError(file, node_line, "node '" + nd.name() + "' has no decision");
    for (int32_t i = 0; i < reps; ++i) {
      const std::string node_name = Replace(nd.name(), "{i}", std::to_string(i));
      if (node_index.count(node_name)) throw ParseError(file, node_line, "node '" + node_name + "' defined twice");
      const int32_t node_id = static_cast<int32_t>(s.node_names_.size());
      node_index[node_name] = node_id;
      s.node_names_.push_back(node_name);
      for (int k = 0; k < nd.decision_size(); ++k) {
        const DecisionDef& dd = nd.decision(k);
        const int line = node_tree ? LineOf(node_tree, nd, "decision", k) : node_line;
        auto fail = [&](const std::string& what) {
          throw ParseError(file, line, "decision '" + nd.name() + "/" + dd.name() + "': " + what);
        };
        if (BadName(dd.name()) || Contains(dd.name(), "/")) fail("needs a name without spaces, '/', '=' or ','");
        std::vector<std::string> choices;
        const int sources = (dd.choice_size() > 0) + !dd.choices().empty() + dd.input_index();
        if (sources != 1) fail("give exactly one of choice, choices (a choice_list) or input_index");
        if (dd.choice_size() > 0) choices.assign(dd.choice().begin(), dd.choice().end());
        if (!dd.choices().empty()) {
          auto it = lists.find(dd.choices());
          if (it == lists.end()) fail("no choice_list '" + dd.choices() + "'");
          choices = it->second;
        }
        if (dd.input_index()) {
          if (dd.input_offset() < 0 || dd.input_offset() > kMaxChoices) fail("input_offset must be in [0, 4096]");
          for (int32_t c = 0; c < i + dd.input_offset(); ++c) choices.push_back(std::to_string(c));
          if (choices.empty()) fail("node instance " + std::to_string(i) + " has no input to choose (input_offset 0)");
        } else if (dd.input_offset() != 0) {
          fail("input_offset without input_index");
        }
        if (static_cast<int32_t>(choices.size()) > kMaxChoices) fail("more than 4096 choices");
        if (choices.empty()) fail("no choices");
        std::set<std::string> seen;
        for (const std::string& c : choices) {
          if (c.empty() || BadName(c)) fail("choice '" + c + "' is empty or has spaces, '=' or ','");
          if (!seen.insert(c).second) fail("choice '" + c + "' given twice");
        }
        if (dd.per_earlier() != Contains(dd.name(), "{j}"))
          fail(dd.per_earlier() ? "per_earlier needs {j} in the name" : "{j} in the name needs per_earlier");
        std::vector<std::string> names;
        std::vector<int32_t> earlier;  // node index of instance j
        if (dd.per_earlier()) {
          for (int32_t j = 0; j < i; ++j) {
            names.push_back(Replace(dd.name(), "{j}", std::to_string(j)));
            earlier.push_back(node_id - i + j);
          }
        } else {
          names.push_back(dd.name());
          earlier.push_back(-1);
        }
        const std::string kind = nd.name() + "/" + dd.name();
        if (!kind_index.count(kind)) {
          kind_index[kind] = static_cast<int32_t>(s.kinds_.size());
          s.kinds_.push_back(kind);
        }
        for (size_t q = 0; q < names.size(); ++q) {
          const std::string& dn = names[q];
          Decision d;
          d.name = node_name + "/" + dn;
          d.source_node = earlier[q];
          if (!dd.source_node().empty()) {
            if (dd.per_earlier()) fail("source_node with per_earlier (its source is instance j already)");
            pending_sources.push_back({static_cast<int32_t>(s.decisions_.size()),
                                       Replace(dd.source_node(), "{i}", std::to_string(i)), line});
          }
          if (decision_index.count(d.name)) fail("decision '" + d.name + "' defined twice");
          d.kind = kind;
          d.kind_index = kind_index[kind];
          d.node = node_id;
          d.choices = choices;
          decision_index[d.name] = static_cast<int32_t>(s.decisions_.size());
          total_choices += d.choices.size();
          s.decisions_.push_back(std::move(d));
          if (s.decisions_.size() > kMaxDecisions) fail("the space has more than 100000 decisions");
          if (total_choices > kMaxTotalChoices) fail("the space has more than 1000000 choices in all");
        }
      }
    }
  }
  if (s.decisions_.empty()) throw ParseError(file, 0, "the space has no decision");
  for (const PendingSource& p : pending_sources) {
    auto it = node_index.find(p.node);
    if (it == node_index.end())
      throw ParseError(file, p.line, "decision " + s.decisions_[p.decision].name + ": no node '" + p.node + "' (source_node)");
    if (it->second == s.decisions_[p.decision].node)
      throw ParseError(file, p.line, "decision " + s.decisions_[p.decision].name + ": source_node is its own node");
    s.decisions_[p.decision].source_node = it->second;
  }
  s.decision_index_ = decision_index;
  for (const Decision& d : s.decisions_) s.max_choices_ = std::max(s.max_choices_, d.num_choices());

  std::vector<int> rule_lines;
  s.AddRules(def, file, tree, max_repeat, &rule_lines);
  s.SortRules(&rule_lines);
  s.CheckNoDeadEnds(file, rule_lines);
  s.CheckTableLayout(def, file, tree);
  return s;
}

int32_t SearchSpace::DecisionIndex(const std::string& name) const {
  auto it = decision_index_.find(name);
  return it == decision_index_.end() ? -1 : it->second;
}

double SearchSpace::Log10Size() const {
  double s = 0;
  for (const Decision& d : decisions_) s += std::log10(static_cast<double>(d.num_choices()));
  return s;
}

void SearchSpace::AllowedChoices(const int32_t* prefix, int32_t d, uint8_t* mask) const {
  const int32_t n = decisions_[d].num_choices();
  for (int32_t c = 0; c < max_choices_; ++c) mask[c] = c < n ? 1 : 0;
  const auto [b, e] = rule_range_[d];
  for (int32_t k = b; k < e; ++k) {
    const Rule& r = rules_[k];
    if (!r.if_choice[prefix[r.if_decision]]) continue;
    for (int32_t c = 0; c < n; ++c) mask[c] &= r.allowed[c];
  }
}

bool SearchSpace::IsAllowed(const int32_t* prefix, int32_t d, int32_t choice) const {
  if (choice < 0 || choice >= decisions_[d].num_choices()) return false;
  const auto [b, e] = rule_range_[d];
  for (int32_t k = b; k < e; ++k) {
    const Rule& r = rules_[k];
    if (r.if_choice[prefix[r.if_decision]] && !r.allowed[choice]) return false;
  }
  return true;
}

std::string SearchSpace::Check(const Architecture& a) const {
  if (static_cast<int32_t>(a.size()) != num_decisions())
    return "has " + std::to_string(a.size()) + " choices; space " + name_ + " has " + std::to_string(num_decisions()) +
           " decisions";
  for (int32_t d = 0; d < num_decisions(); ++d)
    if (!IsAllowed(a.data(), d, a[d]))
      return "choice " + std::to_string(a[d]) + " of " + decisions_[d].name + " is out of range or forbidden by a rule";
  return "";
}

ArchitectureDef SearchSpace::ToDef(const Architecture& a) const {
  ArchitectureDef m;
  m.set_space(name_);
  for (int32_t d = 0; d < num_decisions(); ++d) {
    ArchitectureChoice* c = m.add_choice();
    c->set_decision(decisions_[d].name);
    c->set_choice(decisions_[d].choices.at(a.at(d)));
  }
  return m;
}

Architecture SearchSpace::FromDef(const ArchitectureDef& m) const {
  if (m.space() != name_) throw ConfigError("the architecture is of space '" + m.space() + "', not '" + name_ + "'");
  Architecture a(num_decisions(), -1);
  for (const ArchitectureChoice& c : m.choice()) {
    const int32_t d = DecisionIndex(c.decision());
    if (d < 0) throw ConfigError("space " + name_ + " has no decision '" + c.decision() + "'");
    if (a[d] >= 0) throw ConfigError("decision '" + c.decision() + "' given twice");
    const auto& ch = decisions_[d].choices;
    auto it = std::find(ch.begin(), ch.end(), c.choice());
    if (it == ch.end()) throw ConfigError("'" + c.choice() + "' is not a choice of " + c.decision());
    a[d] = static_cast<int32_t>(it - ch.begin());
  }
  for (int32_t d = 0; d < num_decisions(); ++d)
    if (a[d] < 0) throw ConfigError("the architecture does not choose " + decisions_[d].name);
  const std::string why = Check(a);
  if (!why.empty()) throw ConfigError("the architecture " + why);
  return a;
}

std::string SearchSpace::Describe(const Architecture& a) const {
  std::string s;
  for (int32_t d = 0; d < num_decisions() && d < static_cast<int32_t>(a.size()); ++d)
    s += (s.empty() ? "" : " ") + decisions_[d].name + "=" + decisions_[d].choices.at(a[d]);
  return s;
}

}  // namespace placerl::nas
