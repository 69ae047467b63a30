// The GCN encoder, the head, and the Policy wrapper with its static-embedding cache (the only
// encoders/ file that includes LibTorch; see policy_net.h for the model).
#include "encoders/policy_net.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <mutex>
#include <sstream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/checkpoint_file.h"
#include "encoders/ct_faithful.h"
#include "encoders/lstm_policy.h"

namespace placerl::encoders {

// ---------------------------------------------------------------- presets and options

const char* PolicyPresetName(PolicyPreset p) {
  return p == PolicyPreset::kCtFaithful ? "ct_faithful" : p == PolicyPreset::kLstm ? "lstm" : "default";
}

PolicyPreset ParsePolicyPreset(const std::string& name) {
  if (name == "default") return PolicyPreset::kDefault;
  if (name == "ct_faithful") return PolicyPreset::kCtFaithful;
  if (name == "lstm") return PolicyPreset::kLstm;
  throw ConfigError("policy preset must be default, ct_faithful or lstm (got '" + name + "')");
}

PolicyOptions PolicyOptions::Seq2Seq2017() {
  PolicyOptions o;
  o.preset = PolicyPreset::kLstm;
  o.lstm_encoder = LstmEncoder::kBidirectional;
  o.lstm_attention = true;
  o.embedding_dim = 64;
  o.hidden_dim = 256;  // HDP paper's placer (its TF code: 512)
  return o;
}

PolicyOptions PolicyOptions::EnasController() {
  PolicyOptions o;
  o.preset = PolicyPreset::kLstm;
  o.lstm_encoder = LstmEncoder::kNone;
  o.lstm_attention = false;
  o.embedding_dim = 100;
  o.hidden_dim = 100;
  o.logit_tanh_constant = 2.5;
  o.logit_temperature = 5;
  return o;
}

torch::Tensor BoundLogits(const torch::Tensor& logits, const PolicyOptions& o) {
  torch::Tensor l = o.logit_temperature != 1 ? logits / o.logit_temperature : logits;
  return o.logit_tanh_constant > 0 ? o.logit_tanh_constant * torch::tanh(l) : l;
}

PolicyOptions PolicyOptions::CtFaithful() {
  PolicyOptions o;
  o.preset = PolicyPreset::kCtFaithful;
  o.embedding_dim = 8;
  o.gcn_layers = 3;
  return o;
}

std::string OptionsMismatch(const PolicyOptions& a, const PolicyOptions& b) {
  if (a.preset != b.preset) return std::string("preset: ") + PolicyPresetName(a.preset) + " vs " + PolicyPresetName(b.preset);
  if (a.preset == PolicyPreset::kLstm && a.lstm_encoder != b.lstm_encoder)
    return std::string("lstm_encoder: ") + LstmEncoderName(a.lstm_encoder) + " vs " + LstmEncoderName(b.lstm_encoder);
  if (a.preset == PolicyPreset::kLstm && a.lstm_attention != b.lstm_attention)
    return std::string("lstm_attention: ") + (a.lstm_attention ? "true" : "false") + " vs " +
           (b.lstm_attention ? "true" : "false");
  if (a.logit_tanh_constant != b.logit_tanh_constant)
    return "logit_tanh_constant: " + std::to_string(a.logit_tanh_constant) + " vs " + std::to_string(b.logit_tanh_constant);
  if (a.logit_temperature != b.logit_temperature)
    return "logit_temperature: " + std::to_string(a.logit_temperature) + " vs " + std::to_string(b.logit_temperature);
  auto differ = [](const char* what, int64_t x, int64_t y) {
    return x == y ? std::string() : std::string(what) + ": " + std::to_string(x) + " vs " + std::to_string(y);
  };
  for (const std::string& m : {differ("embedding_dim", a.embedding_dim, b.embedding_dim),
                               differ("gcn_layers", a.gcn_layers, b.gcn_layers),
                               differ("hidden_dim", a.hidden_dim, b.hidden_dim),
                               differ("action_hidden_dim", a.action_hidden_dim, b.action_hidden_dim),
                               differ("init_seed", static_cast<int64_t>(a.init_seed), static_cast<int64_t>(b.init_seed))})
    if (!m.empty()) return m;
  return "";
}

// ---------------------------------------------------------------- layout and metadata text

FeatureLayout FeatureLayout::Of(const env::Environment& env) {
  FeatureLayout l;
  const env::ActionSpec spec = env.action_spec();
  l.kind = spec.kind;
  l.fixed_actions = spec.kind == env::ActionKind::kGrid ? 0 : spec.n;
  const auto g = env.static_graph();
  l.edge_feature_dim = g->edge_feature_dim;
  l.node_feature_names = g->node_feature_names;
  l.metadata_names = g->metadata_names;
  l.node_dynamic_names = env.state().node_dynamic_names;
  l.action_feature_names = env.state().action_feature_names;
  return l;
}

namespace {
std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> v;
  if (s.empty()) return v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(item);
  return v;
}
}  // namespace

std::string FeatureLayout::Mismatch(const FeatureLayout& e) const {
  if (kind != e.kind)
    return std::string("action kind: ") + env::ActionKindName(kind) + " vs " + env::ActionKindName(e.kind);
  if (fixed_actions != e.fixed_actions)
    return "number of actions: " + std::to_string(fixed_actions) + " vs " + std::to_string(e.fixed_actions);
  if (edge_feature_dim != e.edge_feature_dim)
    return "edge_feature_dim: " + std::to_string(edge_feature_dim) + " vs " + std::to_string(e.edge_feature_dim);
  auto names = [](const char* what, const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return a == b ? std::string() : std::string(what) + ": [" + Join(a) + "] vs [" + Join(b) + "]";
  };
  for (const std::string& m :
       {names("node_feature_names", node_feature_names, e.node_feature_names),
        names("node_dynamic_names", node_dynamic_names, e.node_dynamic_names),
        names("action_feature_names", action_feature_names, e.action_feature_names),
        names("metadata_names", metadata_names, e.metadata_names)})
    if (!m.empty()) return m;
  return "";
}

