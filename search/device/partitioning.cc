// METIS and Scotch k-way baselines: partition the symmetrised graph of co-location groups
// (contracting a group into one vertex keeps it on one device). Vertex weight = the group's
// mean compute time, edge weight = bytes between the groups; both are scaled into integers
// whose sums stay below 2^31 (Debian's METIS idx_t and Scotch's SCOTCH_Num are 32-bit).
// Target part sizes ∝ device speed (1 / the graph's total time on the device).
#include <metis.h>

#include <cstdint>
#include <cstdio>
// scotch.h uses FILE and int types without including their headers.
#include <scotch/scotch.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "datasets/util/errors.h"
#include "search/device/baseline_common.h"
#include "search/device/baselines.h"

namespace placerl::search {
namespace {

using device_internal::PlacementContext;

constexpr double kWeightSum = 1 << 30;  // headroom below 2^31 for the rounding up to 1

// The contracted, symmetrised group graph in CSR with integer weights.
struct GroupGraph {
  std::vector<int32_t> xadj, adjncy, vwgt, adjwgt;
  std::vector<double> speed;  // per device, normalised to sum 1
};

GroupGraph BuildGroupGraph(const PlacementContext& ctx) {
  const graphs::ComputeGraph& g = ctx.g;
  const int ng = static_cast<int>(ctx.group_ops.size());
  GroupGraph gg;
  std::vector<double> vw(ng, 0);
  for (int i = 0; i < ctx.num_ops; ++i) vw[g.coloc_group[i]] += ctx.mean_time[i];
  std::vector<std::tuple<int, int, double>> arcs;  // both directions
  arcs.reserve(2 * static_cast<size_t>(g.num_edges()));
  for (int i = 0; i < ctx.num_ops; ++i) {
    for (int e = g.out_offsets[i]; e < g.out_offsets[i + 1]; ++e) {
      const int a = g.coloc_group[i], b = g.coloc_group[g.out_targets[e]];
      if (a == b) continue;
      arcs.emplace_back(a, b, g.output_bytes[i]);
      arcs.emplace_back(b, a, g.output_bytes[i]);
    }
  }
  std::sort(arcs.begin(), arcs.end());
  // Merge parallel arcs.
  std::vector<std::tuple<int, int, double>> merged;
  for (const auto& arc : arcs) {
    if (!merged.empty() && std::get<0>(merged.back()) == std::get<0>(arc) &&
        std::get<1>(merged.back()) == std::get<1>(arc))
      std::get<2>(merged.back()) += std::get<2>(arc);
    else
      merged.push_back(arc);
  }
  double v_total = 0, e_total = 0;
  for (double w : vw) v_total += w;
  for (const auto& arc : merged) e_total += std::get<2>(arc);
  const double v_scale = v_total > 0 ? kWeightSum / v_total : 0;
  const double e_scale = e_total > 0 ? kWeightSum / e_total : 0;
  gg.vwgt.resize(ng);
  for (int v = 0; v < ng; ++v)
    gg.vwgt[v] = static_cast<int32_t>(std::max(1.0, std::floor(vw[v] * v_scale)));
  gg.xadj.assign(ng + 1, 0);
  for (const auto& arc : merged) {
    ++gg.xadj[std::get<0>(arc) + 1];
    gg.adjncy.push_back(std::get<1>(arc));
    gg.adjwgt.push_back(
        static_cast<int32_t>(std::max(1.0, std::floor(std::get<2>(arc) * e_scale))));
  }
  for (int v = 0; v < ng; ++v) gg.xadj[v + 1] += gg.xadj[v];
  gg.speed.resize(ctx.num_devices);
  double speed_total = 0;
  for (int d = 0; d < ctx.num_devices; ++d) {
    double t = 0;
    for (int i = 0; i < ctx.num_ops; ++i) t += ctx.Time(i, d);
    gg.speed[d] = t > 0 ? 1.0 / t : 1.0;
    speed_total += gg.speed[d];
  }
  for (double& s : gg.speed) s /= speed_total;
  return gg;
}

std::vector<int> ToOps(const PlacementContext& ctx, const std::vector<int>& group_part) {
  std::vector<int> placement(ctx.num_ops);
  for (int i = 0; i < ctx.num_ops; ++i) placement[i] = group_part[ctx.g.coloc_group[i]];
  return placement;
}

void CheckImbalance(const char* method, double imbalance) {
  if (!(imbalance >= 0 && imbalance <= 10))
    throw ConfigError(std::string(method) + ": imbalance must be in [0, 10]");
}

}  // namespace

std::vector<int> PlaceMetis(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                            const MetisOptions& options) {
  CheckImbalance("METIS", options.imbalance);
  PlacementContext ctx(g, cfg);
  if (ctx.num_devices == 1) return std::vector<int>(g.num_ops(), 0);
  GroupGraph gg = BuildGroupGraph(ctx);
  idx_t nvtxs = static_cast<idx_t>(gg.vwgt.size()), ncon = 1, nparts = ctx.num_devices, objval = 0;
  std::vector<real_t> tpwgts(gg.speed.begin(), gg.speed.end());
  real_t ubvec = static_cast<real_t>(1 + options.imbalance);
  idx_t opts[METIS_NOPTIONS];
  METIS_SetDefaultOptions(opts);
  opts[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed & 0x7fffffff);
  opts[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(nvtxs, 0);
  if (gg.adjncy.empty()) {  // METIS needs a non-null adjacency even without edges
    gg.adjncy.push_back(0);
    gg.adjwgt.push_back(0);
  }
  const int rc = METIS_PartGraphKway(&nvtxs, &ncon, gg.xadj.data(), gg.adjncy.data(),
                                     gg.vwgt.data(), nullptr, gg.adjwgt.data(), &nparts,
                                     tpwgts.data(), &ubvec, opts, &objval, part.data());
  if (rc != METIS_OK)
    throw ConfigError("METIS: METIS_PartGraphKway failed (code " + std::to_string(rc) + ")");
  return ToOps(ctx, std::vector<int>(part.begin(), part.end()));
}

std::vector<int> PlaceScotch(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                             const ScotchOptions& options) {
  CheckImbalance("Scotch", options.imbalance);
  PlacementContext ctx(g, cfg);
  if (ctx.num_devices == 1) return std::vector<int>(g.num_ops(), 0);
  GroupGraph gg = BuildGroupGraph(ctx);
  static_assert(sizeof(SCOTCH_Num) == sizeof(int32_t), "Debian's default Scotch is 32-bit");
  const SCOTCH_Num nv = static_cast<SCOTCH_Num>(gg.vwgt.size());
  const SCOTCH_Num narcs = static_cast<SCOTCH_Num>(gg.adjncy.size());
  std::vector<SCOTCH_Num> arch_w(ctx.num_devices);
  const double top = *std::max_element(gg.speed.begin(), gg.speed.end());
  for (int d = 0; d < ctx.num_devices; ++d)
    arch_w[d] = static_cast<SCOTCH_Num>(std::max(1.0, std::round(1000 * gg.speed[d] / top)));
  // A context of one thread with its own seeded random state: deterministic, and no global
  // state shared with another placement running at the same time.
  SCOTCH_Context context;
  SCOTCH_Graph graph, bound;
  SCOTCH_Arch arch;
  SCOTCH_Strat strat;
  SCOTCH_contextInit(&context);
  SCOTCH_graphInit(&graph);
  SCOTCH_graphInit(&bound);
  SCOTCH_archInit(&arch);
  SCOTCH_stratInit(&strat);
  std::vector<SCOTCH_Num> part(nv, 0);
  std::string error;
  if (SCOTCH_contextRandomClone(&context) != 0)
    error = "SCOTCH_contextRandomClone";
  else if (SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0)
    error = "SCOTCH_contextOptionSetNum";
  else if (SCOTCH_contextThreadSpawn(&context, 1, nullptr) != 0)
    error = "SCOTCH_contextThreadSpawn";
  else if (SCOTCH_graphBuild(&graph, 0, nv, gg.xadj.data(), nullptr, gg.vwgt.data(), nullptr,
                             narcs, gg.adjncy.data(), gg.adjwgt.data()) != 0)
    error = "SCOTCH_graphBuild";
  else if (SCOTCH_contextBindGraph(&context, &graph, &bound) != 0)
    error = "SCOTCH_contextBindGraph";
  else if (SCOTCH_archCmpltw(&arch, ctx.num_devices, arch_w.data()) != 0)
    error = "SCOTCH_archCmpltw";
  else if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATDEFAULT, ctx.num_devices,
                                     options.imbalance) != 0)
    error = "SCOTCH_stratGraphMapBuild";
  if (error.empty()) {
    SCOTCH_contextRandomSeed(&context, static_cast<SCOTCH_Num>(options.seed & 0x7fffffff));
    if (SCOTCH_graphMap(&bound, &arch, &strat, part.data()) != 0) error = "SCOTCH_graphMap";
  }
  SCOTCH_stratExit(&strat);
  SCOTCH_archExit(&arch);
  SCOTCH_graphExit(&bound);
  SCOTCH_graphExit(&graph);
  SCOTCH_contextExit(&context);
  if (!error.empty()) throw ConfigError("Scotch: " + error + " failed");
  return ToOps(ctx, std::vector<int>(part.begin(), part.end()));
}

}  // namespace placerl::search
