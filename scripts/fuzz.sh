#!/usr/bin/env bash
# Builds and runs every libFuzzer target (tests/fuzz/, docs/fuzzing.md) for a given time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60)
# Environment: FUZZ_TARGETS="a_fuzz b_fuzz" (default: all), FUZZ_BUILD_DIR (build-fuzz),
# FUZZ_MAX_LEN (65536), FUZZ_RSS_MB (2048), FUZZ_TIMEOUT (10 s per input).
# A separate clang build (ASan + UBSan + LeakSanitizer, coverage on the libraries under
# test) in $FUZZ_BUILD_DIR; the normal gcc build is untouched. Targets run one after the
# other on one core (the machine is shared). Working corpora grow in
# $FUZZ_BUILD_DIR/corpus/<target> (seeds in tests/fuzz/corpus/<target> stay read-only);
# findings land in $FUZZ_BUILD_DIR/findings/<target>/. Prints per target the executions,
# executions per second and findings (crash / timeout / leak / oom files); exits 1 when a
# target has findings, 0 otherwise.
# Needs clang, libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) and libomp-dev
# (OpenMP for clang): installed here if missing (not by install_deps.sh, which the normal
# build does not need them for).
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
MAX_LEN=${FUZZ_MAX_LEN:-65536}
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT=${FUZZ_TIMEOUT:-10}
ALL_TARGETS="netlist_fuzz plc_fuzz bookshelf_fuzz compute_graph_fuzz placement_fuzz graph_spec_fuzz
  perf_spec_fuzz perf_pbtxt_fuzz catalog_fuzz measurements_fuzz machine_fuzz nas_space_fuzz nas_tables_fuzz idx_fuzz onnx_fuzz"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}

if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -lt 1 ]; then
  echo "fuzz.sh: error: SECONDS_PER_TARGET must be a positive integer, got '$SECONDS_PER_TARGET'" >&2
  exit 1
fi

missing=()
for p in clang libclang-rt-14-dev libomp-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "fuzz.sh: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DPLACERL_FUZZ=ON -DPLACERL_BUILD_TESTS=OFF \
    -DPLACERL_BUILD_BENCHMARKS=OFF -DPLACERL_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
    { echo "fuzz.sh: error: configuring $BUILD failed" >&2; exit 1; }
fi
# shellcheck disable=SC2086
if ! build_log=$(ninja -C "$BUILD" -j2 $TARGETS 2>&1); then
  echo "$build_log" | tail -30 >&2
  echo "fuzz.sh: error: building the fuzz targets failed" >&2
  exit 1
fi

failed=0
printf '%-20s %8s %12s %9s %8s  %s\n' target seconds execs execs/s rss_mb findings
for t in $TARGETS; do
  corpus="$BUILD/corpus/$t" findings="$BUILD/findings/$t" log="$BUILD/findings/$t.log"
  mkdir -p "$corpus" "$findings"
  rm -f "$findings"/crash-* "$findings"/timeout-* "$findings"/leak-* "$findings"/oom-*  # earlier runs
  # A finding stops the target (libFuzzer exits non-zero); the counts below say which.
  "$BUILD/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -max_len="$MAX_LEN" -rss_limit_mb="$RSS_MB" \
    -timeout="$TIMEOUT" -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1 || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  secs=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  n=$(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' \
        -o -name 'oom-*' \) | wc -l)
  summary="none"
  if [ "$n" -gt 0 ]; then
    summary="$n file(s) in $findings:"
    for f in crash timeout leak oom; do
      c=$(find "$findings" -maxdepth 1 -type f -name "$f-*" | wc -l)
      [ "$c" -gt 0 ] && summary="$summary $c $f"
    done
    summary="$summary (log $log)"
    failed=1
  elif [ -z "$execs" ]; then
    summary="target did not finish: see $log"
    failed=1
  fi
  printf '%-20s %8s %12s %9s %8s  %s\n' "$t" "${secs:-?}" "${execs:-?}" "${rate:-?}" "${rss:-?}" "$summary"
done
exit $failed
