#!/usr/bin/env bash
# Learned simulated annealing (docs/learned_sa.md): SA whose proposals come from a learned policy
# (sa.proposer=learned), pretrained across designs and compared with the best annealer, `sa-soft`,
# at equal CPU time (--clock cpu, one thread per run).
#
#   experiments/learned_sa.sh [--minutes M] [--seeds "1 2 3"] [--designs "ariane133"]
#                             [--pretrain-designs "ng45_ariane136 asap7_ariane136 ..."]
#                             [--pretrain-minutes P] [--pretrain-lr LR] [--lr LR] [--jobs J]
#                             [--arms "sa-soft frozen scratch pretrained"] [--es-weights FILE]
#                             [--es-loo-designs "ng45_ariane136 ..."] [--es-loo-args "..."]
#                             [--bin build/bin] [--work DIR] [--out out/learned_sa.md] [--table-only]
#                             [--archive DIR]
#
# 1. Pretraining: one learned-SA run per pretraining design (P CPU-minutes each, learning rate
#    --pretrain-lr), each starting from the weights the previous one wrote; the last proposer.json
#    is the pretrained proposer (WORK/pretrained.json). Designs in --designs are never used here.
# 2. Per design in --designs and seed, four arms with the same budget, seed and SA settings
#    (`sa-soft`'s: snapped input, no FD, soft moves of ±1 cell):
#      sa                 — TILOS's simulated annealing itself (`place-baseline --method sa`: greedy
#                           start, TILOS's five kinds, FD of the soft macros), the public annealer;
#      sa-soft            — uniform proposals: TILOS's five kinds and soft shifts half of the time;
#      untrained, frozen  — the learned annealer's eight kinds, uniform, no learning (ablation);
#      learned, scratch   — the same, learning during the run (--lr) from uniform;
#      learned, pretrained — learning during the run from the pretrained proposer;
#      es                 — (with --es-weights, a proposer.json of train-proposer: weights trained by
#                           evolution strategies on other designs) those weights, frozen;
#      learned-sa         — `place-baseline --method learned-sa`: the shipped policy, frozen (trained on
#                           the four flows designs, never on Ariane133);
#      late-loo           — the shipped policy's recipe (session 44) trained WITHOUT the evaluated design,
#                           frozen: the committed experiments/results/learned_sa/late_kinds_without_X_proposer.json
#                           (X = asap7, mempool, ng45_ariane136, sky130hd; Ariane133: the shipped file,
#                           which never saw it) — the held-out arm of the issue's protocol;
#      length-loo         — late-loo's file with the run-length term's first weight set, a hotter start
#                           for runs longer than 10^6 moves ("length_weights": [0.1, 0, 0, 0]; session 52):
#                           late_length_without_X_proposer.json (Ariane133: late_length_four_flows_proposer.json,
#                           the shipped file with that weight), written by experiments/learned_sa_length.sh;
#      shipped-loo        — the same for the recipe shipped in sessions 32-43 (without the kinds' late
#                           adjustment): schedule_control_state_without_X_proposer.json (Ariane133:
#                           schedule_control_state_four_flows_proposer.json);
#      es-loo             — the issue's held-out protocol: per evaluated design, train-proposer on
#                           --es-loo-designs (default: the four flows designs) WITHOUT that design,
#                           with --es-loo-args (default: the schedule only, from sa-soft's mixture,
#                           12 iterations x 6 pairs of 200,000-move runs), then those weights,
#                           frozen. Trained once per design into WORK/es_loo/DESIGN (kept).
#    --arms picks which arms run (default: the four above, and es when --es-weights is given).
#    The table (best proxy cost per arm, mean ± sd over seeds, the best re-scored by proxy-cost)
#    and the curves (plot-curves, best proxy cost against CPU seconds, and the temperature on a log
#    axis: learned_sa_DESIGN_temperature.png; with sa-soft among the arms, every arm's best as a per
#    cent of sa-soft's at the same CPU time over the second half of the budget, where the margins are
#    hundredths of a per cent: learned_sa_DESIGN_gap.png) go to --out and beside it.
# Runs already in --work with a result.json are kept (rerun the script to add seeds; a run stopped by a signal is run again). --table-only
# runs nothing (no pretraining, no es-loo training, no arm): it writes the table and the curves from
# the runs that --work holds, a missing seed shown as — (e.g. runs of several sessions linked into
# one --work as WORK/DESIGN/ARM.sSEED).
# --archive DIR keeps a small record of each finished run in --work of the arms whose policy the
# repository fixes (sa, sa-soft, frozen, learned-sa, shipped-loo, late-loo, length-loo; not es, es-loo, scratch or
# pretrained, whose policy is the invocation's): config.pbtxt, result.json, rescored.json and
# metrics.csv thinned to about 360 rows (10 CPU-seconds apart at 60 minutes), about 50 kB a run, in
# DIR/Mmin/DESIGN/ARM.sSEED, so that runs of several sessions make one table:
#   experiments/learned_sa.sh --table-only --minutes 60 --work experiments/results/learned_sa/runs/60min ...
# (the repository keeps such records in experiments/results/learned_sa/runs/).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
MINUTES=2
SEEDS="1 2 3"
DESIGNS="ariane133"
PRETRAIN_DESIGNS="ng45_ariane136 asap7_ariane136 sky130hd_ariane133 ng45_mempool_tile"
PRETRAIN_MINUTES=1
PRETRAIN_LR=0.1
LR=0.1
JOBS=2
WORK=""
OUT=out/learned_sa.md
ARMS=""
ES_WEIGHTS=""
ES_LOO_DESIGNS="ng45_ariane136 asap7_ariane136 sky130hd_ariane133 ng45_mempool_tile"
TABLE_ONLY=0
ARCHIVE=""
ES_LOO_ARGS="--start mixture --set features= --set schedule=true --moves 200000 --pairs 6 --iterations 12"
need() { [[ $# -ge 2 ]] || { echo "learned_sa.sh: error: $1 needs a value" >&2; exit 1; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) need "$@"; MINUTES="$2"; shift 2 ;;
    --seeds) need "$@"; SEEDS="$2"; shift 2 ;;
    --designs) need "$@"; DESIGNS="$2"; shift 2 ;;
    --pretrain-designs) need "$@"; PRETRAIN_DESIGNS="$2"; shift 2 ;;
    --pretrain-minutes) need "$@"; PRETRAIN_MINUTES="$2"; shift 2 ;;
    --pretrain-lr) need "$@"; PRETRAIN_LR="$2"; shift 2 ;;
    --lr) need "$@"; LR="$2"; shift 2 ;;
    --jobs) need "$@"; JOBS="$2"; shift 2 ;;
    --arms) need "$@"; ARMS="$2"; shift 2 ;;
    --es-weights) need "$@"; ES_WEIGHTS="$2"; shift 2 ;;
    --es-loo-designs) need "$@"; ES_LOO_DESIGNS="$2"; shift 2 ;;
    --es-loo-args) need "$@"; ES_LOO_ARGS="$2"; shift 2 ;;
    --archive) need "$@"; ARCHIVE="$2"; shift 2 ;;
    --bin) need "$@"; BIN="$2"; shift 2 ;;
    --work) need "$@"; WORK="$2"; shift 2 ;;
    --out) need "$@"; OUT="$2"; shift 2 ;;
    --table-only) TABLE_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -euo pipefail$/{/^set -euo/d;p}' "$0"; exit 0 ;;
    *) echo "learned_sa.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
