// Tests of run configs on an existing schema (perf_model.proto's RunSpec: nested messages,
// enums, bools, strings, int64, repeated int32): text-format loading with file:line:col
// errors, --set overrides by reflection, and the resolved config's round trip.
#include "datasets/util/config_text.h"

#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include "datasets/proto/perf_model.pb.h"
#include "datasets/util/errors.h"
#include "tests/experiments/test_dir.h"

namespace placerl::run {
namespace {

using placerl::testing::Spit;
using placerl::testing::TempDir;

const char* kSpec = R"(# a training run
model {
  layers: 24
  d_model: 2048
  gated_ffn: true
}
mesh { chip: "tpu_v5p" dims: [4, 4, 8] }
plan {
  fsdp: 16
  tensor: 8
  remat: REMAT_FULL
  global_batch: 512
}
)";

TEST(Config, LoadsTextFormat) {
  TempDir dir;
  Spit(dir / "run.pbtxt", kSpec);
  perf::RunSpec spec;
  LoadConfig(dir / "run.pbtxt", &spec);
  EXPECT_EQ(spec.model().layers(), 24);
  EXPECT_TRUE(spec.model().gated_ffn());
  EXPECT_EQ(spec.mesh().chip(), "tpu_v5p");
  EXPECT_EQ(spec.mesh().dims_size(), 3);
  EXPECT_EQ(spec.plan().remat(), perf::REMAT_FULL);
  EXPECT_EQ(spec.plan().global_batch(), 512);
}

// The error of parsing `text` as a RunSpec, which must be a ConfigParseError.
ConfigParseError ErrorOf(const std::string& text) {
  perf::RunSpec spec;
  try {
    ParseConfigText(text, "c.pbtxt", &spec);
  } catch (const ConfigParseError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << text;
  return ConfigParseError("", 0, 0, "");
}

TEST(Config, UnknownFieldIsAnErrorWithLineAndColumn) {
  const ConfigParseError e = ErrorOf("model {\n  layers: 2\n  layerz: 3\n}\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 3);
  EXPECT_EQ(e.file(), "c.pbtxt");
  const std::string what = e.what();
  EXPECT_EQ(what.rfind("c.pbtxt:3:", 0), 0u) << what;
  EXPECT_NE(what.find("layerz"), std::string::npos) << what;
  // Also catchable as the project's ParseError / Error with the same one-line text.
  const Error& base = e;
  EXPECT_EQ(std::string(base.what()), what);
}

TEST(Config, OtherMalformedInputs) {
  EXPECT_EQ(ErrorOf("plan { remat: REMAT_SOMETIMES }").line(), 1);       // unknown enum value
  EXPECT_EQ(ErrorOf("model { layers: 1 layers: 2 }").line(), 1);         // singular field twice
  EXPECT_EQ(ErrorOf("model { layers: \"many\" }").line(), 1);            // wrong type
  EXPECT_EQ(ErrorOf("model {\n layers: 1\n").line(), 3);                 // unclosed brace: at the end
  EXPECT_EQ(ErrorOf("model { layers: 99999999999 }").line(), 1);         // int32 overflow
  EXPECT_EQ(ErrorOf("\n\nfoo: 1").line(), 3);
}

// The first error of a config names the line and column of the token it is about (the shared
// reader, ParseTextFormat; perf-model's TextProto.ErrorsNameTheLineOfTheBadToken is the same
// check on its files). Protobuf's parser reports a bad boolean, an unknown enum name and an
// unknown field name at the token after it: the next line when the bad value ends its line
// (`shard_optimizer: maybe` on line 2 was c.pbtxt:3:1; without a final newline 2:23, past the
// value). A number that no value of its enum has was accepted (proto3 enums are open); it is
// refused at its field. Each case: the bad line in the middle (a comment after it), last with a
// final newline, last without; read by ParseConfigText and by MergeConfigText (--config).
TEST(Config, ErrorsNameTheLineOfTheBadToken) {
  struct Case {
    bool run_spec;      // the text is a RunSpec (else a Plan)
    const char* bad;    // the bad line(s), written after a first comment line
    const char* where;  // the expected "c.pbtxt:line:col: " prefix
  };
  const Case cases[] = {
      {false, "shard_optimizer: maybe", "c.pbtxt:2:18: "},            // bad bool
      {false, "shard_optimizer: yes   # no", "c.pbtxt:2:18: "},       // bad bool, a comment after it
      {false, "data: 2 flat_dcn_collectives: maybe", "c.pbtxt:2:31: "},  // bad bool after a good key
      {false, "remat: SOMETIMES", "c.pbtxt:2:8: "},                   // bad enum name
      {false, "remat: 77", "c.pbtxt:2:1: "},                          // a number no Remat has
      {false, "remat: -1", "c.pbtxt:2:1: "},                          // (a negative one too)
      {false, "data: 2 bogus: 3", "c.pbtxt:2:9: "},                   // unknown field
      {false, "bogus {\n}", "c.pbtxt:2:1: "},                         // unknown message field
      {false, "global_batch: 1.5", "c.pbtxt:2:15: "},                 // bad integer (at its token)
      {true, "model {\n  gated_ffn: maybe\n}", "c.pbtxt:3:14: "},    // bad bool ending a nested line
      {true, "plan {\n  remat: REMAT_SOMETIMES\n}", "c.pbtxt:3:10: "},  // bad enum ending a nested line
      {true, "plan {\n  data: 2\n  remat: 77\n}", "c.pbtxt:4:3: "},  // enum number in a block: at its field
      {true, "model {\n  layerz: 3\n}", "c.pbtxt:3:3: "},            // unknown nested field
  };
  for (const Case& k : cases) {
    for (const char* end : {"\n# after\n", "\n", ""}) {
      const std::string text = std::string("# a comment\n") + k.bad + end;
      for (const bool merge : {false, true}) {
        perf::RunSpec spec;
        perf::Plan plan;
        google::protobuf::Message* msg = k.run_spec ? static_cast<google::protobuf::Message*>(&spec) : &plan;
        try {
          merge ? MergeConfigText(text, "c.pbtxt", msg) : ParseConfigText(text, "c.pbtxt", msg);
          ADD_FAILURE() << "accepted: " << text;
        } catch (const ConfigParseError& e) {
          EXPECT_EQ(std::string(e.what()).rfind(k.where, 0), 0u) << (merge ? "merge" : "parse") << ": " << text
                                                                 << "\n→ " << e.what();
        }
      }
    }
  }
  // The enum error says which field and which number.
  EXPECT_STREQ(ErrorOf("plan { remat: 77 }").what(),
               "c.pbtxt:1:8: Unknown enumeration value 77 for field \"remat\" (Remat)");
}

TEST(Config, MissingFileIsAnIoError) {
  perf::RunSpec spec;
  EXPECT_THROW(LoadConfig("/nonexistent/run.pbtxt", &spec), IoError);
}

TEST(Config, EmptyTextIsTheDefaultMessage) {
  perf::RunSpec spec;
  spec.mutable_model()->set_layers(3);
  ParseConfigText("# nothing\n", "c.pbtxt", &spec);
  EXPECT_FALSE(spec.has_model());
}

TEST(Override, ScalarsOfEveryKind) {
  perf::RunSpec spec;
  ParseConfigText(kSpec, "c.pbtxt", &spec);
  ApplyOverrides({"model.layers=48", "plan.global_batch=1099511627776", "model.capacity_factor=1.25",
                  "model.gated_ffn=false", "plan.flat_dcn_collectives=1", "plan.remat=REMAT_MINIMAL",
                  "plan.optimizer=2", "mesh.chip=tpu_v4=x", "graph=resnet(depth=50,batch=128)"},
                 &spec);
  EXPECT_EQ(spec.model().layers(), 48);
  EXPECT_EQ(spec.plan().global_batch(), 1099511627776LL);
  EXPECT_EQ(spec.model().capacity_factor(), 1.25);
  EXPECT_FALSE(spec.model().gated_ffn());
  EXPECT_TRUE(spec.plan().flat_dcn_collectives());
  EXPECT_EQ(spec.plan().remat(), perf::REMAT_MINIMAL);
  EXPECT_EQ(spec.plan().optimizer(), perf::SGD_MOMENTUM);
  EXPECT_EQ(spec.mesh().chip(), "tpu_v4=x");  // the value is everything after the first '='
  EXPECT_EQ(spec.graph(), "resnet(depth=50,batch=128)");
  EXPECT_EQ(spec.model().d_model(), 2048);  // untouched
}

TEST(Override, RepeatedScalarsAsCommaLists) {
  perf::RunSpec spec;
  ParseConfigText(kSpec, "c.pbtxt", &spec);
  ApplyOverride("mesh.dims=8,8", &spec);
  ASSERT_EQ(spec.mesh().dims_size(), 2);
  EXPECT_EQ(spec.mesh().dims(1), 8);
  ApplyOverride("mesh.dims=", &spec);
  EXPECT_EQ(spec.mesh().dims_size(), 0);
  EXPECT_THROW(ApplyOverride("mesh.dims=4,x", &spec), ConfigError);
}

TEST(Override, CreatesNestedMessagesAndMergesTextIntoThem) {
  perf::RunSpec spec;
  ApplyOverride("inference.batch=8", &spec);
  EXPECT_TRUE(spec.has_inference());
  EXPECT_EQ(spec.inference().batch(), 8);
  ApplyOverride("plan={data: 2 fsdp: 4}", &spec);
  EXPECT_EQ(spec.plan().data(), 2);
  EXPECT_EQ(spec.plan().fsdp(), 4);
  EXPECT_THROW(ApplyOverride("plan={data: x}", &spec), ConfigError);
}

std::string OverrideError(const std::string& assignment) {
  perf::RunSpec spec;
  try {
    ApplyOverride(assignment, &spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << assignment;
  return "";
}

TEST(Override, UnknownPathNamesItAndListsTheFields) {
  const std::string e = OverrideError("plan.dta=2");
  EXPECT_NE(e.find("--set 'plan.dta=2': no field 'dta' in 'plan' (placerl.perf.Plan)"), std::string::npos) << e;
  EXPECT_NE(e.find("fields: data, fsdp, tensor, pipeline"), std::string::npos) << e;
  const std::string top = OverrideError("modle.layers=2");
  EXPECT_NE(top.find("no field 'modle' in placerl.perf.RunSpec (fields: model, mesh, plan, graph, inference)"),
            std::string::npos)
      << top;
  EXPECT_NE(OverrideError("model.layers.x=1").find("'model.layers' is not a message"), std::string::npos);
}

TEST(Override, BadValuesAreRefused) {
  EXPECT_NE(OverrideError("model.layers=1.5").find("not a whole number"), std::string::npos);
  EXPECT_NE(OverrideError("model.layers=3000000000").find("out of range"), std::string::npos);
  EXPECT_NE(OverrideError("model.layers=").find("empty value"), std::string::npos);
  EXPECT_NE(OverrideError("model.gated_ffn=yes").find("not a bool"), std::string::npos);
  EXPECT_NE(OverrideError("model.capacity_factor=1.2.3").find("not a number"), std::string::npos);
  EXPECT_NE(OverrideError("model.capacity_factor=nan").find("not finite"), std::string::npos);
  EXPECT_NE(OverrideError("model.capacity_factor=-inf").find("not finite"), std::string::npos);
  EXPECT_NE(OverrideError("plan.remat=SOME").find("not a value of placerl.perf.Remat (REMAT_NONE, REMAT_MINIMAL"),
            std::string::npos);
  // An enum number is taken only when it is a value: 77 is none, and a number outside int is
  // not wrapped onto one (4294967298 was REMAT_FULL, 2).
  EXPECT_NE(OverrideError("plan.remat=77").find("'77' is not a value of placerl.perf.Remat"), std::string::npos);
  EXPECT_NE(OverrideError("plan.remat=4294967298").find("not a value of placerl.perf.Remat"), std::string::npos);
  // A message value is read by the config reader: the bad token's column in the value as
  // written, and no enum number that is no value (plan={remat: 77} was accepted).
  EXPECT_EQ(OverrideError("plan={shard_optimizer: maybe}"),
            "--set 'plan={shard_optimizer: maybe}': column 19 of the value: Invalid value for boolean field "
            "\"shard_optimizer\". Value: \"maybe\".");
  EXPECT_EQ(OverrideError("plan={data: 2 remat: 77}"),
            "--set 'plan={data: 2 remat: 77}': column 10 of the value: Unknown enumeration value 77 for field "
            "\"remat\" (Remat)");
  EXPECT_NE(OverrideError("model.layers").find("expected path=value"), std::string::npos);
  EXPECT_NE(OverrideError("=3").find("expected path=value"), std::string::npos);
}

TEST(MergeConfig, NamedFieldsReplaceDefaultsZerosToo) {
  perf::RunSpec defaults;
  defaults.mutable_model()->set_layers(12);
  defaults.mutable_model()->set_d_model(768);
  defaults.mutable_model()->set_gated_ffn(true);
  defaults.mutable_mesh()->add_dims(2);
  defaults.mutable_mesh()->add_dims(2);
  defaults.mutable_plan()->set_data(8);
  perf::RunSpec spec = defaults;
  MergeConfigText("model { layers: 0 gated_ffn: false }\nmesh { dims: [16] }\n", "c.pbtxt", &spec);
  EXPECT_EQ(spec.model().layers(), 0);         // a zero in the file wins over the default
  EXPECT_FALSE(spec.model().gated_ffn());      // so does false
  EXPECT_EQ(spec.model().d_model(), 768);      // not named: default kept
  ASSERT_EQ(spec.mesh().dims_size(), 1);       // a named list replaces the default list
  EXPECT_EQ(spec.mesh().dims(0), 16);
  EXPECT_EQ(spec.plan().data(), 8);            // a message not named at all: kept
  perf::RunSpec same = defaults;
  MergeConfigText("", "c.pbtxt", &same);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(same, defaults));
  EXPECT_THROW(MergeConfigText("model { layerz: 1 }", "c.pbtxt", &same), ConfigParseError);
}

TEST(ResolvedConfig, PrintsDefaultsAndRoundTrips) {
  perf::RunSpec spec;
  ParseConfigText(kSpec, "c.pbtxt", &spec);
  const std::string text = ResolvedConfigText(spec);
  // proto3 defaults are on record...
  EXPECT_NE(text.find("  heads: 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  flash_attention: false\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  remat: REMAT_FULL\n"), std::string::npos) << text;
  EXPECT_NE(text.find("graph: \"\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  dims: 4\n  dims: 4\n  dims: 8\n"), std::string::npos) << text;
  // ...but an unset message field stays unset (presence matters: `inference` selects a mode).
  EXPECT_EQ(text.find("inference"), std::string::npos) << text;
  perf::RunSpec back;
  ParseConfigText(text, "config.pbtxt", &back);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(spec, back));
}

// What a resumed run (ResolveRunConfig) and `place` (the checkpoint's training settings) compare:
// every changed field by dotted path, lists as a whole, a message set on one side only, and the
// fields asked to be skipped left out.
TEST(ConfigDifferences, NamesEveryChangedFieldByItsPath) {
  perf::RunSpec a;
  ParseConfigText(kSpec, "c.pbtxt", &a);
  EXPECT_TRUE(ConfigDifferences(a, a).empty());
  perf::RunSpec b = a;
  b.mutable_plan()->set_fsdp(32);
  b.mutable_model()->set_gated_ffn(false);
  b.mutable_mesh()->clear_dims();
  b.mutable_mesh()->add_dims(8);
  b.set_graph("rnnlm");
  b.mutable_inference();
  const std::vector<ConfigDifference> d = ConfigDifferences(a, b);
  std::vector<std::string> lines;
  for (const ConfigDifference& x : d) lines.push_back(x.path + ": " + x.before + " -> " + x.after);
  EXPECT_EQ(lines, (std::vector<std::string>{"model.gated_ffn: true -> false", "mesh.dims: [4, 4, 8] -> [8]",
                                             "plan.fsdp: 16 -> 32", "graph: \"\" -> \"rnnlm\"",
                                             "inference: (unset) -> {...}"}));
  EXPECT_EQ(ConfigDifferences(a, b, {"plan.fsdp", "model", "mesh.dims", "graph", "inference"}).size(), 0u);
}

}  // namespace
}  // namespace placerl::run

// ---------------------------------------------------------------- deprecated aliases
// The device environment's keys moved into one message (`env`); the old top-level keys are
// deprecated aliases (datasets/util/config_text.h AliasTarget) that every reader moves into env.


#include <fstream>
#include <sstream>

#include <google/protobuf/descriptor.pb.h>

#include "datasets/proto/descriptors.h"
#include "datasets/proto/chip_placement.pb.h"
#include "datasets/proto/device_placement.pb.h"
#include "experiments/lib/config_help.h"

namespace placerl::run {
namespace {

// The settings of tests/data/device_old_run (written by place-train before `env` existed) as
// the old keys name them, over DefaultTrainConfig's environment.
config::DevicePlaceTrainConfig WithEnvDefaults() {
  config::DevicePlaceTrainConfig c;
  config::DeviceEnvConfig& e = *c.mutable_env();
  e.set_reward("sqrt");
  e.set_oom("relative");
  e.set_oom_factor(10);
  e.set_fuse_above_groups(300);
  e.set_fuse_target_groups(128);
  e.set_features("basic");
  e.set_order("topological");
  e.set_memory_estimate("lifetime");
  e.set_fuse_max_group_fraction(0.5);
  return c;
}

bool AnyAliasSet(const config::DevicePlaceTrainConfig& c) {
  return c.has_minutes() || c.has_seed() || c.has_checkpoint_minutes() || c.has_clock() || c.has_memory_mask() || c.has_reward() || c.has_oom() || c.has_oom_factor() || c.has_fuse_above_groups() ||
         c.has_fuse_target_groups() || c.has_features() || c.has_order() || c.has_memory_estimate() ||
         c.has_fuse_max_group_fraction();
}

TEST(ConfigAliases, AnOldConfigFileIsReadIntoTheNestedMessage) {
  const std::string old = "tests/data/device_old_run/config.pbtxt";
  for (const bool merge : {true, false}) {
    SCOPED_TRACE(merge ? "MergeConfigFile" : "LoadConfig");
    config::DevicePlaceTrainConfig c = WithEnvDefaults();
    if (merge) {
      MergeConfigFile(old, &c);
    } else {
      LoadConfig(old, &c);
    }
    EXPECT_FALSE(AnyAliasSet(c));
    EXPECT_TRUE(c.env().memory_mask());
    EXPECT_EQ(c.env().oom_factor(), 7);
    EXPECT_EQ(c.env().order(), "rank");
    EXPECT_EQ(c.env().reward(), "sqrt");
    EXPECT_EQ(c.env().memory_estimate(), "lifetime");
    EXPECT_EQ(c.env().fuse_max_group_fraction(), 0.5);
    EXPECT_EQ(c.run().seed(), 3u);
    EXPECT_EQ(c.run().minutes(), 10);
    EXPECT_EQ(c.run().checkpoint_minutes(), 5);
    // Written back in the new form only, and read back to the same message.
    const std::string text = ResolvedConfigText(c);
    EXPECT_NE(text.find("\nenv {\n  memory_mask: true\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("\nmemory_mask:"), std::string::npos) << text;
    EXPECT_EQ(text.find("\noom_factor:"), std::string::npos) << text;
    config::DevicePlaceTrainConfig back;
    ParseConfigText(text, "back", &back);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, c));
  }
}

TEST(ConfigAliases, AnOldSetKeyIsTheNewKey) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"memory_mask=true", "env.memory_mask=true"}, {"reward=log", "env.reward=log"},
      {"oom=fixed", "env.oom=fixed"},               {"oom_factor=7", "env.oom_factor=7"},
      {"fuse_above_groups=50", "env.fuse_above_groups=50"}, {"fuse_target_groups=9", "env.fuse_target_groups=9"},
      {"features=heft", "env.features=heft"},       {"order=rank", "env.order=rank"},
      {"memory_estimate=all_outputs", "env.memory_estimate=all_outputs"},
      {"fuse_max_group_fraction=0", "env.fuse_max_group_fraction=0"}};
  for (const auto& [old_key, new_key] : pairs) {
    SCOPED_TRACE(old_key);
    config::DevicePlaceTrainConfig a = WithEnvDefaults(), b = WithEnvDefaults();
    ApplyOverride(old_key, &a);
    ApplyOverride(new_key, &b);
    EXPECT_FALSE(AnyAliasSet(a));
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b)) << ResolvedConfigText(a);
    EXPECT_FALSE(google::protobuf::util::MessageDifferencer::Equals(a, WithEnvDefaults()));
  }
  // The training run's keys (chip and device place-train): run.*.
  for (const char* key : {"minutes=3", "seed=7", "checkpoint_minutes=2", "clock=cpu"}) {
    SCOPED_TRACE(key);
    config::DevicePlaceTrainConfig a, b;
    config::PlaceTrainConfig ca, cb;
    ApplyOverride(key, &a);
    ApplyOverride(std::string("run.") + key, &b);
    ApplyOverride(key, &ca);
    ApplyOverride(std::string("run.") + key, &cb);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b)) << ResolvedConfigText(a);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ca, cb)) << ResolvedConfigText(ca);
    EXPECT_TRUE(a.has_run());
    EXPECT_FALSE(a.has_minutes() || a.has_seed() || a.has_checkpoint_minutes() || a.has_clock());
  }
  // The same for place --env device's config, and inside a --set of a message value.
  config::DevicePlaceConfig p;
  ApplyOverride("oom_factor=3", &p);
  EXPECT_EQ(p.env().oom_factor(), 3);
  EXPECT_FALSE(p.has_oom_factor());
  // A bad value names the key as given.
  config::DevicePlaceTrainConfig c;
  try {
    ApplyOverride("memory_mask=maybe", &c);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set 'memory_mask=maybe': 'maybe' is not a bool", 0), 0u) << e.what();
  }
}

