// nas-search as a user runs it: a small NB201 search writes the whole run directory and one JSON
// document whose best architecture is the table's; several seeds give mean ± std; methods and
// datasets not built yet, bad options and bad tables fail with one line, exit 1, and leave no
// directory. --resume: a search killed after a checkpoint (or finished) and resumed ends with the
// uninterrupted run's history; a resume that does not fit is one line, exit 1, and changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>
#include <nlohmann/json.hpp>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
using testing::ShSplit;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/nas-search";

int CountLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// --help is what it was when the binary was flags and library code in one file
// (tests/data/nas_search_help.txt, written by that binary; the binary's path as "nas-search").
TEST(NasSearchCli, HelpIsUnchanged) {
  const auto r = ShSplit(kBin + " --help");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string help = r.out;
  const size_t at = help.find(kBin);
  ASSERT_NE(at, std::string::npos) << help;
  help.replace(at, kBin.size(), "nas-search");
  EXPECT_EQ(help, testing::Slurp("tests/data/nas_search_help.txt"));
}

// The ENAS controller preset (experiments/configs/enas_controller.pbtxt): the config reaches the
// resolved config and the learner; enas_macro's skip penalty is accepted, nb201 refuses it.
TEST(NasSearchCli, EnasControllerConfigAndSkipPenalty) {
  testing::TempDir tmp;
  const std::string out = tmp / "enas";
  const auto r = ShSplit(kBin + " --space nb201 --config experiments/configs/enas_controller.pbtxt --dataset table "
                                "--budget 20 --seeds 1 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "reinforce");
  const std::string config = ShSplit("cat " + out + "/config.pbtxt").out;
  for (const char* line : {"preset: \"lstm\"", "lstm_encoder: \"none\"", "logit_tanh_constant: 2.5", "logit_temperature: 5",
                           "hidden_dim: 100", "baseline_decay: 0.99"})
    EXPECT_NE(config.find(line), std::string::npos) << line << "\n" << config;
  const auto macro = ShSplit(kBin + " --space enas_macro --config experiments/configs/enas_controller.pbtxt "
                                    "--set skip_penalty=0.8 --budget 10 --seeds 1 --json --out " + std::string(tmp / "macro"));
  EXPECT_EQ(macro.status, 0) << macro.err;
  const auto bad = ShSplit(kBin + " --space nb201 --method random --set skip_penalty=0.8 --budget 10 --out " +
                           std::string(tmp / "bad"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("skip_penalty needs a space with 0/1 skip flags"), std::string::npos) << bad.err;
  const auto preset = ShSplit(kBin + " --space nb201 --method reinforce --set policy.preset=seq2seq --budget 10 --out " +
                              std::string(tmp / "preset"));
  EXPECT_EQ(preset.status, 1);
  EXPECT_NE(preset.err.find("policy preset must be default, ct_faithful or lstm"), std::string::npos) << preset.err;
}

// --under-penalty: the step-time budget as a target. The best architecture's penalty is the
// shortfall below the budget (or the excess above it) with its weight; without a budget, refused.
TEST(NasSearchCli, UnderPenaltyMakesTheBudgetATarget) {
  testing::TempDir tmp;
  const std::string out = tmp / "target";
  const auto r = ShSplit(kBin + " --space nb201 --method random --dataset table --budget 30 --seeds 2 "
                                "--step-time-budget 100 --under-penalty 0.5 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& b = j["best"];
  const double cost = b["cost"].get<double>(), ratio = cost / 100;
  EXPECT_NEAR(b["penalty"].get<double>(), 0.5 * std::max(0.0, 1 - ratio) + std::max(0.0, ratio - 1), 1e-12) << b;
  EXPECT_NEAR(b["reward"].get<double>(), b["quality"].get<double>() - b["penalty"].get<double>(), 1e-12) << b;
  EXPECT_NE(ShSplit("cat " + out + "/config.pbtxt").out.find("under_penalty: 0.5"), std::string::npos);
  const auto bad = ShSplit(kBin + " --space nb201 --method random --under-penalty 0.5 --budget 10 --out " +
                           std::string(tmp / "bad"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(CountLines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("under_penalty needs a step-time budget"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(tmp / "bad"));
}

TEST(NasSearchCli, Nb201EndToEnd) {
  testing::TempDir tmp;
  const std::string out = tmp / "runs/rea";
  const auto r = ShSplit(kBin + " --space nb201 --method evolution --dataset table --budget 30 --seeds 4 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["space"], "nb201");
  EXPECT_EQ(j["method"], "evolution");
  EXPECT_EQ(j["budget"], 30);
  EXPECT_EQ(j["population"], 10);
  EXPECT_EQ(j["tournament"], 3);
  const double acc = j["best_test_accuracy"]["mean"].get<double>();
  EXPECT_GT(acc, 85);
  EXPECT_LE(acc, j["table_optimum"]["quality"].get<double>() * 100 + 1e-9);
  EXPECT_NEAR(j["table_optimum"]["quality"].get<double>(), 0.943733, 1e-5);
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "pareto.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  // The Pareto front: by increasing cost, strictly increasing quality; it holds the best.
  const auto& front = j["pareto"];
  ASSERT_GE(front.size(), 1u);
  for (size_t k = 1; k < front.size(); ++k) {
    EXPECT_GT(front[k]["cost"].get<double>(), front[k - 1]["cost"].get<double>());
    EXPECT_GT(front[k]["quality"].get<double>(), front[k - 1]["quality"].get<double>());
  }
  EXPECT_EQ(front.back()["quality"], j["best"]["quality"]);
  const std::string best = testing::Slurp(out + "/best.pbtxt");
  EXPECT_NE(best.find("encoding: \"" + j["best"]["encoding"].get<std::string>() + "\""), std::string::npos) << best;
  EXPECT_EQ(CountLines(testing::Slurp(out + "/metrics.csv")), 31);  // header + one row per architecture
  EXPECT_NE(testing::Slurp(out + "/config.pbtxt").find("budget: 30"), std::string::npos);
  // The same search again gives the same result (deterministic per seed).
  const auto again = ShSplit(kBin + " --budget 30 --seeds 4 --json --force --out " + out);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["best"], j["best"]);
}

TEST(NasSearchCli, SeveralSeedsAndOtherSpaces) {
  testing::TempDir tmp;
  const auto r = ShSplit(kBin + " --space nas_bench_macro --method random --budget 20 --seeds 1-5 --json --out " +
                         tmp / "macro");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seeds"], 5);
  EXPECT_EQ(j["per_seed"].size(), 5u);
  EXPECT_GT(j["best_test_accuracy"]["std"].get<double>(), 0);
  EXPECT_EQ(CountLines(testing::Slurp(tmp / "macro/metrics.csv")), 6);  // header + one row per seed
  const auto bf = ShSplit(kBin + " --space brainformer --budget 40 --json --out " + tmp / "bf");
  ASSERT_EQ(bf.status, 0) << bf.err;
  EXPECT_EQ(nlohmann::json::parse(bf.out)["quality"], "synthetic additive quality (seed 1)");
  // Brainformer blocks have the performance model's step time (seconds): a Pareto plot.
  EXPECT_EQ(nlohmann::json::parse(bf.out)["cost_unit"], "s");
  EXPECT_TRUE(fs::exists(tmp / "bf/pareto.png")) << "step-time model, Pareto plot";
  EXPECT_EQ(ShSplit(kBin + " --space nb201 --table-dataset imagenet16-120 --budget 20 --step-time-budget 50 --out " +
                    tmp / "in16").status, 0);
}

// The learned methods (LibTorch builds): same run directory and budget meaning as evolution;
// metrics rows carry the learner's last losses; the resolved config has the policy and agent.
TEST(NasSearchCli, PpoAndReinforceEndToEnd) {
  testing::TempDir tmp;
  const std::string out = tmp / "runs/ppo";
  const auto r = ShSplit(kBin + " --space nb201 --method ppo --dataset table --budget 12 --episodes-per-update 4 "
                         "--seeds 2 --json --out " + out);
  if (r.status == 1 && r.err.find("needs a build with LibTorch") != std::string::npos) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "ppo");
  EXPECT_EQ(j["budget"], 12);
  EXPECT_EQ(j["episodes_per_update"], 4);
  EXPECT_FALSE(j.contains("population")) << "evolution's options only for evolution";
  const double acc = j["best_test_accuracy"]["mean"].get<double>();
  EXPECT_GT(acc, 50);
  EXPECT_LE(acc, j["table_optimum"]["quality"].get<double>() * 100 + 1e-9);
  EXPECT_NEAR(acc, 100 * j["best"]["quality"].get<double>(), 1e-9);
  for (const char* f : {"config.pbtxt", "best.pbtxt", "curve.png", "pareto.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const std::string metrics = testing::Slurp(out + "/metrics.csv");
  EXPECT_EQ(CountLines(metrics), 13);  // header + one row per architecture
  EXPECT_NE(metrics.find("losses/entropy"), std::string::npos) << metrics;
  const std::string config = testing::Slurp(out + "/config.pbtxt");
  EXPECT_NE(config.find("algorithm: \"ppo\""), std::string::npos) << config;
  EXPECT_NE(config.find("embedding_dim: 32"), std::string::npos) << config;
  // Deterministic for a seed.
  const auto again = ShSplit(kBin + " --method ppo --budget 12 --episodes-per-update 4 --seeds 2 --json --force --out " + out);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["best"], j["best"]);
  // REINFORCE over several seeds, with its ENAS-style defaults and a learner option from --set.
  const auto re = ShSplit(kBin + " --space nas_bench_macro --method reinforce --budget 10 --seeds 1-3 "
                          "--set agent.entropy_coef=0.001 --json --out " + tmp / "re");
  ASSERT_EQ(re.status, 0) << re.err;
  const auto jr = nlohmann::json::parse(re.out);
  EXPECT_EQ(jr["per_seed"].size(), 3u);
  EXPECT_EQ(jr["episodes_per_update"], 10);
  EXPECT_EQ(jr["reward_scale"], 100);
  EXPECT_EQ(jr["baseline_decay"], 0.9);
  EXPECT_EQ(jr["entropy_coef"], 0.001);
  for (const auto& s : jr["per_seed"]) EXPECT_EQ(s["evaluations"], 10);
}

// Every file of a directory with its content (to check that a refused --resume changes nothing).
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().string()] = testing::Slurp(e.path().string());
  return files;
}

// The result's architectures and their numbers (result.json's timing fields left out).
nlohmann::json SearchOutcome(const std::string& dir) {
  const auto j = nlohmann::json::parse(testing::Slurp(dir + "/result.json"));
  nlohmann::json o;
  for (const char* key : {"best", "best_quality", "best_reward", "pareto", "unique_mean", "per_seed"})
    if (j.contains(key)) o[key] = j[key];
  return o;
}

// Same run, same result: killed right after its k-th checkpoint (one after every architecture
// or update) and resumed, a tabular search ends with the uninterrupted run's metrics.csv (one row
// per architecture: reward, quality, cost, best; the learned methods' losses), best.pbtxt and
// result; for random search, evolution, PPO and REINFORCE.
TEST(NasSearchCli, ResumeAfterKillEndsWithTheUninterruptedHistory) {
  testing::TempDir tmp;
  for (const std::string method : {"random", "evolution", "ppo", "reinforce"}) {
    const std::string run = kBin + " --space nb201 --dataset table --method " + method +
                            " --seeds 4 --set checkpoint_minutes=1e-9" +
                            (method == "ppo" || method == "reinforce" ? " --episodes-per-update 4" : "");
    const std::string a = tmp / (method + "_a"), b = tmp / (method + "_b");
    const auto whole = Sh(run + " --budget 30 --out " + a);
    if (whole.status == 1 && whole.out.find("needs a build with LibTorch") != std::string::npos) continue;
    ASSERT_EQ(whole.status, 0) << whole.out;
    EXPECT_EQ(Sh(run + " --budget 30 --test-kill-after-checkpoints 3 --out " + b).status, 128 + 9) << method;  // SIGKILL
    const bool learned = method == "ppo" || method == "reinforce";
    // Checkpoints after each architecture (random, evolution) or each update of 4 (learned).
    EXPECT_EQ(CountLines(testing::Slurp(b + "/metrics.csv")), 1 + (learned ? 12 : 3)) << method;
    EXPECT_FALSE(fs::exists(b + "/result.json"));
    EXPECT_EQ(fs::exists(b + "/checkpoints/latest.ckpt"), learned) << method;
    const auto resumed = Sh(kBin + " --resume " + b);
    ASSERT_EQ(resumed.status, 0) << method << ": " << resumed.out;
    const std::string metrics = testing::Slurp(a + "/metrics.csv");
    EXPECT_EQ(CountLines(metrics), 31);
    EXPECT_EQ(testing::Slurp(b + "/metrics.csv"), metrics) << method;
    EXPECT_EQ(testing::Slurp(b + "/best.pbtxt"), testing::Slurp(a + "/best.pbtxt")) << method;
    EXPECT_EQ(SearchOutcome(b), SearchOutcome(a)) << method;
    // Resuming the finished run changes no result; a larger budget goes on as a run with that budget.
    ASSERT_EQ(Sh(kBin + " --resume " + b).status, 0);
    EXPECT_EQ(testing::Slurp(b + "/metrics.csv"), metrics) << method;
    const std::string c = tmp / (method + "_c");
    ASSERT_EQ(Sh(run + " --budget 45 --out " + c).status, 0);
    const auto longer = Sh(kBin + " --resume " + b + " --budget 45");
    ASSERT_EQ(longer.status, 0) << longer.out;
    EXPECT_EQ(testing::Slurp(b + "/metrics.csv"), testing::Slurp(c + "/metrics.csv")) << method;
    EXPECT_EQ(SearchOutcome(b), SearchOutcome(c)) << method;
    EXPECT_NE(testing::Slurp(b + "/config.pbtxt").find("budget: 45"), std::string::npos);
  }
}

// The learned methods carry their run state inside latest.ckpt (with the learner, one atomic
// write): a kill between writing latest.ckpt and state.json leaves a state.json of the update
// before, and the resume goes on from the checkpoint's own state — the uninterrupted run's rows —
// where it used to refuse the pair ("killed between the two writes?"); without state.json too.
const std::string kSmallLearned = " --space nb201 --dataset table --seeds 1 --budget 20 --episodes-per-update 4 "
                                  "--set checkpoint_minutes=1e-9 --set policy.embedding_dim=4 --set policy.hidden_dim=4 "
                                  "--set policy.action_hidden_dim=4 --set policy.gcn_layers=1";

TEST(NasSearchCli, LearnedResumeReadsTheStateInsideTheCheckpointNotAStaleStateJson) {
  testing::TempDir tmp;
  for (const std::string method : {"reinforce", "ppo"}) {
    const std::string run = kBin + " --method " + method + kSmallLearned;
    const std::string a = tmp / (method + "_a"), b = tmp / (method + "_b"), c = tmp / (method + "_c");
    const auto whole = Sh(run + " --out " + a);
    if (whole.status == 1 && whole.out.find("needs a build with LibTorch") != std::string::npos) GTEST_SKIP();
    ASSERT_EQ(whole.status, 0) << whole.out;
    ASSERT_EQ(Sh(run + " --test-kill-after-checkpoints 3 --out " + b).status, 128 + 9) << method;
    ASSERT_EQ(Sh(run + " --test-kill-after-checkpoints 2 --out " + c).status, 128 + 9) << method;
    const std::string stale = testing::Slurp(c + "/checkpoints/state.json");
    ASSERT_NE(stale, testing::Slurp(b + "/checkpoints/state.json")) << method;
    testing::Spit(b + "/checkpoints/state.json", stale);  // the checkpoint of update 3, state.json of update 2
    const auto resumed = Sh(kBin + " --resume " + b);
    ASSERT_EQ(resumed.status, 0) << method << ": " << resumed.out;
    EXPECT_EQ(testing::Slurp(b + "/metrics.csv"), testing::Slurp(a + "/metrics.csv")) << method;
    EXPECT_EQ(SearchOutcome(b), SearchOutcome(a)) << method;
    fs::remove(c + "/checkpoints/state.json");  // killed before the first state.json: latest.ckpt alone
    const auto alone = Sh(kBin + " --resume " + c);
    ASSERT_EQ(alone.status, 0) << method << ": " << alone.out;
    EXPECT_EQ(testing::Slurp(c + "/metrics.csv"), testing::Slurp(a + "/metrics.csv")) << method;
    // state.json beside it is written again, for people: the last update's state (16 of the 20
    // architectures; a resume plays the 4 after it again).
    const auto people = nlohmann::json::parse(testing::Slurp(c + "/checkpoints/state.json"));
    EXPECT_EQ(people["kind"], "nas-search") << method;
    EXPECT_EQ(people["evaluations"], 16) << method;
  }
}

// A run directory written before the state went inside latest.ckpt (tests/data/
// nas_search_old_resume: a reinforce run killed after its 2nd checkpoint by the earlier
// nas-search; state.json names latest.ckpt's hash) resumes from state.json as it did, and ends
// with the uninterrupted run's rows; a state.json that names another latest.ckpt is still refused.
// The rows of two metrics.csv: the same header and the same cells, but the learner's losses (columns
// `losses/…`) within a relative 1e-5 — what a run continued from a checkpoint written on another
// CPU can differ by (LibTorch's float kernels round differently between CPUs; the architectures,
// rewards and bests are exact).
void ExpectSameHistoryUpToLossRounding(const std::string& got, const std::string& want) {
  auto split = [](const std::string& text, char sep) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
    return parts;
  };
  const std::vector<std::string> g = split(got, '\n'), w = split(want, '\n');
  ASSERT_EQ(g.size(), w.size()) << got << "\nvs\n" << want;
  ASSERT_FALSE(w.empty());
  const std::vector<std::string> header = split(w[0], ',');
  EXPECT_EQ(g[0], w[0]);
  for (size_t row = 1; row < w.size(); ++row) {
    const std::vector<std::string> a = split(g[row], ','), b = split(w[row], ',');
    ASSERT_EQ(a.size(), b.size()) << "row " << row;
    for (size_t c = 0; c < b.size(); ++c) {
      if (c < header.size() && header[c].rfind("losses/", 0) == 0 && a[c] != "nan" && b[c] != "nan") {
        const double x = std::stod(a[c]), y = std::stod(b[c]);
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::fabs(y))) << "row " << row << ", " << header[c];
      } else {
        EXPECT_EQ(a[c], b[c]) << "row " << row << ", " << (c < header.size() ? header[c] : "?");
      }
    }
  }
}

TEST(NasSearchCli, LearnedResumeOfARunWrittenBeforeTheStateWentInsideTheCheckpoint) {
  testing::TempDir tmp;
  const std::string a = tmp / "a", old = tmp / "old";
  const auto whole = Sh(kBin + " --method reinforce" + kSmallLearned + " --out " + a);
  if (whole.status == 1 && whole.out.find("needs a build with LibTorch") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(whole.status, 0) << whole.out;
  fs::copy("tests/data/nas_search_old_resume", old, fs::copy_options::recursive);
  std::string config = testing::Slurp(old + "/config.pbtxt");
  const std::string data = fs::absolute("../shared/datasets/nas").string();
  for (size_t at; (at = config.find("@NAS_DATA@")) != std::string::npos;) config.replace(at, 10, data);
  testing::Spit(old + "/config.pbtxt", config);
  const std::string torn = tmp / "torn";
  fs::copy(old, torn, fs::copy_options::recursive);
  const auto r = Sh(kBin + " --resume " + old);
  ASSERT_EQ(r.status, 0) << r.out;
  // (its first updates were computed on the CPU that wrote tests/data, the rest here)
  ExpectSameHistoryUpToLossRounding(testing::Slurp(old + "/metrics.csv"), testing::Slurp(a + "/metrics.csv"));
  EXPECT_EQ(SearchOutcome(old), SearchOutcome(a));
  // The old pair torn apart (state.json naming another latest.ckpt) is still refused.
  auto state = nlohmann::json::parse(testing::Slurp(torn + "/checkpoints/state.json"));
  state["learner_checkpoint"]["fnv1a"] = state["learner_checkpoint"]["fnv1a"].get<uint64_t>() + 1;
  testing::Spit(torn + "/checkpoints/state.json", state.dump());
  const auto refused = Sh(kBin + " --resume " + torn);
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("is not the learner state.json was written with"), std::string::npos) << refused.out;
}

// Brainformer on Fashion-MNIST (tiny trainings, one thread: deterministic): killed after its 3rd
// architecture and resumed, the same rows and best block.
TEST(NasSearchCli, BrainformerResumeAfterKillEndsTheSame) {
  testing::TempDir tmp;
  const std::string run = kBin + " --space brainformer --dataset fashion-mnist --train-steps 3 "
                          "--set brainformer.eval_size=100 --set brainformer.validation_size=200 "
                          "--set brainformer.final_train_steps=4 --set brainformer.width_divisor=64 "
                          "--set brainformer.batch_size=16 --set brainformer.threads=1 --method evolution --budget 6 "
                          "--population 2 --tournament 1 --set checkpoint_minutes=1e-9";
  const auto whole = Sh(run + " --out " + tmp / "a");
  if (whole.status == 1 && (whole.out.find("LibTorch") != std::string::npos || whole.out.find("fashion") != std::string::npos))
    GTEST_SKIP() << whole.out;  // a build without LibTorch, or no Fashion-MNIST files
  ASSERT_EQ(whole.status, 0) << whole.out;
  EXPECT_EQ(Sh(run + " --test-kill-after-checkpoints 3 --out " + tmp / "b").status, 128 + 9);
  const auto r = Sh(kBin + " --resume " + tmp / "b");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(CountLines(testing::Slurp(tmp / "b/metrics.csv")), 7);
  EXPECT_EQ(testing::Slurp(tmp / "b/metrics.csv"), testing::Slurp(tmp / "a/metrics.csv"));
  EXPECT_EQ(testing::Slurp(tmp / "b/best.pbtxt"), testing::Slurp(tmp / "a/best.pbtxt"));
}

// ENAS weight sharing on Fashion-MNIST (a time budget: no same-rows check): killed right after the
// search's checkpoint, resumed with a longer budget, the search goes on from the next epoch (the
// metrics' epochs 0, 1, … once each, the time and counters carried on) and the run ends.
TEST(NasSearchCli, EnasResumeAfterKillGoesOnFromItsCheckpoint) {
  testing::TempDir tmp;
  const std::string out = tmp / "enas";
  const std::string run = kBin + " --space enas_micro --dataset fashion-mnist --max-images 128 --budget-minutes 0.002 "
                          "--final-epochs 0.5 --random-cells 1 --method enas --set checkpoint_minutes=1e-9";
  const auto killed = Sh(run + " --test-kill-after-checkpoints 1 --out " + out);
  if (killed.status == 1) GTEST_SKIP() << killed.out;  // a build without LibTorch, or no Fashion-MNIST files
  ASSERT_EQ(killed.status, 128 + 9) << killed.out;
  ASSERT_TRUE(fs::exists(out + "/checkpoints/latest.ckpt"));
  const auto state = nlohmann::json::parse(testing::Slurp(out + "/checkpoints/state.json"));
  const int first_epochs = state["next_epoch"].get<int>();
  ASSERT_GE(first_epochs, 1);
  EXPECT_EQ(CountLines(testing::Slurp(out + "/metrics.csv")), 1 + first_epochs);
  const auto other = Sh(kBin + " --resume " + out + " --final-epochs 2");
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.out.find("keeps the run's --final-epochs"), std::string::npos) << other.out;
  // The new total budget: past the search time already spent (read from the last row; on a
  // loaded machine the first epoch alone may take seconds), so at least one more epoch starts.
  std::string first_metrics = testing::Slurp(out + "/metrics.csv");
  first_metrics.pop_back();
  const std::string last_row = first_metrics.substr(first_metrics.rfind('\n') + 1);
  const double spent_s = std::stod(last_row.substr(last_row.find(',') + 1));
  const double budget_minutes = std::max(0.03, (spent_s + 2.0) / 60.0);
  char budget[32];
  std::snprintf(budget, sizeof(budget), "%.6f", budget_minutes);
  const auto r = ShSplit(kBin + " --resume " + out + " --budget-minutes " + budget + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const int epochs = j["epochs"].get<int>();
  EXPECT_GT(epochs, first_epochs);
  EXPECT_NEAR(j["options"]["budget_minutes"].get<double>(), budget_minutes, 1e-6);
  EXPECT_GE(j["search_seconds"].get<double>(), std::stod(budget) * 60);
  EXPECT_TRUE(j.contains("enas"));
  const std::string metrics = testing::Slurp(out + "/metrics.csv");
  EXPECT_EQ(CountLines(metrics), 1 + epochs);
  std::istringstream rows(metrics);
  std::string line;
  std::getline(rows, line);  // header
  double last_time = -1;
  for (int e = 0; e < epochs && std::getline(rows, line); ++e) {
    EXPECT_EQ(line.substr(0, line.find(',')), std::to_string(e)) << metrics;
    const double time_s = std::stod(line.substr(line.find(',') + 1));
    EXPECT_GT(time_s, last_time) << "the search time goes on over the restart\n" << metrics;
    last_time = time_s;
  }
}

// ENAS keeps its run state (the flags, the next epoch) inside latest.ckpt too: a state.json of
// another checkpoint beside it (a kill between the two writes) is not what the resume reads — it
// goes on from the checkpoint's own epoch (the metrics' epochs once each), where it used to
// refuse the pair.
TEST(NasSearchCli, EnasResumeReadsTheStateInsideTheCheckpointNotAStaleStateJson) {
  testing::TempDir tmp;
  const std::string out = tmp / "enas";
  const std::string run = kBin + " --space enas_micro --dataset fashion-mnist --max-images 128 --budget-minutes 0.002 "
                          "--final-epochs 0.5 --random-cells 0 --method enas --set checkpoint_minutes=1e-9";
  const auto killed = Sh(run + " --test-kill-after-checkpoints 1 --out " + out);
  if (killed.status == 1) GTEST_SKIP() << killed.out;  // a build without LibTorch, or no Fashion-MNIST files
  ASSERT_EQ(killed.status, 128 + 9) << killed.out;
  auto state = nlohmann::json::parse(testing::Slurp(out + "/checkpoints/state.json"));
  const int first_epochs = state["next_epoch"].get<int>();
  ASSERT_GE(first_epochs, 1);
  state["next_epoch"] = first_epochs + 3;  // another checkpoint's state.json
  state["checkpoint"]["fnv1a"] = state["checkpoint"]["fnv1a"].get<uint64_t>() + 1;
  testing::Spit(out + "/checkpoints/state.json", state.dump());
  const auto r = ShSplit(kBin + " --resume " + out + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const int epochs = nlohmann::json::parse(r.out)["epochs"].get<int>();
  const std::string metrics = testing::Slurp(out + "/metrics.csv");
  EXPECT_EQ(CountLines(metrics), 1 + epochs) << metrics;
  std::istringstream rows(metrics);
  std::string line;
  std::getline(rows, line);  // header
  for (int e = 0; e < epochs && std::getline(rows, line); ++e) EXPECT_EQ(line.substr(0, line.find(',')), std::to_string(e));
}

// Several seeds: killed in the second seed's search, resumed, the same per-seed rows and result.
TEST(NasSearchCli, ResumeOfSeveralSeedsKeepsTheFinishedOnes) {
  testing::TempDir tmp;
  const std::string run = kBin + " --space nb201 --method evolution --budget 12 --seeds 1-3 --set checkpoint_minutes=1e-9";
  ASSERT_EQ(Sh(run + " --out " + tmp / "a").status, 0);
  EXPECT_EQ(Sh(run + " --test-kill-after-checkpoints 17 --out " + tmp / "b").status, 128 + 9);
  EXPECT_EQ(CountLines(testing::Slurp(tmp / "b/metrics.csv")), 1 + 1);  // the first seed's row
  const auto r = Sh(kBin + " --resume " + tmp / "b");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(testing::Slurp(tmp / "b/metrics.csv"), testing::Slurp(tmp / "a/metrics.csv"));
  EXPECT_EQ(SearchOutcome(tmp / "b"), SearchOutcome(tmp / "a"));
  // The finished seeds searched 12 architectures each: the budget stays.
  const auto longer = Sh(kBin + " --resume " + tmp / "b" + " --budget 20");
  EXPECT_EQ(longer.status, 1);
  EXPECT_NE(longer.out.find("keeps its budget (12)"), std::string::npos) << longer.out;
}

TEST(NasSearchCli, ResumeThatDoesNotFitIsOneLineExitOneAndChangesNothing) {
  testing::TempDir tmp;
  const std::string run = tmp / "run";
  ASSERT_EQ(Sh(kBin + " --space nb201 --method evolution --budget 15 --out " + run).status, 0);
  fs::create_directories(tmp / "other");
  testing::Spit(tmp / "other/config.pbtxt", "minutes: 1\n");  // another binary's run
  fs::create_directories(tmp / "torn/checkpoints");
  testing::Spit(tmp / "torn/config.pbtxt", testing::Slurp(run + "/config.pbtxt"));
  testing::Spit(tmp / "torn/checkpoints/state.json", "{\"kind\": \"place-train\"}");
  const auto before = Snapshot(tmp.path());
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--resume " + run + " --space nas_bench_macro", "asked for `space: \"nas_bench_macro\"`"},
           {"--resume " + run + " --method random", "asked for `method: \"random\"`"},
           {"--resume " + run + " --set population=5", "asked for `population: 5`"},
           {"--resume " + run + " --seeds 2", "asked for `seeds: 2`"},
           {"--resume " + run + " --config experiments/configs/enas_controller.pbtxt", "--config with --resume"},
           {"--resume " + run + " --out " + std::string(tmp / "x"), "--out"},
           {"--resume " + std::string(tmp / "other"), "no checkpoints/state.json (not a nas-search run"},
           {"--resume " + std::string(tmp / "torn"), "not a nas-search state file"},
           {"--resume " + std::string(tmp / "nothing"), "nothing to resume"}}) {
    const auto r = Sh(kBin + " " + args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(CountLines(r.out), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": " << r.out;
  }
  EXPECT_EQ(Snapshot(tmp.path()), before);
  EXPECT_FALSE(fs::exists(tmp / "nothing"));
  EXPECT_FALSE(fs::exists(tmp / "x"));
}

TEST(NasSearchCli, NotBuiltYetAndBadInputAreOneLineExitOne) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  testing::Spit(tmp / "bad.csv", "CIFAR10TestAccuracy200Epochs,CIFAR100TestAccuracy200Epochs,ImageNetTestAccuracy200Epochs,"
                                 "ArchitectureString\n1,2,3,|none~0|\n");
  for (const std::string& args :
       {std::string("--method enas"), std::string("--dataset fashion-mnist"),
        std::string("--method ppo --set agent.learning_rate=2"), std::string("--method reinforce --episodes-per-update 0"),
        std::string("--method ppo --set agent.algorithm=reinforce"), std::string("--method reinforce --set reward_scale=0"),
        std::string("--method ppo --set policy.embedding_dim=0"), std::string("--method reinforce --set agent.baseline_decay=1"),
        std::string("--method bayes"), std::string("--budget 0"), std::string("--budget 1.5"),
        std::string("--seeds 5-1"), std::string("--seeds x"), std::string("--space nb202"),
        std::string("--tournament 20"), std::string("--cost-budget nan"), std::string("--table-dataset imagenet"),
        std::string("--nb201-table ") + tmp / "bad.csv", std::string("--set population=1"),
        std::string("--set nosuch=1"), std::string("--space ''"), std::string("--bogus"),
        std::string("--space enas_micro --cost-budget 5"), std::string("--clock cpu")}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(CountLines(r.out), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_NE(Sh(kBin + " --method enas --out " + out).out.find("use --method reinforce"), std::string::npos);
  EXPECT_NE(Sh(kBin + " --nb201-table " + tmp / "bad.csv" + " --out " + out).out.find("bad.csv:2:"), std::string::npos);
  EXPECT_EQ(Sh(kBin + " --help").status, 0);
  // A built-in space's text, which reads back as a file.
  const auto text = ShSplit(kBin + " --print-space enas_micro");
  ASSERT_EQ(text.status, 0) << text.err;
  testing::Spit(tmp / "micro.pbtxt", text.out);
  EXPECT_EQ(Sh(kBin + " --space " + tmp / "micro.pbtxt" + " --budget 5 --out " + tmp / "m" + " >/dev/null 2>&1").status, 0);
  const auto none = Sh(kBin + " --print-space nb202");
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(CountLines(none.out), 1) << none.out;
}

// A --space file that does not parse names the bad token's file:line:col (ParseNasText reads
// through run::ParseTextFormat): `per_earlier: maybe` ending line 8 was "bad.pbtxt:9:" with no
// column. One line, exit 1, no run directory.
TEST(NasSearchCli, BadSpaceFileNamesTheBadTokenOneLineExitOne) {
  testing::TempDir tmp;
  const std::string space = tmp / "bad.pbtxt", out = tmp / "never";
  testing::Spit(space, "name: \"t\"\nnode {\n  name: \"l{i}\"\n  repeat: 2\n  decision {\n    name: \"s{j}\"\n"
                       "    choice: [\"p\", \"q\"]\n    per_earlier: maybe\n  }\n}\n");
  const auto r = ShSplit(kBin + " --space " + space + " --method random --budget 5 --out " + out);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "nas-search: error: " + space +
                       ":8:18: Invalid value for boolean field \"per_earlier\". Value: \"maybe\".\n");
  EXPECT_FALSE(fs::exists(out));
}

// Issue 29 item 7: the default tables are found from the binary's place, so nas-search runs from
// any working directory (here /), and config.pbtxt names them by absolute paths (resumable from anywhere).
TEST(NasSearchCli, RunsFromOutsideTheRepository) {
  testing::TempDir tmp;
  for (const char* space : {"nb201", "nas_bench_macro"}) {
    const std::string out = tmp / space;
    const auto r = ShSplit("cd / && " + kBin + " --space " + space + " --method random --budget 20 --json --out " + out);
    ASSERT_EQ(r.status, 0) << space << ": " << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["best_quality"]["mean"].is_number(), true);
    const std::string config = testing::Slurp(out + "/config.pbtxt");
    EXPECT_NE(config.find("nb201_table: \"/"), std::string::npos) << config;
    EXPECT_NE(config.find("macro_table: \"/"), std::string::npos) << config;
    const auto resumed = Sh("cd / && " + kBin + " --resume " + out + " --budget 25");
    EXPECT_EQ(resumed.status, 0) << resumed.out;
  }
}

// Issue 29 item 5: --budget 1e9 grew by 200 MB/s and ignored Ctrl-C. Now, under a 4 GB memory
// limit, it runs, its logs stay small (thinned beyond 100,000 rows), Ctrl-C ends it within
// seconds with result.json saying what it did; the progress line shows the overall best.
TEST(NasSearchCli, HugeBudgetRunsInBoundedMemoryAndStopsOnCtrlC) {
  testing::TempDir tmp;
  const std::string out = tmp / "nb";
  const auto r = testing::RunAndInterrupt(kBin + " --budget 1000000000 --out " + out, "test -e " + out + "/metrics.csv", 3);
  ASSERT_TRUE(r.ready) << r.out;
  EXPECT_FALSE(r.hung) << r.out;
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_LT(r.seconds_to_exit, 30) << r.out;
  const auto j = nlohmann::json::parse(testing::Slurp(out + "/result.json"));
  EXPECT_EQ(j["stopped_by_signal"], true);
  EXPECT_EQ(j["budget"], 1000000000);
  EXPECT_GT(j["evaluations"].get<double>(), 0);
  EXPECT_LT(j["evaluations"].get<double>(), 1e9);
  EXPECT_LT(fs::file_size(out + "/metrics.csv"), 20u << 20);
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_LT(fs::file_size(e.path().string() + (fs::is_directory(e.path()) ? "/state.json" : "")), 50u << 20) << e.path();
  // The search goes on from its last checkpoint.
  EXPECT_TRUE(fs::exists(out + "/checkpoints/state.json"));
}

// Issue 29 item 5: a search whose estimate is beyond the machine (more than a week, or more
// memory than it has) is refused up front with the estimate, one line, exit 1, no directory.
TEST(NasSearchCli, ASearchBeyondTheMachineIsRefusedWithItsEstimate) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args : {std::string("--method random --budget 1000000000 --seeds 1-100000"),
                                  std::string("--method reinforce --budget 1000 --episodes-per-update 1000000")}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(CountLines(r.out), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("nas-search: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("estimated at"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--allow-slow runs it anyway"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

// Issue 29, "what it must show": every family of nas-search (tables, synthetic spaces, learned
// controllers, Brainformer, trained cells, ENAS weight sharing) at the maximum values its options
// accept, under a 4 GB memory limit, is either refused up front (one line, exit 1) or stopped by
// Ctrl-C within 30 s with exit 0 and "stopped_by_signal": true in result.json.
TEST(NasSearchCli, EveryFamilyAtItsMaximumsIsRefusedOrStopsOnCtrlC) {
  testing::TempDir tmp;
  const bool fashion = fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
  const std::string fm = " --dataset fashion-mnist --max-images 60000";
  struct Case {
    std::string args;
    bool refused;
    bool needs_data;
  };
  const std::vector<Case> cases = {
      {"--space nb201 --method evolution --budget 1000000000 --population 1000000 --tournament 1000000", true, false},
      {"--space nb201 --method evolution --budget 1000000000 --population 1000000", false, false},
      {"--space nb201 --method random --budget 1000000000 --seeds 1-100000", true, false},
      {"--space nas_bench_macro --method random --budget 1000000000", false, false},
      {"--space enas_macro --method evolution --budget 1000000000", false, false},
      {"--space nb201 --method ppo --budget 1000000000", true, false},
      {"--space nb201 --method reinforce --budget 100000 --episodes-per-update 1000000", true, false},
      {"--space nb201 --method reinforce --budget 1000000", false, false},
      {"--space brainformer" + fm + " --method evolution --budget 1000000000 --train-steps 10000000", true, true},
      {"--space brainformer" + fm + " --method random --budget 1 --train-steps 1000000", false, true},
      {"--space enas_micro" + fm + " --method evolution --budget 1000000000 --train-steps 10000000", true, true},
      {"--space enas_micro" + fm + " --method evolution --budget 2 --train-steps 1000000 --final-epochs 10000", false, true},
      {"--space enas_micro" + fm + " --method enas --budget-minutes 1000000 --derive-samples 100000 --derive-images 1000000 "
       "--final-candidates 10000 --random-cells 10000 --final-epochs 10000", false, true},
      {"--space enas_micro" + fm + " --method random --random-cells 10000 --final-epochs 10000", false, true},
  };
  int k = 0;
  for (const Case& c : cases) {
    if (c.needs_data && !fashion) continue;
    const std::string out = tmp / ("run" + std::to_string(k++));
    const std::string cmd = kBin + " " + c.args + " --out " + out;
    if (c.refused) {
      const auto r = Sh("ulimit -v 4000000; " + cmd);
      EXPECT_EQ(r.status, 1) << c.args << ": " << r.out;
      EXPECT_EQ(CountLines(r.out), 1) << c.args << ": " << r.out;
      EXPECT_NE(r.out.find("--allow-slow"), std::string::npos) << c.args << ": " << r.out;
      EXPECT_FALSE(fs::exists(out)) << c.args;
      std::printf("%s: refused: %s", c.args.c_str(), r.out.c_str());
      continue;
    }
    const auto r = testing::RunAndInterrupt(cmd, "test -e " + out + "/config.pbtxt", 3);
    ASSERT_TRUE(r.ready) << c.args << ": " << r.out;
    EXPECT_FALSE(r.exited_before) << c.args << ": " << r.out;
    EXPECT_FALSE(r.hung) << c.args << ": " << r.out;
    EXPECT_EQ(r.status, 0) << c.args << ": " << r.out;
    EXPECT_LT(r.seconds_to_exit, 30) << c.args;
    ASSERT_TRUE(fs::exists(out + "/result.json")) << c.args << ": " << r.out;
    EXPECT_EQ(nlohmann::json::parse(testing::Slurp(out + "/result.json"))["stopped_by_signal"], true) << c.args;
    std::printf("%s: exit %d, %.1f s after SIGINT\n", c.args.c_str(), r.status, r.seconds_to_exit);
  }
}

// Issue 29 item 6: Ctrl-C during the final training of trained cells (and of Brainformer blocks)
// ended the run only when the training was over (110 s later); now within seconds, and
// result.json says it was stopped and that the final training was cut short.
TEST(NasSearchCli, FinalTrainingStopsOnCtrlC) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "no Fashion-MNIST";
  testing::TempDir tmp;
  for (const std::string& args :
       {std::string("--space enas_micro --dataset fashion-mnist --method evolution --budget 2 --train-steps 5 "
                    "--max-images 6000 --final-epochs 10000"),
        std::string("--space brainformer --dataset fashion-mnist --method random --budget 1 --train-steps 5 "
                    "--set brainformer.final_train_steps=10000000")}) {
    const std::string out = tmp / (args.substr(8, 5));
    const auto r = testing::RunAndInterrupt(kBin + " " + args + " --out " + out, "grep -q 'final training' \"$log\"", 3);
    ASSERT_TRUE(r.ready) << args << ": " << r.out;
    EXPECT_FALSE(r.hung) << args << ": " << r.out;
    EXPECT_EQ(r.status, 0) << args << ": " << r.out;
    EXPECT_LT(r.seconds_to_exit, 30) << args;
    const auto j = nlohmann::json::parse(testing::Slurp(out + "/result.json"));
    EXPECT_EQ(j["stopped_by_signal"], true) << args;
    EXPECT_EQ(j["evaluations"], j["budget"]) << args;  // the search was over
    const auto& final = j.contains("enas_training") ? j["enas_training"] : j["brainformer"];
    EXPECT_TRUE(final["best"].value("stopped_by_signal", false) || final["best"].contains("skipped")) << final.dump();
    EXPECT_NE(r.out.find("stopped by signal"), std::string::npos) << r.out;
  }
}

// Issue 29 item 15: the progress line showed the last seed's best; it shows the best over every seed.
TEST(NasSearchCli, ProgressShowsTheBestOverAllSeeds) {
  testing::TempDir tmp;
  const auto r = ShSplit(kBin + " --method random --budget 5 --seeds 1-30 --json --out " + std::string(tmp / "s"));
  ASSERT_EQ(r.status, 0) << r.err;
  const double overall = nlohmann::json::parse(r.out)["best"]["reward"].get<double>();
  const size_t done = r.err.find("random: done");
  ASSERT_NE(done, std::string::npos) << r.err;
  const size_t at = r.err.find("best ", done);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NEAR(std::stod(r.err.substr(at + 5)), overall, 1e-6) << r.err;
}

}  // namespace
}  // namespace placerl
