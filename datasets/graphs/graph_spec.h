// Graphs named by a short string (CLI flags, validation rows) or read from a file. Every key is
// optional (defaults shown; a bare name like `rnnlm` takes them all); values are non-negative
// integers (enas_cell's family a name). The generators from rnnlm down also take
// dtype_bytes=4 (bytes per activation and weight element; 2 = fp16/bf16). Forms:
//   layered(ops=1000,width=100,fan_in=3,seed=1)   random layered DAG (benchmarks)
//   chain(ops=1000)                               a chain of equal matmuls
//   resnet(depth=50,batch=32,image=224,classes=1000,backward=1,fused=0,update=0)
//                                                 torchvision ResNet v1.5 (model_graphs.h)
//   rnnlm(layers=2,hidden=2048,batch=64,steps=40,vocab=10000,update=1)      rnn_graphs.h
//   nmt(layers=2,hidden=1024,batch=64,steps=40,vocab=40000,update=1)        attention NMT
//   gnmt(layers=4,hidden=512,batch=128,steps=40,vocab=30000,update=1)       GNMT v2
//   inception_v3(batch=32,image=299,classes=1000,aux=1,update=1)            inception_graph.h
//   transformer_graph(layers=6,enc_layers=0,d_model=512,d_ff=2048,heads=8,seq=256,batch=16,
//                     vocab=32000,update=1)                                 transformer_graphs.h
//   moe_graph(... the same keys ..., experts=8, moe_every=2)                GShard-style MoE
//   enas_cell(family=cifar10|ptb|nmt,seed=1,nodes=5,cells=2,channels=20,image=32,classes=10,
//             hidden=256,steps=20,vocab=10000,batch=32,update=1)            enas_graphs.h
//   <path>.onnx[?batch=32,seq=128,backward=0]     ONNX model (onnx_import.h)
//   <path>                                        graph text file (compute_graph.h)
// (transformer_graph / moe_graph are op graphs; perf-model's transformer(...) / moe(...) MODEL
// strings are analytic models of cost_models/tpu/spec.h.)
#pragma once

#include <string>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct NamedGraph {
  ComputeGraph graph;
  double examples = 0;  // examples one run of the graph processes (the batch); 0 = unknown
  std::string canonical;  // "name(k=v,...)" with every key, defaults included; the path for files
};

// Throws ConfigError on an unknown key or a bad value, ParseError on a bad file.
NamedGraph GraphFromSpec(const std::string& spec);

}  // namespace placerl::graphs
