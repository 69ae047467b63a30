// gloo-train: real sharded training runs of a small LibTorch Transformer on this machine
// (single process, 2-process data parallel over c10d Gloo on loopback, 2-stage GPipe
// pipeline), measured step time vs the perf model's prediction for the catalogue chip
// `host` (agents/gloo_train.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/cli.h"
#include "agents/gloo_train.h"

int main(int argc, char** argv) {
  return placerl::RunMain("gloo-train", [&]() -> int {
    using namespace placerl;
    CLI::App app{
        "gloo-train: train a small decoder-only Transformer LM (LibTorch, CPU, fp32, Adam,\n"
        "synthetic seeded tokens) on this machine and compare the measured step time with the\n"
        "perf model's prediction for the catalogue chip `host` (mesh host:1 or host:2).\n"
        "  single    1 process, the whole global batch\n"
        "  dp        2 processes (c10d Gloo on 127.0.0.1), global_batch/2 each, bucketed gradient\n"
        "            all-reduce after backward\n"
        "  pipeline  2 processes, layers split half/half, GPipe with --microbatches\n"
        "Every process uses 1 thread. Without a `host` chip in the catalogue the measurement is\n"
        "printed and the prediction is reported as unavailable (run `perf-model calibrate-host`)."};
    GlooTrainOptions o;
    std::string mode = "single";
    bool json = false, markdown = false, markdown_header = false;
    int rank = -1;
    std::string rendezvous, save_report;
    app.add_option("--mode", mode, "single | dp | pipeline")->capture_default_str();
    app.add_option("--model", o.model, "perf-model model string or .pbtxt")->capture_default_str();
    app.add_option("--global-batch", o.global_batch, "sequences per step")->capture_default_str();
    app.add_option("--microbatches", o.microbatches, "pipeline microbatches per step")->capture_default_str();
    app.add_option("--warmup", o.warmup, "untimed steps first")->capture_default_str();
    app.add_option("--steps", o.steps, "timed steps")->capture_default_str();
    app.add_option("--lr", o.lr, "Adam learning rate")->capture_default_str();
    app.add_option("--seed", o.seed, "seed of the initial weights and of the data")->capture_default_str();
    app.add_option("--bucket-mb", o.bucket_mb, "dp gradient bucket cap in MiB")->capture_default_str();
    app.add_option("--timeout", o.timeout_s,
                   "seconds before a collective, or a worker without progress, is an error")
        ->capture_default_str();
    app.add_option("--catalog", o.catalog, "perf-model hardware catalogue with a `host` chip (default: embedded)");
    app.add_flag("--json", json, "print one JSON object instead of the report");
    app.add_flag("--markdown", markdown, "print one markdown table row (docs/gloo_runs.md)");
    app.add_option("--save-report", save_report, "also write the readable report to this file");
    app.add_flag("--markdown-header", markdown_header, "print the markdown table header and exit");
    // Hidden: the worker side of the 2-process modes, and failure injection for tests.
    app.add_option("--rank", rank)->group("");
    app.add_option("--rendezvous", rendezvous)->group("");
    app.add_option("--debug-fail-rank", o.debug_fail_rank)->group("");
    app.add_option("--debug-hang-rank", o.debug_hang_rank)->group("");
    placerl::cli::Parse(app, argc, argv);
    if (markdown_header) {
      std::cout << GlooMarkdownHeader();
      return 0;
    }
    o.mode = ParseGlooMode(mode);
    if (rank >= 0 || !rendezvous.empty()) {
      if (rank < 0 || rendezvous.empty()) throw ConfigError("--rank and --rendezvous go together");
      RunGlooWorker(o, rank, rendezvous);
      return 0;
    }
    const GlooRunResult r = RunGlooTraining(o, "/proc/self/exe");
    if (!save_report.empty()) WriteFileAtomic(save_report, FormatGlooReport(r));
    if (json) {
      std::cout << GlooResultJson(r) << "\n";
    } else if (markdown) {
      std::cout << GlooMarkdownRow(r);
    } else {
      std::cout << FormatGlooReport(r);
    }
    if (!r.prediction.available)
      std::fprintf(stderr, "gloo-train: note: no prediction: %s\n", r.prediction.note.c_str());
    return 0;
  });
}
