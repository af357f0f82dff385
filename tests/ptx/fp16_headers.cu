// fp16_headers.cu - every device function of CUDA 13's cuda_fp16.h and cuda_bf16.h (and the
// operators of their classes), one kernel each, for the PTX front end (the headers' inline asm,
// written "{.reg.b32 f; ...}" without a space, as in hsqrt, hexp, hlog, hrsqrt, h2sqrt) and emu
// (tests/c/test_ptx_fp16.c runs each kernel against a host reference, or expects emu to refuse it
// by name; tests/lua/frontend_spec.lua loads the module and takes every kernel).
// Left out: the deprecated __shfl, __shfl_up, __shfl_down, __shfl_xor without _sync (not
// available on sm_70 and later).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o fp16_headers.ptx fp16_headers.cu
//
// Every kernel: thread i reads a = A[i], b = B[i], c = C[i] (32-bit words: a half in the low
// 16 bits, a half2 with .x low, a float's bits, an integer; a 64-bit input is a | b << 32) and
// writes one 64-bit word O[i] (a half's bits, a half2's, a float's, an integer sign-extended,
// a float2 as x | y << 32).  Kernel names: h_ (fp16) and b_ (bf16), then the function's name;
// the overload on pairs gets "2" (h___ldg2), operators op_NAME (h_op_add, h2_op_add, ...).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef unsigned long long u64;
typedef unsigned u32;
typedef __nv_bfloat16 bf16;
typedef __nv_bfloat162 bf162;

#define KERNEL(name, expr)                                                               \
    extern "C" __global__ void name(const u32 *A, const u32 *B, const u32 *C, u64 *O)    \
    {                                                                                    \
        int i = threadIdx.x;                                                             \
        u32 a = A[i], b = B[i], c = C[i];                                                \
        (void)a; (void)b; (void)c;                                                       \
        O[i] = (expr);                                                                   \
    }

static __device__ __forceinline__ __half H(u32 x) { return __ushort_as_half((unsigned short)x); }
static __device__ __forceinline__ bf16 BF(u32 x) { return __ushort_as_bfloat16((unsigned short)x); }
static __device__ __forceinline__ __half2 H2(u32 x) { return *reinterpret_cast<const __half2 *>(&x); }
static __device__ __forceinline__ bf162 BF2(u32 x) { return *reinterpret_cast<const bf162 *>(&x); }
static __device__ __forceinline__ float F(u32 x) { return __uint_as_float(x); }
static __device__ __forceinline__ double D(u32 lo, u32 hi) { return __hiloint2double((int)hi, (int)lo); }
static __device__ __forceinline__ long long LL(u32 lo, u32 hi) { return (long long)((u64)hi << 32 | lo); }
static __device__ __forceinline__ u64 hb(__half h) { return __half_as_ushort(h); }
static __device__ __forceinline__ u64 bb(bf16 h) { return __bfloat16_as_ushort(h); }
static __device__ __forceinline__ u64 h2b(__half2 h) { return *reinterpret_cast<const u32 *>(&h); }
static __device__ __forceinline__ u64 b2b(bf162 h) { return *reinterpret_cast<const u32 *>(&h); }
static __device__ __forceinline__ u64 fb(float f) { return __float_as_uint(f); }
static __device__ __forceinline__ u64 f2b(float2 f) { return fb(f.x) | fb(f.y) << 32; }
static __device__ __forceinline__ u64 sx(long long v) { return (u64)v; }

