#!/usr/bin/env bash
# Pretrains the chip policy that ships in experiments/pretrained/chip/ (so that
# `place --checkpoint experiments/pretrained/chip ...` works on a fresh clone), and checks it
# zero-shot on Ariane133, a design it never saw, against random and greedy with the same wall time.
#
#   experiments/pretrain_chip.sh [--minutes M] [--clock wall|cpu] [--set k=v ...] [--designs flows|broad]
#                                [--finetune-minutes F] [--finetune-seeds "1 2 3"] [--finetune-set k=v ...]
#                                [--checkpoint DIR]
#                                [--bin build/bin] [--work DIR] [--reuse] [--resume] [--install]
#
# --clock cpu counts every budget in this process's CPU seconds (fair on a shared machine).
# --set k=v goes to pretraining, fine-tuning and the from-scratch run alike (agent.*, chip.*, …;
# the script's own settings come first: agent.learning_rate=0.002, episodes_per_update=16).
# --finetune-minutes F > 0 also fine-tunes the pretrained policy on Ariane133 for F minutes
# (`place --finetune-minutes F --samples 0`) and trains from scratch there for F minutes
# (`place-train`), both on --clock, side by side, and prints both bests; once per learner seed of
# --finetune-seeds (default "1"; both runs get the seed): $WORK/finetune_s<seed>.json each (a seed
# whose file is already in --work is not run again; nor is either run of a pair whose JSON,
# finetune_run_s<seed>.json or scratch_run_s<seed>.json, and run directory are there — so a pair can
# reuse from-scratch runs made before, e.g. linked from another --work) and finetune.json, every seed's
# pair and the means.
# --finetune-set k=v goes to the fine-tuning runs only, after the --set ones (e.g.
# agent.freeze_encoder=true: fine-tune the head, keep the pretrained encoder); recorded in each
# finetune_s<seed>.json as finetune_sets; seeds or kept runs made with other options are an error.
# Each pair also records the best so far at F/3 and 2F/3 (`best_at`, from the runs' metrics.csv) and the
# mean sampled cost of the last 10 updates (where each policy has got to); finetune.json adds the best so
# far after every minute (`by_minute`: means over the seeds whose run directories are in --work, and on
# how many the fine-tuned one is lower), and finetune_curves.png draws every seed's two curves.
# --checkpoint DIR uses that pretrained run (a place-train run directory or experiments/pretrained/chip)
# instead of pretraining (then --install is refused: nothing new to install).
# --reuse keeps a finished pretraining in --work (its checkpoint and train.json) instead of
# training again (to redo the evaluations, or to add --finetune-minutes afterwards).
# --resume continues a pretraining in --work that stopped early (killed, or the machine went away)
# from its last checkpoint (`place-train --resume`; --minutes is the new total), so that a pretraining
# of hours can span several sessions; without a checkpoint in --work it starts one.
#
# Designs (--designs): `flows` (default; the shipped policy's set) = the four TILOS flows designs
# (grouped by bin/group-netlist from their flat netlists and CT's groups.final, with their
# initial.plc); `broad` = those, CT's test netlists macro_tiles_10x10 and sample_clustered, and four
# synthetic designs of different sizes (`proxy-cost --seed 11..14 --synthetic ...`: 20–150 hard
# macros, grids 12 × 12 … 32 × 32). Never Ariane133 (held out) nor ibm01 or the synthetic seeds
# 21–22 that experiments/zero_shot_chip.sh checks. --install copies the run's checkpoint and result into
# experiments/pretrained/chip/ (checkpoints/latest.ckpt, config.pbtxt, result.json,
# zero_shot.json); without it the run stays in --work.
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/lib/synthetic_designs.sh

