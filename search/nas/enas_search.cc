#include "search/nas/enas_search.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "env/block/block_env.h"
#include "env/block/block_models.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stop_signal.h"
#include "agents/trainer.h"
#include "encoders/policy_net.h"
#include "models/enas_supernet.h"
#include "search/nas/nas_search.h"

namespace placerl::enas {
namespace {

namespace F = torch::nn::functional;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double CpuSeconds() { return ProcessCpuSeconds(); }

// Fashion-MNIST's pixel mean and standard deviation (of the 60,000 training images, /255).
constexpr double kPixelMean = 0.2860, kPixelStd = 0.3530;

struct Split {
  torch::Tensor images;  // [n, 1, 28, 28] float, normalised
  torch::Tensor labels;  // [n] long
  int64_t size() const { return images.size(0); }
};

Split ToTensors(const nas::ImageSet& set, int64_t begin, int64_t end) {
  const int64_t n = end - begin, pixels = static_cast<int64_t>(set.rows) * set.cols;
  Split s;
  s.images = torch::from_blob(const_cast<uint8_t*>(set.pixels.data()) + begin * pixels, {n, 1, set.rows, set.cols},
                              torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0)
                 .sub_(kPixelMean)
                 .div_(kPixelStd);
  s.labels = torch::from_blob(const_cast<uint8_t*>(set.labels.data()) + begin, {n}, torch::kUInt8).to(torch::kLong);
  return s;
}

struct Data {
  Split train, val, test;
};

Data LoadData(const EnasSearchOptions& o) {
  const nas::ImageSet train = nas::LoadFashionMnist(o.data_dir, "train");
  const nas::ImageSet test = nas::LoadFashionMnist(o.data_dir, "test");
  if (train.rows != 28 || train.cols != 28) throw ConfigError("fashion-mnist: images are not 28x28");
  if (o.validation_images >= train.count) throw ConfigError("validation_images must be below the training images");
  Data d;
  const int64_t val_begin = train.count - o.validation_images;
  const int64_t train_end = o.max_train_images > 0 ? std::min<int64_t>(o.max_train_images, val_begin) : val_begin;
  d.train = ToTensors(train, 0, train_end);
  d.val = ToTensors(train, val_begin, train.count);
  d.test = ToTensors(test, 0, o.max_test_images > 0 ? std::min(o.max_test_images, test.count) : test.count);
  return d;
}

EnasNetOptions NetOptionsOf(const NetSize& s) {
  EnasNetOptions o;
  o.channels = s.channels;
  o.cells_per_stage = s.cells_per_stage;
  return o;
}

// Minibatches of a split in a shuffled order, reshuffled after each pass.
class Batches {
 public:
  Batches(const Split& s, int32_t batch, uint64_t seed) : s_(s), batch_(batch), rng_(seed) {}
  std::pair<torch::Tensor, torch::Tensor> Next() {
    if (order_.empty() || at_ + batch_ > static_cast<int64_t>(order_.size())) {
      order_.resize(s_.size());
      std::iota(order_.begin(), order_.end(), 0);
      std::shuffle(order_.begin(), order_.end(), rng_);
      at_ = 0;
    }
    const int64_t n = std::min<int64_t>(batch_, s_.size());
    torch::Tensor idx = torch::from_blob(order_.data() + at_, {n}, torch::kLong).clone();
    at_ += n;
    return {s_.images.index_select(0, idx), s_.labels.index_select(0, idx)};
  }
  // Its state (checkpoints): the RNG, the pass's order, the position in it.
  std::string RngText() const {
    std::ostringstream out;
    out << rng_;
    return out.str();
  }
  const std::vector<int64_t>& order() const { return order_; }
  int64_t at() const { return at_; }
  void Restore(const std::string& rng, std::vector<int64_t> order, int64_t at) {
    std::istringstream in(rng);
    in >> rng_;
    if (!in) throw ConfigError("enas checkpoint: the minibatch RNG is unreadable");
    if (at < 0 || at > static_cast<int64_t>(order.size()) || (!order.empty() && order.size() != static_cast<size_t>(s_.size())))
      throw ConfigError("enas checkpoint: the minibatch order does not fit the training split");
    order_ = std::move(order);
    at_ = at;
  }

