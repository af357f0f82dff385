/* emu_mma.c - the tensor cores on emu: wgmma (warpgroup MMA from registers and shared-memory
 * matrix descriptors), mma.sync, wmma, ldmatrix/stmatrix/movmatrix and setmaxnreg, each run
 * natively for a whole warp: its fragments gathered into tiles by the PTX ISA's layouts, one
 * tight loop over the tile, the result scattered back. */
#include "emu/emu_memtime.h"
#include "emu/emu_internal.h"
#include "emu/emu_mma.h"
#include "emu/emu_tma.h"
#include "frontend/ptx_mma.h"

#include <math.h>
#include <stdlib.h>

/* ---- elements ------------------------------------------------------------- */

static float e4m3_to_float(uint32_t v)
{
    int s = v >> 7 & 1, e = v >> 3 & 15, m = v & 7;
    float r;
    if (e == 15 && m == 7) r = NAN; /* e4m3 has no infinities; S.1111.111 is NaN */
    else if (e == 0) r = ldexpf((float)m, -9); /* subnormal: m/8 * 2^-6 */
    else r = ldexpf((float)(8 + m), e - 10);
    return s ? -r : r;
}

static float e5m2_to_float(uint32_t v)
{
    /* e5m2 is the top byte of an f16 */
    return mh_half_to_float((uint16_t)(v << 8));
}

/* Element i (of `bits` bits) of a packed register value, as a float (or integer). */
static inline float elem_f(uint64_t reg, int i, int t)
{
    switch (t) {
    case MH_MT_F16: return mh_half_to_float((uint16_t)(reg >> (16 * i)));
    case MH_MT_BF16: return mh_bf16_to_float((uint16_t)(reg >> (16 * i)));
    case MH_MT_TF32: return mh_f32_from_bits((uint32_t)reg & 0xffffe000u); /* tf32: the top 19 bits */
    case MH_MT_F32: return mh_f32_from_bits((uint32_t)reg);
    case MH_MT_E4M3: return e4m3_to_float((uint32_t)(reg >> (8 * i)) & 0xff);
    case MH_MT_E5M2: return e5m2_to_float((uint32_t)(reg >> (8 * i)) & 0xff);
    default: return 0;
    }
}

static inline int32_t elem_i(uint64_t reg, int i, int t)
{
    uint32_t b = (uint32_t)(reg >> (8 * i)) & 0xff;
    return t == MH_MT_S8 ? (int32_t)(int8_t)b : (int32_t)b;
}

/* Elements per 32-bit register of a type (f64: one per 64-bit register). */
static inline int per_reg(int t) { int b = mh_mma_type_bits(t); return b >= 32 ? 1 : 32 / b; }

static inline int is_int(int t) { return t == MH_MT_S8 || t == MH_MT_U8 || t == MH_MT_S32; }

static inline uint64_t *reg_at(const ctx *c, warp *w, uint32_t r, int lane)
{
    return &w->r[(size_t)(r - c->reg_lo) * WARP + (size_t)lane];
}

/* An operand of the record with its register the kernel's (emu renumbers from the kernel's first). */
static inline mh_ptx_opnd opnd(const ctx *c, const mh_ptx_opnd *o)
{
    mh_ptx_opnd k = *o;
    if (k.kind == MH_OPK_REG || (k.kind == MH_OPK_ADDR && k.reg != UINT32_MAX)) k.reg -= c->reg_lo;
    return k;
}

static inline uint32_t list_reg(const ctx *c, const mh_mma_list *l, int k) { return c->mma_regs[l->off + (uint32_t)k]; }

static inline uint64_t get(const ctx *c, warp *w, const mh_mma_list *l, int k, int lane)
{
    uint32_t r = list_reg(c, l, k);
    return r == UINT32_MAX ? 0 : *reg_at(c, w, r, lane);
}

static inline void set(const ctx *c, warp *w, const mh_mma_list *l, int k, int lane, uint64_t v, uint32_t mask)
{
    uint32_t r = list_reg(c, l, k);
    if (r == UINT32_MAX) return;
    *reg_at(c, w, r, lane) = v;
    if (w->written) w->written[r - c->reg_lo] |= mask; /* strict mode: written */
}

/* ---- the tile computation: D[M][N] = A[M][K] * B[K][N] + C ---------------------------- */
/* Float tiles accumulate in f32, k in order (the PTX ISA leaves the order and the internal
 * precision to the implementation); f64 in double; integers in int32 (wrapping) or, with
 * .satfinite, exactly and clamped. */
/* Each element d = d + a*b rounded to f32 at every step, k ascending (ISO C mode: no contraction
 * into fused multiply-adds), so the same bits on every CPU.  x86-64 with GCC: a register-blocked
 * kernel for AVX-512 and one for AVX2 (4 rows x 2 vectors of columns held across the k loop: 8
 * accumulators, each B row's vectors loaded once for the 4 rows), chosen at run time; the rows and
 * columns left over, and other compilers, take the plain loop (64 columns held across k). */
