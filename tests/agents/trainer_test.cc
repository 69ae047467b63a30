// The one on-policy trainer (agents/trainer.h) with a small task over a synthetic chip design:
// the update's episodes reset with the run's consecutive seeds (seed + episodes so far), the
// counters add up, every row has the trainer's columns around the task's in the documented
// order, max_updates / stop() / an unlearnable update end the run, and a run continued from its
// progress plays the seeds the uninterrupted run plays.
#include "agents/trainer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "env/registry.h"

namespace placerl {
namespace {

// Records the reset seeds of its episodes and logs one column of its own.
class SeedTask : public agents::CollectorTask {
 public:
  explicit SeedTask(env::Environment* env) : agents::CollectorTask({env}, 2) {}
  int32_t Collect(encoders::Policy& policy, std::mt19937_64* rng, int32_t episodes, uint64_t first_seed,
                  const std::function<bool()>& may_start, const std::function<void()>& ended,
                  agents::RolloutBuffer* buffer, agents::TrainingTimes* times) override {
    first_seeds.push_back(first_seed);
    return CollectorTask::Collect(policy, rng, episodes, first_seed, may_start, ended, buffer, times);
  }
  bool Learnable(const agents::RolloutBuffer& buffer, int32_t played) const override {
    return !refuse && CollectorTask::Learnable(buffer, played);
  }
  void Columns(const agents::RolloutBuffer& buffer, LogRow* row) override {
    row->emplace_back("charts/ended", static_cast<double>(ended_));
    ended_ = 0;
  }
  std::vector<uint64_t> first_seeds;
  bool refuse = false;

 protected:
  void EpisodeEnded(size_t design, env::Environment& env, bool) override {
    EXPECT_EQ(design, 0u);
    EXPECT_TRUE(env.done());
    ++ended_;
  }

 private:
  int ended_ = 0;
};

struct Fixture {
  Fixture()
      : env(env::MakeEnvironment("chip(seed=1)")),
        policy(Small(), encoders::FeatureLayout::Of(*env)),
        learner(&policy, agents::AgentOptions{}) {}
  static encoders::PolicyOptions Small() {
    encoders::PolicyOptions o;
    o.embedding_dim = 8;
    o.hidden_dim = 16;
    o.action_hidden_dim = 8;
    o.init_seed = 3;
    return o;
  }
  std::unique_ptr<env::Environment> env;
  encoders::Policy policy;
  agents::Learner learner;
};

agents::TrainerOptions Options(int64_t max_updates) {
  agents::TrainerOptions o;
  o.episodes_per_update = 3;
  o.seed = 100;
  o.budget_s = 1e9;
  o.max_updates = max_updates;
  return o;
}

TEST(Trainer, ConsecutiveSeedsCountersAndTheRowsColumns) {
  Fixture f;
  SeedTask task(f.env.get());
  agents::TrainingProgress p;
  agents::TrainingTimes times;
  std::vector<LogRow> rows;
  int every = 0, beats = 0;
  agents::TrainerOptions o = Options(3);
  o.heartbeat = [&] { ++beats; };
  agents::Train(task, f.learner, o, &p, &times, {}, [&](int64_t step, const LogRow& r) {
    EXPECT_EQ(step, static_cast<int64_t>(rows.size()) + 1);
    rows.push_back(r);
  }, [&](double elapsed) {
    EXPECT_GE(elapsed, 0);
    ++every;
  });
  EXPECT_EQ(p.iteration, 3);
  EXPECT_EQ(p.episodes, 9);
  EXPECT_EQ(p.steps, 9 * f.env->episode_length());
  EXPECT_EQ(task.first_seeds, (std::vector<uint64_t>{100, 103, 106}));
  EXPECT_EQ(every, 3);
  EXPECT_EQ(beats, 9 + 3);  // every episode and every update
  EXPECT_GT(times.update_s, 0);
  EXPECT_GT(times.policy_s, 0);
  EXPECT_GT(p.elapsed_s, 0);
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::string> keys;
  for (const auto& [k, v] : rows[0]) keys.push_back(k);
  ASSERT_GE(keys.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 6),
            (std::vector<std::string>{"time_s", "charts/episodes", "charts/ended", "charts/SPS", "perf/collect_s",
                                      "perf/update_s"}));
  EXPECT_EQ(rows[0][1].second, 3);
  EXPECT_EQ(rows[2][1].second, 9);
  EXPECT_EQ(rows[1][2].second, 3);  // the task's column is per update
}

TEST(Trainer, AContinuedRunPlaysTheUninterruptedRunsSeeds) {
  Fixture f;
  SeedTask task(f.env.get());
  agents::TrainingProgress p;
  agents::Train(task, f.learner, Options(2), &p, nullptr, {}, {}, {});
  agents::TrainingProgress resumed = p;  // what a checkpoint carries
  SeedTask more(f.env.get());
  agents::Train(more, f.learner, Options(4), &resumed, nullptr, {}, {}, {});
  EXPECT_EQ(more.first_seeds, (std::vector<uint64_t>{106, 109}));
  EXPECT_EQ(resumed.iteration, 4);
  EXPECT_EQ(resumed.episodes, 12);
  EXPECT_GE(resumed.elapsed_s, p.elapsed_s);
}

TEST(Trainer, StopBeforeTheFirstEpisodeAndAnUnlearnableUpdateEndTheRun) {
  Fixture f;
  {
    SeedTask task(f.env.get());
    agents::TrainingProgress p;
    int logged = 0;
    agents::Train(task, f.learner, Options(0), &p, nullptr, [] { return true; },
                  [&](int64_t, const LogRow&) { ++logged; }, {});
    EXPECT_EQ(p.iteration, 0);
    EXPECT_EQ(logged, 0);
    EXPECT_TRUE(task.first_seeds.empty());
  }
  {
    SeedTask task(f.env.get());
    task.refuse = true;
    agents::TrainingProgress p;
    agents::Train(task, f.learner, Options(0), &p, nullptr, {}, {}, {});
    EXPECT_EQ(p.iteration, 0);  // ended, not looping forever
    EXPECT_EQ(task.first_seeds.size(), 1u);
    EXPECT_EQ(p.episodes, 0);
  }
  {
    // A stop asked during the update's collection: the episodes running finish, no more start,
    // the update learns from those played, and the run ends.
    SeedTask task(f.env.get());
    agents::TrainingProgress p;
    int asked = 0;
    agents::TrainerOptions o = Options(0);
    o.episodes_per_update = 8;
    agents::Train(task, f.learner, o, &p, nullptr, [&] { return ++asked > 2; }, {}, {});
    EXPECT_EQ(p.iteration, 1);
    EXPECT_GE(p.episodes, 1);
    EXPECT_LT(p.episodes, 8);
  }
}

}  // namespace
}  // namespace placerl
