// perf-model: the TPU performance model from the command line (cost_models/tpu/).
//   run       one model + mesh + plan → step time breakdown, MFU, HBM (--json)
//   search    enumerate valid plans, rank by step time under the HBM limit
//   validate  predicted vs published measurements → table (markdown to --out)
//   infer     inference latency (prefill + decode) on a tensor-parallel layout
//   failures  step time of one run with 0..N failed chips (holes routed around)
//   diloco    DiLoCo islands: step time and inter-island traffic vs H, vs synchronous DP
//   formats   HBM and step time of one plan across eXmY number formats (markdown to --out)
//   energy    MWh and tCO2e of a training run; --validate: the published runs
//   bench     plan evaluations per second of the training-run evaluator
//   calibrate-host  measure this machine (LibTorch, Gloo) and write a catalogue with `host`
//   simulate  placed-graph simulator: a compute graph + op → device placement → step time,
//             per-device utilisation and peak memory, OOM (Placeto or Baechi semantics over
//             identical devices, or --machine SPEC: place-baseline --env device's machine)
// The shape every placerl binary follows (docs/conventions.md): one options struct per
// subcommand, filled by the parser (every number checked by a cli:: validator); one function
// per subcommand taking it; `--json` prints exactly one JSON document that includes the
// resolved options, `--verbose` prints them first in text mode; exit 0 = done, 1 = error
// (one line on stderr), 2 = ran, but the result is infeasible (OOM, no plan fits).
#include <CLI/CLI.hpp>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/diloco.h"
#include "cost_models/tpu/energy.h"
#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/perf_json.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/cli.h"

