// tiled.cu - a tiled loop with nested regions: per tile, load a tile of A
// into shared memory, compute (scale and add a row-dependent bias), store.
// C[i] = A[i] * alpha + (i / TILE) for n elements; TILE = blockDim.x.
#include "mgpu_markers.h"

extern "C" __global__ void tiled_scale(const float *__restrict__ a, float *__restrict__ c, unsigned n, float alpha)
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
        MGPU_END("compute");
        MGPU_BEGIN("store");
        if (i < n) c[i] = v;
        __syncthreads();
        MGPU_END("store");
        MGPU_END("tile");
    }
}
