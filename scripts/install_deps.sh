#!/usr/bin/env bash
# Installs every Debian (bookworm) package placerl needs. Idempotent: packages already
# present are skipped, and apt is not touched at all when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev
  libboost-graph-dev libmetis-dev libglpk-dev libscotch-dev
  libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev
  zlib1g-dev libcairo2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev libopenblas0-openmp libgloo-dev
  dataset-fashion-mnist
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install_deps: done"
