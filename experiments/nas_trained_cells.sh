#!/usr/bin/env bash
# enas_micro on Fashion-MNIST WITHOUT weight sharing (docs/nas.md "Cells trained briefly"):
# regularised evolution and random search over the same number of cells, each cell scored by its
# validation accuracy after a short training from scratch (--train-steps SGD steps, the same seed
# and data order for every cell) under the step-time budget (MMACs proxy; default 2.62 = the
# hand-designed cell's), side by side on two cores (one torch thread each). Each search's best cell
# and the hand-designed one are then trained from scratch for --final-epochs (training seed 2, in the
# runs) and again with each of --retrain-seeds (`enas-rank --retrain-seeds`), and the script prints
# the test accuracies and their means: the issue's comparison of the found cell with the best of
# the same number of random cells and with the hand-designed cell at equal step time.
# At 200 steps a cell costs ~33 s of one core, so the default 100 cells take ~55 min per search.
#
#   experiments/nas_trained_cells.sh [--budget 100] [--train-steps 200] [--final-epochs 1]
#                                    [--step-time-budget 2.62] [--retrain-seeds "3 4"] [--seed 1]
#                                    [--bin build/bin] [--out runs/nas_trained_cells] [--reuse]
# (--reuse keeps the searches already in --out and only retrains and reports.)
# Writes OUT/evolution/ and OUT/random/ (nas-search run directories), OUT/cells.txt,
# OUT/retrain_s<seed>.json and OUT/summary.json.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
BUDGET=100
STEPS=200
FINAL=1
STB=2.62
RETRAIN="3 4"
SEED=1
OUT=runs/nas_trained_cells
REUSE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --train-steps) STEPS="$2"; shift 2 ;;
    --final-epochs) FINAL="$2"; shift 2 ;;
    --step-time-budget) STB="$2"; shift 2 ;;
    --retrain-seeds) RETRAIN="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "nas_trained_cells.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
for s in $RETRAIN; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "nas_trained_cells.sh: error: --retrain-seeds must be non-negative integers, got '$s'" >&2; exit 1; }
done
for b in nas-search enas-rank; do
  [[ -x "$BIN/$b" ]] || { echo "nas_trained_cells.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
mkdir -p "$OUT"

pids=()
for m in evolution random; do
  if [[ $REUSE == 1 && -s "$OUT/$m.json" ]]; then
    echo "$m: kept from $OUT/$m.json" >&2
    continue
  fi
  OMP_NUM_THREADS=1 "$BIN/nas-search" --space enas_micro --dataset fashion-mnist --method "$m" --budget "$BUDGET" \
    --train-steps "$STEPS" --final-epochs "$FINAL" --step-time-budget "$STB" --seeds "$SEED" --force --json \
    --out "$OUT/$m" > "$OUT/$m.json.tmp" 2> "$OUT/$m.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "nas_trained_cells.sh: error: a search failed (see $OUT/*.err)" >&2; exit 1; }; done
for m in evolution random; do [[ ! -f "$OUT/$m.json.tmp" ]] || mv "$OUT/$m.json.tmp" "$OUT/$m.json"; done

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
import os
with open(out + "/cells.txt.tmp", "w") as f:
    f.write("# label given-test-accuracy genotype: the searches' best cells and the hand-designed one\n")
    ev = json.load(open(out + "/evolution.json"))["enas_training"]
    rs = json.load(open(out + "/random.json"))["enas_training"]
    for label, c in (("evolution", ev["best"]), ("random", rs["best"]), ("hand", ev["hand"])):
        f.write("%s %.4f %s\n" % (label, c["test_accuracy"], c["architecture"]))
os.replace(out + "/cells.txt.tmp", out + "/cells.txt")
PY
pids=()
for s in $RETRAIN; do
  [[ $REUSE == 1 && -s "$OUT/retrain_s$s.json" ]] && continue
  OMP_NUM_THREADS=1 "$BIN/enas-rank" --cells "$OUT/cells.txt" --retrain-seeds "$s" --final-epochs "$FINAL" --json \
    > "$OUT/retrain_s$s.json.tmp" 2> "$OUT/retrain_s$s.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "nas_trained_cells.sh: error: a retraining failed (see $OUT/retrain_s*.err)" >&2; exit 1; }; done
for s in $RETRAIN; do [[ ! -f "$OUT/retrain_s$s.json.tmp" ]] || mv "$OUT/retrain_s$s.json.tmp" "$OUT/retrain_s$s.json"; done

python3 - "$OUT" "$RETRAIN" <<'PY'
import json, statistics, sys
out, seeds = sys.argv[1], sys.argv[2].split()
runs = {m: json.load(open("%s/%s.json" % (out, m))) for m in ("evolution", "random")}
cells = {"evolution": runs["evolution"]["enas_training"]["best"], "random": runs["random"]["enas_training"]["best"],
         "hand": runs["evolution"]["enas_training"]["hand"]}
acc = {k: [c["test_accuracy"]] for k, c in cells.items()}
for s in seeds:
    for c in json.load(open("%s/retrain_s%s.json" % (out, s)))["cells"]:
        acc[c["label"]].extend(c["retrained"]["test_accuracies"])
summary = {"seeds": [2] + [int(s) for s in seeds], "cells": {}}
print("%-10s %8s %8s %s" % ("cell", "MMACs", "search", "test accuracy per training seed -> mean"))
for k, c in cells.items():
    mean = statistics.mean(acc[k])
    summary["cells"][k] = {"architecture": c["architecture"], "mmacs": c["mmacs"], "params": c["params"],
                           "search_val_accuracy": c["search_val_accuracy"], "test_accuracies": acc[k], "mean_test_accuracy": mean}
    print("%-10s %8.2f %7.2f%% %s -> %.2f %%" % (k, c["mmacs"], 100 * c["search_val_accuracy"],
          " ".join("%.2f" % (100 * a) for a in acc[k]), 100 * mean))
for m, r in runs.items():
    summary[m] = {"cells_trained": r["enas_training"]["cells_trained"],
                  "search_training_cpu_seconds": r["enas_training"]["search_training_cpu_seconds"],
                  "search_seconds": r["search_seconds"]}
    print("%s: %d cells trained in %.0f s CPU (%.0f s wall)" % (m, r["enas_training"]["cells_trained"],
          r["enas_training"]["search_training_cpu_seconds"], r["search_seconds"]))
tmp = out + "/summary.json.tmp"
json.dump(summary, open(tmp, "w"), indent=2)
import os; os.replace(tmp, out + "/summary.json")
PY
