#!/usr/bin/env bash
# Chip baselines leaderboard: for Ariane133 (NG45) and the four TILOS flows designs (grouped
# from their flat netlists with CT's groups.final by bin/group-netlist), runs random, greedy,
# simulated annealing and FD-only with the same budget and seeds (bin/place-baseline), and
# scores the designs' own initial.plc and legalized.plc with the same proxy cost
# (bin/proxy-cost; weights 1/0.5/0.5, canvas and grid of initial.plc). Writes the table to
# docs/chip_leaderboard.md from the binaries' own JSON output (nothing is typed by hand).
#
#   experiments/chip_leaderboard.sh [--minutes M] [--seeds "1 2 3"] [--methods "random greedy sa fd"]
#                                   [--designs "ariane133 ng45_ariane136 ..."] [--jobs J]
#                                   [--bin build/bin] [--out docs/chip_leaderboard.md] [--keep DIR]
#
# With --keep DIR, results of earlier calls in DIR are kept in the table (run more methods or
# seeds later). Besides place-baseline's methods, --methods takes the variant `sa-soft`: SA from
# the input with its hard macros snapped to the nearest legal cells, soft macros moved by SA
# itself instead of FD (sa.init=snapped, sa.fd_every_steps=0, sa.soft_move_prob=0.5; beyond
# TILOS, see docs/chip_leaderboard.md). Text below the line `<!-- kept by chip_leaderboard.sh -->`
# of the output file is kept when the table is rewritten. The issue's protocol is --minutes 60 --seeds "1 2 3" (≈ 60 h of CPU for 4 methods × 5 designs);
# the default here is a short budget that fits a session. --jobs runs that many placers at once
# (each is single-threaded; the table records the budget, not the CPU share each run got).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
MINUTES=2
SEEDS="1"
METHODS="random greedy sa fd cd"
DESIGNS="ariane133 ng45_ariane136 ng45_mempool_tile asap7_ariane136 sky130hd_ariane133"
JOBS=1
OUT=out/chip_leaderboard.md   # tracked docs are rewritten only when asked: --out docs/chip_leaderboard.md
KEEP=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --methods) METHODS="$2"; shift 2 ;;
    --designs) DESIGNS="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "chip_leaderboard.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/chip_leaderboard.md" ] || cp "docs/chip_leaderboard.md" "$OUT"
for b in place-baseline proxy-cost group-netlist; do
  [[ -x "$BIN/$b" ]] || { echo "chip_leaderboard.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "chip_leaderboard.sh: error: python3 is needed to write the table" >&2; exit 1; }
if [[ -n "$KEEP" ]]; then WORK="$KEEP"; mkdir -p "$WORK"; else WORK=$(mktemp -d /tmp/chip_leaderboard.XXXXXX); trap 'rm -rf "$WORK"' EXIT; fi
DATA=../shared/datasets/chip

# Netlist and .plc files of each design.
declare -A NETLIST INITIAL LEGALIZED
for d in $DESIGNS; do
  if [[ "$d" == ariane133 ]]; then
    NETLIST[$d]=$DATA/ariane133_ng45/netlist.pb.txt.gz
    INITIAL[$d]=$DATA/ariane133_ng45/initial.plc
    LEGALIZED[$d]=$DATA/ariane133_ng45/legalized.plc
  else
    F=$DATA/tilos_flows/$d
    [[ -d "$F" ]] || { echo "chip_leaderboard.sh: error: no design $F" >&2; exit 1; }
    echo "grouping $d ..." >&2
    "$BIN/group-netlist" --netlist "$F/netlist_flat.pb.txt.gz" --groups "$F/groups.final.gz" \
      --plc "$F/initial.plc" -o "$WORK/$d/grouped" --json > "$WORK/$d.group.json"
    NETLIST[$d]=$WORK/$d/grouped/netlist.pb.txt
    INITIAL[$d]=$F/initial.plc
    LEGALIZED[$d]=$F/legalized.plc
  fi
  mkdir -p "$WORK/$d"
  for p in initial legalized; do
    PLC=${INITIAL[$d]}; [[ $p == legalized ]] && PLC=${LEGALIZED[$d]}
    "$BIN/proxy-cost" --json --netlist "${NETLIST[$d]}" --plc "$PLC" > "$WORK/$d/$p.json" 2> "$WORK/$d/$p.err" || \
      echo "{\"error\": \"$(head -c 300 "$WORK/$d/$p.err" | tr -d '"\n')\"}" > "$WORK/$d/$p.json"
  done
done

# The placer runs, JOBS at a time.
# Variants: a name for place-baseline with fixed settings.
declare -A VARIANT_ARGS=(
  [sa-soft]="--method sa-soft"
)
run_one() {
  local d=$1 m=$2 s=$3
  local args="--method $m"
  [[ -n "${VARIANT_ARGS[$m]:-}" ]] && args="${VARIANT_ARGS[$m]}"
  # shellcheck disable=SC2086
  "$BIN/place-baseline" $args --netlist "${NETLIST[$d]}" --plc "${INITIAL[$d]}" \
    --minutes "$MINUTES" --seed "$s" --json --out "$WORK/$d/runs/$m.s$s" \
    > "$WORK/$d/$m.s$s.json" 2> "$WORK/$d/$m.s$s.log" || \
    echo "{\"error\": \"exit $?: $(tail -c 300 "$WORK/$d/$m.s$s.log" | tr -d '"\n')\"}" > "$WORK/$d/$m.s$s.json"
  echo "done $d $m seed $s" >&2
}
for d in $DESIGNS; do
  for m in $METHODS; do
    for s in $SEEDS; do
      while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do sleep 1; done
      run_one "$d" "$m" "$s" &
    done
  done
done
wait

python3 - "$WORK" "$OUT" "$MINUTES" "$SEEDS" "$METHODS" "$DESIGNS" "$JOBS" <<'EOF'
import json, os, sys, statistics, datetime, platform
work, out, minutes, seeds, methods, designs, jobs = sys.argv[1:8]
seeds, methods, designs = seeds.split(), methods.split(), designs.split()
# Methods run now or by an earlier call with the same --keep directory, in a fixed order.
order = ["random", "greedy", "sa", "sa-soft", "fd", "cd"]
found = set(methods)
for d in designs:
    if os.path.isdir(os.path.join(work, d)):
        for f in os.listdir(os.path.join(work, d)):
            if ".s" in f and f.endswith(".json") and f.split(".s")[0] in order:
                found.add(f.split(".s")[0])
methods = [m for m in order if m in found] + sorted(found - set(order))
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"error": str(e)}
lines = []
lines.append("# Chip baselines leaderboard\n")
lines.append("Generated by `experiments/chip_leaderboard.sh --minutes %s --seeds \"%s\" --jobs %s` on %s "
             "(%s, %d cores) — do not edit by hand.\n" % (minutes, " ".join(seeds), jobs,
             datetime.date.today().isoformat(), platform.node(), os.cpu_count()))
