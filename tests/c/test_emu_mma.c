/* test_emu_mma.c - emu's tensor cores against host references: mma.sync in every shape and
 * type class, ldmatrix / stmatrix / movmatrix, the WMMA API, wgmma (A from registers and from
 * descriptors, every swizzle, K- and MN-major, scales, scale-d, every type class, every dense N
 * the ISA lists, the descriptor's base offset) with setmaxnreg, and three GEMMs (mma.sync +
 * ldmatrix, WMMA, wgmma + stmatrix); the forms emu does not run are refused by name.  Kernels:
 * tests/ptx/mma.cu, tests/ptx/wgmma.cu and tests/ptx/wgmma_n.cu. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "check.h"
#include "emu_util.h"
#include "emu/emu.h"
#include "frontend/ptx.h"
#include "base/fp16.h"

static mh_ptx_module mma_ptx, wgmma_ptx, wgmma_n_ptx, wgmma_lag_ptx;
static mh_emu *dev;

/* Runs kernel of m with up to 8 pointer/u32 arguments; 0 or the error code (message printed). */
static int run(const mh_ptx_module *m, const char *kernel, uint32_t gx, uint32_t gy, uint32_t block, uint32_t smem,
               const mh_emu_arg *args, uint32_t n, mh_error *e)
{
    mh_emu_launch l = {.grid = {gx, gy, 1}, .block = {block, 1, 1}, .dynamic_smem = smem, .args = args, .nargs = n,
                       .timeout_s = 120};
    mh_emu_stats st;
    int rc = mh_emu_run(dev, m, kernel, &l, &st, e) ? (int)e->code : 0;
    if (rc) fprintf(stderr, "  %s: %s\n", kernel, e->message);
    return rc;
}

/* ---- element encodings ---- */
enum { T_F16, T_BF16, T_TF32, T_E4M3, T_E5M2, T_S8, T_U8 };

static uint32_t enc(int t, int v)
{
    /* small integers, exact in every type: fp8 from their sign, exponent and mantissa */
    static const uint8_t e4m3[] = {0x00, 0x38, 0x40, 0x44, 0x48, 0x4a, 0x4c}, e5m2[] = {0x00, 0x3c, 0x40, 0x42, 0x44, 0x45, 0x46};
    int a = v < 0 ? -v : v;
    switch (t) {
    case T_F16: return mh_float_to_half((float)v);
    case T_BF16: return mh_float_to_bf16((float)v);
    case T_TF32: return mh_f32_bits((float)v);
    case T_E4M3: return (uint32_t)(e4m3[a] | (v < 0 ? 0x80 : 0));
    case T_E5M2: return (uint32_t)(e5m2[a] | (v < 0 ? 0x80 : 0));
    default: return (uint32_t)v & 0xff;
    }
}

static int rnd_int(int t, unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    int v = (int)(*s >> 16) % 7;
    return t == T_U8 ? v : v - 3;
}

/* ---- mma.sync: D = A (16 x K) * B (K x 8) + C against exact integer arithmetic ---- */
typedef struct { const char *kernel; int at, bt, k, acc; } mma_case; /* acc: 0 f32, 1 s32, 2 f16 */

static void mma_one(const mma_case *mc)
{
    int K = mc->k;
    uint32_t A[16 * 32], B[32 * 8], C[128], D[128];
    int64_t a[16 * 32], b[32 * 8], cc[128];
    unsigned s = 7u + (unsigned)K * 31u + (unsigned)mc->at;
    for (int i = 0; i < 16 * K; i++) a[i] = rnd_int(mc->at, &s), A[i] = enc(mc->at, (int)a[i]);
    for (int i = 0; i < K * 8; i++) b[i] = rnd_int(mc->bt, &s), B[i] = enc(mc->bt, (int)b[i]);
    for (int i = 0; i < 128; i++) {
        cc[i] = rnd_int(T_S8, &s) * 5;
        C[i] = mc->acc == 0 ? mh_f32_bits((float)cc[i]) : mc->acc == 1 ? (uint32_t)cc[i] : mh_float_to_half((float)cc[i]);
    }
    int sat = strstr(mc->kernel, "s8_k32") != NULL && !strstr(mc->kernel, "u8");
    if (mc->acc == 1) { /* overflow: wraps, or with .satfinite clamps */
        cc[0] = INT32_MAX - 2;
        C[0] = (uint32_t)cc[0];
        for (int k = 0; k < K; k++) a[k] = 3, A[k] = enc(mc->at, 3), b[k * 8] = 3, B[k * 8] = enc(mc->bt, 3);
    }
    if (mc->at == T_TF32) A[1] |= 0x1fff; /* tf32 reads the top 19 bits only */
    uint64_t dA = emu_upload(dev, A, sizeof A), dB = emu_upload(dev, B, sizeof B), dC = emu_upload(dev, C, sizeof C),
             dD = emu_upload(dev, NULL, sizeof D);
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&dD, 8}};
    mh_error e;
    int rc = run(&mma_ptx, mc->kernel, 1, 1, 32, 0, args, 4, &e);
    CHECK(rc == 0);
    mh_emu_read(dev, dD, D, sizeof D, &e);
    int bad = 0;
    for (int i = 0; i < 16 && !rc; i++)
        for (int j = 0; j < 8; j++) {
            int64_t want = cc[i * 8 + j];
            for (int k = 0; k < K; k++) want += a[i * K + k] * b[k * 8 + j];
            double got;
            if (mc->acc == 1) {
                if (sat) want = want > INT32_MAX ? INT32_MAX : want;
                else want = (int32_t)(uint32_t)(uint64_t)want;
                got = (double)(int32_t)D[i * 8 + j];
            } else got = mc->acc == 0 ? mh_f32_from_bits(D[i * 8 + j]) : mh_half_to_float((uint16_t)D[i * 8 + j]);
            if (got != (double)want && bad++ < 3)
                fprintf(stderr, "  %s: D[%d][%d] = %g, want %lld\n", mc->kernel, i, j, got, (long long)want);
        }
    CHECK(bad == 0);
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dC, &e), mh_emu_free(dev, dD, &e);
}

