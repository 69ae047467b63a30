#include "agents/gloo_train.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"
#include "datasets/util/stop_signal.h"
#include "agents/workers.h"

namespace placerl {

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// ---------------------------------------------------------------- the model

// One pre-LN block: x + attn(LN(x)), then x + W2·gelu(W1·LN(x)). No biases in the
// matmuls (the perf model counts 4·d·H·dh + 2·d·f weights per layer, no biases).
struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t d, int64_t f, int64_t heads, int64_t head_dim)
      : heads_(heads), head_dim_(head_dim) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    qkv = register_module("qkv", torch::nn::Linear(torch::nn::LinearOptions(d, 3 * heads * head_dim).bias(false)));
    proj = register_module("proj", torch::nn::Linear(torch::nn::LinearOptions(heads * head_dim, d).bias(false)));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    fc1 = register_module("fc1", torch::nn::Linear(torch::nn::LinearOptions(d, f).bias(false)));
    fc2 = register_module("fc2", torch::nn::Linear(torch::nn::LinearOptions(f, d).bias(false)));
  }
  // x [B, S, d]; mask [S, S] bool, true above the diagonal (future positions).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const int64_t B = x.size(0), S = x.size(1);
    auto qkv_out = qkv(ln1(x)).view({B, S, 3, heads_, head_dim_}).permute({2, 0, 3, 1, 4});
    auto q = qkv_out[0], k = qkv_out[1], v = qkv_out[2];  // [B, H, S, dh]
    auto att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(head_dim_)));
    att = torch::softmax(att.masked_fill(mask, -std::numeric_limits<float>::infinity()), -1);
    auto y = torch::matmul(att, v).transpose(1, 2).reshape({B, S, heads_ * head_dim_});
    auto h = x + proj(y);
    return h + fc2(torch::gelu(fc1(ln2(h))));
  }
  int64_t heads_, head_dim_;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

// Token embedding + learned positions, L blocks, final LN, output projection (untied
// unless the model string says tied_embeddings=true).
struct LmImpl : torch::nn::Module {
  explicit LmImpl(const perf::TransformerModel& m) : tied(m.tied_embeddings()) {
    const int64_t d = m.d_model();
    embed = register_module("embed", torch::nn::Embedding(m.vocab(), d));
    pos = register_parameter("pos", torch::zeros({m.seq(), d}));
    for (int i = 0; i < m.layers(); ++i) {
      blocks.push_back(Block(d, m.d_ff(), m.heads(), m.head_dim()));
      register_module("block" + std::to_string(i), blocks.back());
    }
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    if (!tied)
      head = register_module("head", torch::nn::Linear(torch::nn::LinearOptions(d, m.vocab()).bias(false)));
    mask = torch::triu(torch::ones({m.seq(), m.seq()}, torch::kBool), 1);
    // GPT-style init, in a fixed order (same seed → same weights in every process).
    torch::NoGradGuard no_grad;
    for (auto& p : named_parameters()) {
      if (p.key().find("ln") != std::string::npos) continue;  // LayerNorm keeps 1 / 0
      p.value().normal_(0.0, 0.02);
    }
  }
  // Embedding + blocks [0, upto).
  torch::Tensor Front(const torch::Tensor& tokens, int upto) {
    auto x = embed(tokens) + pos.slice(0, 0, tokens.size(1));
    for (int i = 0; i < upto; ++i) x = blocks[i](x, mask);
    return x;
  }
  // Blocks [from, L), final LN, logits.
  torch::Tensor Back(torch::Tensor x, int from) {
    for (size_t i = from; i < blocks.size(); ++i) x = blocks[i](x, mask);
    x = ln_f(x);
    return tied ? torch::matmul(x, embed->weight.t()) : head(x);
  }
  // Parameters of stage `stage` of a 2-stage split at `split` (stage -1 = all).
  std::vector<torch::Tensor> StageParams(int stage, int split) {
    std::vector<torch::Tensor> out;
    auto add = [&](torch::nn::Module& mod) {
      for (auto& p : mod.parameters()) out.push_back(p);
    };
    if (stage <= 0) {
      add(*embed);
      out.push_back(pos);
    }
    for (int i = 0; i < int(blocks.size()); ++i)
      if (stage < 0 || (stage == 0) == (i < split)) add(*blocks[i]);
    if (stage != 0) {
      add(*ln_f);
      if (!tied) add(*head);
    }
    return out;
  }
  bool tied;
  torch::nn::Embedding embed{nullptr};
  torch::Tensor pos, mask;
  std::vector<Block> blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Lm);

