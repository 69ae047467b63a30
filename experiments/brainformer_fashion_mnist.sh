#!/usr/bin/env bash
# Brainformer block search on Fashion-MNIST patches (docs/nas.md "Brainformer on Fashion-MNIST
# patches"), the longer run: regularised evolution over the brainformer space, every candidate
# trained from scratch as a patch Transformer with the same recipe (nas-search defaults: 200 steps
# of batch 64, width model_dim/16, experts/4), under the step-time budget of the GLaM-like block
# (the default when --step-time-budget is not given); then the best block and the GLaM-like
# reference trained for --final-steps and scored on the test set (result.json "brainformer").
# At most 2 LibTorch threads (the machine is shared).
#
#   experiments/brainformer_fashion_mnist.sh [--budget 60] [--train-steps 200] [--final-steps 1000]
#       [--method evolution|random|reinforce|ppo] [--seed 1] [--bin build/bin] [--out runs/brainformer_fmnist]
#       [-- extra nas-search options, e.g. --step-time-budget S --set brainformer.repeats=2]
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
BUDGET=60
TRAIN_STEPS=200
FINAL_STEPS=1000
METHOD=evolution
SEED=1
OUT=runs/brainformer_fmnist
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --train-steps) TRAIN_STEPS="$2"; shift 2 ;;
    --final-steps) FINAL_STEPS="$2"; shift 2 ;;
    --method) METHOD="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "brainformer_fashion_mnist.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done

/usr/bin/time -f "brainformer_fashion_mnist.sh: %U+%S s CPU, %e s wall" \
  "$BIN/nas-search" --space brainformer --dataset fashion-mnist --method "$METHOD" --budget "$BUDGET" \
  --seeds "$SEED" --train-steps "$TRAIN_STEPS" --set brainformer.final_train_steps="$FINAL_STEPS" \
  --set brainformer.threads=2 --force --out "$OUT" "${EXTRA[@]}"
python3 - "$OUT/result.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["brainformer"]
print(f"step time unit: {b['step_time_unit']}, budget {b['step_time_budget']:.4g} ({b['step_time_budget_source']})")
for who in ("best", "reference"):
    r = b[who]
    print(f"{who:9s} {r['block']}: search val {r['search_validation_accuracy']:.4f}, final val "
          f"{r['validation_accuracy']:.4f}, test {r['test_accuracy']:.4f}, step {r['step_time']:.4g}, "
          f"params {r['params']}, FLOPs/sample {r['flops_per_sample']:.3g}")
PY
