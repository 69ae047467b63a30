#include "experiments/lib/nas/nas_search_run.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include "agents/learner.h"
#include "datasets/nas/search_space.h"
#include "datasets/nas/tables.h"
#include "datasets/proto/nas_search.pb.h"
#include "datasets/util/config_text.h"
#include "datasets/util/data_path.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"
#include "encoders/policy.h"
#include "env/block/block_env.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/learner_config.h"
#include "experiments/lib/metrics_csv.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "datasets/util/stop_signal.h"
#include "search/nas/nas_search.h"
#if PLACERL_HAVE_TORCH
#include "search/nas/brainformer_search.h"
#include "experiments/lib/torch/enas_programs.h"
#include "experiments/lib/torch/training_state.h"
#include "search/nas/nas_rl.h"
#endif
#include "experiments/lib/nas/nas_search_state.h"

namespace placerl::nas_search {
namespace {

std::unique_ptr<env::BlockEnv> MakeEnv(const config::NasSearchConfig& c) {
  env::BlockEnvOptions eo;
  eo.space = c.space();
  eo.dataset = c.table_dataset();
  eo.cost_budget = c.cost_budget();
  eo.penalty = c.penalty();
  eo.under_penalty = c.under_penalty();
  eo.skip_penalty = c.skip_penalty();
  // The table of the space's benchmark (the environment picks table or synthetic quality).
  const nas::SearchSpace probe = nas::LoadSearchSpace(c.space());
  if (probe.table() == "nb201") eo.table = c.nb201_table();
  if (probe.table() == "nas_bench_macro") eo.table = c.macro_table();
  auto e = std::make_unique<env::BlockEnv>(eo);
  if (TrainsBrainformer(c.space(), c.dataset())) return e;  // its step time: brainformer::MakeSearchSetup
  if (TrainsEnasCells(c)) return e;                          // its step time: enas::MakeTrainedSearchSetup
  if (c.cost_budget() > 0 && e->step_time_model().unit() == "none")
    throw ConfigError("space " + e->space().name() + " has no step-time model yet: a cost budget would have no effect");
  return e;
}

// The best architecture of the table (all of it evaluated), for the regret.
struct TableOptimum {
  bool known = false;
  search::NasEvaluation best;
};

TableOptimum FindTableOptimum(const env::BlockEnv& e) {
  TableOptimum t;
  const nas::SearchSpace& s = e.space();
  if (s.table().empty() || s.Log10Size() > 6) return t;
  nas::Architecture a(s.num_decisions(), 0);
  while (true) {
    const env::BlockScore score = e.Evaluate(a);
    if (!t.known || score.reward > t.best.score.reward) t.best = {a, score};
    t.known = true;
    int32_t d = s.num_decisions() - 1;
    while (d >= 0 && ++a[d] == s.decisions()[d].num_choices()) a[d--] = 0;
    if (d < 0) break;
  }
  return t;
}

// The architectures no other evaluated one beats in both quality (higher) and cost (lower),
// by increasing cost; repeats kept once.
struct ParetoFront {
  std::vector<search::NasEvaluation> points;
  void Add(const search::NasEvaluation& e) {
    for (const auto& p : points)
      if (p.score.cost <= e.score.cost && p.score.quality >= e.score.quality) return;  // dominated or equal
    std::vector<search::NasEvaluation> kept;
    for (auto& p : points)
      if (!(e.score.cost <= p.score.cost && e.score.quality >= p.score.quality)) kept.push_back(std::move(p));
    auto at = std::lower_bound(kept.begin(), kept.end(), e.score.cost,
                               [](const search::NasEvaluation& p, double c) { return p.score.cost < c; });
    kept.insert(at, e);
    points = std::move(kept);
  }
};

nlohmann::json ArchJson(const env::BlockEnv& e, const search::NasEvaluation& x) {
  return {{"encoding", e.Encoding(x.arch)}, {"quality", x.score.quality}, {"cost", x.score.cost},
          {"penalty", x.score.penalty}, {"reward", x.score.reward}, {"architecture", e.space().Describe(x.arch)}};
}

double Mean(const std::vector<double>& v) { return stats::Mean(v, 0); }
double Std(const std::vector<double>& v) { return stats::SampleSd(v, 0); }  // sample (n − 1); 0 for one seed

// One seed of reinforce / ppo (search/nas/nas_rl.h).
search::NasSearchResult RunLearned(
    const env::BlockEnv& env, const config::NasSearchConfig& c, uint64_t seed,
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_eval,
    std::map<std::string, double>* last_stats, RunState* state, const std::function<bool()>& checkpoint_due,
    const std::function<std::string()>& run_state_text, const std::function<void()>& on_checkpoint) {
#if PLACERL_HAVE_TORCH
  NasRlOptions o;
  o.agent = AgentOptionsFrom(c.agent(), seed);
  o.policy = PolicyOptionsFrom(c.policy());
  if (!c.policy().preset().empty()) o.policy.preset = encoders::ParsePolicyPreset(c.policy().preset());
  o.budget = c.budget();
  o.episodes_per_update = c.episodes_per_update();
  o.reward_scale = c.reward_scale();
  o.seed = seed;
  o.curve_stride = state->curve_stride;
  NasRlCheckpoints ck;
  ck.state = &state->current;
  ck.learner_checkpoint = &state->learner_checkpoint;
  ck.checkpoint_due = checkpoint_due;
  ck.on_checkpoint = [&](const search::NasSearchState&, const std::string&) { on_checkpoint(); };
  // The run's state goes inside the learner checkpoint (ReadRunState).
  ck.extras = [&](const search::NasSearchState&) { return agents::Learner::Extras{{run::kRunStateExtra, run_state_text()}}; };
  return RunNasRl(env, o, [] { return run::StopRequested(); }, on_eval,
                  [&](int64_t, const NasRlStats& s) { *last_stats = s; }, ck);
#else
  (void)env, (void)c, (void)seed, (void)on_eval, (void)last_stats, (void)state, (void)checkpoint_due, (void)run_state_text,
      (void)on_checkpoint;
  throw ConfigError("--method " + c.method() + " needs a build with LibTorch");
#endif
}

// Bounded logs and curves: rows of metrics.csv per seed before they thin out, points per curve.
constexpr int64_t kMaxLoggedRows = 100000;
constexpr int64_t kCurvePoints = 10000;

// The memory this process may still take: physical memory, or what `ulimit -v` leaves.
double MemoryAvailableBytes() {
  double total = 0;
  {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    double kib = 0;
    while (in >> key >> kib >> unit)
      if (key == "MemTotal:") {
        total = kib * 1024;
        break;
      }
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    double vm_pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> vm_pages;
    const double left = static_cast<double>(rl.rlim_cur) - vm_pages * static_cast<double>(sysconf(_SC_PAGESIZE));
    total = total > 0 ? std::min(total, left) : left;
  }
  return total > 0 ? total : 1e18;
}

std::string Duration(double s) {
  char b[64];
  if (s < 120) std::snprintf(b, sizeof(b), "%.3g s", s);
  else if (s < 7200) std::snprintf(b, sizeof(b), "%.3g min", s / 60);
  else if (s < 3 * 86400) std::snprintf(b, sizeof(b), "%.3g h", s / 3600);
  else std::snprintf(b, sizeof(b), "%.3g days", s / 86400);
  return b;
}

// The search's time and memory, estimated before anything is written: refused (ConfigError with
// the estimate) when beyond the machine — more than cli::kMaxSeconds (a week), or more memory
// than it has (or `ulimit -v` leaves) — unless `allow_slow` (docs/nas.md "Reliability").
// Per evaluation: a table or synthetic quality is timed here on a few architectures; a learned
// method adds its policy's episode; a trained candidate costs its training steps.
void CheckSearchEstimate(const config::NasSearchConfig& c, const env::BlockEnv& env, int64_t done_evaluations,
                         bool allow_slow) {
  const nas::SearchSpace& space = env.space();
  const double seeds = c.seeds_size();
  const double evaluations = std::max(0.0, static_cast<double>(c.budget()) * seeds - static_cast<double>(done_evaluations));
  const double decisions = space.num_decisions();
  double per_eval = 0;  // seconds
  std::string what;
  if (TrainsBrainformer(c.space(), c.dataset())) {
    // Measured: ≈ 20 ms per step of the default patch Transformer (batch 64, one thread).
    per_eval = c.brainformer().train_steps() * 0.02 * c.brainformer().batch_size() / 64.0;
    what = std::to_string(c.brainformer().train_steps()) + " training steps each";
  } else if (TrainsEnasCells(c)) {
    // Measured: ≈ 0.12 s per SGD step of a cell (batch 64, one thread; 200 steps ≈ 25 s).
    per_eval = c.enas_training().train_steps() * 0.12;
    what = std::to_string(c.enas_training().train_steps()) + " training steps each";
  } else {
    std::mt19937_64 rng(1);
    const int n = 200;
    std::vector<nas::Architecture> archs;
    for (int i = 0; i < n; ++i) archs.push_back(search::RandomArchitecture(space, rng));
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = 0;
    for (const auto& a : archs) sink = sink + env.Evaluate(a).reward;
    // + the search's own work per evaluation (bookkeeping, progress, a thinned metrics row): ≈ 1 µs
    per_eval = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n + 1e-6;
    what = "evaluated";
  }
  if (Learned(c.method())) per_eval += 2e-4 * decisions;  // the policy's steps and the learner's share
  if (c.method() == "evolution") per_eval += c.tournament() * 2e-7;  // a tournament draw: ≈ 0.1–0.3 µs measured
  const double seconds = evaluations * per_eval;
  // Memory that does not grow with the budget, but with the options: evolution's population, the
  // learner's episodes of an update, the distinct architectures remembered, the per-seed summary.
  const double arch_bytes = 1200 + 4 * decisions;  // an evaluation, and its JSON in a checkpoint
  double bytes = 0;
  if (c.method() == "evolution") bytes += c.population() * arch_bytes;
  if (Learned(c.method())) bytes += static_cast<double>(c.episodes_per_update()) * decisions * 16384;
  bytes += std::min<double>(static_cast<double>(c.budget()), search::kMaxTrackedArchitectures) * 48;
  bytes += seeds * 600;
  char text[512];
  std::snprintf(text, sizeof(text),
                "%.6g architecture(s) (%lld x %d seed(s)) of %s, %s, estimated at %s (%.3g s each) and %.3g GiB of "
                "memory",
                evaluations, static_cast<long long>(c.budget()), c.seeds_size(), space.name().c_str(), what.c_str(),
                Duration(seconds).c_str(), per_eval, bytes / double(1ull << 30));
  const double memory = MemoryAvailableBytes();
  if (!allow_slow && (seconds > cli::kMaxSeconds || bytes > memory)) {
    char limits[200];
    std::snprintf(limits, sizeof(limits), " (limits %s and the %.3g GiB of memory this machine leaves; --allow-slow "
                  "runs it anyway)", Duration(cli::kMaxSeconds).c_str(), memory / double(1ull << 30));
    throw ConfigError(std::string(text) + limits);
  }
}

#if PLACERL_HAVE_TORCH
// ENAS weight sharing on Fashion-MNIST (and its random cells): its own run (enas_programs.h).
int RunSharedWeightsSearch(const Options& o, const config::NasSearchConfig& cfg, const std::string& command_line) {
  enas::FashionMnistFlags f;
  f.budget_minutes = o.budget_minutes;
  f.final_epochs = o.final_epochs;
  f.random_cells = o.random_cells;
  f.max_images = o.max_images;
  f.data_dir = o.fashion_mnist_dir;
  f.test_kill_after_checkpoints = o.test_kill_after_checkpoints;
  f.clock = o.clock;
  f.derive_samples = o.derive_samples;
  f.derive_images = o.derive_images;
  f.final_candidates = o.final_candidates;
  f.uniform_fraction = o.uniform_fraction;
  return enas::RunFashionMnistNasSearch(cfg, f, o.dir, command_line, o.json);
}
#endif

// The best per seed and over the seeds, as result.json and the summary line give them.
struct SeedAggregates {
  std::vector<double> best_quality, best_reward, unique, seconds;
  search::NasEvaluation overall;
  bool have_overall = false;
  nlohmann::json per_seed = nlohmann::json::array();
  double evaluations = 0;  // over the seeds added

