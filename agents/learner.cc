// PPO and REINFORCE updates and checkpoints (the only agents/ file that includes LibTorch).
#include "agents/learner.h"

#include <algorithm>
#include <iterator>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <sstream>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "encoders/lstm_policy.h"
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
// is encoded ONCE, with gradient, for all its transitions in `idx` — or, with a frozen encoder
// (`frozen` not null), once per update without gradient and reused by every minibatch.
struct Evaluated {
  torch::Tensor log_prob, entropy, value;
  std::vector<int32_t> order;
};

// The lstm preset's logits and values of transitions order[begin, end) (one instance): the
// decoder runs teacher-forced over each of their episodes once ([T, S] in one LSTM call), fed
// the episode's recorded actions. An episode's transitions are contiguous in the buffer
// (RolloutBuffer keeps them so), so decision t's prefix is transitions[i − t … i − 1].
std::pair<torch::Tensor, torch::Tensor> LstmForward(encoders::LstmPolicyNetImpl& m, const encoders::StaticEmbedding& emb,
                                                    const RolloutBuffer& buf, const std::vector<int32_t>& order,
                                                    size_t begin, size_t end, const torch::Tensor& illegal) {
  std::map<int32_t, int32_t> episode_of_start;  // buffer index of an episode's first decision → sequence
  std::vector<int32_t> starts, length;
  std::vector<int64_t> rows;  // per transition: t · S + s, filled once S is known
  std::vector<std::pair<int32_t, int32_t>> at;  // (t, s)
  for (size_t k = begin; k < end; ++k) {
    const int32_t i = order[k];
    const Transition& tr = buf.transitions[i];
    const int32_t start = i - tr.step;
    if (tr.current_node != tr.step || start < 0 || buf.transitions[start].step != 0 ||
        buf.transitions[start].instance != tr.instance)
      throw ConfigError("agent (lstm policy): transition " + std::to_string(i) +
                        " is not part of a contiguous episode deciding node t at step t");
    auto [it, added] = episode_of_start.emplace(start, static_cast<int32_t>(starts.size()));
    if (added) starts.push_back(start), length.push_back(0);
    length[it->second] = std::max(length[it->second], tr.step + 1);
    at.emplace_back(tr.step, it->second);
  }
  const int64_t s = static_cast<int64_t>(starts.size());
  const int32_t t_max = *std::max_element(length.begin(), length.end());
  torch::Tensor previous = torch::full({t_max, s}, static_cast<int64_t>(m.start_symbol()), torch::kLong);
  int64_t* p = previous.data_ptr<int64_t>();
  for (int64_t q = 0; q < s; ++q)
    for (int32_t t = 1; t < length[q]; ++t) {
      const Transition& before = buf.transitions[starts[q] + t - 1];
      if (before.step != t - 1) throw ConfigError("agent (lstm policy): an episode's transitions are not contiguous");
      p[t * s + q] = before.action;
    }
  for (const auto& [t, q] : at) rows.push_back(t * s + q);
  const torch::Tensor out = m.Decode(emb, previous);  // [T, S, H]
  const torch::Tensor h = out.reshape({t_max * s, -1}).index_select(0, torch::tensor(rows, torch::kLong));
  return m.Head(emb, h, illegal);
}

// One update's embeddings of a frozen encoder, by instance graph.
using FrozenEmbeddings = std::vector<std::pair<const env::StaticGraph*, encoders::StaticEmbedding>>;

