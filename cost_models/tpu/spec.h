// Short-string and file forms of the perf-model inputs (OpenSpiel-style `name(k=v,...)`):
//   model: "transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)",
//          "moe(layers=..., num_experts=64, top_k=2)", or a .pbtxt TransformerModel file;
//          a heterogeneous block: "transformer(layers=4,d_model=1024,block=attn:h16+moe:e64:k2:cf1.25+ffn:r4)"
//          (ParseBlockSpec; in .pbtxt `block { type: MOE_FFN num_experts: 64 }`);
//   mesh:  "tpu_v5p:4x4x4" or "tpu_v5p:4x4x4,slices=2", or a .pbtxt Mesh file;
//   plan:  "fsdp=16,tensor=4,remat=minimal,global_batch=384", or a .pbtxt Plan file.
// Keys are the proto field names; enum values are case-insensitive with or without their
// prefix (remat=full, optimizer=adafactor, param_dtype=bf16). Unknown keys, a key given
// twice, and values out of range → ConfigError (ParseError with file:line for .pbtxt).
//
// Written keys override defaults, the same way in both forms: a model string or .pbtxt that
// omits a key gets DefaultModel()'s value (so `transformer(heads=7)` is the default model
// with 7 heads, and flash_attention is on unless written `false`); a plan gets its degrees
// from ResolvePlan (one axis takes the devices the others leave). The model's `dropout` is on
// unless written `false` (an `optional` field: unset = on; ModelToString prints it only when off).
//
// Limits (explicit so that no product overflows; all checked in 64-bit):
//   a mesh has at most kMaxDevices devices (chips × slices × TensorCores per chip);
//   every plan degree is in [1, kMaxDevices], global_batch in [1, kMaxGlobalBatch];
//   model sizes (layers, d_model, d_ff, heads, head_dim, kv_heads, seq, vocab, experts)
//   are at most kMaxModelSize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost_models/tpu/training_eval.h"
#include "datasets/proto/perf_model.pb.h"

namespace google::protobuf {
class Message;
}

namespace placerl::perf {

// kMaxDevices (devices per mesh): cost_models/tpu/mesh.h.
constexpr long long kMaxGlobalBatch = 1LL << 30;      // sequences per step
constexpr long long kMaxModelSize = 1LL << 24;        // any one model dimension
constexpr long long kDefaultGlobalBatch = 512;        // sequences, when the plan gives none
constexpr int kMaxBlockSubLayers = 64;                // sub-layers of one heterogeneous block

// transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000,
// flash_attention=true); moe(...) adds num_experts=8 when not given.
TransformerModel DefaultModel();

TransformerModel ParseModelSpec(const std::string& spec);

// The value of a model string's `block=` key: sub-layers joined by '+', each a type with
// ':'-separated options (unset fields take the model's values, NormalizedModel):
//   attn[:h<heads>][:kv<kv_heads>][:hd<head_dim>]
//   ffn[:r<ffn_ratio>|:f<d_ff>]
//   moe[:r<ffn_ratio>|:f<d_ff>][:e<experts>][:k<top_k>|:ec][:cf<capacity_factor>]
// (`ec` = expert-choice gating; attention/dense/dense_ffn/moe_ffn are accepted as type names).
// A bad token → ConfigError "model block: sub-layer 2 "moe:x3": bad token "x3" (...)".
std::vector<SubLayer> ParseBlockSpec(const std::string& text);
// The block of a model in that syntax ("" when uniform); ParseBlockSpec reads it back.
std::string BlockToString(const TransformerModel& model);
Mesh ParseMeshSpec(const std::string& spec);

// A plan as written, with the keys it gives (proto field names, in the order written).
struct PlanSpec {
  Plan plan;
  std::vector<std::string> keys;
  bool Has(const std::string& key) const;
};
PlanSpec ParsePlanSpecWithKeys(const std::string& spec);
// The written plan only (keys not given are 0 = unset); ResolvePlan gives the defaults.
Plan ParsePlanSpec(const std::string& spec);

// Which degree takes the devices the written degrees leave: fsdp for training (the default
// plan is fully sharded data parallel), tensor for inference, data for graph runs.
enum class FillAxis { kFsdp, kTensor, kData };

// The plan with every default applied: degrees not written are 1, except `fill`, which gets
// devices / (product of the other degrees); microbatches stays 0 (= the evaluator's default)
// unless written; global_batch = kDefaultGlobalBatch unless written. Throws ConfigError with
// the numbers when the written degrees do not multiply to the mesh's devices.
PlanC ResolvePlan(const PlanSpec& spec, long long devices, FillAxis fill);

// "data=2,fsdp=8,tensor=4 (as 2x2),pipeline=1,microbatches=1,expert=1,remat=none,..." — a
// resolved plan as printed by run/search (microbatches as the evaluator resolved them).
std::string ResolvedPlanString(const PlanC& plan, int microbatches);

// Sets fields of `msg` from "k=v,k=v" (reflection). `what` names the input in errors. A key
// given twice is an error. `keys` (optional) receives the keys set, in order.
void SetFieldsFromString(const std::string& kvs, const std::string& what,
                         google::protobuf::Message* msg, std::vector<std::string>* keys = nullptr);

// "transformer(layers=24,d_model=2048,...)" with every value, defaults included.
std::string ModelToString(const TransformerModel& model);
std::string MeshToString(const Mesh& mesh);
std::string PlanToString(const Plan& plan);

// Bits per value of a number format: eXmY (1 sign + X exponent + Y mantissa bits, e.g. e3m2 = 6,
// e2m1 = 4, e4m3 / e5m2 = 8), fp32, bf16, fp16, fp8, int8, int4, or a plain width "6".
// Throws ConfigError (naming the accepted forms) unless the width is in [2, 32].
int FormatBits(const std::string& format);

}  // namespace placerl::perf
