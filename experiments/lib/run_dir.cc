#include "experiments/lib/run_dir.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::run {

namespace fs = std::filesystem;

namespace {

bool LooksLikeRunDirectory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "config.pbtxt", ec) || fs::exists(dir / "metrics.csv", ec)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().find("tfevents") != std::string::npos) return true;
  }
  return false;
}

bool IsEmptyDirectory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

// "r/", "./r" and "r" name one directory.
std::string SameDirectoryName(const std::string& p) {
  std::string s = fs::path(p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

void AddRunDirFlags(CLI::App& app, RunDirFlags* flags) {
  app.add_option("--out", flags->out, "Run directory to create (results, logs, checkpoints)");
  app.add_option("--resume", flags->resume, "Continue the run in this run directory");
  app.add_flag("--force", flags->force, "Replace a previous run in the --out directory");
  app.add_option("--config", flags->config, "Run config (protobuf text) over the defaults");
  app.add_option("--set", flags->sets, "Override a config field: --set a.b.c=value (repeatable)");
  app.add_option("--pictures", flags->pictures, "Picture format of the run directory")
      ->check(CLI::IsMember({"png", "svg"}));
}

RunDirOptions ResolveRunDirFlags(const RunDirFlags& flags) {
  RunDirOptions o;
  if (flags.out.empty() && flags.resume.empty()) throw ConfigError("--out DIR (or --resume DIR) is required");
  if (!flags.out.empty() && !flags.resume.empty() &&
      SameDirectoryName(flags.out) != SameDirectoryName(flags.resume)) {
    throw ConfigError("--out " + flags.out + " and --resume " + flags.resume + " name different directories");
  }
  if (flags.force && !flags.resume.empty()) throw ConfigError("--force and --resume exclude each other");
  o.resume = !flags.resume.empty();
  o.path = o.resume ? flags.resume : flags.out;
  o.force = flags.force;
  o.picture_format = flags.pictures;
  return o;
}

void ResolveRunConfig(const RunDirFlags& flags, RunDirectory& run, google::protobuf::Message* message,
                      const std::string& header, const std::vector<std::string>& resume_changeable) {
  if (run.resuming()) {
    if (!flags.config.empty()) {
      throw ConfigError("--config " + flags.config + " with --resume: a resumed run keeps its " + run.ConfigPath());
    }
    // Over the defaults too, so that a field added to the schema since the run started gets
    // the binary's default rather than zero.
    MergeConfigFile(run.ConfigPath(), message);
    std::unique_ptr<google::protobuf::Message> saved(message->New());
    saved->CopyFrom(*message);
    ApplyOverrides(flags.sets, message);
    // A resumed run is the run that was started: only its budget may grow.
    const std::vector<ConfigDifference> changed = ConfigDifferences(*saved, *message, resume_changeable);
    if (!changed.empty()) {
      std::string may;
      for (size_t i = 0; i < resume_changeable.size(); ++i)
        may += (i == 0 ? "" : i + 1 == resume_changeable.size() ? " and " : ", ") + resume_changeable[i];
      const ConfigDifference& c = changed.front();
      throw ConfigError("--resume " + run.path() + " keeps the run's settings (only " + (may.empty() ? "nothing" : may) +
                        " may change); asked for " + c.path + " " + c.after + " (the run's: " + c.before +
                        "); start a new run with --out to change it");
    }
  } else {
    if (!flags.config.empty()) MergeConfigFile(flags.config, message);
    ApplyOverrides(flags.sets, message);
  }
  MakeInputPathsAbsolute(message);  // as config.pbtxt has them: a resumed run names its inputs alike
  run.WriteConfig(*message, header);
}

std::vector<std::string> BudgetOverrides(double minutes, double checkpoint_minutes, const std::string& prefix) {
  auto text = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  std::vector<std::string> sets;
  if (minutes > 0) sets.push_back(prefix + "minutes=" + text(minutes));
  if (checkpoint_minutes > 0) sets.push_back(prefix + "checkpoint_minutes=" + text(checkpoint_minutes));
  return sets;
}

std::vector<std::string> MissingDirectories(const std::string& path) {
  std::vector<std::string> made;
  std::error_code ec;
  for (fs::path p = fs::path(path).lexically_normal(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    std::string s = p.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    made.push_back(s);
    if (p == p.parent_path()) break;
  }
  return made;
}

bool RemoveRunWithoutResults(const std::string& path, const std::vector<std::string>& created, bool logs_too) {
  try {
    const fs::path dir(path);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return false;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      const bool setup = name == "config.pbtxt" || (name == "checkpoints" && IsEmptyDirectory(e.path()));
      const bool log = logs_too && (name == "metrics.csv" || name.find("tfevents") != std::string::npos) &&
                       fs::is_regular_file(e.path(), ec);
      if (!setup && !log) return false;
      files.push_back(e.path());
    }
    if (ec) return false;
    for (const fs::path& f : files) fs::remove(f, ec);
    fs::remove(dir, ec);
    if (ec) return false;
    const std::string normal = fs::path(path).lexically_normal().string();
    for (const std::string& p : created) {
      if (fs::path(p).lexically_normal() == fs::path(normal)) continue;
      if (!IsEmptyDirectory(p)) break;
      fs::remove(p, ec);
    }
    return true;
  } catch (...) {
    return false;  // a left-over directory is harmless
  }
}

std::string CommandLineText(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+@%") == std::string::npos;
    std::string q = a;
    if (!plain) {
      q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      q += "'";
    }
    s += (i ? " " : "") + q;
  }
  return s;
}

RunDirectory::RunDirectory(const RunDirOptions& options)
    : path_(options.path), picture_format_(options.picture_format), resume_(options.resume) {
  if (path_.empty()) throw ConfigError("the run directory path is empty");
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
  if (picture_format_ != "png" && picture_format_ != "svg") {
    throw ConfigError("picture format '" + picture_format_ + "' is not png or svg");
  }
  if (options.force && options.resume) throw ConfigError("--force and --resume exclude each other");
  const fs::path dir(path_);
  std::error_code ec;
  const bool exists = fs::exists(dir, ec);
  if (exists && !fs::is_directory(dir, ec)) throw ConfigError(path_ + ": exists and is not a directory");

  if (resume_) {
    if (!exists) throw ConfigError("nothing to resume: " + path_ + " does not exist");
    if (!fs::exists(dir / "config.pbtxt", ec)) {
      throw ConfigError("nothing to resume in " + path_ + " (no config.pbtxt)");
    }
    return;
  }
  if (exists && !fs::is_empty(dir, ec)) {
    if (!options.force) {
      throw ConfigError(path_ + " is not empty (a previous run?): pass --resume " + path_ +
                        " to continue it or --force to replace it");
    }
    if (!LooksLikeRunDirectory(dir)) {
      throw ConfigError("--force will not clear " + path_ +
                        ": it does not look like a run directory (no config.pbtxt, metrics.csv or event file)");
    }
    for (const auto& e : fs::directory_iterator(dir)) {
      fs::remove_all(e.path(), ec);
      if (ec) throw IoError(e.path().string() + ": cannot remove (" + ec.message() + ")");
    }
    owned_ = true;
    return;
  }
  if (!exists) {
    // Remember which ancestors we make, to remove them again if the run produces nothing.
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      created_parents_.push_back(p.string());
      if (p == p.parent_path()) break;
    }
    fs::create_directories(dir, ec);
    if (ec) throw IoError(path_ + ": cannot create directory (" + ec.message() + ")");
  }
  owned_ = true;
}