for b in place-baseline proxy-cost group-netlist plot-curves train-proposer; do
  [[ -x "$BIN/$b" ]] || { echo "learned_sa.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
[[ -n "$ARMS" ]] || ARMS="sa-soft frozen scratch pretrained${ES_WEIGHTS:+ es}"
for a in $ARMS; do
  case $a in sa|sa-soft|frozen|scratch|pretrained|es-loo|learned-sa|shipped-loo|late-loo|length-loo) ;; es) [[ -s "$ES_WEIGHTS" ]] || { echo "learned_sa.sh: error: the es arm needs --es-weights FILE" >&2; exit 1; } ;;
    *) echo "learned_sa.sh: error: unknown arm $a" >&2; exit 1 ;; esac
done
[[ -z "$ES_WEIGHTS" ]] || ES_WEIGHTS=$(realpath "$ES_WEIGHTS")
command -v python3 >/dev/null || { echo "learned_sa.sh: error: python3 is needed to write the table" >&2; exit 1; }
for d in $DESIGNS; do
  [[ " $ARMS " == *" pretrained "* ]] || break
  for p in $PRETRAIN_DESIGNS; do
    [[ "$d" != "$p" ]] || { echo "learned_sa.sh: error: $d is both evaluated and in the pretraining" >&2; exit 1; }
  done
