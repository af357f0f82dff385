#!/usr/bin/env bash
# ptxas_agree.sh - ptxas is the referee of the PTX front end (issue 30): every PTX file of the
# tree (ptx/, and tests/: the examples' and real compilers' modules, the fuzzers' seeds, the
# scope cases of tests/ptx/scopes, tests/corpus when there is one) goes through ptxas
# -arch=<its .target> and through the front end alone (test_ptx_scopes --parse, no emu run);
# each must be accepted by both or refused by both, and a scope case refused at ptxas's line.
# Then the rewrites: the scope cases and the fuzz seeds both accept are instrumented with the
# kernel and loop probes (the front end must read the rewrite back, mgpu-harness checks that)
# and ptxas must take the result.  ptxas runs two at a time.  Exit 77 (skipped) without ptxas.
# usage: ptxas_agree.sh TEST_PTX_SCOPES MGPU_HARNESS SOURCE_DIR
set -euo pipefail
tool=$1; exe=$2; src=$3
ptxas=$(command -v ptxas || true)
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
[ -n "$ptxas" ] || { echo "ptxas not found (not on PATH, no /usr/local/cuda/bin/ptxas): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
find ptx tests -name '*.ptx' | LC_ALL=C sort > "$tmp/files"
[ -s "$tmp/files" ] || { echo "no PTX files under $src"; exit 1; }

# ptxas's verdict on one file: "accept FILE" or "refuse FILE LINE" (its first error's line)
verdict() {
  local f=$1 arch err="$tmp/err.$BASHPID"
  arch=$(sed -n 's/^[[:space:]]*\.target[[:space:]]*\(sm_[0-9]*[af]\{0,1\}\).*/\1/p' "$f" | head -1)
  if "$ptxas" -arch="${arch:-sm_90}" "$f" -o /dev/null 2> "$err"; then
    echo "accept $f"
  else
    echo "refuse $f $(sed -n 's/.*, line \([0-9]*\);.*/\1/p' "$err" | head -1)"
  fi
  rm -f "$err"
}
export -f verdict
export ptxas tmp
xargs -P 2 -I{} bash -c 'verdict "$1"' _ {} < "$tmp/files" | LC_ALL=C sort > "$tmp/ptxas"
if ! xargs "$tool" --parse < "$tmp/files" 2> "$tmp/fe.log" > "$tmp/fe.raw"; then
  echo "the front end's pass ($tool --parse) failed:"; tail -5 "$tmp/fe.log"; exit 1
fi
LC_ALL=C sort "$tmp/fe.raw" > "$tmp/fe"

bad=0
while read -r pv pf pl && read -r fv ff fl <&3; do
  [ "$pf" = "$ff" ] || { echo "internal: $pf and $ff out of step"; exit 1; }
  if [ "$pv" != "$fv" ]; then
    echo "DISAGREE $pf: ptxas ${pv}s it${pl:+ (line $pl)}, the front end ${fv}s it${fl:+ (line $fl)}"
    [ "$fv" = refuse ] && grep -F "$pf:" "$tmp/fe.log" | head -1
    bad=$((bad + 1))
  elif [ "$pv" = refuse ] && [[ $pf == tests/ptx/scopes/* ]] && [ "$pl" != "$fl" ]; then
    echo "DISAGREE $pf: ptxas refuses it at line $pl, the front end at line $fl"
    bad=$((bad + 1))
  fi
done < "$tmp/ptxas" 3< "$tmp/fe"
n=$(wc -l < "$tmp/files")
refused=$(grep -c '^refuse' "$tmp/ptxas" || true)

# the rewrites of the scope cases and the fuzz seeds both accept
printf '[{"name": "kernel", "kernel": true}, {"name": "loop", "loop": true}]\n' > "$tmp/probes.json"
printf '[{"name": "kernel", "kernel": true}]\n' > "$tmp/kernel.json"
m=0
for f in $(grep -E '^accept (tests/ptx/scopes|tests/fuzz)/' "$tmp/ptxas" | cut -d' ' -f2); do
  grep -qx "accept $f" "$tmp/fe" || continue
  grep -q '\.entry' "$f" || continue
  out="$tmp/inst.ptx"
  if ! "$exe" instrument "$f" --probes "$tmp/probes.json" -o "$out" 2> "$tmp/inst.err"; then
    grep -q 'matches nothing' "$tmp/inst.err" || { echo "INSTRUMENT $f: $(cat "$tmp/inst.err")"; bad=$((bad + 1)); continue; }
    "$exe" instrument "$f" --probes "$tmp/kernel.json" -o "$out" 2> "$tmp/inst.err" ||
      { echo "INSTRUMENT $f: $(cat "$tmp/inst.err")"; bad=$((bad + 1)); continue; }
  fi
  cp "$out" "$tmp/inst.$m.ptx"
  m=$((m + 1))
done
for ((k = 0; k < m; k++)); do echo "$tmp/inst.$k.ptx"; done |
  xargs -r -P 2 -I{} bash -c 'verdict "$1"' _ {} > "$tmp/inst.verdicts"
if grep '^refuse' "$tmp/inst.verdicts"; then bad=$((bad + 1)); fi
[ "$bad" -eq 0 ] || { echo "$bad disagreements"; exit 1; }
echo "ptxas and the front end agree on $n PTX files ($refused refused by both, the scope cases at ptxas's line);" \
  "ptxas takes the $m instrumented scope cases and fuzz seeds ($("$ptxas" --version | tail -1))"
