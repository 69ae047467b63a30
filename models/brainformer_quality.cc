#include "models/brainformer_quality.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "datasets/util/errors.h"
#include "datasets/util/stop_signal.h"
#include "models/brainformer_net.h"

namespace placerl::brainformer {

namespace {

// The images [first, first + count) of `set` in the order of `index`, as normalised floats
// [count, rows, cols], and their labels.
struct Batch {
  torch::Tensor images, labels;
};

Batch MakeBatch(const nas::ImageSet& set, const std::vector<int32_t>& index, size_t first, size_t count) {
  const int64_t pixels = static_cast<int64_t>(set.rows) * set.cols;
  torch::Tensor images = torch::empty({static_cast<int64_t>(count), set.rows, set.cols});
  torch::Tensor labels = torch::empty({static_cast<int64_t>(count)}, torch::kLong);
  float* out = images.data_ptr<float>();
  int64_t* lab = labels.data_ptr<int64_t>();
  // Fashion-MNIST's training-set mean and standard deviation of pixel / 255.
  constexpr float kMean = 0.2860f, kStd = 0.3530f;
  for (size_t i = 0; i < count; ++i) {
    const int32_t item = index.empty() ? static_cast<int32_t>(first + i) : index[first + i];
    const uint8_t* src = set.pixels.data() + static_cast<int64_t>(item) * pixels;
    for (int64_t p = 0; p < pixels; ++p) out[i * pixels + p] = (src[p] / 255.0f - kMean) / kStd;
    lab[i] = set.labels[item];
  }
  return {images, labels};
}

double Accuracy(BrainformerNet& net, const nas::ImageSet& set, int32_t count) {
  torch::NoGradGuard no_grad;
  net->eval();
  const int32_t n = count > 0 ? std::min(count, set.count) : set.count;
  // Scored in batches of 500: expert-choice routing sees other images of its batch, so the
  // batch size is fixed (and the same for every candidate).
  int64_t correct = 0;
  for (int32_t first = 0; first < n; first += 500) {
    const Batch b = MakeBatch(set, {}, first, std::min(500, n - first));
    correct += net->forward(b.images).argmax(1).eq(b.labels).sum().item<int64_t>();
  }
  net->train();
  return static_cast<double>(correct) / n;
}

}  // namespace

std::shared_ptr<const PatchData> LoadPatchData(const std::string& dir, int32_t validation_size) {
  nas::ImageSet all = nas::LoadFashionMnist(dir, "train");
  if (validation_size < 1 || validation_size >= all.count)
    throw ConfigError("validation size " + std::to_string(validation_size) + " must be in [1, " +
                      std::to_string(all.count - 1) + "]");
  auto d = std::make_shared<PatchData>();
  d->test = nas::LoadFashionMnist(dir, "test");
  const int64_t pixels = static_cast<int64_t>(all.rows) * all.cols;
  const int32_t train = all.count - validation_size;
  auto part = [&](int32_t first, int32_t count) {
    nas::ImageSet s;
    s.count = count;
    s.rows = all.rows;
    s.cols = all.cols;
    s.num_classes = all.num_classes;
    s.pixels.assign(all.pixels.begin() + first * pixels, all.pixels.begin() + (first + count) * pixels);
    s.labels.assign(all.labels.begin() + first, all.labels.begin() + first + count);
    return s;
  };
  d->train = part(0, train);
  d->validation = part(train, validation_size);
  return d;
}

void CheckRecipe(const TrainRecipe& r) {
  if (r.steps < 1 || r.steps > 10000000) throw ConfigError("train steps must be in [1, 1e7]");
  if (r.batch_size < 1 || r.batch_size > 100000) throw ConfigError("batch size must be in [1, 1e5]");
  if (!(r.learning_rate > 0 && r.learning_rate < 10)) throw ConfigError("learning rate must be in (0, 10)");
  if (!(r.aux_loss_weight >= 0 && r.aux_loss_weight < 1e3)) throw ConfigError("aux loss weight must be in [0, 1e3)");
  if (!(r.grad_clip > 0 && std::isfinite(r.grad_clip))) throw ConfigError("gradient clip must be > 0");
  if (r.eval_size < 0) throw ConfigError("eval size must be >= 0 (0 = all validation images)");
  if (r.threads < 1 || r.threads > 256) throw ConfigError("threads must be in [1, 256]");
  if (r.shape.width_divisor < 1 || r.shape.width_divisor > 1536) throw ConfigError("width divisor must be in [1, 1536]");
  if (r.shape.expert_divisor < 1 || r.shape.expert_divisor > 64) throw ConfigError("expert divisor must be in [1, 64]");
  if (r.shape.repeats < 1 || r.shape.repeats > 64) throw ConfigError("repeats must be in [1, 64]");
}

TrainResult TrainBlock(const Block& block, const TrainRecipe& recipe, const PatchData& data, bool with_test) {
  CheckRecipe(recipe);
  if (data.train.count < 1 || data.validation.count < 1) throw ConfigError("no training or validation images");
  const auto start = std::chrono::steady_clock::now();
  torch::set_num_threads(recipe.threads);
  torch::manual_seed(recipe.seed);
  NetShape shape = recipe.shape;
  shape.image_size = data.train.rows;
  if (data.train.rows != data.train.cols) throw ConfigError("images must be square");
  BrainformerNet net(block, shape);
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(recipe.learning_rate));

