// BrainformerStepTime: Brainformer-space architectures → the performance model's step time at
// a stated scale (the GLaM-like block, monotonicity in the block's size, the cache, the plan
// choices) and the block environment's step_time=perf / budget=glam options.
#include <gtest/gtest.h>

#include <cmath>

#include "cost_models/tpu/spec.h"
#include "datasets/util/errors.h"
#include "env/block/block_env.h"
#include "env/block/block_models.h"
#include "env/registry.h"

namespace placerl::env {
namespace {

const nas::SearchSpace& Space() {
  static const nas::SearchSpace space = nas::LoadSearchSpace("brainformer");
  return space;
}

// model_dim plus sub-layers written as "attention:16", "dense_ffn:4", "moe_ffn:4:64:top2:1.25".
nas::Architecture Arch(const std::string& dim, const std::vector<std::string>& subs) {
  std::vector<std::pair<std::string, std::string>> c = {{"block/model_dim", dim}};
  for (int i = 0; i < 8; ++i) {
    const std::string p = "sub" + std::to_string(i) + "/";
    if (i >= static_cast<int>(subs.size())) {
      c.push_back({p + "type", "none"});
      continue;
    }
    std::vector<std::string> f;
    std::string rest = subs[i];
    for (size_t k; (k = rest.find(':')) != std::string::npos; rest = rest.substr(k + 1)) f.push_back(rest.substr(0, k));
    f.push_back(rest);
    c.push_back({p + "type", f[0]});
    if (f[0] == "attention") c.push_back({p + "heads", f.at(1)});
    if (f[0] == "dense_ffn" || f[0] == "moe_ffn") c.push_back({p + "ffn_ratio", f.at(1)});
    if (f[0] == "moe_ffn") {
      c.push_back({p + "experts", f.at(2)});
      c.push_back({p + "gating", f.at(3)});
      c.push_back({p + "capacity_factor", f.at(4)});
    }
  }
  return ArchitectureFromChoices(Space(), c);
}

TEST(BrainformerStepTime, GlamLikeBlockIsTheStatedModel) {
  const BrainformerStepTime model(Space(), BrainformerScale());
  const nas::Architecture glam = GlamLikeArchitecture(Space());
  EXPECT_EQ(Space().Check(glam), "");
  const perf::TransformerModel m = model.ModelOf(glam);
  EXPECT_EQ(perf::BlockToString(m), "attn:h16+ffn:r4+attn:h16+moe:r4:e64:k2:cf2+attn:h16+ffn:r4+attn:h16+moe:r4:e64:k2:cf2");
  EXPECT_EQ(m.d_model(), 1024);
  EXPECT_EQ(m.layers(), 8);
  EXPECT_EQ(m.seq(), 1024);
  const BrainformerStepTime::Result r = model.Evaluate(glam);
  EXPECT_TRUE(r.breakdown.valid);
  EXPECT_FALSE(r.oom);
  EXPECT_EQ(r.plan.fsdp, 16);   // tpu_v4:4x4 = 16 devices, all FSDP
  EXPECT_EQ(r.plan.expert, 16);  // gcd(16 devices, 64 experts)
  EXPECT_GT(r.step_s, 0.01);
  EXPECT_LT(r.step_s, 100);
  std::printf("GLaM-like block at the default scale: %.6f s (remat %d)\n", r.step_s, int(r.plan.remat));
}

TEST(BrainformerStepTime, LargerBlocksTakeLonger) {
  const BrainformerStepTime model(Space(), BrainformerScale());
  auto t = [&](const std::string& dim, const std::vector<std::string>& subs) {
    const double s = model.StepTime(Arch(dim, subs));
    EXPECT_TRUE(std::isfinite(s) && s > 0);
    return s;
  };
  const std::vector<std::vector<std::string>> growing = {
      {"attention:8"},
      {"attention:8", "dense_ffn:2"},
      {"attention:8", "dense_ffn:4"},
      {"attention:8", "dense_ffn:4", "moe_ffn:2:16:top1:1"},
      {"attention:8", "dense_ffn:4", "moe_ffn:2:16:top2:1"},
      {"attention:8", "dense_ffn:4", "moe_ffn:2:16:top2:2"},
      {"attention:8", "dense_ffn:4", "moe_ffn:4:16:top2:2"},
      {"attention:8", "dense_ffn:4", "moe_ffn:4:16:top2:2", "attention:8"},
      {"attention:8", "dense_ffn:4", "moe_ffn:4:16:top2:2", "attention:8", "dense_ffn:8"},
  };
  for (size_t i = 1; i < growing.size(); ++i)
    EXPECT_GT(t("768", growing[i]), t("768", growing[i - 1])) << i;
  for (const auto& subs : growing) EXPECT_GT(t("1536", subs), t("512", subs));
  // Expert choice with capacity 1 routes one slot per token: cheaper than top-2 at capacity 1.
  EXPECT_LT(t("768", {"attention:8", "moe_ffn:4:16:expert_choice:1"}), t("768", {"attention:8", "moe_ffn:4:16:top2:1"}));
  // Only "none": embeddings + logits, cheaper than any block.
  EXPECT_LT(t("768", {}), t("768", growing[0]));
}

TEST(BrainformerStepTime, CachesPerArchitecture) {
  const BrainformerStepTime model(Space(), BrainformerScale());
  const nas::Architecture a = GlamLikeArchitecture(Space());
  const double first = model.StepTime(a);
  EXPECT_EQ(model.StepTime(a), first);
  EXPECT_EQ(model.cache_size(), 1u);
  EXPECT_EQ(model.Evaluate(a).step_s, first);
  model.StepTime(Arch("512", {"attention:4"}));
  EXPECT_EQ(model.cache_size(), 2u);
}

TEST(BrainformerStepTime, SearchedPlanIsNoSlowerThanTheFsdpPlan) {
  BrainformerScale scale;
  scale.blocks = 4;
  scale.mesh = "tpu_v5e:4x4";
  const BrainformerStepTime fsdp(Space(), scale);
  scale.plan = "search";
  const BrainformerStepTime search(Space(), scale);
  for (const nas::Architecture& a : {GlamLikeArchitecture(Space()), Arch("1024", {"attention:16", "dense_ffn:4"}),
                                     Arch("512", {"moe_ffn:8:32:expert_choice:2", "attention:4"})}) {
    const BrainformerStepTime::Result f = fsdp.Evaluate(a), s = search.Evaluate(a);
    ASSERT_FALSE(f.oom);
    EXPECT_LE(s.step_s, f.step_s);
    EXPECT_FALSE(s.breakdown.oom);
  }
}

TEST(BrainformerStepTime, BadScalesAndSpacesAreConfigErrors) {
  BrainformerScale bad;
  bad.plan = "fastest";
  EXPECT_THROW(BrainformerStepTime(Space(), bad), ConfigError);
  bad = BrainformerScale();
  bad.mesh = "tpu_v9:4x4";
  EXPECT_THROW(BrainformerStepTime(Space(), bad), ConfigError);
  bad = BrainformerScale();
  bad.blocks = 0;
  EXPECT_THROW(BrainformerStepTime(Space(), bad), ConfigError);
  EXPECT_THROW(BrainformerStepTime(nas::LoadSearchSpace("nb201"), BrainformerScale()), ConfigError);
  bad = BrainformerScale();
  bad.batch = 8;  // < 16 devices
  EXPECT_THROW(BrainformerStepTime(Space(), bad), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=nb201,step_time=perf)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=brainformer,step_time=fast)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=brainformer,blocks=0)"), ConfigError);
  EXPECT_THROW(MakeEnvironment("block(space=enas_macro,budget=glam)"), ConfigError);
}

