// fptr.cu - code the front end keeps as text for emu to refuse, while the
// instrumentation and the cuda backend take the module: a call through a
// function pointer (with its .callprototype) to a device function with
// markers, a call with more parameters than an instruction holds, a cluster
// special register; and a plain kernel beside them that emu runs
// (tests/lua/instrument_spec.lua, tests/ptxas_check.sh).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o fptr.ptx fptr.cu
#include "../../ptx/mgpu_markers.h"

typedef float (*op_t)(float, float);

__device__ __noinline__ float add_op(float a, float b)
{
    MGPU_BEGIN("op");
    float r = a + b;
    MGPU_END("op");
    return r;
}

__device__ __noinline__ float mul_op(float a, float b) { return a * b; }

__device__ __noinline__ float wide(float a, float b, float c, float d, float e, float f, float g, float h)
{
    MGPU_BEGIN("wide");
    float r = a + b * c + d * e + f * g + h;
    MGPU_END("wide");
    return r;
}

extern "C" __global__ void fptr(float *x, int k)
{
    __shared__ op_t chosen;
    if (threadIdx.x == 0) chosen = (k & 1) ? mul_op : add_op;
    __syncthreads();
    op_t f = *(op_t volatile *)&chosen;
    MGPU_BEGIN("kernel");
    x[threadIdx.x] = f(x[threadIdx.x], 2.0f);
    MGPU_END("kernel");
}

extern "C" __global__ void wide_call(float *x)
{
    x[threadIdx.x] = wide(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[threadIdx.x]);
}

extern "C" __global__ void cluster_rank(unsigned *out)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

extern "C" __global__ void plain_kernel(float *x)
{
    MGPU_BEGIN("plain");
    x[threadIdx.x] += 1.0f;
    MGPU_END("plain");
}
