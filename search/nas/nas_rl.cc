#include "search/nas/nas_rl.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "agents/collector.h"
#include "agents/rollout.h"
#include "agents/trainer.h"
#include "datasets/util/errors.h"

namespace placerl {
namespace {

// The sampling copy's quality: Sample() must not spend the real quality model's evaluations
// (a weight-sharing quality evaluates a validation batch per call).
class ZeroQuality : public env::QualityModel {
 public:
  double Quality(const nas::Architecture&) const override { return 0; }
  std::string Describe() const override { return "none (sampling only)"; }
};

}  // namespace

struct NasRlController::Impl {
  Impl(const env::BlockEnv& env, const NasRlOptions& o)
      : o(o),
        play(env),  // episodes change its state; the caller's stays as it is
        sampler(env.shared_space(), std::make_shared<const ZeroQuality>(), std::make_shared<const env::NoCost>(),
                env.options()),
        policy(PolicyOptionsOf(o), encoders::FeatureLayout::Of(play)),
        learner(&policy, AgentOptionsOf(o)) {}
  static encoders::PolicyOptions PolicyOptionsOf(const NasRlOptions& o) {
    encoders::PolicyOptions po = o.policy;
    po.init_seed = o.seed;
    return po;
  }
  static agents::AgentOptions AgentOptionsOf(const NasRlOptions& o) {
    agents::AgentOptions ao = o.agent;
    ao.seed = o.seed;
    return ao;
  }
  NasRlOptions o;
  env::BlockEnv play, sampler;
  encoders::Policy policy;
  agents::Learner learner;
  agents::RolloutBuffer buffer;
  int64_t episodes = 0, samples = 0;
};

NasRlController::NasRlController(const env::BlockEnv& env, const NasRlOptions& o) {
  if (o.episodes_per_update < 1) throw ConfigError("nas rl: episodes_per_update must be >= 1");
  if (!(o.reward_scale > 0)) throw ConfigError("nas rl: reward_scale must be > 0");
  impl_ = std::make_unique<Impl>(env, o);
}

NasRlController::~NasRlController() = default;

search::NasEvaluation NasRlController::PlayEpisode() { return PlayEpisode(&impl_->buffer); }

search::NasEvaluation NasRlController::PlayEpisode(agents::RolloutBuffer* buffer) {
  Impl& m = *impl_;
  std::mt19937_64& rng = m.learner.rng();
  agents::PlayEpisode(m.policy, m.play, m.o.seed + static_cast<uint64_t>(m.episodes), &rng, /*greedy=*/false,
                      buffer, m.o.reward_scale);
  ++m.episodes;
  // The bookkeeping uses the environment's own score of the architecture built (the
  // episode's reward is the same number: tests/search/nas/nas_rl_test.cc).
  return {m.play.architecture(), m.play.Evaluate(m.play.architecture())};
}

NasRlStats NasRlController::Update() {
  Impl& m = *impl_;
  if (m.buffer.transitions.empty()) return {};
  const agents::Stats stats = m.learner.Update(&m.buffer);
  m.buffer.Clear();
  return stats;
}

nas::Architecture NasRlController::Sample(bool greedy) {
  Impl& m = *impl_;
  m.sampler.Reset(m.o.seed + 1000003ull * static_cast<uint64_t>(++m.samples));
  while (!m.sampler.done()) m.sampler.Step(m.policy.Act(m.sampler, &m.learner.rng(), greedy).action);
  return m.sampler.architecture();
}

int64_t NasRlController::episodes() const { return impl_->episodes; }
int64_t NasRlController::updates() const { return impl_->learner.updates(); }

std::string NasRlController::CheckpointBytes(const agents::Learner::Extras& extras) const {
  return impl_->learner.CheckpointBytes(extras);
}

void NasRlController::Restore(const std::string& checkpoint_bytes, int64_t episodes, int64_t samples) {
  if (episodes < 0 || samples < 0) throw ConfigError("nas rl: negative episode or sample count");
  impl_->learner.LoadCheckpointBytes(checkpoint_bytes, "the learner checkpoint");
  impl_->buffer.Clear();
  impl_->episodes = episodes;
  impl_->samples = samples;
}

int64_t NasRlController::samples() const { return impl_->samples; }

agents::Learner& NasRlController::learner() { return impl_->learner; }

namespace {

// RunNasRl's controller as a task of the one trainer: an update's episodes are architectures
// sampled and scored (each one evaluation of the budget, recorded in the search's state); none is
// learned from once the budget is spent, the search stopped, or a training was cut short.
class NasRlTask : public agents::TrainingTask {
 public:
  NasRlTask(NasRlController& controller, const NasRlOptions& o, search::NasSearchState& st,
            const std::function<bool()>& stop,
            const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation,
            bool remember)
      : controller_(controller), o_(o), st_(st), stop_(stop), on_evaluation_(on_evaluation), remember_(remember) {}

  // Whether another architecture is sampled (the trainer's stop is its negation).
  bool More() const { return !cut_short_ && st_.evaluations < o_.budget && !(stop_ && stop_()); }

