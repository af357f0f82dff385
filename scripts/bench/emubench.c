/* emubench.c - emu speed: executed thread-instructions per second on a
 * memory kernel (ptx/copy.ptx) and an arithmetic loop (ptx/alu_loop.ptx),
 * each against a plain scalar C loop doing the same work (the floor),
 * measured in the same run, the best of 3 (copy) or 2 (alu) after a warm-up (memory
 * touched once, so neither side pays first-touch page faults); then both
 * again with exact counters on (stats), against the runs without.  Issue
 * 21's targets: alu <= 1.5x its floor, copy <= 10x, counting <= 1.3x.
 * Issue 33's: the one-element-a-thread saxpy (scripts/bench/ptx/saxpy.ptx, 16384 x 256
 * threads: the cost of a warp and a block) <= 10x its scalar C, and the peak resident memory of
 * a process running saxpy or fma_loop on two 16 MiB arrays (this program again, alone:
 * emubench --rss KERNEL SOURCE_DIR) <= 96 MiB.
 * usage: emubench SOURCE_DIR */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"
#include "emu/emu.h"

/* CPU time of this thread: emu and the C floors run in it one after another, so their ratio
 * holds on a machine other work shares (wall time there moves by 2x) */
static double now(void) { return bench_seconds(CLOCK_THREAD_CPUTIME_ID); }

static volatile float sink_f;
static volatile unsigned sink_u;

static void report(const char *name, const mh_emu_stats *st, double t, double floor_t)
{
    printf("%-8s %14llu %10.3f %12.1f M/s %10.4f %8.1fx\n", name, (unsigned long long)st->thread_insns, t,
           (double)st->thread_insns / t / 1e6, floor_t, t / floor_t);
}

/* The process's peak resident memory (VmHWM) in MiB, -1 when unknown. */
static double peak_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atof(line + 6);
    if (f) fclose(f);
    return kb < 0 ? -1 : kb / 1024;
}

/* 16384 x 256 threads, one float of each of two 16 MiB arrays a thread */
#define SAXPY_BLOCKS 16384u
#define SAXPY_N (SAXPY_BLOCKS * 256u)
#define FMA_ITERS 64u

/* Launches `kernel` (saxpy or fma_loop) of saxpy.ptx over two 16 MiB arrays on device d. */
static int run_saxpy(mh_emu *d, const mh_ptx_module *m, const char *kernel, uint64_t dx, uint64_t dy,
                     mh_emu_stats *st, mh_error *e)
{
    unsigned n = SAXPY_N, iters = FMA_ITERS;
    float a = 2.0f;
    mh_emu_arg sargs[] = {{&n, 4}, {&a, 4}, {&dx, 8}, {&dy, 8}};
    mh_emu_arg fargs[] = {{&n, 4}, {&dx, 8}, {&dy, 8}, {&iters, 4}};
    int fma = !strcmp(kernel, "fma_loop");
    mh_emu_launch l = {.grid = {SAXPY_BLOCKS, 1, 1}, .block = {256, 1, 1}, .args = fma ? fargs : sargs, .nargs = 4};
    if (mh_emu_run(d, m, kernel, &l, st, e)) { fprintf(stderr, "%s\n", e->message); return -1; }
    return 0;
}

/* emubench --rss KERNEL DIR [REPEATS [SMS [THREADS]]]: this process only runs KERNEL (saxpy, fma_loop
 * or copy: emubench's copy_f32x4 on 16 MiB; once, or REPEATS times: a profiler's run; on a device of SMS
 * SMs, default 132, and THREADS workers, default the machine's cores) on two 16 MiB arrays and prints
 * its peak resident memory; on stderr the last launch's cycles and a hash of its output array (to
 * check that a change of emu's engine keeps both) and the CPU time of the fastest launch. */
