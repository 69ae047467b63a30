#!/usr/bin/env bash
# Installs what is missing (Debian packages), configures and builds placerl into build/
# (Release, Ninja, ccache). Binaries land in build/bin/.
#   scripts/build.sh                  everything (binaries, tests, benchmarks)
#   scripts/build.sh TARGET [...]     only those targets and what they need (e.g. proxy-cost place-train)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target "$@"
else
  cmake --build "$BUILD_DIR" -j "$(nproc)"
fi
