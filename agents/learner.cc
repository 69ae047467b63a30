// PPO and REINFORCE updates and checkpoints (the only agents/ file that includes LibTorch).
#include "agents/learner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/policy_net.h"

namespace placerl::agents {
namespace {

using encoders::GraphTensors;
using encoders::PolicyNetImpl;

// Graph tensors of the buffer's instances, kept across updates (they do not depend on weights).
class GraphCache {
 public:
  const GraphTensors& Get(const std::shared_ptr<const env::StaticGraph>& g) {
    for (auto& [graph, tensors] : entries_)
      if (graph == g) return tensors;
    if (entries_.size() >= 64) entries_.erase(entries_.begin());
    entries_.emplace_back(g, encoders::MakeGraphTensors(*g));
    return entries_.back().second;
  }

 private:
  std::vector<std::pair<std::shared_ptr<const env::StaticGraph>, GraphTensors>> entries_;
};

// Log-probabilities of the taken actions, entropies and values of transitions `idx` under the
// current weights, in the order `order` (idx grouped by instance). Each instance's static graph
// is encoded ONCE, with gradient, for all its transitions in `idx`.
struct Evaluated {
  torch::Tensor log_prob, entropy, value;
  std::vector<int32_t> order;
};

Evaluated EvaluateTransitions(PolicyNetImpl& net, GraphCache& graphs, const RolloutBuffer& buf,
                              const std::vector<int32_t>& idx) {
  std::vector<int32_t> order(idx);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return buf.transitions[a].instance < buf.transitions[b].instance;
  });
  std::vector<torch::Tensor> log_probs, entropies, values;
  for (size_t begin = 0; begin < order.size();) {
    const int32_t inst = buf.transitions[order[begin]].instance;
    size_t end = begin;
    while (end < order.size() && buf.transitions[order[end]].instance == inst) ++end;
    const int64_t b = static_cast<int64_t>(end - begin);
    const RolloutInstance& ri = buf.instances[inst];
    const GraphTensors& g = graphs.Get(ri.graph);
    const Transition& first = buf.transitions[order[begin]];
    const int64_t n = g.num_nodes, a = ri.spec.num_actions();
    const int64_t c = n > 0 ? static_cast<int64_t>(first.node_dynamic.size()) / n : 0;
    const int64_t ca = a > 0 ? static_cast<int64_t>(first.action_features.size()) / a : 0;

    encoders::StepBatch batch;
    batch.spec = ri.spec;
    batch.current_node = torch::empty({b}, torch::kLong);
    torch::Tensor actions = torch::empty({b}, torch::kLong);
    torch::Tensor mask = torch::empty({b, a}, torch::kUInt8);
    if (c > 0) {
      batch.node_dynamic = torch::empty({b, n, c});
      batch.neighbour_dynamic = torch::empty({b, c});
    }
    if (ca > 0) batch.action_features = torch::empty({b, ca, a});
    for (int64_t k = 0; k < b; ++k) {
      const Transition& t = buf.transitions[order[begin + k]];
      batch.current_node.data_ptr<int64_t>()[k] = t.current_node;
      actions.data_ptr<int64_t>()[k] = t.action;
      std::copy(t.mask.begin(), t.mask.end(), mask.data_ptr<uint8_t>() + k * a);
      if (c > 0) {
        std::copy(t.node_dynamic.begin(), t.node_dynamic.end(), batch.node_dynamic.data_ptr<float>() + k * n * c);
        encoders::NeighbourDynamic(g, t.current_node, t.node_dynamic.data(), static_cast<int32_t>(c),
                                   batch.neighbour_dynamic.data_ptr<float>() + k * c);
      }
      if (ca > 0)
        std::copy(t.action_features.begin(), t.action_features.end(),
                  batch.action_features.data_ptr<float>() + k * ca * a);
    }
    batch.illegal = mask.eq(0);

    const encoders::StaticEmbedding emb = net.Encode(g);
    auto [logits, value] = net.Forward(emb, batch);
    const torch::Tensor log_p = torch::log_softmax(logits, 1);
    log_probs.push_back(log_p.gather(1, actions.unsqueeze(1)).squeeze(1));
    entropies.push_back(-(log_p.exp() * log_p).sum(1));
    values.push_back(value);
    begin = end;
  }
  return {torch::cat(log_probs), torch::cat(entropies), torch::cat(values), std::move(order)};
}

