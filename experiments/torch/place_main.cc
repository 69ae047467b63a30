// place: a trained chip policy (a place-train checkpoint) on a design — usually one it was not
// trained on: the best of one greedy and K sampled placements (zero-shot), then optionally
// PPO fine-tuning on this design and refinement of the best placement by simulated annealing or
// coordinate descent; writes a run directory (best.plc, best picture, metrics, result.json).
// The input placement's cost is reported next to the result (--keep-better writes the input as
// best.plc when it is legal and better); a run where no placement completes is infeasible
// (exit 2, cli.h ReportInfeasible); Ctrl-C stops it with what was done reported. The program is
// experiments/lib/torch/place_program.h; --env device is device_programs.h.
//   place --checkpoint runs/pretrain --netlist N.pb.txt.gz --plc initial.plc --samples 64 --out runs/zs
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "experiments/lib/cli.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/run_dir.h"
#include "experiments/lib/torch/device_programs.h"  // --env device
#include "experiments/lib/torch/place_program.h"

using namespace placerl;

int main(int argc, char** argv) {
  if (DeviceEnvSelected(argc, argv)) return DevicePlaceMain(argc, argv);  // device_programs.h
  return RunMain("place", [&] {
    CLI::App app{"Places a chip's macros with a trained policy (a place-train checkpoint): best of a greedy and K "
                 "sampled placements, optional PPO fine-tuning on this design, optional refinement by simulated "
                 "annealing or coordinate descent; reports the input placement's cost next to the result; writes a "
                 "run directory. Exit 2 when no placement completes. --env device: places a computation graph's ops "
                 "on a machine's devices with a place-train --env device checkpoint (see place --env device --help)."};
    place::Options o;
    o.argc = argc;
    o.argv = argv;
    std::string env_name = "chip";
    app.add_option("--env", env_name, "chip (default: this help) | device (see --env device --help)")
        ->check(CLI::IsMember({"chip", "device"}));
    app.add_option("--checkpoint", o.checkpoint, "checkpoint file, or a place-train run directory")->check(cli::NonEmpty());
    app.add_option("--netlist", o.netlist, "netlist.pb.txt[.gz]; default: the built-in synthetic chip")->check(cli::NonEmpty());
    app.add_option("--plc", o.plc, ".plc: canvas, grid, routing, the input placement")->check(cli::NonEmpty());
    app.add_option("--samples", o.samples, "sampled placements besides the greedy one (default 16)")
        ->check(cli::IntRange(0, 1000000));
    app.add_option("--finetune-minutes", o.finetune_minutes, "PPO fine-tuning on this design (default 0)")
        ->check(cli::FiniteRange(0, cli::kMaxSeconds / 60));
    app.add_option("--refine", o.refine, "none | sa | learned-sa | cd: refine the best placement at the end (default none; learned-sa = place-baseline --method learned-sa's annealer)");
    app.add_option("--refine-minutes", o.refine_minutes, "budget of --refine (default 1)")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--clock", o.clock,
                   "the budgets' clock: wall (default) or cpu (this process's CPU seconds, for fair budgets on a "
                   "shared machine); time_s in metrics.csv is on it");
    app.add_flag("--keep-better", o.keep_better,
                 "write the input placement as best.plc when it is legal and cheaper than the result");
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place", [] { return place::DefaultConfig(); });
    cli::Parse(app, argc, argv);
    return place::Run(o);
  });
}
