// Input files (regular files only, size limits) and output files (refusals of non-regular
// targets, errno text, parent folders, all-or-nothing groups, cleanup at SIGTERM) and the
// warning sink (datasets/util/files.h, warnings.h).
#include "datasets/util/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"

namespace placerl {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/placerl_files_test_XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return dir_ + "/" + name; }
  // Names in the folder (recursively), to check nothing else was left behind.
  std::vector<std::string> Listing() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) out.push_back(e.path().lexically_relative(dir_).string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir_;
};

template <typename E, typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO ERROR";
}

TEST_F(FilesTest, NonRegularInputsAreRefusedBeforeReading) {
  // A directory gave "basic_filebuf::underflow error"; /dev/zero read until out of memory.
  EXPECT_NE(ErrorOf<IoError>([&] { ReadFile(dir_); }).find("is a directory; a regular file is expected"), std::string::npos);
  EXPECT_NE(ErrorOf<IoError>([] { ReadFile("/dev/zero", 1 << 20); }).find("/dev/zero: is a character device"), std::string::npos);
  EXPECT_NE(ErrorOf<IoError>([] { ReadFile("/dev/urandom", 1 << 20); }).find("character device"), std::string::npos);
  ASSERT_EQ(mkfifo(P("fifo").c_str(), 0600), 0);
  EXPECT_NE(ErrorOf<IoError>([&] { ReadFile(P("fifo")); }).find("is a FIFO"), std::string::npos);  // would block
  EXPECT_NE(ErrorOf<IoError>([&] { ReadFile(P("missing")); }).find("No such file or directory"), std::string::npos);
  EXPECT_NE(ErrorOf<IoError>([] { ReadFile(""); }).find("empty file name"), std::string::npos);
}

