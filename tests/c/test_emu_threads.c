/* test_emu_threads.c - emu's SMs on workers (issue 33, mh_emu_opts.threads): the same launch on
 * devices of 1, 2 and 3 workers gives the same outputs, cycles, instructions, printf output and
 * fault, byte for byte, also where blocks talk through atomics and volatile flags (strong operations
 * hold their SM for the quantum's serial part), also with wgmma (on workers) and with mbarriers and
 * TMA (the trace's flows the same too; one SM after another, saying why), as with clusters;
 * a bad thread count (the option or $MGPU_EMU_THREADS) is refused with a message naming it. */
#include "check.h"
#include "emu_util.h"
#include "base/fp16.h"
#include "emu/emu_tma.h"

static mh_ptx_module stats_ptx, time_ptx, side_ptx, grid_ptx, mbar_ptx, dyn_ptx, wg_ptx, clu_ptx, cl2_ptx, ws_ptx;

typedef struct {
    int rc;
    char msg[1024];
    uint64_t cycles, warp_insns, thread_insns;
    uint32_t workers;
    const char *serial;
    char *output;
    size_t output_len;
    unsigned char *out;         /* the output buffer read back */
    size_t out_bytes;
    mh_trace_flow *flows;       /* what released each mbarrier wait */
    uint32_t nflows;
} result;

/* A tensor map of a rows x cols matrix at addr (bf16 with the 128-byte swizzle, or f32 without), boxes of
 * 64 x box_rows. */
static void tmap_of(uint64_t addr, uint64_t rows, uint64_t cols, uint32_t box_rows, int f32, unsigned char *map)
{
    mh_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    s.data_type = f32 ? MH_TMAP_FLOAT32 : MH_TMAP_BFLOAT16;
    s.elem_size = f32 ? 4 : 2;
    s.rank = 2;
    s.address = addr;
    s.bytes = rows * cols * s.elem_size;
    s.dims[0] = cols, s.dims[1] = rows;
    s.box[0] = 64, s.box[1] = box_rows;
    s.elem_strides[0] = s.elem_strides[1] = 1;
    s.swizzle = f32 ? MH_TMAP_SWIZZLE_NONE : MH_TMAP_SWIZZLE_128B;
    mh_tensor_map_contiguous(&s);
    mh_error e;
    CHECK(mh_emu_tensor_map(&s, map, &e) == 0);
}

static void tmap(uint64_t addr, uint64_t rows, uint64_t cols, uint32_t box_rows, unsigned char *map)
{
    tmap_of(addr, rows, cols, box_rows, 0, map);
}