static int rss_main(const char *kernel, const char *dir, int repeats, uint32_t sms, uint32_t threads)
{
    mh_error e;
    mh_ptx_module m;
    int copy = !strcmp(kernel, "copy");
    if (bench_load_ptx(&m, dir, copy ? "ptx/copy.ptx" : "scripts/bench/ptx/saxpy.ptx")) return 1;
    mh_emu_opts o = {.num_sms = sms, .threads = threads};
    mh_emu *d = mh_emu_create(&o, &e);
    uint64_t dx, dy;
    mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &dx, &e);
    mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &dy, &e);
    mh_emu_memset(d, dx, 1, (uint64_t)SAXPY_N * 4, &e);
    mh_emu_memset(d, dy, 0, (uint64_t)SAXPY_N * 4, &e);
    mh_emu_stats st;
    unsigned n4 = SAXPY_N / 4; /* copy: 16 MiB as float4 */
    mh_emu_arg cargs[] = {{&dx, 8}, {&dy, 8}, {&n4, 4}};
    mh_emu_launch cl = {.grid = {264, 1, 1}, .block = {256, 1, 1}, .args = cargs, .nargs = 3};
    double best = 1e30;
    for (int i = 0; i < repeats; i++) {
        double t0 = now();
        if (!copy && run_saxpy(d, &m, kernel, dx, dy, &st, &e)) return 1;
        if (copy && mh_emu_run(d, &m, "copy_f32x4", &cl, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
        if (now() - t0 < best) best = now() - t0;
    }
    printf("%.1f\n", peak_mib());
    uint32_t *out = malloc((size_t)SAXPY_N * 4);
    uint64_t h = 1469598103934665603ull;
    if (out && !mh_emu_read(d, dy, out, (uint64_t)SAXPY_N * 4, &e))
        for (unsigned i = 0; i < SAXPY_N; i++) h = (h ^ out[i]) * 1099511628211ull;
    free(out);
    fprintf(stderr, "%s cycles %llu thread_insns %llu output %016llx best %.4f s\n", kernel,
            (unsigned long long)st.cycles, (unsigned long long)st.thread_insns, (unsigned long long)h, best);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
    return 0;
}

/* The peak resident memory of `self --rss kernel dir` (a fresh process), -1 on failure. */
static double rss_of(const char *self, const char *kernel, const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' --rss %s '%s' 2>/dev/null", self, kernel, dir); /* (its cycles line not shown) */
    FILE *p = popen(cmd, "r");
    double v = -1;
    if (p && fscanf(p, "%lf", &v) != 1) v = -1;
    if (p) pclose(p);
    return v;
}

/* issue 33: the same launches on devices of 1 and 2 workers (mh_emu_opts.threads), the best of 2
 * runs each after a warm-up; their cycles, instructions and outputs must be the same. */
static int threads_bench(mh_emu *d1, const mh_ptx_module *sx, const mh_ptx_module *alu, uint64_t dx, uint64_t dy,
                         uint64_t dres, double saxpy_floor)
{
    (void)d1;
    mh_error e;
    printf("threads = 1 vs 2 (wall time, the same launch on devices of 1 and 2 workers):\n");
    for (int k = 0; k < 3; k++) {
        const char *name = k == 0 ? "saxpy" : k == 1 ? "fma_loop" : "alu";
        double best[2] = {1e30, 1e30};
        uint64_t cyc[2] = {0, 0}, out[2] = {0, 0};
        for (int th = 0; th < 2; th++) {
            mh_emu_opts o = {.threads = (uint32_t)th + 1};
            mh_emu *d = mh_emu_create(&o, &e);
            if (!d) { fprintf(stderr, "%s\n", e.message); return -1; }
            uint64_t x, y, r;
            mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &x, &e);
            mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &y, &e);
            mh_emu_alloc(d, 264 * 256 * 4, &r, &e);
            (void)dx, (void)dy, (void)dres;
            for (int rep = 0; rep < 3; rep++) {
                mh_emu_memset(d, x, 1, (uint64_t)SAXPY_N * 4, &e);
                mh_emu_memset(d, y, 0, (uint64_t)SAXPY_N * 4, &e);
                mh_emu_stats st;
                double t0 = now();
                if (k < 2) {
                    if (run_saxpy(d, sx, name, x, y, &st, &e)) return -1;
                } else {
                    unsigned iters = 1000;
                    mh_emu_arg a[] = {{&r, 8}, {&iters, 4}};
                    mh_emu_launch l = {.grid = {264, 1, 1}, .block = {256, 1, 1}, .args = a, .nargs = 2};
                    if (mh_emu_run(d, alu, "alu_loop", &l, &st, &e)) { fprintf(stderr, "%s\n", e.message); return -1; }
                }
                double t = now() - t0;
                if (rep && t < best[th]) best[th] = t;
                cyc[th] = st.cycles;
                uint32_t v[64];
                mh_emu_read(d, k < 2 ? y : r, v, sizeof v, &e);
                out[th] = 1469598103934665603ull;
                for (int i = 0; i < 64; i++) out[th] = (out[th] ^ v[i]) * 1099511628211ull;
            }
            mh_emu_destroy(d);
        }
        printf("%-8s threads=1 %8.3f s  threads=2 %8.3f s  speed-up %.2fx  cycles %llu / %llu  outputs %s\n", name,
               best[0], best[1], best[0] / best[1], (unsigned long long)cyc[0], (unsigned long long)cyc[1],
               cyc[0] == cyc[1] && out[0] == out[1] ? "the same" : "DIFFER");
        if (cyc[0] != cyc[1] || out[0] != out[1]) return -1;
        if (k == 0)
            printf("saxpy against its scalar C: threads=1 %.1fx, threads=2 %.1fx\n", best[0] / saxpy_floor,
                   best[1] / saxpy_floor);
    }
    printf("target (issue 33): >= 1.25x with 2 threads on a 2-vCPU machine\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 3 && !strcmp(argv[1], "--rss")) return rss_main(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 1, argc > 5 ? (uint32_t)atoi(argv[5]) : 132,
                                                         argc > 6 ? (uint32_t)atoi(argv[6]) : 0);
    const char *dir = argc > 1 ? argv[1] : ".";
    mh_error e;
    mh_emu_opts one = {.threads = 1}; /* the figures below on one worker; threads = 2 against it at the end */
    mh_emu *d = mh_emu_create(&one, &e);
    mh_ptx_module copy, alu;
    if (bench_load_ptx(&copy, dir, "ptx/copy.ptx") || bench_load_ptx(&alu, dir, "ptx/alu_loop.ptx")) return 1;
    printf("%-8s %14s %10s %16s %10s %9s\n", "kernel", "thread_insns", "emu_s", "thread_insns/s", "floor_s", "ratio");

    /* memory: copy 16 MiB as float4 */
    unsigned n4 = 1u << 20;
    uint64_t din, dout;
    mh_emu_alloc(d, (uint64_t)n4 * 16, &din, &e);
    mh_emu_alloc(d, (uint64_t)n4 * 16, &dout, &e);
    mh_emu_arg cargs[] = {{&din, 8}, {&dout, 8}, {&n4, 4}};
    mh_emu_launch cl = {.grid = {264, 1, 1}, .block = {256, 1, 1}, .args = cargs, .nargs = 3};
    mh_emu_stats st;
    double t0, t = 1e30, ft = 1e30;
    float *a = calloc(n4, 16), *b = calloc(n4, 16);
    mh_emu_memset(d, din, 1, (uint64_t)n4 * 16, &e); /* every page touched: no first-touch faults in the runs */
    mh_emu_memset(d, dout, 0, (uint64_t)n4 * 16, &e);
    memset(a, 1, (size_t)n4 * 16);
    memset(b, 0, (size_t)n4 * 16);
    for (int rep = 0; rep < 4; rep++) { /* a warm-up, then the best of 3 */
        t0 = now();
        if (mh_emu_run(d, &copy, "copy_f32x4", &cl, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
        if (rep && now() - t0 < t) t = now() - t0;
        t0 = now();
        for (unsigned i = 0; i < n4 * 4; i += 4) memcpy(b + i, a + i, 16);
        __asm__ volatile("" ::"r"(b) : "memory");
        if (rep && now() - t0 < ft) ft = now() - t0;
    }
    sink_f = b[n4];
    report("copy", &st, t, ft);
    double copy_t = t;

    /* arithmetic: 264 x 256 threads x 1000 iterations */
    unsigned iters = 1000, threads = 264 * 256;
    uint64_t dres;
    mh_emu_alloc(d, threads * 4, &dres, &e);
    mh_emu_arg aargs[] = {{&dres, 8}, {&iters, 4}};
    mh_emu_launch al = {.grid = {264, 1, 1}, .block = {256, 1, 1}, .args = aargs, .nargs = 2};
    t = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* a warm-up (the device's slot buffers for this shape), then the best of 2 */
        t0 = now();
        if (mh_emu_run(d, &alu, "alu_loop", &al, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
        if (rep && now() - t0 < t) t = now() - t0;
    }
    t0 = now();
    for (unsigned th = 0; th < threads; th++) {
        float x = (float)th * 1e-3f;
        unsigned h = th;
        for (unsigned i = 0; i < iters; i++) {
            x = fmaf(x, 1.0001f, 0.5f);
            h = h * 1664525u + 1013904223u;
            __asm__ volatile("" : "+x"(x), "+r"(h)); /* keep the C loop a loop */
        }
        sink_f = x;
        sink_u = h;
    }
    ft = now() - t0;
    report("alu", &st, t, ft);
    double alu_t = t;

    /* the same two with exact counters (launch{stats = true}): what counting costs */
    mh_emu_extra x = {.stats = 1};
    double copy_st = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* the best of 3, as the copy without counting */
        t0 = now();
        if (mh_emu_run_ex(d, &copy, "copy_f32x4", &cl, &x, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
        if (now() - t0 < copy_st) copy_st = now() - t0;
        if (st.counts) st.counts->release(st.counts);
        free(st.output);
    }
    report("copy+st", &st, copy_st, copy_t);
    t0 = now();
    if (mh_emu_run_ex(d, &alu, "alu_loop", &al, &x, &st, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
    double alu_st = now() - t0;
    if (st.counts) st.counts->release(st.counts);
    free(st.output);
    report("alu+st", &st, alu_st, alu_t);
    printf("counting (stats = true): copy %.2fx, alu %.2fx the time without (the floor column is the run without)\n",
           copy_st / copy_t, alu_st / alu_t);
    printf("targets (issue 21): alu <= 1.5x its scalar C floor, copy <= 10x, counting <= 1.3x\n");

    /* issue 33: a warp's and a block's cost (saxpy, one element a thread), and the footprint */
    mh_ptx_module sx;
    if (bench_load_ptx(&sx, dir, "scripts/bench/ptx/saxpy.ptx")) return 1;
    uint64_t dx, dy;
    mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &dx, &e);
    mh_emu_alloc(d, (uint64_t)SAXPY_N * 4, &dy, &e);
    mh_emu_memset(d, dx, 0, (uint64_t)SAXPY_N * 4, &e);
    mh_emu_memset(d, dy, 0, (uint64_t)SAXPY_N * 4, &e);
    float *hx = calloc(SAXPY_N, 4), *hy = calloc(SAXPY_N, 4);
    t = ft = 1e30;
    for (int rep = 0; rep < 4; rep++) { /* a warm-up, then the best of 3 */
        t0 = now();
        if (run_saxpy(d, &sx, "saxpy", dx, dy, &st, &e)) return 1;
        if (rep && now() - t0 < t) t = now() - t0;
        t0 = now();
        float sa = 2.0f;
        __asm__ volatile("" : "+x"(sa));
        for (unsigned i = 0; i < SAXPY_N; i++) hy[i] = sa * hx[i] + hy[i];
        __asm__ volatile("" ::"r"(hy) : "memory");
        if (rep && now() - t0 < ft) ft = now() - t0;
    }
    sink_f = hy[SAXPY_N / 2];
    report("saxpy", &st, t, ft);
    double saxpy_ratio = t / ft, saxpy_floor = ft;
    t = ft = 1e30;
    for (int rep = 0; rep < 3; rep++) { /* a warm-up, then the best of 2 */
        t0 = now();
        if (run_saxpy(d, &sx, "fma_loop", dx, dy, &st, &e)) return 1;
        if (rep && now() - t0 < t) t = now() - t0;
        t0 = now();
        for (unsigned i = 0; i < SAXPY_N; i++) {
            float v = hx[i];
            for (unsigned k = 0; k < FMA_ITERS; k++) {
                v = fmaf(v, 1.0001f, 0.5f);
                __asm__ volatile("" : "+x"(v));
            }
            hy[i] = v;
        }
        __asm__ volatile("" ::"r"(hy) : "memory");
        if (rep && now() - t0 < ft) ft = now() - t0;
    }
    report("fma_loop", &st, t, ft);
    double fma_ratio = t / ft;
    free(hx);
    free(hy);
    if (threads_bench(d, &sx, &alu, dx, dy, dres, saxpy_floor)) return 1;
    mh_ptx_free(&sx);
    double rs = rss_of(argv[0], "saxpy", dir), rf = rss_of(argv[0], "fma_loop", dir);
    printf("peak resident memory of a process running one launch on two 16 MiB arrays: saxpy %.1f MiB, "
           "fma_loop %.1f MiB\n", rs, rf);
    printf("targets (issue 33): saxpy <= 10x its scalar C (now %.1fx: %s), fma_loop (%u FMAs a thread) %.1fx, "
           "peak <= 96 MiB (now %.1f / %.1f: %s)\n", saxpy_ratio, saxpy_ratio <= 10 ? "met" : "missed", FMA_ITERS,
           fma_ratio, rs, rf, rs > 0 && rf > 0 && rs <= 96 && rf <= 96 ? "met" : "missed");
    free(a);
    free(b);
    mh_ptx_free(&copy);
    mh_ptx_free(&alu);
    mh_emu_destroy(d);
    return 0;
}
