#include "cost_models/tpu/training_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/errors.h"

namespace placerl::perf {

// Bytes of the optimizer state per parameter (master fp32 copy counted when params are
// stored below fp32). Adafactor's factored second moment is (rows + cols) per matrix.
double OptimizerBytesPerParam(Optimizer opt, double param_bytes, double d, double f, double state_bytes) {
  const double master = param_bytes < 4 ? 4 : 0;
  switch (opt) {
    case ADAM: return 2 * state_bytes + master;
    case ADAFACTOR: return state_bytes * (1 / d + 1 / f) + master;
    case SGD_MOMENTUM: return state_bytes + master;
    default: return 2 * state_bytes + master;
  }
}
// Bytes the optimizer update streams through HBM per parameter (read + write).
double OptimizerTrafficPerParam(Optimizer opt, double param_bytes, double grad_bytes, double state_bytes) {
  const double p = std::max(param_bytes, 4.0);
  switch (opt) {
    case ADAM: return 2 * p + grad_bytes + 4 * state_bytes;  // p r/w, g r, m & v r/w
    case ADAFACTOR: return 2 * p + grad_bytes;
    case SGD_MOMENTUM: return 2 * p + grad_bytes + 2 * state_bytes;
    default: return 2 * p + grad_bytes + 4 * state_bytes;
  }
}

namespace {

// The attention core of `heads` heads over `rows` query rows and `ctx` positions: Q·Kᵀ
// [rows, dh]·[dh, ctx] and P·V [rows, ctx]·[ctx, dh] per head, equal FLOPs each. Without the
// shape model one matmul whose smallest dimension is min(ctx, dh) (as before the shape model).
double AttentionCoreTime(const DeviceRates& r, double rows, double ctx, double dh, double heads,
                         double flops, double bytes) {
  if (!r.shape) return MatmulOpTime(r, std::min(ctx, dh), flops, bytes);
  const double h = std::max(1.0, heads);
  double a, b;  // = MatmulShapeFactor(r, rows, dh, ctx, h), MatmulShapeFactor(r, rows, ctx, dh, h)
  MatmulShapeFactorsSwapped(r, rows, dh, ctx, h, &a, &b);
  return ShapedMatmulTime(r, 2 / (1 / a + 1 / b), flops, bytes);
}

// The attention core in a flash-attention kernel that reaches `rate` of peak on its FLOPs
// (Efficiency.flash_attention): no shape factor or matmul efficiency, the HBM bytes a floor.
double FlashCoreTime(const DeviceRates& r, double rate, double flops, double bytes) {
  return std::max(flops / (r.peak_flops * rate), bytes / (r.hbm_bw * r.eff_memory)) + r.launch;
}

// One collective of an inference step: its hop-latency + bandwidth time plus the fixed cost
// per collective (Efficiency.collective_fixed_s: synchronisation / launch, which a small decode
// message cannot amortise), at least the latency floor. With no fixed cost it is CollectiveTime
// itself (bit for bit).
double InferenceCollectiveTime(Collective c, const AxisGroup& g, double bytes, const Efficiency& e) {
  const double fixed = e.collective_fixed_s();
  if (fixed <= 0) return CollectiveTime(c, g, bytes, e.collective_bw(), e.latency_floor_s(), e.dcn_bw());
  if (g.size() <= 1) return 0;
  return std::max(CollectiveTime(c, g, bytes, e.collective_bw(), 0.0, e.dcn_bw()) + fixed, e.latency_floor_s());
}

// Tensor-parallel traffic (seconds) of one layer's forward pass over t tokens (inference). 1-D (Megatron):
// one all-reduce of the [t, d] activations per block over the whole group. 2-D (weights
// [d/x, f/y], Pope et al.'s 2-D weight-stationary layout): per block, all-gather and
// reduce-scatter of [t, d/x] over y, reduce-scatter of the block's wide output [t, w/y] and
// all-gather of its wide input [t, w'/y] over x.
double TensorTrafficForward(const TransformerModel& m, const PlanC& p, double t, double ab,
                            const AxisGroup& all, const AxisGroup& y, const AxisGroup& x,
                            const Efficiency& e) {
  if (p.tensor <= 1) return 0;
  auto coll = [&](Collective c, const AxisGroup& grp, double bytes) { return InferenceCollectiveTime(c, grp, bytes, e); };
  const double d = m.d_model(), f = m.d_ff(), H = m.heads(), KV = m.kv_heads(), dh = m.head_dim();
  const double g = m.gated_ffn() ? 2 : 1;
  const int tx = std::max(1, p.tensor_x), ty = p.tensor / tx;
  const double blocks = m.parallel_block() ? 1 : 2;  // reductions of [t, d] per layer
  if (tx == 1) return blocks * coll(Collective::kAllReduce, all, t * d * ab);
  return 2 * blocks * coll(Collective::kAllGather, y, t * d / tx * ab) +
         coll(Collective::kReduceScatter, x, t * (H + 2 * KV) * dh / ty * ab) +
         coll(Collective::kAllGather, x, t * H * dh / ty * ab) +
         coll(Collective::kReduceScatter, x, t * g * f / ty * ab) +
         coll(Collective::kAllGather, x, t * f / ty * ab);
}

}  // namespace

void TrainingEvaluator::MapPlanAxes(const PlanC& p, AxisGroup ax[5], AxisGroup* tp_all) const {
  const int tx = std::max(1, p.tensor_x), ty = p.tensor / tx;
  const int sizes[5] = {ty, tx, p.fsdp, p.data, p.pipeline};
  topo_.MapAxes(sizes, 5, ax);
  for (int i = 0; i < 5; ++i) ax[i].flat_dcn = p.flat_dcn_collectives;
  if (tx == 1) {
    *tp_all = ax[0];
  } else {
    const int ts[4] = {p.tensor, 1, 1, 1};
    AxisGroup tmp[4];
    MapAxes(ts, tmp);
    *tp_all = tmp[0];
  }
}

PlanC PlanFromProto(const Plan& p) {
  PlanC c;
  c.data = std::max(1, p.data());
  c.fsdp = std::max(1, p.fsdp());
  c.tensor = std::max(1, p.tensor());
  c.pipeline = std::max(1, p.pipeline());
  c.microbatches = p.microbatches();
  c.expert = std::max(1, p.expert());
  c.remat = p.remat();
  c.param_dtype = p.param_dtype() == DTYPE_UNSPECIFIED ? FP32 : p.param_dtype();
  c.compute_dtype = p.compute_dtype() == DTYPE_UNSPECIFIED ? BF16 : p.compute_dtype();
  c.grad_dtype = p.grad_dtype() == DTYPE_UNSPECIFIED ? FP32 : p.grad_dtype();
  c.optimizer = p.optimizer();
  c.shard_optimizer = p.shard_optimizer();
  c.global_batch = double(p.global_batch());
  c.grad_reduce_after_backward = p.grad_reduce_after_backward();
  c.flat_dcn_collectives = p.flat_dcn_collectives();
  c.tensor_x = std::max(1, p.tensor_x());
  c.interleave = std::max(1, p.interleave());
  c.no_sequence_parallel = p.no_sequence_parallel();
  c.update_consumes_gradients = p.update_consumes_gradients();
  c.serial_tensor_collectives = p.serial_tensor_collectives();
  c.fsdp_gather_on_demand = p.fsdp_gather_on_demand();
  c.serial_collectives = p.serial_collectives();
  c.schedule = p.schedule();
  c.weight_bits = p.weight_bits();
  c.grad_bits = p.grad_bits();
  c.optimizer_bits = p.optimizer_bits();
  c.activation_bits = p.activation_bits();
  return c;
}

Plan PlanToProto(const PlanC& c) {
  Plan p;
  p.set_data(c.data);
  p.set_fsdp(c.fsdp);
  p.set_tensor(c.tensor);
  p.set_pipeline(c.pipeline);
  p.set_microbatches(c.microbatches);
  p.set_expert(c.expert);
  p.set_remat(c.remat);
  p.set_param_dtype(c.param_dtype);
  p.set_compute_dtype(c.compute_dtype);
  p.set_grad_dtype(c.grad_dtype);
  p.set_optimizer(c.optimizer);
  p.set_shard_optimizer(c.shard_optimizer);
  p.set_grad_reduce_after_backward(c.grad_reduce_after_backward);
  p.set_flat_dcn_collectives(c.flat_dcn_collectives);
  if (c.tensor_x > 1) p.set_tensor_x(c.tensor_x);
  if (c.interleave > 1) p.set_interleave(c.interleave);
  p.set_no_sequence_parallel(c.no_sequence_parallel);
  p.set_update_consumes_gradients(c.update_consumes_gradients);
  p.set_serial_tensor_collectives(c.serial_tensor_collectives);
  p.set_fsdp_gather_on_demand(c.fsdp_gather_on_demand);
  p.set_serial_collectives(c.serial_collectives);
  p.set_schedule(c.schedule);
  p.set_weight_bits(c.weight_bits);
  p.set_grad_bits(c.grad_bits);
  p.set_optimizer_bits(c.optimizer_bits);
  p.set_activation_bits(c.activation_bits);
  p.set_global_batch(int64_t(c.global_batch));
  return p;
}

TransformerModel NormalizedModel(const TransformerModel& in) {
  TransformerModel m = in;
  auto need = [](bool ok, const char* what) {
    if (!ok) throw ConfigError(std::string("model: ") + what);
  };
  need(m.layers() > 0, "layers must be > 0");
  need(m.d_model() > 0, "d_model must be > 0");
  need(m.d_ff() > 0, "d_ff must be > 0");
  need(m.heads() > 0, "heads must be > 0");
  need(m.seq() > 0, "seq must be > 0");
  need(m.vocab() >= 0, "vocab must be >= 0");
  if (m.head_dim() == 0) m.set_head_dim(std::max(1, m.d_model() / m.heads()));
  if (m.kv_heads() == 0) m.set_kv_heads(m.heads());
  need(m.kv_heads() <= m.heads(), "kv_heads must be <= heads");
  need(m.num_experts() >= 0, "num_experts must be >= 0");
  if (m.num_experts() > 0) {
    if (m.top_k() == 0) m.set_top_k(2);
    if (m.moe_every() == 0) m.set_moe_every(1);
    if (m.capacity_factor() == 0) m.set_capacity_factor(1.25);
    need(m.top_k() <= m.num_experts(), "top_k must be <= num_experts");
    need(m.capacity_factor() > 0, "capacity_factor must be > 0");
  }
  need(!(m.parallel_block() && m.block_size() > 0), "parallel_block applies to uniform models (no block)");
  // Dropout on is the default: written `true` is stored as unset, so that both spell one model
  // (ModelToString prints the key only when it is off).
  if (m.has_dropout() && m.dropout()) m.clear_dropout();
  for (int i = 0; i < m.block_size(); ++i) {
    SubLayer& s = *m.mutable_block(i);
    const std::string at = "block sub-layer " + std::to_string(i + 1) + ": ";
    auto need_sub = [&](bool ok, const char* what) {
      if (!ok) throw ConfigError("model: " + at + what);
    };
    switch (s.type()) {
      case ATTENTION:
        need_sub(s.heads() >= 0 && s.kv_heads() >= 0 && s.head_dim() >= 0, "heads, kv_heads and head_dim must be >= 0");
        if (s.heads() == 0) {
          s.set_heads(m.heads());
          if (s.kv_heads() == 0) s.set_kv_heads(m.kv_heads());
          if (s.head_dim() == 0) s.set_head_dim(m.head_dim());
        }
        if (s.kv_heads() == 0) s.set_kv_heads(s.heads());
        if (s.head_dim() == 0) s.set_head_dim(std::max(1, m.d_model() / s.heads()));
        need_sub(s.kv_heads() <= s.heads(), "kv_heads must be <= heads");
        break;
      case DENSE_FFN:
      case MOE_FFN:
        need_sub(s.d_ff() >= 0, "d_ff must be >= 0");
        need_sub(std::isfinite(s.ffn_ratio()) && s.ffn_ratio() >= 0 && s.ffn_ratio() <= 1e4,
                 "ffn_ratio must be finite and in [0, 1e4]");
        // d_ff from the ratio in double first: ratio × d_model may exceed int.
        need_sub(s.ffn_ratio() * m.d_model() <= 16777216.0, "ffn_ratio × d_model must be <= 2^24");
        if (s.d_ff() == 0)
          s.set_d_ff(s.ffn_ratio() > 0 ? std::max(1, int(std::lround(s.ffn_ratio() * m.d_model()))) : m.d_ff());
        if (s.type() == DENSE_FFN) break;
        need_sub(s.num_experts() >= 0 && s.top_k() >= 0, "num_experts and top_k must be >= 0");
        if (s.num_experts() == 0) s.set_num_experts(m.num_experts());
        need_sub(s.num_experts() > 0, "an MoE sub-layer needs num_experts > 0 (its own or the model's)");
        if (s.top_k() == 0) s.set_top_k(m.top_k() > 0 ? m.top_k() : 2);
        if (s.capacity_factor() == 0) s.set_capacity_factor(m.capacity_factor() > 0 ? m.capacity_factor() : 1.25);
        need_sub(std::isfinite(s.capacity_factor()) && s.capacity_factor() > 0, "capacity_factor must be > 0");
        if (s.gating() == GATING_TOP_K) need_sub(s.top_k() <= s.num_experts(), "top_k must be <= num_experts");
        break;
      default: need_sub(false, "unknown sub-layer type");
    }
  }
  return m;
}

std::vector<SubLayerC> BlockSubLayers(const TransformerModel& m) {
  std::vector<SubLayerC> out;
  for (const SubLayer& s : m.block()) {
    SubLayerC c;
    c.type = s.type();
    c.heads = s.heads();
    c.kv_heads = s.kv_heads();
    c.head_dim = s.head_dim();
    c.d_ff = s.d_ff();
    c.experts = s.num_experts();
    c.top_k = s.top_k();
    c.capacity_factor = s.capacity_factor();
    c.expert_choice = s.gating() == GATING_EXPERT_CHOICE;
    out.push_back(c);
  }
  return out;
}

TrainingEvaluator::TrainingEvaluator(const TransformerModel& model, const Mesh& mesh,
                                     const Catalog& catalog)
    : model_(NormalizedModel(model)), chip_(FindChip(catalog, mesh.chip())),
      eff_(EffectiveEfficiency(catalog, chip_)) {
  topo_ = MeshTopology(mesh, chip_);
  for (const DTypePeak& pk : chip_.peak())
    if (pk.dtype() == BF16) {
      bf16_rates_ = MakeDeviceRates(chip_, BF16, eff_);
      has_bf16_rates_ = true;
      break;
    }
  mesh_dims_.assign(mesh.dims().begin(), mesh.dims().end());
  num_chips_ = topo_.num_chips();
  num_devices_ = topo_.num_devices();

  const TransformerModel& m = model_;
  const double d = m.d_model(), f = m.d_ff(), H = m.heads(), KV = m.kv_heads(), dh = m.head_dim();
  const double g = m.gated_ffn() ? 2 : 1;
  const double p_attn = d * (H + 2 * KV) * dh + H * dh * d;
  const double p_ffn = d * f * g + f * d;
  const int n_moe = m.num_experts() > 0 ? m.layers() / m.moe_every() : 0;
  total_params_ = m.layers() * p_attn + (m.layers() - n_moe) * p_ffn +
                  n_moe * (m.num_experts() * p_ffn + d * m.num_experts()) +
                  double(m.vocab()) * d * (m.tied_embeddings() ? 1 : 2);
  tensor_heads_ = m.heads();
  has_experts_ = m.num_experts() > 0;
  if (m.block_size() == 0) {
    // The uniform layer as sub-layers, which take the model's widths by default: attention,
    // dense FFN and, with experts, the MoE FFN.
    TransformerModel layer = m;
    layer.set_parallel_block(false);  // (a uniform-model option; the sub-layers are the same)
    layer.add_block()->set_type(ATTENTION);
    layer.add_block()->set_type(DENSE_FFN);
    if (has_experts_) layer.add_block()->set_type(MOE_FFN);
    const std::vector<SubLayerC> subs = BlockSubLayers(NormalizedModel(layer));
    std::copy(subs.begin(), subs.end(), uniform_layer_);
  } else {
    block_ = BlockSubLayers(m);
    // Per block: attention, dense FFN and MoE parameters (experts + router), summed in the
    // uniform layer's order so that an [attention, dense_ffn] block gives the same total.
    double pa = 0, pf = 0, pm = 0;
    tensor_heads_ = 0;
    has_experts_ = false;
    for (const SubLayerC& s : block_) {
      if (s.type == ATTENTION) {
        pa += d * (s.heads + 2 * s.kv_heads) * s.head_dim + s.heads * s.head_dim * d;
        tensor_heads_ = std::gcd(tensor_heads_, int(s.heads));
      } else if (s.type == DENSE_FFN) {
        pf += d * s.d_ff * g + s.d_ff * d;
      } else {
        pm += s.experts * (d * s.d_ff * g + s.d_ff * d) + d * s.experts;
        has_experts_ = true;
      }
    }
    total_params_ = m.layers() * pa + m.layers() * pf + m.layers() * pm +
                    double(m.vocab()) * d * (m.tied_embeddings() ? 1 : 2);
  }
}

void TrainingEvaluator::MapAxes(const int sizes[4], AxisGroup groups[4]) const {
  topo_.MapAxes(sizes, 4, groups);
}

namespace {

// Forward work and sizes of one layer variant — a uniform model's (dense or MoE) layer, or one
// block of a block model — for one microbatch on one device, summed over its sub-layers.
struct LayerSums {
  double fwd = 0;        // matmuls, attention, layer norms and elementwise work (s)
  double ffn_mm = 0;     // the FFN sub-layers' matmuls (+ MoE router, dispatch, combine) in fwd
  double remat_min = 0;  // recomputed under REMAT_MINIMAL: attention scores + elementwise (s)
  double remat_sel = 0;  // recomputed under REMAT_SELECTIVE: the attention cores (s)
  double remat_qkvo = 0;  // recomputed under REMAT_SAVE_QKVO: remat_min + the FFN input projections (s)
  double ffn_in_mm = 0;   // the FFN sub-layers' input projections (gate and up) in fwd (s)
  // Shape model: backward matmul time beyond 2× the forward's (all; the FFN sub-layers').
  double bwd_adj = 0, ffn_bwd_adj = 0;
  double tp_fwd = 0;     // tensor-parallel traffic of the forward pass (s)
  double a2a = 0;        // expert all-to-alls of the forward pass (s)
  double p_dense = 0, p_experts = 0;  // params: FSDP-gathered (attention, FFN, router); experts
  double act_attn = 0, act_ffn = 0, act_moe = 0;  // active (per-token) matmul params per type
  double act_ffn_in = 0, act_moe_in = 0;          // … of which the FFN input projections
  double attn_per_token = 0;                      // 4·S·H·dh summed over attention sub-layers
  // Activation memory per token (Korthikanti et al. 2022, in units of ab/2 bytes): sharded,
  // replicated (norm inputs, dropout masks, 5·d per sub-layer), scores (5·H per attention);
  // kept under minimal remat: the matmul outputs the backward pass reads (QKV, FFN hidden) +
  // min_stream·d of the residual stream (the layer's input and each sub-layer's output that
  // feeds the next sub-layer's norm: one per sub-layer; one per layer for a parallel block).
  double act_sharded = 0, norm_units = 0, score_units = 0, min_units = 0, min_stream = 0;
  double qkvo_units = 0;  // kept under REMAT_SAVE_QKVO: q, k, v, context, out-projection output
  double sub_layers = 0;
};

// A layer variant's activation work while its sub-layers are summed (SumLayer).
struct LayerWork {
  double t_attn_sum = 0;  // attention scores (recomputed under REMAT_MINIMAL)
  double ffn_units = 0;   // FFN activation work per token ((g+1)·d_ff per FFN, × routed for MoE)
  double ew_flops = 0;    // t·ffn_units/tp, summed per sub-layer as the uniform layer writes it
  double n_tp_y = 0;      // 2-D: all-gathers of [t, d/x] over y (2 per sub-layer)
};

#define PLACERL_STEP_INLINE inline __attribute__((always_inline))

// One plan's evaluation, step by step: its settings (bytes per value, widths, tokens per
// microbatch, axis groups), the layer variants' sums and what EvaluateInto fills from them.
// Every function is forced inline into EvaluateInto: out of line (or as by-reference lambdas
// out of line) Evaluate() was ~10 % slower (`perf-model bench`). Every expression keeps the
// order it was first written in, so that the numbers stay bit for bit.
struct StepModel {
  const TransformerModel& m;
  const PlanC& p;
  const DeviceRates& rates;
  const Efficiency& e;
  const bool uniform;
  const int M, K;  // microbatches, pipeline stages
  const int tx, ty;
  // Bytes per value: the dtypes', or an eXmY width (bits / 8) where the plan gives one.
  const double ab, wb, pb, gb, sb;
  const double d, S, V, tp, g;
  const double t;   // tokens per microbatch per device
  const double Ls;  // layers (blocks) per stage
  AxisGroup ax[5], tp_g, ep_g;  // ax: tensor y, tensor x, fsdp, data, pipeline
  double bw_eff = 0, floor = 0;
  double t_ar = 0;       // 1-D tensor parallelism: one all-reduce of the [t, d] activations per sub-layer
  double mm_bwd_adj = 0;  // shape model: backward matmul time beyond 2× the forward's, so far
  // The variants, their layers per stage (L0, L1) and their shares of all layers (w_*).
  LayerSums k0, k1;
  double L0 = 0, L1 = 0, w_dense = 1, w_moe = 1;
  double c0 = 0, c1 = 0;  // per-layer compute of the variants
  double dev_params = 0, opt_params = 0;

