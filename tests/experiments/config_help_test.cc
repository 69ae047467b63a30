// --help-config: descriptions come from the .proto comments embedded at build time; every
// field of every config message has one (a new field without a comment fails here).
#include <gtest/gtest.h>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/text_format.h>

#include "datasets/proto/chip_placement.pb.h"
#include "datasets/proto/descriptors.h"
#include "experiments/lib/chip_config.h"
#include "experiments/lib/config_help.h"
#include "tests/experiments/run_command.h"

#include <filesystem>
#include <sstream>

namespace placerl {
namespace {

namespace pb = google::protobuf;

TEST(ConfigHelp, DescriptionsComeFromTheProtoComments) {
  const auto* d = config::ChipEnvConfig::descriptor();
  // A trailing comment.
  EXPECT_EQ(run::FieldDescription(d->FindFieldByName("netlist")),
            "netlist.pb.txt[.gz]; empty = the built-in synthetic chip");
  // A leading comment over several lines becomes one line.
  const std::string scale = run::FieldDescription(d->FindFieldByName("fd_steps_scale"));
  EXPECT_NE(scale.find("FD steps per phase"), std::string::npos) << scale;
  EXPECT_EQ(scale.find('\n'), std::string::npos);
  EXPECT_EQ(scale.find("  "), std::string::npos);
}

TEST(ConfigHelp, ListsEveryKeyWithTheBinarysDefault) {
  const auto c = DefaultPlaceBaselineConfig();
  const std::string help = run::ConfigHelp(c, "place-baseline");
  // Nested keys as --set takes them, with the resolved default (not proto3's zero).
  for (const char* key : {"\nmethod ", "\nchip.netlist ", "\nsa.t_max ", "\nsa.action_probs ", "\ngreedy.top_k "})
    EXPECT_NE(help.find(key), std::string::npos) << key << "\n" << help;
  std::string t_max;
  pb::TextFormat::PrintFieldValueToString(c.sa(), c.sa().GetDescriptor()->FindFieldByName("t_max"), -1, &t_max);
  const auto line_start = help.find("\nsa.t_max ");
  const std::string line = help.substr(line_start + 1, help.find('\n', line_start + 1) - line_start - 1);
  EXPECT_NE(line.find(" " + t_max + " "), std::string::npos) << line;
  EXPECT_NE(line.find("double"), std::string::npos) << line;
}

// Every field of every message in every schema carries a description.
TEST(ConfigHelp, EveryProtoFieldHasADescription) {
  pb::FileDescriptorSet set;
  const auto data = config::ProtoDescriptorSet();
  ASSERT_TRUE(set.ParseFromArray(data.data(), static_cast<int>(data.size())));
  ASSERT_GE(set.file_size(), 5);
  // A pool of its own: the schemas this test binary does not link are in the set too.
  pb::DescriptorPool pool;
  std::vector<std::string> missing;
  for (const auto& file : set.file()) {
    const pb::FileDescriptor* fd = pool.BuildFile(file);
    ASSERT_NE(fd, nullptr) << file.name();
    for (int i = 0; i < fd->message_type_count(); ++i) {
      std::vector<const pb::Descriptor*> todo = {fd->message_type(i)};
      while (!todo.empty()) {
        const pb::Descriptor* d = todo.back();
        todo.pop_back();
        for (int j = 0; j < d->nested_type_count(); ++j) todo.push_back(d->nested_type(j));
        for (int j = 0; j < d->field_count(); ++j)
          if (run::FieldDescription(d->field(j)).empty()) missing.push_back(d->field(j)->full_name());
      }
    }
  }
  std::string list;
  for (const auto& m : missing) list += "  " + m + "\n";
  EXPECT_TRUE(missing.empty()) << missing.size() << " fields without a comment in datasets/proto/:\n" << list;
}

TEST(ConfigHelp, UndocumentedFieldsWalksNestedMessages) {
  const auto missing = run::UndocumentedFields(config::PlaceBaselineConfig::descriptor());
  for (const auto& m : missing) EXPECT_EQ(m.find(' '), std::string::npos) << m;  // dotted paths
  // netlist is documented, so it is never listed.
  for (const auto& m : missing) EXPECT_NE(m, "chip.netlist");
}

}  // namespace
}  // namespace placerl

