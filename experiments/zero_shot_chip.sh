#!/usr/bin/env bash
# Zero-shot check of a pretrained chip policy on designs it has never seen (issue 14, must-show 3:
# "the policy will also be checked zero-shot on designs it has never seen"): for every design,
# `place --samples K` (best of the greedy policy and K sampled placements), then place-baseline's
# random, greedy and SA given the same CPU time (at least --min-seconds; place-baseline's smallest
# budget is 0.0001 minutes = 0.006 s). Every budget is on the
# CPU-time clock (--clock cpu), so the comparison holds on a loaded machine. Every best placement
# is re-scored by proxy-cost from its best.plc. Writes a markdown page (default
# docs/chip_zero_shot.md, written to a temporary file and renamed) from the runs' own output.
#
#   experiments/zero_shot_chip.sh [--checkpoint experiments/pretrained/chip] [--samples 32]
#       [--min-seconds 0.006] [--seed 1] [--baselines "random greedy sa"] [--work DIR] [--bin build/bin]
#       [--out docs/chip_zero_shot.md]
#
# Designs (none of them in the shipped policy's pretraining set, the four TILOS flows designs; the
# column "seen" says which ones a checkpoint's run trained on, from its config.pbtxt — e.g. a
# `pretrain_chip.sh --designs broad` policy has seen the two CT test netlists):
#   ariane133        ../shared/datasets/chip/ariane133_ng45 (NG45, 133 macros; initial.plc)
#   ibm01            ../shared/datasets/chip/ibm01_bookshelf via bookshelf-to-ct --grid 35,35
#                    (246 hard macros need more than CT's default 10 x 10 = 100 cells; 35 x 35 keeps
#                    cells of ≈ 66 µm for macros up to ≈ 200 µm wide; standard cells unclustered)
#   macro_tiles_10x10  CT's test netlist (100 macros, no soft macros; its initial.plc)
#   sample_clustered   CT's test netlist (its initial.plc)
#   synthetic_s21, synthetic_s22  `proxy-cost --seed 21|22 --synthetic ...` (80 hard macros on 22 x 18,
#                    200 on 36 x 36; pretrain_chip.sh --designs broad uses seeds 11–14, never these)
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/lib/synthetic_designs.sh

BIN=build/bin
CKPT=experiments/pretrained/chip
SAMPLES=32
MIN_SECONDS=0.006
SEED=1
BASELINES="random greedy sa"
WORK=""
OUT=out/chip_zero_shot.md   # tracked docs are rewritten only when asked: --out docs/chip_zero_shot.md
while [[ $# -gt 0 ]]; do
  case "$1" in
    --checkpoint) CKPT="$2"; shift 2 ;;
    --samples) SAMPLES="$2"; shift 2 ;;
    --min-seconds) MIN_SECONDS="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --baselines) BASELINES="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "zero_shot_chip.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/chip_zero_shot.md" ] || cp "docs/chip_zero_shot.md" "$OUT"
