#!/usr/bin/env bash
# Regenerates docs/scenarios.md from the code's own schema (`moesim schema`), so that the
# configuration reference cannot drift from the parser; the [docs] tests fail until it is rerun.
# Usage: scripts/update_docs.sh [--check] [build-dir]   (default build-dir: build)
#   --check: change nothing; exit 1 and show the difference when the file is out of date.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
build=${1:-"$here/build"}
moesim="$build/moesim"
[ -x "$moesim" ] || { echo "no $moesim: build first (scripts/setup.sh)" >&2; exit 2; }

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
"$moesim" schema >"$fresh"
target="$here/docs/scenarios.md"
if ((check)); then
  diff -u "$target" "$fresh" && echo "docs/scenarios.md is up to date"
  exit
fi
cp "$fresh" "$target"
echo "wrote docs/scenarios.md"
