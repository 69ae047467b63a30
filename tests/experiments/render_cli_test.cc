// The render binary as a user runs it: --json prints one document (output, costs, inputs);
// options are validated; `--netlist ""` is an error; a target that is not a regular file is
// refused before any work; failed runs leave no temporary file behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

const std::string kBin = placerl::testing::BinDir() + "/render";
const std::string kDir = "../shared/datasets/chip/circuit_training/sample_clustered/";

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class RenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/placerl_render_cli_XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<std::string> Listing() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir_;
};

TEST_F(RenderCli, JsonSummaryIsOneDocument) {
  const auto r = ShSplit(kBin + " --json --netlist " + kDir + "netlist.pb.txt --plc " + kDir + "initial.plc -o " + dir_ + "/p.svg");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");  // small picture: no warning
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"], dir_ + "/p.svg");
  EXPECT_GT(j["proxy_cost"].get<double>(), 0);
  EXPECT_EQ(j["inputs"]["plc"], kDir + "initial.plc");
  EXPECT_GT(j["inputs"]["grid"]["cols"].get<int>(), 0);
  EXPECT_EQ(Listing(), std::vector<std::string>{"p.svg"});
}

TEST_F(RenderCli, BadOptionsAreOneLineErrors) {
  const std::string out = " -o " + dir_ + "/p.svg";
  for (const std::string args : {"--size 0" + out, "--size 99999" + out, "--size 1.5" + out, "--size nan" + out,
                                 "--seed -3" + out, "--netlist ''" + out, "--plc ''" + out, std::string("-o ''"),
                                 "--map heat" + out, "--netlist /dev/zero" + out}) {
    SCOPED_TRACE(args);
    const CmdResult r = Sh(kBin + " " + args);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("render: error: ", 0), 0u) << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
  EXPECT_TRUE(Listing().empty());
}

TEST_F(RenderCli, NonRegularTargetsAreRefused) {
  ASSERT_EQ(mkfifo((dir_ + "/pipe.png").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir_ + "/real.svg", dir_ + "/link.svg");
  for (const std::string target : {dir_ + "/pipe.png", dir_ + "/link.svg"}) {
    const CmdResult r = Sh(kBin + " -o " + target);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("render: error: refusing to replace " + target, 0), 0u) << r.out;
  }
  EXPECT_TRUE(std::filesystem::is_fifo(dir_ + "/pipe.png"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/link.svg"));
  EXPECT_EQ(Listing(), (std::vector<std::string>{"link.svg", "pipe.png"}));
}

// SIGTERM while the PNG is being written left a 0-byte temporary. The test waits until the
// temporary exists, then signals: the process still dies of the signal (exit 143 in the
// shell) and nothing is left behind. (SIGINT: files_test, as a background job of a shell
// ignores it.)
TEST_F(RenderCli, InterruptLeavesNoTemporary) {
  for (const std::string sig : {"TERM"}) {
    SCOPED_TRACE(sig);
    const CmdResult r = Sh("(" + kBin + " --netlist " + kDir + "netlist.pb.txt --size 6000 -o " + dir_ +
                           "/p.png >/dev/null 2>&1 & pid=$!; seen=0; for i in $(seq 1 6000); do "
                           "if ls " + dir_ + " | grep -q '[.]tmp[.]'; then seen=1; break; fi; sleep 0.01; done; "
                           "kill -" + sig + " $pid; wait $pid; echo \"rc=$? seen=$seen\")");
    EXPECT_NE(r.out.find("seen=1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rc=143"), std::string::npos) << r.out;
    for (const std::string& f : Listing()) EXPECT_EQ(f.find(".tmp."), std::string::npos) << f;
    std::filesystem::remove(dir_ + "/p.png");
  }
}

// The limits sweep: --size at its largest (20000 px: a 1.6 GB PNG surface) under a 4 GB
// address space draws, fails with one line, or ends at Ctrl-C; no temporary, no partial file.
TEST_F(RenderCli, LargestSizeBoundedAndStoppedBySigint) {
  for (const std::string ext : {"png", "svg"}) {
    SCOPED_TRACE(ext);
    const std::string out = dir_ + "/big." + ext;
    const CmdResult r = placerl::testing::ShLimited(kBin + " --netlist " + kDir + "netlist.pb.txt --nets --size 20000 -o " + out, 3);
    // A warning line (RND-0001) may come before the error line.
    EXPECT_TRUE(r.status == 0 || r.status == 1 || r.status == placerl::testing::kEndedBySigint) << r.status << r.out;
    if (r.status == 1) {
      EXPECT_NE(r.out.find("render: error: "), std::string::npos) << r.out;
    }
    if (r.status != 0) {
      EXPECT_FALSE(std::filesystem::exists(out)) << r.out;
    }
    EXPECT_EQ(placerl::testing::LeftoverTemporaries(dir_), "");
    std::filesystem::remove(out);
  }
}

}  // namespace
