#!/usr/bin/env bash
# Wall time and peak memory of `moesim campaign` (issue 39): the GB300 record layout's 14.8T-token
# campaign at 256, 1,024 and 8,192 GPUs (200 samples each), DeepSeek-V3 on 2,048 H800, and a
# 60-day campaign at 8,192 GPUs, 1,000 samples, and Llama 3 405B's 60 days on 16,384 H100 with
# spares and asynchronous saves.
# Usage: bench/campaign.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
moesim=${1:-build}/moesim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # label, moesim arguments...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/time" "$moesim" "$@" --format json -o "$out/c.json"
  read -r wall rss < "$out/time"
  printf '%-44s %7.2f s %8.1f MB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
run "GB300 record, 14.8T, 256/1,024/8,192 GPUs" campaign scenarios/gb300-256-record.json --tokens 14.8T --gpus 256,1024,8192
run "DeepSeek-V3, 2,048 H800, 14.8T" campaign scenarios/deepseek-v3-h800-dualpipe.json --tokens 14.8T
run "8,192 GPUs, 60 days (2.6e14 tokens), 1,000 samples" campaign scenarios/gb300-256-record.json --gpus 8192 --tokens 2.6e14 --samples 1000
run "Llama 3 405B, 16,384 H100, 60 days, spares, async" campaign scenarios/llama3-405b-h100-16k.json --tokens 11.9T --spares 4 --checkpoint async
