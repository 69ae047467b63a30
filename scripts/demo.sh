#!/usr/bin/env bash
# The main job on the built-in default (no files from outside the repository): generate a
# synthetic chip netlist, score its placement with the proxy cost, draw it, and place its
# macros by simulated annealing for 30 s and by PPO for 1 minute (run directories with the best
# placement and the learning curve).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p out
"$BUILD_DIR/bin/proxy-cost" --write-plc out/synthetic.plc
"$BUILD_DIR/bin/render" -o out/synthetic.png
"$BUILD_DIR/bin/render" -o out/synthetic.svg
"$BUILD_DIR/bin/place-baseline" --method sa --minutes 0.5 --force --out out/synthetic_sa
if [ -x "$BUILD_DIR/bin/place-train" ]; then
  "$BUILD_DIR/bin/place-train" --minutes 1 --force --out out/synthetic_ppo
fi
echo "wrote out/synthetic.plc, out/synthetic.png, out/synthetic.svg and the run directories out/synthetic_sa (simulated annealing) and out/synthetic_ppo (PPO): best.plc, best.png, curve.png"
