#!/usr/bin/env bash
# The device regulator zero-shot on graphs it never saw (issue 31, docs/device_regulator.md): per seed,
# pretrain the regulator (GNN + PPO on the iterative MDP, the leaderboard's regulator settings) on
# --pretrain-graphs, and an untrained twin (one update at learning rate 1e-9: the initial policy); then on
# each held-out graph run, all with the same CPU budget (--minutes, one thread, --clock cpu):
#   * pretrained, zero-shot — `place --env device --checkpoint PRE --samples 1000000 --samples-minutes M`:
#     the frozen policy's search episodes from the start placement (its start placer charged to M);
#   * untrained, frozen     — the same with the untrained twin (ablation: is the gain learning?);
#   * trained on the graph  — `place-train` on the held-out graph itself for M (with --arms ... pergraph);
#   * HEFT and HEFT + local search (`place-baseline --method heft | heft_ls --minutes M`).
# The table (best simulated step time per seed, means, how many seeds are below HEFT + local search) goes to
# --out; every number comes from the binaries' JSON, the step times re-simulated by `perf-model simulate`.
# Pretraining time is not counted (the protocol's "pretrained elsewhere"); the held-out runs' is.
#
#   experiments/device_regulator_zero_shot.sh [--seeds "1 2 3 4 5"] [--minutes 2.5] [--pretrain-minutes 6]
#       [--start heft_ls|heft] [--pretrain-graphs "rnnlm,nmt(layers=2),inception_v3"]
#       [--held-out "NMT-4|nmt(layers=4) ResNet-152|resnet(depth=152,update=1)"]
#       [--machine "k80(gpus=2,memory_fraction=0.39)"] [--arms "zero_shot untrained pergraph"]
#       [--jobs 1] [--bin build/bin] [--keep DIR] [--out out/device_regulator_zero_shot.md]
#
# --start heft_ls: every episode (pretraining and held out) starts from HEFT + local search's placement,
# the local search limited to --minutes of CPU and charged to the held-out run; heft: from HEFT's (session 21).
# --keep DIR keeps the runs and reuses the ones already there (rerun to add seeds). Not part of CI:
# the default is 5 × (6 + 2 × 2.5 × 2) ≈ 80 CPU-minutes (+ 25 with pergraph).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
SEEDS="1 2 3 4 5"
MINUTES=2.5
PRETRAIN=6
START=heft_ls
PRETRAIN_GRAPHS="rnnlm,nmt(layers=2),inception_v3"
HELD_OUT="NMT-4|nmt(layers=4) ResNet-152|resnet(depth=152,update=1)"
MACHINE="k80(gpus=2,memory_fraction=0.39)"
ARMS="zero_shot untrained"
JOBS=1
KEEP=""
OUT=out/device_regulator_zero_shot.md
die() { echo "device_regulator_zero_shot.sh: error: $*" >&2; exit 1; }
INVOCATION=""  # the invocation, for the page (arguments with spaces or | quoted)
for a_ in "$@"; do
  [[ "$a_" == *[\ \|]* ]] && a_="\"$a_\""
  INVOCATION+="${INVOCATION:+ }$a_"
done
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d'; exit 0 ;;
    --seeds|--minutes|--pretrain-minutes|--start|--pretrain-graphs|--held-out|--machine|--arms|--jobs|--bin|--keep|--out) ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  [[ $# -ge 2 ]] || die "$1 needs a value"
  case "$1" in
    --seeds) SEEDS="$2" ;; --minutes) MINUTES="$2" ;; --pretrain-minutes) PRETRAIN="$2" ;;
    --start) START="$2" ;; --pretrain-graphs) PRETRAIN_GRAPHS="$2" ;; --held-out) HELD_OUT="$2" ;;
    --machine) MACHINE="$2" ;; --arms) ARMS="$2" ;; --jobs) JOBS="$2" ;; --bin) BIN="$2" ;;
    --keep) KEEP="$2" ;; --out) OUT="$2" ;;
  esac
  shift 2