/* kernel of m on a device of 8 SMs and `threads` workers: in (n floats, i * 0.5) and out (n floats). */
static result run(uint32_t threads, const mh_ptx_module *m, const char *kernel, uint32_t grid, uint32_t block,
                  int mode, int32_t k)
{
    result r;
    memset(&r, 0, sizeof r);
    mh_emu_opts o = {.num_sms = 8, .threads = threads};
    mh_error e;
    mh_emu *d = mh_emu_create(&o, &e);
    CHECK(d != NULL);
    if (!d) return r;
    size_t n = (size_t)grid * block * 4;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (float)i * 0.5f;
    uint64_t dx = emu_upload(d, x, n * sizeof *x), dy = emu_upload(d, NULL, n * sizeof *x), dz = emu_upload(d, NULL, n * 8);
    uint32_t u = (uint32_t)k, reps = 4;
    float a = 1.5f;
    int32_t cnt = (int32_t)n;
    mh_emu_arg args[6];
    uint32_t nargs, smem = 0;
    uint64_t dout = dy;
    /* the Hopper kernels' operands: small integers in bf16 (exact products) */
    size_t nh = (size_t)(grid + 2) * 128 * 256; /* (ws_gemm's A and B: (grid x 128 + 256) x 256) */
    uint16_t *h = malloc(nh * 2);
    unsigned seed = 5;
    for (size_t i = 0; i < nh; i++) seed = seed * 1103515245u + 12345u, h[i] = mh_float_to_bf16((float)((int)(seed >> 16) % 9 - 4));
    uint64_t dh = mode >= 7 && mode <= 9 ? emu_upload(d, h, nh * 2) : 0;
    unsigned char ma[MH_TMAP_BYTES], mb[MH_TMAP_BYTES], mc[MH_TMAP_BYTES];
    uint32_t mm = 128, nn = 128 * grid, kk = 256, gy = 1;
    if (mode == 9) { /* ws_gemm(map A, map B, map C, K) in clusters of 2: C (grid x 128 by 256, f32) = A B^T */
        mm = 128 * grid, nn = 256, gy = nn / 64;
        tmap(dh, mm, kk, 128, ma);
        tmap(dh + (uint64_t)mm * kk * 2, nn, kk, 32, mb);
        dout = emu_upload(d, NULL, (size_t)mm * nn * 4);
        tmap_of(dout, mm, nn, 128, 1, mc);
        args[0] = (mh_emu_arg){ma, MH_TMAP_BYTES}, args[1] = (mh_emu_arg){mb, MH_TMAP_BYTES};
        args[2] = (mh_emu_arg){mc, MH_TMAP_BYTES}, args[3] = (mh_emu_arg)ARG(kk), nargs = 4;
        smem = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4;
    } else if (mode == 7) { /* dyn_tma_wgmma(map A, map B, D, offsets): TMA, an mbarrier, wgmma, every block the same D */
        tmap(dh, 64, 64, 64, ma);
        tmap(dh + 64 * 64 * 2, 64, 64, 64, mb);
        args[0] = (mh_emu_arg){ma, MH_TMAP_BYTES}, args[1] = (mh_emu_arg){mb, MH_TMAP_BYTES};
        args[2] = (mh_emu_arg)ARG(dy), args[3] = (mh_emu_arg)ARG(dz), nargs = 4;
        smem = 2 * 64 * 64 * 2;
    } else if (mode == 8) { /* wgmma_gemm(A, B, C, M, N, K): C (128 x 128 grid, bf16) = A B^T */
        dout = emu_upload(d, NULL, (size_t)mm * nn * 2);
        args[0] = (mh_emu_arg)ARG(dh), args[1] = (mh_emu_arg)ARG(dh);
        args[2] = (mh_emu_arg)ARG(dout), args[3] = (mh_emu_arg)ARG(mm), args[4] = (mh_emu_arg)ARG(nn);
        args[5] = (mh_emu_arg)ARG(kk), nargs = 6;
        smem = 65536;
    } else if (mode == 5) { /* chained_scan(x, prefix, ready), lookback_scan(x, out, state) */
        args[0] = (mh_emu_arg)ARG(dx), args[1] = (mh_emu_arg)ARG(dy), args[2] = (mh_emu_arg)ARG(dz), nargs = 3;
    } else if (mode == 10) { /* (in and out) */
        args[0] = (mh_emu_arg)ARG(dx), nargs = 1;
        dout = dx;
    } else if (mode == 6) { /* (out) */
        args[0] = (mh_emu_arg)ARG(dy), nargs = 1;
    } else if (mode == 4) { /* (in, out) */
        args[0] = (mh_emu_arg)ARG(dx), args[1] = (mh_emu_arg)ARG(dy), nargs = 2;
    } else if (mode == 0) { /* (in, out, stride) */
        args[0] = (mh_emu_arg)ARG(dx), args[1] = (mh_emu_arg)ARG(dy), args[2] = (mh_emu_arg)ARG(u), nargs = 3;
    } else if (mode == 1) { /* mem_time strided(x, y, stride, reps) */
        args[0] = (mh_emu_arg)ARG(dx), args[1] = (mh_emu_arg)ARG(dy), args[2] = (mh_emu_arg)ARG(u);
        args[3] = (mh_emu_arg)ARG(reps), nargs = 4;
    } else if (mode == 2) { /* say(n, x) */
        args[0] = (mh_emu_arg)ARG(k), args[1] = (mh_emu_arg)ARG(a), nargs = 2;
    } else { /* atomic_sum(x, sum, n) */
        args[0] = (mh_emu_arg)ARG(dx), args[1] = (mh_emu_arg)ARG(dy), args[2] = (mh_emu_arg)ARG(cnt), nargs = 3;
    }
    mh_emu_launch l = {.grid = {grid, gy, 1}, .block = {block, 1, 1}, .dynamic_smem = smem, .args = args, .nargs = nargs,
                       .timeout_s = 60};
    mh_emu_extra xx = {.flows = 1};
    mh_emu_stats st;
    memset(&st, 0, sizeof st);
    r.rc = mh_emu_run_ex(d, m, kernel, &l, &xx, &st, &e) ? (int)e.code : 0;
    if (r.rc) snprintf(r.msg, sizeof r.msg, "%s", e.message);
    r.cycles = st.cycles;
    r.warp_insns = st.warp_insns;
    r.thread_insns = st.thread_insns;
    r.workers = st.workers;
    r.serial = st.serial;
    r.output = st.output;
    r.output_len = st.output_len;
    r.flows = st.flows;
    r.nflows = st.nflows;
    free(st.warnings);
    r.out_bytes = mode == 8 ? (size_t)mm * nn * 2 : mode == 9 ? (size_t)mm * nn * 4 : n * sizeof *x;
    r.out = malloc(r.out_bytes);
    CHECK(mh_emu_read(d, dout, r.out, r.out_bytes, &e) == 0);
    free(x);
    free(h);
    mh_emu_destroy(d);
    return r;
}