static void gemm_f_plain(int M, int N, int K, const float *restrict A, const float *restrict B, float *restrict D,
                         int i0, int jfrom)
{
    for (int i = i0; i < M; i++) {
        float *d = D + (size_t)i * N;
        int j0 = jfrom;
        for (; j0 + 64 <= N; j0 += 64) {
            float acc[64];
            memcpy(acc, d + j0, sizeof acc);
            for (int k = 0; k < K; k++) {
                float a = A[(size_t)i * K + k];
                const float *b = B + (size_t)k * N + j0;
                for (int j = 0; j < 64; j++) acc[j] += a * b[j];
            }
            memcpy(d + j0, acc, sizeof acc);
        }
        for (int k = 0; k < K; k++) {
            float a = A[(size_t)i * K + k];
            const float *b = B + (size_t)k * N;
            for (int j = j0; j < N; j++) d[j] += a * b[j];
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* The blocked kernel for vectors of VL floats (type V): rows in fours, 2 VL columns at a time;
 * returns the first column it left (the plain loop takes the rest of every row, and the rows
 * below the last four). */
#define GEMM_BLOCKED(V, VL)                                                                             \
    int jb = N / (2 * VL) * (2 * VL), mb = M / 4 * 4;                                                  \
    for (int i = 0; i < mb; i += 4)                                                                     \
        for (int j0 = 0; j0 < jb; j0 += 2 * VL) {                                                       \
            V acc[4][2];                                                                                \
            for (int r = 0; r < 4; r++)                                                                 \
                for (int h = 0; h < 2; h++) memcpy(&acc[r][h], D + (size_t)(i + r) * N + j0 + h * VL, sizeof(V)); \
            for (int k = 0; k < K; k++) {                                                               \
                V b0, b1;                                                                               \
                memcpy(&b0, B + (size_t)k * N + j0, sizeof b0);                                         \
                memcpy(&b1, B + (size_t)k * N + j0 + VL, sizeof b1);                                    \
                for (int r = 0; r < 4; r++) {                                                           \
                    V a = (V){0} + A[(size_t)(i + r) * K + k];                                          \
                    V p0 = a * b0, p1 = a * b1;                                                         \
                    acc[r][0] = acc[r][0] + p0;                                                         \
                    acc[r][1] = acc[r][1] + p1;                                                         \
                }                                                                                       \
            }                                                                                           \
            for (int r = 0; r < 4; r++)                                                                 \
                for (int h = 0; h < 2; h++) memcpy(D + (size_t)(i + r) * N + j0 + h * VL, &acc[r][h], sizeof(V)); \
        }                                                                                               \
    if (jb < N) /* the columns right of the blocks, for the blocked rows */                             \
        for (int i = 0; i < mb; i++)                                                                    \
            for (int k = 0; k < K; k++) {                                                               \
                float a = A[(size_t)i * K + k], *d = D + (size_t)i * N;                                 \
                const float *b = B + (size_t)k * N;                                                     \
                for (int j = jb; j < N; j++) d[j] += a * b[j];                                          \
            }                                                                                           \
    gemm_f_plain(M, N, K, A, B, D, mb, 0);

typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

__attribute__((target("avx512f"))) static void gemm_f_avx512(int M, int N, int K, const float *restrict A,
                                                              const float *restrict B, float *restrict D)
{
    GEMM_BLOCKED(v16f, 16)
}

__attribute__((target("avx2"))) static void gemm_f_avx2(int M, int N, int K, const float *restrict A,
                                                         const float *restrict B, float *restrict D)
{
    GEMM_BLOCKED(v8f, 8)
}
#undef GEMM_BLOCKED

static void gemm_f(int M, int N, int K, const float *restrict A, const float *restrict B, float *restrict D)
{
    /* (__builtin_cpu_supports reads the CPU's features libgcc found at load time: no state here) */
    if (__builtin_cpu_supports("avx512f")) gemm_f_avx512(M, N, K, A, B, D);
    else if (__builtin_cpu_supports("avx2")) gemm_f_avx2(M, N, K, A, B, D);
    else gemm_f_plain(M, N, K, A, B, D, 0, 0);
}
#else
static void gemm_f(int M, int N, int K, const float *restrict A, const float *restrict B, float *restrict D)
{
    gemm_f_plain(M, N, K, A, B, D, 0, 0);
}
#endif

static void gemm_i(int M, int N, int K, const int32_t *A, const int32_t *B, int64_t *D)
{
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            int64_t a = A[(size_t)i * K + k];
            for (int j = 0; j < N; j++) D[(size_t)i * N + j] += a * B[(size_t)k * N + j];
        }
}

static inline int64_t int_result(int64_t v, int sat)
{
    if (sat) return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
    return (int32_t)(uint32_t)(uint64_t)v;
}

/* ---- mma.sync fragments (PTX ISA, "Matrix fragments for mma.m16n8k*" and m8n8k4 f64) ---------- */
/* Element i of lane l's A fragment is A[row][col]. */
static void mma_a_pos(const mh_ptx_mma *r, int l, int i, int *row, int *col)
{
    int g = l >> 2, t = l & 3, bits = mh_mma_type_bits(r->atype);
    if (r->atype == MH_MT_F64) { *row = g; *col = t; return; }
    if (bits == 16) {
        *row = g + 8 * ((i >> 1) & 1);
        *col = 2 * t + (i & 1) + 8 * (i >= 4);
    } else if (bits == 32) { /* tf32 */
        *row = g + 8 * (i & 1);
        *col = t + 4 * (i >= 2);
    } else { /* 8-bit */
        *row = g + 8 * ((i >> 2) & 1);
        *col = 4 * t + (i & 3) + 16 * (i >= 8);
    }
}

/* Element i of lane l's B fragment is B[k][n]. */
static void mma_b_pos(const mh_ptx_mma *r, int l, int i, int *k, int *n)
{
    int g = l >> 2, t = l & 3, bits = mh_mma_type_bits(r->btype);
    *n = g;
    if (r->btype == MH_MT_F64) *k = t;
    else if (bits == 16) *k = 2 * t + (i & 1) + 8 * (i >= 2);
    else if (bits == 32) *k = t + 4 * i;
    else *k = 4 * t + (i & 3) + 16 * (i >= 4);
}

/* Element i of lane l's C/D fragment (m16n8: 4 elements; m8n8k4 f64: 2). */
static void mma_c_pos(const mh_ptx_mma *r, int l, int i, int *row, int *col)
{
    int g = l >> 2, t = l & 3;
    if (r->m == 8) { *row = g; *col = 2 * t + i; return; }
    *row = g + 8 * (i >= 2);
    *col = 2 * t + (i & 1);
}

/* Reads lane l's accumulator element i (C or D list of type t) as a float/double/int. */
static inline uint64_t acc_bits(const ctx *c, warp *w, const mh_mma_list *li, int t, int i, int l)
{
    if (t == MH_MT_F16) return get(c, w, li, i / 2, l) >> (16 * (i & 1)) & 0xffff;
    return get(c, w, li, i, l);
}

static double acc_value(uint64_t bits, int t)
{
    switch (t) {
    case MH_MT_F16: return mh_half_to_float((uint16_t)bits);
    case MH_MT_F32: return mh_f32_from_bits((uint32_t)bits);
    case MH_MT_F64: return mh_f64_from_bits(bits);
    default: return (double)(int32_t)(uint32_t)bits;
    }
}

/* Writes accumulator element i of lane l: f16 halves are packed two to a register. */
static void acc_store(const ctx *c, warp *w, const mh_mma_list *li, int t, int i, int l, double v, int64_t iv, int sat,
                      uint32_t mask)
{
    if (t == MH_MT_F16) {
        uint32_t r = list_reg(c, li, i / 2);
        if (r == UINT32_MAX) return;
        uint64_t old = *reg_at(c, w, r, l), h = mh_double_to_half(v);
        old = (i & 1) ? ((old & 0xffffu) | h << 16) : ((old & ~0xffffull) | h);
        set(c, w, li, i / 2, l, old & 0xffffffffu, mask);
    } else if (t == MH_MT_F32) set(c, w, li, i, l, mh_f32_bits((float)v), mask);
    else if (t == MH_MT_F64) set(c, w, li, i, l, mh_f64_bits(v), mask);
    else set(c, w, li, i, l, (uint32_t)int_result(iv, sat), mask);
}

/* Cycles a synchronous tensor-core operation of `macs` multiply-adds keeps warp w: its issue
 * is already counted; the wait for its sub-partition's tensor core (shared by the warps on it)
 * and the operation at the device model's rate for its type (emu_memtime.c, emu_model.c). */
static uint64_t mma_cycles(ctx *c, const warp *w, int atype, uint64_t macs)
{
    return emu_mt_mma(c, w, atype, macs, 0) - c->now; /* operands in registers */
}

/* The tiles of one instruction (the largest: wgmma's B at n256 and a warp's 16 rows of D; WMMA's
 * 32 x 16), on the stack (118 KB; emu runs on the calling thread): no allocation per instruction. */
typedef struct {
    float a[16 * 32], b[32 * 256], d[16 * 256];
    int32_t ia[16 * 32], ib[32 * 256];
    int64_t id[16 * 256];
    double da[8 * 4], db[4 * 8], dd[8 * 8];
} tiles;

/* The shape nvcc and Triton emit most, m16n8k16 f16/bf16 with f32 accumulators, without the
 * general path's per-element layout and type dispatch (the same layouts, unrolled). */
static void mma_16816_f32(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    float A[16 * 16], B[16 * 8], D[16 * 8];
    int bf = r->atype == MH_MT_BF16;
    for (int l = 0; l < WARP; l++) {
        int g = l >> 2, t = l & 3;
        for (int j = 0; j < 4; j++) { /* a: {row g, g+8} x {cols 2t, 2t+8}, two halves each */
            uint32_t v = (uint32_t)get(c, w, &r->a, j, l);
            float *p = A + (g + 8 * (j & 1)) * 16 + 2 * t + 8 * (j >> 1);
            p[0] = bf ? mh_bf16_to_float((uint16_t)v) : mh_half_to_float((uint16_t)v);
            p[1] = bf ? mh_bf16_to_float((uint16_t)(v >> 16)) : mh_half_to_float((uint16_t)(v >> 16));
        }
        for (int j = 0; j < 2; j++) { /* b: k = 2t + 8j (+1), column g */
            uint32_t v = (uint32_t)get(c, w, &r->b, j, l);
            float *p = B + (2 * t + 8 * j) * 8 + g;
            p[0] = bf ? mh_bf16_to_float((uint16_t)v) : mh_half_to_float((uint16_t)v);
            p[8] = bf ? mh_bf16_to_float((uint16_t)(v >> 16)) : mh_half_to_float((uint16_t)(v >> 16));
        }
        for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = mh_f32_from_bits((uint32_t)get(c, w, &r->c, i, l));
    }
    gemm_f(16, 8, 16, A, B, D);
    for (int l = 0; l < WARP; l++) {
        int g = l >> 2, t = l & 3;
        for (int i = 0; i < 4; i++) set(c, w, &r->d, i, l, mh_f32_bits(D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)]), mask);
    }
    c->cost += mma_cycles(c, w, r->atype, 16 * 8 * 16);
}

