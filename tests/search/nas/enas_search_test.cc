// The ENAS loop on Fashion-MNIST (search/nas/enas_search.h) at toy size on real images:
// every phase runs and reports consistent numbers (the controller's rewards are validation
// accuracies, the candidates are ranked by them, the best random cell is the one with the highest
// validation accuracy, costs are ChildCostOf's), the hand-designed cell is in the space, and bad
// options, an unknown method and missing IDX files are errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <random>

#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "search/nas/enas_search.h"
#include "models/enas_supernet.h"
#include "search/nas/nas_search.h"

namespace placerl::enas {
namespace {

EnasSearchOptions Toy() {
  EnasSearchOptions o;
  o.max_train_images = 192;
  o.validation_images = 96;
  o.max_test_images = 96;
  o.search_net.channels = o.final_net.channels = 4;
  o.budget_minutes = 0.005;  // 0.3 s: one epoch (at least one step and one child run regardless)
  o.shared_steps = 3;
  o.controller_steps = 4;
  o.controller.episodes_per_update = 2;
  o.batch = 32;
  o.reward_batch = 32;
  o.epoch_val_images = 64;
  o.derive_samples = 2;
  o.derive_images = 64;
  o.final_epochs = 0.5;
  o.random_cells = 2;
  return o;
}

TEST(EnasSearch, HandDesignedCellIsInTheSpace) {
  const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  EXPECT_EQ(space.Check(HandDesignedCell()), "");
  const ChildArch c = DecodeEnasMicro(HandDesignedCell());
  EXPECT_EQ(c.normal.LooseEnds(), std::vector<int32_t>{4});  // a chain: only the last node is the output
}

TEST(EnasSearch, ToyRunGoesThroughEveryPhase) {
  const EnasSearchOptions o = Toy();
  std::vector<std::string> phases;
  int epochs_seen = 0;
  const EnasResult r = RunEnas(
      "enas", o, {},
      [&](const std::string& phase, double f, const std::string&) {
        EXPECT_GE(f, 0);
        EXPECT_LE(f, 1);
        if (phases.empty() || phases.back() != phase) phases.push_back(phase);
      },
      [&](const EnasEpochStats&) { ++epochs_seen; });
  ASSERT_GE(r.epochs.size(), 1u);
  EXPECT_EQ(epochs_seen, static_cast<int>(r.epochs.size()));
  EXPECT_GE(r.shared_steps, 1);
  EXPECT_GE(r.controller_children, 1);
  EXPECT_GE(r.controller_updates, 1);
  for (const EnasEpochStats& e : r.epochs) {
    EXPECT_GE(e.controller_reward, 0);
    EXPECT_LE(e.controller_reward, 1);
    EXPECT_GE(e.val_accuracy, 0);
    EXPECT_LE(e.val_accuracy, 1);
    EXPECT_GT(e.shared_loss, 0);
  }
  ASSERT_GE(r.candidates.size(), 1u);
  for (size_t k = 1; k < r.candidates.size(); ++k)
    EXPECT_GE(r.candidates[k - 1].shared_val_accuracy, r.candidates[k].shared_val_accuracy);
  ASSERT_TRUE(r.have_enas);
  EXPECT_EQ(r.enas.arch, r.candidates.front().arch);
  const EnasNetOptions fo{o.final_net.channels, o.final_net.cells_per_stage};
  EXPECT_EQ(r.enas.params, ChildCostOf(fo, DecodeEnasMicro(r.enas.arch)).params);
  EXPECT_EQ(r.enas.macs, ChildCostOf(fo, DecodeEnasMicro(r.enas.arch)).macs);
  ASSERT_EQ(r.random.size(), 2u);
  ASSERT_GE(r.best_random, 0);
  for (const TrainedChild& c : r.random) {
    EXPECT_LE(c.val_accuracy, r.random[r.best_random].val_accuracy);
    EXPECT_GE(c.test_accuracy, 0);
    EXPECT_LE(c.test_accuracy, 1);
  }
  ASSERT_TRUE(r.have_hand);
  EXPECT_EQ(r.hand.arch, HandDesignedCell());
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(phases.front(), "search");
  EXPECT_NE(std::find(phases.begin(), phases.end(), "derive"), phases.end());
  EXPECT_NE(std::find(phases.begin(), phases.end(), "final:hand"), phases.end());
}

TEST(EnasSearch, RandomMethodTrainsOnlyRandomCellsAndStopEndsEarly) {
  EnasSearchOptions o = Toy();
  const EnasResult r = RunEnas("random", o);
  EXPECT_TRUE(r.epochs.empty());
  EXPECT_FALSE(r.have_enas);
  EXPECT_FALSE(r.have_hand);
  EXPECT_EQ(r.random.size(), 2u);
  const EnasResult s = RunEnas("random", o, [] { return true; });
  EXPECT_TRUE(s.stopped);
  EXPECT_TRUE(s.random.empty());
}

// The CPU clock (nas-search --clock cpu): the search runs until this process has spent the
// budget in CPU seconds, and the epochs' times are CPU seconds (never past the search's CPU total);
// the distinct architectures sampled are counted (at least one, at most one per sampled child).
TEST(EnasSearch, CpuClockBudgetIsSpentInCpuSecondsAndDistinctChildrenAreCounted) {
  EnasSearchOptions o = Toy();
  o.cpu_clock = true;
  o.budget_minutes = 0.01;  // 0.6 CPU seconds
  o.compare = false;
  const EnasResult r = RunEnas("enas", o);
  ASSERT_GE(r.epochs.size(), 1u);
  EXPECT_GE(r.search_cpu_seconds, 60 * o.budget_minutes);
  EXPECT_GE(r.epochs.back().seconds, 60 * o.budget_minutes);
  EXPECT_LE(r.epochs.back().seconds, r.search_cpu_seconds + 1e-9);
  for (size_t k = 1; k < r.epochs.size(); ++k) EXPECT_LT(r.epochs[k - 1].seconds, 60 * o.budget_minutes);
  EXPECT_GE(r.distinct_children, 1);
  EXPECT_LE(r.distinct_children, r.shared_steps + r.controller_children);
}

TEST(EnasSearch, BadOptionsAndMissingFilesAreErrors) {
  EXPECT_THROW(RunEnas("evolution", Toy()), ConfigError);
  for (auto change : std::vector<std::function<void(EnasSearchOptions&)>>{
           [](EnasSearchOptions& o) { o.batch = 0; }, [](EnasSearchOptions& o) { o.budget_minutes = 0; },
           [](EnasSearchOptions& o) { o.final_epochs = -1; }, [](EnasSearchOptions& o) { o.lr_min = 1; },
           [](EnasSearchOptions& o) { o.momentum = 1; }, [](EnasSearchOptions& o) { o.search_net.channels = 0; },
           [](EnasSearchOptions& o) { o.validation_images = 60000; },
           [](EnasSearchOptions& o) { o.final_candidates = 0; }, [](EnasSearchOptions& o) { o.random_cells = -1; },
           [](EnasSearchOptions& o) { o.uniform_fraction = 1.5; },
           [](EnasSearchOptions& o) { o.uniform_fraction = -0.1; }}) {
    EnasSearchOptions o = Toy();
    change(o);
    EXPECT_THROW(CheckSearchOptions(o), ConfigError);
  }
  EnasSearchOptions o = Toy();
  o.random_cells = 0;
  EXPECT_THROW(RunEnas("random", o), ConfigError);  // nothing to train
  o = Toy();
  o.data_dir = "/nonexistent/fashion-mnist";
  EXPECT_THROW(RunEnas("random", o), IoError);
}

// The ranking changes (docs/nas.md, 2026-11-26 session 9): with uniform_fraction = 1 every shared
// step trains a uniformly random child (none of them counts as a controller sample); with
// final_candidates = R the R best-ranked candidates are trained from scratch and the found cell is
// the one of them with the best validation accuracy; random_cells = 0 without compare trains no
// comparison cells.
TEST(EnasSearch, UniformSharedTrainingAndTopRFinalists) {
  EnasSearchOptions o = Toy();
  o.uniform_fraction = 1;
  o.final_candidates = 2;
  o.derive_samples = 4;
  o.random_cells = 0;
  o.compare = false;
  const EnasResult r = RunEnas("enas", o);
  ASSERT_GE(r.shared_steps, 1);
  EXPECT_EQ(r.uniform_steps, r.shared_steps);
  EXPECT_LE(r.distinct_children, r.controller_children);  // the uniform children are not the controller's
  ASSERT_GE(r.candidates.size(), 2u);
  ASSERT_EQ(r.finalists.size(), 2u);
  ASSERT_TRUE(r.have_enas);
  EXPECT_EQ(r.enas.label, "enas");
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(r.finalists[k].arch, r.candidates[k].arch);
    EXPECT_EQ(r.finalists[k].shared_val_accuracy, r.candidates[k].shared_val_accuracy);
    EXPECT_LE(r.finalists[k].val_accuracy, r.enas.val_accuracy);
  }
  EXPECT_TRUE(r.enas.arch == r.finalists[0].arch || r.enas.arch == r.finalists[1].arch);
  EXPECT_TRUE(r.random.empty());
  EXPECT_FALSE(r.have_hand);