done
# The committed held-out file of a recipe for a design: late-loo (the shipped recipe, session 44:
# late_kinds_without_X) and shipped-loo (the recipe shipped in sessions 32-43:
# schedule_control_state_without_X); on Ariane133, which no file was trained on, the recipe's
# four-flows file itself.
RESULTS=experiments/results/learned_sa
loo_of() {  # ARM DESIGN
  local prefix=schedule_control_state_without_ x
  [[ $1 == late-loo ]] && prefix=late_kinds_without_
  [[ $1 == length-loo ]] && prefix=late_length_without_
  case $2 in
    ariane133)
      case $1 in
        late-loo) echo shipped ;;
        length-loo) echo "$RESULTS/late_length_four_flows_proposer.json" ;;
        *) echo "$RESULTS/schedule_control_state_four_flows_proposer.json" ;;
      esac
      return ;;
    asap7_ariane136) x=asap7 ;;
    ng45_mempool_tile) x=mempool ;;
    ng45_ariane136) x=ng45_ariane136 ;;
    sky130hd_ariane133) x=sky130hd ;;
    *) echo "learned_sa.sh: error: no held-out file of the $1 arm's recipe for $2" >&2; exit 1 ;;
  esac
  echo "$RESULTS/$prefix${x}_proposer.json"
}
for a in shipped-loo late-loo length-loo; do  # a design without a held-out file stops here, before any run
  [[ " $ARMS " == *" $a "* ]] || continue
  for d in $DESIGNS; do
    f=$(loo_of "$a" "$d")
    [[ $f == shipped || -s "$f" ]] || { echo "learned_sa.sh: error: missing $f" >&2; exit 1; }
  done
done
[[ -n "$WORK" ]] || WORK=out/learned_sa_work
mkdir -p "$WORK" "$(dirname "$OUT")"
DATA=../shared/datasets/chip

# Netlist and input .plc of a design (the flows designs grouped once into WORK).
netlist_of() {
  if [[ "$1" == ariane133 ]]; then echo "$DATA/ariane133_ng45/netlist.pb.txt.gz"; return; fi
  local F=$DATA/tilos_flows/$1
  [[ -d "$F" ]] || { echo "learned_sa.sh: error: no design $F" >&2; exit 1; }
  if [[ ! -s "$WORK/grouped/$1/netlist.pb.txt" ]]; then
    echo "grouping $1 ..." >&2
    "$BIN/group-netlist" --netlist "$F/netlist_flat.pb.txt.gz" --groups "$F/groups.final.gz" \
      --plc "$F/initial.plc" -o "$WORK/grouped/$1" --json > /dev/null
  fi
  echo "$WORK/grouped/$1/netlist.pb.txt"
}
plc_of() { if [[ "$1" == ariane133 ]]; then echo "$DATA/ariane133_ng45/initial.plc"; else echo "$DATA/tilos_flows/$1/initial.plc"; fi; }

# A finished run: a result.json that does not say it was stopped by a signal (a killed run writes one
# with "stopped_by_signal": true; it is run again, never re-scored, archived or counted).
finished() { [[ -s "$1/result.json" ]] && ! grep -q '"stopped_by_signal": *true' "$1/result.json"; }

run() {  # run DIR DESIGN MINUTES SEED METHOD ARGS...
  local dir=$1 design=$2 minutes=$3 seed=$4 method=$5; shift 5
  if finished "$dir"; then return; fi
  rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
  local nl plc
  nl=$(netlist_of "$design"); plc=$(plc_of "$design")
  OMP_NUM_THREADS=1 "$BIN/place-baseline" --method "$method" --netlist "$nl" --plc "$plc" --minutes "$minutes" --clock cpu \
    --seed "$seed" "$@" --json --out "$dir" > /dev/null 2> "$dir.err" ||
    { echo "learned_sa.sh: error: run $dir failed: $(tail -c 300 "$dir.err")" >&2; exit 1; }
}

