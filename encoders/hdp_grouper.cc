// HDP's grouper (see hdp_grouper.h for the model).
#include "encoders/hdp_grouper.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/policy_net.h"

namespace placerl::encoders {

int32_t CompactGroups(const std::vector<int32_t>& unit_group, std::vector<int32_t>* out) {
  std::unordered_map<int32_t, int32_t> id;
  out->resize(unit_group.size());
  for (size_t u = 0; u < unit_group.size(); ++u) {
    const auto it = id.emplace(unit_group[u], static_cast<int32_t>(id.size())).first;
    (*out)[u] = it->second;
  }
  return static_cast<int32_t>(id.size());
}

namespace {

// The network's input [U, 2F]: each unit's static features and the mean of its neighbours'
// (both edge directions; isolated units get zeros), each column standardised over the units.
torch::Tensor UnitInputs(const env::StaticGraph& g) {
  const int64_t n = g.num_nodes, f = g.node_feature_dim;
  std::vector<float> in(static_cast<size_t>(n) * 2 * f, 0.f);
  std::vector<int32_t> degree(n, 0);
  for (int64_t u = 0; u < n; ++u)
    std::copy_n(&g.node_features[u * f], f, &in[u * 2 * f]);
  for (size_t e = 0; e < g.edge_src.size(); ++e) {
    const int32_t a = g.edge_src[e], b = g.edge_dst[e];
    for (int64_t k = 0; k < f; ++k) {
      in[a * 2 * f + f + k] += g.node_features[b * f + k];
      in[b * 2 * f + f + k] += g.node_features[a * f + k];
    }
    ++degree[a], ++degree[b];
  }
  for (int64_t u = 0; u < n; ++u)
    if (degree[u] > 1)
      for (int64_t k = 0; k < f; ++k) in[u * 2 * f + f + k] /= static_cast<float>(degree[u]);
  // Standardised per column over the graph's units: what tells units apart (their position,
  // their kind) is small next to the shared magnitudes of log FLOPs and bytes.
  const torch::Tensor x = torch::from_blob(in.data(), {n, 2 * f});
  const torch::Tensor mean = x.mean(0, true), sd = n > 1 ? x.std(0, false, true) : torch::zeros_like(mean);
  return ((x - mean) / (sd + 1e-6)).masked_fill(sd < 1e-6, 0.f).contiguous();
}

struct GrouperNetImpl : torch::nn::Module {
  GrouperNetImpl(int64_t in, int64_t hidden, int64_t groups) {
    hidden_ = register_module("hidden", torch::nn::Linear(in, hidden));
    out_ = register_module("out", torch::nn::Linear(hidden, groups));
    torch::NoGradGuard no_grad;
    out_->weight.mul_(0.1);  // start near the uniform grouping
    out_->bias.zero_();
  }
  torch::Tensor forward(const torch::Tensor& x) { return out_(torch::relu(hidden_(x))); }
  torch::nn::Linear hidden_{nullptr}, out_{nullptr};
};
TORCH_MODULE(GrouperNet);

std::string OptionsText(const HdpGrouperOptions& o, int32_t feature_dim) {
  std::ostringstream s;
  s << "num_groups=" << o.num_groups << ", hidden_dim=" << o.hidden_dim << ", feature_dim=" << feature_dim;
  return s.str();
}

}  // namespace

struct HdpGrouper::Impl {
  Impl(const HdpGrouperOptions& o, int32_t f)
      : options(o),
        feature_dim(f),
        net((torch::manual_seed(o.init_seed), GrouperNet(2 * f, o.hidden_dim, o.num_groups))),
        optimizer(net->parameters(), torch::optim::AdamOptions(o.learning_rate).eps(o.adam_eps)) {}

  torch::Tensor Inputs(const env::StaticGraph& g) const {
    if (g.node_feature_dim != feature_dim)
      throw ConfigError("hdp grouper: the units have " + std::to_string(g.node_feature_dim) +
                        " features per node, the grouper was built for " + std::to_string(feature_dim));
    return UnitInputs(g);
  }

  HdpGrouperOptions options;
  int32_t feature_dim;
  GrouperNet net;
  torch::optim::Adam optimizer;
};

HdpGrouper::HdpGrouper(const HdpGrouperOptions& o, int32_t feature_dim) {
  if (o.num_groups < 1 || o.num_groups > 65536) throw ConfigError("hdp grouper: num_groups must be in [1, 65536]");
  if (o.hidden_dim < 1 || o.hidden_dim > 65536) throw ConfigError("hdp grouper: hidden_dim must be in [1, 65536]");
  if (feature_dim < 1) throw ConfigError("hdp grouper: the units need at least one feature");
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate))
    throw ConfigError("hdp grouper: learning_rate must be > 0");
  impl_ = std::make_unique<Impl>(o, feature_dim);
}

HdpGrouper::~HdpGrouper() = default;

