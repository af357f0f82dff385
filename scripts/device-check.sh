#!/usr/bin/env bash
# device-check.sh - the GPU checks, in one command, on a machine with an NVIDIA
# GPU and a driver (the build folder may come from another machine: Lua,
# jansson and nettle are linked statically, libcuda is loaded at run time).
# Builds nothing.
#
# Steps, each under a time limit, one after the other; a step that fails or
# times out is reported and the others still run:
#   info        mgpu-harness info (also the check that a CUDA device is there)
#   check       scripts/device/check.lua: correctness against emu, Mosaic, TMA, a fault
#   launch      build/launchbench: the launch path against bare cuLaunchKernel
#   launch_lua  scripts/device/launch.lua: kernel:launch's cost, what event times resolve
#   record_cost scripts/device/record_cost.lua: cycles per recorded event against Mosaic's record
#   overhead    scripts/device/overhead.lua: the instrumented tiled kernel's slowdown
#   accuracy    scripts/device/accuracy.lua: 2/10/50 us spins read within 2%
#   ncu_stats   scripts/device/ncu_stats.lua: emu's counters against Nsight Compute's
#   microbench  scripts/device/microbench.lua: latencies, bandwidths (a write burst too), wgmma rate, fma and ex2 pipe rates, their
#               result latencies (dependent chains), SM clock under load against emu's device model
#               (issue 32: what re-fits emu_model.c)
# It prints a line per step with the elapsed time, and at the end the summary.
#
# What it writes under $OUT (default results/device-check), three files, none
# in a folder, so that a device machine that brings back few files brings back
# everything; they are rewritten after each step, so a run cut short keeps
# what was done:
#   summary.md                 every expected figure against its target (a figure
#                              that is absent reads MISSED, with the step's fate), the steps
#   device-check.md            every step's tables
#   device-check-files.tar.gz  the rest: each step's output and log, the Mosaic buffer and
#                              traces, the accuracy spins (device-check-files/...)
#
# Exit status: 0 every expected figure is there and met, and every step ran
# to its end; 1 a figure missed or absent, or a step failed, timed out or was
# skipped; 2 nothing could run (no build folder, no CUDA device), summary.md says why.
#
# usage: scripts/device-check.sh [BUILD_DIR]
# environment:
#   OUT                    the results folder
#   MGPU_CHECK_STEPS       steps to run, comma-separated (default: all; info always runs)
#   MGPU_CHECK_BUDGET_S    the whole check's time (default 480 s): a step gets what is left
#                          of it at most, and one that would start with under 10 s is skipped
#   MGPU_CHECK_BACKEND     the Lua steps' backend (default cuda; emu runs them on the CPU,
#                          which is how the tests check this script's success path)
#   MGPU_LIBCUDA           another libcuda (the tests' fake driver)
#   MGPU_EMU_MODEL         the emu model the microbench step compares with (default h200)
set -uo pipefail
t0=$SECONDS
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
out=${OUT:-results/device-check}
# a build folder (and OUT) named from where the caller is; else from the repository's root
[ -d "$build" ] && build=$(cd "$build" && pwd)
case $out in /*) ;; *) [ -d "$(dirname "$out")" ] && out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out") ;; esac
cd "$src" || exit 2
backend=${MGPU_CHECK_BACKEND:-cuda}
budget=${MGPU_CHECK_BUDGET_S:-480}
want_steps=",${MGPU_CHECK_STEPS:-check,launch,launch_lua,record_cost,overhead,accuracy,ncu_stats,microbench},"
all_steps=(info check launch launch_lua record_cost overhead accuracy ncu_stats microbench)

mkdir -p "$out" || { echo "device-check.sh: cannot make $out" >&2; exit 2; }
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX") || exit 2
raw=$work/device-check-files
mkdir -p "$raw"
trap 'rm -rf "$work"' EXIT
rm -f "$out/summary.md" "$out/device-check.md" "$out/device-check-files.tar.gz"

say() { printf '[%4ds] %s\n' "$((SECONDS - t0))" "$*"; }

declare -A title status took expected
title=([info]="devices and driver (mgpu-harness info)" [check]="correctness (scripts/device/check.lua)"
       [launch]="launch overhead (build/launchbench)" [launch_lua]="launch cost through Lua (scripts/device/launch.lua)"
       [record_cost]="cost per recorded event (scripts/device/record_cost.lua)"
       [overhead]="instrumented slowdown (scripts/device/overhead.lua)"
       [accuracy]="time accuracy (scripts/device/accuracy.lua)"
       [ncu_stats]="emu's counters vs Nsight Compute (scripts/device/ncu_stats.lua)"
       [microbench]="emu's clock: microbenchmarks vs its device model (scripts/device/microbench.lua)")
# the figures each step must produce: the start of a RESULT row's measure
expected=([check]="correctness checks" [launch]="launch path vs bare|smallest event-timed"
          [launch_lua]="event times" [record_cost]="cost per event" [overhead]="instrumented tiled kernel slowdown"
          [accuracy]="time accuracy" [ncu_stats]="emu counters vs ncu"
          [microbench]="emu clock microbenchmarks")
ran=()
device="(unknown device)"
notrun=""

# The summary, the tables and the tarball, from what is done so far.
package() {
  local rows="$work/rows" missing=0 bad=0 total=0
  : > "$rows"
  for s in ${ran[@]+"${ran[@]}"}; do
    [ -n "${expected[$s]:-}" ] || continue
    IFS='|' read -ra names <<< "${expected[$s]}"
    for name in "${names[@]}"; do
      total=$((total + 1))
      local line
      line=$(sed -n 's/^RESULT //p' "$raw/$s.md" 2>/dev/null | grep -F -m1 "| $name" || true)
      if [ -n "$line" ]; then
        echo "$line" >> "$rows"
        case $line in *MISSED*) bad=$((bad + 1)) ;; esac
      else
        echo "| $name | no figure | | MISSED (step $s: ${status[$s]}) |" >> "$rows"
        missing=$((missing + 1))
      fi
    done
  done
  local failed_steps=0
  for s in ${ran[@]+"${ran[@]}"}; do [ "${status[$s]}" = ok ] || failed_steps=$((failed_steps + 1)); done
  local verdict
  if [ -n "$notrun" ]; then
    verdict="NOT RUN: $notrun"
  elif [ $((bad + missing + failed_steps)) -eq 0 ]; then
    verdict="all $total expected figures are there and met; every step ran to its end"
  else
    verdict="NOT MET: $bad of $total figures missed, $missing absent, $failed_steps step(s) failed, timed out or skipped"
  fi
  {
    echo "# device check: $device"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - t0)) s, backend $backend, build $build"
    echo
    echo "**$verdict**"
    echo
    echo "| measure | figure | target | |"
    echo "|---|---|---|---|"
    cat "$rows"
    echo
    echo "| step | status | time |"
    echo "|---|---|---|"
    for s in ${ran[@]+"${ran[@]}"}; do echo "| $s | ${status[$s]} | ${took[$s]:-} s |"; done
  } > "$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
  {
    echo "# device check: every step's tables"
    echo
    echo "$device; see summary.md for the figures against their targets."
    for s in ${ran[@]+"${ran[@]}"}; do
      echo
      echo "## $s: ${title[$s]}"
      echo
      echo "status: ${status[$s]} (${took[$s]:-} s)"
      echo
      if [ "$s" = info ]; then echo '```'; cat "$raw/$s.md" 2>/dev/null; echo '```'
      else grep -v '^RESULT ' "$raw/$s.md" 2>/dev/null; fi
    done
  } > "$out/device-check.md.tmp" && mv "$out/device-check.md.tmp" "$out/device-check.md"
  cp "$out/summary.md" "$raw/summary.md"
  tar -czf "$work/files.tar.gz" -C "$work" device-check-files 2>/dev/null
  if [ "$(stat -c %s "$work/files.tar.gz" 2>/dev/null || echo 0)" -gt $((15 * 1024 * 1024)) ]; then
    # a device machine brings back 16 MiB a file: the traces go first (their buffers stay)
    tar -czf "$work/files.tar.gz" -C "$work" --exclude='*.trace.json' device-check-files 2>/dev/null
  fi
  mv "$work/files.tar.gz" "$out/device-check-files.tar.gz"
  [ $((bad + missing + failed_steps)) -eq 0 ]
}

# Stops here, having said why nothing could run.
cannot_run() {
  notrun=$1
  say "NOT RUN: $notrun"
  package
  cat "$out/summary.md"
  exit 2
}

# run_step NAME LIMIT_S COMMAND...: stdout to the step's table, stderr to its log
run_step() {
  local s=$1 limit=$2
  shift 2
  [ "$s" = info ] || [[ $want_steps == *",$s,"* ]] || return 0
  ran+=("$s")
  local left=$((budget - (SECONDS - t0)))
  if [ "$s" != info ] && [ "$left" -lt 10 ]; then
    status[$s]="skipped: $left of the check's $budget s were left"
    took[$s]=0
    say "step $s: ${status[$s]}"
    package
    return 0
  fi
  [ "$s" = info ] || [ "$limit" -le "$left" ] || limit=$left
  say "step $s: ${title[$s]} (limit $limit s)"
  local s0=$SECONDS rc
  timeout -k 10 "$limit" "$@" > "$raw/$s.md" 2> "$raw/$s.log"
  rc=$?
  took[$s]=$((SECONDS - s0))
  case $rc in
    0) status[$s]=ok ;;
    124|137) status[$s]="timed out after $limit s" ;;
    *) status[$s]="failed (exit $rc)" ;;
  esac
  say "step $s: ${status[$s]} in ${took[$s]} s"
  if [ "$rc" -ne 0 ] && [ -s "$raw/$s.log" ]; then tail -n 6 "$raw/$s.log" | sed 's/^/    /'; fi
  package
  return 0
}

harness=$build/mgpu-harness
case $harness in /*) ;; *) harness=$src/$harness ;; esac
say "device check: build $build, results in $out, budget $budget s"
[ -x "$harness" ] || cannot_run "no $harness: build first (cmake -S . -B build && cmake --build build -j) or name the build folder"
export MGPU_HARNESS=$harness # check.lua runs its faulting kernel in a child process of this binary

run_step info 60 "$harness" info
if [ "$backend" = cuda ]; then
  cuda_line=$(grep -m1 '^  cuda ' "$raw/info.md" 2>/dev/null | sed 's/^  cuda *//')
  # "driver 13.0, 1 device ..." when there is one; "not available: why" when not
  case $cuda_line in
    ""|"not available"*|*" 0 devices"*)
      cannot_run "no CUDA device: ${cuda_line:-mgpu-harness info said nothing of cuda (${status[info]})}" ;;
  esac
  device=$(awk '/^  cuda /{c=1; next} c && /^ +0: /{sub(/^ +0: /, ""); print; exit}' "$raw/info.md")
else
  device="$backend (MGPU_CHECK_BACKEND): not a GPU run"
fi
[ -n "$device" ] || device="(unknown device)"

lua_step() { local s=$1 limit=$2 script=$3; shift 3; run_step "$s" "$limit" "$harness" "scripts/device/$script" "$@"; }
lua_step check 240 check.lua "$raw/check" "$backend"
run_step launch 120 "$build/launchbench" 20000
lua_step launch_lua 120 launch.lua "$backend" 20000
lua_step record_cost 90 record_cost.lua "$backend"
lua_step overhead 180 overhead.lua "$backend" 51
lua_step accuracy 120 accuracy.lua "$backend" "$raw/accuracy"
lua_step ncu_stats 180 ncu_stats.lua "$raw/ncu" "$backend"
lua_step microbench 120 microbench.lua "$backend" "${MGPU_EMU_MODEL:-h200}"

package
rc=$?
say "done: summary.md, device-check.md, device-check-files.tar.gz in $out"
echo
cat "$out/summary.md"
[ "$rc" -eq 0 ] && exit 0
exit 1
