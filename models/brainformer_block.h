// A Brainformer block (Zhou et al. 2023; nas_notes.md §4.2) read out of an architecture of the
// `brainformer` search space (datasets/nas/spaces/brainformer.pbtxt), the shape of the small
// patch Transformer we train from it on CPU (brainformer_net.h), its analytic parameter count
// and FLOPs, the GLaM-like uniform reference block, and a stand-in step-time proxy. Torch-free:
// nas-search and the quality model include it without LibTorch.
//
// Scale mapping (stated once, used everywhere): the space's model_dim (512…1536) is the TARGET
// width the step-time model sees; the trained network's width is model_dim / width_divisor
// (16 → 32, 48, 64, 96) and its experts per MoE sub-layer experts / expert_divisor (4 → 2, 4,
// 8, 16), expert hidden = ffn_ratio × trained width. Heads, FFN ratios, gating and capacity
// factors are kept as they are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/nas/search_space.h"
#include "env/block/block_models.h"

namespace placerl::brainformer {

enum class SubLayerType { kAttention, kDenseFfn, kMoeFfn, kNone };
enum class Gating { kNone, kTop1, kTop2, kExpertChoice };

const char* Name(SubLayerType t);
const char* Name(Gating g);

// One sub-layer as the space describes it (target scale).
struct SubLayer {
  SubLayerType type = SubLayerType::kNone;
  int32_t heads = 0;             // attention
  int32_t ffn_ratio = 0;         // dense / MoE FFN: hidden = ratio × width
  int32_t experts = 0;           // MoE
  Gating gating = Gating::kNone;  // MoE
  double capacity_factor = 0;    // MoE
};

struct Block {
  int32_t model_dim = 0;          // target-scale width
  std::vector<SubLayer> layers;   // in order, "none" included (skipped when built)
  // "d1024 attn16 moe4x64/top2/cf2 …" ("none" left out), for logs and result.json.
  std::string Summary() const;
};

// Reads the block of a complete, allowed architecture of `space` by decision names
// (block/model_dim, sub{i}/type, …). Throws ConfigError when the space is not a brainformer space
// (a decision missing) or the architecture is not allowed.
Block BlockFromArchitecture(const nas::SearchSpace& space, const nas::Architecture& a);

// The GLaM-like reference block: env::GlamLikeArchitecture (env/block/block_models.h).
using env::GlamLikeArchitecture;

// The trained network's shape (the scale mapping above and the input).
struct NetShape {
  int32_t width_divisor = 16;
  int32_t expert_divisor = 4;
  int32_t repeats = 1;         // the block stacked R times
  int32_t image_size = 28;     // Fashion-MNIST 28 × 28 …
  int32_t patch_size = 7;      // … as 16 patches of 7 × 7, learned positions, mean pooling
  int32_t num_classes = 10;
  int32_t tokens() const { return (image_size / patch_size) * (image_size / patch_size); }
  int32_t patch_pixels() const { return patch_size * patch_size; }
};

// A sub-layer at training scale.
int32_t TrainWidth(const Block& b, const NetShape& s);
// Attention's query/key/value width: heads × ceil(width / heads) (= width when heads divide it, as
// at the default divisor 16; a narrower trained width than heads × 1 still gets one dim per head).
int64_t AttentionInnerWidth(int64_t width, int64_t heads);
int32_t TrainExperts(const SubLayer& l, const NetShape& s);
// Expert capacity (tokens per expert) for `tokens` tokens routed together:
//   top-k token choice: ceil(cf · k · tokens / experts); expert choice: ceil(cf · tokens / experts)
// (expert choice's capacity factor = mean experts per token, Zhou et al. 2022); at most `tokens`.
int64_t ExpertCapacity(Gating g, double capacity_factor, int64_t tokens, int32_t experts);

struct NetCost {
  int64_t params = 0;            // every trainable parameter of the trained network
  int64_t activated_params = 0;  // per token: experts count k (top-k) or cf (expert choice) times
  double flops_per_sample = 0;   // forward multiply-adds × 2 of one image (all layers, attention scores)
};
// Analytic cost of the trained network (equals the module's parameter count; tested).
NetCost TrainedNetCost(const Block& b, const NetShape& s);

// Stand-in step-time model until the TPU performance model's BrainformerStepTime is wired in:
// activated forward GFLOPs per token of the block at TARGET scale (model_dim, all experts,
// sequence `sequence` for the attention scores). A proxy, not a time; its unit says so.
class BlockFlopsProxy : public env::StepTimeModel {
 public:
  BlockFlopsProxy(std::shared_ptr<const nas::SearchSpace> space, int64_t sequence = 2048)
      : space_(std::move(space)), sequence_(sequence) {}
  double StepTime(const nas::Architecture& a) const override;
  std::string unit() const override { return "activated GFLOPs/token (proxy)"; }

 private:
  std::shared_ptr<const nas::SearchSpace> space_;
  int64_t sequence_;
};

}  // namespace placerl::brainformer
