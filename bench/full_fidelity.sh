#!/usr/bin/env bash
# Wall time, peak memory and activity rate of one full-fidelity DeepSeek-V3 step (GB300 record
# layout, weak-scaled) at each GPU count given, one process at a time, and the growth exponent of
# the wall time between consecutive counts (wall ~ n^k): the scaling of the full fidelity's cost
# with the GPU count (bench/README.md). Usage: bench/full_fidelity.sh [build-dir] [GPU counts...]
#   default: 256 1024 2048 8192
# REPEATS=k (default 1) runs each count k times and keeps the fastest wall time (and the largest
# peak memory): on a shared VM a run's wall time varies by up to 1.5x with its neighbours' load,
# and the least disturbed run is the best estimate of the program's own cost.
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(256 1024 2048 8192)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%8s %10s %12s %14s %12s %14s %10s\n' GPUs "wall (s)" "peak (MB)" "step (s)" "activities" "activities/s" "growth k"
previous=""
repeats=${REPEATS:-1}
for n in "${sizes[@]}"; do
  wall="" rss=0
  for ((run = 0; run < repeats; run++)); do
    /usr/bin/time -f "%e %M" -o "$out/time" "$moesim" run scenarios/gb300-256-record.json --gpus "$n" \
      --fidelity full --force -q --format json -o "$out/result.json"
    read -r run_wall run_rss < "$out/time"
    if [ -z "$wall" ] || python3 -c "import sys; sys.exit(0 if $run_wall < $wall else 1)"; then wall=$run_wall; fi
    [ "$run_rss" -gt "$rss" ] && rss=$run_rss
  done
  python3 - "$out/result.json" "$n" "$wall" "$rss" "$previous" <<'PY'
import json, math, sys
result = json.load(open(sys.argv[1]))
result = result[-1] if isinstance(result, list) else result  # --gpus: one row per GPU count
n, wall, rss, previous = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
activities = result["simulation"]["activities"]
growth = "-"
if previous:
    n0, wall0 = (float(x) for x in previous.split(":"))
    growth = f"{math.log(wall / wall0) / math.log(n / n0):.2f}"
print(f"{n:8d} {wall:10.2f} {rss / 1024:12.1f} {result['step_time_s']:14.4f} {activities:12d} "
      f"{activities / wall:14.0f} {growth:>10}")
PY
  previous="$n:$wall"
done
