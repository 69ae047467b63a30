// render: draws a chip placement (canvas, grid, congestion or density heat map, macros,
// ports, optionally hard-macro nets) to SVG or PNG. Without --netlist it draws the
// built-in synthetic default netlist at its initial placement.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/chip/synthetic.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/render.h"

int main(int argc, char** argv) {
  return placerl::RunMain("render", [&]() {
    using namespace placerl::chip;
    CLI::App app{"Draw a chip placement to SVG or PNG"};
    std::string netlist, plc, out, map = "congestion", title;
    bool nets = false;
    int size = 900;
    uint64_t seed = 1;
    app.add_option("--netlist", netlist, "netlist.pb.txt[.gz] (default: the synthetic netlist)");
    app.add_option("--plc", plc, "placement file (.plc) applied to the netlist");
    app.add_option("-o,--out", out, "output file, .svg or .png")->required();
    app.add_option("--map", map, "heat map: congestion | density | none")->capture_default_str();
    app.add_flag("--nets", nets, "draw the nets of hard macros");
    app.add_option("--size", size, "canvas drawing size in pixels")->capture_default_str();
    app.add_option("--title", title, "title (default: the netlist's name)");
    app.add_option("--seed", seed, "seed of the synthetic netlist (no --netlist)")->capture_default_str();
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    placerl::viz::RenderOptions opt;
    opt.map = placerl::viz::ParseHeatMap(map);
    opt.nets = nets;
    opt.size_px = size;
    Netlist nl;
    PlacementSettings settings;
    if (netlist.empty()) {
      SyntheticOptions so;
      so.seed = seed;
      SyntheticDesign d = GenerateSyntheticNetlist(so);
      nl = std::move(d.netlist);
      settings = d.settings;
      opt.title = title.empty() ? "synthetic (seed " + std::to_string(seed) + ")" : title;
    } else {
      nl = ReadNetlist(netlist);
      // Default title: "<folder>/<file>" of the netlist, short enough for the title line.
      std::string t = netlist;
      const size_t a = t.rfind('/');
      if (a != std::string::npos && a > 0) {
        const size_t b = t.rfind('/', a - 1);
        t = t.substr(b == std::string::npos ? 0 : b + 1);
      }
      opt.title = title.empty() ? t : title;
    }
    if (!plc.empty()) {
      const PlcFile f = ReadPlc(plc);
      ApplyPlc(f, &nl, plc);
      const PlacementSettings& h = f.settings;
      if (h.has_canvas()) { settings.canvas_width = h.canvas_width; settings.canvas_height = h.canvas_height; }
      if (h.has_grid()) { settings.cols = h.cols; settings.rows = h.rows; }
      if (h.has_routes()) {
        settings.h_routes_per_micron = h.h_routes_per_micron;
        settings.v_routes_per_micron = h.v_routes_per_micron;
        settings.h_macro_alloc = h.h_macro_alloc;
        settings.v_macro_alloc = h.v_macro_alloc;
        settings.smooth_range = h.smooth_range;
      }
      if (h.overlap_threshold > 0) settings.overlap_threshold = h.overlap_threshold;
      settings.blockages = h.blockages;
    }
    const PlacementSettings resolved = ResolveDefaults(settings, nl);
    ProxyCost cost(nl, resolved);
    opt.costs = cost.EvaluateFull();
    placerl::viz::RenderPlacement(cost, opt, out);
    std::printf("wrote %s  (HPWL %.3f, wirelength %.6f, density %.6f, congestion %.6f, proxy %.6f)\n",
                out.c_str(), opt.costs->hpwl, opt.costs->wirelength_cost, opt.costs->density_cost,
                opt.costs->congestion_cost, opt.costs->proxy_cost);
    return 0;
  });
}