 private:
  const Split& s_;
  int32_t batch_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
  int64_t at_ = 0;
};

// Accuracy of `arch` on images [begin, begin + n) of `s` (cyclic), in batches; no gradients.
double Accuracy(EnasNet& net, const ChildArch& arch, const Split& s, int64_t begin, int64_t n) {
  torch::NoGradGuard no_grad;
  int64_t correct = 0;
  for (int64_t done = 0; done < n;) {
    const int64_t at = (begin + done) % s.size();
    const int64_t m = std::min<int64_t>({500, n - done, s.size() - at});
    const torch::Tensor logits = net->Forward(s.images.narrow(0, at, m), arch);
    correct += logits.argmax(1).eq(s.labels.narrow(0, at, m)).sum().item<int64_t>();
    done += m;
  }
  return n > 0 ? static_cast<double>(correct) / n : 0;
}

double CosineLr(const EnasSearchOptions& o, double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  return o.lr_min + 0.5 * (o.lr_max - o.lr_min) * (1 + std::cos(M_PI * fraction));
}

// One SGD step of `arch` on a minibatch; returns {loss, accuracy}.
std::pair<double, double> TrainStep(EnasNet& net, torch::optim::SGD& sgd, const ChildArch& arch,
                                    const std::pair<torch::Tensor, torch::Tensor>& batch, double lr, double clip) {
  for (auto& group : sgd.param_groups()) static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
  sgd.zero_grad();
  const torch::Tensor logits = net->Forward(batch.first, arch);
  const torch::Tensor loss = F::cross_entropy(logits, batch.second);
  loss.backward();
  if (clip > 0) torch::nn::utils::clip_grad_norm_(net->parameters(), clip);
  sgd.step();
  const double acc = logits.argmax(1).eq(batch.second).to(torch::kFloat64).mean().item<double>();
  return {loss.item<double>(), acc};
}

torch::Tensor BytesTensor(const std::string& bytes) {
  if (bytes.empty()) return torch::zeros({0}, torch::kUInt8);
  return torch::from_blob(const_cast<char*>(bytes.data()), {static_cast<int64_t>(bytes.size())}, torch::kUInt8).clone();
}

std::string TensorBytes(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous().to(torch::kUInt8);
  return std::string(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), static_cast<size_t>(c.numel()));
}

// The archive entry of EnasCheckpoints::run_state.
constexpr const char* kRunStateEntry = "run_state";

double FiniteOr(const nlohmann::json& j) { return j.is_null() ? NAN : j.get<double>(); }

nlohmann::json EpochJson(const EnasEpochStats& e) {
  return {{"epoch", e.epoch}, {"seconds", e.seconds}, {"lr", e.lr}, {"shared_loss", FiniteOrNull(e.shared_loss)},
          {"shared_accuracy", FiniteOrNull(e.shared_accuracy)}, {"controller_reward", FiniteOrNull(e.controller_reward)},
          {"val_accuracy", FiniteOrNull(e.val_accuracy)}, {"entropy", FiniteOrNull(e.entropy)},
          {"policy_loss", FiniteOrNull(e.policy_loss)}};
}

EnasEpochStats EpochFrom(const nlohmann::json& j) {
  EnasEpochStats e;
  e.epoch = j.at("epoch").get<int32_t>();
  e.seconds = j.at("seconds").get<double>();
  e.lr = j.at("lr").get<double>();
  e.shared_loss = FiniteOr(j.at("shared_loss"));
  e.shared_accuracy = FiniteOr(j.at("shared_accuracy"));
  e.controller_reward = FiniteOr(j.at("controller_reward"));
  e.val_accuracy = FiniteOr(j.at("val_accuracy"));
  e.entropy = FiniteOr(j.at("entropy"));
  e.policy_loss = FiniteOr(j.at("policy_loss"));
  return e;
}

torch::optim::SGD MakeSgd(EnasNet& net, const EnasSearchOptions& o) {
  return torch::optim::SGD(net->parameters(), torch::optim::SGDOptions(o.lr_max)
                                                  .momentum(o.momentum)
                                                  .nesterov(o.momentum > 0)
                                                  .weight_decay(o.weight_decay));
}

// The child's quality for the block environment: its accuracy, with the super-network's current
// weights, on the NEXT validation minibatch (ENAS's reward). Asking again for the architecture
// just scored returns the same value without a new batch (the controller's bookkeeping asks the
// environment twice per episode: search/nas/nas_rl.cc).
class SharedWeightsQuality : public env::QualityModel {
 public:
  SharedWeightsQuality(EnasNet net, const Split* val, int32_t batch) : net_(std::move(net)), val_(val), batch_(batch) {}
  double Quality(const nas::Architecture& a) const override {
    if (have_last_ && a == last_arch_) return last_value_;
    last_value_ = Accuracy(net_, DecodeEnasMicro(a), *val_, cursor_, batch_);
    cursor_ = (cursor_ + batch_) % val_->size();
    last_arch_ = a;
    have_last_ = true;
    return last_value_;
  }
  std::string Describe() const override {
    return "accuracy on a validation minibatch of " + std::to_string(batch_) + " (shared weights)";
  }
  // Its state (checkpoints): the validation cursor and the last answer.
  nlohmann::json State() const {
    return {{"cursor", cursor_}, {"have_last", have_last_}, {"last_arch", last_arch_}, {"last_value", last_value_}};
  }
  void Restore(const nlohmann::json& j) {
    cursor_ = j.at("cursor").get<int64_t>();
    have_last_ = j.at("have_last").get<bool>();
    last_arch_ = j.at("last_arch").get<nas::Architecture>();
    last_value_ = j.at("last_value").get<double>();
  }

 private:
  mutable EnasNet net_;
  const Split* val_;
  int32_t batch_;
  mutable int64_t cursor_ = 0;
  mutable nas::Architecture last_arch_;
  mutable double last_value_ = 0;
  mutable bool have_last_ = false;
};

// A child's multiply-accumulates in millions: the block environment's step-time proxy.
class MacsCost : public env::StepTimeModel {
 public:
  explicit MacsCost(const EnasNetOptions& o) : o_(o) {}
  double StepTime(const nas::Architecture& a) const override { return ChildCostOf(o_, DecodeEnasMicro(a)).macs / 1e6; }
  std::string unit() const override { return "MMACs (proxy)"; }

