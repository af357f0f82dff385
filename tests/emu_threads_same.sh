#!/usr/bin/env bash
# emu_threads_same.sh - the suite's emu kernels on 1 and on 2 workers (MGPU_EMU_THREADS, issue 33)
# give the same bytes: the example experiments' traces, summaries and results
# (scripts/bench/trace_check.sh), the corpus's verdicts (tests/corpus/run.lua), and the emu C tests'
# output (each must pass with both; wall-clock seconds are left out of the comparison).
#   tests/emu_threads_same.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
cd "$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for n in 1 2; do
  MGPU_EMU_THREADS=$n scripts/bench/trace_check.sh "$build" >"$tmp/traces.$n" 2>&1 || { echo "trace_check with $n threads failed:"; cat "$tmp/traces.$n"; fail=1; }
  MGPU_EMU_THREADS=$n "$build/mgpu-harness" tests/corpus/run.lua 2>&1 | sed -E 's/, [0-9.]+ s$//' >"$tmp/corpus.$n"
  for t in test_emu test_emu_ops test_emu_grid test_emu_time test_emu_hopper test_emu_mma test_emu_clock; do
    MGPU_EMU_THREADS=$n "$build/tests/$t" . >"$tmp/$t.raw.$n" 2>&1 || { echo "$t with $n threads failed:"; tail -20 "$tmp/$t.raw.$n"; fail=1; }
    sed -E 's/[0-9]+\.[0-9]+ s\b/N s/g' "$tmp/$t.raw.$n" >"$tmp/$t.$n"
  done
done
for f in traces corpus test_emu test_emu_ops test_emu_grid test_emu_time test_emu_hopper test_emu_mma test_emu_clock; do
  if ! cmp -s "$tmp/$f.1" "$tmp/$f.2"; then
    echo "$f: 1 and 2 threads differ:"; diff "$tmp/$f.1" "$tmp/$f.2" | head -20; fail=1
  fi
done
grep -q "0 mismatch, 0 failed" "$tmp/corpus.2" || { echo "corpus with 2 threads:"; tail -5 "$tmp/corpus.2"; fail=1; }
[ "$fail" = 0 ] && echo "emu_threads_same: traces, corpus and emu C tests the same on 1 and 2 threads"
exit $fail
