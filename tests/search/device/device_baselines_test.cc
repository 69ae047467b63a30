// The device placement baselines on graphs whose best placement is known by hand: two equal
// independent chains go one per device; a chain with expensive transfers stays on one device;
// a graph too big for one device is split by the memory-aware placers and never runs out of
// memory in the simulator; co-location groups are never split (random layered graphs with
// random groups, every method); HEFT's ranks and choices on a 4-op DAG and m-SCT's LP on 3-op
// graphs match hand calculations; METIS and Scotch balance a symmetric graph; bad options and
// infeasible memory are refused with clear errors.
#include "search/device/baselines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "datasets/graphs/training_graph.h"
#include "datasets/util/errors.h"

namespace placerl::search {
namespace {

using graphs::ComputeGraph;
using graphs::OpInfo;

// Plain devices (1 TFLOP/s, 1 TB/s) with capacity `cap`; a link of `latency` s and `bw` B/s.
perf::SimConfig Machine(int devices, double latency, double bw,
                        double cap = std::numeric_limits<double>::infinity()) {
  perf::SimConfig cfg = perf::BaechiConfig(
      std::vector<perf::SimDevice>(devices, perf::PlainDevice(1e12, 1e12, cap)));
  cfg.link.latency_s = latency;
  cfg.link.bandwidth = bw;
  return cfg;
}

OpInfo Op(const std::string& name, double time_s, double out, std::vector<int> inputs = {}) {
  OpInfo o;
  o.name = name;
  o.time_s = time_s;
  o.output_bytes = out;
  o.inputs = std::move(inputs);
  return o;
}

// `chains` independent chains of `len` ops (chain c = ops c*len .. c*len+len-1).
ComputeGraph Chains(int chains, int len, double time_s, double out, double params = 0) {
  std::vector<OpInfo> ops;
  for (int c = 0; c < chains; ++c)
    for (int k = 0; k < len; ++k) {
      const int i = c * len + k;
      ops.push_back(Op("c" + std::to_string(c) + "_" + std::to_string(k), time_s, out,
                       k ? std::vector<int>{i - 1} : std::vector<int>{}));
      ops.back().param_bytes = params;
    }
  return graphs::BuildComputeGraph(ops);
}

using Placer = std::function<std::vector<int>(const ComputeGraph&, const perf::SimConfig&)>;
struct Named {
  const char* name;
  Placer place;
};
std::vector<Named> AllMethods() {
  return {{"single", [](auto& g, auto& c) { return PlaceSingleDevice(g, c); }},
          {"round_robin", [](auto& g, auto& c) { return PlaceRoundRobin(g, c); }},
          {"heft", [](auto& g, auto& c) { return PlaceHeft(g, c); }},
          {"m_topo", [](auto& g, auto& c) { return PlaceMTopo(g, c); }},
          {"m_etf", [](auto& g, auto& c) { return PlaceMEtf(g, c); }},
          {"m_sct", [](auto& g, auto& c) { return PlaceMSct(g, c); }},
          {"m_etf_schedule_memory",
           [](auto& g, auto& c) {
             return PlaceMEtf(g, c, MEtfOptions{MemoryAccounting::kSchedule});
           }},
          {"m_sct_schedule_memory",
           [](auto& g, auto& c) {
             MSctOptions o;
             o.memory = MemoryAccounting::kSchedule;
             return PlaceMSct(g, c, o);
           }},
          {"metis", [](auto& g, auto& c) { return PlaceMetis(g, c); }},
          {"scotch", [](auto& g, auto& c) { return PlaceScotch(g, c); }}};
}

void ExpectValid(const ComputeGraph& g, const perf::SimConfig& cfg, const std::vector<int>& p,
                 const std::string& method) {
  ASSERT_EQ(p.size(), static_cast<size_t>(g.num_ops())) << method;
  for (int d : p) {
    ASSERT_GE(d, 0) << method;
    ASSERT_LT(d, static_cast<int>(cfg.devices.size())) << method;
  }
  EXPECT_EQ(graphs::ColocationViolation(g, p), "") << method;
}

TEST(DeviceBaselines, ScheduleMemoryFreesOutputsOnceTheirConsumersStart) {
  // A chain of 8 ops with 1 MB outputs: 8 MB statically, but at most two outputs are alive
  // (an op's own and its input until it starts; the simulator agrees: 2 MB peak).
  const ComputeGraph g = Chains(1, 8, 1e-3, 1e6);
  const perf::SimConfig one = Machine(1, 1e-4, 1e9, 2e6);
  EXPECT_THROW(PlaceMEtf(g, one), InfeasibleAction);
  const std::vector<int> p = PlaceMEtf(g, one, MEtfOptions{MemoryAccounting::kSchedule});
  EXPECT_EQ(p, std::vector<int>(8, 0));
  EXPECT_FALSE(perf::SimulatePlacement(g, p, one).oom);
  EXPECT_THROW(PlaceMEtf(g, Machine(1, 1e-4, 1e9, 1.5e6), MEtfOptions{MemoryAccounting::kSchedule}),
               InfeasibleAction);
  // Parameters stay: 4 MB per op on two 25 MB devices. Device 0 takes ops while 4 MB × k plus
  // the two live outputs fit (k = 5: 20 + 1 + 1 = 22 MB; a sixth needs 26), the rest go to 1.
  const ComputeGraph heavy = Chains(1, 8, 1e-3, 1e6, 4e6);
  const perf::SimConfig two = Machine(2, 1e-4, 1e9, 25e6);
  for (const char* name : {"m_etf", "m_sct"}) {
    std::vector<int> q;
    if (std::string(name) == "m_etf") {
      q = PlaceMEtf(heavy, two, MEtfOptions{MemoryAccounting::kSchedule});
    } else {
      MSctOptions o;
      o.memory = MemoryAccounting::kSchedule;
      q = PlaceMSct(heavy, two, o);
    }
    EXPECT_EQ(q, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1})) << name;
    EXPECT_FALSE(perf::SimulatePlacement(heavy, q, two).oom) << name;
  }
}

