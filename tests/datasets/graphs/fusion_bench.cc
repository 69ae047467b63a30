// Speed of graph generation, Baechi fusion and HDP-style grouping on the papers' largest
// graph scale: NMT-8 unrolled 200 steps (81,269 ops, HDP's ">80,000 operations").
#include <benchmark/benchmark.h>

#include "datasets/graphs/fusion.h"
#include "datasets/graphs/rnn_graphs.h"

namespace {

using namespace placerl::graphs;

const ComputeGraph& Nmt8() {
  static const ComputeGraph g = [] {
    Seq2SeqConfig c;
    c.layers = 8;
    c.steps = 200;
    return MakeNmtGraph(c);
  }();
  return g;
}

void BM_GenerateNmt8(benchmark::State& state) {
  Seq2SeqConfig c;
  c.layers = 8;
  c.steps = 200;
  for (auto _ : state) benchmark::DoNotOptimize(MakeNmtGraph(c).num_ops());
  state.SetItemsProcessed(state.iterations() * Nmt8().num_ops());
}

// range(0) = target groups (0 = co-location fusion only)
void BM_FuseNmt8(benchmark::State& state) {
  const ComputeGraph& g = Nmt8();
  FusionOptions o;
  o.target_groups = static_cast<int>(state.range(0));
  int groups = 0;
  for (auto _ : state) groups = FuseGraph(g, o).num_groups;
  state.counters["groups"] = groups;
  state.SetItemsProcessed(state.iterations() * g.num_ops());
}

BENCHMARK(BM_GenerateNmt8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FuseNmt8)->Arg(0)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