namespace {

using namespace placerl;
using namespace placerl::perf;
using nlohmann::json;

// ---------------------------------------------------------------- options, one per subcommand

// Inputs of the model-based subcommands (run, search, infer, bench).
// (ModelQuery: model, mesh, plan; its one_matmul_constant is set from the global flag.)
struct ModelInputs : ModelQuery {
  bool json = false, verbose = false;
};
// The global --one-matmul-constant (false: the shape-dependent matmul efficiency is on).
bool g_one_matmul_constant = false;

json ToJson(const ModelInputs& in) {
  ModelQuery q = in;
  q.one_matmul_constant = g_one_matmul_constant;
  return ModelOptionsJson(q);
}
// The library's query of a subcommand's inputs (the global flag applied).
ModelQuery Query(const ModelInputs& in) {
  ModelQuery q = in;
  q.one_matmul_constant = g_one_matmul_constant;
  return q;
}

struct RunOptions {
  ModelInputs in;
  std::string graph;  // non-empty: a graph run instead of --model
};
struct SearchOptions {
  ModelInputs in;
  int top = 10;
  bool no_schedules = false;  // the enumeration without selective remat, GPipe and interleaving
};
struct InferOptions {
  ModelInputs in;
  long long batch = 1, prompt = 2048, generate = 64;
  std::string weights = "bf16";
  bool batch_sharded_kv = false;
  std::string layout = "ws";  // ws | wg-x | wg-xy | wg-xyz (Pope et al.'s weight-gathered layouts)
  bool energy = false;  // also Wh and gCO2e per request
  double power_w = 0, pue = 1.1, grid = 0.429;
  double idle_capacity = 0;  // idle provisioned chips per busy chip, at idle power
};
InferQuery Query(const InferOptions& o) {
  InferQuery q;
  q.in = Query(o.in);
  q.batch = o.batch;
  q.prompt = o.prompt;
  q.generate = o.generate;
  q.weights = o.weights;
  q.batch_sharded_kv = o.batch_sharded_kv;
  q.layout = o.layout;
  q.energy = o.energy;
  q.power_w = o.power_w;
  q.pue = o.pue;
  q.grid = o.grid;
  q.idle_capacity = o.idle_capacity;
  return q;
}
struct BenchOptions {
  ModelInputs in;
  double seconds = 1.0;
};
struct ValidateOptions {
  std::string measurements;  // "" = embedded
  std::string out;           // markdown page to write ("" = none; docs/perf_validation.md is explicit)
  bool fit = false, no_held_out = false, json = false, verbose = false;
  std::string lopo_prior = "era";  // era | global | vendor: a held-out chip's matmul in leave-one-paper-out
};
struct MlperfOptions {
  ModelInputs in;  // only --json and --verbose are used
  std::string out;
};
struct FailuresOptions {
  ModelInputs in;
  std::string graph;  // non-empty: a graph run (data parallel) instead of --model
  int max_failed = 8;
  std::string out;
};
struct DilocoOptions {
  ModelInputs in;  // one island
  std::string islands = "2,4,8", inner_steps = "1,10,100,500", outer = "fp32", out;
  double dcn_gbps = 0;  // 0 = the island's DCN from the catalogue
  double overlap_steps = 0;
  double straggler = 1;       // one island's slowdown (1 = none)
  double failed_islands = 0;  // islands lost for good
  double restart_s = 600;     // stop of the synchronous variants per failure [A]
};
struct FormatsOptions {
  ModelInputs in;
  std::string formats = "bf16,fp8,e3m2,e2m1";
  std::string tensors = "weights,grads";
  std::string out;
};
struct EnergyOptions {
  ModelInputs in;             // with --tokens: the run whose time the evaluator predicts
  std::string chip, table, out;
  long long chips = 0;
  double days = 0, hours = 0, tokens = 0;
  double pue = 1.1, grid = 0.429, net_grid = -1, power_w = 0;
  double utilisation = -1;  // with --chip/--chips: the run's hardware utilisation (−1: unknown)
  double idle_capacity = 0;  // idle provisioned accelerators per busy one, at idle power
  bool validate = false;
};
struct SimulateOptions : SimulateQuery {
  bool json = false, verbose = false;
};
struct CalibrateOptions {
  std::string out = "out/host_catalog.pbtxt";
  int threads = 1;
  double seconds = 0.3;
};

// `--verbose` in text mode: the resolved options, one line, before the result.
void PrintVerbose(bool verbose, bool json_mode, const json& options) {
  if (verbose && !json_mode) std::printf("options %s\n", options.dump().c_str());
}

// The table subcommands (failures, formats, diloco): the markdown page to --out when given, then
// on stdout the JSON document (with what was written) or the page.
int ReportPage(const ModelInputs& in, const std::string& out, const std::string& md, json doc) {
  if (!out.empty()) WriteFileAtomic(out, md);
  if (in.json) {
    if (!out.empty()) doc["wrote"] = out;
    std::cout << doc.dump(2) << "\n";
  } else {
    PrintVerbose(in.verbose, false, doc["options"]);
    std::printf("%s", md.c_str());
    if (!out.empty()) std::printf("wrote %s\n", out.c_str());
  }
  return kExitOk;
}


// ---------------------------------------------------------------- subcommands

int RunTransformer(const RunOptions& o, const Catalog& catalog) {
  RunQuery q;
  q.in = Query(o.in);
  const TransformerRunResult r = EvaluateTransformerRun(q, catalog);
  if (o.in.json) {
    std::cout << ToJson(r).dump(2) << "\n";
  } else {
    PrintVerbose(o.in.verbose, false, r.options);
    std::printf("model  %s\nmesh   %s (%d devices)\nplan   %s\nparams %.4g\n\n%s", r.model.c_str(), r.mesh.c_str(),
                r.devices, r.plan.c_str(), r.params, FormatBreakdown(r.b).c_str());
  }
  return r.status();
}

int RunGraph(const RunOptions& o, const Catalog& catalog) {
  RunQuery q;
  q.in = Query(o.in);
  q.graph = o.graph;
  const GraphRunDocResult g = EvaluateGraphRun(q, catalog);
  const GraphRunResult& r = g.r;
  const GraphRunPlan& gp = g.gp;
  if (o.in.json) {
    std::cout << ToJson(g).dump(2) << "\n";
  } else {
    PrintVerbose(o.in.verbose, false, g.options);
    std::printf("graph  %s: %d ops\nmesh   %s (%d devices, %d replicas)\nplan   %s\n\n", o.graph.c_str(),
                g.ops, g.mesh.c_str(), r.devices, r.replicas, g.plan.c_str());
    std::printf("step time        %.6g s\n  compute        %.6g s (one replica's graph × %d microbatches)\n"
                "  pipeline comm  %.6g s\n  bubble         %.6g s (%d stages)\n"
                "  exposed data   %.6g s (gradient %s %.6g s)\n  optimizer      %.6g s\n",
                r.step_s, r.compute_s, gp.microbatches, r.pipeline_comm_s, r.bubble_s, gp.pipeline,
                r.exposed_dp_s, gp.shard_optimizer ? "reduce-scatter + weight all-gather" : "all-reduce",
                r.dp_comm_s, r.optimizer_s);
    if (r.examples_per_s > 0)
      std::printf("examples/s       %.6g (%.6g per chip)\n", r.examples_per_s, r.examples_per_s / r.chips);
    std::printf("MFU              %.2f %%\nHBM per device   %.4g GiB of %.4g GiB%s\n", 100 * r.mfu,
                r.hbm_per_device / 1073741824.0, r.hbm_capacity / 1073741824.0, r.oom ? "  ** OOM **" : "");
    std::printf("  params %.2f, grads %.2f, optimizer %.2f, activations %.2f GiB\n", r.hbm_params / 1073741824.0,
                r.hbm_grads / 1073741824.0, r.hbm_optimizer / 1073741824.0, r.hbm_activations / 1073741824.0);
  }
  return r.oom ? kExitInfeasible : kExitOk;
}

int Search(const SearchOptions& o, const Catalog& catalog) {
  SearchQuery q;
  q.in = Query(o.in);
  q.top = o.top;
  q.no_schedules = o.no_schedules;
  const SearchResult sr = EvaluateSearch(q, catalog);
  const auto& ranked = sr.ranked;
  const SearchStats& stats = sr.stats;
  const int status = sr.status();
  if (o.in.json) {
    std::cout << ToJson(sr).dump(2) << "\n";
    return status;
  }
  PrintVerbose(o.in.verbose, false, sr.options);
  std::printf("%ld plans enumerated, %ld valid, %ld fit in HBM%s\n\n", stats.enumerated, stats.valid,
              stats.fitting, sr.fixed.empty() ? "" : " (keys fixed by --plan kept)");
  std::printf("%4s %5s %5s %8s %5s %-8s %5s %6s %-9s %5s %10s %9s %7s %9s\n", "rank", "data", "fsdp", "tensor",
              "pipe", "schedule", "mb", "expert", "remat", "shOpt", "step (s)", "tokens/s", "MFU", "HBM GiB");
  int rank = 1;
  for (const auto& r : ranked) {
    const char* remat = r.plan.remat == REMAT_NONE      ? "none"
                        : r.plan.remat == REMAT_MINIMAL ? "minimal"
                        : r.plan.remat == REMAT_SELECTIVE ? "selective"
                                                          : "full";
    const std::string tensor = r.plan.tensor_x > 1 ? std::to_string(r.plan.tensor_x) + "x" +
                                                         std::to_string(r.plan.tensor / r.plan.tensor_x)
                                                   : std::to_string(r.plan.tensor);
    // Pipeline schedule: 1f1b, gpipe, or 1f1b/v<chunks> (interleaved); "-" without pipelining.
    const std::string sched = r.plan.pipeline == 1             ? "-"
                              : r.plan.schedule == SCHEDULE_GPIPE ? "gpipe"
                              : r.plan.interleave > 1 ? "1f1b/v" + std::to_string(r.plan.interleave)
                                                      : "1f1b";
    std::printf("%4d %5d %5d %8s %5d %-8s %5d %6d %-9s %5s %10.4f %9.4g %6.1f%% %9.2f\n", rank++, r.plan.data,
                r.plan.fsdp, tensor.c_str(), r.plan.pipeline, sched.c_str(), r.result.microbatches, r.plan.expert, remat,
                r.plan.shard_optimizer ? "yes" : "no", r.result.step_s, r.result.tokens_per_s, 100 * r.result.mfu,
                r.result.hbm_total / (1024.0 * 1024 * 1024));
  }
  if (ranked.empty()) std::printf("no plan fits in HBM\n");
  return status;
}

int Infer(const InferOptions& o, const Catalog& catalog) {
  const InferResult ir = EvaluateInfer(Query(o), catalog);
  const InferenceResult& r = ir.r;
  const PlanC& p = ir.plan;
  const InferenceQuery& q = ir.query;
  if (o.in.json) {
    std::cout << ToJson(ir).dump(2) << "\n";
  } else {
    PrintVerbose(o.in.verbose, false, ir.options);
    const std::string layout =
        q.weight_gathered > 0 ? ", " + o.layout + " (weights gathered over " + std::to_string(r.gather_chips) + " chips)"
        : p.tensor_x > 1      ? " as " + std::to_string(p.tensor_x) + "x" + std::to_string(p.tensor / p.tensor_x)
                              : "";
    std::printf("model  %s\nmesh   %s (%d devices), tensor %d%s\nquery  batch %lld, prompt %lld, generate %lld, "
                "weights %s%s\n\n%s",
                ir.model.c_str(), ir.mesh.c_str(), ir.devices, p.tensor, layout.c_str(), o.batch, o.prompt,
                o.generate, DType_Name(q.weight_dtype).c_str(), q.batch_sharded_kv ? ", batch-sharded KV" : "",
                FormatInference(r).c_str());
    std::printf("%s", ir.energy_text.c_str());
  }
  return ir.status();
}

int Bench(const BenchOptions& o, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(o.in.model);
  const Mesh mesh = ParseMeshSpec(o.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanC base = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kFsdp);
  // Cycle through every enumerated plan so that branches are realistic.
  const std::vector<PlanC> plans = EnumeratePlans(ev, base);
  if (plans.empty()) throw ConfigError("bench: no candidate plans for this model and mesh");
  json options = ToJson(o.in);
  options["seconds"] = o.seconds;
  PrintVerbose(o.in.verbose, o.in.json, options);
  long n = 0;
  double sink = 0, elapsed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  do {  // at least one round, so the rate is never 0/0
    for (int i = 0; i < 1000; ++i, ++n) sink += ev.Evaluate(plans[n % plans.size()]).step_s;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < o.seconds);
  if (o.in.json) {
    std::cout << json{{"options", options},      {"evaluations", n},
                      {"seconds", elapsed},      {"evaluations_per_s", n / elapsed},
                      {"devices", ev.num_devices()}, {"distinct_plans", plans.size()}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%ld evaluations in %.3f s = %.0f plan evaluations/s on one core "
                "(%d devices, %zu distinct plans; checksum %.3g)\n",
                n, elapsed, n / elapsed, ev.num_devices(), plans.size(), sink);
  }
  return kExitOk;
}

int RunValidate(const ValidateOptions& o, const Catalog& catalog) {
  const MeasurementSet rows = LoadMeasurements(o.measurements);
  json options = {{"measurements", o.measurements.empty() ? "<embedded>" : o.measurements},
                  {"out", o.out}, {"fit", o.fit}, {"no_held_out", o.no_held_out}};
  options["lopo_prior"] = o.lopo_prior;
  PrintVerbose(o.verbose, o.json, options);
  Catalog used = catalog;
  std::string fit_log;
  if (o.fit) {
    used = FitEfficiency(rows, catalog, &fit_log);
    if (!o.json) std::printf("%s\n\n", fit_log.c_str());
  }
  const ValidationReport rep = Validate(rows, used);
  if (rep.evaluated == 0)
    throw ConfigError("validate: no full-configuration row could be evaluated (" + std::to_string(rows.row_size()) +
                      " rows, all partial, extra or failing): no median error to report");
  ValidationReport held_out, paper_out;
  if (!o.no_held_out) {
    held_out = CrossValidate(rows, catalog);
    paper_out = CrossValidatePapers(rows, catalog,
                                    o.lopo_prior == "vendor" ? HeldOutChipPrior::kVendorMedian
                                    : o.lopo_prior == "era"  ? HeldOutChipPrior::kEraMedian
                                                             : HeldOutChipPrior::kGlobalMedian);
  }
  if (!o.out.empty())
    WriteFileAtomic(o.out, ReportMarkdown(rep, used, o.no_held_out ? nullptr : &held_out,
                                          o.no_held_out ? nullptr : &paper_out));
  if (o.json) {
    json table = json::array();
    for (const ValidationRow& r : rep.rows)
      table.push_back({{"id", r.id}, {"chip", r.chip}, {"metric", r.metric}, {"measured", r.measured},
                       {"predicted", r.predicted}, {"rel_error", r.rel_error}, {"oom", r.oom},
                       {"partial", r.partial}, {"extra", r.extra}, {"paper", r.paper}, {"error", r.error}});
    json j = {{"options", options},
              {"rows", table},
              {"evaluated", rep.evaluated},
              {"median_abs_error", rep.median_abs_error},
              {"worst_abs_error", rep.worst_abs_error},
              {"worst_id", rep.worst_id}};
    if (o.fit) j["fit"] = fit_log;
    if (!o.no_held_out) {
      j["held_out"] = {{"median_abs_error", held_out.median_abs_error},
                       {"worst_abs_error", held_out.worst_abs_error},
                       {"worst_id", held_out.worst_id}};
      json papers = json::array();
      for (const ValidationRow& r : paper_out.rows)
        papers.push_back({{"id", r.id}, {"paper", r.paper}, {"predicted", r.predicted},
                          {"rel_error", r.rel_error}, {"error", r.error}});
      j["paper_out"] = {{"median_abs_error", paper_out.median_abs_error},
                        {"worst_abs_error", paper_out.worst_abs_error},
                        {"worst_id", paper_out.worst_id},
                        {"rows", papers}};
    }
    if (!o.out.empty()) j["wrote"] = o.out;
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%s", ReportTable(rep).c_str());
  if (!o.no_held_out) {
    std::printf("\nheld out (leave-one-out refits): median |error| %.1f %%, worst %.1f %% (%s)\n",
                100 * held_out.median_abs_error, 100 * held_out.worst_abs_error, held_out.worst_id.c_str());
    std::printf("held out by paper (leave-one-paper-out refits): median |error| %.1f %%, worst %.1f %% (%s)\n",
                100 * paper_out.median_abs_error, 100 * paper_out.worst_abs_error, paper_out.worst_id.c_str());
  }
  if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
  return kExitOk;
}

// MLPerf time to train for the published MLPerf configurations of the notes
// (perf_model_notes.md §3d, perf_model_notes_2.md §9): epochs to target × images per epoch /
// predicted throughput; evaluation not modelled (no per-eval cost in the notes for these runs);
// initialisation is not part of MLPerf's timed run (run_start → run_stop).
int Mlperf(const MlperfOptions& o, const Catalog& catalog) {
  constexpr double kImageNetTrain = 1281167;  // ImageNet-1k training images [A: standard figure]
  struct Config {
    const char *id, *benchmark, *graph, *mesh, *plan;
    double epochs, published_s;
    const char* note;  // non-empty: not evaluated, why
  };
  static const Config kConfigs[] = {
      {"M1", "ResNet-50 v0.6, v3-32 (16 chips), batch 4096", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:4x4",
       "shard_optimizer=true,optimizer=sgd_momentum", 60, 2533, ""},
      {"M2", "ResNet-50 v0.6, v3-128 (64 chips), batch 16384", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:8x8",
       "shard_optimizer=true,optimizer=sgd_momentum", 64, 673, ""},
      {"M3", "ResNet-50 v0.6, v3-256 (128 chips), batch 32768", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:8x16",
       "shard_optimizer=true,optimizer=sgd_momentum", 76, 409, ""},
      {"M4", "ResNet-50 v0.6, v3-512 (256 chips), batch 32768", "resnet(depth=50,batch=64,fused=1)", "tpu_v3:16x16",
       "shard_optimizer=true,optimizer=sgd_momentum", 72, 265, ""},
      {"M5", "ResNet-50 v0.6, v3-1024 (512 chips), batch 32768", "resnet(depth=50,batch=32,fused=1)", "tpu_v3:16x32",
       "shard_optimizer=true,optimizer=sgd_momentum", 76, 137, ""},
      {"M8", "ResNet-50 v0.7 JAX, v3-8192 (4096 chips), batch 65536", "", "", "", 92, 28.70,
       "4096 chips span 4 v3 pods: the catalogue's v3 ICI domain is 1024 chips and v3 has no DCN entry"},
      {"M9", "BERT-large v0.7 JAX, v3-8192 (4096 chips)", "", "", "", 0, 23.71, "as M8"},
      {"M10", "Transformer WMT v0.7 JAX, v3-8192 (4096 chips)", "", "", "", 4, 13.88, "as M8"},
      {"SSD7", "SSD v0.7 JAX, v3-4096 (2048 chips)", "", "", "", 0, 34.05, "as M8 (2 pods); and no SSD graph"},
      {"SSD6", "SSD v0.6 TF, v3-2048 (1024 chips)", "", "", "", 76, 73.25, "no SSD graph"},
  };
  std::ostringstream md;
  char buf[768];
  md << "# MLPerf time to train\n\n"
     << "Generated by `perf-model mlperf` (do not edit by hand). Published: MLPerf training results,\n"
     << "run_stop − run_start of result_0 (`../shared/reference/perf_model_notes.md` §3d, rows M1–M5 [V];\n"
     << "`perf_model_notes_2.md` §9 for the v0.7 / SSD runs [V]). Predicted: epochs to target (from the\n"
     << "logs: convergence is an input, not predicted) × 1,281,167 ImageNet training images [A] / the\n"
     << "graph run's examples/s (`perf-model run --graph`: ResNet-50 v1.5 data parallel, one replica per\n"
     << "core, weight-update sharding, SGD with momentum for LARS [A]). Not modelled: evaluation (the notes\n"
     << "give no per-evaluation cost for these runs) and the first-epoch overhead; initialisation is not part\n"
     << "of the timed run (notes_2 §9).\n\n"
     << "| id | benchmark | epochs | published s | predicted s | error | note |\n|---|---|---:|---:|---:|---:|---|\n";
  json rows = json::array();
  std::vector<double> errs;
  for (const Config& c : kConfigs) {
    json row = {{"id", c.id}, {"benchmark", c.benchmark}, {"published_s", c.published_s}};
    if (c.note[0] != '\0') {
      std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.4g | — | — | not evaluated: %s |\n", c.id, c.benchmark,
                    c.epochs > 0 ? std::to_string(int(c.epochs)).c_str() : "—", c.published_s, c.note);
      md << buf;
      row["not_evaluated"] = c.note;
      rows.push_back(row);
      continue;
    }
    const graphs::NamedGraph ng = graphs::GraphFromSpec(c.graph);
    const GraphRunResult r = EvaluateGraphOnMesh(ng.graph, ParseMeshSpec(c.mesh), catalog,
                                                 GraphRunPlanFromPlan(ParsePlanSpecWithKeys(c.plan).plan, ng.examples));
    const double predicted = c.epochs * kImageNetTrain / r.examples_per_s;
    const double err = (predicted - c.published_s) / c.published_s;
    errs.push_back(std::fabs(err));
    std::snprintf(buf, sizeof buf, "| %s | %s | %.0f | %.4g | %.4g | %+.1f %% | %s, %s; %.4g img/s per chip |\n", c.id,
                  c.benchmark, c.epochs, c.published_s, predicted, 100 * err, c.graph, c.mesh, r.examples_per_s / r.chips);
    md << buf;
    row["epochs"] = c.epochs;
    row["predicted_s"] = predicted;
    row["error"] = err;
    row["examples_per_s_per_chip"] = r.examples_per_s / r.chips;
    rows.push_back(row);
  }
  std::sort(errs.begin(), errs.end());
  const double median = errs.empty() ? 0 : errs.size() % 2 ? errs[errs.size() / 2]
                                                          : 0.5 * (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]);
  std::snprintf(buf, sizeof buf, "\nEvaluated %zu of %zu configurations: median |error| %.1f %%, worst %.1f %%.\n",
                errs.size(), sizeof kConfigs / sizeof kConfigs[0], 100 * median, errs.empty() ? 0.0 : 100 * errs.back());
  md << buf;
  json options = {{"out", o.out}};
  return ReportPage(o.in, o.out, md.str(),
                    {{"options", options}, {"rows", rows}, {"median_abs_error", median},
                     {"worst_abs_error", errs.empty() ? 0.0 : errs.back()}});
}