torch::Tensor Gather(const std::vector<float>& v, const std::vector<int32_t>& order) {
  torch::Tensor t = torch::empty({static_cast<int64_t>(order.size())});
  for (size_t k = 0; k < order.size(); ++k) t.data_ptr<float>()[k] = v[order[k]];
  return t;
}

torch::Tensor OldLogProbs(const RolloutBuffer& buf, const std::vector<int32_t>& order) {
  torch::Tensor t = torch::empty({static_cast<int64_t>(order.size())});
  for (size_t k = 0; k < order.size(); ++k) t.data_ptr<float>()[k] = buf.transitions[order[k]].log_prob;
  return t;
}

// 1 − Var(returns − values) / Var(returns) over the buffer (CleanRL's explained variance).
double ExplainedVariance(const RolloutBuffer& buf) {
  const size_t n = buf.returns.size();
  if (n < 2) return 0;
  double mr = 0, md = 0;
  for (size_t i = 0; i < n; ++i) {
    mr += buf.returns[i];
    md += buf.advantages[i];
  }
  mr /= n;
  md /= n;
  double vr = 0, vd = 0;
  for (size_t i = 0; i < n; ++i) {
    vr += (buf.returns[i] - mr) * (buf.returns[i] - mr);
    vd += (buf.advantages[i] - md) * (buf.advantages[i] - md);
  }
  return vr > 0 ? 1.0 - vd / vr : 0.0;
}

// PPO-clip, one call per batch of complete episodes (CleanRL ppo.py's update loop; CT §1.9).
Stats PpoUpdate(PolicyNetImpl& net, torch::optim::Adam& optimizer, GraphCache& graphs, const RolloutBuffer& buf,
                const AgentOptions& o, std::mt19937_64& rng) {
  const int32_t n = buf.size();
  std::vector<int32_t> shuffled(n);
  std::iota(shuffled.begin(), shuffled.end(), 0);
  double sum_pg = 0, sum_v = 0, sum_ent = 0, sum_kl = 0, sum_clip = 0;
  int32_t minibatches = 0;
  for (int32_t epoch = 0; epoch < o.epochs; ++epoch) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (int32_t start = 0; start < n; start += o.minibatch_size) {
      const std::vector<int32_t> idx(shuffled.begin() + start, shuffled.begin() + std::min(n, start + o.minibatch_size));
      const Evaluated now = EvaluateTransitions(net, graphs, buf, idx);
      const torch::Tensor old_log_prob = OldLogProbs(buf, now.order);
      torch::Tensor advantages = Gather(buf.advantages, now.order);
      const torch::Tensor returns = Gather(buf.returns, now.order);

      const torch::Tensor log_ratio = now.log_prob - old_log_prob;
      const torch::Tensor ratio = log_ratio.exp();
      {
        torch::NoGradGuard no_grad;
        sum_kl += ((ratio - 1) - log_ratio).mean().item<double>();  // the k3 estimator of KL(old‖new)
        sum_clip += ((ratio - 1).abs() > o.clip).to(torch::kFloat).mean().item<double>();
      }
      if (o.normalize_advantages && idx.size() > 1)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8);

      const torch::Tensor pg_loss =
          torch::max(-advantages * ratio, -advantages * torch::clamp(ratio, 1 - o.clip, 1 + o.clip)).mean();
      const torch::Tensor value_loss = 0.5 * (now.value - returns).pow(2).mean();
      const torch::Tensor entropy = now.entropy.mean();
      const torch::Tensor loss = pg_loss - o.entropy_coef * entropy + o.value_coef * value_loss;

      optimizer.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(net.parameters(), o.max_grad_norm);
      optimizer.step();

      sum_pg += pg_loss.item<double>();
      sum_v += value_loss.item<double>();
      sum_ent += entropy.item<double>();
      ++minibatches;
    }
  }
  const double m = std::max(1, minibatches);
  return {{"losses/policy_loss", sum_pg / m},  {"losses/value_loss", sum_v / m},
          {"losses/entropy", sum_ent / m},     {"losses/approx_kl", sum_kl / m},
          {"losses/clipfrac", sum_clip / m},   {"losses/explained_variance", ExplainedVariance(buf)},
          {"charts/learning_rate", o.learning_rate}};
}

