// Real sharded training runs on this machine (bin/gloo-train): a small decoder-only
// Transformer LM in LibTorch, trained on synthetic seeded tokens with Adam in fp32,
//   single   — 1 process, the whole global batch;
//   dp       — 2 processes on loopback (c10d ProcessGroupGloo over a FileStore), each with
//              global_batch/2 sequences; gradients flattened into buckets and all-reduced
//              (averaged) after backward, then the optimizer step;
//   pipeline — 2 processes, layers split half/half, GPipe schedule with M microbatches
//              (all forwards, activations sent 0→1; all backwards, activation gradients 1→0).
// The measured step time is set against the performance model's prediction
// (cost_models/tpu/training_eval.h) for the same model string, global batch and plan on a
// mesh of the catalogue chip `host` (host:1 or host:2).
//
// The 2-process modes re-execute the binary (`worker_exe`) once per rank with the hidden
// flags --rank and --rendezvous; the launcher (agents/workers.h, shared with
// place-train --workers) reaps both children, kills them when one fails or stops making
// progress for `timeout_s`, and turns that into an Error.
// No torch include here: the binary's main and the tests use plain types only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placerl {

enum class GlooMode { kSingle, kDataParallel, kPipeline };
const char* GlooModeName(GlooMode mode);  // "single", "dp", "pipeline"
GlooMode ParseGlooMode(const std::string& name);  // ConfigError when unknown

struct GlooTrainOptions {
  GlooMode mode = GlooMode::kSingle;
  std::string model = "transformer(layers=2,d_model=256,d_ff=1024,heads=4,seq=128,vocab=2048)";
  int global_batch = 8;    // sequences per step
  int microbatches = 4;    // pipeline only
  int warmup = 2;          // untimed steps first
  int steps = 8;           // timed steps
  double lr = 1e-3;
  uint64_t seed = 1;
  double bucket_mb = 25;   // dp gradient bucket cap (MiB)
  double timeout_s = 60;   // per collective, and without progress of a worker
  std::string catalog;     // perf-model catalogue file; "" = the embedded default
  // Testing the failure paths: that rank exits with status 3 (or sleeps forever) after
  // its first step. -1 = off.
  int debug_fail_rank = -1;
  int debug_hang_rank = -1;
};

// Upper bounds of the options (checked by ValidateGlooOptions; the binary's parser too).
constexpr int kMaxGlooSteps = 100000;          // --steps, --warmup: per-step results are kept
constexpr int kMaxGlooBatch = 65536;           // --global-batch, --microbatches
constexpr double kMaxGlooMemoryBytes = 8.0 * (1ULL << 30);  // estimated per process

// Bytes one process of the run needs, estimated before it starts (weights, gradients and
// Adam's two moments in fp32; the activations autograd keeps for one step's batch, logits
// included). ValidateGlooOptions refuses a run above kMaxGlooMemoryBytes with the estimate.
double EstimateGlooMemoryBytes(const GlooTrainOptions& options);

// Throws ConfigError when the options cannot run (batch not divisible, unsupported model
// feature, a count above its bound, a memory estimate above kMaxGlooMemoryBytes, ...). Parses
// the model string with perf::ParseModelSpec.
void ValidateGlooOptions(const GlooTrainOptions& options);

// What one process measured. Times per timed step, in seconds.
struct GlooRankResult {
  int rank = 0;
  std::vector<double> step_s;
  std::vector<double> compute_s;    // forward + backward (+ loss)
  std::vector<double> comm_s;       // all-reduce incl. bucket copies / send+recv waits
  std::vector<double> optimizer_s;  // zero_grad + Adam step
  std::vector<double> loss;         // every step incl. warmup (global loss; empty if none)
  std::vector<double> grad_sq;      // every step: Σ g² of this rank's (averaged) gradients
  double param_max_abs_diff = -1;   // dp rank 0: max |p_rank0 - p_rank1| after training
  double param_sq_sum = 0;          // Σ p² over the parameters this rank trains
  int64_t params = 0;               // parameters this rank trains
  int steps_run = 0;                // steps done, warmup included (fewer when stopped)
  bool stopped = false;             // a stop request (Ctrl-C, SIGTERM) ended the run early
};

struct GlooPrediction {
  bool available = false;
  std::string note;  // why not available
  std::string mesh, plan;
  double step_s = 0, compute_s = 0, comm_s = 0, bubble_s = 0, optimizer_s = 0;
  double model_flops = 0;  // per step, whole job (perf-model accounting)
  double model_params = 0; // perf-model parameter count
};

struct GlooRunResult {
  GlooTrainOptions options;
  std::string model_string;  // normalised (perf::ModelToString)
  int processes = 1;
  std::vector<GlooRankResult> ranks;
  // Per timed step: max over ranks. Loss: the global loss of every step.
  std::vector<double> step_s, loss;
  std::vector<double> grad_norm;  // every step: L2 norm of the gradient the optimizer used
  double step_median_s = 0, step_mean_s = 0;
  // Mean per step of the max over ranks of each part.
  double compute_s = 0, comm_s = 0, optimizer_s = 0;
  double param_max_abs_diff = -1;  // dp only
  double param_sq_sum = 0;         // over all trained parameters (pipeline: both stages)
  int64_t params = 0;              // trained parameters (LibTorch count, incl. LN/positions)
  GlooPrediction prediction;
  double relative_error = 0;       // (predicted − measured median) / measured median
  int steps_run = 0;               // steps done, warmup included; timed ones = step_s.size()
  bool stopped_by_signal = false;  // Ctrl-C / SIGTERM ended the run after steps_run steps
};

// The perf model's prediction for `options` with the catalogue options.catalog.
// available = false (with a note) when the catalogue has no chip named "host";
// a catalogue that cannot be read or parsed is an Error.
GlooPrediction PredictGlooRun(const GlooTrainOptions& options);

// Runs the training (single: in this process; dp/pipeline: two children of `worker_exe`)
// and attaches the prediction. Throws Error on any failure, children reaped. The first
// SIGINT / SIGTERM (datasets/util/stop_signal.h) ends the run after the current step (both
// ranks at the same step); the result then reports the steps done.
GlooRunResult RunGlooTraining(const GlooTrainOptions& options, const std::string& worker_exe);

// One rank of a 2-process run (the hidden --rank mode): rendezvous in `rendezvous_dir`,
// train, write the rank's result as JSON to `<rendezvous_dir>/result.<rank>.json`.
void RunGlooWorker(const GlooTrainOptions& options, int rank, const std::string& rendezvous_dir);

// The readable report (loss per step, measured vs predicted table, breakdown).
std::string FormatGlooReport(const GlooRunResult& result);
// One JSON object.
std::string GlooResultJson(const GlooRunResult& result);
// A markdown table row (and the matching header) for docs/gloo_runs.md.
std::string GlooMarkdownHeader();
std::string GlooMarkdownRow(const GlooRunResult& result);

}  // namespace placerl
