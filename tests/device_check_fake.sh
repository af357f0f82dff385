#!/usr/bin/env bash
# device_check_fake.sh - runs scripts/device-check.sh end to end against the
# fake driver of the tests, so the one script a GPU session runs (once, on
# borrowed time) is known to go through, and to fail when it should:
#  - every step runs, the failing ones too (on the fake driver the kernels
#    run nothing, so the correctness checks fail: the steps after them must
#    still run and report), with no Lua error or traceback, and a progress
#    line per step with the elapsed time;
#  - summary.md has a row for every expected figure, the exit status is 1
#    (figures missed), and the summary is printed at the end;
#  - what lands under $OUT is what a device machine brings back: at most 8
#    files, none more than 2 folders down, plain names, 16 MiB each at most:
#    summary.md, device-check.md (every step's tables) and a tarball of the rest;
#  - no build folder, or no driver: exit 2, and summary.md says why;
#  - every figure met (the accuracy step on emu): exit 0; a spent time budget:
#    the step is skipped, reported, and the exit status is 1.
# The figures themselves mean nothing here (the fake driver runs no kernel).
# usage: device_check_fake.sh BUILD_DIR FAKE_LIBCUDA
set -uo pipefail
build=$1
fake=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "device_check_fake: $*"; exit 1; }

# run NAME [VAR=value ...] -- BUILD: device-check.sh with OUT=$tmp/NAME; its status in $rc
run() {
  local name=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$tmp/$name"
  env OUT="$tmp/$name/out" "${envs[@]}" bash "$src/scripts/device-check.sh" "$@" > "$tmp/$name/log" 2>&1
  rc=$?
}

# what a device machine brings back: at most 8 plain files, 2 folders down, 16 MiB each
packaging() {
  local out=$1 n
  n=$(find "$out" -type f | wc -l)
  [ "$n" -le 8 ] || fail "$out holds $n files (at most 8 come back)"
  find "$out" -mindepth 4 | grep -q . && fail "$out has files more than 2 folders down: $(find "$out" -mindepth 4 | head -3)"
  find "$out" ! -type f ! -type d | grep -q . && fail "$out holds something that is not a plain file"
  find "$out" -mindepth 1 | sed "s|^$out/||" | grep -v '^[A-Za-z0-9._/-]*$' && fail "names outside [A-Za-z0-9._-] under $out"
  find "$out" -type f -size +16M | grep -q . && fail "a file over 16 MiB under $out"
  return 0
}

