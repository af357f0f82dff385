/* test_emu_grid.c - emu runs the whole device at once (issue 21): blocks that wait on
 * blocks of other SMs (a scan chained by blockIdx over ten waves, a single-pass scan with
 * decoupled look-back, a persistent queue of atomic tickets and flags) finish with the
 * host's answer; a cooperative launch runs cg::this_grid().sync(), a grid that cannot be
 * resident at once is refused before it runs, and a grid-wide spin is reported as a
 * deadlock naming its line within seconds; the same launch gives the same cycles. */
#include <time.h>
#include "check.h"
#include "emu_util.h"

static mh_ptx_module grid_ptx;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static mh_emu *device(uint32_t sms)
{
    mh_emu_opts o = {.num_sms = sms, .max_warp_insns = 0};
    mh_error e;
    mh_emu *d = mh_emu_create(&o, &e);
    CHECK(d != NULL);
    return d;
}

static int run(mh_emu *d, const char *kernel, uint32_t grid, uint32_t block, const mh_emu_arg *args, uint32_t n,
               int cooperative, mh_emu_stats *st, mh_error *e)
{
    mh_emu_launch l = {.grid = {grid, 1, 1}, .block = {block, 1, 1}, .args = args, .nargs = n, .timeout_s = 60};
    mh_emu_extra x = {.cooperative = cooperative};
    mh_emu_stats s;
    int rc = mh_emu_run_ex(d, &grid_ptx, kernel, &l, &x, st ? st : &s, e) ? (int)e->code : 0;
    if (rc) fprintf(stderr, "  %s: %s\n", kernel, e->message);
    free((st ? st : &s)->output);
    if ((st ? st : &s)->counts) (st ? st : &s)->counts->release((st ? st : &s)->counts);
    return rc;
}

/* prefix[b] is the sum of x over blocks 0..b (B threads a block) */
static int prefix_ok(const int *x, const int *prefix, int blocks, int B)
{
    int want = 0, ok = 1;
    for (int b = 0; b < blocks; b++) {
        for (int t = 0; t < B; t++) want += x[b * B + t];
        ok &= prefix[b] == want;
    }
    return ok;
}

/* block b waits for block b-1: 4 SMs x 2 blocks of 1024 threads, 80 blocks (ten waves) */
static void chained_scan(void)
{
    mh_emu *d = device(4);
    enum { B = 1024, G = 80 };
    int *x = malloc(sizeof(int) * B * G), prefix[G];
    for (int i = 0; i < B * G; i++) x[i] = (i * 7) % 13 - 6;
    uint64_t dx = emu_upload(d, x, sizeof(int) * B * G), dp = emu_upload(d, NULL, sizeof prefix),
             dr = emu_upload(d, NULL, 4 * G);
    mh_emu_arg a[] = {{&dx, 8}, {&dp, 8}, {&dr, 8}};
    mh_emu_stats st;
    mh_error e;
    CHECK(run(d, "chained_scan", G, B, a, 3, 0, &st, &e) == 0);
    CHECK(st.blocks_per_sm == 2);
    mh_emu_read(d, dp, prefix, sizeof prefix, &e);
    CHECK(prefix_ok(x, prefix, G, B));
    /* the same launch again: the same virtual time */
    uint64_t cycles = st.cycles;
    mh_emu_memset(d, dr, 0, 4 * G, &e);
    CHECK(run(d, "chained_scan", G, B, a, 3, 0, &st, &e) == 0 && st.cycles == cycles);
    free(x);
    mh_emu_destroy(d);
}

/* the shape: 133 blocks of 64 threads on 132 SMs */
static void chained_scan_default_device(void)
{
    mh_emu *d = device(0);
    enum { B = 64, G = 133 };
    int x[B * G], prefix[G];
    for (int i = 0; i < B * G; i++) x[i] = i % 5;
    uint64_t dx = emu_upload(d, x, sizeof x), dp = emu_upload(d, NULL, sizeof prefix), dr = emu_upload(d, NULL, 4 * G);
    mh_emu_arg a[] = {{&dx, 8}, {&dp, 8}, {&dr, 8}};
    mh_error e;
    double t0 = seconds();
    CHECK(run(d, "chained_scan", G, B, a, 3, 0, NULL, &e) == 0);
    printf("  chained_scan, 133 blocks of 64 on 132 SMs: %.2f s\n", seconds() - t0);
    mh_emu_read(d, dp, prefix, sizeof prefix, &e);
    CHECK(prefix_ok(x, prefix, G, B));
    mh_emu_destroy(d);
}