static void mma_sync_forms(void)
{
    static const mma_case cases[] = {
        {"mma_f16_k16", T_F16, T_F16, 16, 0},   {"mma_bf16_k16", T_BF16, T_BF16, 16, 0}, {"mma_f16_k8", T_F16, T_F16, 8, 0},
        {"mma_bf16_k8", T_BF16, T_BF16, 8, 0},  {"mma_tf32_k8", T_TF32, T_TF32, 8, 0},  {"mma_tf32_k4", T_TF32, T_TF32, 4, 0},
        {"mma_s8_k32", T_S8, T_S8, 32, 1},      {"mma_s8u8_k32", T_S8, T_U8, 32, 1},     {"mma_u8_k16", T_U8, T_U8, 16, 1},
        {"mma_e4m3_k32", T_E4M3, T_E4M3, 32, 0}, {"mma_e5m2_k32", T_E5M2, T_E4M3, 32, 0},
        {"mma_f16_k16_f16acc", T_F16, T_F16, 16, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) mma_one(&cases[i]);
    /* f64 m8n8k4 */
    double A[32], B[32], C[64], D[64];
    for (int i = 0; i < 32; i++) A[i] = (i % 5) - 2.25, B[i] = (i % 7) * 0.5 - 1.0;
    for (int i = 0; i < 64; i++) C[i] = i * 0.125;
    uint64_t dA = emu_upload(dev, A, sizeof A), dB = emu_upload(dev, B, sizeof B), dC = emu_upload(dev, C, sizeof C),
             dD = emu_upload(dev, NULL, sizeof D);
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&dD, 8}};
    mh_error e;
    CHECK(run(&mma_ptx, "mma_f64", 1, 1, 32, 0, args, 4, &e) == 0);
    mh_emu_read(dev, dD, D, sizeof D, &e);
    int bad = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double want = C[i * 8 + j];
            for (int k = 0; k < 4; k++) want += A[i * 4 + k] * B[k * 8 + j];
            bad += D[i * 8 + j] != want;
        }
    CHECK(bad == 0);
}

/* ---- ldmatrix / stmatrix / movmatrix ---- */
static uint16_t mat(const uint32_t *src, int j, int r, int c) { return (uint16_t)src[j * 64 + r * 8 + c]; }

static void ldst_matrix(void)
{
    uint32_t src[256], out[256];
    for (int i = 0; i < 256; i++) src[i] = (uint32_t)(i * 37 + 11) & 0xffff;
    uint64_t ds = emu_upload(dev, src, sizeof src), dout = emu_upload(dev, NULL, sizeof out);
    mh_emu_arg args[] = {{&ds, 8}, {&dout, 8}};
    mh_error e;
    static const struct { const char *k; int num, trans; } lds[] = {
        {"ldmatrix_x1", 1, 0}, {"ldmatrix_x2", 2, 0}, {"ldmatrix_x4", 4, 0}, {"ldmatrix_x2_trans", 2, 1}, {"ldmatrix_x4_trans", 4, 1},
    };
    for (size_t c = 0; c < sizeof lds / sizeof *lds; c++) {
        CHECK(run(&mma_ptx, lds[c].k, 1, 1, 32, 0, args, 2, &e) == 0);
        mh_emu_read(dev, dout, out, 512, &e);
        int bad = 0;
        for (int l = 0; l < 32; l++)
            for (int j = 0; j < 4; j++) {
                int g = l / 4, t = l % 4;
                uint32_t want = 0;
                if (j < lds[c].num)
                    want = lds[c].trans ? (uint32_t)mat(src, j, 2 * t, g) | (uint32_t)mat(src, j, 2 * t + 1, g) << 16
                                        : (uint32_t)mat(src, j, g, 2 * t) | (uint32_t)mat(src, j, g, 2 * t + 1) << 16;
                bad += out[4 * l + j] != want;
            }
        if (bad) fprintf(stderr, "  %s: %d registers wrong\n", lds[c].k, bad);
        CHECK(bad == 0);
    }
    /* stmatrix: register j of lane l is src[4l + j] (two halves); shared memory comes back */
    uint32_t regs[128];
    for (int i = 0; i < 128; i++) regs[i] = (uint32_t)(i * 2 + 1) | (uint32_t)(i * 2 + 2) << 16;
    uint64_t dr = emu_upload(dev, regs, sizeof regs);
    mh_emu_arg sargs[] = {{&dr, 8}, {&dout, 8}};
    static const struct { const char *k; int num, trans; } sts[] = {
        {"stmatrix_x1", 1, 0}, {"stmatrix_x4", 4, 0}, {"stmatrix_x2_trans", 2, 1},
    };
    for (size_t c = 0; c < sizeof sts / sizeof *sts; c++) {
        CHECK(run(&mma_ptx, sts[c].k, 1, 1, 32, 0, sargs, 2, &e) == 0);
        mh_emu_read(dev, dout, out, sizeof out, &e);
        uint16_t want[256];
        for (int i = 0; i < 256; i++) want[i] = 0xdead;
        for (int l = 0; l < 32; l++)
            for (int j = 0; j < sts[c].num; j++) {
                int g = l / 4, t = l % 4;
                uint16_t lo = (uint16_t)regs[4 * l + j], hi = (uint16_t)(regs[4 * l + j] >> 16);
                if (sts[c].trans) want[j * 64 + 2 * t * 8 + g] = lo, want[j * 64 + (2 * t + 1) * 8 + g] = hi;
                else want[j * 64 + g * 8 + 2 * t] = lo, want[j * 64 + g * 8 + 2 * t + 1] = hi;
            }
        int bad = 0;
        for (int i = 0; i < 256; i++) bad += out[i] != want[i];
        if (bad) fprintf(stderr, "  %s: %d halves wrong\n", sts[c].k, bad);
        CHECK(bad == 0);
    }
    /* movmatrix.trans */
    CHECK(run(&mma_ptx, "movmatrix_trans", 1, 1, 32, 0, sargs, 2, &e) == 0);
    mh_emu_read(dev, dout, out, 128, &e);
    int bad = 0;
    for (int l = 0; l < 32; l++) {
        int g = l / 4, t = l % 4;
        /* lane l's input holds M[g][2t], M[g][2t+1]; its output M[2t][g], M[2t+1][g] */
        uint16_t m0 = (uint16_t)(regs[(2 * t) * 4 + g / 2] >> (16 * (g % 2)));
        uint16_t m1 = (uint16_t)(regs[(2 * t + 1) * 4 + g / 2] >> (16 * (g % 2)));
        bad += out[l] != ((uint32_t)m0 | (uint32_t)m1 << 16);
    }
    CHECK(bad == 0);
    mh_emu_free(dev, ds, &e), mh_emu_free(dev, dout, &e), mh_emu_free(dev, dr, &e);
}

/* ---- WMMA ---- */
/* One tile: D = (A (m x k) B (k x n) + C) * scale, each matrix row- or column-major as the kernel
 * loads or stores it; C is c0, or (c_buf) a buffer with C[i] = i % 9.  The inputs are rnd_int
 * values times mul, A's and B's drawn in turn (interleave) or all of A's first. */
typedef struct {
    const char *kernel;
    int m, n, k, in, acc; /* in: T_F16, T_BF16, T_TF32 or T_S8; acc: 0 f32, 1 s32, 2 f16 */
    int a_col, b_col, d_col, interleave, mul, c_buf;
    float c0, scale;
} wmma_case;