  // A finished seed (the seeds of an earlier start too).
  void Add(const env::BlockEnv& env, uint64_t seed, const search::NasSearchResult& r) {
    evaluations += r.evaluations;
    best_quality.push_back(r.best.score.quality);
    best_reward.push_back(r.best.score.reward);
    unique.push_back(static_cast<double>(r.unique));
    seconds.push_back(r.seconds);
    nlohmann::json sj = ArchJson(env, r.best);
    sj["seed"] = seed;
    sj["evaluations"] = r.evaluations;
    sj["unique"] = r.unique;
    if (!r.unique_exact) sj["unique_exact"] = false;
    per_seed.push_back(sj);
    if (!have_overall || r.best.score.reward > overall.score.reward) overall = r.best;
    have_overall = true;
  }
};

// A search on a table, a synthetic quality, Brainformer's or trained ENAS cells (every method
// but ENAS weight sharing), over one or many seeds: environments → estimate → run directory →
// the seeds' searches (with checkpoints) → best.pbtxt, curves, result.json, the summary line.
class SeedsSearch {
 public:
  SeedsSearch(const Options& o, const config::NasSearchConfig& cfg, const std::string& command_line)
      : o_(o), cfg_(cfg), command_line_(command_line), seeds_(cfg.seeds().begin(), cfg.seeds().end()),
        many_(seeds_.size() > 1) {}

