// Evaluator of one sharded training step of a (dense or MoE) Transformer, uniform or made of
// a repeated heterogeneous block of sub-layers (Brainformer): model + mesh + parallel plan →
// step time with its breakdown, throughput, MFU/HFU and HBM per device.
// Analytical (formulas in docs/perf_model.md): per-layer rooflines of the matmuls, attention
// and elementwise work; tensor/FSDP/data/expert/pipeline collectives from collectives.h on
// the axis groups the plan occupies on the physical mesh; the GPipe/1F1B bubble.
// Evaluate() does no allocation, so search loops can call it millions of times.
#pragma once

#include <string>
#include <vector>

#include "cost_models/tpu/collectives.h"
#include "cost_models/tpu/mesh.h"
#include "cost_models/tpu/op_cost.h"
#include "datasets/proto/hardware.pb.h"
#include "datasets/proto/perf_model.pb.h"

namespace placerl::perf {

// A plan as plain values (the hot-path twin of the Plan proto).
struct PlanC {
  int data = 1, fsdp = 1, tensor = 1, pipeline = 1;
  int microbatches = 0;  // 0 → 1 without pipeline, else 4 × pipeline (capped by the batch)
  int expert = 1;
  Remat remat = REMAT_NONE;
  DType param_dtype = FP32, compute_dtype = BF16, grad_dtype = FP32;
  Optimizer optimizer = ADAM;
  bool shard_optimizer = false;
  double global_batch = 0;  // sequences per step
  bool grad_reduce_after_backward = false;  // no overlap of the data all-reduce
  bool flat_dcn_collectives = false;        // one flat ring instead of ICI + DCN phases
  int tensor_x = 1;  // 2-D tensor parallelism: d_model sharded tensor_x-way (1 = 1-D)
  int interleave = 1;  // model chunks per pipeline device (interleaved 1F1B)
  bool no_sequence_parallel = false;  // Megatron TP without SP: 10·d per token replicated
  bool update_consumes_gradients = false;  // no whole-model gradient buffer (one microbatch)
  bool serial_tensor_collectives = false;  // Megatron: tensor collectives not overlapped (tp_overlap 0)
  bool fsdp_gather_on_demand = false;  // ZeRO-3: FSDP all-gathers not prefetched (exposed)
  bool serial_collectives = false;  // XLA:GPU without latency hiding: no collective overlaps compute
  PipelineSchedule schedule = SCHEDULE_1F1B;  // GPipe: M microbatches in flight on stage 1
  // eXmY storage widths in bits (0 = the dtype's): Plan.weight_bits etc.
  int weight_bits = 0, grad_bits = 0, optimizer_bits = 0, activation_bits = 0;
};
PlanC PlanFromProto(const Plan& plan);
Plan PlanToProto(const PlanC& plan);

struct StepBreakdown {
  bool valid = false;
  const char* invalid_reason = "";  // static string when !valid
  int microbatches = 0;
  // seconds per step
  double step_s = 0;
  double compute_s = 0;        // forward + backward + recompute on the critical stage
  double exposed_tp_s = 0;     // tensor-parallel all-reduces not hidden under compute
  double exposed_fsdp_s = 0;   // weight all-gathers / gradient reduce-scatters not hidden
  double exposed_dp_s = 0;     // gradient all-reduce (data, incl. DCN) not hidden
  double exposed_ep_s = 0;     // expert all-to-alls
  double pipeline_comm_s = 0;  // stage-to-stage sends
  double bubble_s = 0;         // (K-1) idle microbatch slots
  double optimizer_s = 0;
  // throughput
  double tokens_per_s = 0;
  double model_flops = 0, hw_flops = 0;  // per step, whole job
  double mfu = 0, hfu = 0;
  double model_tflops_per_chip = 0, hw_tflops_per_chip = 0;
  // HBM per device, bytes
  double hbm_params = 0, hbm_grads = 0, hbm_optimizer = 0, hbm_activations = 0;
  double hbm_total = 0, hbm_capacity = 0;
  bool oom = false;
};

// Bytes of optimizer state per parameter (fp32 master copy counted when params are stored
// below fp32; Adafactor factored: 4·(1/d + 1/f) for a d×f matrix) and bytes the update
// streams through HBM per parameter (read + write). `state_bytes`: bytes of one state value
// (4 = fp32; an eXmY optimizer_bits / 8).
double OptimizerBytesPerParam(Optimizer opt, double param_bytes, double d, double f, double state_bytes = 4);
double OptimizerTrafficPerParam(Optimizer opt, double param_bytes, double grad_bytes, double state_bytes = 4);

// Validates the model (ConfigError) and fills defaults (head_dim, kv_heads, top_k, ...),
// for a block model also every sub-layer's (heads, kv_heads, head_dim, d_ff, num_experts,
// top_k, capacity_factor), so that a normalized sub-layer says everything about itself.
TransformerModel NormalizedModel(const TransformerModel& model);

// One sub-layer of a block model as plain values (the hot-path twin of SubLayer, normalized).
struct SubLayerC {
  SubLayerType type = ATTENTION;
  double heads = 0, kv_heads = 0, head_dim = 0;  // attention
  double d_ff = 0;                               // FFNs (an expert's hidden width for MoE)
  double experts = 0, top_k = 0, capacity_factor = 0;  // MoE
  bool expert_choice = false;
  // MoE: expert-token pairs per token. Top-k: k experts per token; expert choice: each expert
  // takes capacity_factor·T/E of the T tokens, so capacity_factor per token on average.
  double ActiveExperts() const { return expert_choice ? capacity_factor : top_k; }
  // MoE: capacity slots per token the expert matmuls run over (padding included): top-k
  // k·capacity_factor, expert choice capacity_factor (every slot is filled).
  double RoutedPerToken() const { return expert_choice ? capacity_factor : top_k * capacity_factor; }
};
std::vector<SubLayerC> BlockSubLayers(const TransformerModel& normalized);

// ---- Inference (Pope et al. 2022) on a tensor-parallel layout of the same evaluator ----
struct InferenceQuery {
  double batch = 1;               // sequences
  double prompt = 0;              // tokens per sequence processed by the prefill
  double generate = 0;            // tokens generated one step at a time after it
  DType weight_dtype = BF16;      // stored (and streamed) weights, e.g. INT8
  bool batch_sharded_kv = false;  // attention sharded over the batch (MQA), not the heads
  // Pope et al.'s weight-gathered layouts: 0 = weight-stationary (the plan's tensor layout);
  // 1, 2, 3 = X, XY, XYZ: before each layer the weights are all-gathered over the chips of the
  // first 1, 2, 3 mesh axes (N of them); the tokens are split N-way over that group; the rest
  // of the mesh (n/N) keeps a 1-D weight-stationary layout (an all-reduce of [t/N, d] per
  // sub-layer). Dense uniform models, plan tensor = the mesh's devices, tensor_x = 1.
  int weight_gathered = 0;
};
struct InferenceResult {
  bool valid = false;
  const char* invalid_reason = "";
  double prefill_s = 0, decode_s = 0;   // whole prefill; all `generate` decode steps
  double decode_step_s = 0;             // mean per generated token
  double prefill_comm_s = 0, decode_comm_s = 0;  // exposed tensor-parallel traffic in them
  int gather_chips = 1;  // weight-gathered: N, the chips each layer's weights are gathered over
  double prefill_mfu = 0, decode_mfu = 0;
  double hbm_weights = 0, hbm_kv = 0, hbm_total = 0, hbm_capacity = 0;
  bool oom = false;
};
std::string FormatInference(const InferenceResult& r);

class TrainingEvaluator {
 public:
  // Throws ConfigError on an unknown chip, a bad mesh or a bad model.
  TrainingEvaluator(const TransformerModel& model, const Mesh& mesh, const Catalog& catalog);