static void wmma_one(const wmma_case *w, unsigned *s)
{
    int M = w->m, N = w->n, K = w->k, na = M * K, nb = K * N;
    int a[512], b[512];
    size_t isz = w->in == T_S8 ? 1 : w->in == T_TF32 ? 4 : 2, dsz = w->acc == 2 ? 2 : 4;
    uint8_t A[512 * 4], B[512 * 4], D[256 * 4];
    float C[256];
    for (int i = 0; i < (w->interleave ? na : 0); i++)
        a[i] = rnd_int(w->in, s) * w->mul, b[i] = rnd_int(w->in, s) * w->mul;
    for (int i = 0; i < (w->interleave ? 0 : na); i++) a[i] = rnd_int(w->in, s) * w->mul;
    for (int i = 0; i < (w->interleave ? 0 : nb); i++) b[i] = rnd_int(w->in, s) * w->mul;
    for (int i = 0; i < na; i++) {
        uint32_t v = enc(w->in, a[i]);
        memcpy(A + i * isz, &v, isz); /* little-endian: the element's low bytes */
    }
    for (int i = 0; i < nb; i++) {
        uint32_t v = enc(w->in, b[i]);
        memcpy(B + i * isz, &v, isz);
    }
    for (int i = 0; i < M * N; i++) C[i] = w->c_buf ? (float)(i % 9) : w->c0;
    uint64_t dA = emu_upload(dev, A, na * isz), dB = emu_upload(dev, B, nb * isz),
             dC = w->c_buf ? emu_upload(dev, C, sizeof C) : 0, dD = emu_upload(dev, NULL, M * N * dsz);
    mh_emu_arg args4[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&dD, 8}}, args3[] = {{&dA, 8}, {&dB, 8}, {&dD, 8}};
    mh_error e;
    CHECK(run(&mma_ptx, w->kernel, 1, 1, 32, 0, w->c_buf ? args4 : args3, w->c_buf ? 4 : 3, &e) == 0);
    mh_emu_read(dev, dD, D, M * N * dsz, &e);
    int bad = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double want = C[m * N + n]; /* small integers (and halves): exact in every type */
            for (int k = 0; k < K; k++)
                want += (double)a[w->a_col ? k * M + m : m * K + k] * b[w->b_col ? n * K + k : k * N + n];
            int di = w->d_col ? n * M + m : m * N + n;
            float f;
            int32_t i32;
            uint16_t h;
            double got;
            if (w->acc == 2) memcpy(&h, D + di * 2, 2), got = mh_half_to_float(h);
            else if (w->acc == 1) memcpy(&i32, D + di * 4, 4), got = i32;
            else memcpy(&f, D + di * 4, 4), got = f;
            bad += got != want * w->scale;
        }
    if (bad) fprintf(stderr, "  %s: %d elements wrong\n", w->kernel, bad);
    CHECK(bad == 0);
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dD, &e);
    if (dC) mh_emu_free(dev, dC, &e);
}

static void wmma_api(void)
{
    static const wmma_case cases[] = {
        /* kernel, m, n, k, in, acc, a_col, b_col, d_col, interleave, mul, c_buf, c0, scale */
        /* f16 16x16x16, A row-major, B col-major, C row-major, D stored col-major */
        {"wmma_f16_tile", 16, 16, 16, T_F16, 0, 0, 1, 1, 1, 1, 1, 0, 1},
        /* bf16 m32n8k16: A col-major (ld 32), B row-major (ld 8), C = 1, D = 2 (AB + 1) row-major */
        {"wmma_bf16_m32n8", 32, 8, 16, T_BF16, 0, 1, 0, 0, 0, 1, 0, 1, 2},
        /* s8 m8n32k16, tf32 m16n16k8, f16 accumulators (A col-major, C = 0.5) */
        {"wmma_s8_m8n32", 8, 32, 16, T_S8, 1, 0, 0, 0, 0, 40, 0, 0, 1},
        {"wmma_tf32_k8", 16, 16, 8, T_TF32, 0, 0, 0, 0, 1, 1, 0, 0, 1},
        {"wmma_f16_f16acc", 16, 16, 16, T_F16, 2, 1, 0, 0, 1, 1, 0, 0.5f, 1},
    };
    unsigned s = 99;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) wmma_one(&cases[i], &s);
}

/* ---- GEMMs on random data against a double reference ---- */
static float urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* max |got - want| / (sum |a||b| over k): accumulation-order error is well under 1e-5 */
static int gemm_close(const float *got, const double *want, const double *mag, int n, const char *what)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]) / (mag[i] + 1e-30);
        if (err > worst) worst = err;
    }
    if (worst > 1e-5) fprintf(stderr, "  %s: relative error %g\n", what, worst);
    return worst <= 1e-5;
}

static void gemm_ref(const float *A, const float *B, int M, int N, int K, int b_nk, double *want, double *mag)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, m = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)A[i * K + k] * (b_nk ? B[j * K + k] : B[k * N + j]);
                s += p;
                m += fabs(p);
            }
            want[i * N + j] = s;
            mag[i * N + j] = m;
        }
}

static void gemms(void)
{
    mh_error e;
    unsigned s = 5;
    enum { M = 128, N = 128, K = 128 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K), *C = malloc(sizeof(float) * M * N);
    double *want = malloc(sizeof(double) * M * N), *mag = malloc(sizeof(double) * M * N);
    uint16_t *hA = malloc(2 * M * K), *hB = malloc(2 * N * K);
    /* mma.sync + ldmatrix, bf16: B given as Bt[N][K] */
    for (int i = 0; i < M * K; i++) hA[i] = mh_float_to_bf16(urand(&s)), A[i] = mh_bf16_to_float(hA[i]);
    for (int i = 0; i < N * K; i++) hB[i] = mh_float_to_bf16(urand(&s)), B[i] = mh_bf16_to_float(hB[i]);
    gemm_ref(A, B, M, N, K, 1, want, mag);
    uint64_t dA = emu_upload(dev, hA, 2 * M * K), dB = emu_upload(dev, hB, 2 * N * K),
             dC = emu_upload(dev, NULL, 4 * M * N);
    uint32_t m = M, n = N, k = K;
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&m, 4}, {&n, 4}, {&k, 4}};
    CHECK(run(&mma_ptx, "mma_gemm", N / 64, M / 64, 128, 0, args, 6, &e) == 0);
    mh_emu_read(dev, dC, C, 4 * M * N, &e);
    CHECK(gemm_close(C, want, mag, M * N, "mma_gemm"));
    /* WMMA, f16: B row-major [K][N] */
    for (int i = 0; i < M * K; i++) hA[i] = mh_float_to_half(urand(&s)), A[i] = mh_half_to_float(hA[i]);
    for (int i = 0; i < N * K; i++) hB[i] = mh_float_to_half(urand(&s)), B[i] = mh_half_to_float(hB[i]);
    gemm_ref(A, B, M, N, K, 0, want, mag);
    mh_emu_write(dev, dA, hA, 2 * M * K, &e);
    mh_emu_write(dev, dB, hB, 2 * N * K, &e);
    mh_emu_memset(dev, dC, 0, 4 * M * N, &e);
    CHECK(run(&mma_ptx, "wmma_gemm", N / 32, M / 32, 128, 0, args, 6, &e) == 0);
    mh_emu_read(dev, dC, C, 4 * M * N, &e);
    CHECK(gemm_close(C, want, mag, M * N, "wmma_gemm"));
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dC, &e);
    free(A), free(B), free(C), free(want), free(mag), free(hA), free(hB);
}