TEST(ConfigAliases, AnAliasAndItsKeyWithDifferentValuesAreRefused) {
  config::DevicePlaceTrainConfig c = WithEnvDefaults();
  try {
    ApplyOverrides({"memory_mask=true", "seed=2", "env.memory_mask=false"}, &c);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--set 'memory_mask=true' and --set 'env.memory_mask=false' ask for different values of env.memory_mask "
              "(memory_mask is a deprecated alias of it); give env.memory_mask once");
  }
  // The same value twice, or one kind given twice (the last wins): fine.
  c = WithEnvDefaults();
  ApplyOverrides({"env.order=rank", "order=rank"}, &c);
  EXPECT_EQ(c.env().order(), "rank");
  ApplyOverrides({"order=rank", "order=topological"}, &c);
  EXPECT_EQ(c.env().order(), "topological");
  // In one text: refused at the alias, file:line:col.
  c = WithEnvDefaults();
  try {
    MergeConfigText("seed: 2\nreward: \"id\"\nenv { reward: \"log\" }\n", "x.pbtxt", &c);
    ADD_FAILURE() << "no error";
  } catch (const ConfigParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.pbtxt:2:1: reward (a deprecated alias of env.reward) is \"id\" but env.reward is \"log\" in the "
              "same text; give env.reward only");
  }
  MergeConfigText("reward: \"id\"\nenv { reward: \"id\" }\n", "y.pbtxt", &c);
  EXPECT_EQ(c.env().reward(), "id");
  EXPECT_FALSE(c.has_reward());
  // Precedence between sources stays: a --set of the old key after a file's env.reward wins.
  MergeConfigText("env { reward: \"log\" }\n", "z.pbtxt", &c);
  ApplyOverride("reward=relative", &c);
  EXPECT_EQ(c.env().reward(), "relative");
}

