// Tests of the run directory: creation with parents, refusal of a non-empty directory,
// --force and --resume, logging to metrics.csv + TensorBoard, atomic whole files, the
// resolved config, and removal of a directory that a failed run left with nothing in it.
#include "experiments/lib/run_dir.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <stdexcept>

#include "datasets/proto/chip_placement.pb.h"
#include "datasets/proto/device_placement.pb.h"
#include "datasets/proto/perf_model.pb.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "experiments/lib/cli.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

namespace fs = std::filesystem;
using placerl::testing::Slurp;
using placerl::testing::Spit;
using placerl::testing::TempDir;

RunDirOptions Out(const std::string& path) {
  RunDirOptions o;
  o.path = path;
  return o;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find("tfevents") != std::string::npos) v.push_back(e.path().string());
  }
  return v;
}

TEST(RunDirectory, CreatesParentsAndWritesTheRun) {
  TempDir tmp;
  const std::string dir = tmp / "a/b/run";
  {
    RunDirectory rd(Out(dir + "/"));
    EXPECT_EQ(rd.path(), dir);
    EXPECT_TRUE(fs::is_directory(dir));
    perf::RunSpec spec;
    spec.mutable_model()->set_layers(4);
    rd.WriteConfig(spec, "place-baseline --method sa\nresolved");
    rd.Log(0, {{"charts/best_cost", 1.5}});
    rd.Log(10, {{"charts/best_cost", 1.25}});
    rd.WriteFile("best.plc", "# best\n");
    EXPECT_EQ(rd.BestPath("plc"), dir + "/best.plc");
    EXPECT_EQ(rd.PicturePath("curve"), dir + "/curve.png");
    EXPECT_EQ(rd.CheckpointPath("ckpt-10.pt"), dir + "/checkpoints/ckpt-10.pt");
    EXPECT_TRUE(fs::is_directory(dir + "/checkpoints"));
  }
  EXPECT_EQ(Slurp(dir + "/metrics.csv"), "step,charts/best_cost\n0,1.5\n10,1.25\n");
  const std::string config = Slurp(dir + "/config.pbtxt");
  EXPECT_EQ(config.rfind("# place-baseline --method sa\n# resolved\nmodel {\n  layers: 4\n", 0), 0u) << config;
  perf::RunSpec back;
  RunDirectory again(RunDirOptions{dir, false, true, "png"});
  again.ReadConfig(&back);
  EXPECT_EQ(back.model().layers(), 4);
  const auto events = EventFiles(dir);
  ASSERT_EQ(events.size(), 1u);
  const TensorBoardFile tb = ReadTensorBoardFile(events[0]);
  ASSERT_EQ(tb.scalars.size(), 2u);
  EXPECT_EQ(tb.scalars[1].step, 10);
  EXPECT_EQ(tb.scalars[1].value, 1.25f);
  EXPECT_EQ(Slurp(dir + "/best.plc"), "# best\n");
  for (const auto& e : fs::directory_iterator(dir)) {  // atomic writes leave no temporaries
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST(RunDirectory, RefusesANonEmptyDirectory) {
  TempDir tmp;
  Spit(tmp / "notes.txt", "mine");
  try {
    RunDirectory rd(Out(tmp.path()));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is not empty (a previous run?): pass --resume"), std::string::npos);
  }
  EXPECT_EQ(Slurp(tmp / "notes.txt"), "mine");
}

TEST(RunDirectory, AnEmptyExistingDirectoryIsFine) {
  TempDir tmp;
  fs::create_directory(tmp / "run");
  {
    RunDirectory rd(Out(tmp / "run"));
    rd.Log(1, {{"x", 1}});
  }
  EXPECT_TRUE(fs::exists(tmp / "run/metrics.csv"));
}

TEST(RunDirectory, FileInTheWayIsAnError) {
  TempDir tmp;
  Spit(tmp / "run", "x");
  EXPECT_THROW(RunDirectory(Out(tmp / "run")), ConfigError);
}

TEST(RunDirectory, ForceReplacesAPreviousRun) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.Log(0, {{"x", 1}});
    rd.CheckpointPath("a");
    Spit(rd.CheckpointPath("a"), "old");
  }
  RunDirOptions o = Out(dir);
  o.force = true;
  {
    RunDirectory rd(o);
    EXPECT_TRUE(fs::is_empty(dir));  // old checkpoints, events and metrics are gone
    rd.Log(0, {{"y", 2}});
  }
  EXPECT_EQ(Slurp(dir + "/metrics.csv"), "step,y\n0,2\n");
  EXPECT_EQ(EventFiles(dir).size(), 1u);
}

