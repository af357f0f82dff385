/* mmabench.c - emu's tensor cores: a 512 x 512 x 512 GEMM run on emu with wgmma (the
 * warp-specialised bf16 kernel of tests/ptx/wgmma.cu), TMA + wgmma (tests/ptx/hopper_gemm.cu's
 * ws_gemm: tensor maps, mbarriers, a cluster of 2 with multicast, f32 out), mma.sync + ldmatrix (bf16) and WMMA
 * (f16) from tests/ptx/mma.cu; prints each one's wall time, GFLOP/s (2 M N K / time), emu's
 * virtual cycles, and its largest error against a double reference on sampled elements; and, in
 * the same run, single-thread OpenBLAS sgemm (libopenblas.so.0, loaded at run time: Debian's
 * libopenblas0-pthread; skipped, saying so, where it is absent) on the same size, with each
 * kernel's GFLOP/s as a fraction of it (issue 33's target: wgmma >= 0.25x at 2048^3).  Times are
 * CPU time of this thread (emu and OpenBLAS run on it; wall time on a shared machine moves by 2x);
 * with SMs on several workers ($MGPU_EMU_THREADS) the wall time and the workers used say the speed-up.
 * usage: mmabench SOURCE_DIR [SIZE [KERNEL [SMS]]] (SMS: a device of that many SMs, for a profile) */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include "bench_util.h"
#include "base/fp16.h"
#include "emu/emu.h"
#include "emu/emu_tma.h"

static double now(void) { return bench_seconds(CLOCK_THREAD_CPUTIME_ID); }

/* Single-thread OpenBLAS sgemm GFLOP/s on S x S x S (the best of 3), 0 when OpenBLAS is absent. */
static double openblas_gflops(int S)
{
    void *h = dlopen("libopenblas.so.0", RTLD_NOW);
    if (!h) h = dlopen("libopenblas.so", RTLD_NOW);
    if (!h) return 0;
    typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                             float *, int);
    sgemm_fn sgemm;
    void (*threads)(int);
    *(void **)&sgemm = dlsym(h, "cblas_sgemm");
    *(void **)&threads = dlsym(h, "openblas_set_num_threads");
    if (!sgemm) return 0;
    if (threads) threads(1);
    float *a = malloc(4 * (size_t)S * S), *b = malloc(4 * (size_t)S * S), *c = calloc((size_t)S * S, 4);
    for (size_t i = 0; i < (size_t)S * S; i++) { a[i] = (float)(i % 7) - 3; b[i] = (float)(i % 5) - 2; }
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        sgemm(101 /* row major */, 111 /* no trans */, 112 /* trans */, S, S, S, 1.0f, a, S, b, S, 0.0f, c, S);
        if (now() - t0 < best) best = now() - t0;
    }
    free(a), free(b), free(c);
    return 2e-9 * S * S * (double)S / best;
}

typedef struct { const char *name, *file; int bf16, b_nk, bm, bn, threads, smem, out_bf16, tma; } gemm;

/* A 2d tensor map of rows x cols elements of esz bytes at addr, box bw x bh, the 128B swizzle or none. */
static int tmap(uint64_t addr, int type, unsigned esz, uint64_t rows, uint64_t cols, uint32_t bw, uint32_t bh, int swz,
                unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    mh_tensor_map_spec s = {.data_type = type, .elem_size = esz, .rank = 2, .address = addr, .bytes = rows * cols * esz,
                            .dims = {cols, rows}, .strides = {cols * esz}, .box = {bw, bh}, .elem_strides = {1, 1},
                            .swizzle = swz};
    return mh_emu_tensor_map(&s, out, e);
}


