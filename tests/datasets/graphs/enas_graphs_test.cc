// ENAS-like cell families: seeded determinism, family structure, acyclicity, errors.
#include "datasets/graphs/enas_graphs.h"

#include <gtest/gtest.h>

#include <string>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

int Count(const ComputeGraph& g, const std::string& suffix) {
  int n = 0;
  for (const std::string& name : g.names)
    if (name.rfind("grad/", 0) != 0 && name.rfind("update/", 0) != 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      ++n;
  return n;
}

EnasConfig Config(const std::string& family, uint64_t seed) {
  EnasConfig c;
  c.family = family;
  c.seed = seed;
  c.steps = 3;
  c.hidden = 8;
  c.vocab = 11;
  c.channels = 4;
  c.batch = 2;
  return c;
}

TEST(EnasGraph, SeedDeterminesTheArchitecture) {
  for (const char* family : {"cifar10", "ptb", "nmt"}) {
    const std::string a = ComputeGraphToText(MakeEnasGraph(Config(family, 7)));
    EXPECT_EQ(a, ComputeGraphToText(MakeEnasGraph(Config(family, 7)))) << family;
    int different = 0;
    for (uint64_t seed = 1; seed <= 6; ++seed)
      if (ComputeGraphToText(MakeEnasGraph(Config(family, seed))) != a) ++different;
    EXPECT_GE(different, 5) << family;
  }
}

TEST(EnasGraph, Cifar10MacroStructure) {
  EnasConfig c = Config("cifar10", 3);
  c.cells = 2;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    c.seed = seed;
    const ComputeGraph g = MakeEnasGraph(c);
    // 3 stages × 2 normal cells + 2 reduction cells, each ending in out/conv
    EXPECT_EQ(Count(g, "/out/conv"), 8);
    EXPECT_EQ(Count(g, "/add"), 8 * c.nodes);
    ASSERT_EQ(static_cast<int>(g.topo_order.size()), g.num_ops());
  }
}

TEST(EnasGraph, PtbCellPerStep) {
  EnasConfig c = Config("ptb", 5);
  c.nodes = 6;
  const ComputeGraph g = MakeEnasGraph(c);
  // per step: nodes × (matmul, gate, activation, mix)
  EXPECT_EQ(Count(g, "/mix"), 3 * 6);
  EXPECT_EQ(Count(g, "/matmul") - Count(g, "softmax/matmul"), 3 * 6);
  EXPECT_EQ(Count(g, "/cell/avg"), 3);
}

TEST(EnasGraph, NmtCellEncoderDecoderWithAttention) {
  const EnasConfig c = Config("nmt", 2);
  const ComputeGraph g = MakeEnasGraph(c);
  // the same drawn cell in encoder and decoder: as many node ops on each side
  EXPECT_EQ(Count(g, "/mix"), 2 * 3 * c.nodes);
  EXPECT_EQ(Count(g, "/attn/score"), 3);
  EXPECT_EQ(Count(g, "/softmax/xent"), 3);
  int enc = -1, dec = -1;
  for (int i = 0; i < g.num_ops(); ++i) {
    if (g.names[i] == "enc/t3/cell/avg") enc = i;
    if (g.names[i] == "dec/t1/cell/concat") dec = i;
  }
  ASSERT_GE(enc, 0);
  ASSERT_GE(dec, 0);
  bool reads_encoder_state = false;  // the decoder starts from the encoder's last h
  for (int e = g.in_offsets[dec]; e < g.in_offsets[dec + 1]; ++e) reads_encoder_state |= g.in_sources[e] == enc;
  EXPECT_TRUE(reads_encoder_state);
}

TEST(EnasGraph, BadConfigThrows) {
  EnasConfig c = Config("imagenet", 1);
  EXPECT_THROW(MakeEnasGraph(c), ConfigError);
  c = Config("ptb", 1);
  c.nodes = 0;
  EXPECT_THROW(MakeEnasGraph(c), ConfigError);
}

}  // namespace
}  // namespace placerl::graphs
