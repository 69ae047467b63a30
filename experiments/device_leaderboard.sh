#!/usr/bin/env bash
# Device placement leaderboard in the papers' table layout (device_placement_notes §5.2/5.3):
# for RNNLM, NMT-2/4/8, Inception-V3 and ResNet-152 on 2 and 4 (NMT-8: 8) GPUs of the K80-like
# preset (plus its CPU), every classic baseline of `place-baseline --env device` — single GPU,
# expert, METIS, Scotch, HEFT, m-TOPO, m-ETF, m-SCT — with the simulated step time, the
# placement wall time and the ratio to single GPU next to the published ratios (§5.5), then
# the §5.6 acceptance checks, each "pass" or "fail, because …" computed from the runs, and a
# link-latency sensitivity of the expert on RNNLM. Every number in the tables comes from the
# binaries' own result.json / JSON output (nothing is typed by hand).
#
#   experiments/device_leaderboard.sh [--memory-fraction 0.39] [--baechi-memory-fraction 0.4] [--bin build/bin]
#                                     [--out docs/device_leaderboard.md] [--keep DIR]
#                                     [--rl-minutes M] [--rl-clock wall|cpu] [--rl-seeds "1 2 3"]
#                                     [--rl-rows "NMT-2:2 RNNLM:2"] [--rl-jobs 1] [--rl-methods "ppo seq2seq hdp regulator regulator_ls"]
#
# RL column: with --rl-minutes M > 0 (default 0: RL is not run, so the script stays about a minute
# of CPU) every selected row (label:GPUs of the table below; default all) runs `place-train --env
# device --set memory_mask=true --minutes M --seed S` once per seed (--rl-jobs of them at a time),
# re-simulates its best.placement with perf-model, and the RL cell shows the mean ± sd over seeds of
# the simulated step time, with the training wall and CPU time in the wall-time table. --rl-clock cpu
# counts M in each run's own CPU time (place-train --clock cpu: fair on a shared machine; such runs
# are kept apart from wall-clock runs in DIR, as rl_<M>cm_…). With --keep
# the runs already in DIR are reused, and every RL run found in DIR with the same M fills the
# table (so rows may be run by separate invocations with different seeds). The script is not
# part of CI.
# --rl-methods (default ppo) adds the papers' RL placers as columns, each run like the ppo one (memory
# mask on, same budget, clock and seeds): seq2seq = the 2017 placer (--config
# experiments/configs/seq2seq_2017.pbtxt: LSTM encoder/decoder with attention, REINFORCE), hdp = HDP's
# grouper + placer (--config experiments/configs/hdp_2018.pbtxt, the paper's column: G = 256, LSTM
# placer, REINFORCE). Their runs are DIR/rl-seq2seq_<M>…, DIR/rl-hdp_<M>… (ppo: DIR/rl_<M>…).
# regulator (default off) = the same GNN + PPO on the iterative MDP started from HEFT's placement
# (docs/device_regulator.md: --set mode=iterative --set start=heft --set episode_start=best --set
# episode_result=best --set episode_groups=16 --set fuse_above_groups=0 --set episodes_per_update=4
# --set agent.entropy_target=0.5 (the entropy target keeps PPO from collapsing for good), no memory mask: an
# out-of-memory placement is never kept), DIR/rl-regulator_<M>…. regulator_ls = the same from HEFT + local
# search's placement (--set start=heft_ls --set start_minutes=M: the local search may spend the whole
# budget; its CPU time is charged to the run, and learning gets what is left), DIR/rl-regulator_ls_<M>….
#
# The memory fraction scales the K80's 12 GB: 0.39 → 4.68 GB per GPU, below NMT-2's
# single-device peak (4.83 GB) and above Inception-V3's (4.50 GB) and RNNLM's (2.86 GB), so that
# as in the papers NMT does not fit one GPU while RNNLM and Inception do.
# Check 4 of §5.6 runs on the Baechi preset (baechi(gpus=4,memory_fraction=0.4)); a link-latency
# sweep (and a CPU-only embedding run) shows what per-transfer cost the papers' ratios imply. Runs are single-threaded and short
# (the whole script without --rl-minutes: about a minute of CPU). --keep DIR reuses results already in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin
FRACTION=0.39
BAECHI_FRACTION=0.4
OUT=out/device_leaderboard.md   # tracked docs are rewritten only when asked: --out docs/device_leaderboard.md
KEEP=""
RL_MINUTES=0
RL_SEEDS="1 2 3"
RL_ROWS=""
RL_JOBS=1
RL_CLOCK=wall
RL_METHODS=ppo
# The invocation, for the page (directories as DIR / OUT).
DL_INVOCATION=""
for a_ in "$@"; do
  [[ "$a_" == *" "* ]] && a_="\"$a_\""
  DL_INVOCATION+="${DL_INVOCATION:+ }$a_"
done
export DL_INVOCATION
while [[ $# -gt 0 ]]; do
  case "$1" in
    --memory-fraction) FRACTION="$2"; shift 2 ;;
    --baechi-memory-fraction) BAECHI_FRACTION="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --rl-minutes) RL_MINUTES="$2"; shift 2 ;;
    --rl-seeds) RL_SEEDS="$2"; shift 2 ;;
    --rl-rows) RL_ROWS="$2"; shift 2 ;;
    --rl-jobs) RL_JOBS="$2"; shift 2 ;;
    --rl-clock) RL_CLOCK="$2"; shift 2 ;;
    --rl-methods) RL_METHODS="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo pipefail$/{/^set -euo/d;p}' "$0"; exit 0 ;;
    *) echo "device_leaderboard.sh: error: unknown argument $1" >&2; exit 1 ;;
  esac