static int mma_sync(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    int M = r->m, N = r->n, K = r->k, at = r->atype, bt = r->btype;
    if (M == 16 && K == 16 && (at == MH_MT_F16 || at == MH_MT_BF16) && r->ctype == MH_MT_F32 && r->dtype == MH_MT_F32) {
        mma_16816_f32(c, w, r, mask);
        return 0;
    }
    int na = M * K / WARP, nb = K * N / WARP, nc = M * N / WARP;
    tiles Tv, *T = &Tv;
    int ints = is_int(at), f64 = at == MH_MT_F64;
    for (int l = 0; l < WARP; l++) {
        for (int i = 0; i < na; i++) {
            int row, col, pr = per_reg(at);
            mma_a_pos(r, l, i, &row, &col);
            uint64_t v = get(c, w, &r->a, i / pr, l);
            if (ints) T->ia[row * K + col] = elem_i(v, i % pr, at);
            else if (f64) T->da[row * K + col] = mh_f64_from_bits(v);
            else T->a[row * K + col] = elem_f(v, i % pr, at);
        }
        for (int i = 0; i < nb; i++) {
            int k, n, pr = per_reg(bt);
            mma_b_pos(r, l, i, &k, &n);
            uint64_t v = get(c, w, &r->b, i / pr, l);
            if (ints) T->ib[k * N + n] = elem_i(v, i % pr, bt);
            else if (f64) T->db[k * N + n] = mh_f64_from_bits(v);
            else T->b[k * N + n] = elem_f(v, i % pr, bt);
        }
        for (int i = 0; i < nc; i++) {
            int row, col;
            mma_c_pos(r, l, i, &row, &col);
            uint64_t v = acc_bits(c, w, &r->c, r->ctype, i, l);
            if (ints) T->id[row * N + col] = (int32_t)(uint32_t)v;
            else if (f64) T->dd[row * N + col] = mh_f64_from_bits(v);
            else T->d[row * N + col] = (float)acc_value(v, r->ctype);
        }
    }
    if (ints) gemm_i(M, N, K, T->ia, T->ib, T->id);
    else if (f64) {
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++)
                for (int j = 0; j < N; j++) T->dd[i * N + j] = fma(T->da[i * K + k], T->db[k * N + j], T->dd[i * N + j]);
    } else gemm_f(M, N, K, T->a, T->b, T->d);
    for (int l = 0; l < WARP; l++)
        for (int i = 0; i < nc; i++) {
            int row, col;
            mma_c_pos(r, l, i, &row, &col);
            acc_store(c, w, &r->d, r->dtype, i, l, ints ? 0 : f64 ? T->dd[row * N + col] : T->d[row * N + col],
                      ints ? T->id[row * N + col] : 0, r->satfinite, mask);
        }
    c->cost += mma_cycles(c, w, at, (uint64_t)M * N * K);
    return 0;
}

/* ---- wgmma: shared-memory matrix descriptors (PTX ISA, "Matrix Descriptor Format" and the
 * canonical layouts: core matrices of 8 rows x 16 bytes; swizzle atoms of 8 rows x 32/64/128
 * bytes; CUTLASS's GMMA layouts name them the same way) ----------------------------------- */
typedef struct {
    uint64_t start, lbo, sbo;
    uint32_t base, width; /* width: the swizzle's row bytes (0: none) */
} desc;

static desc desc_of(uint64_t v)
{
    static const uint32_t widths[4] = {0, 128, 64, 32};
    desc d = {(v & 0x3fff) << 4, (v >> 16 & 0x3fff) << 4, (v >> 32 & 0x3fff) << 4, (uint32_t)(v >> 49 & 7),
              widths[v >> 62 & 3]};
    return d;
}

/* The shared-memory address of element (mn, k) of a K-major (trans 0) or MN-major (trans 1)
 * operand with eb-byte elements. */
static inline uint64_t desc_addr(const desc *d, int mn, int k, int eb, int trans)
{
    uint64_t off;
    uint32_t W = d->width;
    if (!trans) {
        uint64_t kb = (uint64_t)k * (uint64_t)eb;
        off = W ? (uint64_t)(mn % 8) * W + (uint64_t)(mn / 8) * d->sbo + kb
                : (uint64_t)(mn % 8) * 16 + (uint64_t)(mn / 8) * d->sbo + kb % 16 + kb / 16 * d->lbo;
    } else {
        uint64_t mb = (uint64_t)mn * (uint64_t)eb;
        off = W ? mb % W + mb / W * d->lbo + (uint64_t)(k % 8) * W + (uint64_t)(k / 8) * d->sbo
                : mb % 16 + mb / 16 * d->sbo + (uint64_t)(k % 8) * 16 + (uint64_t)(k / 8) * d->lbo;
    }
    uint64_t a = d->start + off;
    if (W) a = emu_swizzle(a, W / 16 - 1, d->base); /* by the address's bits, as TMA writes it */
    return a;
}

static inline int smem_elem(ctx *c, warp *w, uint64_t a, int eb, uint64_t *out)
{
    if (__builtin_expect(a % (uint64_t)eb || a >= c->shared_size || (uint64_t)eb > c->shared_size - a, 0)) {
        emu_fault(c, w, 0, "wgmma: a matrix descriptor reaches shared offset 0x%llx, outside the block's %llu bytes "
                  "of shared memory (or misaligned)", (unsigned long long)a, (unsigned long long)c->shared_size);
        return -1;
    }
    *out = ld_elem(c->shared + a, eb);
    return 0;
}

