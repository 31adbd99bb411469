#!/usr/bin/env bash
# A developer's quick check from a warm tree (one that scripts/setup.sh has built before): what a
# change most likely breaks, in a few minutes on 2 cores instead of CI's clean-clone run.
#   1. the incremental build (library, CLI, tests, benchmarks);
#   2. the README's test command (unit tests, and the published runs: the validation ratchet);
#   3. the mutants of the files and tests changed since the last full mutation run
#      (scripts/mutants.sh --changed).
# It does not install packages, start from a clean clone, fuzz or build the sanitizers: after a
# change to scripts/setup.sh, CMake files or the packages, run the clean-clone CI instead
# (git clone . /tmp/c && cd /tmp/c && CI=true bash .ci/run). README.md, "Checking a change".
#
# Usage: scripts/check.sh [build-dir]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/build.ninja" ]; then
  echo "check: $build is not configured: run scripts/setup.sh first (the clean build, about 3 min)" >&2
  exit 2
fi
start=$(date +%s)
times=()
timed() {  # timed NAME COMMAND...
  local name=$1 t0
  shift
  t0=$(date +%s)
  "$@"
  times+=("$name $(( $(date +%s) - t0 )) s")
}
timed build cmake --build "$build" -j "$(nproc)"
timed tests ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
timed mutants scripts/mutants.sh --changed --tested "$build"
printf 'check: %s\n' "${times[@]}"
echo "check: passed in $(( $(date +%s) - start )) s"