TEST(BrainformerStepTime, EnvironmentCostIsTheStepTime) {
  auto env = MakeEnvironment("block(space=brainformer,budget=glam,penalty=2,blocks=4,mesh=tpu_v5e:4x4)");
  auto* block = dynamic_cast<BlockEnv*>(env.get());
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->step_time_model().unit(), "s");
  BrainformerScale scale;
  scale.blocks = 4;
  scale.mesh = "tpu_v5e:4x4";
  const BrainformerStepTime model(Space(), scale);
  const nas::Architecture glam = GlamLikeArchitecture(Space());
  EXPECT_EQ(block->options().cost_budget, model.StepTime(glam));
  EXPECT_EQ(block->Evaluate(glam).penalty, 0);
  const nas::Architecture big = Arch("1536", {"attention:16", "moe_ffn:8:64:top2:2", "attention:16", "moe_ffn:8:64:top2:2",
                                               "attention:16", "dense_ffn:8"});
  const BlockScore s = block->Evaluate(big);
  EXPECT_EQ(s.cost, model.StepTime(big));
  EXPECT_GT(s.cost, block->options().cost_budget);
  EXPECT_DOUBLE_EQ(s.penalty, 2 * (s.cost / block->options().cost_budget - 1));
  // An episode that builds `big` ends with the same cost in info.
  env->Reset(1);
  for (int32_t c : big) env->Step(c);
  EXPECT_EQ(env->info()[1], s.cost);
  // name() keeps the scale: the re-created environment has the same budget and costs.
  auto again = MakeEnvironment(env->name());
  EXPECT_EQ(again->name(), env->name());
  EXPECT_NE(env->name().find("step_time=perf,blocks=4,seq=1024,vocab=32000,batch=256,mesh=tpu_v5e:4x4,plan=fsdp"),
            std::string::npos)
      << env->name();
  // Spaces without a performance model keep their default (no cost / the table proxy).
  EXPECT_EQ(MakeEnvironment("block(space=enas_macro)")->name().find("step_time"), std::string::npos);
  EXPECT_NE(MakeEnvironment("block(space=brainformer,step_time=none)")->name().find("step_time=none"), std::string::npos);
}

