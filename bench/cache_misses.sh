#!/usr/bin/env bash
# What one full-fidelity step (GB300 record layout, weak-scaled) costs in instructions and cache
# misses per activity, under valgrind's cachegrind: simulated caches, so the counts are the same
# from one run to the next, where the wall time of bench/full_fidelity.sh varies by up to 1.8x on
# a shared VM. It compares two builds of a speed change without that noise (bench/README.md).
#   Usage: bench/cache_misses.sh [build-dir] [GPUs] [last-level cache bytes]
#   default: build 1024 4194304
# The simulated last level is the caches' share of one GPU's state scaled down with the GPUs: a
# 4 MiB last level at 1,024 GPUs holds what a 32 MiB one holds at 8,192. The first level is
# 48 KiB, 12-way, like this machine's, indexed as the hardware indexes it (by address bits), so
# cache-set conflicts show.
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
gpus=${2:-1024}
last_level=${3:-4194304}
command -v valgrind >/dev/null || { echo "cache_misses.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The simulation runs in a child process (driver): %p gives each process its own counts.
valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL="$last_level",16,64 \
  --cachegrind-out-file="$out/counts.%p" "$moesim" run scenarios/gb300-256-record.json --gpus "$gpus" \
  --fidelity full --force -q --format json -o "$out/result.json" 2>"$out/log"
python3 - "$out" "$gpus" "$last_level" <<'PY'
import glob, json, sys
out, gpus, last_level = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
result = json.load(open(f"{out}/result.json"))
result = result[-1] if isinstance(result, list) else result
activities = result["simulation"]["activities"]
# Each counts file ends with "summary: <one total per event>", in the order of its "events:" line.
totals = {}
for path in glob.glob(f"{out}/counts.*"):
    events = summary = None
    for line in open(path):
        if line.startswith("events:"): events = line.split()[1:]
        elif line.startswith("summary:"): summary = [int(x) for x in line.split()[1:]]
    counts = dict(zip(events, summary))
    if counts["Ir"] > totals.get("Ir", 0): totals = counts  # the child that ran the step
d1 = totals["D1mr"] + totals["D1mw"]
ll = totals["DLmr"] + totals["DLmw"]
print(f"{'GPUs':>6} {'LL (MiB)':>9} {'activities':>11} {'instr/act':>10} {'L1d miss/act':>13} {'LL miss/act':>12}")
print(f"{gpus:6d} {last_level / 2**20:9.1f} {activities:11d} {totals['Ir'] / activities:10.0f} "
      f"{d1 / activities:13.2f} {ll / activities:12.3f}")
PY
