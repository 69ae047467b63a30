// The perf-model input readers (spec.h) and the mesh: limits checked in 64-bit (no
// wrapped-around device counts), written keys override defaults the same way in strings and
// .pbtxt files, a key given twice and zero / negative degrees are errors, ResolvePlan fills
// one axis and names the numbers when the degrees do not fit, search keeps fixed keys.
#include "cost_models/tpu/spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/mesh.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

// Expects ConfigError whose message contains `needle`.
template <class Fn>
void ExpectConfigError(Fn fn, const std::string& needle) {
  try {
    fn();
    FAIL() << "no error (expected one containing '" << needle << "')";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/placerl_spec_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

TEST(MeshSpec, DeviceCountsAreCheckedIn64Bit) {
  // 16 × 268435457 = 2^32 + 16 wrapped to 16 devices in 32-bit; 100000³ to a negative count.
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:16x268435457"); }, "268435457");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:100000x100000x100000"); }, "exceed the limit of 1048576");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:16x16,slices=268435457"); }, "slices=268435457");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:1024x1024,slices=2"); }, "exceed the limit");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:16x16,slices=0"); }, "slices=0");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:16x16,slices=-3"); }, "slices=-3");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:0x4"); }, "outside [1, 1048576]");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:2x2x2x2x2"); }, "at most 4 dims");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:4,slices=2,slices=2"); }, "given twice");
  EXPECT_EQ(ParseMeshSpec("tpu_v5e:1024x1024").dims(1), 1024);  // exactly the limit is fine
  // A Mesh built directly (a .pbtxt, a caller) is checked again where devices are counted:
  // TensorCores per chip included (v3: 2 per chip).
  Mesh big;
  big.set_chip("tpu_v5e");
  big.add_dims(16);
  big.add_dims(268435457);
  const Catalog& c = DefaultCatalog();
  ExpectConfigError([&] { MeshTopology(big, FindChip(c, "tpu_v5e")); }, "exceeds the limit");
  Mesh v3;
  v3.set_chip("tpu_v3");
  v3.add_dims(1024);
  v3.add_dims(1024);
  ExpectConfigError([&] { MeshTopology(v3, FindChip(c, "tpu_v3")); }, "2 device(s) per chip x 1024 x 1024");
  Mesh sliced;
  sliced.set_chip("tpu_v5e");
  sliced.add_dims(16);
  sliced.set_slices(268435457);
  ExpectConfigError([&] { MeshTopology(sliced, FindChip(c, "tpu_v5e")); }, "slice(s) exceeds the limit");
  sliced.set_slices(-1);
  ExpectConfigError([&] { MeshTopology(sliced, FindChip(c, "tpu_v5e")); }, "slices must be >= 1");
}