 private:
  EnasNetOptions o_;
};

// Trains `a` from scratch (a FixedNet of o.final_net's size) for `steps` SGD steps over the train
// split, the cosine schedule over those steps; initialisation and minibatch order from `seed`.
// Progress as "final:<label>" every 20 steps (label empty: none). The net is left in eval mode.
EnasNet TrainSteps(const Data& d, const ChildArch& arch, const EnasSearchOptions& o, uint64_t seed, int64_t steps,
                   const std::string& label, const std::function<bool()>& stop, const EnasProgressFn& progress) {
  torch::manual_seed(seed);
  EnasNet net(NetOptionsOf(o.final_net), arch);
  net->train();
  torch::optim::SGD sgd = MakeSgd(net, o);
  Batches batches(d.train, o.batch, seed);
  double loss_avg = 0;
  for (int64_t step = 0; step < steps && !(stop && stop()); ++step) {
    const auto [loss, acc] = TrainStep(net, sgd, arch, batches.Next(), CosineLr(o, static_cast<double>(step) / steps),
                                       o.grad_clip);
    loss_avg = step == 0 ? loss : 0.98 * loss_avg + 0.02 * loss;
    if (progress && !label.empty() && (step % 20 == 0 || step + 1 == steps)) {
      char status[80];
      std::snprintf(status, sizeof(status), "loss %.4f", loss_avg);
      progress("final:" + label, static_cast<double>(step + 1) / steps, status);
    }
  }
  net->eval();
  return net;
}

// Trains `arch` from scratch (a FixedNet) for o.final_epochs over the train split with the
// cosine schedule, then measures validation and test accuracy in eval mode.
TrainedChild TrainFromScratch(const Data& d, const std::string& label, const nas::Architecture& a,
                              const EnasSearchOptions& o, uint64_t seed, const std::function<bool()>& stop,
                              const EnasProgressFn& progress) {
  const auto start = Clock::now();
  const double cpu_start = CpuSeconds();
  const ChildArch arch = DecodeEnasMicro(a);
  const int64_t steps =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(o.final_epochs * d.train.size() / o.batch)));
  EnasNet net = TrainSteps(d, arch, o, seed, steps, label, stop, progress);
  TrainedChild t;
  t.label = label;
  t.arch = a;
  const ChildCost cost = ChildCostOf(NetOptionsOf(o.final_net), arch);
  t.params = cost.params;
  t.macs = cost.macs;
  if (stop && stop()) {  // cut short by a stop: no accuracy to report (NaN: null in JSON)
    t.stopped = true;
    t.val_accuracy = t.test_accuracy = NAN;
  } else {
    t.val_accuracy = Accuracy(net, arch, d.val, 0, d.val.size());
    t.test_accuracy = Accuracy(net, arch, d.test, 0, d.test.size());
  }
  t.train_seconds = Since(start);
  t.train_cpu_seconds = CpuSeconds() - cpu_start;
  return t;
}

}  // namespace

void CheckSearchOptions(const EnasSearchOptions& o) {
  auto positive = [](int64_t v, int64_t hi, const char* what) {
    if (v < 1 || v > hi) throw ConfigError(std::string(what) + " must be in [1, " + std::to_string(hi) + "]");
  };
  positive(o.validation_images, 59999, "validation_images");
  positive(o.shared_steps, 1000000, "shared_steps");
  positive(o.controller_steps, 1000000, "controller_steps");
  positive(o.batch, 100000, "batch");
  positive(o.reward_batch, 100000, "reward_batch");
  positive(o.epoch_val_images, 1000000, "epoch_val_images");
  positive(o.derive_samples, 100000, "derive_samples");
  positive(o.derive_images, 1000000, "derive_images");
  positive(o.final_candidates, 10000, "final_candidates");
  if (o.random_cells < 0 || o.random_cells > 10000) throw ConfigError("random_cells must be in [0, 10000]");
  if (!(o.uniform_fraction >= 0 && o.uniform_fraction <= 1)) throw ConfigError("uniform_fraction must be in [0, 1]");
  positive(o.threads, 256, "threads");
  if (o.max_train_images < 0 || o.max_test_images < 0) throw ConfigError("max_train_images / max_test_images must be >= 0");
  if (!(o.budget_minutes > 0 && o.budget_minutes <= 1e6)) throw ConfigError("budget_minutes must be in (0, 1e6]");
  if (!(o.final_epochs > 0 && o.final_epochs <= 1e4)) throw ConfigError("final_epochs must be in (0, 1e4]");
  if (!(o.lr_max > 0 && o.lr_min >= 0 && o.lr_min <= o.lr_max && o.lr_max < 100))
    throw ConfigError("learning rates: need 0 <= lr_min <= lr_max < 100, lr_max > 0");
  if (!(o.momentum >= 0 && o.momentum < 1)) throw ConfigError("momentum must be in [0, 1)");
  if (!(o.weight_decay >= 0 && o.weight_decay < 1)) throw ConfigError("weight_decay must be in [0, 1)");
  if (!(o.grad_clip >= 0 && std::isfinite(o.grad_clip))) throw ConfigError("grad_clip must be finite and >= 0");
  CheckNetOptions(NetOptionsOf(o.search_net));
  CheckNetOptions(NetOptionsOf(o.final_net));
}

nas::Architecture HandDesignedCell() {
  ChildArch c;
  for (int32_t i = 0; i < kNodes; ++i) {
    c.normal.input[i] = c.reduce.input[i] = {i + 1, i};
    c.normal.op[i] = {static_cast<int32_t>(Op::kSepConv3), static_cast<int32_t>(Op::kIdentity)};
    c.reduce.op[i] = {static_cast<int32_t>(Op::kSepConv3), static_cast<int32_t>(Op::kMaxPool3)};
  }
  return EncodeEnasMicro(c);
}

std::string EnasCheckpointRunState(const std::string& checkpoint_bytes, const std::string& name) {
  std::string text;
  encoders::WithCheckpointName(name, [&] {
    torch::serialize::InputArchive archive;
    encoders::LoadCheckpointArchive(checkpoint_bytes, name, &archive);  // length, checksum
    torch::Tensor t;
    if (archive.try_read(kRunStateEntry, t)) text = TensorBytes(t);
  });
  return text;
}

namespace {

// The search super-network, initialised from `seed`, in training mode for good (BN with the
// batch's statistics: enas_supernet.h).
EnasNet SeededSearchNet(const EnasNetOptions& sn, uint64_t seed) {
  torch::manual_seed(seed);
  EnasNet net(sn);
  net->train();
  return net;
}

env::BlockEnvOptions BlockOptionsOf(const EnasSearchOptions& o) {
  env::BlockEnvOptions eo;
  eo.space = "enas_micro";
  eo.cost_budget = o.cost_budget;
  eo.penalty = o.penalty;
  eo.under_penalty = o.under_penalty;
  return eo;
}

NasRlOptions ControllerOptionsOf(const EnasSearchOptions& o) {
  NasRlOptions co = o.controller;
  co.seed = o.seed;
  return co;
}

// An epoch's controller training as a task of the one trainer (agents::Train): children sampled
// by the controller and scored with the shared weights, a learner update after every
// episodes_per_update of them and after the epoch's last partial batch.
class EnasControllerTask : public agents::TrainingTask {
 public:
  EnasControllerTask(NasRlController& controller, std::set<nas::Architecture>* distinct, EnasEpochStats* es,
                     EnasResult* r)
      : controller_(controller), distinct_(distinct), es_(es), r_(r) {}

