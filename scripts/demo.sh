#!/usr/bin/env bash
# The main job on the built-in default (no files from outside the repository): generate a
# synthetic chip netlist, score its placement with the proxy cost, draw it, and place its
# macros by simulated annealing for 30 s and by PPO for 1 minute (run directories with the best
# placement and the learning curve). Each step starts as soon as its own binaries are built
# (the tests are not built here: scripts/test.sh does that).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/build.sh proxy-cost render place-baseline
mkdir -p out
"$BUILD_DIR/bin/proxy-cost" --write-plc out/synthetic.plc
"$BUILD_DIR/bin/render" -o out/synthetic.png
"$BUILD_DIR/bin/render" -o out/synthetic.svg
"$BUILD_DIR/bin/place-baseline" --method sa --minutes 0.5 --force --out out/synthetic_sa
echo "demo: building the learning binaries (place-train, place) while nothing else runs"
BUILD_DIR=$BUILD_DIR bash scripts/build.sh place-train place
"$BUILD_DIR/bin/place-train" --minutes 1 --force --out out/synthetic_ppo
echo "wrote out/synthetic.plc, out/synthetic.png, out/synthetic.svg and the run directories out/synthetic_sa (simulated annealing) and out/synthetic_ppo (PPO): best.plc, best.png, curve.png"