std::string LayoutText(const PolicyOptions& o, const FeatureLayout& l) {
  std::ostringstream s;
  s << "format=placerl-policy-v1\n"
    << "encoder=edge_gcn\n";
  if (o.preset != PolicyPreset::kDefault) s << "preset=" << PolicyPresetName(o.preset) << "\n";
  if (o.preset == PolicyPreset::kLstm)
    s << "lstm_encoder=" << LstmEncoderName(o.lstm_encoder) << "\n"
      << "lstm_attention=" << (o.lstm_attention ? 1 : 0) << "\n";
  // Only when set, so that older checkpoints' text (and the default's) is unchanged.
  s.precision(17);
  if (o.logit_tanh_constant != 0) s << "logit_tanh_constant=" << o.logit_tanh_constant << "\n";
  if (o.logit_temperature != 1) s << "logit_temperature=" << o.logit_temperature << "\n";
  s << "embedding_dim=" << o.embedding_dim << "\n"
    << "gcn_layers=" << o.gcn_layers << "\n"
    << "hidden_dim=" << o.hidden_dim << "\n"
    << "action_hidden_dim=" << o.action_hidden_dim << "\n"
    << "init_seed=" << o.init_seed << "\n"
    << "action_kind=" << env::ActionKindName(l.kind) << "\n"
    << "fixed_actions=" << l.fixed_actions << "\n"
    << "edge_feature_dim=" << l.edge_feature_dim << "\n"
    << "node_feature_names=" << Join(l.node_feature_names) << "\n"
    << "node_dynamic_names=" << Join(l.node_dynamic_names) << "\n"
    << "action_feature_names=" << Join(l.action_feature_names) << "\n"
    << "metadata_names=" << Join(l.metadata_names) << "\n";
  return s.str();
}

void ParseLayoutText(const std::string& text, PolicyOptions* o, FeatureLayout* l) {
  std::map<std::string, std::string> kv;
  std::stringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) throw ParseError("checkpoint metadata", n, "expected key=value, got '" + line + "'");
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  auto get = [&](const std::string& k) {
    auto it = kv.find(k);
    if (it == kv.end()) throw ConfigError("checkpoint metadata: missing key '" + k + "'");
    return it->second;
  };
  auto get_int = [&](const std::string& k) {
    const std::string v = get(k);
    try {
      return std::stoll(v);
    } catch (const std::exception&) {
      throw ConfigError("checkpoint metadata: " + k + "=" + v + " is not an integer");
    }
  };
  if (get("format") != "placerl-policy-v1")
    throw ConfigError("checkpoint metadata: unknown format '" + get("format") + "'");
  if (get("encoder") != "edge_gcn") throw ConfigError("checkpoint metadata: unknown encoder '" + get("encoder") + "'");
  // No preset line: written by the default policy (or before presets existed).
  o->preset = kv.count("preset") ? ParsePolicyPreset(kv["preset"]) : PolicyPreset::kDefault;
  if (o->preset == PolicyPreset::kLstm) {
    if (!ParseLstmEncoder(get("lstm_encoder"), &o->lstm_encoder))
      throw ConfigError("checkpoint metadata: unknown lstm_encoder '" + get("lstm_encoder") + "'");
    o->lstm_attention = get_int("lstm_attention") != 0;
  }
  auto get_double = [&](const std::string& k, double fallback) {
    auto it = kv.find(k);
    if (it == kv.end()) return fallback;
    try {
      return std::stod(it->second);
    } catch (const std::exception&) {
      throw ConfigError("checkpoint metadata: " + k + "=" + it->second + " is not a number");
    }
  };
  o->logit_tanh_constant = get_double("logit_tanh_constant", 0);
  o->logit_temperature = get_double("logit_temperature", 1);
  o->embedding_dim = static_cast<int32_t>(get_int("embedding_dim"));
  o->gcn_layers = static_cast<int32_t>(get_int("gcn_layers"));
  o->hidden_dim = static_cast<int32_t>(get_int("hidden_dim"));
  o->action_hidden_dim = static_cast<int32_t>(get_int("action_hidden_dim"));
  o->init_seed = static_cast<uint64_t>(get_int("init_seed"));
  const std::string kind = get("action_kind");
  if (kind == "grid") l->kind = env::ActionKind::kGrid;
  else if (kind == "device") l->kind = env::ActionKind::kDevice;
  else if (kind == "choice") l->kind = env::ActionKind::kChoice;
  else throw ConfigError("checkpoint metadata: unknown action_kind '" + kind + "'");
  l->fixed_actions = static_cast<int32_t>(get_int("fixed_actions"));
  l->edge_feature_dim = static_cast<int32_t>(get_int("edge_feature_dim"));
  l->node_feature_names = Split(get("node_feature_names"));
  l->node_dynamic_names = Split(get("node_dynamic_names"));
  l->action_feature_names = Split(get("action_feature_names"));
  l->metadata_names = Split(get("metadata_names"));
}

// ---------------------------------------------------------------- graph tensors

GraphTensors MakeGraphTensors(const env::StaticGraph& g) {
  g.Validate();
  GraphTensors t;
  const int64_t n = g.num_nodes, e = g.num_edges();
  t.num_nodes = g.num_nodes;
  if (g.node_feature_dim > 0) {
    t.node_features = torch::from_blob(const_cast<float*>(g.node_features.data()), {n, g.node_feature_dim}).clone();
  } else {
    t.node_features = torch::ones({n, 1});  // no features: every node starts equal
  }
  std::vector<int64_t> src(g.edge_src.begin(), g.edge_src.end()), dst(g.edge_dst.begin(), g.edge_dst.end());
  t.edge_src = torch::from_blob(src.data(), {e}, torch::kLong).clone();
  t.edge_dst = torch::from_blob(dst.data(), {e}, torch::kLong).clone();
  const int64_t fe = 1 + g.edge_feature_dim;
  std::vector<float> input(static_cast<size_t>(e * fe));
  std::vector<float> count(n, 0.f);
  for (int64_t k = 0; k < e; ++k) {
    input[k * fe] = g.edge_weight[k];
    for (int64_t f = 1; f < fe; ++f) input[k * fe + f] = g.edge_features[k * g.edge_feature_dim + f - 1];
    count[g.edge_src[k]] += 1;
    count[g.edge_dst[k]] += 1;
  }
  t.edge_input = torch::from_blob(input.data(), {e, fe}).clone();
  for (float& c : count) c = 1.f / (c + 1e-6f);
  t.inv_degree = torch::from_blob(count.data(), {n, 1}).clone();
  t.metadata = torch::from_blob(const_cast<float*>(g.metadata.data()), {g.metadata_dim()}).clone();

  // CSR, both directions, weights normalised per row.
  t.adj_offset.assign(n + 1, 0);
  for (int64_t k = 0; k < e; ++k) {
    ++t.adj_offset[g.edge_src[k] + 1];
    ++t.adj_offset[g.edge_dst[k] + 1];
  }
  for (int64_t i = 0; i < n; ++i) t.adj_offset[i + 1] += t.adj_offset[i];
  t.adj_node.resize(2 * e);
  t.adj_weight.resize(2 * e);
  std::vector<int32_t> fill(t.adj_offset.begin(), t.adj_offset.end() - 1);
  for (int64_t k = 0; k < e; ++k) {
    const int32_t a = g.edge_src[k], b = g.edge_dst[k];
    t.adj_node[fill[a]] = b;
    t.adj_weight[fill[a]++] = g.edge_weight[k];
    t.adj_node[fill[b]] = a;
    t.adj_weight[fill[b]++] = g.edge_weight[k];
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int32_t k = t.adj_offset[i]; k < t.adj_offset[i + 1]; ++k) s += std::abs(t.adj_weight[k]);
    if (s > 0)
      for (int32_t k = t.adj_offset[i]; k < t.adj_offset[i + 1]; ++k) t.adj_weight[k] /= static_cast<float>(s);
  }
  return t;
}

