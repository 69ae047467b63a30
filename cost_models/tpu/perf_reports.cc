
#include "cost_models/tpu/perf_reports.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <sstream>
#include <vector>

#include "cost_models/tpu/catalog.h"
#include "cost_models/tpu/diloco.h"
#include "cost_models/tpu/energy.h"
#include "cost_models/tpu/graph_training.h"
#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "cost_models/tpu/plan_search.h"
#include "cost_models/tpu/spec.h"
#include "cost_models/tpu/training_eval.h"
#include "cost_models/tpu/validation.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::perf {

using nlohmann::json;

namespace {

// printf to a stream (the text outputs keep their printf formats).
void Printf(std::ostream& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void Printf(std::ostream& out, const char* format, ...) {
  va_list args, copy;
  va_start(args, format);
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string s(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, format, args);
  va_end(args);
  out << s;
}

// `--verbose` in text mode: the resolved options, one line, before the result.
void PrintVerbose(std::ostream& out, bool verbose, bool json_mode, const json& options) {
  if (verbose && !json_mode) Printf(out, "options %s\n", options.dump().c_str());
}

// The table subcommands (failures, formats, diloco, mlperf): the markdown page to `path` when
// given, then the JSON document (with what was written) or the page.
int ReportPage(std::ostream& out, const OutputFlags& f, const std::string& path, const std::string& md, json doc) {
  if (!path.empty()) WriteFileAtomic(path, md);
  if (f.json) {
    if (!path.empty()) doc["wrote"] = path;
    out << doc.dump(2) << "\n";
  } else {
    PrintVerbose(out, f.verbose, false, doc["options"]);
    Printf(out, "%s", md.c_str());
    if (!path.empty()) Printf(out, "wrote %s\n", path.c_str());
  }
  return 0;
}

}  // namespace

static int PrintTransformerRun(const RunQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const TransformerRunResult r = EvaluateTransformerRun(o, catalog);
  if (f.json) {
    out << ToJson(r).dump(2) << "\n";
  } else {
    PrintVerbose(out, f.verbose, false, r.options);
    Printf(out, "model  %s\nmesh   %s (%d devices)\nplan   %s\nparams %.4g\n\n%s", r.model.c_str(), r.mesh.c_str(),
                r.devices, r.plan.c_str(), r.params, FormatBreakdown(r.b).c_str());
  }
  return r.status();
}

static int PrintGraphRun(const RunQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const GraphRunDocResult g = EvaluateGraphRun(o, catalog);
  const GraphRunResult& r = g.r;
  const GraphRunPlan& gp = g.gp;
  if (f.json) {
    out << ToJson(g).dump(2) << "\n";
  } else {
    PrintVerbose(out, f.verbose, false, g.options);
    Printf(out, "graph  %s: %d ops\nmesh   %s (%d devices, %d replicas)\nplan   %s\n\n", o.graph.c_str(),
                g.ops, g.mesh.c_str(), r.devices, r.replicas, g.plan.c_str());
    Printf(out, "step time        %.6g s\n  compute        %.6g s (one replica's graph × %d microbatches)\n"
                "  pipeline comm  %.6g s\n  bubble         %.6g s (%d stages)\n"
                "  exposed data   %.6g s (gradient %s %.6g s)\n  optimizer      %.6g s\n",
                r.step_s, r.compute_s, gp.microbatches, r.pipeline_comm_s, r.bubble_s, gp.pipeline,
                r.exposed_dp_s, gp.shard_optimizer ? "reduce-scatter + weight all-gather" : "all-reduce",
                r.dp_comm_s, r.optimizer_s);
    if (r.examples_per_s > 0)
      Printf(out, "examples/s       %.6g (%.6g per chip)\n", r.examples_per_s, r.examples_per_s / r.chips);
    Printf(out, "MFU              %.2f %%\nHBM per device   %.4g GiB of %.4g GiB%s\n", 100 * r.mfu,
                r.hbm_per_device / 1073741824.0, r.hbm_capacity / 1073741824.0, r.oom ? "  ** OOM **" : "");
    Printf(out, "  params %.2f, grads %.2f, optimizer %.2f, activations %.2f GiB\n", r.hbm_params / 1073741824.0,
                r.hbm_grads / 1073741824.0, r.hbm_optimizer / 1073741824.0, r.hbm_activations / 1073741824.0);
  }
  return g.status();
}

int PrintRun(const RunQuery& q, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  return q.graph.empty() ? PrintTransformerRun(q, f, catalog, out) : PrintGraphRun(q, f, catalog, out);
}

int PrintSearch(const SearchQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const SearchResult sr = EvaluateSearch(o, catalog);
  const auto& ranked = sr.ranked;
  const SearchStats& stats = sr.stats;
  const int status = sr.status();
  if (f.json) {
    out << ToJson(sr).dump(2) << "\n";
    return status;
  }
  PrintVerbose(out, f.verbose, false, sr.options);
  Printf(out, "%ld plans enumerated, %ld valid, %ld fit in HBM%s\n\n", stats.enumerated, stats.valid,
              stats.fitting, sr.fixed.empty() ? "" : " (keys fixed by --plan kept)");
  Printf(out, "%4s %5s %5s %8s %5s %-8s %5s %6s %-9s %5s %10s %9s %7s %9s\n", "rank", "data", "fsdp", "tensor",
              "pipe", "schedule", "mb", "expert", "remat", "shOpt", "step (s)", "tokens/s", "MFU", "HBM GiB");
  int rank = 1;
  for (const auto& r : ranked) {
    const char* remat = r.plan.remat == REMAT_NONE      ? "none"
                        : r.plan.remat == REMAT_MINIMAL ? "minimal"
                        : r.plan.remat == REMAT_SELECTIVE ? "selective"
                        : r.plan.remat == REMAT_SAVE_QKVO ? "save_qkvo"
                                                          : "full";
    const std::string tensor = r.plan.tensor_x > 1 ? std::to_string(r.plan.tensor_x) + "x" +
                                                         std::to_string(r.plan.tensor / r.plan.tensor_x)
                                                   : std::to_string(r.plan.tensor);
    // Pipeline schedule: 1f1b, gpipe, or 1f1b/v<chunks> (interleaved); "-" without pipelining.
    const std::string sched = r.plan.pipeline == 1             ? "-"
                              : r.plan.schedule == SCHEDULE_GPIPE ? "gpipe"
                              : r.plan.interleave > 1 ? "1f1b/v" + std::to_string(r.plan.interleave)
                                                      : "1f1b";
    Printf(out, "%4d %5d %5d %8s %5d %-8s %5d %6d %-9s %5s %10.4f %9.4g %6.1f%% %9.2f\n", rank++, r.plan.data,
                r.plan.fsdp, tensor.c_str(), r.plan.pipeline, sched.c_str(), r.result.microbatches, r.plan.expert, remat,
                r.plan.shard_optimizer ? "yes" : "no", r.result.step_s, r.result.tokens_per_s, 100 * r.result.mfu,
                r.result.hbm_total / (1024.0 * 1024 * 1024));
  }
  if (ranked.empty()) Printf(out, "no plan fits in HBM\n");
  return status;
}

int PrintInfer(const InferQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const InferResult ir = EvaluateInfer(o, catalog);
  const InferenceResult& r = ir.r;
  const PlanC& p = ir.plan;
  const InferenceQuery& q = ir.query;
  if (f.json) {
    out << ToJson(ir).dump(2) << "\n";
  } else {
    PrintVerbose(out, f.verbose, false, ir.options);
    const std::string layout =
        q.weight_gathered > 0 ? ", " + o.layout + " (weights gathered over " + std::to_string(r.gather_chips) + " chips)"
        : p.tensor_x > 1      ? " as " + std::to_string(p.tensor_x) + "x" + std::to_string(p.tensor / p.tensor_x)
                              : "";
    Printf(out, "model  %s\nmesh   %s (%d devices), tensor %d%s\nquery  batch %lld, prompt %lld, generate %lld, "
                "weights %s%s\n\n%s",
                ir.model.c_str(), ir.mesh.c_str(), ir.devices, p.tensor, layout.c_str(), o.batch, o.prompt,
                o.generate, DType_Name(q.weight_dtype).c_str(), q.batch_sharded_kv ? ", batch-sharded KV" : "",
                FormatInference(r).c_str());
    Printf(out, "%s", ir.energy_text.c_str());
  }
  return ir.status();
}

int PrintBench(const BenchQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const TransformerModel model = ParseModelSpec(o.in.model);
  const Mesh mesh = ParseMeshSpec(o.in.mesh);
  const TrainingEvaluator ev(model, mesh, catalog);
  const PlanC base = ResolvePlan(ParsePlanSpecWithKeys(o.in.plan), ev.num_devices(), FillAxis::kFsdp);
  // Cycle through every enumerated plan so that branches are realistic.
  const std::vector<PlanC> plans = EnumeratePlans(ev, base);
  if (plans.empty()) throw ConfigError("bench: no candidate plans for this model and mesh");
  json options = ModelOptionsJson(o.in);
  options["seconds"] = o.seconds;
  PrintVerbose(out, f.verbose, f.json, options);
  long n = 0;
  double sink = 0, elapsed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  do {  // at least one round, so the rate is never 0/0
    for (int i = 0; i < 1000; ++i, ++n) sink += ev.Evaluate(plans[n % plans.size()]).step_s;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < o.seconds);
  if (f.json) {
    const json doc = {{"options", options},          {"evaluations", n},
                      {"seconds", elapsed},          {"evaluations_per_s", n / elapsed},
                      {"devices", ev.num_devices()}, {"distinct_plans", plans.size()}};
    out << doc.dump(2) << "\n";
  } else {
    Printf(out, "%ld evaluations in %.3f s = %.0f plan evaluations/s on one core "
                "(%d devices, %zu distinct plans; checksum %.3g)\n",
                n, elapsed, n / elapsed, ev.num_devices(), plans.size(), sink);
  }
  return 0;
}

int PrintValidate(const ValidateQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const MeasurementSet rows = LoadMeasurements(o.measurements);
  json options = {{"measurements", o.measurements.empty() ? "<embedded>" : o.measurements},
                  {"out", o.out}, {"fit", o.fit}, {"no_held_out", o.no_held_out}};
  options["lopo_prior"] = o.lopo_prior;
  PrintVerbose(out, f.verbose, f.json, options);
  Catalog used = catalog;
  std::string fit_log;
  if (o.fit) {
    used = FitEfficiency(rows, catalog, &fit_log);
    if (!f.json) Printf(out, "%s\n\n", fit_log.c_str());
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
  if (f.json) {
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
      json folds = json::array();
      for (const ValidationReport::Fold& fold : paper_out.folds)
        folds.push_back({{"held_out", fold.held_out}, {"constants", fold.constants}, {"priors", fold.priors}});
      j["paper_out"] = {{"median_abs_error", paper_out.median_abs_error},
                        {"worst_abs_error", paper_out.worst_abs_error},
                        {"worst_id", paper_out.worst_id},
                        {"rows", papers},
                        {"folds", folds}};
    }
    if (!o.out.empty()) j["wrote"] = o.out;
    out << j.dump(2) << "\n";
    return 0;
  }
  Printf(out, "%s", ReportTable(rep).c_str());
  if (!o.no_held_out) {
    Printf(out, "\nheld out (leave-one-out refits): median |error| %.1f %%, worst %.1f %% (%s)\n",
                100 * held_out.median_abs_error, 100 * held_out.worst_abs_error, held_out.worst_id.c_str());
    Printf(out, "held out by paper (leave-one-paper-out refits): median |error| %.1f %%, worst %.1f %% (%s)\n",
                100 * paper_out.median_abs_error, 100 * paper_out.worst_abs_error, paper_out.worst_id.c_str());
  }
  if (!o.out.empty()) Printf(out, "wrote %s\n", o.out.c_str());
  return 0;
}

MlperfResult MlperfBenchmarkResult(const std::vector<MlperfRun>& runs, int required_runs) {
  if (required_runs < 3) throw ConfigError("mlperf: a benchmark result needs at least 3 runs (asked for " +
                                           std::to_string(required_runs) + ")");
  if (static_cast<int>(runs.size()) != required_runs)
    throw ConfigError("mlperf: the benchmark's rule asks for " + std::to_string(required_runs) + " runs, got " +
                      std::to_string(runs.size()));
  std::vector<int> order;
  int not_converged = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!(runs[i].seconds > 0 && std::isfinite(runs[i].seconds)))
      throw ConfigError("mlperf: run " + std::to_string(i) + " has no finite positive time");
    if (runs[i].converged) order.push_back(static_cast<int>(i));
    else ++not_converged;
  }
  if (not_converged > 1)
    throw ConfigError("mlperf: " + std::to_string(not_converged) +
                      " runs did not reach the target; the result is invalid with more than one");
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return runs[x].seconds < runs[y].seconds; });
  // Drop the fastest, and the slowest: the run that did not converge when there is one.
  order.erase(order.begin());
  if (not_converged == 0) order.pop_back();
  MlperfResult r;
  r.kept = order;
  for (int i : order) {
    r.seconds += runs[i].seconds / order.size();
    r.epochs += runs[i].epochs / order.size();
  }
  return r;
}

