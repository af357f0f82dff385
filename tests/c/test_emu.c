/* test_emu.c - the emu backend end to end: the real Mosaic GPU kernel
 * (copy_bounds_wg.ptx, LLVM NVPTX output) runs unchanged and its trace
 * dumps; the ptx/ kernels (nvcc output) match CPU references; runs are
 * deterministic; faults and unsupported PTX are reported with their line. */
#include <math.h>
#include "check.h"
#include "emu_util.h"
#include "emu/emu.h"
#include "emu/emu_counters.h"
#include "emu/emu_occupancy.h"
#include "emu/emu_printf.h"
#include "emu/emu_ptxas.h"
#include "base/fp16.h"
#include "frontend/ptx.h"

static char *src_dir;

/* Runs `kernel` and checks that it ran, printing the error and the caller's
 * line where it did not. */
static int run_ok(mh_emu *d, const mh_ptx_module *m, const char *kernel, const mh_emu_launch *l, mh_emu_stats *st,
                  int line)
{
    mh_error e;
    int rc = mh_emu_run(d, m, kernel, l, st, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  line %d: %s\n", line, e.message);
    return rc;
}
#define RUN_OK(d, m, kernel, l, st) run_ok(d, m, kernel, l, st, __LINE__)

static mh_emu_launch shape(uint32_t grid, uint32_t block, uint32_t smem, const mh_emu_arg *args, uint32_t n)
{
    mh_emu_launch l = {{grid, 1, 1}, {block, 1, 1}, smem, args, n, 0};
    return l;
}

/* Runs copy_bounds_wg; returns the trace buffer (8 x 32 words), malloc'd. */
static uint32_t *run_mosaic(mh_emu *d, const mh_ptx_module *m)
{
    enum { N = 128 * 128 };
    uint16_t *in = malloc(N * 2), *out = malloc(N * 2);
    for (int i = 0; i < N; i++) in[i] = mh_float_to_bf16((float)i * 0.25f - 100.0f);
    uint64_t din = emu_upload(d, in, N * 2), dout = emu_upload(d, NULL, N * 2), dtr = emu_upload(d, NULL, 8 * 32 * 4);
    mh_error e;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(dtr)};
    mh_emu_launch l = shape(8, 128, 128, args, 3);
    mh_emu_stats st;
    RUN_OK(d, m, "body_mosaic_gpu_kernel", &l, &st);
    CHECK(mh_emu_read(d, dout, out, N * 2, &e) == 0);
    CHECK(memcmp(in, out, N * 2) == 0);
    uint32_t *tr = malloc(8 * 32 * 4);
    CHECK(mh_emu_read(d, dtr, tr, 8 * 32 * 4, &e) == 0);
    mh_emu_free(d, din, &e);
    mh_emu_free(d, dout, &e);
    mh_emu_free(d, dtr, &e);
    free(in);
    free(out);
    return tr;
}

static void mosaic_kernel(void)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/fixtures/mosaic-h200/copy_bounds_wg.ptx") == 0);
    mh_error e;
    mh_emu *d = mh_emu_create(NULL, &e);
    uint32_t *tr = run_mosaic(d, &m);

    /* header: start, smid = block (round-robin over 132 SMs), n = 28 (truncated at 32 - 3 words) */
    for (int b = 0; b < 8; b++) {
        CHECK(tr[b * 32 + 1] == (uint32_t)b);
        CHECK(tr[b * 32 + 2] == 28);
    }
    /* events of block 0: Init B, Init E, load B, load E, store B, ... in that order */
    uint32_t want_tags[] = {0, 0x80000000u, 1, 0x80000001u, 2, 0x80000002u, 1, 0x80000001u, 2};
    for (int k = 0; k < 9; k++) CHECK(tr[3 + 2 * k] == want_tags[k]);
    for (int k = 1; k < 14; k++) CHECK(tr[4 + 2 * k] > tr[2 + 2 * k]); /* clock increases */

    /* the trace dumps: Mosaic mode and default mode with the virtual clock */
    mh_names names;
    mosaic_names(&names);
    mh_spec s;
    mh_spec_init(&s, 8, 128, MH_SCOPE_WARPGROUP, 32);
    CHECK(mh_spec_validate(&s, &e) == 0);
    char *compat = dump_words(&s, &names, tr, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(compat != NULL);
    mh_summary sum;
    mh_summary_init(&sum, &names, &e);
    char *def = dump_words(&s, &names, tr, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, &sum, &e);
    CHECK(def != NULL);
    CHECK(mh_summary_row(&sum, 0).count == 8);           /* Init once per block */
    /* 32 entries hold 14 events: Init and 3 of the kernel's 20 (load, store)
     * rounds; its bounds check drops the rest */
    CHECK(mh_summary_row(&sum, 1).count == 8 * 3);
    CHECK(mh_summary_row(&sum, 1).truncated == 0);
    CHECK(mh_summary_row(&sum, 2).count == 8 * 3);
    fprintf(stderr, "  mosaic kernel on emu: output == input; trace regions Init %llu, load %llu (+%llu truncated), store %llu\n",
            (unsigned long long)mh_summary_row(&sum, 0).count, (unsigned long long)mh_summary_row(&sum, 1).count,
            (unsigned long long)mh_summary_row(&sum, 1).truncated, (unsigned long long)mh_summary_row(&sum, 2).count);

    /* deterministic: a second run on a fresh device gives the same buffer */
    mh_emu *d2 = mh_emu_create(NULL, &e);
    uint32_t *tr2 = run_mosaic(d2, &m);
    CHECK(memcmp(tr, tr2, 8 * 32 * 4) == 0);
    mh_emu_destroy(d2);

    mh_summary_free(&sum);
    mh_names_free(&names);
    free(compat);
    free(def);
    free(tr);
    free(tr2);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
}