TEST(DeviceBaselines, TwoEqualIndependentChainsGoOneChainPerDevice) {
  const ComputeGraph g = Chains(2, 6, 1e-3, 1e6);
  const perf::SimConfig cfg = Machine(2, 1e-4, 1e9);  // a transfer costs 1.1 ms > an op
  for (const Named& m : AllMethods()) {
    const std::string name = m.name;
    if (name == "single" || name == "round_robin" || name == "m_topo") continue;  // not their aim
    const std::vector<int> p = m.place(g, cfg);
    ExpectValid(g, cfg, p, name);
    for (int k = 1; k < 6; ++k) {
      EXPECT_EQ(p[k], p[0]) << name;
      EXPECT_EQ(p[6 + k], p[6]) << name;
    }
    EXPECT_NE(p[0], p[6]) << name;
    EXPECT_NEAR(perf::SimulatePlacement(g, p, cfg).makespan, 6e-3, 1e-12) << name;
  }
}

TEST(DeviceBaselines, ChainWithExpensiveTransfersStaysOnOneDevice) {
  const ComputeGraph g = Chains(1, 8, 1e-3, 1e9);  // each transfer 1 s
  const perf::SimConfig cfg = Machine(4, 1e-4, 1e9);
  for (const char* name : {"single", "heft", "m_etf", "m_sct"}) {
    const std::vector<int> p = PlaceDeviceBaseline(name, g, cfg);
    ExpectValid(g, cfg, p, name);
    EXPECT_EQ(std::set<int>(p.begin(), p.end()).size(), 1u) << name;
    EXPECT_NEAR(perf::SimulatePlacement(g, p, cfg).makespan, 8e-3, 1e-12) << name;
  }
}

TEST(DeviceBaselines, SingleDevicePicksTheFastestDeviceThatFits) {
  const ComputeGraph g = Chains(1, 4, -1, 1e6, 1e6);  // roofline times
  std::vector<OpInfo> ops;
  for (int i = 0; i < g.num_ops(); ++i) {
    OpInfo o = g.op(i);
    o.flops = 1e9;
    ops.push_back(o);
  }
  const ComputeGraph gf = graphs::BuildComputeGraph(ops);
  perf::SimConfig cfg = Machine(3, 0, 1e9);
  cfg.devices[0] = perf::PlainDevice(1e12, 1e12, 1e12);  // slow, big
  cfg.devices[1] = perf::PlainDevice(4e12, 1e12, 1e6);   // fastest, too small
  cfg.devices[2] = perf::PlainDevice(2e12, 1e12, 1e12);  // fast, big
  EXPECT_EQ(PlaceSingleDevice(gf, cfg), std::vector<int>(4, 2));
  cfg.devices[2].memory_capacity = 1e6;
  EXPECT_EQ(PlaceSingleDevice(gf, cfg), std::vector<int>(4, 0));
  cfg.devices[0].memory_capacity = 1e6;
  EXPECT_THROW(PlaceSingleDevice(gf, cfg), InfeasibleAction);
}

