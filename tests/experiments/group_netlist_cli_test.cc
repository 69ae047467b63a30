// The group-netlist binary as a user runs it: a CT group file with --plc gives the header's
// counts (JSON), --metis writes a netlist + initial.plc + groups.final that read back, and
// bad input exits 1 with one `group-netlist: error: ...` line (file:line for group files).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;

const std::string kBin = placerl::testing::BinDir() + "/group-netlist";
const std::string kToy = "../shared/datasets/chip/circuit_training/toy_macro_stdcell/netlist.pb.txt";

std::string TempDir(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("placerl_group_cli_" + std::to_string(::getpid())) / name).string();
}

TEST(GroupNetlistCli, GroupFileWithPlcMatchesHeaderCounts) {
  const std::string d = "../shared/datasets/chip/tilos_flows/ng45_ariane136/";
  const std::string out = TempDir("ng45");
  const CmdResult r = Sh(kBin + " --json --netlist " + d + "netlist_flat.pb.txt.gz --groups " + d +
                         "groups.final.gz --plc " + d + "initial.plc --score " + d + "legalized.plc -o " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["counts_match"].get<bool>());
  EXPECT_EQ(j["counts"]["SOFT_MACROs"].get<int>(), 772);
  EXPECT_EQ(j["counts"]["SOFT_MACRO_PINs"].get<int>(), 10300);
  ASSERT_EQ(j["scored"].size(), 2u);
  EXPECT_NEAR(j["scored"][0]["wirelength_cost"].get<double>(), 0.0478, 0.5e-4);
  EXPECT_NEAR(j["scored"][0]["congestion_cost_off_canvas_nets_unrouted"].get<double>(), 0.7132, 0.5e-4);
  EXPECT_NEAR(j["scored"][1]["congestion_cost"].get<double>(), 0.7276, 0.5e-4);
  EXPECT_TRUE(std::filesystem::exists(out + "/netlist.pb.txt"));
}

TEST(GroupNetlistCli, MetisWritesAPlaceableNetlist) {
  const std::string out = TempDir("toy/nested");  // parent folders are created
  const CmdResult r = Sh(kBin + " --json --netlist " + kToy + " --metis --groups-count 3 --grid 20,10 -o " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["counts"]["STDCELLs"].get<int>(), 0);
  EXPECT_GT(j["counts"]["SOFT_MACROs"].get<int>(), 0);
  for (const char* f : {"netlist.pb.txt", "initial.plc", "groups.final"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  // The written groups reproduce the written netlist.
  const CmdResult again = Sh(kBin + " --json --netlist " + kToy + " --groups " + out + "/groups.final --plc " + out +
                             "/initial.plc -o " + out + "/again");
  ASSERT_EQ(again.status, 0) << again.out;
  const auto k = nlohmann::json::parse(again.out);
  EXPECT_TRUE(k["counts_match"].get<bool>());
  EXPECT_EQ(k["counts"], j["counts"]);
  EXPECT_LT(k["scored"][0]["max_soft_macro_shift"].get<double>(), 0.01);
}

TEST(GroupNetlistCli, ErrorsAreOneLine) {
  const std::string bad = TempDir("bad_groups.txt");
  std::filesystem::create_directories(std::filesystem::path(bad).parent_path());
  std::ofstream(bad) << "0\nseven\n";
  const CmdResult r = Sh(kBin + " --netlist " + kToy + " --groups " + bad + " -o " + TempDir("x"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "group-netlist: error: " + bad + ":2: 'seven' is not a whole number (want one group id per line)\n");
  const CmdResult both = Sh(kBin + " --netlist " + kToy + " --groups " + bad + " --metis -o " + TempDir("x"));
  EXPECT_EQ(both.status, 1);
  EXPECT_EQ(both.out, "group-netlist: error: give exactly one of --groups FILE and --metis\n");
  const CmdResult no_out = Sh(kBin + " --netlist " + kToy + " --metis");
  EXPECT_EQ(no_out.status, 1);
  EXPECT_EQ(no_out.out.rfind("group-netlist: error: ", 0), 0u) << no_out.out;
  const CmdResult range = Sh(kBin + " --netlist " + kToy + " --metis --utilization 0 -o " + TempDir("x"));
  EXPECT_EQ(range.status, 1);
}

}  // namespace
