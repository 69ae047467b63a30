// graph-info: what a compute graph (a generator spec or a graph file) holds — ops, edges,
// co-location groups, forward / backward / update ops and FLOPs, parameters, activations — and,
// with --fuse, what Baechi-style fusion and HDP-style grouping make of it (docs/device_graphs.md).
//   graph-info --graph 'nmt(layers=4)' [--json] [--fuse N] [--expert D] [--write FILE]
//              [--write-fused FILE] [--write-placement FILE] [--fuse-max-group-gb GB]
//              [--machine SPEC]
// --fuse 0 fuses co-located ops only; --fuse N > 0 also groups down to at most N placement
// groups, with --fuse-max-group-gb none needing more than GB (FusionOptions::max_group_bytes):
// the all_outputs measure (weights + optimizer state + outputs + max temp of its ops), or, with
// --machine, the device env's lifetime estimate of the group alone on that machine (also
// printed for the largest groups). --expert D prints the expert placement's per-device FLOPs and weights;
// --write-placement writes it as a placement file (`perf-model simulate --placement FILE`).
// Op classes come from names: "grad/…" backward, "update/…" optimizer, everything else forward.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/expert_placement.h"
#include "datasets/graphs/fusion.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "env/device/device_env.h"
#include "experiments/lib/cli.h"

using namespace placerl;
using namespace placerl::graphs;

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct OpClass {
  int ops = 0;
  double flops = 0, output_bytes = 0, param_bytes = 0;
};

// The expert placement's FLOPs and weights per device (`place`: op → device of `devices`).
void AddExpertPlacement(const ComputeGraph& g, const std::vector<int>& place, int devices, nlohmann::json* out) {
  std::vector<double> flops(devices, 0), params(devices, 0);
  for (int i = 0; i < g.num_ops(); ++i) {
    flops[place[i]] += g.flops[i];
    params[place[i]] += g.param_bytes[i];
  }
  (*out)["expert_flops"] = flops;
  (*out)["expert_param_bytes"] = params;
}

