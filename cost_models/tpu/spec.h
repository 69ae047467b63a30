// Short-string and file forms of the perf-model inputs (OpenSpiel-style `name(k=v,...)`):
//   model: "transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)",
//          "moe(layers=..., num_experts=64, top_k=2)", or a .pbtxt TransformerModel file;
//   mesh:  "tpu_v5p:4x4x4" or "tpu_v5p:4x4x4,slices=2", or a .pbtxt Mesh file;
//   plan:  "fsdp=16,tensor=4,remat=minimal,global_batch=384", or a .pbtxt Plan file.
// Keys are the proto field names; enum values are case-insensitive with or without their
// prefix (remat=full, optimizer=adafactor, param_dtype=bf16). Unknown keys → ConfigError.
#pragma once

#include <string>

#include "datasets/proto/perf_model.pb.h"

namespace google::protobuf {
class Message;
}

namespace placerl::perf {

TransformerModel ParseModelSpec(const std::string& spec);
Mesh ParseMeshSpec(const std::string& spec);
Plan ParsePlanSpec(const std::string& spec);

// Sets fields of `msg` from "k=v,k=v" (reflection). `what` names the input in errors.
void SetFieldsFromString(const std::string& kvs, const std::string& what,
                         google::protobuf::Message* msg);

// "transformer(layers=24,d_model=2048,...)" with every value, defaults included.
std::string ModelToString(const TransformerModel& model);
std::string MeshToString(const Mesh& mesh);
std::string PlanToString(const Plan& plan);

}  // namespace placerl::perf