/* ---- wgmma's fast gathers: K-major operands by 16-byte chunks ------------------------------ */
/* In a K-major operand (trans 0) the 16 / eb elements k0 .. k0 + 16/eb - 1 of row mn (k0 a
 * multiple of 16 / eb) are one 16-byte chunk, which the swizzle moves as a whole (desc_addr XORs
 * address bits 4-6 by bits of the chunk's 128-byte row): one address and one bounds check a chunk
 * instead of an element.  A chunk not wholly inside shared memory goes element by element
 * (smem_elem's fault names the first bad address).  Floats only (ints keep the general path). */
static inline void chunk_to_f(const unsigned char *p, int eb, int t, float scale, float *dst, size_t stride)
{
    int n = 16 / eb;
    if (t == MH_MT_BF16) {
        for (int j = 0; j < 8; j++) {
            uint16_t h;
            memcpy(&h, p + 2 * j, 2);
            dst[(size_t)j * stride] = scale * mh_bf16_to_float(h);
        }
        return;
    }
    for (int j = 0; j < n; j++) dst[(size_t)j * stride] = scale * elem_f(ld_elem(p + (size_t)j * (size_t)eb, eb), 0, t);
}

/* Rows mn0 .. mn0 + rows - 1 of a K-major float operand into dst (element (mn, k) at
 * dst[(mn - mn0) * ms + k * ks]); -1 after a fault. */
static int gather_kmajor(ctx *c, warp *w, const desc *d, int mn0, int rows, int K, int eb, int t, float scale,
                         float *dst, size_t ms, size_t ks)
{
    int per = 16 / eb;
    for (int m = 0; m < rows; m++)
        for (int k0 = 0; k0 < K; k0 += per) {
            uint64_t a = desc_addr(d, mn0 + m, k0, eb, 0);
            float *o = dst + (size_t)m * ms + (size_t)k0 * ks;
            if (__builtin_expect(a <= c->shared_size && 16 <= c->shared_size - a, 1)) {
                chunk_to_f(c->shared + a, eb, t, scale, o, ks);
                continue;
            }
            for (int j = 0; j < per; j++) {
                uint64_t v;
                if (smem_elem(c, w, desc_addr(d, mn0 + m, k0 + j, eb, 0), eb, &v)) return -1;
                o[(size_t)j * ks] = scale * elem_f(v, 0, t);
            }
        }
    return 0;
}

/* The float B operand of a warpgroup's wgmma, gathered once for its four warps: the warps of a
 * warpgroup issue the same wgmma one after another, and B (N x K from shared memory) is the same
 * for each while no shared memory was written between (c->writes counts every write). */
struct emu_wg_b {
    const blk *b;
    uint32_t ctaid[3];
    uint64_t desc, writes;
    int n, k, trans, t, scale, valid;
    float v[32 * 256];
};

static const float *wgmma_b(ctx *c, warp *w, const mh_ptx_mma *r, uint64_t dv, float sb, int *fault)
{
    int N = r->n, K = r->k, bt = r->btype, eb = mh_mma_type_bits(r->atype) / 8;
    *fault = 0;
    if (!c->wgb && !(c->wgb = malloc(sizeof *c->wgb))) return NULL; /* (then gathered per warp) */
    struct emu_wg_b *q = c->wgb;
    if (q->valid && q->b == w->b && !memcmp(q->ctaid, w->b->ctaid, sizeof q->ctaid) && q->desc == dv && q->writes == c->writes && q->n == N && q->k == K &&
        q->trans == r->trans_b && q->t == bt && q->scale == r->scale_b)
        return q->v;
    q->valid = 0;
    desc db = desc_of(dv);
    if (gather_kmajor(c, w, &db, 0, N, K, eb, bt, sb, q->v, 1, (size_t)N)) { *fault = 1; return NULL; }
    q->b = w->b;
    memcpy(q->ctaid, w->b->ctaid, sizeof q->ctaid);
    q->desc = dv;
    q->writes = c->writes;
    q->n = N;
    q->k = K;
    q->trans = r->trans_b;
    q->t = bt;
    q->scale = r->scale_b;
    q->valid = 1;
    return q->v;
}

/* Strict mode (emu_hazards.c): the shared bytes a warp's wgmma reads, its 16 rows of A (from a
 * descriptor) and all of B, each checked and marked as read by its group, whichever path gathered
 * them (the fast gathers read chunks, and B once for a warpgroup). */
static __attribute__((noinline, cold)) int wgmma_hazards(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    int N = r->n, K = r->k, eb = mh_mma_type_bits(r->atype) / 8, wi = (int)(w->index % 4);
    if (!r->a_regs) {
        mh_ptx_opnd o = opnd(c, &r->desc_a);
        desc d = desc_of(val(c, w, &o, __builtin_ctz(mask)));
        for (int row = 0; row < 16; row++)
            for (int k = 0; k < K; k++)
                if (emu_hz_wgmma_read(c, w, desc_addr(&d, 16 * wi + row, k, eb, r->trans_a), (uint32_t)eb)) return -1;
    }
    mh_ptx_opnd ob = opnd(c, &r->desc_b);
    desc db = desc_of(val(c, w, &ob, __builtin_ctz(mask)));
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            if (emu_hz_wgmma_read(c, w, desc_addr(&db, n, k, eb, r->trans_b), (uint32_t)eb)) return -1;
    return 0;
}

/* A warp's part of a wgmma (16 rows a warp, N columns, K deep, type at) on its sub-partition's tensor
 * core, shared with the other warps on it (emu_memtime.c): it starts when the core is free and its
 * operands are read (the shared-memory latency after the issue); its accumulators are ready the
 * model's wgmma_lat after its last multiply-add (what wgmma.commit_group / wait_group wait for). */
static void tc_issue(ctx *c, warp *w, int at, int N, int K)
{
    const mh_emu_model *m = c->d->model;
    w->mma.pending = emu_mt_mma(c, w, at, 16ull * (uint64_t)N * (uint64_t)K, m->smem_lat) + m->wgmma_lat;
}