// "a GB, b GB, …" of a list of byte counts.
void PrintGigabytes(const nlohmann::json& bytes) {
  for (size_t k = 0; k < bytes.size(); ++k) std::printf("%s%.3f GB", k ? ", " : "", bytes[k].get<double>() / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  return RunMain("graph-info", [&] {
    CLI::App app{
        "Prints the size of a compute graph (ops, edges, co-location groups, FLOPs, parameters, "
        "activations) and optionally its fused / grouped form and expert placement."};
    std::string spec, write_path, write_fused_path, write_placement_path, machine;
    double max_group_gb = 0;
    bool json = false;
    int fuse = -1, expert = 0;
    app.add_option("--graph", spec,
                   "generator spec (rnnlm(...), nmt(...), gnmt(...), inception_v3(...), resnet(...), "
                   "transformer_graph(...), moe_graph(...), enas_cell(...)) or graph file")
        ->required();
    app.add_flag("--json", json, "one JSON object on stdout");
    app.add_option("--fuse", fuse, "fuse co-located ops; N > 0: group down to at most N placement groups")
        ->check(cli::IntRange(0, 100000000));
    app.add_option("--fuse-max-group-gb", max_group_gb,
                   "with --fuse N > 0: no grouping step makes a placement group needing more than GB (0 = no cap)")
        ->check(CLI::Range(0.0, 1e9));
    app.add_option("--machine", machine,
                   "with --fuse: measure groups by the device env's lifetime estimate on this machine (k80(gpus=4), ...)");
    app.add_option("--expert", expert, "expert placement on D devices: per-device FLOPs and weights")
        ->check(cli::IntRange(1, 4096));
    app.add_option("--write", write_path, "write the graph (text format)");
    app.add_option("--write-fused", write_fused_path, "write the fused graph (text format; needs --fuse)");
    app.add_option("--write-placement", write_placement_path, "write the expert placement (needs --expert)");
    cli::Parse(app, argc, argv);
    if (!write_fused_path.empty() && fuse < 0) throw UsageError("--write-fused needs --fuse");
    if (!write_placement_path.empty() && expert < 1) throw UsageError("--write-placement needs --expert");
    if (max_group_gb > 0 && fuse < 1) throw UsageError("--fuse-max-group-gb needs --fuse N with N > 0");
    if (!machine.empty() && fuse < 0) throw UsageError("--machine needs --fuse");
    // Outputs are checked before the work and written together at the end (all or nothing).
    for (const std::string* p : {&write_path, &write_fused_path, &write_placement_path})
      if (!p->empty()) CheckOutputPath(*p);
    std::vector<FileToWrite> outputs;

    const auto t0 = std::chrono::steady_clock::now();
    const NamedGraph named = GraphFromSpec(spec);
    const auto t1 = std::chrono::steady_clock::now();
    const ComputeGraph& g = named.graph;
    OpClass fwd, bwd, upd;
    for (int i = 0; i < g.num_ops(); ++i) {
      OpClass& c = g.names[i].rfind("grad/", 0) == 0 ? bwd : g.names[i].rfind("update/", 0) == 0 ? upd : fwd;
      ++c.ops;
      c.flops += g.flops[i];
      c.output_bytes += g.output_bytes[i];
      c.param_bytes += g.param_bytes[i];
    }
    nlohmann::json out = {{"graph", named.canonical},
                          {"ops", g.num_ops()},
                          {"edges", g.num_edges()},
                          {"colocation_groups", g.num_coloc_groups},
                          {"forward_ops", fwd.ops},
                          {"backward_ops", bwd.ops},
                          {"update_ops", upd.ops},
                          {"forward_flops", fwd.flops},
                          {"backward_flops", bwd.flops},
                          {"update_flops", upd.flops},
                          {"param_bytes", fwd.param_bytes},
                          {"optimizer_state_bytes", upd.param_bytes},
                          {"activation_bytes", fwd.output_bytes},
                          {"gradient_bytes", bwd.output_bytes},
                          {"examples", named.examples},
                          {"build_seconds", Seconds(t0, t1)}};
    FusedGraph fused;
    if (fuse >= 0) {
      FusionOptions o;
      o.target_groups = fuse;
      o.max_group_bytes = max_group_gb * 1e9;
      OpLiveRanges ranges;
      if (!machine.empty()) {
        ranges = env::DeviceEnv::LiveRanges(g, perf::MachineFromSpec(machine), 256);
        o.live_ranges = &ranges;
      }
      const auto f0 = std::chrono::steady_clock::now();
      fused = FuseGraph(g, o);
      const auto f1 = std::chrono::steady_clock::now();
      out["fused_nodes"] = fused.coarse.num_ops();
      out["fused_edges"] = fused.coarse.num_edges();
      out["fused_groups"] = fused.num_groups;
      out["fuse_seconds"] = Seconds(f0, f1);
      // The placement groups' weights + optimizer state + outputs of their original ops (the
      // device env's all_outputs need without temps), largest first: what a memory mask must fit.
      std::vector<double> held(fused.num_groups, 0);
      for (int i = 0; i < g.num_ops(); ++i) held[fused.op_to_group[i]] += g.param_bytes[i] + g.output_bytes[i];
      std::sort(held.begin(), held.end(), std::greater<double>());
      held.resize(std::min<size_t>(held.size(), 3));
      out["fused_largest_groups_bytes"] = held;
      if (!machine.empty()) {  // the device env's lifetime estimate of each group alone
        std::vector<std::vector<int>> members(fused.num_groups);
        for (int i = 0; i < g.num_ops(); ++i) members[fused.op_to_group[i]].push_back(i);
        std::vector<double> peak;
        for (const auto& m : members) peak.push_back(GroupMemoryBytes(g, m, &ranges));
        std::sort(peak.begin(), peak.end(), std::greater<double>());
        peak.resize(std::min<size_t>(peak.size(), 3));
        out["fused_largest_groups_lifetime_bytes"] = peak;
      }
      if (!write_fused_path.empty()) outputs.push_back({write_fused_path, ComputeGraphToText(fused.coarse)});
    }
    if (expert > 0) {
      const std::vector<int> place = ExpertPlacement(g, expert);
      AddExpertPlacement(g, place, expert, &out);
      if (!write_placement_path.empty()) outputs.push_back({write_placement_path, PlacementToText(g, place)});
    }
    if (!write_path.empty()) outputs.push_back({write_path, ComputeGraphToText(g)});
    if (!outputs.empty()) WriteFilesAtomic(outputs);

    if (json) {
      std::printf("%s\n", out.dump().c_str());
      return kExitOk;
    }
    std::printf("graph              %s\n", named.canonical.c_str());
    std::printf("ops                %d (forward %d, backward %d, update %d)\n", g.num_ops(), fwd.ops, bwd.ops, upd.ops);
    std::printf("edges              %d\n", g.num_edges());
    std::printf("colocation groups  %d\n", g.num_coloc_groups);
    std::printf("GFLOPs             forward %.3f, backward %.3f, update %.3f, total %.3f\n", fwd.flops / 1e9,
                bwd.flops / 1e9, upd.flops / 1e9, (fwd.flops + bwd.flops + upd.flops) / 1e9);
    std::printf("weights            %.1f MB (+ optimizer state %.1f MB)\n", fwd.param_bytes / 1e6,
                upd.param_bytes / 1e6);
    std::printf("activations        %.1f MB forward outputs, %.1f MB gradients\n", fwd.output_bytes / 1e6,
                bwd.output_bytes / 1e6);
    std::printf("built in           %.3f s\n", Seconds(t0, t1));
    if (fuse >= 0)
      std::printf("fused              %d nodes, %d edges, %d placement groups (%.3f s)\n", fused.coarse.num_ops(),
                  fused.coarse.num_edges(), fused.num_groups, out["fuse_seconds"].get<double>());
    if (fuse >= 0) {
      std::printf("largest groups     ");
      PrintGigabytes(out["fused_largest_groups_bytes"]);
      std::printf(" (weights + optimizer state + outputs of their ops)\n");
      if (out.contains("fused_largest_groups_lifetime_bytes")) {
        std::printf("largest (lifetime) ");
        PrintGigabytes(out["fused_largest_groups_lifetime_bytes"]);
        std::printf(" (the device env's lifetime estimate of each group alone on %s)\n", machine.c_str());
      }
    }
    if (expert > 0) {
      std::printf("expert placement   ");
      for (int d = 0; d < expert; ++d)
        std::printf("%sdev%d %.2f GFLOP %.1f MB", d ? ", " : "", d, out["expert_flops"][d].get<double>() / 1e9,
                    out["expert_param_bytes"][d].get<double>() / 1e6);
      std::printf("\n");
    }
    return kExitOk;
  });
}
