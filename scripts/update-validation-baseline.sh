#!/usr/bin/env bash
# Rewrites tests/validation/baseline.json (the accuracy ratchet: each published row's error and
# each GB300/GB200 ratio's error, in percent) with what the current build simulates, then shows
# the change. Run it only when a change of the simulated figures is intended, and say in the
# commit which rows moved and why; the [validation] tests fail on any unrecorded move of more
# than half a point, and on any row that leaves +-5 %.
# Usage: scripts/update-validation-baseline.sh [build-dir]   (default: build)
exec "$(dirname "$0")/record-baseline.sh" tests/validation/baseline.json \
  MOESIM_UPDATE_VALIDATION_BASELINE "Published runs*" "$@"