# 1. Pretraining, design after design (only for the pretrained arm).
WEIGHTS=""
[[ " $ARMS " == *" pretrained "* && $TABLE_ONLY == 0 ]] || PRETRAIN_DESIGNS=""
for p in $PRETRAIN_DESIGNS; do
  netlist_of "$p" > /dev/null
  echo "pretraining on $p ($PRETRAIN_MINUTES CPU-min) ..." >&2
  args=(--set sa.proposer=learned --set "sa.proposer_lr=$PRETRAIN_LR")
  [[ -z "$WEIGHTS" ]] || args+=(--set "sa.proposer_weights=$WEIGHTS")
  run "$WORK/pretrain/$p" "$p" "$PRETRAIN_MINUTES" 1 sa-soft "${args[@]}"
  WEIGHTS=$WORK/pretrain/$p/proposer.json
done
[[ -z "$WEIGHTS" ]] || cp "$WEIGHTS" "$WORK/pretrained.json"

# 1b. The held-out ES proposers (es-loo): one train-proposer run per evaluated design, on the
# --es-loo-designs other than that design, one thread, CPU clock.
if [[ " $ARMS " == *" es-loo "* && $TABLE_ONLY == 0 ]]; then
  for p in $ES_LOO_DESIGNS; do netlist_of "$p" > /dev/null; done  # a bad name stops here, once
  for d in $DESIGNS; do
    dir=$WORK/es_loo/$d
    [[ -s "$dir/proposer.json" ]] && continue
    train=()
    for p in $ES_LOO_DESIGNS; do
      [[ "$p" != "$d" ]] || continue
      train+=(--netlist "$(netlist_of "$p")" --plc "$(plc_of "$p")")
    done
    [[ ${#train[@]} -gt 0 ]] || { echo "learned_sa.sh: error: no es-loo training design left without $d" >&2; exit 1; }
    echo "es-loo: training without $d ..." >&2
    rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
    # shellcheck disable=SC2086  # ES_LOO_ARGS is a list of options
    OMP_NUM_THREADS=1 "$BIN/train-proposer" "${train[@]}" $ES_LOO_ARGS --threads 1 --clock cpu --minutes 600 \
      --out "$dir" > /dev/null 2> "$dir.err" ||
      { echo "learned_sa.sh: error: train-proposer without $d failed: $(tail -c 300 "$dir.err")" >&2; exit 1; }
  done
fi

# 2. The four arms.
jobs_running() { jobs -rp | wc -l; }
for d in $DESIGNS; do
  [[ $TABLE_ONLY == 0 ]] || break
  netlist_of "$d" > /dev/null
  for s in $SEEDS; do
    for arm in $ARMS; do
      method=sa-soft
      case $arm in
        sa) method=sa; args=() ;;
        sa-soft) args=() ;;
        frozen) args=(--set sa.proposer=learned --set sa.proposer_lr=0) ;;
        scratch) args=(--set sa.proposer=learned --set "sa.proposer_lr=$LR") ;;
        pretrained)
          [[ -n "$WEIGHTS" ]] || continue
          args=(--set sa.proposer=learned --set "sa.proposer_lr=$LR" --set "sa.proposer_weights=$WORK/pretrained.json") ;;
        es) args=(--set sa.proposer=learned --set sa.proposer_lr=0 --set "sa.proposer_weights=$ES_WEIGHTS") ;;
        es-loo) args=(--set sa.proposer=learned --set sa.proposer_lr=0 --set "sa.proposer_weights=$WORK/es_loo/$d/proposer.json") ;;
        learned-sa) method=learned-sa; args=() ;;
        shipped-loo|late-loo|length-loo) args=(--set sa.proposer=learned --set sa.proposer_lr=0 --set "sa.proposer_weights=$(loo_of "$arm" "$d")") ;;
      esac
      while [[ $(jobs_running) -ge $JOBS ]]; do sleep 1; done
      echo "$d seed $s: $arm ($MINUTES CPU-min) ..." >&2
      run "$WORK/$d/$arm.s$s" "$d" "$MINUTES" "$s" "$method" "${args[@]}" &
    done
  done
done
wait

