#!/usr/bin/env bash
# workers.sh - what worker processes buy and cost on emu, in one run:
#  1. a 16-point sweep of the tiled kernel (work enough per point) with --workers 2
#     against --workers 1 (the speed-up; target at least 1.8x on a 2-core machine);
#  2. 200 points that do next to nothing, in-process against --workers 1: the per-point
#     cost of the worker protocol (target under 5 ms).
# usage: scripts/bench/workers.sh [BUILD]   (prints a table; figures in docs/results/workers-bench.md)
set -euo pipefail
build=${1:-build}
exe=$(cd "$build" && pwd)/mgpu-harness
src=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/mgpu-workers-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/heavy.lua" <<LUA
return {
  name = "bench_heavy", module = "$src/ptx/tiled.ptx", kernel = "tiled_scale", instrument = "warp",
  axes = { k = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 } },
  warmup = 0, repeats = 1,
  setup = function(p, dev)
    local n = 256 * 4 * 400
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = 4, block = 256, smem = 1024, args = { a, c, n, 1.0 + p.k }, estimate = 8 * 400 }
  end,
}
LUA
cat > "$T/light.lua" <<LUA
local pts = {}
for i = 1, 200 do pts[i] = i end
return {
  name = "bench_light", module = "$src/ptx/copy.ptx", kernel = "copy_f32x4",
  axes = { k = pts }, warmup = 0, repeats = 1,
  setup = function(p, dev)
    return { grid = 1, block = 32, args = { dev:array("f32", 4), dev:array("f32", 4), 0 } }
  end,
}
LUA
now() { date +%s.%N; }
run() { # run NAME ARGS... -> seconds
  local t0 t1
  rm -rf "$T/out"
  t0=$(now)
  "$exe" "$@" --out "$T/out" --quiet >/dev/null
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
best() { # best of 3
  local b=999999 t
  for _ in 1 2 3; do t=$(run "$@"); b=$(echo "if ($t < $b) $t else $b" | bc -l); done
  echo "$b"
}
# the machine's own ceiling: two in-process runs of the sweep at once against one alone
pair() {
  local t0 t1
  rm -rf "$T/p1" "$T/p2"
  t0=$(now)
  "$exe" "$T/heavy.lua" --out "$T/p1" --quiet --workers 0 >/dev/null &
  "$exe" "$T/heavy.lua" --out "$T/p2" --quiet --workers 0 >/dev/null
  wait
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
alone=$(best "$T/heavy.lua" --workers 0)
both=999999
for _ in 1 2 3; do t=$(pair); both=$(echo "if ($t < $both) $t else $both" | bc -l); done
w1=$(best "$T/heavy.lua" --workers 1)
w2=$(best "$T/heavy.lua" --workers 2)
inproc=$(best "$T/light.lua")
lw1=$(best "$T/light.lua" --workers 1)
printf "workers bench on %s (%s cores), best of 3\n" "$(hostname -s)" "$(nproc)"
printf "| sweep | seconds |\n| --- | --- |\n"
printf "| 16 heavy points, --workers 1 | %.3f |\n| 16 heavy points, --workers 2 | %.3f |\n" "$w1" "$w2"
printf "| 200 light points, in process | %.3f |\n| 200 light points, --workers 1 | %.3f |\n" "$inproc" "$lw1"
printf "| 16 heavy points in process, alone | %.3f |\n| two such runs at once | %.3f |\n" "$alone" "$both"
printf "speed-up of 2 workers: %.2fx (target >= 1.8x); this machine's ceiling (two independent runs): %.2fx\n" \
  "$(echo "$w1 / $w2" | bc -l)" "$(echo "2 * $alone / $both" | bc -l)"
printf "worker protocol per point: %.2f ms (target < 5 ms)\n" "$(echo "($lw1 - $inproc) / 200 * 1000" | bc -l)"
