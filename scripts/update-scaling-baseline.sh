#!/usr/bin/env bash
# Rewrites tests/scaling/gb300-record-efficiency.json with the weak-scaling efficiency the
# current build simulates, then shows the change. Run it only when a change of the simulated
# scaling is intended (e.g. a recalibration), and commit the file with the change that caused it.
# The test still checks the published band and reports a value outside it.
# Usage: scripts/update-scaling-baseline.sh [build-dir]   (default: build)
exec "$(dirname "$0")/record-baseline.sh" tests/scaling/gb300-record-efficiency.json \
  MOESIM_UPDATE_SCALING_BASELINE "[sweep][scaling]" "$@"
