#include "agents/collector.h"

#include <algorithm>

#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"

namespace placerl::agents {

bool PlayEpisode(encoders::Policy& policy, env::Environment& env, uint64_t seed, std::mt19937_64* rng, bool greedy,
                 RolloutBuffer* buffer, double reward_scale) {
  env.Reset(seed);
  bool infeasible = false;
  while (!env.done()) {
    const encoders::PolicyStep a = policy.Act(env, rng, greedy);
    if (buffer) buffer->Record(env, a);
    const env::StepResult r = env.Step(a.action);
    infeasible |= r.infeasible;
    if (buffer) buffer->SetOutcome(env, reward_scale * r.reward, r.done, r.infeasible);
  }
  return infeasible;
}

Collector::Collector(std::vector<env::Environment*> designs, int32_t batch)
    : designs_(std::move(designs)), batch_(batch), copies_(designs_.size()) {
  if (batch < 1) throw ConfigError("collect_batch must be >= 1");
  if (designs_.empty()) throw ConfigError("training: no designs");
}

Collector::~Collector() = default;

env::Environment& Collector::Copy(size_t design, int32_t slot) {
  if (slot == 0) return *designs_[design];
  auto& c = copies_[design];
  while (static_cast<int32_t>(c.size()) < slot) c.push_back(designs_[design]->Clone());
  return *c[slot - 1];
}

int32_t Collector::Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                           const std::function<bool()>& may_start, const EpisodeEnd& on_end, RolloutBuffer* buffer,
                           TrainingTimes* times) {
  struct Slot {
    int32_t episode = -1;  // -1: free
    size_t design = 0;
    env::Environment* env = nullptr;
    bool infeasible = false;
  };
  const size_t designs = designs_.size();
  const int32_t b = std::max(1, std::min(batch_, episodes));
  std::vector<Slot> slots(b);
  std::vector<RolloutBuffer> open(b), finished;  // finished[e]: episode e, complete
  finished.reserve(std::max(0, episodes));
  TrainingTimes local;
  TrainingTimes& t = times ? *times : local;
  int32_t next = 0, live = 0;
  // Starts the next episode in copy s (if any may start).
  auto start = [&](int32_t s) {
    Slot& slot = slots[s];
    while (next < episodes && !(may_start && !may_start())) {
      slot.design = designs == 1 ? 0 : std::uniform_int_distribution<size_t>(0, designs - 1)(*rng);
      slot.env = &Copy(slot.design, s);
      slot.infeasible = false;
      const int32_t e = next++;
      finished.emplace_back();
      const double t0 = ProcessCpuSeconds();
      slot.env->Reset(first_seed + static_cast<uint64_t>(e));
      t.env_s += ProcessCpuSeconds() - t0;
      if (!slot.env->done()) {
        slot.episode = e;
        ++live;
        return;
      }
      if (on_end) on_end(slot.design, *slot.env, false);
    }
  };
  for (int32_t s = 0; s < b; ++s) start(s);
  std::vector<const env::Environment*> acting;
  std::vector<int32_t> acting_slot;
  std::vector<encoders::PolicyStep> steps;
  while (live > 0) {
    const double p0 = ProcessCpuSeconds();
    acting.clear();
    acting_slot.clear();
    for (int32_t s = 0; s < b; ++s)
      if (slots[s].episode >= 0) {
        acting.push_back(slots[s].env);
        acting_slot.push_back(s);
      }
    const int32_t n = static_cast<int32_t>(acting.size());
    steps.resize(n);
    // One environment: Act, so that B = 1 is exactly PlayEpisode.
    if (n == 1)
      steps[0] = policy.Act(*acting[0], rng, false);
    else
      policy.ActBatch(acting.data(), n, rng, false, steps.data());
    for (int32_t i = 0; i < n; ++i) open[acting_slot[i]].Record(*acting[i], steps[i]);
    t.policy_s += ProcessCpuSeconds() - p0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t s = acting_slot[i];
      Slot& slot = slots[s];
      const double e0 = ProcessCpuSeconds();
      const env::StepResult r = slot.env->Step(steps[i].action);
      slot.infeasible |= r.infeasible;
      open[s].SetOutcome(*slot.env, r.reward, r.done, r.infeasible);
      const double e1 = ProcessCpuSeconds();
      if (!r.done) {
        t.env_s += e1 - e0;
        continue;
      }
      t.episode_end_s += e1 - e0;
      finished[slot.episode] = std::move(open[s]);
      open[s].Clear();
      slot.episode = -1;
      --live;
      if (on_end) on_end(slot.design, *slot.env, slot.infeasible);
      start(s);
    }
  }
  for (RolloutBuffer& f : finished) buffer->Append(std::move(f));
  return static_cast<int32_t>(finished.size());
}

}  // namespace placerl::agents