TEST_F(FilesTest, SizeLimitsRawAndDecompressed) {
  // Raw: a (sparse) file one byte over the default limit is refused from its size alone.
  {
    std::ofstream(P("big")).put('x');
    fs::resize_file(P("big"), kMaxInputBytes + 1);
    const std::string e = ErrorOf<ParseError>([&] { ReadFile(P("big")); });
    EXPECT_NE(e.find(":0: file is 1073741825 bytes, more than the limit of 1073741824 bytes"), std::string::npos) << e;
  }
  std::ofstream(P("small")) << std::string(100, 'a');
  EXPECT_EQ(ReadFile(P("small"), 100).size(), 100u);
  EXPECT_NE(ErrorOf<ParseError>([&] { ReadFile(P("small"), 99); }).find("limit of 99 bytes"), std::string::npos);
  // Decompressed: 1 MiB of zeros gzip to ~1 KiB.
  const std::string zeros(1 << 20, '\0');
  gzFile gz = gzopen(P("zeros.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size()));
  gzclose(gz);
  EXPECT_EQ(ReadFile(P("zeros.gz")), zeros);
  EXPECT_NE(ErrorOf<ParseError>([&] { ReadFile(P("zeros.gz"), 1 << 19); }).find("decompressed size exceeds the limit"), std::string::npos);
}

TEST_F(FilesTest, WriterRefusesNonRegularTargets) {
  // A symlink: the link was replaced by a regular file (and its target left stale).
  std::ofstream(P("real")) << "keep";
  fs::create_symlink(P("real"), P("link"));
  EXPECT_NE(ErrorOf<IoError>([&] { WriteFileAtomic(P("link"), "new"); }).find("refusing to replace " + P("link") + ": it is a symbolic link"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(P("link")));
  EXPECT_EQ(ReadFile(P("real")), "keep");
  // A FIFO stands for device nodes (a --write-plc /dev/null turned the device into a file).
  ASSERT_EQ(mkfifo(P("fifo").c_str(), 0600), 0);
  EXPECT_NE(ErrorOf<IoError>([&] { WriteFileAtomic(P("fifo"), "x"); }).find("it is a FIFO, not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_fifo(P("fifo")));
  fs::create_directory(P("d"));
  EXPECT_NE(ErrorOf<IoError>([&] { WriteFileAtomic(P("d"), "x"); }).find("it is a directory"), std::string::npos);
  EXPECT_EQ(Listing(), (std::vector<std::string>{"d", "fifo", "link", "real"}));
}

TEST_F(FilesTest, WriteErrorsSayWhy) {
  EXPECT_NE(ErrorOf<IoError>([&] { WriteFileAtomic(P("no/such/dir/x.txt"), "x"); }).find("(No such file or directory)"), std::string::npos);
  // A write that fails half-way (file size limit): "File too large", and no temporary left.
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit lim = old;
  lim.rlim_cur = 4096;
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  const std::string e = ErrorOf<IoError>([&] { WriteFileAtomic(P("big.txt"), std::string(100000, 'x')); });
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(e.find("cannot write " + P("big.txt") + " (File too large)"), std::string::npos) << e;
  EXPECT_TRUE(Listing().empty());
}

TEST_F(FilesTest, ParentFoldersCreatedWhenAskedAndRemovedOnFailure) {
  WriteOptions mk;
  mk.create_parent_dirs = true;
  WriteFileAtomic(P("a/b/c.txt"), "abc", mk);
  EXPECT_EQ(ReadFile(P("a/b/c.txt")), "abc");
  // A group whose second target cannot be written: nothing new remains, not even the folders.
  fs::create_directories(P("x/y/blocked"));
  const std::string e = ErrorOf<IoError>([&] {
    WriteFilesAtomic({{P("n/m/one.txt"), "1"}, {P("n/m/two.txt"), "2"}, {P("x/y/blocked"), "3"}}, mk);
  });
  EXPECT_NE(e.find("it is a directory"), std::string::npos) << e;
  EXPECT_EQ(Listing(), (std::vector<std::string>{"a", "a/b", "a/b/c.txt", "x", "x/y", "x/y/blocked"}));
  // The whole group, when it can be written.
  WriteFilesAtomic({{P("n/m/one.txt"), "1"}, {P("n/two.txt"), "2"}}, mk);
  EXPECT_EQ(ReadFile(P("n/m/one.txt")), "1");
  EXPECT_EQ(ReadFile(P("n/two.txt")), "2");
  EXPECT_THROW(WriteFilesAtomic({{P("dup"), "1"}, {P("dup"), "2"}}), IoError);
  EXPECT_FALSE(fs::exists(P("dup")));
}

TEST_F(FilesTest, TemporaryRemovedWhenInterrupted) {
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      PendingOutput out(P("picture.png"), ".png");
      std::ofstream(out.temp_path()) << "half a picture";  // as cairo would, mid-write
      raise(sig);
      _exit(0);  // not reached: the handler re-raises with the default action
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status));  // the signal still ends the process as before
    if (WIFSIGNALED(status)) EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(Listing().empty()) << Listing().front();
  }
}

TEST_F(FilesTest, CheckOutputPathBeforeTheWork) {
  EXPECT_NO_THROW(CheckOutputPath(P("new.txt")));
  EXPECT_NE(ErrorOf<IoError>([&] { CheckOutputPath(P("no/x.txt")); }).find("No such file or directory"), std::string::npos);
  WriteOptions mk;
  mk.create_parent_dirs = true;
  EXPECT_NO_THROW(CheckOutputPath(P("no/x.txt"), mk));
  std::ofstream(P("file")) << "x";
  EXPECT_NE(ErrorOf<IoError>([&] { CheckOutputPath(P("file/x.txt"), mk); }).find("is not a directory"), std::string::npos);
  EXPECT_NE(ErrorOf<IoError>([&] { CheckOutputPath(dir_); }).find("it is a directory"), std::string::npos);
  EXPECT_EQ(Listing(), std::vector<std::string>{"file"});  // checks create nothing
}

// Issue 29 item 11: an output on a read-only file system was found only when the write
// failed, after the work. CheckOutputPath now asks whether the folder may be written in. A
// read-only tmpfs where mounting is allowed (root in a container), else a folder without
// write permission (not root), else skipped.
TEST_F(FilesTest, CheckOutputPathRefusesAFolderItCannotWriteIn) {
  const std::string ro = P("ro");
  fs::create_directories(ro);
  bool mounted = std::system(("mount -t tmpfs -o ro,size=64k tmpfs " + ro + " 2>/dev/null").c_str()) == 0;
  if (!mounted) {
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    if (::access(ro.c_str(), W_OK) == 0) {
      fs::permissions(ro, fs::perms::owner_all);
      GTEST_SKIP() << "neither a read-only mount nor a read-only folder can be made here";
    }
  }
  WriteOptions mk;
  mk.create_parent_dirs = true;
  const std::string reason = mounted ? "Read-only file system" : "Permission denied";
  EXPECT_EQ(ErrorOf<IoError>([&] { CheckOutputPath(ro + "/x.txt"); }),
            "cannot write " + ro + "/x.txt (folder " + ro + ": " + reason + ")");
  EXPECT_EQ(ErrorOf<IoError>([&] { CheckOutputPath(ro + "/a/b/x.txt", mk); }),
            "cannot write " + ro + "/a/b/x.txt (folder " + ro + ": " + reason + ")");
  if (mounted) {
    EXPECT_EQ(std::system(("umount " + ro).c_str()), 0);
  } else {
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_F(FilesTest, PendingOutputCommitsOrCleansUp) {
  {
    PendingOutput out(P("kept.txt"));
    out.Write("yes");
    out.Commit();
  }
  { PendingOutput out(P("dropped.txt")); out.Write("no"); }  // destroyed uncommitted
  EXPECT_EQ(Listing(), std::vector<std::string>{"kept.txt"});
  EXPECT_EQ(ReadFile(P("kept.txt")), "yes");
}

// A line-based file cut in its last row: the last line without a newline is found (its
// number and text) and refused unless the reader's rule says it is whole.
TEST(TruncatedLastLine, FoundAndRefusedWithItsLine) {
  std::string_view last;
  EXPECT_EQ(UnterminatedLastLine("a\nb\n"), 0);
  EXPECT_EQ(UnterminatedLastLine(""), 0);
  EXPECT_EQ(UnterminatedLastLine("a\n  \t"), 0);  // only blanks after the last newline
  EXPECT_EQ(UnterminatedLastLine("a\nb\n12 3", &last), 3);
  EXPECT_EQ(last, "12 3");
  EXPECT_EQ(UnterminatedLastLine("12", &last), 1);
  EXPECT_NO_THROW(RefuseTruncatedLastLine("1\n2\n", "f.txt"));
  try {
    RefuseTruncatedLastLine("1\n2\n19882 240.781 10", "f.txt");
    ADD_FAILURE() << "a cut last line was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(std::string(e.what()),
              "f.txt:3: no newline at end of file: the last line ('19882 240.781 10') may be truncated, and a cut "
              "row reads as other numbers; end the file with a newline if the line is complete");
  }
  // The reader's rule: a line it knows to be whole is read.
  EXPECT_NO_THROW(RefuseTruncatedLastLine("x\n}", "f.pbtxt", [](std::string_view l) { return l == "}"; }));
  EXPECT_THROW(RefuseTruncatedLastLine("x\n} 1", "f.pbtxt", [](std::string_view l) { return l == "}"; }), ParseError);
  // Control bytes: binary data, left to the reader to report as such.
  EXPECT_NO_THROW(RefuseTruncatedLastLine(std::string("a\n\x1b[2J\x01", 7), "f.txt"));
}

TEST(Warnings, CapturedWithIdsAndRestored) {
  ScopedWarningCapture outer;
  {
    ScopedWarningCapture inner;
    Warn("TEST-0001", "first");
    Warn("TEST-0002", "second");
    EXPECT_EQ(inner.ids(), (std::vector<std::string>{"TEST-0001", "TEST-0002"}));
    EXPECT_EQ(inner.warnings()[1].message, "second");
  }
  Warn("TEST-0003", "after");
  {
    ScopedWarningSilence quiet;
    Warn("TEST-0004", "dropped");
  }
  EXPECT_EQ(outer.ids(), std::vector<std::string>{"TEST-0003"});
}

}  // namespace
}  // namespace placerl
