#!/usr/bin/env bash
# ptxas_check.sh - instruments every kernel of ptx/ and of the real-compiler
# outputs in tests/ptx/ (early_return: regions left by a return, clang's llvm_tiled, nvcc -G's tiled_debug, the C++
# template struct_param, the many-feature module features, triton_style,
# func_markers with markers inside .funcs, fptr with a call through a
# function pointer, a wide call and a cluster register, cccl with libcu++
# barriers and pipelines, cooperative groups and WMMA, hopper with clusters,
# TMA through a __grid_constant__ descriptor and setmaxnreg, for sm_90a),
# both scopes, and checks that ptxas -arch=sm_90 accepts the result and the
# plain PTX.  With TEST_INSTRUMENT (tests/c/test_instrument's binary), the same modules and
# tests/ptx/clock_order.ptx are also instrumented with the aligned records (one
# st.global.v2.u32 per event; `test_instrument SRC --emit DIR`), both scopes, and checked alike.
# Exit 77 (skipped) where no ptxas is installed.
# usage: ptxas_check.sh MGPU_HARNESS SOURCE_DIR [TEST_INSTRUMENT]
set -euo pipefail
exe=$1; src=$2; tool=${3:-}
ptxas=$(command -v ptxas || true)
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
[ -n "$ptxas" ] || { echo "ptxas not found: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for f in "$src"/ptx/*.ptx "$src"/tests/golden/mini.ptx "$src"/tests/ptx/llvm_tiled.ptx "$src"/tests/ptx/tiled_debug.ptx "$src"/tests/ptx/struct_param.ptx "$src"/tests/ptx/features.ptx "$src"/tests/ptx/triton_style.ptx "$src"/tests/ptx/func_markers.ptx "$src"/tests/ptx/fptr.ptx "$src"/tests/ptx/cccl.ptx "$src"/tests/ptx/hopper.ptx "$src"/tests/ptx/early_return.ptx; do
  # the module's own target: sm_90, or sm_90a for Hopper-only code (setmaxnreg, TMA, wgmma)
  arch=$(sed -n 's/^\.target[[:space:]]*\(sm_90a\{0,1\}\).*/\1/p' "$f" | head -1)
  arch=${arch:-sm_90}
  "$ptxas" -arch="$arch" "$f" -o "$tmp/plain.cubin"
  for scope in warp warpgroup; do
    out="$tmp/$(basename "$f" .ptx).$scope.ptx"
    "$exe" instrument "$f" --scope "$scope" -o "$out" 2>/dev/null
    "$ptxas" -arch="$arch" "$out" -o "$tmp/inst.cubin"
    n=$((n + 1))
  done
done
if [ -n "$tool" ]; then
  mkdir -p "$tmp/aligned"
  "$tool" "$src" --emit "$tmp/aligned"
  "$tool" "$src" --emit "$tmp/aligned" tests/ptx/clock_order.ptx
  for out in "$tmp"/aligned/*.aligned.ptx; do
    arch=$(sed -n 's/^\.target[[:space:]]*\(sm_90a\{0,1\}\).*/\1/p' "$out" | head -1)
    "$ptxas" -arch="${arch:-sm_90}" "$out" -o "$tmp/inst.cubin"
    n=$((n + 1))
  done
fi
echo "ptxas (-arch=sm_90, sm_90a for sm_90a PTX) accepted $n instrumented modules ($("$ptxas" --version | tail -1))"
