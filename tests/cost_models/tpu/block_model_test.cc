// Heterogeneous Transformer blocks in the training-run evaluator (TransformerModel.block):
// uniform models give bit-identical numbers to the evaluator before blocks existed (golden
// file written by that evaluator), an explicit [attention, dense_ffn] block equals the uniform
// model, MoE sub-layer FLOPs / params and top-k vs expert-choice capacity by hand, and the
// block spec syntax with its malformed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {
namespace {

constexpr const char* kUniformGolden = "tests/data/perf/uniform_golden.txt";

// Uniform models (dense, gated, multi-query, no flash attention, MoE every layer / every
// other layer, tied embeddings) × meshes × every enumerated plan (valid or not) × a few bases.
struct GridCase {
  std::string model, mesh;
};
std::vector<GridCase> UniformGrid() {
  const std::vector<std::string> models = {
      "transformer(layers=8,d_model=1024,d_ff=4096,heads=16,seq=1024,vocab=32000)",
      "transformer(layers=12,d_model=2048,d_ff=5632,heads=16,kv_heads=1,gated_ffn=true,seq=2048)",
      "transformer(layers=6,d_model=768,d_ff=3072,heads=12,seq=512,flash_attention=false,tied_embeddings=true)",
      "moe(layers=8,d_model=1024,d_ff=4096,heads=16,num_experts=16,top_k=2,seq=1024)",
      "moe(layers=8,d_model=1024,d_ff=2048,heads=8,num_experts=32,top_k=1,moe_every=2,capacity_factor=2,seq=1024)",
  };
  const std::vector<std::string> meshes = {"tpu_v4:2x2x2", "tpu_v5e:4x4", "tpu_v3:2x2"};
  std::vector<GridCase> out;
  for (const auto& m : models)
    for (const auto& me : meshes) out.push_back({m, me});
  return out;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One line per (case, base, plan): every field of the breakdown, printed exactly.
std::string BreakdownLine(const StepBreakdown& b) {
  if (!b.valid) return std::string("invalid ") + b.invalid_reason;
  std::string s;
  for (double v : {b.step_s, b.compute_s, b.exposed_tp_s, b.exposed_fsdp_s, b.exposed_dp_s, b.exposed_ep_s,
                   b.pipeline_comm_s, b.bubble_s, b.optimizer_s, b.tokens_per_s, b.model_flops, b.hw_flops,
                   b.mfu, b.hfu, b.hbm_params, b.hbm_grads, b.hbm_optimizer, b.hbm_activations, b.hbm_total})
    s += Num(v) + " ";
  return s + std::to_string(b.microbatches) + (b.oom ? " oom" : "");
}

// FNV-1a of a text: the golden file stores one hash per (case, base) instead of ~20,000
// lines of 19 numbers each (9 MB).
uint64_t Fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::vector<std::string> UniformLines() {
  std::vector<std::string> lines;
  const Catalog& catalog = DefaultCatalog();
  std::vector<PlanC> bases(3);
  bases[0].global_batch = 64;
  bases[1].global_batch = 256;
  bases[1].optimizer = ADAFACTOR;
  bases[1].param_dtype = BF16;
  bases[1].update_consumes_gradients = true;
  bases[2].global_batch = 32;
  bases[2].grad_reduce_after_backward = true;
  bases[2].no_sequence_parallel = true;
  for (const GridCase& c : UniformGrid()) {
    const TrainingEvaluator ev(ParseModelSpec(c.model), ParseMeshSpec(c.mesh), catalog);
    lines.push_back(c.model + " " + c.mesh + " params " + Num(ev.total_params()));
    for (size_t bi = 0; bi < bases.size(); ++bi) {
      std::vector<PlanC> plans = EnumeratePlans(ev, bases[bi]);
      // Expert-parallel variants of the MoE plans too (the enumeration keeps expert = 1).
      if (ev.model().num_experts() > 0)
        for (size_t i = 0, n = plans.size(); i < n; ++i)
          for (int e : {2, 4}) {
            PlanC p = plans[i];
            p.expert = e;
            plans.push_back(p);
          }
      uint64_t hash = Fnv1a("");
      int valid = 0;
      std::string first_valid;
      for (const PlanC& p : plans) {
        const StepBreakdown b = ev.Evaluate(p);
        const std::string line = ResolvedPlanString(p, p.microbatches) + " " + BreakdownLine(b);
        hash = Fnv1a(line + "\n", hash);
        valid += b.valid ? 1 : 0;
        if (b.valid && first_valid.empty()) first_valid = line;
      }
      char h[20];
      std::snprintf(h, sizeof h, "%016llx", static_cast<unsigned long long>(hash));
      lines.push_back("  base " + std::to_string(bi) + ": " + std::to_string(plans.size()) + " plans, " +
                      std::to_string(valid) + " valid, fnv1a " + h);
      lines.push_back("  first valid: " + first_valid);
    }
  }
  // The published-number checks: every row's prediction.
  const ValidationReport report = Validate(DefaultMeasurements(), catalog);
  for (const ValidationRow& r : report.rows)
    lines.push_back("validation " + r.id + " " + Num(r.predicted) + (r.error.empty() ? "" : " " + r.error));
  return lines;
}

// HARD requirement of the heterogeneous blocks: the uniform path is unchanged. The golden
// file was written by the evaluator before blocks existed (commit f4631d2). A change of the
// uniform model or of the catalogue's efficiencies made on purpose rewrites it with
// PLACERL_WRITE_UNIFORM_GOLDEN=1 build/tests/block_model_test (and says so in its commit).
TEST(UniformModels, BitIdenticalToTheEvaluatorBeforeBlocks) {
  const std::vector<std::string> lines = UniformLines();
  if (std::getenv("PLACERL_WRITE_UNIFORM_GOLDEN") != nullptr) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    WriteFileAtomic(kUniformGolden, text);
    GTEST_SKIP() << "wrote " << kUniformGolden;
  }
  std::istringstream golden(ReadFile(kUniformGolden));
  std::string g;
  size_t i = 0, valid_plans = 0;
  for (; std::getline(golden, g); ++i) {
    ASSERT_LT(i, lines.size());
    ASSERT_EQ(lines[i], g) << "line " << i + 1;
    int plans = 0, valid = 0;
    if (std::sscanf(g.c_str(), "  base %*d: %d plans, %d valid", &plans, &valid) == 2) valid_plans += valid;
  }
  EXPECT_EQ(i, lines.size());
  EXPECT_GT(valid_plans, 5000u);  // the hashes cover thousands of valid plans
}

// A uniform dense model written as an explicit block [attention, dense_ffn] (sub-layers take
// the model's heads, kv_heads, head_dim and d_ff) gives the same numbers, bit for bit, on every
// enumerated plan (1-D and 2-D tensor, pipeline, remat, ...).
TEST(BlockModels, AttentionDenseBlockEqualsTheUniformModel) {
  const Catalog& catalog = DefaultCatalog();
  int compared = 0;
  for (const GridCase& c : UniformGrid()) {
    const TransformerModel uniform = ParseModelSpec(c.model);
    if (uniform.num_experts() > 0) continue;
    TransformerModel block = uniform;
    block.add_block()->set_type(ATTENTION);
    block.add_block()->set_type(DENSE_FFN);
    const TrainingEvaluator eu(uniform, ParseMeshSpec(c.mesh), catalog);
    const TrainingEvaluator eb(block, ParseMeshSpec(c.mesh), catalog);
    ASSERT_EQ(eb.block().size(), 2u);
    EXPECT_EQ(eu.total_params(), eb.total_params()) << c.model;
    PlanC base;
    base.global_batch = 64;
    const std::vector<PlanC> plans = EnumeratePlans(eu, base);
    ASSERT_EQ(plans.size(), EnumeratePlans(eb, base).size());
    for (const PlanC& p : plans) {
      const std::string u = BreakdownLine(eu.Evaluate(p)), b = BreakdownLine(eb.Evaluate(p));
      ASSERT_EQ(u, b) << c.model << " " << c.mesh << " " << ResolvedPlanString(p, p.microbatches);
      compared += u.rfind("invalid", 0) == 0 ? 0 : 1;
    }
  }
  EXPECT_GT(compared, 300);
}

TransformerModel Model(const std::string& spec) { return ParseModelSpec(spec); }

PlanC FsdpPlan(int devices, double batch, int expert = 1) {
  PlanC p;
  p.fsdp = devices;
  p.expert = expert;
  p.global_batch = batch;
  return p;
}

// An MoE sub-layer's parameters and FLOPs by hand: d = 512, one attention (8 heads of 64),
// one MoE FFN of 8 experts of d_ff 2048, top-2, two blocks, vocab 1000, untied.
TEST(BlockModels, MoeSubLayerParamsAndFlopsByHand) {
  const TrainingEvaluator ev(
      Model("transformer(layers=2,d_model=512,d_ff=999,heads=4,seq=128,vocab=1000,block=attn:h8+moe:f2048:e8:k2:cf1.25)"),
      ParseMeshSpec("tpu_v4:2x2x1"), DefaultCatalog());
  const double d = 512, f = 2048, E = 8, L = 2, V = 1000, S = 128, H = 8, dh = 64;
  const double p_attn = 4 * d * d;             // Q, K, V, O
  const double p_expert = 2 * d * f;           // in + out
  const double p_router = d * E;
  EXPECT_DOUBLE_EQ(ev.total_params(), L * (p_attn + E * p_expert + p_router) + 2 * V * d);
  const StepBreakdown b = ev.Evaluate(FsdpPlan(4, 16, 4));
  ASSERT_TRUE(b.valid) << b.invalid_reason;
  const double tokens = 16 * S;
  const double active = L * (p_attn + 2 * p_expert + p_router);  // top-2: two experts per token
  EXPECT_DOUBLE_EQ(b.model_flops, tokens * (6 * (active + V * d) + 3 * 4 * S * H * dh * L));
  // Params per device: dense ones FSDP-sharded 4-way, experts expert-sharded 4-way.
  EXPECT_DOUBLE_EQ(b.hbm_params, ((L * (p_attn + p_router) + 2 * V * d) / 4 + L * E * p_expert / 4) * 4);
}

// Capacity by hand: top-k routes k·cf·T slots, expert choice cf·T (each of E experts takes
// cf·T/E tokens). Equal slots and equal active experts per token → the same step.
TEST(BlockModels, ExpertChoiceVersusTopKCapacity) {
  const TransformerModel m = Model(
      "transformer(layers=2,d_model=512,heads=8,seq=128,vocab=1000,block=moe:e8:ec:cf2+moe:e8:k2:cf1+moe:e8:k2:cf1.25+moe:e8:ec:cf1)");
  const std::vector<SubLayerC> subs = BlockSubLayers(NormalizedModel(m));
  ASSERT_EQ(subs.size(), 4u);
  EXPECT_TRUE(subs[0].expert_choice);
  EXPECT_DOUBLE_EQ(subs[0].RoutedPerToken(), 2);    // cf
  EXPECT_DOUBLE_EQ(subs[1].RoutedPerToken(), 2);    // k·cf
  EXPECT_DOUBLE_EQ(subs[2].RoutedPerToken(), 2.5);  // 2·1.25
  EXPECT_DOUBLE_EQ(subs[3].RoutedPerToken(), 1);
  EXPECT_DOUBLE_EQ(subs[0].ActiveExperts(), 2);
  EXPECT_DOUBLE_EQ(subs[2].ActiveExperts(), 2);
  EXPECT_DOUBLE_EQ(subs[3].ActiveExperts(), 1);
  const Mesh mesh = ParseMeshSpec("tpu_v4:2x2x1");
  auto step = [&](const std::string& block) {
    const TrainingEvaluator ev(Model("transformer(layers=2,d_model=512,heads=8,seq=128,vocab=1000,block=" + block + ")"),
                               mesh, DefaultCatalog());
    const StepBreakdown b = ev.Evaluate(FsdpPlan(4, 16, 4));
    EXPECT_TRUE(b.valid) << b.invalid_reason;
    return b;
  };
  const StepBreakdown ec2 = step("attn+moe:e8:ec:cf2"), k2 = step("attn+moe:e8:k2:cf1");
  EXPECT_EQ(BreakdownLine(ec2), BreakdownLine(k2));
  const StepBreakdown k2_125 = step("attn+moe:e8:k2:cf1.25"), ec1 = step("attn+moe:e8:ec:cf1");
  EXPECT_GT(k2_125.step_s, ec2.step_s);            // 2.5 vs 2 slots per token
  EXPECT_DOUBLE_EQ(k2_125.model_flops, ec2.model_flops);  // both two experts per token
  EXPECT_LT(ec1.step_s, ec2.step_s);
  EXPECT_LT(ec1.model_flops, ec2.model_flops);
}

// More or larger sub-layers → a longer step (same plan).
TEST(BlockModels, StepTimeGrowsWithTheBlock) {
  const Mesh mesh = ParseMeshSpec("tpu_v4:2x2x2");
  auto step = [&](const std::string& block) {
    const TrainingEvaluator ev(Model("transformer(layers=4,d_model=1024,heads=16,seq=512,vocab=32000,block=" + block + ")"),
                               mesh, DefaultCatalog());
    const StepBreakdown b = ev.Evaluate(FsdpPlan(8, 64, ev.has_experts() ? 8 : 1));
    EXPECT_TRUE(b.valid) << block << ": " << b.invalid_reason;
    return b.step_s;
  };
  const std::vector<std::string> growing = {"attn:h8",
                                            "attn:h8+ffn:r2",
                                            "attn:h8+ffn:r4",
                                            "attn:h16:hd128+ffn:r4",
                                            "attn:h16:hd128+ffn:r4+moe:r2:e8:k1",
                                            "attn:h16:hd128+ffn:r4+moe:r2:e8:k2",
                                            "attn:h16:hd128+ffn:r4+moe:r4:e8:k2",
                                            "attn:h16:hd128+ffn:r4+moe:r4:e8:k2+attn:h16:hd128"};
  for (size_t i = 1; i < growing.size(); ++i) EXPECT_GT(step(growing[i]), step(growing[i - 1])) << growing[i];
}

TEST(BlockModels, PlansCheckEverySubLayer) {
  const TrainingEvaluator ev(
      Model("transformer(layers=4,d_model=1024,heads=16,seq=512,block=attn:h16+moe:e4:k1+attn:h4+ffn:r4)"),
      ParseMeshSpec("tpu_v4:2x2x2"), DefaultCatalog());
  EXPECT_EQ(ev.tensor_heads(), 4);
  EXPECT_TRUE(ev.has_experts());
  PlanC p = FsdpPlan(1, 64);
  p.tensor = 8;
  EXPECT_STREQ(ev.Evaluate(p).invalid_reason, "tensor does not divide a sub-layer's heads");
  p = FsdpPlan(8, 64, 8);
  EXPECT_STREQ(ev.Evaluate(p).invalid_reason, "expert must divide data*fsdp and num_experts");
  p = FsdpPlan(1, 64);
  p.pipeline = 8;  // 4 blocks: stages split at block granularity
  EXPECT_STREQ(ev.Evaluate(p).invalid_reason, "pipeline > layers");
  p = FsdpPlan(2, 64);
  p.pipeline = 4;
  EXPECT_TRUE(ev.Evaluate(p).valid);
  PlanC base;
  base.global_batch = 64;
  SearchStats stats;
  const std::vector<RankedPlan> best = SearchPlans(ev, base, 3, &stats);
  ASSERT_FALSE(best.empty());
  for (const RankedPlan& r : best) EXPECT_EQ(4 % r.plan.tensor, 0);
  EXPECT_EQ(ev.EvaluateInference(FsdpPlan(1, 1), InferenceQuery()).valid, false);
}

// The model's scalar keys as written by ModelToString, without the family and the block.
std::string FieldsOf(const TransformerModel& m) {
  std::string s = ModelToString(m);
  s = s.substr(s.find('(') + 1);
  return s.substr(0, s.find(",block="));
}

TEST(BlockSpec, ParsesPrintsAndReadsBack) {
  const TransformerModel m = Model("transformer(d_model=1024,layers=4,block=attn:h16+moe:e64:k2:cf1.25+ffn:r4)");
  ASSERT_EQ(m.block_size(), 3);
  EXPECT_EQ(m.block(0).type(), ATTENTION);
  EXPECT_EQ(m.block(0).heads(), 16);
  EXPECT_EQ(m.block(0).head_dim(), 64);
  EXPECT_EQ(m.block(1).type(), MOE_FFN);
  EXPECT_EQ(m.block(1).num_experts(), 64);
  EXPECT_EQ(m.block(1).top_k(), 2);
  EXPECT_DOUBLE_EQ(m.block(1).capacity_factor(), 1.25);
  EXPECT_EQ(m.block(1).d_ff(), 8192);  // the model's d_ff (the default model's)
  EXPECT_EQ(m.block(2).d_ff(), 4096);  // ratio 4 × d_model
  const std::string printed = ModelToString(m);
  EXPECT_NE(printed.find(",block=attn:h16:kv16:hd64+moe:f8192:e64:k2:cf1.25+ffn:r4:f4096)"), std::string::npos)
      << printed;
  EXPECT_EQ(Model(printed).SerializeAsString(), m.SerializeAsString());
  const TransformerModel odd = Model("transformer(block=moe:e8:r0.30000000000000004:cf1.1000000000000001)");
  EXPECT_EQ(Model("transformer(" + FieldsOf(odd) + ",block=" + BlockToString(odd) + ")").SerializeAsString(),
            odd.SerializeAsString());
  EXPECT_EQ(Model("transformer(block=attention:h8+dense_ffn:f100+moe_ffn:e4:ec:cf2)").block(2).gating(),
            GATING_EXPERT_CHOICE);
}

TEST(BlockSpec, PbtxtFormEqualsTheString) {
  const std::string path = ::testing::TempDir() + "/block_model.pbtxt";
  WriteFileAtomic(path,
                  "d_model: 1024\nlayers: 4\nblock { type: ATTENTION heads: 16 }\n"
                  "block { type: MOE_FFN num_experts: 64 gating: GATING_EXPERT_CHOICE capacity_factor: 2 }\n"
                  "block { type: DENSE_FFN ffn_ratio: 4 }\n");
  EXPECT_EQ(Model(path).SerializeAsString(),
            Model("transformer(d_model=1024,layers=4,block=attn:h16+moe:e64:ec:cf2+ffn:r4)").SerializeAsString());
  WriteFileAtomic(path, "layers: 4\nblock { type: MOE_FFN }\n");  // no experts anywhere
  try {
    Model(path);
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("block sub-layer 1: an MoE sub-layer needs num_experts"), std::string::npos)
        << e.what();
  }
  WriteFileAtomic(path, "layers: 4\nblock { type: DENSE_FFN\n  ffn_ratio: -2 }\n");
  EXPECT_THROW(Model(path), ParseError);
}