namespace placerl {
namespace {

// Every binary that takes --set prints all its keys with --help-config, exit 0, nothing else.
TEST(ConfigHelpCli, EveryBinaryWithSetPrintsItsKeys) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"place-baseline", {"\nsa.t_max ", "\nchip.netlist "}},
      {"place-baseline --env device", {"\nmethod ", "\nsct_threshold "}},
      {"train-proposer", {"\nsigma ", "\nrun.sa.soft_move_prob ", "\nrun.max_evaluations "}},
      {"place-train", {"\nagent.learning_rate ", "\npolicy.embedding_dim ", "\nchip.cost_map "}},
      {"place-train --env device", {"\nmemory_mask ", "\nhdp.num_groups ", "\nenv.memory_mask ", "\nenv.oom_factor "}},
      {"place", {"\ncheckpoint ", "\nagent.clip "}},
      // the defaults RunPlace uses (DefaultDevicePlaceConfig), not proto3's empty machine
      {"place --env device", {"\noom_factor ", "\nfuse_max_group_fraction ", "\"k80(gpus=2)\"", "\nenv.oom_factor "}},
      {"nas-search", {"\npopulation ", "\nnb201_table "}},
      {"nas-search --method ppo", {"\nagent.clip ", "\nepisodes_per_update "}},
  };
  for (const auto& [cmd, keys] : cases) {
    const std::string bin = cmd.substr(0, cmd.find(' '));
    if (!std::filesystem::exists(testing::BinDir() + "/" + bin)) continue;  // LibTorch binaries absent
    const auto r = testing::ShSplit(testing::BinDir() + "/" + cmd + " --help-config");
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_TRUE(r.err.empty()) << cmd << "\n" << r.err;
    for (const auto& k : keys) EXPECT_NE(r.out.find(k), std::string::npos) << cmd << ": " << k;
    // No key without a description: every line has a fourth column.
    std::istringstream lines(r.out);
    std::string line;
    int rows = 0;
    while (std::getline(lines, line)) {
      if (line.empty() || line.rfind("key ", 0) == 0 || line.find(": every key") != std::string::npos) continue;
      ++rows;
      EXPECT_FALSE(line.back() == ' ') << cmd << ": a key without a description: " << line;
    }
    EXPECT_GT(rows, 5) << cmd;
  }
}

// The device environment's keys: env.* in the table with the binary's defaults and their
// descriptions; the old top-level keys (deprecated aliases) after it, in a block of their own.
TEST(ConfigHelpCli, DeviceEnvKeysAreNestedAndTheOldKeysListedApart) {
  for (const std::string cmd : {"place-train --env device", "place --env device"}) {
    const std::string bin = cmd.substr(0, cmd.find(' '));
    if (!std::filesystem::exists(testing::BinDir() + "/" + bin)) continue;  // LibTorch binaries absent
    const auto r = testing::ShSplit(testing::BinDir() + "/" + cmd + " --help-config");
    ASSERT_EQ(r.status, 0) << r.err;
    const size_t nested = r.out.find("\nenv.fuse_max_group_fraction ");
    const size_t old_block = r.out.find("\nold keys, still read from --set");
    const size_t old_key = r.out.find("\nfuse_max_group_fraction ");
    ASSERT_NE(nested, std::string::npos) << r.out;
    ASSERT_NE(old_block, std::string::npos) << r.out;
    EXPECT_LT(nested, old_block);
    EXPECT_GT(old_key, old_block);
    const std::string line = r.out.substr(nested + 1, r.out.find('\n', nested + 1) - nested - 1);
    EXPECT_NE(line.find(" 0.5 "), std::string::npos) << line;  // the binary's default
    EXPECT_NE(line.find("smallest accelerator"), std::string::npos) << line;  // the description
    const std::string old_line = r.out.substr(old_key + 1, r.out.find('\n', old_key + 1) - old_key - 1);
    EXPECT_NE(old_line.find("deprecated alias of env.fuse_max_group_fraction"), std::string::npos) << old_line;
  }
}

}  // namespace
}  // namespace placerl
