// Expert placements: one layer per device with attention/softmax on the last layer's device
// and embeddings on the first, contiguous blocks when layers outnumber devices, experts
// spread, single device for unlayered models, co-location always respected.
#include "datasets/graphs/expert_placement.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

int DeviceOf(const ComputeGraph& g, const std::vector<int>& place, const std::string& name) {
  for (int i = 0; i < g.num_ops(); ++i)
    if (g.names[i] == name) return place[i];
  ADD_FAILURE() << "no op " << name;
  return -1;
}

TEST(ExpertPlacement, NmtOneLayerPerDevice) {
  const ComputeGraph g = GraphFromSpec("nmt(layers=2,hidden=8,batch=2,steps=3,vocab=10)").graph;
  const std::vector<int> p = ExpertPlacement(g, 2);
  EXPECT_EQ(DeviceOf(g, p, "enc/l1/t2/lstm/matmul"), 0);
  EXPECT_EQ(DeviceOf(g, p, "dec/l1/t2/lstm/matmul"), 0);
  EXPECT_EQ(DeviceOf(g, p, "enc/l2/t2/lstm/matmul"), 1);
  EXPECT_EQ(DeviceOf(g, p, "dec/l2/weights"), 1);
  EXPECT_EQ(DeviceOf(g, p, "enc/emb/t1/lookup"), 0);
  EXPECT_EQ(DeviceOf(g, p, "dec/emb/weights"), 0);
  EXPECT_EQ(DeviceOf(g, p, "dec/attn/t3/score"), 1);
  EXPECT_EQ(DeviceOf(g, p, "dec/softmax/t3/xent"), 1);
  EXPECT_EQ(DeviceOf(g, p, "loss"), 1);
  EXPECT_EQ(DeviceOf(g, p, "grad/enc/l2/t1/lstm/matmul"), 1);
  EXPECT_EQ(DeviceOf(g, p, "update/enc/l1/weights"), 0);
  EXPECT_EQ(ColocationViolation(g, p), "");
}

TEST(ExpertPlacement, MoreLayersThanDevicesAreContiguousBlocks) {
  const ComputeGraph g = GraphFromSpec("nmt(layers=8,hidden=4,batch=1,steps=2,vocab=5)").graph;
  const std::vector<int> p = ExpertPlacement(g, 4);
  for (int l = 1; l <= 8; ++l)
    EXPECT_EQ(DeviceOf(g, p, "enc/l" + std::to_string(l) + "/t1/lstm/matmul"), (l - 1) / 2) << l;
  // fewer layers than devices: layer k on device k-1, the rest idle
  const ComputeGraph lm = GraphFromSpec("rnnlm(layers=2,hidden=4,batch=1,steps=2,vocab=5)").graph;
  const std::vector<int> q = ExpertPlacement(lm, 4);
  EXPECT_EQ(std::set<int>(q.begin(), q.end()), (std::set<int>{0, 1}));
  EXPECT_EQ(DeviceOf(lm, q, "softmax/t2/matmul"), 1);
  EXPECT_EQ(DeviceOf(lm, q, "emb/t2/lookup"), 0);
}

TEST(ExpertPlacement, MoeExpertsSpread) {
  const ComputeGraph g =
      GraphFromSpec("moe_graph(layers=2,d_model=8,d_ff=16,heads=2,seq=4,batch=2,vocab=10,experts=6)").graph;
  const std::vector<int> p = ExpertPlacement(g, 4);
  for (int j = 0; j < 6; ++j) EXPECT_EQ(DeviceOf(g, p, "l2/moe/e" + std::to_string(j) + "/ffn2"), j % 4) << j;
  EXPECT_EQ(DeviceOf(g, p, "l1/attn/q"), 0);
  EXPECT_EQ(DeviceOf(g, p, "l2/attn/q"), 1);
  EXPECT_EQ(DeviceOf(g, p, "logits"), 1);
  ExpertOptions o;
  o.spread_experts = false;
  const std::vector<int> q = ExpertPlacement(g, 4, o);
  EXPECT_EQ(DeviceOf(g, q, "l2/moe/e3/ffn2"), 1);
}

TEST(ExpertPlacement, UnlayeredModelsOnOneDeviceOrSplitContiguously) {
  const ComputeGraph g = GraphFromSpec("inception_v3(batch=1)").graph;
  const std::vector<int> p = ExpertPlacement(g, 4);
  EXPECT_EQ(std::set<int>(p.begin(), p.end()), std::set<int>{0});
  ExpertOptions o;
  o.split_unlayered = true;
  const std::vector<int> q = ExpertPlacement(g, 4, o);
  EXPECT_EQ(std::set<int>(q.begin(), q.end()), (std::set<int>{0, 1, 2, 3}));
  int last = 0;
  for (int i : g.topo_order) {
    if (g.names[i].rfind("grad/", 0) == 0 || g.names[i].rfind("update/", 0) == 0) continue;
    EXPECT_GE(q[i], last) << g.names[i];
    last = q[i];
  }
  EXPECT_EQ(ColocationViolation(g, q), "");
}

TEST(ExpertPlacement, RespectsColocationOnEveryGenerator) {
  for (const char* spec : {"rnnlm(hidden=8,steps=3,vocab=10)", "gnmt(hidden=8,steps=3,vocab=10,batch=2)",
                           "transformer_graph(layers=3,enc_layers=2,d_model=8,d_ff=8,heads=2,seq=4,vocab=10)",
                           "resnet(depth=18,batch=1,update=1)", "enas_cell(family=ptb,steps=3)", "enas_cell(seed=4)"})
    for (int d : {1, 2, 3, 8}) {
      const ComputeGraph g = GraphFromSpec(spec).graph;
      const std::vector<int> p = ExpertPlacement(g, d);
      ASSERT_EQ(static_cast<int>(p.size()), g.num_ops());
      for (int x : p) {
        EXPECT_GE(x, 0);
        EXPECT_LT(x, d);
      }
      EXPECT_EQ(ColocationViolation(g, p), "") << spec << " on " << d;
    }
  EXPECT_THROW(ExpertPlacement(MakeChainGraph(2, 1, 1, 1), 0), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
