#!/usr/bin/env bash
# ENAS micro on Fashion-MNIST, issue 16's must-show point 2 (docs/nas.md "ENAS weight sharing on
# Fashion-MNIST"): search with shared weights for BUDGET minutes of CPU (default 90, within the
# issue's 2 hours of search; the LSTM controller with ENAS micro's settings,
# experiments/configs/enas_micro_controller.pbtxt), then train the found cell from scratch, the best of RANDOM random cells and
# the hand-designed cell with the same recipe (FINAL epochs each), and print the three test
# accuracies with parameters and MACs. One torch thread (the machine is shared); at C = 8 a
# batch-64 step costs ~0.2–0.3 s of CPU, so each epoch of final training is ~4 min of CPU and the
# defaults take about 90 + 7 × FINAL × 4 ≈ 175 min of wall time on an otherwise idle core.
#
#   experiments/enas_fashion_mnist.sh [--budget-minutes 90] [--final-epochs 3] [--random-cells 5]
#                                     [--final-candidates 1] [--uniform-fraction 0] [--derive-samples 10]
#                                     [--step-time-budget B --under-penalty W]
#                                     [--seed 1] [--bin build/bin] [--out runs/enas_fashion_mnist]
# (--final-candidates R: the R best-ranked cells trained from scratch, compare with --random-cells R;
# --uniform-fraction F: uniformly random children for the first F of the shared training;
# --derive-samples K: the controller's K samples ranked by shared-weight accuracy;
# --step-time-budget B (MMACs, the step-time proxy) with --under-penalty W: the budget as a target,
# reward = accuracy − max(0, MACs/B − 1) − W·max(0, 1 − MACs/B), in the controller and the derive; docs/nas.md)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
BUDGET=90
FINAL=3
RANDOM_CELLS=5
FINAL_CANDIDATES=1
UNIFORM=0
DERIVE=10
BUDGET_ARGS=()
SEED=1
OUT=runs/enas_fashion_mnist
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget-minutes) BUDGET="$2"; shift 2 ;;
    --final-epochs) FINAL="$2"; shift 2 ;;
    --random-cells) RANDOM_CELLS="$2"; shift 2 ;;
    --final-candidates) FINAL_CANDIDATES="$2"; shift 2 ;;
    --uniform-fraction) UNIFORM="$2"; shift 2 ;;
    --derive-samples) DERIVE="$2"; shift 2 ;;
    --step-time-budget) BUDGET_ARGS+=(--step-time-budget "$2"); shift 2 ;;
    --under-penalty) BUDGET_ARGS+=(--under-penalty "$2"); shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "enas_fashion_mnist.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done

/usr/bin/time -f "%U+%S s CPU, %e s wall" \
  "$BIN/nas-search" --space enas_micro --dataset fashion-mnist --method enas \
  --config experiments/configs/enas_micro_controller.pbtxt --clock cpu \
  --budget-minutes "$BUDGET" --final-epochs "$FINAL" --random-cells "$RANDOM_CELLS" --seeds "$SEED" \
  --final-candidates "$FINAL_CANDIDATES" --uniform-fraction "$UNIFORM" --derive-samples "$DERIVE" "${BUDGET_ARGS[@]}" \
  --out "$OUT" --force
python3 - "$OUT/result.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"search {j['search_seconds'] / 60:.1f} min ({j['search_cpu_seconds'] / 60:.1f} min CPU), "
      f"{j['epochs']} epochs, {j['controller_children']} controller children")
for key in ("enas", "best_random", "hand_designed"):
    c = j.get(key)
    if c:
        print(f"{key:14s} test {100 * c['test_accuracy']:.2f} %  val {100 * c['val_accuracy']:.2f} %  "
              f"{c['params']} params  {c['macs'] / 1e6:.2f} MMACs")
PY
