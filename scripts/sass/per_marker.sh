#!/usr/bin/env bash
# per_marker.sh - SASS instructions and registers per marker of every kernel in ptx/, as ptxas
# (-arch=sm_90) compiles it plain and instrumented: with the legacy records (two st.global.u32
# each) and the aligned ones (one st.global.v2.u32), and optionally with an older harness
# ("before").  "per record" is the marginal cost: the same module with every begin marker
# followed by an extra empty region of its name (end + begin: two more records, in the same
# straight line), instrumented alike, less the module, over the records added.  And for
# ptx/record_cost.cu the instructions of the record loop per event, the
# marker loop against Mosaic's (two records per iteration in both).  Needs ptxas and a
# disassembler of the same toolkit (scripts/sass/sass_lib.sh says where they are looked for;
# MGPU_SASS_DIR=DIR names a folder with both).  Prints markdown.
# usage: scripts/sass/per_marker.sh [BUILD_DIR] [OLD_MGPU_HARNESS] [SCOPE]
#   BUILD_DIR (default build): its tests/test_instrument writes the instrumented modules
#   OLD_MGPU_HARNESS: an older build's mgpu-harness, for a "before" column (its `instrument`)
set -euo pipefail
build=${1:-build}; old=${2:-}; scope=${3:-warp}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/scripts/sass/sass_lib.sh"
sass_find || { echo "no ptxas found" >&2; exit 77; }
[ -n "$SASS_DIS" ] || { echo "no disassembler (nvdisasm/cuobjdump) found: set MGPU_SASS_DIR" >&2; exit 77; }
tool=$build/tests/test_instrument
[ -x "$tool" ] || { echo "build first: $tool is missing" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-sass.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/emit"
files=()
for f in "$src"/ptx/*.ptx; do files+=("ptx/$(basename "$f")"); done
"$tool" "$src" --emit "$tmp/emit" "${files[@]}"
# the doubled modules: after "// @mgpu begin X", "// @mgpu end X" and "// @mgpu begin X" again
mkdir -p "$tmp/dup/ptx" "$tmp/emit2"
for rel in "${files[@]}"; do
  sed 's|^\([[:space:]]*\)// @mgpu begin \(.*\)$|&\n\1// @mgpu end \2\n\1// @mgpu begin \2|' "$src/$rel" >"$tmp/dup/$rel"
done
"$tool" "$tmp/dup" --emit "$tmp/emit2" "${files[@]}"

# counts KERNEL CUBIN: instructions, STG, %clock reads of KERNEL
counts() {
  sass_insns "$2" "$1" >"$tmp/insns"
  local n stg clk
  n=$(grep -vc '^\.L_x' "$tmp/insns" || true)
  stg=$(grep -c 'STG' "$tmp/insns" || true)
  clk=$(grep -c 'SR_CLOCKLO' "$tmp/insns" || true)
  echo "$n $stg $clk"
}
# loop_len KERNEL CUBIN: instructions of the innermost loop (a label to the branch back to it)
loop_len() {
  sass_insns "$2" "$1" | awk '/^\.L_x_[0-9]+:/ { at[$1] = n; next } { n++ }
    /BRA/ { l = $0; sub(/.*`\(/, "", l); sub(/\).*/, "", l); if ((l ":") in at && (best == 0 || n - at[l ":"] < best)) best = n - at[l ":"] }
    END { print best + 0 }'
}

echo "ptxas: $("$SASS_PTXAS" --version | tail -1); disassembler: $SASS_DIS_KIND ($SASS_DIS); scope $scope"
echo
echo "| kernel | markers | variant | registers | SASS instructions | STG | %clock reads | per record |"
echo "|---|---|---|---|---|---|---|---|"
for rel in "${files[@]}"; do
  name=$(basename "$rel" .ptx)
  sass_compile "$src/$rel" "$tmp/$name.plain.cubin" "$tmp/$name.plain.log" || { echo "ptxas refused $rel" >&2; continue; }
  variants=(legacy:"$tmp/emit/$name.$scope.ptx":"$tmp/emit2/$name.$scope.ptx"
            aligned:"$tmp/emit/$name.$scope.aligned.ptx":"$tmp/emit2/$name.$scope.aligned.ptx")
  if [ -n "$old" ]; then
    "$old" instrument "$src/$rel" --scope "$scope" -o "$tmp/$name.before.ptx" 2>/dev/null
    "$old" instrument "$tmp/dup/$rel" --scope "$scope" -o "$tmp/$name.before2.ptx" 2>/dev/null
    variants=(before:"$tmp/$name.before.ptx":"$tmp/$name.before2.ptx" "${variants[@]}")
  fi
  for k in $(sed -n 's/^\.visible \.entry \([A-Za-z_0-9$]*\)(.*/\1/p' "$src/$rel"); do
    markers=$(awk -v k="$k" '/\.entry/ { inside = index($0, " " k "(") > 0 } inside && /\/\/ @mgpu (begin|end) / { n++ } END { print n + 0 }' "$src/$rel")
    begins=$(awk -v k="$k" '/\.entry/ { inside = index($0, " " k "(") > 0 } inside && /\/\/ @mgpu begin / { n++ } END { print n + 0 }' "$src/$rel")
    [ "$markers" -gt 0 ] || continue
    read -r n0 stg0 clk0 < <(counts "$k" "$tmp/$name.plain.cubin")
    echo "| $k | $markers | plain | $(sass_regs "$tmp/$name.plain.log" "$k") | $n0 | $stg0 | $clk0 | |"
    for v in "${variants[@]}"; do
      IFS=: read -r vn vf vf2 <<<"$v"
      sass_compile "$vf" "$tmp/$name.$vn.cubin" "$tmp/$name.$vn.log" || { echo "ptxas refused $vf" >&2; continue; }
      sass_compile "$vf2" "$tmp/$name.$vn.2.cubin" "$tmp/$name.$vn.2.log" || { echo "ptxas refused $vf2" >&2; continue; }
      read -r n stg clk < <(counts "$k" "$tmp/$name.$vn.cubin")
      read -r n2 _ _ < <(counts "$k" "$tmp/$name.$vn.2.cubin")
      awk -v k="$k" -v v="$vn" -v m="$markers" -v r="$(sass_regs "$tmp/$name.$vn.log" "$k")" -v n="$n" -v n2="$n2" \
          -v b="$begins" -v s="$stg" -v c="$clk" \
          'BEGIN { printf "| %s | %d | %s | %s | %d | %d | %d | %.1f |\n", k, m, v, r, n, s, c, (n2 - n) / (2 * b) }'
    done
  done
done
echo
echo "The record loop of ptx/record_cost.cu (two records per iteration in both kernels), SASS"
echo "instructions of the loop per event:"
echo
echo "| loop | instructions per iteration | per event |"
echo "|---|---|---|"
l=$(loop_len mosaic_records "$tmp/record_cost.plain.cubin")
awk -v l="$l" 'BEGIN { printf "| Mosaic: st.shared.v2.u32 {tag, %%clock}, no bounds check | %d | %.1f |\n", l, l / 2 }'
for v in before legacy aligned; do
  [ -f "$tmp/record_cost.$v.cubin" ] || continue
  l=$(loop_len marker_records "$tmp/record_cost.$v.cubin")
  awk -v l="$l" -v v="$v" 'BEGIN { printf "| markers, %s | %d | %.1f |\n", v, l, l / 2 }'
done