void NeighbourDynamic(const GraphTensors& g, int32_t node, const float* dyn, int32_t channels, float* out) {
  std::fill(out, out + channels, 0.f);
  if (node < 0 || node >= g.num_nodes) return;
  for (int32_t k = g.adj_offset[node]; k < g.adj_offset[node + 1]; ++k) {
    const float w = g.adj_weight[k];
    const float* d = dyn + static_cast<size_t>(g.adj_node[k]) * channels;
    for (int32_t c = 0; c < channels; ++c) out[c] += w * d[c];
  }
}

// ---------------------------------------------------------------- the module

PolicyNetImpl::PolicyNetImpl(const PolicyOptions& o, const FeatureLayout& l) : opt_(o), layout_(l) {
  if (o.embedding_dim < 1 || o.gcn_layers < 0 || o.hidden_dim < 1 || o.action_hidden_dim < 1)
    throw ConfigError("policy: embedding_dim, hidden_dim, action_hidden_dim must be >= 1 and gcn_layers >= 0");
  if (!(o.logit_temperature > 0) || !(o.logit_tanh_constant >= 0) || !std::isfinite(o.logit_temperature) ||
      !std::isfinite(o.logit_tanh_constant))
    throw ConfigError("policy: logit_temperature must be > 0 and logit_tanh_constant >= 0 (0 = off)");
  if (o.preset == PolicyPreset::kCtFaithful && (o.logit_temperature != 1 || o.logit_tanh_constant != 0))
    throw ConfigError("policy: the ct_faithful preset has CT's unbounded logits (logit_tanh_constant and "
                      "logit_temperature are for default and lstm)");
  if (o.preset == PolicyPreset::kLstm) {  // the seq2seq / ENAS network only; parameters named "lstm.*"
    lstm_ = register_module("lstm", std::make_shared<LstmPolicyNetImpl>(o, l));
    return;
  }
  if (o.preset == PolicyPreset::kCtFaithful) {  // CT's network only; parameters named "ct.*"
    ct_ = register_module("ct", std::make_shared<CtFaithfulNetImpl>(o, l));
    return;
  }
  torch::manual_seed(o.init_seed);
  const int64_t d = o.embedding_dim, k = o.action_hidden_dim;
  const int64_t f = std::max<int64_t>(1, static_cast<int64_t>(l.node_feature_names.size()));
  const int64_t m = static_cast<int64_t>(l.metadata_names.size());
  dyn_channels_ = static_cast<int32_t>(l.node_dynamic_names.size());
  action_channels_ = static_cast<int32_t>(l.action_feature_names.size());
  node_in_ = register_module("node_in", torch::nn::Linear(f, d));
  if (m > 0) meta_in_ = register_module("meta_in", torch::nn::Linear(m, d));
  for (int32_t i = 0; i < o.gcn_layers; ++i) {
    const std::string s = std::to_string(i);
    edge_self_.push_back(register_module("gcn" + s + "_self", torch::nn::Linear(d, d)));
    edge_other_.push_back(
        register_module("gcn" + s + "_other", torch::nn::Linear(torch::nn::LinearOptions(d, d).bias(false))));
    edge_weight_.push_back(register_module(
        "gcn" + s + "_edge", torch::nn::Linear(torch::nn::LinearOptions(1 + l.edge_feature_dim, d).bias(false))));
  }
  att_query_ = register_module("att_query", torch::nn::Linear(d, d));
  att_key_ = register_module("att_key", torch::nn::Linear(d, d));
  att_value_ = register_module("att_value", torch::nn::Linear(d, d));
  const int64_t summary = (m > 0 ? 3 : 2) * d + 2 * d + dyn_channels_ * d + dyn_channels_;
  trunk1_ = register_module("trunk1", torch::nn::Linear(summary, o.hidden_dim));
  trunk2_ = register_module("trunk2", torch::nn::Linear(o.hidden_dim, o.hidden_dim));
  value_ = register_module("value", torch::nn::Linear(o.hidden_dim, 1));
  const int64_t per_action = action_channels_ + (l.kind == env::ActionKind::kGrid ? 2 : 0);
  if (per_action > 0) {  // per-action MLP: v · ReLU(F·features_a + P·pos_a + Z·z + N·neighbour)
    if (action_channels_ > 0)
      action_feat_ = register_module("action_feat",
                                     torch::nn::Linear(torch::nn::LinearOptions(action_channels_, k).bias(false)));
    if (l.kind == env::ActionKind::kGrid)
      action_pos_ = register_module("action_pos", torch::nn::Linear(torch::nn::LinearOptions(2, k).bias(false)));
    action_ctx_ = register_module("action_ctx", torch::nn::Linear(o.hidden_dim, k));
    action_out_ = register_module("action_out", torch::nn::Linear(k, 1));
    // The neighbours' summary enters every action's pre-activation directly, so that a cell
    // can be scored by where the current node's neighbours are ("near them") in one layer.
    if (dyn_channels_ > 0)
      action_neighbour_ = register_module(
          "action_neighbour", torch::nn::Linear(torch::nn::LinearOptions(dyn_channels_, k).bias(false)));
  }
  torch::NoGradGuard no_grad;
  if (l.kind != env::ActionKind::kGrid) {
    if (l.fixed_actions < 1) throw ConfigError("policy: a device/choice policy needs the number of actions");
    // Scores of the step's query against learned action (device) embeddings.
    action_query_ = register_module("action_query", torch::nn::Linear(o.hidden_dim, k));
    action_embedding_ = register_parameter("action_embedding", torch::randn({l.fixed_actions, k}));
    action_query_->weight.mul_(0.01);  // start near the uniform policy
    action_query_->bias.zero_();
    // How each action's score follows the current node's neighbours' dynamic state (e.g. "put
    // it where its neighbours are"): a direct linear path, starting at zero.
    if (dyn_channels_ > 0)
      action_dynamic_ = register_parameter("action_dynamic", torch::zeros({l.fixed_actions, dyn_channels_}));
  }
  if (action_out_) {  // start near the uniform policy (CleanRL: actor output std 0.01)
    action_out_->weight.mul_(0.01);
    action_out_->bias.zero_();
  }
}

