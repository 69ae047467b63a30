// The policy every agent and binary uses: CT's edge-centric GCN over the STATIC graph of an
// instance (computed once per instance, cached by graph), and a small head that reads the step's
// DynamicState (current node, node_dynamic, mask, action_features) and gives masked logits over
// the real actions (any cols × rows grid, n devices, k choices) and a value
// (../shared/DESIGN.md "Encoders and agents: fast on CPU"; reference notes §1.7–§1.8).
//
// This header is torch-free (pimpl): binaries and collectors that only act include it; the
// LibTorch module itself is encoders/policy_net.h, which only LibTorch code includes.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/environment.h"

namespace placerl::encoders {

class PolicyNet;  // LibTorch module (encoders/policy_net.h)

// Which network: kDefault is the fast one above (static GCN cached per instance, a head over
// the real actions); kCtFaithful is Circuit Training's (reference notes §1.8, encoders/
// ct_faithful.h): the GCN recomputed at every step with the dynamic node inputs, CT's readout,
// value head and 128×128 deconvolution policy head — for comparison, 100× slower on CPU; kLstm
// is the autoregressive LSTM of the 2017 seq2seq device placer and the ENAS controller
// (encoders/lstm_policy.h): an LSTM encoder over the nodes in decision order, an LSTM decoder
// fed the previous action, content attention.
enum class PolicyPreset : uint8_t { kDefault, kCtFaithful, kLstm };
const char* PolicyPresetName(PolicyPreset p);  // "default", "ct_faithful", "lstm"
// Throws ConfigError naming the known presets.
PolicyPreset ParsePolicyPreset(const std::string& name);

// The lstm preset's encoder over the nodes in decision order: bidirectional (2017's placer),
// unidirectional, or none (the ENAS controller: the decoder alone, fed each decision's static
// node features).
enum class LstmEncoder : uint8_t { kBidirectional, kUnidirectional, kNone };
inline const char* LstmEncoderName(LstmEncoder e) {
  return e == LstmEncoder::kBidirectional ? "bidirectional" : e == LstmEncoder::kUnidirectional ? "unidirectional" : "none";
}
// False for an unknown name.
inline bool ParseLstmEncoder(const std::string& name, LstmEncoder* out) {
  for (LstmEncoder e : {LstmEncoder::kBidirectional, LstmEncoder::kUnidirectional, LstmEncoder::kNone})
    if (name == LstmEncoderName(e)) return *out = e, true;
  return false;
}

struct PolicyOptions {
  int32_t embedding_dim = 32;      // GCN node embedding size (CT: 8)
  int32_t gcn_layers = 3;          // CT: 3
  int32_t hidden_dim = 64;         // width of the head MLP on the step summary (kDefault only)
  int32_t action_hidden_dim = 32;  // width of the per-action (per-cell) MLP (kDefault only)
  uint64_t init_seed = 1;          // weight initialisation
  PolicyPreset preset = PolicyPreset::kDefault;
  // lstm preset: embedding_dim is the size of the action and node-input embeddings, hidden_dim
  // the LSTM units (encoder per direction and decoder); gcn_layers and action_hidden_dim unused.
  LstmEncoder lstm_encoder = LstmEncoder::kBidirectional;
  bool lstm_attention = true;  // content attention over the encoder outputs (needs an encoder)
  // Bounded logits (ENAS; HDP's placer): l ← C·tanh(l / T) before masking, C =
  // logit_tanh_constant (0 = off: l / T only), T = logit_temperature. Default and lstm presets
  // (ct_faithful keeps CT's unbounded logits: ConfigError); they do not change the weights but
  // are part of a checkpoint's metadata (they change the policy).
  double logit_tanh_constant = 0;
  double logit_temperature = 1;