// Synthetic, learnable token data: each sequence is an arithmetic progression modulo the
// vocabulary with a random start and stride (the next token follows from the last two).
// Depends only on (seed, step): every process generates the same global batch and takes
// its rows. Returns [B, S+1] int64.
torch::Tensor GlobalBatch(uint64_t seed, int step, int batch, int seq, int vocab) {
  std::mt19937_64 rng(seed * 1000003ULL + uint64_t(step) * 7919ULL + 17);
  std::vector<int64_t> data(size_t(batch) * (seq + 1));
  for (int b = 0; b < batch; ++b) {
    const int64_t start = int64_t(rng() % uint64_t(vocab));
    const int64_t stride = 1 + int64_t(rng() % 16);
    for (int s = 0; s <= seq; ++s) data[size_t(b) * (seq + 1) + s] = (start + stride * s) % vocab;
  }
  return torch::from_blob(data.data(), {batch, seq + 1}, torch::kInt64).clone();
}

torch::Tensor Loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              targets.reshape({-1}));
}

int SplitLayer(int layers) { return (layers + 1) / 2; }  // rank 0 takes ceil(L/2)

double SqSum(const std::vector<torch::Tensor>& params) {
  double s = 0;
  for (const auto& p : params) s += p.detach().to(torch::kFloat64).pow(2).sum().item<double>();
  return s;
}