/* decoupled look-back: 4 SMs x 8 blocks of 256, 320 blocks (ten waves) */
static void lookback_scan(void)
{
    mh_emu *d = device(4);
    enum { B = 256, G = 320, N = B * G };
    int *x = malloc(sizeof(int) * N), *out = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++) x[i] = (i * 31) % 17 - 8;
    uint64_t dx = emu_upload(d, x, sizeof(int) * N), dout = emu_upload(d, NULL, sizeof(int) * N),
             ds = emu_upload(d, NULL, 8 * G);
    mh_emu_arg a[] = {{&dx, 8}, {&dout, 8}, {&ds, 8}};
    mh_emu_stats st;
    mh_error e;
    CHECK(run(d, "lookback_scan", G, B, a, 3, 0, &st, &e) == 0);
    CHECK(st.blocks_per_sm == 8);
    mh_emu_read(d, dout, out, sizeof(int) * N, &e);
    int want = 0, bad = -1;
    for (int i = 0; i < N; i++) {
        want += x[i];
        if (out[i] != want && bad < 0) bad = i;
    }
    CHECK(bad < 0);
    if (bad >= 0) fprintf(stderr, "  lookback_scan: out[%d] = %d\n", bad, out[bad]);
    free(x);
    free(out);
    mh_emu_destroy(d);
}

/* a persistent queue: 8 blocks take 500 items by ticket; each waits for the item before it */
static void persistent_queue(void)
{
    mh_emu *d = device(4);
    enum { G = 8, B = 128, N = 500 };
    int x[N], out[N];
    unsigned taken[G], n = N;
    for (int i = 0; i < N; i++) x[i] = i % 9 - 4;
    uint64_t dx = emu_upload(d, x, sizeof x), dout = emu_upload(d, NULL, sizeof out), dr = emu_upload(d, NULL, 4 * N),
             dt = emu_upload(d, NULL, 4), dk = emu_upload(d, NULL, sizeof taken);
    mh_emu_arg a[] = {{&dx, 8}, {&dout, 8}, {&dr, 8}, {&dt, 8}, {&n, 4}, {&dk, 8}};
    mh_error e;
    CHECK(run(d, "persistent_queue", G, B, a, 6, 0, NULL, &e) == 0);
    mh_emu_read(d, dout, out, sizeof out, &e);
    mh_emu_read(d, dk, taken, sizeof taken, &e);
    int want = 0, ok = 1;
    unsigned all = 0, blocks = 0;
    for (int i = 0; i < N; i++) ok &= out[i] == (want += x[i]);
    for (int b = 0; b < G; b++) all += taken[b], blocks += taken[b] > 0;
    CHECK(ok && all == N);
    CHECK(blocks > 1); /* the blocks shared the work: they ran at once */
    mh_emu_destroy(d);
}

/* cooperative groups: grid.sync() twice; refused without a cooperative launch (the kernel traps,
 * as on a GPU) and when the grid cannot be resident at once */