static void copy_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "ptx/copy.ptx") == 0);
    enum { N4 = 1000 };
    float *in = malloc(N4 * 16), *out = calloc(N4, 16);
    for (int i = 0; i < N4 * 4; i++) in[i] = (float)i * 1.5f;
    uint64_t din = emu_upload(d, in, N4 * 16), dout = emu_upload(d, NULL, N4 * 16);
    mh_error e;
    unsigned n4 = N4;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(n4)};
    mh_emu_launch l = shape(3, 128, 0, args, 3);
    CHECK(mh_emu_run(d, &m, "copy_f32x4", &l, NULL, &e) == 0);
    mh_emu_read(d, dout, out, N4 * 16, &e);
    CHECK(memcmp(in, out, N4 * 16) == 0);
    mh_emu_free(d, din, &e);
    mh_emu_free(d, dout, &e);
    free(in);
    free(out);
    mh_ptx_free(&m);
}

static void reduce_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "ptx/reduce.ptx") == 0);
    enum { N = 5000, G = 4, B = 256 };
    float *in = malloc(N * 4), out[G];
    for (int i = 0; i < N; i++) in[i] = (float)(i % 17) - 3.0f;
    uint64_t din = emu_upload(d, in, N * 4), dout = emu_upload(d, NULL, G * 4);
    mh_error e;
    unsigned n = N;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(n)};
    mh_emu_launch l = shape(G, B, B * 4, args, 3);
    RUN_OK(d, &m, "reduce_sum_f32", &l, NULL);
    mh_emu_read(d, dout, out, G * 4, &e);
    double total = 0, want = 0;
    for (int g = 0; g < G; g++) total += out[g];
    for (int i = 0; i < N; i++) want += in[i];
    CHECK(total == want); /* small integers: exact in float */
    /* without its dynamic shared memory the kernel faults, naming the line */
    l.dynamic_smem = 0;
    CHECK(mh_emu_run(d, &m, "reduce_sum_f32", &l, NULL, &e) == -1 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "ptx/reduce.ptx:");
    CHECK_CONTAINS(e.message, "out-of-range shared write of 4 bytes");
    mh_emu_free(d, din, &e);
    mh_emu_free(d, dout, &e);
    free(in);
    mh_ptx_free(&m);
}

/* A converged warp's ld/st.shared (emu_exec.c's fast_shared, one check for the warp): lanes storing
 * to one address leave the highest lane's value, a load into its own address register reads with
 * the old address, a signed load sign-extends; one lane out of range or misaligned faults as lane
 * by lane, naming the lane's offset. */
static void shared_warp_access(mh_emu *d)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry shf(.param .u64 out, .param .u32 bad)\n{\n"
        ".reg .b32 %r<16>;\n.reg .b64 %rd<6>;\n.reg .pred %p<2>;\n.shared .align 16 .b8 buf[512];\n"
        "ld.param.u64 %rd1, [out];\nld.param.u32 %r9, [bad];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, buf;\n"
        "shl.b32 %r3, %r1, 2;\nadd.s32 %r4, %r2, %r3;\nst.shared.u32 [%r4], %r1;\n"
        "and.b32 %r5, %r1, 3;\nshl.b32 %r5, %r5, 3;\nadd.s32 %r5, %r5, %r2;\nst.shared.v2.u32 [%r5+256], {%r1, %r3};\n"
        "neg.s32 %r12, %r1;\nst.shared.u32 [%r4+384], %r12;\nbar.sync 0;\n"
        "ld.shared.v2.u32 {%r6, %r7}, [%r5+256];\nld.shared.u32 %r4, [%r4];\n"
        "ld.shared.s32 %rd4, [%r2+388];\n"
        "mul.wide.u32 %rd2, %r1, 24;\nadd.s64 %rd3, %rd1, %rd2;\n"
        "st.global.u32 [%rd3], %r4;\nst.global.u32 [%rd3+4], %r6;\nst.global.u32 [%rd3+8], %r7;\n"
        "st.global.u64 [%rd3+16], %rd4;\n"
        "setp.eq.u32 %p1, %r1, 5;\nselp.u32 %r10, %r9, 0, %p1;\nadd.s32 %r11, %r3, %r10;\nadd.s32 %r11, %r11, %r2;\n"
        "st.shared.u32 [%r11], %r1;\nret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    if (mh_ptx_parse(&m, text, sizeof text - 1, "shf.ptx", &e)) { CHECK(0); return; }
    uint64_t dout = emu_upload(d, NULL, 32 * 24);
    uint32_t bad = 0;
    mh_emu_arg args[] = {ARG(dout), ARG(bad)};
    mh_emu_launch l = shape(1, 32, 0, args, 2);
    RUN_OK(d, &m, "shf", &l, NULL);
    unsigned char out[32 * 24];
    mh_emu_read(d, dout, out, sizeof out, &e);
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t v[3];
        int64_t s;
        memcpy(v, out + 24 * t, 12);
        memcpy(&s, out + 24 * t + 16, 8);
        CHECK(v[0] == t);
        CHECK(v[1] == 28 + (t & 3) && v[2] == 4 * (28 + (t & 3)));
        CHECK(s == -1);
    }
    bad = 4096; /* lane 5 past the 512 bytes */
    CHECK(mh_emu_run(d, &m, "shf", &l, NULL, &e) == -1 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "out-of-range shared write of 4 bytes at offset 0x1014");
    CHECK_CONTAINS(e.message, "thread (5,0,0)");
    bad = 2;
    CHECK(mh_emu_run(d, &m, "shf", &l, NULL, &e) == -1 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "misaligned shared write of 4 bytes at 0x16");
    mh_emu_free(d, dout, &e);
    mh_ptx_free(&m);
}