  StepModel(const TransformerModel& model, const PlanC& plan, const DeviceRates& device_rates,
            const Efficiency& eff, bool uniform_model, int microbatches, double seqs_per_shard)
      : m(model),
        p(plan),
        rates(device_rates),
        e(eff),
        uniform(uniform_model),
        M(microbatches),
        K(plan.pipeline),
        tx(std::max(1, plan.tensor_x)),
        ty(plan.tensor / tx),
        ab(p.activation_bits > 0 ? p.activation_bits / 8.0 : BytesPerElement(p.compute_dtype)),
        wb(p.weight_bits > 0 ? p.weight_bits / 8.0 : BytesPerElement(p.compute_dtype)),
        pb(p.weight_bits > 0 ? p.weight_bits / 8.0 : BytesPerElement(p.param_dtype)),
        gb(p.grad_bits > 0 ? p.grad_bits / 8.0 : BytesPerElement(p.grad_dtype)),
        sb(p.optimizer_bits > 0 ? p.optimizer_bits / 8.0 : 4.0),
        d(m.d_model()),
        S(m.seq()),
        V(m.vocab()),
        tp(p.tensor),
        g(m.gated_ffn() ? 2 : 1),
        t(seqs_per_shard / M * S),
        Ls(std::ceil(double(m.layers()) / K)) {}

