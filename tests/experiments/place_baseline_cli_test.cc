// place-baseline as a user runs it: a short run on the built-in chip writes the whole run
// directory (config, best.plc with its costs, pictures, metrics, TensorBoard events, result)
// and one JSON document; bad options and configs fail with one line and exit 1 and leave no
// directory; a non-empty directory is refused without --force.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <cmath>
#include <csignal>

#include "experiments/lib/metrics_csv.h"
#include "search/chip/learned_proposer.h"
#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"
#include "tests/experiments/test_dir.h"

namespace placerl {
namespace {

using testing::Sh;
namespace fs = std::filesystem;

const std::string kBin = placerl::testing::BinDir() + "/place-baseline";

int CountLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(PlaceBaselineCli, WritesTheRunDirectoryAndOneJsonDocument) {
  testing::TempDir tmp;
  const std::string out = tmp / "runs/sa";  // parents are created
  const auto r = Sh("(" + kBin + " --method sa --minutes 0.01 --seed 3 --json --set sa.fd_every_steps=2 --out " + out +
                    " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // exactly one document
  EXPECT_EQ(j["method"], "sa");
  EXPECT_EQ(j["seed"], 3);
  EXPECT_GT(j["best"]["proxy_cost"].get<double>(), 0);
  EXPECT_EQ(j["legal"], true);  // hard macros inside the canvas, no overlap
  for (const char* f : {"config.pbtxt", "best.plc", "best.png", "curve.png", "metrics.csv", "result.json"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  bool events = false;
  for (const auto& e : fs::directory_iterator(out))
    events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  EXPECT_TRUE(events);
  std::ifstream cfg(out + "/config.pbtxt");
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("fd_every_steps: 2"), std::string::npos) << text;
  EXPECT_NE(text.find("off_canvas_nets: \"clamp\""), std::string::npos) << text;  // TILOS's rule by default
  // The .plc scores to the reported cost.
  const auto p = Sh(placerl::testing::BinDir() + "/proxy-cost --json --seed 1 --plc " + out + "/best.plc");
  ASSERT_EQ(p.status, 0) << p.out;
  const auto pj = nlohmann::json::parse(p.out.substr(p.out.find('{')));
  EXPECT_NEAR(pj["proxy_cost"].get<double>(), j["best"]["proxy_cost"].get<double>(), 1e-6);
  // The same directory again is refused; --force replaces it.
  const auto again = Sh(kBin + " --method random --minutes 0.005 --out " + out);
  EXPECT_EQ(again.status, 1) << again.out;
  EXPECT_EQ(CountLines(again.out), 1) << again.out;
  EXPECT_EQ(Sh(kBin + " --method random --minutes 0.005 --force --out " + out + " >/dev/null 2>&1").status, 0);
}

// An annealing run's metrics.csv logs the schedule as it ran: the temperature (from t_max down
// towards t_min, never rising without a learned schedule) and the accepted moves (never more than
// the moves, never falling), the last row agreeing with result.json, and result.json what its
// proposals did per tenth of the run; other methods have none of these.
TEST(PlaceBaselineCli, SaMetricsLogTheTemperatureAndTheAcceptedMoves) {
  testing::TempDir tmp;
  const auto r = Sh("(" + kBin + " --method sa-soft --minutes 10 --set max_evaluations=300000 --seed 2 --json --out " +
                    (tmp / "sa") + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const run::MetricsTable m = run::ReadMetricsCsv(tmp / "sa/metrics.csv");
  const int t = m.Find("charts/temperature"), a = m.Find("charts/accepted"), e = m.Find("charts/evaluations");
  ASSERT_GE(t, 0);
  ASSERT_GE(a, 0);
  ASSERT_GE(e, 0);
  ASSERT_FALSE(m.rows.empty());
  for (size_t i = 0; i < m.rows.size(); ++i) {
    EXPECT_LE(m.rows[i][t], 5e-5 * (1 + 1e-12)) << i;  // sa.t_max
    EXPECT_GE(m.rows[i][t], 5e-8 * (1 - 1e-12)) << i;  // sa.t_min
    EXPECT_LE(m.rows[i][a], m.rows[i][e]) << i;
    if (i > 0) {
      EXPECT_LE(m.rows[i][t], m.rows[i - 1][t]) << i;
      EXPECT_GE(m.rows[i][a], m.rows[i - 1][a]) << i;
    }
  }
  EXPECT_EQ(m.rows.back()[a], j["accepted"].get<double>());
  EXPECT_GT(m.rows.back()[a], 0);
  EXPECT_LT(m.rows.back()[t], 5e-5);  // it cooled
  // result.json's anneal_profile: per tenth, hard- and soft-macro moves apart, every evaluated
  // proposal counted once, the fractions of each group summing to one, and the raising proposals
  // accepted less often at the end than at the start (it cooled).
  const auto& profile = j["anneal_profile"];
  ASSERT_EQ(profile.size(), 10u) << j.dump();
  int64_t evaluated = 0;
  double previous_t = 1;
  auto uphill_accepted = [](const nlohmann::json& tenth) {
    double up = 0, acc = 0;
    for (const char* g : {"hard", "soft"}) {
      const double n = tenth[g]["evaluated"].get<double>() * tenth[g]["uphill"].get<double>();
      up += n;
      acc += n * tenth[g]["uphill_accepted"].get<double>();
    }
    return acc / up;
  };
  for (const auto& tenth : profile) {
    EXPECT_LE(tenth["temperature"].get<double>(), previous_t);
    previous_t = tenth["temperature"].get<double>();
    for (const char* g : {"hard", "soft"}) {
      const auto& k = tenth[g];
      evaluated += k["evaluated"].get<int64_t>();
      if (k["evaluated"].get<int64_t>() == 0) continue;
      EXPECT_NEAR(k["downhill"].get<double>() + k["unchanged"].get<double>() + k["uphill"].get<double>(), 1.0, 1e-9) << g;
      EXPECT_GE(k["uphill_accepted"].get<double>(), 0) << g;
      EXPECT_LE(k["uphill_accepted"].get<double>(), 1) << g;
      EXPECT_GT(k["uphill_increase"].get<double>(), 0) << g;
    }
    // the current placement at the end of the tenth: the congestion's net-routing part within it
    const auto& p = tenth["placement"];
    EXPECT_GT(p["wirelength_cost"].get<double>(), 0);
    EXPECT_GE(p["congestion_routing"].get<double>(), 0);
    EXPECT_LE(p["congestion_routing"].get<double>(), p["congestion_cost"].get<double>());
  }
  EXPECT_EQ(evaluated, j["evaluations"].get<int64_t>());
  EXPECT_GT(profile[0]["soft"]["evaluated"].get<int64_t>(), 0);  // sa-soft moves soft macros
  EXPECT_GT(profile[0]["hard"]["evaluated"].get<int64_t>(), 0);
  EXPECT_LT(uphill_accepted(profile[9]), uphill_accepted(profile[0]));
  EXPECT_FALSE(profile[0].contains("control"));  // no learned controller in sa-soft
  EXPECT_FALSE(j.contains("control_first_log_share"));
  ASSERT_EQ(Sh("(" + kBin + " --method greedy --minutes 0.01 --out " + (tmp / "greedy") + " >/dev/null 2>&1)").status, 0);
  const run::MetricsTable g = run::ReadMetricsCsv(tmp / "greedy/metrics.csv");
  EXPECT_LT(g.Find("charts/temperature"), 0);
  EXPECT_LT(g.Find("charts/accepted"), 0);
  std::ifstream greedy_result(tmp / "greedy/result.json");
  EXPECT_FALSE(nlohmann::json::parse(greedy_result).contains("anneal_profile"));
}

// With a learned acceptance controller and its state term, the anneal profile shows per tenth the
// controller's factor on the temperature, the acceptance it aims at and its state d, and result.json
// the first window's log share of improving hard-macro moves (d's reference).
TEST(PlaceBaselineCli, TheAnnealProfileShowsTheAcceptanceController) {
  testing::TempDir tmp;
  const std::string file = fs::absolute("experiments/results/learned_sa/control_state_without_asap7_1m_proposer.json");
  const auto r = Sh("(" + kBin + " --method sa-soft --set sa.proposer=learned --set sa.proposer_lr=0 --set sa.proposer_weights=" +
                    file + " --minutes 10 --set max_evaluations=200000 --seed 2 --json --out " + (tmp / "c") + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("control_first_log_share")) << r.out;
  const double first = j["control_first_log_share"].get<double>();
  // log((improved + 0.5) / (hard + 1)) of a 256-proposal window: within [log(0.5 / 257), log(256.5 / 257)]
  EXPECT_GE(first, std::log(0.5 / 257) - 1e-12);
  EXPECT_LE(first, std::log(256.5 / 257) + 1e-12);
  const auto& profile = j["anneal_profile"];
  ASSERT_EQ(profile.size(), 10u);
  bool moved = false;
  for (const auto& tenth : profile) {
    ASSERT_TRUE(tenth.contains("control")) << tenth.dump();
    const auto& c = tenth["control"];
    EXPECT_GT(c["factor"].get<double>(), 0);
    EXPECT_GE(c["target"].get<double>(), search::AcceptanceController::kMinTarget);
    EXPECT_LE(c["target"].get<double>(), search::AcceptanceController::kMaxTarget);
    EXPECT_TRUE(std::isfinite(c["state"].get<double>()));
    moved = moved || c["factor"].get<double>() != 1.0;
  }
  EXPECT_TRUE(moved);  // the controller acted on the temperature
  // the last tenth's factor is the handover's fall back to the schedule: exp(u·(1 − p)/(1 − h)) → 1 at p = 1
  EXPECT_NEAR(profile[9]["control"]["factor"].get<double>(), 1.0, 0.05);
}

// --clock cpu: the budget is this process's CPU time, recorded in the resolved config.
TEST(PlaceBaselineCli, CpuClockBudget) {
  testing::TempDir tmp;
  const std::string out = tmp / "cpu";
  const auto r = Sh("(" + kBin + " --method random --minutes 0.005 --clock cpu --json --out " + out + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["evaluations"].get<double>(), 0);
  EXPECT_GE(j["seconds"].get<double>(), 0.3);  // it ran until 0.3 s of CPU time were spent
  std::ifstream cfg(out + "/config.pbtxt");
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("clock: \"cpu\""), std::string::npos) << text;
}

// --method sa-soft is sa with sa-soft's four settings written out (the same run, to the bit), and
// --set still overrides one of them.
TEST(PlaceBaselineCli, SaSoftIsANamedPresetOfSa) {
  testing::TempDir tmp;
  const std::string common = " --minutes 10 --seed 2 --set max_evaluations=3000 --json";
  const auto preset = Sh("(" + kBin + " --method sa-soft" + common + " --out " + (tmp / "preset") + " 2>/dev/null)");
  const auto spelled = Sh("(" + kBin + " --method sa --set sa.init=snapped --set sa.fd_every_steps=0 --set sa.soft_move_prob=0.5"
                                 " --set sa.soft_move_cells=1" + common + " --out " + (tmp / "spelled") + " 2>/dev/null)");
  const auto plain = Sh("(" + kBin + " --method sa" + common + " --out " + (tmp / "plain") + " 2>/dev/null)");
  ASSERT_EQ(preset.status, 0) << preset.out;
  ASSERT_EQ(spelled.status, 0) << spelled.out;
  ASSERT_EQ(plain.status, 0) << plain.out;
  const auto a = nlohmann::json::parse(preset.out), b = nlohmann::json::parse(spelled.out), c = nlohmann::json::parse(plain.out);
  EXPECT_EQ(a["method"], "sa");
  EXPECT_EQ(a["best"]["proxy_cost"].get<double>(), b["best"]["proxy_cost"].get<double>());
  EXPECT_NE(a["best"]["proxy_cost"].get<double>(), c["best"]["proxy_cost"].get<double>());  // the settings matter
  std::ifstream cfg(tmp / "preset/config.pbtxt");
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("init: \"snapped\""), std::string::npos) << text;
  EXPECT_NE(text.find("soft_move_prob: 0.5"), std::string::npos) << text;
  const auto over = Sh("(" + kBin + " --method sa-soft --set sa.soft_move_prob=0.25 --minutes 10 --seed 2 --set max_evaluations=300"
                              " --verbose --json --out " + (tmp / "over") + " 2>&1 >/dev/null)");
  EXPECT_NE(over.out.find("soft_move_prob: 0.25"), std::string::npos) << over.out;
}

TEST(PlaceBaselineCli, BadInputIsOneLineExitOneAndLeavesNoDirectory) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  for (const std::string& args :
       {std::string("--method tabu"), std::string("--minutes -1"), std::string("--minutes nan"),
        std::string("--set sa.t_max=-1"), std::string("--set sa.nosuch=1"), std::string("--netlist ''"),
        std::string("--netlist /nonexistent/netlist.pb.txt"), std::string("--set chip.reward=often"),
        std::string("--set chip.off_canvas_nets=drop"), std::string("--clock gpu"), std::string("--set clock=gpu"),
        std::string("--set chip.fd_steps_scale=0"), std::string("--set chip.fd_steps_scale=2"),
        std::string("--config /nonexistent.pbtxt"), std::string("--bogus")}) {
    const auto r = Sh(kBin + " " + args + " --out " + out);
    EXPECT_EQ(r.status, 1) << args << ": " << r.out;
    EXPECT_EQ(CountLines(r.out), 1) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("place-baseline: error: ", 0), 0u) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_EQ(Sh(kBin + " --help").status, 0);
}

// A bad value in a --config file names its own line and column: protobuf's parser reports a
// bad boolean at the token after it, so `refine_cd: maybe` on line 2 was "cfg.pbtxt:3:1" (and
// 2:17, past the value, without a final newline). One line, exit 1, no directory.
TEST(PlaceBaselineCli, ABadConfigValueNamesItsLine) {
  testing::TempDir tmp;
  const std::string out = tmp / "never";
  const struct {
    const char* text;
    const char* where;  // after the file's path
  } cases[] = {
      {"# a config\nrefine_cd: maybe\nminutes: 0.01\n", ":2:12: Invalid value for boolean field \"refine_cd\". Value: \"maybe\"."},
      {"# a config\nrefine_cd: maybe\n", ":2:12: Invalid value for boolean field \"refine_cd\". Value: \"maybe\"."},
      {"# a config\nrefine_cd: maybe", ":2:12: Invalid value for boolean field \"refine_cd\". Value: \"maybe\"."},
      {"method: \"sa\"\nsa {\n  t_max: 1\n  bogus: 2\n}\n",
       ":4:3: Message type \"placerl.config.SaConfig\" has no field named \"bogus\"."},
  };
  int n = 0;
  for (const auto& k : cases) {
    const std::string cfg = tmp / ("cfg" + std::to_string(n++) + ".pbtxt");
    testing::Spit(cfg, k.text);
    const auto r = Sh(kBin + " --config " + cfg + " --out " + out);
    EXPECT_EQ(r.status, 1) << k.text << ": " << r.out;
    EXPECT_EQ(r.out, "place-baseline: error: " + cfg + k.where + "\n") << k.text;
    EXPECT_FALSE(fs::exists(out)) << k.text;
  }
}

// sa.proposer=learned: the run writes its proposer (proposer.json) and what each kind did; a
// second run starts from that file; a bad file or setting is one line, exit 1, no directory.
TEST(PlaceBaselineCli, LearnedProposerIsWrittenAndContinuedFrom) {
  testing::TempDir tmp;
  const std::string first = tmp / "first", second = tmp / "second";
  const std::string common = " --method sa --minutes 0.01 --clock cpu --set sa.init=random --set sa.fd_every_steps=0"
                             " --set sa.soft_move_prob=0.5 --set sa.proposer=learned --json";
  const auto r = Sh("(" + kBin + common + " --set sa.proposer_lr=0.5 --out " + first + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("proposer")) << r.out;
  EXPECT_GT(j["proposer"]["kinds"]["soft_pull"]["proposed"].get<int64_t>(), 0);
  EXPECT_GT(j["proposer"]["updates"].get<int64_t>(), 0);
  ASSERT_TRUE(fs::exists(first + "/proposer.json"));
  std::ifstream in(first + "/proposer.json");
  const auto w = nlohmann::json::parse(in);
  EXPECT_EQ(w["format"], "placerl-sa-proposer");
  ASSERT_EQ(w["trained_on"].size(), 1u);
  const auto again = Sh("(" + kBin + common + " --set sa.proposer_weights=" + first + "/proposer.json --out " + second +
                        " 2>/dev/null)");
  ASSERT_EQ(again.status, 0) << again.out;
  std::ifstream in2(second + "/proposer.json");
  const auto w2 = nlohmann::json::parse(in2);
  EXPECT_EQ(w2["trained_on"], w["trained_on"]);  // the same design again is listed once
  EXPECT_GT(w2["proposals_trained"].get<int64_t>(), w["proposals_trained"].get<int64_t>());  // the amount grows
  // proposer_prior=mixture without weights starts from the uniform proposer's mixture: soft shifts
  // half the time (soft_move_prob 0.5), each of TILOS's five a tenth (before the floor's share).
  const auto mixed = Sh("(" + kBin + common + " --set sa.proposer_lr=0 --set sa.proposer_prior=mixture --out " +
                        (tmp / "mixed") + " 2>/dev/null)");
  ASSERT_EQ(mixed.status, 0) << mixed.out;
  const auto m = nlohmann::json::parse(mixed.out)["proposer"]["kinds"];
  EXPECT_NEAR(m["soft_shift"]["probability_start"].get<double>(), 0.5 / 1.02, 1e-9);
  EXPECT_NEAR(m["swap"]["probability_start"].get<double>(), 0.1 / 1.02, 1e-9);
  EXPECT_NEAR(m["hard_pull"]["probability_end"].get<double>(), 0.01 / 1.02, 1e-9);  // frozen
  std::ofstream(tmp / "bad.json") << "{\"format\": \"placerl-sa-proposer\", \"version\": 1, \"kinds\": [";
  for (const std::string& args : {std::string("--set sa.proposer=clever"), std::string("--set sa.proposer_lr=-1"),
                                  std::string("--set sa.proposer_weights=" + (tmp / "bad.json")),
                                  std::string("--set sa.proposer=learned --set sa.proposer_weights=" + (tmp / "bad.json")),
                                  std::string("--set sa.proposer=learned --set sa.proposer_weights=/nonexistent.json"),
                                  std::string("--set sa.proposer=learned --set sa.proposer_prior=often")}) {
    const auto bad = Sh(kBin + " --method sa --minutes 0.01 " + args + " --out " + (tmp / "never"));
    EXPECT_EQ(bad.status, 1) << args << ": " << bad.out;
    EXPECT_EQ(CountLines(bad.out), 1) << args << ": " << bad.out;
    EXPECT_FALSE(fs::exists(tmp / "never")) << args;
  }
}

// --method learned-sa is sa-soft with the shipped proposer, frozen: the same run, to the bit, as
// those settings spelled out with the committed file; from another directory too (embedded).
TEST(PlaceBaselineCli, LearnedSaIsSaSoftWithTheShippedProposer) {
  testing::TempDir tmp;
  const std::string file = fs::absolute("experiments/results/learned_sa/schedule_control_state_late_four_flows_proposer.json");
  const std::string common = " --minutes 10 --set max_evaluations=20000 --seed 3 --json";
  const auto named = Sh("(cd " + tmp.path() + " && " + fs::absolute(kBin).string() + " --method learned-sa" +
                        common + " --out named 2>/dev/null)");
  ASSERT_EQ(named.status, 0) << named.out;
  const auto spelled = Sh("(" + kBin + " --method sa-soft --set sa.proposer=learned --set sa.proposer_lr=0"
                          " --set sa.proposer_weights=" + file + common + " --out " + (tmp / "spelled") + " 2>/dev/null)");
  ASSERT_EQ(spelled.status, 0) << spelled.out;
  const auto a = nlohmann::json::parse(named.out), b = nlohmann::json::parse(spelled.out);
  EXPECT_EQ(a["best"]["proxy_cost"].get<double>(), b["best"]["proxy_cost"].get<double>());
  EXPECT_EQ(a["evaluations"].get<int64_t>(), b["evaluations"].get<int64_t>());
  EXPECT_EQ(a["accepted"].get<int64_t>(), b["accepted"].get<int64_t>());
  EXPECT_EQ(a["proposer"]["kinds"].dump(), b["proposer"]["kinds"].dump());
  const std::string config = testing::Slurp(tmp / "named/config.pbtxt");
  EXPECT_NE(config.find("proposer_weights: \"shipped\""), std::string::npos) << config;
  // The preset is a starting point: --set still overrides it (here: learning during the run).
  const auto learning = Sh("(" + kBin + " --method learned-sa --set sa.proposer_lr=0.1" + common + " --out " +
                           (tmp / "learning") + " 2>/dev/null)");
  ASSERT_EQ(learning.status, 0) << learning.out;
  EXPECT_GT(nlohmann::json::parse(learning.out)["proposer"]["updates"].get<int64_t>(), 0);
}

// chip.off_canvas_nets=skip scores with Google's rule: on Ariane133's initial.plc (620 nets
// with a pin off the canvas) FD keeps those pins where they are, and the reported cost is
// what proxy-cost gives the written best.plc with --off-canvas-nets skip, not with clamp.
TEST(PlaceBaselineCli, OffCanvasNetsSkipIsTheCostOfTheRun) {
  testing::TempDir tmp;
  const std::string net = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
  const std::string plc = "../shared/datasets/chip/ariane133_ng45/initial.plc";
  const std::string out = tmp / "fd";
  const auto r = Sh("(" + kBin + " --method fd --minutes 0.05 --json --set chip.off_canvas_nets=skip --netlist " + net +
                    " --plc " + plc + " --out " + out + " 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.out;
  const double reported = nlohmann::json::parse(r.out)["best"]["proxy_cost"].get<double>();
  auto score = [&](const std::string& rule) {
    const auto p = Sh("(" + placerl::testing::BinDir() + "/proxy-cost --json --off-canvas-nets " + rule + " --netlist " +
                      net + " --plc " + out + "/best.plc 2>/dev/null)");
    EXPECT_EQ(p.status, 0) << p.out;
    return nlohmann::json::parse(p.out)["proxy_cost"].get<double>();
  };
  EXPECT_NEAR(score("skip"), reported, 1e-6);
  EXPECT_GT(score("clamp") - reported, 1e-4);  // the off-canvas nets do count when clamped
}


// ------------------------------------------------------------ what a run reports

namespace report {

using testing::FileLines;
using testing::RunAndInterrupt;
const std::string kAriane = "../shared/datasets/chip/ariane133_ng45/";
constexpr long kAddressSpaceKb = 2000000;  // `ulimit -v` (KiB): no LibTorch here

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// No complete placement (Ariane without its .plc: the default 10×10 grid) was exit 2 printing
// "best proxy cost 0.000000" (greedy) or exit 1 (sa: an exception): every method now gives the
// shared infeasible report — exit 2, one stderr line, result.json / --json "feasible": false
// with null costs, no best.plc.
TEST(PlaceBaselineCliReport, NoCompletePlacementIsTheSharedInfeasibleReportForEveryMethod) {
  testing::TempDir tmp;
  for (const std::string method : {"random", "greedy", "sa", "cd"}) {
    SCOPED_TRACE(method);
    const std::string out = tmp / method;
    const auto r = testing::ShSplit(kBin + " --method " + method + " --netlist " + kAriane +
                                    "netlist.pb.txt.gz --minutes 0.01 --json --out " + out);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("place-baseline: infeasible: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("best proxy cost 0.000000"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j["feasible"].get<bool>());
    EXPECT_TRUE(j["best"]["proxy_cost"].is_null());
    EXPECT_FALSE(j["infeasible"].get<std::string>().empty());
    EXPECT_EQ(j, ReadJson(out + "/result.json"));
    EXPECT_FALSE(fs::exists(out + "/best.plc"));
  }
  const auto t = testing::ShSplit(kBin + " --method greedy --netlist " + kAriane + "netlist.pb.txt.gz --minutes 0.01 --out " +
                                  (tmp / "text"));
  EXPECT_EQ(t.status, 2);
  EXPECT_NE(t.out.find("no feasible solution; wrote "), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("best.plc"), std::string::npos) << t.out;
  // A feasible run says so.
  const auto ok = testing::ShSplit(kBin + " --method greedy --minutes 0.01 --json --out " + (tmp / "ok"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(nlohmann::json::parse(ok.out)["feasible"].get<bool>());
}

// --minutes at its maximum (a week): every method runs with bounded memory and stops within
// seconds of Ctrl-C with its best written and the stop reported (or ends by itself first).
TEST(PlaceBaselineCliReport, TheMaximumBudgetStopsOnCtrlCForEveryMethod) {
  testing::TempDir tmp;
  for (const std::string method : {"random", "greedy", "sa", "fd", "cd"}) {
    SCOPED_TRACE(method);
    const std::string out = tmp / method;
    const auto r = RunAndInterrupt(kBin + " --method " + method + " --netlist " + kAriane + "netlist.pb.txt.gz --plc " +
                                       kAriane + "initial.plc --minutes 10080 --json --out " + out,
                                   [&] { return FileLines(out + "/metrics.csv") >= 3; }, 120, SIGINT, 30, kAddressSpaceKb);
    ASSERT_TRUE(r.ended) << "still running 30 s after Ctrl-C";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = ReadJson(out + "/result.json");
    // A run never claims a signal that was not sent.
    if (j["stopped_by_signal"].get<bool>()) {
      EXPECT_TRUE(r.signalled) << j.dump();
    }
    if (method != "fd" && method != "cd") {
      // These never end by themselves within a week: the signal stopped them and they say so.
      EXPECT_TRUE(r.signalled) << method << " ended by itself";
      EXPECT_TRUE(j["stopped_by_signal"].get<bool>()) << j.dump();
    }
    // fd and cd may end by themselves on a loaded machine between the harness's check and its
    // signal (the signal then lands after result.json was written): either ending is right.
    EXPECT_EQ(j["budget_seconds"].get<double>(), 10080 * 60.0);
    EXPECT_LT(j["seconds"].get<double>(), 600);
    EXPECT_TRUE(fs::exists(out + "/best.plc"));
  }
}

TEST(PlaceBaselineCliReport, HelpNamesTheDeviceEnvironment) {
  const auto r = Sh(kBin + " --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--env device --help"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("coordinate descent"), std::string::npos) << r.out;
}

}  // namespace report
}  // namespace
}  // namespace placerl