StaticEmbedding PolicyNetImpl::Encode(const GraphTensors& g) {
  if (ct_) return ct_->Encode(g);
  if (lstm_) return lstm_->Encode(g);
  torch::Tensor h = torch::relu(node_in_(g.node_features));
  for (size_t l = 0; l < edge_self_.size(); ++l) {
    const torch::Tensor a = edge_self_[l](h), b = edge_other_[l](h), c = edge_weight_[l](g.edge_input);
    const torch::Tensor a_src = a.index_select(0, g.edge_src), a_dst = a.index_select(0, g.edge_dst);
    const torch::Tensor b_src = b.index_select(0, g.edge_src), b_dst = b.index_select(0, g.edge_dst);
    const torch::Tensor e = (torch::relu(a_src + b_dst + c) + torch::relu(a_dst + b_src + c)) * 0.5;
    const torch::Tensor agg = torch::zeros_like(h).index_add(0, g.edge_src, e).index_add(0, g.edge_dst, e);
    h = h + agg * g.inv_degree;
  }
  StaticEmbedding s;
  s.node = h;
  std::vector<torch::Tensor> ctx = {h.mean(0), std::get<0>(h.max(0))};
  if (meta_in_) ctx.push_back(torch::relu(meta_in_(g.metadata)));
  s.context = torch::cat(ctx);
  s.keys = att_key_(h);
  s.values = att_value_(h);
  s.node_t = h.t().contiguous();
  return s;
}

torch::Tensor PolicyNetImpl::Readout(const StaticEmbedding& emb, const torch::Tensor& h_cur) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(opt_.embedding_dim));
  return torch::softmax(att_query_(h_cur).matmul(emb.keys.t()) * scale, 1).matmul(emb.values);
}

void PolicyNetImpl::PrecomputeForInference(StaticEmbedding* emb, const env::ActionSpec& spec) {
  if (ct_) return;  // CT's GCN depends on the step: nothing to precompute
  if (lstm_) return lstm_->PrecomputeForInference(emb);
  // The readout depends only on which node is current: compute it for every node once, in
  // blocks so that the [block, N] scores stay small.
  // O(N²·D): worth it up to a few thousand nodes (Ariane133: 929 → ~5 ms once per update).
  const int64_t n = emb->node.size(0), block = 256;
  if (n <= 4096) {
    std::vector<torch::Tensor> parts;
    for (int64_t i = 0; i < n; i += block)
      parts.push_back(Readout(*emb, emb->node.slice(0, i, std::min(n, i + block))));
    emb->readout = torch::cat(parts);
  }
  if (action_pos_) emb->pos_hidden = action_pos_(ActionPositions(spec));
}

torch::Tensor PolicyNetImpl::ActionPositions(const env::ActionSpec& spec) {
  if (spec.cols != pos_cols_ || spec.rows != pos_rows_) {
    std::vector<float> p(static_cast<size_t>(spec.cols) * spec.rows * 2);
    for (int32_t r = 0; r < spec.rows; ++r)
      for (int32_t c = 0; c < spec.cols; ++c) {
        const size_t a = static_cast<size_t>(r) * spec.cols + c;
        p[2 * a] = (c + 0.5f) / spec.cols;
        p[2 * a + 1] = (r + 0.5f) / spec.rows;
      }
    pos_cache_ = torch::from_blob(p.data(), {static_cast<int64_t>(spec.cols) * spec.rows, 2}).clone();
    pos_cols_ = spec.cols;
    pos_rows_ = spec.rows;
  }
  return pos_cache_;
}

// From this batch size on, the placed-state summary is one GEMM rather than a loop per step
// (measured on Ariane133: ~10 % faster ActBatch for B = 4…16; the loop wins for B = 1).
constexpr int64_t kGemmSummaryBatch = 2;

torch::Tensor PolicyNetImpl::PlacedSummary(const StaticEmbedding& emb, const torch::Tensor& node_dynamic) {
  const int64_t b = node_dynamic.size(0), n = emb.node.size(0), d = emb.node.size(1), c = node_dynamic.size(2);
  if (torch::GradMode::is_enabled() || !node_dynamic.is_contiguous() || !emb.node.is_contiguous())
    return emb.node_t.matmul(node_dynamic) / static_cast<double>(n);  // [B, D, C]
  if (b >= kGemmSummaryBatch) {
    // Several steps: one GEMM [D, N]·[N, B·C] (the packing of [D, N] is shared by the batch).
    const torch::Tensor x = node_dynamic.permute({1, 0, 2}).reshape({n, b * c});
    return (emb.node_t.matmul(x) / static_cast<double>(n)).reshape({d, b, c}).permute({1, 0, 2});
  }
  // Inference: a plain loop per step beats BLAS here (it would repack the [D, N] matrix on
  // every call) and skips the zero entries (unplaced nodes). Same layout and value as the
  // LibTorch line above (tested).
  torch::Tensor out = torch::empty({b, d, c});
  const float* h = emb.node.data_ptr<float>();
  const float inv_n = 1.f / static_cast<float>(n);
  std::vector<float> acc(static_cast<size_t>(c * d));  // [C, D], contiguous in D
  for (int64_t s = 0; s < b; ++s) {
    float* o = out.data_ptr<float>() + s * d * c;
    const float* dyn = node_dynamic.data_ptr<float>() + s * n * c;
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t i = 0; i < n; ++i) {
      const float* hi = h + i * d;
      for (int64_t k = 0; k < c; ++k) {
        const float w = dyn[i * c + k];
        if (w == 0.f) continue;
        float* row = acc.data() + k * d;
        for (int64_t j = 0; j < d; ++j) row[j] += w * hi[j];
      }
    }
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < d; ++j) o[j * c + k] = acc[k * d + j] * inv_n;
  }
  return out;
}

