#!/usr/bin/env bash
# Writes the length-loo arm's proposer files (experiments/learned_sa.sh --arms length-loo; docs/learned_sa.md,
# session 52): each held-out late file, experiments/results/learned_sa/late_kinds_without_X_proposer.json, and the
# shipped file for Ariane133, with the run-length term's first weight set to L0 (default 0.1):
# "length_weights": [L0, 0, 0, 0] raises the acceptance controller's target by the factor (E / 10^6)^L0 on a run of
# E > 10^6 moves (1.48x at 50 M moves, 1.74x at 60 CPU-minutes' 260 M) and leaves every run of at most 10^6 moves the
# late file's own, to the bit. Every other key is copied unchanged.
#   experiments/learned_sa_length.sh [L0]
# Output: experiments/results/learned_sa/late_length_without_{asap7,mempool,ng45_ariane136,sky130hd}_proposer.json
# and late_length_four_flows_proposer.json (from the shipped schedule_control_state_late_four_flows_proposer.json).
set -euo pipefail
cd "$(dirname "$0")/.."
L0=${1:-0.1}
R=experiments/results/learned_sa
python3 - "$R" "$L0" <<'PY'
import json, sys
r, l0 = sys.argv[1], float(sys.argv[2])
pairs = [(f"{r}/late_kinds_without_{x}_proposer.json", f"{r}/late_length_without_{x}_proposer.json")
         for x in ("asap7", "mempool", "ng45_ariane136", "sky130hd")]
pairs.append((f"{r}/schedule_control_state_late_four_flows_proposer.json", f"{r}/late_length_four_flows_proposer.json"))
for src, dst in pairs:
    j = json.load(open(src))
    if "length_weights" in j:
        sys.exit(f"learned_sa_length.sh: error: {src} already has length_weights")
    j["length_weights"] = [l0, 0.0, 0.0, 0.0]
    with open(dst, "w") as f:
        f.write(json.dumps(j, sort_keys=True, separators=(",", ":")) + "\n")
    print(dst)
PY
