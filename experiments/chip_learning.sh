#!/usr/bin/env bash
# The chip learning protocol of issue 14 (must-show 2): place-train from scratch on Ariane133
# (NG45, canvas and grid of initial.plc, weights 1/0.5/0.5) for M minutes × several seeds,
# next to place-baseline's random, greedy and SA with the same budget, every run on the CPU-time
# clock (--clock cpu: a run's budget is its own CPU seconds, one thread each, so runs side by
# side or next to other work get the same amount of computation). Writes docs/chip_learning.md
# (table of the best proxy cost at each --at time, re-scored by proxy-cost from the written
# best.plc) and docs/img/chip_learning_curves.png (best so far vs CPU minutes) from the runs'
# own output — nothing typed by hand.
#
#   experiments/chip_learning.sh [--minutes 60] [--seeds "1 2 3"] [--baselines "random greedy sa"]
#       [--baseline-minutes M] [--baseline-seeds "1 2 3"] [--at "20 60"] [--jobs 2]
#       [--set key=value ...] [--keep DIR] [--archive DIR] [--bin build/bin] [--out docs/chip_learning.md]
#
# --set goes to place-train (e.g. --set agent.minibatch_size=512). With --keep DIR, finished runs
# in DIR (a <name>.json with a result) are not run again: a protocol can be spread over
# sessions. Runs are DIR/ppo_s<seed> and DIR/<baseline>_s<seed>.
# --archive DIR (e.g. experiments/results/chip_learning, committed) keeps what the table and the
# curves need of every finished run — <name>.json, <name>.rescore.json, <name>/result.json,
# <name>/config.pbtxt and <name>/metrics.csv cut to its time and best-cost columns (≈ 1/5 of the
# file) — and brings archived runs back before running, so a protocol too long for one machine's
# session can accumulate across machines (an archived run is not run again; its best.plc is not
# kept, its re-scored cost is).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
MINUTES=60
SEEDS="1 2 3"
BASELINES="random greedy sa"
BMINUTES=""
BSEEDS=""
AT="20 60"
JOBS=2
OUT=out/chip_learning.md   # tracked docs are rewritten only when asked: --out docs/chip_learning.md
KEEP=""
ARCHIVE=""
SETS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --baselines) BASELINES="$2"; shift 2 ;;
    --baseline-minutes) BMINUTES="$2"; shift 2 ;;
    --baseline-seeds) BSEEDS="$2"; shift 2 ;;
    --at) AT="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --set) SETS+=(--set "$2"); shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --archive) ARCHIVE="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "chip_learning.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/chip_learning.md" ] || cp "docs/chip_learning.md" "$OUT"