  PLACERL_STEP_INLINE double coll(Collective c, const AxisGroup& grp, double bytes) const {
    return CollectiveTime(c, grp, bytes, bw_eff, floor, e.dcn_bw());
  }

  // Forward time of a matmul [m,k]·[k,n] (over `weight_copies` experts' weights: that many
  // [m/copies, k]·[k, n] matmuls). Under the shape model the backward's two GEMMs, dX = dY·Wᵀ
  // ([m,n]·[n,k]) and dW = Xᵀ·dY ([k,m]·[m,n]), have their own shapes: what they take beyond
  // 2× the forward accumulates in mm_bwd_adj (0 without the shape model).
  PLACERL_STEP_INLINE double mm(double mm_m, double k, double n, double weight_copies) {
    const double flops = MatmulFlops(mm_m, k, n);
    const double bytes = (mm_m * k + mm_m * n) * ab + weight_copies * k * n * wb;
    if (!rates.shape) return MatmulOpTime(rates, std::min({mm_m, k, n}), flops, bytes);
    const double c = std::max(1.0, weight_copies), rows = mm_m / c;
    // dX streams the same rows through the same (transposed) weight tiles: the forward's factor.
    // (= MatmulShapeFactor(rates, rows, k, n, c) and MatmulShapeFactor(rates, k, rows, n, c).)
    double sf_fwd, sf_dw, sf_dx;
    MatmulShapeFactorsFwdDw(rates, rows, k, n, c, &sf_fwd, &sf_dw, &sf_dx);
    const double t_mem = bytes / (rates.hbm_bw * rates.eff_memory);
    const double fwd = ShapedMatmulTimeMem(rates, sf_fwd, flops, t_mem);
    const double dw = ShapedMatmulTimeMem(rates, sf_dw, flops, t_mem);
    if (rates.output_stationary) {
      // dX tiles [m, k] and streams n: its own factor (Chip.output_stationary).
      mm_bwd_adj += ShapedMatmulTimeMem(rates, sf_dx, flops, t_mem) + dw - 2 * fwd;
    } else {
      mm_bwd_adj += dw - fwd;  // backward = dX (= fwd) + dW
    }
    return fwd;
  }