static void tiled_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "ptx/tiled.ptx") == 0);
    enum { N = 1000, B = 64 };
    float *a = malloc(N * 4), *cc = calloc(N, 4), alpha = 2.0f;
    for (int i = 0; i < N; i++) a[i] = (float)i;
    uint64_t da = emu_upload(d, a, N * 4), dc = emu_upload(d, NULL, N * 4);
    mh_error e;
    unsigned n = N;
    mh_emu_arg args[] = {ARG(da), ARG(dc), ARG(n), ARG(alpha)};
    mh_emu_launch l = shape(5, B, B * 4, args, 4);
    RUN_OK(d, &m, "tiled_scale", &l, NULL);
    mh_emu_read(d, dc, cc, N * 4, &e);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        /* thread t reads tile[(t'+1) % B] of lane t' = (t+31) % 32 within its warp */
        int k = i / B, t = i % B, w0 = t / 32 * 32, src_lane = (t % 32 + 31) % 32, t2 = w0 + src_lane;
        int j = k * B + (t2 + 1) % B;
        float v = (j < N ? a[j] : 0.0f) * alpha + (float)k;
        if (cc[i] != v) bad++;
    }
    CHECK(bad == 0);
    mh_emu_free(d, da, &e);
    mh_emu_free(d, dc, &e);
    free(a);
    free(cc);
    mh_ptx_free(&m);
}

static void persistent_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "ptx/persistent.ptx") == 0);
    enum { ITEMS = 37, W = 100, G = 3 };
    int *in = malloc(ITEMS * W * 4), out[ITEMS];
    for (int i = 0; i < ITEMS * W; i++) in[i] = i % 7 - 2;
    uint64_t din = emu_upload(d, in, ITEMS * W * 4), dout = emu_upload(d, NULL, ITEMS * 4),
             dcnt = emu_upload(d, NULL, 4), ddone = emu_upload(d, NULL, G * 4);
    mh_error e;
    unsigned items = ITEMS, width = W;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(dcnt), ARG(ddone), ARG(items), ARG(width)};
    mh_emu_launch l = shape(G, 32, 0, args, 6);
    RUN_OK(d, &m, "persistent_rows", &l, NULL);
    mh_emu_read(d, dout, out, ITEMS * 4, &e);
    unsigned done[G], cnt;
    mh_emu_read(d, ddone, done, sizeof done, &e);
    mh_emu_read(d, dcnt, &cnt, 4, &e);
    int bad = 0;
    for (int w = 0; w < ITEMS; w++) {
        int s = 0;
        for (int j = 0; j < W; j++) s += in[w * W + j];
        bad += out[w] != s;
    }
    CHECK(bad == 0);
    CHECK(done[0] + done[1] + done[2] == ITEMS);
    CHECK(cnt == ITEMS + G); /* every block took one item past the end */
    free(in);
    mh_ptx_free(&m);
}

static void alu_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "ptx/alu_loop.ptx") == 0);
    enum { T = 96 };
    unsigned iters = 37;
    uint64_t dout = emu_upload(d, NULL, T * 4);
    mh_emu_arg args[] = {ARG(dout), ARG(iters)};
    mh_emu_launch l = shape(3, 32, 0, args, 2);
    mh_error e;
    CHECK(mh_emu_run(d, &m, "alu_loop", &l, NULL, &e) == 0);
    float out[T];
    mh_emu_read(d, dout, out, sizeof out, &e);
    int bad = 0;
    for (unsigned t = 0; t < T; t++) {
        float x = (float)t * 1e-3f;
        unsigned h = t;
        for (unsigned i = 0; i < iters; i++) {
            x = fmaf(x, 1.0001f, 0.5f);
            h = h * 1664525u + 1013904223u;
        }
        bad += out[t] != x + (float)(h & 0xffu);
    }
    CHECK(bad == 0);
    mh_ptx_free(&m);
}

static void local_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/ptx/local.ptx") == 0);
    enum { T = 64, N = 1000 };
    unsigned in[N], out[T], n = N;
    for (int i = 0; i < N; i++) in[i] = (unsigned)(i * 7 + i / 3);
    uint64_t din = emu_upload(d, in, sizeof in), dout = emu_upload(d, NULL, sizeof out);
    mh_error e;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(n)};
    mh_emu_launch l = shape(2, 32, 0, args, 3);
    RUN_OK(d, &m, "local_hist", &l, NULL);
    mh_emu_read(d, dout, out, sizeof out, &e);
    int bad = 0;
    for (unsigned t = 0; t < T; t++) {
        unsigned h[16] = {0}, v = 0;
        for (unsigned i = t; i < N; i += T) h[in[i] & 15]++;
        for (int k = 0; k < 16; k++) v = v * 3 + h[k];
        bad += out[t] != v;
    }
    CHECK(bad == 0);
    mh_ptx_free(&m);
}

/* cp.async: double-buffered 16-byte copies with commit/wait, and 4-byte ones
 * zero-filled where the source size is 0 */