std::pair<torch::Tensor, torch::Tensor> PolicyNetImpl::Forward(const StaticEmbedding& emb, const StepBatch& batch) {
  if (ct_) return ct_->Forward(emb, batch);
  if (lstm_) throw ConfigError("policy (lstm): a step's logits need the episode's previous actions (LstmPolicyNetImpl)");
  const int64_t b = batch.current_node.size(0), d = opt_.embedding_dim, a = batch.spec.num_actions();
  const torch::Tensor h_cur = emb.node.index_select(0, batch.current_node);  // [B, D]
  const torch::Tensor readout =
      emb.readout.defined() ? emb.readout.index_select(0, batch.current_node) : Readout(emb, h_cur);
  std::vector<torch::Tensor> parts = {emb.context.expand({b, -1}), h_cur, readout};
  if (dyn_channels_ > 0) {
    // mean_i h_i ⊗ node_dynamic_i: what is placed where, in embedding space. [D,N]·[B,N,C].
    parts.push_back(PlacedSummary(emb, batch.node_dynamic).reshape({b, d * dyn_channels_}));
    parts.push_back(batch.neighbour_dynamic);
  }
  const torch::Tensor z = torch::relu(trunk2_(torch::relu(trunk1_(torch::cat(parts, 1)))));
  const torch::Tensor value = value_(z).squeeze(1);

  torch::Tensor logits;
  if (action_out_) {
    torch::Tensor step = action_ctx_(z);  // [B, K]
    if (action_neighbour_) step = step + action_neighbour_(batch.neighbour_dynamic);
    torch::Tensor pre = step.unsqueeze(1);  // [B, 1, K]
    if (action_pos_) pre = pre + (emb.pos_hidden.defined() ? emb.pos_hidden : action_pos_(ActionPositions(batch.spec)));
    if (action_feat_) pre = pre + action_feat_(batch.action_features.transpose(1, 2));
    // v · ReLU(pre) as a matrix-vector product (no GEMM packing of the [A, K] activations).
    logits = (torch::relu(pre).matmul(action_out_->weight.squeeze(0)) + action_out_->bias).expand({b, a});
  }
  if (action_embedding_.defined()) {
    const torch::Tensor scores = action_query_(z).matmul(action_embedding_.t());
    logits = logits.defined() ? logits + scores : scores;
  }
  if (action_dynamic_.defined()) logits = logits + batch.neighbour_dynamic.matmul(action_dynamic_.t());
  return {BoundLogits(logits, opt_).masked_fill(batch.illegal, -1e9), value};
}

StepBatch StepBatchOf(const GraphTensors& g, const env::Environment& env, std::vector<float>* scratch) {
  const env::DynamicState& s = env.state();
  StepBatch b;
  b.spec = env.action_spec();
  const int64_t n = g.num_nodes, c = s.node_dynamic_dim, a = b.spec.num_actions();
  b.current_node = torch::full({1}, static_cast<int64_t>(std::max(0, s.current_node)), torch::kLong);
  if (c > 0) {
    b.node_dynamic = torch::from_blob(const_cast<float*>(s.node_dynamic.data()), {1, n, c});
    scratch->resize(c);
    NeighbourDynamic(g, s.current_node, s.node_dynamic.data(), static_cast<int32_t>(c), scratch->data());
    b.neighbour_dynamic = torch::from_blob(scratch->data(), {1, c});
  }
  b.illegal = torch::from_blob(const_cast<uint8_t*>(s.action_mask.data()), {1, a}, torch::kUInt8).eq(0);
  if (s.action_feature_dim > 0)
    b.action_features = torch::from_blob(const_cast<float*>(s.action_features.data()), {1, s.action_feature_dim, a});
  return b;
}

StepBatch StepBatchOf(const GraphTensors& g, const env::Environment* const* envs, int32_t count) {
  const env::DynamicState& first = envs[0]->state();
  StepBatch b;
  b.spec = envs[0]->action_spec();
  const int64_t n = g.num_nodes, c = first.node_dynamic_dim, a = b.spec.num_actions(), ca = first.action_feature_dim;
  b.current_node = torch::empty({count}, torch::kLong);
  torch::Tensor mask = torch::empty({count, a}, torch::kUInt8);
  if (c > 0) {
    b.node_dynamic = torch::empty({count, n, c});
    b.neighbour_dynamic = torch::empty({count, c});
  }
  if (ca > 0) b.action_features = torch::empty({count, ca, a});
  for (int32_t k = 0; k < count; ++k) {
    const env::DynamicState& s = envs[k]->state();
    if (s.node_dynamic_dim != c || s.action_feature_dim != ca || static_cast<int64_t>(s.action_mask.size()) != a)
      throw ConfigError("policy: a batch mixes environments of different shapes on one instance");
    b.current_node.data_ptr<int64_t>()[k] = std::max(0, s.current_node);
    std::copy(s.action_mask.begin(), s.action_mask.end(), mask.data_ptr<uint8_t>() + k * a);
    if (c > 0) {
      std::copy(s.node_dynamic.begin(), s.node_dynamic.end(), b.node_dynamic.data_ptr<float>() + k * n * c);
      NeighbourDynamic(g, s.current_node, s.node_dynamic.data(), static_cast<int32_t>(c),
                       b.neighbour_dynamic.data_ptr<float>() + k * c);
    }
    if (ca > 0)
      std::copy(s.action_features.begin(), s.action_features.end(), b.action_features.data_ptr<float>() + k * ca * a);
  }
  b.illegal = mask.eq(0);
  return b;
}

// ---------------------------------------------------------------- archives

void SaveWeights(PolicyNetImpl& net, torch::serialize::OutputArchive& archive) {
  for (const auto& p : net.named_parameters()) archive.write(p.key(), p.value());
}

