#!/usr/bin/env bash
# Fuzzes what moesim reads (tests/fuzz/fuzz_entry.hpp) with libFuzzer, under ASan and UBSan, for
# SECONDS seconds (default 60): scenarios (parsing, validation, the layout, the cost and platform
# setup), search files (reading, sizing, the candidates enumerated and screened), sweep files
# (reading, sizing, the points expanded and loaded) and `moesim collective`'s options (checked
# and planned in closed form). Nothing is simulated.
#
# Usage: scripts/fuzz.sh [SECONDS] [WORK_DIR]      (default: 60 build-fuzz: corpus, findings, logs)
#   FUZZ_JOBS=n       parallel fuzzing processes (default 1)
#   FUZZ_REQUIRED=1   fail (exit 1) instead of skipping when clang's libFuzzer is missing
#
# Seeds: scenarios/, configs/, tests/fuzz/seeds/ (each config inline as an override, small valid
# layouts, the bundled search and sweep files and variants, collective option sets;
# tests/fuzz/make_seeds.py writes them) and tests/fuzz/regressions/. The corpus the fuzzer grows
# is kept in WORK_DIR/corpus and reused by the next run. At the end it prints, per target, how
# many executions and how many corpus inputs were accepted (reached the layout, the expansion or
# the plan) and how the others were rejected.
#
# Exit: 0 nothing found; 1 a finding (crash, sanitizer report, timeout, out-of-memory), saved
# in WORK_DIR/findings/ -- fix it, then keep the input in tests/fuzz/regressions/ (replayed by
# the normal test suite, "[fuzz]"); 77 skipped (no clang++ with libFuzzer).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
work=${2:-"$here/build-fuzz"}   # the corpus and the findings
jobs=${FUZZ_JOBS:-1}

skip() {
  echo "fuzz: $1" >&2
  if [ "${FUZZ_REQUIRED:-0}" = 1 ]; then exit 1; fi
  echo "fuzz: skipped" >&2
  exit 77
}
command -v clang++ >/dev/null || skip "clang++ not found (Debian: apt-get install clang libclang-rt-dev)"

# The harness is a target of the sanitized build folder (build-asan), which it shares with
# scripts/sanitize.sh: built there once, up to date when CI has just built that folder.
start=$(date +%s)
mkdir -p "$work"
"$here/scripts/sanitized-build.sh" moesim_fuzz | tee "$work/build.log"
[ "$(tail -1 "$work/build.log")" = "sanitized-build: fuzz harness yes" ] ||
  skip "clang++ -fsanitize=fuzzer does not link (Debian: apt-get install libclang-rt-dev)"
echo "fuzz: harness built in $(($(date +%s) - start)) s"

fuzzer="$here/build-asan/tests/fuzz/moesim_fuzz"
corpus="$work/corpus"
findings="$work/findings"
mkdir -p "$corpus" "$findings"

# Every regression input must still be handled before fuzzing starts.
regressions=("$here"/tests/fuzz/regressions/*)
if [ -e "${regressions[0]}" ]; then
  "$fuzzer" "${regressions[@]}" >"$work/regressions.log" 2>&1 ||
    { tail -40 "$work/regressions.log"; echo "fuzz: a regression input fails again" >&2; exit 1; }
fi

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
      -dict="$here/tests/fuzz/moesim.dict" -artifact_prefix="$findings/" -print_final_stats=1)
log="$work/fuzz.log"
set +e
if [ "$jobs" -gt 1 ]; then
  "$fuzzer" "${args[@]}" -jobs="$jobs" -workers="$jobs" "$corpus" "$here/tests/fuzz/seeds" \
    "$here/tests/fuzz/regressions" "$here/scenarios" "$here/configs" >"$log" 2>&1
else
  "$fuzzer" "${args[@]}" "$corpus" "$here/tests/fuzz/seeds" "$here/tests/fuzz/regressions" \
    "$here/scenarios" "$here/configs" >"$log" 2>&1
fi
rc=$?
set -e
grep -E '^(#[0-9]+ +(INITED|DONE)|stat::)' "$log" | tail -8 || true
if [ "$rc" -ne 0 ]; then
  grep -E -A25 'ERROR: libFuzzer|ERROR: AddressSanitizer|runtime error|terminate called' "$log" | head -60 || tail -60 "$log"
  echo "fuzz: FINDING after $(($(date +%s) - start)) s (rc $rc); inputs in $findings/:" >&2
  ls -1 "$findings" >&2
  exit 1
fi
echo "fuzz: executions by target and outcome:"
grep -E '^moesim-fuzz: target' "$log" | tail -4 || true
# The corpus by target: each input run once (no fuzzing), the counts printed at exit.
"$fuzzer" -runs=0 "$corpus" >"$work/corpus-targets.log" 2>&1 || true
echo "fuzz: corpus inputs by target and outcome:"
grep -E '^moesim-fuzz: target' "$work/corpus-targets.log" || true
echo "fuzz: no finding in ${seconds} s ($(ls "$corpus" | wc -l) corpus files)"
