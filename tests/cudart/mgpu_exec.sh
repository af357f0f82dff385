#!/bin/sh
# mgpu_exec.sh HARNESS SRC_DIR WORK - builds vector_add.cu with `mgpu-harness nvcc` and runs
# mgpu_exec.lua on it (mgpu.exec from Lua).  Exit 77 (skipped) without nvcc.
set -u
H=$1 SRC=$2 WORK=$3
NVCC=${MGPU_NVCC:-$(command -v nvcc 2>/dev/null || true)}
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ]; then echo "skipped: nvcc is not installed"; exit 77; fi
export MGPU_NVCC=$NVCC
D=$WORK/mgpu_exec
rm -rf "$D" && mkdir -p "$D" || exit 1
"$H" nvcc -O2 -arch=sm_90a -I"$SRC" -o "$D/prog" "$SRC/vector_add.cu" || { echo "FAIL: mgpu-harness nvcc"; exit 1; }
"$H" "$SRC/mgpu_exec.lua" "$D/prog" "$D/capture" || exit 1
# exec's --model-params refused before the program runs, naming the entry
OUT=$("$H" exec --model-params l2_lat -- "$D/prog" 2>&1); ST=$?
[ $ST = 2 ] && echo "$OUT" | grep -q "'l2_lat' is not NAME=NUMBER" || { echo "$OUT"; echo "FAIL: exec --model-params l2_lat (status $ST)"; exit 1; }
"$H" exec --model h100-sxm --model-params l2_lat=300,hbm_gbs=3000 --stats -- "$D/prog" > /dev/null 2>&1 || { echo "FAIL: exec --model h100-sxm --model-params"; exit 1; }
echo "mgpu_exec.sh: ok"