Evaluated EvaluateTransitions(PolicyNetImpl& net, GraphCache& graphs, const RolloutBuffer& buf,
                              const std::vector<int32_t>& idx, FrozenEmbeddings* frozen) {  // idx not empty
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

    encoders::StaticEmbedding emb;
    if (frozen) {  // no gradient reaches the encoder's weights
      auto it = std::find_if(frozen->begin(), frozen->end(), [&](const auto& e) { return e.first == ri.graph.get(); });
      if (it == frozen->end()) {
        torch::NoGradGuard no_grad;
        frozen->emplace_back(ri.graph.get(), net.Encode(g));
        it = std::prev(frozen->end());
      }
      emb = it->second;
    } else {
      emb = net.Encode(g);
    }
    torch::Tensor logits, value;
    if (net.lstm()) {
      std::tie(logits, value) = LstmForward(*net.lstm(), emb, buf, order, begin, end, batch.illegal);
    } else {
      std::tie(logits, value) = net.Forward(emb, batch);
    }
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

// The cross-rank sums of an update (a no-op in one process): every rank calls the same
// sequence of these, whatever its local batch holds.
class Sync {
 public:
  explicit Sync(Collective* c) : c_(c && c->world_size() > 1 ? c : nullptr) {}
  bool distributed() const { return c_ != nullptr; }
  void Sum(std::vector<double>* v) {
    if (c_ && !v->empty()) c_->AllReduceSum(v->data(), static_cast<int64_t>(v->size()));
  }
  void Max(std::vector<double>* v) {
    if (c_ && !v->empty()) c_->AllReduceMax(v->data(), static_cast<int64_t>(v->size()));
  }
  // Sums the gradients over the ranks: one flat all-reduce of every gradient (zeros where
  // undefined) followed by one flag per parameter. A parameter whose gradient is defined on
  // some rank gets the summed gradient on every rank (Adam steps it, as the single process
  // would on the combined minibatch); one defined nowhere stays undefined.
  void Gradients(PolicyNetImpl& net) {
    if (!c_) return;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<torch::Tensor> params = net.parameters();
    std::vector<torch::Tensor> parts;
    int64_t numel = 0;
    for (const auto& p : params) {
      parts.push_back(p.grad().defined() ? p.grad().reshape({-1}) : torch::zeros({p.numel()}));
      numel += p.numel();
    }
    torch::Tensor flags = torch::empty({static_cast<int64_t>(params.size())});
    for (size_t i = 0; i < params.size(); ++i) flags.data_ptr<float>()[i] = params[i].grad().defined() ? 1.0f : 0.0f;
    parts.push_back(flags);
    torch::Tensor flat = torch::cat(parts).contiguous();
    c_->AllReduceSum(flat.data_ptr<float>(), flat.numel());
    int64_t off = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const int64_t n = params[i].numel();
      if (flat.data_ptr<float>()[numel + static_cast<int64_t>(i)] > 0) {
        if (!params[i].grad().defined()) params[i].mutable_grad() = torch::empty_like(params[i]);
        params[i].mutable_grad().copy_(flat.narrow(0, off, n).view_as(params[i]));
      }
      off += n;
    }
    allreduce_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double allreduce_s = 0;

 private:
  Collective* c_;
};

// 1 − Var(returns − values) / Var(returns) over the combined buffers (CleanRL's explained
// variance), from global sums.
double ExplainedVariance(const RolloutBuffer& buf, Sync& sync) {
  std::vector<double> m(5, 0.0);  // n, Σr, Σr², Σd, Σd²
  for (size_t i = 0; i < buf.returns.size(); ++i) {
    const double r = buf.returns[i], d = buf.advantages[i];
    m[0] += 1, m[1] += r, m[2] += r * r, m[3] += d, m[4] += d * d;
  }
  sync.Sum(&m);
  const double n = m[0];
  if (n < 2) return 0;
  const double vr = m[2] - m[1] * m[1] / n, vd = m[4] - m[3] * m[3] / n;
  return vr > 0 ? 1.0 - vd / vr : 0.0;
}

// PPO-clip, one call per batch of complete episodes (CleanRL ppo.py's update loop; CT §1.9).
// Every epoch splits the (local) shuffled batch into M near-equal minibatches, M = ⌈N / size⌉
// for the global transition count N; distributed, minibatch k is the union of the ranks'
// k-th parts, with its advantage normalisation and loss means over that union.
Stats PpoUpdate(PolicyNetImpl& net, torch::optim::Adam& optimizer, GraphCache& graphs, const RolloutBuffer& buf,
                const AgentOptions& o, std::mt19937_64& rng, Sync& sync) {
  const int32_t n = buf.size();
  std::vector<double> total = {static_cast<double>(n)};
  sync.Sum(&total);
  const int64_t global_n = static_cast<int64_t>(total[0]);
  const int64_t parts = std::max<int64_t>(1, (global_n + o.minibatch_size - 1) / o.minibatch_size);
  FrozenEmbeddings frozen;
  std::vector<int32_t> shuffled(n);
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::vector<double> sums(5, 0.0);  // policy loss, value loss, entropy, approx kl, clip fraction
  int32_t minibatches = 0;
  for (int32_t epoch = 0; epoch < o.epochs; ++epoch) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    // Global moments of every minibatch of this epoch (one all-reduce): count, Σ advantage,
    // Σ advantage².
    std::vector<double> epoch_moments(3 * parts, 0.0);
    for (int64_t part = 0; part < parts; ++part)
      for (int64_t k = part * n / parts; k < (part + 1) * n / parts; ++k) {
        const double a = buf.advantages[shuffled[k]];
        epoch_moments[3 * part] += 1, epoch_moments[3 * part + 1] += a, epoch_moments[3 * part + 2] += a * a;
      }
    sync.Sum(&epoch_moments);
    for (int64_t part = 0; part < parts; ++part) {
      const int64_t begin = part * n / parts, end = (part + 1) * n / parts;
      const std::vector<int32_t> idx(shuffled.begin() + begin, shuffled.begin() + end);
      Evaluated now;
      torch::Tensor advantages, returns, old_log_prob;
      if (!idx.empty()) {
        now = EvaluateTransitions(net, graphs, buf, idx, o.freeze_encoder ? &frozen : nullptr);
        old_log_prob = OldLogProbs(buf, now.order);
        advantages = Gather(buf.advantages, now.order);
        returns = Gather(buf.returns, now.order);
      }
      const double* moments = &epoch_moments[3 * part];
      const double count = moments[0];
      optimizer.zero_grad();
      if (!idx.empty()) {
        if (o.normalize_advantages && count > 1) {
          const double mean = moments[1] / count;
          const double var = std::max(0.0, (moments[2] - count * mean * mean) / (count - 1));  // unbiased, as torch's std
          advantages = (advantages - mean) / (std::sqrt(var) + 1e-8);
        }
        const torch::Tensor log_ratio = now.log_prob - old_log_prob;
        const torch::Tensor ratio = log_ratio.exp();
        {
          torch::NoGradGuard no_grad;
          sums[3] += ((ratio - 1) - log_ratio).sum().item<double>() / count;  // the k3 estimator of KL(old‖new)
          sums[4] += ((ratio - 1).abs() > o.clip).to(torch::kFloat).sum().item<double>() / count;
        }
        // Means over the global minibatch: local sums divided by the global count.
        const torch::Tensor pg_loss =
            torch::max(-advantages * ratio, -advantages * torch::clamp(ratio, 1 - o.clip, 1 + o.clip)).sum() / count;
        const torch::Tensor value_loss = 0.5 * (now.value - returns).pow(2).sum() / count;
        const torch::Tensor entropy = now.entropy.sum() / count;
        const torch::Tensor loss = pg_loss - o.entropy_coef * entropy + o.value_coef * value_loss;
        loss.backward();
        sums[0] += pg_loss.item<double>();
        sums[1] += value_loss.item<double>();
        sums[2] += entropy.item<double>();
      }
      sync.Gradients(net);
      torch::nn::utils::clip_grad_norm_(net.parameters(), o.max_grad_norm);
      optimizer.step();
      ++minibatches;
    }
  }
  sync.Sum(&sums);
  const double m = std::max(1, minibatches);
  Stats stats = {{"losses/policy_loss", sums[0] / m},  {"losses/value_loss", sums[1] / m},
                 {"losses/entropy", sums[2] / m},      {"losses/approx_kl", sums[3] / m},
                 {"losses/clipfrac", sums[4] / m},     {"losses/explained_variance", ExplainedVariance(buf, sync)},
                 {"charts/learning_rate", o.learning_rate}};
  return stats;
}

