#include "cost_models/tpu/graph_training.h"

#include <algorithm>
#include <cmath>

#include "cost_models/tpu/collectives.h"
#include "datasets/util/errors.h"

namespace placerl::perf {

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
  for (int o = 0; o < graph.num_ops(); ++o) params[placement[o]] += graph.param_bytes[o];
  out.grad_bytes.assign(nd, 0.0);
  const Ring ring{c.replicas, c.ring_bw, c.ring_hop_latency, c.bidirectional};
  for (int d = 0; d < nd; ++d) {
    out.grad_bytes[d] = params[d] * c.grad_bytes_per_param_byte;
    if (c.replicas > 1 && out.grad_bytes[d] > 0)
      out.allreduce_s = std::max(out.allreduce_s, RingTime(Collective::kAllReduce, ring, out.grad_bytes[d]));
    const DeviceRates& rates = sim_config.devices[d].rates;
    if (params[d] > 0)
      out.optimizer_s = std::max(out.optimizer_s, params[d] * c.optimizer_traffic / (rates.hbm_bw * rates.eff_memory));
  }
  out.step_s = out.compute_s + out.allreduce_s + out.optimizer_s;
  return out;
}

}  // namespace placerl::perf