int64_t Count(const std::vector<torch::Tensor>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

// ---------------------------------------------------------------- heartbeat / files

std::string ResultPath(const std::string& dir, int rank) {
  return dir + "/result." + std::to_string(rank) + ".json";
}
void Heartbeat(const std::string& dir, int rank, int /*step*/) { workers::Heartbeat(dir, rank); }

void DebugFault(const GlooTrainOptions& o, int rank, int step) {
  if (step != 0) return;
  if (o.debug_fail_rank == rank) {
    std::fprintf(stderr, "gloo-train: error: rank %d: failing on purpose (--debug-fail-rank)\n", rank);
    std::_Exit(3);
  }
  if (o.debug_hang_rank == rank)
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

nlohmann::json RankToJson(const GlooRankResult& r) {
  return {{"rank", r.rank},           {"step_s", r.step_s},
          {"compute_s", r.compute_s}, {"comm_s", r.comm_s},
          {"optimizer_s", r.optimizer_s}, {"loss", r.loss}, {"grad_sq", r.grad_sq},
          {"param_max_abs_diff", r.param_max_abs_diff}, {"param_sq_sum", r.param_sq_sum},
          {"params", r.params}, {"steps_run", r.steps_run}, {"stopped", r.stopped}};
}

GlooRankResult RankFromJson(const nlohmann::json& j) {
  GlooRankResult r;
  r.rank = j.at("rank").get<int>();
  r.step_s = j.at("step_s").get<std::vector<double>>();
  r.compute_s = j.at("compute_s").get<std::vector<double>>();
  r.comm_s = j.at("comm_s").get<std::vector<double>>();
  r.optimizer_s = j.at("optimizer_s").get<std::vector<double>>();
  r.loss = j.at("loss").get<std::vector<double>>();
  r.grad_sq = j.at("grad_sq").get<std::vector<double>>();
  r.param_max_abs_diff = j.at("param_max_abs_diff").get<double>();
  r.param_sq_sum = j.at("param_sq_sum").get<double>();
  r.params = j.at("params").get<int64_t>();
  r.steps_run = j.at("steps_run").get<int>();
  r.stopped = j.at("stopped").get<bool>();
  return r;
}

// ---------------------------------------------------------------- training loops

struct Trainer {
  const GlooTrainOptions& o;
  perf::TransformerModel m;
  int rank, world;
  std::string dir;  // rendezvous dir ("" = single)
  ::c10d::ProcessGroupGloo* pg = nullptr;  // the 2-process modes (agents/workers.h)

  Trainer(const GlooTrainOptions& opts, int r, int w, const std::string& d)
      : o(opts), m(perf::ParseModelSpec(opts.model)), rank(r), world(w), dir(d) {}

  void Wait(const c10::intrusive_ptr<::c10d::Work>& work, const char* what) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      throw Error("rank " + std::to_string(rank) + ": " + what + " failed: " +
                  std::string(e.what()).substr(0, 300));
    }
  }

  GlooRankResult Run() {
    torch::set_num_threads(1);
    torch::manual_seed(o.seed);
    Lm lm(m);
    const int split = SplitLayer(m.layers());
    const bool pipe = o.mode == GlooMode::kPipeline;
    std::vector<torch::Tensor> params = lm->StageParams(pipe ? rank : -1, split);
    torch::optim::Adam opt(params, torch::optim::AdamOptions(o.lr));

    GlooRankResult res;
    res.rank = rank;
    res.params = Count(params);
    const int total = o.warmup + o.steps;
    const int local_batch = o.mode == GlooMode::kDataParallel ? o.global_batch / 2 : o.global_batch;
    const int M = pipe ? o.microbatches : 1;
    const int64_t bucket_cap = std::max<int64_t>(1, int64_t(o.bucket_mb * 1024 * 1024 / 4));

    for (int step = 0; step < total; ++step) {
      // A stop request ends the run before this step; the ranks agree (max of their flags).
      double stop = run::StopRequested() ? 1 : 0;
      if (pg) {
        std::vector<torch::Tensor> v = {torch::full({1}, stop, torch::kFloat64)};
        ::c10d::AllreduceOptions max;
        max.reduceOp = ::c10d::ReduceOp::MAX;
        Wait(pg->allreduce(v, max), "stop all-reduce");
        stop = v[0].item<double>();
      }
      if (stop > 0) {
        res.stopped = true;
        break;
      }
      if (step == o.warmup && pg) Wait(pg->barrier(), "barrier");
      Heartbeat(dir, rank, step);
      torch::Tensor batch = GlobalBatch(o.seed, step, o.global_batch, int(m.seq()), int(m.vocab()));
      if (o.mode == GlooMode::kDataParallel) batch = batch.narrow(0, rank * local_batch, local_batch);
      const torch::Tensor inputs = batch.narrow(1, 0, m.seq());
      const torch::Tensor targets = batch.narrow(1, 1, m.seq());

      const auto t0 = Clock::now();
      double comm = 0, compute = 0, loss_value = std::nan("");
      opt.zero_grad();
      const auto t_zero = Clock::now();
      double optimizer = Seconds(t0, t_zero);

      if (!pipe) {
        auto loss = Loss(lm->Back(lm->Front(inputs, 0), 0), targets);
        loss.backward();
        loss_value = loss.item<double>();
        const auto t1 = Clock::now();
        compute = Seconds(t_zero, t1);
        if (pg) {  // bucketed all-reduce, averaged
          size_t i = 0;
          while (i < params.size()) {
            std::vector<torch::Tensor> flat;
            std::vector<torch::Tensor> members;
            int64_t n = 0;
            while (i < params.size() && (n == 0 || n + params[i].numel() <= bucket_cap)) {
              n += params[i].numel();
              members.push_back(params[i].grad());
              flat.push_back(params[i].grad().reshape({-1}));
              ++i;
            }
            std::vector<torch::Tensor> bucket = {torch::cat(flat)};
            Wait(pg->allreduce(bucket), "gradient all-reduce");
            bucket[0].div_(world);
            int64_t off = 0;
            for (auto& g : members) {
              g.copy_(bucket[0].narrow(0, off, g.numel()).view_as(g));
              off += g.numel();
            }
          }
          comm = Seconds(t1, Clock::now());
        }
      } else {
        // GPipe: all forwards, then all backwards (reverse order).
        const int mb = o.global_batch / M;
        const int64_t S = m.seq(), d = m.d_model();
        std::vector<torch::Tensor> outs(M), ins(M), losses(M), sent(M);
        std::vector<c10::intrusive_ptr<::c10d::Work>> works;
        double loss_sum = 0;
        for (int k = 0; k < M; ++k) {
          if (rank == 0) {
            const auto a = Clock::now();
            outs[k] = lm->Front(inputs.narrow(0, k * mb, mb), split);
            sent[k] = outs[k].detach().contiguous();
            const auto b = Clock::now();
            compute += Seconds(a, b);
            std::vector<torch::Tensor> v = {sent[k]};
            works.push_back(pg->send(v, 1, k));
            comm += Seconds(b, Clock::now());
          } else {
            const auto a = Clock::now();
            std::vector<torch::Tensor> v = {torch::empty({mb, S, d})};
            Wait(pg->recv(v, 0, k), "activation recv");
            const auto b = Clock::now();
            comm += Seconds(a, b);
            ins[k] = v[0].requires_grad_(true);
            losses[k] = Loss(lm->Back(ins[k], split), targets.narrow(0, k * mb, mb)) / M;
            loss_sum += losses[k].item<double>();
            compute += Seconds(b, Clock::now());
          }
        }
        {
          const auto a = Clock::now();
          for (auto& w : works) Wait(w, "activation send");
          works.clear();
          comm += Seconds(a, Clock::now());
        }
        for (int k = M - 1; k >= 0; --k) {
          if (rank == 1) {
            const auto a = Clock::now();
            losses[k].backward();
            sent[k] = ins[k].grad().contiguous();
            const auto b = Clock::now();
            compute += Seconds(a, b);
            std::vector<torch::Tensor> v = {sent[k]};
            works.push_back(pg->send(v, 0, M + k));
            comm += Seconds(b, Clock::now());
          } else {
            const auto a = Clock::now();
            std::vector<torch::Tensor> v = {torch::empty({mb, S, d})};
            Wait(pg->recv(v, 1, M + k), "gradient recv");
            const auto b = Clock::now();
            comm += Seconds(a, b);
            outs[k].backward(v[0]);
            compute += Seconds(b, Clock::now());
          }
        }
        const auto a = Clock::now();
        for (auto& w : works) Wait(w, "gradient send");
        comm += Seconds(a, Clock::now());
        if (rank == 1) loss_value = loss_sum;
      }
      const auto t_opt = Clock::now();
      opt.step();
      const auto t_end = Clock::now();
      optimizer += Seconds(t_opt, t_end);

      // Untimed: the global loss of this step.
      if (o.mode == GlooMode::kDataParallel) {
        std::vector<torch::Tensor> v = {torch::full({1}, loss_value, torch::kFloat64)};
        Wait(pg->allreduce(v), "loss all-reduce");
        loss_value = v[0].item<double>() / world;
      }
      if (!std::isnan(loss_value)) res.loss.push_back(loss_value);
      {  // Untimed: Adam leaves the gradients in place.
        torch::NoGradGuard no_grad;
        double g2 = 0;
        for (const auto& p : params) g2 += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
        res.grad_sq.push_back(g2);
      }
      if (step >= o.warmup) {
        res.step_s.push_back(Seconds(t0, t_end));
        res.compute_s.push_back(compute);
        res.comm_s.push_back(comm);
        res.optimizer_s.push_back(optimizer);
      }
      DebugFault(o, rank, step);
      res.steps_run = step + 1;
    }

    res.param_sq_sum = SqSum(params);
    if (o.mode == GlooMode::kDataParallel) {
      std::vector<torch::Tensor> flat;
      for (auto& p : params) flat.push_back(p.detach().reshape({-1}));
      std::vector<torch::Tensor> v = {torch::cat(flat)};
      if (rank == 1) {
        Wait(pg->send(v, 0, 999), "parameter send");
      } else {
        std::vector<torch::Tensor> other = {torch::empty_like(v[0])};
        Wait(pg->recv(other, 1, 999), "parameter recv");
        res.param_max_abs_diff = (v[0] - other[0]).abs().max().item<double>();
      }
    }
    if (pg) Wait(pg->barrier(), "final barrier");
    return res;
  }
};