const HdpGrouperOptions& HdpGrouper::options() const { return impl_->options; }

std::vector<float> HdpGrouper::Probabilities(const env::StaticGraph& units) {
  torch::NoGradGuard no_grad;
  const torch::Tensor p = torch::softmax(impl_->net->forward(impl_->Inputs(units)), 1).contiguous();
  return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

Grouping HdpGrouper::Sample(const env::StaticGraph& units, std::mt19937_64* rng, bool greedy) {
  const int32_t n = units.num_nodes, g = impl_->options.num_groups;
  const std::vector<float> p = Probabilities(units);
  Grouping out;
  out.unit_group.resize(n);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<uint8_t> used(g, 0);
  for (int32_t u = 0; u < n; ++u) {
    const float* row = &p[static_cast<size_t>(u) * g];
    int32_t pick = 0;
    if (greedy) {
      pick = static_cast<int32_t>(std::max_element(row, row + g) - row);
    } else {
      // Inverse CDF; the last group with probability > 0 takes the rounding remainder.
      const double x = uniform(*rng);
      double acc = 0;
      pick = -1;
      for (int32_t k = 0; k < g; ++k) {
        if (row[k] <= 0) continue;
        acc += row[k];
        pick = k;
        if (x < acc) break;
      }
    }
    out.unit_group[u] = pick;
    out.log_prob += std::log(std::max(1e-30, static_cast<double>(row[pick])));
    double h = 0;
    for (int32_t k = 0; k < g; ++k)
      if (row[k] > 0) h -= row[k] * std::log(static_cast<double>(row[k]));
    out.mean_entropy += h / std::max(1, n);
    if (!used[pick]) used[pick] = 1, ++out.used_groups;
  }
  return out;
}

std::map<std::string, double> HdpGrouper::Update(const env::StaticGraph& units,
                                                 const std::vector<const Grouping*>& groupings,
                                                 const std::vector<double>& weights) {
  if (groupings.size() != weights.size()) throw ConfigError("hdp grouper: one weight per grouping");
  const int64_t n = units.num_nodes;
  const HdpGrouperOptions& o = impl_->options;
  impl_->optimizer.zero_grad();
  const torch::Tensor log_p = torch::log_softmax(impl_->net->forward(impl_->Inputs(units)), 1);  // [U, G]
  const torch::Tensor entropy = -(log_p.exp() * log_p).sum(1).mean();
  torch::Tensor loss = torch::zeros({});
  double used = 0;
  for (size_t k = 0; k < groupings.size(); ++k) {
    const std::vector<int32_t>& ug = groupings[k]->unit_group;
    if (static_cast<int64_t>(ug.size()) != n) throw ConfigError("hdp grouper: a grouping of another graph");
    std::vector<int64_t> idx(ug.begin(), ug.end());
    const torch::Tensor picked = torch::from_blob(idx.data(), {n, 1}, torch::kLong).clone();
    loss = loss - weights[k] * log_p.gather(1, picked).sum();
    used += groupings[k]->used_groups;
  }
  loss = loss - o.entropy_coef * entropy;
  loss.backward();
  const double norm = torch::nn::utils::clip_grad_norm_(impl_->net->parameters(), o.max_grad_norm);
  impl_->optimizer.step();
  return {{"losses/grouper_loss", loss.item<double>()},
          {"losses/grouper_entropy", entropy.item<double>()},
          {"losses/grouper_grad_norm", norm},
          {"charts/grouper_used_groups", groupings.empty() ? 0.0 : used / groupings.size()}};
}

void HdpGrouper::Save(const std::string& path) const { WriteFileAtomic(path, Bytes()); }

std::string HdpGrouper::Bytes() const {
  torch::serialize::OutputArchive root, model, optimizer;
  WriteString(root, "metadata", OptionsText(impl_->options, impl_->feature_dim));
  impl_->net->save(model);
  root.write("model", model);
  impl_->optimizer.save(optimizer);
  root.write("optimizer", optimizer);
  return CheckpointFileBytes(root);  // with the header: length and checksum
}

void HdpGrouper::Load(const std::string& path) { LoadBytes(ReadFile(path), path); }

void HdpGrouper::LoadBytes(const std::string& bytes, const std::string& path) {
  torch::serialize::InputArchive root, model, optimizer;
  LoadCheckpointArchive(bytes, path, &root);  // length, checksum, archive
  const std::string theirs = ReadString(root, "metadata"), ours = OptionsText(impl_->options, impl_->feature_dim);
  if (theirs != ours) throw ConfigError(path + ": the grouper checkpoint does not match (" + theirs + " vs " + ours + ")");
  if (!root.try_read("model", model) || !root.try_read("optimizer", optimizer))
    throw ConfigError(path + ": the grouper checkpoint lacks model or optimizer state");
  impl_->net->load(model);
  impl_->optimizer.load(optimizer);
}

}  // namespace placerl::encoders
