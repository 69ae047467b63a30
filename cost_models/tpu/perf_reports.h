// What `perf-model <subcommand>` prints, as library calls: one query struct per subcommand (the
// binary's options; run / search / infer / simulate use perf_json.h's), and one function that
// evaluates it and writes the text output — or with `json` the one JSON document — to `out`,
// returning the exit status (0, or 2 when the result is infeasible). The table subcommands
// (mlperf, failures, diloco, formats) and validate / energy --validate also write their markdown
// page to the query's `out` path when given. Errors are ConfigError / ParseError / IoError with
// the binary's one-line message. Option ranges: perf_options.h.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cost_models/tpu/perf_json.h"

namespace placerl::perf {

// --json and --verbose of every subcommand.
struct OutputFlags {
  bool json = false;     // one JSON document (with the resolved options) instead of the text
  bool verbose = false;  // text mode: the resolved options first, one line
};

struct BenchQuery {
  ModelQuery in;
  double seconds = 1.0;
};
struct ValidateQuery {
  std::string measurements;  // "" = embedded
  std::string out;           // markdown page to write ("" = none; docs/perf_validation.md is explicit)
  bool fit = false, no_held_out = false;
  std::string lopo_prior = "era";  // era | global | vendor: a held-out chip's matmul in leave-one-paper-out
};
struct MlperfQuery {
  std::string out;
};
struct FailuresQuery {
  ModelQuery in;
  std::string graph;  // non-empty: a graph run (data parallel) instead of the model
  int max_failed = 8;
  std::string out;
};
struct DilocoTableQuery {
  ModelQuery in;  // one island
  std::string islands = "2,4,8", inner_steps = "1,10,100,500", outer = "fp32", out;
  double dcn_gbps = 0;  // 0 = the island's DCN from the catalogue
  double overlap_steps = 0;
  double straggler = 1;       // one island's slowdown (1 = none)
  double failed_islands = 0;  // islands lost for good
  double restart_s = 600;     // stop of the synchronous variants per failure [A]
};
struct FormatsQuery {
  ModelQuery in;
  std::string formats = "bf16,fp8,e3m2,e2m1";
  std::string tensors = "weights,grads";
  std::string out;
};
struct EnergyRunQuery {
  ModelQuery in;  // with tokens: the run whose time the evaluator predicts
  std::string chip, table, out;
  long long chips = 0;
  double days = 0, hours = 0, tokens = 0;
  double pue = 1.1, grid = 0.429, net_grid = -1, power_w = 0;
  double utilisation = -1;   // with chip/chips: the run's hardware utilisation (−1: unknown)
  double idle_capacity = 0;  // idle provisioned accelerators per busy one, at idle power
  bool validate = false;
};

// `run` (a Transformer, or with q.graph a graph run), `search`, `infer`, `simulate`.
int PrintRun(const RunQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintSearch(const SearchQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintInfer(const InferQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintSimulate(const SimulateQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
// `bench`: plan evaluations per second of the training-run evaluator (one core), for q.seconds.
int PrintBench(const BenchQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
// `validate`: predicted vs published measurements (in sample, leave-one-out, leave-one-paper-out).
int PrintValidate(const ValidateQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
// The tables: MLPerf time to train, failed chips, DiLoCo islands, eXmY formats.
int PrintMlperf(const MlperfQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintFailures(const FailuresQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintDiloco(const DilocoTableQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
int PrintFormats(const FormatsQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);
// One timed run of an MLPerf Training benchmark, from its result_N.txt: run_stop − run_start, the
// epoch of its last evaluation, and whether it reached the quality target (run_stop's status
// "success"; "abort": it did not).
struct MlperfRun {
  double seconds = 0;
  double epochs = 0;
  bool converged = true;
};
// A benchmark result computed from its runs as MLPerf Training scores it: "Each benchmark result is
// computed by dropping the fastest and slowest runs, then taking the mean of the remaining times"
// (mlcommons/training_policies training_rules.adoc at 28c67ac, the v0.6 round's text; 5 runs for
// image classification). A run that did not converge is the slowest one dropped; more than one
// makes the result invalid (the rule's v0.7 wording, d7bf509 — v0.6's says only that a run trains
// to the quality target). Throws ConfigError unless there are exactly `required_runs` runs (≥ 3)
// with finite positive times and at most one not converged.
struct MlperfResult {
  double seconds = 0;     // the mean of the kept runs' times
  double epochs = 0;      // the mean of the kept runs' epochs
  std::vector<int> kept;  // indices of the kept runs, fastest first
};
MlperfResult MlperfBenchmarkResult(const std::vector<MlperfRun>& runs, int required_runs);

// `energy`: MWh and tCO2e of one run, or with q.validate of the published runs.
int PrintEnergy(const EnergyRunQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out);

}  // namespace placerl::perf