BMINUTES=${BMINUTES:-$MINUTES}
BSEEDS=${BSEEDS:-$SEEDS}
for b in place-train place-baseline proxy-cost plot-curves; do
  [[ -x "$BIN/$b" ]] || { echo "chip_learning.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "chip_learning.sh: error: python3 is needed to write the table" >&2; exit 1; }
if [[ -n "$KEEP" ]]; then WORK="$KEEP"; mkdir -p "$WORK"; else WORK=$(mktemp -d /tmp/chip_learning.XXXXXX); trap 'rm -rf "$WORK"' EXIT; fi
A=../shared/datasets/chip/ariane133_ng45
NET=$A/netlist.pb.txt.gz
PLC=$A/initial.plc
[[ -f "$NET" && -f "$PLC" ]] || { echo "chip_learning.sh: error: $A not found (../shared beside the repository)" >&2; exit 1; }

finished() { [[ -f "$WORK/$1.json" ]] && grep -q '"best' "$WORK/$1.json"; }
# Archived runs (--archive) come back into the work directory unless it has them already.
if [[ -n "$ARCHIVE" && -d "$ARCHIVE" ]]; then
  for f in "$ARCHIVE"/*.json; do
    [[ -f "$f" && "$f" != *.rescore.json ]] || continue
    n=$(basename "$f" .json)
    finished "$n" && continue
    grep -q '"best' "$f" || continue
    rm -rf "${WORK:?}/$n"
    cp -r "$ARCHIVE/$n" "$WORK/$n" 2>/dev/null || mkdir -p "$WORK/$n"
    cp "$f" "$WORK/$n.json"
    [[ ! -f "$ARCHIVE/$n.rescore.json" ]] || cp "$ARCHIVE/$n.rescore.json" "$WORK/$n.rescore.json"
    echo "from the archive: $n" >&2
  done
fi
run_one() {  # name, command...
  local name=$1; shift
  rm -rf "${WORK:?}/$name"
  OMP_NUM_THREADS=1 "$@" --clock cpu --json --out "$WORK/$name" > "$WORK/$name.json" 2> "$WORK/$name.log" || \
    echo "{\"error\": \"exit $?: $(tail -c 300 "$WORK/$name.log" | tr -d '"\n')\"}" > "$WORK/$name.json"
  echo "done $name" >&2
}
for s in $SEEDS; do
  finished "ppo_s$s" && continue
  while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do sleep 5; done
  run_one "ppo_s$s" "$BIN/place-train" --netlist "$NET" --plc "$PLC" --minutes "$MINUTES" --seed "$s" "${SETS[@]}" &
done
for m in $BASELINES; do
  for s in $BSEEDS; do
    finished "${m}_s$s" && continue
    while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do sleep 5; done
    run_one "${m}_s$s" "$BIN/place-baseline" --method "$m" --netlist "$NET" --plc "$PLC" --minutes "$BMINUTES" --seed "$s" &
  done
done
wait

# Re-score every best.plc with proxy-cost (the number in the table is a full evaluation).
for d in "$WORK"/*/; do
  n=$(basename "$d")
  [[ -f "$d/best.plc" && ! -f "$WORK/$n.rescore.json" ]] || continue
  "$BIN/proxy-cost" --json --netlist "$NET" --plc "$d/best.plc" 2>/dev/null | sed -n '/^{/,$p' > "$WORK/$n.rescore.json" || true
done

# The archive: every finished run's summary (see the header).
if [[ -n "$ARCHIVE" ]]; then
  mkdir -p "$ARCHIVE"
  for f in "$WORK"/*.json; do
    [[ "$f" != *.rescore.json ]] || continue
    n=$(basename "$f" .json)
    finished "$n" || continue
    mkdir -p "$ARCHIVE/$n"
    for g in result.json config.pbtxt; do [[ ! -f "$WORK/$n/$g" ]] || cp "$WORK/$n/$g" "$ARCHIVE/$n/$g"; done
    if [[ -f "$WORK/$n/metrics.csv" ]]; then
      python3 - "$WORK/$n/metrics.csv" "$ARCHIVE/$n/metrics.csv" <<'PY'
import csv, os, sys
src, dst = sys.argv[1:3]
keep = ["step", "time_s", "charts/elapsed_s", "charts/best_proxy_cost", "charts/mean_proxy_cost"]
rows = list(csv.DictReader(open(src)))
cols = [c for c in keep if rows and c in rows[0]]
with open(dst + ".tmp", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
os.replace(dst + ".tmp", dst)
PY
    fi
    cp "$f" "$ARCHIVE/$n.json"
    [[ ! -f "$WORK/$n.rescore.json" ]] || cp "$WORK/$n.rescore.json" "$ARCHIVE/$n.rescore.json"
  done
  echo "archived the finished runs' summaries in $ARCHIVE" >&2
fi

mkdir -p "$(dirname "$OUT")/img"
IMG="$(dirname "$OUT")/img/chip_learning_curves.png"
CURVES=()
for s in $SEEDS; do [[ -f "$WORK/ppo_s$s/metrics.csv" ]] && CURVES+=(--curve "PPO seed $s=$WORK/ppo_s$s"); done
for m in $BASELINES; do for s in $BSEEDS; do
  [[ -f "$WORK/${m}_s$s/metrics.csv" ]] && CURVES+=(--curve "$m seed $s=$WORK/${m}_s$s")
done; done
if [[ ${#CURVES[@]} -gt 0 ]]; then
  "$BIN/plot-curves" "${CURVES[@]}" --x time_s,charts/elapsed_s --y charts/best_proxy_cost --x-scale 0.016666666666666666 \
    --x-label "CPU minutes (one thread per run)" --y-label "best proxy cost so far" \
    --title "Ariane133: place-train from scratch vs baselines" --out "$IMG" >&2
fi

python3 - "$WORK" "$OUT" "$MINUTES" "$SEEDS" "$BASELINES" "$BMINUTES" "$BSEEDS" "$AT" "$JOBS" "${SETS[*]:-}" <<'PY'
import csv, datetime, json, math, os, platform, statistics, sys
work, out, minutes, seeds, baselines, bminutes, bseeds, at, jobs, sets = sys.argv[1:11]
seeds, baselines, bseeds, at = seeds.split(), baselines.split(), bseeds.split(), [float(t) for t in at.split()]
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"error": str(e)}
def best_at(name, t_min):
    """Best proxy cost logged at or before t_min CPU minutes (None if the run is shorter)."""
    p = os.path.join(work, name, "metrics.csv")
    if not os.path.exists(p):
        return None
    best, last_t = None, 0.0
    for row in csv.DictReader(open(p)):
        t = row.get("time_s") or row.get("charts/elapsed_s")
        c = row.get("charts/best_proxy_cost")
        if not t or not c:
            continue
        t, c = float(t), float(c)
        last_t = max(last_t, t)
        if t <= t_min * 60 + 1e-9 and c > 0:
            best = c if best is None else min(best, c)
    return best if last_t >= t_min * 60 * 0.98 else None
def fmt(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    if len(xs) == 1:
        return "%.4f" % xs[0]
    return "%.4f ± %.4f (min %.4f)" % (statistics.mean(xs), statistics.stdev(xs), min(xs))
rows = [("PPO (place-train)", "ppo", seeds, float(minutes))] + [(m, m, bseeds, float(bminutes)) for m in baselines]
L = ["# Chip learning: place-train from scratch vs baselines on Ariane133\n",
     "Generated by `experiments/chip_learning.sh --minutes %s --seeds \"%s\" --baselines \"%s\" --baseline-minutes %s "
     "--baseline-seeds \"%s\" --at \"%s\" --jobs %s%s` on %s (%s, %d cores) — do not edit by hand.\n" % (
         minutes, " ".join(seeds), " ".join(baselines), bminutes, " ".join(bseeds), " ".join("%g" % t for t in at), jobs,
         (" " + sets) if sets else "", datetime.date.today().isoformat(), platform.node(), os.cpu_count()),
     "Ariane133 (`../shared/datasets/chip/ariane133_ng45`, canvas and grid of `initial.plc`), proxy cost = "
     "wirelength + 0.5·density + 0.5·congestion. Every run is single-threaded with its budget on its own CPU time "
     "(`--clock cpu`), so runs that shared the machine got the same computation. Columns \"best at t\" read each "
     "run's metrics.csv (best so far at t CPU minutes; – when the run is shorter); \"final\" is the run's best.plc "
     "re-scored by `proxy-cost`. mean ± sd over seeds (min over seeds).\n"]
L.append("| placer | budget (CPU min) | seeds | " + " | ".join("best at %g min" % t for t in at) +
         " | final best (re-scored) | work |")
L.append("|---|---|---|" + "---|" * len(at) + "---|---|")
for label, key, ss, budget in rows:
    names = ["%s_s%s" % (key, s) for s in ss]
    res = [load(os.path.join(work, n + ".json")) for n in names]
    ok = [n for n, r in zip(names, res) if "error" not in r]
    if not ok:
        L.append("| %s | %g | %s | %s | failed: %s | |" % (label, budget, " ".join(ss), " | ".join("–" for _ in at),
                 (res[0].get("error", "?") if res else "no runs")[:150]))
        continue
    cells = [fmt([best_at(n, t) for n in ok]) for t in at]
    final = [load(os.path.join(work, n + ".rescore.json")).get("proxy_cost") for n in ok]
    work_txt = []
    for n in ok:
        r = load(os.path.join(work, n + ".json"))
        if "episodes" in r and key == "ppo":
            work_txt.append("%d episodes" % r["episodes"])
        elif "evaluations" in r:
            work_txt.append("%d %s" % (r["evaluations"], {"random": "episodes", "greedy": "cost reads", "sa": "moves"}.get(key, "evaluations")))
    L.append("| %s | %g | %s | %s | %s | %s |" % (label, budget, " ".join(s for s, n in zip(ss, names) if n in ok),
             " | ".join(cells), fmt(final), "; ".join(work_txt)))
L.append("")
L.append("![best proxy cost so far vs CPU minutes](img/chip_learning_curves.png)\n")
L.append("PPO: the shared GNN policy (docs/learning.md) with its defaults plus the `--set` options above; "
         "baselines as in docs/chip_leaderboard.md (TILOS SA started from one greedy pass, FD of the soft macros "
         "after every SA step and at every episode end of every placer).")
marker = "<!-- kept by chip_learning.sh -->"
kept = ""
if os.path.exists(out):
    old = open(out).read()
    if marker in old:
        kept = "\n" + old[old.index(marker):]
open(out + ".tmp", "w").write("\n".join(L) + "\n" + kept)
os.replace(out + ".tmp", out)
print("wrote " + out)
PY
