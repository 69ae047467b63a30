// render: draws a chip placement (canvas, grid, congestion or density heat map, macros,
// ports, optionally hard-macro nets) to SVG or PNG. Without --netlist it draws the
// built-in synthetic default netlist at its initial placement (`--netlist ""` is an error).
// --json prints one JSON document (output, costs, inputs) instead of the text line.
#include <cstdio>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/files.h"
#include "datasets/util/warnings.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/render.h"

int main(int argc, char** argv) {
  return placerl::RunMain("render", [&]() {
    using namespace placerl::chip;
    namespace cli = placerl::cli;
    CLI::App app{"Draw a chip placement to SVG or PNG"};
    std::string netlist, plc, out, map = "congestion", title;
    bool nets = false, json = false, allow_slow = false;
    int size = 900;
    uint64_t seed = 1;
    app.add_option("--netlist", netlist, "netlist.pb.txt[.gz] (left out: the synthetic netlist)")->check(cli::NonEmpty());
    app.add_option("--plc", plc, "placement file (.plc) applied to the netlist")->check(cli::NonEmpty());
    app.add_option("-o,--out", out, "output file, .svg or .png (never replaces a non-regular file)")
        ->required()->check(cli::NonEmpty());
    app.add_option("--map", map, "heat map: congestion | density | none")->capture_default_str();
    app.add_flag("--nets", nets, "draw the nets of hard macros");
    app.add_option("--size", size, "canvas drawing size in pixels")
        ->check(cli::IntRange(100, 20000))->capture_default_str();
    app.add_option("--title", title, "title (default: the netlist's name)");
    app.add_option("--seed", seed, "seed of the synthetic netlist (no --netlist)")
        ->check(cli::IntRange(0, std::numeric_limits<long long>::max()))->capture_default_str();
    app.add_flag("--json", json, "print one JSON document: output, costs, inputs");
    app.add_flag("--allow-slow", allow_slow, "run even when the evaluation is estimated above 60 s or 8 GiB");
    cli::Parse(app, argc, argv);
    placerl::CheckOutputPath(out);  // refuse before the work, not after
    placerl::viz::RenderOptions opt;
    opt.map = placerl::viz::ParseHeatMap(map);
    opt.nets = nets;
    opt.size_px = size;
    // A --size 20000 PNG is a 1.6 GB surface and ~9 s of CPU (measured: ~22 ns per pixel,
    // drawing and PNG encoding); say so before starting.
    const double pixels = static_cast<double>(size) * size, render_seconds = 2.2e-8 * pixels;
    const bool png = out.size() >= 4 && (out.compare(out.size() - 4, 4, ".png") == 0 || out.compare(out.size() - 4, 4, ".PNG") == 0);
    if (png && render_seconds > placerl::kAnnounceSeconds) {
      char what[160];
      std::snprintf(what, sizeof(what), "--size %d: drawing takes about %.0f s and %.1f GiB", size,
                    render_seconds, 4 * pixels / double(1ull << 30));
      placerl::Warn(placerl::warning_id::kSlowRender, what);
    }
    placerl::ChipInput in = placerl::LoadChipInput(netlist, plc, seed);
    placerl::CheckEvaluationBudget(in.settings, 1, allow_slow);
    opt.title = title.empty() ? in.label : title;
    ProxyCost cost(in.netlist, in.settings);
    opt.costs = cost.EvaluateFull();
    placerl::viz::RenderPlacement(cost, opt, out);
    if (json) {
      nlohmann::json j;
      j["output"] = out;
      j["map"] = map;
      j["size_px"] = size;
      j["hpwl"] = opt.costs->hpwl;
      j["wirelength_cost"] = opt.costs->wirelength_cost;
      j["density_cost"] = opt.costs->density_cost;
      j["congestion_cost"] = opt.costs->congestion_cost;
      j["proxy_cost"] = opt.costs->proxy_cost;
      j["inputs"] = placerl::ChipInputJson(in, netlist, plc);
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("wrote %s  (HPWL %.3f, wirelength %.6f, density %.6f, congestion %.6f, proxy %.6f)\n",
                  out.c_str(), opt.costs->hpwl, opt.costs->wirelength_cost, opt.costs->density_cost,
                  opt.costs->congestion_cost, opt.costs->proxy_cost);
    }
    return 0;
  });
}