// MLPerf time to train for the published MLPerf configurations of the notes
// (perf_model_notes.md §3d, perf_model_notes_2.md §9): epochs to target × images per epoch /
// predicted throughput; evaluation not modelled (no per-eval cost in the notes for these runs);
// initialisation is not part of MLPerf's timed run (run_start → run_stop). The ResNet-50 v0.6 rows
// are scored from their five runs as MLPerf scores them (MlperfBenchmarkResult).
int PrintMlperf(const MlperfQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  constexpr double kImageNetTrain = 1281167;  // ImageNet-1k training images [A: standard figure]
  constexpr int kImageClassificationRuns = 5;  // training_rules.adoc (v0.6), "Number of Runs"
  struct Config {
    const char *id, *benchmark, *graph, *mesh, *plan;
    double epochs, published_s;  // without runs: the notes' published time and epochs
    const char* note;            // non-empty: not evaluated, why
    std::vector<MlperfRun> runs;  // result_0..4: run_stop − run_start, last evaluation's epoch_num, status
  };
  // The runs [V: mlcommons/training_results_v0.6 at f312518, Google/results/tpu-v3-N/resnet/result_0..4.txt:
  // run_stop − run_start of the :::MLL timestamps (ms), epoch_num of the last eval_accuracy, run_stop status].
  static const Config kConfigs[] = {
      {"M1", "ResNet-50 v0.6, v3-32 (16 chips), batch 4096", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:4x4",
       "shard_optimizer=true,optimizer=sgd_momentum", 0, 0, "",
       {{2533.457, 60, true}, {2529.972, 60, true}, {2530.107, 60, true}, {2693.239, 64, true}, {2528.537, 60, true}}},
      {"M2", "ResNet-50 v0.6, v3-128 (64 chips), batch 16384", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:8x8",
       "shard_optimizer=true,optimizer=sgd_momentum", 0, 0, "",
       {{673.117, 64, true}, {673.776, 64, true}, {673.189, 64, true}, {714.189, 68, true}, {672.923, 64, true}}},
      {"M3", "ResNet-50 v0.6, v3-256 (128 chips), batch 32768", "resnet(depth=50,batch=128,fused=1)", "tpu_v3:8x16",
       "shard_optimizer=true,optimizer=sgd_momentum", 0, 0, "",
       {{409.154, 76, true}, {417.688, 72, true}, {468.702, 76, true}, {388.506, 72, true}, {408.645, 76, true}}},
      {"M4", "ResNet-50 v0.6, v3-512 (256 chips), batch 32768", "resnet(depth=50,batch=64,fused=1)", "tpu_v3:16x16",
       "shard_optimizer=true,optimizer=sgd_momentum", 0, 0, "",
       {{265.090, 72, true}, {241.382, 72, true}, {225.257, 72, true}, {225.977, 72, true}, {226.140, 72, true}}},
      // result_1 stopped at epoch 76 with top-1 0.75656 < the 0.759 target: status "abort".
      {"M5", "ResNet-50 v0.6, v3-1024 (512 chips), batch 32768", "resnet(depth=50,batch=32,fused=1)", "tpu_v3:16x32",
       "shard_optimizer=true,optimizer=sgd_momentum", 0, 0, "",
       {{136.684, 76, true}, {135.969, 76, false}, {141.555, 76, true}, {130.404, 76, true}, {136.504, 76, true}}},
      {"M8", "ResNet-50 v0.7 JAX, v3-8192 (4096 chips), batch 65536", "", "", "", 92, 28.70,
       "4096 chips span 4 v3 pods: the catalogue's v3 ICI domain is 1024 chips and v3 has no DCN entry", {}},
      {"M9", "BERT-large v0.7 JAX, v3-8192 (4096 chips)", "", "", "", 0, 23.71, "as M8", {}},
      {"M10", "Transformer WMT v0.7 JAX, v3-8192 (4096 chips)", "", "", "", 4, 13.88, "as M8", {}},
      {"SSD7", "SSD v0.7 JAX, v3-4096 (2048 chips)", "", "", "", 0, 34.05, "as M8 (2 pods); and no SSD graph", {}},
      {"SSD6", "SSD v0.6 TF, v3-2048 (1024 chips)", "", "", "", 76, 73.25, "no SSD graph", {}},
  };
  std::ostringstream md, runs_md;
  char buf[768];
  md << "# MLPerf time to train\n\n"
     << "Generated by `perf-model mlperf` (do not edit by hand). Published (M1–M5): the benchmark result as\n"
     << "MLPerf scores it, from the system's five runs — \"Each benchmark result is computed by dropping the\n"
     << "fastest and slowest runs, then taking the mean of the remaining times\", 5 runs for image\n"
     << "classification [V: mlcommons/training_policies `training_rules.adoc` at 28c67ac, 2019-07-04, the\n"
     << "text of the v0.6 round]; each run is run_stop − run_start of its `result_N.txt` [V:\n"
     << "mlcommons/training_results_v0.6 at f312518, `Google/results/tpu-v3-N/resnet/`]. A run that did not\n"
     << "reach the target (M5's result_1, status \"abort\") is the slowest run dropped — the rule's wording\n"
     << "since v0.7 (d7bf509, 2020-06-25: \"a single non-converging run may be treated as the slowest run\n"
     << "and dropped\"); v0.6's text only defines a run as training to the quality target. result_0 (the\n"
     << "notes' §3d time, the published column until session 30) is shown next to it, with the error of the\n"
     << "prediction for its own epochs. The other rows: the notes' time (`perf_model_notes_2.md` §9 [V]).\n"
     << "Predicted: epochs to target (from the logs, the mean over the kept runs: convergence is an input,\n"
     << "not predicted) × 1,281,167 ImageNet training images [A] / the graph run's examples/s (`perf-model\n"
     << "run --graph`: ResNet-50 v1.5 data parallel, one replica per core, weight-update sharding, SGD with\n"
     << "momentum for LARS [A]). Not modelled: evaluation (the notes give no per-evaluation cost for these\n"
     << "runs) and the first-epoch overhead; initialisation is not part of the timed run (notes_2 §9).\n\n"
     << "| id | benchmark | epochs | published s | result_0 s | predicted s | error | error vs result_0 | note |\n"
     << "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  runs_md << "\n## The runs (M1–M5)\n\n"
          << "run_stop − run_start in s (epochs at the last evaluation); **bold** = kept by the rule; "
             "abort = did not reach the target.\n\n"
          << "| id | result_0 | result_1 | result_2 | result_3 | result_4 | published s |\n"
          << "|---|---:|---:|---:|---:|---:|---:|\n";
  json rows = json::array();
  std::vector<double> errs;
  for (const Config& c : kConfigs) {
    double published = c.published_s, epochs = c.epochs;
    json row = {{"id", c.id}, {"benchmark", c.benchmark}};
    if (!c.runs.empty()) {
      const MlperfResult score = MlperfBenchmarkResult(c.runs, kImageClassificationRuns);
      published = score.seconds;
      epochs = score.epochs;
      json runs = json::array();
      for (const MlperfRun& run : c.runs)
        runs.push_back({{"seconds", run.seconds}, {"epochs", run.epochs}, {"converged", run.converged}});
      row["runs"] = runs;
      row["kept_runs"] = score.kept;
      row["result_0_s"] = c.runs[0].seconds;
      runs_md << "| " << c.id << " |";
      for (size_t i = 0; i < c.runs.size(); ++i) {
        const bool kept = std::find(score.kept.begin(), score.kept.end(), static_cast<int>(i)) != score.kept.end();
        std::snprintf(buf, sizeof buf, " %s%.3f (%.0f)%s%s |", kept ? "**" : "", c.runs[i].seconds, c.runs[i].epochs,
                      kept ? "**" : "", c.runs[i].converged ? "" : " abort");
        runs_md << buf;
      }
      std::snprintf(buf, sizeof buf, " %.1f |\n", published);
      runs_md << buf;
    }
    row["published_s"] = published;
    const std::string result0 = c.runs.empty() ? "—" : [&] {
      std::snprintf(buf, sizeof buf, "%.1f", c.runs[0].seconds);
      return std::string(buf);
    }();
    if (c.note[0] != '\0') {
      std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.4g | %s | — | — | — | not evaluated: %s |\n", c.id, c.benchmark,
                    epochs > 0 ? std::to_string(int(epochs)).c_str() : "—", published, result0.c_str(), c.note);
      md << buf;
      row["not_evaluated"] = c.note;
      rows.push_back(row);
      continue;
    }
    const graphs::NamedGraph ng = graphs::GraphFromSpec(c.graph);
    const GraphRunResult r = EvaluateGraphOnMesh(ng.graph, ParseMeshSpec(c.mesh), catalog,
                                                 GraphRunPlanFromPlan(ParsePlanSpecWithKeys(c.plan).plan, ng.examples));
    const double predicted = epochs * kImageNetTrain / r.examples_per_s;
    const double err = (predicted - published) / published;
    errs.push_back(std::fabs(err));
    // result_0 alone, with its own epochs: the comparison made until session 30.
    const double err0 = c.runs.empty() ? err
                                       : (c.runs[0].epochs * kImageNetTrain / r.examples_per_s - c.runs[0].seconds) /
                                             c.runs[0].seconds;
    std::snprintf(buf, sizeof buf,
                  "| %s | %s | %.4g | %.1f | %s | %.1f | %+.1f %% | %+.1f %% | %s, %s; %.4g img/s per chip |\n", c.id,
                  c.benchmark, epochs, published, result0.c_str(), predicted, 100 * err, 100 * err0, c.graph, c.mesh,
                  r.examples_per_s / r.chips);
    md << buf;
    row["error_vs_result_0"] = err0;
    row["epochs"] = epochs;
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
  md << buf << runs_md.str();
  json options = {{"out", o.out}};
  return ReportPage(out, f, o.out, md.str(),
                    {{"options", options}, {"rows", rows}, {"median_abs_error", median},
                     {"worst_abs_error", errs.empty() ? 0.0 : errs.back()}});
}

