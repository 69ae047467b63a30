// The tabular benchmarks: encodings round trip, the shared tables read completely with the
// values of known rows, the analytic NB201 cost spans the published FLOPs range, and malformed
// small copies fail with the line of the bad row.
#include <gtest/gtest.h>

#include <cmath>

#include "datasets/nas/tables.h"
#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::nas {
namespace {

const char* kNb201 = "../shared/datasets/nas/nats_bench_tss.csv";
const char* kMacro = "../shared/datasets/nas/nas_bench_macro_cifar10.json";
const char* kHeader =
    "CIFAR10TestAccuracy200Epochs,CIFAR100TestAccuracy200Epochs,ImageNetTestAccuracy200Epochs,ArchitectureString,UniqueString\n";
const char* kRowA = "85.86,52.91,26.63,|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|,u\n";
const char* kRowB = "93.66,70.29,44.03,|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|,u\n";

int Nb201ErrorLine(const std::string& content, bool require_all = false) {
  testing::TempDir tmp;
  testing::Spit(tmp / "t.csv", content);
  try {
    ReadNb201Csv(tmp / "t.csv", {require_all});
  } catch (const ParseError& e) {
    return e.line();
  }
  ADD_FAILURE() << "no error for:\n" << content;
  return -1;
}

int ReadNb201CsvText(const std::string& content) {
  testing::TempDir tmp;
  testing::Spit(tmp / "t.csv", content);
  return ReadNb201Csv(tmp / "t.csv", {false}).rows;
}

int MacroErrorLine(const std::string& content, bool require_all = false) {
  testing::TempDir tmp;
  testing::Spit(tmp / "t.json", content);
  try {
    ReadNasBenchMacroJson(tmp / "t.json", {require_all});
  } catch (const ParseError& e) {
    return e.line();
  }
  ADD_FAILURE() << "no error for:\n" << content;
  return -1;
}

TEST(Nb201, ArchStringsRoundTripForEveryCell) {
  for (int32_t code = 0; code < kNb201Cells; ++code) {
    int32_t ops[6], back[6];
    Nb201Ops(code, ops);
    ASSERT_EQ(ParseNb201ArchString(Nb201ArchString(ops), back), "");
    ASSERT_EQ(Nb201Code(back), code);
  }
  int32_t ops[6];
  EXPECT_EQ(ParseNb201ArchString("|nor_conv_3x3~0|+|none~0|skip_connect~1|+|none~0|none~1|avg_pool_3x3~2|", ops), "");
  EXPECT_EQ(ops[0], 3);
  EXPECT_EQ(ops[5], 4);
  EXPECT_NE(ParseNb201ArchString("|nor_conv_3x3~0|+|none~0|skip_connect~1|", ops), "");
  EXPECT_NE(ParseNb201ArchString("|conv~0|+|none~0|none~1|+|none~0|none~1|none~2|", ops), "");
  EXPECT_NE(ParseNb201ArchString("|none~1|+|none~0|none~1|+|none~0|none~1|none~2|", ops), "");
  EXPECT_NE(ParseNb201ArchString("|none~0|+|none~0|+|none~0|none~1|none~2|", ops), "");
}

TEST(Nb201, AnalyticMacsSpanThePublishedFlopsRange) {
  const int32_t none[6] = {0, 0, 0, 0, 0, 0}, conv3[6] = {3, 3, 3, 3, 3, 3}, conv1[6] = {2, 2, 2, 2, 2, 2};
  EXPECT_NEAR(Nb201MegaMacs(none), 7.78304, 1e-5);
  EXPECT_NEAR(Nb201MegaMacs(conv3), 220.11968, 1e-5);
  EXPECT_LT(Nb201MegaMacs(conv1), Nb201MegaMacs(conv3));
}

TEST(Nb201, ReadsTheSharedTable) {
  const Nb201Table t = ReadNb201Csv(kNb201);
  EXPECT_EQ(t.rows, kNb201Cells);
  int32_t ops[6];
  ASSERT_EQ(ParseNb201ArchString("|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|", ops), "");
  EXPECT_NEAR(t.Accuracy(Nb201Dataset::kCifar10, Nb201Code(ops)), 85.8633, 1e-3);
  EXPECT_NEAR(t.Accuracy(Nb201Dataset::kCifar100, Nb201Code(ops)), 52.9133, 1e-3);
  EXPECT_NEAR(t.Accuracy(Nb201Dataset::kImageNet16, Nb201Code(ops)), 26.6333, 1e-3);
  float best = 0;
  for (int32_t c = 0; c < kNb201Cells; ++c) best = std::max(best, t.Accuracy(Nb201Dataset::kCifar10, c));
  EXPECT_NEAR(best, 94.3733, 1e-3);  // the best CIFAR-10 test accuracy of NAS-Bench-201
  EXPECT_EQ(Nb201DatasetFromName("imagenet16-120"), Nb201Dataset::kImageNet16);
  EXPECT_THROW(Nb201DatasetFromName("imagenet"), ConfigError);
}

TEST(Nb201, MalformedRowsFailWithTheirLine) {
  testing::TempDir tmp;
  testing::Spit(tmp / "ok.csv", std::string(kHeader) + kRowA + kRowB);
  const Nb201Table t = ReadNb201Csv(tmp / "ok.csv", {false});
  EXPECT_EQ(t.rows, 2);
  EXPECT_TRUE(std::isnan(t.Accuracy(Nb201Dataset::kCifar10, 0)));
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + kRowB, true), 0);  // 2 of 15625
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + "93.66,70.29,44.03,|none~0|\n"), 3);  // field count
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + "93.66,70.29,44.03,|none~0|,u\n"), 3);  // arch string
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + "\n" + kRowA + kRowA), 4);                     // duplicate
  std::string bad = kRowB;
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + "abc" + bad.substr(5)), 3);             // accuracy
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + "193.66" + bad.substr(5)), 3);          // out of range
  EXPECT_EQ(Nb201ErrorLine(std::string(kHeader) + kRowA + "nan" + bad.substr(5)), 3);
  EXPECT_EQ(Nb201ErrorLine("CIFAR10TestAccuracy200Epochs,ArchitectureString\n"), 1);             // header
  EXPECT_EQ(Nb201ErrorLine(""), 0);
  // Cut in the last row with the accuracy last: "26.6" from "26.63" read as another accuracy.
  const std::string arch_first =
      "ArchitectureString,CIFAR10TestAccuracy200Epochs,CIFAR100TestAccuracy200Epochs,ImageNetTestAccuracy200Epochs\n"
      "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|,93.66,70.29,44.03\n"
      "|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|,85.86,52.91,26.6";
  EXPECT_EQ(Nb201ErrorLine(arch_first), 3);
  EXPECT_EQ(ReadNb201CsvText(arch_first + "3\n"), 2);
}