done
# A page that keeps hand-written text below its marker starts from the tracked doc.
mkdir -p "$(dirname "$OUT")"
[ -e "$OUT" ] || [ ! -e "docs/device_leaderboard.md" ] || cp "docs/device_leaderboard.md" "$OUT"
[[ "$RL_MINUTES" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "device_leaderboard.sh: error: --rl-minutes must be a number >= 0, got '$RL_MINUTES'" >&2; exit 1; }
[[ "$RL_CLOCK" == wall || "$RL_CLOCK" == cpu ]] || { echo "device_leaderboard.sh: error: --rl-clock must be wall or cpu, got '$RL_CLOCK'" >&2; exit 1; }
for m_ in $RL_METHODS; do
  [[ "$m_" == ppo || "$m_" == seq2seq || "$m_" == hdp || "$m_" == regulator || "$m_" == regulator_ls ]] || { echo "device_leaderboard.sh: error: --rl-methods takes ppo, seq2seq, hdp, regulator and regulator_ls, got '$m_'" >&2; exit 1; }
done
[[ -n "${RL_METHODS// /}" ]] || { echo "device_leaderboard.sh: error: --rl-methods must name at least one of ppo, seq2seq, hdp, regulator, regulator_ls" >&2; exit 1; }
RL_TAG=m
[[ "$RL_CLOCK" == cpu ]] && RL_TAG=cm
[[ "$RL_JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "device_leaderboard.sh: error: --rl-jobs must be a positive integer, got '$RL_JOBS'" >&2; exit 1; }
for s_ in $RL_SEEDS; do
  [[ "$s_" =~ ^[0-9]+$ ]] || { echo "device_leaderboard.sh: error: --rl-seeds must be non-negative integers, got '$s_'" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "device_leaderboard.sh: error: python3 is needed to write the table" >&2; exit 1; }
NEEDED=(place-baseline perf-model)
[[ "$RL_MINUTES" != 0 ]] && NEEDED+=(place-train)
for b in "${NEEDED[@]}"; do
  [[ -x "$BIN/$b" ]] || { echo "device_leaderboard.sh: error: $BIN/$b not built (cmake --build build --target $b)" >&2; exit 1; }
done
if [[ -n "$KEEP" ]]; then WORK="$KEEP"; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi

# label|graph spec|GPUs
ROWS=(
  "RNNLM|rnnlm|2" "RNNLM|rnnlm|4"
  "NMT-2|nmt(layers=2)|2" "NMT-2|nmt(layers=2)|4"
  "NMT-4|nmt(layers=4)|2" "NMT-4|nmt(layers=4)|4"
  "NMT-8|nmt(layers=8)|8"
  "Inception-V3|inception_v3|2" "Inception-V3|inception_v3|4"
  "ResNet-152|resnet(depth=152,update=1)|2" "ResNet-152|resnet(depth=152,update=1)|4"
)
# column key|method|extra flags
COLUMNS=(
  "single|single|" "expert|expert|" "metis|metis|" "scotch|scotch|" "heft|heft|" "m_topo|m_topo|"
  "m_etf|m_etf|" "m_sct|m_sct|"
  # variants: the papers' Scotch with the CPU, ColocRL's split expert for unlayered graphs,
  # Baechi's schedule-based memory accounting
  "scotch_cpu|scotch|--set devices=all" "expert_split|expert|--set expert_split_unlayered=true"
  "m_etf_sched|m_etf|--set memory_accounting=schedule" "m_sct_sched|m_sct|--set memory_accounting=schedule"
  # HEFT, then best-improvement local search (docs/device_regulator.md): stops at a local optimum
  # or after 2.5 minutes of its own CPU time (--minutes counts CPU time for heft_ls; HEFT's included),
  # the regulator's budget
  "heft_ls|heft_ls|--minutes 2.5"
)
BAECHI_ROWS=("Inception-V3|inception_v3|4" "NMT-2|nmt(layers=2)|4" "RNNLM|rnnlm|4")
BAECHI_COLUMNS=(
  "single|single|" "expert|expert|" "m_etf|m_etf|" "m_sct|m_sct|"
  "m_etf_sched|m_etf|--set memory_accounting=schedule" "m_sct_sched|m_sct|--set memory_accounting=schedule"
)
LATENCIES=(0 1.34e-4 1e-3 3e-3 1e-2)

# run_one ID GRAPH MACHINE METHOD [EXTRA FLAGS…]: place-baseline's JSON in $WORK/ID.json (exit 0
# or 2 kept in ID.rc), its CPU time in ID.time, and perf-model simulate --machine of its
# best.placement in ID.sim. Results already in $WORK (--keep) are reused.
run_one() {
  local id="$1" graph="$2" machine="$3" method="$4"
  shift 4
  [[ -s "$WORK/$id.json" ]] && return 0
  rm -rf "${WORK:?}/$id"
  set +e
  /usr/bin/time -f "%U %S %e" -o "$WORK/$id.time" "$BIN/place-baseline" --env device --graph "$graph" \
    --machine "$machine" --method "$method" "$@" --json --pictures svg --out "$WORK/$id" \
    >"$WORK/$id.out" 2>"$WORK/$id.err"
  local rc=$?
  set -e
  if [[ $rc -ne 0 && $rc -ne 2 ]]; then
    echo "device_leaderboard.sh: error: $id failed: $(tail -1 "$WORK/$id.err")" >&2
    exit 1
  fi
  echo "$rc" >"$WORK/$id.rc"
  mv "$WORK/$id.out" "$WORK/$id.json"
  if [[ -f "$WORK/$id/best.placement" ]]; then
    set +e
    "$BIN/perf-model" simulate --json --machine "$machine" --graph "$graph" \
      --placement "$WORK/$id/best.placement" >"$WORK/$id.sim" 2>/dev/null
    set -e
  fi
  echo "$id: exit $rc" >&2
}

# run_rl ID GRAPH MACHINE SEED METHOD: place-train --env device (memory mask on) for RL_MINUTES; its
# JSON in $WORK/ID.json, CPU time in ID.time, perf-model simulate of its best.placement in ID.sim.
run_rl() {
  local id="$1" graph="$2" machine="$3" seed="$4" method="$5"
  local extra=() mask=(--set memory_mask=true)
  case "$method" in
    seq2seq) extra=(--config experiments/configs/seq2seq_2017.pbtxt) ;;
    hdp) extra=(--config experiments/configs/hdp_2018.pbtxt) ;;
    regulator) extra=(--set mode=iterative --set start=heft --set episode_start=best --set episode_result=best
                      --set episode_groups=16 --set fuse_above_groups=0 --set episodes_per_update=4
                      --set agent.entropy_target=0.5)
               mask=() ;;
    regulator_ls) extra=(--set mode=iterative --set start=heft_ls --set start_minutes="$RL_MINUTES" --set episode_start=best
                         --set episode_result=best --set episode_groups=16 --set fuse_above_groups=0
                         --set episodes_per_update=4 --set agent.entropy_target=0.5)
                  mask=() ;;
  esac
  [[ -s "$WORK/$id.json" ]] && return 0
  rm -rf "${WORK:?}/$id"
  set +e
  /usr/bin/time -f "%U %S %e" -o "$WORK/$id.time" "$BIN/place-train" --env device --graph "$graph" \
    --machine "$machine" --minutes "$RL_MINUTES" --clock "$RL_CLOCK" --seed "$seed" "${extra[@]}" "${mask[@]}" --json --out "$WORK/$id" \
    >"$WORK/$id.out" 2>"$WORK/$id.err"
  local rc=$?
  set -e
  if [[ $rc -ne 0 && $rc -ne 2 ]]; then  # 2 = ran, infeasible (out of memory): its JSON says so
    echo "device_leaderboard.sh: error: $id failed: $(tail -1 "$WORK/$id.err")" >&2
    touch "$WORK/$id.failed"
    return 1
  fi
  if [[ -f "$WORK/$id/best.placement" ]]; then
    "$BIN/perf-model" simulate --json --machine "$machine" --graph "$graph" \
      --placement "$WORK/$id/best.placement" >"$WORK/$id.sim" 2>/dev/null || true
  fi
  mv "$WORK/$id.out" "$WORK/$id.json"
  echo "$id: done" >&2
}

