// nas-search --space enas_micro --dataset fashion-mnist as a user runs it, at toy size
// (--max-images): ENAS writes the whole run directory and one JSON document with the found,
// random and hand-designed cells' test accuracies; a space without a Fashion-MNIST trainer, a
// method it does not have, an unknown dataset and missing IDX files fail with one line, exit 1,
// and leave no directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "datasets/nas/search_space.h"
#include "search/nas/enas_search.h"
#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/nas-search";
const std::string kToy = " --space enas_micro --dataset fashion-mnist --max-images 128 --budget-minutes 0.002 "
                         "--final-epochs 0.5 --random-cells 1";

// enas-rank's --help is what it was when the binary was flags and library code in one file
// (tests/data/enas_rank_help.txt, written by that binary; its path as "enas-rank").
TEST(EnasCli, EnasRankHelpIsUnchanged) {
  EXPECT_EQ(testing::HelpAsNamed(placerl::testing::BinDir() + "/enas-rank", "enas-rank"),
            testing::Slurp("tests/data/enas_rank_help.txt"));
}

TEST(EnasCli, EnasRunDirectoryEndToEnd) {
  testing::TempDir tmp;
  const std::string out = tmp / "runs/enas";
  const auto r = ShSplit(kBin + kToy + " --method enas --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "enas");
  EXPECT_EQ(j["dataset"], "fashion-mnist");
  for (const char* key : {"enas", "hand_designed", "best_random"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GE(j[key]["test_accuracy"].get<double>(), 0);
    EXPECT_LE(j[key]["test_accuracy"].get<double>(), 1);
    EXPECT_GT(j[key]["params"].get<int64_t>(), 0);
    EXPECT_GT(j[key]["macs"].get<int64_t>(), 0);
  }
  EXPECT_EQ(j["test_accuracy"], j["enas"]["test_accuracy"]);
  EXPECT_GE(j["search_seconds"].get<double>(), 0);
  EXPECT_GE(j["epochs"].get<int>(), 1);
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const std::string metrics = testing::Slurp(out + "/metrics.csv");
  EXPECT_EQ(metrics.rfind("step,time_s,charts/learning_rate,losses/shared_loss", 0), 0u) << metrics;
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("budget_minutes=0.002"), std::string::npos);
  EXPECT_NE(testing::Slurp(out + "/best.pbtxt").find("normal0/op0"), std::string::npos);

  const auto rr = ShSplit(kBin + kToy + " --method random --json --out " + tmp / "runs/random");
  ASSERT_EQ(rr.status, 0) << rr.out << rr.err;
  const auto jr = nlohmann::json::parse(rr.out);
  EXPECT_EQ(jr["random"].size(), 1u);
  EXPECT_FALSE(jr.contains("enas"));
}

// ENAS micro's controller settings (experiments/configs/enas_micro_controller.pbtxt) reach the
// resolved config; --clock cpu reaches the run (header, result.json, the checkpoint's flags) and a
// resume keeps it: another clock is refused with one line.
TEST(EnasCli, MicroControllerConfigAndCpuClock) {
  testing::TempDir tmp;
  const std::string out = tmp / "micro";
  const auto r = ShSplit(kBin + kToy + " --config experiments/configs/enas_micro_controller.pbtxt --clock cpu --json --out " +
                         out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "enas");
  EXPECT_EQ(j["options"]["clock"], "cpu");
  EXPECT_GE(j["search_cpu_seconds"].get<double>(), 0.002 * 60);
  EXPECT_GE(j["distinct_children"].get<int64_t>(), 1);
  EXPECT_LE(j["distinct_children"].get<int64_t>(), j["shared_steps"].get<int64_t>() + j["controller_children"].get<int64_t>());
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  for (const char* line : {"clock=cpu", "preset: \"lstm\"", "logit_tanh_constant: 1.1", "learning_rate: 0.0035",
                           "entropy_coef: 0.0001", "baseline_decay: 0.99"})
    EXPECT_NE(config.find(line), std::string::npos) << line << "\n" << config;
  EXPECT_NE(testing::Slurp(out + "/checkpoints/state.json").find("\"clock\": \"cpu\""), std::string::npos);
  const auto other = Sh(kBin + " --resume " + out + " --clock wall");
  EXPECT_EQ(other.status, 1) << other.out;
  EXPECT_EQ(std::count(other.out.begin(), other.out.end(), '\n'), 1) << other.out;
  EXPECT_NE(other.out.find("keeps the run's"), std::string::npos) << other.out;
}

TEST(EnasCli, BadDatasetSpaceMethodOrFilesAreOneLineExitOne) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--space enas_micro --dataset mnist --method enas"),
        std::string("--space nb201 --dataset fashion-mnist --method enas"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --random-cells 2"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --budget-minutes 1"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --clock cpu"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --train-steps 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --set enas_training.eval_size=6000"),
        std::string("--space enas_micro --dataset fashion-mnist --method ppo --set enas_training.train_steps=0"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --train-steps 5"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --set enas_training.train_steps=5"),
        std::string("--space enas_micro --dataset fashion-mnist --method random --train-steps 5 --random-cells 2"),
        std::string("--space nb201 --dataset table --method random --train-steps 5"),
        std::string("--space enas_micro --dataset fashion-mnist --method evolution --fashion-mnist-dir ") + tmp / "none",
        std::string("--space enas_micro --dataset table --method enas"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --final-epochs 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --set agent.algorithm=ppo"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --clock sundial"),
        std::string("--space nb201 --dataset table --method random --clock cpu"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --final-candidates 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --uniform-fraction 1.5"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --derive-samples 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --random-cells -1"),
        std::string("--space enas_micro --dataset fashion-mnist --method random --random-cells 0"),
        std::string("--space enas_micro --dataset fashion-mnist --method random --final-candidates 2"),
        std::string("--space nb201 --dataset table --method random --uniform-fraction 0.5"),
        std::string("--space enas_micro --dataset fashion-mnist --method enas --fashion-mnist-dir ") + tmp / "none"}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const auto missing = Sh(kBin + " --space enas_micro --dataset fashion-mnist --method enas --fashion-mnist-dir " +
                          tmp / "none" + " --out " + out);
  EXPECT_NE(missing.out.find("dataset-fashion-mnist"), std::string::npos) << missing.out;
}

