#!/usr/bin/env bash
# device-check.sh - the GPU checks, in one command, on a machine with an NVIDIA
# GPU and a driver (the build folder may come from another machine: Lua,
# jansson and nettle are linked statically, libcuda is loaded at run time).
# Writes its tables under $OUT (or results/device-check): device-check.md (the
# correctness rows), one file per benchmark, and summary.md (each figure
# against its target); exits 1 when a target was missed.  Builds nothing.
# usage: scripts/device-check.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${OUT:-results/device-check}
mkdir -p "$out"
"$build/mgpu-harness" info | tee "$out/info.txt"
"$build/mgpu-harness" scripts/device/check.lua "$out" | tee "$out/check.out"
# launch overhead: the harness's launch path against bare cuLaunchKernel (target 1.2x)
"$build/launchbench" 20000 | tee "$out/launch-overhead.md"
# the same through Lua's kernel:launch (argument checks, result table)
"$build/mgpu-harness" scripts/device/launch.lua cuda 20000 | tee -a "$out/launch-overhead.md"
# cost per recorded event against Mosaic's record (target 1.15x)
"$build/mgpu-harness" scripts/device/record_cost.lua cuda | tee "$out/record-cost.md"
# slowdown of the instrumented tiled kernel (target under 3%)
"$build/mgpu-harness" scripts/device/overhead.lua cuda 51 | tee "$out/overhead.md"
# instrumented time accuracy on the GPU: 2/10/50 us spins within 2%, Mosaic's reading, cost per event
"$build/mgpu-harness" scripts/device/accuracy.lua cuda "$out/accuracy" | tee "$out/accuracy.md"
# the figures against their targets, in one table
{
  echo "| measure | figure | target | |"
  echo "|---|---|---|---|"
  cat "$out"/check.out "$out"/launch-overhead.md "$out"/record-cost.md "$out"/overhead.md "$out"/accuracy.md \
    2>/dev/null | sed -n 's/^RESULT //p'
} | tee "$out/summary.md"
! grep -q MISSED "$out/summary.md"