  int Run() {
    if (!o_.dir.resume.empty()) state_ = ReadRunState(o_.dir.resume, cfg_);
    MakeEnvironments();  // before the directory: bad input leaves nothing
    CheckEstimate();
    OpenRunDirectory();
    TrainReference();
    SearchSeeds();
    if (agg_.have_overall) WriteCheckpoint();
    FinishProgress();
    if (!agg_.have_overall) return WriteStoppedBeforeFirst();
    WriteBestAndPlots();
    const nlohmann::json j = ResultJson();
    dir_->WriteFile("result.json", j.dump(2) + "\n");
    PrintSummary(j);
    return kExitOk;
  }

 private:
  void MakeEnvironments() {
    base_env_ = MakeEnv(cfg_);
    env_ = base_env_.get();
#if PLACERL_HAVE_TORCH
    // Brainformer on Fashion-MNIST: trained quality, step time, the GLaM-like reference.
    if (TrainsBrainformer(cfg_.space(), cfg_.dataset())) {
      bf_ = std::make_unique<brainformer::SearchSetup>(brainformer::MakeSearchSetup(base_env_, cfg_.brainformer()));
      env_ = bf_->env.get();
    }
    // enas_micro cells trained from scratch briefly: quality and MMACs step time.
    if (TrainsEnasCells(cfg_)) {
      cells_ = std::make_unique<enas::TrainedSearchSetup>(enas::MakeTrainedSearchSetup(base_env_, cfg_.enas_training()));
      env_ = cells_->env.get();
    }
#endif
  }

