#!/usr/bin/env bash
# Builds moesim with AddressSanitizer + UndefinedBehaviorSanitizer (CMake preset "sanitize",
# folder build-asan) and runs the test suite under it: any ASan report or undefined behaviour
# fails the test that hit it.
#
# Usage: scripts/sanitize.sh [all]
#   (default)  ctest minus the labels validation and scaling (the published runs and the
#              weak-scaling series repeat the same code paths on bigger layouts, several times
#              slower under ASan)
#   all        the whole suite
#   JOBS=n     build jobs (default: nproc); CTEST_JOBS=n test jobs (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "${JOBS:-$(nproc)}"
built=$(date +%s)
echo "sanitize: built in $((built - start)) s"

filter=(-LE "validation|scaling")
[ "${1:-}" = all ] && filter=()
ctest --preset sanitize -j "${CTEST_JOBS:-2}" "${filter[@]}"
echo "sanitize: tests passed in $(($(date +%s) - built)) s (build + tests: $(($(date +%s) - start)) s)"