// ---------------------------------------------------------------- launcher

std::string FormatDouble(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::vector<std::string> WorkerArgs(const GlooTrainOptions& o, const std::string& exe, int rank,
                                    const std::string& dir) {
  return {exe, "--mode", GlooModeName(o.mode), "--model", o.model,
          "--global-batch", std::to_string(o.global_batch),
          "--microbatches", std::to_string(o.microbatches),
          "--warmup", std::to_string(o.warmup), "--steps", std::to_string(o.steps),
          "--lr", FormatDouble(o.lr), "--seed", std::to_string(o.seed),
          "--bucket-mb", FormatDouble(o.bucket_mb), "--timeout", FormatDouble(o.timeout_s),
          "--debug-fail-rank", std::to_string(o.debug_fail_rank),
          "--debug-hang-rank", std::to_string(o.debug_hang_rank),
          "--rank", std::to_string(rank), "--rendezvous", dir};
}

std::vector<GlooRankResult> LaunchTwo(const GlooTrainOptions& o, const std::string& exe) {
  const workers::TempDirectory dir("gloo-train");
  workers::LaunchOptions lo;
  lo.exe = exe;
  lo.world_size = 2;
  lo.args = [&](int rank) {
    std::vector<std::string> a = WorkerArgs(o, exe, rank, dir.path());
    a.erase(a.begin());  // the executable
    return a;
  };
  lo.heartbeat_dir = dir.path();
  lo.timeout_s = o.timeout_s;
  try {
    workers::Launch(lo);
  } catch (const Error& e) {
    throw Error(std::string(GlooModeName(o.mode)) + " run failed: " + e.what());
  }
  std::vector<GlooRankResult> results;
  for (int r = 0; r < 2; ++r) {
    const std::string path = ResultPath(dir.path(), r);
    try {
      results.push_back(RankFromJson(nlohmann::json::parse(ReadFile(path))));
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": bad worker result: " + e.what());
    }
  }
  return results;
}