static void cooperative(void)
{
    mh_emu *d = device(4);
    enum { B = 256, G = 32, N = B * G - 100 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), total = 0;
    double sum = 0;
    for (int i = 0; i < N; i++) sum += x[i] = (float)(i % 10 + 1);
    uint64_t dx = emu_upload(d, x, sizeof(float) * N), dp = emu_upload(d, NULL, 4 * (G + 1)),
             dt = emu_upload(d, NULL, 4);
    unsigned n = N;
    mh_emu_arg a[] = {{&dx, 8}, {&dp, 8}, {&dt, 8}, {&n, 4}};
    mh_error e;
    CHECK(run(d, "grid_normalise", G, B, a, 4, 1, NULL, &e) == 0);
    mh_emu_read(d, dt, &total, 4, &e);
    mh_emu_read(d, dx, y, sizeof(float) * N, &e);
    int ok = total == (float)sum;
    for (int i = 0; i < N; i++) ok &= y[i] == x[i] / total;
    CHECK(ok);
    /* not cooperative: the grid workspace is missing and the kernel traps */
    CHECK(mh_emu_run_ex(d, &grid_ptx, "grid_normalise", &(mh_emu_launch){.grid = {G, 1, 1}, .block = {B, 1, 1},
                        .args = a, .nargs = 4}, NULL, NULL, &e) != 0 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "only a cooperative launch has (launch{cooperative = true})");
    /* 33 blocks of 256 threads: 8 an SM x 4 SMs = 32 at once */
    CHECK(run(d, "grid_normalise", G + 1, B, a, 4, 1, NULL, &e) == MH_E_BAD_ARGUMENT);
    CHECK_CONTAINS(e.message, "grid_normalise: a cooperative grid of 33 blocks cannot be resident at once: 8 blocks "
                              "per SM x 4 SMs = 32");
    free(x);
    free(y);
    mh_emu_destroy(d);
}

/* every block spins on a flag nothing sets: a deadlock, in seconds, naming the line; with more
 * blocks than fit, the message says how many wait for a slot */
static void deadlock(void)
{
    mh_emu *d = device(0);
    uint64_t flag = emu_upload(d, NULL, 4), out = emu_upload(d, NULL, 4 * 1000);
    mh_emu_arg a[] = {{&flag, 8}, {&out, 8}};
    mh_error e;
    double t0 = seconds();
    CHECK(run(d, "spin_forever", 264, 64, a, 2, 0, NULL, &e) == MH_E_KERNEL_FAULT);
    double t = seconds() - t0;
    printf("  deadlock of 264 blocks found in %.2f s\n", t);
    CHECK(t < 5);
    CHECK_CONTAINS(e.message, "deadlock: no warp has made progress");
    CHECK_CONTAINS(e.message, "tests/ptx/grid.ptx:");
    CHECK_CONTAINS(e.message, "(ld) block (0,0,0), (1,0,0), (2,0,0), (3,0,0), ... (264 blocks)");
    CHECK_CONTAINS(e.message, "(264 blocks)");
    CHECK(e.line > 0 && strstr(grid_ptx.text, "ld.volatile.global") != NULL);
    /* one block alone (one SM with work): found as well (the hostile round found it hanging) */
    t0 = seconds();
    CHECK(run(d, "spin_forever", 1, 32, a, 2, 0, NULL, &e) == MH_E_KERNEL_FAULT);
    CHECK(seconds() - t0 < 5);
    CHECK_CONTAINS(e.message, "(ld) block (0,0,0) (1 block)");
    /* 1000 blocks of 1024 threads: 2 an SM at once, the rest never get a slot */
    t0 = seconds();
    CHECK(run(d, "spin_forever", 1000, 1024, a, 2, 0, NULL, &e) == MH_E_KERNEL_FAULT);
    printf("  deadlock of 1000 blocks (264 resident) found in %.2f s\n", seconds() - t0);
    CHECK(seconds() - t0 < 5);
    CHECK_CONTAINS(e.message, "736 blocks of the grid are not resident yet (an SM holds 2 at once, 132 SMs");
    mh_emu_destroy(d);
}

/* a module of its own, parsed from text */
static int parse_text(mh_ptx_module *m, const char *text, const char *path)
{
    mh_error e;
    int rc = mh_ptx_parse(m, text, strlen(text), path, &e);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    return rc;
}

/* threads waiting at different barriers never meet: a deadlock, as on a GPU (issue 25: emu
 * used to open bar.sync 0 for warps waiting at the counted barrier 1) */