START=$(date +%s)
if [[ "$RL_MINUTES" != 0 ]]; then
  for row in "${ROWS[@]}"; do
    IFS='|' read -r label graph gpus <<<"$row"
    if [[ -n "$RL_ROWS" && " $RL_ROWS " != *" $label:$gpus "* ]]; then continue; fi
    for method in $RL_METHODS; do
      prefix=rl
      [[ "$method" != ppo ]] && prefix="rl-$method"
      for seed in $RL_SEEDS; do
        rm -f "$WORK/${prefix}_${RL_MINUTES}${RL_TAG}_${label}_${gpus}_s${seed}.failed"
        run_rl "${prefix}_${RL_MINUTES}${RL_TAG}_${label}_${gpus}_s${seed}" "$graph" "k80(gpus=$gpus,memory_fraction=$FRACTION)" "$seed" "$method" &
        while [[ $(jobs -rp | wc -l) -ge $RL_JOBS ]]; do wait -n || true; done
      done
    done
  done
  wait
  if compgen -G "$WORK/rl*_*.failed" >/dev/null; then
    echo "device_leaderboard.sh: error: an RL run failed (see $WORK/rl*_*.err)" >&2
    exit 1
  fi
fi
for row in "${ROWS[@]}"; do
  IFS='|' read -r label graph gpus <<<"$row"
  for col in "${COLUMNS[@]}"; do
    IFS='|' read -r key method extra <<<"$col"
    # shellcheck disable=SC2086
    run_one "${label}_${gpus}_${key}" "$graph" "k80(gpus=$gpus,memory_fraction=$FRACTION)" "$method" $extra
  done
done

# Check 4 of §5.6 on the Baechi preset (its link and usable memory) at memory fraction BAECHI_FRACTION.
for row in "${BAECHI_ROWS[@]}"; do
  IFS='|' read -r label graph gpus <<<"$row"
  for col in "${BAECHI_COLUMNS[@]}"; do
    IFS='|' read -r key method extra <<<"$col"
    # shellcheck disable=SC2086
    run_one "baechi_${label}_${gpus}_${key}" "$graph" "baechi(gpus=$gpus,memory_fraction=$BAECHI_FRACTION)" "$method" $extra
  done
done

# Transfer-cost sensitivity: the K80 preset (2 GPUs + CPU, 12 GB) with a per-transfer latency
# added to its link (machine files in $WORK).
for lat in "${LATENCIES[@]}"; do
  f="$WORK/k80_latency_$lat.pbtxt"
  cat >"$f" <<EOF
name: "k80_latency_$lat"
device { name: "gpu" type: "gpu" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 memory_bytes: 12e9 }
device { name: "cpu:0" type: "cpu" flops_per_s: 6.5e11 bytes_per_s: 3.2e10 memory_bytes: 128e9 }
link { preset: "placeto" latency_s: $lat }
EOF
  for g in rnnlm inception_v3; do
    run_one "latency_${lat}_${g}_single" "$g" "$f" single
    run_one "latency_${lat}_${g}_expert" "$g" "$f" expert --set expert_split_unlayered=true
    run_one "latency_${lat}_${g}_scotch_cpu" "$g" "$f" scotch --set devices=all
    run_one "latency_${lat}_${g}_heft" "$g" "$f" heft
  done
done
# The CPU's part: RNNLM with its embedding lookups (gather) CPU-only, as in ColocRL's setting.
cat >"$WORK/k80_cpu_gather.pbtxt" <<EOF
name: "k80_cpu_gather"
device { name: "gpu" type: "gpu" count: 2 flops_per_s: 4.37e12 bytes_per_s: 2.4e11 memory_bytes: 12e9 }
device { name: "cpu:0" type: "cpu" flops_per_s: 6.5e11 bytes_per_s: 3.2e10 memory_bytes: 128e9 }
link { preset: "placeto" }
cpu_only_kind: "gather"
EOF
run_one cpu_gather_rnnlm_single rnnlm "$WORK/k80_cpu_gather.pbtxt" single
run_one cpu_gather_rnnlm_expert rnnlm "$WORK/k80_cpu_gather.pbtxt" expert
END=$(date +%s)

python3 - "$WORK" "$OUT" "$FRACTION" "$((END - START))" "$BAECHI_FRACTION" "$RL_MINUTES$RL_TAG" "${ROWS[@]}" <<'PYEOF'
import json, os, re, sys, datetime, statistics

work, out, fraction, wall = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
baechi_fraction = float(sys.argv[5])
rl_minutes_arg = sys.argv[6]
rows = [r.split("|") for r in sys.argv[7:]]

def load(id_):
    p = os.path.join(work, id_ + ".json")
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        return None
    j = json.load(open(p))
    sim = os.path.join(work, id_ + ".sim")
    j["_sim"] = json.load(open(sim)) if os.path.exists(sim) and os.path.getsize(sim) > 0 else None
    t = os.path.join(work, id_ + ".time")
    j["_cpu"] = sum(map(float, open(t).read().split("\n")[-2].split()[:2])) if os.path.exists(t) else None
    return j

def step(j):
    if j is None or "infeasible" in j:
        return None
    return j["best"]["step_time_s"]

def oom(j):
    return j is not None and "best" in j and bool(j["best"].get("oom"))

def feasible(j):  # a step time, not out of memory (an infeasible run's JSON may carry a partial "best")
    return step(j) is not None and not j["best"].get("oom", False)

MAIN = [("single", "1-GPU"), ("expert", "Expert"), ("metis", "METIS"), ("scotch", "Scotch"), ("heft", "HEFT"),
        ("m_topo", "m-TOPO"), ("m_etf", "m-ETF"), ("m_sct", "m-SCT")]
VARIANTS = [("scotch_cpu", "Scotch + CPU"), ("expert_split", "Expert, split (ColocRL)"),
            ("m_etf_sched", "m-ETF, schedule memory"), ("m_sct_sched", "m-SCT, schedule memory"),
            ("heft_ls", "HEFT + local search")]

data = {}
for label, graph, gpus in rows:
    for key, _ in MAIN + VARIANTS:
        data[(label, gpus, key)] = load(f"{label}_{gpus}_{key}")

# RL runs in $WORK: rl_<M>m_<label>_<gpus>_s<seed>.json (place-train --json; rl_<M>cm_… on the CPU
# clock). The budget shown is --rl-minutes (with its clock), or when it is 0 the largest budget found
# (so a --keep rerun keeps the RL column).
# The other RL placers (--rl-methods seq2seq hdp): rl-<method>_<M>…, same budget key.
rl_files = {}
other_files = {}  # method -> budget key -> runs
for f in os.listdir(work):
    m = re.match(r"rl(?:-(seq2seq|hdp|regulator_ls|regulator))?_([0-9.]+c?m)_(.+)_([0-9]+)_s([0-9]+)\.json$", f)
    if m:
        files = rl_files if m.group(1) is None else other_files.setdefault(m.group(1), {})
        files.setdefault(m.group(2), []).append((m.group(3), m.group(4), int(m.group(5)), f[:-5]))
rl_key = rl_minutes_arg if rl_minutes_arg.rstrip("cm") != "0" else \
    (max(rl_files, key=lambda k: float(k.rstrip("cm"))) if rl_files else None)