static int wgmma(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    int N = r->n, K = r->k, at = r->atype, eb = mh_mma_type_bits(at) / 8, ints = is_int(at);
    int wi = (int)(w->index % 4), nd = 16 * N / WARP; /* this warp's 16 rows of D: elements per lane */
    if (c->nthreads % 128)
        return emu_fault(c, w, 0, "wgmma needs whole warpgroups: the block has %u threads", c->nthreads), -1;
    if (__builtin_expect(c->hz != NULL, 0) && wgmma_hazards(c, w, r, mask)) return -1; /* strict mode */
    tiles Tv, *T = &Tv;
    float sa = (float)r->scale_a, sb = (float)r->scale_b;
    /* A: the warp's 16 rows */
    if (r->a_regs) {
        mh_ptx_mma fr = *r;
        fr.m = 16;
        int na = 16 * K / WARP, pr = per_reg(at);
        for (int l = 0; l < WARP; l++)
            for (int i = 0; i < na; i++) {
                int row, col;
                mma_a_pos(&fr, l, i, &row, &col);
                uint64_t v = get(c, w, &r->a, i / pr, l);
                if (ints) T->ia[row * K + col] = elem_i(v, i % pr, at);
                else T->a[row * K + col] = sa * elem_f(v, i % pr, at);
            }
    } else if (!ints && !r->trans_a) {
        mh_ptx_opnd o = opnd(c, &r->desc_a);
        desc d = desc_of(val(c, w, &o, __builtin_ctz(mask)));
        if (gather_kmajor(c, w, &d, 16 * wi, 16, K, eb, at, sa, T->a, (size_t)K, 1)) return -1;
    } else {
        mh_ptx_opnd o = opnd(c, &r->desc_a);
        desc d = desc_of(val(c, w, &o, __builtin_ctz(mask)));
        for (int row = 0; row < 16; row++)
            for (int k = 0; k < K; k++) {
                uint64_t v;
                if (smem_elem(c, w, desc_addr(&d, 16 * wi + row, k, eb, r->trans_a), eb, &v)) return -1;
                if (ints) T->ia[row * K + k] = elem_i(v, 0, at);
                else T->a[row * K + k] = sa * elem_f(v, 0, at);
            }
    }
    mh_ptx_opnd ob = opnd(c, &r->desc_b), os = opnd(c, &r->scale_d);
    uint64_t dbv = val(c, w, &ob, __builtin_ctz(mask));
    desc db = desc_of(dbv);
    const float *Bt = T->b;
    if (!ints && !r->trans_b) {
        int fault;
        Bt = wgmma_b(c, w, r, dbv, sb, &fault);
        if (fault) return -1;
        if (!Bt && gather_kmajor(c, w, &db, 0, N, K, eb, r->btype, sb, T->b, 1, (size_t)N)) return -1;
        if (!Bt) Bt = T->b;
    } else {
        for (int n = 0; n < N; n++)
            for (int k = 0; k < K; k++) {
                uint64_t v;
                if (smem_elem(c, w, desc_addr(&db, n, k, eb, r->trans_b), eb, &v)) return -1;
                if (ints) T->ib[k * N + n] = elem_i(v, 0, r->btype);
                else T->b[k * N + n] = sb * elem_f(v, 0, r->btype);
            }
    }
    int accumulate = os.kind == MH_OPK_IMM ? os.imm != 0 : val(c, w, &os, __builtin_ctz(mask)) != 0;
    if (!ints && r->dtype == MH_MT_F32 && !w->written) {
        /* f32 accumulators (not strict mode): kept in the warp's tile between chained wgmmas on the
         * same registers, else gathered from them (each element's register row once) */
        float *D = T->d;
        if (w->tile_live && (w->tile_N != N || w->tile_n != r->d.n || r->a_regs ||
                             (w->tile_off != r->d.off && memcmp(c->mma_regs + w->tile_off, c->mma_regs + r->d.off,
                                                                r->d.n * sizeof *c->mma_regs))))
            emu_acc_flush(c, w); /* another list of registers (each wgmma has its own record: compared by content) */
        if (c->acc_touch && !w->tile) {
            vsm *sm = w->b->sm; /* per SM: SMs on different workers share nothing */
            if (sm->ntiles == sm->cap_tiles) {
                uint32_t n = sm->cap_tiles ? 2 * sm->cap_tiles : 64;
                float **nt = realloc(sm->tiles, n * sizeof *nt);
                if (nt) { sm->tiles = nt; sm->cap_tiles = n; }
            }
            if (sm->ntiles < sm->cap_tiles && (w->tile = malloc(16 * 256 * sizeof(float)))) sm->tiles[sm->ntiles++] = w->tile;
        }
        int keep = c->acc_touch && w->tile;
        if (keep) D = w->tile;
        const uint64_t *rows[128];
        for (int i = 0; i < nd; i++) {
            uint32_t rg = list_reg(c, &r->d, i);
            rows[i] = rg == UINT32_MAX ? NULL : reg_at(c, w, rg, 0);
        }
        if (keep && w->tile_live) {
            if (!accumulate) memset(D, 0, (size_t)16 * (size_t)N * sizeof *D);
        } else {
            for (int i = 0; i < nd; i++) {
                float *dc = D + 8 * ((i >> 1) & 1) * N + 8 * (i >> 2) + (i & 1);
                for (int l = 0; l < WARP; l++)
                    dc[(l >> 2) * N + 2 * (l & 3)] = accumulate && rows[i] ? mh_f32_from_bits((uint32_t)rows[i][l]) : 0.0f;
            }
        }
        gemm_f(16, N, K, T->a, Bt, D);
        if (keep) {
            /* "_" elements read 0 at the next wgmma, as they would from no register */
            for (int i = 0; i < nd; i++) {
                if (rows[i]) continue;
                float *dc = D + 8 * ((i >> 1) & 1) * N + 8 * (i >> 2) + (i & 1);
                for (int l = 0; l < WARP; l++) dc[(l >> 2) * N + 2 * (l & 3)] = 0.0f;
            }
            w->tile_live = 1;
            w->tile_off = r->d.off;
            w->tile_n = r->d.n;
            w->tile_N = (uint16_t)N;
        } else {
            for (int i = 0; i < nd; i++) {
                if (!rows[i]) continue;
                uint64_t *rw = (uint64_t *)rows[i];
                const float *dc = D + 8 * ((i >> 1) & 1) * N + 8 * (i >> 2) + (i & 1);
                for (int l = 0; l < WARP; l++) rw[l] = mh_f32_bits(dc[(l >> 2) * N + 2 * (l & 3)]);
            }
        }
        /* the sub-partition's tensor core, shared with the other warps on it (emu_memtime.c) */
        tc_issue(c, w, at, N, K);
        return 0;
    }
    /* D: element i of lane l is row g + 8*((i>>1)&1), column 8*(i>>2) + 2t + (i&1) of the warp's rows */
    for (int l = 0; l < WARP; l++)
        for (int i = 0; i < nd; i++) {
            int row = (l >> 2) + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * (l & 3) + (i & 1);
            uint64_t v = accumulate ? acc_bits(c, w, &r->d, r->dtype, i, l) : 0;
            if (ints) T->id[row * N + col] = (int32_t)(uint32_t)v;
            else T->d[row * N + col] = accumulate ? (float)acc_value(v, r->dtype) : 0.0f;
        }
    if (ints) gemm_i(16, N, K, T->ia, T->ib, T->id);
    else gemm_f(16, N, K, T->a, Bt, T->d);
    for (int l = 0; l < WARP; l++)
        for (int i = 0; i < nd; i++) {
            int row = (l >> 2) + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * (l & 3) + (i & 1);
            acc_store(c, w, &r->d, r->dtype, i, l, ints ? 0 : T->d[row * N + col], ints ? T->id[row * N + col] : 0,
                      r->satfinite, mask);
        }
    /* asynchronous: the warp's sub-partition's tensor core (shared with the other warps on it)
     * works from when it is free, the warp goes on; the group's end is what wgmma.wait_group
     * waits for */
    tc_issue(c, w, at, N, K);
    return 0;
}

void emu_acc_flush(ctx *c, warp *w)
{
    mh_mma_list li = {.off = w->tile_off, .n = w->tile_n};
    int N = w->tile_N, nd = 16 * N / WARP;
    w->tile_live = 0;
    for (int i = 0; i < nd; i++) {
        uint32_t rg = list_reg(c, &li, i);
        if (rg == UINT32_MAX) continue;
        uint64_t *rw = reg_at(c, w, rg, 0);
        const float *dc = w->tile + 8 * ((i >> 1) & 1) * N + 8 * (i >> 2) + (i & 1);
        for (int l = 0; l < WARP; l++) rw[l] = mh_f32_bits(dc[(l >> 2) * N + 2 * (l & 3)]);
    }
}

