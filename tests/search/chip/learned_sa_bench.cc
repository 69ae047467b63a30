// The learned annealer's speed against plain SA on one core (issue 31, must-show 4): Ariane133-NG45
// from initial.plc with `sa-soft`'s settings (snapped input, no FD, soft share 0.5, ±1 cell), a
// fixed number of moves per run so that every arm anneals over the same schedule. Counters per CPU
// second: proposals (the learned proposer also counts proposals it rejects before evaluating,
// e.g. a soft kind with no soft macro), evaluated moves, accepted moves; and the run's best cost.
//   uniform      — `sa-soft` itself (TILOS's five kinds, soft shifts half of the time);
//   learned_*    — sa.proposer=learned: frozen with the shipped weights (`sa-soft`'s kinds, the four-flows
//                  schedule and state controller), frozen and
//                  untrained (uniform over the eight kinds), and learning during the run (lr 0.1).
// Run from the repository root: OMP_NUM_THREADS=1 ./build/bench/learned_sa_bench
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "env/chip/chip_env.h"
#include "env/registry.h"
#include "search/chip/baselines.h"
#include "search/chip/learned_proposer.h"

namespace placerl::search {
namespace {

constexpr int64_t kMoves = 400000;

void Run(benchmark::State& st, const std::string& proposer, double lr, const char* weights) {
  auto e = env::MakeEnvironment(
      "chip(netlist=../shared/datasets/chip/ariane133_ng45/netlist.pb.txt.gz,"
      "plc=../shared/datasets/chip/ariane133_ng45/initial.plc)");
  std::unique_ptr<env::ChipEnv> env(dynamic_cast<env::ChipEnv*>(e.release()));
  ChipBaselineOptions o;
  o.seconds = 1e9;
  o.clock = BudgetClock::kCpu;
  o.max_evaluations = kMoves;
  o.seed = 1;
  o.sa_init = "snapped";
  o.sa_fd_every_steps = 0;
  o.sa_soft_move_prob = 0.5;
  o.sa_soft_move_cells = 1;
  o.sa_proposer = proposer;
  o.sa_proposer_lr = lr;
  if (weights != nullptr) o.sa_proposer_weights = LoadProposerWeights(weights);
  int64_t proposed = 0, evaluated = 0, accepted = 0;
  double best = 0;
  for (auto _ : st) {
    const BaselineResult r = RunChipBaseline("sa", env.get(), o, {}, {});
    evaluated += r.evaluations;
    accepted += r.accepted;
    if (r.proposer.used) {
      for (const auto& s : r.proposer.stats) proposed += s.proposed;
    } else {
      proposed += r.evaluations;
    }
    best = r.best.valid ? r.best.cost.proxy_cost : -1;
  }
  st.counters["proposals_per_s"] = benchmark::Counter(static_cast<double>(proposed), benchmark::Counter::kIsRate);
  st.counters["moves_per_s"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  st.counters["accepted_per_s"] = benchmark::Counter(static_cast<double>(accepted), benchmark::Counter::kIsRate);
  st.counters["best_cost"] = best;
}

void BM_Uniform(benchmark::State& st) { Run(st, "uniform", 0, nullptr); }
BENCHMARK(BM_Uniform)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime();

void BM_LearnedFrozenShipped(benchmark::State& st) { Run(st, "learned", 0, kShippedProposer); }
BENCHMARK(BM_LearnedFrozenShipped)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime();

void BM_LearnedFrozenUntrained(benchmark::State& st) { Run(st, "learned", 0, nullptr); }
BENCHMARK(BM_LearnedFrozenUntrained)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime();

void BM_LearnedOnline(benchmark::State& st) { Run(st, "learned", 0.1, nullptr); }
BENCHMARK(BM_LearnedOnline)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime();

}  // namespace
}  // namespace placerl::search