double Median(const std::vector<double>& v) { return stats::Median(v, 0); }
double Mean(const std::vector<double>& v) { return stats::Mean(v, 0); }

}  // namespace

// ---------------------------------------------------------------- public API

const char* GlooModeName(GlooMode mode) {
  switch (mode) {
    case GlooMode::kSingle: return "single";
    case GlooMode::kDataParallel: return "dp";
    case GlooMode::kPipeline: return "pipeline";
  }
  return "?";
}

GlooMode ParseGlooMode(const std::string& name) {
  if (name == "single") return GlooMode::kSingle;
  if (name == "dp") return GlooMode::kDataParallel;
  if (name == "pipeline") return GlooMode::kPipeline;
  throw ConfigError("--mode \"" + name + "\": expected single, dp or pipeline");
}

double EstimateGlooMemoryBytes(const GlooTrainOptions& o) {
  const perf::TransformerModel m = perf::ParseModelSpec(o.model);
  const double L = double(m.layers()), d = double(m.d_model()), f = double(m.d_ff()), h = double(m.heads());
  const double S = double(m.seq()), V = double(m.vocab()), dh = double(m.head_dim());
  // Weights: embedding, positions, per layer qkv + proj + two FFN matrices + LayerNorms, head.
  const double params = V * d + S * d + L * (4 * h * dh * d + 2 * d * f + 4 * d) + 2 * d + (m.tied_embeddings() ? 0 : d * V);
  // Kept for backward per sequence: per layer the block's inputs, LN outputs, q/k/v, attention
  // scores and probabilities (h·S² each), FFN hidden (twice), plus the logits (twice: softmax).
  const double per_sequence = S * L * (8 * d + 3 * h * dh + 2 * f) + L * 2 * h * S * S + 2 * S * V;
  return 4.0 * (4 * params + double(o.global_batch) * per_sequence);
}

void ValidateGlooOptions(const GlooTrainOptions& o) {
  const perf::TransformerModel m = perf::ParseModelSpec(o.model);
  if (m.num_experts() > 0) throw ConfigError("model: gloo-train runs dense Transformers only (num_experts > 0)");
  if (m.gated_ffn()) throw ConfigError("model: gated_ffn is not implemented in gloo-train");
  if (m.kv_heads() != m.heads()) throw ConfigError("model: kv_heads != heads is not implemented in gloo-train");
  if (o.global_batch < 1) throw ConfigError("--global-batch must be >= 1");
  if (o.global_batch > kMaxGlooBatch) throw ConfigError("--global-batch must be <= " + std::to_string(kMaxGlooBatch));
  if (o.steps < 1) throw ConfigError("--steps must be >= 1");
  if (o.steps > kMaxGlooSteps) throw ConfigError("--steps must be <= " + std::to_string(kMaxGlooSteps));
  if (o.warmup < 0) throw ConfigError("--warmup must be >= 0");
  if (o.warmup > kMaxGlooSteps) throw ConfigError("--warmup must be <= " + std::to_string(kMaxGlooSteps));
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw ConfigError("--lr must be finite and > 0");
  if (!(o.timeout_s > 0) || !(o.timeout_s <= 7 * 24 * 3600.0)) throw ConfigError("--timeout must be in (0, a week]");
  if (!(o.bucket_mb > 0) || !(o.bucket_mb <= 1e6)) throw ConfigError("--bucket-mb must be in (0, 1e6]");
  const double bytes = EstimateGlooMemoryBytes(o);
  if (bytes > kMaxGlooMemoryBytes) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "the run needs about %.3g GiB of memory per process (global batch %d of this model); "
                  "at most %.0f GiB: use a smaller --global-batch or model", bytes / (1ULL << 30), o.global_batch,
                  kMaxGlooMemoryBytes / (1ULL << 30));
    throw ConfigError(buf);
  }
  if (o.mode == GlooMode::kDataParallel && o.global_batch % 2 != 0)
    throw ConfigError("--global-batch " + std::to_string(o.global_batch) + " must be even for dp (2 processes)");
  if (o.mode == GlooMode::kPipeline) {
    if (m.layers() < 2) throw ConfigError("model: pipeline over 2 processes needs layers >= 2");
    if (m.tied_embeddings()) throw ConfigError("model: tied_embeddings cannot be split over a 2-stage pipeline");
    if (o.microbatches < 1) throw ConfigError("--microbatches must be >= 1");
    if (o.global_batch % o.microbatches != 0)
      throw ConfigError("--global-batch " + std::to_string(o.global_batch) +
                        " is not divisible by --microbatches " + std::to_string(o.microbatches));
  }
}