static void cp_async_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/ptx/cp_async.ptx") == 0);
    enum { T = 128, N = 5 };
    float in[N * T * 4], out[N * T * 4], sc[T], so[T];
    for (int i = 0; i < N * T * 4; i++) in[i] = (float)i * 0.5f - 7.0f;
    for (int i = 0; i < T; i++) sc[i] = (float)i + 0.25f;
    uint64_t din = emu_upload(d, in, sizeof in), dout = emu_upload(d, NULL, sizeof out),
             dsc = emu_upload(d, sc, sizeof sc), dso = emu_upload(d, NULL, sizeof so);
    int n = N;
    mh_error e;
    mh_emu_arg args[] = {ARG(din), ARG(dout), ARG(dsc), ARG(dso), ARG(n)};
    mh_emu_launch l = shape(1, T, 0, args, 5);
    RUN_OK(d, &m, "stage", &l, NULL);
    mh_emu_read(d, dout, out, sizeof out, &e);
    mh_emu_read(d, dso, so, sizeof so, &e);
    int bad = 0;
    for (int k = 0; k < N; k++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < 4; j++) bad += out[(k * T + t) * 4 + j] != in[(k * T + (t + 1) % T) * 4 + j];
    for (int t = 0; t < T; t++) bad += so[t] != (((T - 1 - t) & 1) ? 0.0f : sc[T - 1 - t]); /* odd: zero-filled */
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  cp.async: %d values differ\n", bad);
    mh_ptx_free(&m);

    /* a bulk (TMA) form emu does not run (the .cp_mask store): the front end keeps it as text (the GPU
     * runs it), emu refuses it with its line; the others run (tests/c/test_emu_hopper.c) */
    static const char bulk[] = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n"
                               ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n"
                               "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd1], [%r1], 16, %rd2;\n"
                               "ret;\n}\n";
    CHECK(mh_ptx_parse(&m, bulk, sizeof bulk - 1, "b.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "b.ptx:8: instruction 'cp.async.bulk.global.shared::cta.bulk_group.cp_mask' "
                              "is not supported by emu");
    mh_ptx_free(&m);
    /* a copy size other than 4, 8 or 16 is refused at load, naming the line */
    static const char size12[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                 ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n"
                                 "cp.async.ca.shared.global [%r1], [%rd2], 12;\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, size12, sizeof size12 - 1, "s.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "s.ptx:8");
    CHECK_CONTAINS(e.message, "copy size must be 4, 8 or 16");
}

static int mix(int a, int b) { return a * 31 + (b ^ 7); }

static void calls_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/ptx/calls.ptx") == 0);
    enum { T = 96 };
    float x[T], y[T];
    int z[T];
    unsigned count = 0;
    for (int i = 0; i < T; i++) x[i] = (float)i - 10.25f;
    uint64_t dx = emu_upload(d, x, sizeof x), dy = emu_upload(d, NULL, sizeof y), dz = emu_upload(d, NULL, sizeof z),
             dc = emu_upload(d, NULL, 4);
    mh_error e;
    mh_emu_arg args[] = {ARG(dx), ARG(dy), ARG(dz), ARG(dc)};
    mh_emu_launch l = shape(3, 32, 0, args, 4);
    RUN_OK(d, &m, "calls", &l, NULL);
    mh_emu_read(d, dy, y, sizeof y, &e);
    mh_emu_read(d, dz, z, sizeof z, &e);
    mh_emu_read(d, dc, &count, 4, &e);
    int bad = 0;
    for (int t = 0; t < T; t++) {
        bad += y[t] != x[t] * 0.5f;
        bad += z[t] != ((t & 1) ? mix(t, t) + mix(t + 1, 2) : mix(t, 3));
    }
    CHECK(bad == 0);
    CHECK(count == T * (T - 1) / 2);
    mh_ptx_free(&m);

    /* recursion and calls to functions without a body are refused at load */
    static const char rec[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".func f()\n{\ncall.uni f, ();\nret;\n}\n"
        ".visible .entry k()\n{\ncall.uni f, ();\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, rec, sizeof rec - 1, "rec.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "rec.ptx:6: call: f is recursive");
    mh_ptx_free(&m);
    /* of the functions without a body emu runs vprintf and __assertfail only */
    static const char ext[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
        ".extern .func (.param .b32 r) putsx(.param .b64 a, .param .b64 b);\n"
        ".visible .entry k()\n{\n.param .b64 p0;\n.param .b64 p1;\n.param .b32 r0;\n"
        "call.uni (r0), vprintf, (p0, p1);\ncall.uni (r0), putsx, (p0, p1);\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, ext, sizeof ext - 1, "ext.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "ext.ptx:12: call: call to putsx, which has no body");
    mh_ptx_free(&m);
}

static uint16_t h_bits(_Float16 h) { uint16_t b; memcpy(&b, &h, 2); return b; }
static _Float16 h_of(uint16_t b) { _Float16 h; memcpy(&h, &b, 2); return h; }
static uint16_t bf_round(float f) /* round to nearest even, by scaling */
{
    if (f == 0) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); }
    double s = ldexp(1.0, ilogbf(f) - 7);
    float r = (float)(nearbyint((double)f / s) * s);
    uint32_t u;
    memcpy(&u, &r, 4);
    return (uint16_t)(u >> 16);
}
static float bf_f(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }

/* packed halves (nvcc's __hadd2 etc.) against _Float16 / a bfloat16 reference */
static void half2_kernel(mh_emu *d)
{
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/ptx/half2.ptx") == 0);
    enum { T = 32 };
    uint16_t a[2 * T], b[2 * T], cc[2 * T], dd[2 * T], o[8 * T], p[4 * T], q[2 * T];
    float f[2 * T];
    for (int i = 0; i < 2 * T; i++) {
        a[i] = h_bits((_Float16)((float)i * 0.37f - 5.0f));
        b[i] = h_bits((_Float16)((float)(i % 7) * 1.25f - 2.0f));
        cc[i] = bf_round((float)i * 1.1f - 20.0f);
        dd[i] = bf_round((float)(i % 5) * 0.3f + 0.5f);
        f[i] = (float)i / 3.0f - 7.0f;
    }
    uint64_t da = emu_upload(d, a, sizeof a), db = emu_upload(d, b, sizeof b), dout = emu_upload(d, NULL, sizeof o),
             dc = emu_upload(d, cc, sizeof cc), dd_ = emu_upload(d, dd, sizeof dd), dp = emu_upload(d, NULL, sizeof p),
             df = emu_upload(d, f, sizeof f), dq = emu_upload(d, NULL, sizeof q);
    mh_error e;
    mh_emu_arg args[] = {ARG(da), ARG(db), ARG(dout), ARG(dc), ARG(dd_), ARG(dp), ARG(df), ARG(dq)};
    mh_emu_launch l = shape(1, T, 0, args, 8);
    RUN_OK(d, &m, "h2ops", &l, NULL);
    mh_emu_read(d, dout, o, sizeof o, &e);
    mh_emu_read(d, dp, p, sizeof p, &e);
    mh_emu_read(d, dq, q, sizeof q, &e);
    int bad = 0;
    for (int i = 0; i < T; i++)
        for (int h = 0; h < 2; h++) {
            _Float16 x = h_of(a[2 * i + h]), y = h_of(b[2 * i + h]);
            bad += o[8 * i + 0 + h] != h_bits(x + y);
            bad += o[8 * i + 2 + h] != h_bits(x * y);
            bad += o[8 * i + 4 + h] != h_bits((_Float16)fmaf((float)x, (float)y, (float)x));
            bad += o[8 * i + 6 + h] != h_bits(x < y ? x : y);
            float u = bf_f(cc[2 * i + h]), v = bf_f(dd[2 * i + h]);
            bad += p[4 * i + 0 + h] != bf_round(u + v);
            bad += p[4 * i + 2 + h] != bf_round(fmaf(u, v, u));
        }
    for (int i = 0; i < T; i++) {
        bad += q[2 * i] != h_bits((_Float16)f[2 * i]);       /* __floats2half2_rn: first in the low half */
        bad += q[2 * i + 1] != h_bits((_Float16)f[2 * i + 1]);
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  half2: %d values differ\n", bad);

    /* setp on packed halves: p from the low halves, q from the high ones; NaNs, infinities,
     * subnormals (.ftz), the and with a predicate; each half compared on its own */
    static const uint16_t pick[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x7c00,
                                    0xfc00, 0x7e00, 0x3555, 0x4248, 0x3f80, 0xbf80, 0x7fc0, 0x0080};
    enum { NP = sizeof pick / sizeof *pick };
    uint32_t ca[T * 2], cb[T * 2], co[T * 2 * 5];
    for (int i = 0; i < 2 * T; i++) {
        ca[i] = (uint32_t)pick[i % NP] | (uint32_t)pick[(i * 7 + 3) % NP] << 16;
        cb[i] = (uint32_t)pick[(i * 5 + 1) % NP] | (uint32_t)pick[(i * 3) % NP] << 16;
    }
    uint64_t dca = emu_upload(d, ca, sizeof ca), dcb = emu_upload(d, cb, sizeof cb),
             dco = emu_upload(d, NULL, sizeof co);
    mh_emu_arg cargs[] = {ARG(dca), ARG(dcb), ARG(dco)};
    mh_emu_launch cl = shape(1, 2 * T, 0, cargs, 3);
    RUN_OK(d, &m, "h2cmp", &cl, NULL);
    mh_emu_read(d, dco, co, sizeof co, &e);
    bad = 0;
    for (int i = 0; i < 2 * T; i++) {
        uint32_t want[5] = {0, 0, 0, 0, 0};
        for (int h = 0; h < 2; h++) {
            uint16_t xa = (uint16_t)(ca[i] >> 16 * h), xb = (uint16_t)(cb[i] >> 16 * h);
            float x = (float)h_of(xa), y = (float)h_of(xb);
            float fx = fabsf(x) < 0x1p-14f ? copysignf(0, x) : x, fy = fabsf(y) < 0x1p-14f ? copysignf(0, y) : y;
            float u = bf_f(xa), v = bf_f(xb);
            want[0] |= (uint32_t)(x < y) << h;
            want[1] |= (uint32_t)(isnan(fx) || isnan(fy) || fx >= fy) << h;
            want[2] |= (uint32_t)(x == y && (i & 1)) << h;
            want[3] |= (uint32_t)(u > v) << h;
            want[4] |= (uint32_t)(isnan(u) || isnan(v)) << h;
        }
        for (int k = 0; k < 5; k++) bad += co[i * 5 + k] != want[k];
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  setp f16x2/bf16x2: %d results differ\n", bad);

    /* set on halves: 0xFFFF (u32 destination) or 1.0 of the half type per half, 0 for false;
     * a scalar set.lt.f16.f16 gives a half 1.0 */
    RUN_OK(d, &m, "h2set", &cl, NULL); /* the same arguments as h2cmp */
    mh_emu_read(d, dco, co, sizeof co, &e);
    bad = 0;
    for (int i = 0; i < 2 * T; i++) {
        uint32_t want[5] = {0, 0, 0, 0, 0};
        for (int h = 0; h < 2; h++) {
            uint16_t xa = (uint16_t)(ca[i] >> 16 * h), xb = (uint16_t)(cb[i] >> 16 * h);
            float x = (float)h_of(xa), y = (float)h_of(xb), u = bf_f(xa), v = bf_f(xb);
            want[0] |= (x == y ? 0xffffu : 0) << 16 * h;
            want[1] |= (x < y ? 0x3c00u : 0) << 16 * h;
            want[2] |= (u > v ? 0x3f80u : 0) << 16 * h;
            want[3] |= (u >= v ? 0xffffu : 0) << 16 * h;
            if (h == 0) want[4] = x < y ? 0x3c00u : 0;
        }
        for (int k = 0; k < 5; k++) bad += co[i * 5 + k] != want[k];
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  set on halves: %d results differ\n", bad);
    mh_ptx_free(&m);

    /* ex2.approx / tanh.approx on f16x2, each half as its own f16 (emu computes them exactly,
     * then rounds once; a GPU's approximations may differ in the last bit) */
    static const char src[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
        ".reg .b32 %r<4>;\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\n"
        "ld.global.b32 %r1, [%rd1];\nex2.approx.f16x2 %r2, %r1;\ntanh.approx.f16x2 %r3, %r1;\n"
        "st.global.b32 [%rd2], %r2;\nst.global.b32 [%rd2+4], %r3;\nret;\n}\n";
    uint16_t hin[2] = {h_bits((_Float16)1.5f), h_bits((_Float16)-0.375f)}, hout[4] = {0};
    CHECK(mh_ptx_parse(&m, src, sizeof src - 1, "x2.ptx", &e) == 0);
    CHECK(mh_emu_check_module(&m, &e) == 0);
    uint64_t pin = emu_upload(d, hin, sizeof hin), pout = emu_upload(d, NULL, sizeof hout);
    mh_emu_arg xargs[] = {ARG(pin), ARG(pout)};
    mh_emu_launch xl = shape(1, 1, 0, xargs, 2);
    CHECK(mh_emu_run(d, &m, "k", &xl, NULL, &e) == 0);
    mh_emu_read(d, pout, hout, sizeof hout, &e);
    for (int h = 0; h < 2; h++) {
        double x = (double)h_of(hin[h]);
        CHECK(hout[h] == h_bits((_Float16)exp2(x)));
        CHECK(hout[2 + h] == h_bits((_Float16)tanh(x)));
    }
    mh_ptx_free(&m);
}

/* strict mode: every ptx/ kernel and the Mosaic one read only what they wrote;
 * a kernel reading a register nothing wrote stops with the register's name */
static void strict_mode(void)
{
    mh_error e;
    mh_emu_opts o = {.strict = 1};
    mh_emu *d = mh_emu_create(&o, &e);
    copy_kernel(d);
    reduce_kernel(d);
    shared_warp_access(d);
    tiled_kernel(d);
    persistent_kernel(d);
    calls_kernel(d);
    local_kernel(d);
    mh_ptx_module m;
    CHECK(parse_ptx_file(&m, src_dir, "tests/fixtures/mosaic-h200/copy_bounds_wg.ptx") == 0);
    free(run_mosaic(d, &m)); /* checks output == input itself */
    mh_ptx_free(&m);
    static const char src[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n"
                              "ld.param.u64 %rd1, [p];\nadd.s32 %r2, %r1, 1;\nst.global.u32 [%rd1], %r2;\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, src, sizeof src - 1, "u.ptx", &e) == 0);
    uint64_t a = emu_upload(d, NULL, 4);
    mh_emu_arg args[] = {ARG(a)};
    mh_emu_launch l = shape(1, 32, 0, args, 1);
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) != 0 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "u.ptx:9: k: read of register %r1, which no instruction has written");
    mh_ptx_free(&m);
    /* without strict mode the same kernel runs (registers start at 0) */
    mh_emu *d2 = mh_emu_create(NULL, &e);
    CHECK(mh_ptx_parse(&m, src, sizeof src - 1, "u.ptx", &e) == 0);
    uint64_t a2 = 0;
    CHECK(mh_emu_alloc(d2, 4, &a2, &e) == 0);
    mh_emu_arg args2[] = {ARG(a2)};
    l.args = args2;
    CHECK(mh_emu_run(d2, &m, "k", &l, NULL, &e) == 0);
    mh_ptx_free(&m);
    mh_emu_destroy(d2);
    mh_emu_destroy(d);
}

static void faults_and_refusals(mh_emu *d)
{
    static const char bad_load[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n"
        "ld.param.u64 %rd1, [p];\n"
        "ld.global.u32 %r1, [%rd1+64];\n" /* line 9: past a 64-byte allocation */
        "ret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, bad_load, sizeof bad_load - 1, "bad.ptx", &e) == 0);
    uint64_t a = emu_upload(d, NULL, 64);
    mh_emu_arg args[] = {ARG(a)};
    mh_emu_launch l = shape(1, 32, 0, args, 1);
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) == -1);
    CHECK(e.code == MH_E_KERNEL_FAULT && e.line == 9);
    CHECK_CONTAINS(e.message, "bad.ptx:9: k: out-of-range global read of 4 bytes at 0x");
    CHECK_CONTAINS(e.message, "64 bytes ends 0 bytes before it");
    CHECK_CONTAINS(e.message, "thread (0,0,0)");
    /* the device is still usable */
    uint64_t b = emu_upload(d, NULL, 128);
    mh_emu_arg args2[] = {ARG(b)};
    l.args = args2;
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) == 0);
    CHECK(mh_emu_run(d, &m, "nope", &l, NULL, &e) != 0 && e.code == MH_E_NOT_FOUND);
    l.nargs = 0;
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) != 0 && e.code == MH_E_BAD_ARGUMENT);
    mh_ptx_free(&m);
    /* an access that starts inside an allocation and runs past its end (it said "ends
     * 18446744073709551612 bytes before it") */
    static const char straddle[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<5>;\n"
        "ld.param.u64 %rd1, [p];\n"
        "ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+48];\n"
        "ret;\n}\n";
    CHECK(mh_ptx_parse(&m, straddle, sizeof straddle - 1, "st.ptx", &e) == 0);
    uint64_t s56 = emu_upload(d, NULL, 56);
    mh_emu_arg args3[] = {ARG(s56)};
    l.args = args3;
    l.nargs = 1;
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) == -1);
    CHECK_CONTAINS(e.message, "of 56 bytes and runs 8 bytes past its end");
    mh_ptx_free(&m);

    static const char unsupported[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<2>;\n"
        "pmevent 1;\nret;\n}\n"; /* (bar.red was the example before emu ran it) */
    CHECK(mh_ptx_parse(&m, unsupported, sizeof unsupported - 1, "u.ptx", &e) == 0);
    l.nargs = 0;
    CHECK(mh_emu_run(d, &m, "k", &l, NULL, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "u.ptx:7: instruction 'pmevent' is not supported by emu");
    CHECK(e.line == 7);
    mh_ptx_free(&m);

    static const char syntax[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                 "add.s32 %r1, %r2, 1;\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, syntax, sizeof syntax - 1, "s.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "s.ptx:6: undeclared register '%r1'");
}

/* ---- issue 13: the occupancy calculator, the counters' rules, printf, ptxas -v -------- */

static void occupancy_rules(void)
{
    mh_occupancy o;
    /* 256 threads, nothing else known: 8 blocks fill the 64 warps */
    mh_occupancy_sm90(0, 0, 256, &o);
    CHECK(o.blocks_per_sm == 8 && o.warps_per_sm == 64 && o.by_regs == -1 && !strcmp(o.limited_by, "warps"));
    CHECK(o.smem_per_block == 1024 && o.occupancy == 1.0);
    /* 32 threads: the 32-block limit */
    mh_occupancy_sm90(32, 0, 32, &o);
    CHECK(o.blocks_per_sm == 32 && !strcmp(o.limited_by, "blocks") && o.warps_per_sm == 32);
    /* 128 registers a thread, 256 threads: 4096 a warp, 4 warps a sub-partition, 16 an SM: 2 blocks */
    mh_occupancy_sm90(128, 0, 256, &o);
    CHECK(o.by_regs == 2 && o.blocks_per_sm == 2 && !strcmp(o.limited_by, "registers") && o.regs_per_block == 32768);
    /* 26 registers: rounded to 832 -> 1024 a warp (units of 256): 16 warps a sub-partition, 64 an SM */
    mh_occupancy_sm90(26, 0, 1024, &o);
    CHECK(o.by_regs == 2 && o.blocks_per_sm == 2);
    /* shared memory: 48 KiB + the reserved KiB per block, in 228 KiB: 4 blocks */
    mh_occupancy_sm90(0, 48 * 1024, 128, &o);
    CHECK(o.smem_per_block == 49 * 1024 && o.by_smem == 4 && o.blocks_per_sm == 4 && !strcmp(o.limited_by, "shared memory"));
    /* a block that does not fit */
    mh_occupancy_sm90(0, 232448 + 4096, 128, &o);
    CHECK(o.blocks_per_sm == 0);
    mh_occupancy_sm90(300, 0, 128, &o);
    CHECK(o.blocks_per_sm == 0 && !strcmp(o.limited_by, "registers"));
}

static void counter_rules(void)
{
    uint64_t a[32];
    uint8_t lane[32];
    uint32_t phases;
    /* 4-byte words: consecutive (1 wavefront), 32 apart (32), all one word (a broadcast: 1) */
    for (int l = 0; l < 32; l++) { a[l] = (uint64_t)l * 4; lane[l] = (uint8_t)l; }
    CHECK(mh_ct_wavefronts(a, lane, 32, 4, &phases) == 1 && phases == 1);
    for (int l = 0; l < 32; l++) a[l] = (uint64_t)l * 128;
    CHECK(mh_ct_wavefronts(a, lane, 32, 4, &phases) == 32 && phases == 1);
    for (int l = 0; l < 32; l++) a[l] = 20;
    CHECK(mh_ct_wavefronts(a, lane, 32, 4, &phases) == 1);
    /* two words 128 bytes apart, each read by 16 lanes: 2-way */
    for (int l = 0; l < 32; l++) a[l] = (uint64_t)(l & 1) * 128;
    CHECK(mh_ct_wavefronts(a, lane, 32, 4, &phases) == 2);
    /* 8 bytes a lane, consecutive: a half warp a phase, 2 wavefronts, no conflict */
    for (int l = 0; l < 32; l++) a[l] = (uint64_t)l * 8;
    CHECK(mh_ct_wavefronts(a, lane, 32, 8, &phases) == 2 && phases == 2);
    /* 16 bytes a lane: quarter warps, 4; 16 bytes 128 apart: 8 lanes of a quarter in the same 4 banks */
    for (int l = 0; l < 32; l++) a[l] = (uint64_t)l * 16;
    CHECK(mh_ct_wavefronts(a, lane, 32, 16, &phases) == 4 && phases == 4);
    for (int l = 0; l < 32; l++) a[l] = (uint64_t)l * 128;
    CHECK(mh_ct_wavefronts(a, lane, 32, 16, &phases) == 32);
    /* lanes 0-7 only: one phase */
    for (int l = 0; l < 8; l++) a[l] = (uint64_t)l * 16;
    CHECK(mh_ct_wavefronts(a, lane, 8, 16, &phases) == 1 && phases == 1);
    uint64_t ids[] = {5, 3, 5, 9, 3, 3};
    CHECK(mh_ct_distinct(ids, 6) == 3);
    CHECK(!strcmp(mh_ct_names[MH_CT_GLD_SEC], "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
}

/* printf's argument buffer as nvcc lays it out, read from a host array */
static unsigned char pf_buf[128];
static int pf_arg(void *ctx, uint64_t off, void *dst, uint32_t size)
{
    (void)ctx;
    if (off + size > sizeof pf_buf) return -1;
    memcpy(dst, pf_buf + off, size);
    return 0;
}
static int pf_str(void *ctx, uint64_t addr, char *dst, size_t cap)
{
    (void)ctx;
    snprintf(dst, cap, "%s", addr == 1 ? "world" : "?");
    return 0;
}

static void printf_rules(void)
{
    mh_outbuf out = {0};
    mh_printf_io io = {NULL, pf_arg, pf_str};
    /* int 4 bytes at 0; double at 8; pointer (a string) at 16; long long at 24; char at 32; width '*' at 36, int at 40 */
    int32_t i = -42;
    double x = 3.14159;
    uint64_t s = 1, p = 0xabc;
    int64_t ll = -1234567890123ll;
    int32_t ch = 'Z', w = 6, u = 255;
    memcpy(pf_buf, &i, 4);
    memcpy(pf_buf + 8, &x, 8);
    memcpy(pf_buf + 16, &s, 8);
    memcpy(pf_buf + 24, &ll, 8);
    memcpy(pf_buf + 32, &ch, 4);
    memcpy(pf_buf + 36, &w, 4);
    memcpy(pf_buf + 40, &u, 4);
    memcpy(pf_buf + 48, &p, 8);
    int n = mh_emu_printf("%+05d|%.2f|%-7s|%lld|%c|%*x|%p|%e|%g %% %o\n", &io, &out);
    CHECK(n == 11); /* what printf returns: the arguments, the width '*' among them */
    /* %e reads the next 8-byte slot (56): zero here; %g the next; %o an int */
    CHECK(out.p && !strcmp(out.p, "-0042|3.14|world  |-1234567890123|Z|    ff|0xabc|0.000000e+00|0 % 0\n"));
    free(out.p);
    memset(&out, 0, sizeof out);
    memset(pf_buf, 0, sizeof pf_buf);
    uint16_t h = 0xffff;
    memcpy(pf_buf, &h, 2);
    /* h: the low 16 bits of the 4-byte int; %%n is text, %n is never a conversion; a NULL string */
    n = mh_emu_printf("%hu %hhx %X %5.1e %G %%n%s", &io, &out);
    CHECK(n == 6);
    CHECK(!strcmp(out.p, "65535 0 0 0.0e+00 0 %n(null)"));
    free(out.p);
}

static void ptxas_log(void)
{
    static const char log[] =
        "ptxas info    : (C7507) Potential Performance Loss: 'setmaxnreg' ignored to maintain minimum register "
        "requirements.\n"
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Function properties for k\n"
        "    48 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 26 registers, used 1 barriers, 4096 bytes smem, 372 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'j' for 'sm_90'\n"
        "ptxas info    : Function properties for j\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers, used 0 barriers\n";
    mh_ptxas_info pi;
    memset(&pi, 0, sizeof pi);
    mh_ptxas_parse(log, &pi);
    const mh_ptxas_kernel *k = mh_ptxas_find(&pi, "k"), *j = mh_ptxas_find(&pi, "j");
    CHECK(k && k->regs == 26 && k->stack == 48 && k->spill_stores == 8 && k->spill_loads == 4 && k->smem == 4096 &&
          k->barriers == 1);
    CHECK(j && j->regs == 8 && j->smem == 0 && j->stack == 0);
    CHECK(k && k->setmaxnreg_ignored && j && !j->setmaxnreg_ignored); /* C7507 comes before its entry's lines */
    CHECK(!mh_ptxas_find(&pi, "q"));
    mh_ptxas_info_free(&pi);

    /* an entry whose callees' properties come between its "Compiling" and "Used" lines (CUTLASS's
     * kernels): each callee grows the table, which moved the entry's record under the parser (a
     * heap-use-after-free under ASan, the entry's figures lost without it) */
    char big[16384];
    size_t n = (size_t)snprintf(big, sizeof big, "ptxas info    : Compiling entry function 'e' for 'sm_90a'\n");
    for (int i = 0; i < 64; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "ptxas info    : Function properties for callee_%d\n"
                              "    %d bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n", i, 8 * i);
    snprintf(big + n, sizeof big - n, "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem\n");
    memset(&pi, 0, sizeof pi);
    mh_ptxas_parse(big, &pi);
    const mh_ptxas_kernel *ek = mh_ptxas_find(&pi, "e"), *c63 = mh_ptxas_find(&pi, "callee_63");
    CHECK(ek && ek->regs == 168 && ek->barriers == 1 && ek->smem == 1024);
    CHECK(c63 && c63->stack == 504);
    mh_ptxas_info_free(&pi);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_emu SOURCE_DIR\n");
        return 2;
    }
    src_dir = argv[1];
    mosaic_kernel();
    mh_error e;
    mh_emu *d = mh_emu_create(NULL, &e);
    copy_kernel(d);
    reduce_kernel(d);
    tiled_kernel(d);
    persistent_kernel(d);
    alu_kernel(d);
    local_kernel(d);
    calls_kernel(d);
    half2_kernel(d);
    cp_async_kernel(d);
    faults_and_refusals(d);
    strict_mode();
    occupancy_rules();
    counter_rules();
    printf_rules();
    ptxas_log();
    mh_emu_destroy(d);
    return check_report("test_emu");
}
