// The group-netlist binary as a user runs it: a CT group file with --plc gives the header's
// counts (JSON), --metis writes a netlist + initial.plc + groups.final that read back, and
// bad input exits 1 with one `group-netlist: error: ...` line (file:line for group files).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/experiments/interrupt.h"
#include "tests/experiments/run_command.h"

namespace {

using placerl::testing::CmdResult;
using placerl::testing::Sh;

const std::string kBin = placerl::testing::BinDir() + "/group-netlist";
const std::string kToy = "../shared/datasets/chip/circuit_training/toy_macro_stdcell/netlist.pb.txt";

std::string TempDir(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("placerl_group_cli_" + std::to_string(::getpid())) / name).string();
}

// --help is what it was when the binary was flags and library code in one file
// (tests/data/group_netlist_help.txt, written by that binary; its path as "group-netlist").
TEST(GroupNetlistCli, HelpIsUnchanged) {
  EXPECT_EQ(placerl::testing::HelpAsNamed(kBin, "group-netlist"), placerl::testing::Slurp("tests/data/group_netlist_help.txt"));
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

// Issue 29 item 11: a run that failed on a .plc row left an 11 MB netlist.pb.txt in the
// output folder; an output path through a file said "internal: filesystem error" after
// reading the netlist. Outputs are checked before the inputs are read, and written all or
// nothing after the scoring.
TEST(GroupNetlistCli, OutputsCheckedFirstAndWrittenAllOrNothing) {
  const std::string root = TempDir("out11");
  std::filesystem::create_directories(root);
  // Through a file, into a device: refused before the (here missing) netlist is read.
  std::ofstream(root + "/file") << "x\n";
  for (const std::string out : {root + "/file/g6", std::string("/dev/null/g6")}) {
    SCOPED_TRACE(out);
    const CmdResult r = Sh(kBin + " --netlist /nonexistent.pb.txt --metis -o " + out);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.rfind("group-netlist: error: cannot write " + out + "/netlist.pb.txt", 0), 0u) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  // A .plc row that does not fit the clustered netlist: no folder, no file.
  const std::string plc = root + "/bad.plc";
  std::ofstream(plc) << "# Columns : 20  Rows : 10\n# Width : 200  Height : 100\n99999 1 1 N 0\n";
  const CmdResult r = Sh(kBin + " --netlist " + kToy + " --metis --groups-count 3 --plc " + plc + " -o " + root + "/g6");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("group-netlist: error: " + plc + ":3: row for node 99999", 0), 0u) << r.out;
  EXPECT_FALSE(std::filesystem::exists(root + "/g6"));
  // A read-only folder: the reason, before the work.
  std::filesystem::create_directories(root + "/ro");
  std::filesystem::permissions(root + "/ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  if (::access((root + "/ro").c_str(), W_OK) != 0) {  // not as root
    const CmdResult ro = Sh(kBin + " --netlist " + kToy + " --metis --groups-count 3 -o " + root + "/ro/g");
    EXPECT_EQ(ro.status, 1);
    EXPECT_EQ(ro.out, "group-netlist: error: cannot write " + root + "/ro/g/netlist.pb.txt (folder " + root +
                          "/ro: Permission denied)\n");
  }
  std::filesystem::permissions(root + "/ro", std::filesystem::perms::owner_all);
  EXPECT_EQ(placerl::testing::LeftoverTemporaries(root), "");
  std::filesystem::remove_all(root);
}

// The limits sweep: each count option at its largest accepted value, under a 4 GB address
// space: refused with one line, or done / stopped by SIGINT with no partial output.
TEST(GroupNetlistCli, LargestCountsRefusedOrBounded) {
  const std::string root = TempDir("sweep");
  int k = 0;
  for (const std::string opts : {std::string("--groups-count 1000000"), std::string("--max-fanout 1000000000"),
                                 std::string("--fixed-logic-levels 100 --groups-count 3"),
                                 std::string("--grid 100000,100000"), std::string("--imbalance 10 --groups-count 3"),
                                 std::string("--seed 1000000000 --groups-count 3")}) {
    SCOPED_TRACE(opts);
    const std::string out = root + "/o" + std::to_string(k++);
    const CmdResult r = placerl::testing::ShLimited(kBin + " --netlist " + kToy + " --metis " + opts + " -o " + out);
    EXPECT_EQ(placerl::testing::SweepVerdict(r, "group-netlist"), "");
    if (r.status != 0) {
      EXPECT_FALSE(std::filesystem::exists(out)) << r.out;
    }
    EXPECT_EQ(placerl::testing::LeftoverTemporaries(root), "");
  }
  // On a real flat netlist (ng45 Ariane, 11 MB) the largest part count runs for long (METIS
  // on ~100k parts) in about 0.2 GB; Ctrl-C ends it with nothing written.
  {
    const std::string d = "../shared/datasets/chip/tilos_flows/ng45_ariane136/";
    const std::string out = root + "/ng45";
    const CmdResult r = placerl::testing::ShLimited(kBin + " --netlist " + d + "netlist_flat.pb.txt.gz --metis --groups-count 1000000 -o " + out, 5);
    EXPECT_EQ(placerl::testing::SweepVerdict(r, "group-netlist"), "");
    if (r.status != 0) {
      EXPECT_FALSE(std::filesystem::exists(out)) << r.out;
    }
  }
  // The huge grid is refused from the estimate, before the grouping.
  const CmdResult g = Sh(kBin + " --netlist " + kToy + " --metis --grid 100000,100000 -o " + root + "/g");
  EXPECT_EQ(g.status, 1);
  EXPECT_NE(g.out.find("grid 100000 x 100000"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("--allow-slow runs it anyway"), std::string::npos) << g.out;
  std::filesystem::remove_all(root);
}

}  // namespace
