#!/usr/bin/env bash
# Tabular NAS leaderboard: random search, regularised evolution (P = 10, S = 3), REINFORCE (the
# ENAS controller's algorithm) and PPO — both with the shared GNN policy, their nas-search
# defaults — on NAS-Bench-201 (CIFAR-10, CIFAR-100, ImageNet16-120) and NAS-Bench-Macro
# (CIFAR-10), each over the same seeds with the same budget of evaluated architectures
# (bin/nas-search --seeds), next to the published numbers. Writes docs/nas_leaderboard.md from
# the binary's own JSON output; only the published rows are typed here (with their source).
# --rl-seeds runs the two learned methods on fewer seeds (~0.1 ms of CPU per decision).
#
#   experiments/nas_leaderboard.sh [--budget N] [--seeds 1-100] [--rl-seeds 1-100] [--bin build/bin]
#                                  [--out docs/nas_leaderboard.md]
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
BUDGET=100
SEEDS="1-100"
RL_SEEDS=""
OUT=out/nas_leaderboard.md   # tracked docs are rewritten only when asked: --out docs/nas_leaderboard.md
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --rl-seeds) RL_SEEDS="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "nas_leaderboard.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/nas_leaderboard.md" ] || cp "docs/nas_leaderboard.md" "$OUT"
RL_SEEDS=${RL_SEEDS:-$SEEDS}
command -v jq >/dev/null || { echo "nas_leaderboard.sh: error: jq is needed" >&2; exit 1; }
[[ -x "$BIN/nas-search" ]] || { echo "nas_leaderboard.sh: error: no $BIN/nas-search (build it first)" >&2; exit 1; }