  int32_t Collect(encoders::Policy&, std::mt19937_64*, int32_t episodes, uint64_t,
                  const std::function<bool()>& may_start, const std::function<void()>& ended,
                  agents::RolloutBuffer* buffer, agents::TrainingTimes*) override {
    int32_t played = 0;
    for (; played < episodes && (!may_start || may_start()); ++played) {
      const search::NasEvaluation child = controller_.PlayEpisode(buffer);
      distinct_->insert(child.arch);
      es_->controller_reward += child.score.reward;
      ++r_->controller_children;
      ++children_;
      if (ended) ended();
    }
    return played;
  }

  LogRow Update(agents::Learner& learner, agents::RolloutBuffer* buffer) override {
    last_ = learner.Update(buffer);
    return LogRow(last_.begin(), last_.end());
  }

  void Columns(const agents::RolloutBuffer&, LogRow*) override {}

  int32_t children() const { return children_; }
  const NasRlStats& last() const { return last_; }

 private:
  NasRlController& controller_;
  std::set<nas::Architecture>* distinct_;
  EnasEpochStats* es_;
  EnasResult* r_;
  int32_t children_ = 0;
  NasRlStats last_;
};

// Method enas: the shared-weight search (epochs of super-network and controller training until
// the budget is spent), the derive step and the finalists' training from scratch, filling `r`.
class SharedWeightSearch {
 public:
  SharedWeightSearch(const EnasSearchOptions& o, const Data& d, const std::shared_ptr<const nas::SearchSpace>& space,
                     EnasResult* r)
      : o_(o), d_(d), space_(space), r_(*r), sn_(NetOptionsOf(o.search_net)), net_(SeededSearchNet(sn_, o.seed)),
        sgd_(MakeSgd(net_, o)), quality_(std::make_shared<SharedWeightsQuality>(net_, &d.val, o.reward_batch)),
        block_(space, quality_, std::make_shared<const MacsCost>(sn_), BlockOptionsOf(o)),
        co_(ControllerOptionsOf(o)), controller_(block_, co_), batches_(d.train, o.batch, o.seed),
        uniform_rng_(o.seed * 104729 + 3), budget_(60 * o.budget_minutes), start_(Clock::now()),
        cpu_start_(CpuSeconds()) {}

  // Epochs until the budget is spent (at least one shared step and one child), from a checkpoint
  // when checkpoints.resume is set; a checkpoint after each due epoch and after the last.
  void Search(const std::function<bool()>& stopped, const EnasProgressFn& progress,
              const std::function<void(const EnasEpochStats&)>& on_epoch, const EnasCheckpoints& checkpoints) {
    int32_t epoch = checkpoints.resume.empty() ? 0 : Restore(checkpoints.resume);
    for (; !(epoch > 0 && Elapsed() >= budget_) && !stopped(); ++epoch) {
      EnasEpochStats es;
      es.epoch = epoch;
      TrainShared(&es, stopped, progress);
      TrainController(&es, stopped);
      es.val_accuracy = Accuracy(net_, DecodeEnasMicro(controller_.Sample(true)), d_.val, 0,
                                 std::min<int64_t>(o_.epoch_val_images, d_.val.size()));
      es.seconds = Elapsed();  // on the budget's clock
      r_.epochs.push_back(es);
      if (on_epoch) on_epoch(es);
      if (checkpoints.on_checkpoint && checkpoints.checkpoint_due && checkpoints.checkpoint_due() &&
          !(epoch > 0 && Elapsed() >= budget_) && !stopped())  // (the last epoch's: below)
        checkpoints.on_checkpoint(Save(epoch + 1, checkpoints), epoch + 1);
    }
    if (checkpoints.on_checkpoint) checkpoints.on_checkpoint(Save(epoch, checkpoints), epoch);
    r_.controller_updates = controller_.updates();
    r_.distinct_children = static_cast<int64_t>(distinct_.size());
    r_.search_seconds = seconds_before_ + Since(start_);
    r_.search_cpu_seconds = cpu_before_ + CpuSeconds() - cpu_start_;
  }

  // Derive: K sampled children (and the greedy one) ranked on a larger validation batch (accuracy
  // minus the reward's budget terms, so that the ranking sees the objective the controller saw).
  void Derive(const std::function<bool()>& stopped, const EnasProgressFn& progress) {
    const auto derive_start = Clock::now();
    std::vector<nas::Architecture> pool = {controller_.Sample(true)};
    for (int32_t k = 0; k < o_.derive_samples && !stopped(); ++k) pool.push_back(controller_.Sample());
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    const int64_t derive_images = std::min<int64_t>(o_.derive_images, d_.val.size());
    for (size_t k = 0; k < pool.size() && !stopped(); ++k) {
      TrainedChild c;
      c.label = "candidate" + std::to_string(k);
      c.arch = pool[k];
      const ChildCost cost = ChildCostOf(NetOptionsOf(o_.final_net), DecodeEnasMicro(pool[k]));
      c.params = cost.params;
      c.macs = cost.macs;
      c.shared_val_accuracy = Accuracy(net_, DecodeEnasMicro(pool[k]), d_.val, 0, derive_images);
      c.derive_penalty = block_.BudgetPenalty(block_.step_time_model().StepTime(pool[k]));
      r_.candidates.push_back(c);
      if (progress) progress("derive", static_cast<double>(k + 1) / pool.size(), "");
    }
    std::stable_sort(r_.candidates.begin(), r_.candidates.end(), [](const TrainedChild& a, const TrainedChild& b) {
      return a.shared_val_accuracy - a.derive_penalty > b.shared_val_accuracy - b.derive_penalty;
    });
    r_.derive_seconds = Since(derive_start);
  }