static void barrier_mismatch(void)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry counted()\n{\n.reg .b32 %r<2>;\n.reg .pred %p<2>;\n"
        "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra W0;\n"
        "bar.sync 0;\nret;\n"                       /* line 11: warp 1 */
        "W0:\nbar.sync 1, 64;\nret;\n}\n"           /* line 14: warp 0 */
        ".visible .entry ids()\n{\n.reg .b32 %r<2>;\n.reg .pred %p<2>;\n"
        "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra V0;\n"
        "bar.sync 0;\nret;\nV0:\nbar.sync 1;\nret;\n}\n"
        ".visible .entry big_local()\n{\n.local .align 4 .b8 buf[4294967296];\n.reg .b64 %rd<2>;\n"
        "mov.u64 %rd1, buf;\nret;\n}\n"
        ".visible .entry fine_local()\n{\n.local .align 4 .b8 buf[262144];\n.reg .b32 %r<2>;\n"
        "mov.u32 %r1, 7;\nst.local.u32 [buf+262140], %r1;\nret;\n}\n";
    mh_ptx_module m;
    if (parse_text(&m, text, "barriers.ptx")) { CHECK(0); return; }
    mh_emu *d = device(4);
    mh_error e;
    mh_emu_launch l = {.grid = {1, 1, 1}, .block = {64, 1, 1}, .timeout_s = 20};
    CHECK(mh_emu_run(d, &m, "counted", &l, NULL, &e) != 0 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "deadlock: thread (32,0,0) waits at bar.sync 0 for every thread of the block, while "
                              "thread (0,0,0) waits at the counted barrier 1");
    CHECK(mh_emu_run(d, &m, "ids", &l, NULL, &e) != 0 && e.code == MH_E_KERNEL_FAULT);
    CHECK_CONTAINS(e.message, "deadlock: thread (0,0,0) waits at bar.sync 1 for every thread of the block, while "
                              "thread (32,0,0) waits at bar.sync 0");
    /* local memory past the driver's 512 KiB a thread is refused, naming the kernel; 256 KiB a
     * thread in 8 blocks of 1024 threads (2 GiB if all of it were taken) runs */
    CHECK(mh_emu_run(d, &m, "big_local", &l, NULL, &e) == MH_E_LAUNCH_FAILED);
    CHECK_CONTAINS(e.message, "big_local: 4294967296 bytes of local memory per thread: more than the 524288");
    l.grid[0] = 8;
    l.block[0] = 1024;
    CHECK(mh_emu_run(d, &m, "fine_local", &l, NULL, &e) == 0);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
}

/* Runs kernel `name` of PTX `text` (params: out, salt) on B blocks of T threads twice, with salt 1
 * and 2, on a device of 4 SMs, and checks thread i's word against want(i % T, T, salt). */
static void run_salted(const char *text, const char *name, uint32_t B, uint32_t T,
                       uint32_t (*want)(uint32_t t, uint32_t T, uint32_t salt))
{
    char file[64];
    snprintf(file, sizeof file, "%s.ptx", name);
    mh_ptx_module m;
    if (parse_text(&m, text, file)) { CHECK(0); return; }
    mh_emu *d = device(4);
    uint64_t out = emu_upload(d, NULL, (uint64_t)B * T * 4);
    uint32_t *got = malloc((size_t)B * T * 4);
    CHECK(got != NULL);
    for (uint32_t salt = 1; got && salt <= 2; salt++) {
        mh_emu_arg args[] = {ARG(out), ARG(salt)};
        mh_error e;
        mh_emu_launch l = {.grid = {B, 1, 1}, .block = {T, 1, 1}, .args = args, .nargs = 2, .timeout_s = 20};
        CHECK(mh_emu_run(d, &m, name, &l, NULL, &e) == 0);
        CHECK(mh_emu_read(d, out, got, (size_t)B * T * 4, &e) == 0);
        int bad = 0;
        for (uint32_t i = 0; i < B * T; i++) {
            uint32_t w = want(i % T, T, salt);
            if (got[i] != w && bad++ < 3) fprintf(stderr, "  thread %u: %u, want %u\n", i, got[i], w);
        }
        CHECK(bad == 0);
    }
    free(got);
    mh_emu_destroy(d);
    mh_ptx_free(&m);
}

static uint32_t pack_want(uint32_t t, uint32_t T, uint32_t salt)
{
    (void)T;
    return (t < 16 ? 7 : 0) + salt + (t < 40 ? 3 * t : 0);
}

static uint32_t fold_want(uint32_t t, uint32_t T, uint32_t salt)
{
    return salt + T + 1 + salt + (t < 40 ? 5 + salt : salt) + 1000;
}

