// GraphFromSpec: every generator by name (bare names take the defaults), canonical strings,
// switches, and errors for bad keys and values.
#include "datasets/graphs/graph_spec.h"

#include <gtest/gtest.h>

#include <string>

#include "datasets/util/errors.h"

namespace placerl::graphs {
namespace {

std::string ErrorOf(const std::string& spec) {
  try {
    GraphFromSpec(spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(GraphSpec, EveryGeneratorBuildsSmall) {
  for (const char* spec :
       {"rnnlm(hidden=8,steps=2,vocab=10)", "nmt(layers=2,hidden=8,steps=2,vocab=10)",
        "gnmt(hidden=8,steps=2,vocab=10)", "inception_v3(batch=1)", "resnet(depth=152,batch=1,update=1)",
        "transformer_graph(layers=2,d_model=8,d_ff=8,heads=2,seq=4)",
        "moe_graph(layers=2,d_model=8,d_ff=8,heads=2,seq=4,experts=3)", "enas_cell(family=cifar10,seed=3)",
        "enas_cell(family=ptb,seed=3,steps=2)", "enas_cell(family=nmt,seed=3,steps=2)"}) {
    const NamedGraph n = GraphFromSpec(spec);
    EXPECT_GT(n.graph.num_ops(), 10) << spec;
    EXPECT_GT(n.examples, 0) << spec;
    // the canonical string names every key and rebuilds the same graph
    EXPECT_EQ(ComputeGraphToText(GraphFromSpec(n.canonical).graph), ComputeGraphToText(n.graph)) << spec;
  }
}

TEST(GraphSpec, CanonicalAndBareNames) {
  EXPECT_EQ(GraphFromSpec("gnmt(steps=2,hidden=8)").canonical,
            "gnmt(batch=128,dtype_bytes=4,hidden=8,layers=4,steps=2,update=1,vocab=30000)");
  EXPECT_EQ(GraphFromSpec("enas_cell(family=ptb,steps=2)").canonical.rfind("enas_cell(family=ptb,", 0), 0u);
  EXPECT_EQ(GraphFromSpec("inception_v3").graph.num_ops(), GraphFromSpec("inception_v3()").graph.num_ops());
  EXPECT_EQ(GraphFromSpec("inception_v3").examples, 32);
}

TEST(GraphSpec, SwitchesChangeTheGraph) {
  const int with = GraphFromSpec("rnnlm(hidden=8,steps=2,vocab=10)").graph.num_ops();
  const int without = GraphFromSpec("rnnlm(hidden=8,steps=2,vocab=10,update=0)").graph.num_ops();
  EXPECT_EQ(with - without, 4);  // embedding, 2 layers, softmax weights
  // ResNet: the default (no update ops, built-in backward) is unchanged; update=1 adds one
  // update op per weighted layer and co-location groups
  const ComputeGraph plain = GraphFromSpec("resnet(depth=50,batch=2)").graph;
  const ComputeGraph upd = GraphFromSpec("resnet(depth=50,batch=2,update=1)").graph;
  EXPECT_EQ(plain.num_ops(), 2 * 175);
  EXPECT_EQ(upd.num_ops(), 2 * 175 + 107);  // 53 convs + 53 BNs + fc
  EXPECT_EQ(plain.num_coloc_groups, plain.num_ops());
  EXPECT_EQ(upd.num_coloc_groups, 175);
  EXPECT_NE(ErrorOf("resnet(update=1,backward=0)"), "");
  // the auxiliary head: avgpool, conv0 and conv1 (conv, bn, relu), pool, fc, xent = 10 forward
  // ops, 10 grads, 5 updates (2 convs, 2 BNs, fc)
  EXPECT_EQ(GraphFromSpec("inception_v3(aux=1,batch=1)").graph.num_ops() -
                GraphFromSpec("inception_v3(aux=0,batch=1)").graph.num_ops(),
            25);
}

TEST(GraphSpec, DtypeBytesScalesSizesNotFlops) {
  const ComputeGraph fp32 = GraphFromSpec("nmt(hidden=8,steps=2,vocab=10)").graph;
  const ComputeGraph fp16 = GraphFromSpec("nmt(hidden=8,steps=2,vocab=10,dtype_bytes=2)").graph;
  ASSERT_EQ(fp32.num_ops(), fp16.num_ops());
  for (int i = 0; i < fp32.num_ops(); ++i) {
    EXPECT_EQ(fp32.flops[i], fp16.flops[i]) << fp32.names[i];
    EXPECT_EQ(fp32.output_bytes[i], 2 * fp16.output_bytes[i]) << fp32.names[i];
    EXPECT_EQ(fp32.param_bytes[i], 2 * fp16.param_bytes[i]) << fp32.names[i];
  }
}

TEST(GraphSpec, ErrorsNameTheProblem) {
  EXPECT_NE(ErrorOf("nmt(depth=3)").find("unknown key 'depth' for nmt"), std::string::npos);
  EXPECT_NE(ErrorOf("nmt(depth=3)").find("layers"), std::string::npos);  // lists the keys
  EXPECT_NE(ErrorOf("rnnlm(layers=0)").find("layers=0 is out of range: rnnlm's layers takes [1, 100000000]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("rnnlm(layers=-1)").find("layers=-1 is out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("rnnlm(layers=2.5)").find("non-negative integer"), std::string::npos);
  EXPECT_NE(ErrorOf("gnmt(layers)").find("non-negative integer"), std::string::npos);
  EXPECT_NE(ErrorOf("enas_cell(family=imagenet)").find("cifar10, ptb or nmt"), std::string::npos);
  EXPECT_NE(ErrorOf("enas_cell(colour=3)").find("family"), std::string::npos);
  EXPECT_NE(ErrorOf("transformer_graph(heads=3)").find("must divide d_model"), std::string::npos);
  EXPECT_NE(ErrorOf("gnmt(layers=1)").find("layers must be >= 2"), std::string::npos);
  EXPECT_NE(ErrorOf("rnnlm(dtype_bytes=0)").find("dtype_bytes takes [1, 100000000]"), std::string::npos);
  EXPECT_NE(ErrorOf("nmt(layers=2,layers=4)").find("given twice"), std::string::npos);
  EXPECT_NE(ErrorOf("rnnlm(layers=1000,steps=100000)").find("smaller configuration"), std::string::npos);
  // Issue 29 item 15: a value too large said "expected key=non-negative integer"; it now says
  // that it is out of range and gives the range (also beyond what a long holds).
  EXPECT_EQ(ErrorOf("nmt(layers=1000000000)"),
            "graph: layers=1000000000 is out of range: nmt's layers takes [1, 100000000]");
  EXPECT_EQ(ErrorOf("resnet(batch=99999999999999999999999)"),
            "graph: batch=99999999999999999999999 is out of range: resnet's batch takes [1, 100000000]");
  EXPECT_EQ(ErrorOf("layered(seed=100000001)"), "graph: seed=100000001 is out of range: layered's seed takes [0, 100000000]");
  EXPECT_EQ(ErrorOf("chain(ops=2000001)"), "graph: ops=2000001 is out of range: chain's ops takes [1, 2000000]");
  EXPECT_NE(ErrorOf("layered(ops=2000000,fan_in=64,width=1000)").find("more than 20000000"), std::string::npos);
  EXPECT_NE(ErrorOf("nmt(layers=1e9)").find("expected key=non-negative integer, got 'layers=1e9'"), std::string::npos);
  // perf-model's analytic MODEL strings are not graph specs: read as a file, which fails
  EXPECT_THROW(GraphFromSpec("transformer(layers=2)"), Error);
}

}  // namespace
}  // namespace placerl::graphs