  PLACERL_STEP_INLINE void AddAttention(const SubLayerC& s, LayerSums& l, LayerWork& w) {
    const double H = s.heads, KV = s.kv_heads, dh = s.head_dim;
    const double attn_flops = 4 * t * S * H * dh / tp;
    const double attn_bytes = t * (2 * H + 2 * KV) * dh / tp * ab +
                              (m.flash_attention() ? 0 : 4 * t * S * H / tp * ab);
    // Scores Q·Kᵀ and scores·V per head: [S, dh]×[dh, S] and [S, S]×[S, dh]. A flash kernel
    // with its own measured rate (Efficiency.flash_attention) runs them at that rate, its
    // backward (2× the forward's FLOPs and bytes) at flash_attention_bwd: the difference to
    // 2× the forward goes to mm_bwd_adj like a GEMM's.
    const bool flash_rate = m.flash_attention() && rates.flash_fwd > 0;
    const double t_attn = flash_rate ? FlashCoreTime(rates, rates.flash_fwd, attn_flops, attn_bytes)
                                     : AttentionCoreTime(rates, t, S, dh, std::max(1.0, H / tp), attn_flops, attn_bytes);
    if (flash_rate) mm_bwd_adj += 2 * (FlashCoreTime(rates, rates.flash_bwd, attn_flops, attn_bytes) - t_attn);
    l.fwd = l.fwd + mm(t, d, (H + 2 * KV) * dh / tp, 1) + mm(t, H * dh / tp, d, 1) + t_attn;
    w.t_attn_sum += t_attn;
    l.tp_fwd += t_ar;
    const double pa = d * (H + 2 * KV) * dh + H * dh * d;
    l.p_dense += pa;
    l.act_attn += pa;
    l.attn_per_token += 4 * S * H * dh;
    l.act_sharded += 8 * d;
    l.score_units += 5 * H;
    l.min_units += (H + 2 * KV) * dh;
    l.qkvo_units += (2 * H + 2 * KV) * dh + d;
  }

  PLACERL_STEP_INLINE void AddDenseFfn(const SubLayerC& s, LayerSums& l, LayerWork& w) {
    const double f = s.d_ff;
    const double pf = d * f * g + f * d;
    l.tp_fwd += t_ar;
    const double adj0 = mm_bwd_adj;
    const double t_ffn_in = mm(t, d, f * g / tp, 1);
    const double t_ffn = t_ffn_in + mm(t, f / tp, d, 1);
    l.ffn_bwd_adj += mm_bwd_adj - adj0;
    l.ffn_in_mm += t_ffn_in;
    l.fwd += t_ffn;
    l.ffn_mm += t_ffn;
    w.ffn_units += (g + 1) * f;
    w.ew_flops += t * (g + 1) * f / tp;
    l.p_dense += pf;
    l.act_ffn += pf;
    l.act_ffn_in += d * f * g;
    l.act_sharded += 4 * f * (m.gated_ffn() ? 1.5 : 1);
    l.min_units += f * g;
  }

  // MoE FFN: the routed capacity slots over the local experts, the router, dispatch, combine.
  PLACERL_STEP_INLINE void AddMoeFfn(const SubLayerC& s, LayerSums& l, LayerWork& w) {
    const double f = s.d_ff;
    const double pf = d * f * g + f * d;
    l.tp_fwd += t_ar;
    const double E = s.experts, per_token = s.RoutedPerToken();
    const double routed = uniform ? t * s.top_k * s.capacity_factor : t * per_token;
    const double local_experts = E / p.expert;
    const double adj0 = mm_bwd_adj;
    const double t_ffn_in = mm(routed, d, f * g / tp, local_experts);
    const double t_ffn = t_ffn_in + mm(routed, f / tp, d, local_experts) +
                         mm(t, d, E, 1) + OpTime(rates, OpKind::kMoeDispatch, 0, 2 * routed * d / tp * ab) +
                         OpTime(rates, OpKind::kMoeCombine, routed * d / tp, 2 * routed * d / tp * ab);
    l.ffn_bwd_adj += mm_bwd_adj - adj0;
    l.ffn_in_mm += t_ffn_in;
    l.fwd += t_ffn;
    l.ffn_mm += t_ffn;
    l.a2a += 2 * coll(Collective::kAllToAll, ep_g, routed * d / tp * ab * p.expert);
    w.ffn_units += (g + 1) * f * per_token;
    w.ew_flops += t * (g + 1) * f * per_token / tp;
    l.p_dense += d * E;  // the router
    l.p_experts += E * pf;
    l.act_moe += s.ActiveExperts() * pf + d * E;
    l.act_moe_in += s.ActiveExperts() * d * f * g;
    l.act_sharded += 4 * f * (m.gated_ffn() ? 1.5 : 1) * per_token;
    l.min_units += f * g * per_token;
  }

  // 2-D weight-stationary layout (Pope et al.), per sub-layer: 2 all-gathers of [t, d/x] over y,
  // then the wide output's reduce-scatter and the wide input's all-gather over x.
  PLACERL_STEP_INLINE double TensorTraffic2D(const SubLayerC* subs, size_t n, double n_tp_y) const {
    const AxisGroup &tpy_g = ax[0], &tpx_g = ax[1];
    double tp_fwd = n_tp_y * coll(Collective::kAllGather, tpy_g, t * d / tx * ab);
    for (size_t i = 0; i < n; ++i) {
      const SubLayerC& s = subs[i];
      if (s.type == ATTENTION) {
        tp_fwd = tp_fwd + coll(Collective::kReduceScatter, tpx_g, t * (s.heads + 2 * s.kv_heads) * s.head_dim / ty * ab) +
                 coll(Collective::kAllGather, tpx_g, t * s.heads * s.head_dim / ty * ab);
      } else {
        tp_fwd = tp_fwd + coll(Collective::kReduceScatter, tpx_g, t * g * s.d_ff / ty * ab) +
                 coll(Collective::kAllGather, tpx_g, t * s.d_ff / ty * ab);
      }
    }
    return tp_fwd;
  }

  // The sub-layers' sums; `elementwise`: + their layer norms and elementwise work as one op each.
  PLACERL_STEP_INLINE LayerSums SumLayer(const SubLayerC* subs, size_t n, bool elementwise) {
    LayerSums l;
    LayerWork w;
    const double adj_start = mm_bwd_adj;
    for (size_t i = 0; i < n; ++i) {
      const SubLayerC& s = subs[i];
      l.norm_units += 5;
      l.sub_layers += 1;
      l.min_stream += 1;
      w.n_tp_y += 2;
      if (s.type == ATTENTION) AddAttention(s, l, w);
      else if (s.type == DENSE_FFN) AddDenseFfn(s, l, w);
      else AddMoeFfn(s, l, w);
    }
    if (uniform && n == 2 && m.parallel_block()) {
      // PaLM's parallel block: attention and FFN share one layer norm and one reduction.
      l.tp_fwd = t_ar;
      w.n_tp_y = 2;
      l.norm_units = 5;
      l.min_stream = 1;  // both sub-layers read the layer's input; their outputs only add up
    }
    if (tx > 1) l.tp_fwd = TensorTraffic2D(subs, n, w.n_tp_y);
    l.bwd_adj = mm_bwd_adj - adj_start;
    if (!elementwise) return l;
    const double norm_units = l.norm_units;
    const double t_ew_norm = OpTime(rates, OpKind::kNorm, t * norm_units * d / tp, t * norm_units * d / tp * ab);
    const double ew_bytes = t * (norm_units * d + w.ffn_units) / tp * ab;
    const double t_ew_ffn = w.ffn_units > 0 ? OpTime(rates, OpKind::kElementwise, w.ew_flops,
                                                     ew_bytes - t * norm_units * d / tp * ab)
                                            : 0;
    l.fwd = l.fwd + t_ew_norm + t_ew_ffn;
    l.remat_min = w.t_attn_sum + t_ew_norm + t_ew_ffn;
    l.remat_sel = w.t_attn_sum;
    l.remat_qkvo = l.remat_min + l.ffn_in_mm;
    return l;
  }

  // k0, k1 and their layers per stage: a block model's block, or the uniform layer and its MoE variant.
  PLACERL_STEP_INLINE void SumVariants(const SubLayerC* uniform_layer, const std::vector<SubLayerC>& block,
                                       bool has_experts) {
    L0 = Ls;
    if (!uniform) {
      k0 = SumLayer(block.data(), block.size(), true);
      return;
    }
    k0 = SumLayer(uniform_layer, 2, true);  // attention, dense FFN
    double moe_frac = 0;
    if (has_experts) {
      // The uniform MoE layer is the dense layer with its FFN matmuls swapped for the experts'
      // (+ router, dispatch, combine, all-to-alls); its elementwise work, tensor traffic and
      // activation memory (below) stay the dense layer's.
      k1 = SumLayer(uniform_layer + 2, 1, false);  // MoE FFN
      k1.fwd = k0.fwd - k0.ffn_mm + k1.ffn_mm;
      k1.bwd_adj = k0.bwd_adj - k0.ffn_bwd_adj + k1.ffn_bwd_adj;
      k1.remat_min = k0.remat_min;
      k1.remat_sel = k0.remat_sel;
      k1.remat_qkvo = k0.remat_min + k1.ffn_in_mm;
      k1.tp_fwd = k0.tp_fwd;
      k1.p_dense = k0.act_attn + k1.p_dense;  // attention + router
      moe_frac = double(m.layers() / m.moe_every()) / m.layers();
    }
    L0 = Ls * (1 - moe_frac);
    L1 = Ls * moe_frac;
    w_dense = 1 - moe_frac;
    w_moe = moe_frac;
  }