int PrintFailures(const FailuresQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
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
  json options = ModelOptionsJson(o.in);
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
  return ReportPage(out, f, o.out, md.str(), {{"options", options}, {"rows", table}});
}

// "2,4,8" → numbers in [lo, hi] (at most 64).
static std::vector<double> NumberList(const std::string& list, const char* what, double lo, double hi) {
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

// diloco with --straggler / --failed-islands: the second table (rows with their "faults").
static void AppendDilocoFaultsTable(std::ostringstream& md, const DilocoTableQuery& o, const json& rows) {
  char buf[512];
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

int PrintDiloco(const DilocoTableQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
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
  json options = ModelOptionsJson(o.in);
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
  if (faults) AppendDilocoFaultsTable(md, o, rows);
  return ReportPage(out, f, o.out, md.str(),
                    {{"options", options}, {"params", ev.total_params()}, {"island_step_s", b.step_s}, {"rows", rows}});
}

int PrintFormats(const FormatsQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
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
  json options = ModelOptionsJson(o.in);
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
  return ReportPage(out, f, o.out, md.str(), {{"options", options}, {"rows", table}});
}

// energy --validate: the published runs' MWh and tCO2e, predicted.
static int PrintEnergyValidation(const EnergyRunQuery& o, const OutputFlags& f, const EnergyTable& table,
                                 json options, std::ostream& out) {
  options["validate"] = true;
  options["out"] = o.out;
  PrintVerbose(out, f.verbose, f.json, options);
  const EnergyReport rep = ValidateEnergy(table);
  if (rep.evaluated == 0) throw ConfigError("energy --validate: no run could be evaluated");
  EnergyTable flat = table;  // before: power independent of utilisation
  flat.set_power_utilisation_slope(0);
  const EnergyReport before = ValidateEnergy(flat);
  const double fitted_slope = FitPowerSlope(table);
  const std::string md = EnergyMarkdown(rep, table, &before);
  if (!o.out.empty()) WriteFileAtomic(o.out, md);
  if (f.json) {
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
    out << j.dump(2) << "\n";
  } else {
    Printf(out, "%s", md.c_str());
    Printf(out, "fitted power_utilisation_slope %.4g (the table's: %.4g)\n", fitted_slope,
                table.power_utilisation_slope());
    if (!o.out.empty()) Printf(out, "wrote %s\n", o.out.c_str());
  }
  return 0;
}

int PrintEnergy(const EnergyRunQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const EnergyTable table = LoadEnergyTable(o.table);
  json options = {{"table", o.table.empty() ? "<embedded>" : o.table}};
  if (!o.validate && !o.out.empty()) throw ConfigError("energy: --out writes the --validate page; give --validate");
  if (o.validate) return PrintEnergyValidation(o, f, table, options, out);
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
  PrintVerbose(out, f.verbose, f.json, options);
  if (f.json) {
    json j = {{"options", options},         {"chip", chip},
              {"chips", q.chips},           {"hours", q.hours},
              {"power_w", q.power_w},       {"power_source", power_source},
              {"busy_power_w", busy_w},     {"idle_power_w", idle_w},
              {"accelerator_hours", r.accelerator_hours},
              {"it_mwh", r.it_mwh},         {"facility_mwh", r.facility_mwh},
              {"gross_tco2e", r.gross_tco2e}, {"net_tco2e", r.net_tco2e}};
    if (!run.is_null()) j["run"] = run;
    out << j.dump(2) << "\n";
  } else {
    if (!run.is_null())
      Printf(out, "run          %s on %s, %s: step %.4g s, %.4g tokens/s, MFU %.1f %%\n",
                  options["model"].get<std::string>().c_str(), options["mesh"].get<std::string>().c_str(),
                  options["plan"].get<std::string>().c_str(), run["step_s"].get<double>(),
                  run["tokens_per_s"].get<double>(), 100 * run["mfu"].get<double>());
    Printf(out, "accelerators %.0f × %s for %.4g h (%.4g days)\n"
                "power        %.4g W per accelerator (%s)\n"
                "energy       %.4g MWh IT, %.4g MWh with PUE %.3g\n"
                "CO2e         %.4g t gross (%.3g kg/kWh), %.4g t net\n",
                q.chips, chip.c_str(), q.hours, q.hours / 24, q.power_w, power_source.c_str(), r.it_mwh,
                r.facility_mwh, o.pue, r.gross_tco2e, o.grid, r.net_tco2e);
  }
  return 0;
}

int PrintSimulate(const SimulateQuery& o, const OutputFlags& f, const Catalog& catalog, std::ostream& out) {
  const SimulateResult s = EvaluateSimulate(o, catalog);
  PrintVerbose(out, f.verbose, f.json, s.options);
  const SimResult& r = s.r;
  const GraphTrainingResult& train = s.train;
  const graphs::ComputeGraph& g = s.graph;
  const SimConfig& cfg = s.config;
  const int num_devices = static_cast<int>(cfg.devices.size());
  const int status = s.status();
  if (f.json) {
    out << ToJson(s).dump(2) << "\n";
    return status;
  }
  if (o.machine.empty()) {
    Printf(out, "graph  %s: %d ops, %d edges\npreset %s, %d devices (%s)\n\n", o.graph.c_str(), g.num_ops(),
                g.num_edges(), o.preset.c_str(), o.devices, o.device.c_str());
  } else {
    Printf(out, "graph   %s: %d ops, %d edges\nmachine %s, %d devices\n\n", o.graph.c_str(), g.num_ops(),
                g.num_edges(), s.machine.spec.c_str(), num_devices);
  }
  Printf(out, "step time (last op end)   %.6g s\nbusy until (gaps, links)   %.6g s\n", r.makespan, r.busy_until);
  Printf(out, "transfers                 %lld (%.4g bytes)\n", static_cast<long long>(r.num_transfers),
              r.bytes_transferred);
  Printf(out, "training step, %d replica(s) %.6g s = graph %.6g + gradient all-reduce %.6g + update %.6g\n\n",
              o.training.replicas, train.step_s, train.compute_s, train.allreduce_s, train.optimizer_s);
  Printf(out, "%6s %8s %12s %7s %14s %s\n", "device", "ops", "busy (s)", "util", "peak mem (B)", "");
  for (int d = 0; d < num_devices; ++d) {
    const bool over = r.peak_memory[d] > cfg.devices[d].memory_capacity;
    Printf(out, "%6d %8d %12.6g %6.1f%% %14.6g %s\n", d, s.ops_on[d], r.busy[d], 100 * r.utilisation[d],
                r.peak_memory[d], over ? "OOM" : "");
  }
  for (int d = 0; d < num_devices; ++d) {
    if (!(r.peak_memory[d] > cfg.devices[d].memory_capacity)) continue;
    const auto& live = s.live[d];
    Printf(out, "\nOUT OF MEMORY on device %d: peak %.4g bytes at t = %.6g s, capacity %.4g; %zu live "
                "tensors, largest:\n",
                d, r.peak_memory[d], r.peak_time[d], cfg.devices[d].memory_capacity, live.size());
    for (size_t k = 0; k < live.size() && k < 10; ++k)
      Printf(out, "  %14.6g  %-13s %s\n", live[k].bytes, live[k].what, g.names[live[k].op].c_str());
  }
  if (o.bench_seconds > 0)
    Printf(out, "\n%ld runs in %.3g s: %.3g ops scheduled per second (one core)\n", s.runs, s.elapsed, s.ops_per_s);
  return status;
}

}  // namespace placerl::perf
