// struct_param.cu - a kernel as C++ code often has it: a template, launch
// bounds (.maxntid/.minnctapersm), a struct passed by value (.b8 p[24]) and
// handed on to a __noinline__ device function, which spills it to its own
// local depot.  c[i] = (a[j] * p.scale + p.bias[j % 3]) + p.offset with
// j = the next element of i's 64-element tile (i, j < p.n).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -I../../ptx -o struct_param.ptx struct_param.cu
#include "mgpu_markers.h"

struct Params {
    float scale;
    int offset;
    unsigned n;
    float bias[3];
};

template <int TILE>
__device__ __noinline__ float scaled(const float *a, int i, const Params p)
{
    return a[i] * p.scale + p.bias[i % 3];
}

template <int TILE>
__global__ void __launch_bounds__(256, 2) tile_shift(const float *__restrict__ a, float *__restrict__ c, const Params p)
{
    __shared__ float buf[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    MGPU_BEGIN("load");
    buf[threadIdx.x % TILE] = (unsigned)i < p.n ? scaled<TILE>(a, i, p) : 0.f;
    __syncthreads();
    MGPU_END("load");
    MGPU_BEGIN("store");
    if ((unsigned)i < p.n) c[i] = buf[(threadIdx.x + 1) % TILE] + p.offset;
    MGPU_END("store");
}

template __global__ void tile_shift<64>(const float *, float *, const Params);
