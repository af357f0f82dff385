#!/usr/bin/env bash
# sass_check.sh - where ptxas and a disassembler that reads its sm_90 cubins are installed
# (scripts/sass/sass_lib.sh: $MGPU_SASS_DIR, beside ptxas, PATH, /usr/local/cuda/bin), checks
# that in the SASS of tests/ptx/clock_order.ptx, instrumented in both scopes and both record
# layouts, each %clock read stays where its marker is relative to the region's memory
# operations: the global load between the clock reads of "load", the store of the loaded value
# (whose wait is "use"'s) between those of "use", the shared store, barrier and shared load
# between those of "shared", the atomic inside "atom", and in the loop (which ptxas unrolls)
# every load inside a "step" and every store inside an "acc".  ptxas's treatment of %clock is
# observed behaviour, not a documented promise: this is the check that it still holds.
# Exit 77 (skipped) without the tools.
# usage: sass_check.sh TEST_INSTRUMENT SOURCE_DIR
set -euo pipefail
tool=$1; src=$2
. "$src/scripts/sass/sass_lib.sh"
sass_find || { echo "ptxas not found: skipped"; exit 77; }
[ -n "$SASS_DIS" ] || { echo "no nvdisasm/cuobjdump beside ptxas, on PATH or in \$MGPU_SASS_DIR: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-sass-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$tool" "$src" --emit "$tmp" tests/ptx/clock_order.ptx
# the tokens: C a %clock read, L a global load, S the user's 16-bit global store, s/l shared
# store/load, B the barrier, A the atomic; labels, branches and the rest left out
tokens() {
  sass_insns "$1" clock_order | awk '
    /SR_CLOCKLO/ { printf "C " } /^(@!?U?P[0-9T] )?LDG/ { printf "L " } /STG\.E\.U16/ { printf "S " }
    /^(@!?P[0-9] )?STS/ { printf "s " } /^(@!?P[0-9] )?LDS/ { printf "l " } /^(@!?P[0-9] )?BAR\.SYNC/ { printf "B " }
    /ATOMG|REDG|^(@!?P[0-9] )?RED/ { printf "A " } END { print "" }'
}
fail=0 n=0
sass_compile "$src/tests/ptx/clock_order.ptx" "$tmp/plain.cubin" "$tmp/plain.log" || { cat "$tmp/plain.log"; exit 1; }
for v in warp warpgroup warp.aligned warpgroup.aligned; do
  sass_compile "$tmp/clock_order.$v.ptx" "$tmp/$v.cubin" "$tmp/$v.log" || { cat "$tmp/$v.log"; exit 1; }
  t=$(tokens "$tmp/$v.cubin")
  # the prologue's reading, the straight line's four regions, one or more (unrolled) loop
  # iterations, the store after the loop and the exit's reading
  if [[ "$t" =~ ^C\ C\ L\ C\ C\ S\ C\ C\ s\ B\ l\ C\ C\ A\ C\ (C\ L\ C\ C\ S\ C\ )+S\ C\ $ ]]; then
    echo "ok   $v: $t"
  else
    echo "FAIL $v: $t"
    echo "     expected: C (load: C L C) (use: C S C) (shared: C s B l C) (atom: C A C) (step, acc: C L C C S C)+ S C"
    fail=1
  fi
  n=$((n + 1))
done
echo "ptxas: $("$SASS_PTXAS" --version | tail -1); $SASS_DIS_KIND: $SASS_DIS; $n instrumented modules"
exit $fail