  o.uniform_fraction = 0;  // ENAS: every shared child is the controller's
  const EnasResult e = RunEnas("enas", o);
  EXPECT_EQ(e.uniform_steps, 0);
}

// enas-rank's core: the shared-weight accuracy of given cells with a search checkpoint's weights
// (in [0, 1], the same as the derive step's for the same cell and images), and a checkpoint that
// is not one is a ConfigError.
TEST(EnasSearch, SharedWeightAccuraciesOfACheckpoint) {
  EnasSearchOptions o = Toy();
  o.compare = false;
  o.random_cells = 0;
  std::string bytes;
  EnasCheckpoints ck;
  ck.on_checkpoint = [&](const std::string& b, int32_t) { bytes = b; };
  const EnasResult r = RunEnas("enas", o, {}, {}, {}, ck);
  ASSERT_FALSE(bytes.empty());
  ASSERT_GE(r.candidates.size(), 1u);
  const std::vector<nas::Architecture> cells = {r.candidates.front().arch, HandDesignedCell()};
  size_t seen = 0;
  const std::vector<double> acc = SharedWeightAccuracies(bytes, cells, o, o.derive_images, [&](size_t done) { seen = done; });
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(seen, 2u);
  for (double a : acc) {
    EXPECT_GE(a, 0);
    EXPECT_LE(a, 1);
  }
  EXPECT_DOUBLE_EQ(acc[0], r.candidates.front().shared_val_accuracy);
  EXPECT_THROW(SharedWeightAccuracies("not a checkpoint", cells, o, 64), ConfigError);
  EXPECT_THROW(SharedWeightAccuracies(bytes, cells, o, 0), ConfigError);
  EnasSearchOptions wider = o;
  wider.search_net.channels = 8;  // weights of another shape
  EXPECT_THROW(SharedWeightAccuracies(bytes, cells, wider, 64), ConfigError);
}

TEST(EnasSearch, RankCorrelations) {
  EXPECT_DOUBLE_EQ(KendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(KendallTau({1, 2, 3, 4}, {40, 30, 20, 10}), -1);
  EXPECT_DOUBLE_EQ(SpearmanRho({1, 2, 3, 4}, {1, 4, 9, 16}), 1);
  EXPECT_DOUBLE_EQ(SpearmanRho({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // One swap among 4: 5 concordant, 1 discordant pair → tau = 4/6; rho = 1 − 6·2/(4·15) = 0.8.
  EXPECT_NEAR(KendallTau({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6, 1e-12);
  EXPECT_NEAR(SpearmanRho({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8, 1e-12);
  // Ties (tau-b): x = (1, 1, 2), y = (1, 2, 3): 2 concordant, one tie in x → 2 / sqrt(3·2).
  EXPECT_NEAR(KendallTau({1, 1, 2}, {1, 2, 3}), 2 / std::sqrt(6.0), 1e-12);
  EXPECT_TRUE(std::isnan(KendallTau({1}, {2})));
  EXPECT_TRUE(std::isnan(SpearmanRho({1, 1, 1}, {1, 2, 3})));
  EXPECT_THROW(KendallTau({1, 2}, {1}), ConfigError);
}

TEST(EnasSearch, DescribedArchitectureRoundTrip) {
  const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  const nas::Architecture hand = HandDesignedCell();
  EXPECT_EQ(ParseDescribedArchitecture(space, space.Describe(hand)), hand);
  for (const std::string& bad : {std::string(""), std::string("normal0/input0"), std::string("normal0/input0=0"),
                                space.Describe(hand) + " normal0/input0=0", std::string("x=y")})
    EXPECT_THROW(ParseDescribedArchitecture(space, bad), ConfigError) << bad;
}

// Cells trained from scratch briefly instead of weight sharing (MakeTrainedSearchSetup): a cell's
// quality is its validation accuracy after the short training — trained once (asked again, and
// through the environment: the cache), the same in a second setup (deterministic), in [0, 1]; the
// step time is the cell's MMACs; the final report trains the best and the hand-designed cell and
// carries the search's value; bad configs, another space and missing IDX files are errors.
TEST(EnasSearch, TrainedCellsQualityIsCachedDeterministicAndReported) {
  config::EnasTrainingConfig c;
  FillDefaultTrainingConfig(&c);
  c.set_train_steps(3);
  c.set_validation_size(96);
  c.set_eval_size(64);
  c.set_max_images(192);
  c.set_final_epochs(0.2);
  env::BlockEnvOptions eo;
  eo.space = "enas_micro";
  const auto base = std::make_shared<const env::BlockEnv>(eo);
  const TrainedSearchSetup a = MakeTrainedSearchSetup(base, c), b = MakeTrainedSearchSetup(base, c);
  std::mt19937_64 rng(3);
  const nas::Architecture cell = search::RandomArchitecture(base->space(), rng);
  const double q = a.quality->Quality(cell);
  EXPECT_GE(q, 0);
  EXPECT_LE(q, 1);
  EXPECT_EQ(a.quality->Quality(cell), q);
  EXPECT_EQ(a.env->Evaluate(cell).quality, q);
  EXPECT_EQ(QualityStats(a).trained, 1);
  EXPECT_GT(QualityStats(a).cpu_seconds, 0);
  EXPECT_EQ(b.quality->Quality(cell), q);
  EXPECT_EQ(a.env->step_time_model().unit(), "MMACs (proxy)");

  const nlohmann::json j = TrainedFinalReport(a, cell, c);
  EXPECT_EQ(j["best"]["search_val_accuracy"].get<double>(), q);
  EXPECT_EQ(j["best"]["architecture"], base->space().Describe(cell));
  for (const char* k : {"best", "hand"}) {
    EXPECT_GE(j[k]["test_accuracy"].get<double>(), 0) << k;
    EXPECT_LE(j[k]["test_accuracy"].get<double>(), 1) << k;
    EXPECT_DOUBLE_EQ(j[k]["mmacs"].get<double>(), j[k]["macs"].get<double>() / 1e6) << k;
  }
  EXPECT_EQ(j["hand"]["architecture"], base->space().Describe(HandDesignedCell()));
  EXPECT_EQ(j["cells_trained"], 1);  // the search's cells (cached): not the hand-designed one's short training
  EXPECT_EQ(QualityStats(a).trained, 2);
  EXPECT_EQ(j["recipe"]["train_steps"], 3);
  EXPECT_EQ(j["recipe"]["final_seed"], 2);

  for (auto change : std::vector<std::function<void(config::EnasTrainingConfig&)>>{
           [](config::EnasTrainingConfig& t) { t.set_train_steps(0); },
           [](config::EnasTrainingConfig& t) { t.set_eval_size(97); },
           [](config::EnasTrainingConfig& t) { t.set_eval_size(0); },
           [](config::EnasTrainingConfig& t) { t.set_validation_size(60000); },
           [](config::EnasTrainingConfig& t) { t.set_final_epochs(0); },
           [](config::EnasTrainingConfig& t) { t.set_threads(0); },
           [](config::EnasTrainingConfig& t) { t.set_data_dir(""); }}) {
    config::EnasTrainingConfig bad = c;
    change(bad);
    EXPECT_THROW(CheckTrainingConfig(bad), ConfigError);
    EXPECT_THROW(MakeTrainedSearchSetup(base, bad), ConfigError);
  }
  env::BlockEnvOptions nb;
  nb.space = "nas_bench_macro";
  nb.quality = "synthetic";
  EXPECT_THROW(MakeTrainedSearchSetup(std::make_shared<const env::BlockEnv>(nb), c), ConfigError);
  config::EnasTrainingConfig missing = c;
  missing.set_data_dir("/nonexistent/fashion-mnist");
  EXPECT_THROW(MakeTrainedSearchSetup(base, missing), IoError);
}

}  // namespace
}  // namespace placerl::enas