lines.append("Proxy cost = wirelength + 0.5·density + 0.5·congestion (our exact Circuit Training cost, "
             "docs/proxy_cost.md), canvas and grid of each design's `initial.plc`. Flows designs are the "
             "clustered netlists `group-netlist` makes from the flat netlist and CT's `groups.final` "
             "(docs/grouping.md). Every placer starts from the same input, has the same wall-time budget "
             "per seed, and its best placement is re-scored by a full evaluation. `initial.plc` and "
             "`legalized.plc` are the published placements scored by the same code.\n")
lines.append("| design | placer | best proxy (min over seeds) | mean ± sd | wirelength | density | congestion | evaluations/s | complete placements |")
lines.append("|---|---|---|---|---|---|---|---|---|")
for d in designs:
    for p in ("initial", "legalized"):
        j = load(os.path.join(work, d, p + ".json"))
        if "proxy_cost" in j:
            lines.append("| %s | `%s.plc` (published) | %.4f | | %.4f | %.4f | %.4f | | |" % (
                d, p, j["proxy_cost"], j["wirelength_cost"], j["density_cost"], j["congestion_cost"]))
        else:
            lines.append("| %s | `%s.plc` (published) | n/a: %s | | | | | | |" % (d, p, j.get("error", "?")[:120]))
    for m in methods:
        rs = [load(os.path.join(work, d, "%s.s%s.json" % (m, s))) for s in seeds]
        ok = [r for r in rs if "best" in r]
        m_label = m
        if not ok:
            lines.append("| %s | %s | failed: %s | | | | | | |" % (d, m, rs[0].get("error", "?")[:120]))
            continue
        if any(r.get("legal") is False for r in ok):
            m_label = m + " (ILLEGAL placements)"
        costs = [r["best"]["proxy_cost"] for r in ok]
        b = min(ok, key=lambda r: r["best"]["proxy_cost"])["best"]
        sd = " ± %.4f" % statistics.stdev(costs) if len(costs) > 1 else ""
        eps = statistics.mean(r["evaluations_per_second"] for r in ok)
        eps_unit = {"random": "episodes", "greedy": "cost reads", "sa": "moves", "sa-soft": "moves", "fd": "runs",
                    "cd": "cost reads"}.get(m, "")
        lines.append("| %s | %s | **%.4f** | %.4f%s (%d seeds) | %.4f | %.4f | %.4f | %.4g %s | %d |" % (
            d, m_label, min(costs), statistics.mean(costs), sd, len(ok), b["wirelength_cost"], b["density_cost"],
            b["congestion_cost"], eps, eps_unit, sum(r["episodes"] for r in ok)))
lines.append("")
lines.append("Notes: `sa` is TILOS's simulated annealing (swap/shift/mirror/move/shuffle, 2N actions per step, "
             "exponential cooling t_max 5e-5 → t_min 5e-8 over the budget, FD of the soft macros after every "
             "step) started from one greedy pass; `greedy` places each macro on the legal cell of least proxy "
             "cost (then samples among the 3 best for the rest of the budget); `random` draws legal cells "
             "uniformly; `fd` keeps the input's hard macros and places the soft macros by force-directed "
             "placement with CT's schedule; `cd` is CT's coordinate descent (k = 5 cells, orientations, FD of the "
             "soft macros per epoch) from `initial.plc`, repeated until a round no longer improves. Every "
             "placer places soft macros by that FD at the end of an episode. `sa-soft` (opt-in, beyond TILOS): "
             "SA from the input with each hard macro snapped to the nearest free legal cell, half of the actions "
             "moving one soft macro by up to one cell per axis, no FD (`place-baseline --method sa-soft`: "
             "sa.init=snapped, sa.fd_every_steps=0, sa.soft_move_prob=0.5, sa.soft_move_cells=1). Budgets are wall time: each run is "
             "single-threaded, and with --jobs J > 1 (or other work on the machine) a run gets less than a core, "
             "so evaluations/s are lower bounds of the placers' speed.")
# Hand-written text below the marker in the existing file is kept.
marker = "<!-- kept by chip_leaderboard.sh -->"
kept = ""
if os.path.exists(out):
    old = open(out).read()
    if marker in old:
        kept = "\n" + old[old.index(marker):]
open(out + ".tmp", "w").write("\n".join(lines) + "\n" + kept)
os.replace(out + ".tmp", out)
print("wrote " + out)
EOF