  int32_t Collect(encoders::Policy&, std::mt19937_64*, int32_t episodes, uint64_t,
                  const std::function<bool()>& may_start, const std::function<void()>& ended,
                  agents::RolloutBuffer* buffer, agents::TrainingTimes*) override {
    int32_t played = 0;
    for (; played < episodes && (!may_start || may_start()); ++played) {
      const search::NasEvaluation ev = controller_.PlayEpisode(buffer);
      if (!std::isfinite(ev.score.quality) && stop_ && stop_()) {  // a training cut short by the stop: not counted
        cut_short_ = true;
        return played + 1;
      }
      if (search::RecordEvaluation(ev, o_.curve_stride, &st_) && remember_)
        remembered_since_.push_back(search::ArchitectureHash(ev.arch));
      if (on_evaluation_) on_evaluation_(st_.evaluations - 1, ev, st_.best);
      if (ended) ended();
    }
    return played;
  }

  // No update after the budget's last architecture: nothing would sample from it.
  bool Learnable(const agents::RolloutBuffer& buffer, int32_t) const override {
    return More() && !buffer.transitions.empty();
  }

  LogRow Update(agents::Learner& learner, agents::RolloutBuffer* buffer) override {
    const agents::Stats stats = learner.Update(buffer);
    last_ = stats;
    return LogRow(stats.begin(), stats.end());
  }

  void Columns(const agents::RolloutBuffer&, LogRow*) override {}

  const agents::Stats& last_stats() const { return last_; }
  std::vector<uint64_t>& remembered_since() { return remembered_since_; }

 private:
  NasRlController& controller_;
  const NasRlOptions& o_;
  search::NasSearchState& st_;
  const std::function<bool()>& stop_;
  const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation_;
  bool remember_;
  bool cut_short_ = false;
  std::vector<uint64_t> remembered_since_;  // distinct architectures first seen after the last update
  agents::Stats last_;
};

}  // namespace

search::NasSearchResult RunNasRl(
    const env::BlockEnv& env, const NasRlOptions& o, const std::function<bool()>& stop,
    const std::function<void(int64_t, const search::NasEvaluation&, const search::NasEvaluation&)>& on_evaluation,
    const std::function<void(int64_t, const NasRlStats&)>& on_update, const NasRlCheckpoints& checkpoints) {
  if (o.budget < 1) throw ConfigError("nas rl: the budget must be >= 1 architecture");
  if (o.curve_stride < 1) throw ConfigError("nas rl: the curve stride must be >= 1");
  if ((checkpoints.state == nullptr) != (checkpoints.learner_checkpoint == nullptr))
    throw ConfigError("nas rl: checkpoints need both a state and a learner checkpoint");
  const auto start = std::chrono::steady_clock::now();
  NasRlController controller(env, o);

  search::NasSearchState local;
  search::NasSearchState& st = checkpoints.state ? *checkpoints.state : local;
  if (st.evaluations > 0) {  // continue from the learner after the state's last episode
    if (checkpoints.learner_checkpoint->empty()) throw ConfigError("nas rl: a state to continue but no learner checkpoint");
    search::CheckState(env.space(), st, o.curve_stride);
    controller.Restore(*checkpoints.learner_checkpoint, st.evaluations);
  } else {
    st = search::NasSearchState{};
  }
  // The bookkeeping at the last update (what the final state holds): the episodes after it are
  // played again by a resumed search, so the state forgets them at the end.
  struct Mark {
    int64_t evaluations = 0;
    search::NasEvaluation best;
    size_t points = 0;
    bool unique_exact = true;
  };
  auto mark = [&] { return Mark{st.evaluations, st.best, st.reward.size(), st.unique_exact}; };
  Mark learned = mark();
  if (checkpoints.state) *checkpoints.learner_checkpoint = controller.CheckpointBytes();
  NasRlTask task(controller, o, st, stop, on_evaluation, checkpoints.state != nullptr);
  agents::TrainerOptions to;
  to.episodes_per_update = o.episodes_per_update;
  to.seed = o.seed;
  to.budget_s = INFINITY;  // the budget is in architectures (task.More)
  agents::TrainingProgress progress;
  progress.episodes = st.evaluations;
  agents::Train(task, controller.learner(), to, &progress, nullptr, [&] { return !task.More(); }, {}, [&](double) {
    if (on_update) on_update(controller.updates(), task.last_stats());
    if (checkpoints.state) {
      learned = mark();
      task.remembered_since().clear();
      const bool due = checkpoints.on_checkpoint && checkpoints.checkpoint_due && checkpoints.checkpoint_due();
      *checkpoints.learner_checkpoint =
          controller.CheckpointBytes(due && checkpoints.extras ? checkpoints.extras(st) : agents::Learner::Extras{});
      if (due) checkpoints.on_checkpoint(st, *checkpoints.learner_checkpoint);
    }
  });
  search::NasSearchResult r = search::ResultOf(st);
  if (checkpoints.state) {  // back to the last update
    st.evaluations = learned.evaluations;
    st.best = learned.best;
    st.reward.resize(learned.points);
    st.best_reward.resize(learned.points);
    st.unique_exact = learned.unique_exact;
    for (uint64_t h : task.remembered_since()) st.seen.erase(h);
    if (checkpoints.extras) {  // the last update's learner again (episodes after it moved its RNG), with the extras
      controller.Restore(*checkpoints.learner_checkpoint, st.evaluations);
      *checkpoints.learner_checkpoint = controller.CheckpointBytes(checkpoints.extras(st));
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace placerl