int Failures(const FailuresOptions& o, const Catalog& catalog) {
  const Mesh base_mesh = ParseMeshSpec(o.in.mesh);
  if (base_mesh.failed() != 0) throw ConfigError("failures: give the healthy mesh (no failed=); --max-failed sets the holes");
  const PlanSpec spec = ParsePlanSpecWithKeys(o.in.plan);
  struct Row {
    int failed;
    double step_s, comm_s, exposed_s, per_chip, chips;
    std::string plan;
  };
  std::vector<Row> rows;
  std::string what;
  for (int k = 0; k <= o.max_failed; ++k) {
    Mesh mesh = base_mesh;
    mesh.set_failed(k);
    Row row{k, 0, 0, 0, 0, 0, ""};
    if (!o.graph.empty()) {
      const graphs::NamedGraph ng = graphs::GraphFromSpec(o.graph);
      const GraphRunResult r = EvaluateGraphOnMesh(ng.graph, mesh, catalog, GraphRunPlanFromPlan(spec.plan, ng.examples));
      row.step_s = r.step_s;
      row.comm_s = r.dp_comm_s;
      row.exposed_s = r.exposed_dp_s;
      row.per_chip = r.examples_per_s / r.chips;
      row.chips = r.chips;
      row.plan = "data=" + std::to_string(r.replicas);
      what = "graph `" + o.graph + "`, examples/s per chip";
    } else {
      const TrainingEvaluator ev(ParseModelSpec(o.in.model), mesh, catalog);
      const PlanC plan = ResolvePlan(spec, ev.num_devices(), FillAxis::kFsdp);
      const StepBreakdown b = ev.Evaluate(plan);
      if (!b.valid) ThrowInvalidPlan(b.invalid_reason, plan, ev);
      row.step_s = b.step_s;
      row.comm_s = b.exposed_tp_s + b.exposed_fsdp_s + b.exposed_dp_s + b.exposed_ep_s + b.pipeline_comm_s;
      row.exposed_s = row.comm_s;
      row.per_chip = b.tokens_per_s / ev.num_chips();
      row.chips = ev.num_chips();
      row.plan = ResolvedPlanString(plan, b.microbatches);
      what = "model `" + ModelToString(ev.model()) + "`, tokens/s per chip";
    }
    rows.push_back(row);
  }
  json options = ToJson(o.in);
  if (!o.graph.empty()) {
    options.erase("model");
    options["graph"] = o.graph;
  }
  options["max_failed"] = o.max_failed;
  options["out"] = o.out;
  std::ostringstream md;
  char buf[512];
  md << "# Failed chips\n\n"
     << "Generated by `perf-model failures` (do not edit by hand). " << what << ", mesh `"
     << MeshToString(base_mesh) << "` with 0.." << o.max_failed << " failed chips (Mesh.failed). Assumptions\n"
     << "[A]: the holes leave the job (the other chips keep their per-chip batch); each hole sits in its\n"
     << "own row and column; every ICI ring through a hole is routed around it: it loses its wraparound,\n"
     << "its detour shares the neighbouring ring's links (half that axis's bandwidth) and adds 2 hops per\n"
     << "hole. Kumar & Jouppi 2020 [V, abstract]: all-reduce routed around failed chips with \"minimal impact\n"
     << "to training throughput\" for MLPerf ResNet-50 and BERT on 512 and 1024 TPU-v3 chips (no number published).\n\n"
     << "| failed | chips | plan | step s | collective s | exposed s | per chip | loss vs healthy |\n"
        "|---:|---:|---|---:|---:|---:|---:|---:|\n";
  json table = json::array();
  for (const Row& r : rows) {
    const double loss = 1 - r.per_chip / rows[0].per_chip;
    std::snprintf(buf, sizeof buf, "| %d | %.0f | ", r.failed, r.chips);
    md << buf << r.plan;
    std::snprintf(buf, sizeof buf, " | %.5g | %.4g | %.4g | %.5g | %+.2f %% |\n", r.step_s, r.comm_s, r.exposed_s,
                  r.per_chip, 100 * loss);
    md << buf;
    table.push_back({{"failed", r.failed}, {"chips", r.chips}, {"plan", r.plan}, {"step_s", r.step_s},
                     {"collective_s", r.comm_s}, {"exposed_s", r.exposed_s}, {"per_chip", r.per_chip},
                     {"loss_vs_healthy", loss}});
  }
  return ReportPage(o.in, o.out, md.str(), {{"options", options}, {"rows", table}});
}

// "2,4,8" → numbers in [lo, hi] (at most 64).
std::vector<double> NumberList(const std::string& list, const char* what, double lo, double hi) {
  std::vector<double> out;
  for (const std::string& v : SplitCommaList(list)) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi || x != std::floor(x))
      throw ConfigError(std::string("diloco: ") + what + " takes whole numbers in [" + std::to_string(static_cast<long long>(lo)) +
                        ", " + std::to_string(static_cast<long long>(hi)) + "], got \"" + v + "\"");
    out.push_back(x);
  }
  if (out.empty() || out.size() > 64) throw ConfigError(std::string("diloco: ") + what + ": give 1..64 values");
  return out;
}

