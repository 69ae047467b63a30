// The run directory that every training / search binary writes (place-baseline, place-train,
// place, nas-search; docs/conventions.md "Run directories"):
//   DIR/config.pbtxt                  resolved config (protobuf text, every field printed)
//   DIR/metrics.csv                   one row per logged step, `step` first (append-only)
//   DIR/events.out.tfevents.<s>.<host> TensorBoard scalars (append-only; one file per start)
//   DIR/best.<ext>                    best solution (best.plc, ...)
//   DIR/<name>.png|svg                pictures (best placement, curve)
//   DIR/checkpoints/                  checkpoints, created on first use
// Rules: the directory (and missing parents) is created; an existing non-empty one is refused
// unless resuming (`--resume DIR`: it must hold config.pbtxt; logs are appended) or forced
// (`--force`: a previous run directory is emptied first — a directory that does not look like
// one is never cleared). A run that ends having written nothing but its config (it failed
// before its first result) leaves no directory behind. Whole files are written atomically
// (WriteFileAtomic); only metrics.csv and the event file are appended to. One thread logs.
//
// A binary's main, in short (see experiments/lib/cli.h for RunMain / cli::Parse):
//   run::RunDirFlags flags;  run::AddRunDirFlags(app, &flags);  cli::Parse(app, argc, argv);
//   run::RunDirectory rd(run::ResolveRunDirFlags(flags));
//   MyConfig config = Defaults();
//   run::ResolveRunConfig(flags, rd, &config, run::CommandLineText(argc, argv));
//   if (rd.resuming()) rd.ResumeFrom(LoadCheckpoint(rd.CheckpointDir()));
//   run::InstallStopOnSignal();  run::Progress progress({...});
//   for (step...; !run::StopRequested(); ...) { ...; rd.Log(step, {{"charts/best_cost", best}});
//                                               progress.Update(step, {{"best", best}}); }
//   rd.WriteFile("best.plc", ...);  rd.PlotMetrics("curve", "time_s", {"charts/best_cost"}, {});
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "experiments/lib/metrics_csv.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/tensorboard.h"

namespace CLI {
class App;
}

namespace placerl::run {

struct RunDirOptions {
  std::string path;     // --out DIR (or the DIR of --resume DIR)
  bool force = false;   // --force: replace a previous run in `path`
  bool resume = false;  // --resume: continue the run in `path`
  std::string picture_format = "png";  // extension PicturePath gives: png | svg
};

// The standard flags of a binary that writes a run directory: `--out DIR`, `--resume DIR`,
// `--force`, `--config FILE.pbtxt`, `--set key=value` (repeatable) and `--pictures png|svg`.
// Call ResolveRunDirFlags after cli::Parse, then ResolveRunConfig once the directory exists.
struct RunDirFlags {
  std::string out;
  std::string resume;
  bool force = false;
  std::string config;
  std::vector<std::string> sets;
  std::string pictures = "png";
};
void AddRunDirFlags(CLI::App& app, RunDirFlags* flags);
// Checks the combination (exactly one of --out / --resume, or both naming the same
// directory; no --force with --resume) and returns the options. Throws ConfigError.
RunDirOptions ResolveRunDirFlags(const RunDirFlags& flags);

class RunDirectory;

// The fields a resumed run may change (--set on --resume): its budget.
inline const std::vector<std::string>& DefaultResumeChangeable() {
  static const std::vector<std::string> fields = {"minutes", "checkpoint_minutes"};
  return fields;
}
// … of the training binaries, whose budget is a TrainingRunConfig `run` (chip_placement.proto).
inline const std::vector<std::string>& TrainingRunResumeChangeable() {
  static const std::vector<std::string> fields = {"run.minutes", "run.checkpoint_minutes"};
  return fields;
}

// The run's config, the same way in every binary: `message` holds the binary's defaults on
// entry; a new run merges --config FILE over them, a resumed run reads DIR/config.pbtxt
// instead (--config with --resume is refused: the run keeps its config); then the --set
// overrides apply and the resolved config is written to DIR/config.pbtxt with `header` as its
// comment (WriteConfig: a resumed run keeps the original header and adds a "resumed" line).
// A resumed run keeps its settings: an override that changes a field other than those listed
// in `resume_changeable` (dotted paths; by default the budget, e.g. a longer --minutes) is
// refused with the field, its value and the asked one — before anything is written. `message`'s
// input paths are made absolute (MakeInputPathsAbsolute), as config.pbtxt has them. Throws
// ConfigError / ConfigParseError / IoError.
void ResolveRunConfig(const RunDirFlags& flags, RunDirectory& run, google::protobuf::Message* message,
                      const std::string& header = "",
                      const std::vector<std::string>& resume_changeable = DefaultResumeChangeable());

// A resumed run's budget flags (--minutes M, --checkpoint-minutes C; 0 = not given) as --set
// overrides ("minutes=M"; `prefix` goes before the keys: "run." gives "run.minutes=M"), to go
// before the user's --set: config.pbtxt then records them.
std::vector<std::string> BudgetOverrides(double minutes, double checkpoint_minutes, const std::string& prefix = "");

// The directories `path` and its missing ancestors that creating `path` would make (deepest
// first; none when it exists).
std::vector<std::string> MissingDirectories(const std::string& path);

// Removes the run directory `path` when it holds nothing a resume or a reader could use: only
// config.pbtxt, an empty checkpoints/ and, when `logs_too`, metrics.csv and event files (a
// training run killed before its first checkpoint cannot be resumed: its logs go with it). Then
// removes those of `created` (MissingDirectories before the run) that are empty. Returns true
// when `path` was removed. Never throws. (The launcher of `--workers N` calls it when rank 0,
// which owns the directory, was killed before it could clean up.)
bool RemoveRunWithoutResults(const std::string& path, const std::vector<std::string>& created, bool logs_too);

// Makes `message`'s input paths absolute as WriteConfig writes them (see there), for a binary
// whose outputs name its inputs: a new run then names them as a resumed one does.
void MakeInputPathsAbsolute(google::protobuf::Message* message);

// ResolvedConfigText(message) with its input paths made absolute as WriteConfig writes them:
// what a run records of its config elsewhere (e.g. inside its checkpoints).
std::string RecordedConfigText(const google::protobuf::Message& message);

// The command line as one shell-quoted line, for the config header.
std::string CommandLineText(int argc, const char* const* argv);

class RunDirectory {
 public:
  // Creates / checks the directory as described above. Throws ConfigError (non-empty
  // directory without --force/--resume, nothing to resume, --force on a directory that is
  // not a run directory) or IoError.
  explicit RunDirectory(const RunDirOptions& options);
  // Removes the directory (and the parents it created) if it holds nothing but what the
  // set-up wrote; never when resuming. Never throws.
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return path_; }
  bool resuming() const { return resume_; }

  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  std::string ConfigPath() const { return Path("config.pbtxt"); }
  std::string MetricsPath() const { return Path("metrics.csv"); }
  // DIR/best.<extension> ("plc" → best.plc).
  std::string BestPath(const std::string& extension) const { return Path("best." + extension); }
  // DIR/<stem>.png or .svg, as the options chose.
  std::string PicturePath(const std::string& stem) const { return Path(stem + "." + picture_format_); }
  // DIR/checkpoints (created on the first call) and a file in it.
  std::string CheckpointDir();
  std::string CheckpointPath(const std::string& name) { return CheckpointDir() + "/" + name; }