  // Per-layer compute and exposed collectives of a variant (per microbatch).
  PLACERL_STEP_INLINE void LayerCost(const LayerSums& k, double* compute, double* tp_exp, double* fsdp_exp,
                                     double* ep_exp) const {
    const AxisGroup& fsdp_g = ax[2];
    // Tensor-parallel traffic: the forward pass's, again for the backward, a third time under
    // full remat. FSDP weight gathers / gradient reduce-scatters (experts are sharded by `expert`).
    const double tp_layer = k.tp_fwd * (2 + (p.remat == REMAT_FULL ? 1 : 0));
    const double ag = p.fsdp > 1 ? coll(Collective::kAllGather, fsdp_g, k.p_dense / tp * wb) : 0;
    const double rs = p.fsdp > 1 ? coll(Collective::kReduceScatter, fsdp_g, k.p_dense / tp * gb) : 0;
    const double recompute = p.remat == REMAT_FULL      ? k.fwd
                             : p.remat == REMAT_MINIMAL ? k.remat_min
                             : p.remat == REMAT_SELECTIVE ? k.remat_sel
                             : p.remat == REMAT_SAVE_QKVO ? k.remat_qkvo
                                                          : 0;
    const double bwd = 2 * k.fwd + k.bwd_adj + recompute;
    *compute = k.fwd + bwd;
    // Tensor traffic hides under up to tp_overlap of the layer's compute (none of it when the
    // plan says the framework runs it on the critical path, as Megatron-LM); FSDP gathers under
    // its forward, gathers + reduce-scatters under its backward; the rest is exposed.
    *tp_exp = p.serial_tensor_collectives || p.serial_collectives ? tp_layer
                                                                  : std::max(0.0, tp_layer - e.tp_overlap() * *compute);
    // On demand (DeepSpeed ZeRO-3): each all-gather runs when its layer starts, forward and
    // backward, so both are exposed; the gradient reduce-scatter still overlaps the backward.
    // Serial (XLA:GPU without latency hiding): both all-gathers and the reduce-scatter exposed.
    *fsdp_exp = p.serial_collectives      ? 2 * ag + rs
                : p.fsdp_gather_on_demand ? 2 * ag + std::max(0.0, rs - bwd)
                                          : std::max(0.0, ag - k.fwd) + std::max(0.0, ag + rs - bwd);
    *ep_exp = k.a2a * (p.remat == REMAT_FULL || p.remat == REMAT_SAVE_QKVO ? 3 : 2);
  }

  // The gradient bytes a chip holds for the data all-reduce: its dense fsdp shard and, unless
  // each data shard holds its own experts (ReducesExperts false), its expert shard.
  PLACERL_STEP_INLINE bool ReducesExperts(double stage_expert_params) const {
    return stage_expert_params > 0 && p.data * p.fsdp > p.expert;
  }
  PLACERL_STEP_INLINE double DenseGradBytes(double stage_dense_params) const {
    return stage_dense_params / (tp * p.fsdp) * gb;
  }
  PLACERL_STEP_INLINE double ExpertGradBytes(double stage_expert_params) const {
    return stage_expert_params / (tp * p.expert) * gb;
  }

  // The gradients' data-parallel all-reduce over `grp` (dense; experts unless each data shard
  // holds its own).
  PLACERL_STEP_INLINE double DataAllReduce(const AxisGroup& grp, double stage_dense_params,
                                           double stage_expert_params) const {
    return coll(Collective::kAllReduce, grp, DenseGradBytes(stage_dense_params)) +
           (ReducesExperts(stage_expert_params)
                ? coll(Collective::kAllReduce, grp, ExpertGradBytes(stage_expert_params))
                : 0);
  }

