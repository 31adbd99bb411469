#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer + UndefinedBehaviorSanitizer: an ASan report or any
# undefined behaviour (-fno-sanitize-recover) fails the test that hit it. The folder, build-asan,
# is built by scripts/sanitized-build.sh (shared with the fuzz harness). The test preset passes
# tests/asan.supp: one false positive of ASan inside SimGrid's actor contexts (see the file).
#
# Usage: scripts/sanitize.sh [quick]   (CI: quick)
#   quick      leave out the labels validation, scaling and end-to-end (the published runs and
#              the tests that run every published scenario or documented command through the
#              binary, which the README's test command has just run unsanitized)
#   JOBS=n     build jobs (default: nproc); CTEST_JOBS=n test jobs (default 2)
# Measured times: bench/README.md, "Build time".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
BUILD_JOBS=${JOBS:-$(nproc)} scripts/sanitized-build.sh
built=$(date +%s)
echo "sanitize: built in $((built - start)) s"

filter=()
[ "${1:-}" = quick ] && filter=(-LE "validation|scaling|end-to-end")
ctest --preset sanitize -j "${CTEST_JOBS:-2}" "${filter[@]}"
echo "sanitize: tests passed in $(($(date +%s) - built)) s (build + tests: $(($(date +%s) - start)) s)"
