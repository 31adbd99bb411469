#!/usr/bin/env bash
# Wall time and peak memory of `moesim calibrate` (issue 41) on each bundled example: nccl-tests
# tables, DeepEP's and HybridEP's test outputs, a kernel timing table, and all of GB200's together.
# Each fit prices every measured row through moesim's closed forms at each step of its least
# squares. Usage: bench/calibrate.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ex=examples/calibration
run() {  # label, moesim arguments...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/time" "$moesim" calibrate "$@" -o "$out/overlay.json" >/dev/null
  read -r wall rss < "$out/time"
  printf '%-44s %7.2f s %8.1f MB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
run "GB200 tray all-reduce (24 sizes)" "$ex/gb200-tray-all_reduce_ring.txt" --system gb200-nvl72 --ranks 4 --algo ring
run "HGX B200, 2 nodes all-reduce (29 sizes)" "$ex/hgx-b200-2nodes-all_reduce_perf.txt" --system hgx-b200 --ranks 16
run "DeepEP intranode, H800 (2 kernels)" "$ex/h800-deepep-intranode.txt" --system hgx-h800 --ranks 8
run "HybridEP EP32, GB200 (6 lines)" "$ex/gb200-hybridep-ep32.txt" --system gb200-nvl72 --sms 32
run "H200 kernels (121 rows)" "$ex/h200-kernels.csv" --system hgx-h200
run "GB200: tray and HybridEP together" "$ex/gb200-tray-all_reduce_ring.txt" "$ex/gb200-hybridep-ep32.txt" \
  --system gb200-nvl72 --ranks 4 --algo ring --sms 32
