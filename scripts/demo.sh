#!/usr/bin/env bash
# The main job on the built-in default (no files from outside the repository): generate a
# synthetic chip netlist, score its placement with the proxy cost, and draw it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p out
"$BUILD_DIR/bin/proxy-cost" --write-plc out/synthetic.plc
"$BUILD_DIR/bin/render" -o out/synthetic.png
"$BUILD_DIR/bin/render" -o out/synthetic.svg
echo "wrote out/synthetic.plc, out/synthetic.png and out/synthetic.svg"