int Diloco(const DilocoOptions& o, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(o.in.model);
  const Mesh mesh = ParseMeshSpec(o.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanC plan = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kFsdp);
  const StepBreakdown b = ev.Evaluate(plan);
  if (!b.valid) ThrowInvalidPlan(b.invalid_reason, plan, ev);
  if (b.oom) throw ConfigError("diloco: the island's plan does not fit in HBM (perf-model run shows where)");
  const std::vector<double> islands = NumberList(o.islands, "--islands", 2, 1e6);
  const std::vector<double> hs = NumberList(o.inner_steps, "--inner-steps", 1, 1e9);
  const Efficiency eff = EffectiveEfficiency(catalog, ev.chip());
  double bw = o.dcn_gbps * 1e9 / 8;
  std::string bw_source = "--dcn-gbps";
  if (bw <= 0) {
    bw = ev.num_chips() * ev.chip().dcn_bw_per_chip() * eff.dcn_bw();
    bw_source = "catalogue: chips x DCN per chip x dcn_bw efficiency";
    if (!(bw > 0))
      throw ConfigError("diloco: the catalogue has no DCN bandwidth for " + ev.chip().name() + "; give --dcn-gbps");
  }
  DilocoQuery q;
  q.island_bw = bw;
  q.latency_s = ev.chip().dcn_latency_s();
  q.outer_bytes = FormatBits(o.outer) / 8.0;
  q.overlap_steps = o.overlap_steps;
  const double grad_bytes = plan.grad_bits > 0 ? plan.grad_bits / 8.0 : BytesPerElement(plan.grad_dtype);
  const bool faults = o.straggler != 1 || o.failed_islands > 0;
  DilocoFaults fq;
  fq.straggler_slowdown = o.straggler;
  fq.failed_islands = o.failed_islands;
  fq.restart_s = o.restart_s;
  if (o.failed_islands != std::floor(o.failed_islands))
  {
    char fb[96];
    std::snprintf(fb, sizeof fb, "diloco: --failed-islands takes a whole number, got %g", o.failed_islands);
    throw ConfigError(fb);
  }
  for (double m : islands)
    if (o.failed_islands > m - 1)
      throw ConfigError("diloco: --failed-islands " + std::to_string(static_cast<long long>(o.failed_islands)) +
                        " leaves no island of " + std::to_string(static_cast<long long>(m)) + " (give fewer than every --islands value)");
  json options = ToJson(o.in);
  options["islands"] = o.islands;
  options["straggler"] = o.straggler;
  options["failed_islands"] = o.failed_islands;
  options["restart_s"] = o.restart_s;
  options["inner_steps"] = o.inner_steps;
  options["outer"] = o.outer;
  options["overlap_steps"] = o.overlap_steps;
  options["dcn_gbps"] = bw * 8 / 1e9;
  options["out"] = o.out;
  options["resolved"] = {{"model", ModelToString(ev.model())}, {"mesh", MeshToString(mesh)},
                         {"plan", ResolvedPlanString(plan, b.microbatches)}};
  std::ostringstream md;
  char buf[512];
  md << "# DiLoCo islands\n\n"
     << "Generated by `perf-model diloco` (do not edit by hand). Each island runs the plan below (its step\n"
     << "time from the training-step evaluator), H inner steps, then all-reduces the outer gradient (" << o.outer
     << ",\n" << FormatBits(o.outer) << " bits per value) over the inter-island network: t_sync = 2(M−1)/M · P·b / B + 2(M−1)·α;\n"
     << "the mean step is t_inner + max(0, t_sync − τ·t_inner)/H with τ = " << o.overlap_steps
     << " overlapped inner steps. Synchronous\n"
     << "data parallelism over the same network all-reduces the gradients (" << grad_bytes
     << " B per value) every step, hidden under\n"
     << "the last microbatch's backward pass. Break-even H: the smallest H with ≤ 5 % overhead over one\n"
     << "island's step. Convergence per step is NOT modelled (DiLoCo: 8 islands match synchronous\n"
     << "training on C4, Douillard et al. 2023 [V]).\n\n";
  md << "- island: `" << ModelToString(ev.model()) << "` on `" << MeshToString(mesh) << "`, plan `"
     << ResolvedPlanString(plan, b.microbatches) << "`\n";
  std::snprintf(buf, sizeof buf, "- params P = %.4g, island step %.4g s\n- B = %.4g Gbit/s per island (", ev.total_params(),
                b.step_s, bw * 8 / 1e9);
  md << buf << bw_source;
  std::snprintf(buf, sizeof buf, "), α = %.3g s\n\n", q.latency_s);
  md << buf
     << "| islands M | H | t_sync s | mean step s | overhead | GB per island per step | sync DP step s | "
        "sync DP GB per step | DiLoCo speed-up | break-even H |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  json rows = json::array();
  for (double m : islands)
    for (double h : hs) {
      q.islands = m;
      q.inner_steps = h;
      const DilocoResult r = EvaluateDiloco(b, ev.total_params(), grad_bytes, q);
      std::snprintf(buf, sizeof buf, "| %.0f | %.0f | %.4g | %.4g | %.1f %% | %.4g | %.4g | %.4g | %.2f× | %.0f |\n", m,
                    h, r.sync_s, r.step_s, 100 * r.overhead, r.dcn_bytes_per_step / 1e9, r.sync_dp_step_s,
                    r.sync_dp_dcn_bytes_per_step / 1e9, r.speedup_vs_sync_dp, r.break_even_h);
      md << buf;
      rows.push_back({{"islands", m}, {"inner_steps", h}, {"inner_step_s", r.inner_step_s}, {"sync_s", r.sync_s},
                      {"exposed_sync_s", r.exposed_sync_s}, {"step_s", r.step_s}, {"overhead", r.overhead},
                      {"dcn_bytes_per_step", r.dcn_bytes_per_step}, {"sync_dp_step_s", r.sync_dp_step_s},
                      {"sync_dp_dcn_bytes_per_step", r.sync_dp_dcn_bytes_per_step},
                      {"speedup_vs_sync_dp", r.speedup_vs_sync_dp}, {"break_even_h", r.break_even_h}});
      if (faults) {
        const DilocoFaultResult x = EvaluateDilocoFaults(b, ev.total_params(), grad_bytes, q, fq);
        rows.back()["faults"] = {{"sync_diloco_step_s", x.sync_diloco_step_s},
                                 {"decoupled_step_s", x.decoupled_step_s},
                                 {"sync_dp_step_s", x.sync_dp_step_s},
                                 {"sync_break_even_h", x.sync_break_even_h},
                                 {"decoupled_break_even_h", x.decoupled_break_even_h},
                                 {"survivors_step_s", x.survivors_step_s},
                                 {"throughput_after_failure", x.throughput_after_failure},
                                 {"lost_island_s_decoupled", x.lost_island_s_decoupled},
                                 {"lost_island_s_sync_diloco", x.lost_island_s_sync_diloco},
                                 {"lost_island_s_sync_dp", x.lost_island_s_sync_dp}};
      }
    }
  if (faults) {
    std::snprintf(buf, sizeof buf,
                  "\n## Stragglers and failed islands (Decoupled DiLoCo)\n\n"
                  "One island runs its inner step %.3g× slower (--straggler); %.0f island(s) fail for good "
                  "(--failed-islands); the synchronous variants stop %.4g s per failure (--restart-s, an "
                  "assumption: detection, restart, reload).\n",
                  o.straggler, o.failed_islands, o.restart_s);
    md << buf
       << "Synchronous DiLoCo (a barrier at every outer step) and synchronous DP wait for the slowest island:\n"
          "s·t + exposed sync / H (DP: every step, the all-reduce hidden as above). Decoupled DiLoCo (Douillard\n"
          "et al. 2026 [V]: asynchronous pushes to a syncer, quorum merge, no barrier): each island at its own pace,\n"
          "each paying its own exposed sync per H steps; mean step = M / Σ_m 1/(s_m·t + e/H). After a failure\n"
          "every variant runs on the M−F survivors (outer ring of M−F); throughput relative to the healthy job.\n"
          "Work lost per failure, island-hours: decoupled F·H/2·t (each failed island's steps since its last push),\n"
          "synchronous DiLoCo M·R + F·H/2·t, synchronous DP M·R (its lost steps inside R). Goodput of whole\n"
          "runs depends on the failure rate, which is not modelled.\n\n"
       << "| islands M | H | healthy step s | sync DiLoCo step s | decoupled step s | sync DP step s | "
          "break-even H sync / decoupled | throughput after failure | lost island-h: decoupled / sync DiLoCo / sync DP |\n"
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const json& row : rows) {
      const json& x = row["faults"];
      std::snprintf(buf, sizeof buf, "| %.0f | %.0f | %.4g | %.4g | %.4g | %.4g | %.0f / %.0f | %.1f %% | %.3g / %.3g / %.3g |\n",
                    row["islands"].get<double>(), row["inner_steps"].get<double>(), row["step_s"].get<double>(),
                    x["sync_diloco_step_s"].get<double>(), x["decoupled_step_s"].get<double>(),
                    x["sync_dp_step_s"].get<double>(), x["sync_break_even_h"].get<double>(),
                    x["decoupled_break_even_h"].get<double>(), 100 * x["throughput_after_failure"].get<double>(),
                    x["lost_island_s_decoupled"].get<double>() / 3600, x["lost_island_s_sync_diloco"].get<double>() / 3600,
                    x["lost_island_s_sync_dp"].get<double>() / 3600);
      md << buf;
    }
  }
  return ReportPage(o.in, o.out, md.str(),
                    {{"options", options}, {"params", ev.total_params()}, {"island_step_s", b.step_s}, {"rows", rows}});
}

