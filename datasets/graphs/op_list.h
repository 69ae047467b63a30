// The forward-op list the model generators (rnn_graphs, inception_graph, transformer_graphs,
// enas_graphs) append to, and the cost rules they share (device_placement_notes §2.3, §3.3):
//  * a tensor is a producing op plus its size in elements (per step, batch included);
//    bytes = elements × dtype bytes (`element_bytes`, 4 = fp32);
//  * element-wise ops cost 1 flop per output element and read inputs + write the output;
//  * a "variable" op holds a weight tensor shared by many ops (an unrolled RNN's steps): it
//    has param_bytes, outputs the weights and has no flops; ops that own their weights carry
//    them as their own param_bytes instead;
//  * "gather" ops are embedding lookups.
// `Finish` turns the forward ops into a training step through AddTrainingOps and then fixes
// two gradient sizes where AddTrainingOps' rule (gradient = Σ input sizes) would materialise
// more than a TensorFlow training step holds: the gradient of a lookup is the looked-up rows
// (IndexedSlices), not the table; and a shared variable's gradient accumulates in one buffer
// owned by grad/<variable> (output = the weights' size), as TF's while-loop RNNs accumulate
// it, instead of one weight-sized copy per user (a 40-step LSTM would otherwise hold 40 copies
// of its weight gradient at once, as a statically unrolled graph aggregated by AddN does).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/training_graph.h"
#include "datasets/util/errors.h"

namespace placerl::graphs {

// A forward tensor: its producing op (-1 = from outside the graph, e.g. the input batch or a
// zero initial state) and its number of elements.
struct Tensor {
  int op = -1;
  double elems = 0;
};

class OpList {
 public:
  explicit OpList(double element_bytes) : element_bytes_(element_bytes) {}

  double element_bytes() const { return element_bytes_; }
  double Bytes(double elems) const { return elems * element_bytes_; }
  int size() const { return static_cast<int>(ops_.size()); }
  std::vector<OpInfo>& ops() { return ops_; }

  // Generators refuse configurations beyond this many forward ops (≈0.5 GB of op records)
  // instead of exhausting memory; they check an estimate first (CheckOpEstimate).
  static constexpr int kMaxOps = 2000000;
  static void CheckOpEstimate(const char* model, double forward_ops) {
    if (forward_ops > kMaxOps)
      throw ConfigError(std::string(model) + ": about " + std::to_string(static_cast<long long>(forward_ops)) +
                        " forward ops, more than " + std::to_string(kMaxOps) + "; choose a smaller configuration");
  }

  // Appends an op; inputs with op < 0 are dropped (they come from outside the graph).
  // Throws ConfigError beyond kMaxOps.
  Tensor Add(const std::string& name, const char* kind, double flops, double bytes, double out_elems, double params,
             const std::vector<Tensor>& inputs) {
    if (size() >= kMaxOps)
      throw ConfigError("graph: more than " + std::to_string(kMaxOps) + " forward ops; choose a smaller configuration");
    OpInfo o;
    o.name = name;
    o.kind = kind;
    o.flops = flops;
    o.bytes = bytes;
    o.output_bytes = Bytes(out_elems);
    o.param_bytes = Bytes(params);
    for (const Tensor& t : inputs)
      if (t.op >= 0) o.inputs.push_back(t.op);
    ops_.push_back(std::move(o));
    return {size() - 1, out_elems};
  }
  // A weight tensor of `params` elements.
  Tensor Variable(const std::string& name, double params) { return Add(name, "variable", 0, 0, params, params, {}); }
  // Element-wise: `flops_per_elem` per output element; bytes = inputs + output.
  Tensor Elementwise(const std::string& name, const char* kind, double out_elems, const std::vector<Tensor>& inputs,
                     double flops_per_elem = 1) {
    double read = 0;
    for (const Tensor& t : inputs) read += t.elems;
    return Add(name, kind, flops_per_elem * out_elems, Bytes(read + out_elems), out_elems, 0, inputs);
  }
  // (m×k)·(k×n) with the weight (k×n) given as a variable tensor: 2mkn flops.
  Tensor MatMul(const std::string& name, const Tensor& x, const Tensor& w, double m, double k, double n) {
    return Add(name, "matmul", 2 * m * k * n, Bytes(m * k + k * n + m * n), m * n, 0, {x, w});
  }
  // Concatenation along features: no flops, reads and writes every element.
  Tensor Concat(const std::string& name, const std::vector<Tensor>& inputs) {
    double n = 0;
    for (const Tensor& t : inputs) n += t.elems;
    return Add(name, "concat", 0, Bytes(2 * n), n, 0, inputs);
  }

  // Forward ops → one training step (backward, optimizer, co-location groups).
  std::vector<OpInfo> Finish(bool update) const {
    TrainingOpsOptions t;
    t.update = update;
    t.param_element_bytes = element_bytes_;
    std::vector<OpInfo> all = AddTrainingOps(ops_, t);
    std::unordered_map<std::string, int> index;
    for (int i = size(); i < static_cast<int>(all.size()); ++i) index.emplace(all[i].name, i);
    for (const OpInfo& f : ops_) {
      const auto it = index.find("grad/" + f.name);
      if (it == index.end()) continue;
      OpInfo& g = all[it->second];
      for (int p : f.inputs)
        if (ops_[p].kind == "variable") g.output_bytes -= ops_[p].output_bytes;
      if (g.output_bytes < 0) g.output_bytes = 0;
      if (f.kind == "gather" || f.kind == "variable") g.output_bytes = f.output_bytes;
    }
    return all;
  }

 private:
  double element_bytes_;
  std::vector<OpInfo> ops_;
};

// Deterministic splitmix64 stream (no std:: distributions, so seeds give the same graphs on
// every standard library).
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t s_;
};

}  // namespace placerl::graphs
