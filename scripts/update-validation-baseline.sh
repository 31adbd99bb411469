#!/usr/bin/env bash
# Rewrites tests/validation/baseline.json (the accuracy ratchet: each published row's error and
# each GB300/GB200 ratio's error, in percent) with what the current build simulates, then shows
# the change. Run it only when a change of the simulated figures is intended, and say in the
# commit which rows moved and why; the [validation] tests fail on any unrecorded move of more
# than half a point, and on any row that leaves +-5 %.
# Usage: scripts/update-validation-baseline.sh [build-dir]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}
file="$here/tests/validation/baseline.json"
before=$(mktemp)
trap 'rm -f "$before"' EXIT
if [ -f "$file" ]; then cp "$file" "$before"; else echo '{}' >"$before"; fi

cmake --build "$build" --target moesim_tests
# The test rewrites the file first, then still checks the ratchet against what it wrote.
MOESIM_UPDATE_VALIDATION_BASELINE=1 "$build/tests/moesim_tests" "Accuracy ratchet*" || true
if diff -u --label "before" --label "after" "$before" "$file"; then
  echo "unchanged: $file"
fi