TEST(RunDirectory, ForceNeverClearsSomethingElse) {
  TempDir tmp;
  Spit(tmp / "thesis.tex", "years of work");
  RunDirOptions o = Out(tmp.path());
  o.force = true;
  try {
    RunDirectory rd(o);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does not look like a run directory"), std::string::npos);
  }
  EXPECT_EQ(Slurp(tmp / "thesis.tex"), "years of work");
}

TEST(RunDirectory, ResumeAppendsToTheLogs) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.Log(0, {{"cost", 2}});
  }
  RunDirOptions o = Out(dir);
  o.resume = true;
  {
    RunDirectory rd(o);
    EXPECT_TRUE(rd.resuming());
    rd.Log(1, {{"cost", 1}});
    EXPECT_THROW(rd.Log(2, {{"loss", 1}}), Error);  // the resumed header has no `loss`
  }
  EXPECT_EQ(Slurp(dir + "/metrics.csv"), "step,cost\n0,2\n1,1\n");
  EXPECT_EQ(EventFiles(dir).size(), 2u);  // TensorBoard reads both files of the directory
}

TEST(RunDirectory, ResumeNeedsARun) {
  TempDir tmp;
  RunDirOptions o = Out(tmp / "none");
  o.resume = true;
  EXPECT_THROW(RunDirectory rd(o), ConfigError);
  o.path = tmp.path();  // exists, but no config.pbtxt
  EXPECT_THROW(RunDirectory rd(o), ConfigError);
  EXPECT_TRUE(fs::exists(tmp.path()));
}

TEST(RunDirectory, AFailedRunLeavesNoDirectoryBehind) {
  TempDir tmp;
  const std::string dir = tmp / "x/y/run";
  try {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.CheckpointDir();
    throw std::runtime_error("netlist not found");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists(tmp / "x"));  // the parents it created go too
  EXPECT_TRUE(fs::exists(tmp.path()));  // but not those that were there
}

TEST(RunDirectory, ARunWithResultsIsKeptEvenWhenItFails) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  try {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.Log(0, {{"cost", 1}});
    throw std::runtime_error("later failure");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(fs::exists(dir + "/metrics.csv"));
  EXPECT_TRUE(fs::exists(dir + "/config.pbtxt"));
}

TEST(RunDirectory, AFileWrittenByPathAlsoCountsAsAResult) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    Spit(rd.PicturePath("best"), "png");
  }
  EXPECT_TRUE(fs::exists(dir + "/best.png"));
}

TEST(RunDirectory, AResumedRunIsNeverRemoved) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.Log(0, {{"cost", 1}});
  }
  fs::remove(dir + "/metrics.csv");
  for (const auto& f : EventFiles(dir)) fs::remove(f);
  { RunDirectory rd(RunDirOptions{dir, false, true, "png"}); }
  EXPECT_TRUE(fs::exists(dir + "/config.pbtxt"));
}

TEST(RunDirFlags, ParseAndResolve) {
  auto parse = [](std::vector<std::string> args) {
    CLI::App app{"t"};
    RunDirFlags f;
    AddRunDirFlags(app, &f);
    std::vector<char*> argv{const_cast<char*>("t")};
    for (auto& a : args) argv.push_back(a.data());
    cli::Parse(app, static_cast<int>(argv.size()), argv.data());
    return f;
  };
  RunDirFlags f = parse({"--out", "r", "--set", "a.b=1", "--set", "c=2", "--force", "--pictures", "svg"});
  EXPECT_EQ(f.sets, (std::vector<std::string>{"a.b=1", "c=2"}));
  RunDirOptions o = ResolveRunDirFlags(f);
  EXPECT_EQ(o.path, "r");
  EXPECT_TRUE(o.force);
  EXPECT_FALSE(o.resume);
  EXPECT_EQ(o.picture_format, "svg");
  o = ResolveRunDirFlags(parse({"--resume", "r/"}));
  EXPECT_TRUE(o.resume);
  EXPECT_EQ(o.path, "r/");
  EXPECT_NO_THROW(ResolveRunDirFlags(parse({"--resume", "r/", "--out", "r"})));
  EXPECT_THROW(ResolveRunDirFlags(parse({})), ConfigError);
  EXPECT_THROW(ResolveRunDirFlags(parse({"--resume", "a", "--out", "b"})), ConfigError);
  EXPECT_THROW(ResolveRunDirFlags(parse({"--resume", "a", "--force"})), ConfigError);
  EXPECT_THROW(parse({"--out", "a", "--pictures", "gif"}), UsageError);
}

}  // namespace
}  // namespace placerl::run