/* Marks each instruction that may name a register of a wgmma's accumulators (other than wgmma
 * itself and its fence, commit and wait): before it runs, a warp's tile is written back.  Other
 * tensor-core instructions and bulk copies (their registers in records) count as naming them.
 * Not in strict mode (it checks each register's writes) nor with calls. */
static int names_any(const ctx *c, const mh_ptx_insn *in, const uint8_t *acc)
{
    if (in->guard >= 0 && (uint32_t)in->guard < c->nregs && acc[in->guard]) return 1;
    if (in->dst2 >= 0 && (uint32_t)in->dst2 < c->nregs && acc[in->dst2]) return 1;
    for (int k = 0; k < in->nopnds && k < MH_PTX_MAX_OPNDS; k++) {
        const mh_ptx_opnd *o = &in->o[k];
        if ((o->kind == MH_OPK_REG || (o->kind == MH_OPK_ADDR && o->reg != UINT32_MAX)) && (o->reg >= c->nregs || acc[o->reg]))
            return 1;
        if (o->kind == MH_OPK_VEC)
            for (int j = 0; j < o->n && j < 4; j++)
                if (o->vec[j] != UINT32_MAX && !(o->vec[j] & MH_PTX_VEC_SREG) && (o->vec[j] >= c->nregs || acc[o->vec[j]]))
                    return 1;
    }
    return 0;
}

int emu_mma_plan(ctx *c)
{
    c->acc_touch = NULL;
    if (c->d->strict || c->calls) return 0;
    int any = 0;
    for (uint32_t pc = 0; pc < c->ncode && !any; pc++)
        any = c->code[pc].op == MH_OP_MMA && c->mma[c->code[pc].callee].kind == MH_MMA_WGMMA;
    if (!any) return 0;
    uint8_t *acc = calloc(c->nregs, 1);
    c->acc_touch = calloc(c->ncode ? c->ncode : 1, 1);
    if (!acc || !c->acc_touch) { free(acc); free(c->acc_touch); c->acc_touch = NULL; return -1; }
    for (uint32_t pc = 0; pc < c->ncode; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (in->op != MH_OP_MMA || c->mma[in->callee].kind != MH_MMA_WGMMA) continue;
        const mh_mma_list *d = &c->mma[in->callee].d;
        for (int k = 0; k < d->n; k++) {
            uint32_t rg = list_reg(c, d, k);
            if (rg != UINT32_MAX && rg >= c->reg_lo && rg - c->reg_lo < c->nregs) acc[rg - c->reg_lo] = 1;
        }
    }
    for (uint32_t pc = 0; pc < c->ncode; pc++) {
        const mh_ptx_insn *in = &c->code[pc];
        if (in->op == MH_OP_MMA) {
            int k = c->mma[in->callee].kind;
            c->acc_touch[pc] = k != MH_MMA_WGMMA && k != MH_MMA_WG_FENCE && k != MH_MMA_WG_COMMIT && k != MH_MMA_WG_WAIT;
        } else {
            c->acc_touch[pc] = in->op == MH_OP_TMA || in->op == MH_OP_CALL || in->op == MH_OP_OPAQUE || names_any(c, in, acc);
        }
    }
    free(acc);
    return 0;
}

/* The warp's instruction runs again later (every lane waits: its pcs advance after the
 * instruction, so they go back one); it asks again after the block's next write. */
static void ask_again(warp *w)
{
    for (int l = 0; l < WARP; l++) {
        w->st[l] = LANE_YIELD;
        w->pc[l]--;
    }
}

/* wgmma.commit_group: the MMAs issued since the last commit are a group, ending at the last one's
 * end; wgmma.wait_group N: the warp waits until at most N groups are pending.  A wgmma is one
 * operation of its warpgroup's four warps (PTX ISA: warpgroup-level), so a group is complete when
 * each warp's part of it is: a warp's wait also waits for the other warps of its warpgroup to
 * commit the group (it asks again when one commits) and for the latest of their ends, and then
 * their shared-memory reads of it are over (wgdone: what a producer may overwrite once one warp
 * of the consumers waited, as CUTLASS's pipelines do).  A warp of the warpgroup that has exited
 * is not waited for (the block's end names a wgmma not run by every warp). */
static void wg_commit(ctx *c, warp *w)
{
    w->mma.group[w->mma.ngroups % 8] = w->mma.pending;
    w->mma.ngroups++;
    uint32_t g0 = w->index & ~3u;
    for (uint32_t i = g0; i < g0 + 4 && i < c->nwarps; i++)
        if (w->b->warps[i].mma.waits) {
            w->b->warps[i].mma.waits = 0;
            c->writes++; /* parked warps look again (a sibling waits for this commit) */
        }
}

static void wg_wait(ctx *c, warp *w, uint32_t n)
{
    if (w->mma.ngroups <= w->mma.base + n) return; /* nothing of this block's pending beyond n (retired >= base) */
    uint32_t g = w->mma.ngroups - n - w->mma.base; /* the block's groups 1..g must be complete */
    uint64_t end = n < 8 ? w->mma.group[(w->mma.ngroups - 1 - n) % 8] : 0; /* (8 or more back: taken as done) */
    uint32_t g0 = w->index & ~3u;
    for (uint32_t i = g0; i < g0 + 4 && i < c->nwarps; i++) {
        warp *s = &w->b->warps[i];
        if (s == w || s->sched == W_DONE) continue;
        uint32_t sg = s->mma.ngroups - s->mma.base;
        if (sg < g) { /* not yet committed by this warp of the warpgroup: ask again after its commit */
            s->mma.waits = 1;
            ask_again(w);
            return;
        }
        if (sg - g < 8) {
            uint64_t e = s->mma.group[(s->mma.base + g - 1) % 8];
            if (e > end) end = e;
        }
    }
    w->mma.retired = w->mma.ngroups - n;
    for (uint32_t i = g0; i < g0 + 4 && i < c->nwarps; i++) {
        warp *s = &w->b->warps[i];
        if (s->mma.base + g > s->mma.wgdone) s->mma.wgdone = s->mma.base + g, s->mma.wgdone_at = end;
    }
    if (end > c->now + c->cost) c->cost = end - c->now;
}

/* ---- ldmatrix / stmatrix / movmatrix (8x8 matrices of b16; lanes 8j..8j+7 give the rows of
 * matrix j; lane l holds row l/4, columns 2(l%4) and 2(l%4)+1, or with .trans the column's) --- */
