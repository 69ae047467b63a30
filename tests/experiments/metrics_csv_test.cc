// Tests of metrics.csv: header from the first row, shortest round-trip numbers, missing
// cells, refusal of new keys, append mode (header check, partial last line) and the reader.
#include "experiments/lib/metrics_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

using placerl::testing::Slurp;
using placerl::testing::Spit;
using placerl::testing::TempDir;

TEST(ShortestDouble, RoundTripsAndIsShort) {
  EXPECT_EQ(ShortestDouble(0.1), "0.1");
  EXPECT_EQ(ShortestDouble(1000), "1000");
  EXPECT_EQ(ShortestDouble(-2.5), "-2.5");
  EXPECT_EQ(ShortestDouble(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(ShortestDouble(std::nan("")), "nan");
  EXPECT_EQ(ShortestDouble(-INFINITY), "-inf");
  for (double v : {1.0523, 1e-300, 6.02214076e23, 0.1 + 0.2, -1.0 / 7, 123456789.123456789}) {
    EXPECT_EQ(std::strtod(ShortestDouble(v).c_str(), nullptr), v) << ShortestDouble(v);
  }
}

TEST(MetricsCsv, HeaderFromFirstRowAndRowsFlushed) {
  TempDir dir;
  const std::string path = dir / "metrics.csv";
  MetricsCsv m(path, MetricsCsv::Mode::kCreate);
  m.Write({{"step", 0}, {"time_s", 0.5}, {"charts/best_cost", 1.0523}});
  // On disk before the writer closes (a killed run keeps it).
  EXPECT_EQ(Slurp(path), "step,time_s,charts/best_cost\n0,0.5,1.0523\n");
  m.Write({{"charts/best_cost", 0.1 + 0.2}, {"step", 1}});  // any order, one key missing
  EXPECT_EQ(Slurp(path), "step,time_s,charts/best_cost\n0,0.5,1.0523\n1,,0.30000000000000004\n");
}

TEST(MetricsCsv, NewKeyAfterTheHeaderIsAnError) {
  TempDir dir;
  MetricsCsv m(dir / "metrics.csv", MetricsCsv::Mode::kCreate);
  m.Write({{"step", 0}, {"a", 1}});
  try {
    m.Write({{"step", 1}, {"b", 2}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("column 'b' is not in the header (step, a)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.Write({{"step", 1}, {"step", 2}}), Error);
  EXPECT_EQ(Slurp(dir / "metrics.csv"), "step,a\n0,1\n");  // nothing half-written
}

TEST(MetricsCsv, BadColumnNamesAreRefused) {
  TempDir dir;
  MetricsCsv m(dir / "metrics.csv", MetricsCsv::Mode::kCreate);
  EXPECT_THROW(m.Write({{"a,b", 1}}), Error);
  EXPECT_THROW(m.Write({{"", 1}}), Error);
  EXPECT_THROW(m.Write({{"x", 1}, {"x", 2}}), Error);
  EXPECT_THROW(m.Write({}), Error);
}

TEST(MetricsCsv, AppendKeepsRowsAndChecksTheHeader) {
  TempDir dir;
  const std::string path = dir / "metrics.csv";
  {
    MetricsCsv m(path, MetricsCsv::Mode::kCreate);
    m.Write({{"step", 0}, {"cost", 2}});
    m.Write({{"step", 1}, {"cost", 1.5}});
  }
  {
    MetricsCsv m(path, MetricsCsv::Mode::kAppend);
    EXPECT_EQ(m.columns(), (std::vector<std::string>{"step", "cost"}));
    m.Write({{"step", 2}, {"cost", 1.25}});
    EXPECT_THROW(m.Write({{"step", 3}, {"loss", 1}}), Error);  // not in the resumed header
  }
  EXPECT_EQ(Slurp(path), "step,cost\n0,2\n1,1.5\n2,1.25\n");
}

TEST(MetricsCsv, AppendCutsOffAPartialLastLine) {
  TempDir dir;
  const std::string path = dir / "metrics.csv";
  Spit(path, "step,cost\n0,2\n1,1.");  // a kill in the middle of a row
  {
    MetricsCsv m(path, MetricsCsv::Mode::kAppend);
    m.Write({{"step", 1}, {"cost", 1.5}});
  }
  EXPECT_EQ(Slurp(path), "step,cost\n0,2\n1,1.5\n");
}

TEST(MetricsCsv, AppendToAMissingFileStartsIt) {
  TempDir dir;
  const std::string path = dir / "metrics.csv";
  {
    MetricsCsv m(path, MetricsCsv::Mode::kAppend);
    m.Write({{"step", 5}, {"x", -1}});
  }
  EXPECT_EQ(Slurp(path), "step,x\n5,-1\n");
}

TEST(MetricsCsv, AppendRefusesARepeatedHeaderColumn) {
  TempDir dir;
  Spit(dir / "metrics.csv", "step,step\n1,2\n");
  try {
    MetricsCsv m(dir / "metrics.csv", MetricsCsv::Mode::kAppend);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 1);
  }
}

TEST(MetricsCsv, CreateTruncates) {
  TempDir dir;
  Spit(dir / "metrics.csv", "old,stuff\n1,2\n");
  MetricsCsv m(dir / "metrics.csv", MetricsCsv::Mode::kCreate);
  m.Write({{"step", 0}});
  EXPECT_EQ(Slurp(dir / "metrics.csv"), "step\n0\n");
}

TEST(ReadMetricsCsv, NumbersAndEmptyCells) {
  TempDir dir;
  Spit(dir / "m.csv", "step,a,b\n0,1.5,\n1,nan,-inf\n");
  const MetricsTable t = ReadMetricsCsv(dir / "m.csv");
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.Find("b"), 2);
  EXPECT_EQ(t.Find("zz"), -1);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1], 1.5);
  EXPECT_TRUE(std::isnan(t.rows[0][2]));
  EXPECT_TRUE(std::isnan(t.rows[1][1]));
  EXPECT_EQ(t.rows[1][2], -INFINITY);
}

TEST(ReadMetricsCsv, MalformedRowsGiveFileAndLine) {
  TempDir dir;
  Spit(dir / "m.csv", "step,a\n0,1\n1\n");
  try {
    ReadMetricsCsv(dir / "m.csv");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("m.csv:3: 1 cells, header has 2"), std::string::npos) << e.what();
  }
  Spit(dir / "m.csv", "step,a\n0,abc\n");
  EXPECT_THROW(ReadMetricsCsv(dir / "m.csv"), ParseError);
}

}  // namespace
}  // namespace placerl::run
