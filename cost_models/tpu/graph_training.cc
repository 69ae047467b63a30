#include "cost_models/tpu/graph_training.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/collectives.h"
#include "cost_models/tpu/mesh.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/util/errors.h"

namespace placerl::perf {

namespace {
// Graphs made by AddTrainingOps (datasets/graphs/training_graph.h) carry the optimizer as
// "update/<op>" ops: their time is in the simulated step, their param_bytes are optimizer state
// (Adam m, v), not weights. The evaluators then add no update of their own.
bool IsUpdateOp(const graphs::ComputeGraph& g, int o) { return g.names[o].rfind("update/", 0) == 0; }
bool HasUpdateOps(const graphs::ComputeGraph& g) {
  for (int o = 0; o < g.num_ops(); ++o)
    if (IsUpdateOp(g, o)) return true;
  return false;
}
}  // namespace

GraphTrainingResult EvaluateGraphTraining(Simulator* sim, const graphs::ComputeGraph& graph,
                                          const std::vector<int>& placement, const SimConfig& sim_config,
                                          const GraphTrainingConfig& c) {
  if (c.replicas < 1) throw ConfigError("graph training: replicas must be >= 1");
  if (!(c.ring_bw > 0) || !std::isfinite(c.ring_bw)) throw ConfigError("graph training: ring bandwidth must be > 0");
  if (!(c.ring_hop_latency >= 0) || !(c.grad_bytes_per_param_byte >= 0) || !(c.optimizer_traffic >= 0))
    throw ConfigError("graph training: latency, gradient and optimizer factors must be >= 0");
  const SimResult& r = sim->Run(placement);
  GraphTrainingResult out;
  out.compute_s = r.makespan;
  out.oom = r.oom;
  const int nd = static_cast<int>(sim_config.devices.size());
  std::vector<double> params(nd, 0.0);
  const bool graph_updates = HasUpdateOps(graph);
  for (int o = 0; o < graph.num_ops(); ++o)
    if (!IsUpdateOp(graph, o)) params[placement[o]] += graph.param_bytes[o];
  out.grad_bytes.assign(nd, 0.0);
  const Ring ring{c.replicas, c.ring_bw, c.ring_hop_latency, c.bidirectional};
  for (int d = 0; d < nd; ++d) {
    out.grad_bytes[d] = params[d] * c.grad_bytes_per_param_byte;
    if (c.replicas > 1 && out.grad_bytes[d] > 0)
      out.allreduce_s = std::max(out.allreduce_s, RingTime(Collective::kAllReduce, ring, out.grad_bytes[d]));
    const DeviceRates& rates = sim_config.devices[d].rates;
    if (params[d] > 0 && !graph_updates)
      out.optimizer_s = std::max(out.optimizer_s, params[d] * c.optimizer_traffic / (rates.hbm_bw * rates.eff_memory));
  }
  out.step_s = out.compute_s + out.allreduce_s + out.optimizer_s;
  return out;
}

namespace {

// The K-stage cut described in graph_training.h, from per-op times.
std::vector<int> PipelineCut(const graphs::ComputeGraph& g, const std::vector<double>& op_s, int K) {
  const int n = g.num_ops();
  std::unordered_map<std::string, int> by_name;
  for (int o = 0; o < n; ++o) by_name[g.names[o]] = o;
  std::vector<int> grad_of(n, -1), forward;
  for (int o = 0; o < n; ++o) {
    if (g.names[o].rfind("grad/", 0) != 0) continue;
    const auto it = by_name.find(g.names[o].substr(5));
    if (it != by_name.end()) grad_of[it->second] = o;
  }
  double total = 0;
  for (int o : g.topo_order) {
    const bool is_grad = g.names[o].rfind("grad/", 0) == 0 && by_name.count(g.names[o].substr(5));
    if (is_grad) continue;
    forward.push_back(o);
    total += op_s[o] + (grad_of[o] >= 0 ? op_s[grad_of[o]] : 0);
  }
  std::vector<int> stage(n, 0);
  double acc = 0;
  int k = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    const int o = forward[i];
    const double w = op_s[o] + (grad_of[o] >= 0 ? op_s[grad_of[o]] : 0);
    // Move to the next stage once this one holds its share (keep ≥ 1 op for each later stage).
    if (k < K - 1 && acc + 0.5 * w > total * (k + 1) / K &&
        forward.size() - i >= static_cast<size_t>(K - 1 - k))
      ++k;
    acc += w;
    stage[o] = k;
    if (grad_of[o] >= 0) stage[grad_of[o]] = k;
  }
  return stage;
}

}  // namespace