TEST(DeviceBaselines, RoundRobinDealsCoLocationGroupsInTopologicalOrder) {
  std::vector<OpInfo> ops{Op("a", 1e-3, 0), Op("b", 1e-3, 0, {0}), Op("c", 1e-3, 0, {1}),
                          Op("d", 1e-3, 0, {2})};
  ops[0].colocation = "x";
  ops[2].colocation = "x";
  const ComputeGraph g = graphs::BuildComputeGraph(ops);
  EXPECT_EQ(PlaceRoundRobin(g, Machine(2, 0, 1e9)), (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(PlaceRoundRobin(g, Machine(3, 0, 1e9)), (std::vector<int>{0, 1, 0, 2}));
}

TEST(DeviceBaselines, MemoryForcesASplitThatTheSimulatorConfirms) {
  // 8 ops × (4 MB params + 1 MB output) = 40 MB statically; devices of 25 MB.
  const ComputeGraph g = Chains(1, 8, 1e-3, 1e6, 4e6);
  const perf::SimConfig cfg = Machine(2, 1e-4, 1e9, 25e6);
  EXPECT_THROW(PlaceSingleDevice(g, cfg), InfeasibleAction);
  for (const char* name : {"m_topo", "m_etf", "m_sct"}) {
    const std::vector<int> p = PlaceDeviceBaseline(name, g, cfg);
    ExpectValid(g, cfg, p, name);
    EXPECT_EQ(std::set<int>(p.begin(), p.end()).size(), 2u) << name;
    const perf::SimResult r = perf::SimulatePlacement(g, p, cfg);
    EXPECT_FALSE(r.oom) << name;
    for (double peak : r.peak_memory) EXPECT_LE(peak, 25e6) << name;
  }
  // m-TOPO fills in topological order up to 40/2 + 5 = 25 MB: ops 0-4 then 5-7.
  EXPECT_EQ(PlaceMTopo(g, cfg), (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1}));
  // Nothing holds 40 MB + a received copy on two 15 MB devices.
  const perf::SimConfig tiny = Machine(2, 1e-4, 1e9, 15e6);
  for (const char* name : {"m_topo", "m_etf", "m_sct"}) {
    try {
      PlaceDeviceBaseline(name, g, tiny);
      ADD_FAILURE() << name << " placed an infeasible graph";
    } catch (const InfeasibleAction& e) {
      EXPECT_NE(std::string(e.what()).find("fits on no device"), std::string::npos) << e.what();
    }
  }
}

// A layered random graph with random co-location groups (about half the ops in 30 groups).
ComputeGraph GroupedLayered(int num_ops, uint64_t seed) {
  const ComputeGraph base = graphs::MakeLayeredRandomGraph(num_ops, 12, 3, seed);
  std::mt19937_64 rng(seed * 7 + 1);
  std::vector<OpInfo> ops;
  for (int i = 0; i < base.num_ops(); ++i) {
    OpInfo o = base.op(i);
    if (rng() % 2) o.colocation = "grp" + std::to_string(rng() % 30);
    ops.push_back(o);
  }
  return graphs::BuildComputeGraph(ops);
}

TEST(DeviceBaselines, NoMethodSplitsACoLocationGroupAndMemoryAwareOnesNeverRunOutOfMemory) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const ComputeGraph g = GroupedLayered(120, seed);
    double total = 0;
    for (int i = 0; i < g.num_ops(); ++i)
      total += g.param_bytes[i] + g.output_bytes[i] + g.temp_bytes[i];
    for (int devices : {2, 3}) {
      // Room for about 1.6× the graph over all devices: the memory-aware placers must split.
      const double cap = 1.6 * total / devices;
      for (const perf::SimConfig& cfg :
           {Machine(devices, 134e-6, 5.7e9, cap),
            perf::PlacetoConfig(std::vector<perf::SimDevice>(
                devices, perf::PlainDevice(1e13, 1e12, cap)))}) {
        for (const Named& m : AllMethods()) {
          const std::string name = m.name;
          if (name == "single") continue;  // the graph does not fit one device
          const std::vector<int> p = m.place(g, cfg);
          ExpectValid(g, cfg, p, name + " seed " + std::to_string(seed));
          if (name == "m_topo" || name == "m_etf" || name == "m_sct") {
            EXPECT_FALSE(perf::SimulatePlacement(g, p, cfg).oom) << name << " seed " << seed;
            EXPECT_GE(std::set<int>(p.begin(), p.end()).size(), 2u) << name;
          }
          EXPECT_EQ(m.place(g, cfg), p) << name << " is not deterministic";
        }
      }
    }
  }
}

TEST(DeviceBaselines, TrainingGraphGroupsStayTogether) {
  // Forward chain with weights → op, grad and update co-located (AddTrainingOps).
  std::vector<OpInfo> fwd;
  for (int k = 0; k < 6; ++k) {
    OpInfo o = Op("f" + std::to_string(k), -1, 1e6, k ? std::vector<int>{k - 1} : std::vector<int>{});
    o.flops = 1e9;
    o.bytes = 1e7;
    o.param_bytes = 4e6;
    fwd.push_back(o);
  }
  const ComputeGraph g = graphs::BuildComputeGraph(graphs::AddTrainingOps(fwd));
  ASSERT_GT(g.num_ops(), 12);
  const perf::SimConfig cfg = Machine(4, 134e-6, 5.7e9);
  for (const Named& m : AllMethods()) ExpectValid(g, cfg, m.place(g, cfg), m.name);
}