int Formats(const FormatsOptions& o, const Catalog& catalog) {
  const TransformerModel model = ParseModelSpec(o.in.model);
  const Mesh mesh = ParseMeshSpec(o.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanC base = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kFsdp);
  const std::vector<std::string> formats = SplitCommaList(o.formats), tensors = SplitCommaList(o.tensors);
  if (formats.empty() || formats.size() > 64) throw ConfigError("formats: give 1..64 formats, e.g. bf16,fp8,e3m2,e2m1");
  bool w = false, g = false, opt = false, act = false;
  for (const std::string& t : tensors) {
    if (t == "weights") w = true;
    else if (t == "grads") g = true;
    else if (t == "optimizer") opt = true;
    else if (t == "activations") act = true;
    else throw ConfigError("formats: --tensors takes weights, grads, optimizer, activations; got \"" + t + "\"");
  }
  if (!(w || g || opt || act)) throw ConfigError("formats: --tensors is empty");
  struct Row {
    std::string format;
    int bits;
    PlanC plan;
    StepBreakdown b;
  };
  std::vector<Row> rows;
  for (const std::string& f : formats) {
    const int bits = FormatBits(f);
    PlanC p = base;
    if (w) p.weight_bits = bits;
    if (g) p.grad_bits = bits;
    if (opt) p.optimizer_bits = bits;
    if (act) p.activation_bits = bits;
    const StepBreakdown b = ev.Evaluate(p);
    if (!b.valid) ThrowInvalidPlan(b.invalid_reason, p, ev);
    rows.push_back({f, bits, p, b});
  }
  json options = ToJson(o.in);
  options["formats"] = o.formats;
  options["tensors"] = o.tensors;
  options["out"] = o.out;
  options["resolved"] = {{"model", ModelToString(ev.model())}, {"mesh", MeshToString(mesh)},
                         {"plan", ResolvedPlanString(base, rows[0].b.microbatches)}};
  const double gib = 1073741824.0;
  std::ostringstream md;
  char buf[512];
  md << "# Number formats (eXmY)\n\n"
     << "Generated by `perf-model formats` (do not edit by hand). One model, mesh and plan; the formats\n"
     << "below replace the storage width of: " << o.tensors << ". Bytes per value = bits / 8 (eXmY packs\n"
     << "exactly B bits per value, Agrawal et al. 2024); this sets HBM, HBM traffic and the bytes the\n"
     << "tensors' collectives move (weight all-gathers, gradient reduce-scatters / all-reduces).\n"
     << "**Compute-rate assumption**: values are decoded to the compute dtype ("
     << DType_Name(base.compute_dtype) << " here) before the\n"
     << "matmuls, so the compute rate does not change with the format; an 8-bit rate (2× bf16 where\n"
     << "published: int8 on v5e/v5p/v6e, fp8 on H100) needs compute_dtype=int8/fp8 in --plan. With\n"
     << "weights below 32 bits the optimizer keeps an fp32 master copy (4 B per weight).\n\n"
     << "- model: `" << ModelToString(ev.model()) << "`\n- mesh: `" << MeshToString(mesh) << "`\n- plan: `"
     << ResolvedPlanString(base, rows[0].b.microbatches) << "`\n\n"
     << "| format | bits | weights GiB | grads GiB | optimizer GiB | activations GiB | HBM total GiB | step s | "
        "exposed FSDP s | exposed data s | MFU |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  json table = json::array();
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof buf,
                  "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f%s | %.4f | %.4f | %.4f | %.1f %% |\n", r.format.c_str(),
                  r.bits, r.b.hbm_params / gib, r.b.hbm_grads / gib, r.b.hbm_optimizer / gib,
                  r.b.hbm_activations / gib, r.b.hbm_total / gib, r.b.oom ? " (OOM)" : "", r.b.step_s,
                  r.b.exposed_fsdp_s, r.b.exposed_dp_s, 100 * r.b.mfu);
    md << buf;
    json e = StepBreakdownJson(r.b);
    e["format"] = r.format;
    e["bits"] = r.bits;
    e["plan"] = ResolvedPlanString(r.plan, r.b.microbatches);
    table.push_back(e);
  }
  return ReportPage(o.in, o.out, md.str(), {{"options", options}, {"rows", table}});
}

int Energy(const EnergyOptions& o, const Catalog& catalog) {
  const EnergyTable table = LoadEnergyTable(o.table);
  json options = {{"table", o.table.empty() ? "<embedded>" : o.table}};
  if (!o.validate && !o.out.empty()) throw ConfigError("energy: --out writes the --validate page; give --validate");
  if (o.validate) {
    options["validate"] = true;
    options["out"] = o.out;
    PrintVerbose(o.in.verbose, o.in.json, options);
    const EnergyReport rep = ValidateEnergy(table);
    if (rep.evaluated == 0) throw ConfigError("energy --validate: no run could be evaluated");
    EnergyTable flat = table;  // before: power independent of utilisation
    flat.set_power_utilisation_slope(0);
    const EnergyReport before = ValidateEnergy(flat);
    const double fitted_slope = FitPowerSlope(table);
    const std::string md = EnergyMarkdown(rep, table, &before);
    if (!o.out.empty()) WriteFileAtomic(o.out, md);
    if (o.in.json) {
      json rows = json::array();
      for (const EnergyRow& r : rep.rows)
        rows.push_back({{"id", r.id}, {"paper", r.paper}, {"chip", r.chip}, {"power_w", r.power_w},
                        {"utilisation", r.utilisation >= 0 ? json(r.utilisation) : json(nullptr)},
                        {"loo_mwh_rel_error", r.loo_mwh_error},
                        {"run_power_w", r.run_power_w}, {"measured_mwh", r.measured_mwh},
                        {"predicted_mwh", r.predicted_mwh}, {"mwh_rel_error", r.mwh_error},
                        {"measured_tco2e", r.measured_tco2e}, {"predicted_tco2e", r.predicted_tco2e},
                        {"tco2e_rel_error", r.tco2e_error}, {"measured_net_tco2e", r.measured_net_tco2e},
                        {"predicted_net_tco2e", r.predicted_net_tco2e}, {"net_tco2e_rel_error", r.net_tco2e_error},
                        {"error", r.error}});
      json j = {{"options", options}, {"rows", rows}, {"evaluated", rep.evaluated},
                {"median_abs_mwh_error", rep.median_abs_mwh_error}, {"worst_abs_mwh_error", rep.worst_abs_mwh_error},
                {"worst_mwh_id", rep.worst_mwh_id}, {"median_abs_tco2e_error", rep.median_abs_tco2e_error},
                {"worst_abs_tco2e_error", rep.worst_abs_tco2e_error},
                {"power_utilisation_slope", table.power_utilisation_slope()},
                {"fitted_power_utilisation_slope", fitted_slope},
                {"median_abs_loo_mwh_error", rep.median_abs_loo_mwh_error},
                {"worst_abs_loo_mwh_error", rep.worst_abs_loo_mwh_error},
                {"constant_power", {{"median_abs_mwh_error", before.median_abs_mwh_error},
                                    {"worst_abs_mwh_error", before.worst_abs_mwh_error},
                                    {"median_abs_tco2e_error", before.median_abs_tco2e_error},
                                    {"worst_abs_tco2e_error", before.worst_abs_tco2e_error}}}};
      if (!o.out.empty()) j["wrote"] = o.out;
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("%s", md.c_str());
      std::printf("fitted power_utilisation_slope %.4g (the table's: %.4g)\n", fitted_slope,
                  table.power_utilisation_slope());
      if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
    }
    return kExitOk;
  }
  EnergyQuery q;
  std::string chip = o.chip;
  json run = nullptr;
  double utilisation = o.utilisation;
  if (o.tokens > 0) {
    // The run's time from the training-step evaluator: tokens / predicted tokens per second.
    if (!o.chip.empty() || o.chips > 0 || o.days > 0 || o.hours > 0)
      throw ConfigError("energy: --tokens takes the chips and the time from --model/--mesh/--plan; "
                        "do not also give --chip, --chips, --days or --hours");
    const TransformerModel model = ParseModelSpec(o.in.model);
    const Mesh mesh = ParseMeshSpec(o.in.mesh);
    const TrainingEvaluator ev(model, mesh, catalog);
    const PlanC plan = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kFsdp);
    const StepBreakdown b = ev.Evaluate(plan);
    if (!b.valid) ThrowInvalidPlan(b.invalid_reason, plan, ev);
    if (b.oom) throw ConfigError("energy: the plan does not fit in HBM (perf-model run shows where)");
    chip = mesh.chip();
    q.chips = ev.num_chips();
    q.hours = o.tokens / b.tokens_per_s / 3600;
    options["model"] = ModelToString(ev.model());
    options["mesh"] = MeshToString(mesh);
    options["plan"] = ResolvedPlanString(plan, b.microbatches);
    options["tokens"] = o.tokens;
    run = {{"step_s", b.step_s}, {"tokens_per_s", b.tokens_per_s}, {"mfu", b.mfu}, {"hfu", b.hfu},
           {"steps", o.tokens / (b.tokens_per_s * b.step_s)}};
    if (o.utilisation >= 0) throw ConfigError("energy: --utilisation is for --chip/--chips runs; with --tokens the plan's HFU is used");
    utilisation = b.hfu;
  } else {
    if (o.chip.empty() || o.chips <= 0 || (o.days > 0) == (o.hours > 0))
      throw ConfigError("energy: give --chip, --chips and one of --days / --hours (or --tokens with "
                        "--model/--mesh/--plan, or --validate)");
    q.chips = double(o.chips);
    q.hours = o.days > 0 ? o.days * 24 : o.hours;
    options["chip"] = o.chip;
    options["chips"] = o.chips;
    options["hours"] = q.hours;
  }
  std::string power_source = "--power-w";
  double idle_w = 0;
  if (o.power_w > 0) {
    q.power_w = o.power_w;
    idle_w = o.power_w;  // no idle power known: the given power
  } else {
    const ChipPower& p = PowerOf(table, chip);
    q.power_w = PowerAt(p, table.power_utilisation_slope(), utilisation);
    idle_w = PowerAt(p, table.power_utilisation_slope(), 0);
    power_source = p.source();
    if (utilisation >= 0 && p.mean_utilisation() > 0 && table.power_utilisation_slope() > 0) {
      char ub[160];
      std::snprintf(ub, sizeof ub, " at utilisation %.1f %% (P̄·(1 + %.3g·(u − %.3g)))", 100 * std::min(1.0, utilisation),
                    table.power_utilisation_slope(), p.mean_utilisation());
      power_source += ub;
    }
  }
  const double busy_w = q.power_w;
  q.power_w += o.idle_capacity * idle_w;  // idle provisioned accelerators, per busy one
  if (o.idle_capacity > 0) {
    char ib[128];
    std::snprintf(ib, sizeof ib, "; + %.3g idle accelerators per busy one at %.4g W", o.idle_capacity, idle_w);
    power_source += ib;
  }
  q.pue = o.pue;
  q.grid_kg_per_kwh = o.grid;
  q.net_grid_kg_per_kwh = o.net_grid;
  const EnergyResult r = EnergyOfRun(q);
  options["utilisation"] = utilisation >= 0 ? json(utilisation) : json(nullptr);
  options["idle_capacity"] = o.idle_capacity;
  options["power_w"] = q.power_w;
  options["pue"] = o.pue;
  options["grid_kg_per_kwh"] = o.grid;
  options["net_grid_kg_per_kwh"] = o.net_grid >= 0 ? json(o.net_grid) : json(nullptr);
  PrintVerbose(o.in.verbose, o.in.json, options);
  if (o.in.json) {
    json j = {{"options", options},         {"chip", chip},
              {"chips", q.chips},           {"hours", q.hours},
              {"power_w", q.power_w},       {"power_source", power_source},
              {"busy_power_w", busy_w},     {"idle_power_w", idle_w},
              {"accelerator_hours", r.accelerator_hours},
              {"it_mwh", r.it_mwh},         {"facility_mwh", r.facility_mwh},
              {"gross_tco2e", r.gross_tco2e}, {"net_tco2e", r.net_tco2e}};
    if (!run.is_null()) j["run"] = run;
    std::cout << j.dump(2) << "\n";
  } else {
    if (!run.is_null())
      std::printf("run          %s on %s, %s: step %.4g s, %.4g tokens/s, MFU %.1f %%\n",
                  options["model"].get<std::string>().c_str(), options["mesh"].get<std::string>().c_str(),
                  options["plan"].get<std::string>().c_str(), run["step_s"].get<double>(),
                  run["tokens_per_s"].get<double>(), 100 * run["mfu"].get<double>());
    std::printf("accelerators %.0f × %s for %.4g h (%.4g days)\n"
                "power        %.4g W per accelerator (%s)\n"
                "energy       %.4g MWh IT, %.4g MWh with PUE %.3g\n"
                "CO2e         %.4g t gross (%.3g kg/kWh), %.4g t net\n",
                q.chips, chip.c_str(), q.hours, q.hours / 24, q.power_w, power_source.c_str(), r.it_mwh,
                r.facility_mwh, o.pue, r.gross_tco2e, o.grid, r.net_tco2e);
  }
  return kExitOk;
}