namespace placerl::run {
namespace {

TEST(RunDirectory, PlotsTheCurveOfMetricsCsvIncludingAResumedHistory) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    rd.Log(0, {{"time_s", 0}, {"best_cost", 2}, {"episode_return", NAN}});
    rd.Log(1, {{"time_s", 1}, {"best_cost", 1.5}});
  }
  RunDirOptions o = Out(dir);
  o.resume = true;
  o.picture_format = "svg";
  RunDirectory rd(o);
  rd.Log(2, {{"time_s", 2}, {"best_cost", 1.25}, {"episode_return", -1.3}});
  const std::string path = rd.PlotMetrics("curve", "time_s", {"best_cost", "episode_return"}, viz::PlotOptions());
  EXPECT_EQ(path, dir + "/curve.svg");
  EXPECT_NE(Slurp(path).find("</svg>"), std::string::npos);
  try {
    rd.PlotMetrics("curve", "time_s", {"loss"}, viz::PlotOptions());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no column 'loss' to plot (columns: step, time_s, best_cost, episode_return)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace placerl::run

namespace placerl::run {
namespace {

TEST(ResolveRunConfig, NewRunThenResume) {
  TempDir tmp;
  Spit(tmp / "c.pbtxt", "model { layers: 0 }\nplan { fsdp: 4 }\n");
  const std::string dir = tmp / "run";
  perf::RunSpec defaults;
  defaults.mutable_model()->set_layers(12);
  defaults.mutable_model()->set_d_model(768);
  {
    RunDirFlags flags;
    flags.out = dir;
    flags.config = tmp / "c.pbtxt";
    flags.sets = {"plan.data=2"};
    RunDirectory rd(ResolveRunDirFlags(flags));
    perf::RunSpec spec = defaults;
    ResolveRunConfig(flags, rd, &spec, "test --config c.pbtxt");
    EXPECT_EQ(spec.model().layers(), 0);
    EXPECT_EQ(spec.model().d_model(), 768);
    EXPECT_EQ(spec.plan().fsdp(), 4);
    EXPECT_EQ(spec.plan().data(), 2);
    rd.Log(0, {{"x", 1}});
  }
  const std::string before = Slurp(dir + "/config.pbtxt");
  RunDirFlags flags;
  flags.resume = dir;
  flags.sets = {"plan.data=4"};
  RunDirectory rd(ResolveRunDirFlags(flags));
  perf::RunSpec spec = defaults;
  // A resumed run keeps its settings (issue 29 item 8): by default only the budget may change.
  try {
    ResolveRunConfig(flags, rd, &spec, "test --resume");
    ADD_FAILURE() << "a resumed run accepted plan.data=4";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("asked for plan.data 4 (the run's: 2)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Slurp(dir + "/config.pbtxt"), before);  // nothing written
  spec = defaults;  // the run's own config wins over the defaults
  ResolveRunConfig(flags, rd, &spec, "test --resume", {"plan.data"});  // a field this binary lets change
  EXPECT_EQ(spec.model().layers(), 0);
  EXPECT_EQ(spec.plan().data(), 4);
  perf::RunSpec written;
  LoadConfig(rd.ConfigPath(), &written);
  EXPECT_EQ(written.plan().data(), 4);  // the resolved config is written again
  flags.config = tmp / "c.pbtxt";
  EXPECT_THROW(ResolveRunConfig(flags, rd, &spec), ConfigError);
}

// Issue 29 item 7: config.pbtxt kept input paths relative to the working directory, so a run
// could only be resumed from where it started.
TEST(RunDirectory, ConfigNamesInputFilesByAbsolutePaths) {
  TempDir tmp;
  Spit(tmp / "n.pb.txt", "netlist");
  Spit(tmp / "model.graph", "graph");
  const std::string rel = fs::relative(tmp / "n.pb.txt").string();
  const std::string rel_graph = fs::relative(tmp / "model.graph").string();
  ASSERT_NE(rel[0], '/');
  config::PlaceBaselineConfig chip;
  chip.set_method("sa");
  chip.mutable_chip()->set_netlist(rel);
  chip.mutable_chip()->set_plc("no/such/file.plc");  // not there: kept as given (its error names it)
  RunDirectory rd(Out(tmp / "run"));
  rd.WriteConfig(chip, "cmd");
  config::PlaceBaselineConfig back;
  LoadConfig(rd.ConfigPath(), &back);
  EXPECT_EQ(back.chip().netlist()[0], '/') << back.chip().netlist();
  EXPECT_TRUE(fs::equivalent(back.chip().netlist(), tmp / "n.pb.txt"));
  EXPECT_EQ(back.chip().plc(), "no/such/file.plc");
  EXPECT_EQ(back.method(), "sa");
  EXPECT_EQ(chip.chip().netlist(), rel);  // the caller's config is left alone
  // A graph or machine field holds a spec or a file: only a file becomes absolute.
  config::DevicePlaceTrainConfig device;
  device.add_graphs(rel_graph);
  device.add_graphs("nmt(layers=2)");
  device.set_machine("k80(gpus=2,memory_fraction=0.39)");
  rd.WriteConfig(device, "cmd");
  config::DevicePlaceTrainConfig dback;
  LoadConfig(rd.ConfigPath(), &dback);
  ASSERT_EQ(dback.graphs_size(), 2);
  EXPECT_TRUE(fs::equivalent(dback.graphs(0), tmp / "model.graph"));
  EXPECT_EQ(dback.graphs(0)[0], '/');
  EXPECT_EQ(dback.graphs(1), "nmt(layers=2)");
  EXPECT_EQ(dback.machine(), "k80(gpus=2,memory_fraction=0.39)");
}

// Issue 29 item 8: a resume overwrote config.pbtxt's record of the run, command line included.
TEST(RunDirectory, AResumedRunKeepsTheFirstCommandLineAndAddsItsOwn) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  perf::RunSpec spec;
  spec.mutable_model()->set_layers(2);
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(spec, "train --minutes 1");
    rd.Log(0, {{"x", 1}});
  }
  for (const char* again : {"train --resume run --minutes 2", "train --resume run --minutes 3"}) {
    RunDirectory rd(RunDirOptions{dir, false, true, "png"});
    rd.WriteConfig(spec, again);
  }
  const std::string config = Slurp(dir + "/config.pbtxt");
  EXPECT_EQ(config.rfind("# train --minutes 1\n# resumed: train --resume run --minutes 2\n"
                         "# resumed: train --resume run --minutes 3\nmodel {\n",
                         0),
            0u)
      << config;
}

// Issue 29 item 10: a training run killed before its first checkpoint left config.pbtxt,
// metrics.csv and an empty checkpoints/ that could neither be resumed nor replaced without
// --force.
TEST(RunDirectory, ATrainingRunEndingBeforeItsFirstCheckpointLeavesNoDirectory) {
  TempDir tmp;
  const std::string dir = tmp / "x/run";
  try {
    RunDirectory rd(Out(dir));
    rd.SetNeedsCheckpoint();
    rd.WriteConfig(perf::RunSpec());
    rd.CheckpointDir();
    rd.Log(1, {{"cost", 1}});
    throw std::runtime_error("a worker died");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(tmp / "x"));
  {  // With a checkpoint the run is resumable: kept.
    RunDirectory rd(Out(dir));
    rd.SetNeedsCheckpoint();
    rd.WriteConfig(perf::RunSpec());
    rd.Log(1, {{"cost", 1}});
    Spit(rd.CheckpointPath("latest.ckpt"), "weights");
  }
  EXPECT_TRUE(fs::exists(dir + "/metrics.csv"));
}

// What the --workers launcher removes when rank 0 was killed before it could clean up.
TEST(RemoveRunWithoutResults, RemovesOnlyARunThatHasNothingToResume) {
  TempDir tmp;
  const std::string dir = tmp / "a/b/run";
  const std::vector<std::string> made = MissingDirectories(dir);
  ASSERT_EQ(made.size(), 3u);
  EXPECT_EQ(made[0], dir);
  EXPECT_TRUE(MissingDirectories(tmp.path()).empty());
  fs::create_directories(dir + "/checkpoints");
  Spit(dir + "/config.pbtxt", "");
  Spit(dir + "/metrics.csv", "step\n1\n");
  Spit(dir + "/events.out.tfevents.1.host", "");
  EXPECT_FALSE(RemoveRunWithoutResults(dir, made, /*logs_too=*/false));  // a run's logs are kept
  Spit(dir + "/notes.txt", "mine");
  EXPECT_FALSE(RemoveRunWithoutResults(dir, made, true));  // something else: never removed
  fs::remove(dir + "/notes.txt");
  Spit(dir + "/checkpoints/latest.ckpt", "weights");
  EXPECT_FALSE(RemoveRunWithoutResults(dir, made, true));  // resumable
  fs::remove(dir + "/checkpoints/latest.ckpt");
  EXPECT_TRUE(RemoveRunWithoutResults(dir, made, true));
  EXPECT_FALSE(fs::exists(tmp / "a"));
  EXPECT_TRUE(fs::exists(tmp.path()));
}

TEST(ResolveRunConfig, ABadOverrideLeavesNoDirectory) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  RunDirFlags flags;
  flags.out = dir;
  flags.sets = {"plan.nope=1"};
  try {
    RunDirectory rd(ResolveRunDirFlags(flags));
    perf::RunSpec spec;
    ResolveRunConfig(flags, rd, &spec);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no field 'nope'"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(CommandLineText, QuotesWhatTheShellWouldSplit) {
  const char* argv[] = {"place-train", "--out", "runs/a b", "--set", "ppo.clip=0.1", "it's"};
  EXPECT_EQ(CommandLineText(6, argv), "place-train --out 'runs/a b' --set ppo.clip=0.1 'it'\\''s'");
}

}  // namespace
}  // namespace placerl::run

namespace placerl::run {
namespace {

TEST(RunDirectory, ResumeFromDropsWhatTheKilledRunLoggedAfterItsCheckpoint) {
  TempDir tmp;
  const std::string dir = tmp / "run";
  {
    RunDirectory rd(Out(dir));
    rd.WriteConfig(perf::RunSpec());
    for (int s = 0; s < 10; ++s) rd.Log(s, {{"cost", 10.0 - s}});
  }
  std::string csv = Slurp(dir + "/metrics.csv");
  Spit(dir + "/metrics.csv", csv + "10,0.");  // killed mid-row
  RunDirOptions o = Out(dir);
  o.resume = true;
  {
    RunDirectory rd(o);
    rd.ResumeFrom(6);  // the last checkpoint was at step 6
    rd.Log(6, {{"cost", 3.5}});
    EXPECT_THROW(rd.ResumeFrom(6), ConfigError);  // after a Log
  }
  const MetricsTable t = ReadMetricsCsv(dir + "/metrics.csv");
  ASSERT_EQ(t.rows.size(), 7u);
  EXPECT_EQ(t.rows[5][0], 5);
  EXPECT_EQ(t.rows[6][0], 6);
  EXPECT_EQ(t.rows[6][1], 3.5);
  std::vector<std::string> events = EventFiles(dir);
  ASSERT_EQ(events.size(), 2u);
  std::sort(events.begin(), events.end());
  int starts = 0;
  for (const auto& f : events) {
    const TensorBoardFile tb = ReadTensorBoardFile(f);
    if (!tb.session_starts.empty()) {
      EXPECT_EQ(tb.session_starts, std::vector<int64_t>{6});
      ++starts;
    }
  }
  EXPECT_EQ(starts, 1);
  RunDirectory fresh(Out(tmp / "other"));
  EXPECT_THROW(fresh.ResumeFrom(1), ConfigError);
}

}  // namespace
}  // namespace placerl::run
