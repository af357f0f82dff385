// copy.cu - vectorised copy: each thread moves float4s, grid-stride loop.
#include "mgpu_markers.h"

extern "C" __global__ void copy_f32x4(const float4 *__restrict__ in, float4 *__restrict__ out, unsigned n4)
{
    MGPU_BEGIN("copy");
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x)
        out[i] = in[i];
    MGPU_END("copy");
}
