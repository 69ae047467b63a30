// Coordinate descent on Ariane133-NG45 from legalized.plc (CT's defaults: 2 epochs, random
// order, k = 5, all four orientations, FD of the soft macros between epochs, undone if
// worse). Reports the proxy cost before/after and the cost evaluations per second.
// Run from the repository root: ./build/bench/coordinate_descent_bench
#include <benchmark/benchmark.h>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "search/chip/coordinate_descent.h"

namespace placerl::chip {
namespace {

void RunOn(benchmark::State& st, const char* plc_path, bool fd) {
  const char* netlist = "../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz";
  Netlist nl = ReadNetlist(netlist);
  PlcFile plc = ReadPlc(plc_path);
  ApplyPlc(plc, &nl, plc_path);
  const PlacementSettings s = ResolveDefaults(plc.settings, nl);
  CoordinateDescentOptions o;
  o.fd_soft_macros = fd;
  double before = 0, after = 0;
  int64_t evals = 0, moves = 0;
  for (auto _ : st) {
    ProxyCost pc(nl, s);
    const CoordinateDescentResult r = RunCoordinateDescent(&pc, o);
    before = r.cost_history.front();
    after = r.cost_history.back();
    evals += r.evaluations;
    moves = r.macro_moves;
  }
  st.counters["cost_before"] = before;
  st.counters["cost_after"] = after;
  st.counters["macro_moves"] = static_cast<double>(moves);
  st.counters["evals_per_s"] = benchmark::Counter(static_cast<double>(evals), benchmark::Counter::kIsRate);
}

void BM_CdLegalizedWithFd(benchmark::State& st) {
  RunOn(st, "../shared/datasets/chip/ariane133_ng45/legalized.plc", true);
}
BENCHMARK(BM_CdLegalizedWithFd)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_CdLegalizedNoFd(benchmark::State& st) {
  RunOn(st, "../shared/datasets/chip/ariane133_ng45/legalized.plc", false);
}
BENCHMARK(BM_CdLegalizedNoFd)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_CdInitialWithFd(benchmark::State& st) {
  RunOn(st, "../shared/datasets/chip/ariane133_ng45/initial.plc", true);
}
BENCHMARK(BM_CdInitialWithFd)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
}  // namespace placerl::chip
