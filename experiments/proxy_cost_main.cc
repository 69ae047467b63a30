// proxy-cost: scores a chip placement with the Circuit Training proxy cost.
//   proxy-cost --netlist netlist.pb.txt[.gz] [--plc initial.plc] [--weights 1,0.5,0.5] [--json]
//   proxy-cost --bench 1000 ...   (mean time of full evaluations and one-macro moves)
// Without --netlist it scores the built-in synthetic netlist (seed 1; --synthetic sets its
// size, --write-netlist/--write-plc write it as a design file pair); `--netlist ""` is an
// error. --json prints exactly one JSON document (costs, inputs, bench, written file).
#include <CLI/CLI.hpp>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/util/budget_clock.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/chip/synthetic.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"

using namespace placerl;
using namespace placerl::chip;

namespace {


double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// CPU seconds of this (single-threaded) process: on a shared machine the wall clock also
// counts the time other processes held the core; the CPU time does not.
double CpuSeconds() { return ProcessCpuSeconds(); }

}  // namespace

int main(int argc, char** argv) {
  return RunMain("proxy-cost", [&] {
    CLI::App app{"Scores a chip placement with the Circuit Training proxy cost "
                 "(wirelength + density + congestion, exactly as Google's plc_wrapper_main)."};
    std::string netlist_path, plc_path, weights_str = "1,0.5,0.5", out_plc, out_netlist, synthetic_spec,
        off_canvas = "clamp";
    bool json = false, allow_slow = false;
    long long bench = 0;
    int hotspots = 0;
    uint64_t seed = 1;
    app.add_option("--netlist", netlist_path, "netlist.pb.txt (gzip ok; several files comma-separated). Left out: built-in synthetic netlist")
        ->check(cli::NonEmpty());
    app.add_option("--plc", plc_path, "placement .plc (canvas, grid and routing from its header); default: the netlist's own positions and the Circuit Training defaults")
        ->check(cli::NonEmpty());
    app.add_option("--weights", weights_str, "wirelength,density,congestion weights, each in [0, 1e6]")->capture_default_str();
    app.add_option("--off-canvas-nets", off_canvas,
                   "congestion of nets with a pin outside the canvas: clamp (pins in the border cells, TILOS) | skip (not routed, Google)")
        ->check(CLI::IsMember({"clamp", "skip"}))->capture_default_str();
    app.add_flag("--json", json, "print one JSON document: hpwl, wirelength_cost, density_cost, congestion_cost, proxy_cost, weights, inputs (and bench, written)");
    app.add_option("--bench", bench, "time K full evaluations and K incremental one-macro moves; print the mean of each")
        ->check(cli::IntRange(0, cli::kMaxCount));
    app.add_option("--seed", seed, "seed of the synthetic netlist (without --netlist)")
        ->check(cli::IntRange(0, std::numeric_limits<long long>::max()))->capture_default_str();
    app.add_option("--synthetic", synthetic_spec,
                   "options of the synthetic netlist (without --netlist): key=value,... with keys macros, soft, ports, "
                   "nets, utilization, global, weighted, grid=COLSxROWS (default macros=40,soft=200,ports=60,nets=1500,"
                   "utilization=0.6,global=0.05,weighted=0.3,grid=16x16)")
        ->check(cli::NonEmpty());
    app.add_option("--write-netlist", out_netlist,
                   "write the scored netlist (e.g. a synthetic one) to this netlist.pb.txt, atomically; with --write-plc "
                   "the pair is a design every chip binary reads")
        ->check(cli::NonEmpty());
    app.add_option("--write-plc", out_plc, "write the scored placement, costs in the header, to this .plc (never replaces a non-regular file)")
        ->check(cli::NonEmpty());
    app.add_option("--hotspots", hotspots,
                   "where the congestion cost comes from: the cells it counts (top 5 % of the vertical and horizontal "
                   "values), how many are horizontal / vertical, their mean split into macro blockage and net routing, "
                   "and the N largest with row, column and direction (--json: key \"hotspots\")")
        ->check(CLI::Range(0, 1000000));
    app.add_flag("--allow-slow", allow_slow, "run even when the work is estimated above 60 s or 8 GiB (huge grid or smoothing)");
    placerl::cli::Parse(app, argc, argv);
    CostWeights weights = ParseCostWeights(weights_str);
    weights.off_canvas_nets = ParseOffCanvasNets(off_canvas);
    if (!out_plc.empty()) CheckOutputPath(out_plc);  // refuse before the work, not after
    if (!out_netlist.empty()) CheckOutputPath(out_netlist);
    if (!synthetic_spec.empty() && !netlist_path.empty())
      throw ConfigError("--synthetic describes the built-in synthetic netlist; leave out --netlist to use it");
    chip::SyntheticOptions synthetic;
    synthetic.seed = seed;
    chip::ParseSyntheticSpec(synthetic_spec, &synthetic);

    const auto t0 = std::chrono::steady_clock::now();
    ChipInput in = chip::LoadChipDesign(netlist_path, plc_path, synthetic);
    const auto t1 = std::chrono::steady_clock::now();
    const Netlist& nl = in.netlist;
    const PlacementSettings& settings = in.settings;
    const PlcFile& plc = in.plc;
    CheckEvaluationBudget(settings, 1.0 + static_cast<double>(bench), allow_slow);
    ProxyCost pc(nl, settings, weights);
    const CostBreakdown c = pc.Cost();

    nlohmann::json j;
    j["hpwl"] = c.hpwl;
    j["wirelength_cost"] = c.wirelength_cost;
    j["density_cost"] = c.density_cost;
    j["congestion_cost"] = c.congestion_cost;
    j["proxy_cost"] = c.proxy_cost;
    j["weights"] = {{"wirelength", weights.wirelength}, {"density", weights.density}, {"congestion", weights.congestion}};
    j["off_canvas_nets"] = OffCanvasNetsName(weights.off_canvas_nets);
    j["inputs"] = ChipInputJson(in, netlist_path, plc_path);
    if (!json) {
      std::printf("netlist      %s (%d nodes: %d hard macros, %d soft macros, %d ports, %d std cells; %d nets)\n",
                  netlist_path.empty() ? ("built-in " + in.label).c_str() : netlist_path.c_str(), nl.num_nodes(),
                  (int)nl.hard_macros.size(), (int)nl.soft_macros.size(), (int)nl.ports.size(),
                  (int)nl.stdcells.size(), nl.num_nets());
      std::printf("canvas       %.6g x %.6g um, grid %d x %d, routes/um h %.6g v %.6g, macro alloc h %.6g v %.6g, smoothing %g\n",
                  settings.canvas_width, settings.canvas_height, settings.cols, settings.rows,
                  settings.h_routes_per_micron, settings.v_routes_per_micron, settings.h_macro_alloc,
                  settings.v_macro_alloc, settings.smooth_range);
      std::printf("hpwl             %.6f\n", c.hpwl);
      std::printf("wirelength_cost  %.9f\n", c.wirelength_cost);
      std::printf("density_cost     %.9f\n", c.density_cost);
      std::printf("congestion_cost  %.9f\n", c.congestion_cost);
      std::printf("proxy_cost       %.9f   (= %g*wl + %g*density + %g*congestion; off-canvas nets: %s)\n", c.proxy_cost,
                  weights.wirelength, weights.density, weights.congestion, OffCanvasNetsName(weights.off_canvas_nets));
      if (plc.header_wirelength_cost || plc.header_density_cost || plc.header_congestion_cost) {
        std::printf("plc header       wirelength_cost %s  density_cost %s  congestion_cost %s\n",
                    plc.header_wirelength_cost ? std::to_string(*plc.header_wirelength_cost).c_str() : "-",
                    plc.header_density_cost ? std::to_string(*plc.header_density_cost).c_str() : "-",
                    plc.header_congestion_cost ? std::to_string(*plc.header_congestion_cost).c_str() : "-");
      }
      std::printf("read input       %.1f ms\n", 1e3 * Seconds(t0, t1));
    }
    if (hotspots > 0) {
      const size_t n = static_cast<size_t>(settings.cols) * settings.rows, k = pc.CongestionCountedK();
      const std::vector<ProxyCost::CongestionValue> values =
          pc.CountedCongestion(static_cast<size_t>(hotspots) > k ? static_cast<size_t>(hotspots) - k : 0);
      size_t horizontal = 0;
      double blockage = 0, sum = 0;
      for (size_t r = 0; r < k; ++r) {
        horizontal += static_cast<size_t>(values[r].index) >= n;
        blockage += values[r].blockage;
        sum += values[r].value;
      }
      nlohmann::json cells = nlohmann::json::array();
      for (size_t r = 0; r < std::min<size_t>(static_cast<size_t>(hotspots), values.size()); ++r) {
        const size_t i = static_cast<size_t>(values[r].index), cell = i % n;
        cells.push_back({{"direction", i >= n ? "h" : "v"}, {"row", cell / settings.cols}, {"col", cell % settings.cols},
                         {"value", values[r].value}, {"blockage", values[r].blockage},
                         {"routing", values[r].value - values[r].blockage}, {"counted", r < k}});
      }
      j["hotspots"] = {{"counted", k}, {"counted_horizontal", horizontal}, {"counted_vertical", k - horizontal},
                       {"counted_mean", sum / k}, {"counted_blockage_mean", blockage / k},
                       {"counted_routing_mean", (sum - blockage) / k}, {"cells", cells}};
      if (!json) {
        std::printf("hotspots         the congestion cost counts %zu values (%zu horizontal, %zu vertical): mean %.6f = "
                    "macro blockage %.6f + net routing %.6f\n",
                    k, horizontal, k - horizontal, sum / k, blockage / k, (sum - blockage) / k);
        for (const auto& c : cells)
          std::printf("  %s row %3d col %3d  %.6f = blockage %.6f + routing %.6f%s\n",
                      c["direction"].get<std::string>().c_str(), c["row"].get<int>(), c["col"].get<int>(),
                      c["value"].get<double>(), c["blockage"].get<double>(), c["routing"].get<double>(),
                      c["counted"].get<bool>() ? "" : "  (not counted)");
      }
    }
    if (!out_plc.empty() || !out_netlist.empty()) {  // both or neither
      Netlist placed = nl;
      pc.CopyPlacementTo(&placed);
      std::vector<FileToWrite> files;
      if (!out_plc.empty()) {
        const PlcCosts pcosts{c.hpwl, c.wirelength_cost, c.congestion_cost, c.density_cost};
        const std::string src = placed.sources.empty() ? std::string("(generated)") : placed.sources.front();
        files.push_back({out_plc, PlcToText(placed, settings, &pcosts, src, out_plc)});
      }
      if (!out_netlist.empty()) files.push_back({out_netlist, NetlistToText(placed)});
      WriteFilesAtomic(files);
      if (!out_plc.empty()) j["written"] = out_plc;
      if (!out_netlist.empty()) j["written_netlist"] = out_netlist;
    }
    if (bench > 0) {
      // Full evaluations.
      const double c0 = CpuSeconds();
      const auto b0 = std::chrono::steady_clock::now();
      double sink = 0;
      for (long long i = 0; i < bench; ++i) sink += pc.EvaluateFull().proxy_cost;
      const auto b1 = std::chrono::steady_clock::now();
      const double c1 = CpuSeconds();
      // Incremental: move a random hard (else any) macro to a random cell centre, then read the cost.
      const std::vector<int32_t>& movable = nl.hard_macros.empty() ? nl.macros : nl.hard_macros;
      if (movable.empty()) throw ConfigError("--bench needs at least one macro to move");
      std::mt19937_64 rng(12345);
      std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(movable.size()) - 1);
      std::uniform_int_distribution<int> col(0, settings.cols - 1), row(0, settings.rows - 1);
      const double c2 = CpuSeconds();
      const auto b2 = std::chrono::steady_clock::now();
      for (long long i = 0; i < bench; ++i) {
        pc.MoveNode(movable[pick(rng)], (col(rng) + 0.5) * pc.grid_width(), (row(rng) + 0.5) * pc.grid_height());
        sink += pc.Cost().proxy_cost;
      }
      const auto b3 = std::chrono::steady_clock::now();
      const double c3 = CpuSeconds();
      const double full_us = 1e6 * Seconds(b0, b1) / bench, inc_us = 1e6 * Seconds(b2, b3) / bench;
      const double full_cpu_us = 1e6 * (c1 - c0) / bench, inc_cpu_us = 1e6 * (c3 - c2) / bench;
      j["bench"] = {{"iterations", bench}, {"full_evaluation_us", full_us}, {"incremental_move_us", inc_us},
                    {"full_evaluation_cpu_us", full_cpu_us}, {"incremental_move_cpu_us", inc_cpu_us}};
      if (!json) {
        std::printf("bench            %lld iterations: full evaluation %.1f us (CPU %.1f us), incremental one-macro move + cost %.2f us (CPU %.2f us) (checksum %.6g)\n",
                    bench, full_us, full_cpu_us, inc_us, inc_cpu_us, sink);
      }
    }
    if (json) std::printf("%s\n", j.dump().c_str());
    return 0;
  });
}
