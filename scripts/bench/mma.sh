#!/usr/bin/env bash
# mma.sh - emu's tensor-core speed: a 512x512x512 GEMM with wgmma, with mma.sync + ldmatrix and
# with WMMA, each timed with its GFLOP/s (docs/results/mma-bench.md).  usage: scripts/bench/mma.sh [BUILD_DIR] [SIZE]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -x "$build/mmabench" ] || { echo "build first: $build/mmabench is missing" >&2; exit 2; }
"$build/mmabench" . "${2:-512}"