GlooPrediction PredictGlooRun(const GlooTrainOptions& o) {
  GlooPrediction p;
  const perf::Catalog catalog = perf::LoadCatalog(o.catalog);
  bool has_host = false;
  for (const auto& c : catalog.chip()) has_host |= c.name() == "host";
  const bool two = o.mode != GlooMode::kSingle;
  p.mesh = two ? "host:2" : "host:1";
  std::string plan = "global_batch=" + std::to_string(o.global_batch) +
                     ",param_dtype=fp32,compute_dtype=fp32,grad_dtype=fp32,optimizer=adam";
  // gloo-train all-reduces the gradient buckets after the whole backward pass.
  if (o.mode == GlooMode::kDataParallel) plan = "data=2,grad_reduce_after_backward=true," + plan;
  if (o.mode == GlooMode::kPipeline)
    plan = "pipeline=2,microbatches=" + std::to_string(o.microbatches) + "," + plan;
  if (o.mode == GlooMode::kSingle) plan = "data=1," + plan;
  p.plan = plan;
  if (!has_host) {
    p.note = "the catalogue " + (o.catalog.empty() ? std::string("(embedded default)") : o.catalog) +
             " has no chip \"host\": run `perf-model calibrate-host` (or pass --catalog FILE with a "
             "host entry) to get a prediction";
    return p;
  }
  const perf::TransformerModel model = perf::ParseModelSpec(o.model);
  perf::TrainingEvaluator ev(model, perf::ParseMeshSpec(p.mesh), catalog);
  const perf::StepBreakdown b = ev.Evaluate(perf::PlanFromProto(perf::ParsePlanSpec(plan)));
  if (!b.valid) {
    p.note = std::string("the perf model rejects the plan: ") + b.invalid_reason;
    return p;
  }
  p.available = true;
  p.step_s = b.step_s;
  p.compute_s = b.compute_s;
  p.comm_s = b.exposed_dp_s + b.pipeline_comm_s;
  p.bubble_s = b.bubble_s;
  p.optimizer_s = b.optimizer_s;
  p.model_flops = b.model_flops;
  p.model_params = ev.total_params();
  return p;
}

void RunGlooWorker(const GlooTrainOptions& o, int rank, const std::string& dir) {
  run::InstallStopOnSignal();  // first: Ctrl-C (the terminal's, or the launcher's SIGTERM) stops after a step
  ValidateGlooOptions(o);
  if (o.mode == GlooMode::kSingle) throw ConfigError("--rank is for the 2-process modes only");
  if (rank != 0 && rank != 1) throw ConfigError("--rank must be 0 or 1");
  Heartbeat(dir, rank, -1);
  Trainer t(o, rank, 2, dir);
  workers::Rendezvous rv;
  rv.rank = rank;
  rv.world_size = 2;
  rv.store_dir = dir;
  rv.timeout_s = o.timeout_s;
  workers::ProcessGroup group(rv);
  t.pg = &group.gloo();
  GlooRankResult r;
  try {
    r = t.Run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // c10::Error from LibTorch
    throw Error("rank " + std::to_string(rank) + ": " + std::string(e.what()).substr(0, 300));
  }
  WriteFileAtomic(ResultPath(dir, rank), RankToJson(r).dump());
}

