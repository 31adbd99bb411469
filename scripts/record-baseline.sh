#!/usr/bin/env bash
# Re-records a baseline file that a CI test guards (the scaling efficiency, the validation
# ratchet): builds the tests, runs the test that owns the file with its update variable set to 1
# (the test rewrites the file, then still checks against what it wrote), and shows the change.
# Usage: scripts/record-baseline.sh <file> <update variable> <Catch2 test filter> [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
file="$here/$1"
variable=$2
filter=$3
build=${4:-"$here/build"}
before=$(mktemp)
trap 'rm -f "$before"' EXIT
if [ -f "$file" ]; then cp "$file" "$before"; else echo '{}' >"$before"; fi

cmake --build "$build" --target moesim_tests
env "$variable=1" "$build/tests/moesim_tests" "$filter" || true
if diff -u --label "before" --label "after" "$before" "$file"; then
  echo "unchanged: $file"
fi