  StepBreakdown Evaluate(const PlanC& plan) const;
  // Prefill + decode latency on the plan's tensor layout (tensor, tensor_x; data, fsdp,
  // pipeline and expert must be 1; dense models only). Per layer and step: each matmul's
  // roofline with weights streamed at weight_dtype, attention over the KV cache (read once
  // per step; sharded over the batch or over the KV heads), the layout's collectives exposed
  // beyond tp_overlap × compute (all of them with the plan's serial_tensor_collectives; + 2
  // all-to-alls per layer when batch_sharded_kv), each collective with the catalogue's
  // collective_fixed_s on top of its hop + bandwidth time, then the logits of the last
  // position. Decode steps use the mean context prompt + generate/2.
  InferenceResult EvaluateInference(const PlanC& plan, const InferenceQuery& query) const;

  int num_devices() const { return num_devices_; }
  int num_chips() const { return num_chips_; }
  const TransformerModel& model() const { return model_; }
  const Chip& chip() const { return chip_; }
  double total_params() const { return total_params_; }
  // Block models: the normalized sub-layers of one block (empty for uniform models).
  const std::vector<SubLayerC>& block() const { return block_; }
  // What tensor parallelism must divide: the heads of every attention (sub-)layer (their gcd;
  // 0 when a block has no attention). Whether any layer is MoE.
  int tensor_heads() const { return tensor_heads_; }
  bool has_experts() const { return has_experts_; }
  // The axis group the i-th logical axis lands on, for sizes (tensor, fsdp, data, pipeline).
  void MapAxes(const int sizes[4], AxisGroup groups[4]) const;

 private:
  // Evaluate's body, into a default-constructed `r`.
  void EvaluateInto(const PlanC& plan, StepBreakdown& r) const;
  // Why `plan` cannot run on this model and mesh (nullptr: it can; then its microbatches).
  const char* InvalidPlanReason(const PlanC& plan, int* microbatches) const;
  // The plan's axes (tensor as y × x, fsdp, data, pipeline; flat DCN applied) and the whole
  // tensor group as one axis group.
  void MapPlanAxes(const PlanC& plan, AxisGroup axes[5], AxisGroup* tensor_all) const;
  TransformerModel model_;
  std::vector<SubLayerC> block_;
  // Uniform models: the layer's sub-layers attention, dense_ffn and moe_ffn (Evaluate() runs
  // one code path over these or over block_).
  SubLayerC uniform_layer_[3];
  int tensor_heads_ = 0;
  bool has_experts_ = false;
  Chip chip_;
  Efficiency eff_;
  DeviceRates bf16_rates_;  // MakeDeviceRates(chip_, BF16, eff_) when the chip has a bf16 peak
  bool has_bf16_rates_ = false;
  MeshTopology topo_;
  int num_devices_ = 0, num_chips_ = 0;
  std::vector<int> mesh_dims_;  // the mesh's dims (chips per axis), for weight-gathered inference
  double total_params_ = 0;
};

std::string FormatBreakdown(const StepBreakdown& b);

// sizeof(TrainingEvaluator) and sizeof(DeviceRates) as the library was compiled. A caller compiled
// against another version of this header (a stale object in an incremental build) sees other
// sizes and member offsets, and reads garbage (0 devices) or frees through them:
// perf_model_test's BuildConsistency test compares these with its own sizeof.
size_t TrainingEvaluatorSizeInLibrary();
size_t DeviceRatesSizeInLibrary();



}  // namespace placerl::perf