// a → {b, c} → d; times 1, 2, 3, 1 ms; outputs a 1 MB, b 2 MB, c and d nothing; 1 GB/s.
ComputeGraph HeftDag() {
  return graphs::BuildComputeGraph({Op("a", 1e-3, 1e6), Op("b", 2e-3, 2e6, {0}),
                                    Op("c", 3e-3, 0, {0}), Op("d", 1e-3, 0, {1, 2})});
}

TEST(DeviceBaselines, HeftRanksAndChoicesMatchAHandCalculation) {
  const ComputeGraph g = HeftDag();
  const perf::SimConfig cfg = Machine(2, 0, 1e9);
  // rank d = 1; b = 2 + 2 + 1 = 5; c = 3 + 0 + 1 = 4; a = 1 + max(1 + 5, 1 + 4) = 7 (ms).
  const std::vector<double> rank = HeftUpwardRanks(g, cfg);
  const std::vector<double> expect{7e-3, 5e-3, 4e-3, 1e-3};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(rank[i], expect[i], 1e-12) << i;
  // a → 0 (EFT 1 on both); b → 0 (3 vs 1 + 1 + 2 = 4); c → 1 (3 + 3 = 6 vs 2 + 3 = 5);
  // d → 0 (max(3, 5) + 1 = 6 vs max(5, 3 + 2) + 1 = 6: tie, lowest device).
  EXPECT_EQ(PlaceHeft(g, cfg), (std::vector<int>{0, 0, 1, 0}));
  // One device: no transfer term in the ranks.
  const std::vector<double> one = HeftUpwardRanks(g, Machine(1, 0, 1e9));
  EXPECT_NEAR(one[0], 1e-3 + 3e-3 + 1e-3, 1e-12);
}

