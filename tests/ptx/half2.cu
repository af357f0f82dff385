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

// setp on packed halves: p from the low halves, q from the high ones (PTX ISA 9.1, 9.7.7.2);
// o[i * 5 + k] = p + 2 q for: lt.f16x2, geu.ftz.f16x2, eq.and.f16x2 with c = i odd,
// gt.bf16x2, nan.bf16x2
#define SETP2(op, r, x, y) \
    asm("{ .reg .pred p, q; setp." op " p|q, %1, %2; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }" \
        : "=r"(r) : "r"(x), "r"(y))
extern "C" __global__ void h2cmp(const unsigned *a, const unsigned *b, unsigned *o)
{
    int i = threadIdx.x;
    unsigned x = a[i], y = b[i], r[5], odd = i & 1;
    SETP2("lt.f16x2", r[0], x, y);
    SETP2("geu.ftz.f16x2", r[1], x, y);
    asm("{ .reg .pred p, q, c; setp.ne.u32 c, %3, 0; setp.eq.and.f16x2 p|q, %1, %2, c; selp.u32 %0, 1, 0, p;"
        " @q add.u32 %0, %0, 2; }" : "=r"(r[2]) : "r"(x), "r"(y), "r"(odd));
    SETP2("gt.bf16x2", r[3], x, y);
    SETP2("nan.bf16x2", r[4], x, y);
    for (int k = 0; k < 5; k++) o[i * 5 + k] = r[k];
}

// set on halves (nvcc's __heq2_mask, __hlt2, __hgt2 on bf16, __hge2_mask on bf16, and a scalar
// half compare written as set.lt.f16.f16): 0xFFFF or 1.0 per half for true, 0 for false
extern "C" __global__ void h2set(const unsigned *a, const unsigned *b, unsigned *o)
{
    int i = threadIdx.x;
    __half2 x = *reinterpret_cast<const __half2 *>(&a[i]), y = *reinterpret_cast<const __half2 *>(&b[i]);
    __nv_bfloat162 u = *reinterpret_cast<const __nv_bfloat162 *>(&a[i]),
                   v = *reinterpret_cast<const __nv_bfloat162 *>(&b[i]);
    __half2 lt = __hlt2(x, y);
    __nv_bfloat162 gt = __hgt2(u, v);
    unsigned short s;
    asm("set.lt.f16.f16 %0, %1, %2;" : "=h"(s) : "h"(__half_as_ushort(__low2half(x))), "h"(__half_as_ushort(__low2half(y))));
    o[i * 5 + 0] = __heq2_mask(x, y);
    o[i * 5 + 1] = *reinterpret_cast<unsigned *>(&lt);
    o[i * 5 + 2] = *reinterpret_cast<unsigned *>(&gt);
    o[i * 5 + 3] = __hge2_mask(u, v);
    o[i * 5 + 4] = s;
}