done
num='^[0-9]+([.][0-9]+)?$'
positive() { [[ "$1" =~ $num ]] && awk -v x="$1" 'BEGIN { exit !(x > 0) }'; }
positive "$MINUTES" || die "--minutes must be a number > 0, got '$MINUTES'"
positive "$PRETRAIN" || die "--pretrain-minutes must be a number > 0, got '$PRETRAIN'"
[[ "$START" == heft || "$START" == heft_ls ]] || die "--start must be heft or heft_ls, got '$START'"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive integer, got '$JOBS'"
for s in $SEEDS; do [[ "$s" =~ ^[0-9]+$ ]] || die "--seeds must be non-negative integers, got '$s'"; done
[[ -n "${SEEDS// /}" ]] || die "--seeds names no seed"
for a in $ARMS; do
  [[ "$a" == zero_shot || "$a" == untrained || "$a" == pergraph ]] || die "--arms takes zero_shot, untrained and pergraph, got '$a'"
done
for h in $HELD_OUT; do [[ "$h" == *"|"* ]] || die "--held-out entries are LABEL|GRAPH, got '$h'"; done
for b in place-train place place-baseline perf-model; do
  [[ -x "$BIN/$b" ]] || die "$BIN/$b not built (cmake --build build --target $b)"
done
command -v python3 >/dev/null || die "python3 is needed to write the table"
if [[ -n "$KEEP" ]]; then WORK="$KEEP"; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1

REG=(--set mode=iterative --set start="$START" --set episode_start=best --set episode_result=best
     --set episode_groups=16 --set fuse_above_groups=0 --set episodes_per_update=4 --set agent.entropy_target=0.5)
[[ "$START" == heft_ls ]] && REG+=(--set start_minutes="$MINUTES")

# run ID CMD…: CMD's stdout (JSON) in WORK/ID.json, stderr in ID.err; kept when ID.json exists.
run() {
  local id="$1"
  shift
  [[ -s "$WORK/$id.json" ]] && return 0
  rm -rf "${WORK:?}/$id"
  if ! "$@" --json --out "$WORK/$id" >"$WORK/$id.out" 2>"$WORK/$id.err"; then
    echo "device_regulator_zero_shot.sh: error: $id failed: $(tail -1 "$WORK/$id.err")" >&2
    touch "$WORK/$id.failed"
    return 1
  fi
  mv "$WORK/$id.out" "$WORK/$id.json"
  echo "$id: done" >&2
}
# sim ID GRAPH: perf-model simulate of ID's best.placement into ID.sim.
sim() {
  [[ -s "$WORK/$1.sim" || ! -f "$WORK/$1/best.placement" ]] && return 0
  "$BIN/perf-model" simulate --json --machine "$MACHINE" --graph "$2" --placement "$WORK/$1/best.placement" \
    >"$WORK/$1.sim" 2>/dev/null || rm -f "$WORK/$1.sim"
}
wait_slot() { while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n || true; done; }

tag="${START}_${MINUTES}cm"
for s in $SEEDS; do
  run "pre_${tag}_s$s" "$BIN/place-train" --env device --graph "$PRETRAIN_GRAPHS" --machine "$MACHINE" "${REG[@]}" \
    --minutes "$PRETRAIN" --clock cpu --seed "$s" &
  wait_slot
  if [[ " $ARMS " == *" untrained "* ]]; then
    run "untrained_${tag}_s$s" "$BIN/place-train" --env device --graph "$PRETRAIN_GRAPHS" --machine "$MACHINE" "${REG[@]}" \
      --minutes "$PRETRAIN" --max-updates 1 --set agent.learning_rate=1e-9 --clock cpu --seed "$s" &
    wait_slot
  fi
done
wait
compgen -G "$WORK/*.failed" >/dev/null && die "a pretraining run failed (see $WORK/*.err)"