int Simulate(const SimulateOptions& o, const Catalog& catalog) {
  const SimulateResult s = EvaluateSimulate(o, catalog);
  PrintVerbose(o.verbose, o.json, s.options);
  const SimResult& r = s.r;
  const GraphTrainingResult& train = s.train;
  const graphs::ComputeGraph& g = s.graph;
  const SimConfig& cfg = s.config;
  const int num_devices = static_cast<int>(cfg.devices.size());
  const int status = s.status();
  if (o.json) {
    std::cout << ToJson(s).dump(2) << "\n";
    return status;
  }
  if (o.machine.empty()) {
    std::printf("graph  %s: %d ops, %d edges\npreset %s, %d devices (%s)\n\n", o.graph.c_str(), g.num_ops(),
                g.num_edges(), o.preset.c_str(), o.devices, o.device.c_str());
  } else {
    std::printf("graph   %s: %d ops, %d edges\nmachine %s, %d devices\n\n", o.graph.c_str(), g.num_ops(),
                g.num_edges(), s.machine.spec.c_str(), num_devices);
  }
  std::printf("step time (last op end)   %.6g s\nbusy until (gaps, links)   %.6g s\n", r.makespan, r.busy_until);
  std::printf("transfers                 %lld (%.4g bytes)\n", static_cast<long long>(r.num_transfers),
              r.bytes_transferred);
  std::printf("training step, %d replica(s) %.6g s = graph %.6g + gradient all-reduce %.6g + update %.6g\n\n",
              o.training.replicas, train.step_s, train.compute_s, train.allreduce_s, train.optimizer_s);
  std::printf("%6s %8s %12s %7s %14s %s\n", "device", "ops", "busy (s)", "util", "peak mem (B)", "");
  for (int d = 0; d < num_devices; ++d) {
    const bool over = r.peak_memory[d] > cfg.devices[d].memory_capacity;
    std::printf("%6d %8d %12.6g %6.1f%% %14.6g %s\n", d, s.ops_on[d], r.busy[d], 100 * r.utilisation[d],
                r.peak_memory[d], over ? "OOM" : "");
  }
  for (int d = 0; d < num_devices; ++d) {
    if (!(r.peak_memory[d] > cfg.devices[d].memory_capacity)) continue;
    const auto& live = s.live[d];
    std::printf("\nOUT OF MEMORY on device %d: peak %.4g bytes at t = %.6g s, capacity %.4g; %zu live "
                "tensors, largest:\n",
                d, r.peak_memory[d], r.peak_time[d], cfg.devices[d].memory_capacity, live.size());
    for (size_t k = 0; k < live.size() && k < 10; ++k)
      std::printf("  %14.6g  %-13s %s\n", live[k].bytes, live[k].what, g.names[live[k].op].c_str());
  }
  if (o.bench_seconds > 0)
    std::printf("\n%ld runs in %.3g s: %.3g ops scheduled per second (one core)\n", s.runs, s.elapsed, s.ops_per_s);
  return status;
}

// The LibTorch measurements live in bin/host-calibrate (perf-model stays free of LibTorch);
// it writes the catalogue with WriteFileAtomic.
int Calibrate(const CalibrateOptions& o) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string tool = (self.parent_path() / "host-calibrate").string();
  if (ec || access(tool.c_str(), X_OK) != 0)
    throw ConfigError("calibrate-host needs " + tool + " (built when LibTorch is found: -DPLACERL_WITH_TORCH=ON)");
  const std::string t = std::to_string(o.threads), sec = std::to_string(o.seconds);
  std::vector<const char*> args{tool.c_str(), "--out", o.out.c_str(), "--threads", t.c_str(),
                                "--seconds", sec.c_str(), nullptr};
  std::fflush(nullptr);
  execv(tool.c_str(), const_cast<char* const*>(args.data()));
  throw IoError("calibrate-host: cannot run " + tool);
}

// ---------------------------------------------------------------- command line

void AddModelInputs(CLI::App* sub, ModelInputs* in, bool with_json = true) {
  sub->add_option("--model", in->model, "model string or .pbtxt (keys not written take the defaults of perf-model --help)")
      ->capture_default_str();
  sub->add_option("--mesh", in->mesh, "mesh string or .pbtxt")->capture_default_str();
  sub->add_option("--plan", in->plan, "plan string or .pbtxt (keys not written take the defaults of perf-model --help)");
  if (with_json) sub->add_flag("--json", in->json, "print one JSON document (with the resolved options)");
  sub->add_flag("--verbose", in->verbose, "print the resolved options first");
}

}  // namespace