/* The flows of a and b the same, field by field (the struct has padding). */
static int same_flows(const result *a, const result *b)
{
    if (a->nflows != b->nflows) return 0;
    for (uint32_t i = 0; i < a->nflows; i++) {
        const mh_trace_flow *x = &a->flows[i], *y = &b->flows[i];
        if (x->kind != y->kind || memcmp(x->src_block, y->src_block, sizeof x->src_block) ||
            memcmp(x->dst_block, y->dst_block, sizeof x->dst_block) || x->src_thread != y->src_thread ||
            x->dst_thread != y->dst_thread || x->src_clock != y->src_clock || x->dst_clock != y->dst_clock)
            return 0;
    }
    return 1;
}

static void result_free(result *r)
{
    free(r->flows);
    free(r->output);
    free(r->out);
}

/* The launch on 1, 2 and 3 workers: everything the same; `workers2`: what the 2-worker run used. */
static void same(const char *what, const mh_ptx_module *m, const char *kernel, uint32_t grid, uint32_t block, int mode,
                 int32_t k, uint32_t workers2)
{
    result a = run(1, m, kernel, grid, block, mode, k);
    for (uint32_t t = 2; t <= 3; t++) {
        result b = run(t, m, kernel, grid, block, mode, k);
        int ok = a.rc == b.rc && !strcmp(a.msg, b.msg) && a.cycles == b.cycles && a.warp_insns == b.warp_insns &&
                 a.thread_insns == b.thread_insns && a.output_len == b.output_len &&
                 (!a.output_len || !memcmp(a.output, b.output, a.output_len)) && !memcmp(a.out, b.out, a.out_bytes) &&
                 same_flows(&a, &b);
        if (!ok)
            fprintf(stderr, "  %s, threads %u: rc %d/%d cycles %llu/%llu insns %llu/%llu output %zu/%zu flows %u/%u (same: out %d, flows %d)\n  %s\n  %s\n", what,
                    t, a.rc, b.rc, (unsigned long long)a.cycles, (unsigned long long)b.cycles,
                    (unsigned long long)a.warp_insns, (unsigned long long)b.warp_insns, a.output_len, b.output_len, a.nflows, b.nflows, !memcmp(a.out, b.out, a.out_bytes),
                    same_flows(&a, &b), a.msg,
                    b.msg);
        CHECK(ok);
        if (t == 2) {
            if (b.workers != workers2) fprintf(stderr, "  %s: %u workers, wanted %u\n", what, b.workers, workers2);
            CHECK(b.workers == workers2);
        }
        result_free(&b);
    }
    CHECK(a.rc == 0 || a.rc == MH_E_KERNEL_FAULT);
    CHECK(a.workers == 1 && a.serial == NULL);
    result_free(&a);
}

