// Speed of the legality mask on Ariane133-NG45 (grid of initial.plc, 133 hard macros).
// Run from the repository root: ./build/bench/grid_mask_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "cost_models/chip/grid_mask.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "tests/cost_models/chip/ariane_bench_data.h"

namespace placerl::chip {
namespace {

const char* kNetlist = kArianeNetlist;
const char* kPlc = kArianePlc;

// One mask with every other hard macro placed where initial.plc puts it (132 obstacles).
void BM_ComputeAllPlaced(benchmark::State& st) {
  const Netlist& nl = Data().nl;
  GridMask gm(nl, Data().s);
  for (int32_t m : nl.hard_macros) gm.Place(m, nl.x[m], nl.y[m], nl.orientation[m]);
  std::vector<uint8_t> mask(gm.cols() * gm.rows());
  size_t k = 0;
  for (auto _ : st) {
    const int32_t m = nl.hard_macros[k++ % nl.hard_macros.size()];
    benchmark::DoNotOptimize(gm.Compute(m, mask.data()));
  }
  st.counters["cells"] = gm.cols() * gm.rows();
  st.counters["placed"] = gm.num_placed_hard();
}
BENCHMARK(BM_ComputeAllPlaced)->Unit(benchmark::kMicrosecond);

// A whole episode's masks: the hard macros in descending area order, each put on its first
// legal cell (as CT's grid-size selection does), one Compute + one Place per macro.
void BM_EpisodeFirstFit(benchmark::State& st) {
  const Netlist& nl = Data().nl;
  std::vector<int32_t> order = nl.hard_macros;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return nl.width[a] * nl.height[a] > nl.width[b] * nl.height[b];
  });
  GridMask gm(nl, Data().s);
  std::vector<uint8_t> mask(gm.cols() * gm.rows());
  int placed = 0;
  for (auto _ : st) {
    gm.Clear();
    placed = 0;
    for (int32_t m : order) {
      if (gm.Compute(m, mask.data()) == 0) break;
      const int cell = static_cast<int>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
      gm.Place(m, gm.CellCentreX(cell % gm.cols()), gm.CellCentreY(cell / gm.cols()));
      ++placed;
    }
  }
  st.counters["placed"] = placed;
}
BENCHMARK(BM_EpisodeFirstFit)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placerl::chip
