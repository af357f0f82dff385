// half2.cu - packed f16x2 / bf16x2 arithmetic and the f32 -> f16x2 pack, for test_emu.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o half2.ptx half2.cu
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void h2ops(const __half2 *a, const __half2 *b, __half2 *o, const __nv_bfloat162 *c, const __nv_bfloat162 *d, __nv_bfloat162 *p, const float *f, __half2 *q)
{
    int i = threadIdx.x;
    o[i * 4 + 0] = __hadd2(a[i], b[i]);
    o[i * 4 + 1] = __hmul2(a[i], b[i]);
    o[i * 4 + 2] = __hfma2(a[i], b[i], a[i]);
    o[i * 4 + 3] = __hmin2(a[i], b[i]);
    p[i * 2 + 0] = __hadd2(c[i], d[i]);
    p[i * 2 + 1] = __hfma2(c[i], d[i], c[i]);
    q[i] = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
}
