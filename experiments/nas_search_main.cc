// nas-search: architecture search on the block environment (env/block/, docs/nas.md) with
// random search, regularised evolution, or — in LibTorch builds — REINFORCE (the ENAS
// controller's algorithm) or PPO with the shared GNN policy and learner (experiments/torch/
// nas_rl.h), on the tabular benchmarks (NAS-Bench-201, NAS-Bench-Macro) or any space with a
// synthetic quality, over one or many seeds, writing a run directory (docs/conventions.md):
//   nas-search --space nb201 --method evolution --dataset table --budget 100 --seeds 1-100 --out runs/rea
//   nas-search --space nb201 --method reinforce --budget 100 --seeds 1-20 --out runs/reinforce
// Every method spends the same budget: evaluated architectures, repeats included (for the
// learned methods one episode = one architecture). One seed: metrics.csv has one row per
// evaluated architecture. Several seeds: one row per seed (its best), and result.json has
// mean ± std over the seeds. With --dataset fashion-mnist the children are trained for real; the
// run is handed to the space's trainer (enas_micro: ENAS weight sharing, search/nas/
// enas_search.h, its run directory experiments/lib/torch/enas_programs.h; --method enas | random):
//   nas-search --space enas_micro --dataset fashion-mnist --method enas --budget-minutes 10 --out runs/enas
// or, without weight sharing, each cell trained from scratch briefly (enas::MakeTrainedSearchSetup;
// --method evolution | reinforce | ppo, or random with --train-steps) in the generic loop:
//   nas-search --space enas_micro --dataset fashion-mnist --method evolution --budget 100 --train-steps 200 --out runs/rea
// --space brainformer --dataset fashion-mnist trains each candidate block as a patch Transformer
// (search/nas/brainformer_search.h):
//   nas-search --space brainformer --dataset fashion-mnist --method evolution --budget 40 --out runs/bf
// Checkpoints (every checkpoint_minutes and at the end) let `--resume DIR` continue a killed or
// finished search exactly as if it had not stopped, or a longer one (--budget N); ENAS weight
// sharing from its last search epoch (--budget-minutes M: the new total; docs/nas.md "Resume"):
//   nas-search --resume runs/rea --budget 200

#include <CLI/CLI.hpp>

#include <string>

#include "experiments/lib/cli.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/nas/nas_search_config.h"
#include "experiments/lib/nas/nas_search_run.h"
#include "experiments/lib/run_dir.h"

using namespace placerl;
using nas_search::DefaultConfig;