// ---- both types: the same names on __half/__half2 (h_) and __nv_bfloat16/2 (b_) ----------------
// X: the scalar type's maker, X2 the pair's; xb, x2b their bits
#define BOTH(P, X, X2, xb, x2b)                                                          \
    KERNEL(P##___habs, xb(__habs(X(a))))                                                 \
    KERNEL(P##___hadd, xb(__hadd(X(a), X(b))))                                           \
    KERNEL(P##___hsub, xb(__hsub(X(a), X(b))))                                           \
    KERNEL(P##___hmul, xb(__hmul(X(a), X(b))))                                           \
    KERNEL(P##___hadd_rn, xb(__hadd_rn(X(a), X(b))))                                     \
    KERNEL(P##___hsub_rn, xb(__hsub_rn(X(a), X(b))))                                     \
    KERNEL(P##___hmul_rn, xb(__hmul_rn(X(a), X(b))))                                     \
    KERNEL(P##___hdiv, xb(__hdiv(X(a), X(b))))                                           \
    KERNEL(P##___hadd_sat, xb(__hadd_sat(X(a), X(b))))                                   \
    KERNEL(P##___hsub_sat, xb(__hsub_sat(X(a), X(b))))                                   \
    KERNEL(P##___hmul_sat, xb(__hmul_sat(X(a), X(b))))                                   \
    KERNEL(P##___hfma, xb(__hfma(X(a), X(b), X(c))))                                     \
    KERNEL(P##___hfma_sat, xb(__hfma_sat(X(a), X(b), X(c))))                             \
    KERNEL(P##___hfma_relu, xb(__hfma_relu(X(a), X(b), X(c))))                           \
    KERNEL(P##___hneg, xb(__hneg(X(a))))                                                 \
    KERNEL(P##___hmax, xb(__hmax(X(a), X(b))))                                           \
    KERNEL(P##___hmin, xb(__hmin(X(a), X(b))))                                           \
    KERNEL(P##___hmax_nan, xb(__hmax_nan(X(a), X(b))))                                   \
    KERNEL(P##___hmin_nan, xb(__hmin_nan(X(a), X(b))))                                   \
    KERNEL(P##___habs2, x2b(__habs2(X2(a))))                                             \
    KERNEL(P##___hadd2, x2b(__hadd2(X2(a), X2(b))))                                      \
    KERNEL(P##___hsub2, x2b(__hsub2(X2(a), X2(b))))                                      \
    KERNEL(P##___hmul2, x2b(__hmul2(X2(a), X2(b))))                                      \
    KERNEL(P##___hadd2_rn, x2b(__hadd2_rn(X2(a), X2(b))))                                \
    KERNEL(P##___hsub2_rn, x2b(__hsub2_rn(X2(a), X2(b))))                                \
    KERNEL(P##___hmul2_rn, x2b(__hmul2_rn(X2(a), X2(b))))                                \
    KERNEL(P##___h2div, x2b(__h2div(X2(a), X2(b))))                                      \
    KERNEL(P##___hadd2_sat, x2b(__hadd2_sat(X2(a), X2(b))))                              \
    KERNEL(P##___hsub2_sat, x2b(__hsub2_sat(X2(a), X2(b))))                              \
    KERNEL(P##___hmul2_sat, x2b(__hmul2_sat(X2(a), X2(b))))                              \
    KERNEL(P##___hfma2, x2b(__hfma2(X2(a), X2(b), X2(c))))                               \
    KERNEL(P##___hfma2_sat, x2b(__hfma2_sat(X2(a), X2(b), X2(c))))                       \
    KERNEL(P##___hfma2_relu, x2b(__hfma2_relu(X2(a), X2(b), X2(c))))                     \
    KERNEL(P##___hcmadd, x2b(__hcmadd(X2(a), X2(b), X2(c))))                             \
    KERNEL(P##___hneg2, x2b(__hneg2(X2(a))))                                             \
    KERNEL(P##___hmax2, x2b(__hmax2(X2(a), X2(b))))                                      \
    KERNEL(P##___hmin2, x2b(__hmin2(X2(a), X2(b))))                                      \
    KERNEL(P##___hmax2_nan, x2b(__hmax2_nan(X2(a), X2(b))))                              \
    KERNEL(P##___hmin2_nan, x2b(__hmin2_nan(X2(a), X2(b))))                              \
    /* comparisons: pairs to a pair of 1.0/0.0, to a mask, to one bool; scalars to a bool */ \
    CMP(P, eq) CMP(P, ne) CMP(P, le) CMP(P, ge) CMP(P, lt) CMP(P, gt)                      \
    CMP(P, equ) CMP(P, neu) CMP(P, leu) CMP(P, geu) CMP(P, ltu) CMP(P, gtu)                \
    KERNEL(P##___hisnan, __hisnan(X(a)))                                                 \
    KERNEL(P##___hisnan2, x2b(__hisnan2(X2(a))))                                         \
    KERNEL(P##___hisinf, sx(__hisinf(X(a))))                                             \
    /* math */                                                                           \
    KERNEL(P##_hsqrt, xb(hsqrt(X(a))))                                                   \
    KERNEL(P##_hrsqrt, xb(hrsqrt(X(a))))                                                 \
    KERNEL(P##_hrcp, xb(hrcp(X(a))))                                                     \
    KERNEL(P##_hlog, xb(hlog(X(a))))                                                     \
    KERNEL(P##_hlog2, xb(hlog2(X(a))))                                                   \
    KERNEL(P##_hlog10, xb(hlog10(X(a))))                                                 \
    KERNEL(P##_hexp, xb(hexp(X(a))))                                                     \
    KERNEL(P##_hexp2, xb(hexp2(X(a))))                                                   \
    KERNEL(P##_hexp10, xb(hexp10(X(a))))                                                 \
    KERNEL(P##_hcos, xb(hcos(X(a))))                                                     \
    KERNEL(P##_hsin, xb(hsin(X(a))))                                                     \
    KERNEL(P##_htanh, xb(htanh(X(a))))                                                   \
    KERNEL(P##_htanh_approx, xb(htanh_approx(X(a))))                                     \
    KERNEL(P##_htrunc, xb(htrunc(X(a))))                                                 \
    KERNEL(P##_hceil, xb(hceil(X(a))))                                                   \
    KERNEL(P##_hfloor, xb(hfloor(X(a))))                                                 \
    KERNEL(P##_hrint, xb(hrint(X(a))))                                                   \
    KERNEL(P##_h2sqrt, x2b(h2sqrt(X2(a))))                                               \
    KERNEL(P##_h2rsqrt, x2b(h2rsqrt(X2(a))))                                             \
    KERNEL(P##_h2rcp, x2b(h2rcp(X2(a))))                                                 \
    KERNEL(P##_h2log, x2b(h2log(X2(a))))                                                 \
    KERNEL(P##_h2log2, x2b(h2log2(X2(a))))                                               \
    KERNEL(P##_h2log10, x2b(h2log10(X2(a))))                                             \
    KERNEL(P##_h2exp, x2b(h2exp(X2(a))))                                                 \
    KERNEL(P##_h2exp2, x2b(h2exp2(X2(a))))                                               \
    KERNEL(P##_h2exp10, x2b(h2exp10(X2(a))))                                             \
    KERNEL(P##_h2cos, x2b(h2cos(X2(a))))                                                 \
    KERNEL(P##_h2sin, x2b(h2sin(X2(a))))                                                 \
    KERNEL(P##_h2tanh, x2b(h2tanh(X2(a))))                                               \
    KERNEL(P##_h2tanh_approx, x2b(h2tanh_approx(X2(a))))                                 \
    KERNEL(P##_h2trunc, x2b(h2trunc(X2(a))))                                             \
    KERNEL(P##_h2ceil, x2b(h2ceil(X2(a))))                                               \
    KERNEL(P##_h2floor, x2b(h2floor(X2(a))))                                             \
    KERNEL(P##_h2rint, x2b(h2rint(X2(a))))                                               \
    /* shuffles (b: the lane or the distance, c: the width) */                           \
    KERNEL(P##___shfl_sync, xb(__shfl_sync(0xffffffffu, X(a), (int)(b & 31), 32)))       \
    KERNEL(P##___shfl_up_sync, xb(__shfl_up_sync(0xffffffffu, X(a), b & 31, 32)))        \
    KERNEL(P##___shfl_down_sync, xb(__shfl_down_sync(0xffffffffu, X(a), b & 31, 32)))    \
    KERNEL(P##___shfl_xor_sync, xb(__shfl_xor_sync(0xffffffffu, X(a), (int)(b & 31), 32))) \
    KERNEL(P##___shfl_sync2, x2b(__shfl_sync(0xffffffffu, X2(a), (int)(b & 31), 16)))    \
    KERNEL(P##___shfl_up_sync2, x2b(__shfl_up_sync(0xffffffffu, X2(a), b & 31, 16)))     \
    KERNEL(P##___shfl_down_sync2, x2b(__shfl_down_sync(0xffffffffu, X2(a), b & 31, 8)))  \
    KERNEL(P##___shfl_xor_sync2, x2b(__shfl_xor_sync(0xffffffffu, X2(a), (int)(b & 31), 32)))

// comparisons of one operator: four kernels
#define CMP(P, op)                                                                       \
    KERNEL(P##___h##op##2, P##2b(__h##op##2(P##X2(a), P##X2(b))))                        \
    KERNEL(P##___h##op##2_mask, (u64)__h##op##2_mask(P##X2(a), P##X2(b)))                \
    KERNEL(P##___hb##op##2, (u64)__hb##op##2(P##X2(a), P##X2(b)))                        \
    KERNEL(P##___h##op, (u64)__h##op(P##X(a), P##X(b)))
#define hX H
#define hX2 H2
#define bX BF
#define bX2 BF2

BOTH(h, H, H2, hb, h2b)
BOTH(b, BF, BF2, bb, b2b)

// ---- loads and stores with cache hints (the pointer is the thread's own element) ---------------
#define MEM(P, T, T2, xb, x2b)                                                                           \
    KERNEL(P##___ldg, xb(__ldg(reinterpret_cast<const T *>(A) + 2 * i)))                                \
    KERNEL(P##___ldcg, xb(__ldcg(reinterpret_cast<const T *>(A) + 2 * i)))                              \
    KERNEL(P##___ldca, xb(__ldca(reinterpret_cast<const T *>(A) + 2 * i)))                              \
    KERNEL(P##___ldcs, xb(__ldcs(reinterpret_cast<const T *>(A) + 2 * i)))                              \
    KERNEL(P##___ldlu, xb(__ldlu(reinterpret_cast<const T *>(A) + 2 * i)))                              \
    KERNEL(P##___ldcv, xb(__ldcv(reinterpret_cast<const T *>(A) + 2 * i)))                              \
    KERNEL(P##___ldg2, x2b(__ldg(reinterpret_cast<const T2 *>(A) + i)))                                 \
    KERNEL(P##___ldcg2, x2b(__ldcg(reinterpret_cast<const T2 *>(A) + i)))                               \
    KERNEL(P##___ldca2, x2b(__ldca(reinterpret_cast<const T2 *>(A) + i)))                               \
    KERNEL(P##___ldcs2, x2b(__ldcs(reinterpret_cast<const T2 *>(A) + i)))                               \
    KERNEL(P##___ldlu2, x2b(__ldlu(reinterpret_cast<const T2 *>(A) + i)))                               \
    KERNEL(P##___ldcv2, x2b(__ldcv(reinterpret_cast<const T2 *>(A) + i)))                               \
    STORE(P##___stwb, __stwb, T, T2) STORE(P##___stcg, __stcg, T, T2)                                   \
    STORE(P##___stcs, __stcs, T, T2) STORE(P##___stwt, __stwt, T, T2)
// a store: the element at the start of O[i] (the rest of O[i] keeps what the host put there)
#define STORE(name, fn, T, T2)                                                                           \
    extern "C" __global__ void name(const u32 *A, const u32 *B, const u32 *C, u64 *O)                    \
    {                                                                                                    \
        int i = threadIdx.x;                                                                             \
        fn(reinterpret_cast<T *>(O + i), *reinterpret_cast<const T *>(A + i));                           \
    }                                                                                                    \
    extern "C" __global__ void name##2(const u32 *A, const u32 *B, const u32 *C, u64 *O)                 \
    {                                                                                                    \
        int i = threadIdx.x;                                                                             \
        fn(reinterpret_cast<T2 *>(O + i), *reinterpret_cast<const T2 *>(A + i));                         \
    }
MEM(h, __half, __half2, hb, h2b)
MEM(b, bf16, bf162, bb, b2b)

// atomicAdd into the thread's own element, which the host set to c: O[i] = c + a, the old value back
#define ATOMIC(P, T, T2)                                                                                 \
    extern "C" __global__ void P##_atomicAdd(const u32 *A, const u32 *B, const u32 *C, u64 *O)           \
    {                                                                                                    \
        int i = threadIdx.x;                                                                             \
        T old = atomicAdd(reinterpret_cast<T *>(O + i) + 1, *reinterpret_cast<const T *>(A + i));        \
        *reinterpret_cast<T *>(O + i) = old;                                                             \
    }                                                                                                    \
    extern "C" __global__ void P##_atomicAdd2(const u32 *A, const u32 *B, const u32 *C, u64 *O)          \
    {                                                                                                    \
        int i = threadIdx.x;                                                                             \
        T2 old = atomicAdd(reinterpret_cast<T2 *>(O + i) + 1, *reinterpret_cast<const T2 *>(A + i));     \
        *reinterpret_cast<T2 *>(O + i) = old;                                                            \
    }
ATOMIC(h, __half, __half2)
ATOMIC(b, bf16, bf162)

// ---- fp16: conversions and moves -----------------------------------------------------------------
KERNEL(h___double2half, hb(__double2half(D(a, b))))
KERNEL(h___float2half, hb(__float2half(F(a))))
KERNEL(h___float2half_rn, hb(__float2half_rn(F(a))))
KERNEL(h___float2half_rz, hb(__float2half_rz(F(a))))
KERNEL(h___float2half_rd, hb(__float2half_rd(F(a))))
KERNEL(h___float2half_ru, hb(__float2half_ru(F(a))))
KERNEL(h___half2float, fb(__half2float(H(a))))
KERNEL(h___float2half2_rn, h2b(__float2half2_rn(F(a))))
KERNEL(h___floats2half2_rn, h2b(__floats2half2_rn(F(a), F(b))))
KERNEL(h___float22half2_rn, h2b(__float22half2_rn(make_float2(F(a), F(b)))))
KERNEL(h___half22float2, f2b(__half22float2(H2(a))))
KERNEL(h___low2float, fb(__low2float(H2(a))))
KERNEL(h___high2float, fb(__high2float(H2(a))))
#define TOINT(P, X, from, suf)                                                                   \
    KERNEL(P##___##from##2short_##suf, sx(__##from##2short_##suf(X(a))))                         \
    KERNEL(P##___##from##2ushort_##suf, sx(__##from##2ushort_##suf(X(a))))                       \
    KERNEL(P##___##from##2int_##suf, sx(__##from##2int_##suf(X(a))))                            \
    KERNEL(P##___##from##2uint_##suf, sx(__##from##2uint_##suf(X(a))))                           \
    KERNEL(P##___##from##2ll_##suf, sx(__##from##2ll_##suf(X(a))))                              \
    KERNEL(P##___##from##2ull_##suf, sx((long long)__##from##2ull_##suf(X(a))))
#define FROMINT(P, xb, to, suf)                                                                  \
    KERNEL(P##___short2##to##_##suf, xb(__short2##to##_##suf((short)a)))                         \
    KERNEL(P##___ushort2##to##_##suf, xb(__ushort2##to##_##suf((unsigned short)a)))              \
    KERNEL(P##___int2##to##_##suf, xb(__int2##to##_##suf((int)a)))                              \
    KERNEL(P##___uint2##to##_##suf, xb(__uint2##to##_##suf(a)))                                  \
    KERNEL(P##___ll2##to##_##suf, xb(__ll2##to##_##suf(LL(a, b))))                               \
    KERNEL(P##___ull2##to##_##suf, xb(__ull2##to##_##suf((u64)LL(a, b))))
TOINT(h, H, half, rn) TOINT(h, H, half, rz) TOINT(h, H, half, rd) TOINT(h, H, half, ru)
FROMINT(h, hb, half, rn) FROMINT(h, hb, half, rz) FROMINT(h, hb, half, rd) FROMINT(h, hb, half, ru)
KERNEL(h___half2char_rz, sx(__half2char_rz(H(a))))
KERNEL(h___half2uchar_rz, sx(__half2uchar_rz(H(a))))
KERNEL(h___half2half2, h2b(__half2half2(H(a))))
KERNEL(h___lowhigh2highlow, h2b(__lowhigh2highlow(H2(a))))
KERNEL(h___lows2half2, h2b(__lows2half2(H2(a), H2(b))))
KERNEL(h___highs2half2, h2b(__highs2half2(H2(a), H2(b))))
KERNEL(h___high2half, hb(__high2half(H2(a))))
KERNEL(h___low2half, hb(__low2half(H2(a))))
KERNEL(h___halves2half2, h2b(__halves2half2(H(a), H(b))))
KERNEL(h___low2half2, h2b(__low2half2(H2(a))))
KERNEL(h___high2half2, h2b(__high2half2(H2(a))))
KERNEL(h_make_half2, h2b(make_half2(H(a), H(b))))
KERNEL(h___half_as_short, sx(__half_as_short(H(a))))
KERNEL(h___half_as_ushort, sx(__half_as_ushort(H(a))))
KERNEL(h___short_as_half, hb(__short_as_half((short)a)))
KERNEL(h___ushort_as_half, hb(__ushort_as_half((unsigned short)a)))

// ---- bf16: conversions and moves -----------------------------------------------------------------
KERNEL(b___double2bfloat16, bb(__double2bfloat16(D(a, b))))
KERNEL(b___float2bfloat16, bb(__float2bfloat16(F(a))))
KERNEL(b___float2bfloat16_rn, bb(__float2bfloat16_rn(F(a))))
KERNEL(b___float2bfloat16_rz, bb(__float2bfloat16_rz(F(a))))
KERNEL(b___float2bfloat16_rd, bb(__float2bfloat16_rd(F(a))))
KERNEL(b___float2bfloat16_ru, bb(__float2bfloat16_ru(F(a))))
KERNEL(b___bfloat162float, fb(__bfloat162float(BF(a))))
KERNEL(b___float2bfloat162_rn, b2b(__float2bfloat162_rn(F(a))))
KERNEL(b___floats2bfloat162_rn, b2b(__floats2bfloat162_rn(F(a), F(b))))
KERNEL(b___float22bfloat162_rn, b2b(__float22bfloat162_rn(make_float2(F(a), F(b)))))
KERNEL(b___bfloat1622float2, f2b(__bfloat1622float2(BF2(a))))
KERNEL(b___low2float, fb(__low2float(BF2(a))))
KERNEL(b___high2float, fb(__high2float(BF2(a))))
TOINT(b, BF, bfloat16, rn) TOINT(b, BF, bfloat16, rz) TOINT(b, BF, bfloat16, rd) TOINT(b, BF, bfloat16, ru)
FROMINT(b, bb, bfloat16, rn) FROMINT(b, bb, bfloat16, rz) FROMINT(b, bb, bfloat16, rd) FROMINT(b, bb, bfloat16, ru)
KERNEL(b___bfloat162char_rz, sx(__bfloat162char_rz(BF(a))))
KERNEL(b___bfloat162uchar_rz, sx(__bfloat162uchar_rz(BF(a))))
KERNEL(b___bfloat162bfloat162, b2b(__bfloat162bfloat162(BF(a))))
KERNEL(b___lowhigh2highlow, b2b(__lowhigh2highlow(BF2(a))))
KERNEL(b___lows2bfloat162, b2b(__lows2bfloat162(BF2(a), BF2(b))))
KERNEL(b___highs2bfloat162, b2b(__highs2bfloat162(BF2(a), BF2(b))))
KERNEL(b___high2bfloat16, bb(__high2bfloat16(BF2(a))))
KERNEL(b___low2bfloat16, bb(__low2bfloat16(BF2(a))))
KERNEL(b___halves2bfloat162, b2b(__halves2bfloat162(BF(a), BF(b))))
KERNEL(b___low2bfloat162, b2b(__low2bfloat162(BF2(a))))
KERNEL(b___high2bfloat162, b2b(__high2bfloat162(BF2(a))))
KERNEL(b_make_bfloat162, b2b(make_bfloat162(BF(a), BF(b))))
KERNEL(b___bfloat16_as_short, sx(__bfloat16_as_short(BF(a))))
KERNEL(b___bfloat16_as_ushort, sx(__bfloat16_as_ushort(BF(a))))
KERNEL(b___short_as_bfloat16, bb(__short_as_bfloat16((short)a)))
KERNEL(b___ushort_as_bfloat16, bb(__ushort_as_bfloat16((unsigned short)a)))

// ---- the classes' operators (the headers define them through the functions above) ----------------
#define OPS(P, T, X, xb)                                                                         \
    KERNEL(P##_op_add, xb(X(a) + X(b)))                                                          \
    KERNEL(P##_op_sub, xb(X(a) - X(b)))                                                          \
    KERNEL(P##_op_mul, xb(X(a) * X(b)))                                                          \
    KERNEL(P##_op_div, xb(X(a) / X(b)))                                                          \
    KERNEL(P##_op_neg, xb(-X(a)))                                                                \
    KERNEL(P##_op_plus, xb(+X(a)))                                                               \
    KERNEL(P##_op_inc, ({ T x = X(a); ++x; xb(x); }))                                            \
    KERNEL(P##_op_dec, ({ T x = X(a); x--; xb(x); }))                                            \
    KERNEL(P##_op_addeq, ({ T x = X(a); x += X(b); x *= X(c); xb(x); }))                         \
    KERNEL(P##_op_subeq, ({ T x = X(a); x -= X(b); x /= X(c); xb(x); }))                         \
    KERNEL(P##_op_eq, (u64)(X(a) == X(b)))                                                       \
    KERNEL(P##_op_ne, (u64)(X(a) != X(b)))                                                       \
    KERNEL(P##_op_lt, (u64)(X(a) < X(b)))                                                        \
    KERNEL(P##_op_gt, (u64)(X(a) > X(b)))                                                        \
    KERNEL(P##_op_le, (u64)(X(a) <= X(b)))                                                       \
    KERNEL(P##_op_ge, (u64)(X(a) >= X(b)))
OPS(h, __half, H, hb)
OPS(h2, __half2, H2, h2b)
OPS(b, bf16, BF, bb)
OPS(b2, bf162, BF2, b2b)
// conversions of the scalar classes: from float and int (round to nearest), to float and int (toward 0)
KERNEL(h_op_from_float, hb(__half(F(a))))
KERNEL(h_op_from_int, hb(__half((int)a)))
KERNEL(h_op_to_float, fb((float)H(a)))
KERNEL(h_op_to_int, sx((int)H(a)))
KERNEL(b_op_from_float, bb(bf16(F(a))))
KERNEL(b_op_from_int, bb(bf16((int)a)))
KERNEL(b_op_to_float, fb((float)BF(a)))
KERNEL(b_op_to_int, sx((int)BF(a)))
