// The proxy-cost binary as a user runs it: --json prints exactly one document with the
// documented keys, the reference values and its inputs; bad input (options, files that are
// not regular files, `--netlist ""`) exits 1 with one `proxy-cost: error: ...` line;
// --write-plc writes a file that scores the same when read back, refuses non-regular
// targets and says why a write failed; warnings carry ids; huge work is refused with an
// estimate.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;
using placerl::testing::ShSplit;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string TempDir() {
  char t[] = "/tmp/placerl_proxy_cli_XXXXXX";
  const char* d = mkdtemp(t);
  return d ? d : "/tmp";
}

const std::string kBin = placerl::testing::BinDir() + "/proxy-cost";
const std::string kNet = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
const std::string kPlc = "../shared/datasets/chip/ariane133_ng45/initial.plc";

TEST(ProxyCostCli, JsonHasDocumentedKeysAndReferenceValues) {
  const auto r = ShSplit(kBin + " --json --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 8u) << j.dump();
  for (const char* k : {"hpwl", "wirelength_cost", "density_cost", "congestion_cost", "proxy_cost", "weights",
                        "off_canvas_nets", "inputs"}) {
    ASSERT_TRUE(j.contains(k)) << k;
  }
  EXPECT_NEAR(j["wirelength_cost"].get<double>(), 0.049722, 1e-6);
  EXPECT_NEAR(j["density_cost"].get<double>(), 0.606735, 1e-6);
  EXPECT_NEAR(j["congestion_cost"].get<double>(), 0.715673, 1e-6);
  EXPECT_NEAR(j["proxy_cost"].get<double>(), 0.049722 + 0.5 * 0.606735 + 0.5 * 0.715673, 2e-6);
  EXPECT_EQ(j["off_canvas_nets"], "clamp");  // TILOS's rule is the default
}

// Google's rule: the 620 nets of initial.plc with a pin off the canvas are not routed
// (docs/grouping.md: congestion 0.712777, header 0.7128); wirelength and density unchanged.
TEST(ProxyCostCli, OffCanvasNetsSkipGivesGooglesCongestion) {
  const auto r = ShSplit(kBin + " --json --off-canvas-nets skip --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["off_canvas_nets"], "skip");
  EXPECT_NEAR(j["congestion_cost"].get<double>(), 0.712777, 1e-6);
  EXPECT_NEAR(j["wirelength_cost"].get<double>(), 0.049722, 1e-6);
  EXPECT_NEAR(j["density_cost"].get<double>(), 0.606735, 1e-6);
  const CmdResult bad = Sh(kBin + " --off-canvas-nets drop --netlist " + kNet + " --plc " + kPlc);
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_EQ(bad.out.rfind("proxy-cost: error: ", 0), 0u) << bad.out;
  EXPECT_NE(bad.out.find("off-canvas-nets"), std::string::npos) << bad.out;
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1);
}

TEST(ProxyCostCli, WeightsChangeTheSum) {
  const auto r = ShSplit(kBin + " --json --weights 1,1,0.5 --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["proxy_cost"].get<double>(),
              j["wirelength_cost"].get<double>() + j["density_cost"].get<double>() + 0.5 * j["congestion_cost"].get<double>(), 1e-12);
}

TEST(ProxyCostCli, WrittenPlcScoresTheSame) {
  const std::string out = std::filesystem::temp_directory_path() / ("placerl_cli_" + std::to_string(::getpid()) + ".plc");
  const auto a = ShSplit(kBin + " --json --netlist " + kNet + " --plc " + kPlc + " --write-plc " + out);
  ASSERT_EQ(a.status, 0) << a.out;
  const auto b = ShSplit(kBin + " --json --netlist " + kNet + " --plc " + out);
  ASSERT_EQ(b.status, 0) << b.out;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["written"], out);
  for (const char* k : {"hpwl", "wirelength_cost", "density_cost", "congestion_cost", "proxy_cost"}) {
    EXPECT_EQ(ja[k], jb[k]) << k;
  }
  // The costs written into the header are named as the second run's inputs.
  EXPECT_NEAR(jb["inputs"]["plc_header_costs"]["density_cost"].get<double>(), ja["density_cost"].get<double>(), 1e-4);
  std::filesystem::remove(out);
}

