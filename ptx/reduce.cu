// reduce.cu - shared-memory sum reduction with bar.sync, one partial sum per
// block (out[blockIdx.x]); blockDim.x must be a power of two <= 1024.
#include "mgpu_markers.h"

extern "C" __global__ void reduce_sum_f32(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    extern __shared__ float part[];
    unsigned t = threadIdx.x;
    MGPU_BEGIN("load");
    float acc = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) acc += in[i];
    part[t] = acc;
    MGPU_END("load");
    __syncthreads();
    MGPU_BEGIN("tree");
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    MGPU_END("tree");
    if (t == 0) out[blockIdx.x] = part[0];
}