  // Beyond the machine: refused before the directory is made.
  void CheckEstimate() const {
    int64_t done_evaluations = state_.current.evaluations;
    for (const SeedSummary& d : state_.done) done_evaluations += d.result.evaluations;
    CheckSearchEstimate(cfg_, *env_, done_evaluations, o_.allow_slow);
  }

  void OpenRunDirectory() {
    dir_ = std::make_unique<run::RunDirectory>(run::ResolveRunDirFlags(o_.dir));
    dir_->WriteConfig(cfg_, command_line_);
    if (!o_.dir.resume.empty())  // the rows logged after the checkpoint go (they are logged again, the same)
      dir_->ResumeFrom(many_ ? static_cast<int64_t>(state_.seed_index) : state_.current.evaluations);
    run::InstallStopOnSignal();  // from here on a Ctrl-C ends the run within a step (a training step too)
  }

  // Brainformer: the GLaM-like block, trained like every candidate.
  void TrainReference() {
#if PLACERL_HAVE_TORCH
    if (bf_) {
      reference_ = {bf_->reference, brainformer::EvaluateReference(*bf_)};
      have_reference_ = true;
      std::fprintf(stderr, "GLaM-like reference: validation accuracy %.4f, step time %.4g %s (budget %.4g, %s)\n",
                   reference_.score.quality, reference_.score.cost, env_->step_time_model().unit().c_str(), bf_->budget,
                   bf_->budget_source.c_str());
    }
#endif
  }

  void SearchSeeds() {
    // Bounded logs and curves (docs/nas.md "Reliability"): one metrics row per evaluation up to
    // kMaxLoggedRows per seed, beyond that every log_stride-th, each new best and the last; the
    // curves keep at most about kCurvePoints points per seed.
    log_stride_ = std::max<int64_t>(1, (cfg_.budget() + kMaxLoggedRows - 1) / kMaxLoggedRows);
    run::ProgressOptions po;
    po.label = cfg_.method();
    po.unit = "archs";
    po.total = static_cast<double>(cfg_.budget()) * seeds_.size();
    progress_ = std::make_unique<run::Progress>(po);
    tabular_ = !env_->space().table().empty() && env_->options().quality == "table";
    has_cost_ = env_->step_time_model().unit() != "none";
    // Checkpoints (docs/nas.md "Resume"): state.json (+ latest.ckpt) every checkpoint_minutes and at the end.
    if (o_.dir.resume.empty())
      state_.curve_stride = std::max<int64_t>(1, (cfg_.budget() + kCurvePoints - 1) / kCurvePoints);
    last_checkpoint_ = std::chrono::steady_clock::now();
    for (size_t k = 0; k < state_.done.size(); ++k) agg_.Add(*env_, seeds_[k], state_.done[k].result);
    pareto_.points = state_.pareto;
    for (size_t k = state_.seed_index; k < seeds_.size() && !run::StopRequested(); ++k)
      if (!SearchSeed(k)) break;
  }

  bool CheckpointDue() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_).count() >=
           cfg_.checkpoint_minutes() * 60;
  }