# Re-score every best placement and write the table and the curves.
for d in $DESIGNS; do
  for r in "$WORK/$d"/*.s*/; do
    [[ -s "$r/best.plc" && ! -s "$r/rescored.json" ]] && finished "$r" || continue  # finished runs only
    nl=$(netlist_of "$d")  # (only here: a --work of archived records has no best.plc and gets no grouped netlist)
    "$BIN/proxy-cost" --json --netlist "$nl" --plc "$r/best.plc" > "$r/rescored.json"
  done
  if [[ -n "$ARCHIVE" ]]; then  # the small record of each finished run
    for r in "$WORK/$d"/*.s*/; do
      r=${r%/}
      [[ -s "$r/rescored.json" && -s "$r/metrics.csv" ]] && finished "$r" || continue
      case $(basename "$r") in  # the arms whose policy the repository fixes (es, es-loo, scratch, pretrained: the invocation's)
        sa.s*|sa-soft.s*|frozen.s*|learned-sa.s*|shipped-loo.s*|late-loo.s*|length-loo.s*) ;;
        *) continue ;;
      esac
      a="$ARCHIVE/${MINUTES}min/$d/$(basename "$r")"
      [[ "$(realpath -m "$a")" != "$(realpath -m "$r")" ]] || continue  # --work is the archive itself
      mkdir -p "$a"
      for f in config.pbtxt result.json rescored.json; do [[ ! -s "$r/$f" ]] || cp "$r/$f" "$a/$f"; done
      python3 - "$r/metrics.csv" "$a/metrics.csv" "$MINUTES" <<'EOF'