GlooRunResult RunGlooTraining(const GlooTrainOptions& o, const std::string& worker_exe) {
  ValidateGlooOptions(o);
  GlooRunResult res;
  res.options = o;
  res.model_string = perf::ModelToString(perf::ParseModelSpec(o.model));
  // Read the catalogue first: a bad file fails before the run, not after.
  res.prediction = PredictGlooRun(o);
  run::InstallStopOnSignal();  // single: this process stops; dp/pipeline: the launcher waits for the ranks
  if (o.mode == GlooMode::kSingle) {
    Trainer t(o, 0, 1, "");
    try {
      res.ranks.push_back(t.Run());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(std::string("training failed: ") + std::string(e.what()).substr(0, 300));
    }
  } else {
    res.ranks = LaunchTwo(o, worker_exe);
  }
  res.processes = int(res.ranks.size());
  res.steps_run = res.ranks[0].steps_run;
  for (const auto& r : res.ranks) res.stopped_by_signal |= r.stopped;
  const size_t n = res.ranks[0].step_s.size();
  res.step_s.assign(n, 0);
  std::vector<double> comp(n, 0), comm(n, 0), opt(n, 0);
  for (const auto& r : res.ranks) {
    if (r.step_s.size() != n) throw Error("ranks timed different numbers of steps");
    for (size_t i = 0; i < n; ++i) {
      res.step_s[i] = std::max(res.step_s[i], r.step_s[i]);
      comp[i] = std::max(comp[i], r.compute_s[i]);
      comm[i] = std::max(comm[i], r.comm_s[i]);
      opt[i] = std::max(opt[i], r.optimizer_s[i]);
    }
    if (!r.loss.empty() && res.loss.empty()) res.loss = r.loss;
    if (r.param_max_abs_diff >= 0) res.param_max_abs_diff = r.param_max_abs_diff;
  }
  // Trained parameters: dp ranks hold the same copy, pipeline stages hold disjoint halves.
  std::vector<double> g2 = res.ranks[0].grad_sq;
  if (o.mode == GlooMode::kPipeline) {
    for (const auto& r : res.ranks) {
      res.param_sq_sum += r.param_sq_sum;
      res.params += r.params;
    }
    for (size_t i = 0; i < g2.size() && i < res.ranks[1].grad_sq.size(); ++i) g2[i] += res.ranks[1].grad_sq[i];
  } else {
    res.param_sq_sum = res.ranks[0].param_sq_sum;
    res.params = res.ranks[0].params;
  }
  for (double v : g2) res.grad_norm.push_back(std::sqrt(v));
  res.step_median_s = Median(res.step_s);
  res.step_mean_s = Mean(res.step_s);
  res.compute_s = Mean(comp);
  res.comm_s = Mean(comm);
  res.optimizer_s = Mean(opt);
  if (res.prediction.available && res.step_median_s > 0)
    res.relative_error = (res.prediction.step_s - res.step_median_s) / res.step_median_s;
  return res;
}

std::string FormatGlooReport(const GlooRunResult& r) {
  const GlooTrainOptions& o = r.options;
  std::ostringstream out;
  char buf[512];
  out << "model   " << o.model << "\n";
  std::snprintf(buf, sizeof buf,
                "run     mode %s, %d process%s x 1 thread, global batch %d%s, %d warmup + %d timed steps, "
                "Adam lr %g, fp32, seed %llu\n",
                GlooModeName(o.mode), r.processes, r.processes > 1 ? "es" : "", o.global_batch,
                o.mode == GlooMode::kPipeline ? (", " + std::to_string(o.microbatches) + " microbatches").c_str() : "",
                o.warmup, o.steps, o.lr, (unsigned long long)o.seed);
  out << buf;
  if (r.stopped_by_signal) {
    std::snprintf(buf, sizeof buf, "stopped by signal after %d of %d steps (%zu timed)\n", r.steps_run,
                  o.warmup + o.steps, r.step_s.size());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "params  %lld trained (LibTorch, incl. LayerNorm and positions)", (long long)r.params);
  out << buf;
  if (r.prediction.available) {
    std::snprintf(buf, sizeof buf, "; %.0f in the perf model", r.prediction.model_params);
    out << buf;
  }
  out << "\n\nstep  loss       grad norm\n";
  for (size_t i = 0; i < r.loss.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%4zu  %.6f   %.6f%s\n", i + 1, r.loss[i],
                  i < r.grad_norm.size() ? r.grad_norm[i] : std::nan(""),
                  int(i) < o.warmup ? "  (warmup)" : "");
    out << buf;
  }
  if (o.mode == GlooMode::kDataParallel) {
    std::snprintf(buf, sizeof buf, "\ndp check: max |param(rank 0) - param(rank 1)| after training = %.3g\n",
                  r.param_max_abs_diff);
    out << buf;
  }
  const GlooPrediction& p = r.prediction;
  auto pred = [&](double v) {
    if (!p.available) return std::string("n/a");
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", v);
    return std::string(b);
  };
  out << "\n| mode | processes | measured median (s) | measured mean (s) | predicted (s) | error |\n"
         "|---|---|---|---|---|---|\n";
  std::string err = "n/a";
  if (p.available) {
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * r.relative_error);
    err = buf;
  }
  std::snprintf(buf, sizeof buf, "| %s | %d | %.4f | %.4f | %s | %s |\n", GlooModeName(o.mode), r.processes,
                r.step_median_s, r.step_mean_s, pred(p.step_s).c_str(), err.c_str());
  out << buf;
  out << "\nbreakdown (s per step; measured = mean over steps of the max over ranks)\n";
  std::snprintf(buf, sizeof buf, "  %-34s %10s %10s\n", "", "measured", "predicted");
  out << buf;
  const char* comm_name = o.mode == GlooMode::kPipeline ? "send/recv wait (incl. bubble)"
                                                        : "gradient all-reduce (exposed)";
  std::snprintf(buf, sizeof buf, "  %-34s %10.4f %10s\n", "forward+backward compute", r.compute_s,
                pred(p.compute_s).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-34s %10.4f %10s\n", comm_name, r.comm_s,
                pred(p.comm_s + p.bubble_s).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-34s %10.4f %10s\n", "optimizer (zero_grad + Adam)", r.optimizer_s,
                pred(p.optimizer_s).c_str());
  out << buf;
  if (p.available) {
    std::snprintf(buf, sizeof buf,
                  "\nprediction: mesh %s, plan %s\n  model FLOPs/step %.4g → measured %.2f GFLOP/s per process\n",
                  p.mesh.c_str(), p.plan.c_str(), p.model_flops,
                  p.model_flops / r.step_median_s / r.processes / 1e9);
    out << buf;
  } else {
    out << "\nprediction: unavailable — " << p.note << "\n";
  }
  return out.str();
}