void LoadWeights(PolicyNetImpl& net, torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (auto& p : net.named_parameters()) {
    torch::Tensor t;
    if (!archive.try_read(p.key(), t)) throw ConfigError("checkpoint: weight '" + p.key() + "' is missing");
    if (!t.sizes().equals(p.value().sizes()))
      throw ConfigError("checkpoint: weight '" + p.key() + "' has another shape than this policy's");
    // A diverged run's weights would only fail later ("no legal action"): refuse them here.
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>())
      throw ConfigError("checkpoint: weight '" + p.key() + "' holds non-finite values (NaN or infinity)");
    p.value().copy_(t);
  }
}

void LoadCheckpointArchive(const std::string& file_bytes, const std::string& name,
                           torch::serialize::InputArchive* archive) {
  const std::string bytes = CheckpointArchive(file_bytes, name);
  try {
    std::istringstream in(bytes);
    archive->load_from(in);
  } catch (const c10::Error& e) {
    throw ConfigError(UnreadableArchiveReason(bytes, name, e.what_without_backtrace()));
  }
}

std::string CheckpointFileBytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out;
  archive.save_to(out);
  return FrameCheckpoint(out.str());
}

void WithCheckpointName(const std::string& name, const std::function<void()>& load) {
  auto named = [&](const std::string& what) {
    return what.rfind(name + ":", 0) == 0 ? what : name + ": " + what;
  };
  try {
    load();
  } catch (const ConfigError& e) {
    throw ConfigError(named(e.what()));
  } catch (const ParseError& e) {
    throw ConfigError(named(e.what()));
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    throw ConfigError(named("damaged checkpoint (" + what.substr(0, what.find('\n')) + ")"));
  }
}

void WriteString(torch::serialize::OutputArchive& a, const std::string& key, const std::string& s) {
  a.write(key, torch::from_blob(const_cast<char*>(s.data()), {static_cast<int64_t>(s.size())}, torch::kUInt8).clone());
}

std::string ReadString(torch::serialize::InputArchive& a, const std::string& key) {
  torch::Tensor t;
  if (!a.try_read(key, t)) throw ConfigError("checkpoint: entry '" + key + "' is missing");
  t = t.contiguous();
  return std::string(reinterpret_cast<const char*>(t.data_ptr<uint8_t>()), static_cast<size_t>(t.numel()));
}

// ---------------------------------------------------------------- Policy

struct Policy::Impl {
  struct Cached {
    std::shared_ptr<const env::StaticGraph> graph;  // kept alive so that the address stays unique
    GraphTensors tensors;
    env::ActionSpec spec;
    StaticEmbedding embedding;
    bool has_embedding = false;
  };
  explicit Impl(const PolicyOptions& o, const FeatureLayout& l) : net(o, l) {}
  Cached& Lookup(const env::Environment& env) {
    const auto g = env.static_graph();
    for (auto& c : cache)
      if (c.graph == g) return Embedded(c);
    const std::string mismatch = net->layout().Mismatch(FeatureLayout::Of(env));
    if (!mismatch.empty()) throw ConfigError("policy: environment " + env.name() + " does not fit: " + mismatch);
    if (cache.size() >= 64) cache.erase(cache.begin());
    cache.push_back({g, MakeGraphTensors(*g), env.action_spec(), {}, false});
    return Embedded(cache.back());
  }
  Cached& Embedded(Cached& c) {
    if (!c.has_embedding) {
      torch::NoGradGuard no_grad;
      c.embedding = net->Encode(c.tensors);
      net->PrecomputeForInference(&c.embedding, c.spec);
      c.has_embedding = true;
    }
    return c;
  }
  std::pair<torch::Tensor, torch::Tensor> Evaluate(const env::Environment& env) {
    if (net->lstm()) {
      const env::Environment* one = &env;
      return EvaluateLstm(&one, 1);
    }
    torch::NoGradGuard no_grad;
    Cached& c = Lookup(env);
    const StepBatch batch = StepBatchOf(c.tensors, env, &scratch);
    return net->Forward(c.embedding, batch);
  }
  // The head for `count` environments, one forward per instance (a group of the environments
  // sharing a static graph). Row i of the result is envs[i]: logits [count rows, each A_i
  // floats] and values [count].
  struct BatchResult {
    std::vector<torch::Tensor> group_logits;  // contiguous [B_g, A_g] per group
    std::vector<const float*> logits;         // per environment, into group_logits
    std::vector<int64_t> num_actions;
    std::vector<float> values;
  };
  BatchResult EvaluateBatch(const env::Environment* const* envs, int32_t count) {
    torch::NoGradGuard no_grad;
    BatchResult r;
    r.logits.resize(count);
    r.num_actions.resize(count);
    r.values.resize(count);
    if (net->lstm()) {  // one [count, A] result (every environment has the policy's A actions)
      auto [logits, values] = EvaluateLstm(envs, count);
      logits = logits.contiguous();
      values = values.contiguous();
      const int64_t a = logits.size(1);
      for (int32_t i = 0; i < count; ++i) {
        r.logits[i] = logits.data_ptr<float>() + i * a;
        r.num_actions[i] = a;
        r.values[i] = values.data_ptr<float>()[i];
      }
      r.group_logits.push_back(std::move(logits));
      return r;
    }
    // Groups in order of first appearance (Lookup may evict cache entries: one group at a time).
    std::vector<std::shared_ptr<const env::StaticGraph>> graphs;
    std::vector<std::vector<int32_t>> members;
    for (int32_t i = 0; i < count; ++i) {
      const auto g = envs[i]->static_graph();
      size_t k = 0;
      while (k < graphs.size() && graphs[k] != g) ++k;
      if (k == graphs.size()) {
        graphs.push_back(g);
        members.emplace_back();
      }
      members[k].push_back(i);
    }
    std::vector<const env::Environment*> group_envs;
    for (const std::vector<int32_t>& group : members) {
      Cached& c = Lookup(*envs[group[0]]);
      group_envs.clear();
      for (int32_t i : group) group_envs.push_back(envs[i]);
      const int32_t b = static_cast<int32_t>(group.size());
      const StepBatch batch = b == 1 ? StepBatchOf(c.tensors, *group_envs[0], &scratch)
                                     : StepBatchOf(c.tensors, group_envs.data(), b);
      auto [logits, values] = net->Forward(c.embedding, batch);
      logits = logits.contiguous();
      values = values.contiguous();
      const int64_t a = logits.size(1);
      for (int32_t k = 0; k < b; ++k) {
        r.logits[group[k]] = logits.data_ptr<float>() + k * a;
        r.num_actions[group[k]] = a;
        r.values[group[k]] = values.data_ptr<float>()[k];
      }
      r.group_logits.push_back(std::move(logits));
    }
    return r;
  }