RunDirectory::~RunDirectory() {
  metrics_.reset();
  tensorboard_.reset();
  if (!owned_ || resume_) return;
  // Set-up artefacts only (the config, an empty checkpoints/ folder; a training run's logs
  // without a checkpoint): nothing to keep. Never throws.
  RemoveRunWithoutResults(path_, created_parents_, needs_checkpoint_);
}

std::string RunDirectory::CheckpointDir() {
  const std::string d = Path("checkpoints");
  if (!checkpoint_dir_made_) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) throw IoError(d + ": cannot create directory (" + ec.message() + ")");
    checkpoint_dir_made_ = true;
  }
  return d;
}

namespace {

// String fields that always hold a file or folder, and those that hold a spec or a file.
bool IsPathField(const std::string& name) {
  for (const char* n : {"netlist", "plc", "netlists", "plcs", "checkpoint", "nb201_table", "macro_table", "data_dir"})
    if (name == n) return true;
  return false;
}
bool IsSpecOrPathField(const std::string& name) {
  return name == "graph" || name == "graphs" || name == "machine" || name == "space";
}

std::string AbsoluteIfExisting(const std::string& value, bool spec_or_path) {
  if (value.empty() || value[0] == '/') return value;
  if (spec_or_path && value.find_first_of("/.") == std::string::npos) return value;
  std::error_code ec;
  if (!fs::exists(value, ec)) return value;
  const fs::path a = fs::absolute(value, ec);
  return ec ? value : a.lexically_normal().string();
}

}  // namespace

void MakeInputPathsAbsolute(google::protobuf::Message* m) {
  namespace pb = google::protobuf;
  const pb::Descriptor* d = m->GetDescriptor();
  const pb::Reflection* r = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(*m, f); ++k) MakeInputPathsAbsolute(r->MutableRepeatedMessage(m, f, k));
      } else if (r->HasField(*m, f)) {
        MakeInputPathsAbsolute(r->MutableMessage(m, f));
      }
      continue;
    }
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) continue;
    const bool path = IsPathField(f->name()), spec = IsSpecOrPathField(f->name());
    if (!path && !spec) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(*m, f); ++k)
        r->SetRepeatedString(m, f, k, AbsoluteIfExisting(r->GetRepeatedString(*m, f, k), spec));
    } else if (!f->has_presence() || r->HasField(*m, f)) {
      const std::string v = r->GetString(*m, f);
      const std::string a = AbsoluteIfExisting(v, spec);
      if (a != v) r->SetString(m, f, a);
    }
  }
}