// REINFORCE: ∇ Σ_t (G_t − b_t) log π(a_t|s_t), one optimiser step per batch; b_t is a moving
// average of the returns at decision t (one per episode step, so dense rewards work too).
Stats ReinforceUpdate(PolicyNetImpl& net, torch::optim::Adam& optimizer, GraphCache& graphs, const RolloutBuffer& buf,
                      const AgentOptions& o, std::vector<double>* baseline) {
  const int32_t n = buf.size();
  // Batch means of the return at each step index; a step seen for the first time starts there.
  std::vector<double> sum, count;
  for (int32_t i = 0; i < n; ++i) {
    const size_t t = buf.transitions[i].step;
    if (sum.size() <= t) sum.resize(t + 1, 0.0), count.resize(t + 1, 0.0);
    sum[t] += buf.returns[i];
    count[t] += 1;
  }
  for (size_t t = baseline->size(); t < sum.size(); ++t) baseline->push_back(sum[t] / count[t]);

  optimizer.zero_grad();
  double sum_pg = 0, sum_ent = 0;
  std::vector<int32_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int32_t start = 0; start < n; start += o.minibatch_size) {
    const std::vector<int32_t> idx(all.begin() + start, all.begin() + std::min(n, start + o.minibatch_size));
    const Evaluated now = EvaluateTransitions(net, graphs, buf, idx);
    std::vector<float> adv(now.order.size());
    for (size_t k = 0; k < now.order.size(); ++k) {
      const int32_t i = now.order[k];
      adv[k] = static_cast<float>(buf.returns[i] - (*baseline)[buf.transitions[i].step]);
    }
    const torch::Tensor advantages = torch::from_blob(adv.data(), {static_cast<int64_t>(adv.size())}).clone();
    const torch::Tensor pg_loss = -(advantages * now.log_prob).sum() / n;
    const torch::Tensor entropy = now.entropy.sum() / n;
    (pg_loss - o.entropy_coef * entropy).backward();  // gradients accumulate over the chunks
    sum_pg += pg_loss.item<double>();
    sum_ent += entropy.item<double>();
  }
  torch::nn::utils::clip_grad_norm_(net.parameters(), o.max_grad_norm);
  optimizer.step();
  for (size_t t = 0; t < sum.size(); ++t)
    if (count[t] > 0) (*baseline)[t] = o.baseline_decay * (*baseline)[t] + (1 - o.baseline_decay) * sum[t] / count[t];
  return {{"losses/policy_loss", sum_pg},
          {"losses/entropy", sum_ent},
          {"charts/baseline", baseline->empty() ? 0.0 : (*baseline)[0]},
          {"charts/learning_rate", o.learning_rate}};
}

const char* AlgorithmName(Algorithm a) { return a == Algorithm::kPpo ? "ppo" : "reinforce"; }

}  // namespace

struct Learner::Impl {
  Impl(encoders::Policy* p, const AgentOptions& opt)
      : policy(p),
        o(opt),
        optimizer(p->net()->parameters(), torch::optim::AdamOptions(opt.learning_rate).eps(opt.adam_eps)),
        rng(opt.seed) {}
  encoders::Policy* policy;
  AgentOptions o;
  torch::optim::Adam optimizer;
  std::mt19937_64 rng;
  GraphCache graphs;
  std::vector<double> baseline;  // REINFORCE
  int64_t updates = 0;

  std::string AgentText() const {
    std::ostringstream s;
    s.precision(17);
    s << "algorithm=" << AlgorithmName(o.algorithm) << "\nupdates=" << updates << "\nbaseline=";
    for (size_t i = 0; i < baseline.size(); ++i) s << (i ? "," : "") << baseline[i];
    s << "\n";
    return s.str();
  }
};