TEST(DeviceBaselines, HeftMatchesTheReferenceImplementationOnRandomGraphs) {
  // Golden placements from mrocklin/heft 5e976e9 (`schedule`, with insertion into gaps) on
  // these graphs over devices of the given FLOP/s: op time = flops / peak, a transfer costs
  // the producer's out bytes (1 B/s, no latency). Weights are random to 3 decimals, so no two
  // ranks tie (the reference orders tied ranks arbitrarily).
  struct Case {
    std::vector<double> peaks;
    const char* graph;
    std::vector<int> placement;
  };
  const std::vector<Case> cases{
      {{1.0, 2.0},
       "op o0 matmul flops=4.619 out=6.717\nop o1 matmul flops=8.394 out=5.588 inputs=o0\nop o2 matmul flops=7.431 out=5.709 inputs=o0\nop o3 matmul flops=4.573 out=1.702\nop o4 matmul flops=5.763 out=4.754 inputs=o0,o1\nop o5 matmul flops=1.476 out=2.282 inputs=o4\nop o6 matmul flops=1.241 out=5.567 inputs=o1,o4\nop o7 matmul flops=2.869 out=3.53\nop o8 matmul flops=6.3 out=5.488 inputs=o1,o6\nop o9 matmul flops=6.662 out=3.783 inputs=o8\nop o10 matmul flops=3.312 out=0.843\nop o11 matmul flops=4.203 out=10.159 inputs=o0,o1,o10\nop o12 matmul flops=1.004 out=2.517\nop o13 matmul flops=4.76 out=11.764 inputs=o1,o6,o9\nop o14 matmul flops=6.036 out=9.342 inputs=o1,o5\nop o15 matmul flops=3.49 out=0.182 inputs=o1,o12,o14\nop o16 matmul flops=2.077 out=8.484\nop o17 matmul flops=1.479 out=9.564 inputs=o6\nop o18 matmul flops=4.579 out=2.288 inputs=o13\nop o19 matmul flops=6.15 out=1.398 inputs=o0,o6,o8\n",
       {1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1}},
      {{1.0, 1.0, 4.0},
       "op o0 matmul flops=4.797 out=7.89\nop o1 matmul flops=6.331 out=1.711\nop o2 matmul flops=8.973 out=5.79 inputs=o0,o1\nop o3 matmul flops=5.466 out=7.936\nop o4 matmul flops=8.824 out=4.412 inputs=o1\nop o5 matmul flops=1.471 out=9.826\nop o6 matmul flops=5.108 out=9.831 inputs=o0,o3\nop o7 matmul flops=1.149 out=0.729 inputs=o1,o4\nop o8 matmul flops=1.728 out=11.846 inputs=o1\nop o9 matmul flops=6.287 out=11.656 inputs=o5,o8\nop o10 matmul flops=2.308 out=8.362\nop o11 matmul flops=5.441 out=6.087\nop o12 matmul flops=4.204 out=5.026 inputs=o7\nop o13 matmul flops=5.874 out=6.494 inputs=o1,o11\nop o14 matmul flops=8.74 out=11.716 inputs=o4,o5\nop o15 matmul flops=8.529 out=10.394 inputs=o10\nop o16 matmul flops=3.479 out=3.029 inputs=o11\nop o17 matmul flops=3.97 out=6.879 inputs=o0,o5\nop o18 matmul flops=4.047 out=10.309\nop o19 matmul flops=5.152 out=2.666 inputs=o1\nop o20 matmul flops=4.106 out=9.263\nop o21 matmul flops=7.026 out=2.648\nop o22 matmul flops=6.567 out=0.442 inputs=o15\nop o23 matmul flops=3.753 out=7.643\nop o24 matmul flops=5.112 out=4.42 inputs=o9\nop o25 matmul flops=4.645 out=8.363 inputs=o7\nop o26 matmul flops=8.647 out=2.011 inputs=o5,o11\nop o27 matmul flops=2.514 out=8.982 inputs=o0,o8\nop o28 matmul flops=8.324 out=9.616\nop o29 matmul flops=2.933 out=0.104\n",
       {2, 2, 2, 1, 2, 1, 2, 0, 2, 2, 0, 2, 0, 2, 2, 0, 2, 2, 2, 1, 1, 1, 0, 2, 2, 2, 2, 1, 2, 0}},
      {{2.0, 1.0, 1.0, 0.5},
       "op o0 matmul flops=3.072 out=8.223\nop o1 matmul flops=6.473 out=10.192 inputs=o0\nop o2 matmul flops=6.329 out=10.431 inputs=o0\nop o3 matmul flops=1.567 out=10.149 inputs=o0,o1\nop o4 matmul flops=2.01 out=8.21\nop o5 matmul flops=8.944 out=10.013\nop o6 matmul flops=7.97 out=9.717 inputs=o3,o5\nop o7 matmul flops=4.494 out=1.674 inputs=o2,o6\nop o8 matmul flops=2.872 out=10.779 inputs=o5,o6\nop o9 matmul flops=6.242 out=4.152 inputs=o7,o8\nop o10 matmul flops=5.89 out=11.846 inputs=o2,o7,o8\nop o11 matmul flops=3.346 out=2.153 inputs=o4,o5\nop o12 matmul flops=4.676 out=7.266 inputs=o2,o7,o9\nop o13 matmul flops=5.4 out=6.784 inputs=o11\nop o14 matmul flops=3.932 out=0.879 inputs=o0,o6,o11\nop o15 matmul flops=4.395 out=10.41 inputs=o2\nop o16 matmul flops=4.984 out=8.378 inputs=o5,o8,o13\nop o17 matmul flops=6.89 out=3.015 inputs=o6,o11\nop o18 matmul flops=5.163 out=7.882 inputs=o15\nop o19 matmul flops=2.694 out=7.407\nop o20 matmul flops=3.875 out=8.732 inputs=o5,o9\nop o21 matmul flops=2.543 out=9.449\nop o22 matmul flops=8.205 out=2.008 inputs=o17,o19,o20\nop o23 matmul flops=7.456 out=8.342 inputs=o2,o10,o20\nop o24 matmul flops=5.213 out=1.518 inputs=o3,o13\nop o25 matmul flops=3.412 out=3.227\nop o26 matmul flops=8.507 out=6.264\nop o27 matmul flops=1.046 out=4.017 inputs=o16,o17\nop o28 matmul flops=7.595 out=2.677 inputs=o9\nop o29 matmul flops=7.39 out=4.514 inputs=o23\nop o30 matmul flops=2.171 out=5.104 inputs=o8\nop o31 matmul flops=4.399 out=2.829 inputs=o18\nop o32 matmul flops=3.299 out=2.446 inputs=o2,o27\nop o33 matmul flops=3.535 out=5.528\nop o34 matmul flops=7.065 out=7.198\nop o35 matmul flops=6.227 out=3.677 inputs=o21,o24,o30\nop o36 matmul flops=1.49 out=6.337 inputs=o9\nop o37 matmul flops=7.909 out=1.343 inputs=o13\nop o38 matmul flops=3.464 out=7.239 inputs=o2,o22\nop o39 matmul flops=2.026 out=4.332 inputs=o27,o37\n",
       {0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 1, 3, 0, 2, 0, 1, 0, 0, 2, 0, 3, 0, 0, 1, 1, 2, 1, 2, 0, 2, 0, 1, 2, 3, 1, 2, 2, 0, 3}},
  };
  for (const Case& c : cases) {
    const ComputeGraph g = graphs::ParseComputeGraph(c.graph, "golden");
    perf::SimConfig cfg = Machine(static_cast<int>(c.peaks.size()), 0, 1);
    for (size_t d = 0; d < c.peaks.size(); ++d) cfg.devices[d] = perf::PlainDevice(c.peaks[d], 1);
    EXPECT_EQ(PlaceHeft(g, cfg), c.placement) << c.peaks.size() << " devices";
    HeftOptions append;
    append.insertion = false;
    ExpectValid(g, cfg, PlaceHeft(g, cfg, append), "heft append");
  }
}