  // CT's values (notes §1.8): the ct_faithful preset, 8-dimensional embedding, 3 GCN layers.
  static PolicyOptions CtFaithful();
  // The lstm preset with the 2017 seq2seq placer's shape (bi-LSTM encoder, attention, HDP's
  // placer size 256) and the ENAS controller's (no encoder, 100 units, tanh 2.5, temperature 5).
  static PolicyOptions Seq2Seq2017();
  static PolicyOptions EnasController();
};

// "" when two option sets make the same network, else the first difference ("preset:
// ct_faithful vs default").
std::string OptionsMismatch(const PolicyOptions& a, const PolicyOptions& b);

// What a policy's weights are tied to: the feature names and the action kind (for devices and
// choices also their number; a grid policy runs on any cols × rows). Written into checkpoints;
// a checkpoint loads only where the layout matches.
struct FeatureLayout {
  env::ActionKind kind = env::ActionKind::kChoice;
  int32_t fixed_actions = 0;  // kDevice / kChoice: n; kGrid: 0
  int32_t edge_feature_dim = 0;
  std::vector<std::string> node_feature_names, node_dynamic_names, action_feature_names, metadata_names;

  static FeatureLayout Of(const env::Environment& env);
  // "" when `env_layout` can run this policy, else what differs ("node_dynamic_names: … vs …").
  std::string Mismatch(const FeatureLayout& env_layout) const;
  bool operator==(const FeatureLayout& o) const { return Mismatch(o).empty() && o.Mismatch(*this).empty(); }
};

// The decision of one step.
struct PolicyStep {
  int32_t action = -1;
  float log_prob = 0;
  float value = 0;
};

class Policy {
 public:
  Policy(const PolicyOptions& options, const FeatureLayout& layout);
  ~Policy();
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  const PolicyOptions& options() const;
  const FeatureLayout& layout() const;

  // Samples an action for the current state of `env` (the most likely legal one when
  // `greedy`). The static embedding of env's graph is computed once and cached; throws
  // ConfigError when env's layout does not match and InfeasibleAction when no action is legal.
  PolicyStep Act(const env::Environment& env, std::mt19937_64* rng, bool greedy = false);
  // Act for `count` environments (of one instance or several) in one forward of the head per
  // instance: out[i] is what Act(*envs[i], rng, greedy) would give when called for i = 0, 1, …
  // in turn (same RNG draws; logits equal to float rounding).
  void ActBatch(const env::Environment* const* envs, int32_t count, std::mt19937_64* rng, bool greedy,
                PolicyStep* out);
  void ActBatch(const std::vector<const env::Environment*>& envs, std::mt19937_64* rng, bool greedy,
                std::vector<PolicyStep>* out);
  // The masked logits (−1e9 where illegal) of the current state, and its value.
  std::vector<float> Logits(const env::Environment& env, float* value = nullptr);
  // Logits of several environments from the batched forward (what ActBatch samples from).
  std::vector<std::vector<float>> LogitsBatch(const std::vector<const env::Environment*>& envs,
                                              std::vector<float>* values = nullptr);

  // Cached static embeddings become stale when the weights change: learners call this after
  // every update (and loading does).
  void ClearCache();

  // Weights-only checkpoint I/O used by `place`-style code; learners write full checkpoints
  // (agents/learner.h). Load reads either kind and checks the layout against `env`.
  static std::unique_ptr<Policy> Load(const std::string& path, const env::Environment& env);
  // The feature layout a checkpoint (either kind) was written with, without loading weights
  // (e.g. to build the environment it fits: `place` takes chip.cost_map from it).
  static FeatureLayout ReadLayout(const std::string& path);

  PolicyNet& net();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sets glibc's malloc trim / mmap thresholds so that freed tensor memory is reused instead of
// being returned to the OS and faulted in again (process-wide, once; Policy's constructor calls
// it). No-op on other C libraries.
void TuneAllocatorForTorch();

// Metadata text of a checkpoint: options and layout as `key=value` lines (lists comma-joined).
// The default preset's text has no `preset` line (checkpoints written before presets existed
// read as kDefault); other presets add `preset=<name>`.
std::string LayoutText(const PolicyOptions& o, const FeatureLayout& l);
void ParseLayoutText(const std::string& text, PolicyOptions* o, FeatureLayout* l);

}  // namespace placerl::encoders
