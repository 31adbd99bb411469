#!/usr/bin/env bash
# Configures and builds the sanitized build folder, build-asan (CMake preset "sanitize"), that
# scripts/sanitize.sh (the test suite under ASan + UBSan) and scripts/fuzz.sh (the libFuzzer
# harness) share, so that CI compiles the library under the sanitizers once. -O1 with line tables
# only: the sanitizers' recommended level, and about half the compile time of -O2 -g.
#
# With clang's libFuzzer present (clang++ -fsanitize=fuzzer links a probe), clang builds the
# folder and the fuzz harness is one of its targets (MOESIM_FUZZ); otherwise the default compiler
# builds the CLI and the tests and scripts/fuzz.sh skips.
#
# Usage: scripts/sanitized-build.sh [TARGET...]   (default: everything the folder has)
#   BUILD_JOBS=n  build jobs (default: nproc)
# Prints "sanitized-build: fuzz harness yes|no" as its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

fuzz=OFF
compiler=${CXX:-c++}
if command -v clang++ >/dev/null; then
  probe=$(mktemp -d)
  printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n' \
    >"$probe/probe.cpp"
  if clang++ -fsanitize=fuzzer "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
    fuzz=ON
    compiler=clang++
  fi
  rm -rf "$probe"
fi
compiler=$(command -v "$compiler")

# A folder configured with another compiler is reconfigured from scratch (CMake cannot switch).
cache=build-asan/CMakeCache.txt
if [ -f "$cache" ] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$compiler" "$cache"; then
  rm -rf build-asan/CMakeCache.txt build-asan/CMakeFiles
fi
cmake --preset sanitize -DCMAKE_CXX_COMPILER="$compiler" -DMOESIM_FUZZ="$fuzz" >/dev/null
targets=()
for t in "$@"; do
  [ "$t" = moesim_fuzz ] && [ "$fuzz" = OFF ] && continue  # no harness without libFuzzer: fuzz.sh skips
  targets+=(--target "$t")
done
if [ "$#" -gt 0 ] && [ "${#targets[@]}" -eq 0 ]; then
  echo "sanitized-build: fuzz harness no"
  exit 0
fi
cmake --build --preset sanitize -j "${BUILD_JOBS:-$(nproc)}" "${targets[@]}"
echo "sanitized-build: fuzz harness $([ "$fuzz" = ON ] && echo yes || echo no)"
