// IDX files and the Fashion-MNIST loader on tiny files the test writes (raw and gzipped), the
// malformed ones (bad magic, type, sizes, labels), and the real set when Debian's
// dataset-fashion-mnist is installed.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "datasets/nas/idx.h"
#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::nas {
namespace {

std::string Idx(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string s = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) s.push_back(static_cast<char>((d >> shift) & 0xff));
  s.append(data.begin(), data.end());
  return s;
}

void WriteGz(const std::string& path, const std::string& content) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
  gzclose(f);
}

std::string ParseErrorOf(const std::string& path) {
  try {
    ReadIdx(path);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 0);
    return e.reason();
  }
  return "";
}

TEST(Idx, ReadsRawAndGzippedFiles) {
  testing::TempDir tmp;
  const std::vector<uint8_t> pixels = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255};
  testing::Spit(tmp / "a.idx", Idx(0x08, {3, 2, 2}, pixels));
  WriteGz(tmp / "a.idx.gz", Idx(0x08, {3, 2, 2}, pixels));
  for (const std::string& name : {std::string("a.idx"), std::string("a.idx.gz")}) {
    const IdxArray a = ReadIdx(tmp / name);
    EXPECT_EQ(a.dims, (std::vector<int32_t>{3, 2, 2})) << name;
    EXPECT_EQ(a.data, pixels) << name;
  }
}

TEST(Idx, MalformedFilesSayWhatIsWrong) {
  testing::TempDir tmp;
  testing::Spit(tmp / "short", std::string("\0\0", 2));
  EXPECT_NE(ParseErrorOf(tmp / "short").find("too short"), std::string::npos);
  testing::Spit(tmp / "magic", "PK\x08\x01" + std::string(4, '\0'));
  EXPECT_NE(ParseErrorOf(tmp / "magic").find("magic"), std::string::npos);
  testing::Spit(tmp / "float", Idx(0x0D, {1}, {0, 0, 0, 0}));
  EXPECT_NE(ParseErrorOf(tmp / "float").find("unsigned byte"), std::string::npos);
  testing::Spit(tmp / "cut", Idx(0x08, {2, 2}, {1, 2, 3}));
  EXPECT_NE(ParseErrorOf(tmp / "cut").find("4 bytes of data, the file has 3"), std::string::npos);
  testing::Spit(tmp / "long", Idx(0x08, {1}, {1, 2}));
  EXPECT_NE(ParseErrorOf(tmp / "long").find("the file has 2"), std::string::npos);
  testing::Spit(tmp / "zero", Idx(0x08, {0}, {}));
  EXPECT_NE(ParseErrorOf(tmp / "zero").find("size 0"), std::string::npos);
  testing::Spit(tmp / "header", Idx(0x08, {}, {}).substr(0, 3) + std::string("\x02\0\0", 3));
  EXPECT_NE(ParseErrorOf(tmp / "header").find("cut short"), std::string::npos);
}

TEST(FashionMnist, LoadsASplitAndChecksImagesAgainstLabels) {
  testing::TempDir tmp;
  WriteGz(tmp / "t10k-images-idx3-ubyte.gz", Idx(0x08, {2, 2, 3}, std::vector<uint8_t>(12, 7)));
  testing::Spit(tmp / "t10k-labels-idx1-ubyte", Idx(0x08, {2}, {9, 0}));
  const ImageSet s = LoadFashionMnist(tmp.path(), "test");
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.cols, 3);
  EXPECT_EQ(s.labels, (std::vector<uint8_t>{9, 0}));
  EXPECT_THROW(LoadFashionMnist(tmp.path(), "train"), IoError);  // no train files
  EXPECT_THROW(LoadFashionMnist(tmp.path(), "valid"), ConfigError);
  testing::Spit(tmp / "t10k-labels-idx1-ubyte", Idx(0x08, {2}, {9, 10}));
  EXPECT_THROW(LoadFashionMnist(tmp.path(), "test"), ParseError);  // label 10
  testing::Spit(tmp / "t10k-labels-idx1-ubyte", Idx(0x08, {3}, {1, 2, 3}));
  EXPECT_THROW(LoadFashionMnist(tmp.path(), "test"), ParseError);  // 3 labels for 2 images
}

TEST(FashionMnist, TheDebianPackageWhenInstalled) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const ImageSet train = LoadFashionMnist(kFashionMnistDir, "train"), test = LoadFashionMnist(kFashionMnistDir, "test");
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(test.count, 10000);
  EXPECT_EQ(train.rows, 28);
  EXPECT_EQ(train.cols, 28);
  std::vector<int> per_class(10, 0);
  for (uint8_t l : train.labels) ++per_class[l];
  EXPECT_EQ(per_class, std::vector<int>(10, 6000));  // Fashion-MNIST's training set is balanced
  EXPECT_EQ(train.labels[0], 9);                      // the first training image is an ankle boot
}

}  // namespace
}  // namespace placerl::nas
