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
// file was written by the evaluator before blocks existed (PLACERL_WRITE_UNIFORM_GOLDEN=1
// rewrites it — only ever from that commit).
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

}  // namespace
}  // namespace placerl::perf
