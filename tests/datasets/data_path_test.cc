// Default data found from anywhere (issue 29 item 7): a path relative to the repository root is
// found from the working directory, and from any other directory through the running binary's
// place (<repo>/build/tests/x → <repo>), made absolute; a missing one comes back unchanged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "datasets/util/data_path.h"

namespace placerl {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTable = "../shared/datasets/nas/nats_bench_tss.csv";

TEST(DataPath, FoundFromTheRootAndFromAnywhereElse) {
  if (!fs::exists(kTable)) GTEST_SKIP() << "no shared NAS table next to the repository";
  const std::string here = FindDefaultData(kTable);
  EXPECT_TRUE(fs::path(here).is_absolute()) << here;
  EXPECT_TRUE(fs::equivalent(here, kTable)) << here;
  const fs::path root = fs::current_path();
  ASSERT_EQ(::chdir("/"), 0);
  const std::string elsewhere = FindDefaultData(kTable);
  ASSERT_EQ(::chdir(root.c_str()), 0);
  EXPECT_TRUE(fs::path(elsewhere).is_absolute()) << elsewhere;
  EXPECT_TRUE(fs::exists(elsewhere)) << elsewhere;
  EXPECT_TRUE(fs::equivalent(elsewhere, here)) << elsewhere;
}

TEST(DataPath, AbsoluteOrMissingPathsComeBackUnchanged) {
  EXPECT_EQ(FindDefaultData("/no/such/file.csv"), "/no/such/file.csv");
  EXPECT_EQ(FindDefaultData("../no/such/file.csv"), "../no/such/file.csv");
  EXPECT_EQ(DefaultDataCandidates("/etc/hostname"), std::vector<std::string>{"/etc/hostname"});
  const auto c = DefaultDataCandidates("../shared/x.csv");
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c.front(), "../shared/x.csv");
  EXPECT_NE(c.back().find("share/placerl/shared/x.csv"), std::string::npos) << c.back();
}

}  // namespace
}  // namespace placerl
