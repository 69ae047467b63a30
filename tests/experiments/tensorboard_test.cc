// Tests of the TensorBoard event files: CRC-32C on standard vectors, the TFRecord framing,
// a write/read round trip of scalars, and detection of corrupted bytes and truncated files.
#include "experiments/lib/tensorboard.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "datasets/proto/tensorboard.pb.h"
#include "datasets/util/errors.h"
#include "experiments/lib/crc32c.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

using placerl::testing::Slurp;
using placerl::testing::Spit;
using placerl::testing::TempDir;

TEST(Crc32c, StandardVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 (iSCSI) B.4 test vectors.
  unsigned char zeros[32] = {0}, ones[32], inc[32], dec[32];
  for (int i = 0; i < 32; ++i) {
    ones[i] = 0xff;
    inc[i] = static_cast<unsigned char>(i);
    dec[i] = static_cast<unsigned char>(31 - i);
  }
  EXPECT_EQ(Crc32c(zeros, 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones, 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(inc, 32), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(dec, 32), 0x113FDB5Cu);
}

TEST(Crc32c, ExtendsAcrossPieces) {
  EXPECT_EQ(Crc32c("6789", 4, Crc32c("12345", 5)), 0xE3069283u);
}

TEST(Crc32c, MaskIsTfRecordsAndInvertible) {
  const uint32_t crc = 0xE3069283u;
  EXPECT_EQ(MaskCrc32c(crc), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
  for (uint32_t v : {0u, 1u, 0xffffffffu, 0x12345678u, crc}) EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(v)), v);
}

TEST(TfRecord, Framing) {
  const std::string data = "hello";
  const std::string rec = FrameTfRecord(data);
  ASSERT_EQ(rec.size(), 8 + 4 + data.size() + 4);
  EXPECT_EQ(static_cast<unsigned char>(rec[0]), 5);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(rec[i], 0);
  uint32_t len_crc, data_crc;
  std::memcpy(&len_crc, rec.data() + 8, 4);  // little-endian host (x86, arm64)
  std::memcpy(&data_crc, rec.data() + 12 + data.size(), 4);
  EXPECT_EQ(len_crc, MaskCrc32c(Crc32c(rec.data(), 8)));
  EXPECT_EQ(rec.substr(12, data.size()), data);
  EXPECT_EQ(data_crc, MaskCrc32c(Crc32c(data.data(), data.size())));
}

std::string OnlyEventFile(const std::string& dir) {
  std::string found;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) {
      found = e.path().string();
      ++n;
    }
  }
  EXPECT_EQ(n, 1);
  return found;
}

TEST(TensorBoard, RoundTripOfScalars) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
    w.AddScalars(0, {{"charts/episodic_return", -1.25}, {"losses/value_loss", 0.5}});
    w.AddScalar("charts/episodic_return", -1.0, 7);
    w.AddScalars(8, {{"charts/best_cost", 1.0523}}, 1700000000.25);
  }
  EXPECT_EQ(OnlyEventFile(dir.path()), path);
  const std::string name = std::filesystem::path(path).filename().string();
  // events.out.tfevents.<10-digit unix seconds>.<host>
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u);
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(name[20])));

  const TensorBoardFile f = ReadTensorBoardFile(path);
  EXPECT_EQ(f.file_version, "brain.Event:2");
  EXPECT_EQ(f.records, 4);
  ASSERT_EQ(f.scalars.size(), 4u);
  EXPECT_EQ(f.scalars[0].tag, "charts/episodic_return");
  EXPECT_EQ(f.scalars[0].step, 0);
  EXPECT_EQ(f.scalars[0].value, -1.25f);
  EXPECT_EQ(f.scalars[1].tag, "losses/value_loss");
  EXPECT_EQ(f.scalars[1].value, 0.5f);
  EXPECT_EQ(f.scalars[2].step, 7);
  EXPECT_EQ(f.scalars[2].value, -1.0f);
  EXPECT_EQ(f.scalars[3].tag, "charts/best_cost");
  EXPECT_EQ(f.scalars[3].value, 1.0523f);
  EXPECT_EQ(f.scalars[3].wall_time, 1700000000.25);
  EXPECT_GT(f.scalars[0].wall_time, 1.6e9);  // now, in seconds since the epoch
}

TEST(TensorBoard, EventsAreOnDiskBeforeTheWriterCloses) {
  TempDir dir;
  TensorBoardWriter w(dir.path());
  w.AddScalar("charts/x", 3.0, 1);
  // Still open: what a killed run would leave.
  const TensorBoardFile f = ReadTensorBoardFile(w.path());
  ASSERT_EQ(f.scalars.size(), 1u);
  EXPECT_EQ(f.scalars[0].value, 3.0f);
}

