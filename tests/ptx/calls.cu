// calls.cu - device functions nvcc keeps as calls (__noinline__): scalar and
// pointer arguments, a return value, a void function, nested calls, and a
// call under divergence.  For test_emu.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o calls.ptx calls.cu
__device__ __noinline__ int mix(int a, int b) { return a * 31 + (b ^ 7); }
__device__ __noinline__ float scale(const float *p, int i, float s) { return p[i] * s; }
__device__ __noinline__ int twice_mix(int a) { return mix(a, a) + mix(a + 1, 2); }
__device__ __noinline__ void bump(unsigned *c, unsigned v) { atomicAdd(c, v); }

extern "C" __global__ void calls(const float *x, float *y, int *z, unsigned *count)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    y[t] = scale(x, t, 0.5f);
    z[t] = (t & 1) ? twice_mix(t) : mix(t, 3);
    bump(count, (unsigned)t);
}