namespace {

// The leading comment lines of a config.pbtxt.
std::string HeaderOf(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size() && text[pos] == '#') {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string RecordedConfigText(const google::protobuf::Message& message) {
  std::unique_ptr<google::protobuf::Message> absolute(message.New());
  absolute->CopyFrom(message);
  MakeInputPathsAbsolute(absolute.get());
  return ResolvedConfigText(*absolute);
}

void RunDirectory::WriteConfig(const google::protobuf::Message& config, const std::string& header) {
  std::string text;
  std::error_code ec;
  if (resume_ && fs::exists(ConfigPath(), ec)) text = HeaderOf(ReadFile(ConfigPath()));
  size_t start = 0;
  bool first = true;
  while (!header.empty() && start <= header.size()) {
    size_t end = header.find('\n', start);
    if (end == std::string::npos) end = header.size();
    text += std::string(resume_ && first ? "# resumed: " : "# ") + header.substr(start, end - start) + "\n";
    first = false;
    start = end + 1;
  }
  text += RecordedConfigText(config);
  WriteFileAtomic(ConfigPath(), text);
}

void RunDirectory::ReadConfig(google::protobuf::Message* config) const { LoadConfig(ConfigPath(), config); }

void RunDirectory::WriteFile(const std::string& name, const std::string& content) const {
  WriteFileAtomic(Path(name), content);
}

MetricsCsv& RunDirectory::metrics() {
  if (!metrics_) {
    metrics_ = std::make_unique<MetricsCsv>(MetricsPath(), resume_ ? MetricsCsv::Mode::kAppend : MetricsCsv::Mode::kCreate);
  }
  return *metrics_;
}

TensorBoardWriter& RunDirectory::tensorboard() {
  if (!tensorboard_) tensorboard_ = std::make_unique<TensorBoardWriter>(path_);
  return *tensorboard_;
}

std::string RunDirectory::PlotMetrics(const std::string& stem, const std::string& x_column,
                                      const std::vector<std::string>& y_columns, viz::PlotOptions options,
                                      const std::vector<std::string>& labels) {
  const MetricsTable t = ReadMetricsCsv(MetricsPath());
  auto column = [&](const std::string& name) {
    const int j = t.Find(name);
    if (j < 0) {
      std::string have;
      for (size_t k = 0; k < t.columns.size(); ++k) have += (k ? ", " : "") + t.columns[k];
      throw ConfigError(MetricsPath() + ": no column '" + name + "' to plot (columns: " + have + ")");
    }
    return j;
  };
  const int xj = column(x_column);
  std::vector<viz::PlotSeries> series;
  for (size_t k = 0; k < y_columns.size(); ++k) {
    const int yj = column(y_columns[k]);
    viz::PlotSeries s;
    s.label = k < labels.size() ? labels[k] : y_columns[k];
    for (const auto& row : t.rows) {
      s.x.push_back(row[xj]);
      s.y.push_back(row[yj]);
    }
    series.push_back(std::move(s));
  }
  if (options.x_label.empty()) options.x_label = x_column;
  if (options.y_label.empty() && y_columns.size() == 1) options.y_label = y_columns[0];
  const std::string path = PicturePath(stem);
  viz::PlotCurves(series, options, path);
  return path;
}

void RunDirectory::ResumeFrom(int64_t step) {
  if (!resume_) throw ConfigError("ResumeFrom: " + path_ + " was not opened with --resume");
  if (metrics_ || tensorboard_) throw ConfigError("ResumeFrom: call it before the first Log");
  std::error_code ec;
  if (fs::exists(MetricsPath(), ec)) {
    const std::string text = ReadFile(MetricsPath());
    std::string kept;
    int step_column = -1;
    size_t pos = 0;
    for (int line_no = 1; pos < text.size(); ++line_no) {
      const size_t end = text.find('\n', pos);
      if (end == std::string::npos) break;  // a partial last line: dropped
      const std::string line = text.substr(pos, end - pos);
      pos = end + 1;
      std::vector<std::string> cells;
      for (size_t a = 0;;) {
        const size_t c = line.find(',', a);
        cells.push_back(line.substr(a, c == std::string::npos ? std::string::npos : c - a));
        if (c == std::string::npos) break;
        a = c + 1;
      }
      if (line_no == 1) {
        for (size_t j = 0; j < cells.size(); ++j) {
          if (cells[j] == "step") step_column = static_cast<int>(j);
        }
        if (step_column < 0) throw ParseError(MetricsPath(), 1, "no 'step' column");
        kept += line + "\n";
        continue;
      }
      if (static_cast<int>(cells.size()) <= step_column) continue;
      char* e = nullptr;
      const double s = std::strtod(cells[step_column].c_str(), &e);
      if (e != cells[step_column].c_str() && s < static_cast<double>(step)) kept += line + "\n";
    }
    WriteFileAtomic(MetricsPath(), kept);
  }
  tensorboard().AddSessionStart(step);
}

void RunDirectory::Log(int64_t step, const Scalars& scalars) {
  MetricRow row;
  row.reserve(scalars.size() + 1);
  row.emplace_back("step", static_cast<double>(step));
  row.insert(row.end(), scalars.begin(), scalars.end());
  metrics().Write(row);
  tensorboard().AddScalars(step, scalars);
}

}  // namespace placerl::run