static int ldst_matrix(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask, int store)
{
    mh_ptx_opnd ao = opnd(c, &r->addr);
    for (int j = 0; j < r->num; j++) {
        uint16_t m[8][8];
        unsigned char *rows[8];
        for (int row = 0; row < 8; row++) {
            int src = 8 * j + row;
            uint64_t a = address(c, w, &ao, src);
            rows[row] = emu_mem(c, w, src, r->space, a, 16, store);
            if (!rows[row]) return -1;
            if (!store) memcpy(m[row], rows[row], 16);
        }
        for (int l = 0; l < WARP; l++) {
            int g = l >> 2, t = l & 3;
            if (!store) {
                uint16_t lo = r->trans ? m[2 * t][g] : m[g][2 * t], hi = r->trans ? m[2 * t + 1][g] : m[g][2 * t + 1];
                set(c, w, &r->d, j, l, (uint64_t)lo | (uint64_t)hi << 16, mask);
            } else {
                uint64_t v = get(c, w, &r->d, j, l);
                uint16_t lo = (uint16_t)v, hi = (uint16_t)(v >> 16);
                if (r->trans) m[2 * t][g] = lo, m[2 * t + 1][g] = hi;
                else m[g][2 * t] = lo, m[g][2 * t + 1] = hi;
            }
        }
        if (store)
            for (int row = 0; row < 8; row++) memcpy(rows[row], m[row], 16);
    }
    if (store) c->progress++;
    else note_load(c, w, r->space, address(c, w, &ao, 0));
    c->cost += (c->d->model->smem_lat ? c->d->model->smem_lat - 1 : 0) + (uint64_t)r->num; /* shared memory's latency, a matrix a cycle */
    return 0;
}

static void movmatrix(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    uint16_t m[8][8];
    for (int l = 0; l < WARP; l++) {
        uint64_t v = get(c, w, &r->a, 0, l);
        m[l >> 2][2 * (l & 3)] = (uint16_t)v;
        m[l >> 2][2 * (l & 3) + 1] = (uint16_t)(v >> 16);
    }
    for (int l = 0; l < WARP; l++) {
        int g = l >> 2, t = l & 3;
        set(c, w, &r->d, 0, l, (uint64_t)m[2 * t][g] | (uint64_t)m[2 * t + 1][g] << 16, mask);
    }
}

/* ---- wmma: the fragments' layout is the implementation's (PTX ISA: "the layout of the
 * fragments is unspecified"); emu's own: lane l's j-th element (registers in order, low half
 * first) is element (l * P + j) mod E of the fragment in row-major order, P elements per lane,
 * E in the fragment (f16 A and B fragments hold every element twice, as the ISA sizes them) -- */
static void wmma_dims(const mh_ptx_mma *r, int frag, int *rows, int *cols)
{
    *rows = frag == 'a' ? r->m : frag == 'b' ? r->k : r->m;
    *cols = frag == 'a' ? r->k : frag == 'b' ? r->n : r->n;
}

static inline uint64_t frag_elem(const ctx *c, warp *w, const mh_mma_list *li, int t, int j, int l)
{
    int pr = per_reg(t), bits = mh_mma_type_bits(t);
    uint64_t v = get(c, w, li, j / pr, l);
    return bits >= 32 ? v & 0xffffffffu : v >> (bits * (j % pr)) & mask_bits(bits);
}

static int wmma_ldst(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask, int store)
{
    int rows, cols, t = r->atype, eb = mh_mma_type_bits(t) / 8, pr = per_reg(t);
    wmma_dims(r, r->frag, &rows, &cols);
    int E = rows * cols, P = r->d.n * pr;
    mh_ptx_opnd ao = opnd(c, &r->addr), so = opnd(c, &r->stride);
    for (int l = 0; l < WARP; l++) {
        uint64_t base = address(c, w, &ao, l);
        uint64_t ld = r->has_stride ? (uint32_t)val(c, w, &so, l) : (uint64_t)(r->alayout ? rows : cols);
        uint64_t regs[16] = {0};
        for (int j = 0; j < P; j++) {
            int e = (l * P + j) % E, row = e / cols, col = e % cols;
            uint64_t a = base + (r->alayout ? (uint64_t)col * ld + (uint64_t)row : (uint64_t)row * ld + (uint64_t)col) * (uint64_t)eb;
            unsigned char *p = emu_mem(c, w, l, r->space, a, (uint32_t)eb, store);
            if (!p) return -1;
            if (store) {
                uint64_t v = frag_elem(c, w, &r->d, t, j, l);
                memcpy(p, &v, (size_t)eb);
            } else {
                uint64_t v = ld_elem(p, eb);
                regs[j / pr] |= (eb >= 4 ? v : v & mask_bits(8 * eb)) << (8 * eb * (j % pr));
            }
        }
        if (!store)
            for (int k = 0; k < r->d.n; k++) set(c, w, &r->d, k, l, regs[k], mask);
    }
    if (store) c->progress++;
    else note_load(c, w, r->space, address(c, w, &ao, 0));
    c->cost += r->space == MH_SP_SHARED ? 2 : 8;
    return 0;
}

static int wmma_mma(ctx *c, warp *w, const mh_ptx_mma *r, uint32_t mask)
{
    int M = r->m, N = r->n, K = r->k, at = r->atype, ints = is_int(at);
    tiles Tv, *T = &Tv;
    const mh_mma_list *lists[3] = {&r->a, &r->b, &r->c};
    const int frags[3] = {'a', 'b', 'c'}, types[3] = {at, r->btype, r->ctype};
    for (int f = 0; f < 3; f++) {
        int rows, cols, t = types[f];
        wmma_dims(r, frags[f], &rows, &cols);
        int E = rows * cols, P = lists[f]->n * per_reg(t);
        for (int l = 0; l < WARP; l++)
            for (int j = 0; j < P; j++) {
                int e = (l * P + j) % E;
                uint64_t v = frag_elem(c, w, lists[f], t, j, l);
                if (f == 2) {
                    if (ints) T->id[e] = (int32_t)(uint32_t)v;
                    else T->d[e] = (float)acc_value(v, t);
                } else if (ints) (f ? T->ib : T->ia)[e] = elem_i(v, 0, t);
                else (f ? T->b : T->a)[e] = elem_f(v, 0, t);
            }
    }
    if (ints) gemm_i(M, N, K, T->ia, T->ib, T->id);
    else gemm_f(M, N, K, T->a, T->b, T->d);
    int P = r->d.n * per_reg(r->dtype), E = M * N;
    for (int l = 0; l < WARP; l++)
        for (int j = 0; j < P; j++) {
            int e = (l * P + j) % E;
            acc_store(c, w, &r->d, r->dtype, j, l, ints ? 0 : T->d[e], ints ? T->id[e] : 0, r->satfinite, mask);
        }
    c->cost += mma_cycles(c, w, at, (uint64_t)M * N * K);
    return 0;
}

/* Strict mode: the registers list l reads, written by every lane (1: one was not; faulted). */
static int strict_list(ctx *c, warp *w, const mh_mma_list *l)
{
    for (int k = 0; k < l->n; k++) {
        uint32_t r = list_reg(c, l, k);
        if (r == UINT32_MAX) continue;
        uint32_t missing = ~w->written[r - c->reg_lo];
        if (missing) { emu_uninitialised(c, w, r - c->reg_lo, __builtin_ctz(missing)); return 1; }
    }
    return 0;
}

/* Strict mode: any register of list l belonging to a wgmma still in flight (1: faulted). */
static int strict_pending_list(ctx *c, warp *w, const mh_mma_list *l, int write)
{
    for (int k = 0; k < l->n; k++) {
        uint32_t r = list_reg(c, l, k);
        if (r != UINT32_MAX && emu_strict_pending(c, w, r - c->reg_lo, write)) return 1;
    }
    return 0;
}

/* Strict mode: a wgmma's registers are in flight from its issue until a wgmma.wait_group retires
 * its group (mh_ptx_mma's lists; the next wgmma may use them: chained MMAs accumulate). */
