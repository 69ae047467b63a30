#include "models/brainformer_block.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "datasets/util/errors.h"

namespace placerl::brainformer {

const char* Name(SubLayerType t) {
  switch (t) {
    case SubLayerType::kAttention: return "attention";
    case SubLayerType::kDenseFfn: return "dense_ffn";
    case SubLayerType::kMoeFfn: return "moe_ffn";
    case SubLayerType::kNone: return "none";
  }
  return "?";
}

const char* Name(Gating g) {
  switch (g) {
    case Gating::kNone: return "-";
    case Gating::kTop1: return "top1";
    case Gating::kTop2: return "top2";
    case Gating::kExpertChoice: return "expert_choice";
  }
  return "?";
}

namespace {

int32_t Index(const nas::SearchSpace& space, const std::string& name) {
  const int32_t d = space.DecisionIndex(name);
  if (d < 0) throw ConfigError("space " + space.name() + " is not a Brainformer space: no decision '" + name + "'");
  return d;
}

const std::string& Choice(const nas::SearchSpace& space, const nas::Architecture& a, const std::string& name) {
  const int32_t d = Index(space, name);
  return space.decisions()[d].choices[a[d]];
}

int32_t ToInt(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw ConfigError(what + ": '" + s + "' is not a positive integer");
}

double ToDouble(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && v > 0 && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw ConfigError(what + ": '" + s + "' is not a positive number");
}

// Experts a token is computed by on average: k for top-k, the capacity factor for expert choice.
double ExpertsPerToken(const SubLayer& l) {
  if (l.gating == Gating::kTop1) return 1;
  if (l.gating == Gating::kTop2) return 2;
  return l.capacity_factor;
}

}  // namespace

std::string Block::Summary() const {
  std::string s = "d" + std::to_string(model_dim);
  for (const SubLayer& l : layers) {
    char buf[96];
    if (l.type == SubLayerType::kAttention) std::snprintf(buf, sizeof(buf), " attn%d", l.heads);
    else if (l.type == SubLayerType::kDenseFfn) std::snprintf(buf, sizeof(buf), " ffn%d", l.ffn_ratio);
    else if (l.type == SubLayerType::kMoeFfn)
      std::snprintf(buf, sizeof(buf), " moe%dx%d/%s/cf%g", l.ffn_ratio, l.experts, Name(l.gating), l.capacity_factor);
    else continue;
    s += buf;
  }
  return s;
}

Block BlockFromArchitecture(const nas::SearchSpace& space, const nas::Architecture& a) {
  const std::string wrong = space.Check(a);
  if (!wrong.empty()) throw ConfigError("not an allowed architecture of " + space.name() + ": " + wrong);
  Block b;
  b.model_dim = ToInt(Choice(space, a, "block/model_dim"), "block/model_dim");
  for (int32_t i = 0;; ++i) {
    const std::string node = "sub" + std::to_string(i);
    if (space.DecisionIndex(node + "/type") < 0) break;
    SubLayer l;
    const std::string& type = Choice(space, a, node + "/type");
    if (type == "attention") {
      l.type = SubLayerType::kAttention;
      l.heads = ToInt(Choice(space, a, node + "/heads"), node + "/heads");
    } else if (type == "dense_ffn" || type == "moe_ffn") {
      l.type = type == "dense_ffn" ? SubLayerType::kDenseFfn : SubLayerType::kMoeFfn;
      l.ffn_ratio = ToInt(Choice(space, a, node + "/ffn_ratio"), node + "/ffn_ratio");
      if (l.type == SubLayerType::kMoeFfn) {
        l.experts = ToInt(Choice(space, a, node + "/experts"), node + "/experts");
        const std::string& g = Choice(space, a, node + "/gating");
        if (g == "top1") l.gating = Gating::kTop1;
        else if (g == "top2") l.gating = Gating::kTop2;
        else if (g == "expert_choice") l.gating = Gating::kExpertChoice;
        else throw ConfigError(node + "/gating: unknown gating '" + g + "' (top1, top2, expert_choice)");
        l.capacity_factor = ToDouble(Choice(space, a, node + "/capacity_factor"), node + "/capacity_factor");
      }
    } else if (type != "none") {
      throw ConfigError(node + "/type: unknown sub-layer type '" + type + "'");
    }
    b.layers.push_back(l);
  }
  if (b.layers.empty()) throw ConfigError("space " + space.name() + " is not a Brainformer space: no sub0/type");
  return b;
}

int32_t TrainWidth(const Block& b, const NetShape& s) { return std::max(1, b.model_dim / s.width_divisor); }

int64_t AttentionInnerWidth(int64_t width, int64_t heads) { return heads * ((width + heads - 1) / heads); }

int32_t TrainExperts(const SubLayer& l, const NetShape& s) { return std::max(1, l.experts / s.expert_divisor); }

int64_t ExpertCapacity(Gating g, double capacity_factor, int64_t tokens, int32_t experts) {
  const double k = g == Gating::kTop2 ? 2 : 1;
  const double c = std::ceil(capacity_factor * k * static_cast<double>(tokens) / experts - 1e-9);
  return std::clamp<int64_t>(static_cast<int64_t>(c), 1, tokens);
}

NetCost TrainedNetCost(const Block& b, const NetShape& s) {
  const int64_t d = TrainWidth(b, s), t = s.tokens(), p = s.patch_pixels(), c = s.num_classes;
  NetCost n;
  n.params = p * d + d + t * d + 2 * d + d * c + c;  // patch embedding, positions, final norm, head
  double flops = 2.0 * t * p * d + 2.0 * d * c;
  double activated = static_cast<double>(n.params);
  for (int32_t r = 0; r < s.repeats; ++r)
    for (const SubLayer& l : b.layers) {
      int64_t layer = 0;
      double layer_active = 0;
      if (l.type == SubLayerType::kAttention) {
        const int64_t i = AttentionInnerWidth(d, l.heads);
        layer = 2 * d + d * 3 * i + 3 * i + i * d + d;  // norm, qkv and output projections
        layer_active = static_cast<double>(layer);
        flops += 2.0 * t * 4 * d * i + 2.0 * 2 * t * t * i;
      } else if (l.type == SubLayerType::kDenseFfn) {
        const int64_t h = l.ffn_ratio * d;
        layer = 2 * d + 2 * d * h + h + d;
        layer_active = static_cast<double>(layer);
        flops += 2.0 * t * 2 * d * h;
      } else if (l.type == SubLayerType::kMoeFfn) {
        const int64_t h = l.ffn_ratio * d, e = TrainExperts(l, s), expert = 2 * d * h + h + d;
        layer = 2 * d + d * e + e * expert;  // norm, router (no bias), experts
        layer_active = 2.0 * d + d * e + ExpertsPerToken(l) * expert;
        flops += 2.0 * t * d * e + ExpertsPerToken(l) * 2.0 * t * 2 * d * h;
      }
      n.params += layer;
      activated += layer_active;
    }
  n.activated_params = static_cast<int64_t>(std::llround(activated));
  n.flops_per_sample = flops;
  return n;
}

double BlockFlopsProxy::StepTime(const nas::Architecture& a) const {
  const Block b = BlockFromArchitecture(*space_, a);
  const double d = b.model_dim, seq = static_cast<double>(sequence_);
  double flops = 0;
  for (const SubLayer& l : b.layers) {
    if (l.type == SubLayerType::kAttention) flops += 2 * 4 * d * d + 2 * 2 * seq * d;
    else if (l.type == SubLayerType::kDenseFfn) flops += 2 * 2 * d * l.ffn_ratio * d;
    else if (l.type == SubLayerType::kMoeFfn) flops += 2 * d * l.experts + ExpertsPerToken(l) * 2 * 2 * d * l.ffn_ratio * d;
  }
  return flops * 1e-9;
}

}  // namespace placerl::brainformer