  // The data order: epochs of one seeded permutation each, the same for every candidate.
  std::mt19937_64 rng(recipe.seed);
  std::vector<int32_t> order(data.train.count);
  size_t next = order.size();
  const int64_t warmup = std::max<int64_t>(1, recipe.steps / 20);
  const int64_t window = std::max<int64_t>(1, recipe.steps / 10);
  TrainResult r;
  double first_sum = 0, last_sum = 0;
  int64_t dropped = 0, routed = 0;
  for (int64_t step = 0; step < recipe.steps; ++step) {
    if (run::StopRequested()) {  // Ctrl-C: ends within a step; the result says it was cut short
      r.stopped = true;
      r.validation_accuracy = r.test_accuracy = NAN;
      r.params = net->num_parameters();
      r.cost = TrainedNetCost(block, shape);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return r;
    }
    std::vector<int32_t> index;
    while (static_cast<int32_t>(index.size()) < recipe.batch_size) {
      if (next == order.size()) {
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        next = 0;
      }
      index.push_back(order[next++]);
    }
    const Batch b = MakeBatch(data.train, index, 0, index.size());
    const double lr = step < warmup ? recipe.learning_rate * (step + 1) / warmup
                                    : recipe.learning_rate * 0.5 *
                                          (1 + std::cos(M_PI * (step - warmup) / std::max<int64_t>(1, recipe.steps - warmup)));
    for (auto& group : opt.param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    const torch::Tensor logits = net->forward(b.images);
    const torch::Tensor ce = torch::nn::functional::cross_entropy(logits, b.labels);
    const torch::Tensor loss = ce + recipe.aux_loss_weight * net->aux_loss();
    opt.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(net->parameters(), recipe.grad_clip);
    opt.step();
    const double value = ce.item<double>();
    if (step < window) first_sum += value;
    if (step >= recipe.steps - window) {
      last_sum += value;
      dropped += net->last_dropped_tokens();
      routed += net->last_routed_tokens();
    }
  }
  r.first_loss = first_sum / window;
  r.last_loss = last_sum / window;
  r.dropped_token_fraction = routed > 0 ? static_cast<double>(dropped) / routed : 0;
  r.validation_accuracy = Accuracy(net, data.validation, recipe.eval_size);
  if (with_test) r.test_accuracy = Accuracy(net, data.test, 0);
  r.params = net->num_parameters();
  r.cost = TrainedNetCost(block, shape);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

TrainResult FinalTraining(const Block& block, TrainRecipe recipe, int64_t final_steps, const PatchData& data) {
  recipe.steps = final_steps;
  recipe.eval_size = 0;
  return TrainBlock(block, recipe, data, /*with_test=*/true);
}

PatchTransformerQuality::PatchTransformerQuality(std::shared_ptr<const nas::SearchSpace> space,
                                                 std::shared_ptr<const PatchData> data, const TrainRecipe& recipe)
    : space_(std::move(space)), data_(std::move(data)), recipe_(recipe) {
  CheckRecipe(recipe_);
}

double PatchTransformerQuality::Quality(const nas::Architecture& a) const {
  auto it = cache_.find(a);
  if (it == cache_.end()) {
    const TrainResult r = TrainBlock(BlockFromArchitecture(*space_, a), recipe_, *data_, /*with_test=*/false);
    seconds_ += r.seconds;
    if (r.stopped) return NAN;  // cut short by a stop: not cached, not counted by the search
    it = cache_.emplace(a, r).first;
  }
  return it->second.validation_accuracy;
}

const TrainResult* PatchTransformerQuality::Find(const nas::Architecture& a) const {
  const auto it = cache_.find(a);
  return it == cache_.end() ? nullptr : &it->second;
}

std::string PatchTransformerQuality::Describe() const {
  return "Fashion-MNIST validation accuracy (" + std::to_string(recipe_.eval_size > 0 ? recipe_.eval_size : data_->validation.count) +
         " held-out training images) of the patch Transformer after " + std::to_string(recipe_.steps) +
         " steps (width model_dim/" + std::to_string(recipe_.shape.width_divisor) + ", experts/" +
         std::to_string(recipe_.shape.expert_divisor) + ", block x" + std::to_string(recipe_.shape.repeats) + ")";
}

}  // namespace placerl::brainformer