std::string GlooResultJson(const GlooRunResult& r) {
  const GlooTrainOptions& o = r.options;
  const GlooPrediction& p = r.prediction;
  nlohmann::json j;
  j["mode"] = GlooModeName(o.mode);
  j["model"] = o.model;
  j["model_normalized"] = r.model_string;
  j["processes"] = r.processes;
  j["threads_per_process"] = 1;
  j["global_batch"] = o.global_batch;
  j["microbatches"] = o.mode == GlooMode::kPipeline ? o.microbatches : 1;
  j["warmup"] = std::min(o.warmup, r.steps_run);  // done; a stop request ends a run early
  j["warmup_requested"] = o.warmup;
  j["steps"] = r.step_s.size();
  j["steps_requested"] = o.steps;
  j["stopped_by_signal"] = r.stopped_by_signal;
  j["lr"] = o.lr;
  j["seed"] = o.seed;
  j["loss"] = r.loss;
  j["grad_norm"] = r.grad_norm;
  j["step_s"] = r.step_s;
  j["step_median_s"] = r.step_median_s;
  j["step_mean_s"] = r.step_mean_s;
  j["breakdown_s"] = {{"compute", r.compute_s}, {"comm", r.comm_s}, {"optimizer", r.optimizer_s}};
  j["params"] = r.params;
  j["param_sq_sum"] = r.param_sq_sum;
  if (o.mode == GlooMode::kDataParallel) j["param_max_abs_diff"] = r.param_max_abs_diff;
  nlohmann::json pj;
  pj["available"] = p.available;
  pj["mesh"] = p.mesh;
  pj["plan"] = p.plan;
  if (p.available) {
    pj["step_s"] = p.step_s;
    pj["breakdown_s"] = {{"compute", p.compute_s}, {"comm", p.comm_s}, {"bubble", p.bubble_s},
                         {"optimizer", p.optimizer_s}};
    pj["model_flops"] = p.model_flops;
    pj["model_params"] = p.model_params;
    j["relative_error"] = r.relative_error;
  } else {
    pj["note"] = p.note;
  }
  j["prediction"] = pj;
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rr : r.ranks) ranks.push_back(RankToJson(rr));
  j["ranks"] = ranks;
  return j.dump(2);
}

std::string GlooMarkdownHeader() {
  return "| model | mode | processes | global batch | microbatches | measured median (s) | predicted (s) | "
         "error | measured compute / comm / optimizer (s) | predicted compute / comm+bubble / optimizer (s) | "
         "final loss |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
}

std::string GlooMarkdownRow(const GlooRunResult& r) {
  const GlooTrainOptions& o = r.options;
  const GlooPrediction& p = r.prediction;
  char buf[1024];
  std::string pred = "n/a", err = "n/a", pbd = "n/a";
  if (p.available) {
    std::snprintf(buf, sizeof buf, "%.4f", p.step_s);
    pred = buf;
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * r.relative_error);
    err = buf;
    std::snprintf(buf, sizeof buf, "%.4f / %.4f / %.4f", p.compute_s, p.comm_s + p.bubble_s, p.optimizer_s);
    pbd = buf;
  }
  std::snprintf(buf, sizeof buf, "| `%s` | %s | %d | %d | %d | %.4f | %s | %s | %.4f / %.4f / %.4f | %s | %.4f |\n",
                o.model.c_str(), GlooModeName(o.mode), r.processes, o.global_batch,
                o.mode == GlooMode::kPipeline ? o.microbatches : 1, r.step_median_s, pred.c_str(),
                err.c_str(), r.compute_s, r.comm_s, r.optimizer_s, pbd.c_str(),
                r.loss.empty() ? std::nan("") : r.loss.back());
  return buf;
}

}  // namespace placerl
