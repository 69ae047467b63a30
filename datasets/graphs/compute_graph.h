// A computation graph for device placement as flat arrays: per op a name, a kind string
// ("matmul", "elementwise", "conv", "softmax", ...), FLOPs, bytes accessed, output bytes,
// persistent parameter bytes, temporary bytes and an optional given time; edges as CSR
// producer→consumer and the reverse; a topological order (cycles are rejected).
//
// Text format (one op per line, '#' starts a comment, blank lines ignored):
//   op <name> <kind> [flops=F] [bytes=B] [out=O] [params=P] [temp=T] [time=S] [coloc=G]
//      [inputs=a,b,c]
// Numbers are finite and ≥ 0 (time in seconds; absent = derive from the roofline). `coloc`
// names a co-location group: ops with the same group name must share a device (TensorFlow's
// colocation constraint: an op, its gradient and its weights' update). Inputs
// may name ops defined later in the file; the graph must be acyclic and have at least one op.
// Reading is linear in the text (an op with 200,000 inputs reads in well under a second).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placerl::graphs {

struct OpInfo {
  std::string name;
  std::string kind = "elementwise";
  double flops = 0;
  double bytes = 0;         // bytes accessed (roofline memory term)
  double output_bytes = 0;  // size of the op's (single) output tensor
  double param_bytes = 0;   // persistent bytes (weights) resident on the op's device
  double temp_bytes = 0;    // scratch live only while the op runs
  double time_s = -1;       // given op time in seconds; < 0 = not given
  std::string colocation;   // co-location group name; "" = a group of its own
  std::vector<int> inputs;  // producer op indices
};

struct ComputeGraph {
  std::vector<std::string> names, kinds;
  std::vector<double> flops, bytes, output_bytes, param_bytes, temp_bytes, time_s;
  // CSR: consumers of op i are out_targets[out_offsets[i] .. out_offsets[i+1]) (ascending);
  // producers of op i are in_sources[in_offsets[i] .. in_offsets[i+1]) (in input order).
  std::vector<int> out_offsets, out_targets, in_offsets, in_sources;
  std::vector<int> topo_order;  // a topological order (Kahn's, smallest index first)
  // Co-location: colocation[i] is op i's group name ("" = none); coloc_group[i] a dense group
  // id in [0, num_coloc_groups) — ops sharing a non-empty name share an id, every other op has
  // an id of its own; ids are numbered by first appearance in op order.
  std::vector<std::string> colocation;
  std::vector<int> coloc_group;
  int num_coloc_groups = 0;

  int num_ops() const { return static_cast<int>(names.size()); }
  int num_edges() const { return static_cast<int>(out_targets.size()); }
  OpInfo op(int i) const;  // copy of op i (inputs included)
};

// Builds the flat graph. Throws ConfigError on an input index out of range, a duplicate
// input, a duplicate or empty name, a negative / non-finite number, a co-location name with
// whitespace, ',' or '=', or a cycle.
ComputeGraph BuildComputeGraph(const std::vector<OpInfo>& ops);

// Returns an op on a cycle of the graph given by per-op inputs, or -1 when acyclic.
int FindCycleOp(const std::vector<std::vector<int>>& inputs);

// Text reader / writer. Malformed text → ParseError(label or path, line, reason).
ComputeGraph ParseComputeGraph(const std::string& text, const std::string& label);
ComputeGraph ReadComputeGraph(const std::string& path);
std::string ComputeGraphToText(const ComputeGraph& g);
void WriteComputeGraph(const std::string& path, const ComputeGraph& g);

// Ops of each co-location group (group id → op indices, ascending).
std::vector<std::vector<int>> ColocationMembers(const ComputeGraph& g);
// "" when every co-location group of `g` sits on one device in `op_to_device`, else which
// group is split ("co-location group 'X': op 'a' on device 0, op 'b' on device 1").
std::string ColocationViolation(const ComputeGraph& g, const std::vector<int>& op_to_device);

// Op → device placement text: one `<op name> <device index>` per line ('#' comments, blank
// lines ignored); every op of the graph exactly once, devices in [0, num_devices).
// Malformed text → ParseError(label or path, line, reason).
std::vector<int> ParsePlacement(const std::string& text, const std::string& label,
                                const ComputeGraph& g, int num_devices);
std::vector<int> ReadPlacement(const std::string& path, const ComputeGraph& g, int num_devices);
std::string PlacementToText(const ComputeGraph& g, const std::vector<int>& op_to_device);

// Synthetic graphs for tests and benchmarks. Every op gets `flops`, `bytes` and
// output `out` bytes, kind "matmul".
ComputeGraph MakeChainGraph(int n, double flops, double bytes, double out);
// a → {b, c} → d.
ComputeGraph MakeDiamondGraph(double flops, double bytes, double out);
// `num_ops` ops in layers of `width`; each op of layer k > 0 takes 1..max_fan_in random
// inputs from layer k-1 (deterministic for a seed); per-op sizes vary randomly (×0.5..1.5).
ComputeGraph MakeLayeredRandomGraph(int num_ops, int width, int max_fan_in, uint64_t seed);

}  // namespace placerl::graphs