/* registers packed by live range (emu_regpack.c) keep every lane's values: a guarded write (the
 * other lanes keep 0), a register never written (reads 0), a loop on half the threads, and dead
 * writes at the end that leave values in the rows a next block of the same slot starts with (rows
 * read before a write are cleared for each block); 200 blocks on 4 SMs reuse each slot */
static void packed_registers(void)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry pack(.param .u64 out, .param .u32 salt)\n{\n"
        ".reg .b32 %r<12>;\n.reg .pred %p<3>;\n.reg .b64 %rd<4>;\n"
        "ld.param.u64 %rd1, [out];\nld.param.u32 %r9, [salt];\n"
        "mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmad.lo.s32 %r7, %r2, 64, %r1;\n"
        "setp.lt.u32 %p1, %r1, 16;\n@%p1 mov.u32 %r3, 7;\nadd.u32 %r4, %r3, %r9;\n"
        "mul.lo.u32 %r5, %r6, 3;\nadd.u32 %r4, %r4, %r5;\n"
        "mov.u32 %r8, 0;\nsetp.ge.u32 %p2, %r1, 40;\n@%p2 bra SKIP;\nmov.u32 %r10, 0;\n"
        "LOOP:\nadd.u32 %r8, %r8, %r1;\nadd.u32 %r10, %r10, 1;\nsetp.lt.u32 %p1, %r10, 3;\n@%p1 bra LOOP;\n"
        "SKIP:\nadd.u32 %r4, %r4, %r8;\nmul.wide.u32 %rd2, %r7, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
        "st.global.u32 [%rd3], %r4;\n"
        "mov.u32 %r3, 12345;\nmov.u32 %r6, 999;\nmov.u32 %r11, 77;\nadd.u32 %r5, %r11, %r3;\nret;\n}\n";
    run_salted(text, "pack", 200, 64, pack_want);
}

/* launch constants folded into immediates (emu_regpack.c fold_consts) only where every read sees
 * the constant: a register read before its ld.param (reads 0), one written twice, one written in
 * code a branch skips and read after it (the lanes that skipped read 0), a fold inside mad, a
 * partial second warp (the general path runs the folded writes), and a second launch with another
 * parameter (the values are the launch's) */
static void folded_consts(void)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry fold(.param .u64 out, .param .u32 salt)\n{\n"
        ".reg .b32 %r<12>;\n.reg .pred %p<3>;\n.reg .b64 %rd<4>;\n"
        "ld.param.u64 %rd1, [out];\nadd.u32 %r5, %r2, 1;\nld.param.u32 %r2, [salt];\n"
        "ld.param.u32 %r4, [salt];\nmov.u32 %r6, %ntid.x;\nmov.u32 %r1, %tid.x;\nmov.u32 %r8, %ctaid.x;\n"
        "add.u32 %r7, %r4, %r6;\nadd.u32 %r7, %r7, %r5;\nadd.u32 %r7, %r7, %r2;\nld.param.u32 %r3, [salt];\n"
        "setp.ge.u32 %p1, %r1, 40;\n@%p1 bra SKIP;\nmov.u32 %r3, 5;\nld.param.u32 %r10, [salt];\n"
        "SKIP:\nadd.u32 %r7, %r7, %r3;\nadd.u32 %r7, %r7, %r10;\nmov.u32 %r11, 1000;\nadd.u32 %r7, %r7, %r11;\n"
        "mad.lo.s32 %r9, %r8, %r6, %r1;\nmul.wide.u32 %rd2, %r9, 4;\n"
        "add.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r7;\nret;\n}\n";
    run_salted(text, "fold", 100, 48, fold_want);
}

int main(int argc, char **argv)
{
    if (parse_ptx_file(&grid_ptx, argc > 1 ? argv[1] : ".", "tests/ptx/grid.ptx")) return 1;
    chained_scan();
    chained_scan_default_device();
    lookback_scan();
    persistent_queue();
    cooperative();
    deadlock();
    barrier_mismatch();
    packed_registers();
    folded_consts();
    mh_ptx_free(&grid_ptx);
    return check_report("test_emu_grid");
}
