#!/usr/bin/env bash
# Mutation check: applies the one-line mutants of scripts/mutants.txt (the bugs a simulator like
# this is most likely to have) one at a time, rebuilds the one object each touches (CMakeLists.txt
# keeps every mutated file out of the unity batches) and runs only the unit tests expected to kill
# it. Fails when a mutant survives, when a mutant's code pattern no longer occurs exactly once (a
# refactor must update the list, not drop a mutant silently), when a mutant does not compile, or
# when the killing tests fail unmutated.
#
# Usage: scripts/mutants.sh [--all | --changed] [--record] [build-dir]   (default build-dir: build)
#   (default)  CI's selection: every mutant of a file changed since the commit recorded in
#              scripts/mutants.checked (the last full run that killed every mutant), uncommitted
#              changes included, plus one rotating share of the others: mutant i is in share
#              i mod MUTANTS_SHARES (default 4), and a run takes share (commits in HEAD) mod
#              MUTANTS_SHARES, so consecutive commits cover every share in turn.
#   --changed  only the mutants of changed files (scripts/check.sh)
#   --all      every mutant (242: about 50 minutes on 2 cores)
#   --tested   the build folder's tests have just passed (CI, after ctest): skip running the
#              killing tests once unmutated before the mutants
#   --record   after a run of --all that killed every mutant on a clean tree, write HEAD to
#              scripts/mutants.checked (commit it)
#   --restore  only undo what an interrupted run left (below), then exit
#   MUTANTS_JOBS=n build jobs (default 2)
# The build folder is the README's (scripts/setup.sh) unless named: a mutant rebuilds one object
# and relinks, and the folder is left matching the sources.
# A mutant is written into the source file itself. A run stopped by anything its trap cannot catch
# (kill -9, the machine going away) leaves the journal $build/mutant-journal behind: the next run
# restores the original first, and stops instead when the file was edited since (never
# overwriting an edit; the original stays in $build/mutant-original).
set -euo pipefail
cd "$(dirname "$0")/.."
selection=ci; record=0; tested=0; restore_only=0; build=build
while (($#)); do
  case "$1" in
    --all) selection=all ;;
    --changed) selection=changed ;;
    --record) record=1 ;;
    --tested) tested=1 ;;
    --restore) restore_only=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "mutants: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
jobs=${MUTANTS_JOBS:-2}
backup="$build/mutant-original"
journal="$build/mutant-journal"  # the mutated file's path, then the mutant's sha256
content_hash() { sha256sum | cut -d' ' -f1; }

# Undo an interrupted run's mutant before anything reads the sources.
if [ -f "$journal" ]; then
  { read -r left_file; read -r left_hash; } <"$journal" || true
  if [ -n "${left_file:-}" ] && [ -f "$left_file" ] && [ -f "$backup" ]; then
    if [ "$(content_hash <"$left_file")" = "$left_hash" ]; then
      cp "$backup" "$left_file"
      echo "mutants: restored $left_file, left mutated by an interrupted run"
    elif ! cmp -s "$backup" "$left_file"; then
      echo "mutants: ERROR: $left_file was left mutated by an interrupted run ($journal) and has been" \
           "edited since; its original is $backup: compare, restore by hand, then delete $journal" >&2
      exit 1
    fi
  fi
  rm -f "$journal"
fi
[ "$restore_only" = 0 ] || exit 0
shares=${MUTANTS_SHARES:-4}
start=$(date +%s)
list=scripts/mutants.txt
checked_file=scripts/mutants.checked
mapfile -t all_mutants < <(grep -v -e '^#' -e '^$' "$list")

# Every pattern must occur exactly once, before anything is built.
errors=0
for line in "${all_mutants[@]}"; do
  file=${line%% @@ *}; rest=${line#* @@ }; pattern=${rest%% @@ *}
  count=$(grep -cF -- "$pattern" "$file" 2>/dev/null || true)
  if [ "$count" != 1 ]; then
    echo "mutants: ERROR: '$pattern' occurs ${count:-0} times in $file (expected once): update $list"
    errors=$((errors + 1))
  fi
done
[ "$errors" -eq 0 ] || exit 1

# The selection.
base=$(grep -v '^#' "$checked_file" 2>/dev/null | head -1 || true)
if [ -n "$base" ] && ! git cat-file -e "$base^{commit}" 2>/dev/null; then base=""; fi
changed_files() {  # files changed since the recorded full run, committed or not
  { git diff --name-only "$base" -- "$@"; git ls-files --others --exclude-standard -- "$@"; } | sort -u
}
selected=()
case "$selection" in
  all) selected=("${all_mutants[@]}") ;;
  *)
    if [ -z "$base" ]; then
      echo "mutants: no recorded full run in this history ($checked_file): running every mutant"
      selected=("${all_mutants[@]}")
      selection=all
    fi
    ;;
