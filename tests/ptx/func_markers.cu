// func_markers.cu - markers inside device functions nvcc keeps as calls
// (__noinline__): a .func with regions that calls another one twice, a .func
// without markers between a kernel and a marked one, an early return that
// ends its region first, a call under divergence, calls in a loop, and a
// kernel with no markers of its own that calls a marked function.  The
// instrumented module must pass ptxas, give the same outputs on emu and
// record exact counts (tests/lua/instrument_spec.lua).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o func_markers.ptx func_markers.cu
#include "../../ptx/mgpu_markers.h"

__device__ __noinline__ float inner(float v, int k)
{
    MGPU_BEGIN("inner");
    for (int r = 0; r < k; r++) v = v * 0.5f + 1.0f;
    MGPU_END("inner");
    return v;
}

__device__ __noinline__ float outer(const float *x, int i, int k)
{
    MGPU_BEGIN("outer");
    float v = inner(x[i], k);
    v += inner(v, 1);
    MGPU_END("outer");
    return v;
}

__device__ __noinline__ float plain(const float *x, int i, int k) { return outer(x, i, k) * 2.0f; }

__device__ __noinline__ void early(float *y, int i)
{
    MGPU_BEGIN("early");
    if (y[i] < 0.0f) {
        MGPU_END("early");
        return;
    }
    y[i] += 1.0f;
    MGPU_END("early");
}

extern "C" __global__ void func_markers(const float *x, float *y, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    MGPU_BEGIN("kernel");
    float v = i < n ? outer(x, i, k) : 0.0f;
    for (int r = 0; r < 2; r++) {
        MGPU_BEGIN("loop");
        v += plain(x, i % n, k);
        MGPU_END("loop");
    }
    if (i < n) {
        y[i] = v;
        early(y, i);
    }
    MGPU_END("kernel");
}

extern "C" __global__ void no_own_markers(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = plain(x, i, 1);
}