// REINFORCE: ∇ Σ_t (G_t − b_t) log π(a_t|s_t), one optimiser step per batch; b_t is a moving
// average of the returns at decision t (one per episode step, so dense rewards work too), from
// the global batch's per-step means.
Stats ReinforceUpdate(PolicyNetImpl& net, torch::optim::Adam& optimizer, GraphCache& graphs, const RolloutBuffer& buf,
                      const AgentOptions& o, std::vector<double>* baseline, Sync& sync) {
  const int32_t n = buf.size();
  FrozenEmbeddings frozen;
  // Batch sums of the return at each step index; a step seen for the first time starts there.
  std::vector<double> sum, count;
  for (int32_t i = 0; i < n; ++i) {
    const size_t t = buf.transitions[i].step;
    if (sum.size() <= t) sum.resize(t + 1, 0.0), count.resize(t + 1, 0.0);
    sum[t] += buf.returns[i];
    count[t] += 1;
  }
  std::vector<double> steps = {static_cast<double>(sum.size())};
  sync.Max(&steps);
  const size_t T = static_cast<size_t>(steps[0]);
  std::vector<double> both(2 * T, 0.0);  // Σ returns at t, then counts at t
  for (size_t t = 0; t < sum.size(); ++t) both[t] = sum[t], both[T + t] = count[t];
  sync.Sum(&both);
  sum.assign(both.begin(), both.begin() + T);
  count.assign(both.begin() + T, both.end());
  double global_n = 0;
  for (double c : count) global_n += c;
  for (size_t t = baseline->size(); t < T; ++t) baseline->push_back(count[t] > 0 ? sum[t] / count[t] : 0.0);

  optimizer.zero_grad();
  std::vector<double> sums(2, 0.0);  // policy loss, entropy
  std::vector<int32_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int32_t start = 0; start < n; start += o.minibatch_size) {
    const std::vector<int32_t> idx(all.begin() + start, all.begin() + std::min(n, start + o.minibatch_size));
    const Evaluated now = EvaluateTransitions(net, graphs, buf, idx, o.freeze_encoder ? &frozen : nullptr);
    std::vector<float> adv(now.order.size());
    for (size_t k = 0; k < now.order.size(); ++k) {
      const int32_t i = now.order[k];
      adv[k] = static_cast<float>(buf.returns[i] - (*baseline)[buf.transitions[i].step]);
    }
    const torch::Tensor advantages = torch::from_blob(adv.data(), {static_cast<int64_t>(adv.size())}).clone();
    const torch::Tensor pg_loss = -(advantages * now.log_prob).sum() / global_n;
    const torch::Tensor entropy = now.entropy.sum() / global_n;
    (pg_loss - o.entropy_coef * entropy).backward();  // gradients accumulate over the chunks
    sums[0] += pg_loss.item<double>();
    sums[1] += entropy.item<double>();
  }
  sync.Gradients(net);
  torch::nn::utils::clip_grad_norm_(net.parameters(), o.max_grad_norm);
  optimizer.step();
  for (size_t t = 0; t < T; ++t)
    if (count[t] > 0) (*baseline)[t] = o.baseline_decay * (*baseline)[t] + (1 - o.baseline_decay) * sum[t] / count[t];
  sync.Sum(&sums);
  return {{"losses/policy_loss", sums[0]},
          {"losses/entropy", sums[1]},
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
        rng(opt.seed),
        entropy_coef(opt.entropy_coef) {}
  encoders::Policy* policy;
  AgentOptions o;
  torch::optim::Adam optimizer;
  std::mt19937_64 rng;
  GraphCache graphs;
  std::vector<double> baseline;  // REINFORCE
  int64_t updates = 0;
  double entropy_coef = 0;  // the current coefficient (o.entropy_coef unless entropy_target adapts it)
  Collective* collective = nullptr;

  std::string AgentText() const {
    std::ostringstream s;
    s.precision(17);
    s << "algorithm=" << AlgorithmName(o.algorithm) << "\nupdates=" << updates << "\nbaseline=";
    for (size_t i = 0; i < baseline.size(); ++i) s << (i ? "," : "") << baseline[i];
    s << "\n";
    if (o.entropy_target > 0) s << "entropy_coef=" << entropy_coef << "\n";  // only then: older bytes unchanged
    return s.str();
  }
};