rl_m = rl_key.rstrip("cm") if rl_key else None
rl_clock = "CPU" if rl_key and rl_key.endswith("cm") else "wall"
def rl_run(id_):
    j = json.load(open(os.path.join(work, id_ + ".json")))
    g = j["graphs"][0]
    simp = os.path.join(work, id_ + ".sim")
    sim = json.load(open(simp)) if os.path.exists(simp) and os.path.getsize(simp) > 0 else None
    tp = os.path.join(work, id_ + ".time")
    cpu = sum(map(float, open(tp).read().split("\n")[-2].split()[:2])) if os.path.exists(tp) else None
    return {
        "t": g.get("step_time_s"), "oom": g.get("oom", False), "wall": j["seconds"], "cpu": cpu,
        "episodes": j["episodes"],
        "cpu_util": max([d["utilisation"] for d in g.get("devices", []) if d["name"].startswith("cpu")] or [0]),
        "sim_ok": sim is not None and g.get("step_time_s") is not None and sim["makespan_s"] == g["step_time_s"]}

rl = {}  # (label, gpus) -> list of {seed, t, oom, wall, cpu, episodes, sim_ok}
for label, gpus, seed, id_ in sorted(rl_files.get(rl_key, [])):
    rl.setdefault((label, gpus), []).append(dict(seed=seed, **rl_run(id_)))
OTHER = [("seq2seq", "seq2seq (2017)"), ("hdp", "HDP"), ("regulator", "Regulator (from HEFT)"),
         ("regulator_ls", "Regulator (from HEFT + local search)")]
other = {}  # method -> (label, gpus) -> runs, at the same budget key as the ppo column
for meth, _ in OTHER:
    for label, gpus, seed, id_ in sorted(other_files.get(meth, {}).get(rl_key, [])):
        other.setdefault(meth, {}).setdefault((label, gpus), []).append(dict(seed=seed, **rl_run(id_)))
OTHER = [(m, n) for m, n in OTHER if m in other]  # columns only for the placers that ran

def rl_times(label, gpus, runs_of=None):
    runs_of = rl if runs_of is None else runs_of
    return [r["t"] for r in runs_of.get((label, gpus), []) if r["t"] is not None and not r["oom"]]

def rl_mean(label, gpus, runs_of=None):
    t = rl_times(label, gpus, runs_of)
    return statistics.mean(t) if t else None

def rl_cell(label, gpus, r, runs_of=None):
    runs_of = rl if runs_of is None else runs_of
    runs = runs_of.get((label, gpus))
    if not runs:
        return "—, not run"
    t = rl_times(label, gpus, runs_of)
    if not t:
        return f"no feasible placement ({len(runs)} seeds)"
    mean = statistics.mean(t)
    sd = statistics.stdev(t) if len(t) > 1 else 0.0
    s = f"{mean:.3f} ± {sd:.3f}"
    if r[0]:
        s += f" ({mean / r[0]:.2f}×)"
    s += f", n={len(t)}"
    if len(t) < len(runs):
        s += f" ({len(runs) - len(t)} OOM/none)"
    return s

def ref(label, gpus):
    """The row's reference: single GPU when it fits, else the expert (HDP's convention)."""
    s = data[(label, gpus, "single")]
    if feasible(s):
        return step(s), "1-GPU"
    e = data[(label, gpus, "expert")]
    return (step(e) if feasible(e) else None), "Expert"

def cell(j, r):
    if j is None:
        return "—"
    if "infeasible" in j:
        return "infeasible (no room)"
    t = step(j)
    s = f"{t:.3f}"
    if oom(j):
        return f"OOM ({s} if it fitted)"
    if r[0]:
        s += f" ({t / r[0]:.2f}×)"
    return s

def fmt(x):
    return "—" if x is None else f"{x:.2f}"

def wall_s(j):
    if j is None:
        return "—"
    w = j.get("placement_wall_s", 0)
    return f"{w * 1e3:.1f} ms" if w < 1 else f"{w:.2f} s"

L = []
P = L.append
now = datetime.datetime.utcnow().strftime("%Y-%m-%d")
cap = 12e9 * fraction
P("# Device placement leaderboard (simulated)")
P("")
P("Generated by `experiments/device_leaderboard.sh` (do not edit by hand; rerun it). "
  f"{now}, this 2-core VM shared with other builds; the runs took {wall} s wall (0 when every result "
  "was reused from `--keep`).")
P("")
P("Command that wrote this page: `experiments/device_leaderboard.sh " + os.environ.get("DL_INVOCATION", "") + "` "
  "(RL rows of earlier invocations into the same `--keep` directory with the same budget and clock are included). "
  "Without `--rl-minutes` the script runs no RL (about a minute of CPU).")
P("")
P("Setting: the K80-like preset `k80(gpus=k,memory_fraction=%g)` — k K80 dies (4.37 TFLOP/s, 240 GB/s, "
  "%.2f GB each = 12 GB × %g) and one Haswell-class CPU (650 GFLOP/s, 128 GB), Placeto's link (7.6 GB/s, "
  "25 µs bus hold, 5.7 µs after each op) plus the preset's default 134 µs latency per transfer (Baechi's measured "
  "TensorFlow GPU→GPU copy intercept; docs/device_placement.md \"Link latency\"). The memory fraction is chosen so that, as in the papers, NMT does "
  "not fit one GPU (NMT-2 peaks at 4.83 GB on one device) while RNNLM (2.86 GB) and Inception-V3 (4.50 GB) "
  "do; ResNet-152 (batch 32) does not fit either, so neither its 1-GPU nor its HDP expert (one GPU) runs. Graphs are the generators' defaults (docs/device_graphs.md): batch 64 RNNLM/NMT, 32 Inception. "
  "Step time = the placed-graph simulator's makespan of one training step (forward, backward, Adam update) "
  "in seconds; every placement's `best.placement` was re-simulated by `perf-model simulate --machine` and "
  "gave the same step time (column \"sim ✓\")." % (fraction, cap / 1e9, fraction))
P("")
P("Search placers (METIS, Scotch, HEFT, m-*) place onto the GPUs only (`devices=accelerators`, Baechi's "
  "setting); the variants below add the CPU (ColocRL's Scotch). m-ETF/m-SCT count memory statically by "
  "default (every byte for the whole step: never OOM in the simulator); m-SCT solves its LP with GLPK in "
  "windows of 500 ops. No method here fuses the graph (`fuse=false`): every graph is small enough.")