int main(int argc, char** argv) {
  return placerl::RunMain("perf-model", [&]() -> int {
    namespace cli = placerl::cli;
    CLI::App app{
        "perf-model: analytical TPU/GPU performance model of sharded Transformer training.\n"
        "Models: transformer(layers=24,d_model=2048,d_ff=8192,heads=16,seq=2048,vocab=32000) (the\n"
        "        defaults of every key not written), moe(...,num_experts=64,top_k=2) or a\n"
        "        TransformerModel .pbtxt (same defaults). Heterogeneous (Brainformer) blocks:\n"
        "        transformer(layers=4,d_model=1024,block=attn:h16+moe:e64:k2:cf1.25+ffn:r4) =\n"
        "        `layers` repetitions of the block; sub-layers attn[:h:kv:hd], ffn[:r|:f],\n"
        "        moe[:r|:f][:e][:k|:ec][:cf] (ec = expert-choice gating; docs/perf_model.md).\n"
        "Meshes: chip:AxBxC[,slices=N] (e.g. tpu_v5p:4x4x4, a100:8,slices=48) or a Mesh .pbtxt;\n"
        "        at most 1,048,576 devices.\n"
        "Plans:  data=,fsdp=,tensor=,pipeline=,microbatches=,expert=,remat=none|minimal|full,\n"
        "        tensor_x= (2-D tensor parallelism: tensor_x × tensor/tensor_x), interleave=,\n"
        "        param_dtype=,compute_dtype=,grad_dtype=,optimizer=adam|adafactor,\n"
        "        shard_optimizer=true,global_batch=N (sequences, default 512) or a Plan .pbtxt.\n"
        "        Degrees not written are 1, except one that takes the devices the others leave:\n"
        "        fsdp (run, search, bench), tensor (infer), data (run --graph).\n"
        "Graphs: run --graph 'resnet(depth=50,batch=128,fused=1)' (any graph, data parallel over the\n"
        "        mesh), simulate --graph G --placement P (placed-graph simulator).\n"
        "Chips:  tpu_v2 tpu_v3 tpu_v4 tpu_v5e tpu_v5p tpu_v6e v100 a100 h100 (--catalog to override).\n"
        "Exit:   0 done, 1 error, 2 ran but infeasible (out of memory, no plan fits)."};
    app.require_subcommand(1);
    std::string catalog_path;
    app.add_option("--catalog", catalog_path, "hardware catalogue .pbtxt (default: embedded)");
    bool& one_matmul_constant = g_one_matmul_constant;
    app.add_flag("--one-matmul-constant", one_matmul_constant,
                 "Transformer evaluator without the shape-dependent matmul efficiency (MXU/tensor-core "
                 "tile padding, wave quantisation over the matrix units, systolic fill; backward GEMM "
                 "shapes): one matmul constant per chip, as the library default and the NAS step-time "
                 "model use");

    RunOptions run_o;
    CLI::App* run = app.add_subcommand("run", "evaluate one plan (exit 2 when it does not fit in HBM)");
    AddModelInputs(run, &run_o.in);
    run->add_option("--graph", run_o.graph,
                    "evaluate this graph (one replica's training step) data-parallel over the mesh "
                    "instead of --model: resnet(depth=50,batch=128), layered(...) or a graph file; "
                    "the plan's data (= mesh devices / pipeline), pipeline, microbatches (the graph "
                    "is one microbatch), shard_optimizer, dtypes, optimizer and "
                    "grad_reduce_after_backward apply");

    SearchOptions search_o;
    CLI::App* search = app.add_subcommand(
        "search", "rank all valid plans by step time; keys written in --plan stay fixed (exit 2: none fits)");
    AddModelInputs(search, &search_o.in);
    search->add_option("--top", search_o.top, "how many plans to print")
        ->capture_default_str()->check(cli::IntRange(1, 1000000));
    search->add_flag("--no-schedules", search_o.no_schedules,
                     "enumerate remat none/minimal/full and the --plan's pipeline schedule only (default: also "
                     "remat=selective, and for pipelines schedule=gpipe and interleaved 1F1B with interleave=2 "
                     "and 4 where the layers divide into pipeline·interleave chunks; about 4x the plans: 2,967 → 11,596 for the default model on tpu_v5e:16x16)");

    ValidateOptions validate_o;
    CLI::App* validate = app.add_subcommand("validate", "predicted vs published measurements");
    validate->add_option("--measurements", validate_o.measurements, "MeasurementSet .pbtxt (default: embedded)");
    validate->add_option("--out", validate_o.out,
                         "also write the markdown page here (default: none; docs/perf_model.md "
                         "regenerates docs/perf_validation.md with --out docs/perf_validation.md)");
    validate->add_flag("--fit", validate_o.fit,
                       "grid-search the global efficiency parameters first and validate with them "
                       "(prints the fitted values; the catalogue is not changed)");
    validate->add_flag("--no-held-out", validate_o.no_held_out,
                       "skip the leave-one-out table (each row predicted with parameters "
                       "fitted on the other rows) and the leave-one-paper-out table (each paper's "
                       "rows predicted with parameters fitted on the other papers' rows; a chip "
                       "measured only by the held-out paper takes the median matmul efficiency of "
                       "the fitted chips); together a few seconds");
    validate->add_option("--lopo-prior", validate_o.lopo_prior,
                         "leave-one-paper-out: the matmul efficiency of a chip measured only by the held-out paper — "
                         "global (the median of all fitted chips') or vendor (the median of the fitted chips of its "
                         "vendor: TPU or GPU; global when there is none) or era (the median of the fitted chips "
                         "measured by the papers closest in publication year, the year in the paper's name: a "
                         "software-stack generation)")
        ->capture_default_str()->check(CLI::IsMember({"global", "vendor", "era"}));
    validate->add_flag("--json", validate_o.json, "print one JSON document (rows, errors, options)");
    validate->add_flag("--verbose", validate_o.verbose, "print the resolved options first");

    InferOptions infer_o;
    CLI::App* infer = app.add_subcommand(
        "infer", "inference latency (prefill + decode) on a tensor-parallel layout (Pope et al.)");
    AddModelInputs(infer, &infer_o.in);
    infer->add_option("--batch", infer_o.batch, "sequences")
        ->capture_default_str()->check(cli::IntRange(1, cli::kMaxCount));
    infer->add_option("--prompt", infer_o.prompt, "prompt tokens per sequence (prefill)")
        ->capture_default_str()->check(cli::IntRange(1, 1LL << 30));
    infer->add_option("--generate", infer_o.generate, "tokens generated per sequence")
        ->capture_default_str()->check(cli::IntRange(0, 1LL << 30));
    infer->add_option("--weights", infer_o.weights, "weight dtype: bf16, int8, fp8, int4")->capture_default_str();
    infer->add_option("--layout", infer_o.layout,
                      "ws: the plan's weight-stationary tensor layout (1-D, or 2-D with tensor_x); wg-x, wg-xy, "
                      "wg-xyz: Pope et al.'s weight-gathered layouts - each layer's weights all-gathered over the "
                      "chips of the mesh's first 1, 2, 3 axes (N), the tokens split N-way, the other chips keeping "
                      "1-D stationary shards; assumed: the gather is exposed beyond tp_overlap x compute, no "
                      "prefetch of the next layer's weights; for large-batch prefill")
        ->capture_default_str()
        ->check(CLI::IsMember({"ws", "wg-x", "wg-xy", "wg-xyz"}));
    infer->add_flag("--batch-sharded-kv", infer_o.batch_sharded_kv,
                    "shard attention over the batch (multi-query models) instead of the heads");
    infer->add_flag("--energy", infer_o.energy,
                    "also Wh and gCO2e per request: every chip busy for prefill + decode at its system power "
                    "at the phase's utilisation (MFU; P(u) = P̄·(1 + β·(u − ū)) from the energy table, a fit "
                    "[D] — or a flat --power-w), + --idle-capacity idle chips at P(0), x PUE, shared by the batch");
    infer->add_option("--idle-capacity", infer_o.idle_capacity,
                      "with --energy: idle provisioned chips per busy chip, drawing idle power P(0) (0..10; "
                      "the Gemini breakdown [S] puts idle machines at 10 % of a prompt's energy)")
        ->capture_default_str()->check(cli::FiniteRange(0, 10));
    infer->add_option("--power-w", infer_o.power_w, "with --energy: system power per chip, W")
        ->check(cli::FiniteRange(1, 10000));
    infer->add_option("--pue", infer_o.pue, "with --energy: data-centre PUE")->capture_default_str()->check(cli::FiniteRange(1, 3));
    infer->add_option("--grid", infer_o.grid, "with --energy: grid intensity, kgCO2e/kWh")
        ->capture_default_str()->check(cli::FiniteRange(0, 2));

    BenchOptions bench_o;
    CLI::App* bench = app.add_subcommand("bench", "plan evaluations per second (one core)");
    AddModelInputs(bench, &bench_o.in);
    bench->add_option("--seconds", bench_o.seconds, "how long to measure")
        ->capture_default_str()->check(cli::FiniteRange(0.001, cli::kMaxSeconds));

    MlperfOptions mlperf_o;
    CLI::App* mlperf = app.add_subcommand(
        "mlperf", "MLPerf time to train, predicted vs published, for the MLPerf configurations of the notes");
    mlperf->add_flag("--json", mlperf_o.in.json, "print one JSON document (with the options)");
    mlperf->add_flag("--verbose", mlperf_o.in.verbose, "print the options first");
    mlperf->add_option("--out", mlperf_o.out,
                       "also write the markdown table here (e.g. docs/perf_mlperf.md). Assumptions: epochs to target "
                       "from the logs (convergence is not predicted) x 1,281,167 ImageNet images / the graph run's "
                       "throughput; evaluation and first-epoch overhead not modelled; initialisation outside the "
                       "timed run; 4096-chip v3 multipod runs not evaluated (beyond the catalogue's v3 ICI domain)");
    FailuresOptions failures_o;
    CLI::App* failures = app.add_subcommand(
        "failures",
        "step time and throughput per chip of one run with 0..--max-failed failed chips on a one-slice "
        "torus/mesh (Mesh failed=N). Assumes the holes leave the job, each in its own row and column, and "
        "every ICI ring through a hole is routed around it (no wraparound, half the axis bandwidth, +2 "
        "hops per hole); with --model the fill axis (fsdp) takes the healthy devices");
    AddModelInputs(failures, &failures_o.in);
    failures->add_option("--graph", failures_o.graph, "a graph run (data parallel over the healthy devices) instead of --model");
    failures->add_option("--max-failed", failures_o.max_failed, "failed chips 0..N")
        ->capture_default_str()->check(cli::IntRange(0, 64));
    failures->add_option("--out", failures_o.out, "also write the markdown table here (e.g. docs/perf_failures.md)");

    DilocoOptions diloco_o;
    CLI::App* diloco = app.add_subcommand(
        "diloco",
        "DiLoCo islands: M islands (this model/mesh/plan each) run H inner steps, then all-reduce "
        "the outer gradient over the inter-island network; mean step time, traffic and break-even H "
        "vs synchronous data parallelism over the same network. Assumes a ring all-reduce between "
        "islands at --dcn-gbps per island (default: the catalogue's DCN of the island's chips x "
        "dcn_bw efficiency) and the chip's DCN latency per ring step; convergence per step is not "
        "modelled");
    AddModelInputs(diloco, &diloco_o.in);
    diloco->add_option("--islands", diloco_o.islands, "comma list of island counts M (2..1e6)")->capture_default_str();
    diloco->add_option("--inner-steps", diloco_o.inner_steps, "comma list of H (1..1e9)")->capture_default_str();
    diloco->add_option("--dcn-gbps", diloco_o.dcn_gbps, "inter-island bandwidth per island, Gbit/s")
        ->check(cli::FiniteRange(1e-6, 1e7));
    diloco->add_option("--outer", diloco_o.outer, "outer-gradient format on the wire (fp32, bf16, e2m1, ...)")
        ->capture_default_str();
    diloco->add_option("--overlap-steps", diloco_o.overlap_steps,
                       "inner steps the outer all-reduce runs under (streaming / eager DiLoCo)")
        ->capture_default_str()->check(cli::FiniteRange(0, 1e9));
    diloco->add_option("--straggler", diloco_o.straggler,
                       "one island's inner step is this many times the others' (1..100; with it or "
                       "--failed-islands a second table: synchronous DiLoCo and DP wait for the slowest island, "
                       "Decoupled DiLoCo runs every island at its own pace, each paying its own exposed outer "
                       "sync per H steps)")
        ->capture_default_str()->check(cli::FiniteRange(1, 100));
    diloco->add_option("--failed-islands", diloco_o.failed_islands,
                       "islands lost for good (0..M-1): every variant continues on the survivors (outer ring of "
                       "M-F); decoupled loses each failed island's steps since its last push (H/2 on average), "
                       "the synchronous variants stop --restart-s per failure, synchronous DiLoCo also loses H/2")
        ->capture_default_str()->check(cli::FiniteRange(0, 1e6));
    diloco->add_option("--restart-s", diloco_o.restart_s,
                       "seconds the synchronous variants stop per failure (assumed: detection, restart, reload of "
                       "the last checkpoint; not from a paper)")
        ->capture_default_str()->check(cli::FiniteRange(0, 1e7));
    diloco->add_option("--out", diloco_o.out, "also write the markdown table here (e.g. docs/perf_diloco.md)");

    FormatsOptions formats_o;
    CLI::App* formats = app.add_subcommand(
        "formats",
        "HBM and step time of one plan across eXmY number formats (bytes per value = bits/8 for the "
        "chosen tensors: HBM, HBM traffic, their collectives). Assumes values are decoded to the "
        "plan's compute dtype before the matmuls: no compute speed-up from the format (an 8-bit "
        "rate needs compute_dtype=int8/fp8 in --plan); an fp32 master copy with weights < 32 bits");
    AddModelInputs(formats, &formats_o.in);
    formats->add_option("--formats", formats_o.formats,
                        "comma list: eXmY (1+X+Y bits), fp32, bf16, fp16, fp8, int8, int4 or a width 2..32")
        ->capture_default_str();
    formats->add_option("--tensors", formats_o.tensors, "which tensors take the format: weights, grads, optimizer, activations")
        ->capture_default_str();
    formats->add_option("--out", formats_o.out, "also write the markdown table here (e.g. docs/perf_formats.md)");

    EnergyOptions energy_o;
    CLI::App* energy = app.add_subcommand(
        "energy",
        "energy and CO2e of a training run (Patterson et al. 2021): MWh = hours x accelerators x P "
        "x PUE, tCO2e = MWh x grid kgCO2e/kWh. Assumes P = the mean measured SYSTEM power per "
        "accelerator (chip + HBM + host share + network; Patterson Table 3 for v2/v3/P100/V100, "
        "[S] for v4; none published for A100/H100/v5+: give --power-w), scaled with the run's "
        "hardware utilisation u where known: P(u) = P̄·(1 + β·(u − ū)) = idle + (peak − idle)·u, "
        "ū the mean utilisation of the runs P̄ was measured on, β one slope fitted on Patterson's "
        "runs (no idle power is published: idle and peak are the fit's); u = --utilisation, or "
        "the plan's HFU with --tokens; unknown u or a chip without ū: P̄. No embodied emissions. "
        "Time from --days/--hours, or from --tokens with the evaluator's predicted tokens/s for "
        "--model/--mesh/--plan. --validate: the published runs (docs/perf_energy.md)");
    AddModelInputs(energy, &energy_o.in);
    energy->add_option("--chip", energy_o.chip, "accelerator (a power-table chip: tpu_v2, tpu_v3, tpu_v4, p100, v100)");
    energy->add_option("--chips", energy_o.chips, "accelerators")->check(cli::IntRange(1, 100000000));
    energy->add_option("--days", energy_o.days, "wall-clock days")->check(cli::FiniteRange(1e-6, 36500));
    energy->add_option("--hours", energy_o.hours, "wall-clock hours")->check(cli::FiniteRange(1e-6, 876000));
    energy->add_option("--tokens", energy_o.tokens,
                       "training tokens: time = tokens / predicted tokens/s of --model/--mesh/--plan")
        ->check(cli::FiniteRange(1, 1e18));
    energy->add_option("--pue", energy_o.pue, "data-centre power usage effectiveness")
        ->capture_default_str()->check(cli::FiniteRange(1, 3));
    energy->add_option("--grid", energy_o.grid, "gross grid intensity, kgCO2e/kWh (default: US average 2020)")
        ->capture_default_str()->check(cli::FiniteRange(0, 2));
    energy->add_option("--net-grid", energy_o.net_grid,
                       "net intensity after carbon-free-energy purchases, kgCO2e/kWh (default: = --grid)")
        ->check(cli::FiniteRange(0, 2));
    energy->add_option("--power-w", energy_o.power_w, "mean system power per accelerator, W (default: the power table)")
        ->check(cli::FiniteRange(1, 10000));
    energy->add_option("--utilisation", energy_o.utilisation,
                       "with --chip/--chips: the run's hardware utilisation (achieved ÷ peak FLOP/s, 0..1) "
                       "for the power model (default: unknown → the table's mean power)")
        ->check(cli::FiniteRange(0, 1));
    energy->add_option("--idle-capacity", energy_o.idle_capacity,
                       "idle provisioned accelerators per busy one, each at idle power P(0) of the power model "
                       "(0..10; with --power-w: that power)")
        ->capture_default_str()->check(cli::FiniteRange(0, 10));
    energy->add_option("--energy-table", energy_o.table, "EnergyTable .pbtxt (default: embedded)");
    energy->add_flag("--validate", energy_o.validate, "predict the published runs' MWh and tCO2e");
    energy->add_option("--out", energy_o.out, "with --validate: also write the markdown page here");

    SimulateOptions sim_o;
    CLI::App* simulate = app.add_subcommand(
        "simulate", "placed-graph simulator: graph + placement → step time, utilisation, memory (exit 2: OOM)");
    simulate->add_option("--graph", sim_o.graph,
                         "graph file (docs/simulator.md) or layered(ops=,width=,fan_in=,seed=) / chain(ops=)")
        ->capture_default_str();
    simulate->add_option("--placement", sim_o.placement,
                         "placement file ('<op> <device>' lines) or round_robin | single | blocks")
        ->capture_default_str();
    CLI::Option* sim_machine = simulate->add_option(
        "--machine", sim_o.machine,
        "a machine: k80(gpus=4,cpu=1,memory_fraction=1) | baechi(...) | tpu(...) | gpu(...) | a machine .pbtxt "
        "(place-baseline --env device's; replaces --devices/--preset/--device/--memory)");
    sim_machine->check(cli::NonEmpty());
    simulate->add_option("--devices", sim_o.devices, "number of devices")
        ->capture_default_str()->check(cli::IntRange(1, 4096))->excludes(sim_machine);
    simulate->add_option("--preset", sim_o.preset, "link and scheduling semantics: baechi | placeto")
        ->capture_default_str()->check(CLI::IsMember({"baechi", "placeto"}))->excludes(sim_machine);
    simulate->add_option("--device", sim_o.device,
                         "plain:FLOPS,BYTES_PER_S (default: one K80 die) or a catalogue chip (bf16 roofline)")
        ->capture_default_str()->excludes(sim_machine);
    simulate->add_option("--memory", sim_o.memory, "bytes per device (default: unlimited for plain, HBM for chips)")
        ->check(cli::FiniteRange(1, 1e18))->excludes(sim_machine);
    simulate->add_option("--trace", sim_o.trace, "write a per-op CSV trace (op,device,start_s,end_s)");
    simulate->add_option("--bench", sim_o.bench_seconds, "also time repeated runs for this many seconds (ops/s)")
        ->check(cli::FiniteRange(0, cli::kMaxSeconds));
    simulate->add_flag("--json", sim_o.json, "print one JSON document (with the resolved options)");
    simulate->add_flag("--verbose", sim_o.verbose, "print the resolved options first");
    simulate->add_option("--replicas", sim_o.training.replicas,
                         "data-parallel replicas of the placed graph (adds a ring all-reduce of each "
                         "device's parameter gradients and the update)")
        ->capture_default_str()->check(cli::IntRange(1, 1 << 20));
    simulate->add_option("--ring-bw", sim_o.training.ring_bw, "replicas' ring: one-way bytes/s per link")
        ->capture_default_str()->check(cli::FiniteRange(1, 1e15));
    simulate->add_option("--ring-latency", sim_o.training.ring_hop_latency, "replicas' ring: seconds per hop")
        ->capture_default_str()->check(cli::FiniteRange(0, 1));

    CalibrateOptions calib_o;
    CLI::App* calibrate = app.add_subcommand(
        "calibrate-host", "measure this machine (matmul, memory, 2-process Gloo all-reduce) → catalogue with `host`");
    calibrate->add_option("--out", calib_o.out, "catalogue to write (the embedded one + host)")->capture_default_str();
    calibrate->add_option("--threads", calib_o.threads, "LibTorch threads per process (= one host chip)")
        ->capture_default_str()->check(cli::IntRange(1, 1024));
    calibrate->add_option("--seconds", calib_o.seconds, "time budget per probe size")
        ->capture_default_str()->check(cli::FiniteRange(0.001, 3600));

    cli::Parse(app, argc, argv);

    if (*calibrate) return Calibrate(calib_o);
    const Catalog catalog = WithShapeModel(LoadCatalog(catalog_path), !one_matmul_constant);
    if (*run) return run_o.graph.empty() ? RunTransformer(run_o, catalog) : RunGraph(run_o, catalog);
    if (*search) return Search(search_o, catalog);
    if (*infer) return Infer(infer_o, catalog);
    if (*bench) return Bench(bench_o, catalog);
    if (*simulate) return Simulate(sim_o, catalog);
    if (*energy) return Energy(energy_o, catalog);
    if (*formats) return Formats(formats_o, catalog);
    if (*diloco) return Diloco(diloco_o, catalog);
    if (*failures) return Failures(failures_o, catalog);
    if (*mlperf) return Mlperf(mlperf_o, catalog);
    return RunValidate(validate_o, catalog);
  });
}