static void options(void)
{
    mh_error e;
    mh_emu_opts o = {.threads = 2000};
    CHECK(mh_emu_create(&o, &e) == NULL);
    CHECK(e.code == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "threads = 2000");
    const char *bad[] = {"0", "-2", "abc", "3x", "99999", "2.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("MGPU_EMU_THREADS", bad[i], 1);
        mh_emu *d = mh_emu_create(NULL, &e);
        CHECK(d == NULL);
        if (d) mh_emu_destroy(d);
        else CHECK_CONTAINS(e.message, "MGPU_EMU_THREADS");
    }
    setenv("MGPU_EMU_THREADS", "3", 1);
    mh_emu *d = mh_emu_create(NULL, &e);
    CHECK(d && mh_emu_threads(d) == 3);
    mh_emu_destroy(d);
    o.threads = 1; /* the option wins over the variable */
    d = mh_emu_create(&o, &e);
    CHECK(d && mh_emu_threads(d) == 1);
    mh_emu_destroy(d);
    unsetenv("MGPU_EMU_THREADS");
    d = mh_emu_create(NULL, &e);
    CHECK(d && mh_emu_threads(d) >= 1);
    mh_emu_destroy(d);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : ".";
    unsetenv("MGPU_EMU_THREADS");
    if (parse_ptx_file(&stats_ptx, root, "tests/ptx/emu_stats.ptx") || parse_ptx_file(&time_ptx, root, "tests/ptx/mem_time.ptx") ||
        parse_ptx_file(&side_ptx, root, "tests/ptx/side_effects.ptx") || parse_ptx_file(&grid_ptx, root, "tests/ptx/grid.ptx") ||
        parse_ptx_file(&mbar_ptx, root, "tests/ptx/mbarrier.ptx") || parse_ptx_file(&dyn_ptx, root, "tests/ptx/hopper_dynsmem.ptx") ||
        parse_ptx_file(&wg_ptx, root, "tests/ptx/wgmma.ptx") ||
        parse_ptx_file(&clu_ptx, root, "tests/ptx/hopper.ptx") || parse_ptx_file(&cl2_ptx, root, "tests/ptx/hopper_cluster.ptx") ||
        parse_ptx_file(&ws_ptx, root, "tests/ptx/hopper_gemm.ptx"))
        return 1;
    options();
    same("ld_stride", &stats_ptx, "ld_stride", 64, 128, 0, 1, 2);
    same("ld_stride 4", &stats_ptx, "ld_stride", 64, 128, 0, 4, 2);
    same("strided", &time_ptx, "strided", 40, 256, 1, 8, 2);
    same("transpose32", &stats_ptx, "transpose32", 24, 1024, 4, 0, 2);
    same("printf", &stats_ptx, "say", 40, 64, 2, 7, 2);
    same("assert", &stats_ptx, "say", 40, 64, 2, 13, 2);      /* every block faults: the first in SM order is reported */
    same("out of bounds", &stats_ptx, "ld_stride", 64, 128, 0, 1 << 20, 2);
    /* strong operations hold their SM for the quantum's serial part: atomics into one word, blocks
     * that wait for the block before them (volatile flags), a decoupled look-back */
    same("atomic", &side_ptx, "atomic_sum", 32, 128, 3, 0, 2);
    same("chained_scan", &grid_ptx, "chained_scan", 40, 64, 5, 0, 2);
    same("lookback_scan", &grid_ptx, "lookback_scan", 40, 128, 5, 0, 2);
    /* mbarriers, TMA and wgmma on workers (issue 33), the trace's flows the same; the TMA kernel a few
     * times more (SMs issuing copies on two workers at once once shared the list of a copy's lines) */
    same("mbarrier", &mbar_ptx, "mbar_phases", 16, 128, 6, 0, 2);
    for (int i = 0; i < 4; i++) same("tma + mbarrier + wgmma", &dyn_ptx, "dyn_tma_wgmma", 24, 128, 7, 0, 2);
    same("wgmma_gemm", &wg_ptx, "wgmma_gemm", 6, 384, 8, 0, 2);
    result g = run(2, &wg_ptx, "wgmma_gemm", 6, 384, 8, 0);
    CHECK(g.workers == 2 && g.serial == NULL && g.nflows == 0);
    result_free(&g);
    result r = run(2, &mbar_ptx, "mbar_phases", 16, 128, 6, 0);
    CHECK(r.workers == 2 && r.serial == NULL && r.nflows > 0);
    result_free(&r);
    /* clusters: the SMs holding a cluster's blocks run as one unit (distributed shared memory, a peer's
     * mbarriers, cluster barriers, TMA multicast); blocks of later clusters go to whichever slots free */
    same("clustered", &clu_ptx, "clustered", 24, 128, 10, 0, 2);
    same("dsmem", &cl2_ptx, "dsmem", 32, 64, 6, 0, 2);
    same("ws_gemm (clusters of 2)", &ws_ptx, "ws_gemm", 4, 384, 9, 0, 2);
    r = run(2, &ws_ptx, "ws_gemm", 4, 384, 9, 0);
    CHECK(r.rc == 0 && r.workers == 2 && r.serial == NULL && r.nflows > 0);
    size_t nonzero = 0; /* C holds the products (small integers: most are not 0) */
    for (size_t i = 0; i < r.out_bytes / 4; i++) {
        float v;
        memcpy(&v, r.out + 4 * i, 4);
        nonzero += v != 0;
    }
    CHECK(nonzero > r.out_bytes / 8);
    result_free(&r);
    result one = run(2, &stats_ptx, "ld_stride", 1, 128, 0, 1); /* one SM: one worker */
    CHECK(one.workers == 1 && one.serial == NULL);
    result_free(&one);
    mh_ptx_free(&stats_ptx);
    mh_ptx_free(&time_ptx);
    mh_ptx_free(&side_ptx);
    mh_ptx_free(&grid_ptx);
    mh_ptx_free(&mbar_ptx);
    mh_ptx_free(&dyn_ptx);
    mh_ptx_free(&wg_ptx);
    mh_ptx_free(&clu_ptx);
    mh_ptx_free(&cl2_ptx);
    mh_ptx_free(&ws_ptx);
    return check_report("test_emu_threads");
}