P("")
P("## Step time (s) and ratio to the reference")
P("")
P("Ratio = T / T_ref, with T_ref = 1-GPU where the model fits one GPU, else the expert (marked `ref: Expert`) — "
  "ColocRL's and HDP's within-row convention (§5.1); < 1 is faster. \"OOM\" = the simulated peak exceeds a "
  "GPU's memory; \"infeasible\" = the placer found no device with room (exit 2). RL = `place-train --env device "
  "--set memory_mask=true` (shared GNN policy + PPO, one-shot episodes, graphs over 300 groups fused to 128), "
  f"{rl_m or '—'} min {rl_clock} per seed: mean ± sd over seeds of the simulated step time of each seed's best placement "
  "(ratio of the mean); \"not run\" = no RL run for that row in this invocation's results." +
  (" The papers' RL placers, same budget, clock, seeds and memory mask (`--rl-methods`): " +
   "; ".join({"seq2seq": "seq2seq (2017) = `--config experiments/configs/seq2seq_2017.pbtxt` (Mirhoseini et al. "
                         "2017: LSTM encoder/decoder with attention over the fused groups, REINFORCE)",
              "hdp": "HDP = `--config experiments/configs/hdp_2018.pbtxt` (Hierarchical Device Placement 2018, the "
                     "paper's column: a feed-forward grouper of the unfused co-location groups into 256 groups + the "
                     "LSTM placer, one REINFORCE loss)",
              "regulator": "Regulator = the GNN + PPO on the iterative MDP started from HEFT's placement, episodes of 16 "
                           "groups, the best placement seeding the next episode, unfused, no memory mask, entropy target 0.5 "
                           "(docs/device_regulator.md)",
              "regulator_ls": "Regulator (from HEFT + local search) = the GNN + PPO on the iterative MDP started from "
                              "HEFT + local search's placement (`start=heft_ls` with `start_minutes` = the budget: the "
                              "local search's CPU time is charged to the run, learning gets what it leaves), episodes "
                              "of 16 groups, the best placement seeding the next episode, unfused, no memory mask, "
                              "entropy target 0.5 (docs/device_regulator.md)"}[m]
             for m, _ in OTHER) + "." if OTHER else ""))
P("")
P("| Model | #GPU | 1-GPU peak (GB) | ref | " + " | ".join(n for _, n in MAIN) + " | RL" + (" (GNN + PPO)" if OTHER else "") +
  "".join(f" | {n}" for _, n in OTHER) + " | sim ✓ |")
P("|---|---|---|---|" + "---|" * len(MAIN) + "---|" * (1 + len(OTHER)) + "---|")
for label, graph, gpus in rows:
    r = ref(label, gpus)
    cells = [cell(data[(label, gpus, k)], r) for k, _ in MAIN]
    ok = all(j["_sim"] is not None and j["_sim"]["makespan_s"] == step(j)
             for k, _ in MAIN + VARIANTS for j in [data[(label, gpus, k)]] if j is not None and step(j) is not None)
    ok = ok and all(x["sim_ok"] for runs_of in [rl] + [other[m] for m, _ in OTHER]
                    for x in runs_of.get((label, gpus), []) if x["t"] is not None)
    sj = data[(label, gpus, "single")]
    peak = max(d["peak_memory_bytes"] for d in sj["best"]["devices"]) / 1e9 if sj and "best" in sj else None
    P(f"| {label} | {gpus} | {fmt(peak)} | {r[1]} | " + " | ".join(cells) + " | " + rl_cell(label, gpus, r) +
      "".join(" | " + rl_cell(label, gpus, r, other[m]) for m, _ in OTHER) + " | " + ("✓" if ok else "✗") + " |")
P("")
P("## Variants")
P("")
P("| Model | #GPU | " + " | ".join(n for _, n in VARIANTS) + " |")
P("|---|---|" + "---|" * len(VARIANTS))
for label, graph, gpus in rows:
    r = ref(label, gpus)
    P(f"| {label} | {gpus} | " + " | ".join(cell(data[(label, gpus, k)], r) for k, _ in VARIANTS) + " |")
P("")
P("## Placement wall time")
P("")
P("The placer's own wall time on this machine (`placement_wall_s` of result.json: graph in memory to "
  "op → device, without the final simulation); the ColocRL/HDP RL placers took hours to days of GPU time (§5.5: "
  "Baechi's planning speed-up 654×–206,000×). One run each on a loaded 2-core machine: values under "
  "≈ 20 ms vary several-fold between runs (scheduling noise); m-SCT's LP (≈ 0.1–2 s) is the only cost that matters.")
P("")
def rl_wall(label, gpus, runs_of=None):
    runs = (rl if runs_of is None else runs_of).get((label, gpus))
    if not runs:
        return "—"
    w = statistics.mean(x["wall"] for x in runs)
    c = [x["cpu"] for x in runs if x["cpu"] is not None]
    e = statistics.mean(x["episodes"] for x in runs)
    return f"{w:.0f} s ({statistics.mean(c):.0f} s CPU, {e:.0f} episodes)" if c else f"{w:.0f} s"

P("RL: training wall time per seed (mean), the CPU time it got on the shared machine (`/usr/bin/time`, user + "
  "system) and the episodes it played in that time.")
P("")
P("| Model | #GPU | ops | " + " | ".join(n for _, n in MAIN + VARIANTS) + " | RL |" + "".join(f" {n} |" for _, n in OTHER))
P("|---|---|---|" + "---|" * len(MAIN + VARIANTS) + "---|" * (1 + len(OTHER)))
for label, graph, gpus in rows:
    ops = next((j["ops"] for k, _ in MAIN for j in [data[(label, gpus, k)]] if j), "—")
    P(f"| {label} | {gpus} | {ops:,} | " + " | ".join(wall_s(data[(label, gpus, k)]) for k, _ in MAIN + VARIANTS) +
      f" | {rl_wall(label, gpus)} |" + "".join(f" {rl_wall(label, gpus, other[m])} |" for m, _ in OTHER))
P("")

# ------------------------------------------------------------------ published ratios
def ratio(label, gpus, key, base="single"):
    a, b = data.get((label, gpus, key)), data.get((label, gpus, base))
    if not (feasible(a) and feasible(b)):
        return None
    return step(a) / step(b)


def best_of(label, gpus, keys):
    c = [(step(data[(label, gpus, k)]), k) for k in keys if feasible(data[(label, gpus, k)])]
    return min(c) if c else (None, None)

P("## Ratios next to the published ones (§5.5)")
P("")
P("| Quantity | Published | Here |")
P("|---|---|---|")
P(f"| Expert / 1-GPU, RNNLM (ColocRL, 2 / 4 GPUs) | 2.43 / 2.84 [M] | {fmt(ratio('RNNLM','2','expert'))} / {fmt(ratio('RNNLM','4','expert'))} |")
P(f"| Expert / 1-GPU, Inception (ColocRL split expert, 2 / 4 GPUs) | 2.44 / 2.32 [M] | {fmt(ratio('Inception-V3','2','expert_split'))} / {fmt(ratio('Inception-V3','4','expert_split'))} |")
P(f"| Expert / 1-GPU, Inception and RNNLM (HDP: expert = 1 GPU) | 1.00 | {fmt(ratio('Inception-V3','2','expert'))} / {fmt(ratio('RNNLM','2','expert'))} |")
P(f"| Scotch / 1-GPU, RNNLM 2 / 4 GPUs (ColocRL, Scotch with the CPU) | 8.55 / 7.34 [D] | {fmt(ratio('RNNLM','2','scotch_cpu'))} / {fmt(ratio('RNNLM','4','scotch_cpu'))} |")
P(f"| Scotch / 1-GPU, Inception 2 / 4 GPUs (ColocRL) | 5.49 / 5.09 [D] | {fmt(ratio('Inception-V3','2','scotch_cpu'))} / {fmt(ratio('Inception-V3','4','scotch_cpu'))} |")
P(f"| Scotch / 1-GPU, RNNLM / Inception / ResNet-152 (HDP, 2 GPUs) | 3.58 / 6.20 / 5.31 [D] | {fmt(ratio('RNNLM','2','scotch'))} / {fmt(ratio('Inception-V3','2','scotch'))} / {fmt(ratio('ResNet-152','2','scotch'))} |")
P(f"| Scotch / Expert, NMT-2 / NMT-4 / NMT-8 (HDP) | 1.51 / 3.07 / 4.60 [D] | {fmt(ratio('NMT-2','2','scotch','expert'))} / {fmt(ratio('NMT-4','4','scotch','expert'))} / {fmt(ratio('NMT-8','8','scotch','expert'))} |")
P(f"| Scotch / Expert, NMT 2 / 4 GPUs (ColocRL) | 2.84 / 2.37 [D] | {fmt(ratio('NMT-2','2','scotch','expert'))} / {fmt(ratio('NMT-2','4','scotch','expert'))} |")
for label, gpus in [("NMT-2", "2"), ("NMT-4", "4")]:
    t, k = best_of(label, gpus, ["heft", "m_etf", "m_sct", "m_etf_sched", "m_sct_sched", "metis", "scotch", "m_topo"])
    e = step(data[(label, gpus, "expert")]) if feasible(data[(label, gpus, "expert")]) else None
    pub = "ColocRL 1.24, HDP 2.54" if label == "NMT-2" else "ColocRL 1.21 (NMT, 4 GPUs), HDP 2.15"
    m = rl_mean(label, gpus)
    P(f"| Expert / RL (mean over seeds), {label} {gpus} GPUs | {pub} [M] | {fmt(e / m if e and m else None)} |")
    P(f"| Expert / best baseline, {label} {gpus} GPUs | (none published) | {fmt(e / t if e and t else None)} (best: {k}) |")