Learner::Learner(encoders::Policy* policy, const AgentOptions& options)
    : impl_(std::make_unique<Impl>(policy, options)) {
  if (options.epochs < 1 || options.minibatch_size < 1) throw ConfigError("agent: epochs and minibatch_size must be >= 1");
  if (!(options.learning_rate > 0)) throw ConfigError("agent: learning_rate must be > 0");
}
Learner::~Learner() = default;
std::mt19937_64& Learner::rng() { return impl_->rng; }
int64_t Learner::updates() const { return impl_->updates; }
const AgentOptions& Learner::options() const { return impl_->o; }
encoders::Policy& Learner::policy() { return *impl_->policy; }

Stats Learner::Update(RolloutBuffer* buffer) {
  if (buffer->size() == 0) throw ConfigError("agent: the rollout buffer is empty");
  buffer->ComputeReturns(impl_->o.gamma);
  PolicyNetImpl& net = *impl_->policy->net();
  Stats stats = impl_->o.algorithm == Algorithm::kPpo
                    ? PpoUpdate(net, impl_->optimizer, impl_->graphs, *buffer, impl_->o, impl_->rng)
                    : ReinforceUpdate(net, impl_->optimizer, impl_->graphs, *buffer, impl_->o, &impl_->baseline);
  impl_->policy->ClearCache();
  ++impl_->updates;
  return stats;
}

void Learner::SaveCheckpoint(const std::string& path) const {
  torch::serialize::OutputArchive root;
  const std::string metadata = encoders::LayoutText(impl_->policy->options(), impl_->policy->layout());
  encoders::WriteString(root, "metadata", metadata);
  encoders::WriteString(root, "agent", impl_->AgentText());
  std::ostringstream rng_state;
  rng_state << impl_->rng;
  encoders::WriteString(root, "rng", rng_state.str());
  torch::serialize::OutputArchive model, optimizer;
  encoders::SaveWeights(*impl_->policy->net(), model);
  root.write("model", model);
  impl_->optimizer.save(optimizer);
  root.write("optimizer", optimizer);
  std::ostringstream out;
  root.save_to(out);
  WriteFileAtomic(path, out.str());
}

void Learner::LoadCheckpoint(const std::string& path) {
  const std::string bytes = ReadFile(path);
  torch::serialize::InputArchive root;
  try {
    std::istringstream in(bytes);
    root.load_from(in);
  } catch (const c10::Error&) {
    throw ConfigError(path + ": not a placerl checkpoint");
  }
  encoders::PolicyOptions o;
  encoders::FeatureLayout l;
  encoders::ParseLayoutText(encoders::ReadString(root, "metadata"), &o, &l);
  const std::string ours = encoders::LayoutText(impl_->policy->options(), impl_->policy->layout());
  if (encoders::LayoutText(o, l) != ours) {
    std::string what = l.Mismatch(impl_->policy->layout());
    if (what.empty()) what = encoders::OptionsMismatch(o, impl_->policy->options());  // e.g. the preset
    if (what.empty()) what = "encoder options differ";
    throw ConfigError(path + ": the checkpoint does not match this policy: " + what);
  }
  // Agent state.
  std::stringstream agent(encoders::ReadString(root, "agent"));
  std::string line;
  while (std::getline(agent, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "algorithm" && value != AlgorithmName(impl_->o.algorithm))
      throw ConfigError(path + ": the checkpoint was written by " + value + ", not " + AlgorithmName(impl_->o.algorithm));
    if (key == "updates") impl_->updates = std::stoll(value);
    if (key == "baseline") {
      impl_->baseline.clear();
      for (const std::string& v : SplitCommaList(value)) impl_->baseline.push_back(std::stod(v));
    }
  }
  torch::serialize::InputArchive model, optimizer;
  if (!root.try_read("model", model) || !root.try_read("optimizer", optimizer))
    throw ConfigError(path + ": the checkpoint lacks model or optimizer state");
  encoders::LoadWeights(*impl_->policy->net(), model);
  impl_->optimizer.load(optimizer);
  std::istringstream rng_state(encoders::ReadString(root, "rng"));
  rng_state >> impl_->rng;
  if (!rng_state) throw ConfigError(path + ": the checkpoint's RNG state is unreadable");
  impl_->policy->ClearCache();
}

}  // namespace placerl::agents