  // lstm preset: each environment's decoder state after its last evaluated step, so that the
  // next step costs one cell. Keyed by the environment's address and checked against the
  // episode (graph, step, and the inputs read back from node_dynamic), so a reset, a clone at
  // the same address or a step the policy did not choose recomputes the prefix instead of
  // continuing a stale state.
  struct DecoderState {
    std::shared_ptr<const env::StaticGraph> graph;
    std::vector<int32_t> inputs;  // decoder inputs consumed: start symbol, a_0, …, a_{t−1}
    torch::Tensor h, c;           // [1, H] after the last input
  };
  std::map<const env::Environment*, DecoderState> decoder_states;

  // The decoder inputs of env's current step t: start, a_0 … a_{t−1} (read from node_dynamic).
  void DecoderInputs(const env::Environment& env, std::vector<int32_t>* inputs) {
    const LstmPolicyNetImpl& m = *net->lstm();
    const env::DynamicState& s = env.state();
    LstmPolicyNetImpl::CheckDecisionOrder(s, env.name());
    inputs->assign(1, m.start_symbol());
    for (int32_t k = 0; k < s.step; ++k) {
      const int32_t a = m.ActionOf(s.node_dynamic.data(), k);
      if (a < 0)
        throw ConfigError("policy (lstm): environment " + env.name() + " shows no action at decided node " +
                          std::to_string(k));
      inputs->push_back(a);
    }
  }

  std::pair<torch::Tensor, torch::Tensor> EvaluateLstm(const env::Environment* const* envs, int32_t count) {
    torch::NoGradGuard no_grad;
    LstmPolicyNetImpl& m = *net->lstm();
    const int64_t a = m.num_actions();
    std::vector<torch::Tensor> hs(count);
    // Cells still to run, batched per instance: (env index, node, input).
    std::vector<std::shared_ptr<const env::StaticGraph>> graphs;
    std::vector<std::vector<int32_t>> members;
    std::vector<int32_t> inputs;
    // Bounded memory: forget every state (they are recomputed from the environments) before,
    // never during, a batch.
    if (decoder_states.size() + static_cast<size_t>(count) > 4096) decoder_states.clear();
    for (int32_t i = 0; i < count; ++i) {
      const env::Environment& env = *envs[i];
      if (env.done()) throw InfeasibleAction("policy: no legal action in " + env.name());
      Cached& cached = Lookup(env);
      DecoderInputs(env, &inputs);
      DecoderState& st = decoder_states[&env];
      const bool same_episode = st.graph == cached.graph && st.inputs.size() <= inputs.size() &&
                                std::equal(st.inputs.begin(), st.inputs.end(), inputs.begin());
      if (same_episode && st.inputs.size() == inputs.size()) {  // evaluated at this step already
        hs[i] = st.h;
        continue;
      }
      if (!same_episode || st.inputs.size() + 1 < inputs.size()) {
        // Recompute the prefix up to step t − 1 (one cell per decision, as the cached path).
        st = DecoderState{cached.graph, {}, {}, {}};
        for (size_t k = 0; k + 1 < inputs.size(); ++k) {
          auto [h, c] = m.Cell(cached.embedding, torch::full({1}, static_cast<int64_t>(k), torch::kLong),
                               torch::full({1}, static_cast<int64_t>(inputs[k]), torch::kLong), st.h, st.c);
          st.h = h, st.c = c;
          st.inputs.push_back(inputs[k]);
        }
      }
      st.inputs = inputs;  // the last input is consumed by the batched cell below
      size_t g = 0;
      while (g < graphs.size() && graphs[g] != cached.graph) ++g;
      if (g == graphs.size()) graphs.push_back(cached.graph), members.emplace_back();
      members[g].push_back(i);
    }
    for (size_t g = 0; g < graphs.size(); ++g) {
      const std::vector<int32_t>& group = members[g];
      Cached& cached = Lookup(*envs[group[0]]);
      const int64_t b = static_cast<int64_t>(group.size());
      torch::Tensor node = torch::empty({b}, torch::kLong), input = torch::empty({b}, torch::kLong);
      std::vector<torch::Tensor> h0, c0;
      bool fresh = true;
      for (int64_t k = 0; k < b; ++k) {
        const DecoderState& st = decoder_states[envs[group[k]]];
        node.data_ptr<int64_t>()[k] = static_cast<int64_t>(st.inputs.size()) - 1;
        input.data_ptr<int64_t>()[k] = st.inputs.back();
        fresh = fresh && !st.h.defined();
      }
      torch::Tensor h, c;
      if (!fresh) {  // zeros for environments at their first step
        for (int64_t k = 0; k < b; ++k) {
          const DecoderState& st = decoder_states[envs[group[k]]];
          h0.push_back(st.h.defined() ? st.h : torch::zeros({1, m.hidden()}));
          c0.push_back(st.c.defined() ? st.c : torch::zeros({1, m.hidden()}));
        }
        h = torch::cat(h0), c = torch::cat(c0);
      }
      auto [h_new, c_new] = m.Cell(cached.embedding, node, input, h, c);
      for (int64_t k = 0; k < b; ++k) {
        DecoderState& st = decoder_states[envs[group[k]]];
        st.h = h_new.slice(0, k, k + 1);
        st.c = c_new.slice(0, k, k + 1);
        hs[group[k]] = st.h;
      }
    }
    // The head for all of them at once (attention per instance: rows of one instance together).
    torch::Tensor mask = torch::empty({count, a}, torch::kUInt8);
    for (int32_t i = 0; i < count; ++i) {
      const auto& am = envs[i]->action_mask();
      if (static_cast<int64_t>(am.size()) != a) throw ConfigError("policy (lstm): an environment's action count differs");
      std::copy(am.begin(), am.end(), mask.data_ptr<uint8_t>() + i * a);
    }
    const torch::Tensor illegal = mask.eq(0);
    torch::Tensor logits = torch::empty({count, a}), values = torch::empty({count});
    std::vector<int32_t> done(count, 0);
    for (int32_t i = 0; i < count; ++i) {
      if (done[i]) continue;
      const auto g = envs[i]->static_graph();
      std::vector<int64_t> rows;
      for (int32_t j = i; j < count; ++j)
        if (!done[j] && envs[j]->static_graph() == g) rows.push_back(j), done[j] = 1;
      std::vector<torch::Tensor> h_rows;
      for (int64_t j : rows) h_rows.push_back(hs[j]);
      const torch::Tensor index = torch::tensor(rows, torch::kLong);
      auto [l, v] = m.Head(Lookup(*envs[i]).embedding, torch::cat(h_rows), illegal.index_select(0, index));
      logits.index_copy_(0, index, l);
      values.index_copy_(0, index, v);
    }
    return {logits, values};
  }