esac
if [ "$selection" != all ]; then
    changed=$(changed_files src include)
    # A changed test file may have weakened a test: the mutants its tags kill run too.
    changed_tags=$(changed_files tests | { grep '\.[ch]pp$' || true; } | while read -r f; do
                     [ -f "$f" ] && { grep -h 'TEST_CASE' "$f" | grep -o '\[[a-z_-]*\]' || true; }; done | sort -u)
    share=$(( $(git rev-list --count HEAD 2>/dev/null || echo 0) % shares ))
    in_share=0; in_changed=0
    for i in "${!all_mutants[@]}"; do
      line=${all_mutants[$i]}; file=${line%% @@ *}
      filter=${line##* @@ }
      tag_changed=0
      for tag in ${filter//,/ }; do
        if grep -qxF -- "$tag" <<<"$changed_tags"; then tag_changed=1; fi
      done
      if grep -qxF -- "$file" <<<"$changed" || [ "$tag_changed" = 1 ]; then
        selected+=("$line"); in_changed=$((in_changed + 1))
      elif [ "$selection" = ci ] && [ $((i % shares)) -eq "$share" ]; then
        selected+=("$line"); in_share=$((in_share + 1))
      fi
    done
    echo "mutants: $in_changed of changed files or tests since ${base:0:7}, $in_share of rotating" \
         "share $share of $shares (${#all_mutants[@]} in all; --all runs every one)"
fi
if [ "${#selected[@]}" -eq 0 ]; then
  echo "mutants: none selected (no mutated file changed)"
  exit 0
fi

# The build folder: the README's one when it exists, else configured here (ccache when present).
if [ ! -f "$build/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
fi
tests_bin="$build/tests/moesim_tests"
build_quietly() { ninja -C "$build" -j "$jobs" moesim_tests >"$build/mutant-build.log" 2>&1; }

# Restore the file being mutated whatever happens (failure, Ctrl-C); the restored file is newer
# than the mutant's object, so the next build compiles the original again.
current=""
restore() {
  if [ -n "$current" ]; then cp "$backup" "$current"; rm -f "$journal"; current=""; fi
}
trap restore EXIT
trap 'restore; exit 130' INT TERM

# The killing tests must pass on the unmutated code, or a "kill" means nothing.
build_quietly || { cat "$build/mutant-build.log"; echo "mutants: ERROR: the unmutated build fails"; exit 1; }
filters=$(printf '%s\n' "${selected[@]##* @@ }" | tr ',' '\n' | sort -u | paste -sd, -)
if [ "$tested" = 0 ] && ! "$tests_bin" "$filters" >"$build/mutant-tests.log" 2>&1; then
  tail -40 "$build/mutant-tests.log"
  echo "mutants: ERROR: the killing tests ($filters) fail without any mutant"
  exit 1
fi

total=0; killed=0; survivors=()
for line in "${selected[@]}"; do
  file=${line%% @@ *}; rest=${line#* @@ }
  pattern=${rest%% @@ *}; rest=${rest#* @@ }
  replacement=${rest%% @@ *}; filter=${rest##* @@ }
  total=$((total + 1))
  cp "$file" "$backup"
  current=$file
  content=$(<"$backup")
  mutated=${content/"$pattern"/"$replacement"}
  # The journal goes first: whenever the file holds the mutant, the journal names it.
  printf '%s\n%s\n' "$file" "$(printf '%s\n' "$mutated" | content_hash)" >"$journal"
  printf '%s\n' "$mutated" >"$file"
  t0=$(date +%s)
  if ! build_quietly; then
    tail -20 "$build/mutant-build.log"
    echo "mutants: ERROR: mutant $total ($file: $replacement) does not compile"
    exit 1
  fi
  if timeout 600 "$tests_bin" "$filter" >/dev/null 2>&1; then
    verdict="SURVIVED"; survivors+=("$file: '$pattern' -> '$replacement' ($filter)")
  else
    verdict="killed"; killed=$((killed + 1))
  fi
  echo "mutant $total $verdict by $filter in $(( $(date +%s) - t0 )) s: $file: $replacement"
  restore
done

build_quietly || true  # leave the build folder matching the sources
elapsed=$(( $(date +%s) - start ))
echo "mutants: $killed/$total killed in ${elapsed} s"
if [ "${#survivors[@]}" -gt 0 ]; then
  printf 'mutants: SURVIVED: %s\n' "${survivors[@]}"
  exit 1
fi
if [ "$record" = 1 ]; then
  if [ "$selection" != all ] || [ -n "$(git status --porcelain -- src include tests scripts)" ]; then
    echo "mutants: --record needs --all on a tree without uncommitted changes; nothing recorded" >&2
    exit 1
  fi
  { echo "# The last commit whose every mutant (scripts/mutants.txt) was killed: scripts/mutants.sh --all --record"
    git rev-parse HEAD; } >"$checked_file"
  echo "mutants: recorded $(git rev-parse --short HEAD) in $checked_file"
fi