int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    int S = argc > 2 ? atoi(argv[2]) : 512;
    static const gemm g[] = {
        {"wgmma_gemm", "tests/ptx/wgmma.ptx", 1, 1, 128, 128, 384, 65536, 1, 0},
        {"ws_gemm", "tests/ptx/hopper_gemm.ptx", 1, 1, 64, 128, 384, 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4, 0, 1},
        {"mma_gemm", "tests/ptx/mma.ptx", 1, 1, 64, 64, 128, 0, 0, 0},
        {"wmma_gemm", "tests/ptx/mma.ptx", 0, 0, 32, 32, 128, 0, 0, 0},
    };
    mh_error e;
    mh_emu *d = mh_emu_create(&(mh_emu_opts){.num_sms = argc > 4 ? (uint32_t)atoi(argv[4]) : 0}, &e);
    if (!d) return 1;
    uint16_t *A = malloc(2 * (size_t)S * S), *B = malloc(2 * (size_t)S * S);
    float *C = malloc(4 * (size_t)S * S);
    uint64_t dA, dB, dC;
    if (mh_emu_alloc(d, 2 * (uint64_t)S * S, &dA, &e) || mh_emu_alloc(d, 2 * (uint64_t)S * S, &dB, &e) ||
        mh_emu_alloc(d, 4 * (uint64_t)S * S, &dC, &e))
        return 1;
    printf("emu tensor cores: %dx%dx%d GEMM (%.1f MFLOP), CPU time of this thread\n", S, S, S, 2e-6 * S * S * S);
    double blas = openblas_gflops(S);
    if (blas > 0) printf("  openblas   single-thread sgemm %.2f GFLOP/s\n", blas);
    else printf("  openblas   absent (libopenblas.so.0: apt-get install libopenblas0-pthread): no ratio\n");
    for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
        if (argc > 3 && strcmp(argv[3], g[i].name)) continue;
        mh_ptx_module m;
        if (bench_load_ptx(&m, dir, g[i].file)) return 1;
        unsigned s = 1;
        for (size_t k = 0; k < (size_t)S * S; k++) {
            s = s * 1664525u + 1013904223u;
            float v = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
            A[k] = g[i].bf16 ? mh_float_to_bf16(v) : mh_float_to_half(v);
            s = s * 1664525u + 1013904223u;
            v = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
            B[k] = g[i].bf16 ? mh_float_to_bf16(v) : mh_float_to_half(v);
        }
        mh_emu_write(d, dA, A, 2 * (uint64_t)S * S, &e);
        mh_emu_write(d, dB, B, 2 * (uint64_t)S * S, &e);
        uint32_t mm = (uint32_t)S, nn = (uint32_t)S, kk = (uint32_t)S;
        mh_emu_arg args[] = {{&dA, 8}, {&dB, 8}, {&dC, 8}, {&mm, 4}, {&nn, 4}, {&kk, 4}};
        mh_emu_launch l = {{(uint32_t)(S / g[i].bn), (uint32_t)(S / g[i].bm), 1}, {(uint32_t)g[i].threads, 1, 1},
                           (uint32_t)g[i].smem, args, 6, 0};
        /* the TMA GEMM (tests/ptx/hopper_gemm.cu): tensor maps of A, B (128B swizzle) and C, and K; a
         * block computes 128 rows x 64 columns */
        unsigned char ma[MH_TMAP_BYTES], mb[MH_TMAP_BYTES], mc[MH_TMAP_BYTES];
        mh_emu_arg targs[] = {{ma, MH_TMAP_BYTES}, {mb, MH_TMAP_BYTES}, {mc, MH_TMAP_BYTES}, {&kk, 4}};
        if (g[i].tma) {
            if (tmap(dA, MH_TMAP_BFLOAT16, 2, S, S, 64, 128, MH_TMAP_SWIZZLE_128B, ma, &e) ||
                tmap(dB, MH_TMAP_BFLOAT16, 2, S, S, 64, 32, MH_TMAP_SWIZZLE_128B, mb, &e) ||
                tmap(dC, MH_TMAP_FLOAT32, 4, S, S, 64, 128, MH_TMAP_SWIZZLE_NONE, mc, &e)) {
                fprintf(stderr, "%s\n", e.message);
                return 1;
            }
            l.args = targs;
            l.nargs = 4;
        }
        mh_emu_stats st;
        double t0 = now(), w0 = bench_seconds(CLOCK_MONOTONIC);
        if (mh_emu_run(d, &m, g[i].name, &l, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
        double t = now() - t0, wall = bench_seconds(CLOCK_MONOTONIC) - w0;
        mh_emu_read(d, dC, C, (g[i].out_bf16 ? 2 : 4) * (uint64_t)S * S, &e);
        double worst = 0;
        for (int q = 0; q < 256; q++) {
            int r = (q * 37) % S, c = (q * 101 + 7) % S;
            double want = 0, mag = 0;
            for (int k = 0; k < S; k++) {
                float a = g[i].bf16 ? mh_bf16_to_float(A[(size_t)r * S + k]) : mh_half_to_float(A[(size_t)r * S + k]);
                size_t bi = g[i].b_nk ? (size_t)c * S + k : (size_t)k * S + c;
                float b = g[i].bf16 ? mh_bf16_to_float(B[bi]) : mh_half_to_float(B[bi]);
                want += (double)a * b;
                mag += fabs((double)a * b);
            }
            double got = g[i].out_bf16 ? mh_bf16_to_float(((uint16_t *)C)[(size_t)r * S + c]) : C[(size_t)r * S + c];
            double err = fabs(got - want) / mag;
            if (err > worst) worst = err;
        }
        uint64_t hash = 1469598103934665603ull; /* the output's bits (FNV-1a): the same before and after a change */
        const unsigned char *cb = (const unsigned char *)C;
        for (size_t k = 0; k < (g[i].out_bf16 ? 2 : 4) * (size_t)S * S; k++) hash = (hash ^ cb[k]) * 1099511628211ull;
        char ratio[32] = "";
        if (blas > 0) snprintf(ratio, sizeof ratio, " (%.3fx openblas)", 2e-9 * S * S * (double)S / t / blas);
        printf("  %-10s %6.3f s  %7.2f GFLOP/s%s  wall %6.3f s on %u worker%s%s%s  %9llu virtual cycles  %9llu warp instructions  "
               "max error %.1e%s  output %016llx\n",
               g[i].name, t, 2e-9 * S * S * (double)S / t, ratio, wall, st.workers, st.workers == 1 ? "" : "s",
               st.serial ? ", serial: " : "", st.serial ? st.serial : "", (unsigned long long)st.cycles,
               (unsigned long long)st.warp_insns, worst, g[i].out_bf16 ? " (bf16 out)" : "", (unsigned long long)hash);
        mh_ptx_free(&m);
    }
    printf("target (issue 33): wgmma_gemm >= 0.25x single-thread OpenBLAS at 2048^3 (docs/results/mma-bench.md says "
           "by how much and why it is missed)\n");
    free(A), free(B), free(C);
    mh_emu_destroy(d);
    return 0;
}