/* ---- wgmma: D (64 x N) = (sa A) (64 x K) * (sb B) (K x N, given as B[n][k]) + (scale-d ? C : 0) ---- */
typedef struct { const char *kernel; int n, k, at, bt, acc, sa, sb; } wg_case; /* acc: 0 f32, 1 s32, 2 f16 */

static void wgmma_one(const mh_ptx_module *m, const wg_case *wc, int swz, int scale_d, int ty)
{
    int N = wc->n, K = wc->k;
    uint32_t *A = malloc(4 * 64 * K), *B = malloc(4 * (size_t)N * K), *C = malloc(4 * 64 * (size_t)N), *D = malloc(4 * 64 * (size_t)N);
    int64_t *a = malloc(8 * 64 * K), *b = malloc(8 * (size_t)N * K), *cc = malloc(8 * 64 * (size_t)N);
    unsigned s = 11u + (unsigned)N * 7u + (unsigned)swz;
    for (int i = 0; i < 64 * K; i++) a[i] = rnd_int(wc->at, &s), A[i] = enc(wc->at, (int)a[i]);
    for (int i = 0; i < N * K; i++) b[i] = rnd_int(wc->bt, &s), B[i] = enc(wc->bt, (int)b[i]);
    for (int i = 0; i < 64 * N; i++) {
        cc[i] = rnd_int(T_S8, &s) * 3;
        C[i] = wc->acc == 0 ? mh_f32_bits((float)cc[i]) : wc->acc == 1 ? (uint32_t)cc[i] : mh_float_to_half((float)cc[i]);
    }
    int sat = strstr(wc->kernel, "sat") != NULL;
    if (wc->acc == 1) { /* row 0 x column 0 overflows: wraps, or with .satfinite clamps */
        cc[0] = INT32_MAX - 2;
        C[0] = (uint32_t)cc[0];
        for (int k = 0; k < K; k++) a[k] = 2, A[k] = enc(wc->at, 2), b[k] = 2, B[k] = enc(wc->bt, 2);
    }
    uint64_t dA = emu_upload(dev, A, 4 * 64 * K), dB = emu_upload(dev, B, 4 * (uint64_t)N * K),
             dC = emu_upload(dev, C, 4 * 64 * (uint64_t)N);
    uint64_t dD = emu_upload(dev, NULL, 4 * 64 * (uint64_t)N);
    uint32_t sw = (uint32_t)swz, sd = (uint32_t)scale_d, t = (uint32_t)ty;
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&dD, 8}, {&sw, 4}, {&sd, 4}};
    if (ty >= 0) args[4] = (mh_emu_arg){&t, 4}, args[5] = (mh_emu_arg){&sw, 4}; /* wg_nN (ty, swz) */
    mh_error e;
    int rc = run(m, wc->kernel, 1, 1, 128, 49152, args, 6, &e);
    CHECK(rc == 0);
    mh_emu_read(dev, dD, D, 4 * 64 * (uint64_t)N, &e);
    int bad = 0;
    for (int i = 0; i < 64 && !rc; i++)
        for (int j = 0; j < N; j++) {
            int64_t want = scale_d ? cc[i * N + j] : 0;
            for (int k = 0; k < K; k++) want += wc->sa * a[i * K + k] * wc->sb * b[j * K + k];
            double got;
            if (wc->acc == 1) {
                if (sat) want = want > INT32_MAX ? INT32_MAX : want;
                else want = (int32_t)(uint32_t)(uint64_t)want;
                got = (double)(int32_t)D[i * N + j];
            } else got = wc->acc == 0 ? mh_f32_from_bits(D[i * N + j]) : mh_half_to_float((uint16_t)D[i * N + j]);
            if (got != (double)want && bad++ < 3)
                fprintf(stderr, "  %s (type %d, swizzle %d, scale-d %d): D[%d][%d] = %g, want %lld\n", wc->kernel, ty, swz,
                        scale_d, i, j, got, (long long)want);
        }
    CHECK(bad == 0);
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dC, &e), mh_emu_free(dev, dD, &e);
    free(A), free(B), free(C), free(D), free(a), free(b), free(cc);
}

static void wgmma_forms(void)
{
    static const wg_case cases[] = {
        {"wg_bf16_n64", 64, 16, T_BF16, T_BF16, 0, 1, 1},       {"wg_f16_n128_t", 128, 16, T_F16, T_F16, 0, -1, 1},
        {"wg_f16_n32_h", 32, 16, T_F16, T_F16, 2, 1, 1},        {"wg_bf16_rs_n256", 256, 16, T_BF16, T_BF16, 0, 1, -1},
        {"wg_tf32_n16", 16, 8, T_TF32, T_TF32, 0, 1, 1},        {"wg_e4m3_n8", 8, 32, T_E4M3, T_E5M2, 0, 1, 1},
        {"wg_e4m3_f16_n16", 16, 32, T_E4M3, T_E4M3, 2, 1, 1},   {"wg_s8_n24_sat", 24, 32, T_S8, T_U8, 1, 1, 1},
        {"wg_u8_rs_n8", 8, 32, T_U8, T_S8, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int swz = 0; swz < 4; swz++) wgmma_one(&wgmma_ptx, &cases[i], swz, 1, -1);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) wgmma_one(&wgmma_ptx, &cases[i], 1, 0, -1);
}

/* Every dense N the PTX ISA lists (tests/ptx/wgmma_n.cu, kernel wg_nN): f16 (B MN-major when N / 8 is
 * odd), bf16, tf32, e4m3 x e5m2 with f32 accumulators for N = 8, 16, ..., 256; s8 x u8 (s32, wrapping)
 * for the N the ISA has for integers (8, 16, 24, then multiples of 16: ptxas refuses m64n40k32.s32);
 * the swizzle turning with N and type. */
static void wgmma_every_n(void)
{
    static const int at[5] = {T_F16, T_BF16, T_TF32, T_E4M3, T_S8}, bt[5] = {T_F16, T_BF16, T_TF32, T_E5M2, T_U8},
                     kk[5] = {16, 16, 8, 32, 32};
    for (int n = 8; n <= 256; n += 8)
        for (int ty = 0; ty < 5; ty++) {
            if (ty == 4 && n > 24 && n % 16) continue;
            char name[16];
            snprintf(name, sizeof name, "wg_n%d", n);
            wg_case c = {name, n, kk[ty], at[ty], bt[ty], ty == 4, 1, 1};
            wgmma_one(&wgmma_n_ptx, &c, (n / 8 + ty) % 4, 1, ty);
        }
}

