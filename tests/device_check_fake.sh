#!/usr/bin/env bash
# device_check_fake.sh - runs scripts/device-check.sh end to end against the
# fake driver of the tests, so the one script a GPU session runs (once, on
# borrowed time) is known to go through: every step runs, no Lua error or
# traceback, and summary.md has a row for every figure.  The figures
# themselves mean nothing here (the fake driver runs no kernel).
# usage: device_check_fake.sh BUILD_DIR FAKE_LIBCUDA
set -uo pipefail
build=$1
fake=$2
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OUT=$out MGPU_LIBCUDA=$fake bash "$src/scripts/device-check.sh" "$build" > "$out/log" 2>&1
if grep -nE "stack traceback|attempt to|\[C\]: in|Segmentation|Aborted" "$out/log"; then
  echo "device-check.sh hit a script error (above)"
  exit 1
fi
rows=$(grep -c '^| ' "$out/summary.md" 2>/dev/null || echo 0)
for want in "correctness checks" "launch path vs bare" "smallest event-timed" "cost per event" \
            "tiled kernel slowdown" "time accuracy"; do
  grep -q "$want" "$out/summary.md" || { echo "summary.md lacks the row: $want"; cat "$out/summary.md"; exit 1; }
done
for f in info.txt device-check.md launch-overhead.md record-cost.md overhead.md accuracy.md mosaic.bin; do
  [ -s "$out/$f" ] || { echo "device-check.sh wrote no $f"; exit 1; }
done
echo "device-check.sh ran every step against the fake driver: summary.md has $rows rows"
