#!/bin/sh
# record.sh: builds each corpus program with nvcc for sm_90a (PTX only, compute_90a) against the
# recording stand-in (tests/corpus/shim, -cudart none), runs its own host code and writes the PTX
# and the recorded launches into OUT (one folder per code base, as in tests/corpus).  SRC holds
# the code bases at the commits SOURCES.md names: SRC/fast.cu, SRC/cuda-samples, SRC/cutlass,
# SRC/ThunderKittens (cutlass54, cutlass55, cutlass57, cutlass61, cutlass63, cutlass67, cutlass88: more CUTLASS examples from SRC/cutlass).  The committed PTX is what this wrote once: compare with OUT, do not
# re-commit a PTX that only differs by a rebuild.  Needs nvcc 13 and gcc; CUTLASS and
# ThunderKittens take minutes and GBs of memory per file: one nvcc at a time.
#   tests/corpus/record.sh SRC OUT [fastcu|samples|cutlass|cutlass54|cutlass55|cutlass57|cutlass61|cutlass63|cutlass67|cutlass88|tk]...
set -eu
[ $# -ge 2 ] || { echo "usage: $0 SRC OUT [fastcu|samples|cutlass|cutlass54|cutlass55|cutlass57|cutlass61|cutlass63|cutlass67|cutlass88|tk]..." >&2; exit 2; }
SRC=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
shift 2
WHAT=${*:-fastcu samples cutlass cutlass54 cutlass55 cutlass57 cutlass61 cutlass63 cutlass67 cutlass88 tk}
HERE=$(cd "$(dirname "$0")" && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC="nice $CUDA/bin/nvcc"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# the stand-in
gcc -O1 -Wall -Wextra -I"$CUDA/include" -c "$HERE/shim/record.c" -o "$WORK/record.o"
gcc -O1 -Wall -Wextra -c "$HERE/shim/ptx_params.c" -o "$WORK/ptx_params.o"
gcc -O1 -c "$HERE/shim/cublas_stub.c" -o "$WORK/cublas_stub.o"
SHIM="$WORK/record.o $WORK/ptx_params.o $WORK/cublas_stub.o"
# PTX only (no ptxas), kept: -keep writes NAME.ptx beside the host objects
PTXONLY="-gencode arch=compute_90a,code=compute_90a -cudart none"

# run a recorded program: malloc'd memory zeroed (MALLOC_PERTURB_=255), so that host buffers the
# program copies to the device without filling them all (fast.cu's schedule) record the same.
# A program that exits 255 after printing "Disposition: Failed" (CUTLASS examples 54 and 57 exit
# so when their check of the output fails: kernels do not run here) has recorded all the same.
record() { # PTX OUT_LUA PROGRAM ARGS...
  ptx=$1 out=$2
  shift 2
  log=$WORK/$(basename "$out").log
  rc=0
  MALLOC_PERTURB_=255 CORPUS_PTX="$ptx" CORPUS_OUT="$out" "$@" > "$log" 2>&1 || rc=$?
  [ $rc = 0 ] || { [ $rc = 255 ] && grep -q "Disposition: Failed" "$log"; } ||
    { tail -20 "$log" >&2; echo "$*: failed" >&2; exit 1; }
}
# a CUTLASS example, built as example 49 is
cutlass_example() { # DIR NAME [FLAG] (examples/DIR/NAME.cu -> $d/NAME, its PTX $d/NAME.ptx; FLAG: one its build adds)
  C=$SRC/cutlass
  (cd "$d" && $NVCC -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -w ${3:-} $PTXONLY -keep -keep-dir "$d" \
    -I"$C/include" -I"$C/tools/util/include" -I"$C/examples/common" "$C/examples/$1/$2.cu" $SHIM -o "$2")
}

for w in $WHAT; do
  case $w in
  fastcu) # problem size 8192 -> 256 (its main hard-codes the size)
    d=$WORK/fastcu && mkdir -p "$d" "$OUT/fastcu"
    sed 's/long max_size = 8192;/long max_size = 256;/' "$SRC/fast.cu/matmul.cu" > "$SRC/fast.cu/matmul_small.cu"
    (cd "$d" && $NVCC -std=c++17 -O3 -DNDEBUG -w --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math \
      -Xcompiler=-fPIE -Xcompiler=-Wno-psabi -Xcompiler=-fno-strict-aliasing $PTXONLY -keep -keep-dir "$d" \
      -I"$SRC/fast.cu" "$SRC/fast.cu/matmul_small.cu" $SHIM -o matmul)
    rm "$SRC/fast.cu/matmul_small.cu"
    cp "$d/matmul_small.ptx" "$OUT/fastcu/matmul.ptx"
    record "$d/matmul_small.ptx" "$OUT/fastcu/launches.lua" "$d/matmul"
    ;;
  samples) # M_TILES, N_TILES, K_TILES -> 256 elements each; every -kernel= of the bf16 and tf32 samples
    mkdir -p "$OUT/samples"
    for s in bf16TensorCoreGemm tf32TensorCoreGemm cudaTensorCoreGemm; do
      d=$WORK/$s && mkdir -p "$d"
      dir=$SRC/cuda-samples/Samples/3_CUDA_Features/$s
      kt=16 && [ $s = tf32TensorCoreGemm ] && kt=32
      sed -e "s/^#define M_TILES [0-9]*/#define M_TILES 16/; s/^#define N_TILES [0-9]*/#define N_TILES 16/" \
        -e "s/^#define K_TILES [0-9]*/#define K_TILES $kt/" "$dir/$s.cu" > "$dir/${s}_small.cu"
      (cd "$d" && $NVCC -O3 -w $PTXONLY -keep -keep-dir "$d" -I"$SRC/cuda-samples/Common" "$dir/${s}_small.cu" $SHIM -o $s)
      rm "$dir/${s}_small.cu"
      cp "$d/${s}_small.ptx" "$OUT/samples/$s.ptx"
      : > "$OUT/samples/$s.launches.lua"
      if [ $s = cudaTensorCoreGemm ]; then
        record "$d/${s}_small.ptx" "$d/k.lua" "$d/$s" && cat "$d/k.lua" >> "$OUT/samples/$s.launches.lua"
      else
        for k in 0 1 2; do
          record "$d/${s}_small.ptx" "$d/k$k.lua" "$d/$s" -kernel=$k && cat "$d/k$k.lua" >> "$OUT/samples/$s.launches.lua"
        done
      fi
    done
    ;;
  cutlass) # unchanged; the problem size from its command line
    d=$WORK/cutlass && mkdir -p "$d" "$OUT/cutlass"
    C=$SRC/cutlass
    (cd "$d" && $NVCC -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -w $PTXONLY -keep -keep-dir "$d" \
      -I"$C/include" -I"$C/tools/util/include" -I"$C/examples/common" \
      "$C/examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu" $SHIM -o ex49)
    cp "$d/49_collective_builder.ptx" "$OUT/cutlass/"
    record "$d/49_collective_builder.ptx" "$OUT/cutlass/49_collective_builder.launches.lua" "$d/ex49" \
      --m=256 --n=256 --k=256
    ;;
  cutlass54) # fp8 GEMM with a scaled epilogue (scales, C, ReLU, aux output, amax), unchanged
    d=$WORK/cutlass54 && mkdir -p "$d" "$OUT/cutlass"
    n=54_hopper_fp8_warp_specialized_gemm
    cutlass_example $n $n
    cp "$d/$n.ptx" "$OUT/cutlass/"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --m=256 --n=256 --k=256 --alpha=0.5 --beta=0.5 \
      --scale_a=2 --scale_b=0.5 --scale_c=2 --scale_d=0.5 --scale_aux=2 --iterations=0
    ;;
  cutlass55) # mixed-input GEMM (f16 x e4m3), unchanged; one run per --mode (0 convert, 1 scale, 2 scale
    # and zero); only the three mixed-input kernels' PTX is kept (not the reference GEMM's, the fills')
    d=$WORK/cutlass55 && mkdir -p "$d" "$OUT/cutlass"
    n=55_hopper_mixed_dtype_gemm
    cutlass_example $n $n
    awk -v KEEP=MixedInput -f "$HERE/ptx_keep.awk" "$d/$n.ptx" "$d/$n.ptx" > "$OUT/cutlass/$n.ptx"
    : > "$OUT/cutlass/$n.launches.lua"
    for mode in 0 1 2; do
      record "$d/$n.ptx" "$d/k$mode.lua" "$d/$n" --m=256 --n=256 --k=256 --g=128 --mode=$mode --alpha=0.5 --beta=0.5 \
        --iterations=0 --warmup=0 && cat "$d/k$mode.lua" >> "$OUT/cutlass/$n.launches.lua"
    done
    ;;
  cutlass57) # grouped GEMM, unchanged; three groups from a --benchmark file; only its two GEMM kernels'
    # PTX is kept (the program's also holds its reference and random-fill kernels and their tables)
    d=$WORK/cutlass57 && mkdir -p "$d" "$OUT/cutlass"
    n=57_hopper_grouped_gemm
    cutlass_example $n $n
    awk -v KEEP=GroupProblemShape -f "$HERE/ptx_keep.awk" "$d/$n.ptx" "$d/$n.ptx" > "$OUT/cutlass/$n.ptx"
    printf '0 256x128x128\n1 128x256x256\n2 192x64x64\n' > "$d/groups.txt"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --benchmark="$d/groups.txt" --iterations=0
    ;;
  cutlass61) # GEMM with a top-K (2) + softmax epilogue, unchanged; one kernel
    d=$WORK/cutlass61 && mkdir -p "$d" "$OUT/cutlass"
    n=61_hopper_gemm_with_topk_and_softmax
    cutlass_example $n $n
    cp "$d/$n.ptx" "$OUT/cutlass/"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --m=256 --n=64 --k=256 --iterations=0
    ;;
  cutlass63) # fp8 GEMM with weight prefetch, unchanged, built with CUTLASS_ENABLE_GDC_FOR_SM90 as the
    # example's notes require for its programmatic dependent launch (griddepcontrol); one kernel
    d=$WORK/cutlass63 && mkdir -p "$d" "$OUT/cutlass"
    n=63_hopper_gemm_with_weight_prefetch
    cutlass_example $n $n -DCUTLASS_ENABLE_GDC_FOR_SM90
    cp "$d/$n.ptx" "$OUT/cutlass/"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --m=256 --n=64 --k=512 --alpha=0.5 --beta=0.5 --iterations=0
    ;;
  cutlass67) # blockwise-scaled fp8 GEMM (one f32 scale per 128 x 128 block of A and of B), unchanged;
    # its PTX is the one GEMM kernel (the example checks on the host); then the groupwise program (A
    # scaled per row and 128 k), whose GEMM kernel's PTX only is kept (not its fill kernels')
    d=$WORK/cutlass67 && mkdir -p "$d" "$OUT/cutlass"
    x=67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling
    n=$x
    cutlass_example $x $n
    cp "$d/$n.ptx" "$OUT/cutlass/"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --m=256 --n=256 --k=256 --alpha=0.5 --beta=0.5 \
      --scale_a=2 --scale_b=0.5 --scale_c=2 --iterations=0 --warmup=0
    n=67_hopper_fp8_warp_specialized_gemm_with_groupwise_scaling
    cutlass_example $x $n
    awk -v KEEP=GemmUniversal -f "$HERE/ptx_keep.awk" "$d/$n.ptx" "$d/$n.ptx" > "$OUT/cutlass/$n.ptx"
    record "$d/$n.ptx" "$OUT/cutlass/$n.launches.lua" "$d/$n" --m=256 --n=256 --k=256 --iterations=0 --warmup=0
    ;;
  cutlass88) # attention forward (f16), unchanged, built with --use_fast_math as its CMakeLists builds it;
    # batch 1, 2 heads, sequence 256, head dim 64, no mask and causal (one run each, appended); only
    # the six forward kernels those runs launch are kept (the program compiles every head dim's forward
    # and backward kernels for three masks, 7.7 MB of PTX)
    d=$WORK/cutlass88 && mkdir -p "$d" "$OUT/cutlass"
    n=88_hopper_fmha
    cutlass_example $n $n --use_fast_math
    : > "$d/launches.lua"
    for mask in no causal; do
      record "$d/$n.ptx" "$d/$mask.lua" "$d/$n" --b=1 --h=2 --q=256 --k=256 --d=64 --iterations=1 --mask=$mask &&
        cat "$d/$mask.lua" >> "$d/launches.lua"
    done
    cp "$d/launches.lua" "$OUT/cutlass/$n.launches.lua"
    sed -n 's/^  kernel = "\(.*\)",$/\1/p' "$d/launches.lua" > "$d/names"
    awk -v KEEP=FmhaMainloopTma -v NAMES="$d/names" -f "$HERE/ptx_keep.awk" "$d/$n.ptx" "$d/$n.ptx" > "$OUT/cutlass/$n.ptx"
    ;;
  tk) # batch 4 -> 1, heads 16 -> 1, sequence 3072 -> 768, one iteration; head dim 64 and 128
    mkdir -p "$OUT/tk"
    T=$SRC/ThunderKittens/kernels/attention/mha_h100
    for dim in 64 128; do
      d=$WORK/tk$dim && mkdir -p "$d/src"
      cp "$T/mha_h100.cu" "$d/src/"
      sed -e 's/^constexpr int ATTN_B     = 4;/constexpr int ATTN_B     = 1;/' \
        -e 's/^constexpr int QO_HEADS   = 16;/constexpr int QO_HEADS   = 1;/' \
        -e 's/^constexpr int KV_HEADS   = 16;/constexpr int KV_HEADS   = 1;/' \
        -e 's/^constexpr int ATTN_N     = 3072; /constexpr int ATTN_N     = 768; /' \
        -e "s/^constexpr int ATTN_D     = 128; /constexpr int ATTN_D     = $dim; /" \
        -e 's/^constexpr int ITER       = 10; /constexpr int ITER       = 1; /' "$T/harness.impl" > "$d/src/harness.impl"
      (cd "$d" && $NVCC -std=c++20 -O3 --use_fast_math -w --expt-extended-lambda --expt-relaxed-constexpr -DNDEBUG \
        -DKITTENS_HOPPER -I"$SRC/ThunderKittens/include" -I"$SRC/ThunderKittens/prototype" $PTXONLY -keep \
        -keep-dir "$d" "$d/src/mha_h100.cu" $SHIM -o tk)
      cp "$d/mha_h100.ptx" "$OUT/tk/mha_h100_d$dim.ptx"
      # its inputs file (argv[1]) is not needed: the corpus fills q, k, v from a seed
      record "$d/mha_h100.ptx" "$OUT/tk/mha_h100_d$dim.launches.lua" "$d/tk" /dev/null
    done
    ;;
  *) echo "$0: unknown code base $w (fastcu, samples, cutlass, cutlass54, cutlass55, cutlass57, cutlass61, cutlass63, cutlass67, cutlass88, tk)" >&2; exit 2 ;;
  esac
done
echo "recorded into $OUT: $WHAT"