/* The descriptor's base offset (bits 49-51) with A and B not at 1024-byte alignment (wg_base_offset's
 * modes: 0 the tile swizzled by its address's bits, base offset (start >> 7) & 7; 1 swizzled from its
 * first row, base offset 0; 2 as 0 with base offset 0, what TMA writes and CUTLASS reads, the only one
 * that gives the product: emu swizzles by address bits less the base offset, docs/DESIGN.md) */
static void wgmma_base_offset(void)
{
    mh_error e;
    uint32_t A[64 * 16], B[64 * 16], C[64 * 64], D[64 * 64];
    int a[64 * 16], b[64 * 16];
    unsigned s = 29;
    for (int i = 0; i < 64 * 16; i++) a[i] = rnd_int(T_BF16, &s), A[i] = enc(T_BF16, a[i]);
    for (int i = 0; i < 64 * 16; i++) b[i] = rnd_int(T_BF16, &s), B[i] = enc(T_BF16, b[i]);
    for (int i = 0; i < 64 * 64; i++) C[i] = mh_f32_bits((float)(i % 7));
    uint64_t dA = emu_upload(dev, A, sizeof A), dB = emu_upload(dev, B, sizeof B), dC = emu_upload(dev, C, sizeof C),
             dD = emu_upload(dev, NULL, sizeof D);
    /* A at 128-byte row 18 (18 & 7 = 2), B at row 101 (5), each up to 64 rows long (128B swizzle) */
    uint32_t aoff = 18 * 128, boff = 101 * 128;
    for (int swz = 1; swz <= 3; swz++)
        for (int mode = 0; mode <= 2; mode++) {
            uint32_t sw = (uint32_t)swz, md = (uint32_t)mode;
            mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&dD, 8}, {&sw, 4}, {&aoff, 4}, {&boff, 4}, {&md, 4}};
            CHECK(run(&wgmma_ptx, "wg_base_offset", 1, 1, 128, 32768, args, 8, &e) == 0);
            CHECK(mh_emu_read(dev, dD, D, sizeof D, &e) == 0);
            int bad = 0;
            for (int i = 0; i < 64; i++)
                for (int j = 0; j < 64; j++) {
                    int want = i * 64 + j;
                    want = want % 7;
                    for (int k = 0; k < 16; k++) want += a[i * 16 + k] * b[j * 16 + k];
                    bad += mh_f32_from_bits(D[i * 64 + j]) != (float)want;
                }
            if ((bad == 0) != (mode == 2))
                fprintf(stderr, "  wg_base_offset (swizzle %d, mode %d): %d of 4096 values differ from the product\n", swz,
                        mode, bad);
            CHECK(mode == 2 ? bad == 0 : bad > 0);
        }
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dC, &e), mh_emu_free(dev, dD, &e);
}

/* A wgmma is one operation of its warpgroup (tests/ptx/wgmma_lag.cu): warps 1-3 lag (an ALU loop)
 * before it, warp 0 overwrites B right after its own wgmma.wait_group 0.  Its wait ends only when
 * every warp's part is complete, so all 64 rows are the product (before: warp 0's wait ended with
 * its own part, and the lagging warps' 48 rows read the zeroed B; in strict mode, no hazard either:
 * the group's reads were over). */
static void wgmma_lagging_warp(int strict)
{
    mh_error e;
    mh_emu_opts o = {.num_sms = 1, .strict = strict};
    mh_emu *d = mh_emu_create(&o, &e);
    CHECK(d != NULL);
    if (!d) return;
    uint32_t A[64 * 16], B[32 * 16], D[64 * 32];
    int a[64 * 16], b[32 * 16];
    unsigned s = 41;
    for (int i = 0; i < 64 * 16; i++) a[i] = rnd_int(T_BF16, &s), A[i] = enc(T_BF16, a[i]);
    for (int i = 0; i < 32 * 16; i++) b[i] = rnd_int(T_BF16, &s), B[i] = enc(T_BF16, b[i]);
    uint64_t dA = emu_upload(d, A, sizeof A), dB = emu_upload(d, B, sizeof B), dD = emu_upload(d, NULL, sizeof D);
    int32_t spin = 2000;
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dD, 8}, {&spin, 4}};
    mh_emu *keep = dev;
    dev = d;
    CHECK(run(&wgmma_lag_ptx, "wg_lagging_warp", 1, 1, 128, 0, args, 4, &e) == 0);
    dev = keep;
    CHECK(mh_emu_read(d, dD, D, sizeof D, &e) == 0);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 32; j++) {
            int want = 0;
            for (int k = 0; k < 16; k++) want += a[i * 16 + k] * b[j * 16 + k];
            bad += mh_f32_from_bits(D[i * 32 + j]) != (float)want;
        }
    if (bad) fprintf(stderr, "  wg_lagging_warp (strict %d): %d of 2048 values differ from the product\n", strict, bad);
    CHECK(bad == 0);
    mh_emu_destroy(d);
}

/* the warp-specialised GEMM: setmaxnreg, 128B-swizzled tiles, stmatrix epilogue, bf16 out */
static long peak_kib(void);

/* (*grown: how much the launch raised the process's peak memory, KiB) */
static void wgmma_gemm_mnk(int M, int N, int K, long *grown)
{
    unsigned s = 17;
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
    double *want = malloc(sizeof(double) * M * N), *mag = malloc(sizeof(double) * M * N);
    uint16_t *hA = malloc(2 * M * K), *hB = malloc(2 * N * K), *hC = malloc(2 * M * N);
    for (int i = 0; i < M * K; i++) hA[i] = mh_float_to_bf16(urand(&s)), A[i] = mh_bf16_to_float(hA[i]);
    for (int i = 0; i < N * K; i++) hB[i] = mh_float_to_bf16(urand(&s)), B[i] = mh_bf16_to_float(hB[i]);
    gemm_ref(A, B, M, N, K, 1, want, mag);
    uint64_t dA = emu_upload(dev, hA, 2 * M * K), dB = emu_upload(dev, hB, 2 * N * K),
             dC = emu_upload(dev, NULL, 2 * M * N);
    uint32_t m = M, n = N, k = K;
    mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&m, 4}, {&n, 4}, {&k, 4}};
    mh_error e;
    long before = peak_kib();
    CHECK(run(&wgmma_ptx, "wgmma_gemm", N / 128, M / 128, 384, 65536, args, 6, &e) == 0);
    if (grown) *grown = peak_kib() - before;
    mh_emu_read(dev, dC, hC, 2 * M * N, &e);
    int bad = 0;
    for (int i = 0; i < M * N; i++) {
        double got = mh_bf16_to_float(hC[i]);
        if (fabs(got - want[i]) > fabs(want[i]) / 256 + 1e-5 * mag[i] && bad++ < 3)
            fprintf(stderr, "  wgmma_gemm: C[%d] = %g, want %g\n", i, got, want[i]);
    }
    CHECK(bad == 0);
    mh_emu_free(dev, dA, &e), mh_emu_free(dev, dB, &e), mh_emu_free(dev, dC, &e);
    free(A), free(B), free(want), free(mag), free(hA), free(hB), free(hC);
}