TEST(TensorBoard, WireFormatHasTensorFlowsFieldNumbers) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
    w.AddScalar("a", 2.0, 3);
  }
  const std::string bytes = Slurp(path);
  // First record: Event{wall_time=1 (fixed64 tag 0x09), file_version=3 (tag 0x1a)}.
  const std::string first = bytes.substr(12, static_cast<unsigned char>(bytes[0]));
  ASSERT_EQ(first.size(), 9u + 2u + 13u);
  EXPECT_EQ(static_cast<unsigned char>(first[0]), 0x09);
  EXPECT_EQ(static_cast<unsigned char>(first[9]), 0x1a);
  EXPECT_EQ(first.substr(11), "brain.Event:2");
  // Second: wall_time, step=2 (varint tag 0x10) = 3, summary=5 (tag 0x2a){value=1{tag=1 "a",
  // simple_value=2 (fixed32 tag 0x15) = 2.0f}}.
  const size_t second_at = 12 + first.size() + 4;
  const std::string second = bytes.substr(second_at + 12, static_cast<unsigned char>(bytes[second_at]));
  const unsigned char expect_tail[] = {0x10, 0x03, 0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01, 'a',
                                       0x15, 0x00, 0x00, 0x00, 0x40};
  ASSERT_EQ(second.size(), 9u + sizeof(expect_tail));
  EXPECT_EQ(second.substr(9), std::string(reinterpret_cast<const char*>(expect_tail), sizeof(expect_tail)));
}

TEST(TensorBoard, EveryFlippedByteIsDetected) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
    w.AddScalars(1, {{"losses/policy_loss", 0.25}});
  }
  const std::string good = Slurp(path);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    Spit(path, bad);
    EXPECT_THROW(ReadTensorBoardFile(path), ParseError) << "byte " << i;
  }
  Spit(path, good);
  EXPECT_EQ(ReadTensorBoardFile(path).scalars.size(), 1u);
}

TEST(TensorBoard, CorruptionIsReportedWithRecordAndByte) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
    w.AddScalar("x", 1, 1);
  }
  std::string bytes = Slurp(path);
  const size_t second = 12 + static_cast<unsigned char>(bytes[0]) + 4;
  bytes[second + 14] ^= 1;  // inside the second record's data
  Spit(path, bytes);
  try {
    ReadTensorBoardFile(path);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("record 1 at byte " + std::to_string(second) + ": data CRC mismatch"),
              std::string::npos)
        << e.what();
  }
}

TEST(TensorBoard, TruncatedFileIsAnError) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
    w.AddScalar("x", 1, 1);
  }
  const std::string bytes = Slurp(path);
  for (size_t keep : {bytes.size() - 1, bytes.size() - 5, size_t(5)}) {
    Spit(path, bytes.substr(0, keep));
    EXPECT_THROW(ReadTensorBoardFile(path), ParseError) << keep;
  }
}

TEST(TensorBoard, TwoWritersInOneSecondGetTwoFiles) {
  TempDir dir;
  TensorBoardWriter a(dir.path());
  TensorBoardWriter b(dir.path());
  EXPECT_NE(a.path(), b.path());
  a.AddScalar("x", 1, 1);
  b.AddScalar("x", 2, 1);
  EXPECT_EQ(ReadTensorBoardFile(a.path()).scalars.at(0).value, 1.0f);
  EXPECT_EQ(ReadTensorBoardFile(b.path()).scalars.at(0).value, 2.0f);
}

TEST(TensorBoard, MissingDirectoryIsAnIoError) {
  EXPECT_THROW(TensorBoardWriter("/nonexistent/placerl/dir"), IoError);
}

}  // namespace
}  // namespace placerl::run

namespace placerl::run {
namespace {

// Garbage never crashes the reader: it parses or throws ParseError.
TEST(TensorBoard, RandomBytesGiveParseErrorsNotCrashes) {
  TempDir dir;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned char>(state >> 56);
  };
  std::string valid;
  {
    TensorBoardWriter w(dir.path());
    w.AddScalar("x", 1, 1);
    valid = Slurp(w.path());
  }
  int errors = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::string bytes = trial % 2 ? valid : std::string();
    const int n = 1 + next() % 64;
    for (int i = 0; i < n; ++i) bytes.push_back(static_cast<char>(next()));
    Spit(dir / "garbage", bytes);
    try {
      ReadTensorBoardFile(dir / "garbage");
    } catch (const ParseError&) {
      ++errors;
    }
  }
  EXPECT_EQ(errors, 100);  // a random tail is never a record with two matching CRCs
}

}  // namespace
}  // namespace placerl::run

namespace placerl::run {
namespace {

TEST(TensorBoard, ARecordWhoseLengthLooksLikeGzipIsReadAsIs) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter w(dir.path());
    path = w.path();
  }
  tensorboard::Event e;
  e.set_step(1);
  e.set_file_version(std::string(0x8b1f - 6, 'v'));  // serialized size 0x8b1f
  const std::string data = e.SerializeAsString();
  ASSERT_EQ(data.size(), 0x8b1fu);
  Spit(path, FrameTfRecord(data));
  EXPECT_EQ(static_cast<unsigned char>(Slurp(path)[0]), 0x1f);
  EXPECT_EQ(ReadTensorBoardFile(path).records, 1);
  EXPECT_THROW(ReadTensorBoardFile(dir / "missing"), IoError);
}

}  // namespace
}  // namespace placerl::run
