#!/usr/bin/env bash
# Rewrites tests/scaling/gb300-record-efficiency.json with the weak-scaling efficiency the
# current build simulates, then shows the change. Run it only when a change of the simulated
# scaling is intended (e.g. a recalibration), and commit the file with the change that caused it.
# Usage: scripts/update-scaling-baseline.sh [build-dir]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}
file="$here/tests/scaling/gb300-record-efficiency.json"
before=$(mktemp)
trap 'rm -f "$before"' EXIT
cp "$file" "$before"

cmake --build "$build" --target moesim_tests
# The test rewrites the file, then still checks the published band and reports a value outside it.
MOESIM_UPDATE_SCALING_BASELINE=1 "$build/tests/moesim_tests" "[sweep][scaling]" || true
if diff -u --label "before" --label "after" "$before" "$file"; then
  echo "unchanged: $file"
fi