# 1. the whole check against the fake driver
run fake MGPU_LIBCUDA="$fake" -- "$build"
log=$tmp/fake/log
out=$tmp/fake/out
if grep -nE "stack traceback|attempt to|\[C\]: in|Segmentation|Aborted" "$log" "$tmp"/fake/out/*.md; then
  fail "device-check.sh hit a script error (above)"
fi
[ "$rc" -eq 1 ] || fail "exit status $rc on the fake driver, whose figures miss (want 1)"
packaging "$out"
for f in summary.md device-check.md device-check-files.tar.gz; do
  [ -s "$out/$f" ] || fail "no $f under OUT"
done
[ "$(find "$out" -type f | wc -l)" -eq 3 ] || fail "OUT holds more than its three files: $(ls -R "$out")"
for want in "correctness checks" "launch path vs bare" "smallest event-timed" "event times" "cost per event" \
            "instrumented tiled kernel slowdown" "time accuracy"; do
  grep -q "^| $want" "$out/summary.md" || { cat "$out/summary.md"; fail "summary.md lacks the row: $want"; }
done
grep -q "no figure" "$out/summary.md" && { cat "$out/summary.md"; fail "a figure is absent on the fake driver"; }
grep -q '^\*\*NOT MET: ' "$out/summary.md" || fail "summary.md does not say the check was not met"
for s in info check launch launch_lua record_cost overhead accuracy; do
  grep -q "^| $s | " "$out/summary.md" || fail "summary.md lists no step $s"
  grep -qE "^\[ *[0-9]+s\] step $s: (ok|failed|timed out)" "$log" || fail "no progress line for the end of step $s"
done
grep -q "^| check | failed (exit 1) |" "$out/summary.md" || fail "the check step did not fail on the fake driver"
# one table per step in device-check.md
for t in "| check | result | detail |" "| launches each |" "| launches | Lua kernel:launch" "| event times | figure |" \
         "| record | cycles per event" "| kernel | work per element |" "| spin target |" "## info:"; do
  grep -qF "$t" "$out/device-check.md" || fail "device-check.md lacks the table: $t"
done
# the rest in the tarball
tar -tzf "$out/device-check-files.tar.gz" > "$tmp/fake/tar" || fail "the tarball does not read"
for f in check/mosaic.bin check/mosaic.meta.json accuracy/spin-2000.bin check.md check.log launch.md summary.md; do
  grep -qx "device-check-files/$f" "$tmp/fake/tar" || fail "the tarball lacks $f"
done
# the summary is printed at the end
tail -n "$(wc -l < "$out/summary.md")" "$log" | cmp -s - "$out/summary.md" || fail "the log does not end with the summary"
# the fault row ran its kernel in a child process, which saw the device lost
grep -q "fault, then next launch | FAIL | child process: kernel_fault (fault faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700)" \
  "$out/device-check.md" || fail "the fault row did not fault in its child process"
grep -q "then there: no_device (the CUDA device is lost for this process" "$out/device-check.md" ||
  fail "after the fault the child's device did not refuse further use"

# 2. no build folder: nothing runs, exit 2, the summary says why
run nobuild MGPU_LIBCUDA="$fake" -- "$tmp/no-such-build"
[ "$rc" -eq 2 ] || fail "exit status $rc without a build folder (want 2)"
grep -q "NOT RUN: no $tmp/no-such-build/mgpu-harness" "$tmp/nobuild/out/summary.md" || fail "summary.md does not say the build is missing"
packaging "$tmp/nobuild/out"

# 3. no driver: exit 2, the summary says why
run nodriver MGPU_LIBCUDA=/nonexistent/libcuda.so.1 -- "$build"
[ "$rc" -eq 2 ] || fail "exit status $rc without a driver (want 2)"
grep -q "NOT RUN: no CUDA device: not available: cannot load the CUDA driver" "$tmp/nodriver/out/summary.md" ||
  { cat "$tmp/nodriver/out/summary.md"; fail "summary.md does not say the driver is missing"; }

# 4. every figure met (the accuracy step, on emu): exit 0
run met MGPU_CHECK_BACKEND=emu MGPU_CHECK_STEPS=accuracy -- "$build"
[ "$rc" -eq 0 ] || { cat "$tmp/met/log"; fail "exit status $rc with every figure met (want 0)"; }
grep -q '^\*\*all 1 expected figures are there and met' "$tmp/met/out/summary.md" || fail "summary.md does not say all were met"
grep -q "^| time accuracy, 2/10/50 us spins | .* | met |" "$tmp/met/out/summary.md" || fail "no accuracy row met on emu"

# 5. the time budget spent: the step is skipped and said so, exit 1
run budget MGPU_CHECK_BACKEND=emu MGPU_CHECK_STEPS=accuracy MGPU_CHECK_BUDGET_S=0 -- "$build"
[ "$rc" -eq 1 ] || fail "exit status $rc with the step skipped (want 1)"
grep -q "^| time accuracy | no figure | | MISSED (step accuracy: skipped: [-0-9]* of the check's 0 s were left) |" \
  "$tmp/budget/out/summary.md" || { cat "$tmp/budget/out/summary.md"; fail "the skipped step's figure is not reported missing"; }

echo "device-check.sh against the fake driver: every step ran, $(grep -c '^| ' "$out/summary.md") summary rows, 3 files" \
  "under OUT, exit 1 (missed), 2 (no build, no driver), 0 (all met), 1 (budget spent)"
