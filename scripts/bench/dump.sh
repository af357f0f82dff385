#!/usr/bin/env bash
# dump.sh - dump throughput and memory benchmark.
# Generates a warp-scope buffer of BLOCKS x WARPS traces x EVENTS events
# (default 1056 x 8 x 1024 = 8.65 M events), dumps it in both modes and
# reports events/s, output MB/s, peak RSS, and the dump's time against the
# floor: writing the same number of bytes to the same disk, measured in the
# same run.  Times are the best of REPEAT runs.  The output goes to two
# places in turn: a disk file system (TMPDIR, default /tmp; its page-cache
# writes vary from run to run) and, where present, memory (/dev/shm).
# usage: scripts/bench/dump.sh [BUILD_DIR] [BLOCKS WARPS EVENTS]
set -euo pipefail
build=${1:-build}
blocks=${2:-1056}; warps=${3:-8}; events=${4:-1024}
repeat=${REPEAT:-3}
exe=$build/mgpu-harness
tool=$build/dumpbench
[ -x "$exe" ] && [ -x "$tool" ] || { echo "build first: $exe and $tool are missing" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$tool" gen "$tmp/buf.bin" "$tmp/meta.json" "$blocks" "$warps" "$events"
total=$((blocks * warps * events))
bufmb=$(( $(stat -c %s "$tmp/buf.bin") / 1000000 ))
echo "buffer: $blocks blocks x $warps warps x $events events = $total events, ${bufmb} MB; one core; best of $repeat"

best() { # prints "seconds rss_kb" of the fastest of $repeat runs of "$@"
  # Each run starts with no output file and no dirty pages, so neither the
  # dump nor the floor pays for the other's writeback or file deletion.
  local b="" r=0 line t k
  for _ in $(seq "$repeat"); do
    rm -f "$out_dir/out.json" "$out_dir/floor.out"
    sync
    line=$("$tool" measure "$@")
    t=${line% *}; k=${line#* }
    if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
    [ "$k" -gt "$r" ] && r=$k
  done
  echo "$b $r"
}

targets=("${TMPDIR:-/tmp}")
[ -d /dev/shm ] && [ -w /dev/shm ] && targets+=(/dev/shm)
for target in "${targets[@]}"; do
  out_dir=$(mktemp -d "$target/mgpu-bench-out.XXXXXX")
  echo
  echo "output to $out_dir ($(stat -f -c %T "$out_dir"))"
  printf '%-8s %12s %10s %10s %10s %9s %9s %8s\n' mode events/s out_MB out_MB/s peak_RSS dump_s floor_s ratio
  for mode in default mosaic; do
    args=(dump "$tmp/buf.bin" --meta "$tmp/meta.json" -o "$out_dir/out.json" -q)
    [ "$mode" = mosaic ] && args+=(--compat mosaic) || args+=(--clock-ghz 1.98)
    read -r t rss < <(best "$exe" "${args[@]}")
    bytes=$(stat -c %s "$out_dir/out.json")
    read -r f _ < <(best "$tool" floor "$out_dir/floor.out" "$bytes")
    awk -v m="$mode" -v n="$total" -v t="$t" -v b="$bytes" -v r="$rss" -v f="$f" 'BEGIN{
      printf "%-8s %12.3g %10.1f %10.1f %8.1f MB %9.3f %9.3f %7.2fx\n", m, n/t, b/1e6, b/1e6/t, r/1024, t, f, t/f }'
  done
  rm -rf "$out_dir"
done
echo "targets: >= 1e7 events/s, peak RSS < 100 MB, ratio (dump/floor) <= 3x"