Learner::Learner(encoders::Policy* policy, const AgentOptions& options)
    : impl_(std::make_unique<Impl>(policy, options)) {
  if (options.epochs < 1 || options.minibatch_size < 1) throw ConfigError("agent: epochs and minibatch_size must be >= 1");
  if (!(options.learning_rate > 0)) throw ConfigError("agent: learning_rate must be > 0");
  if (!(options.entropy_target >= 0) || !std::isfinite(options.entropy_target))
    throw ConfigError("agent.entropy_target must be >= 0 (0 = off)");
  if (options.entropy_target > 0 &&
      (!(options.entropy_coef > 0) || !(options.entropy_coef_rate > 0) || !std::isfinite(options.entropy_coef_rate)))
    throw ConfigError("agent.entropy_target needs agent.entropy_coef > 0 (its start) and agent.entropy_coef_rate > 0");
  if (options.freeze_encoder && policy->options().preset == encoders::PolicyPreset::kCtFaithful)
    throw ConfigError("agent.freeze_encoder: the ct_faithful policy runs its GCN in the head; nothing to freeze");
}
Learner::~Learner() = default;
std::mt19937_64& Learner::rng() { return impl_->rng; }
int64_t Learner::updates() const { return impl_->updates; }
const AgentOptions& Learner::options() const { return impl_->o; }
encoders::Policy& Learner::policy() { return *impl_->policy; }

void Learner::SetCollective(Collective* collective) { impl_->collective = collective; }

double Learner::WeightChecksum() const {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& p : impl_->policy->net()->parameters()) sum += p.to(torch::kFloat64).sum().item<double>();
  return sum;
}