// Expects ParseError at `line` of a file whose name ends with `file`, with `needle`.
template <class Fn>
void ExpectParseError(Fn fn, const std::string& file, int line, const std::string& needle) {
  try {
    fn();
    FAIL() << "no error (expected " << file << ":" << line << ": ..." << needle << ")";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(file + ":" + std::to_string(line) + ": "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(MeshSpec, PbtxtIsCheckedLikeTheString) {
  TempDir dir;
  ExpectParseError(
      [&] { ParseMeshSpec(dir.Write("m.pbtxt", "chip: \"tpu_v5e\"\ndims: 16\ndims: 268435457\n")); }, "m.pbtxt",
      2, "exceed the limit");
  ExpectParseError([&] { ParseMeshSpec(dir.Write("s.pbtxt", "chip: \"tpu_v5e\"\ndims: 4\nslices: 0\n")); },
                   "s.pbtxt", 3, "slices=0");
  const Mesh ok = ParseMeshSpec(dir.Write("ok.pbtxt", "chip: \"tpu_v5p\"\ndims: 4\ndims: 4\nslices: 2\n"));
  EXPECT_EQ(MeshToString(ok), "tpu_v5p:4x4,slices=2");
}

TEST(PlanSpec, ZeroNegativeAndRepeatedKeysAreErrors) {
  for (const char* key : {"interleave", "tensor_x", "microbatches", "data", "fsdp", "tensor", "pipeline", "expert"}) {
    ExpectConfigError([&] { ParsePlanSpec(std::string(key) + "=0"); }, std::string(key) + "=0 is outside");
    ExpectConfigError([&] { ParsePlanSpec(std::string(key) + "=-2"); }, std::string(key) + "=-2 is outside");
  }
  ExpectConfigError([] { ParsePlanSpec("global_batch=0"); }, "global_batch=0");
  ExpectConfigError([] { ParsePlanSpec("fsdp=268435457"); }, "fsdp=268435457 is outside");
  ExpectConfigError([] { ParsePlanSpec("data=2,fsdp=4,data=2"); }, "key \"data\" given twice");
  ExpectConfigError([] { ParseModelSpec("transformer(heads=8,heads=8)"); }, "given twice");
  // The same in a .pbtxt: a written 0 is seen although proto3 does not store it.
  TempDir dir;
  ExpectParseError([&] { ParsePlanSpec(dir.Write("p.pbtxt", "fsdp: 4\n# a comment\ninterleave: 0\n")); }, "p.pbtxt",
                   3, "interleave=0 is outside");
  ExpectParseError([&] { ParseModelSpec(dir.Write("bad.pbtxt", "heads: 8\nlayers: -1\n")); }, "bad.pbtxt", 2,
                   "layers=-1");
  EXPECT_THROW(ParsePlanSpec(dir.Write("d.pbtxt", "fsdp: 4\nfsdp: 8\n")), ParseError);
  const PlanSpec written = ParsePlanSpecWithKeys(dir.Write("k.pbtxt", "fsdp: 4\nshard_optimizer: false\n"));
  EXPECT_TRUE(written.Has("fsdp"));
  EXPECT_TRUE(written.Has("shard_optimizer"));
  EXPECT_FALSE(written.Has("data"));
}

TEST(PlanSpec, ResolveFillsOneAxisAndNamesTheNumbers) {
  // Defaults: fully sharded over the mesh, global batch 512.
  PlanC p = ResolvePlan(ParsePlanSpecWithKeys(""), 256, FillAxis::kFsdp);
  EXPECT_EQ(p.fsdp, 256);
  EXPECT_EQ(p.data, 1);
  EXPECT_EQ(p.global_batch, 512);
  // data=2 changes data only; fsdp takes the rest.
  p = ResolvePlan(ParsePlanSpecWithKeys("data=2"), 256, FillAxis::kFsdp);
  EXPECT_EQ(p.data, 2);
  EXPECT_EQ(p.fsdp, 128);
  EXPECT_EQ(p.global_batch, 512);
  p = ResolvePlan(ParsePlanSpecWithKeys("data=2,pipeline=2"), 8, FillAxis::kTensor);
  EXPECT_EQ(p.tensor, 2);
  p = ResolvePlan(ParsePlanSpecWithKeys("pipeline=4"), 32, FillAxis::kData);
  EXPECT_EQ(p.data, 8);
  ExpectConfigError([] { ResolvePlan(ParsePlanSpecWithKeys("data=3"), 256, FillAxis::kFsdp); },
                    "data=3 x tensor=1 x pipeline=1 = 3 does not divide the mesh's 256 devices");
  ExpectConfigError([] { ResolvePlan(ParsePlanSpecWithKeys("fsdp=16,tensor=4"), 256, FillAxis::kFsdp); },
                    "data=1 x fsdp=16 x tensor=4 x pipeline=1 = 64 devices, but the mesh has 256");
  // Four degrees of 2^20 each: the product is checked step by step, never overflows.
  ExpectConfigError(
      [] {
        ResolvePlan(ParsePlanSpecWithKeys("data=1048576,fsdp=1048576,tensor=1048576,pipeline=1048576"), 256,
                    FillAxis::kFsdp);
      },
      "but the mesh has 256");
  ExpectConfigError([] { ResolvePlan(ParsePlanSpecWithKeys("tensor=4,tensor_x=3"), 16, FillAxis::kFsdp); },
                    "tensor_x=3 does not divide tensor=4");
  EXPECT_EQ(ResolvedPlanString(ResolvePlan(ParsePlanSpecWithKeys("tensor=4,remat=full"), 16, FillAxis::kFsdp), 1)
                .rfind("data=1,fsdp=4,tensor=4,pipeline=1,microbatches=1,expert=1,remat=full,global_batch=512", 0),
            0u);
}

TEST(ModelSpec, OmittedKeysTakeTheDefaultsInBothForms) {
  const TransformerModel m = ParseModelSpec("transformer(heads=7)");  // "layers must be > 0" before
  EXPECT_EQ(m.heads(), 7);
  EXPECT_EQ(m.layers(), DefaultModel().layers());
  EXPECT_EQ(m.vocab(), 32000);
  EXPECT_TRUE(m.flash_attention());
  TempDir dir;
  // A .pbtxt means the same as the string: flash_attention defaults to true in both...
  const TransformerModel f = ParseModelSpec(dir.Write("m.pbtxt", "layers: 4\nheads: 8\nd_model: 1024\n"));
  EXPECT_EQ(ModelToString(f), ModelToString(ParseModelSpec("transformer(layers=4,heads=8,d_model=1024)")));
  EXPECT_TRUE(f.flash_attention());
  // ...and a written false or 0 overrides the default in both.
  const TransformerModel off = ParseModelSpec(dir.Write("off.pbtxt", "flash_attention: false\nvocab: 0\n"));
  EXPECT_FALSE(off.flash_attention());
  EXPECT_EQ(off.vocab(), 0);
  EXPECT_EQ(ModelToString(off), ModelToString(ParseModelSpec("transformer(flash_attention=false,vocab=0)")));
  EXPECT_EQ(ParseModelSpec("moe(layers=2)").num_experts(), 8);
  ExpectConfigError([] { ParseModelSpec("transformer(layers=0)"); }, "layers=0 is outside");
  ExpectConfigError([] { ParseModelSpec("transformer(d_model=-5)"); }, "d_model=-5");
  ExpectConfigError([] { ParseModelSpec("transformer(seq=100000000)"); }, "seq=100000000 is outside");
  ExpectConfigError([] { ParseModelSpec("moe(num_experts=0)"); }, "num_experts");
  // Numbers that do not fit an integer are errors (converting them was undefined behaviour).
  ExpectConfigError([] { ParseModelSpec("transformer(layers=1e300)"); }, "not an integer");
  ExpectConfigError([] { ParseModelSpec("transformer(layers=nan)"); }, "not an integer");
  ExpectConfigError([] { ParseMeshSpec("tpu_v5e:1e19"); }, "not an integer");
  ExpectConfigError([] { ParseModelSpec("moe(capacity_factor=inf)"); }, "not a finite number");
}

// Model dropout (session 29) is on unless written false; `dropout=true` and no key are one
// model and print the same string, the string every model printed before the key existed (so
// resolved strings, goldens and pages stay byte-identical); `dropout=false` prints and reads back;
// a value that is not a boolean is refused with one line, in both forms.
TEST(ModelSpec, DropoutIsOnUnlessWrittenFalse) {
  const std::string fuji =
      "transformer(layers=32,d_model=4096,d_ff=11008,heads=32,head_dim=128,seq=2048,vocab=32768,"
      "gated_ffn=true,tied_embeddings=true,flash_attention=false";
  // As `perf-model run` printed A4's model on main at 55f590a (before the key).
  const std::string printed_before =
      "transformer(layers=32,d_model=4096,d_ff=11008,heads=32,head_dim=128,kv_heads=32,seq=2048,vocab=32768,"
      "gated_ffn=true,num_experts=0,top_k=0,moe_every=0,capacity_factor=0,flash_attention=false,"
      "tied_embeddings=true,parallel_block=false)";
  const TransformerModel unset = ParseModelSpec(fuji + ")"), on = ParseModelSpec(fuji + ",dropout=true)");
  EXPECT_EQ(ModelToString(unset), printed_before);
  EXPECT_EQ(ModelToString(on), printed_before);
  EXPECT_EQ(unset.SerializeAsString(), on.SerializeAsString());
  EXPECT_FALSE(on.has_dropout());
  const TransformerModel off = ParseModelSpec(fuji + ",dropout=false)");
  ASSERT_TRUE(off.has_dropout());
  EXPECT_FALSE(off.dropout());
  const std::string printed_off = ModelToString(off);
  EXPECT_EQ(printed_off, printed_before.substr(0, printed_before.size() - 1) + ",dropout=false)");
  EXPECT_EQ(ParseModelSpec(printed_off).SerializeAsString(), off.SerializeAsString());
  EXPECT_EQ(ModelToString(ParseModelSpec("transformer(dropout=0)")), ModelToString(ParseModelSpec("transformer(dropout=false)")));
  TempDir dir;
  EXPECT_EQ(ModelToString(ParseModelSpec(dir.Write("off.pbtxt", "layers: 4\ndropout: false\n"))),
            ModelToString(ParseModelSpec("transformer(layers=4,dropout=false)")));
  EXPECT_EQ(ModelToString(ParseModelSpec(dir.Write("on.pbtxt", "layers: 4\ndropout: true\n"))),
            ModelToString(ParseModelSpec("transformer(layers=4)")));
  ExpectConfigError([] { ParseModelSpec("transformer(dropout=maybe)"); },
                    "model dropout: expected true/false, got \"maybe\"");
  ExpectConfigError([] { ParseModelSpec("transformer(dropout=false,dropout=true)"); }, "given twice");
  const std::string bad = dir.Write("bad.pbtxt", "layers: 4\ndropout: maybe\n");
  try {
    ParseModelSpec(bad);
    ADD_FAILURE() << "bad.pbtxt was accepted";
  } catch (const ParseError& e) {
    // The line and column of `maybe` (protobuf's parser reports the token after it: line 3
    // until session 30; TextProto.ErrorsNameTheLineOfTheBadToken).
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(bad + ":2:10: ", 0), 0u) << what;
    EXPECT_NE(what.find("\"dropout\". Value: \"maybe\""), std::string::npos) << what;
  }
}

// The first error of a .pbtxt names the line and column of the token it is about. Protobuf's
// text parser reports a bad boolean, an unknown enum value and an unknown field name at the
// token after it (the next line when the value ends its line: `dropout: maybe` on line 2 was
// "bad.pbtxt:3"); a number that is no value of its enum (proto3 enums are open) is refused at
// its field. Every case is checked in the middle of the file and on its last line, with and
// without a final newline.
TEST(TextProto, ErrorsNameTheLineOfTheBadToken) {
  struct Case {
    char message;      // m = TransformerModel, p = Plan, s = Mesh, c = Catalog
    const char* bad;   // the bad line(s), written after a first comment line
    const char* where; // the expected "bad.pbtxt:line:col: " prefix
  };
  const Case cases[] = {
      {'m', "dropout: maybe", "bad.pbtxt:2:10: "},                       // bad bool
      {'m', "flash_attention: yes   # a comment", "bad.pbtxt:2:18: "},  // bad bool, comment after
      {'m', "gated_ffn: true dropout: maybe", "bad.pbtxt:2:26: "},      // bad bool after a good key
      {'m', "block { type: FOO }", "bad.pbtxt:2:15: "},                  // bad enum in a block
      {'m', "bogus: 3", "bad.pbtxt:2:1: "},                              // unknown field
      {'m', "heads: x2", "bad.pbtxt:2:8: "},                             // bad number
      {'m', "capacity_factor: abc", "bad.pbtxt:2:18: "},                 // bad double
      {'p', "remat: FOO", "bad.pbtxt:2:8: "},                            // bad enum
      {'p', "remat: 77", "bad.pbtxt:2:1: "},                             // a number no Remat has
      {'p', "shard_optimizer: maybe", "bad.pbtxt:2:18: "},               // bad bool
      {'p', "global_batch: 1.5", "bad.pbtxt:2:15: "},                    // bad integer
      {'s', "slice: 2", "bad.pbtxt:2:1: "},                              // unknown field
      {'s', "slices: many", "bad.pbtxt:2:9: "},                          // bad number
      {'c', "chip { name: \"y\" peak { dtype: BF17 flops_per_s: 1 } }", "bad.pbtxt:2:32: "},  // bad enum
      {'c', "shape_efficiency { shape_model: maybe }", "bad.pbtxt:2:33: "},  // bad bool in a block
      {'c', "chip { name: \"z\"\n  ici { topology: TORUS_9\n  }\n}", "bad.pbtxt:3:19: "},  // enum ends a line
  };
  for (const Case& k : cases) {
    // The bad line in the middle (a comment after it), last with a final newline, last without.
    for (const char* end : {"\n# after\n", "\n", ""}) {
      const std::string text = std::string("# a comment\n") + k.bad + end;
      TransformerModel model;
      Plan plan;
      Mesh mesh;
      Catalog catalog;
      google::protobuf::Message* msg = k.message == 'm' ? static_cast<google::protobuf::Message*>(&model)
                                       : k.message == 'p' ? static_cast<google::protobuf::Message*>(&plan)
                                       : k.message == 's' ? static_cast<google::protobuf::Message*>(&mesh)
                                                          : &catalog;
      try {
        ParseTextProto(text, "bad.pbtxt", msg);
        ADD_FAILURE() << "accepted: " << text;
      } catch (const ParseError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(k.where, 0), 0u) << text << "\n→ " << e.what();
      }
    }
  }
}

TEST(PlanSearch, KeepsTheKeysWrittenInThePlan) {
  const TransformerModel m = ParseModelSpec("transformer(layers=8,d_model=1024,d_ff=4096,heads=8,seq=512)");
  const TrainingEvaluator ev(m, ParseMeshSpec("tpu_v5e:4x4"), DefaultCatalog());
  const PlanSpec spec = ParsePlanSpecWithKeys("tensor=2,remat=full,global_batch=64");
  const PlanC base = ResolvePlan(spec, ev.num_devices(), FillAxis::kFsdp);
  SearchStats all_stats, fixed_stats;
  SearchPlans(ev, base, 1000, &all_stats);
  const auto ranked = SearchPlans(ev, base, 1000, &fixed_stats, &spec.keys);
  ASSERT_FALSE(ranked.empty());
  EXPECT_LT(fixed_stats.enumerated, all_stats.enumerated);
  for (const RankedPlan& r : ranked) {
    EXPECT_EQ(r.plan.tensor, 2);
    EXPECT_EQ(r.plan.remat, REMAT_FULL);
  }
  // An expert degree written in the plan is kept (it is never enumerated).
  const TransformerModel moe = ParseModelSpec("moe(layers=4,d_model=1024,d_ff=4096,heads=8,seq=512,num_experts=8)");
  const TrainingEvaluator mev(moe, ParseMeshSpec("tpu_v5e:4x4"), DefaultCatalog());
  const PlanSpec es = ParsePlanSpecWithKeys("expert=4,global_batch=64");
  const auto eranked = SearchPlans(mev, ResolvePlan(es, 16, FillAxis::kFsdp), 1000, nullptr, &es.keys);
  ASSERT_FALSE(eranked.empty());
  for (const RankedPlan& r : eranked) EXPECT_EQ(r.plan.expert, 4);
  EXPECT_TRUE(SearchPlans(ev, base, 0, nullptr).empty());
}

}  // namespace
}  // namespace placerl::perf
