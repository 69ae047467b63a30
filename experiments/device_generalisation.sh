#!/usr/bin/env bash
# Device placement that generalises (issue 15, "what it must show" 2): pretrain the PPO placer
# (place-train --env device) on ENAS-like cells of one family (seeds 1–8 by default), then on each
# held-out seed (9–12) compare, all on the same machine and simulator:
#   * zero-shot: `place --env device` with the pretrained checkpoint (greedy + --samples samples);
#   * fine-tuned: the same run continued with PPO for --finetune-minutes on that graph;
#   * per-graph: place-train from scratch on that graph alone for --pergraph-minutes;
#   * HEFT (place-baseline --method heft) and one GPU (every op on the fastest device).
# Every RL run uses the same environment options: by default features=heft, order=rank,
# reward=relative (env/device/device_env.h), the setting of docs/device_placement.md's table.
# It writes the table (step times, ratios, CPU seconds, when fine-tuning first matched the
# per-graph result) between the markers `<!-- device_generalisation:begin -->` and
# `<!-- device_generalisation:end -->` of --out (default docs/device_placement.md; appended
# with the markers when they are absent). Every number comes from the binaries' result.json /
# metrics.csv; CPU seconds from /usr/bin/time. Runs are single-threaded (OMP_NUM_THREADS=1).
#
#   experiments/device_generalisation.sh [--features heft|basic] [--order rank|topological] [--reward relative|sqrt|id|log]
#       [--pretrain-minutes 7] [--pergraph-minutes 2] [--finetune-minutes 1] [--samples 16]
#       [--train-seeds '1 2 3 4 5 6 7 8'] [--test-seeds '9 10 11 12'] [--family cifar10]
#       [--machine 'k80(gpus=2,memory_fraction=0.39)'] [--learning-rate 0.002] [--episodes-per-update 8]
#       [--seed 1] [--clock wall|cpu] [--bin build/bin] [--out docs/device_placement.md] [--keep DIR]
#
# --seed S is the learners' seed (pretraining, place, per-graph); --clock cpu counts every RL
# budget (and the "reached at" times) in the run's own CPU seconds (fair on a shared machine).
# Wall time ≈ pretrain + #test × (pergraph + finetune) minutes + a few seconds per baseline.
# --keep DIR keeps (and reuses) the run directories in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
OUT=out/device_placement.md   # tracked docs are rewritten only when asked: --out docs/device_placement.md
KEEP=""
FEATURES=heft
ORDER=rank
REWARD=relative
PRETRAIN=7
PERGRAPH=2
FINETUNE=1
SAMPLES=16
TRAIN_SEEDS="1 2 3 4 5 6 7 8"
TEST_SEEDS="9 10 11 12"
FAMILY=cifar10
MACHINE='k80(gpus=2,memory_fraction=0.39)'
LR=0.002
EPU=8
SEED=1
CLOCK=wall
die() { echo "device_generalisation.sh: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help|--features|--order|--reward|--pretrain-minutes|--pergraph-minutes|--finetune-minutes|--samples|\
    --train-seeds|--test-seeds|--family|--machine|--learning-rate|--episodes-per-update|--seed|--clock|--bin|--out|--keep) ;;
    *) die "unknown argument $1" ;;
  esac
  [[ $# -ge 2 || "$1" == -h || "$1" == --help ]] || die "$1 needs a value"
  case "$1" in
    --features) FEATURES="$2"; shift 2 ;;
    --order) ORDER="$2"; shift 2 ;;
    --reward) REWARD="$2"; shift 2 ;;
    --pretrain-minutes) PRETRAIN="$2"; shift 2 ;;
    --pergraph-minutes) PERGRAPH="$2"; shift 2 ;;
    --finetune-minutes) FINETUNE="$2"; shift 2 ;;
    --samples) SAMPLES="$2"; shift 2 ;;
    --train-seeds) TRAIN_SEEDS="$2"; shift 2 ;;
    --test-seeds) TEST_SEEDS="$2"; shift 2 ;;
    --family) FAMILY="$2"; shift 2 ;;
    --machine) MACHINE="$2"; shift 2 ;;
    --learning-rate) LR="$2"; shift 2 ;;
    --episodes-per-update) EPU="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --clock) CLOCK="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/device_placement.md" ] || cp "docs/device_placement.md" "$OUT"
command -v python3 >/dev/null || die "python3 is needed to write the table"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (apt-get install time)"
for b in place-train place place-baseline; do
  [[ -x "$BIN/$b" ]] || die "$BIN/$b not built (cmake --build build --target $b)"
done
[[ "$SEED" =~ ^[0-9]+$ ]] || die "--seed must be a non-negative integer, got '$SEED'"
[[ "$CLOCK" == wall || "$CLOCK" == cpu ]] || die "--clock must be wall or cpu, got '$CLOCK'"
[[ -n "$TRAIN_SEEDS" && -n "$TEST_SEEDS" ]] || die "--train-seeds and --test-seeds must not be empty"
if [[ -n "$KEEP" ]]; then WORK="$KEEP"; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
export OMP_NUM_THREADS=1
cell() { printf 'enas_cell(family=%s,seed=%s)' "$FAMILY" "$1"; }
# run NAME CMD…: runs CMD once into $WORK/NAME (skipped when its result.json exists), CPU time in NAME.time.
run() {
  local name="$1"; shift
  [[ -f "$WORK/$name/result.json" ]] && return 0
  rm -rf "$WORK/$name"
  echo "== $name: $*" >&2
  local rc=0
  /usr/bin/time -f '%U %S %e' -o "$WORK/$name.time" "$@" --out "$WORK/$name" >"$WORK/$name.log" 2>&1 || rc=$?
  # 2 = ran, infeasible (out of memory): result.json says so with "feasible": false.
  [[ $rc -eq 0 || $rc -eq 2 ]] || { cat "$WORK/$name.log" >&2; die "$name failed"; }
}
COMMON=(--seed "$SEED" --clock "$CLOCK" --set "features=$FEATURES" --set "order=$ORDER" --set "reward=$REWARD" --set "agent.learning_rate=$LR" --set "episodes_per_update=$EPU")