Stats Learner::Update(RolloutBuffer* buffer) {
  Sync sync(impl_->collective);
  std::vector<double> total = {static_cast<double>(buffer->size())};
  sync.Sum(&total);
  if (total[0] == 0) throw ConfigError("agent: the rollout buffer is empty");
  buffer->ComputeReturns(impl_->o.gamma);
  PolicyNetImpl& net = *impl_->policy->net();
  AgentOptions o = impl_->o;
  o.entropy_coef = impl_->entropy_coef;
  Stats stats = o.algorithm == Algorithm::kPpo
                    ? PpoUpdate(net, impl_->optimizer, impl_->graphs, *buffer, o, impl_->rng, sync)
                    : ReinforceUpdate(net, impl_->optimizer, impl_->graphs, *buffer, o, &impl_->baseline, sync);
  if (o.entropy_target > 0) {  // the stats are global: every rank adapts alike
    stats["charts/entropy_coef"] = impl_->entropy_coef;  // the coefficient this update used
    const double step = o.entropy_coef_rate * (o.entropy_target - stats["losses/entropy"]);
    impl_->entropy_coef = std::clamp(impl_->entropy_coef * std::exp(std::clamp(step, -20.0, 20.0)), 1e-6, 10.0);
  }
  impl_->policy->ClearCache();
  ++impl_->updates;
  if (sync.distributed()) {
    stats["perf/allreduce_s"] = sync.allreduce_s;
    // Every rank took the same step: the weights must agree (max and −min of the checksums).
    const double c = WeightChecksum();
    std::vector<double> range = {c, -c};
    sync.Max(&range);
    if (range[0] != -range[1]) {
      std::ostringstream what;
      what.precision(17);
      what << "rank " << impl_->collective->rank() << ": the weights differ across ranks after update " << impl_->updates
           << " (checksums from " << -range[1] << " to " << range[0] << ")";
      throw Error(what.str());
    }
  }
  return stats;
}

void Learner::SaveCheckpoint(const std::string& path, const Extras& extras) const {
  WriteFileAtomic(path, CheckpointBytes(extras));
}

std::string Learner::CheckpointBytes(const Extras& extras) const {
  torch::serialize::OutputArchive root;
  if (!extras.empty()) {  // "extras" lists the keys; entry extra_i holds the i-th value
    std::string keys;
    int i = 0;
    for (const auto& [key, value] : extras) {
      if (key.empty() || key.find('\n') != std::string::npos) throw Error("checkpoint extra keys must be one non-empty line");
      keys += key + "\n";
      encoders::WriteString(root, "extra_" + std::to_string(i++), value);
    }
    encoders::WriteString(root, "extras", keys);
  }
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
  return encoders::CheckpointFileBytes(root);  // with the header: length and checksum
}

void Learner::LoadCheckpoint(const std::string& path) { LoadCheckpointBytes(ReadFile(path), path); }

namespace {

Learner::Extras ReadExtrasOf(torch::serialize::InputArchive& root) {
  Learner::Extras extras;
  torch::Tensor listed;
  if (root.try_read("extras", listed)) {
    std::istringstream keys(encoders::ReadString(root, "extras"));
    std::string key;
    for (int i = 0; std::getline(keys, key); ++i) extras[key] = encoders::ReadString(root, "extra_" + std::to_string(i));
  }
  return extras;
}

}  // namespace

Learner::Extras Learner::ReadExtras(const std::string& path) {
  torch::serialize::InputArchive root;
  encoders::LoadCheckpointArchive(ReadFile(path), path, &root);
  Extras extras;
  encoders::WithCheckpointName(path, [&] { extras = ReadExtrasOf(root); });
  return extras;
}

void Learner::LoadCheckpointBytes(const std::string& bytes, const std::string& path, Extras* extras) {
  torch::serialize::InputArchive root;
  encoders::LoadCheckpointArchive(bytes, path, &root);  // length, checksum, archive
  // Every error below names the file.
  encoders::WithCheckpointName(path, [&] {
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
      if (key == "entropy_coef" && impl_->o.entropy_target > 0) impl_->entropy_coef = std::stod(value);
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
    if (extras) *extras = ReadExtrasOf(root);
  });
}

void CheckSameWeights(Learner& learner, Collective* collective, const char* when) {
  if (!collective) return;
  const double c = learner.WeightChecksum();
  std::vector<double> range = {c, -c};
  collective->AllReduceMax(range.data(), 2);
  if (range[0] != -range[1])
    throw Error("rank " + std::to_string(collective->rank()) + ": the workers' weights differ " + when);
}

}  // namespace placerl::agents
