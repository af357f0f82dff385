// rounding.cu - directed rounding (.rz/.rm/.rp) and .ftz on f32/f64 arithmetic
// and conversions, for test_emu.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o rounding.ptx rounding.cu
#define NF 24
#define ND 18
extern "C" __global__ void rounding(const float *a, const float *b, const float *c, float *fo,
                                   const double *x, const double *y, const double *z, double *dout,
                                   const long long *n)
{
    int i = threadIdx.x;
    float p = a[i], q = b[i], r = c[i];
    float *f = fo + i * NF;
    f[0] = __fadd_rz(p, q);  f[1] = __fadd_rd(p, q);  f[2] = __fadd_ru(p, q);
    f[3] = __fmul_rz(p, q);  f[4] = __fmul_rd(p, q);  f[5] = __fmul_ru(p, q);
    f[6] = __fmaf_rz(p, q, r); f[7] = __fmaf_rd(p, q, r); f[8] = __fmaf_ru(p, q, r);
    f[9] = __fdiv_rz(p, q);  f[10] = __fdiv_rd(p, q); f[11] = __fdiv_ru(p, q);
    f[12] = __fsqrt_rz(fabsf(p)); f[13] = __fsqrt_rd(fabsf(p)); f[14] = __fsqrt_ru(fabsf(p));
    f[15] = __frcp_rz(q);    f[16] = __double2float_rd(x[i]); f[17] = __double2float_ru(x[i]);
    f[18] = __ll2float_rz(n[i]); f[19] = __ll2float_ru(n[i]);
    float s, m, k; int g;
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(s) : "f"(p), "f"(q));
    asm("mul.ftz.f32 %0, %1, %2;" : "=f"(m) : "f"(p), "f"(q));
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(k) : "f"(p), "f"(q), "f"(r));
    asm("{ .reg .pred t; setp.ne.ftz.f32 t, %1, 0f00000000; selp.s32 %0, 1, 0, t; }" : "=r"(g) : "f"(p));
    f[20] = s; f[21] = m; f[22] = k; f[23] = (float)g;
    double u = x[i], v = y[i], w = z[i];
    double *d = dout + i * ND;
    d[0] = __dadd_rz(u, v);  d[1] = __dadd_rd(u, v);  d[2] = __dadd_ru(u, v);
    d[3] = __dmul_rz(u, v);  d[4] = __dmul_rd(u, v);  d[5] = __dmul_ru(u, v);
    d[6] = __fma_rz(u, v, w); d[7] = __fma_rd(u, v, w); d[8] = __fma_ru(u, v, w);
    d[9] = __ddiv_rz(u, v);  d[10] = __ddiv_rd(u, v); d[11] = __ddiv_ru(u, v);
    d[12] = __dsqrt_rz(fabs(u)); d[13] = __dsqrt_rd(fabs(u)); d[14] = __dsqrt_ru(fabs(u));
    d[15] = __drcp_rd(v);    d[16] = __ll2double_rz(n[i] * 1025); d[17] = __ll2double_ru(n[i] * 1025);
}
