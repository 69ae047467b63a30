// Incremental re-simulation: a Simulator that resumes from its snapshots gives, on random
// sequences of moves (one op, a co-location group, a run of ops, several ops at once, back to
// an earlier placement), results equal to the bit to a full simulation of the same placement —
// every SimResult field and LiveAt at each device's peak — on the Placeto link (sender bus, op
// gap), the shared channel with latency, zero-time ops, co-location groups, a memory capacity, and
// the leaderboard's RNNLM on the K80 preset. It also resumes (fewer op finishes simulated than
// ops) on most moves, and the ready-list order runs in full.
#include "cost_models/tpu/placed_graph_sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cost_models/tpu/machine.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/rnn_graphs.h"

namespace placerl::perf {
namespace {

using graphs::ComputeGraph;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void ExpectSameVector(const std::vector<double>& a, const std::vector<double>& b, const char* what, int move) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_TRUE(SameBits(a[i], b[i])) << what << "[" << i << "] " << a[i] << " vs " << b[i] << " at move " << move;
}

void ExpectSameResult(const SimResult& a, const SimResult& b, int move) {
  ASSERT_TRUE(SameBits(a.makespan, b.makespan)) << a.makespan << " vs " << b.makespan << " at move " << move;
  ASSERT_TRUE(SameBits(a.busy_until, b.busy_until)) << "move " << move;
  ExpectSameVector(a.busy, b.busy, "busy", move);
  ExpectSameVector(a.utilisation, b.utilisation, "utilisation", move);
  ExpectSameVector(a.peak_memory, b.peak_memory, "peak_memory", move);
  ExpectSameVector(a.peak_time, b.peak_time, "peak_time", move);
  ExpectSameVector(a.op_start, b.op_start, "op_start", move);
  ExpectSameVector(a.op_end, b.op_end, "op_end", move);
  ASSERT_EQ(a.oom, b.oom) << "move " << move;
  ASSERT_EQ(a.oom_device, b.oom_device) << "move " << move;
  ASSERT_EQ(a.num_transfers, b.num_transfers) << "move " << move;
  ASSERT_TRUE(SameBits(a.bytes_transferred, b.bytes_transferred)) << "move " << move;
}

// Random moves on `g` with an incremental simulator against a full one; returns how many of
// the moves resumed from a snapshot.
int CompareOnRandomMoves(const ComputeGraph& g, const SimConfig& cfg, int moves, uint64_t seed) {
  Simulator inc(g, cfg), full(g, cfg);
  full.set_incremental(false);
  const int n = g.num_ops(), nd = static_cast<int>(cfg.devices.size());
  std::mt19937_64 rng(seed);
  std::vector<int> dev(n);
  for (int i = 0; i < n; ++i) dev[i] = static_cast<int>(rng() % nd);
  std::vector<std::vector<int>> history;
  const auto groups = graphs::ColocationMembers(g);
  int resumed = 0;
  for (int m = 0; m < moves; ++m) {
    if (m > 0) {
      const int kind = static_cast<int>(rng() % 6);
      if (kind == 0) {  // one op
        dev[rng() % n] = static_cast<int>(rng() % nd);
      } else if (kind == 1) {  // one co-location group
        const int d = static_cast<int>(rng() % nd);
        for (int o : groups[rng() % groups.size()]) dev[o] = d;
      } else if (kind == 2) {  // a run of ops
        const int a = static_cast<int>(rng() % n), len = 1 + static_cast<int>(rng() % 20);
        const int d = static_cast<int>(rng() % nd);
        for (int o = a; o < std::min(n, a + len); ++o) dev[o] = d;
      } else if (kind == 3) {  // several scattered ops
        for (int k = 0; k < 5; ++k) dev[rng() % n] = static_cast<int>(rng() % nd);
      } else if (kind == 4 && !history.empty()) {  // back to an earlier placement
        dev = history[rng() % history.size()];
      } else {  // a late op (a suffix move: the case the snapshots are for)
        dev[n - 1 - static_cast<int>(rng() % std::max(1, n / 10))] = static_cast<int>(rng() % nd);
      }
    }
    history.push_back(dev);
    const SimResult& a = inc.Run(dev);
    if (inc.last_finishes_simulated() < n) ++resumed;
    const SimResult& b = full.Run(dev);
    EXPECT_EQ(full.last_finishes_simulated(), n);
    ExpectSameResult(a, b, m);
    if (::testing::Test::HasFatalFailure()) return resumed;
    for (int d = 0; d < nd; ++d) {
      const auto la = inc.LiveAt(d, a.peak_time[d]), lb = full.LiveAt(d, b.peak_time[d]);
      EXPECT_EQ(la.size(), lb.size()) << "move " << m << " device " << d;
      double sa = 0, sb = 0;
      for (const auto& t : la) sa += t.bytes;
      for (const auto& t : lb) sb += t.bytes;
      EXPECT_EQ(sa, sb) << "move " << m << " device " << d;
    }
  }
  return resumed;
}

// A layered random DAG with sizes and memory, some zero-time ops and co-location groups.
ComputeGraph TestGraph(int ops, uint64_t seed) {
  ComputeGraph g = graphs::MakeLayeredRandomGraph(ops, 12, 3, seed);
  std::vector<graphs::OpInfo> infos;
  std::mt19937_64 rng(seed + 7);
  for (int i = 0; i < g.num_ops(); ++i) {
    graphs::OpInfo o;
    o.name = "op" + std::to_string(i);
    o.kind = "matmul";
    o.flops = (i % 11 == 5) ? 0 : 1e6 * (1 + static_cast<double>(rng() % 1000));
    o.bytes = 0;
    o.output_bytes = static_cast<double>(rng() % 4) * 1e6;
    o.param_bytes = (i % 7 == 0) ? 2e6 : 0;
    o.temp_bytes = (i % 5 == 0) ? 1e6 : 0;
    for (int e = g.in_offsets[i]; e < g.in_offsets[i + 1]; ++e) o.inputs.push_back(g.in_sources[e]);
    if (i % 9 == 0 && i + 1 < g.num_ops()) o.colocation = "g" + std::to_string(i / 9);
    infos.push_back(o);
  }
  for (int i = 0; i < g.num_ops(); ++i)
    if (i % 9 == 1 && i >= 1 && !infos[i - 1].colocation.empty()) infos[i].colocation = infos[i - 1].colocation;
  return graphs::BuildComputeGraph(infos);
}

SimConfig Devices(int nd, double capacity) {
  return SimConfig{std::vector<SimDevice>(nd, PlainDevice(1e12, 1e12, capacity)), {}, 0, false};
}

TEST(PlacedGraphSimIncremental, PlacetoLinkEqualsFullSimulationOnRandomMoves) {
  const ComputeGraph g = TestGraph(400, 3);
  SimConfig cfg = PlacetoConfig(Devices(3, 2e7).devices);
  const int resumed = CompareOnRandomMoves(g, cfg, 300, 11);
  EXPECT_GT(resumed, 100);
}

TEST(PlacedGraphSimIncremental, SharedChannelWithLatencyEqualsFullSimulation) {
  const ComputeGraph g = TestGraph(300, 5);
  SimConfig cfg = BaechiConfig(Devices(4, 1e300).devices);
  cfg.ready_list_order = false;
  cfg.op_gap_s = 2e-6;
  const int resumed = CompareOnRandomMoves(g, cfg, 300, 12);
  EXPECT_GT(resumed, 100);
}

TEST(PlacedGraphSimIncremental, TwoDevicesAndTinyGraphs) {
  for (int ops : {1, 2, 5, 40}) {
    const ComputeGraph g = TestGraph(ops, 9);
    CompareOnRandomMoves(g, PlacetoConfig(Devices(2, 1e300).devices), 60, ops);
  }
}

TEST(PlacedGraphSimIncremental, RnnLmOnTheK80PresetEqualsFullSimulation) {
  graphs::RnnLmConfig rc;
  rc.steps = 8;
  const ComputeGraph g = graphs::MakeRnnLmGraph(rc);
  const Machine m = K80Machine(2, 0, 0.39);
  const int resumed = CompareOnRandomMoves(g, m.sim, 120, 13);
  EXPECT_GT(resumed, 40);
}

TEST(PlacedGraphSimIncremental, ReadyListOrderAndOffRunInFull) {
  const ComputeGraph g = TestGraph(200, 4);
  const int resumed = CompareOnRandomMoves(g, BaechiConfig(Devices(3, 1e300).devices), 40, 14);
  EXPECT_EQ(resumed, 0);
  Simulator off(g, PlacetoConfig(Devices(3, 1e300).devices));
  off.set_incremental(false);
  std::vector<int> dev(g.num_ops(), 0);
  off.Run(dev);
  dev.back() = 1;
  off.Run(dev);
  EXPECT_EQ(off.last_finishes_simulated(), g.num_ops());
  // On: a move of the last op resumes late, and the same placement again simulates nothing.
  Simulator on(g, PlacetoConfig(Devices(3, 1e300).devices));
  dev.back() = 0;
  on.Run(dev);
  dev.back() = 1;
  on.Run(dev);
  EXPECT_LT(on.last_finishes_simulated(), g.num_ops() / 4);
  on.Run(dev);
  EXPECT_EQ(on.last_finishes_simulated(), 0);
}

}  // namespace
}  // namespace placerl::perf