TEST(DeviceBaselines, SctLpOnAJoinMatchesAHandSolution) {
  // a (1 µs) and b (3 µs) feed c (1 µs); every transfer costs 10 µs. At most one of the two
  // edges can be free: 1 + 10·x_ac = 3 + 10·x_bc with x_ac + x_bc = 1 gives x_ac = 0.6,
  // x_bc = 0.4, s_c = 7, w = 8.
  const ComputeGraph g = graphs::BuildComputeGraph(
      {Op("a", 1e-6, 0), Op("b", 3e-6, 0), Op("c", 1e-6, 0, {0, 1})});
  const perf::SimConfig cfg = Machine(2, 10e-6, 1e9);
  const SctLpSolution lp = SolveSctLp(g, cfg, 0.5);
  ASSERT_EQ(lp.edge_x.size(), 2u);  // CSR: a→c, b→c
  EXPECT_NEAR(lp.edge_x[0], 0.6, 1e-6);
  EXPECT_NEAR(lp.edge_x[1], 0.4, 1e-6);
  EXPECT_NEAR(lp.start_us[2], 7, 1e-6);
  EXPECT_NEAR(lp.makespan_us, 8, 1e-6);
  EXPECT_EQ(lp.favourite_child, (std::vector<int>{-1, 2, -1}));  // 0.4 ≤ 0.5
  EXPECT_EQ(SolveSctLp(g, cfg, 0.1).favourite_child, (std::vector<int>{-1, -1, -1}));
  // A fork a → {b, c}, all 1 µs: both edges at 0.5, w = 1 + 5 + 1 = 7.
  const ComputeGraph fork = graphs::BuildComputeGraph(
      {Op("a", 1e-6, 0), Op("b", 1e-6, 0, {0}), Op("c", 1e-6, 0, {0})});
  const SctLpSolution f = SolveSctLp(fork, cfg, 0.1);
  EXPECT_NEAR(f.makespan_us, 7, 1e-6);
  EXPECT_NEAR(f.edge_x[0], 0.5, 1e-6);
  EXPECT_NEAR(f.edge_x[1], 0.5, 1e-6);
  // A chain: every edge free (x = 0), each op the favourite child of its producer.
  const ComputeGraph chain = Chains(1, 3, 1e-6, 0);
  const SctLpSolution c = SolveSctLp(chain, cfg, 0.1);
  EXPECT_NEAR(c.makespan_us, 3, 1e-6);
  EXPECT_EQ(c.favourite_child, (std::vector<int>{1, 2, -1}));
  // Windows of 2 ops on a chain of 5: edges 1→2 and 3→4 join windows and are never favourite;
  // window makespans 2 + 2 + 1 µs.
  const ComputeGraph chain5 = Chains(1, 5, 1e-6, 0);
  const SctLpSolution w = SolveSctLp(chain5, cfg, 0.1, 2);
  EXPECT_NEAR(w.makespan_us, 5, 1e-6);
  EXPECT_EQ(w.favourite_child, (std::vector<int>{1, -1, 3, -1, -1}));
  EXPECT_DOUBLE_EQ(w.edge_x[1], 1.0);
  EXPECT_NEAR(w.start_us[2], 2, 1e-6);
  EXPECT_NEAR(w.start_us[4], 4, 1e-6);
}

TEST(DeviceBaselines, MetisAndScotchBalanceASymmetricGraph) {
  // Four equal independent chains on 2 and 4 equal devices: equal parts and no cut.
  const ComputeGraph g = Chains(4, 10, 1e-3, 1e6);
  for (int devices : {2, 4}) {
    const perf::SimConfig cfg = Machine(devices, 1e-4, 1e9);
    for (const char* name : {"metis", "scotch"}) {
      const std::vector<int> p = PlaceDeviceBaseline(name, g, cfg);
      ExpectValid(g, cfg, p, name);
      std::vector<int> count(devices, 0);
      for (int d : p) ++count[d];
      for (int d = 0; d < devices; ++d) EXPECT_EQ(count[d], 40 / devices) << name << " " << d;
      for (int c = 0; c < 4; ++c)
        for (int k = 1; k < 10; ++k) EXPECT_EQ(p[c * 10 + k], p[c * 10]) << name;
    }
  }
}

