#!/usr/bin/env bash
# regen.sh - regenerates the committed PTX of ptx/*.cu with nvcc (CUDA 12/13).
# The PTX is committed so that users without nvcc can run the kernels.
set -euo pipefail
cd "$(dirname "$0")"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for f in *.cu; do
  "$nvcc" -ptx -arch=sm_90 -O3 -lineinfo -o "${f%.cu}.ptx" "$f"
  echo "${f%.cu}.ptx"
done