  PolicyNet net;
  std::vector<Cached> cache;
  std::vector<float> scratch;
};

void TuneAllocatorForTorch() {
#if defined(__GLIBC__)
  // glibc returns the top of the heap to the OS after every large free (trim threshold 128 KB
  // by default); LibTorch's per-minibatch tensors then pay page faults on every allocation:
  // measured 2.5x slower PPO updates on Ariane133. Keep freed memory, map only huge blocks.
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  });
#endif
}

Policy::Policy(const PolicyOptions& o, const FeatureLayout& l) : impl_(std::make_unique<Impl>(o, l)) {
  TuneAllocatorForTorch();
}
Policy::~Policy() = default;
const PolicyOptions& Policy::options() const { return impl_->net->options(); }
const FeatureLayout& Policy::layout() const { return impl_->net->layout(); }
PolicyNet& Policy::net() { return impl_->net; }

void Policy::ClearCache() {
  impl_->decoder_states.clear();
  for (auto& c : impl_->cache) {
    c.has_embedding = false;
    c.embedding = {};
  }
}

namespace {
// Samples from masked logits (the most likely legal action when `greedy`): one uniform draw
// from `rng` when sampling, none when greedy.
PolicyStep Sample(const float* logits, int64_t a, const env::Environment& env, float value, std::mt19937_64* rng,
                  bool greedy) {
  const auto& mask = env.action_mask();
  double top = -1e300;
  int32_t best = -1;
  for (int64_t i = 0; i < a; ++i)
    if (mask[i] && logits[i] > top) {
      top = logits[i];
      best = static_cast<int32_t>(i);
    }
  if (best < 0) throw InfeasibleAction("policy: no legal action in " + env.name());
  // exp(logit − top) of every legal action once (sampling walks them again).
  thread_local std::vector<double> weight;
  weight.resize(static_cast<size_t>(a));
  double sum = 0;
  for (int64_t i = 0; i < a; ++i) {
    weight[i] = mask[i] ? std::exp(logits[i] - top) : 0.0;
    sum += weight[i];
  }
  const double log_z = top + std::log(sum);
  PolicyStep step;
  step.value = value;
  step.action = best;
  if (!greedy) {
    double u = std::uniform_real_distribution<double>(0.0, sum)(*rng);
    for (int64_t i = 0; i < a; ++i) {
      if (!mask[i]) continue;
      step.action = static_cast<int32_t>(i);  // the last legal one if rounding leaves u > 0
      u -= weight[i];
      if (u <= 0) break;
    }
  }
  step.log_prob = static_cast<float>(logits[step.action] - log_z);
  return step;
}
}  // namespace

PolicyStep Policy::Act(const env::Environment& env, std::mt19937_64* rng, bool greedy) {
  auto [logits_raw, value_t] = impl_->Evaluate(env);
  const torch::Tensor logits = logits_raw.contiguous();
  return Sample(logits.data_ptr<float>(), logits.size(1), env, value_t.item<float>(), rng, greedy);
}

void Policy::ActBatch(const env::Environment* const* envs, int32_t count, std::mt19937_64* rng, bool greedy,
                      PolicyStep* out) {
  if (count <= 0) return;
  const Impl::BatchResult r = impl_->EvaluateBatch(envs, count);
  for (int32_t i = 0; i < count; ++i) out[i] = Sample(r.logits[i], r.num_actions[i], *envs[i], r.values[i], rng, greedy);
}

void Policy::ActBatch(const std::vector<const env::Environment*>& envs, std::mt19937_64* rng, bool greedy,
                      std::vector<PolicyStep>* out) {
  out->resize(envs.size());
  ActBatch(envs.data(), static_cast<int32_t>(envs.size()), rng, greedy, out->data());
}

std::vector<float> Policy::Logits(const env::Environment& env, float* value) {
  auto [logits, v] = impl_->Evaluate(env);
  if (value) *value = v.item<float>();
  logits = logits.contiguous();
  return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

std::vector<std::vector<float>> Policy::LogitsBatch(const std::vector<const env::Environment*>& envs,
                                                    std::vector<float>* values) {
  std::vector<std::vector<float>> out;
  if (envs.empty()) return out;
  const Impl::BatchResult r = impl_->EvaluateBatch(envs.data(), static_cast<int32_t>(envs.size()));
  for (size_t i = 0; i < envs.size(); ++i) out.emplace_back(r.logits[i], r.logits[i] + r.num_actions[i]);
  if (values) *values = r.values;
  return out;
}

namespace {

// A checkpoint file's archive and its policy options and feature layout (ConfigError naming the
// file when it is not a placerl checkpoint).
void OpenCheckpoint(const std::string& path, torch::serialize::InputArchive* archive, PolicyOptions* o, FeatureLayout* l) {
  LoadCheckpointArchive(ReadFile(path), path, archive);
  WithCheckpointName(path, [&] { ParseLayoutText(ReadString(*archive, "metadata"), o, l); });
}

}  // namespace

FeatureLayout Policy::ReadLayout(const std::string& path) {
  torch::serialize::InputArchive archive;
  PolicyOptions o;
  FeatureLayout l;
  OpenCheckpoint(path, &archive, &o, &l);
  return l;
}

std::unique_ptr<Policy> Policy::Load(const std::string& path, const env::Environment& env) {
  torch::serialize::InputArchive archive;
  PolicyOptions o;
  FeatureLayout l;
  OpenCheckpoint(path, &archive, &o, &l);
  const std::string mismatch = l.Mismatch(FeatureLayout::Of(env));
  if (!mismatch.empty())
    throw ConfigError(path + ": the checkpoint's policy does not fit environment " + env.name() + ": " + mismatch);
  auto policy = std::make_unique<Policy>(o, l);
  torch::serialize::InputArchive model;
  WithCheckpointName(path, [&] {
    if (!archive.try_read("model", model)) throw ConfigError("the checkpoint has no model");
    LoadWeights(*policy->net(), model);
  });
  return policy;
}

}  // namespace placerl::encoders
