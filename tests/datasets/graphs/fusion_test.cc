// Fusion / co-location grouping: Baechi's merge by hand, and properties on random graphs and
// ENAS cells — the coarse graph is acyclic, keeps every cross-node edge, preserves flops,
// bytes and weights (temp = max), never splits a co-location group, meets the group target,
// and expanded placements respect co-location.
#include "datasets/graphs/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "datasets/graphs/enas_graphs.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/graphs/rnn_graphs.h"
#include "datasets/graphs/training_graph.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

int FindOp(const ComputeGraph& g, const std::string& name) {
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == name) return i;
  return -1;
}

std::vector<OpInfo> Ops(const ComputeGraph& g) {
  std::vector<OpInfo> ops;
  for (int i = 0; i < g.num_ops(); ++i) ops.push_back(g.op(i));
  return ops;
}

void CheckFusion(const ComputeGraph& g, const FusedGraph& f, int target) {
  const ComputeGraph& c = f.coarse;
  ASSERT_EQ(static_cast<int>(f.op_to_node.size()), g.num_ops());
  // acyclic (BuildComputeGraph would have thrown; check the inputs again)
  std::vector<std::vector<int>> in(c.num_ops());
  for (int v = 0; v < c.num_ops(); ++v)
    in[v].assign(c.in_sources.begin() + c.in_offsets[v], c.in_sources.begin() + c.in_offsets[v + 1]);
  EXPECT_EQ(FindCycleOp(in), -1);
  // totals; temp = max of members
  double flops = 0, bytes = 0, params = 0, cflops = 0, cbytes = 0, cparams = 0;
  std::vector<double> temp(c.num_ops(), 0);
  for (int i = 0; i < g.num_ops(); ++i) {
    flops += g.flops[i];
    bytes += g.bytes[i];
    params += g.param_bytes[i];
    temp[f.op_to_node[i]] = std::max(temp[f.op_to_node[i]], g.temp_bytes[i]);
  }
  for (int v = 0; v < c.num_ops(); ++v) {
    cflops += c.flops[v];
    cbytes += c.bytes[v];
    cparams += c.param_bytes[v];
    EXPECT_EQ(c.temp_bytes[v], temp[v]);
  }
  EXPECT_NEAR(cflops, flops, 1e-9 * flops);
  EXPECT_NEAR(cbytes, bytes, 1e-9 * bytes);
  EXPECT_NEAR(cparams, params, 1e-9 * params + 1e-9);
  // every edge between two nodes is a coarse edge, and every coarse edge comes from one
  std::set<std::pair<int, int>> from_ops, coarse;
  for (int u = 0; u < g.num_ops(); ++u)
    for (int e = g.out_offsets[u]; e < g.out_offsets[u + 1]; ++e) {
      const int a = f.op_to_node[u], b = f.op_to_node[g.out_targets[e]];
      if (a != b) from_ops.insert({a, b});
    }
  for (int v = 0; v < c.num_ops(); ++v)
    for (int e = c.out_offsets[v]; e < c.out_offsets[v + 1]; ++e) coarse.insert({v, c.out_targets[e]});
  EXPECT_EQ(from_ops, coarse);
  // a co-location group of the ops lies in one placement group
  std::vector<int> group(g.num_coloc_groups, -1);
  for (int i = 0; i < g.num_ops(); ++i) {
    int& k = group[g.coloc_group[i]];
    const int mine = c.coloc_group[f.op_to_node[i]];
    EXPECT_EQ(f.op_to_group[i], mine);
    if (k < 0) k = mine;
    EXPECT_EQ(k, mine) << g.names[i];
  }
  EXPECT_EQ(f.num_groups, c.num_coloc_groups);
  if (target > 0) EXPECT_LE(f.num_groups, target);
  // a placement of the placement groups expands to a co-location-respecting op placement
  std::mt19937 rng(5);
  std::vector<int> group_device(c.num_coloc_groups);
  for (int& d : group_device) d = static_cast<int>(rng() % 3);
  std::vector<int> node_device(c.num_ops());
  for (int v = 0; v < c.num_ops(); ++v) node_device[v] = group_device[c.coloc_group[v]];
  const std::vector<int> op_device = ExpandPlacement(f, node_device);
  EXPECT_EQ(ColocationViolation(g, op_device), "");
  for (int i = 0; i < g.num_ops(); ++i) EXPECT_EQ(op_device[i], node_device[f.op_to_node[i]]);
}