int main(int argc, char** argv) {
  return RunMain("nas-search", [&] {
    CLI::App app{"Searches a block / cell architecture space (nb201, nas_bench_macro, enas_macro, enas_micro, "
                 "brainformer or a .pbtxt) with random search, regularised evolution, REINFORCE (the ENAS "
                 "controller's algorithm) or PPO on the tabular benchmarks (or a synthetic quality), over one or "
                 "many seeds, and writes a run directory."};
    nas_search::Options o;
    app.add_option("--space", o.space, "nb201 | nas_bench_macro | enas_macro | enas_micro | brainformer | FILE.pbtxt "
                                       "(default nb201)")->check(cli::NonEmpty());
    app.add_option("--method", o.method, "random | evolution (default) | reinforce | ppo (the shared GNN policy; "
                                         "learner options with --set agent.learning_rate=…)")->check(cli::NonEmpty());
    app.add_option("--dataset", o.dataset, "table (default) | fashion-mnist (children trained for real: enas_micro with "
                                           "--method enas (weight sharing) | random (fully trained random cells); with "
                                           "evolution | reinforce | ppo, or random with --train-steps, each cell "
                                           "trained briefly, settings with --set enas_training.…; brainformer with any method, settings with "
                                           "--set brainformer.…)")->check(cli::NonEmpty());
    app.add_option("--budget-minutes", o.budget_minutes, "fashion-mnist: search time (default 10) on --clock")
        ->check(cli::FiniteRange(1e-4, 1e6));
    app.add_option("--clock", o.clock,
                   "enas_micro / fashion-mnist: the search budget's clock, wall (default) or cpu (this process's CPU "
                   "seconds, for fair budgets on a shared machine)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    app.add_option("--final-epochs", o.final_epochs, "fashion-mnist: epochs of training from scratch (default 1; "
                                                     "fractions allowed)")->check(cli::FiniteRange(1e-6, 1e4));
    app.add_option("--random-cells", o.random_cells, "fashion-mnist: random cells trained from scratch (default 4; "
                                                     "0 with --method enas: no random or hand-designed cells)")
        ->check(cli::IntRange(0, 10000));
    app.add_option("--derive-samples", o.derive_samples,
                   "enas: children sampled from the trained controller and ranked with the shared weights (default 10)")
        ->check(cli::IntRange(1, 100000));
    app.add_option("--derive-images", o.derive_images, "enas: validation images that rank them (default 1000)")
        ->check(cli::IntRange(1, 1000000));
    app.add_option("--final-candidates", o.final_candidates,
                   "enas: the R best-ranked children trained from scratch, the best by validation is the found cell "
                   "(default 1; compare with --random-cells R)")->check(cli::IntRange(1, 10000));
    app.add_option("--uniform-fraction", o.uniform_fraction,
                   "enas: shared steps train a uniformly random child (not the controller's) during this first "
                   "fraction of the budget (default 0)")->check(cli::FiniteRange(0, 1));
    app.add_option("--max-images", o.max_images, "fashion-mnist: at most N images of each split (quick runs, tests)")
        ->check(cli::IntRange(1, 60000));
    app.add_option("--fashion-mnist-dir", o.fashion_mnist_dir, "the IDX files (default /usr/share/datasets/fashion-mnist, "
                                                               "Debian dataset-fashion-mnist)")->check(cli::NonEmpty());
    app.add_option("--train-steps", o.train_steps, "fashion-mnist: training steps per candidate (default 200) for brainformer "
                                                   "and for enas_micro with random | evolution | reinforce | ppo")
        ->check(cli::IntRange(1, 10000000));
    app.add_option("--table-dataset", o.table_dataset, "nb201: cifar10 (default) | cifar100 | imagenet16-120")
        ->check(cli::NonEmpty());
    app.add_option("--budget", o.budget, "evaluated architectures per seed (default 100; with --resume: the new total, "
                                       "one seed only)")->check(cli::IntRange(1, cli::kMaxCount));
    app.add_option("--seeds", o.seeds, "seeds: 7 | 1,2,5 | 1-100 (default 1)")->check(cli::NonEmpty());
    app.add_option("--population", o.population, "evolution: population P (default 10)")->check(cli::IntRange(2, 1000000));
    app.add_option("--tournament", o.tournament, "evolution: tournament size S (default 3)")->check(cli::IntRange(1, 1000000));
    app.add_option("--episodes-per-update", o.episodes_per_update,
                   "reinforce / ppo: architectures per learner update")->check(cli::IntRange(1, 1000000));
    app.add_option("--step-time-budget,--cost-budget", o.cost_budget,
                   "penalise a step time (or its proxy: nb201 MMACs, nas_bench_macro MFLOPs) above this; 0 = off")
        ->check(cli::FiniteRange(0, 1e18));
    app.add_option("--penalty", o.penalty, "penalty weight (default 1)")->check(cli::FiniteRange(0, 1e9));
    app.add_option("--under-penalty", o.under_penalty,
                   "weight of the shortfall below the step-time budget, reward -= W * max(0, 1 - cost / budget): "
                   "the budget as a target (default 0 = off)")->check(cli::FiniteRange(0, 1e9));
    app.add_option("--nb201-table", o.nb201_table, "nats_bench_tss.csv (default ../shared/datasets/nas/…)")->check(cli::NonEmpty());
    app.add_option("--macro-table", o.macro_table, "nas_bench_macro_cifar10.json (default ../shared/datasets/nas/…)")
        ->check(cli::NonEmpty());
    app.add_option("--print-space", o.print_space, "print the .pbtxt of a built-in space and exit (no --out needed)")
        ->check(cli::NonEmpty());
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    app.add_flag("--allow-slow", o.allow_slow, "run even when the search is estimated to take more than a week or more "
                                                "memory than the machine has (refused otherwise, with the estimate)");
    run::AddRunDirFlags(app, &o.dir);
    // Defined after --method/--space/--dataset: its defaults are those of the given ones.
    run::AddHelpConfig(app, "nas-search", [&o] {
      return DefaultConfig(o.method.empty() ? DefaultConfig().method() : o.method, o.space, o.dataset);
    });
    app.add_option("--test-kill-after-checkpoints", o.test_kill_after_checkpoints)->group("");
    cli::Parse(app, argc, argv);
    return nas_search::NasSearch(o, run::CommandLineText(argc, argv));
  });
}
