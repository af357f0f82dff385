#!/usr/bin/env bash
# mma.sh - emu's tensor-core speed: a 512x512x512 GEMM with wgmma, with TMA + wgmma (hopper_gemm.cu),
# with mma.sync + ldmatrix and with WMMA, each timed with its GFLOP/s and its ratio to single-thread OpenBLAS sgemm in the same run
# (docs/results/mma-bench.md).  usage: [MGPU_EMU_THREADS=N] scripts/bench/mma.sh [BUILD_DIR] [SIZE [KERNEL]]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -x "$build/mmabench" ] || { echo "build first: $build/mmabench is missing" >&2; exit 2; }
"$build/mmabench" . "${2:-512}" ${3:+"$3"}
