#!/usr/bin/env bash
# trace_check.sh - the example experiments' traces and summaries on emu, hashed, to compare a
# change of emu's engine before/after (they must stay byte for byte the same).
#   scripts/bench/trace_check.sh [BUILD_DIR] > before.txt; (change, rebuild); ... > after.txt; diff
# Prints one line per file: its sha256 and name; the results' timing fields are left out.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ex in tile_sweep copy overflow_retry; do
  "$build/mgpu-harness" "scripts/examples/$ex.lua" --backend emu --out "$tmp/$ex" >"$tmp/$ex.log" 2>&1 ||
    { echo "$ex failed:"; cat "$tmp/$ex.log"; exit 1; }
  for f in "$tmp/$ex"/*.trace.json "$tmp/$ex"/*.summary.json; do
    [ -e "$f" ] && echo "$(sha256sum <"$f" | cut -c1-16) $ex/$(basename "$f")"
  done
  # results without what varies run to run (times, dates, paths)
  sed -E 's/"[a-z_]*(time|_s|_ms|_ns|date|at|host|path|dir)": *("[^"]*"|[0-9.e+-]+)//g' "$tmp/$ex/results.jsonl" |
    sha256sum | cut -c1-16 | sed "s|\$| $ex/results.jsonl|"
done