  // Final: the R best candidates trained from scratch; the found cell is the best by validation.
  void TrainFinalists(const std::function<bool()>& stop, const EnasProgressFn& progress) {
    const size_t finalists = std::min<size_t>(o_.final_candidates, r_.candidates.size());
    for (size_t k = 0; k < finalists && !(stop && stop()); ++k) {
      const std::string label = finalists == 1 ? "enas" : "enas" + std::to_string(k);
      TrainedChild t = TrainFromScratch(d_, label, r_.candidates[k].arch, o_, o_.seed + 1, stop, progress);
      if (t.stopped) break;  // cut short: not a finalist
      t.shared_val_accuracy = r_.candidates[k].shared_val_accuracy;
      t.derive_penalty = r_.candidates[k].derive_penalty;
      r_.finalists.push_back(t);
      if (!r_.have_enas || t.val_accuracy > r_.enas.val_accuracy) r_.enas = t;
      r_.have_enas = true;
    }
    if (r_.have_enas) r_.enas.label = "enas";
  }

 private:
  // The budget's clock: wall seconds, or this process's CPU seconds (o.cpu_clock), over all starts.
  double Elapsed() const {
    return o_.cpu_clock ? cpu_before_ + CpuSeconds() - cpu_start_ : seconds_before_ + Since(start_);
  }

  // The epoch's S minibatches of shared-weight training: each a child of the controller's (the
  // first uniform_fraction of the budget: a uniformly random one).
  void TrainShared(EnasEpochStats* es, const std::function<bool()>& stopped, const EnasProgressFn& progress) {
    int32_t n = 0;
    for (; n < o_.shared_steps && !(n > 0 && (Elapsed() >= budget_ || stopped())); ++n) {
      es->lr = CosineLr(o_, Elapsed() / budget_);
      const bool uniform = Elapsed() < o_.uniform_fraction * budget_;
      const nas::Architecture child = uniform ? search::RandomArchitecture(*space_, uniform_rng_) : controller_.Sample();
      if (uniform) {
        ++r_.uniform_steps;
      } else {
        distinct_.insert(child);
      }
      const auto [loss, acc] = TrainStep(net_, sgd_, DecodeEnasMicro(child), batches_.Next(), es->lr, o_.grad_clip);
      es->shared_loss += loss;
      es->shared_accuracy += acc;
      ++r_.shared_steps;
      if (progress && n % 10 == 0) {
        char status[100];
        std::snprintf(status, sizeof(status), "epoch %d loss %.4f", es->epoch, loss);
        progress("search", std::min(1.0, Elapsed() / budget_), status);
      }
    }
    es->shared_loss /= n;
    es->shared_accuracy /= n;
  }

  // The epoch's M children for the controller (at least one), on the one trainer.
  void TrainController(EnasEpochStats* es, const std::function<bool()>& stopped) {
    EnasControllerTask task(controller_, &distinct_, es, &r_);
    agents::TrainerOptions to;
    to.episodes_per_update = co_.episodes_per_update;
    to.seed = co_.seed;
    to.budget_s = INFINITY;  // the epoch's end: controller_steps children, or the search's budget (below)
    agents::TrainingProgress progress;
    agents::Train(
        task, controller_.learner(), to, &progress, nullptr,
        [&] {
          const int32_t m = task.children();
          return m >= o_.controller_steps || (m > 0 && (Elapsed() >= budget_ || stopped()));
        },
        {}, {});
    if (!task.last().empty()) last_ = task.last();
    es->controller_reward /= task.children();
    es->entropy = last_.count("losses/entropy") ? last_["losses/entropy"] : NAN;
    es->policy_loss = last_.count("losses/policy_loss") ? last_["losses/policy_loss"] : NAN;
  }

  // The search's state after an epoch (EnasCheckpoints).
  std::string Save(int32_t next_epoch, const EnasCheckpoints& checkpoints) {
    torch::serialize::OutputArchive archive, net_archive, sgd_archive;
    net_->save(net_archive);
    sgd_.save(sgd_archive);
    archive.write("net", net_archive);
    archive.write("sgd", sgd_archive);
    archive.write("learner", BytesTensor(controller_.CheckpointBytes()));
    std::vector<int64_t> order = batches_.order();
    archive.write("batches_order", torch::tensor(order, torch::kLong));
    nlohmann::json epochs = nlohmann::json::array();
    for (const EnasEpochStats& e : r_.epochs) epochs.push_back(EpochJson(e));
    const nlohmann::json state = {
        {"next_epoch", next_epoch},       {"seconds", seconds_before_ + Since(start_)},
        {"cpu_seconds", cpu_before_ + CpuSeconds() - cpu_start_}, {"shared_steps", r_.shared_steps},
        {"controller_children", r_.controller_children}, {"episodes", controller_.episodes()},
        {"samples", controller_.samples()}, {"batches_rng", batches_.RngText()}, {"batches_at", batches_.at()},
        {"quality", quality_->State()},   {"epochs", epochs}, {"seed", o_.seed},
        {"uniform_rng", [&] { std::ostringstream u; u << uniform_rng_; return u.str(); }()},
        {"uniform_steps", r_.uniform_steps},
        {"distinct", std::vector<nas::Architecture>(distinct_.begin(), distinct_.end())}};
    archive.write("state", BytesTensor(state.dump()));
    if (checkpoints.run_state) archive.write(kRunStateEntry, BytesTensor(checkpoints.run_state(next_epoch)));
    return encoders::CheckpointFileBytes(archive);  // with the header: length and checksum
  }