TEST(Macro, ReadsTheSharedTableAndEncodes) {
  const MacroTable t = ReadNasBenchMacroJson(kMacro);
  EXPECT_EQ(t.rows, kMacroNetworks);
  int32_t c[8];
  ASSERT_EQ(ParseMacroArchString("02012100", c), "");
  EXPECT_EQ(MacroArchString(c), "02012100");
  const int32_t code = MacroCode(c);
  EXPECT_NEAR(t.mean_accuracy[code], 89.19666, 1e-3);
  EXPECT_EQ(t.params[code], 890666);
  EXPECT_EQ(t.flops[code], 47327744);
  EXPECT_NE(ParseMacroArchString("0201210", c), "");
  EXPECT_NE(ParseMacroArchString("02012103", c), "");
}

TEST(Macro, MalformedEntriesFailWithTheirLine) {
  const std::string good = "  \"00000000\": {\"mean_acc\": 80.5, \"std\": 0.1, \"params\": 100, \"flops\": 2000}";
  testing::TempDir tmp;
  testing::Spit(tmp / "ok.json", "{\n" + good + "\n}\n");
  const MacroTable t = ReadNasBenchMacroJson(tmp / "ok.json", {false});
  EXPECT_EQ(t.rows, 1);
  EXPECT_FLOAT_EQ(t.mean_accuracy[0], 80.5f);
  EXPECT_EQ(MacroErrorLine("{\n" + good + "\n}\n", true), 0);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"0000000x\": {\"mean_acc\": 1, \"params\": 1, \"flops\": 1}\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"00000001\": {\"params\": 1, \"flops\": 1}\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"00000001\": {\"mean_acc\": 101, \"params\": 1, \"flops\": 1}\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"00000001\": {\"mean_acc\": 1, \"params\": 1.5, \"flops\": 1}\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"00000001\": {\"mean_acc\": \"1\", \"params\": 1, \"flops\": 1}\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n  \"00000001\": 5\n}\n"), 3);
  EXPECT_EQ(MacroErrorLine("{\n" + good + ",\n\n  \"00000001\": {\"mean_acc\": 1,, }\n}\n"), 4);  // JSON syntax
  EXPECT_EQ(MacroErrorLine("[1, 2]"), 1);
  // A number that overflows a double is an error, not an escaping exception (found by nas_tables_fuzz).
  EXPECT_EQ(MacroErrorLine("{\"02024200\": {\"test_acc\": [88.9577777777777777E77777]}}"), 0);
}

}  // namespace
}  // namespace placerl::nas
