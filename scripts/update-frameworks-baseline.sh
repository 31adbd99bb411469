#!/usr/bin/env bash
# Rewrites tests/validation/frameworks-baseline.json (the frameworks' accuracy ratchet: each
# TorchTitan and JAX row's error in percent, docs/frameworks.md) with what the current build
# simulates, then shows the change. Run it only when a change of the simulated figures is
# intended, and say in the commit which rows moved and why.
# Usage: scripts/update-frameworks-baseline.sh [build-dir]   (default: build)
exec "$(dirname "$0")/record-baseline.sh" tests/validation/frameworks-baseline.json \
  MOESIM_UPDATE_FRAMEWORKS_BASELINE "Frameworks' published rows*" "$@"