import csv, os, sys
step = float(sys.argv[3]) * 60 / 360  # about 360 rows per run, whatever its budget
rows = list(csv.reader(open(sys.argv[1])))
head, body = rows[0], [x for x in rows[1:] if len(x) == len(rows[0])]
t = head.index("charts/elapsed_s")
kept, bucket = [], None
for i, x in enumerate(body):  # the first row, one per 1/360 of the budget, and the last
    b = int(float(x[t]) // step)
    if i == 0 or i == len(body) - 1 or b != bucket:
        kept.append(x)
        bucket = b
with open(sys.argv[2] + ".tmp", "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows([head] + kept)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
EOF
    done
  fi
  # The cost curves, and the temperature each arm ran at (log axis; runs whose metrics.csv has it).
  curves=() tcurves=()
  for arm in $ARMS; do
    m="$WORK/$d/$arm.s${SEEDS%% *}/metrics.csv"
    [[ -s "$m" ]] || continue
    curves+=(--curve "$arm=$m")
    [[ $(head -1 "$m") == *charts/temperature* ]] && tcurves+=(--curve "$arm=$m")
  done
  [[ ${#curves[@]} -gt 0 ]] || continue
  "$BIN/plot-curves" "${curves[@]}" --title "best proxy cost, $d, seed ${SEEDS%% *}" --x-label "CPU seconds" \
    --y-label "best proxy cost" -o "$(dirname "$OUT")/learned_sa_$d.png" > /dev/null
  [[ ${#tcurves[@]} -gt 0 ]] && "$BIN/plot-curves" "${tcurves[@]}" --y charts/temperature --y-log \
    --title "temperature, $d, seed ${SEEDS%% *}" --x-label "CPU seconds" --y-label "temperature" \
    -o "$(dirname "$OUT")/learned_sa_${d}_temperature.png" > /dev/null
  if [[ " $ARMS " == *" sa-soft "* && -s "$WORK/$d/sa-soft.s${SEEDS%% *}/metrics.csv" ]]; then
    "$BIN/plot-curves" "${curves[@]}" --relative-to sa-soft --x-scale 0.0166666666667 --x-from "$(awk -v m="$MINUTES" 'BEGIN{print m/2}')" \
      --title "best proxy cost vs sa-soft, $d, seed ${SEEDS%% *}, second half" --x-label "CPU minutes" \
      --y-label "best proxy cost, % vs sa-soft" -o "$(dirname "$OUT")/learned_sa_${d}_gap.png" > /dev/null
  fi
done
python3 - "$WORK" "$OUT" "$MINUTES" "$SEEDS" "$DESIGNS" "$PRETRAIN_DESIGNS" "$PRETRAIN_MINUTES" "$PRETRAIN_LR" "$LR" "$ARMS" "$ES_WEIGHTS" \
  "$ES_LOO_DESIGNS" "$ES_LOO_ARGS" "$TABLE_ONLY" <<'EOF'
import json, os, statistics, sys
work, out, minutes, seeds, designs, pre, pre_min, pre_lr, lr, arms, es, loo_designs, loo_args, table_only = sys.argv[1:]
seeds = seeds.split()
names = {"sa": "TILOS SA (`--method sa`)", "sa-soft": "`sa-soft` (uniform proposals)", "frozen": "learned kinds, untrained and frozen (ablation)",
         "scratch": "learned, from uniform, learning during the run", "pretrained": "learned, pretrained, learning during the run",
         "es": "learned by ES on other designs, frozen",
         "es-loo": "learned by ES without this design (held out), frozen",
         "learned-sa": "`learned-sa` (the shipped policy, frozen)",
         "shipped-loo": "the session-32 recipe trained without this design (held out), frozen",
         "late-loo": "the shipped recipe (session 44: + the kinds' late adjustment) trained without this design (held out), frozen",
         "length-loo": "late-loo with a hotter start on runs longer than 10^6 moves (length_weights [0.1, 0, 0, 0], session 52), frozen"}
lines = ["# Learned simulated annealing: results", "",
         f"Written by `experiments/learned_sa.sh --minutes {minutes} --seeds \"{' '.join(seeds)}\" --designs \"{designs}\" --arms \"{arms}\"` "
         f"(pretraining: {pre or 'none'}, {pre_min} CPU-min each, lr {pre_lr}; lr during the runs {lr}"
         + (f"; ES weights {es} trained on {', '.join(json.load(open(es))['trained_on'])}" if es else "")
         + (f"; es-loo: `train-proposer {loo_args}` on {loo_designs} minus the evaluated design" if "es-loo" in arms.split() else "")
         + "). "
         "Every run: `place-baseline --method sa-soft` (`sa-soft`'s settings; the TILOS SA arm `--method sa`, the learned-sa arm `--method learned-sa`), --clock cpu, one thread; "
         "best proxy cost re-scored from best.plc by `proxy-cost`.", "",
         "| design | arm | best proxy per seed | mean ± sd | vs `sa-soft`, seeds both ran | moves | accepted |",
         "|---|---|---|---|---|---|---|"]
if table_only == "1":
    lines.insert(3, "")
    lines.insert(4, "(`--table-only`: the table of the runs that --work held, made by earlier invocations.)")


def run_of(d, arm, s):  # (re-scored best proxy cost, moves, accepted) of a finished run, None when it is not there
    r = os.path.join(work, d, f"{arm}.s{s}")
    try:
        res = json.load(open(os.path.join(r, "result.json")))
        if res.get("stopped_by_signal"):  # a killed run is not a finished one
            return None
        return json.load(open(os.path.join(r, "rescored.json")))["proxy_cost"], res["evaluations"], res["accepted"]
    except (OSError, KeyError, ValueError):
        return None


for d in designs.split():
    runs = {(arm, s): run_of(d, arm, s) for arm in set(arms.split()) | {"sa-soft"} for s in seeds}
    for arm in arms.split():
        vs = "—"
        pairs = [(runs[arm, s][0], runs["sa-soft", s][0]) for s in seeds if runs[arm, s] and runs["sa-soft", s]]
        if arm != "sa-soft" and pairs:
            mean_a, mean_b = statistics.mean(a for a, _ in pairs), statistics.mean(b for _, b in pairs)
            vs = (f"{100 * (mean_a / mean_b - 1):+.3f} % on the mean, below on {sum(a < b for a, b in pairs)} of {len(pairs)}").replace("-", "−")
        done = [runs[arm, s] for s in seeds if runs[arm, s]]
        vals, moves, acc = [r[0] for r in done], [r[1] for r in done], [r[2] for r in done]
        per_seed = ["%.6f" % runs[arm, s][0] if runs[arm, s] else "—" for s in seeds]
        if not vals:
            continue
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        lines.append(f"| {d} | {names[arm]} | {' '.join(per_seed)} | {statistics.mean(vals):.6f} ± {sd:.6f} (n={len(vals)}) "
                     f"| {vs} | {statistics.mean(moves):.3g} | {statistics.mean(acc):.3g} |")
lines.append("")
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
tmp = out + ".tmp"
open(tmp, "w").write("\n".join(lines) + "\n")
os.replace(tmp, out)
print("\n".join(lines))
EOF