for h in $HELD_OUT; do
  label="${h%%|*}" graph="${h#*|}"
  run "heft_$label" "$BIN/place-baseline" --env device --graph "$graph" --machine "$MACHINE" --method heft || true
  run "heft_ls_${MINUTES}cm_$label" "$BIN/place-baseline" --env device --graph "$graph" --machine "$MACHINE" \
    --method heft_ls --minutes "$MINUTES" || true
  for s in $SEEDS; do
    for arm in $ARMS; do
      case "$arm" in
        zero_shot) run "zs_${tag}_${label}_s$s" "$BIN/place" --env device --checkpoint "$WORK/pre_${tag}_s$s" --graph "$graph" \
                     --machine "$MACHINE" --samples 1000000 --samples-minutes "$MINUTES" --clock cpu --seed "$s" & ;;
        untrained) run "zu_${tag}_${label}_s$s" "$BIN/place" --env device --checkpoint "$WORK/untrained_${tag}_s$s" --graph "$graph" \
                     --machine "$MACHINE" --samples 1000000 --samples-minutes "$MINUTES" --clock cpu --seed "$s" & ;;
        pergraph) run "pg_${tag}_${label}_s$s" "$BIN/place-train" --env device --graph "$graph" --machine "$MACHINE" "${REG[@]}" \
                    --minutes "$MINUTES" --clock cpu --seed "$s" & ;;
      esac
      wait_slot
    done
  done
done
wait
for h in $HELD_OUT; do
  label="${h%%|*}" graph="${h#*|}"
  for f in "$WORK"/heft_"$label".json "$WORK"/heft_ls_"${MINUTES}"cm_"$label".json "$WORK"/z?_"${tag}_${label}"_s*.json \
           "$WORK"/pg_"${tag}_${label}"_s*.json; do
    [[ -e "$f" ]] && sim "$(basename "$f" .json)" "$graph"
  done
done
compgen -G "$WORK/*.failed" >/dev/null && die "a run failed (see $WORK/*.err)"

