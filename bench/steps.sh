#!/usr/bin/env bash
# Wall time and peak memory of whole simulated DeepSeek-V3 steps (GB300 record layout):
# folded at 256 and 1,024 GPUs, full fidelity at 256; and DeepSeek's own DualPipe setup, folded.
# Usage: bench/steps.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # label, moesim arguments...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/time" "$moesim" "$@" --format csv -o "$out/result.csv"
  read -r wall rss < "$out/time"
  printf '%-28s %8.2f s %8.1f MB   step %s s\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" \
    "$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["step_time_s"])' "$out/result.csv")"
}
run "folded, 256 GPUs" run scenarios/gb300-256-record.json
run "folded, 1,024 GPUs" run scenarios/gb300-256-record.json --gpus 1024
run "full, 256 GPUs" run scenarios/gb300-256-record.json --fidelity full
run "dualpipe, 2,048 H800, folded" run scenarios/deepseek-v3-h800-dualpipe.json
