#include "experiments/lib/torch/enas_programs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "datasets/util/budget_clock.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stop_signal.h"
#include "env/block/block_env.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/torch/training_state.h"
#include "search/nas/nas_search.h"

namespace placerl::enas {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr const char* kEnasStateKind = "nas-search-enas";

uint64_t Fnv1a(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What a resumed run goes on from: checkpoints/latest.ckpt (RunEnas's archive) and the run's
// state (the flags, the next epoch) — the copy inside latest.ckpt (EnasCheckpoints::run_state,
// one atomic write with the search), or, for a checkpoint written before it carried one,
// state.json when it names latest.ckpt's size and hash. `label` names where the state was read.
struct EnasResumePoint {
  std::string bytes;
  nlohmann::json state;
  std::string label;
};

EnasResumePoint ReadEnasResumePoint(const std::string& dir) {
  const std::string state_path = dir + "/checkpoints/state.json", ckpt = dir + "/checkpoints/latest.ckpt";
  EnasResumePoint p;
  p.bytes = ReadFile(ckpt);
  nlohmann::json file_state;  // null: no state.json
  try {
    if (std::filesystem::exists(state_path)) file_state = nlohmann::json::parse(ReadFile(state_path));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(state_path + ": not a nas-search state file (" + e.what() + ")");
  }
  const std::string inside = EnasCheckpointRunState(p.bytes, ckpt);
  std::map<std::string, std::string> extras;
  if (!inside.empty()) extras[run::kRunStateExtra] = inside;
  p.state = run::ResumeState(extras, file_state, ckpt);
  p.label = inside.empty() ? state_path : ckpt;
  if (inside.empty()) {  // written before the state went inside: state.json must be the one written with it
    try {
      if (p.state.at("checkpoint").at("bytes").get<size_t>() != p.bytes.size() ||
          p.state.at("checkpoint").at("fnv1a").get<uint64_t>() != Fnv1a(p.bytes))
        throw ConfigError(ckpt + " is not the checkpoint state.json was written with (killed between the two writes?)");
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(state_path + ": not a nas-search state file (" + e.what() + ")");
    }
  }
  return p;
}

}  // namespace

void FillEnasControllerDefaults(config::NasSearchConfig* c) {
  FillDefaultPolicyConfig(c->mutable_policy());
  config::AgentConfig* ac = c->mutable_agent();
  FillDefaultAgentConfig(ac);
  ac->set_algorithm("reinforce");
  ac->set_learning_rate(3.5e-3);
  ac->set_entropy_coef(1e-4);
  ac->set_baseline_decay(0.9);
  c->set_episodes_per_update(10);
  c->set_reward_scale(1);
}

namespace {

// The flags of a resumed run (its saved ones; a new --budget-minutes: the new total), the search
// checkpoint and the epoch it goes on from. ConfigError when the flags differ from the run's.
struct ResumedSearch {
  FashionMnistFlags flags;
  std::string checkpoint;
  int32_t next_epoch = 0;
};

ResumedSearch ReadResumedSearch(const config::NasSearchConfig& cfg, const FashionMnistFlags& flags,
                                const run::RunDirFlags& dir_flags) {
  ResumedSearch resumed;
  FashionMnistFlags& f = resumed.flags;
  f = flags;
  EnasResumePoint point = ReadEnasResumePoint(dir_flags.resume);
  const std::string& state_path = point.label;
  try {
    const nlohmann::json& st = point.state;
    if (st.value("kind", "") != kEnasStateKind || st.at("method") != cfg.method())
      throw ConfigError(state_path + ": not the state of an enas_micro / fashion-mnist " + cfg.method() + " run");
    const nlohmann::json& saved = st.at("flags");
    auto differs = [](bool given, bool same) { return given && !same; };
    if (differs(flags.final_epochs > 0, flags.final_epochs == saved.at("final_epochs").get<double>()) ||
        differs(flags.random_cells >= 0, flags.random_cells == saved.at("random_cells").get<int32_t>()) ||
        differs(flags.derive_samples > 0, flags.derive_samples == saved.value("derive_samples", -1)) ||
        differs(flags.derive_images > 0, flags.derive_images == saved.value("derive_images", -1)) ||
        differs(flags.final_candidates > 0, flags.final_candidates == saved.value("final_candidates", -1)) ||
        differs(flags.uniform_fraction >= 0, flags.uniform_fraction == saved.value("uniform_fraction", -1.0)) ||
        differs(flags.max_images > 0, flags.max_images == saved.at("max_images").get<int32_t>()) ||
        differs(!flags.data_dir.empty(), flags.data_dir == saved.at("data_dir").get<std::string>()) ||
        differs(!flags.clock.empty(), flags.clock == saved.value("clock", std::string("wall"))))
      throw ConfigError("--resume " + dir_flags.resume + " keeps the run's --final-epochs, --random-cells, --max-images, "
                        "--fashion-mnist-dir, --clock, --derive-samples, --derive-images, --final-candidates and "
                        "--uniform-fraction (a longer search: --budget-minutes M, the new total)");
    f.final_epochs = saved.at("final_epochs").get<double>();
    f.random_cells = saved.at("random_cells").get<int32_t>();
    f.max_images = saved.at("max_images").get<int32_t>();
    f.data_dir = saved.at("data_dir").get<std::string>();
    f.clock = saved.value("clock", std::string("wall"));
    f.derive_samples = saved.value("derive_samples", -1);
    f.derive_images = saved.value("derive_images", -1);
    f.final_candidates = saved.value("final_candidates", -1);
    f.uniform_fraction = saved.value("uniform_fraction", -1.0);
    if (!(flags.budget_minutes > 0)) f.budget_minutes = saved.at("budget_minutes").get<double>();
    resumed.checkpoint = std::move(point.bytes);
    resumed.next_epoch = st.at("next_epoch").get<int32_t>();
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(state_path + ": not a nas-search state file (" + e.what() + ")");
  }
  return resumed;
}

// RunEnas's options from the config and the flags (`f`: its clock defaults to wall); ConfigError
// for what does not fit.
EnasSearchOptions EnasOptionsFrom(const config::NasSearchConfig& cfg, FashionMnistFlags* flags) {
  FashionMnistFlags& f = *flags;
  EnasSearchOptions o;
  if (f.budget_minutes > 0) o.budget_minutes = f.budget_minutes;
  if (f.final_epochs > 0) o.final_epochs = f.final_epochs;
  if (f.random_cells >= 0) o.random_cells = f.random_cells;
  if (f.derive_samples > 0) o.derive_samples = f.derive_samples;
  if (f.derive_images > 0) o.derive_images = f.derive_images;
  if (f.final_candidates > 0) o.final_candidates = f.final_candidates;
  if (f.uniform_fraction >= 0) o.uniform_fraction = f.uniform_fraction;
  o.compare = o.random_cells > 0;  // --random-cells 0: no comparison cells (method enas)
  if (cfg.method() == "random" && o.random_cells < 1) throw ConfigError("--method random needs --random-cells >= 1");
  if (!f.data_dir.empty()) o.data_dir = f.data_dir;
  if (f.clock.empty()) f.clock = "wall";
  o.cpu_clock = ParseBudgetClock(f.clock) == BudgetClock::kCpu;  // throws on anything but wall | cpu
  if (f.max_images > 0) {
    o.max_train_images = o.max_test_images = f.max_images;
    o.validation_images = std::min(o.validation_images, f.max_images);
  }
  o.seed = cfg.seeds_size() > 0 ? cfg.seeds(0) : 1;
  o.cost_budget = cfg.cost_budget();
  o.penalty = cfg.penalty();
  o.under_penalty = cfg.under_penalty();
  if (cfg.seeds_size() > 1) throw ConfigError("--dataset fashion-mnist runs one seed");
  if (cfg.method() == "enas") {
    if (cfg.agent().algorithm() != "reinforce")
      throw ConfigError("--method enas: agent.algorithm must be reinforce (the ENAS controller's algorithm)");
    CheckAgentConfig(cfg.agent());
    CheckPolicyConfig(cfg.policy());
    o.controller.agent = AgentOptionsFrom(cfg.agent(), o.seed);
    o.controller.policy = PolicyOptionsFrom(cfg.policy());
    o.controller.episodes_per_update = cfg.episodes_per_update();
    o.controller.reward_scale = cfg.reward_scale();
  }
  CheckSearchOptions(o);
  return o;
}

// config.pbtxt's header: the command line and the ENAS options.
std::string OptionsHeader(const std::string& command_line, const EnasSearchOptions& o, const FashionMnistFlags& f) {
  char header[900];
  std::snprintf(header, sizeof(header),
                "%s\nENAS options (search/nas/enas_search.h): budget_minutes=%g clock=%s final_epochs=%g "
                "random_cells=%d search_net C=%d N=%d final_net C=%d N=%d S=%d M=%d batch=%d reward_batch=%d "
                "derive_samples=%d derive_images=%d final_candidates=%d uniform_fraction=%g validation_images=%d "
                "max_images=%d lr=%g..%g wd=%g threads=%d",
                command_line.c_str(), o.budget_minutes, f.clock.c_str(), o.final_epochs, o.random_cells, o.search_net.channels,
                o.search_net.cells_per_stage, o.final_net.channels, o.final_net.cells_per_stage, o.shared_steps,
                o.controller_steps, o.batch, o.reward_batch, o.derive_samples, o.derive_images, o.final_candidates,
                o.uniform_fraction, o.validation_images,
                f.max_images, o.lr_max, o.lr_min, o.weight_decay, o.threads);
  return header;
}

// best.pbtxt and the curve (the search's epochs, or the random cells).
void WriteBestAndCurve(run::RunDirectory& dir, const config::NasSearchConfig& cfg, const nas::SearchSpace& space,
                       const TrainedChild* best, const EnasResult& r) {
  if (!best) return;
  nas::ArchitectureDef def = space.ToDef(best->arch);
  def.set_quality(best->test_accuracy);
  def.set_cost(1e-6 * static_cast<double>(best->macs));
  def.set_reward(best->val_accuracy);
  dir.WriteFile("best.pbtxt", "# nas-search " + cfg.method() + " on enas_micro / fashion-mnist: " + best->label +
                                  " (quality = test accuracy, cost = MMACs per image, reward = validation accuracy)\n" +
                                  run::ResolvedConfigText(def));
  if (!r.epochs.empty()) {
    viz::PlotSeries reward{"controller reward (val minibatch)", {}, {}}, val{"greedy child, 500 val images", {}, {}},
        train{"shared-weight train accuracy", {}, {}};
    for (const EnasEpochStats& e : r.epochs) {
      for (auto* s : {&reward, &val, &train}) s->x.push_back(e.seconds / 60);
      reward.y.push_back(e.controller_reward);
      val.y.push_back(e.val_accuracy);
      train.y.push_back(e.shared_accuracy);
    }
    viz::PlotOptions plot;
    plot.title = "ENAS on Fashion-MNIST (shared weights)";
    plot.x_label = "search minutes";
    plot.y_label = "accuracy";
    plot.markers = r.epochs.size() < 3;
    viz::PlotCurves({reward, val, train}, plot, dir.PicturePath("curve"));
  } else {  // random: the validation accuracy of each cell trained
    viz::PlotSeries val{"validation accuracy", {}, {}}, test{"test accuracy", {}, {}};
    for (size_t k = 0; k < r.random.size(); ++k) {
      val.x.push_back(k + 1.0);
      test.x.push_back(k + 1.0);
      val.y.push_back(r.random[k].val_accuracy);
      test.y.push_back(r.random[k].test_accuracy);
    }
    viz::PlotOptions plot;
    plot.title = "random cells trained from scratch, Fashion-MNIST";
    plot.x_label = "cell";
    plot.y_label = "accuracy";
    plot.markers = true;
    viz::PlotCurves({val, test}, plot, dir.PicturePath("curve"));
  }
}

nlohmann::json ResultJson(const config::NasSearchConfig& cfg, const EnasSearchOptions& o, const FashionMnistFlags& f,
                          const nas::SearchSpace& space, const TrainedChild* best, const EnasResult& r,
                          const std::string& out) {
  nlohmann::json j;
  j["space"] = "enas_micro";
  j["dataset"] = "fashion-mnist";
  j["method"] = cfg.method();
  j["seed"] = o.seed;
  j["options"] = {{"budget_minutes", o.budget_minutes}, {"clock", f.clock}, {"final_epochs", o.final_epochs},
                  {"random_cells", o.random_cells},     {"search_channels", o.search_net.channels},
                  {"search_cells_per_stage", o.search_net.cells_per_stage},
                  {"final_channels", o.final_net.channels},
                  {"final_cells_per_stage", o.final_net.cells_per_stage},
                  {"shared_steps_per_epoch", o.shared_steps}, {"controller_children_per_epoch", o.controller_steps},
                  {"batch", o.batch},                   {"reward_batch", o.reward_batch},
                  {"derive_samples", o.derive_samples}, {"derive_images", o.derive_images},
                  {"final_candidates", o.final_candidates}, {"uniform_fraction", o.uniform_fraction},
                  {"validation_images", o.validation_images}, {"threads", o.threads}};
  if (best) {
    j["best"] = ChildJson(space, *best);
    j["test_accuracy"] = best->test_accuracy;
    j["params"] = best->params;
    j["macs"] = best->macs;
    j["mflops"] = 2e-6 * static_cast<double>(best->macs);
  }
  if (cfg.method() == "enas") {
    j["search_seconds"] = r.search_seconds;
    j["search_cpu_seconds"] = r.search_cpu_seconds;
    j["seconds_per_shared_step"] = r.shared_steps > 0 ? r.search_seconds / r.shared_steps : 0;
    j["derive_seconds"] = r.derive_seconds;
    j["epochs"] = r.epochs.size();
    j["shared_steps"] = r.shared_steps;
    j["controller_children"] = r.controller_children;
    j["controller_updates"] = r.controller_updates;
    j["distinct_children"] = r.distinct_children;
    j["uniform_steps"] = r.uniform_steps;
    nlohmann::json cand = nlohmann::json::array();
    for (const TrainedChild& c : r.candidates) cand.push_back(ChildJson(space, c));
    j["candidates"] = cand;
    nlohmann::json fin = nlohmann::json::array();
    for (const TrainedChild& c : r.finalists) fin.push_back(ChildJson(space, c));
    j["finalists"] = fin;
    if (r.have_enas) j["enas"] = ChildJson(space, r.enas);
    if (r.have_hand) j["hand_designed"] = ChildJson(space, r.hand);
  }
  if (!r.random.empty()) {
    nlohmann::json rj = nlohmann::json::array();
    double seconds = 0;
    for (const TrainedChild& c : r.random) rj.push_back(ChildJson(space, c)), seconds += c.train_seconds;
    j["random"] = rj;
    j["best_random"] = ChildJson(space, r.random[r.best_random]);
    j["random_train_seconds"] = seconds;
  }
  j["stopped_by_signal"] = r.stopped;
  j["out"] = out;
  return j;
}

void PrintSummary(const EnasResult& r, const TrainedChild* best, const std::string& out, const std::string& pictures) {
  auto line = [](const char* what, const TrainedChild& c) {
    std::printf("%-13s test accuracy %.2f %% (val %.2f %%), %lld params, %.2f MMACs, trained in %.0f s (%.0f s CPU)\n",
                what, 100 * c.test_accuracy, 100 * c.val_accuracy, static_cast<long long>(c.params), 1e-6 * c.macs,
                c.train_seconds, c.train_cpu_seconds);
  };
  if (r.have_enas) {
    std::printf("enas search: %zu epochs, %lld shared steps, %lld children, %lld distinct architectures sampled, "
                "%.0f s (%.0f s CPU)\n",
                r.epochs.size(), static_cast<long long>(r.shared_steps),
                static_cast<long long>(r.controller_children), static_cast<long long>(r.distinct_children),
                r.search_seconds, r.search_cpu_seconds);
    if (r.finalists.size() > 1)
      for (const TrainedChild& c : r.finalists) line(c.label.c_str(), c);
    line("enas", r.enas);
  }
  if (r.best_random >= 0) {
    std::printf("best of %zu random cells:\n", r.random.size());
    line("random", r.random[r.best_random]);
  }
  if (r.have_hand) line("hand-designed", r.hand);
  if (best)
    std::printf("wrote %s (best.pbtxt, curve.%s, metrics.csv, TensorBoard events, config.pbtxt, result.json)\n",
                out.c_str(), pictures.c_str());
  else
    std::printf("stopped by signal before a child was trained from scratch; wrote %s (metrics.csv, TensorBoard "
                "events, config.pbtxt, result.json, checkpoints: --resume %s goes on)\n",
                out.c_str(), out.c_str());
}

}  // namespace

// Checked config → resumed flags → options → run directory → checkpointed search (RunEnas) →
// best.pbtxt, curve, result.json, the summary.
int RunFashionMnistNasSearch(const config::NasSearchConfig& cfg, const FashionMnistFlags& flags,
                             const run::RunDirFlags& dir_flags, const std::string& command_line, bool json) {
  if (cfg.space() != "enas_micro")
    throw ConfigError("--dataset fashion-mnist with --space " + cfg.space() + ": weight sharing is built for enas_micro");
  if (cfg.method() != "enas" && cfg.method() != "random")
    throw ConfigError("--dataset fashion-mnist: --method " + cfg.method() + " (enas, random)");
  const bool resuming = !dir_flags.resume.empty();
  ResumedSearch resumed;
  if (resuming) resumed = ReadResumedSearch(cfg, flags, dir_flags);
  FashionMnistFlags f = resuming ? resumed.flags : flags;
  const EnasSearchOptions o = EnasOptionsFrom(cfg, &f);
  // The data must be there before the directory is made: bad input leaves nothing.
  (void)nas::LoadFashionMnist(o.data_dir, "test");

  run::RunDirectory dir(run::ResolveRunDirFlags(dir_flags));
  dir.WriteConfig(cfg, OptionsHeader(command_line, o, f));
  if (resuming) dir.ResumeFrom(resumed.next_epoch);  // the epochs logged after the checkpoint go (they run again)

  // Checkpoints of the search (every checkpoint_minutes and at its end): latest.ckpt (RunEnas's
  // archive, with the run's state inside: the flags, the next epoch), then state.json beside it
  // for people (the same, and the checkpoint's size and hash).
  auto last_checkpoint = Clock::now();
  int checkpoints_written = 0;
  EnasCheckpoints ck;
  ck.resume = std::move(resumed.checkpoint);
  ck.checkpoint_due = [&] { return Since(last_checkpoint) >= 60 * cfg.checkpoint_minutes(); };
  auto run_state = [&](int32_t next_epoch) {
    return nlohmann::json{
        {"kind", kEnasStateKind}, {"version", 1}, {"space", cfg.space()}, {"method", cfg.method()},
        {"next_epoch", next_epoch},
        {"flags", {{"budget_minutes", o.budget_minutes}, {"final_epochs", f.final_epochs},
                   {"random_cells", f.random_cells}, {"max_images", f.max_images}, {"data_dir", f.data_dir},
                   {"clock", f.clock}, {"derive_samples", f.derive_samples}, {"derive_images", f.derive_images},
                   {"final_candidates", f.final_candidates}, {"uniform_fraction", f.uniform_fraction}}}};
  };
  ck.run_state = [&](int32_t next_epoch) { return run_state(next_epoch).dump(); };
  ck.on_checkpoint = [&](const std::string& bytes, int32_t next_epoch) {
    WriteFileAtomic(dir.CheckpointPath("latest.ckpt"), bytes);
    nlohmann::json st = run_state(next_epoch);
    st["checkpoint"] = {{"file", "latest.ckpt"}, {"bytes", bytes.size()}, {"fnv1a", Fnv1a(bytes)}};
    WriteFileAtomic(dir.CheckpointPath("state.json"), st.dump(2) + "\n");
    last_checkpoint = Clock::now();
    if (f.test_kill_after_checkpoints > 0 && ++checkpoints_written == f.test_kill_after_checkpoints)
      std::raise(SIGKILL);  // tests: a crash right after a checkpoint
  };

  run::InstallStopOnSignal();
  // One bar per phase (search, derive, final:<cell>): each phase's fraction and ETA are its own.
  std::unique_ptr<run::Progress> bar;
  std::string bar_phase;
  const auto start_bar = [&](const std::string& phase) {
    if (bar) bar->Finish();
    run::ProgressOptions po;
    po.label = cfg.method() + " " + phase;
    po.unit = "%";
    po.total = 100;
    bar = std::make_unique<run::Progress>(po);
    bar_phase = phase;
  };
  const EnasResult r = RunEnas(
      cfg.method(), o, [] { return run::StopRequested(); },
      [&](const std::string& phase, double fraction, const std::string& status) {
        if (!bar || phase != bar_phase) start_bar(phase);
        if (status.empty()) bar->Update(100 * fraction);
        else bar->Update(100 * fraction, {{"status", status}});
      },
      [&](const EnasEpochStats& e) {
        dir.Log(e.epoch, {{"time_s", e.seconds},
                          {"charts/learning_rate", e.lr},
                          {"losses/shared_loss", e.shared_loss},
                          {"charts/shared_train_accuracy", e.shared_accuracy},
                          {"charts/controller_reward", e.controller_reward},
                          {"charts/val_accuracy", e.val_accuracy},
                          {"losses/entropy", e.entropy},
                          {"losses/policy_loss", e.policy_loss}});
      },
      ck);
  const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  const TrainedChild* best = r.have_enas ? &r.enas : r.best_random >= 0 ? &r.random[r.best_random] : nullptr;
  if (!bar) start_bar("search");
  bar->Finish(best ? "test accuracy " + std::to_string(best->test_accuracy) : "stopped before a result");
  if (!best && !r.stopped) throw ConfigError("no child was trained (--final-candidates / --random-cells 0?)");
  WriteBestAndCurve(dir, cfg, space, best, r);
  const nlohmann::json j = ResultJson(cfg, o, f, space, best, r, dir.path());
  dir.WriteFile("result.json", j.dump(2) + "\n");
  if (json) std::printf("%s\n", j.dump().c_str());
  else PrintSummary(r, best, dir.path(), dir_flags.pictures);
  return 0;
}

}  // namespace placerl::enas
