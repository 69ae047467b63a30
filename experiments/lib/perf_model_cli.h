// perf-model's command line (experiments/perf_model_main.cc): the subcommands' options filled
// into the library's query structs (cost_models/tpu/perf_json.h, perf_reports.h), every numeric or
// enumerated option checked through cost_models/tpu/perf_options.h (the same ranges and one-line
// messages as placerl.perf_model from Python), and the dispatch to the library's Print* calls.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cost_models/tpu/perf_reports.h"

namespace placerl::perf {

struct CalibrateHostQuery {
  std::string out = "out/host_catalog.pbtxt";
  int threads = 1;
  double seconds = 0.3;
};

// Every subcommand's query and output flags, and its CLI::App once added.
struct PerfModelCommandLine {
  std::string catalog_path;          // --catalog ("" = embedded)
  bool one_matmul_constant = false;  // --one-matmul-constant (applied to every query's ModelQuery)
  RunQuery run;
  SearchQuery search;
  ValidateQuery validate;
  InferQuery infer;
  BenchQuery bench;
  MlperfQuery mlperf;
  FailuresQuery failures;
  DilocoTableQuery diloco;
  FormatsQuery formats;
  EnergyRunQuery energy;
  SimulateQuery simulate;
  CalibrateHostQuery calibrate;
  OutputFlags run_flags, search_flags, validate_flags, infer_flags, bench_flags, mlperf_flags, failures_flags,
      diloco_flags, formats_flags, energy_flags, simulate_flags;
  CLI::App *run_cmd = nullptr, *search_cmd = nullptr, *validate_cmd = nullptr, *infer_cmd = nullptr,
           *bench_cmd = nullptr, *mlperf_cmd = nullptr, *failures_cmd = nullptr, *diloco_cmd = nullptr,
           *formats_cmd = nullptr, *energy_cmd = nullptr, *simulate_cmd = nullptr, *calibrate_cmd = nullptr;
};

// perf-model's --help text (before the subcommands' list).
extern const char* const kPerfModelDescription;

// Adds the global options and every subcommand with its options to `app` (require_subcommand(1)).
void AddPerfModelCommands(CLI::App* app, PerfModelCommandLine* c);

// Runs the parsed subcommand: its output on stdout, the exit status returned (0, or 2 when the
// result is infeasible). calibrate-host executes bin/host-calibrate (does not return).
int RunPerfModelCommand(PerfModelCommandLine* c);

// A validator of `subcommand`'s `option` from perf_options.h: the library's --help text and
// its one-line error (a ConfigError thrown while parsing).
CLI::Validator PerfRange(const char* subcommand, const char* option);
CLI::Validator PerfChoice(const char* subcommand, const char* option);

}  // namespace placerl::perf
