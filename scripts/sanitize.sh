#!/usr/bin/env bash
# Builds moesim with AddressSanitizer + UndefinedBehaviorSanitizer (CMake preset "sanitize",
# folder build-asan) and runs the whole test suite under it: an ASan report or any undefined
# behaviour (-fno-sanitize-recover) fails the test that hit it. The test preset passes
# tests/asan.supp: one false positive of ASan inside SimGrid's actor contexts (see the file).
#
# Usage: scripts/sanitize.sh [quick]   (CI: quick)
#   quick      leave out the labels validation and scaling (the published runs: about half of
#              the sanitized test time)
#   JOBS=n     build jobs (default: nproc); CTEST_JOBS=n test jobs (default 2)
# Measured on the shared 2-core development machine from a clean tree (inside .ci/run with
# CI_SANITIZE=1, at nice 10): build 569 s with -j2, whole suite 127 s with -j2 (validation +
# scaling are about half of it). The whole of .ci/run with this step took 17 min.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "${JOBS:-$(nproc)}"
built=$(date +%s)
echo "sanitize: built in $((built - start)) s"

filter=()
[ "${1:-}" = quick ] && filter=(-LE "validation|scaling")
ctest --preset sanitize -j "${CTEST_JOBS:-2}" "${filter[@]}"
echo "sanitize: tests passed in $(($(date +%s) - built)) s (build + tests: $(($(date +%s) - start)) s)"