static void strict_issue(ctx *c, warp *w, const mh_mma_list *l)
{
    for (int k = 0; k < l->n; k++) {
        uint32_t r = list_reg(c, l, k);
        if (r != UINT32_MAX) w->acc[r - c->reg_lo] = w->mma.ngroups + 1;
    }
}

static int strict_sources(ctx *c, warp *w, const mh_ptx_mma *r)
{
    if (r->kind != MH_MMA_WGMMA) /* another tensor-core instruction touching a wgmma's registers in flight */
        for (int i = 0; i < 4; i++) {
            const mh_mma_list *l = i == 0 ? &r->d : i == 1 ? &r->a : i == 2 ? &r->b : &r->c;
            if (strict_pending_list(c, w, l, i == 0 && r->kind != MH_MMA_STMATRIX && r->kind != MH_MMA_WMMA_STORE))
                return 1;
        }
    switch (r->kind) {
    case MH_MMA_MMA: case MH_MMA_WMMA_MMA: return strict_list(c, w, &r->a) || strict_list(c, w, &r->b) || strict_list(c, w, &r->c);
    case MH_MMA_WGMMA: {
        /* the accumulators are read unless scale-d is false (the first MMA of a tile, on registers
         * nothing has written yet) */
        mh_ptx_opnd os = opnd(c, &r->scale_d);
        if (os.kind == MH_OPK_REG && ~w->written[os.reg]) {
            emu_uninitialised(c, w, os.reg, __builtin_ctz(~w->written[os.reg]));
            return 1;
        }
        int reads_d = (os.kind == MH_OPK_IMM ? os.imm : (int64_t)val(c, w, &os, 0)) != 0;
        return (r->a_regs && strict_list(c, w, &r->a)) || (reads_d && strict_list(c, w, &r->d));
    }
    case MH_MMA_STMATRIX: case MH_MMA_WMMA_STORE: return strict_list(c, w, &r->d);
    case MH_MMA_MOVMATRIX: return strict_list(c, w, &r->a);
    default: return 0;
    }
}

/* setmaxnreg.inc/dec N: its rules, then (with the launch's register count known) the block's pool:
 * a block gets regs x threads registers at launch; .dec gives the warp's registers above N back to
 * the pool, .inc takes what it needs from it and, when the pool has too little, waits (it asks
 * again after the block's next write; a dec wakes it) until another warpgroup's .dec frees enough,
 * as the PTX ISA says the request blocks.  Registers are not a resource emu runs out of: the pool
 * is the GPU's bookkeeping, so a kernel whose incs exceed what its decs free deadlocks here as on
 * a GPU. */
static int setmaxnreg(ctx *c, warp *w, const mh_ptx_mma *r)
{
    const char *op = r->inc ? "inc" : "dec";
    if (r->imm < 24 || r->imm > 256 || r->imm % 8)
        return emu_fault(c, w, 0, "setmaxnreg.%s %u: the count must be a multiple of 8 from 24 to 256", op, r->imm), -1;
    if (c->nthreads % 128)
        return emu_fault(c, w, 0, "setmaxnreg needs whole warpgroups: the block has %u threads", c->nthreads), -1;
    /* every warp of the warpgroup runs the same setmaxnreg (PTX ISA): a sibling at the same count ran
     * its last one at this pc (one ahead or behind: checked when the block ends) */
    uint32_t pc = (uint32_t)(c->cur - c->code), g0 = w->index & ~3u;
    for (uint32_t i = g0; i < g0 + 4 && i < c->nwarps; i++) {
        const warp *s = &w->b->warps[i];
        if (s != w && s->nsetmax == w->nsetmax + 1 && s->setmax_pc != pc)
            return emu_fault(c, w, 0, "setmaxnreg at line %u while warp %u of the same warpgroup ran its one at line "
                             "%u: every warp of a warpgroup runs the same setmaxnreg", c->code[pc].line, i,
                             c->code[s->setmax_pc].line), -1;
    }
    if (w->nreg && (r->inc ? r->imm < w->nreg : r->imm > w->nreg)) /* the count known (the launch's, or set here) */
        return emu_fault(c, w, 0, "setmaxnreg.%s %u: the warp's threads hold %u registers each, and .%s may only %s "
                         "them", op, r->imm, w->nreg, op, r->inc ? "raise" : "lower"), -1;
    blk *b = w->b;
    if (c->regs && !c->setmaxnreg_off && r->inc && (int64_t)(r->imm - w->nreg) * WARP > b->reg_free) {
        ask_again(w); /* not yet */
        return 0;
    }
    w->nsetmax++; /* done (an .inc that waits is counted when it goes on) */
    w->setmax_pc = pc;
    if (!c->regs || c->setmaxnreg_off) { /* no launch count (ptxas not run), or ptxas dropped them: no pool */
        w->nreg = c->setmaxnreg_off ? w->nreg : r->imm;
        return 0;
    }
    if (!r->inc) c->writes++; /* parked warps waiting at an .inc look again */
    b->reg_free += ((int64_t)w->nreg - (int64_t)r->imm) * WARP; /* .dec gives back, .inc takes */
    w->nreg = r->imm;
    return 0;
}

int emu_mma_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, uint32_t emask)
{
    const mh_ptx_mma *r = &c->mma[in->callee];
    if (!emask) return 0;
    if (emask != 0xffffffffu || mask != emask)
        return emu_fault(c, w, __builtin_ctz(emask), "a .sync.aligned warp-collective instruction (%s) run by lanes "
                         "0x%08x of the warp: every lane must execute it, converged and unpredicated alike",
                         r->kind == MH_MMA_SETMAXNREG ? "setmaxnreg" : "tensor cores", emask), -1;
    if (w->written && strict_sources(c, w, r)) return -1;
    switch (r->kind) {
    /* wgmma.mma_async computes its values at issue; the groups and the waits are its time only */
    case MH_MMA_WG_FENCE: return 0;
    case MH_MMA_WG_COMMIT: wg_commit(c, w); return 0;
    case MH_MMA_WG_WAIT: wg_wait(c, w, r->imm); return 0;
    case MH_MMA_WGMMA:
        w->nwgmma++; /* every warp of the warpgroup runs it (checked when the block ends) */
        w->wgmma_pc = (uint32_t)(c->cur - c->code);
        if (w->acc) {
            strict_issue(c, w, &r->d);
            if (r->a_regs) strict_issue(c, w, &r->a);
        }
        return wgmma(c, w, r, emask);
    case MH_MMA_MMA: return mma_sync(c, w, r, emask);
    case MH_MMA_LDMATRIX: return ldst_matrix(c, w, r, emask, 0);
    case MH_MMA_STMATRIX: return ldst_matrix(c, w, r, emask, 1);
    case MH_MMA_MOVMATRIX: movmatrix(c, w, r, emask); return 0;
    case MH_MMA_WMMA_LOAD: return wmma_ldst(c, w, r, emask, 0);
    case MH_MMA_WMMA_STORE: return wmma_ldst(c, w, r, emask, 1);
    case MH_MMA_WMMA_MMA: return wmma_mma(c, w, r, emask);
    case MH_MMA_SETMAXNREG: return setmaxnreg(c, w, r);
    default: return emu_fault(c, w, 0, "unknown tensor-core instruction"), -1;
    }
}
