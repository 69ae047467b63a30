#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (CTest + GoogleTest).
# Tests read shared data from ../shared/datasets relative to the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