  // Continues the search from a checkpoint; returns the epoch it goes on with.
  int32_t Restore(const std::string& bytes) {
    try {
      torch::serialize::InputArchive archive, net_archive, sgd_archive;
      encoders::LoadCheckpointArchive(bytes, "enas checkpoint", &archive);  // length, checksum
      archive.read("net", net_archive);
      net_->load(net_archive);
      archive.read("sgd", sgd_archive);
      sgd_.load(sgd_archive);
      torch::Tensor t;
      archive.read("state", t);
      const nlohmann::json state = nlohmann::json::parse(TensorBytes(t));
      if (state.at("seed").get<uint64_t>() != o_.seed) throw ConfigError("enas checkpoint: another seed");
      archive.read("learner", t);
      controller_.Restore(TensorBytes(t), state.at("episodes").get<int64_t>(), state.at("samples").get<int64_t>());
      archive.read("batches_order", t);
      t = t.contiguous().to(torch::kLong);
      batches_.Restore(state.at("batches_rng").get<std::string>(),
                       std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()),
                       state.at("batches_at").get<int64_t>());
      quality_->Restore(state.at("quality"));
      const int32_t first_epoch = state.at("next_epoch").get<int32_t>();
      seconds_before_ = state.at("seconds").get<double>();
      cpu_before_ = state.at("cpu_seconds").get<double>();
      r_.shared_steps = state.at("shared_steps").get<int64_t>();
      r_.controller_children = state.at("controller_children").get<int64_t>();
      for (const auto& e : state.at("epochs")) r_.epochs.push_back(EpochFrom(e));
      if (state.contains("uniform_rng")) {
        std::istringstream u(state.at("uniform_rng").get<std::string>());
        u >> uniform_rng_;
        if (!u) throw ConfigError("enas checkpoint: the uniform children's RNG is unreadable");
        r_.uniform_steps = state.at("uniform_steps").get<int64_t>();
      }
      if (state.contains("distinct"))
        for (const auto& a : state.at("distinct")) distinct_.insert(a.get<nas::Architecture>());
      return first_epoch;
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(std::string("enas checkpoint: unreadable state (") + e.what() + ")");
    } catch (const c10::Error& e) {
      throw ConfigError(std::string("enas checkpoint: unreadable (") + e.what_without_backtrace() + ")");
    }
  }

  const EnasSearchOptions& o_;
  const Data& d_;
  std::shared_ptr<const nas::SearchSpace> space_;
  EnasResult& r_;
  const EnasNetOptions sn_;
  EnasNet net_;
  torch::optim::SGD sgd_;
  std::shared_ptr<SharedWeightsQuality> quality_;
  const env::BlockEnv block_;
  const NasRlOptions co_;
  NasRlController controller_;
  Batches batches_;
  std::mt19937_64 uniform_rng_;  // the uniformly random children (uniform_fraction)
  const double budget_;
  const Clock::time_point start_;
  const double cpu_start_;
  double seconds_before_ = 0, cpu_before_ = 0;  // the search time of earlier starts (resume)
  std::set<nas::Architecture> distinct_;        // every child the controller sampled
  NasRlStats last_;                             // the controller's last update
};

}  // namespace

EnasResult RunEnas(const std::string& method, const EnasSearchOptions& o, const std::function<bool()>& stop,
                   const EnasProgressFn& progress, const std::function<void(const EnasEpochStats&)>& on_epoch,
                   const EnasCheckpoints& checkpoints) {
  if (method != "enas" && method != "random") throw ConfigError("fashion-mnist: method '" + method + "' (enas, random)");
  CheckSearchOptions(o);
  if (method == "random" && o.random_cells < 1) throw ConfigError("method random: random_cells must be at least 1");
  torch::set_num_threads(o.threads);
  const Data d = LoadData(o);
  if (d.train.size() < o.batch) throw ConfigError("fewer training images than one batch");
  auto stopped = [&] { return stop && stop(); };
  EnasResult r;
  const auto space = std::make_shared<const nas::SearchSpace>(nas::LoadSearchSpace("enas_micro"));

  if (method == "enas") {
    SharedWeightSearch search(o, d, space, &r);
    search.Search(stopped, progress, on_epoch, checkpoints);
    search.Derive(stopped, progress);
    search.TrainFinalists(stop, progress);
  }
  if (method == "random" || o.compare) {
    std::mt19937_64 rng(o.seed * 7919 + 17);
    for (int32_t k = 0; k < o.random_cells && !stopped(); ++k) {
      const nas::Architecture a = search::RandomArchitecture(*space, rng);
      TrainedChild t = TrainFromScratch(d, "random" + std::to_string(k), a, o, o.seed + 101 + k, stop, progress);
      if (t.stopped) break;  // cut short: not counted
      r.random.push_back(std::move(t));
      if (r.best_random < 0 || r.random.back().val_accuracy > r.random[r.best_random].val_accuracy)
        r.best_random = static_cast<int32_t>(r.random.size()) - 1;
    }
  }
  if (method == "enas" && o.compare && !stopped()) {
    r.hand = TrainFromScratch(d, "hand", HandDesignedCell(), o, o.seed + 1, stop, progress);
    r.have_hand = !r.hand.stopped;
  }
  r.stopped = stopped();
  return r;
}