// Malformed blocks: one-line ConfigError naming the bad token.
TEST(BlockSpec, MalformedBlocksNameTheToken) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"attn:h16+moe:x3", "bad token \"x3\""},
      {"attn:r4", "bad token \"r4\""},
      {"ffn:h8", "bad token \"h8\""},
      {"mlp:r4", "bad token \"mlp\""},
      {"moe:e0", "bad token \"e0\""},
      {"moe:e8:cf-1", "bad token \"cf-1\""},
      {"moe:e8:cfx", "bad token \"cfx\""},
      {"moe:e8:k2:ec", "bad token \"ec\""},
      {"attn:h16:h8", "bad token \"h8\" (given twice)"},
      {"attn:h", "bad token \"h\" (missing value)"},
      {"ffn:r4+", "bad token \"+\""},
      {"attn++ffn", "bad token \"\""},
      {"", "empty"},
      {"moe:e8:k9", "top_k must be <= num_experts"},
      {"attn:h16:kv32", "kv_heads must be <= heads"},
      {"ffn:r9000", "ffn_ratio × d_model must be <= 2^24"},
  };
  for (const auto& [block, what] : bad) {
    try {
      Model("transformer(layers=2,block=" + block + ")");
      ADD_FAILURE() << block << ": no error";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(what), std::string::npos) << block << " → " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(Model("transformer(block=attn,block=ffn)"), ConfigError);
}

}  // namespace
}  // namespace placerl::perf