// Cells trained from scratch briefly, no weight sharing (--method evolution, and random with
// --train-steps): the generic search loop's run directory with the short-training quality and the
// MMACs step time, the final training of the best and the hand-designed cell in result.json
// ("enas_training"), the recipe in config.pbtxt; random with --train-steps is random search over
// the same quality (not the ENAS path's fully trained random cells).
TEST(EnasCli, TrainedCellsWithEvolutionAndRandomSearch) {
  testing::TempDir tmp;
  const std::string toy = kBin + " --space enas_micro --dataset fashion-mnist --max-images 128 --train-steps 3 "
                                 "--set enas_training.validation_size=96 --set enas_training.eval_size=64 "
                                 "--final-epochs 0.5 --step-time-budget 2.62 --json";
  const std::string out = tmp / "evo";
  const auto r = ShSplit(toy + " --method evolution --budget 3 --population 2 --tournament 1 --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("enas_training")) << r.out;
  const auto& e = j["enas_training"];
  EXPECT_EQ(e["best"]["search_val_accuracy"], j["best"]["quality"]);
  EXPECT_EQ(e["best"]["architecture"], j["best"]["architecture"]);
  EXPECT_DOUBLE_EQ(e["best"]["mmacs"].get<double>(), j["best"]["cost"].get<double>());
  EXPECT_GE(e["cells_trained"].get<int>(), 1);
  EXPECT_LE(e["cells_trained"].get<int>(), 3);  // distinct cells of the 3 evaluations
  for (const char* k : {"best", "hand"}) {
    EXPECT_GE(e[k]["test_accuracy"].get<double>(), 0) << k;
    EXPECT_LE(e[k]["test_accuracy"].get<double>(), 1) << k;
  }
  EXPECT_NE(e["recipe"]["quality"].get<std::string>().find("after 3 SGD steps"), std::string::npos) << e["recipe"];
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "pareto.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  for (const char* line : {"enas_training {", "train_steps: 3", "eval_size: 64", "final_epochs: 0.5"})
    EXPECT_NE(config.find(line), std::string::npos) << line << "\n" << config;

  const auto rr = ShSplit(toy + " --method random --budget 2 --out " + tmp / "random");
  ASSERT_EQ(rr.status, 0) << rr.out << rr.err;
  const auto jr = nlohmann::json::parse(rr.out);
  EXPECT_TRUE(jr.contains("enas_training"));
  EXPECT_FALSE(jr.contains("random"));  // not the ENAS path's random cells
  EXPECT_EQ(jr["enas_training"]["best"]["search_val_accuracy"], jr["best"]["quality"]);
}

// The ranking options reach the run (--final-candidates R: R finalists trained from scratch, the
// found cell the best of them by validation; --uniform-fraction; --random-cells 0: no comparison
// cells; --under-penalty: the derive's ranking), and enas-rank scores every cell of that run with its checkpoint: accuracies in [0, 1],
// rank correlations over the cells trained from scratch. Bad input: one line, exit 1.
TEST(EnasCli, RankingOptionsAndEnasRank) {
  testing::TempDir tmp;
  const std::string out = tmp / "rank";
  const auto r = ShSplit(kBin + " --space enas_micro --dataset fashion-mnist --max-images 128 --budget-minutes 0.002 "
                         "--final-epochs 0.5 --random-cells 0 --method enas --final-candidates 2 --uniform-fraction 1 "
                         "--derive-samples 6 --derive-images 64 --step-time-budget 1000 --under-penalty 0.5 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["options"]["final_candidates"], 2);
  // --under-penalty: every cell is far below the 1000-MMAC target, so each candidate carries its
  // shortfall's penalty and the derive ranks by shared-weight accuracy minus it.
  ASSERT_GE(j["candidates"].size(), 1u);
  double last = 1e9;
  for (const auto& c : j["candidates"]) {
    ASSERT_TRUE(c.contains("derive_penalty")) << c;
    EXPECT_GT(c["derive_penalty"].get<double>(), 0.4) << c;
    EXPECT_LT(c["derive_penalty"].get<double>(), 0.5) << c;
    const double key = c["shared_val_accuracy"].get<double>() - c["derive_penalty"].get<double>();
    EXPECT_LE(key, last) << c;
    last = key;
  }
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("under_penalty: 0.5"), std::string::npos);
  EXPECT_EQ(j["options"]["uniform_fraction"], 1.0);
  EXPECT_EQ(j["options"]["derive_samples"], 6);
  EXPECT_EQ(j["options"]["random_cells"], 0);
  EXPECT_EQ(j["uniform_steps"], j["shared_steps"]);
  ASSERT_EQ(j["finalists"].size(), 2u);
  for (const auto& f : j["finalists"]) EXPECT_LE(f["val_accuracy"].get<double>(), j["enas"]["val_accuracy"].get<double>());
  EXPECT_FALSE(j.contains("random"));
  EXPECT_FALSE(j.contains("hand_designed"));
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("final_candidates=2 uniform_fraction=1"), std::string::npos);

  const std::string rank = placerl::testing::BinDir() + "/enas-rank";
  const std::string cells = tmp / "cells.txt";
  const std::string hand = nas::LoadSearchSpace("enas_micro").Describe(enas::HandDesignedCell());
  {
    std::ofstream f(cells);
    f << "# label accuracy genotype\nhand 0.8594 " << hand << "\n";
  }
  const auto s = ShSplit(rank + " --checkpoint " + out + " --result " + out + "/result.json --candidates --cells " + cells +
                         " --max-images 128 --images 64 --json");
  ASSERT_EQ(s.status, 0) << s.out << s.err;
  const auto k = nlohmann::json::parse(s.out);
  EXPECT_EQ(k["images"], 64);
  ASSERT_GE(k["cells"].size(), 3u);  // the finalists, the hand cell, the candidates (duplicates merged)
  for (const auto& c : k["cells"]) {
    EXPECT_GE(c["shared_accuracy"].get<double>(), 0) << c;
    EXPECT_LE(c["shared_accuracy"].get<double>(), 1) << c;
  }
  EXPECT_EQ(k["known"], 3);  // enas0, enas1 (one of them also "enas"), hand
  EXPECT_TRUE(k["kendall_tau"].is_null() || std::abs(k["kendall_tau"].get<double>()) <= 1);

  // The shipped seed-1 cells (docs/nas.md): all 7 parse, with their from-scratch accuracies.
  const auto shipped = ShSplit(rank + " --checkpoint " + out + " --cells experiments/configs/enas_micro_seed1_cells.txt "
                               "--max-images 128 --images 32 --json");
  ASSERT_EQ(shipped.status, 0) << shipped.out << shipped.err;
  EXPECT_EQ(nlohmann::json::parse(shipped.out)["known"], 7);

  // --retrain-seeds without a checkpoint: every cell trained from scratch once per seed; the same
  // seed gives the same accuracies (a seed fixes initialisation and data order); the mean test
  // accuracy replaces the given one (kept as given_accuracy).
  const auto rt = ShSplit(rank + " --cells " + cells + " --retrain-seeds '3 4 3' --final-epochs 0.25 --max-images 128 --json");
  ASSERT_EQ(rt.status, 0) << rt.out << rt.err;
  const auto t = nlohmann::json::parse(rt.out);
  EXPECT_TRUE(t["checkpoint"].is_null());
  EXPECT_EQ(t["retrain"]["seeds"].size(), 3u);
  EXPECT_EQ(t["retrain"]["final_epochs"], 0.25);
  ASSERT_EQ(t["cells"].size(), 1u);
  const auto& rc = t["cells"][0]["retrained"];
  ASSERT_EQ(rc["test_accuracies"].size(), 3u);
  EXPECT_EQ(rc["test_accuracies"][0], rc["test_accuracies"][2]);
  EXPECT_EQ(rc["val_accuracies"][0], rc["val_accuracies"][2]);
  double mean = 0;
  for (const auto& a : rc["test_accuracies"]) {
    EXPECT_GE(a.get<double>(), 0);
    EXPECT_LE(a.get<double>(), 1);
    mean += a.get<double>() / 3;
  }
  EXPECT_NEAR(rc["mean_test_accuracy"].get<double>(), mean, 1e-12);
  EXPECT_EQ(t["cells"][0]["known_accuracy"], rc["mean_test_accuracy"]);
  EXPECT_EQ(rc["given_accuracy"], 0.8594);
  EXPECT_GT(rc["macs"].get<int64_t>(), 0);
  EXPECT_TRUE(t["cells"][0]["shared_accuracy"].is_null());

  const std::string bad = tmp / "bad.txt";
  {
    std::ofstream f(bad);
    f << "ok - " << hand << "\nbroken 0.5 normal0/input0=9\n";
  }
  for (const std::string& args :
       {" --checkpoint " + out + " --cells " + bad, " --checkpoint " + tmp / "none" + " --result " + out + "/result.json",
        " --checkpoint " + out + " --result " + out + "/result.json --images 0", " --checkpoint " + out,
        " --checkpoint " + out + "/result.json --result " + out + "/result.json", " --cells " + cells,
        " --cells " + cells + " --retrain-seeds 1 --final-epochs 0", " --cells " + cells + " --retrain-seeds x",
        " --checkpoint " + out + " --cells " + cells + " --final-epochs 1"}) {
    const auto e = Sh(rank + args + " --max-images 128");
    EXPECT_EQ(e.status, 1) << args << ": " << e.out;
    EXPECT_EQ(std::count(e.out.begin(), e.out.end(), '\n'), 1) << args << ": " << e.out;
    EXPECT_EQ(e.out.rfind("enas-rank: error: ", 0), 0u) << e.out;
  }
  EXPECT_NE(Sh(rank + " --checkpoint " + out + " --cells " + bad).out.find(bad + ":2: "), std::string::npos);
}

// Issue 29 item 15: enas-rank said "give --result" when --result was given; now it says what the
// file lacks. A trained-cells run's result.json (enas_training's best and hand) is read too.
TEST(EnasCli, EnasRankSaysWhatAResultLacks) {
  testing::TempDir tmp;
  const std::string rank = placerl::testing::BinDir() + "/enas-rank";
  const std::string empty = tmp / "empty.json";
  testing::Spit(empty, "{\"space\": \"enas_micro\", \"dataset\": \"fashion-mnist\", \"stopped_by_signal\": true}\n");
  const auto e = Sh(rank + " --result " + empty + " --retrain-seeds 1");
  EXPECT_EQ(e.status, 1) << e.out;
  EXPECT_EQ(std::count(e.out.begin(), e.out.end(), '\n'), 1) << e.out;
  EXPECT_EQ(e.out.find("give --result"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("the --result file " + empty + " holds no cell trained from scratch"), std::string::npos) << e.out;
  const std::string hand = nas::LoadSearchSpace("enas_micro").Describe(enas::HandDesignedCell());
  const std::string trained = tmp / "trained.json";
  testing::Spit(trained, "{\"space\": \"enas_micro\", \"dataset\": \"fashion-mnist\", \"enas_training\": {\"best\": "
                         "{\"label\": \"best\", \"architecture\": \"" + hand + "\", \"test_accuracy\": 0.8}, \"hand\": "
                         "{\"architecture\": \"" + hand + "\", \"skipped\": \"stopped by signal\"}}}\n");
  const auto t = Sh(rank + " --result " + trained);
  EXPECT_EQ(t.status, 1) << t.out;
  EXPECT_NE(t.out.find("nothing to do: give --checkpoint"), std::string::npos) << t.out;  // the cell was found
}

// Issue 29, "what it must show": enas-rank at the maximum values of its options (every image,
// 10,000 epochs, many seeds) under a 4 GB memory limit stops on Ctrl-C within 30 s, exit 0, and
// its JSON says so and holds only the trainings done.
TEST(EnasCli, EnasRankAtItsMaximumsStopsOnCtrlC) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "no Fashion-MNIST";
  std::string seeds;
  for (int s = 1; s <= 1000; ++s) seeds += (s > 1 ? " " : "") + std::to_string(s);
  const std::string rank = placerl::testing::BinDir() + "/enas-rank";
  const auto r = testing::RunAndInterrupt(rank + " --cells experiments/configs/enas_micro_seed1_cells.txt --retrain-seeds '" +
                                              seeds + "' --final-epochs 10000 --images 60000 --max-images 60000 --json",
                                          "grep -q 'retraining' \"$log\"", 3);
  ASSERT_TRUE(r.ready) << r.out;
  EXPECT_FALSE(r.hung) << r.out;
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_LT(r.seconds_to_exit, 30);
  const size_t at = r.out.find("\n{");
  ASSERT_NE(at, std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
  EXPECT_EQ(j["stopped_by_signal"], true);
  for (const auto& c : j["cells"]) EXPECT_EQ(c["retrained"]["test_accuracies"].size(), 0u) << c;
}

}  // namespace
}  // namespace placerl
