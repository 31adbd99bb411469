#!/usr/bin/env bash
# Wall time and peak memory of one full-fidelity DeepSeek-V3 step (GB300 record layout,
# weak-scaled) at each GPU count given, one process at a time: the scaling of the full fidelity's
# cost with the GPU count (bench/README.md). Usage: bench/full_fidelity.sh [build-dir] [GPU counts...]
#   default: 256 1024 2048 8192
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(256 1024 2048 8192)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%8s %10s %12s %14s\n' GPUs "wall (s)" "peak (MB)" "step (s)"
for n in "${sizes[@]}"; do
  /usr/bin/time -f "%e %M" -o "$out/time" "$moesim" run scenarios/gb300-256-record.json --gpus "$n" \
    --fidelity full --force -q --format json -o "$out/result.json"
  read -r wall rss < "$out/time"
  step=$(sed -n 's/^ *"step_time_s": \([0-9.e+-]*\),*$/\1/p' "$out/result.json" | head -1)
  printf '%8s %10.2f %12.1f %14s\n' "$n" "$wall" "$(echo "$rss / 1024" | bc -l)" "$step"
done