  void StepTime(StepBreakdown& r);
  void Flops(StepBreakdown& r, int num_devices, int num_chips) const;
  void Memory(StepBreakdown& r, const Chip& chip) const;
};

// The step time and its parts: the variants' layers, the ends (embedding, logits), stage sends,
// the data-parallel all-reduce and the optimizer.
PLACERL_STEP_INLINE void StepModel::StepTime(StepBreakdown& r) {
  double tp0, fs0, ep0, tp1 = 0, fs1 = 0, ep1 = 0;
  LayerCost(k0, &c0, &tp0, &fs0, &ep0);
  if (L1 > 0) LayerCost(k1, &c1, &tp1, &fs1, &ep1);

  // Embedding lookup on the first stage, logits + softmax cross-entropy on the last.
  const double logits_adj0 = mm_bwd_adj;
  const double t_logits_mm = mm(t, d, V / tp, 1);
  const double t_logits = 3 * t_logits_mm + (mm_bwd_adj - logits_adj0) +
                          OpTime(rates, OpKind::kSoftmax, 3 * t * V / tp, 3 * t * V / tp * 4);
  const double t_embed = 3 * OpTime(rates, OpKind::kEmbedding, 0, t * d * ab);
  const double t_ends = K == 1 ? t_logits + t_embed : std::max(t_logits, t_embed);
  // Stage-to-stage sends, forward and backward; interleaved 1F1B crosses v× as many stage
  // boundaries per microbatch (Narayanan et al. 2021 §2.2.2).
  const AxisGroup &dp_g = ax[3], &pp_g = ax[4];
  const double t_p2p = K > 1 ? 2 * coll(Collective::kPermute, pp_g, t * d / tp * ab * K) * std::max(1, p.interleave) : 0;

  const double mb_compute = L0 * c0 + L1 * c1 + t_ends;
  const double mb_tp = L0 * tp0 + L1 * tp1, mb_fsdp = L0 * fs0 + L1 * fs1;
  const double mb_ep = L0 * ep0 + L1 * ep1;
  const double t_mb = mb_compute + mb_tp + mb_fsdp + mb_ep + t_p2p;

  // ---- per step ----
  // Embedding and (untied) output projection: both on the only stage without pipelining;
  // with pipelining the first stage (the one accounted here) holds the embedding only.
  const double embed_params = (K > 1 || m.tied_embeddings()) ? V * d : 2 * V * d;
  const double stage_dense_params = L0 * k0.p_dense + L1 * k1.p_dense + embed_params;
  // (Uniform: L1·E·p_ffn in that order, the order the uniform evaluator was written in.)
  const double stage_expert_params =
      uniform ? L1 * m.num_experts() * (d * m.d_ff() * g + m.d_ff() * d) : L0 * k0.p_experts;
  dev_params = stage_dense_params / (tp * p.fsdp) + stage_expert_params / (tp * p.expert);
  // Gradients of the fsdp-shard, once per step; hidden under the last backward pass.
  const double t_dp = p.data > 1 ? DataAllReduce(dp_g, stage_dense_params, stage_expert_params) : 0;
  const double last_bwd = (L0 * c0 + L1 * c1) * 2.0 / 3.0;
  opt_params = dev_params / (p.shard_optimizer ? p.data : 1);
  const double t_opt = OpTime(rates, OpKind::kElementwise, 0,
                              opt_params * OptimizerTrafficPerParam(p.optimizer, pb, gb, sb));

  r.compute_s = M * mb_compute;
  r.exposed_tp_s = M * mb_tp;
  r.exposed_fsdp_s = M * mb_fsdp;
  r.exposed_ep_s = M * mb_ep;
  r.pipeline_comm_s = M * t_p2p;
  // Interleaved 1F1B (v model chunks per device, Narayanan et al. 2021): the bubble shrinks v×.
  const double v = std::max(1, p.interleave);
  r.bubble_s = (K - 1) * t_mb / v;
  r.exposed_dp_s = p.grad_reduce_after_backward ? t_dp : std::max(0.0, t_dp - last_bwd);
  // Several slices / nodes, hierarchical rings: the gradients are reduced per layer bucket (Ls + 1
  // buckets per step), so the DCN ring over the slices runs Ls + 1 times, each time with its
  // 2(n-1) hop latencies; t_dp holds them once, this is the other Ls times.
  const bool bucketed_dcn = p.data > 1 && dp_g.dcn_n > 1 && !dp_g.flat_dcn;
  const double bucket_dcn_latency = bucketed_dcn ? Ls * 2 * (dp_g.dcn_n - 1) * dp_g.dcn_latency : 0;
  if (p.serial_collectives) {
    // No overlap (Plan.serial_collectives, session 27 III): the data all-reduce is on the critical
    // path whole, its buckets' DCN latencies with it.
    r.exposed_dp_s = t_dp + bucket_dcn_latency;
  } else if (!p.grad_reduce_after_backward && bucketed_dcn) {
    // Several slices (session 23): the gradients are reduced layer by layer as the backward pass
    // produces them (one bucket per layer of the stage + one for the embedding; their DCN hop
    // latencies: bucket_dcn_latency above). The last bucket (the first layer's gradients and the
    // input embedding's) is ready only when the backward pass ends: its DCN phase cannot hide
    // under it. The in-slice (ICI) phases keep hiding as on one slice.
    AxisGroup ici_only = dp_g;
    ici_only.dcn_n = 1;
    const double n_dcn = dp_g.dcn_n;
    const double tail_dense = (L0 * k0.p_dense + L1 * k1.p_dense) / Ls + V * d;  // a mean layer + the embedding
    const double tail_expert = stage_expert_params / Ls;
    const double t_tail = DataAllReduce(dp_g, tail_dense, tail_expert) - DataAllReduce(ici_only, tail_dense, tail_expert);
    const double t_all = t_dp + bucket_dcn_latency;
    r.exposed_dp_s = std::max(0.0, t_all - t_tail - last_bwd) + t_tail;
    if (e.dcn_sync_exposed()) {
      // Per-slice synchronisation (session 26; the shape calibration sets it): the slices
      // all-reduce the gradients over DCN once per step, after the backward pass, not overlapped
      // with it: a ring over the n slices on the gradient shard each chip holds (its dense fsdp
      // shard, + its expert shard when the data all-reduce reduces experts), each chip over its
      // own DCN share at the catalogue's per-chip DCN bandwidth (the notes' NIC rates, no fitted
      // efficiency): 2(n-1)/n · S / B_dcn + 2(n-1)·α_dcn. The in-slice (ICI) phases keep hiding
      // under the backward pass. docs/perf_model.md, session 26.
      const double t_ici = DataAllReduce(ici_only, stage_dense_params, stage_expert_params);
      const double shard = DenseGradBytes(stage_dense_params) +
                           (ReducesExperts(stage_expert_params) ? ExpertGradBytes(stage_expert_params) : 0);
      const double t_sync = 2 * (n_dcn - 1) / n_dcn * shard / dp_g.dcn_bw + 2 * (n_dcn - 1) * dp_g.dcn_latency;
      r.exposed_dp_s = std::max(0.0, t_ici - last_bwd) + t_sync;
    }
    // Opt-in (Efficiency.dcn_hop_sync_s, 0 in the committed calibrations): every step of every
    // bucket's ring waits on the critical path.
    if (e.dcn_hop_sync_s() > 0) r.exposed_dp_s += (Ls + 1) * 2 * (n_dcn - 1) * e.dcn_hop_sync_s();
  } else if (p.grad_reduce_after_backward && e.dcn_hop_sync_s() > 0 && p.data > 1 && dp_g.dcn_n > 1 &&
             !dp_g.flat_dcn) {
    r.exposed_dp_s += 2 * (dp_g.dcn_n - 1) * e.dcn_hop_sync_s();  // one ring after the backward pass
  }
  r.optimizer_s = t_opt;
  r.step_s = M * t_mb + r.bubble_s + r.exposed_dp_s + t_opt;
}

// FLOPs (whole job per step): 6·(active matmul params)·tokens + attention; MFU and HFU.
PLACERL_STEP_INLINE void StepModel::Flops(StepBreakdown& r, int num_devices, int num_chips) const {
  // Per sub-layer type: its layers in the model × its active params per layer (variant).
  const double tokens = p.global_batch * S, L = m.layers();
  const double act_moe = uniform ? k1.act_moe : k0.act_moe;
  const double active_layer_params = L * k0.act_attn + L * w_dense * k0.act_ffn + L * w_moe * act_moe;
  const double attn_all = k0.attn_per_token * L;  // forward, non-causal count
  const double active_ffn_in_params = L * w_dense * k0.act_ffn_in + L * w_moe * (uniform ? k1.act_moe_in : k0.act_moe_in);
  r.model_flops = tokens * (6 * (active_layer_params + V * d) + 3 * attn_all);
  double recompute_flops = 0;
  if (p.remat == REMAT_FULL) recompute_flops = tokens * (2 * active_layer_params + attn_all);
  if (p.remat == REMAT_MINIMAL || p.remat == REMAT_SELECTIVE) recompute_flops = tokens * attn_all;
  if (p.remat == REMAT_SAVE_QKVO) recompute_flops = tokens * (2 * active_ffn_in_params + attn_all);
  r.hw_flops = r.model_flops + recompute_flops;
  r.tokens_per_s = tokens / r.step_s;
  const double peak_job = rates.peak_flops * num_devices;
  r.mfu = r.model_flops / r.step_s / peak_job;
  r.hfu = r.hw_flops / r.step_s / peak_job;
  r.model_tflops_per_chip = r.model_flops / r.step_s / num_chips / 1e12;
  r.hw_tflops_per_chip = r.hw_flops / r.step_s / num_chips / 1e12;
}

// HBM per device (first stage: most microbatches in flight).
PLACERL_STEP_INLINE void StepModel::Memory(StepBreakdown& r, const Chip& chip) const {
  r.hbm_params = dev_params * pb;
  r.hbm_grads = dev_params * gb;
  if (p.update_consumes_gradients && M == 1) {
    // Each weight's update runs as soon as its gradient exists: at most one layer's (block's,
    // or the embedding's) gradients are live at once.
    const double layer0 = k0.p_dense + k0.p_experts / p.expert;
    const double layer1 = L1 > 0 ? k1.p_dense + k1.p_experts / p.expert : 0.0;
    r.hbm_grads = std::max(std::max(layer0, layer1), V * d) / (tp * p.fsdp) * gb;
  }
  r.hbm_optimizer = opt_params * OptimizerBytesPerParam(p.optimizer, pb, d, m.d_ff(), sb);
  // Korthikanti et al. 2022 (bytes per token in fp16 units of ab/2): 34·d per token and layer
  // for f = 4d, i.e. attention 8·d sharded + 5·H·S scores (unless flash attention), FFN 4·d_ff
  // (× 1.5 gated, × routed slots for a block's MoE), and 5·d per sub-layer (layer-norm inputs,
  // dropout masks) replicated across the tensor group unless sequence parallelism shards them.
  // The first variant's (a uniform MoE layer's equals the dense layer's).
  // Without dropout (model dropout=false) three of Korthikanti's terms are never made: of the
  // 5·H·S score units per attention the mask (1) and the dropped-out scores (2) — ·V reads the
  // softmax output (2), which stays — and of the 5·d replicated units per sub-layer (per layer
  // norm: the parallel block has one) the mask of the dropout after it (1).
  const double tp_rest = p.no_sequence_parallel ? 1 : tp;
  const bool dropout = !m.has_dropout();  // NormalizedModel: set means off
  const double norm_units = dropout ? k0.norm_units : k0.norm_units / 5 * 4;
  const double score_units = dropout ? k0.score_units : k0.score_units / 5 * 2;
  const double per_token_none = k0.act_sharded * ab / 2 / tp + norm_units * d * ab / 2 / tp_rest +
                                (m.flash_attention() ? 0 : score_units * S * ab / 2 / tp);
  double per_token_layer = per_token_none;
  // Minimal remat (MaxText's checkpoint_dots_with_no_batch_dims: every matmul output is saveable,
  // but JAX keeps only the saveable values the backward pass reads, session 51) keeps q, k, v and
  // the FFN's input projections (read by the attention and activation backward passes), the
  // layer's input, and each sub-layer's output projection that feeds the next sub-layer's norm —
  // not the last one's (the next layer's input) nor, in a parallel block, either (they are only
  // added: an add's backward reads nothing). Full remat keeps the layer's input.
  if (p.remat == REMAT_MINIMAL) per_token_layer = (k0.min_units + k0.min_stream * d) * ab / tp;
  if (p.remat == REMAT_FULL) per_token_layer = d * ab / tp;
  // Selective remat keeps everything but the attention scores (Korthikanti et al.'s 34·d).
  if (p.remat == REMAT_SELECTIVE) per_token_layer = k0.act_sharded * ab / 2 / tp + norm_units * d * ab / 2 / tp_rest;
  // Save-QKVO keeps q, k, v, the context and the out-projection's output + the layer's input.
  if (p.remat == REMAT_SAVE_QKVO) per_token_layer = (k0.qkvo_units + d) * ab / tp;
  // 1F1B: the first stage holds min(K, M) microbatches; the interleaved schedule
  // (v > 1) a factor 1 + (K−1)/(K·v) more (Korthikanti et al. 2022, §4.2.3).
  // GPipe: all M forwards run before the first backward, so M microbatches are in flight.
  const double v = std::max(1, p.interleave);
  const double inflight = K == 1                        ? 1
                          : p.schedule == SCHEDULE_GPIPE ? M
                                                         : std::min(K, M) * (v > 1 ? 1 + (K - 1) / (K * v) : 1);
  // + the layer being recomputed in the backward pass: what remat did not save of it (the
  // saved part is already counted above) + fp32 logits and their gradient.
  r.hbm_activations = Ls * t * per_token_layer * inflight +
                      (p.remat != REMAT_NONE ? t * std::max(0.0, per_token_none - per_token_layer) : 0) +
                      2 * t * V / tp * 4;
  r.hbm_total = r.hbm_params + r.hbm_grads + r.hbm_optimizer + r.hbm_activations;
  r.hbm_capacity = chip.hbm_bytes() / std::max(1, chip.devices_per_chip()) * e.hbm_usable();
  r.oom = r.hbm_total > r.hbm_capacity;
}

}  // namespace

// One implementation for both model shapes. A block model is one layer variant, its block,
// repeated `layers` times. A uniform model is the variant [attention, dense FFN] and, with
// experts, the MoE layer (the same with the FFN swapped for the MoE FFN) for its moe_every-th
// layers, a fraction of every stage. Every sum runs in the order the uniform layer's
// expressions were first written in (attention, then FFN, then the layer norms and elementwise
// work as one op each), so that uniform models keep their numbers bit for bit and a block
// [attention, dense_ffn] reproduces the uniform model (tests/cost_models/tpu/block_model_test.cc,
// tests/data/perf/uniform_golden.txt).
StepBreakdown TrainingEvaluator::Evaluate(const PlanC& p) const {
  // One named result filled in place (returned without a copy: with the early returns of
  // copies the whole breakdown was copied out on every call).
  StepBreakdown r;
  EvaluateInto(p, r);
  return r;
}

const char* TrainingEvaluator::InvalidPlanReason(const PlanC& p, int* microbatches) const {
  const TransformerModel& m = model_;
  const bool uniform = block_.empty();
  if (p.data < 1 || p.fsdp < 1 || p.tensor < 1 || p.pipeline < 1 || p.expert < 1) return "degrees must be >= 1";
  if (double(p.data) * p.fsdp * p.tensor * p.pipeline != num_devices_) return "data*fsdp*tensor*pipeline != devices";
  const int tx = std::max(1, p.tensor_x), ty = p.tensor / tx;
  if (uniform) {
    if (m.heads() % p.tensor != 0 && tx == 1) return "tensor does not divide heads";
    if (tx > 1) {
      if (p.tensor % tx != 0) return "tensor_x does not divide tensor";
      if (m.heads() % ty != 0) return "tensor/tensor_x does not divide heads";
      if (m.d_model() % tx != 0) return "tensor_x does not divide d_model";
      if (has_experts_) return "2-D tensor parallelism is modelled for dense models only";
    }
  } else {
    if (tx > 1) {
      if (p.tensor % tx != 0) return "tensor_x does not divide tensor";
      if (m.d_model() % tx != 0) return "tensor_x does not divide d_model";
      if (has_experts_) return "2-D tensor parallelism is modelled for dense models only";
    }
    for (const SubLayerC& s : block_) {
      if (s.type == ATTENTION && int(s.heads) % ty != 0)
        return tx > 1 ? "tensor/tensor_x does not divide a sub-layer's heads" : "tensor does not divide a sub-layer's heads";
      if (s.type == MOE_FFN && p.expert > 1 && int(s.experts) % p.expert != 0)
        return "expert must divide data*fsdp and num_experts";
    }
  }
  if (p.pipeline > m.layers()) return "pipeline > layers";
  if (p.interleave > 1 && (p.pipeline == 1 || m.layers() % (static_cast<long long>(p.pipeline) * p.interleave) != 0))
    return "interleave needs pipeline > 1 and layers divisible by pipeline*interleave";
  if (p.interleave > 1 && p.schedule == SCHEDULE_GPIPE) return "interleave needs the 1F1B schedule";
  for (int bits : {p.weight_bits, p.grad_bits, p.optimizer_bits, p.activation_bits})
    if (bits != 0 && (bits < 2 || bits > 32)) return "eXmY bits must be 0 (the dtype's) or 2..32";
  if (!has_experts_ && p.expert > 1) return "expert > 1 on a dense model";
  if (p.expert > 1 && ((p.data * p.fsdp) % p.expert != 0 || (uniform && m.num_experts() % p.expert != 0)))
    return "expert must divide data*fsdp and num_experts";
  const int bs = p.data * p.fsdp;
  if (p.global_batch < bs) return "global batch < data*fsdp";
  const int K = p.pipeline;
  const double seqs_per_shard = p.global_batch / bs;
  int M = p.microbatches;
  if (M <= 0) M = K == 1 ? 1 : int(std::min(4.0 * K, std::floor(seqs_per_shard)));
  if (M < 1 || seqs_per_shard / M < 1) return "fewer than one sequence per microbatch";
  *microbatches = M;
  return nullptr;
}

void TrainingEvaluator::EvaluateInto(const PlanC& p, StepBreakdown& r) const {
  int M = 0;
  if (const char* why = InvalidPlanReason(p, &M)) {
    r.valid = false;
    r.invalid_reason = why;
    return;
  }
  r.microbatches = M;
  const Efficiency& e = eff_;
  // The usual compute dtype's rates were made once by the constructor.
  DeviceRates other_rates;
  const bool cached = has_bf16_rates_ && p.compute_dtype == BF16;
  if (!cached) other_rates = MakeDeviceRates(chip_, p.compute_dtype, e);
  const DeviceRates& rates = cached ? bf16_rates_ : other_rates;
  const int bs = p.data * p.fsdp;
  StepModel s(model_, p, rates, e, block_.empty(), M, p.global_batch / bs);
  MapPlanAxes(p, s.ax, &s.tp_g);
  if (p.expert > 1) {
    AxisGroup tmp[4];
    const int es[4] = {p.tensor, p.expert, 1, 1};
    MapAxes(es, tmp);
    s.ep_g = tmp[1];
  }
  s.bw_eff = e.collective_bw();
  s.floor = e.latency_floor_s();
  s.t_ar = s.tp > 1 && s.tx == 1 ? s.coll(Collective::kAllReduce, s.tp_g, s.t * s.d * s.ab) : 0;
  s.SumVariants(uniform_layer_, block_, has_experts_);
  s.StepTime(r);
  s.Flops(r, num_devices_, num_chips_);
  s.Memory(r, chip_);
  r.valid = true;
}

InferenceResult TrainingEvaluator::EvaluateInference(const PlanC& p, const InferenceQuery& q) const {
  InferenceResult r;
  auto invalid = [&r](const char* why) {
    r.valid = false;
    r.invalid_reason = why;
    return r;
  };
  const TransformerModel& m = model_;
  if (p.data != 1 || p.fsdp != 1 || p.pipeline != 1 || p.expert != 1) return invalid("inference: tensor layouts only");
  if (p.tensor != num_devices_) return invalid("inference: tensor must equal the mesh's devices");
  if (m.num_experts() > 0) return invalid("inference: dense models only");
  if (m.block_size() > 0) return invalid("inference: uniform models only");
  const int tx = std::max(1, p.tensor_x), ty = p.tensor / tx;
  if (q.weight_gathered == 0 && (p.tensor % tx != 0 || m.heads() % ty != 0 || m.d_model() % tx != 0))
    return invalid("inference: tensor_x must divide tensor and d_model; tensor/tensor_x the heads");
  if (!(q.batch >= 1) || !(q.prompt >= 1) || !(q.generate >= 0))
    return invalid("inference: batch and prompt must be >= 1, generate >= 0");
  const Efficiency& e = eff_;
  const DeviceRates rates = MakeDeviceRates(chip_, p.compute_dtype, e);
  const double ab = BytesPerElement(p.compute_dtype), wb = BytesPerElement(q.weight_dtype);
  const double d = m.d_model(), f = m.d_ff(), H = m.heads(), KV = m.kv_heads(), dh = m.head_dim();
  const double V = m.vocab(), tp = p.tensor, g = m.gated_ffn() ? 2 : 1, L = m.layers();
  AxisGroup ax[5], tp_g;
  MapPlanAxes(p, ax, &tp_g);
  const AxisGroup &tpy_g = ax[0], &tpx_g = ax[1];
  auto coll = [&](Collective c, const AxisGroup& grp, double bytes) { return InferenceCollectiveTime(c, grp, bytes, e); };
  // The share of the collectives hidden under the layer's compute: none with the plan's
  // serial_tensor_collectives (each collective waits for the matmul before it, the next matmul
  // for it), else tp_overlap as in training.
  const double overlap = p.serial_tensor_collectives ? 0.0 : e.tp_overlap();
  auto mm = [&](double mm_m, double k, double n) {
    const double flops = MatmulFlops(mm_m, k, n), bytes = (mm_m * k + mm_m * n) * ab + k * n * wb;
    if (!rates.shape) return MatmulOpTime(rates, std::min({mm_m, k, n}), flops, bytes);
    return ShapedMatmulTime(rates, MatmulShapeFactor(rates, mm_m, k, n), flops, bytes);
  };
  const double kv_shard = q.batch_sharded_kv ? std::min(tp, q.batch) : std::min(tp, KV);
  const double norm_units = m.parallel_block() ? 5 : 10;  // layer-norm traffic per token, × d
  // Weight-gathered layouts (Pope et al.): N = the devices of the first k mesh axes gather each
  // layer's weights; the tokens are split N-way; the other R = n/N devices keep 1-D weight-
  // stationary shards (heads and d_ff R-way, an all-reduce of [t/N, d] per sub-layer).
  const int wg = q.weight_gathered;
  if (wg < 0 || wg > 3) return invalid("inference: weight_gathered must be 0 (stationary) or 1..3 (X, XY, XYZ)");
  double N = 1;
  AxisGroup gather_g, rest_g;
  if (wg > 0) {
    if (wg > int(mesh_dims_.size())) return invalid("inference: weight-gathered over more axes than the mesh has");
    if (tx > 1) return invalid("inference: weight-gathered layouts take tensor_x = 1");
    if (topo_.failed_chips() > 0) return invalid("inference: weight-gathered layouts need a mesh without failed chips");
    for (int i = 0; i < wg; ++i) N *= mesh_dims_[i];
    N *= std::max(1, chip_.devices_per_chip());
    if (N > tp) N = tp;
    const int R = int(tp / N);
    if (int(H) % R != 0 || int(f) % R != 0) return invalid("inference: the devices outside the gather group must divide heads and d_ff");
    const int sizes[4] = {int(N), R, 1, 1};
    AxisGroup groups[4];
    MapAxes(sizes, groups);
    gather_g = groups[0];
    rest_g = groups[1];
    r.gather_chips = int(N / std::max(1, chip_.devices_per_chip()));
  }
  const double layer_weights = d * (H + 2 * KV) * dh + H * dh * d + g * d * f + f * d;
  // One weight-gathered layer for a step of t tokens: compute on t/N tokens with weights R-way.
  auto wg_layer = [&](double t, double ctx, double* comm) {
    const double R = tp / N, tc = t / N;
    const double attn_flops = 4 * tc * ctx * H * dh / R;
    const double kv_bytes = q.batch * ctx * 2 * KV * dh * ab / (N * std::min(R, KV));
    const double compute =
        mm(tc, d, (H + 2 * KV) * dh / R) + mm(tc, H * dh / R, d) + mm(tc, d, f * g / R) + mm(tc, f / R, d) +
        AttentionCoreTime(rates, tc, ctx, dh, H / R, attn_flops, kv_bytes + 2 * tc * H * dh / R * ab) +
        OpTime(rates, OpKind::kNorm, tc * norm_units * d / R, tc * norm_units * d / R * ab) +
        OpTime(rates, OpKind::kElementwise, tc * (g + 1) * f / R, tc * (g + 1) * f / R * ab);
    // The layer's weights gathered over N (each device ends with 1/R of them), then the 1-D
    // stationary all-reduces of the [t/N, d] activations over the other R devices.
    double traffic = coll(Collective::kAllGather, gather_g, layer_weights / R * wb);
    if (R > 1) traffic += (m.parallel_block() ? 1 : 2) * coll(Collective::kAllReduce, rest_g, tc * d * ab);
    *comm = std::max(0.0, traffic - overlap * compute);
    return compute + *comm;
  };
  // One layer for a step of t tokens (all sequences), attention over `ctx` cached positions.
  auto layer = [&](double t, double ctx, double* comm) {
    if (wg > 0) return wg_layer(t, ctx, comm);
    const double attn_flops = 4 * t * ctx * H * dh / tp;
    const double kv_bytes = q.batch * ctx * 2 * KV * dh * ab / kv_shard;
    const double compute =
        mm(t, d, (H + 2 * KV) * dh / tp) + mm(t, H * dh / tp, d) + mm(t, d, f * g / tp) +
        mm(t, f / tp, d) + AttentionCoreTime(rates, t, ctx, dh, H / tp, attn_flops, kv_bytes + 2 * t * H * dh / tp * ab) +
        OpTime(rates, OpKind::kNorm, t * norm_units * d / tp, t * norm_units * d / tp * ab) +
        OpTime(rates, OpKind::kElementwise, t * (g + 1) * f / tp, t * (g + 1) * f / tp * ab);
    double traffic = TensorTrafficForward(m, p, t, ab, tp_g, tpy_g, tpx_g, e);
    if (q.batch_sharded_kv && p.tensor > 1)  // heads → batch and back around attention
      traffic += 2 * coll(Collective::kAllToAll, tp_g, t * H * dh * ab);
    *comm = std::max(0.0, traffic - overlap * compute);
    return compute + *comm;
  };
  const double logits = mm(q.batch, d, V / tp);
  double comm = 0;
  r.prefill_s = L * layer(q.batch * q.prompt, q.prompt / 2, &comm) + logits;  // causal: mean ctx S/2
  r.prefill_comm_s = L * comm;
  if (q.generate > 0) {
    const double step = L * layer(q.batch, q.prompt + q.generate / 2, &comm) + logits;
    r.decode_step_s = step;
    r.decode_s = q.generate * step;
    r.decode_comm_s = q.generate * L * comm;
  }
  const double n_params = L * (d * (H + 2 * KV) * dh + H * dh * d + g * d * f + f * d) + V * d;
  const double peak = rates.peak_flops * num_devices_;
  r.prefill_mfu = 2 * n_params * q.batch * q.prompt / (r.prefill_s * peak);
  if (q.generate > 0) r.decode_mfu = 2 * n_params * q.batch * q.generate / (r.decode_s * peak);
  r.hbm_weights = n_params * wb / tp;
  r.hbm_kv = L * q.batch * (q.prompt + q.generate) * 2 * KV * dh * ab /
             (wg > 0 ? N * std::min(tp / N, KV) : kv_shard);
  if (wg > 0) r.hbm_weights += layer_weights * wb / (tp / N) - layer_weights * wb / tp;  // one gathered layer
  r.hbm_total = r.hbm_weights + r.hbm_kv;
  r.hbm_capacity = chip_.hbm_bytes() / std::max(1, chip_.devices_per_chip()) * e.hbm_usable();
  r.oom = r.hbm_total > r.hbm_capacity;
  r.valid = true;
  return r;
}

std::string FormatInference(const InferenceResult& r) {
  if (!r.valid) return std::string("invalid: ") + r.invalid_reason;
  char buf[800];
  std::snprintf(buf, sizeof buf,
                "prefill          %.4f s (exposed tensor comm %.4f s), MFU %.1f %%\n"
                "decode           %.4f s = %.2f ms per token (exposed comm %.4f s), MFU %.1f %%\n"
                "HBM per device   %.2f GiB of %.2f GiB (weights %.2f, KV cache %.2f)%s\n",
                r.prefill_s, r.prefill_comm_s, 100 * r.prefill_mfu, r.decode_s, 1e3 * r.decode_step_s,
                r.decode_comm_s, 100 * r.decode_mfu, r.hbm_total / 1073741824.0,
                r.hbm_capacity / 1073741824.0, r.hbm_weights / 1073741824.0, r.hbm_kv / 1073741824.0,
                r.oom ? "  ** OOM **" : "");
  return buf;
}

size_t TrainingEvaluatorSizeInLibrary() { return sizeof(TrainingEvaluator); }
size_t DeviceRatesSizeInLibrary() { return sizeof(DeviceRates); }

std::string FormatBreakdown(const StepBreakdown& b) {
  if (!b.valid) return std::string("invalid plan: ") + b.invalid_reason;
  char buf[1400];
  const double GiB = 1024.0 * 1024 * 1024;
  std::snprintf(buf, sizeof buf,
                "step time        %.4f s  (microbatches %d)\n"
                "  compute        %.4f s\n  exposed tensor %.4f s\n  exposed fsdp   %.4f s\n"
                "  exposed data   %.4f s\n  exposed expert %.4f s\n  pipeline comm  %.4f s\n"
                "  bubble         %.4f s\n  optimizer      %.4f s\n"
                "tokens/s         %.4g\nMFU              %.2f %%\nHFU              %.2f %%\n"
                "TFLOP/s per chip %.1f (model), %.1f (hardware)\n"
                "HBM per device   %.2f GiB of %.2f GiB%s\n  params %.2f, grads %.2f, optimizer "
                "%.2f, activations %.2f GiB\n",
                b.step_s, b.microbatches, b.compute_s, b.exposed_tp_s, b.exposed_fsdp_s,
                b.exposed_dp_s, b.exposed_ep_s, b.pipeline_comm_s, b.bubble_s, b.optimizer_s,
                b.tokens_per_s, 100 * b.mfu, 100 * b.hfu, b.model_tflops_per_chip,
                b.hw_tflops_per_chip, b.hbm_total / GiB, b.hbm_capacity / GiB,
                b.oom ? "  ** OOM **" : "", b.hbm_params / GiB, b.hbm_grads / GiB,
                b.hbm_optimizer / GiB, b.hbm_activations / GiB);
  return buf;
}

}  // namespace placerl::perf
