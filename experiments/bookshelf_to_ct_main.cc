// bookshelf-to-ct: converts a Bookshelf design (.aux) into a Circuit Training netlist
// (`netlist.pb.txt`) and placement (`initial.plc`, canvas from the .scl rows, the given
// grid, costs of the Bookshelf placement in its header).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/bookshelf.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "experiments/lib/cli.h"

int main(int argc, char** argv) {
  return placerl::RunMain("bookshelf-to-ct", [&]() {
    using namespace placerl::chip;
    CLI::App app{"Convert a Bookshelf design (.aux) to a Circuit Training netlist.pb.txt + initial.plc"};
    std::string aux, outdir, grid = "10,10";
    app.add_option("--aux", aux, "the design's .aux file")->required();
    app.add_option("-o,--out", outdir, "output directory (created if missing)")->required();
    app.add_option("--grid", grid, "placement grid as COLS,ROWS")->capture_default_str();
    placerl::cli::Parse(app, argc, argv);
    int cols = 0, rows = 0;
    char extra = 0;
    if (std::sscanf(grid.c_str(), "%d,%d%c", &cols, &rows, &extra) != 2 || cols <= 0 || rows <= 0) {
      throw placerl::ConfigError("--grid must be COLS,ROWS with positive integers, got '" + grid + "'");
    }
    if (outdir.empty()) throw placerl::ConfigError("-o needs a directory");
    if (mkdir(outdir.c_str(), 0777) != 0 && errno != EEXIST) {
      throw placerl::IoError("cannot create directory " + outdir);
    }
    if (outdir.back() != '/') outdir += '/';

    BookshelfDesign d = ReadBookshelf(aux);
    CtConversionReport rep;
    Netlist nl = ToCircuitTrainingNets(d.netlist, &rep);
    PlacementSettings s = d.settings;
    s.cols = cols;
    s.rows = rows;
    s.block = aux.substr(aux.rfind('/') == std::string::npos ? 0 : aux.rfind('/') + 1);
    if (s.block.size() > 4 && s.block.compare(s.block.size() - 4, 4, ".aux") == 0) {
      s.block.resize(s.block.size() - 4);
    }
    const PlacementSettings resolved = ResolveDefaults(s, nl);
    ProxyCost cost(nl, resolved);
    const CostBreakdown c = cost.EvaluateFull();
    PlcCosts pc;
    pc.wirelength = c.hpwl;
    pc.wirelength_cost = c.wirelength_cost;
    pc.density_cost = c.density_cost;
    pc.congestion_cost = c.congestion_cost;
    WriteNetlist(nl, outdir + "netlist.pb.txt");
    WritePlc(nl, resolved, &pc, outdir + "initial.plc");
    std::printf("%s: %d Bookshelf nodes (%d terminals), %d nets, %d pins\n", aux.c_str(),
                d.bookshelf_nodes, d.bookshelf_terminals, d.bookshelf_nets, d.bookshelf_pins);
    std::printf("netlist: %d nodes = %d ports + %d hard macros (%d fixed) + %d macro pins + %d std cells\n",
                nl.num_nodes(), static_cast<int>(nl.ports.size()),
                static_cast<int>(nl.hard_macros.size()), d.fixed_macros,
                nl.CountType(NodeType::kHardMacroPin), static_cast<int>(nl.stdcells.size()));
    std::printf("nets: %d in, %d written (%d drivers reassigned, %d merged into a shared driver's net, %d of them exactly)\n",
                rep.nets_in, rep.nets_out, rep.drivers_reassigned, rep.nets_merged,
                rep.nets_merged_exact);
    if (rep.nets_merged > rep.nets_merged_exact) {
      std::fprintf(stderr,
                   "[WARNING BKS-0001] %d nets share their only possible driver with another net "
                   "and were merged into it (Circuit Training allows one net per driver)\n",
                   rep.nets_merged - rep.nets_merged_exact);
    }
    std::printf("canvas %.3f x %.3f, grid %d x %d; HPWL %.3f, wirelength %.6f, density %.6f, congestion %.6f\n",
                resolved.canvas_width, resolved.canvas_height, resolved.cols, resolved.rows, c.hpwl,
                c.wirelength_cost, c.density_cost, c.congestion_cost);
    std::printf("wrote %snetlist.pb.txt and %sinitial.plc\n", outdir.c_str(), outdir.c_str());
    return 0;
  });
}