BIN=build/bin
MINUTES=20
WORK=""
INSTALL=0
REUSE=0
RESUME=0
CLOCK=wall
DESIGNS=flows
FT_MINUTES=0
FT_SEEDS=1
CKPT=""
SETS=(--set agent.learning_rate=0.002 --set episodes_per_update=16)
FT_SETS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes|--bin|--work|--clock|--designs|--set|--finetune-minutes|--finetune-seeds|--finetune-set|--checkpoint)
      [[ $# -ge 2 ]] || { echo "pretrain_chip.sh: error: $1 needs a value" >&2; exit 1; } ;;
  esac
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --install) INSTALL=1; shift ;;
    --reuse) REUSE=1; shift ;;
    --resume) RESUME=1; shift ;;
    --clock) CLOCK="$2"; shift 2 ;;
    --designs) DESIGNS="$2"; shift 2 ;;
    --set) SETS+=(--set "$2"); shift 2 ;;
    --finetune-minutes) FT_MINUTES="$2"; shift 2 ;;
    --finetune-seeds) FT_SEEDS="$2"; shift 2 ;;
    --finetune-set) FT_SETS+=(--set "$2"); shift 2 ;;
    --checkpoint) CKPT="$2"; shift 2 ;;
    -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
    *) echo "pretrain_chip.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
