// early_return.cu - regions left by a return (issue 24): `if (i >= n) return;` inside a region,
// the most common CUDA idiom, a return from inside a nested region, and a region a loop leaves
// by returning.  Each region still open where a thread returns ends there, so every warp closes
// each region it began exactly once (tests/lua/numbers_spec.lua, tests/c/test_instrument.c).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o early_return.ptx early_return.cu
#include "../../ptx/mgpu_markers.h"

extern "C" __global__ void guard_in_region(const float *x, float *y, int n)
{
    MGPU_BEGIN("work");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = 2.0f * x[i];
    MGPU_END("work");
}

extern "C" __global__ void nested_return(const float *x, float *y, int n, int cut)
{
    MGPU_BEGIN("outer");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    MGPU_BEGIN("inner");
    if (v > (float)cut) return;
    v = v * 3.0f + 1.0f;
    MGPU_END("inner");
    if (i < n) y[i] = v;
    MGPU_END("outer");
}

extern "C" __global__ void loop_return(const float *x, float *y, int n, int stop)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    MGPU_BEGIN("loop");
    for (int k = 0; k < 8; k++) {
        acc += x[(i + k) % n];
        if (acc > (float)stop) return;
    }
    MGPU_END("loop");
    y[i] = acc;
}