// x → fc → loss, training ops: grad/fc and update/fc fuse (update's single producer), fc and
// grad/fc cannot (grad/fc depends on fc through loss and grad/loss) but share a group.
TEST(Fusion, BaechiMergeByHand) {
  std::vector<OpInfo> ops(3);
  ops[0] = {"x", "elementwise", 1, 1, 8, 0, 5, -1, "", {}};
  ops[1] = {"fc", "matmul", 100, 30, 16, 400, 7, -1, "", {0}};
  ops[2] = {"loss", "softmax", 5, 1, 4, 0, 0, -1, "", {1}};
  const ComputeGraph g = BuildComputeGraph(AddTrainingOps(ops));
  const FusedGraph f = FuseGraph(g);
  const int fc = FindOp(g, "fc"), gfc = FindOp(g, "grad/fc"), ufc = FindOp(g, "update/fc");
  const int loss = FindOp(g, "loss"), gloss = FindOp(g, "grad/loss");
  EXPECT_EQ(f.op_to_node[gfc], f.op_to_node[ufc]);
  EXPECT_NE(f.op_to_node[fc], f.op_to_node[gfc]);
  EXPECT_EQ(f.coarse.coloc_group[f.op_to_node[fc]], f.coarse.coloc_group[f.op_to_node[gfc]]);
  // loss → grad/loss: grad/loss's other input fc is no path from loss: safe, fused
  EXPECT_EQ(f.op_to_node[loss], f.op_to_node[gloss]);
  EXPECT_EQ(f.coarse.num_ops(), g.num_ops() - 2);
  const int node = f.op_to_node[gfc];
  EXPECT_EQ(f.coarse.names[node], "grad/fc+1");
  EXPECT_EQ(f.coarse.flops[node], g.flops[gfc] + g.flops[ufc]);
  EXPECT_EQ(f.coarse.param_bytes[node], g.param_bytes[ufc]);
  EXPECT_EQ(f.coarse.temp_bytes[node], 7);
  // grad/fc's output is consumed inside the node (x has no gradient op), update/fc's (0)
  // by nobody: nothing leaves the node.
  EXPECT_EQ(f.coarse.output_bytes[node], 0);
  CheckFusion(g, f, 0);
}

// A diamond a → {b, c} → d with a and d in one group: a → d is no edge, nothing fuses; with
// the edge a → d added, merging a and d would close the cycle a → b → {a, d}: refused.
TEST(Fusion, RefusesAMergeThatMakesACycle) {
  std::vector<OpInfo> ops(4);
  ops[0] = {"a", "matmul", 1, 1, 1, 0, 0, -1, "G", {}};
  ops[1] = {"b", "matmul", 1, 1, 1, 0, 0, -1, "", {0}};
  ops[2] = {"c", "matmul", 1, 1, 1, 0, 0, -1, "", {0}};
  ops[3] = {"d", "matmul", 1, 1, 1, 0, 0, -1, "G", {1, 2, 0}};
  const ComputeGraph g = BuildComputeGraph(ops);
  const FusedGraph f = FuseGraph(g);
  EXPECT_EQ(f.coarse.num_ops(), 4);
  EXPECT_EQ(f.num_groups, 3);  // {a, d}, b, c
  CheckFusion(g, f, 0);
  // with b in the group too: a → b fuses (a is b's single producer); {a, b} → d still closes
  // {a, b} → c → d and stays two nodes
  ops[1].colocation = "G";
  const ComputeGraph h = BuildComputeGraph(ops);
  const FusedGraph fh = FuseGraph(h);
  EXPECT_EQ(fh.op_to_node[0], fh.op_to_node[1]);
  EXPECT_NE(fh.op_to_node[0], fh.op_to_node[3]);
  EXPECT_EQ(fh.coarse.num_ops(), 3);
  CheckFusion(h, fh, 0);
}

// Random layered forward graphs with random co-location names, then training ops.
TEST(Fusion, PropertiesOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::vector<OpInfo> fwd = Ops(MakeLayeredRandomGraph(60 + 10 * static_cast<int>(seed), 7, 3, seed));
    std::mt19937 rng(static_cast<unsigned>(seed));
    for (OpInfo& o : fwd) {
      if (rng() % 3 == 0) o.colocation = "g" + std::to_string(rng() % 9);
      if (rng() % 4 == 0) o.param_bytes = 100 + rng() % 1000;
      o.temp_bytes = rng() % 50;
    }
    for (const bool training : {false, true}) {
      const ComputeGraph g = BuildComputeGraph(training ? AddTrainingOps(fwd) : fwd);
      for (const int target : {0, 1, 7, 40}) {
        FusionOptions o;
        o.target_groups = target;
        o.cycle_check_budget = seed % 2 ? 4096 : 3;  // a tiny budget only refuses more merges
        SCOPED_TRACE("seed " + std::to_string(seed) + " training " + std::to_string(training) + " target " +
                     std::to_string(target));
        CheckFusion(g, FuseGraph(g, o), target);
      }
    }
  }
}