TEST(ProxyCostCli, SyntheticDesignWrittenAsAFilePairScoresTheSame) {
  const std::string dir = TempDir();
  const auto a = ShSplit(kBin + " --json --seed 7 --synthetic macros=30,soft=20,nets=400,grid=12x10 --write-netlist " +
                         dir + "/netlist.pb.txt --write-plc " + dir + "/initial.plc");
  ASSERT_EQ(a.status, 0) << a.out;
  const auto b = ShSplit(kBin + " --json --netlist " + dir + "/netlist.pb.txt --plc " + dir + "/initial.plc");
  ASSERT_EQ(b.status, 0) << b.out;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["written_netlist"], dir + "/netlist.pb.txt");
  EXPECT_EQ(jb["inputs"]["counts"]["hard_macros"], 30);
  EXPECT_EQ(jb["inputs"]["counts"]["soft_macros"], 20);
  EXPECT_EQ(jb["inputs"]["grid"]["cols"], 12);
  EXPECT_EQ(jb["inputs"]["grid"]["rows"], 10);
  for (const char* k : {"hpwl", "wirelength_cost", "density_cost", "congestion_cost", "proxy_cost"}) {
    EXPECT_NEAR(ja[k].get<double>(), jb[k].get<double>(), 1e-9 * (1 + std::abs(ja[k].get<double>()))) << k;
  }
  // --synthetic is for the built-in netlist only; a bad spec names its item.
  CmdResult r = Sh(kBin + " --netlist " + kNet + " --synthetic macros=3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("leave out --netlist"), std::string::npos) << r.out;
  r = Sh(kBin + " --synthetic grid=3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("grid=3"), std::string::npos) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(ProxyCostCli, BuiltInDefaultAndBench) {
  const CmdResult r = Sh(kBin + " --bench 20");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("built-in synthetic"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("incremental one-macro move"), std::string::npos) << r.out;
}

// --hotspots: the values the congestion cost counts (top 5 % of [V ++ H]: 2·cols·rows·0.05 of
// them) average to the congestion cost, each splits into macro blockage + net routing, the listed
// cells come in descending order and only the first `counted` are marked counted.
TEST(ProxyCostCli, HotspotsAreTheCountedCongestionValues) {
  const auto r = ShSplit(kBin + " --json --hotspots 200 --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("hotspots")) << j.dump();
  const auto& h = j["hotspots"];
  const int cols = j["inputs"]["grid"]["cols"], rows = j["inputs"]["grid"]["rows"];
  const int k = h["counted"];
  EXPECT_EQ(k, static_cast<int>(std::floor(2 * cols * rows * 0.05)));
  EXPECT_EQ(h["counted_horizontal"].get<int>() + h["counted_vertical"].get<int>(), k);
  EXPECT_NEAR(h["counted_mean"].get<double>(), j["congestion_cost"].get<double>(), 1e-9);
  EXPECT_NEAR(h["counted_blockage_mean"].get<double>() + h["counted_routing_mean"].get<double>(),
              h["counted_mean"].get<double>(), 1e-12);
  const auto& cells = h["cells"];
  ASSERT_EQ(cells.size(), 200u);
  double sum = 0, previous = 1e300;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const double v = c["value"];
    EXPECT_LE(v, previous);
    previous = v;
    EXPECT_NEAR(c["blockage"].get<double>() + c["routing"].get<double>(), v, 1e-12);
    EXPECT_GE(c["blockage"].get<double>(), 0);
    EXPECT_TRUE(c["direction"] == "h" || c["direction"] == "v");
    EXPECT_GE(c["row"].get<int>(), 0);
    EXPECT_LT(c["row"].get<int>(), rows);
    EXPECT_LT(c["col"].get<int>(), cols);
    EXPECT_EQ(c["counted"].get<bool>(), static_cast<int>(i) < k);
    if (static_cast<int>(i) < k) sum += v;
  }
  EXPECT_NEAR(sum / k, j["congestion_cost"].get<double>(), 1e-9);
  // Text: one summary line and one line per listed cell.
  const CmdResult t = Sh(kBin + " --hotspots 3 --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("the congestion cost counts " + std::to_string(k) + " values"), std::string::npos) << t.out;
  for (const std::string bad : {"--hotspots -1", "--hotspots x", "--hotspots 2000000"}) {
    const CmdResult b = Sh(kBin + " " + bad);
    EXPECT_EQ(b.status, 1) << bad << b.out;
    EXPECT_EQ(Lines(b.out), 1) << b.out;
  }
}

TEST(ProxyCostCli, BadInputIsOneLineAndNonZero) {
  for (const std::string args : {std::string("--netlist /nonexistent/x.pb.txt"),
                                 "--netlist " + kNet + " --plc tests/data/proxy_golden/README.md",
                                 std::string("--weights 1,x,3"), std::string("--no-such-flag")}) {
    SCOPED_TRACE(args);
    const CmdResult r = Sh(kBin + " " + args);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_FALSE(r.out.empty());
  }
  const CmdResult r = Sh(kBin + " --netlist /nonexistent/x.pb.txt");
  EXPECT_EQ(r.out.rfind("proxy-cost: error: /nonexistent/x.pb.txt", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
}

// `proxy-cost --json --bench` printed two JSON documents.
TEST(ProxyCostCli, JsonIsOneDocumentNamingItsInputs) {
  const auto r = ShSplit(kBin + " --json --bench 3 --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // throws on a second document
  EXPECT_EQ(j["bench"]["iterations"], 3);
  EXPECT_GT(j["bench"]["full_evaluation_us"].get<double>(), 0);
  const auto& in = j["inputs"];
  EXPECT_EQ(in["netlist"], kNet);
  EXPECT_EQ(in["plc"], kPlc);
  EXPECT_EQ(in["grid"]["cols"], 24);
  EXPECT_EQ(in["grid"]["rows"], 21);
  EXPECT_DOUBLE_EQ(in["canvas"]["width"].get<double>(), 1433.406);
  EXPECT_DOUBLE_EQ(in["plc_header_costs"]["congestion_cost"].get<double>(), 0.7128);
  EXPECT_EQ(in["counts"]["hard_macros"], 133);
  // Warnings go to stderr with their id: Ariane's initial.plc has macros above the canvas.
  EXPECT_NE(r.err.find("proxy-cost: warning [PLC-0002]: " + kPlc + ": 27 macros"), std::string::npos) << r.err;
  // The synthetic default names itself.
  const auto s = ShSplit(kBin + " --json");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(s.out)["inputs"]["netlist"], "synthetic (seed 1)");
  EXPECT_TRUE(nlohmann::json::parse(s.out)["inputs"]["plc"].is_null());
}

// `--netlist ""` (an unset shell variable) scored the built-in synthetic chip.
TEST(ProxyCostCli, EmptyFileOptionIsAnError) {
  for (const std::string opt : {"--netlist", "--plc", "--write-plc"}) {
    const CmdResult r = Sh(kBin + " " + opt + " ''");
    EXPECT_EQ(r.status, 1) << opt << r.out;
    EXPECT_EQ(r.out.rfind("proxy-cost: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("empty value"), std::string::npos) << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
}

TEST(ProxyCostCli, NonRegularInputFilesAreRefused) {
  const std::string dir = TempDir();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--netlist /dev/zero", "/dev/zero: is a character device; a regular file is expected"},
      {"--netlist /dev/urandom", "/dev/urandom: is a character device"},
      {"--netlist " + dir, dir + ": is a directory; a regular file is expected"},
      {"--netlist " + kNet + " --plc " + dir, dir + ": is a directory"},  // was basic_filebuf::underflow error
  };
  for (const auto& [args, what] : cases) {
    SCOPED_TRACE(args);
    const CmdResult r = Sh("timeout 20 " + kBin + " " + args);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("proxy-cost: error: " + what, 0), 0u) << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
  std::filesystem::remove_all(dir);
}

TEST(ProxyCostCli, WritePlcRefusesNonRegularTargetsAndSaysWhy) {
  const std::string dir = TempDir();
  // A FIFO stands for a device node (was turned into a regular file) and a symlink (was replaced).
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir + "/elsewhere.plc", dir + "/link.plc");
  for (const std::string target : {dir + "/fifo", dir + "/link.plc", dir}) {
    SCOPED_TRACE(target);
    const CmdResult r = Sh(kBin + " --write-plc " + target);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("proxy-cost: error: refusing to replace " + target + ": it is ", 0), 0u) << r.out;
    EXPECT_EQ(Lines(r.out), 1);
  }
  EXPECT_TRUE(std::filesystem::is_fifo(dir + "/fifo"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.plc"));
  // A write that fails (file size limit): the reason, and no temporary left behind.
  const CmdResult big = Sh("trap '' XFSZ; ulimit -f 8; " + kBin + " --netlist " + kNet + " --plc " + kPlc +
                           " --json --write-plc " + dir + "/out.plc 2>&1 | grep -v warning");
  EXPECT_EQ(big.out, "proxy-cost: error: cannot write " + dir + "/out.plc (File too large)\n");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fifo", "link.plc"}));
  std::filesystem::remove_all(dir);
}

TEST(ProxyCostCli, NumericOptionsAreValidated) {
  for (const std::string args : {"--bench -1", "--bench 1.5", "--bench nan", "--bench 1e3", "--bench 99999999999",
                                 "--seed -1", "--seed x", "--weights 1,inf,1", "--weights 1,-0.5,1",
                                 "--weights 1,nan,1", "--weights 1,2"}) {
    SCOPED_TRACE(args);
    const CmdResult r = Sh(kBin + " " + args);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("proxy-cost: error: ", 0), 0u) << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
}

// A 4096×4096 grid with smoothing 1000 ran for minutes at 2.3 GB without a word.
TEST(ProxyCostCli, HugeWorkIsRefusedWithAnEstimate) {
  const std::string dir = TempDir();
  const std::string plc = dir + "/huge.plc";
  ASSERT_EQ(Sh("sed -e 's/^# Columns : .*/# Columns : 4096  Rows : 4096/' -e 's/^# Smoothing factor : .*/# Smoothing factor : 1000/' " +
               kPlc + " > " + plc).status, 0);
  const auto r = ShSplit(kBin + " --netlist " + kNet + " --plc " + plc);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("proxy-cost: error: grid 4096 x 4096 with smoothing range 1000: a full evaluation takes about "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-slow runs it anyway"), std::string::npos) << r.err;
  // A large smoothing on a small grid is capped by the grid and runs at once, as before.
  ASSERT_EQ(Sh("sed -e 's/^# Smoothing factor : .*/# Smoothing factor : 1000000/' " + kPlc + " > " + plc).status, 0);
  const auto c = ShSplit(kBin + " --json --netlist " + kNet + " --plc " + plc);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(nlohmann::json::parse(c.out)["inputs"]["smoothing_range_used"], 23);
  std::filesystem::remove_all(dir);
}

TEST(ProxyCostCli, PlcRowErrorsNameTheirLine) {
  const std::string dir = TempDir();
  const std::string plc = dir + "/bad.plc";
  ASSERT_EQ(Sh("printf '# Columns : 4  Rows : 4\\n\\n0 1 1 - 1\\n99999 1 1 N 0\\n' > " + plc).status, 0);
  const CmdResult r = Sh(kBin + " --netlist " + kNet + " --plc " + plc);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("proxy-cost: error: " + plc + ":4: row for node 99999", 0), 0u) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 29 item 2: `head -c 41346 initial.plc > t.plc` read the cut last row
// "19882 240.781 10" as y = 10 and printed another cost (0.710876 for 0.710926) without a
// word. Now one line naming the file, the line and the cut.
TEST(ProxyCostCli, PlcCutInItsLastRowIsRefused) {
  const std::string dir = TempDir();
  const std::string t = dir + "/t.plc";
  ASSERT_EQ(Sh("head -c 41346 " + kPlc + " > " + t).status, 0);
  const int lines = std::stoi(Sh("wc -l < " + t).out) + 1;  // the cut row is the line after the last newline
  const CmdResult r = Sh(kBin + " --netlist " + kNet + " --plc " + t);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "proxy-cost: error: " + t + ":" + std::to_string(lines) +
                       ": no newline at end of file: the last line ('19882 240.781 10') may be truncated, and a cut "
                       "row reads as other numbers; end the file with a newline if the line is complete\n");
  std::filesystem::remove_all(dir);
}

// The limits sweep: --bench at its largest accepted value is refused from the estimate; a
// bench that is accepted ends at Ctrl-C, and --write-plc/--write-netlist are written both or
// neither.
TEST(ProxyCostCli, LargestBenchRefusedOrStoppedBySigint) {
  const std::string dir = TempDir();
  using placerl::testing::ShLimited;
  CmdResult r = ShLimited(kBin + " --bench 1000000000 --write-plc " + dir + "/o.plc");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out.rfind("proxy-cost: error: grid 16 x 16 with smoothing range", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("1000000001 full evaluations take about"), std::string::npos) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.plc"));
  // Allowed anyway: it runs until SIGINT (2 s), within the memory limit.
  r = ShLimited(kBin + " --bench 1000000000 --allow-slow", 2);
  EXPECT_EQ(r.status, placerl::testing::kEndedBySigint) << r.out;
  EXPECT_EQ(placerl::testing::SweepVerdict(r, "proxy-cost"), "");
  // The synthetic netlist's counts at their largest.
  for (const std::string syn : {"macros=1000000", "soft=1000000", "ports=1000000", "nets=10000000", "grid=4096x4096"}) {
    SCOPED_TRACE(syn);
    r = ShLimited(kBin + " --synthetic " + syn + " --write-plc " + dir + "/s.plc", 5);
    EXPECT_EQ(placerl::testing::SweepVerdict(r, "proxy-cost"), "");
    if (r.status != 0) {
      EXPECT_FALSE(std::filesystem::exists(dir + "/s.plc")) << r.out;
    }
    std::filesystem::remove(dir + "/s.plc");
  }
  // A refused second target: neither file is written.
  std::filesystem::create_directories(dir + "/n.pb.txt");
  r = Sh(kBin + " --write-plc " + dir + "/p.plc --write-netlist " + dir + "/n.pb.txt");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.plc"));
  EXPECT_EQ(placerl::testing::LeftoverTemporaries(dir), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