GraphRunPlan GraphRunPlanFromPlan(const Plan& plan, double examples_per_replica) {
  const PlanC p = PlanFromProto(plan);
  if (p.fsdp > 1 || p.tensor > 1 || p.expert > 1)
    throw ConfigError("plan: a --graph run is data parallel and pipelined only (no fsdp/tensor/expert)");
  GraphRunPlan gp;
  gp.pipeline = p.pipeline;
  gp.microbatches = std::max(1, p.microbatches);
  gp.compute_dtype = p.compute_dtype;
  gp.param_dtype = p.param_dtype;
  gp.grad_dtype = p.grad_dtype;
  gp.optimizer = p.optimizer;
  gp.shard_optimizer = p.shard_optimizer;
  gp.grad_reduce_after_backward = p.grad_reduce_after_backward;
  gp.examples_per_replica = examples_per_replica;
  return gp;
}

GraphRunResult EvaluateGraphOnMesh(const graphs::ComputeGraph& g, const Mesh& mesh,
                                   const Catalog& shaped_or_not, const GraphRunPlan& plan) {
  // Graph ops keep the one-constant op model and its calibration (no shape factor for them).
  const Catalog catalog = WithShapeModel(shaped_or_not, false);
  const Chip& chip = FindChip(catalog, mesh.chip());
  const Efficiency eff = EffectiveEfficiency(catalog, chip);
  const MeshTopology topo(mesh, chip);
  const int K = plan.pipeline, M = plan.microbatches;
  if (K < 1 || M < 1) throw ConfigError("graph run: pipeline and microbatches must be >= 1");
  if (K > g.num_ops()) throw ConfigError("graph run: more pipeline stages than ops");
  const int k = K > 1 ? K : plan.devices_per_replica;
  if (k < 1 || topo.num_devices() % k != 0)
    throw ConfigError("graph run: devices_per_replica (" + std::to_string(k) +
                      ") must divide the mesh's " + std::to_string(topo.num_devices()) + " devices");
  std::vector<int> placement = plan.placement;
  if (placement.empty()) placement.assign(g.num_ops(), 0);
  SimConfig cfg;
  if (K > 1 && plan.placement.empty()) {  // cut by the op times of a one-device run
    SimConfig one;
    one.devices.resize(1);
    one.devices[0].rates = MakeDeviceRates(chip, plan.compute_dtype, eff);
    Simulator sim1(g, one);
    const SimResult& s1 = sim1.Run(placement);
    std::vector<double> op_s(g.num_ops());
    for (int o = 0; o < g.num_ops(); ++o) op_s[o] = s1.op_end[o] - s1.op_start[o];
    placement = PipelineCut(g, op_s, K);
  }
  if (static_cast<int>(placement.size()) != g.num_ops())
    throw ConfigError("graph run: placement has " + std::to_string(placement.size()) +
                      " entries for " + std::to_string(g.num_ops()) + " ops");
  for (int d : placement)
    if (d < 0 || d >= k) throw ConfigError("graph run: placement device out of range");

  GraphRunResult r;
  r.replicas = topo.num_devices() / k;
  r.devices = topo.num_devices();
  r.chips = topo.num_chips();
  r.hbm_capacity = chip.hbm_bytes() / std::max(1, chip.devices_per_chip()) * eff.hbm_usable();

  // One replica: list-scheduled on its k devices, one ICI link between them.
  std::vector<SimDevice> devs(k);
  for (SimDevice& d : devs) {
    d.rates = MakeDeviceRates(chip, plan.compute_dtype, eff);
    d.memory_capacity = std::numeric_limits<double>::infinity();  // judged below, with grads
  }
  cfg.devices = devs;
  cfg.link.latency_s = chip.ici().hop_latency_s();
  cfg.link.bandwidth = chip.ici().link_bw_one_way() * eff.collective_bw();
  Simulator sim(g, cfg);
  const SimResult& s = sim.Run(placement);
  r.compute_s = M * s.makespan;  // without pipelining, M microbatches = gradient accumulation
  double act_factor = 1;  // microbatches whose activations are live at once
  if (K > 1) {
    // GPipe: per microbatch each stage runs its ops back to back and sends its activations on.
    std::vector<double> stage_s(K, 0.0), send_bytes(K, 0.0);
    for (int o = 0; o < g.num_ops(); ++o) {
      stage_s[placement[o]] += s.op_end[o] - s.op_start[o];
      for (int e = g.out_offsets[o]; e < g.out_offsets[o + 1]; ++e)
        if (placement[g.out_targets[e]] != placement[o]) {
          send_bytes[placement[o]] += g.output_bytes[o];
          break;  // one copy per tensor and stage pair is enough for the bound
        }
    }
    double t_mb = 0, send_max = 0;
    for (int st = 0; st < K; ++st) {
      const double send = send_bytes[st] > 0 ? cfg.link.latency_s + send_bytes[st] / cfg.link.bandwidth : 0;
      t_mb = std::max(t_mb, stage_s[st] + send);
      send_max = std::max(send_max, send);
    }
    r.compute_s = M * (t_mb - send_max);
    r.pipeline_comm_s = M * send_max;
    r.bubble_s = (K - 1) * t_mb;
    r.stage_of_op = placement;
    act_factor = std::min(K, M);
  }

  // Per device of the replica: weights, backward time (for overlap).
  std::vector<double> param_bytes(k, 0.0), bwd_s(k, 0.0), graph_opt_state(k, 0.0);
  const bool graph_updates = HasUpdateOps(g);
  double flops = 0;
  for (int o = 0; o < g.num_ops(); ++o) {
    (IsUpdateOp(g, o) ? graph_opt_state : param_bytes)[placement[o]] += g.param_bytes[o];
    flops += g.flops[o];
    if (g.names[o].rfind("grad/", 0) == 0) bwd_s[placement[o]] += s.op_end[o] - s.op_start[o];
  }
  r.flops_per_step = flops * r.replicas * M;

  const int sizes[2] = {k, r.replicas};
  AxisGroup groups[2];
  topo.MapAxes(sizes, 2, groups);
  const AxisGroup& dp = groups[1];
  const double pb = BytesPerElement(plan.param_dtype), gb = BytesPerElement(plan.grad_dtype);
  const auto rates = MakeDeviceRates(chip, plan.compute_dtype, eff);
  double hbm = 0;
  for (int d = 0; d < k; ++d) {
    const double elems = param_bytes[d] / pb;
    const double grads = elems * gb;
    double comm = 0, update_elems = elems;
    if (r.replicas > 1 && elems > 0) {
      auto coll = [&](Collective c, double bytes) {
        return CollectiveTime(c, dp, bytes, eff.collective_bw(), eff.latency_floor_s(), eff.dcn_bw());
      };
      if (plan.shard_optimizer) {
        comm = coll(Collective::kReduceScatter, grads) + coll(Collective::kAllGather, elems * pb);
        update_elems = elems / r.replicas;
      } else {
        comm = coll(Collective::kAllReduce, grads);
      }
    }
    const double update = graph_updates ? 0.0  // the graph's update/ ops ran inside the step
                                        : OpTime(rates, OpKind::kElementwise, 0,
                                                 update_elems * OptimizerTrafficPerParam(plan.optimizer, pb, gb));
    const double exposed = plan.grad_reduce_after_backward ? comm : std::max(0.0, comm - bwd_s[d]);
    r.dp_comm_s = std::max(r.dp_comm_s, comm);
    r.exposed_dp_s = std::max(r.exposed_dp_s, exposed);
    r.optimizer_s = std::max(r.optimizer_s, update);
    const double opt_state =
        graph_updates ? graph_opt_state[d]
                      : (plan.shard_optimizer ? elems / r.replicas : elems) * OptimizerBytesPerParam(plan.optimizer, pb, 1e9, 1e9);
    const double activations = std::max(0.0, s.peak_memory[d] - param_bytes[d] - graph_opt_state[d]);
    const double total = param_bytes[d] + act_factor * activations + grads + opt_state;
    if (total > hbm) {
      hbm = total;
      r.hbm_params = param_bytes[d];
      r.hbm_grads = grads;
      r.hbm_optimizer = opt_state;
      r.hbm_activations = act_factor * activations;
    }
  }
  r.hbm_per_device = hbm;
  r.oom = hbm > r.hbm_capacity;
  r.step_s = r.compute_s + r.pipeline_comm_s + r.bubble_s + r.exposed_dp_s + r.optimizer_s;
  if (r.step_s > 0) {
    r.examples_per_s = plan.examples_per_replica * M * r.replicas / r.step_s;
    r.mfu = r.flops_per_step / (r.step_s * r.devices * rates.peak_flops);
  }
  return r;
}

}  // namespace placerl::perf