TEST(Fusion, EnasCellsAndNmtMeetTheGroupTarget) {
  for (const char* family : {"cifar10", "ptb", "nmt"})
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      EnasConfig c;
      c.family = family;
      c.seed = seed;
      c.steps = 5;
      const ComputeGraph g = MakeEnasGraph(c);
      FusionOptions o;
      o.target_groups = 32;
      CheckFusion(g, FuseGraph(g, o), 32);
    }
  Seq2SeqConfig s;
  s.layers = 2;
  s.steps = 6;
  s.hidden = 8;
  s.vocab = 20;
  const ComputeGraph nmt = MakeNmtGraph(s);
  FusionOptions o;
  o.target_groups = 16;
  const FusedGraph f = FuseGraph(nmt, o);
  CheckFusion(nmt, f, 16);
  EXPECT_LT(f.coarse.num_ops(), nmt.num_ops() / 2);
}

// Members of each placement group.
std::vector<std::vector<int>> GroupMembers(const FusedGraph& f) {
  std::vector<std::vector<int>> m(f.num_groups);
  for (size_t i = 0; i < f.op_to_group.size(); ++i) m[f.op_to_group[i]].push_back(static_cast<int>(i));
  return m;
}

// a → b → c → d, each its own group, flops 1..4 (the lightest joins first), outputs 4 bytes, no
// weights. Live ranges: op i runs in bucket i, its output lives until its consumer's bucket.
// Uncapped: one group. Cap 8, all_outputs measure (Σ outputs): a+b = 8 joins, c+d = 8 joins,
// {a,b}+{c,d} = 16 is refused both ways → two groups, above the target of 1. Cap 8, lifetime:
// {a,b} peaks at 8 (bucket 1), {c,d} at 8, all four at 8 (at most two outputs live at once)
// → one group. Cap 7: every join exceeds it → four groups.
TEST(Fusion, MemoryCapByHand) {
  std::vector<OpInfo> ops(4);
  for (int i = 0; i < 4; ++i) {
    ops[i] = {std::string(1, static_cast<char>('a' + i)), "matmul", 1.0 + i, 1, 4, 0, 0, -1, "", {}};
    if (i > 0) ops[i].inputs = {i - 1};
  }
  const ComputeGraph g = BuildComputeGraph(ops);
  const OpLiveRanges lr = LiveRangesAlongSchedule(g, {0, 1, 2, 3}, 256);
  ASSERT_EQ(lr.buckets, 4);
  EXPECT_EQ(lr.bucket, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(lr.last_use, (std::vector<int>{1, 2, 3, 3}));
  EXPECT_EQ(GroupMemoryBytes(g, {0, 1, 2, 3}, nullptr), 16);
  EXPECT_EQ(GroupMemoryBytes(g, {0, 1, 2, 3}, &lr), 8);
  EXPECT_EQ(GroupMemoryBytes(g, {0, 1}, &lr), 8);  // a [0,1] and b [1,2] overlap in bucket 1
  EXPECT_EQ(GroupMemoryBytes(g, {0, 2}, &lr), 4);  // a [0,1] and c [2,3] never both live
  auto fuse = [&](double cap, const OpLiveRanges* ranges) {
    FusionOptions o;
    o.target_groups = 1;
    o.max_group_bytes = cap;
    o.live_ranges = ranges;
    const FusedGraph f = FuseGraph(g, o);
    CheckFusion(g, f, 0);
    return f;
  };
  EXPECT_EQ(fuse(0, nullptr).num_groups, 1);
  EXPECT_EQ(fuse(0, &lr).num_groups, 1);  // no cap: the ranges are not used
  const FusedGraph two = fuse(8, nullptr);
  ASSERT_EQ(two.num_groups, 2);
  EXPECT_EQ(two.op_to_group[0], two.op_to_group[1]);
  EXPECT_EQ(two.op_to_group[2], two.op_to_group[3]);
  EXPECT_NE(two.op_to_group[1], two.op_to_group[2]);
  EXPECT_EQ(fuse(8, &lr).num_groups, 1);
  EXPECT_EQ(fuse(7, nullptr).num_groups, 4);
  EXPECT_EQ(fuse(7, &lr).num_groups, 4);
  EXPECT_EQ(fuse(16, nullptr).num_groups, 1);
}

// Random training graphs: cap 0 gives exactly the uncapped result; with a cap, the coarse graph
// keeps every property, and a group over the cap is one co-location group of the input (which
// fusion never splits) — under both measures.
TEST(Fusion, MemoryCapOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::vector<OpInfo> fwd = Ops(MakeLayeredRandomGraph(80, 7, 3, seed));
    std::mt19937 rng(static_cast<unsigned>(seed));
    for (OpInfo& o : fwd) {
      if (rng() % 3 == 0) o.colocation = "g" + std::to_string(rng() % 9);
      o.param_bytes = rng() % 3 == 0 ? 100 + rng() % 1000 : 0;
      o.output_bytes = 10 + rng() % 100;
      o.temp_bytes = rng() % 50;
    }
    const ComputeGraph g = BuildComputeGraph(AddTrainingOps(fwd));
    std::vector<double> start(g.num_ops());
    for (int k = 0; k < g.num_ops(); ++k) start[g.topo_order[k]] = k;
    const OpLiveRanges lr = LiveRangesAlongSchedule(g, start, 16);
    FusionOptions plain;
    plain.target_groups = 10;
    const FusedGraph base = FuseGraph(g, plain);
    FusionOptions zero = plain;
    zero.live_ranges = &lr;
    const FusedGraph same = FuseGraph(g, zero);
    EXPECT_EQ(same.op_to_node, base.op_to_node);
    EXPECT_EQ(same.op_to_group, base.op_to_group);
    for (const OpLiveRanges* ranges : {static_cast<const OpLiveRanges*>(nullptr), &lr})
      for (const double cap : {1500.0, 4000.0, 1e9}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " cap " + std::to_string(cap) + (ranges ? " lifetime" : ""));
        FusionOptions o = plain;
        o.max_group_bytes = cap;
        o.live_ranges = ranges;
        const FusedGraph f = FuseGraph(g, o);
        CheckFusion(g, f, 0);
        if (cap == 1e9) EXPECT_EQ(f.op_to_group, base.op_to_group);  // never binds
        for (const std::vector<int>& m : GroupMembers(f)) {
          if (GroupMemoryBytes(g, m, ranges) <= cap) continue;
          for (int i : m) EXPECT_EQ(g.coloc_group[i], g.coloc_group[m[0]]) << "a join made a group over the cap";
        }
      }
  }
}

