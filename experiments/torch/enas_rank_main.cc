// enas-rank: how well ENAS's shared weights rank cells (issue 16; docs/nas.md "ENAS weight
// sharing on Fashion-MNIST"). Scores a list of enas_micro cells with the shared weights of a
// `nas-search --method enas --dataset fashion-mnist` search checkpoint, exactly as the derive step
// does (search/nas/enas_search.h SharedWeightAccuracies: the same super-network, the same
// validation split), and, for the cells whose accuracy after training from scratch is known,
// the rank correlation between the two (Kendall's tau-b, Spearman's rho).
//   enas-rank [--checkpoint runs/enas] [--result runs/enas/result.json]... [--cells cells.txt]...
//             [--pbtxt best.pbtxt]... [--candidates] [--images 2000] [--retrain-seeds "2 3"]
//             [--final-epochs 1] [--max-images N] [--fashion-mnist-dir D] [--json]
// --result: every cell of a nas-search fashion-mnist result.json that was trained from scratch
//   (enas, finalists, random, hand_designed; enas_training's best and hand) with its test accuracy; --candidates adds the
//   derive step's candidates (no from-scratch accuracy).
// --cells: a text file, one cell a line: `LABEL ACCURACY|- decision=choice decision=choice …`
//   (the "architecture" text of result.json); `#` starts a comment.
// --pbtxt: an ArchitectureDef (best.pbtxt); its quality, when > 0, is taken as the known accuracy.
// The same architecture given twice is scored once (labels joined with '/').
// --retrain-seeds "S1 S2 …" [--final-epochs E]: also train every cell from scratch once per seed
//   (nas-search's final training: same network, recipe and E; a seed sets initialisation and data
//   order, the same for every cell) and report mean ± sd of test and validation accuracy; the
//   mean test accuracy is then the "from scratch" accuracy the correlation uses (the given ones
//   are shown beside it). Without --checkpoint only the retraining is done.
// The program is experiments/lib/torch/enas_rank.h.
#include <CLI/CLI.hpp>

#include "experiments/lib/cli.h"
#include "experiments/lib/torch/enas_rank.h"

using namespace placerl;

int main(int argc, char** argv) {
  return RunMain("enas-rank", [&] {
    CLI::App app{"Scores enas_micro cells with the shared weights of an ENAS search checkpoint (as nas-search's derive "
                 "step does) and compares that ranking with the cells' accuracies after training from scratch "
                 "(Kendall tau-b, Spearman rho)."};
    enas_rank::Options o;
    app.add_option("--checkpoint", o.checkpoint,
                   "a nas-search enas run directory (its checkpoints/latest.ckpt) or a .ckpt (needed unless --retrain-seeds)")
        ->check(cli::NonEmpty());
    app.add_option("--retrain-seeds", o.retrain_seeds,
                   "train every cell from scratch once per seed (nas-search's final training) and use the mean test "
                   "accuracy as its from-scratch accuracy")
        ->delimiter(' ')
        ->check(cli::IntRange(0, INT32_MAX));
    app.add_option("--final-epochs", o.final_epochs, "epochs of each --retrain-seeds training (default 1, nas-search's)")
        ->check(cli::FiniteRange(1e-6, 10000));
    app.add_option("--result", o.results, "result.json of a nas-search enas_micro / fashion-mnist run (repeatable)");
    app.add_option("--cells", o.cells_files, "text file: LABEL ACCURACY|- decision=choice … per line (repeatable)");
    app.add_option("--pbtxt", o.pbtxts, "an ArchitectureDef (best.pbtxt; quality = known accuracy) (repeatable)");
    app.add_flag("--candidates", o.candidates, "also the derive candidates of each --result");
    app.add_option("--images", o.images, "validation images per cell (default 2000, at most the 5000 of the split)")
        ->check(cli::IntRange(1, 60000));
    app.add_option("--max-images", o.max_images, "at most N images of each split (tests)")->check(cli::IntRange(1, 60000));
    app.add_option("--fashion-mnist-dir", o.data_dir, "the IDX files (default /usr/share/datasets/fashion-mnist)")
        ->check(cli::NonEmpty());
    app.add_flag("--json", o.json, "print one JSON document");
    cli::Parse(app, argc, argv);
    return enas_rank::Run(o);
  });
}
