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
// The shape every placerl binary follows (docs/conventions.md): the parser fills the library's
// query struct of each subcommand (experiments/lib/perf_model_cli.h; every number and choice
// checked by the library's cost_models/tpu/perf_options.h, so Python's placerl.perf_model refuses
// the same values with the same message); one library call per subcommand prints its result
// (cost_models/tpu/perf_reports.h); `--json` prints exactly one JSON document that includes the
// resolved options, `--verbose` prints them first in text mode; exit 0 = done, 1 = error (one
// line on stderr), 2 = ran, but the result is infeasible (OOM, no plan fits).
#include <CLI/CLI.hpp>

#include "experiments/lib/cli.h"
#include "experiments/lib/perf_model_cli.h"

int main(int argc, char** argv) {
  return placerl::RunMain("perf-model", [&]() -> int {
    CLI::App app{placerl::perf::kPerfModelDescription};
    placerl::perf::PerfModelCommandLine command_line;
    placerl::perf::AddPerfModelCommands(&app, &command_line);
    placerl::cli::Parse(app, argc, argv);
    return placerl::perf::RunPerfModelCommand(&command_line);
  });
}
