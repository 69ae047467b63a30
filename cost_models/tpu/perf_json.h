// The documents of `perf-model run / search / infer / simulate --json` as library calls: one
// query struct per subcommand (the binary's options without --json/--verbose), one function that
// evaluates it into a result (what the binary's text output prints) and one that turns the result
// into the JSON document. The binary prints the document; Python (placerl.perf_model) returns it.
// Errors are ConfigError / ParseError with the binary's one-line message.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/training_eval.h"
#include "datasets/proto/hardware.pb.h"

namespace placerl::perf {

// The catalogue the documents use: the embedded one ("") or a .pbtxt, with the shape-dependent
// matmul efficiency unless `one_matmul_constant` (perf-model --catalog, --one-matmul-constant).
Catalog PerfModelCatalog(const std::string& path, bool one_matmul_constant);

// --model / --mesh / --plan of the model-based subcommands.
struct ModelQuery {
  std::string model = "transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000)";
  std::string mesh = "tpu_v5e:16x16";
  std::string plan;  // "" = every default (ResolvePlan)
  bool one_matmul_constant = false;  // reported as options.matmul_shapes (the catalogue decides)
};
// {model, mesh, plan, matmul_shapes}: the options every model-based document starts from.
nlohmann::json ModelOptionsJson(const ModelQuery& in);
// The evaluator's result as the documents print it (valid, step_s, breakdown_s, ..., oom).
nlohmann::json StepBreakdownJson(const StepBreakdown& b);
// An invalid plan is an input error: the evaluator's reason with the numbers it is about.
[[noreturn]] void ThrowInvalidPlan(const char* reason, const PlanC& p, const TrainingEvaluator& ev);

// ---- run: one plan of a Transformer (or, with `graph`, of any graph data parallel) ----
struct RunQuery {
  ModelQuery in;
  std::string graph;  // non-empty: a graph run instead of `model`
};
struct TransformerRunResult {
  StepBreakdown b;
  std::string model, mesh, plan;  // resolved
  int devices = 0;
  double params = 0;
  nlohmann::json options;
  int status() const { return b.oom ? 2 : 0; }
};
TransformerRunResult EvaluateTransformerRun(const RunQuery& q, const Catalog& catalog);
nlohmann::json ToJson(const TransformerRunResult& r);

struct GraphRunDocResult {
  std::string graph, mesh, plan;  // plan resolved
  int ops = 0;
  GraphRunPlan gp;
  GraphRunResult r;
  nlohmann::json options;
  int status() const { return r.oom ? 2 : 0; }
};
GraphRunDocResult EvaluateGraphRun(const RunQuery& q, const Catalog& catalog);
nlohmann::json ToJson(const GraphRunDocResult& r);

// ---- search: every valid plan ranked by step time ----
struct SearchQuery {
  ModelQuery in;
  int top = 10;
  bool no_schedules = false;  // the enumeration without selective remat, GPipe and interleaving
};
struct SearchResult {
  std::vector<RankedPlan> ranked;
  SearchStats stats;
  std::vector<std::string> fixed;  // keys written in the plan (kept)
  nlohmann::json options;
  int status() const { return ranked.empty() ? 2 : 0; }
};
SearchResult EvaluateSearch(const SearchQuery& q, const Catalog& catalog);
nlohmann::json ToJson(const SearchResult& r);

// ---- infer: prefill + decode on a tensor-parallel layout ----
struct InferQuery {
  ModelQuery in;
  long long batch = 1, prompt = 2048, generate = 64;
  std::string weights = "bf16";
  bool batch_sharded_kv = false;
  std::string layout = "ws";  // ws | wg-x | wg-xy | wg-xyz (Pope et al.'s weight-gathered layouts)
  bool energy = false;        // also Wh and gCO2e per request
  double power_w = 0, pue = 1.1, grid = 0.429;
  double idle_capacity = 0;  // idle provisioned chips per busy chip, at idle power
};
struct InferResult {
  InferenceResult r;
  PlanC plan;
  InferenceQuery query;
  std::string model, mesh, layout;
  int devices = 0;
  nlohmann::json energy;    // null without --energy
  std::string energy_text;  // the text output's energy line ("" without --energy)
  nlohmann::json options;
  int status() const { return r.oom ? 2 : 0; }
};
InferResult EvaluateInfer(const InferQuery& q, const Catalog& catalog);
nlohmann::json ToJson(const InferResult& r);

// ---- simulate: the placed-graph simulator ----
struct SimulateQuery {
  std::string graph = "layered(ops=1000,width=100,fan_in=3,seed=1)", placement = "round_robin";
  std::string preset = "baechi", device = "plain:4.37e12,2.4e11", trace;
  std::string machine;  // "" = `devices` × `device` with `preset`; else a machine spec (machine.h)
  int devices = 2;
  double memory = 0;  // 0 = not given: unlimited for plain devices, HBM for chips
  double bench_seconds = 0;
  GraphTrainingConfig training;
};
nlohmann::json ToJson(const SimulateQuery& q);  // the document's "options"
// "round_robin" (op i → i mod d), "single" (all on 0), "blocks" (contiguous topological blocks
// of equal size) or a placement file.
std::vector<int> LoadPlacement(const std::string& spec, const graphs::ComputeGraph& g, int d);
// "plain:FLOPS,BYTES_PER_S" (every op kind at that speed) or a catalogue chip name (roofline of
// op_cost.h with the catalogue's efficiencies, bf16, one matmul constant).
SimDevice MakeSimDevice(const std::string& spec, const Catalog& shaped_or_not, double memory);
struct SimulateResult {
  SimulateQuery query;
  graphs::ComputeGraph graph;
  SimConfig config;
  Machine machine;  // with query.machine
  std::vector<int> placement, ops_on;
  SimResult r;
  GraphTrainingResult train;
  double ops_per_s = 0, elapsed = 0;  // bench_seconds > 0
  long runs = 0;
  // Tensors live at the peak of each device over its capacity and of the OOM device (largest
  // first); empty for the others.
  std::vector<std::vector<Simulator::LiveTensor>> live;
  nlohmann::json options;
  int status() const { return r.oom ? 2 : 0; }
};
// Writes query.trace when given.
SimulateResult EvaluateSimulate(const SimulateQuery& q, const Catalog& catalog);
nlohmann::json ToJson(const SimulateResult& r);

// One document by subcommand name ("run", "search", "infer", "simulate") from `options`, an
// object of the binary's long option names with '-' as '_' (graph, top, no_schedules, batch,
// prompt, generate, weights, batch_sharded_kv, layout, energy, power_w, pue, grid,
// idle_capacity; simulate: graph, placement, machine, devices, preset, device, memory, trace,
// bench, replicas, ring_bw, ring_latency), plus catalog and one_matmul_constant. Unknown keys,
// wrong types and out-of-range values are ConfigErrors. `status` (may be null): 0, or 2 when
// the result is infeasible (out of memory, no plan fits), as the binary's exit status.
nlohmann::json PerfModelDocument(const std::string& subcommand, const nlohmann::json& options,
                                 int* status = nullptr);

}  // namespace placerl::perf
