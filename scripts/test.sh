#!/usr/bin/env bash
# test.sh - the whole test suite from a fresh checkout: installs the packages,
# builds, runs ctest (C tests, JAX fixture comparison, busted specs under
# Lua 5.4 and LuaJIT), then
# builds again with AddressSanitizer/UBSan and runs everything once more.
# usage: scripts/test.sh        (build folders: build/ and build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
# tests at once: every test makes its own folders and temporary files, so they run side by side;
# at most 4, so that the tests with time limits (the hang checks) are not starved
tjobs=$((jobs < 4 ? jobs : 4))

echo "== build and test (RelWithDebInfo, -Werror)"
cmake -S . -B build -DMGPU_WERROR=ON -DMGPU_LUAJIT=ON >/dev/null
cmake --build build -j "$jobs" >/dev/null
ctest --test-dir build --output-on-failure -j "$tjobs"

echo "== a short fuzz run of each libFuzzer target (scripts/fuzz.sh --runs 20000: the same inputs every time)"
if echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
    clang -x c -fsanitize=fuzzer,address -o /tmp/mgpu-fuzz-probe - >/dev/null 2>&1; then
  rm -f /tmp/mgpu-fuzz-probe
  scripts/fuzz.sh --runs 20000
else
  echo "SKIP: clang with libFuzzer is not installed (apt-get install clang)"
fi

echo "== build and test under AddressSanitizer + UBSan"
cmake -S . -B build-asan -DMGPU_SANITIZE=ON -DMGPU_STATIC_DEPS=OFF -DMGPU_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs" >/dev/null
ctest --test-dir build-asan --output-on-failure -j "$tjobs"