std::vector<double> SharedWeightAccuracies(const std::string& checkpoint_bytes, const std::vector<nas::Architecture>& cells,
                                           const EnasSearchOptions& o, int64_t images,
                                           const std::function<void(size_t done)>& progress) {
  CheckSearchOptions(o);
  if (images < 1) throw ConfigError("images must be at least 1");
  std::vector<ChildArch> archs;
  for (const nas::Architecture& a : cells) archs.push_back(DecodeEnasMicro(a));  // throws for a wrong size / choice
  torch::set_num_threads(o.threads);
  EnasNet net(NetOptionsOf(o.search_net));
  const std::string size = "C=" + std::to_string(o.search_net.channels) + " N=" + std::to_string(o.search_net.cells_per_stage);
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;  // (loading takes a stored tensor's shape)
  for (const auto& p : net->named_parameters()) shapes.emplace_back(p.key(), p.value().sizes().vec());
  try {
    torch::serialize::InputArchive archive, net_archive;
    encoders::LoadCheckpointArchive(checkpoint_bytes, "", &archive);  // length, checksum (the caller names the file)
    archive.read("net", net_archive);
    net->load(net_archive);
    const auto loaded = net->named_parameters();
    for (const auto& [name, shape] : shapes)
      if (loaded[name].sizes().vec() != shape)
        throw ConfigError("not a checkpoint of an enas_micro search with " + size + " (" + name + " has another shape)");
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    what = what.substr(0, what.find('\n'));
    throw ConfigError("not a checkpoint of an enas_micro search with " + size + " (" + what + ")");
  }
  net->train();  // as in the search and its derive step: BN with the batch's statistics
  const Data d = LoadData(o);
  const int64_t n = std::min<int64_t>(images, d.val.size());
  std::vector<double> acc;
  for (size_t k = 0; k < archs.size(); ++k) {
    // After a stop (Ctrl-C) the cells left are not scored (NaN).
    acc.push_back(run::StopRequested() ? NAN : Accuracy(net, archs[k], d.val, 0, n));
    if (progress) progress(k + 1);
  }
  return acc;
}

std::vector<std::vector<TrainedChild>> TrainCellsFromScratch(const std::vector<nas::Architecture>& cells,
                                                             const EnasSearchOptions& o, const std::vector<uint64_t>& seeds,
                                                             const std::function<bool()>& stop,
                                                             const std::function<void(size_t, size_t)>& progress) {
  CheckSearchOptions(o);
  if (seeds.empty()) throw ConfigError("no seeds to train with");
  for (const nas::Architecture& a : cells) DecodeEnasMicro(a);  // throws for a wrong size / choice, before any training
  torch::set_num_threads(o.threads);
  const Data d = LoadData(o);
  std::vector<std::vector<TrainedChild>> out(cells.size());
  for (size_t c = 0; c < cells.size() && !(stop && stop()); ++c)
    for (size_t s = 0; s < seeds.size() && !(stop && stop()); ++s) {
      TrainedChild t = TrainFromScratch(d, "cell" + std::to_string(c), cells[c], o, seeds[s], stop, {});
      if (t.stopped) break;  // cut short: not a result
      out[c].push_back(std::move(t));
      if (progress) progress(c, s);
    }
  return out;
}

namespace {
// Average ranks (1-based; ties share the mean of their ranks).
std::vector<double> AverageRanks(const std::vector<double>& x) {
  std::vector<size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> rank(x.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[idx[k]] = 0.5 * static_cast<double>(i + j) + 1;
    i = j + 1;
  }
  return rank;
}
}  // namespace

double KendallTau(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw ConfigError("KendallTau: lists of different lengths");
  double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) {
        ++ties_x;
      } else if (dy == 0) {
        ++ties_y;
      } else if ((dx > 0) == (dy > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double denom = std::sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y));
  return x.size() < 2 || denom == 0 ? NAN : (concordant - discordant) / denom;
}

double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw ConfigError("SpearmanRho: lists of different lengths");
  if (x.size() < 2) return NAN;
  const std::vector<double> rx = AverageRanks(x), ry = AverageRanks(y);
  const double mean = 0.5 * static_cast<double>(x.size() + 1);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxx == 0 || syy == 0 ? NAN : sxy / std::sqrt(sxx * syy);
}

nas::Architecture ParseDescribedArchitecture(const nas::SearchSpace& space, const std::string& text) {
  nas::ArchitectureDef def;
  def.set_space(space.name());
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == token.size())
      throw ConfigError("'" + token + "' is not decision=choice");
    auto* c = def.add_choice();
    c->set_decision(token.substr(0, eq));
    c->set_choice(token.substr(eq + 1));
  }
  if (def.choice_size() == 0) throw ConfigError("no decision=choice in the cell");
  return space.FromDef(def);  // throws for a missing, repeated or unknown decision or choice
}

nlohmann::json ChildJson(const nas::SearchSpace& space, const TrainedChild& c) {
  nlohmann::json j = {{"label", c.label},
                      {"architecture", space.Describe(c.arch)},
                      {"params", c.params},
                      {"macs", c.macs},
                      {"mflops", 2e-6 * static_cast<double>(c.macs)}};
  if (c.shared_val_accuracy >= 0) j["shared_val_accuracy"] = c.shared_val_accuracy;
  if (c.derive_penalty > 0) j["derive_penalty"] = c.derive_penalty;
  if (c.train_seconds > 0) {
    j["val_accuracy"] = c.val_accuracy;
    j["test_accuracy"] = c.test_accuracy;
    j["train_seconds"] = c.train_seconds;
    j["train_cpu_seconds"] = c.train_cpu_seconds;
  }
  return j;
}

