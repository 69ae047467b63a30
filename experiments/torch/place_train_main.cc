// place-train: learns to place a chip's macros with the shared GNN policy and PPO (or
// REINFORCE) on the chip environment — one netlist or several (pretraining: an episode draws one
// at random) — and writes a run directory (docs/conventions.md "Run directories"): the resolved
// config, metrics.csv and TensorBoard events (CleanRL tags), checkpoints/ (resumable with
// --resume DIR; `place` loads them), best.plc per design, pictures of the best placement and of
// the learning curve. --workers N trains with N processes (decentralised PPO over c10d Gloo,
// agents/workers.h; docs/learning.md "Workers and resume"). The program is
// experiments/lib/torch/place_train_program.h; --env device is device_programs.h.
//   place-train --netlist N.pb.txt.gz --plc initial.plc --minutes 60 --out runs/ariane_ppo
//   place-train --resume runs/ariane_ppo --set minutes=120
//   place-train --workers 2 --minutes 60 --out runs/ariane_ppo2
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "experiments/lib/cli.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/run_dir.h"
#include "experiments/lib/torch/device_programs.h"  // --env device
#include "experiments/lib/torch/place_train_program.h"

using namespace placerl;

int main(int argc, char** argv) {
  if (DeviceEnvSelected(argc, argv)) return DevicePlaceTrainMain(argc, argv);  // device_programs.h
  return RunMain("place-train", [&] {
    CLI::App app{"Learns to place a chip's macros with the shared GNN policy and PPO or REINFORCE on the exact "
                 "proxy cost, on one netlist or several, and writes a resumable run directory (checkpoints, best "
                 "placement, learning curve, metrics.csv, TensorBoard events). Exit 2 when no placement completes "
                 "on a design. --env device: learns to place a computation graph's ops on a machine's devices "
                 "(PPO, REINFORCE or HDP on the placed-graph simulator; see place-train --env device --help)."};
    place_train::Options o;
    o.argc = argc;
    o.argv = argv;
    std::string env_name = "chip";
    app.add_option("--env", env_name, "chip (default: this help) | device (see --env device --help)")
        ->check(CLI::IsMember({"chip", "device"}));
    app.add_option("--netlist", o.netlists, "netlist.pb.txt[.gz] (repeat for several designs); default: the built-in synthetic chip")
        ->check(cli::NonEmpty());
    app.add_option("--plc", o.plcs, ".plc per netlist (canvas, grid, routing, initial placement)")->check(cli::NonEmpty());
    app.add_option("--minutes", o.minutes, "training budget (default 10; with --resume: the new total)")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_option("--seed", o.seed, "seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--algorithm", o.algorithm, "ppo | reinforce (default ppo)");
    app.add_option("--clock", o.clock,
                   "the budget's clock: wall (default) or cpu (this process's CPU seconds, for fair budgets on a "
                   "shared machine; time_s in metrics.csv is then CPU seconds too)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_option("--workers", o.workers,
                   "training processes on this machine (c10d Gloo; gradients all-reduced). Across machines: set "
                   "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and start one process per rank")
        ->check(cli::IntRange(1, 1024));
    app.add_option("--max-updates", o.max_updates, "stop after this many updates in total (default: no limit)")
        ->check(cli::IntRange(1, INT64_MAX));
    app.add_option("--checkpoint-minutes", o.checkpoint_minutes,
                   "minutes between checkpoints (default 5; also after the first update and at the end; with "
                   "--resume: the new interval)")
        ->check(cli::FiniteRange(1e-9, cli::kMaxSeconds / 60));
    app.add_option("--worker-timeout", o.worker_timeout,
                   "seconds without progress of a worker, or in one collective, before the run fails (default 120)")
        ->check(cli::FiniteRange(1, cli::kMaxSeconds));
    app.add_option("--rank", o.rank)->group("");
    app.add_option("--world", o.world)->group("");
    app.add_option("--rendezvous", o.rendezvous)->group("");
    app.add_option("--test-fail-rank", o.test_fail_rank)->group("");
    app.add_option("--test-hang-rank", o.test_hang_rank)->group("");
    app.add_option("--test-kill-after-checkpoints", o.test_kill_after_checkpoints)->group("");
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place-train", [] { return place_train::DefaultConfig(); });
    cli::Parse(app, argc, argv);
    return place_train::Run(o);
  });
}