for label in ["RNNLM", "Inception-V3"]:
    m, s1 = rl_mean(label, "2"), data[(label, "2", "single")]
    P(f"| RL / 1-GPU, {label} 2 GPUs | ≈ 1.00 [M] | {fmt(m / step(s1) if m and feasible(s1) else None)} |")
P(f"| Baechi m-ETF, m-SCT, m-TOPO / 1-GPU, Inception (measured, §5.4) | 1.02, 1.01, 1.17 [V] | {fmt(ratio('Inception-V3','4','m_etf'))}, {fmt(ratio('Inception-V3','4','m_sct'))}, {fmt(ratio('Inception-V3','4','m_topo'))} (4 GPUs) |")
P("")

# ------------------------------------------------------------------ Baechi preset (check 4)
def bload(label, gpus, key):
    return load(f"baechi_{label}_{gpus}_{key}")

BCOLS = [("single", "1-GPU"), ("expert", "Expert"), ("m_etf", "m-ETF static"), ("m_sct", "m-SCT static"),
         ("m_etf_sched", "m-ETF schedule"), ("m_sct_sched", "m-SCT schedule")]
BROWS = [("Inception-V3", "4"), ("NMT-2", "4"), ("RNNLM", "4")]
bcap = (8e9 - 1.08e9) * baechi_fraction
P(f"## Memory pressure on the Baechi preset: `baechi(gpus=4,memory_fraction={baechi_fraction:g})`")
P("")
P(f"Baechi's link (5.7 GB/s + 134 µs, shared channel) and usable memory ({bcap / 1e9:.2f} GB per GPU = "
  f"(8 GB − 1.08 GB) × {baechi_fraction:g}), no CPU. Step time in s, ratio to 1-GPU's step time as if it fitted:")
P("")
P("| Model | #GPU | " + " | ".join(n for _, n in BCOLS) + " |")
P("|---|---|" + "---|" * len(BCOLS))
for label, gpus in BROWS:
    s = bload(label, gpus, "single")
    r = (step(s) if s else None, "1-GPU")
    P(f"| {label} | {gpus} | " + " | ".join(cell(bload(label, gpus, k), r) for k, _ in BCOLS) + " |")
P("")
P("Static accounting reserves every byte of a group when it places it, so it refuses early (the 2-GPU rows "
  "above) but never runs out later; Baechi's schedule accounting admits the forward pass op by op and frees "
  "outputs after their consumers, but the forward activations it keeps for the backward pass can fill every "
  "GPU before the backward pass starts, and then no ready op fits anywhere (the reasons below).")
P("")
P("### Infeasible runs and their reasons")
P("")
P("| run | reason (place-baseline, exit 2) |")
P("|---|---|")
for id_ in sorted(f[:-5] for f in os.listdir(work) if f.endswith(".json")):
    j = load(id_)
    if j is not None and "infeasible" in j:
        P(f"| {id_} | {j['infeasible']} |")
P("")

# ------------------------------------------------------------------ §5.6 checks
P("## Acceptance checks (notes §5.6)")
P("")
checks = []
fails = []
for label in ["RNNLM", "Inception-V3"]:
    for gpus in ["2", "4"]:
        ek = "expert_split" if label == "Inception-V3" else "expert"
        er, sr = ratio(label, gpus, ek), ratio(label, gpus, "scotch_cpu")
        if er is None or not (2 <= er <= 3):
            fails.append(f"{label} {gpus} GPUs: Expert/1-GPU = {fmt(er)}")
        if sr is None or not (3 <= sr <= 9):
            fails.append(f"{label} {gpus} GPUs: Scotch(+CPU)/1-GPU = {fmt(sr)}")
for label in ["RNNLM", "Inception-V3"]:
    for gpus in ["2", "4"]:
        m, s1 = rl_mean(label, gpus), data[(label, gpus, "single")]
        if m is not None and feasible(s1) and abs(m / step(s1) - 1) > 0.05:
            fails.append(f"{label} {gpus} GPUs: RL/1-GPU = {m / step(s1):.2f}")
checks.append(("1. RNNLM, Inception on the K80 preset: 1-GPU ≈ RL ≤ Expert ≪ Scotch (Expert/1-GPU ≈ 2–3, "
               "Scotch/1-GPU ≈ 3–9, RL/1-GPU within 5 % where RL ran)", fails,
               "the simulator's transfers are far cheaper than the papers' TensorFlow runtime's — see "
               "\"Why the simulator ranks the expert above one GPU\" below"))
refs = []
for label, gpus in [("NMT-2", "2"), ("NMT-2", "4"), ("NMT-4", "4")]:
    t, k = best_of(label, gpus, ["heft", "m_etf", "m_sct", "m_etf_sched", "m_sct_sched", "metis", "scotch", "m_topo"])
    e = step(data[(label, gpus, "expert")]) if feasible(data[(label, gpus, "expert")]) else None
    refs.append(f"{label} on {gpus} GPUs: the best baseline ({k}) is {fmt(e / t if e and t else None)}× the expert's speed")
fails, passed = [], []
for label, gpus in [("NMT-2", "2"), ("NMT-2", "4"), ("NMT-4", "4")]:
    m = rl_mean(label, gpus)
    e = step(data[(label, gpus, "expert")]) if feasible(data[(label, gpus, "expert")]) else None
    if m is None or e is None:
        continue
    worst = max(rl_times(label, gpus))
    (passed if e / m > 1 else fails).append(f"{label} on {gpus} GPUs: Expert/RL = {e / m:.2f} (worst seed {e / worst:.2f})")