// Every alias of every schema is `optional` (so it is written only when set) and names a field
// of its own type that has a description.
TEST(ConfigAliases, EveryAliasInTheSchemasIsOptionalAndNamesAFieldOfItsType) {
  google::protobuf::FileDescriptorSet set;
  const auto data = config::ProtoDescriptorSet();
  ASSERT_TRUE(set.ParseFromArray(data.data(), static_cast<int>(data.size())));
  google::protobuf::DescriptorPool pool;
  int aliases = 0;
  for (const auto& file : set.file()) {
    const google::protobuf::FileDescriptor* fd = pool.BuildFile(file);
    ASSERT_NE(fd, nullptr) << file.name();
    for (int i = 0; i < fd->message_type_count(); ++i) {
      const google::protobuf::Descriptor* d = fd->message_type(i);
      for (int j = 0; j < d->field_count(); ++j) {
        const google::protobuf::FieldDescriptor* f = d->field(j);
        const std::string target = AliasTarget(f);
        if (target.empty()) continue;
        ++aliases;
        SCOPED_TRACE(f->full_name() + " -> " + target);
        EXPECT_TRUE(f->has_presence());
        EXPECT_FALSE(f->is_repeated());
        const google::protobuf::Descriptor* at = d;
        const google::protobuf::FieldDescriptor* tf = nullptr;
        std::stringstream parts(target);
        for (std::string part; std::getline(parts, part, '.');) {
          ASSERT_NE(at, nullptr);
          tf = at->FindFieldByName(part);
          ASSERT_NE(tf, nullptr) << part;
          at = tf->message_type();
        }
        ASSERT_NE(tf, nullptr);
        EXPECT_EQ(tf->cpp_type(), f->cpp_type());
        EXPECT_FALSE(tf->is_repeated());
        EXPECT_TRUE(AliasTarget(tf).empty());
        EXPECT_FALSE(FieldDescription(tf).empty());
      }
    }
  }
  // The device environment's ten keys in place-train's and place's configs; the four run keys
  // (minutes, seed, checkpoint_minutes, clock) of both place-trains.
  EXPECT_EQ(aliases, 28);
}

}  // namespace
}  // namespace placerl::run