[[ -n ${FT_SEEDS// /} ]] || { echo "pretrain_chip.sh: error: --finetune-seeds is empty" >&2; exit 1; }
for s in $FT_SEEDS; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "pretrain_chip.sh: error: --finetune-seeds must be non-negative integers, got '$s'" >&2; exit 1; }
done
if [[ -n $CKPT ]]; then
  [[ -f $CKPT/checkpoints/latest.ckpt ]] || { echo "pretrain_chip.sh: error: --checkpoint $CKPT has no checkpoints/latest.ckpt" >&2; exit 1; }
  [[ $INSTALL == 0 ]] || { echo "pretrain_chip.sh: error: --install with --checkpoint: nothing new to install" >&2; exit 1; }
fi
[[ $DESIGNS == flows || $DESIGNS == broad ]] || { echo "pretrain_chip.sh: error: --designs must be flows or broad" >&2; exit 1; }
for b in place-train place place-baseline group-netlist proxy-cost; do
  [[ -x "$BIN/$b" ]] || { echo "pretrain_chip.sh: error: $BIN/$b not built (scripts/build.sh)" >&2; exit 1; }
done
[[ -n "$WORK" ]] || WORK=$(mktemp -d /tmp/pretrain_chip.XXXXXX)
mkdir -p "$WORK"
DATA=../shared/datasets/chip
ARGS=()
for d in ng45_ariane136 ng45_mempool_tile asap7_ariane136 sky130hd_ariane133; do
  F=$DATA/tilos_flows/$d
  [[ -f "$WORK/$d/netlist.pb.txt" ]] || \
    "$BIN/group-netlist" --netlist "$F/netlist_flat.pb.txt.gz" --groups "$F/groups.final.gz" --plc "$F/initial.plc" \
      -o "$WORK/$d" > /dev/null
  ARGS+=(--netlist "$WORK/$d/netlist.pb.txt" --plc "$F/initial.plc")
done
if [[ $DESIGNS == broad ]]; then
  for d in macro_tiles_10x10 sample_clustered; do
    ARGS+=(--netlist "$DATA/circuit_training/$d/netlist.pb.txt" --plc "$DATA/circuit_training/$d/initial.plc")
  done
  for spec in "11 macros=20,soft=100,ports=30,nets=800,grid=12x12" "12 macros=60,soft=250,ports=60,nets=2000,grid=20x20" \
              "13 macros=100,soft=150,ports=40,nets=1800,grid=24x24" \
              "14 macros=150,soft=300,ports=80,nets=3000,grid=32x32,utilization=0.5"; do
    read -r seed syn <<< "$spec"
    dir=$(synthetic_design "$BIN" "$WORK" "$seed" "$syn")
    ARGS+=(--netlist "$dir/netlist.pb.txt" --plc "$dir/initial.plc")
  done
fi
RUN=$WORK/run
if [[ -n $CKPT ]]; then
  RUN=$CKPT
  echo "using the pretrained run in $CKPT (no pretraining)" >&2
elif [[ $REUSE == 1 && -f "$WORK/run/checkpoints/latest.ckpt" && -s "$WORK/train.json" ]]; then
  echo "reusing the pretraining in $WORK/run" >&2
elif [[ $RESUME == 1 && -f "$WORK/run/checkpoints/latest.ckpt" ]]; then
  echo "resuming the pretraining in $WORK/run up to $MINUTES minutes ..." >&2
  "$BIN/place-train" --resume "$WORK/run" --minutes "$MINUTES" --json > "$WORK/train.json.tmp"
  mv "$WORK/train.json.tmp" "$WORK/train.json"
else
  echo "pretraining for $MINUTES minutes on $(( ${#ARGS[@]} / 4 )) designs ($DESIGNS) ..." >&2
  "$BIN/place-train" "${ARGS[@]}" --minutes "$MINUTES" --clock "$CLOCK" --seed 1 "${SETS[@]}" \
    --set checkpoint_minutes=2 --force --out "$WORK/run" --json > "$WORK/train.json"
fi

# Zero-shot on Ariane133 (held out) vs random and greedy with the same wall time.
A=$DATA/ariane133_ng45
"$BIN/place" --checkpoint "$RUN" --netlist "$A/netlist.pb.txt.gz" --plc "$A/initial.plc" --samples 32 \
  --clock "$CLOCK" --force --out "$WORK/zero_shot" --json > "$WORK/zero_shot.json" 2>/dev/null
ZS_SECONDS=$(python3 -c "import json;print(max(0.05, json.load(open('$WORK/zero_shot.json'))['seconds']/60))")
for m in random greedy; do
  "$BIN/place-baseline" --method "$m" --netlist "$A/netlist.pb.txt.gz" --plc "$A/initial.plc" --minutes "$ZS_SECONDS" \
    --clock "$CLOCK" --force --out "$WORK/$m" --json > "$WORK/$m.json" 2>/dev/null
done
python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
zs = json.load(open(w + "/zero_shot.json"))
print("zero-shot on ariane133 (held out): best %.6f in %.1f s (greedy policy %.6f, mean of samples %.6f)" % (
    zs["best"]["proxy_cost"], zs["seconds"], zs["stages"]["zero_shot"]["greedy_proxy_cost"],
    zs["stages"]["zero_shot"]["mean_sampled_proxy_cost"]))
for m in ("random", "greedy"):
    r = json.load(open("%s/%s.json" % (w, m)))
    print("%-7s same time (%s clock): best %.6f (%d complete placements)" % (m, zs.get("clock", "wall"),
          r["best"]["proxy_cost"], r["episodes"]))
EOF

# Fine-tuned for F minutes vs F minutes from scratch on Ariane133 (same settings, clock and seed).
# A run is finished when its JSON parses and its run directory has metrics.csv.
finished_run() {
  [[ -s $1 && -f $2/metrics.csv ]] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2> /dev/null
}
if [[ $FT_MINUTES != 0 ]]; then
  if [[ ${#FT_SETS[@]} -gt 0 ]]; then  # a bad --finetune-set fails here, not after a from-scratch run
    "$BIN/place" --checkpoint "$RUN" --netlist "$A/netlist.pb.txt.gz" --plc "$A/initial.plc" --samples 0 \
      "${SETS[@]}" "${FT_SETS[@]}" --force --out "$WORK/finetune_set_check" > /dev/null 2> "$WORK/finetune_set_check.err" ||
      { grep -v warning "$WORK/finetune_set_check.err" >&2; exit 1; }
    rm -rf "$WORK/finetune_set_check" "$WORK/finetune_set_check.err"
  fi
  for seed in $FT_SEEDS; do
    [[ ! -s "$WORK/finetune_s$seed.json" ]] || { echo "fine-tune seed $seed: kept from $WORK/finetune_s$seed.json" >&2; continue; }
    echo "fine-tuning on ariane133 for $FT_MINUTES minutes and the same from scratch, side by side, seed $seed ..." >&2
    FT_PID=""
    if finished_run "$WORK/finetune_run_s$seed.json" "$WORK/finetune_s$seed"; then
      echo "  fine-tuned run kept from $WORK/finetune_s$seed" >&2
    else
      { "$BIN/place" --checkpoint "$RUN" --netlist "$A/netlist.pb.txt.gz" --plc "$A/initial.plc" --samples 0 \
          --finetune-minutes "$FT_MINUTES" --clock "$CLOCK" --seed "$seed" "${SETS[@]}" "${FT_SETS[@]}" --force \
          --out "$WORK/finetune_s$seed" --json > "$WORK/finetune_run_s$seed.json.tmp" &&
        mv "$WORK/finetune_run_s$seed.json.tmp" "$WORK/finetune_run_s$seed.json"; } &
      FT_PID=$!
    fi
    if finished_run "$WORK/scratch_run_s$seed.json" "$WORK/scratch_s$seed"; then
      echo "  from-scratch run kept from $WORK/scratch_s$seed" >&2
    else
      "$BIN/place-train" --netlist "$A/netlist.pb.txt.gz" --plc "$A/initial.plc" --minutes "$FT_MINUTES" --clock "$CLOCK" \
        --seed "$seed" "${SETS[@]}" --force --out "$WORK/scratch_s$seed" --json > "$WORK/scratch_run_s$seed.json.tmp"
      mv "$WORK/scratch_run_s$seed.json.tmp" "$WORK/scratch_run_s$seed.json"
    fi
    [[ -z $FT_PID ]] || wait "$FT_PID"
    python3 - "$WORK" "$FT_MINUTES" "$seed" "${FT_SETS[*]}" <<'EOF'
import csv, json, sys
w, minutes, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
finetune_sets = [x for x in sys.argv[4].split() if x != "--set"]
# A kept run must have been made with this invocation's fine-tuning options (its config.pbtxt's first
# line is its command line): the fine-tuned one with every --finetune-set, the from-scratch one with none.
for run, want in (("finetune_s%d" % seed, True), ("scratch_s%d" % seed, False)):
    command = open("%s/%s/config.pbtxt" % (w, run)).readline()
    if any((" --set %s " % x in command + " ") != want for x in finetune_sets):
        sys.exit("pretrain_chip.sh: error: %s/%s was run %s --finetune-set %s; use another --work" % (
            w, run, "without" if want else "with", " ".join(finetune_sets)))
ft = json.load(open("%s/finetune_run_s%d.json" % (w, seed)))
sc = json.load(open("%s/scratch_run_s%d.json" % (w, seed)))
out = {"minutes": float(minutes), "clock": ft.get("clock", "wall"), "seed": seed, "finetune_sets": finetune_sets,
       "finetuned": {"best_proxy_cost": ft["best"]["proxy_cost"], "episodes": ft["stages"]["finetune"]["episodes"],
                     "zero_shot_greedy": ft["stages"]["zero_shot"]["greedy_proxy_cost"]},
       "scratch": {"best_proxy_cost": sc["designs"][0]["best_proxy_cost"], "episodes": sc["episodes"]}}
# The best so far at a third and two thirds of the budget, from each run's metrics.csv (time_s on the
# run's clock), and the mean sampled cost of the last 10 logged updates (where the policy has got to).
def curve(run, mean_column):
    rows = list(csv.DictReader(open("%s/%s/metrics.csv" % (w, run))))
    best = lambda t: min([float(r["charts/best_proxy_cost"]) for r in rows if float(r["time_s"]) <= t] or [float("nan")])
    last = [float(r[mean_column]) for r in rows if r.get(mean_column)][-10:]
    return [best(float(minutes) * 60 * f) for f in (1 / 3, 2 / 3)], sum(last) / len(last) if last else float("nan")
out["best_at_minutes"] = [float(minutes) / 3, 2 * float(minutes) / 3]
for key, run, column in (("finetuned", "finetune_s%d" % seed, "charts/proxy_cost"),
                         ("scratch", "scratch_s%d" % seed, "charts/mean_proxy_cost")):
    out[key]["best_at"], out[key]["last_updates_mean_proxy_cost"] = curve(run, column)
open("%s/finetune_s%d.json.tmp" % (w, seed), "w").write(json.dumps(out, indent=2) + "\n")
EOF
    mv "$WORK/finetune_s$seed.json.tmp" "$WORK/finetune_s$seed.json"
  done
  python3 - "$WORK" "$FT_SEEDS" "${FT_SETS[*]}" <<'EOF'
import csv, json, os, statistics, sys
w, seeds = sys.argv[1], [int(s) for s in sys.argv[2].split()]
finetune_sets = [x for x in sys.argv[3].split() if x != "--set"]
runs = [json.load(open("%s/finetune_s%d.json" % (w, s))) for s in seeds]
other = [r["seed"] for r in runs if r.get("finetune_sets", []) != finetune_sets]
if other:
    sys.exit("pretrain_chip.sh: error: seed(s) %s in %s were fine-tuned with other --finetune-set options than %s; "
             "use one --work per setting" % (" ".join(map(str, other)), w, " ".join(finetune_sets) or "none"))
if len({(r["minutes"], r["clock"]) for r in runs}) > 1:
    sys.exit("pretrain_chip.sh: error: the seeds' runs in %s have different budgets (%s); use one --work per budget" % (
        w, ", ".join(sorted("%g %s-minutes" % (r["minutes"], r["clock"]) for r in runs))))
# The best so far after every whole minute of each arm (`best_by_minute`, from the runs' metrics.csv on
# their clock), added to a seed's file whenever its two run directories are in --work (also for seeds
# run before it was recorded).
for r in runs:
    dirs = {"finetuned": "%s/finetune_s%d" % (w, r["seed"]), "scratch": "%s/scratch_s%d" % (w, r["seed"])}
    if "best_by_minute" in r["finetuned"] or not all(os.path.isfile(d + "/metrics.csv") for d in dirs.values()):
        continue
    for key, d in dirs.items():
        rows = [(float(x["time_s"]), float(x["charts/best_proxy_cost"])) for x in csv.DictReader(open(d + "/metrics.csv"))]
        r[key]["best_by_minute"] = [min([c for t, c in rows if t <= 60 * m] or [float("nan")])
                                    for m in range(1, int(r["minutes"]) + 1)]
    name = "%s/finetune_s%d.json" % (w, r["seed"])
    open(name + ".tmp", "w").write(json.dumps(r, indent=2) + "\n")
    os.replace(name + ".tmp", name)
def stat(xs):
    return {"mean": statistics.mean(xs), "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0, "values": xs}
ft = [r["finetuned"]["best_proxy_cost"] for r in runs]
sc = [r["scratch"]["best_proxy_cost"] for r in runs]
out = {"minutes": runs[0]["minutes"], "clock": runs[0]["clock"], "seeds": seeds, "runs": runs,
       "finetune_sets": finetune_sets,
       "finetuned": stat(ft), "scratch": stat(sc),
       "finetuned_better_on": sum(1 for a, b in zip(ft, sc) if a < b)}
timed = [r for r in runs if "best_at" in r["finetuned"]]  # seeds run before best_at was recorded lack it
if timed:
    out["best_at"] = {"minutes": timed[0]["best_at_minutes"], "seeds": [r["seed"] for r in timed]}
    for key in ("finetuned", "scratch"):
        out["best_at"][key] = [stat([r[key]["best_at"][i] for r in timed]) for i in range(2)]
curved = [r for r in runs if r["finetuned"].get("best_by_minute")]  # none for budgets under a minute
if curved:
    minutes = len(curved[0]["finetuned"]["best_by_minute"])
    out["by_minute"] = {"minutes": list(range(1, minutes + 1)), "seeds": [r["seed"] for r in curved]}
    for key in ("finetuned", "scratch"):
        out["by_minute"][key] = [statistics.mean(r[key]["best_by_minute"][i] for r in curved) for i in range(minutes)]
    out["by_minute"]["finetuned_better_on"] = [
        sum(1 for r in curved if r["finetuned"]["best_by_minute"][i] < r["scratch"]["best_by_minute"][i])
        for i in range(minutes)]
open(w + "/finetune.json.tmp", "w").write(json.dumps(out, indent=2) + "\n")
for r in runs:
    print("ariane133 seed %d, %g %s-minutes: fine-tuned best %.6f (%d episodes) vs from scratch %.6f (%d episodes)" % (
        r["seed"], r["minutes"], r["clock"], r["finetuned"]["best_proxy_cost"], r["finetuned"]["episodes"],
        r["scratch"]["best_proxy_cost"], r["scratch"]["episodes"]))
if out["finetune_sets"]:
    print("fine-tuning runs with: %s" % " ".join(out["finetune_sets"]))
print("mean over %d seeds: fine-tuned %.6f ± %.6f vs from scratch %.6f ± %.6f; fine-tuned better on %d of %d" % (
    len(seeds), out["finetuned"]["mean"], out["finetuned"]["sd"], out["scratch"]["mean"], out["scratch"]["sd"],
    out["finetuned_better_on"], len(seeds)))
if timed:
    for i, m in enumerate(out["best_at"]["minutes"]):
        print("best after %g minutes, mean over seeds %s: fine-tuned %.6f vs from scratch %.6f" % (
            m, " ".join(str(s) for s in out["best_at"]["seeds"]), out["best_at"]["finetuned"][i]["mean"],
            out["best_at"]["scratch"][i]["mean"]))
if curved:
    b = out["by_minute"]
    print("best so far after each minute, mean over seeds %s (fine-tuned better on how many):" % " ".join(map(str, b["seeds"])))
    for i, m in enumerate(b["minutes"]):
        print("  %3d min: fine-tuned %.6f vs from scratch %.6f (%d of %d)" % (
            m, b["finetuned"][i], b["scratch"][i], b["finetuned_better_on"][i], len(b["seeds"])))
EOF
  mv "$WORK/finetune.json.tmp" "$WORK/finetune.json"
  # Every seed's two curves (best so far vs minutes) in one picture.
  CURVES=()
  for seed in $FT_SEEDS; do
    [[ ! -f "$WORK/finetune_s$seed/metrics.csv" ]] || CURVES+=(--curve "fine-tuned s$seed=$WORK/finetune_s$seed")
    [[ ! -f "$WORK/scratch_s$seed/metrics.csv" ]] || CURVES+=(--curve "scratch s$seed=$WORK/scratch_s$seed")
  done
  if [[ ${#CURVES[@]} -gt 0 ]]; then
    "$BIN/plot-curves" "${CURVES[@]}" --x-scale 0.016666666666666666 --x-label "$CLOCK minutes" \
      --y-label "best proxy cost so far" --title "ariane133: fine-tuned vs from scratch" -o "$WORK/finetune_curves.png" > /dev/null
  fi
fi
if [[ $INSTALL == 1 ]]; then
  DEST=experiments/pretrained/chip
  mkdir -p "$DEST/checkpoints"
  cp "$WORK/run/checkpoints/latest.ckpt" "$DEST/checkpoints/latest.ckpt"
  cp "$WORK/run/config.pbtxt" "$WORK/run/result.json" "$WORK/run/curve.png" "$DEST/"
  cp "$WORK/zero_shot.json" "$DEST/zero_shot.json"
  for m in random greedy; do cp "$WORK/$m.json" "$DEST/$m.json"; done
  [[ ! -f "$WORK/finetune.json" ]] || cp "$WORK/finetune.json" "$DEST/finetune.json"
  [[ ! -f "$WORK/finetune_curves.png" ]] || cp "$WORK/finetune_curves.png" "$DEST/finetune_curves.png"
  echo "installed into $DEST" >&2
fi
