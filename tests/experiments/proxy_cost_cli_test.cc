// The proxy-cost binary as a user runs it: --json prints exactly the documented keys with
// the reference values, bad input exits non-zero with one `proxy-cost: error: ...` line,
// --write-plc writes a file that scores the same when read back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;

const std::string kBin = std::string(PLACERL_BIN_DIR) + "/proxy-cost";
const std::string kNet = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
const std::string kPlc = "../shared/datasets/chip/ariane133_ng45/initial.plc";

TEST(ProxyCostCli, JsonHasDocumentedKeysAndReferenceValues) {
  const CmdResult r = Sh(kBin + " --json --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 5u);
  for (const char* k : {"hpwl", "wirelength_cost", "density_cost", "congestion_cost", "proxy_cost"}) {
    ASSERT_TRUE(j.contains(k)) << k;
  }
  EXPECT_NEAR(j["wirelength_cost"].get<double>(), 0.049722, 1e-6);
  EXPECT_NEAR(j["density_cost"].get<double>(), 0.606735, 1e-6);
  EXPECT_NEAR(j["congestion_cost"].get<double>(), 0.715673, 1e-6);
  EXPECT_NEAR(j["proxy_cost"].get<double>(), 0.049722 + 0.5 * 0.606735 + 0.5 * 0.715673, 2e-6);
}

TEST(ProxyCostCli, WeightsChangeTheSum) {
  const CmdResult r = Sh(kBin + " --json --weights 1,1,0.5 --netlist " + kNet + " --plc " + kPlc);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["proxy_cost"].get<double>(),
              j["wirelength_cost"].get<double>() + j["density_cost"].get<double>() + 0.5 * j["congestion_cost"].get<double>(), 1e-12);
}

TEST(ProxyCostCli, WrittenPlcScoresTheSame) {
  const std::string out = std::filesystem::temp_directory_path() / ("placerl_cli_" + std::to_string(::getpid()) + ".plc");
  const CmdResult a = Sh(kBin + " --json --netlist " + kNet + " --plc " + kPlc + " --write-plc " + out);
  ASSERT_EQ(a.status, 0) << a.out;
  const CmdResult b = Sh(kBin + " --json --netlist " + kNet + " --plc " + out);
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(nlohmann::json::parse(a.out), nlohmann::json::parse(b.out));
  std::filesystem::remove(out);
}

TEST(ProxyCostCli, BuiltInDefaultAndBench) {
  const CmdResult r = Sh(kBin + " --bench 20");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("built-in synthetic"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("incremental one-macro move"), std::string::npos) << r.out;
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

}  // namespace