if not fails and not passed:
    checks.append(("2. NMT-2/4 (not fitting one GPU): RL beats the expert (≈1.2× ColocRL, 2–2.5× HDP)",
                   ["not testable: no RL run in these results; the bar an RL placer must clear: " + "; ".join(refs)], ""))
else:
    checks.append(("2. NMT-2/4 (not fitting one GPU): RL beats the expert (≈1.2× ColocRL, 2–2.5× HDP [M]) — " +
                   "; ".join(passed + fails), fails, "see \"RL against the baselines\": 5 minutes on a shared CPU are ≈ 1,000 "
                   "episodes (the papers trained for hours), and where the memory mask sends groups to the CPU the "
                   "placement is CPU-bound"))
fails = []
for label, graph, gpus in rows:
    e = data[(label, gpus, "expert")]
    if not feasible(e):
        continue
    for k in ["m_etf", "m_sct", "heft"]:
        cands = [data[(label, gpus, x)] for x in ([k, k + "_sched"] if k != "heft" else [k])]
        cands = [j for j in cands if feasible(j)]
        if not cands:
            fails.append(f"{label} {gpus}: {k} infeasible or OOM")
            continue
        r = min(step(j) for j in cands) / step(e)
        if r > 1.062:
            fails.append(f"{label} {gpus}: {k}/Expert = {r:.2f}")
checks.append(("3. m-ETF, m-SCT (better of the two memory accountings) and HEFT within ≈6 % of the expert "
               "(≤ 1.062 × expert) on the K80 preset", fails,
               "the expert pipelines the unrolled LSTM layers across GPUs for free in this simulator, which the "
               "greedy list schedulers do not find, and static memory accounting leaves m-* no room on 2 GPUs"))
fails = []
for label, gpus in BROWS:
    if not oom(bload(label, gpus, "single")):
        fails.append(f"{label} {gpus}: 1-GPU fits")
    for k in ["m_etf", "m_sct"]:
        if not (feasible(bload(label, gpus, k)) or feasible(bload(label, gpus, k + "_sched"))):
            fails.append(f"{label} {gpus}: {k} infeasible or OOM with both accountings")
checks.append((f"4. Baechi preset at memory fraction {baechi_fraction:g}: 1-GPU reports OOM; m-ETF and m-SCT "
               "(either memory accounting) stay feasible", fails, ""))
fails = []
fit_rows = [(l, g) for l, _, g in rows if feasible(data[(l, g, "single")])]
for label, gpus in fit_rows:
    for k in ["m_etf", "m_sct"]:
        cands = [j for j in [data[(label, gpus, k)], data[(label, gpus, k + "_sched")]] if feasible(j)]
        r = min(step(j) for j in cands) / step(data[(label, gpus, "single")]) if cands else None
        if r is None or r > 1.05:
            fails.append(f"{label} {gpus}: {k}/1-GPU = {fmt(r)}")
checks.append(("5. A model that fits one GPU (" + ", ".join(f"{l} {g}" for l, g in fit_rows) +
               "): m-ETF / m-SCT (better accounting) fall back to ≈ 1-GPU (≤ 1.05)", fails,
               "m-ETF is greedy: it starts every ready op on the first free GPU and pays the transfers later"))
checks.append(("6. Placeto-style zero-shot on held-out graphs", ["not testable: not run by this script (docs/device_placement.md, generalisation)"], ""))
checks.append(("7. Every number states its speed-up definition, with placement wall time next to step time", [], ""))
for name, fails, why in checks:
    if not fails:
        P(f"- **{name}: pass.**")
    elif fails[0].startswith("not testable"):
        P(f"- **{name}: not tested** — {fails[0][len('not testable: '):]}.")
    else:
        P(f"- **{name}: fail**, because " + "; ".join(fails) + (f" — {why}." if why else "."))
P("")

def per_seed(runs, digits):
    """Each seed's simulated step time ("s1 0.252, s2 OOM …")."""
    return ", ".join(f"s{x['seed']} " + ("—" if x["t"] is None else f"{x['t']:.{digits}f}" + (" OOM" if x["oom"] else ""))
                     for x in runs)

# ------------------------------------------------------------------ RL against the baselines
if rl:
    P("## RL against the baselines")
    P("")
    P(f"Per row where RL ran ({rl_m} min {rl_clock} per seed on this shared 2-core VM): every seed's simulated step "
      "time, and whether the mean beats (<) or loses to (>) the expert, HEFT and the better memory accounting of "
      "m-ETF and m-SCT (ratio = RL mean / baseline).")
    P("")
    P("| Model | #GPU | RL per seed (s) | RL mean | CPU busy in RL's best (per seed) | 1-GPU | Expert | HEFT | m-ETF | m-SCT |")
    P("|---|---|---|---|---|---|---|---|---|---|")
    for label, graph, gpus in rows:
        if (label, gpus) not in rl:
            continue
        m = rl_mean(label, gpus)
        per = per_seed(rl[(label, gpus)], 3)
        def vs(keys):
            c = [step(data[(label, gpus, k)]) for k in keys if feasible(data[(label, gpus, k)])]
            if not c and any(oom(data[(label, gpus, k)]) for k in keys):
                return "OOM"
            if not c or m is None:
                return "—" if not c else f"{min(c):.3f}"
            b = min(c)
            return f"{b:.3f}: RL {'beats' if m < b else 'loses'} ({m / b:.2f}×)"
        cpu = ", ".join(f"{x['cpu_util'] * 100:.0f} %" for x in rl[(label, gpus)])
        P(f"| {label} | {gpus} | {per} | {fmt(m) if m is None else f'{m:.3f}'} | {cpu} | {vs(['single'])} | {vs(['expert'])} | "
          f"{vs(['heft'])} | {vs(['m_etf', 'm_etf_sched'])} | {vs(['m_sct', 'm_sct_sched'])} |")
    P("")
    P("\"CPU busy\" is the CPU's utilisation over the step in each seed's best placement (the machine has one "
      "CPU, 6.7× slower than a GPU): a policy that leaves groups on the CPU pays for them on the critical path. "
      "With `memory_mask=true` the environment's memory estimate (every byte of a group for the whole step) "
      "declares the GPUs full and sends the rest to the CPU, which is what happens where RL is several times the "
      "expert.")
    P("")

# ------------------------------------------------------------------ the other RL placers against the baselines
for meth, name in OTHER:
    runs_of = other[meth]
    P(f"## {name} against the baselines")
    P("")
    P(f"Per row where {name} ran ({rl_m} min {rl_clock} per seed): every seed's simulated step time, its mean, and "
      "the mean over HEFT, over HEFT + local search (its own CPU budget: it stops at a local optimum or after 2.5 "
      "CPU-minutes) and over the best classic placer of the tables above (any column, variants included). "
      "Ratio = mean / baseline; < 1 beats it.")
    P("")
    P("| Model | #GPU | per seed (s) | mean | HEFT | HEFT + local search | best classic |")
    P("|---|---|---|---|---|---|---|")
    for label, graph, gpus in rows:
        if (label, gpus) not in runs_of:
            continue
        m = rl_mean(label, gpus, runs_of)
        per = per_seed(runs_of[(label, gpus)], 4)
        def vs(keys, named=False):
            b, k = best_of(label, gpus, keys)
            if b is None:
                return "—"
            name_ = f" ({dict(MAIN + VARIANTS)[k]})" if named else ""
            return f"{b:.4f}{name_}" if m is None else f"{b:.4f}{name_}: {m / b:.3f}×"
        P(f"| {label} | {gpus} | {per} | {fmt(m) if m is None else f'{m:.4f}'} | {vs(['heft'])} | {vs(['heft_ls'])} | "
          f"{vs([k for k, _ in MAIN + VARIANTS], True)} |")
    P("")

