// tiled.cu - a tiled loop with nested regions: per tile, load a tile of A
// into shared memory, compute (scale and add a row-dependent bias), store.
// C[i] = A[i] * alpha + (i / TILE) for n elements; TILE = blockDim.x.
// tiled_scale_work adds `work` dependent FMA steps to each element's compute
// (C[i] = f^work(...), f(v) = v * 0.9999 + 1e-4): the knob that sets how much
// time passes between two events, for the instrumentation overhead benchmark
// (scripts/device/overhead.lua).
#include "mgpu_markers.h"

static __device__ __forceinline__ void tiled_body(const float *__restrict__ a, float *__restrict__ c, unsigned n,
                                                  float alpha, unsigned work)
{
    extern __shared__ float tile[];
    unsigned t = threadIdx.x, tile_elems = blockDim.x;
    unsigned ntiles = (n + tile_elems - 1) / tile_elems;
    for (unsigned k = blockIdx.x; k < ntiles; k += gridDim.x) {
        MGPU_BEGIN("tile");
        unsigned i = k * tile_elems + t;
        MGPU_BEGIN("load");
        tile[t] = i < n ? a[i] : 0.0f;
        __syncthreads();
        MGPU_END("load");
        MGPU_BEGIN("compute");
        float v = tile[(t + 1) % tile_elems];
        v = __shfl_sync(0xffffffffu, v, (threadIdx.x + 31) % 32) * alpha + (float)k;
        for (unsigned r = 0; r < work; r++) v = fmaf(v, 0.9999f, 1e-4f);
        MGPU_END("compute");
        MGPU_BEGIN("store");
        if (i < n) c[i] = v;
        __syncthreads();
        MGPU_END("store");
        MGPU_END("tile");
    }
}

extern "C" __global__ void tiled_scale(const float *__restrict__ a, float *__restrict__ c, unsigned n, float alpha)
{
    tiled_body(a, c, n, alpha, 0);
}

extern "C" __global__ void tiled_scale_work(const float *__restrict__ a, float *__restrict__ c, unsigned n, float alpha,
                                            unsigned work)
{
    tiled_body(a, c, n, alpha, work);
}