G=""
for s in $TRAIN_SEEDS; do G+="$(cell "$s"),"; done
run pretrain "$BIN/place-train" --env device --graph "${G%,}" --machine "$MACHINE" --minutes "$PRETRAIN" "${COMMON[@]}"
for s in $TEST_SEEDS; do
  run "heft_$s" "$BIN/place-baseline" --env device --method heft --graph "$(cell "$s")" --machine "$MACHINE"
  run "place_$s" "$BIN/place" --env device --checkpoint "$WORK/pretrain" --graph "$(cell "$s")" --machine "$MACHINE" \
    --samples "$SAMPLES" --finetune-minutes "$FINETUNE" --seed "$SEED" --clock "$CLOCK" --set "order=$ORDER" --set "reward=$REWARD" --set "agent.learning_rate=$LR" \
    --set "episodes_per_update=$EPU"
  run "pergraph_$s" "$BIN/place-train" --env device --graph "$(cell "$s")" --machine "$MACHINE" --minutes "$PERGRAPH" \
    "${COMMON[@]}"
done

python3 - "$WORK" "$OUT" "$TEST_SEEDS" "$SEED" "$CLOCK" <<PY
import csv, json, os, re, sys
work, out, seeds = sys.argv[1], sys.argv[2], sys.argv[3].split()
seed, clock = sys.argv[4], sys.argv[5]
def res(name): return json.load(open(os.path.join(work, name, "result.json")))
def cpu(name):
    u, s, e = open(os.path.join(work, name + ".time")).read().split()[-3:]
    return float(u) + float(s), float(e)
def first_time(name, column, target):
    # time_s of the first metrics row whose best-so-far reaches target (None when it never does)
    with open(os.path.join(work, name, "metrics.csv")) as f:
        for row in csv.DictReader(f):
            v = row.get(column, "")
            if v not in ("", "nan") and float(v) <= target * (1 + 1e-9):
                return float(row["time_s"])
    return None
ms = lambda t: "%.2f" % (t * 1e3)
pre = res("pretrain"); pre_cpu, pre_wall = cpu("pretrain")
rows, zr, zh, fr, fh = [], [], [], [], []
for s in seeds:
    heft = res("heft_%s" % s); pl = res("place_%s" % s); pg = res("pergraph_%s" % s)
    single = heft["single_device_time_s"]; h = heft["best"]["effective_time_s"]
    zs = pl["stages"]["zero_shot"]["best_effective_time_s"]; zs_s = pl["stages"]["zero_shot"]["seconds"]
    ft = pl["best"]["effective_time_s"]; per = pg["graphs"][0]["effective_time_s"]
    pl_cpu, _ = cpu("place_%s" % s); pg_cpu, _ = cpu("pergraph_%s" % s)
    reach_ft = first_time("place_%s" % s, "charts/best_effective_time_s", per)
    reach_pg = first_time("pergraph_%s" % s, "charts/best_step_time_s", per)
    zr.append(zs / per); zh.append(zs / h); fr.append(ft / per); fh.append(ft / h)
    reach = "never" if reach_ft is None else ("%.1f s" % reach_ft)
    rows.append("| %s | %d | %s | %s | %s (%.0f s CPU) | %s (%.1f s) | %.3f | %.3f | %s | %.3f | %s (per-graph: %s) |" % (
        s, pg["graphs"][0]["groups"], ms(single), ms(h), ms(per), pg_cpu, ms(zs), zs_s, zs / per, zs / h, ms(ft),
        ft / h, reach, "%.1f s" % reach_pg if reach_pg is not None else "?"))
mean = lambda v: sum(v) / len(v)
table = [
    "Pretrained %s wall / %.0f s CPU (%d episodes, %d updates) on %d graphs; features=%s, order=%s, reward=%s; "
    "machine $MACHINE, learner seed %s, RL budgets on the %s clock%s." % (
        "%.1f min" % (pre_wall / 60), pre_cpu, pre["episodes"], pre["updates"], len(pre["graphs"]),
        "$FEATURES", "$ORDER", "$REWARD", seed, clock,
        " (minutes and \"reached at\" seconds are the run's own CPU time)" if clock == "cpu" else ""),
    "",
    "| seed | groups | 1-GPU ms | HEFT ms | per-graph RL ($PERGRAPH min) | zero-shot ($SAMPLES+1 placements) | zero-shot / per-graph | zero-shot / HEFT | fine-tuned ($FINETUNE min) | fine-tuned / HEFT | fine-tuning reached per-graph at |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
] + rows + [
    "| mean | | | | | | **%.3f** | **%.3f** | | **%.3f** | |" % (mean(zr), mean(zh), mean(fh)),
]
block = "\n".join(table) + "\n"
begin, end = "<!-- device_generalisation:begin -->", "<!-- device_generalisation:end -->"
text = open(out).read() if os.path.exists(out) else ""
if begin in text and end in text:
    text = text[: text.index(begin) + len(begin)] + "\n" + block + text[text.index(end):]
else:
    text += "\n" + begin + "\n" + block + end + "\n"
open(out, "w").write(text)
print(block)
PY
