// Graphs named by a short string (CLI flags, validation rows) or read from a file:
//   layered(ops=1000,width=100,fan_in=3,seed=1)   random layered DAG (benchmarks)
//   chain(ops=10)                                 a chain of equal matmuls
//   resnet(depth=50,batch=32,image=224,classes=1000,backward=1,fused=0)  torchvision ResNet v1.5
//   <path>.onnx[?batch=32,seq=128,backward=0]     ONNX model (onnx_import.h)
//   <path>                                        graph text file (compute_graph.h)
#pragma once

#include <string>

#include "datasets/graphs/compute_graph.h"

namespace placerl::graphs {

struct NamedGraph {
  ComputeGraph graph;
  double examples = 0;  // examples one run of the graph processes (ResNet: batch); 0 = unknown
};

// Throws ConfigError on an unknown key or a bad value, ParseError on a bad file.
NamedGraph GraphFromSpec(const std::string& spec);

}  // namespace placerl::graphs