# ------------------------------------------------------------------ latency sensitivity
P("## Why the simulator ranks the expert above one GPU")
P("")
P("ColocRL measured the expert 2.4–2.8× slower than one GPU and Scotch 5–8.6× slower (§5.2); here the "
  "RNNLM expert is faster than one GPU and Scotch is near it. The same runs with a fixed latency added to "
  "every transfer (the K80 preset, 2 GPUs + CPU, 12 GB; machine files written by the script; ratios to 1-GPU):")
P("")
P("| latency per transfer | RNNLM 1-GPU (s) | RNNLM Expert | RNNLM Scotch + CPU | RNNLM HEFT | "
  "Inception 1-GPU (s) | Inception Expert (split) | Inception Scotch + CPU | Inception HEFT | "
  "transfers (RNNLM Expert / Scotch; Inception Expert / Scotch) |")
P("|---|---|---|---|---|---|---|---|---|---|")
lat_rows = {}
for lat in sorted({f.split("_")[1] for f in os.listdir(work) if f.startswith("latency_") and f.endswith(".json")},
                  key=float):
    g = {}
    for gr in ["rnnlm", "inception_v3"]:
        for k in ["single", "expert", "scotch_cpu", "heft"]:
            g[(gr, k)] = load(f"latency_{lat}_{gr}_{k}")
    if any(v is None or step(v) is None for v in g.values()):
        continue
    rr = lambda gr, k: step(g[(gr, k)]) / step(g[(gr, "single")])
    lat_rows[float(lat)] = (rr("rnnlm", "expert"), rr("rnnlm", "scotch_cpu"))
    P(f"| {float(lat) * 1e3:g} ms{' (k80 default)' if abs(float(lat) - 1.34e-4) < 1e-12 else ''} | {step(g[('rnnlm', 'single')]):.3f} | {rr('rnnlm', 'expert'):.2f} | "
      f"{rr('rnnlm', 'scotch_cpu'):.2f} | {rr('rnnlm', 'heft'):.2f} | {step(g[('inception_v3', 'single')]):.3f} | "
      f"{rr('inception_v3', 'expert'):.2f} | {rr('inception_v3', 'scotch_cpu'):.2f} | {rr('inception_v3', 'heft'):.2f} | "
      f"{g[('rnnlm', 'expert')]['best']['transfers']} / {g[('rnnlm', 'scotch_cpu')]['best']['transfers']}; "
      f"{g[('inception_v3', 'expert')]['best']['transfers']} / {g[('inception_v3', 'scotch_cpu')]['best']['transfers']} |")
P("")
hi = max(lat_rows) if lat_rows else None
rn = data.get(("RNNLM", "2", "expert"))
P("What it shows:")
P("")
ntr = rn["best"]["transfers"] if rn else 0
mb = rn["best"]["bytes_transferred"] / 1e6 if rn else 0
P("- **Transfers are nearly free in the simulator.** The RNNLM expert (one LSTM layer per GPU) crosses "
  "between the GPUs once per unrolled step and direction (%d transfers, %.0f MB in a step, %.2f MB each on "
  "average): at Placeto's 7.6 GB/s that is ≈ %.0f µs each plus the preset's 134 µs latency, while the two layers run as a two-stage pipeline "
  "over the 40 steps — so the expert takes %.2f× one GPU's step time. Nothing in the placement is wrong; the "
  "simulator rewards pipelining because a cross-device tensor costs only its bandwidth time and a measured "
  "copy's fixed cost." %
  (ntr, mb, mb / max(ntr, 1), mb / max(ntr, 1) / 7.6e3 * 1e6, ratio("RNNLM", "2", "expert") or 0))
if hi is not None:
    P("- **A per-transfer cost of milliseconds reproduces ColocRL's RNNLM ratios.** With %g ms per transfer "
      "the expert is %.2f× and Scotch (with the CPU) %.2f× one GPU, next to the published 2.43× and 8.55×. "
      "TensorFlow 1.x in 2017 paid per cross-device tensor a Send/Recv rendezvous, a copy staged through host "
      "memory between K80 dies, and stream synchronisation, and its graphs had 4–37× more nodes than ours "
      "(docs/device_graphs.md), so many more tensors crossed. The measured fixed cost of one copy (Baechi's "
      "134 µs, the preset's default) is 75× smaller than what this ratio needs, so the default does not "
      "reproduce it; we do not set a latency that is fitted to make the check pass." % (hi * 1e3, lat_rows[hi][0], lat_rows[hi][1]))
P("- **Inception does not follow** because our Inception-V3 is 842 ops (TF's: 25–31k): ColocRL's split "
  "expert cuts its chain in %s places, so even 10 ms each adds little; the papers' 2.4× needs the "
  "TF graph's many small cross-device tensors. HEFT sees the latency and retreats to one GPU." %
  (load("latency_0_inception_v3_expert")["best"]["transfers"] if load("latency_0_inception_v3_expert") else "?"))
cs, ce = load("cpu_gather_rnnlm_single"), load("cpu_gather_rnnlm_expert")
if cs and ce:
    P("- **The CPU is not the cause.** With RNNLM's embedding lookups CPU-only (a machine file with "
      "`cpu_only_kind: \"gather\"`: both placements send the looked-up rows from the CPU) one GPU takes %.3f s "
      "and the expert %.3f s (%.2f×): the CPU adds the same few ms to both." %
      (step(cs), step(ce), step(ce) / step(cs)))
P("- **Op time is not the cause.** One GPU here takes %.3f s per RNNLM step against ColocRL's measured 1.57 s "
  "(the simulated K80 runs at its roofline, the real kernels at ≈ 20–25 %% of peak); slower ops would make "
  "transfers relatively cheaper still and the expert look better, not worse." %
  (step(data[("RNNLM", "2", "single")]) if data.get(("RNNLM", "2", "single")) else 0))
P("- **What it means.** On the K80 preset as calibrated (Placeto's link constants and Baechi's measured 134 µs per transfer), model parallelism pays "
  "wherever the graph has parallel or pipelinable structure, so an RL placer trained on it will learn to split "
  "RNNLM rather than to fall back to one GPU (§5.6 checks 1 and 5 expect the fallback). To reproduce the "
  "papers' ranking, evaluate on a machine with a per-transfer latency of a few ms (a machine file with "
  "`link { preset: \"placeto\" latency_s: 0.01 }`, as above); the NMT rows, where memory forces a split, are "
  "the comparison that does not depend on this constant.")
P("")
open(out + ".tmp", "w").write("\n".join(L) + "\n")
PYEOF
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT ($(( $(date +%s) - START )) s)" >&2
