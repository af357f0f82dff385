#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets with clang + ASan/UBSan and runs each
# for SECONDS (default 60) from the seeds in tests/fuzz/corpus-*; new inputs
# go to a temporary folder, the seeds stay as they are.
# A target that crashes, leaks or times out fails the script (exit 1), the
# input that did it kept as crash-*/leak-*/timeout-* in the working folder.
# With --runs N each target runs N inputs from a fixed seed instead: the same
# inputs every time for one build, so CI (scripts/test.sh) cannot fail by
# chance on a commit that passed here; long timed runs are for finding bugs.
# usage: scripts/fuzz.sh [SECONDS] | scripts/fuzz.sh --runs N
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--runs" ]; then
  [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --runs wants a positive count" >&2; exit 2; }
  limit=(-seed=1 -runs="$2"); what="$2 runs from seed 1"
else
  secs=${1:-60}
  [[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive count" >&2; exit 2; }
  limit=(-max_total_time="$secs"); what="${secs}s"
fi
command -v clang >/dev/null || { echo "fuzz.sh needs clang (apt-get install clang)" >&2; exit 2; }
CC=clang cmake -S . -B build-fuzz -DMGPU_FUZZ=ON -DMGPU_SANITIZE=ON -DMGPU_STATIC_DEPS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_dump fuzz_inputs fuzz_ptx fuzz_instrument >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for t in dump inputs ptx instrument; do
  mkdir -p "$work/$t"
  echo "== fuzz_$t for $what"
  rc=0
  build-fuzz/tests/fuzz_$t "$work/$t" tests/fuzz/corpus-$t "${limit[@]}" -max_len=8192 \
    -print_final_stats=1 >"$work/$t.log" 2>&1 || rc=$?
  grep -E 'stat::number_of_executed_units|DONE|ERROR|SUMMARY|Test unit written' "$work/$t.log" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz_$t FAILED (exit $rc):"
    tail -40 "$work/$t.log"
    failed=1
  fi
done
exit "$failed"
