// bookshelf-to-ct: converts a Bookshelf design (.aux) into a Circuit Training netlist
// (`netlist.pb.txt`) and placement (`initial.plc`, canvas from the .scl rows, the grid —
// --grid, else Circuit Training's grid selection on the movable hard macros, as group-netlist
// chooses it, else 10 × 10 — and the costs of the Bookshelf placement in its header). Every
// chip binary takes the grid from that header, so the converted design is placeable as it
// is. The output folder and its parents are created; the two files are written all or
// nothing (a failed run leaves neither file nor a new empty folder behind).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/bookshelf.h"
#include "datasets/chip/grouping.h"
#include "datasets/chip/plc.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/warnings.h"
#include "experiments/lib/chip_input.h"
#include "experiments/lib/cli.h"

namespace {

// "COLS,ROWS", each 1..4096 (the proxy cost's largest grid).
void ParseGrid(const std::string& grid, int* cols, int* rows) {
  const auto parts = placerl::SplitCommaList(grid);
  long long v[2] = {0, 0};
  bool ok = parts.size() == 2 && grid.find(",,") == std::string::npos;
  for (size_t i = 0; ok && i < 2; ++i) {
    char* end = nullptr;
    errno = 0;
    v[i] = std::strtoll(parts[i].c_str(), &end, 10);
    ok = end == parts[i].c_str() + parts[i].size() && errno == 0 && v[i] >= 1 && v[i] <= 4096;
  }
  if (!ok) throw placerl::UsageError("--grid must be COLS,ROWS with whole numbers in [1, 4096], got '" + grid + "'");
  *cols = static_cast<int>(v[0]);
  *rows = static_cast<int>(v[1]);
}

}  // namespace