namespace {

// The EnasSearchOptions of a short-training config (the rest: ENAS micro's recipe, as RunEnas).
EnasSearchOptions OptionsOf(const config::EnasTrainingConfig& c) {
  EnasSearchOptions o;
  o.data_dir = c.data_dir();
  o.validation_images = c.validation_size();
  o.max_train_images = c.max_images();
  o.max_test_images = c.max_images();
  o.final_epochs = c.final_epochs();
  o.threads = c.threads();
  o.seed = c.train_seed();
  return o;
}

// A cell's quality without weight sharing: its accuracy on the first `eval_size` validation
// images after `steps` SGD steps from scratch, the same seed (initialisation and data order) for
// every cell. Deterministic (one thread), so a cell is trained once and then answered from the cache.
class ShortTrainingQuality : public env::QualityModel {
 public:
  ShortTrainingQuality(std::shared_ptr<const Data> d, const EnasSearchOptions& o, int64_t steps, int64_t eval_size)
      : d_(std::move(d)), o_(o), steps_(steps), eval_size_(std::min<int64_t>(eval_size, d_->val.size())) {}
  double Quality(const nas::Architecture& a) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = cache_.find(a); it != cache_.end()) return it->second;
    const double cpu_start = CpuSeconds();
    const ChildArch arch = DecodeEnasMicro(a);
    // A stop (Ctrl-C) ends the training within a step: the quality is then NaN and not cached
    // (the search does not count an evaluation cut short, nas_search.h).
    const auto stop = [] { return run::StopRequested(); };
    EnasNet net = TrainSteps(*d_, arch, o_, o_.seed, steps_, "", stop, {});
    if (stop()) return NAN;
    const double acc = Accuracy(net, arch, d_->val, 0, eval_size_);
    cache_.emplace(a, acc);
    stats_.trained += 1;
    stats_.cpu_seconds += CpuSeconds() - cpu_start;
    return acc;
  }
  std::string Describe() const override {
    return "validation accuracy (" + std::to_string(eval_size_) + " images) after " + std::to_string(steps_) +
           " SGD steps from scratch (batch " + std::to_string(o_.batch) + ", seed " + std::to_string(o_.seed) + ")";
  }
  TrainedQualityStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  std::shared_ptr<const Data> d_;
  EnasSearchOptions o_;
  int64_t steps_, eval_size_;
  mutable std::mutex mu_;
  mutable std::map<nas::Architecture, double> cache_;
  mutable TrainedQualityStats stats_;
};

}  // namespace

void FillDefaultTrainingConfig(config::EnasTrainingConfig* c) {
  c->set_data_dir(nas::kFashionMnistDir);
  c->set_train_steps(200);  // ≈ 0.23 of an epoch at batch 64: ≈ 25 s of one core for a 2.6-MMAC cell
  c->set_eval_size(5000);
  c->set_validation_size(5000);  // as the ENAS search's split
  c->set_train_seed(1);
  c->set_final_epochs(1);
  c->set_threads(1);
  c->set_max_images(0);
}

void CheckTrainingConfig(const config::EnasTrainingConfig& c) {
  if (c.data_dir().empty()) throw ConfigError("enas_training.data_dir is empty");
  if (c.train_steps() < 1 || c.train_steps() > 10000000) throw ConfigError("enas_training.train_steps must be in [1, 1e7]");
  if (c.validation_size() < 1 || c.validation_size() > 59999)
    throw ConfigError("enas_training.validation_size must be in [1, 59999]");
  if (c.eval_size() < 1 || c.eval_size() > c.validation_size())
    throw ConfigError("enas_training.eval_size must be in [1, validation_size]");
  if (!(c.final_epochs() > 0 && c.final_epochs() <= 1e4)) throw ConfigError("enas_training.final_epochs must be in (0, 1e4]");
  if (c.threads() < 1 || c.threads() > 256) throw ConfigError("enas_training.threads must be in [1, 256]");
  if (c.max_images() < 0) throw ConfigError("enas_training.max_images must be >= 0");
  CheckSearchOptions(OptionsOf(c));
}

TrainedSearchSetup MakeTrainedSearchSetup(std::shared_ptr<const env::BlockEnv> base, const config::EnasTrainingConfig& c) {
  CheckTrainingConfig(c);
  if (base->space().name() != "enas_micro")
    throw ConfigError("trained cells (enas_training) are built for the enas_micro space, not " + base->space().name());
  const EnasSearchOptions o = OptionsOf(c);
  torch::set_num_threads(o.threads);
  auto data = std::make_shared<const Data>(LoadData(o));
  TrainedSearchSetup s;
  s.base = std::move(base);
  s.quality = std::make_shared<ShortTrainingQuality>(data, o, c.train_steps(), c.eval_size());
  s.step_time = std::make_shared<MacsCost>(NetOptionsOf(o.final_net));
  s.env = std::make_unique<env::BlockEnv>(s.base->shared_space(), s.quality, s.step_time, s.base->options());
  s.data = data;
  return s;
}

TrainedQualityStats QualityStats(const TrainedSearchSetup& s) {
  return static_cast<const ShortTrainingQuality&>(*s.quality).stats();
}

nlohmann::json TrainedFinalReport(const TrainedSearchSetup& s, const nas::Architecture& best,
                                  const config::EnasTrainingConfig& c, const EnasProgressFn& progress) {
  const EnasSearchOptions o = OptionsOf(c);
  const Data& d = *static_cast<const Data*>(s.data.get());
  const TrainedQualityStats search = QualityStats(s);  // before the hand-designed cell's short training
  nlohmann::json j;
  for (const auto& [label, arch] : {std::pair<std::string, nas::Architecture>{"best", best}, {"hand", HandDesignedCell()}}) {
    // A stop (Ctrl-C) ends a training within a step; the cut-short cell says so, the next is skipped.
    if (run::StopRequested()) {
      j[label] = {{"architecture", s.base->space().Describe(arch)}, {"skipped", "stopped by signal"}};
      continue;
    }
    const TrainedChild t = TrainFromScratch(d, label, arch, o, o.seed + 1, [] { return run::StopRequested(); }, progress);
    nlohmann::json cj = ChildJson(s.base->space(), t);
    if (t.stopped) cj["stopped_by_signal"] = true;
    cj["search_val_accuracy"] = FiniteOrNull(s.quality->Quality(arch));  // cached for the best; the hand cell is trained briefly once
    cj["mmacs"] = s.step_time->StepTime(arch);
    j[label] = cj;
  }
  j["recipe"] = {{"train_steps", c.train_steps()},  {"eval_size", c.eval_size()},
                 {"validation_size", c.validation_size()}, {"train_seed", c.train_seed()},
                 {"final_epochs", c.final_epochs()}, {"final_seed", o.seed + 1},
                 {"batch", o.batch},                  {"quality", s.quality->Describe()}};
  j["cells_trained"] = search.trained;  // distinct cells the search trained
  j["search_training_cpu_seconds"] = search.cpu_seconds;
  return j;
}

}  // namespace placerl::enas