  // The learned methods' latest.ckpt (their state inside it: RunLearned), then state.json.
  void WriteCheckpoint() {
    if (Learned(cfg_.method())) WriteFileAtomic(dir_->CheckpointPath("latest.ckpt"), state_.learner_checkpoint);
    WriteFileAtomic(dir_->CheckpointPath("state.json"), RunStateText(state_, cfg_, /*learner_meta=*/true) + "\n");
    last_checkpoint_ = std::chrono::steady_clock::now();
    if (o_.test_kill_after_checkpoints > 0 && ++checkpoints_written_ == o_.test_kill_after_checkpoints)
      std::raise(SIGKILL);  // tests: a crash right after a checkpoint
  }

  // Seed seeds_[k]'s search (a resumed one goes on from state_.current); false when it was
  // stopped before its first evaluation (nothing to add).
  bool SearchSeed(size_t k) {
    if (k != state_.seed_index) {  // a new seed's search
      state_.seed_index = k;
      state_.current = {};
      state_.current_seconds = 0;
      state_.last_stats.clear();
      state_.learner_checkpoint.clear();
    }
    search::NasSearchOptions so;
    so.method = cfg_.method();
    so.budget = cfg_.budget();
    so.seed = seeds_[k];
    so.population = cfg_.population();
    so.tournament = cfg_.tournament();
    so.curve_stride = state_.curve_stride;
    double best_quality_so_far = -1e300;
    std::map<std::string, double>& last_stats = state_.last_stats;
    const double seconds_before = state_.current_seconds;
    const auto seed_start = std::chrono::steady_clock::now();
    auto update_state = [&] {
      state_.pareto = pareto_.points;
      state_.current_seconds =
          seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - seed_start).count();
    };
    auto on_checkpoint = [&] {
      if (!Learned(cfg_.method())) update_state();  // (the learned: done in run_state_text, before the learner's bytes)
      WriteCheckpoint();
    };
    auto run_state_text = [&] {  // what latest.ckpt of a learned method carries
      update_state();
      return RunStateText(state_, cfg_, /*learner_meta=*/false);
    };
    // Every new best is logged: the last logged best is the best so far (a resumed seed's too).
    double last_logged_best = state_.current.evaluations > 0 ? state_.current.best.score.reward : -1e300;
    auto on_eval = [&](int64_t i, const search::NasEvaluation& e, const search::NasEvaluation& best) {
      // The best over every seed so far, not only this seed's.
      const double overall_best =
          agg_.have_overall ? std::max(agg_.overall.score.reward, best.score.reward) : best.score.reward;
      progress_->Update(agg_.evaluations + i + 1, {{"best", overall_best}});
      if (has_cost_) pareto_.Add(e);
      if (many_) return;
      best_quality_so_far = best.score.quality;
      const bool improved = best.score.reward > last_logged_best;
      if (!(improved || (i + 1) % log_stride_ == 0 || i + 1 == cfg_.budget())) return;
      last_logged_best = best.score.reward;
      run::Scalars row = {{"charts/reward", e.score.reward},
                          {"charts/quality", e.score.quality},
                          {"charts/cost", e.score.cost},
                          {"charts/best_reward", best.score.reward},
                          {"charts/best_quality", best_quality_so_far}};
      if (Learned(cfg_.method()))  // the learner's last update (empty before the first)
        for (const char* key : {"losses/policy_loss", "losses/entropy"}) {
          const auto it = last_stats.find(key);
          row.emplace_back(key, it == last_stats.end() ? NAN : it->second);
        }
      dir_->Log(i, row);
    };
    auto checkpoint_due = [this] { return CheckpointDue(); };
    search::NasSearchCheckpoints ck;
    ck.state = &state_.current;
    ck.checkpoint_due = checkpoint_due;
    ck.on_checkpoint = [&](const search::NasSearchState&) { on_checkpoint(); };
    search::NasSearchResult r =
        Learned(cfg_.method())
            ? RunLearned(*env_, cfg_, seeds_[k], on_eval, &last_stats, &state_, checkpoint_due, run_state_text,
                         on_checkpoint)
            : search::RunNasSearch(env_->space(), [&](const nas::Architecture& a) { return env_->Evaluate(a); }, so,
                                   [] { return run::StopRequested(); }, on_eval, ck);
    r.seconds += seconds_before;
    state_.current_seconds = r.seconds;
    state_.pareto = pareto_.points;
    if (r.evaluations == 0) return false;  // stopped before this seed's first evaluation: nothing to add
    agg_.Add(*env_, seeds_[k], r);
    if (many_)
      dir_->Log(static_cast<int64_t>(k), {{"charts/seed", static_cast<double>(seeds_[k])},
                                          {"charts/best_reward", r.best.score.reward},
                                          {"charts/best_quality", r.best.score.quality},
                                          {"charts/best_cost", r.best.score.cost},
                                          {"charts/unique", static_cast<double>(r.unique)}});
    // The last seed (or one stopped) stays the current one: --resume with a larger --budget goes on with it.
    if (k + 1 < seeds_.size() && !run::StopRequested()) {
      state_.AddCurve(r.best_reward);
      r.best_reward.clear();
      r.reward.clear();
      state_.done.push_back({seeds_[k], r});
    } else {
      last_curve_ = r.best_reward;
    }
    return true;
  }

  void FinishProgress() {
    char summary[200];
    if (agg_.have_overall)
      std::snprintf(summary, sizeof(summary), "best reward %.6g over %zu seed(s)", agg_.overall.score.reward,
                    agg_.best_reward.size());
    else
      std::snprintf(summary, sizeof(summary), "stopped before the first architecture");
    progress_->Finish(summary);
  }

  // Stopped (Ctrl-C) before the first evaluation: result.json says so and what was done.
  int WriteStoppedBeforeFirst() {
    if (!run::StopRequested()) throw ConfigError("no architecture was evaluated");
    nlohmann::json j = {{"space", env_->space().name()}, {"method", cfg_.method()}, {"dataset", cfg_.dataset()},
                        {"budget", cfg_.budget()}, {"seeds", seeds_.size()}, {"evaluations", 0},
                        {"stopped_by_signal", true}, {"out", dir_->path()}};
    dir_->WriteFile("result.json", j.dump(2) + "\n");
    if (o_.json) std::printf("%s\n", j.dump().c_str());
    else std::printf("stopped by signal before the first architecture was evaluated; wrote %s (config.pbtxt, result.json)\n",
                     dir_->path().c_str());
    return kExitOk;
  }

  // Best architecture (.pbtxt), the curve, the Pareto front's picture.
  void WriteBestAndPlots() {
    const search::NasEvaluation& overall = agg_.overall;
    nas::ArchitectureDef best_def = env_->space().ToDef(overall.arch);
    best_def.set_encoding(env_->Encoding(overall.arch));
    best_def.set_quality(overall.score.quality);
    best_def.set_cost(overall.score.cost);
    best_def.set_reward(overall.score.reward);
    dir_->WriteFile("best.pbtxt", "# nas-search " + cfg_.method() + " on " + env_->name() + "\n" +
                                      run::ResolvedConfigText(best_def));
    viz::PlotSeries curve{
        cfg_.method() + (many_ ? " (mean of " + std::to_string(agg_.best_reward.size()) + " seeds)" : ""), {}, {}};
    {
      RunState all;  // the finished seeds' curves and the last one's
      all.curve_sum = state_.curve_sum;
      all.curve_count = state_.curve_count;
      all.AddCurve(last_curve_);
      for (size_t i = 0; i < all.curve_sum.size(); ++i)
        if (all.curve_count[i] > 0) {
          curve.x.push_back(static_cast<double>((static_cast<int64_t>(i) + 1) * state_.curve_stride));
          curve.y.push_back(all.curve_sum[i] / all.curve_count[i]);
        }
    }
    viz::PlotOptions plot;
    plot.title = "best reward, " + cfg_.method() + ", " + env_->space().name();
    plot.x_label = "architectures evaluated";
    plot.y_label = tabular_ && cfg_.cost_budget() == 0 ? "best test accuracy / 100" : "best reward";
    plot.markers = curve.x.size() < 3;
    viz::PlotCurves({curve}, plot, dir_->PicturePath("curve"));
    if (has_cost_) {  // quality against cost: the non-dominated architectures among those evaluated
      viz::PlotSeries front{"non-dominated (" + std::to_string(pareto_.points.size()) + ")", {}, {}};
      for (const auto& p : pareto_.points) {
        front.x.push_back(p.score.cost);
        front.y.push_back(p.score.quality);
      }
      viz::PlotOptions po2;
      po2.title = "quality vs cost of the architectures evaluated, " + cfg_.method() + ", " + env_->space().name();
      po2.x_label = "cost, " + env_->step_time_model().unit();
      po2.y_label = "quality";
      po2.markers = true;
      std::vector<viz::PlotSeries> series = {front};
      if (have_reference_)
        series.push_back({"GLaM-like reference", {reference_.score.cost}, {reference_.score.quality}});
      viz::PlotCurves(series, po2, dir_->PicturePath("pareto"));
    }
  }

  nlohmann::json ResultJson() {
    const env::BlockEnv& env = *env_;
    nlohmann::json j;
    j["space"] = env.space().name();
    j["environment"] = env.name();
    j["method"] = cfg_.method();
    j["dataset"] = cfg_.dataset();
    if (env.space().table() == "nb201") j["table_dataset"] = cfg_.table_dataset();
    j["quality"] = env.quality_model().Describe();
    j["cost_unit"] = env.step_time_model().unit();
    j["budget"] = cfg_.budget();
    if (cfg_.method() == "evolution") {
      j["population"] = cfg_.population();
      j["tournament"] = cfg_.tournament();
    }
    if (Learned(cfg_.method())) {
      j["episodes_per_update"] = cfg_.episodes_per_update();
      j["learning_rate"] = cfg_.agent().learning_rate();
      j["entropy_coef"] = cfg_.agent().entropy_coef();
      j["reward_scale"] = cfg_.reward_scale();
      if (cfg_.method() == "reinforce") j["baseline_decay"] = cfg_.agent().baseline_decay();
    }
    j["seeds"] = seeds_.size();
    j["best"] = ArchJson(env, agg_.overall);
    j["best_quality"] = {{"mean", Mean(agg_.best_quality)}, {"std", Std(agg_.best_quality)}};
    j["best_reward"] = {{"mean", Mean(agg_.best_reward)}, {"std", Std(agg_.best_reward)}};
    if (tabular_) {
      std::vector<double> acc;
      for (double q : agg_.best_quality) acc.push_back(100 * q);
      j["best_test_accuracy"] = {{"mean", Mean(acc)}, {"std", Std(acc)}};
    }
    const TableOptimum opt = FindTableOptimum(env);
    if (opt.known) j["table_optimum"] = ArchJson(env, opt.best);
    if (has_cost_) {
      nlohmann::json front = nlohmann::json::array();
      for (const auto& p : pareto_.points) front.push_back(ArchJson(env, p));
      j["pareto"] = front;
    }
    AddFinalTrainings(&j);
    const double total_seconds = std::accumulate(agg_.seconds.begin(), agg_.seconds.end(), 0.0);
    j["unique_mean"] = Mean(agg_.unique);
    j["search_seconds"] = total_seconds;
    j["evaluations_per_second"] = total_seconds > 0 ? agg_.evaluations / total_seconds : 0;
    j["evaluations"] = static_cast<int64_t>(agg_.evaluations);  // what was done (the budget is what was asked)
    j["seeds_done"] = agg_.best_reward.size();
    if (!std::all_of(agg_.per_seed.begin(), agg_.per_seed.end(),
                     [](const nlohmann::json& p) { return !p.contains("unique_exact"); }))
      j["unique_exact"] = false;  // more distinct architectures than a search remembers: unique counts are lower bounds
    j["stopped_by_signal"] = run::StopRequested();
    if (many_) j["per_seed"] = agg_.per_seed;
    j["out"] = dir_->path();
    return j;
  }

  // Brainformer and trained cells: the best one and the reference trained longer, tested.
  void AddFinalTrainings(nlohmann::json* j) {
#if PLACERL_HAVE_TORCH
    if (bf_) {  // final training of the best block and of the reference: test accuracy
      std::fprintf(stderr, "final training (%lld steps) of the best block and the GLaM-like reference...\n",
                   static_cast<long long>(cfg_.brainformer().final_train_steps()));
      (*j)["brainformer"] = brainformer::FinalReport(*bf_, agg_.overall.arch, cfg_.brainformer());
      (*j)["brainformer"]["reference_search"] = ArchJson(*env_, reference_);
    }
    if (cells_) {  // final training of the best cell and of the hand-designed one: test accuracy
      std::fprintf(stderr, "final training (%g epochs) of the best cell and the hand-designed one...\n",
                   cfg_.enas_training().final_epochs());
      run::ProgressOptions fo;
      fo.label = "final";
      fo.unit = "cells";
      fo.total = 2;
      run::Progress final_progress(fo);
      double base = 0;
      std::string phase;
      (*j)["enas_training"] = enas::TrainedFinalReport(
          *cells_, agg_.overall.arch, cfg_.enas_training(),
          [&](const std::string& p, double fraction, const std::string& status) {
            if (p != phase && !phase.empty()) base += 1;
            phase = p;
            final_progress.Update(base + fraction, {run::ProgressField("cell", p.substr(p.find(':') + 1)),
                                                    run::ProgressField("status", status)});
          });
      final_progress.Finish();
    }
#else
    (void)j;
#endif
  }

  void PrintSummary(const nlohmann::json& j) const {
    if (o_.json) {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    const env::BlockEnv& env = *env_;
    const search::NasEvaluation& overall = agg_.overall;
    const std::vector<double>& best_quality = agg_.best_quality;
    const std::vector<double>& best_reward = agg_.best_reward;
    // The archs counted: those evaluated (fewer than the budget when stopped). A final training
    // stopped by a signal has no numbers to print (result.json says what it did).
    const long long archs = static_cast<long long>(agg_.evaluations);
    if (run::StopRequested())
      std::printf("stopped by signal after %lld architecture(s)%s\n", archs,
                  j.contains("brainformer") || j.contains("enas_training") ? " (final training cut short or skipped)" : "");
    if (!run::StopRequested() && j.contains("brainformer")) {
      const auto& b = j["brainformer"];
      std::printf("%s on brainformer / Fashion-MNIST, %lld archs: best %s val %.4f test %.4f step %.4g; GLaM-like val %.4f "
                  "test %.4f step %.4g (%s)\n",
                  cfg_.method().c_str(), archs, b["best"]["block"].get<std::string>().c_str(),
                  b["best"]["validation_accuracy"].get<double>(), b["best"]["test_accuracy"].get<double>(),
                  b["best"]["step_time"].get<double>(), b["reference"]["validation_accuracy"].get<double>(),
                  b["reference"]["test_accuracy"].get<double>(), b["reference"]["step_time"].get<double>(),
                  b["step_time_unit"].get<std::string>().c_str());
    } else if (!run::StopRequested() && j.contains("enas_training")) {
      const auto& e = j["enas_training"];
      std::printf("%s on enas_micro / Fashion-MNIST, %lld archs (each cell trained %lld steps): best val %.4f (search), after "
                  "%g epoch(s) val %.4f test %.4f, %.3g MMACs; hand-designed test %.4f, %.3g MMACs\n",
                  cfg_.method().c_str(), archs,
                  static_cast<long long>(cfg_.enas_training().train_steps()), e["best"]["search_val_accuracy"].get<double>(),
                  cfg_.enas_training().final_epochs(), e["best"]["val_accuracy"].get<double>(),
                  e["best"]["test_accuracy"].get<double>(), e["best"]["mmacs"].get<double>(),
                  e["hand"]["test_accuracy"].get<double>(), e["hand"]["mmacs"].get<double>());
    } else if (tabular_)
      std::printf("%s on %s (%s), %zu seed(s), %lld archs: best test accuracy %.2f +- %.2f %%; best %s %.2f %%\n",
                  cfg_.method().c_str(), env.space().name().c_str(), env.quality_model().Describe().c_str(),
                  best_quality.size(), archs, 100 * Mean(best_quality),
                  100 * Std(best_quality), env.Encoding(overall.arch).c_str(), 100 * overall.score.quality);
    else
      std::printf("%s on %s, %zu seed(s), %lld archs: best reward %.6g +- %.3g; best %s\n", cfg_.method().c_str(),
                  env.space().name().c_str(), best_reward.size(), archs,
                  Mean(best_reward), Std(best_reward), env.space().Describe(overall.arch).c_str());
    std::printf("wrote %s (best.pbtxt, curve.%s%s, metrics.csv, TensorBoard events, config.pbtxt, result.json)\n",
                dir_->path().c_str(), o_.dir.pictures.c_str(), has_cost_ ? (", pareto." + o_.dir.pictures).c_str() : "");
  }

  const Options& o_;
  const config::NasSearchConfig& cfg_;
  const std::string command_line_;
  const std::vector<uint64_t> seeds_;
  const bool many_;
  RunState state_;  // checkpointed (docs/nas.md "Resume")
  std::shared_ptr<const env::BlockEnv> base_env_;
  const env::BlockEnv* env_ = nullptr;  // base_env_, or Brainformer's / the trained cells' over it
#if PLACERL_HAVE_TORCH
  std::unique_ptr<brainformer::SearchSetup> bf_;
  std::unique_ptr<enas::TrainedSearchSetup> cells_;
#endif
  std::unique_ptr<run::RunDirectory> dir_;
  search::NasEvaluation reference_;  // Brainformer: the GLaM-like block, trained like every candidate
  bool have_reference_ = false;
  std::unique_ptr<run::Progress> progress_;
  int64_t log_stride_ = 1;
  bool tabular_ = false, has_cost_ = false;
  SeedAggregates agg_;
  ParetoFront pareto_;
  std::vector<double> last_curve_;  // the last seed's best-reward curve (not in state_.done)
  std::chrono::steady_clock::time_point last_checkpoint_;
  int checkpoints_written_ = 0;
};

}  // namespace

int NasSearch(const Options& o, const std::string& command_line) {
  if (!o.print_space.empty()) {  // the text of a built-in space, to copy and change
    std::printf("%s", nas::BuiltinSpaceText(o.print_space).c_str());
    return kExitOk;
  }
  const config::NasSearchConfig cfg = ResolveRunConfig(o);
#if PLACERL_HAVE_TORCH
  if (SharesEnasWeights(cfg)) return RunSharedWeightsSearch(o, cfg, command_line);
#endif
  return SeedsSearch(o, cfg, command_line).Run();
}

}  // namespace placerl::nas_search