static void wgmma_gemm(void) { wgmma_gemm_mnk(256, 256, 128, NULL); }

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A tensor-core kernel's registers packed by live range (emu_regpack.c: the wgmma records' lists
 * renamed to rows): wgmma.ptx's GEMM declares 4073 registers (1 MiB a warp, 12.5 MiB a block of 12
 * warps) and keeps ~76 live; 64 blocks on 32 SMs (two waves: the second finds the first's rows, the
 * rows read before a write cleared) give the right product and raise the process's peak by 36 MiB
 * (the launch's caches, shared memory, output), not 98 MiB with a row per declared register.  Run
 * first, before other launches raise the peak.  Failed before packing took tensor-core kernels. */
static void packed_tensor_cores(void)
{
    mh_emu_opts o = {.num_sms = 32};
    mh_error e;
    mh_emu *saved = dev;
    dev = mh_emu_create(&o, &e);
    CHECK(dev != NULL);
    long grown = 0;
    wgmma_gemm_mnk(2048, 512, 64, &grown);
#ifndef __SANITIZE_ADDRESS__ /* (ASan's shadow and quarantine move the peak) */
    if (grown > 64 * 1024) fprintf(stderr, "  packed_tensor_cores: the peak grew by %ld KiB\n", grown);
    CHECK(grown <= 64 * 1024);
#else
    (void)grown;
#endif
    mh_emu_destroy(dev);
    dev = saved;
}

/* ---- the rules, and what emu refuses by name ---- */
static int run_text(const char *body, uint32_t block, mh_error *e)
{
    char text[2048];
    snprintf(text, sizeof text, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x)\n{\n"
             ".reg .b32 %%r<40>;\n.reg .b64 %%rd<4>;\n.reg .pred %%p<2>;\n%s\nret;\n}\n", body);
    mh_ptx_module m;
    int rc = mh_ptx_parse(&m, text, strlen(text), "t.ptx", e);
    if (rc) return rc;
    uint64_t x = 0;
    mh_emu_arg args[] = {{&x, 8}};
    mh_emu_launch l = {.grid = {1, 1, 1}, .block = {block, 1, 1}, .args = args, .nargs = 1, .timeout_s = 30};
    rc = mh_emu_run(dev, &m, "k", &l, NULL, e) ? (int)e->code : 0;
    mh_ptx_free(&m);
    return rc;
}

/* setmaxnreg's pool: three warpgroups launched with `regs` registers a thread (ptxas's count; 0:
 * unknown), the first waits a while and then gives its registers above 40 back, the other two ask
 * for `inc` (a warp asking before the give-back waits for it). */
static int reg_pool_x(int regs, unsigned inc, unsigned dec, int ignored, mh_error *e)
{
    char text[2048];
    snprintf(text, sizeof text,
             ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %%r<8>;\n"
             ".reg .pred %%p<3>;\nmov.u32 %%r1, %%tid.x;\nshr.u32 %%r2, %%r1, 7;\nsetp.eq.u32 %%p1, %%r2, 0;\n"
             "@%%p1 bra PRODUCER;\nsetmaxnreg.inc.sync.aligned.u32 %u;\nbra DONE;\nPRODUCER:\nmov.u32 %%r3, 0;\n"
             "SPIN:\nadd.u32 %%r3, %%r3, 1;\nsetp.lt.u32 %%p2, %%r3, 300;\n@%%p2 bra SPIN;\n"
             "setmaxnreg.dec.sync.aligned.u32 %u;\nDONE:\nret;\n}\n", inc, dec);
    mh_ptx_module m;
    int rc = mh_ptx_parse(&m, text, strlen(text), "pool.ptx", e);
    if (rc) return rc;
    mh_emu_launch l = {.grid = {2, 1, 1}, .block = {384, 1, 1}, .timeout_s = 30};
    mh_emu_extra x = {.regs_per_thread = regs, .setmaxnreg_ignored = ignored};
    mh_emu_stats st;
    memset(&st, 0, sizeof st);
    rc = mh_emu_run_ex(dev, &m, "k", &l, &x, &st, e) ? (int)e->code : 0;
    free(st.output);
    mh_ptx_free(&m);
    return rc;
}

static int reg_pool(int regs, unsigned inc, unsigned dec, mh_error *e) { return reg_pool_x(regs, inc, dec, 0, e); }

static void rules(void)
{
    /* the pool: 168 a thread x 384 threads; 40 for the producer leaves (168 - 40) x 128 for the two
     * consumers' (232 - 168) x 256, exactly; 240 is more than any warpgroup frees: a GPU's
     * setmaxnreg.inc blocks for ever */
    mh_error pe;
    CHECK(reg_pool(168, 232, 40, &pe) == 0);
    CHECK(reg_pool(163, 232, 40, &pe) == 0); /* allocated by 8 a thread: 163 is 168 */
    CHECK(reg_pool(168, 240, 40, &pe) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(pe.message, "setmaxnreg.inc for registers no warpgroup frees");
    CHECK(reg_pool(0, 240, 40, &pe) == 0); /* the launch count unknown (no ptxas): no pool to keep */
    CHECK(reg_pool_x(168, 240, 40, 1, &pe) == 0); /* ptxas dropped the setmaxnregs (C7507): they do nothing */
    CHECK(reg_pool(168, 160, 40, &pe) == MH_E_KERNEL_FAULT); /* .inc below what it holds */
    CHECK_CONTAINS(pe.message, "setmaxnreg.inc 160: the warp's threads hold 168 registers each, and .inc may only raise");
    CHECK(reg_pool(168, 232, 176, &pe) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(pe.message, ".dec may only lower");
    /* every warp of a warpgroup runs the same setmaxnreg (the last hostile pass: one warp alone, or two
     * lines, ran); and .inc below what a warp holds is refused without ptxas's count too */
#define WARPNO "mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\n"
    CHECK(run_text(WARPNO "setp.ne.u32 %p1, %r2, 0;\n@%p1 bra DONE;\nsetmaxnreg.dec.sync.aligned.u32 40;\nDONE:", 128, &pe)
          == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(pe.message, "setmaxnreg: warp 0 ran 1 (the last at line 13), warp 1 of the same warpgroup 0");
    CHECK(run_text(WARPNO "setp.eq.u32 %p1, %r2, 0;\n@%p1 bra A;\nsetmaxnreg.dec.sync.aligned.u32 56;\nbra DONE;\nA:\n"
                   "setmaxnreg.dec.sync.aligned.u32 40;\nDONE:", 128, &pe) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(pe.message, "setmaxnreg at line 13 while warp 0 of the same warpgroup ran its one at line 16");
    CHECK(run_text("setmaxnreg.dec.sync.aligned.u32 40;\nbar.sync 0;\nsetmaxnreg.inc.sync.aligned.u32 32;", 128, &pe)
          == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(pe.message, "setmaxnreg.inc 32: the warp's threads hold 40 registers each, and .inc may only raise");
    CHECK(run_text("setmaxnreg.dec.sync.aligned.u32 40;\nbar.sync 0;\nsetmaxnreg.inc.sync.aligned.u32 232;", 128, &pe) == 0);
#undef WARPNO

    mh_error e;
    CHECK(run_text("setmaxnreg.inc.sync.aligned.u32 100;", 128, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "multiple of 8 from 24 to 256");
    CHECK(run_text("setmaxnreg.dec.sync.aligned.u32 16;", 128, &e) == MH_E_KERNEL_FAULT);
    CHECK(run_text("setmaxnreg.dec.sync.aligned.u32 40;", 64, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "whole warpgroups");
    CHECK(run_text("setmaxnreg.dec.sync.aligned.u32 40;\nsetmaxnreg.inc.sync.aligned.u32 256;", 256, &e) == 0);
    /* a warp-collective instruction some lanes skip */
    CHECK(run_text("mov.u32 %r1, %laneid;\nsetp.lt.u32 %p1, %r1, 16;\n"
                   "@%p1 mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r2,%r3,%r4,%r5}, {%r6,%r7}, {%r8}, "
                   "{%r2,%r3,%r4,%r5};", 32, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "every lane must execute it");
    /* refused by name: sparse wgmma, b1, m8n8k4 f16, mma with block scaling */
    static const char *const refused[][2] = {
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 {%r1,%r2,%r3,%r4}, %rd1, %rd2, %r5, 0, 1, 1, 1, 1;",
         "instruction 'wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16' is not supported by emu"},
        {"wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r1,%r2,%r3,%r4}, %rd1, %rd2, 1;",
         "instruction 'wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc' is not supported"},
        {"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, {%r9,%r10}, {%r11,%r12}, "
         "{%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8};", "instruction 'mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32' is not supported"},
        {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1,%r2}, [%r3];", "instruction 'ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8'"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        CHECK(run_text(refused[i][0], 128, &e) == MH_E_PTX_UNSUPPORTED);
        CHECK_CONTAINS(e.message, refused[i][1]);
    }
    /* strict mode: an mma reading a fragment register nothing wrote */
    CHECK(run_text("mov.b32 %r6, 0;\nmov.b32 %r7, 0;\nmov.b32 %r2, 0;\nmov.b32 %r3, 0;\nmov.b32 %r4, 0;\nmov.b32 %r5, 0;\n"
                   "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r2,%r3,%r4,%r5}, {%r6,%r7}, {%r8}, {%r2,%r3,%r4,%r5};",
                   32, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "read of register %r8, which no instruction has written (strict mode)");
    /* ... but wgmma with scale-d false does not read its accumulators (it gets past the strict
     * check to the descriptor, which points into a block without shared memory) */
    CHECK(run_text("mov.b64 %rd1, 0;\nmov.u32 %r9, 0;\nsetp.ne.u32 %p1, %r9, 0;\nwgmma.fence.sync.aligned;\n"
                   "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r1,%r2,%r3,%r4}, %rd1, %rd1, %p1, 1, 1, 0, 0;\n"
                   "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;", 128, &e) == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "wgmma: a matrix descriptor reaches shared offset 0x0");
    /* a descriptor past the block's shared memory */
    CHECK(run_text("mov.b64 %rd1, 0x4000;\nwgmma.fence.sync.aligned;\n"
                   "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r1,%r2,%r3,%r4}, %rd1, %rd1, 0, 1, 1, 0, 0;", 128, &e)
          == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "wgmma: a matrix descriptor reaches shared offset");
    /* strict mode: a wgmma's accumulators are its own until a wait_group retires its group */
#define WG_HEAD ".shared .align 1024 .b8 sm[4096];\nmov.b64 %rd1, 0;\nwgmma.fence.sync.aligned;\n"
#define WG(d) "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 " d ", %rd1, %rd1, 0, 1, 1, 0, 0;\n"
#define WG_COMMIT "wgmma.commit_group.sync.aligned;\n"
    static const char *const early[][2] = {
        {WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG_COMMIT "add.u32 %r5, %r1, 1;\nwgmma.wait_group.sync.aligned 0;",
         "read of register %r1, an accumulator or A fragment of a wgmma.mma_async not yet waited for"},
        {WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG_COMMIT "mov.b32 %r2, 0;\nwgmma.wait_group.sync.aligned 0;",
         "write of register %r2, an accumulator"},
        /* wait_group 1 retires the older of two groups only */
        {WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG_COMMIT WG("{%r11,%r12,%r13,%r14}") WG_COMMIT
         "wgmma.wait_group.sync.aligned 1;\nadd.u32 %r5, %r4, 1;\nadd.u32 %r6, %r13, 1;", "read of register %r13"},
        /* a wgmma not committed is in no group that wait_group waits for */
        {WG_HEAD WG("{%r1,%r2,%r3,%r4}") "wgmma.wait_group.sync.aligned 0;\nadd.u32 %r5, %r3, 1;", "read of register %r3"},
        /* another tensor-core instruction reading them (stmatrix of the accumulators) */
        {WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG_COMMIT "mov.u32 %r9, 0;\n"
         "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r9], {%r1,%r2};\nwgmma.wait_group.sync.aligned 0;", "read of register %r1"},
    };
    for (size_t i = 0; i < sizeof early / sizeof *early; i++) {
        CHECK(run_text(early[i][0], 128, &e) == MH_E_KERNEL_FAULT);
        CHECK_CONTAINS(e.message, early[i][1]);
    }
    /* the same reads after the wait, and chained wgmmas on one accumulator, are fine */
    CHECK(run_text(WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG("{%r1,%r2,%r3,%r4}") WG_COMMIT
                   "wgmma.wait_group.sync.aligned 0;\nadd.u32 %r5, %r1, 1;\nmov.b32 %r2, 0;", 128, &e) == 0);
    CHECK(run_text(WG_HEAD WG("{%r1,%r2,%r3,%r4}") WG_COMMIT WG("{%r11,%r12,%r13,%r14}") WG_COMMIT
                   "wgmma.wait_group.sync.aligned 1;\nadd.u32 %r5, %r4, 1;\nwgmma.wait_group.sync.aligned 0;\n"
                   "add.u32 %r6, %r13, 1;", 128, &e) == 0);
#undef WG_HEAD
#undef WG
#undef WG_COMMIT
}

/* Virtual time: one warpgroup's m64n256k16 bf16 costs each warp 16 x 256 x 16 / 512 = 128 cycles of
 * its tensor core; wgmma.mma_async does not wait for it, wgmma.wait_group N waits until at most N
 * committed groups are pending. */
static uint64_t wgmma_cycles(int groups, int per_group, int wait_n)
{
    char *text = malloc(65536), *p = text;
    p += sprintf(p, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .f32 %%f<129>;\n"
                 ".reg .b64 %%rd<2>;\n.shared .align 1024 .b8 sm[16384];\nmov.b64 %%rd1, 0;\nwgmma.fence.sync.aligned;\n");
    for (int g = 0; g < groups; g++) {
        for (int i = 0; i < per_group; i++) {
            p += sprintf(p, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {");
            for (int r = 1; r <= 128; r++) p += sprintf(p, "%%f%d%s", r, r < 128 ? "," : "");
            p += sprintf(p, "}, %%rd1, %%rd1, 0, 1, 1, 0, 0;\n");
        }
        p += sprintf(p, "wgmma.commit_group.sync.aligned;\n");
    }
    if (wait_n >= 0) p += sprintf(p, "wgmma.wait_group.sync.aligned %d;\n", wait_n);
    p += sprintf(p, "ret;\n}\n");
    mh_ptx_module m;
    mh_error e;
    uint64_t cycles = 0;
    if (mh_ptx_parse(&m, text, strlen(text), "time.ptx", &e) == 0) {
        mh_emu_launch l = {.grid = {1, 1, 1}, .block = {128, 1, 1}, .timeout_s = 30};
        mh_emu_stats st;
        if (mh_emu_run(dev, &m, "k", &l, &st, &e) == 0) cycles = st.cycles;
        else fprintf(stderr, "  %s\n", e.message);
        mh_ptx_free(&m);
    } else fprintf(stderr, "  %s\n", e.message);
    free(text);
    return cycles;
}

static void wgmma_time(void)
{
    uint64_t serial = wgmma_cycles(1, 4, 0), nowait = wgmma_cycles(1, 4, -1);
    uint64_t two_wait1 = wgmma_cycles(2, 4, 1), two_wait0 = wgmma_cycles(2, 4, 0);
    fprintf(stderr, "  wgmma virtual time: 4 then wait 0: %llu cycles, no wait %llu, 2x4 wait 1 %llu, wait 0 %llu\n",
            (unsigned long long)serial, (unsigned long long)nowait, (unsigned long long)two_wait1,
            (unsigned long long)two_wait0);
    /* 4 x 128 cycles on the tensor cores, then the drain (the model's wgmma_lat) before a wait returns */
    uint64_t lat = mh_emu_model_of(dev)->wgmma_lat;
    CHECK(lat == 120);
    CHECK(serial >= 512 + lat && serial < 600 + lat);
    CHECK(nowait > 0 && nowait < 100);
    CHECK(two_wait1 >= 512 + lat && two_wait1 < 600 + lat);
    CHECK(two_wait0 >= 1024 + lat && two_wait0 < 1100 + lat);
}

static void wgmma_tests(void)
{
    wgmma_forms();
    wgmma_every_n();
    wgmma_base_offset();
    wgmma_gemm();
    rules();
    wgmma_time();
}


/* Without strict mode emu keeps a warp's f32 accumulators in a tile between chained wgmmas
 * (emu_mma.c); an instruction naming one of them gets the registers written back first: here an
 * add between two wgmmas (the first with scale-d false: D = A B = 0 over zeroed shared memory, while
 * the registers held 1.0) must read 0, not the registers' stale 1.0, and the second wgmma must
 * accumulate the add's 2.0.  Fails when the add does not write the tile back first. */
static void acc_tile(void)
{
    static const char text[] =
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry acc(.param .u64 out)\n{\n"
        ".reg .f32 %f<8>;\n.reg .b64 %rd<6>;\n.reg .b32 %r<4>;\n.shared .align 128 .b8 buf[8192];\n"
        "mov.f32 %f1, 0f3F800000;\nmov.f32 %f2, 0f3F800000;\nmov.f32 %f3, 0f3F800000;\nmov.f32 %f4, 0f3F800000;\n"
        "mov.u32 %r1, buf;\ncvt.u64.u32 %rd1, %r1;\nshr.u64 %rd1, %rd1, 4;\nwgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1,%f2,%f3,%f4}, %rd1, %rd1, 0, 1, 1, 0, 0;\n"
        "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nadd.f32 %f1, %f1, 0f40000000;\n"
        "wgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1,%f2,%f3,%f4}, %rd1, %rd1, 1, 1, 1, 0, 0;\n"
        "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nmov.u32 %r2, %tid.x;\n"
        "ld.param.u64 %rd2, [out];\nmul.wide.u32 %rd3, %r2, 8;\nadd.s64 %rd4, %rd2, %rd3;\n"
        "st.global.v2.f32 [%rd4], {%f1, %f2};\nret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    if (mh_ptx_parse(&m, text, strlen(text), "acc.ptx", &e)) { fprintf(stderr, "  %s\n", e.message); CHECK(0); return; }
    uint64_t out = emu_upload(dev, NULL, 128 * 8);
    mh_emu_arg args[] = {{&out, 8}};
    mh_emu_launch l = {.grid = {1, 1, 1}, .block = {128, 1, 1}, .args = args, .nargs = 1, .timeout_s = 30};
    CHECK(mh_emu_run(dev, &m, "acc", &l, NULL, &e) == 0);
    float got[256];
    CHECK(mh_emu_read(dev, out, got, sizeof got, &e) == 0);
    int bad = 0;
    for (int t = 0; t < 128; t++)
        if ((got[2 * t] != 2.0f || got[2 * t + 1] != 0.0f) && bad++ < 3)
            fprintf(stderr, "  acc_tile: thread %d: %g %g, want 2 0\n", t, got[2 * t], got[2 * t + 1]);
    CHECK(bad == 0);
    mh_ptx_free(&m);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".";
    if (parse_ptx_file(&mma_ptx, root, "tests/ptx/mma.ptx") || parse_ptx_file(&wgmma_ptx, root, "tests/ptx/wgmma.ptx") ||
        parse_ptx_file(&wgmma_n_ptx, root, "tests/ptx/wgmma_n.ptx") ||
        parse_ptx_file(&wgmma_lag_ptx, root, "tests/ptx/wgmma_lag.ptx"))
        return 1;
    packed_tensor_cores();
    wgmma_lagging_warp(0);
    wgmma_lagging_warp(1);
    mh_emu_opts o = {.num_sms = 8, .max_warp_insns = 0, .strict = 1};
    mh_error e;
    dev = mh_emu_create(&o, &e);
    CHECK(dev != NULL);
    mma_sync_forms();
    ldst_matrix();
    wmma_api();
    gemms();
    wgmma_tests();
    mh_emu_destroy(dev);
    /* the wgmma forms again without strict mode: emu's fast path (chunked gathers, accumulator tiles) */
    o.strict = 0;
    dev = mh_emu_create(&o, &e);
    CHECK(dev != NULL);
    wgmma_forms();
    wgmma_every_n();
    wgmma_base_offset();
    wgmma_gemm();
    acc_tile();
    mh_emu_destroy(dev);
    mh_ptx_free(&mma_ptx);
    mh_ptx_free(&wgmma_ptx);
    mh_ptx_free(&wgmma_n_ptx);
    mh_ptx_free(&wgmma_lag_ptx);
    return check_report("test_emu_mma");
}