TEST(DeviceBaselines, MEtfMTopoAndSctSchedulingMatchBaechisOwnPlacementsOnRandomGraphs) {
  // Golden placements from Baechi's m_etf.py, m_topo.py (uniform) and m_sct.py with its LP
  // replaced by the given favourite children (beomyeol/baechi afe7278, colocation off, memory
  // unconstrained) run on these graphs: integer op times (s) and transfer times (= out bytes at
  // 1 B/s, no latency), so every tie is exact in both implementations.
  struct Case {
    int devices;
    const char* graph;
    std::vector<int> m_etf, m_topo, favourite, m_sct;
  };
  const std::vector<Case> cases{
      {2, "op o0 matmul time=3 out=9\nop o1 matmul time=2 out=4\nop o2 matmul time=8 out=12 inputs=o0,o1\nop o3 matmul time=2 out=7\nop o4 matmul time=7 out=6\nop o5 matmul time=8 out=4 inputs=o4\nop o6 matmul time=2 out=5\nop o7 matmul time=1 out=0\nop o8 matmul time=7 out=10 inputs=o6\nop o9 matmul time=1 out=8 inputs=o7\nop o10 matmul time=8 out=8 inputs=o5\nop o11 matmul time=4 out=10 inputs=o7\nop o12 matmul time=5 out=0 inputs=o1,o8,o10\nop o13 matmul time=3 out=10 inputs=o1,o11\nop o14 matmul time=6 out=11 inputs=o8,o10,o13\nop o15 matmul time=4 out=4 inputs=o9,o14\nop o16 matmul time=8 out=8 inputs=o1,o7,o15\nop o17 matmul time=7 out=6 inputs=o11\nop o18 matmul time=9 out=11 inputs=o2,o14\nop o19 matmul time=9 out=1 inputs=o16\n",
       {0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0},
       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
       {2, 12, 18, -1, 5, 10, 8, 9, 14, 15, -1, 13, -1, -1, -1, 16, 19, -1, -1, -1},
       {0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1}},
      {3, "op o0 matmul time=1 out=1\nop o1 matmul time=2 out=5\nop o2 matmul time=5 out=4 inputs=o0\nop o3 matmul time=3 out=6 inputs=o1,o2\nop o4 matmul time=9 out=5 inputs=o2,o3\nop o5 matmul time=1 out=0 inputs=o3\nop o6 matmul time=6 out=6 inputs=o4\nop o7 matmul time=3 out=8\nop o8 matmul time=4 out=3\nop o9 matmul time=3 out=5\nop o10 matmul time=3 out=8 inputs=o5,o8\nop o11 matmul time=9 out=2 inputs=o6\nop o12 matmul time=9 out=12 inputs=o9\nop o13 matmul time=6 out=5 inputs=o2\nop o14 matmul time=7 out=11 inputs=o7,o10\nop o15 matmul time=9 out=3 inputs=o4\nop o16 matmul time=8 out=8 inputs=o11,o14\nop o17 matmul time=8 out=5 inputs=o14,o15\nop o18 matmul time=4 out=5 inputs=o5,o8\nop o19 matmul time=8 out=4 inputs=o16\nop o20 matmul time=9 out=8 inputs=o18,o19\nop o21 matmul time=7 out=4 inputs=o6,o15\nop o22 matmul time=9 out=5 inputs=o2,o19\nop o23 matmul time=6 out=11\nop o24 matmul time=4 out=11\n",
       {0, 1, 0, 0, 0, 1, 0, 2, 1, 2, 1, 0, 2, 0, 2, 1, 2, 2, 2, 0, 0, 0, 1, 1, 1},
       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2},
       {2, 3, 4, 5, 6, 10, 11, 14, 18, 12, -1, 16, -1, -1, 17, 21, 19, -1, 20, 22, -1, -1, -1, -1, -1},
       {0, 1, 0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 2, 0, 1, 2, 1, 1, 1, 1, 0, 2, 1, 1, 1}},
      {4, "op o0 matmul time=4 out=9\nop o1 matmul time=9 out=2 inputs=o0\nop o2 matmul time=1 out=7 inputs=o0\nop o3 matmul time=8 out=8 inputs=o0,o1,o2\nop o4 matmul time=4 out=10 inputs=o3\nop o5 matmul time=1 out=10\nop o6 matmul time=3 out=12\nop o7 matmul time=5 out=12\nop o8 matmul time=5 out=7 inputs=o6,o7\nop o9 matmul time=3 out=5\nop o10 matmul time=1 out=2 inputs=o3,o4,o6\nop o11 matmul time=5 out=6 inputs=o5,o8,o9\nop o12 matmul time=7 out=9 inputs=o5\nop o13 matmul time=1 out=4 inputs=o11\nop o14 matmul time=6 out=8\nop o15 matmul time=4 out=10 inputs=o1,o4\nop o16 matmul time=2 out=7 inputs=o2,o11\nop o17 matmul time=7 out=2\nop o18 matmul time=5 out=6 inputs=o1,o3\nop o19 matmul time=7 out=11 inputs=o8,o17\nop o20 matmul time=9 out=3\nop o21 matmul time=5 out=0\nop o22 matmul time=2 out=9\nop o23 matmul time=4 out=6 inputs=o8,o19\nop o24 matmul time=3 out=11\nop o25 matmul time=6 out=5 inputs=o4,o12\nop o26 matmul time=7 out=7 inputs=o19,o20,o21\nop o27 matmul time=9 out=1 inputs=o13,o20\nop o28 matmul time=4 out=4 inputs=o8,o9,o16\nop o29 matmul time=9 out=5\n",
       {0, 0, 0, 0, 0, 1, 2, 3, 3, 1, 0, 1, 1, 1, 2, 0, 0, 3, 0, 3, 2, 1, 3, 3, 3, 0, 3, 1, 0, 1},
       {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3},
       {1, 3, 16, 4, 10, 11, 8, -1, 19, 28, -1, 13, 25, 27, -1, -1, -1, -1, -1, 23, 26, -1, -1, -1, -1, -1, -1, -1, -1, -1},
       {0, 0, 0, 0, 0, 1, 2, 3, 3, 1, 0, 1, 1, 1, 2, 0, 0, 3, 0, 3, 2, 1, 3, 3, 3, 0, 3, 1, 0, 1}},
  };
  for (const Case& c : cases) {
    const ComputeGraph g = graphs::ParseComputeGraph(c.graph, "golden");
    EXPECT_EQ(PlaceMEtf(g, Machine(c.devices, 0, 1)), c.m_etf) << c.devices << " devices";
    EXPECT_EQ(PlaceMTopo(g, Machine(c.devices, 0, 1)), c.m_topo) << c.devices << " devices";
    EXPECT_EQ(PlaceMSctWithFavourites(g, Machine(c.devices, 0, 1), c.favourite), c.m_sct)
        << c.devices << " devices";
  }
}

