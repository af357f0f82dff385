#!/usr/bin/env bash
# emu_interrupt.sh - Ctrl-C stops an emu launch that never ends within a second
# (issue 12): a script launching tests/ptx/side_effects.ptx's `forever_computing` kernel
# gets SIGINT after a second; it must exit with 130 (interrupted) soon after,
# and an experiment's folder must be consistent for --resume.
# usage: emu_interrupt.sh HARNESS SOURCE_DIR
set -uo pipefail
exe=$1 src=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat > "$T/forever.lua" <<LUA
local mgpu = require "mgpu"
local dev = mgpu.device("emu")
local k = dev:load("$src/tests/ptx/side_effects.ptx"):kernel("forever_computing") -- no deadlock: it computes
k:launch { grid = 1, block = 32, args = { dev:array("i32", 1), dev:array("i32", 32) } }
LUA
"$exe" "$T/forever.lua" 2>"$T/err" &
pid=$!
sleep 1
t0=$(date +%s%N)
kill -INT "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; echo "FAIL: still running 2.5 s after Ctrl-C"; exit 1; fi
wait "$pid"; st=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$st" -eq 130 ] || { echo "FAIL: exit status $st, not 130"; cat "$T/err"; exit 1; }
grep -q "interrupted" "$T/err" || { echo "FAIL: no 'interrupted' said"; cat "$T/err"; exit 1; }
[ "$ms" -lt 1000 ] || { echo "FAIL: took $ms ms to stop"; exit 1; }
echo "emu launch stopped $ms ms after Ctrl-C (exit 130)"
