#!/usr/bin/env bash
# instrument.sh - time of `mgpu-harness instrument` against the number of
# region markers.  For each size N it generates one kernel with N/2
# "// @mgpu begin/end" pairs, each around one add (names cycled from NAMES
# distinct ones; NAMES=0: every pair its own name), instruments it, checks
# that the harness reports N markers, and prints the best of REPEAT runs
# beside two baselines measured in the same run: the same module with the
# markers stripped (parse and copy, nothing to rewrite) and the shipped
# ptx/tiled.ptx (a real kernel: mostly process start).
# usage: scripts/bench/instrument.sh [BUILD_DIR] [N...]   (default: build 10000 30000 100000)
# env: REPEAT (3), NAMES (16), TIMEOUT seconds per run (300).
set -euo pipefail
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 30000 100000)
repeat=${REPEAT:-3}; names=${NAMES:-16}; limit=${TIMEOUT:-300}
exe=$build/mgpu-harness
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$exe" ] || { echo "build first: $exe is missing" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-instr-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

gen() { # gen N NAMES MARKERS(0/1) > file.ptx
  awk -v n="$1" -v k="$2" -v mk="$3" 'BEGIN {
    print ".version 8.0\n.target sm_90\n.address_size 64\n"
    print ".visible .entry bench(\n\t.param .u64 bench_param_0\n)\n{"
    print "\t.reg .b32 \t%r<4>;\n\t.reg .b64 \t%rd<3>;\n"
    print "\tld.param.u64 \t%rd1, [bench_param_0];\n\tcvta.to.global.u64 \t%rd2, %rd1;\n\tmov.u32 \t%r1, 0;"
    for (i = 0; i < n / 2; i++) {
      name = k > 0 ? "r" (i % k) : "r" i
      if (mk) print "\t// @mgpu begin " name
      print "\tadd.s32 \t%r1, %r1, 1;"
      if (mk) print "\t// @mgpu end " name
    }
    print "\tst.global.u32 \t[%rd2], %r1;\n\tret;\n}"
  }'
}

now() { date +%s.%N; }
best() { # best IN OUT: fastest of $repeat runs of `instrument IN -o OUT` (seconds, or "timeout"), stderr in $tmp/err
  local b="" t0 t1 t rc
  for _ in $(seq "$repeat"); do
    t0=$(now)
    rc=0
    timeout "$limit" "$exe" instrument "$1" -o "$2" 2>"$tmp/err" || rc=$?
    t1=$(now)
    if [ "$rc" = 124 ]; then echo timeout; return; fi
    [ "$rc" = 0 ] || { echo "instrument $1 failed ($rc):" >&2; cat "$tmp/err" >&2; exit 1; }
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
    if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
  done
  echo "$b"
}

echo "mgpu-harness instrument: best of $repeat; names: $([ "$names" -gt 0 ] && echo "$names cycled" || echo "all distinct")"
tiled=$(best "$src/ptx/tiled.ptx" "$tmp/tiled.out")
echo "baseline: ptx/tiled.ptx ($(grep -c '@mgpu' "$src/ptx/tiled.ptx") markers) ${tiled} s"
printf '%8s %9s %12s %12s %8s\n' markers lines instrument_s stripped_s ratio
for n in "${sizes[@]}"; do
  gen "$n" "$names" 1 >"$tmp/in.ptx"
  gen "$n" "$names" 0 >"$tmp/plain.ptx"
  t=$(best "$tmp/in.ptx" "$tmp/out.ptx")
  if [ "$t" != timeout ]; then
    grep -q "^mgpu-harness: $n markers in 1 kernel" "$tmp/err" || { echo "unexpected report:" >&2; cat "$tmp/err" >&2; exit 1; }
  fi
  s=$(best "$tmp/plain.ptx" "$tmp/plain.out")
  cmp -s "$tmp/plain.ptx" "$tmp/plain.out" || { echo "a module without markers did not come back unchanged" >&2; exit 1; }
  lines=$(wc -l <"$tmp/in.ptx")
  if [ "$t" = timeout ]; then
    printf '%8s %9s %12s %12s %8s\n' "$n" "$lines" ">$limit" "$s" "-"
  else
    awk -v n="$n" -v l="$lines" -v t="$t" -v s="$s" 'BEGIN{printf "%8d %9d %12.3f %12.3f %7.1fx\n", n, l, t, s, t / s}'
  fi
done
echo "target: 100000 markers in under 1 s"