TEST(DeviceBaselines, MetisAndScotchPartSizesFollowDeviceSpeed) {
  // Four equal chains (roofline times) on a device three times faster than the other: the
  // fast one gets three chains.
  std::vector<OpInfo> ops;
  for (int i = 0; i < 40; ++i) {
    OpInfo o = Op("o" + std::to_string(i), -1, 1e6, i % 10 ? std::vector<int>{i - 1} : std::vector<int>{});
    o.flops = 1e9;
    ops.push_back(o);
  }
  const ComputeGraph g = graphs::BuildComputeGraph(ops);
  perf::SimConfig cfg = Machine(2, 1e-4, 1e9);
  cfg.devices[1] = perf::PlainDevice(3e12, 1e12);
  for (const char* name : {"metis", "scotch"}) {
    const std::vector<int> p = PlaceDeviceBaseline(name, g, cfg);
    const int on_fast = static_cast<int>(std::count(p.begin(), p.end(), 1));
    EXPECT_NEAR(on_fast, 30, 2) << name;
  }
}

TEST(DeviceBaselines, BadOptionsAndNamesAreRefused) {
  const ComputeGraph g = HeftDag();
  const perf::SimConfig cfg = Machine(2, 0, 1e9);
  EXPECT_THROW(PlaceDeviceBaseline("magic", g, cfg), ConfigError);
  EXPECT_THROW(PlaceMSct(g, cfg, MSctOptions{-0.1}), ConfigError);
  EXPECT_THROW(PlaceMSct(g, cfg, MSctOptions{0.1, -1}), ConfigError);
  EXPECT_THROW(PlaceMetis(g, cfg, MetisOptions{1, -1}), ConfigError);
  EXPECT_THROW(PlaceMSctWithFavourites(g, cfg, {3, -1, -1, -1}), ConfigError);  // not a consumer
  EXPECT_THROW(PlaceMSctWithFavourites(g, cfg, {1, 3, 3, -1}), ConfigError);    // d twice
  EXPECT_THROW(PlaceMSctWithFavourites(g, cfg, {1}), ConfigError);
  EXPECT_THROW(PlaceHeft(g, Machine(0, 0, 1e9)), ConfigError);
  perf::SimConfig bad = cfg;
  bad.link.bandwidth = 0;
  EXPECT_THROW(PlaceMEtf(g, bad), ConfigError);
  for (const std::string& name : DeviceBaselineNames())
    ExpectValid(g, cfg, PlaceDeviceBaseline(name, g, cfg), name);
}

}  // namespace
}  // namespace placerl::search