for b in place place-baseline proxy-cost bookshelf-to-ct; do
  [[ -x "$BIN/$b" ]] || { echo "zero_shot_chip.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
[[ -e "$CKPT" ]] || { echo "zero_shot_chip.sh: error: no checkpoint at $CKPT" >&2; exit 1; }
[[ -n "$WORK" ]] || WORK=$(mktemp -d /tmp/zero_shot_chip.XXXXXX)
mkdir -p "$WORK"
DATA=../shared/datasets/chip
[[ -f "$WORK/ibm01/netlist.pb.txt" ]] || \
  "$BIN/bookshelf-to-ct" --aux "$DATA/ibm01_bookshelf/ibm01.aux" --grid 35,35 -o "$WORK/ibm01" > /dev/null 2>&1
for spec in "21 macros=80,soft=200,ports=50,nets=1600,grid=22x18" \
            "22 macros=200,soft=400,ports=100,nets=4000,grid=36x36,utilization=0.5"; do
  read -r sseed syn <<< "$spec"
  synthetic_design "$BIN" "$WORK" "$sseed" "$syn" > /dev/null
done
DESIGNS=(
  "ariane133 $DATA/ariane133_ng45/netlist.pb.txt.gz $DATA/ariane133_ng45/initial.plc"
  "ibm01 $WORK/ibm01/netlist.pb.txt $WORK/ibm01/initial.plc"
  "macro_tiles_10x10 $DATA/circuit_training/macro_tiles_10x10/netlist.pb.txt $DATA/circuit_training/macro_tiles_10x10/initial.plc"
  "sample_clustered $DATA/circuit_training/sample_clustered/netlist.pb.txt $DATA/circuit_training/sample_clustered/initial.plc"
  "synthetic_s21 $WORK/synthetic_s21/netlist.pb.txt $WORK/synthetic_s21/initial.plc"
  "synthetic_s22 $WORK/synthetic_s22/netlist.pb.txt $WORK/synthetic_s22/initial.plc"
)
for row in "${DESIGNS[@]}"; do
  read -r name net plc <<< "$row"
  echo "$name: zero-shot ($SAMPLES samples) ..." >&2
  "$BIN/place" --checkpoint "$CKPT" --netlist "$net" --plc "$plc" --samples "$SAMPLES" --seed "$SEED" --clock cpu \
    --force --out "$WORK/$name.zero_shot" --json > "$WORK/$name.zero_shot.json" 2>"$WORK/$name.zero_shot.err"
  secs=$(python3 -c "import json;print(max($MIN_SECONDS, json.load(open('$WORK/$name.zero_shot.json'))['seconds']))")
  mins=$(python3 -c "print($secs/60)")
  for m in $BASELINES; do
    echo "$name: $m for $secs CPU s ..." >&2
    "$BIN/place-baseline" --method "$m" --netlist "$net" --plc "$plc" --minutes "$mins" --seed "$SEED" --clock cpu \
      --force --out "$WORK/$name.$m" --json > "$WORK/$name.$m.json" 2>"$WORK/$name.$m.err" || true
  done
  for d in "$WORK/$name".*/; do
    [[ -f "$d/best.plc" ]] || continue
    "$BIN/proxy-cost" --json --netlist "$net" --plc "$d/best.plc" 2>/dev/null | sed -n '/^{/,$p' > "${d%/}.rescore.json"
  done
  "$BIN/proxy-cost" --json --netlist "$net" --plc "$plc" 2>/dev/null | sed -n '/^{/,$p' > "$WORK/$name.initial.rescore.json"
done

python3 - "$WORK" "$OUT" "$CKPT" "$SAMPLES" "$MIN_SECONDS" "$SEED" "$BASELINES" \
  "${DESIGNS[@]%% *}" <<'PY'
import datetime, json, os, platform, sys
work, out, ckpt, samples, min_s, seed, baselines = sys.argv[1:8]
names = sys.argv[8:]
baselines = baselines.split()

def load(p):
    with open(p) as f:
        return json.load(f)

def rescored(prefix):
    p = prefix + ".rescore.json"
    return load(p)["proxy_cost"] if os.path.exists(p) and os.path.getsize(p) > 0 else None

def fmt(x):
    return "—" if x is None else "%.4f" % x

def fmt_mean(x):  # place writes null/inf when no sampled placement completed
    return fmt(x) if isinstance(x, (int, float)) and x < float("inf") else "no sample completed"

cfg = ckpt if ckpt.endswith(".pbtxt") else os.path.join(ckpt if os.path.isdir(ckpt) else os.path.dirname(os.path.dirname(ckpt)), "config.pbtxt")
trained = [l.split('"')[1] for l in open(cfg) if l.startswith("netlists:")] if os.path.exists(cfg) else None

def seen(n):
    if trained is None:
        return "?"
    key = {"ariane133": "ariane133_ng45/", "ibm01": "ibm01"}.get(n, n + "/")
    return "yes" if any(key in t for t in trained) else "no"

rows, wins, unseen = [], {m: 0 for m in baselines}, 0
for n in names:
    zs = load("%s/%s.zero_shot.json" % (work, n))
    st = zs["stages"]["zero_shot"]
    best = rescored("%s/%s.zero_shot" % (work, n))
    is_seen = seen(n)
    unseen += is_seen == "no"
    cells = [n, is_seen, fmt(rescored("%s/%s.initial" % (work, n))), "**%s**" % fmt(best), fmt(st["greedy_proxy_cost"]),
             fmt_mean(st.get("mean_sampled_proxy_cost")), "%.2f" % zs["seconds"]]
    for m in baselines:
        c = rescored("%s/%s.%s" % (work, n, m))
        if c is None:  # exit 2: no complete placement in the budget (the error names it)
            err = open("%s/%s.%s.err" % (work, n, m)).read()
            done = [l for l in err.splitlines() if " done " in l]
            cells.append("no complete placement (%s)" % done[-1].split(" done ")[1].split(" in ")[0] if done else "failed")
            wins[m] += best is not None and is_seen != "yes"
            continue
        r = load("%s/%s.%s.json" % (work, n, m))
        wins[m] += best is not None and best < c and is_seen != "yes"
        cells.append("%s (%s)" % (fmt(c), r.get("episodes", "")))
    rows.append(cells)
budget = max(float(min_s), 0)
lines = [
    "# Zero-shot chip placement on unseen designs",
    "",
    "Generated by `experiments/zero_shot_chip.sh --checkpoint %s --samples %s --min-seconds %s --seed %s` on %s (%s) — "
    "do not edit by hand; rerun it." % (ckpt, samples, min_s, seed, datetime.date.today().isoformat(), platform.node()),
    "",
    "The policy in `%s` places each design below without training on it (column \"seen\": whether its "
    "pretraining run had the design, from its config.pbtxt): the best of its greedy placement and %s sampled ones (`place --samples %s "
    "--clock cpu`). `place-baseline` random, greedy and SA then get the same CPU time (at least %s s; "
    "the column heads' budget is per design: the zero-shot column's CPU seconds, or %s s when that "
    "is shorter), seed %s. Proxy cost = wirelength + 0.5·density + 0.5·congestion, every best placement "
    "re-scored by `proxy-cost` from its `best.plc`; lower is better. `initial.plc` = the design's input "
    "placement scored by the same code. In brackets: the complete placements the baseline produced in that "
    "time (`episodes` of its result; SA anneals one placement, which it starts from greedy's), or why it has no cost." % (ckpt, samples, samples, min_s, min_s, seed),
    "",
    "| design | seen in pretraining | `initial.plc` | zero-shot best | policy greedy | mean of samples | zero-shot CPU s | "
    + " | ".join("%s, same CPU time" % m for m in baselines) + " |",
    "|---|---|---|---|---|---|---|" + "---|" * len(baselines),
]
lines += ["| " + " | ".join(r) + " |" for r in rows]
lines += ["", "On the designs not seen in pretraining, the zero-shot best is below the baseline's best on: " +
          ", ".join("%s %d of %d" % (m, wins[m], unseen) for m in baselines) + "."]
tmp = out + ".tmp"
with open(tmp, "w") as f:
    f.write("\n".join(lines) + "\n")
os.replace(tmp, out)
print("\n".join(lines[8:]))
PY