TMP=$(mktemp -d /tmp/nas_leaderboard.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
run() {  # name space method seeds [extra args]
  local name=$1 space=$2 method=$3 seeds=$4; shift 4
  "$BIN/nas-search" --space "$space" --method "$method" --dataset table --budget "$BUDGET" --seeds "$seeds" \
    --json --out "$TMP/$name" "$@" 2>/dev/null >"$TMP/$name.json"
}
runs() {  # method seeds
  for d in cifar10 cifar100 imagenet16-120; do run "nb201-$d-$1" nb201 "$1" "$2" --table-dataset "$d"; done
  run "macro-$1" nas_bench_macro "$1" "$2"
}
TIMEFORMAT='%R %U %S'
timing() { read -r WALL USER SYS <"$1"; printf '%.1f s wall, %.1f s CPU' "$WALL" "$(echo "$USER + $SYS" | bc)"; }
{ time { runs random "$SEEDS"; runs evolution "$SEEDS"; }; } 2>"$TMP/time"
TIMING=$(timing "$TMP/time")
{ time { runs reinforce "$RL_SEEDS"; runs ppo "$RL_SEEDS"; }; } 2>"$TMP/time_rl"
RL_TIMING=$(timing "$TMP/time_rl")

cell() { printf '%.2f ± %.2f' $(jq -r '"\(.best_test_accuracy.mean) \(.best_test_accuracy.std)"' "$TMP/$1.json"); }
opt() { printf '%.2f' "$(jq -r '.table_optimum.quality * 100' "$TMP/$1.json")"; }
uniq() { printf '%.1f' "$(jq -r '.unique_mean' "$TMP/$1.json")"; }
NSEEDS=$(jq -r '.seeds' "$TMP/nb201-cifar10-random.json")
RL_NSEEDS=$(jq -r '.seeds' "$TMP/nb201-cifar10-ppo.json")

{
  cat <<HDR
# NAS leaderboard (tabular benchmarks)

Written by \`experiments/nas_leaderboard.sh --budget $BUDGET --seeds $SEEDS --rl-seeds $RL_SEEDS\` from
\`bin/nas-search --json\` (nothing in the measured rows is typed by hand). Best **test** accuracy (%) found
within a budget of **$BUDGET evaluated architectures** (repeats counted; for the learned methods one episode
= one architecture), mean ± std (n − 1) over **$NSEEDS seeds** (random, evolution) and **$RL_NSEEDS seeds**
(REINFORCE, PPO). Regularised evolution: population 10, tournament 3, one decision mutated, oldest removed
(Real et al. 2019, with NAS-Bench-201's settings). REINFORCE: the ENAS controller's algorithm (moving-average
baseline, decay 0.9; entropy bonus 1e-4; Adam 1e-3; 10 architectures per update; reward = accuracy in %)
on the shared GNN policy, not ENAS's LSTM. PPO: CT's defaults (lr 4e-4, clip 0.2, 4 epochs, entropy 0.01),
10 architectures per update. Both from \`nas-search\`'s defaults (docs/nas.md). Time on this 2-core machine
(shared with other work while measured): random + evolution, 8 searches, **$TIMING**; REINFORCE + PPO,
8 searches, **$RL_TIMING**.

## NAS-Bench-201 (NATS-Bench tss, 15,625 cells)

| method | CIFAR-10 | CIFAR-100 | ImageNet16-120 | distinct archs / run (C-10) |
|---|---|---|---|---|
| random search (placerl) | $(cell nb201-cifar10-random) | $(cell nb201-cifar100-random) | $(cell nb201-imagenet16-120-random) | $(uniq nb201-cifar10-random) |
| regularised evolution (placerl) | $(cell nb201-cifar10-evolution) | $(cell nb201-cifar100-evolution) | $(cell nb201-imagenet16-120-evolution) | $(uniq nb201-cifar10-evolution) |
| REINFORCE, GNN policy (placerl) | $(cell nb201-cifar10-reinforce) | $(cell nb201-cifar100-reinforce) | $(cell nb201-imagenet16-120-reinforce) | $(uniq nb201-cifar10-reinforce) |
| PPO, GNN policy (placerl) | $(cell nb201-cifar10-ppo) | $(cell nb201-cifar100-ppo) | $(cell nb201-imagenet16-120-ppo) | $(uniq nb201-cifar10-ppo) |
| RS, published [M] | 93.70 ± 0.36 | 71.04 ± 1.07 | 44.57 ± 1.25 | |
| REA, published [M] | 93.92 ± 0.30 | 71.84 ± 0.99 | 45.54 ± 1.03 | |
| REINFORCE, published [M] | 93.85 ± 0.37 | 71.71 ± 1.09 | 45.24 ± 1.18 | |
| optimum of the table | $(opt nb201-cifar10-random) | $(opt nb201-cifar100-random) | $(opt nb201-imagenet16-120-random) | |

## NAS-Bench-Macro (6,561 networks, CIFAR-10)

| method | CIFAR-10 (mean of 3 runs) | distinct archs / run |
|---|---|---|
| random search (placerl) | $(cell macro-random) | $(uniq macro-random) |
| regularised evolution (placerl) | $(cell macro-evolution) | $(uniq macro-evolution) |
| REINFORCE, GNN policy (placerl) | $(cell macro-reinforce) | $(uniq macro-reinforce) |
| PPO, GNN policy (placerl) | $(cell macro-ppo) | $(uniq macro-ppo) |
| optimum of the table | $(opt macro-random) | |

## Reading the table

- **Published rows** are NAS-Bench-201 (Dong & Yang, ICLR 2020), Table 5, as recalled [M] — they are
  *not* in \`../shared/reference/nas_notes.md\` (§4.3 lists the tables' availability only), so treat them
  as unverified. Their "optimal" row (94.37 / 73.51 / 47.31) equals the optimum of the shared CSV above,
  which supports the recall. They are 500 runs with a **simulated time budget of 12,000 s** (AutoDL's
  \`--time_budget 12000\`, roughly 100 architectures) instead of our fixed count.
- **Not the same protocol, in our favour**: the published searches select on *validation* accuracy
  and report the selected cell's *test* accuracy; the shared CSV has only the 200-epoch *test*
  accuracies, so here the search selects on the number it reports. That is an oracle on the
  metric, and it makes every method look better than the same method in the papers (a
  selection-on-test bias of a few tenths of a percent near the optimum). Compare methods with each
  other within this table, and with the papers only loosely.
- NAS-Bench-Macro: no published random-search / REA numbers are in the notes (the benchmark's
  paper searches with weight sharing, not on the table).
- **Learned methods**: their hyper-parameters (architectures per update, learning rate) were chosen on
  NAS-Bench-201 CIFAR-10 with seeds 101–130, not on the seeds reported here (docs/nas.md). Within 100
  architectures the controllers have 9 updates; the "distinct archs" column shows how far they have
  concentrated. The shared choice head tends to collapse onto one decision-independent choice when
  trained long on an additive reward (docs/nas.md) — not visible at this budget. That bias may even help
  here: NAS-Bench-201's best cells are mostly \`nor_conv_3x3\`, so "prefer conv 3×3 everywhere", learned
  from a few updates, is a good prior. The gains over evolution are small: about one standard error of
  the difference of the means (from std / √seeds) on CIFAR-10, about two on ImageNet16-120 and
  NAS-Bench-Macro (REINFORCE), about 3.5 for PPO on CIFAR-100.
- Time: the whole table (four methods) takes longer than the issue's minute: the learned methods
  cost ~0.1 ms of CPU per decision, updates included (a GCN forward per step).
- Budget: rerun with \`--budget 300\` etc.
HDR
} >"$OUT"
echo "nas_leaderboard.sh: wrote $OUT ($TIMING; learned methods $RL_TIMING)"