// The architectures docs/nas.md ("Brainformer step time") reports, printed with their model
// strings (`perf-model run --model '…' --mesh tpu_v4:4x4 --plan expert=E,global_batch=256,remat=R`
// reproduces each line). Checked: the routing facts the table illustrates.
TEST(BrainformerStepTime, ReportedArchitectures) {
  const BrainformerStepTime model(Space(), BrainformerScale());
  struct Row {
    const char* name;
    nas::Architecture arch;
  };
  const std::vector<Row> rows = {
      {"GLaM-like ((attn, ffn, attn, moe top-2 cf2) x 2)", GlamLikeArchitecture(Space())},
      {"4-sub-layer GLaM-like, top-2 cf1.25", Arch("1024", {"attention:16", "dense_ffn:4", "attention:16", "moe_ffn:4:64:top2:1.25"})},
      {"4-sub-layer, expert choice cf1", Arch("1024", {"attention:16", "dense_ffn:4", "attention:16", "moe_ffn:4:64:expert_choice:1"})},
      {"4-sub-layer, expert choice cf2", Arch("1024", {"attention:16", "dense_ffn:4", "attention:16", "moe_ffn:4:64:expert_choice:2"})},
      {"4-sub-layer, top-1 cf1.25", Arch("1024", {"attention:16", "dense_ffn:4", "attention:16", "moe_ffn:4:64:top1:1.25"})},
      {"dense (attn, ffn) x2", Arch("1024", {"attention:16", "dense_ffn:4", "attention:16", "dense_ffn:4"})},
      {"Brainformer-style (attn, moe ec, ffn, moe ec, ffn)",
       Arch("1024", {"attention:16", "moe_ffn:4:64:expert_choice:1", "dense_ffn:2", "moe_ffn:4:64:expert_choice:1", "dense_ffn:2"})},
      {"8 sub-layers, d=1536", Arch("1536", {"attention:16", "moe_ffn:4:64:top2:2", "dense_ffn:4", "attention:16",
                                             "moe_ffn:4:64:top2:2", "dense_ffn:4", "attention:16", "moe_ffn:8:64:top2:2"})},
      {"small (d=512, attn 8, ffn 2)", Arch("512", {"attention:8", "dense_ffn:2"})},
  };
  std::vector<double> t;
  for (const Row& r : rows) {
    const BrainformerStepTime::Result res = model.Evaluate(r.arch);
    t.push_back(res.step_s);
    std::printf("| %s | `%s` | d=%d | %.4f s | remat %d, expert %d%s |\n", r.name,
                perf::BlockToString(model.ModelOf(r.arch)).c_str(), model.ModelOf(r.arch).d_model(), res.step_s,
                int(res.plan.remat), res.plan.expert, res.oom ? ", OOM" : "");
  }
  EXPECT_LT(t[1], t[0]);  // half the sub-layers, capacity 1.25 instead of 2
  EXPECT_LT(t[2], t[1]);  // one slot per token instead of 2 × 1.25
  EXPECT_LT(t[3], t[1]);  // expert choice cf 2 = 2 slots per token, top-2 cf 1.25 = 2.5
  EXPECT_LT(t[4], t[1]);  // top-1
  EXPECT_LT(t[8], t[5]);
}

}  // namespace
}  // namespace placerl::env
