#include "search/nas/nas_rl.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "agents/collector.h"
#include "agents/rollout.h"
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

search::NasEvaluation NasRlController::PlayEpisode() {
  Impl& m = *impl_;
  std::mt19937_64& rng = m.learner.rng();
  agents::PlayEpisode(m.policy, m.play, m.o.seed + static_cast<uint64_t>(m.episodes), &rng, /*greedy=*/false,
                      &m.buffer, m.o.reward_scale);
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
  std::vector<uint64_t> remembered_since;  // distinct architectures first seen after the last update
  if (checkpoints.state) *checkpoints.learner_checkpoint = controller.CheckpointBytes();
  bool cut_short = false;
  auto more = [&] { return !cut_short && st.evaluations < o.budget && !(stop && stop()); };
  while (more()) {
    for (int32_t e = 0; e < o.episodes_per_update && more(); ++e) {
      const search::NasEvaluation ev = controller.PlayEpisode();
      if (!std::isfinite(ev.score.quality) && stop && stop()) {  // a training cut short by the stop: not counted
        cut_short = true;
        break;
      }
      if (search::RecordEvaluation(ev, o.curve_stride, &st) && checkpoints.state)
        remembered_since.push_back(search::ArchitectureHash(ev.arch));
      if (on_evaluation) on_evaluation(st.evaluations - 1, ev, st.best);
    }
    // No update after the budget's last architecture: nothing would sample from it.
    if (!more()) break;
    const agents::Stats stats = controller.Update();
    if (stats.empty()) break;
    if (on_update) on_update(controller.updates(), stats);
    if (checkpoints.state) {
      learned = mark();
      remembered_since.clear();
      const bool due = checkpoints.on_checkpoint && checkpoints.checkpoint_due && checkpoints.checkpoint_due();
      *checkpoints.learner_checkpoint =
          controller.CheckpointBytes(due && checkpoints.extras ? checkpoints.extras(st) : agents::Learner::Extras{});
      if (due) checkpoints.on_checkpoint(st, *checkpoints.learner_checkpoint);
    }
  }
  search::NasSearchResult r = search::ResultOf(st);
  if (checkpoints.state) {  // back to the last update
    st.evaluations = learned.evaluations;
    st.best = learned.best;
    st.reward.resize(learned.points);
    st.best_reward.resize(learned.points);
    st.unique_exact = learned.unique_exact;
    for (uint64_t h : remembered_since) st.seen.erase(h);
    if (checkpoints.extras) {  // the last update's learner again (episodes after it moved its RNG), with the extras
      controller.Restore(*checkpoints.learner_checkpoint, st.evaluations);
      *checkpoints.learner_checkpoint = controller.CheckpointBytes(checkpoints.extras(st));
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace placerl
