// The bookshelf-to-ct binary as a user runs it: the output folder is created with its
// parents; the two files are written all or nothing; a failed run leaves no folder behind;
// --grid is validated; --json prints one document.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/experiments/run_command.h"

namespace {

namespace fs = std::filesystem;
using placerl::testing::CmdResult;
using placerl::testing::Sh;
using placerl::testing::ShSplit;

const std::string kBin = placerl::testing::BinDir() + "/bookshelf-to-ct";
const std::string kAux = "../shared/datasets/chip/ibm01_bookshelf/ibm01.aux";

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class BookshelfToCtCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/placerl_bks_cli_XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Listing() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) out.push_back(e.path().lexically_relative(dir_).string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir_;
};

// `-o out/ibm01` failed without `out/`.
TEST_F(BookshelfToCtCli, CreatesNestedOutputFolderAndPrintsOneJson) {
  const auto r = ShSplit(kBin + " --json --aux " + kAux + " -o " + dir_ + "/out/ibm01");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out), 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["written"], (std::vector<std::string>{dir_ + "/out/ibm01/netlist.pb.txt", dir_ + "/out/ibm01/initial.plc"}));
  EXPECT_EQ(j["bookshelf"]["nodes"], 12752);
  EXPECT_EQ(j["grid"]["cols"], 10);
  EXPECT_NE(r.err.find("bookshelf-to-ct: warning [BKS-0001]: 278 nets"), std::string::npos) << r.err;
  EXPECT_EQ(Listing(), (std::vector<std::string>{"out", "out/ibm01", "out/ibm01/initial.plc", "out/ibm01/netlist.pb.txt"}));
}

TEST_F(BookshelfToCtCli, FailedRunsLeaveNothingBehind) {
  // Bad input: no folder created (it was created before reading).
  CmdResult r = Sh(kBin + " --aux /nonexistent/x.aux -o " + dir_ + "/a/b");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("bookshelf-to-ct: error: /nonexistent/x.aux: cannot open", 0), 0u) << r.out;
  EXPECT_TRUE(Listing().empty());
  // One of the two targets cannot be replaced: neither file is written.
  fs::create_directories(dir_ + "/o/initial.plc");
  r = Sh(kBin + " --aux " + kAux + " -o " + dir_ + "/o");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("refusing to replace " + dir_ + "/o/initial.plc: it is a directory"), std::string::npos) << r.out;
  EXPECT_EQ(Listing(), (std::vector<std::string>{"o", "o/initial.plc"}));
  // The output "folder" is a file.
  Sh("touch " + dir_ + "/f");
  r = Sh(kBin + " --aux " + kAux + " -o " + dir_ + "/f/x");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("is not a directory"), std::string::npos) << r.out;
}

TEST_F(BookshelfToCtCli, GridIsValidated) {
  for (const std::string g : {"0,10", "10", "10,10,10", "-1,5", "1.5,2", "99999999999,1", "4097,1", "a,b", "10,,10", "''"}) {
    SCOPED_TRACE(g);
    const CmdResult r = Sh(kBin + " --aux " + kAux + " -o " + dir_ + "/g --grid " + g);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("bookshelf-to-ct: error: ", 0), 0u) << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
  EXPECT_TRUE(Listing().empty());
}

}  // namespace