// nmt(layers=4) at 128 groups (place-train's default): uncapped, one group holds 8.6 GB of
// weights, optimizer state and outputs (graph-info --fuse 128); capped at 2.34 GB (half of a
// k80(memory_fraction=0.39) GPU) every group fits, still at most 128 groups, acyclic, co-located.
TEST(Fusion, MemoryCapOnNmt4) {
  const ComputeGraph g = GraphFromSpec("nmt(layers=4)").graph;
  FusionOptions o;
  o.target_groups = 128;
  double largest = 0;
  for (const auto& m : GroupMembers(FuseGraph(g, o))) largest = std::max(largest, GroupMemoryBytes(g, m, nullptr));
  EXPECT_GT(largest, 8e9);
  o.max_group_bytes = 2.34e9;
  const FusedGraph f = FuseGraph(g, o);
  CheckFusion(g, f, 128);
  largest = 0;
  for (const auto& m : GroupMembers(f)) largest = std::max(largest, GroupMemoryBytes(g, m, nullptr));
  EXPECT_LE(largest, 2.34e9);
  EXPECT_GT(largest, 1e9);
}

TEST(Fusion, Errors) {
  const ComputeGraph g = MakeChainGraph(3, 1, 1, 1);
  FusionOptions o;
  o.target_groups = -1;
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  o.target_groups = 0;
  o.cycle_check_budget = 0;
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  EXPECT_THROW(ExpandPlacement(FuseGraph(g), {0}), ConfigError);
  o.cycle_check_budget = 16;
  o.max_group_bytes = -1;
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  o.max_group_bytes = INFINITY;
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  o.max_group_bytes = 10;
  OpLiveRanges bad = LiveRangesAlongSchedule(g, {0, 1, 2}, 4);
  bad.last_use[0] = 7;  // beyond the buckets
  o.live_ranges = &bad;
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  bad.bucket.pop_back();
  EXPECT_THROW(FuseGraph(g, o), ConfigError);
  EXPECT_THROW(LiveRangesAlongSchedule(g, {0, 1}, 4), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