int main(int argc, char** argv) {
  return placerl::RunMain("bookshelf-to-ct", [&]() {
    using namespace placerl::chip;
    namespace cli = placerl::cli;
    CLI::App app{"Convert a Bookshelf design (.aux) to a Circuit Training netlist.pb.txt + initial.plc"};
    std::string aux, outdir, grid;
    bool json = false, allow_slow = false;
    app.add_option("--aux", aux, "the design's .aux file")->required()->check(cli::NonEmpty());
    app.add_option("-o,--out", outdir, "output folder (created with its parents if missing)")
        ->required()->check(cli::NonEmpty());
    CLI::Option* grid_option = app.add_option("--grid", grid,
                   "placement grid as COLS,ROWS, each in [1, 4096] (default: Circuit Training's grid selection, "
                   "a grid on which all movable hard macros fit; 10,10 without any)");
    app.add_flag("--allow-slow", allow_slow, "run even when the cost evaluation is estimated above 60 s or 8 GiB (huge grid)");
    app.add_flag("--json", json, "print one JSON document (counts, canvas, grid, costs, files written)");
    cli::Parse(app, argc, argv);
    int cols = 0, rows = 0;
    if (grid_option->count() > 0) ParseGrid(grid, &cols, &rows);  // given empty: an error
    if (outdir.back() != '/') outdir += '/';
    placerl::WriteOptions wo;
    wo.create_parent_dirs = true;
    placerl::CheckOutputPath(outdir + "netlist.pb.txt", wo);  // refuse before the work, not after
    placerl::CheckOutputPath(outdir + "initial.plc", wo);

    BookshelfDesign d = ReadBookshelf(aux);
    CtConversionReport rep;
    Netlist nl = ToCircuitTrainingNets(d.netlist, &rep);
    PlacementSettings s = d.settings;
    std::string grid_source = "--grid";
    if (cols == 0) {
      // The canvas first (the .scl rows, else CT's default square), then the grid on it.
      const PlacementSettings canvas = ResolveDefaults(s, nl);
      if (const auto choice = SelectGrid(nl, canvas.canvas_width, canvas.canvas_height)) {
        cols = choice->cols;
        rows = choice->rows;
        grid_source = "grid selection";
      } else {
        cols = rows = 10;
        grid_source = "default";
      }
    }
    s.cols = cols;
    s.rows = rows;
    s.block = aux.substr(aux.rfind('/') == std::string::npos ? 0 : aux.rfind('/') + 1);
    if (s.block.size() > 4 && s.block.compare(s.block.size() - 4, 4, ".aux") == 0) {
      s.block.resize(s.block.size() - 4);
    }
    const PlacementSettings resolved = ResolveDefaults(s, nl);
    placerl::CheckEvaluationBudget(resolved, 1, allow_slow);
    ProxyCost cost(nl, resolved);
    const CostBreakdown c = cost.EvaluateFull();
    PlcCosts pc;
    pc.wirelength = c.hpwl;
    pc.wirelength_cost = c.wirelength_cost;
    pc.density_cost = c.density_cost;
    pc.congestion_cost = c.congestion_cost;
    const std::string net_path = outdir + "netlist.pb.txt", plc_path = outdir + "initial.plc";
    const std::string src = nl.sources.empty() ? std::string("(generated)") : nl.sources.front();
    placerl::WriteFilesAtomic({{net_path, NetlistToText(nl)}, {plc_path, PlcToText(nl, resolved, &pc, src, plc_path)}}, wo);
    const int merged_inexact = rep.nets_merged - rep.nets_merged_exact;
    if (merged_inexact > 0) {
      placerl::Warn(placerl::warning_id::kBookshelfMergedNets,
                    std::to_string(merged_inexact) +
                        " nets share their only possible driver with another net and were merged into it "
                        "(Circuit Training allows one net per driver)");
    }
    if (json) {
      nlohmann::json j;
      j["aux"] = aux;
      j["written"] = {net_path, plc_path};
      j["bookshelf"] = {{"nodes", d.bookshelf_nodes}, {"terminals", d.bookshelf_terminals},
                        {"nets", d.bookshelf_nets}, {"pins", d.bookshelf_pins}};
      j["netlist"] = {{"nodes", nl.num_nodes()}, {"ports", nl.ports.size()}, {"hard_macros", nl.hard_macros.size()},
                      {"fixed_macros", d.fixed_macros}, {"macro_pins", nl.CountType(NodeType::kHardMacroPin)},
                      {"std_cells", nl.stdcells.size()}};
      j["nets"] = {{"in", rep.nets_in}, {"written", rep.nets_out}, {"drivers_reassigned", rep.drivers_reassigned},
                   {"merged", rep.nets_merged}, {"merged_exactly", rep.nets_merged_exact}};
      j["canvas"] = {{"width", resolved.canvas_width}, {"height", resolved.canvas_height}};
      j["grid"] = {{"cols", resolved.cols}, {"rows", resolved.rows}, {"source", grid_source}};
      j["hpwl"] = c.hpwl;
      j["wirelength_cost"] = c.wirelength_cost;
      j["density_cost"] = c.density_cost;
      j["congestion_cost"] = c.congestion_cost;
      std::printf("%s\n", j.dump().c_str());
      return 0;
    }
    std::printf("%s: %d Bookshelf nodes (%d terminals), %d nets, %d pins\n", aux.c_str(),
                d.bookshelf_nodes, d.bookshelf_terminals, d.bookshelf_nets, d.bookshelf_pins);
    std::printf("netlist: %d nodes = %d ports + %d hard macros (%d fixed) + %d macro pins + %d std cells\n",
                nl.num_nodes(), static_cast<int>(nl.ports.size()),
                static_cast<int>(nl.hard_macros.size()), d.fixed_macros,
                nl.CountType(NodeType::kHardMacroPin), static_cast<int>(nl.stdcells.size()));
    std::printf("nets: %d in, %d written (%d drivers reassigned, %d merged into a shared driver's net, %d of them exactly)\n",
                rep.nets_in, rep.nets_out, rep.drivers_reassigned, rep.nets_merged,
                rep.nets_merged_exact);
    std::printf("canvas %.3f x %.3f, grid %d x %d (%s); HPWL %.3f, wirelength %.6f, density %.6f, congestion %.6f\n",
                resolved.canvas_width, resolved.canvas_height, resolved.cols, resolved.rows, grid_source.c_str(), c.hpwl,
                c.wirelength_cost, c.density_cost, c.congestion_cost);
    std::printf("wrote %s and %s\n", net_path.c_str(), plc_path.c_str());
    return 0;
  });
}