  // config.pbtxt: `header` lines (each prefixed "# ") then ResolvedConfigText(config). Input
  // files in it are absolute paths, so that the run resumes from any working directory: string
  // fields named netlist, plc, netlists, plcs, checkpoint, nb201_table, macro_table or data_dir,
  // and graph, graphs, machine or space when the value has a '/' or '.' (else it is a spec such
  // as rnnlm or k80(gpus=2)), whose relative value names an existing file or folder. When
  // resuming, the header of the run's config.pbtxt is kept and `header` is added after it as
  // "# resumed: ..." (the run's first command line stays on record).
  void WriteConfig(const google::protobuf::Message& config, const std::string& header = "");
  // A training run (checkpoints/): when it ends (fails, or is killed and cleaned up by its
  // launcher) before its first checkpoint, it leaves no directory — its metrics.csv and events
  // go too, since nothing can resume it. Call before the work.
  void SetNeedsCheckpoint() { needs_checkpoint_ = true; }
  // Reads config.pbtxt (resume). Throws as LoadConfig.
  void ReadConfig(google::protobuf::Message* config) const;
  // Any whole file of the run, atomically.
  void WriteFile(const std::string& name, const std::string& content) const;

  // One logged step: a metrics.csv row {step, scalars...} and the same scalars as TensorBoard
  // summaries, both on disk when this returns. The first call opens both logs (appending to
  // metrics.csv when resuming).
  void Log(int64_t step, const Scalars& scalars);

  // A resumed run continues at `step` (its last checkpoint's): the rows of metrics.csv with
  // step >= `step` (logged by the killed run after that checkpoint) are dropped (the file is
  // rewritten atomically) and a TensorBoard session start at `step` makes TensorBoard drop
  // the same events. Call before the first Log; only when resuming. Throws ConfigError
  // otherwise, ParseError for a metrics.csv without a `step` column.
  void ResumeFrom(int64_t step);
  MetricsCsv& metrics();
  TensorBoardWriter& tensorboard();

  // The curve picture PicturePath(stem) of metrics.csv (the whole file: a resumed run's
  // history too): `y_columns` against `x_column`, one series each, labelled with the column
  // name unless `labels` gives names. Empty cells are skipped. Returns the path written.
  // Throws ConfigError naming the available columns when one is missing.
  std::string PlotMetrics(const std::string& stem, const std::string& x_column,
                          const std::vector<std::string>& y_columns, viz::PlotOptions options,
                          const std::vector<std::string>& labels = {});

 private:
  std::string path_;
  std::string picture_format_;
  bool resume_ = false;
  bool owned_ = false;                   // created (or emptied by --force) by this run
  std::vector<std::string> created_parents_;  // deepest first, created by this run
  bool checkpoint_dir_made_ = false;
  bool needs_checkpoint_ = false;
  std::unique_ptr<MetricsCsv> metrics_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
};

}  // namespace placerl::run