# Curves: per held-out graph, the best step time against CPU seconds of every seed's runs (HEFT + local search
# is one point, its end: in the table; each learned run's curve starts where its start placer ended).
if [[ -x "$BIN/plot-curves" ]]; then
  for h in $HELD_OUT; do
    label="${h%%|*}"
    curves=()
    for s in $SEEDS; do
      for pair in "zs:pretrained" "zu:untrained" "pg:trained on the graph"; do
        d="$WORK/${pair%%:*}_${tag}_${label}_s$s"
        [[ -f "$d/metrics.csv" ]] && curves+=(--curve "${pair#*:} s$s=$d")
      done
    done
    [[ ${#curves[@]} -gt 0 ]] && "$BIN/plot-curves" "${curves[@]}" --x "time_s,charts/elapsed_s" \
      --y "charts/best_effective_time_s,charts/best_step_time_s" --x-label "CPU seconds" --y-label "best step time (s)" \
      --title "$label held out ($MACHINE)" -o "${OUT%.md}_$label.png" >/dev/null 2>&1 || true
  done
fi

python3 - "$WORK" "$OUT" "$tag" "$MINUTES" "$PRETRAIN" "$START" "$MACHINE" "$PRETRAIN_GRAPHS" "$SEEDS" "$ARMS" \
  "$INVOCATION" $HELD_OUT <<'PYEOF'
import json, os, statistics, sys
work, out, tag, minutes, pretrain, start, machine, pre_graphs, seeds, arms, invocation = sys.argv[1:12]
held = [h.split("|", 1) for h in sys.argv[12:]]
seeds, arms = seeds.split(), arms.split()

def load(id_):
    p = os.path.join(work, id_ + ".json")
    return json.load(open(p)) if os.path.exists(p) else None

mismatch = []
def step(id_):
    """The re-simulated step time of ID's best placement (None: not run, no placement or out of memory),
    checked against the step time the run itself reported."""
    p = os.path.join(work, id_ + ".sim")
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        return None
    sim = json.load(open(p))
    if sim.get("oom"):
        return None
    j = load(id_) or {}
    own = (j.get("graphs") or [{}])[0].get("step_time_s") if "graphs" in j else j.get("best", {}).get("step_time_s")
    if own is None or abs(own - sim["makespan_s"]) > 1e-9 * sim["makespan_s"]:
        mismatch.append(f"{id_} (reported {own}, simulated {sim['makespan_s']})")
    return sim["makespan_s"]

L = []
P = L.append
P("# Device regulator zero-shot on held-out graphs")
P("")
P("Generated by `experiments/device_regulator_zero_shot.sh" + (" " + invocation if invocation else "") +
  "` (do not edit by hand).")
P("")
P(f"Machine `{machine}`; regulator episodes of 16 groups from `start={start}`'s placement"
  + (f" (the local search at most {minutes} CPU-minutes, charged to each held-out run)" if start == "heft_ls" else "")
  + f"; pretraining on `{pre_graphs}` for {pretrain} CPU-minutes per seed (not counted); every held-out run "
  f"{minutes} CPU-minutes, one thread. Step times: the best placement re-simulated by `perf-model simulate`.")
P("")
for s in seeds:
    j = load(f"pre_{tag}_s{s}")
    if j:
        P(f"- pretraining seed {s}: {j.get('updates')} updates, {j.get('episodes')} episodes, {j.get('seconds', 0):.0f} CPU-s")
P("")
names = {"zero_shot": ("zs", "pretrained, zero-shot"), "untrained": ("zu", "untrained, frozen"),
         "pergraph": ("pg", "trained on the graph")}
P("| held-out graph | HEFT | HEFT + local search | " + " | ".join(names[a][1] + " per seed (mean)" for a in arms) +
  " | below HEFT + LS (seeds) |")
P("|---|---|---|" + "---|" * len(arms) + "---|")
for label, graph in held:
    h, ls = step(f"heft_{label}"), step(f"heft_ls_{minutes}cm_{label}")
    cells, below = [], []
    for a in arms:
        pre = names[a][0]
        ts = [step(f"{pre}_{tag}_{label}_s{s}") for s in seeds]
        got = [t for t in ts if t is not None]
        per = " / ".join("—" if t is None else f"{t:.4f}" for t in ts)
        mean = f" ({statistics.mean(got):.4f}" + (f" ± {statistics.stdev(got):.4f}" if len(got) > 1 else "") + ")" if got else ""
        cells.append(per + mean)
        if ls is not None:
            below.append(f"{names[a][1]} {sum(t < ls for t in got)} of {len(got)}")
    f = lambda x: "—" if x is None else f"{x:.4f}"
    P(f"| {label} | {f(h)} | {f(ls)} | " + " | ".join(cells) + " | " + "; ".join(below) + " |")
P("")
for label, _ in held:
    png = os.path.splitext(os.path.basename(out))[0] + f"_{label}.png"
    if os.path.exists(os.path.join(os.path.dirname(out) or ".", png)):
        P(f"![{label} held out: best step time against CPU seconds]({png})")
        P("")
P("Every step time above is the re-simulation of the run's best.placement; " +
  ("it equals what each run reported." if not mismatch else "these differ from what the run reported: " + "; ".join(mismatch) + "."))
P("")
P("Per run (CPU seconds of the search, start placer included; samples = search episodes):")
P("")
P("| run | seconds | start placer s | samples / episodes |")
P("|---|---|---|---|")
for label, _ in held:
    for a in arms:
        for s in seeds:
            id_ = f"{names[a][0]}_{tag}_{label}_s{s}"
            j = load(id_)
            if not j:
                continue
            zs = j.get("stages", {}).get("zero_shot", {})
            n = zs.get("samples", j.get("episodes"))
            sec = zs.get("seconds", j.get("seconds"))
            sp = j.get("start_placer_seconds", zs.get("start_placer_seconds"))
            P(f"| {id_} | {'—' if sec is None else f'{sec:.1f}'} | {'—' if sp is None else f'{sp:.2f}'} | {n} |")
P("")
open(out + ".tmp", "w").write("\n".join(L) + "\n")
os.replace(out + ".tmp", out)
PYEOF
echo "wrote $OUT" >&2
