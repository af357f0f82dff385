/* test_emu_time.c - emu's virtual time follows the memory system (issue 21): a
 * strided load's cycles grow with the lines a warp touches, a shared-memory column
 * read with 32-way bank conflicts takes many times the cycles of a padded one, and
 * the same launch gives the same cycles; shared atomics on one word serialise. */
#include "check.h"
#include "emu_util.h"

static mh_ptx_module mod;

static uint64_t cycles(mh_emu *d, const char *kernel, uint32_t grid, uint32_t block, const mh_emu_arg *args, uint32_t n)
{
    mh_emu_launch l = {.grid = {grid, 1, 1}, .block = {block, 1, 1}, .args = args, .nargs = n};
    mh_emu_stats st;
    mh_error e;
    int rc = mh_emu_run(d, &mod, kernel, &l, &st, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s: %s\n", kernel, e.message);
    return rc ? 0 : st.cycles;
}

static void strided(mh_emu *d)
{
    uint64_t x, y;
    mh_error e;
    CHECK(mh_emu_alloc(d, 4u << 20, &x, &e) == 0 && mh_emu_memset(d, x, 0, 4u << 20, &e) == 0);
    CHECK(mh_emu_alloc(d, 16 * 256 * 4, &y, &e) == 0);
    uint64_t c[6];
    unsigned reps = 16;
    printf("  strided load, 16 blocks of 256 on 4 SMs, 16 loads a thread:\n");
    for (int k = 0; k < 6; k++) {
        unsigned stride = 1u << k;
        mh_emu_arg a[] = {{&x, 8}, {&y, 8}, {&stride, 4}, {&reps, 4}};
        c[k] = cycles(d, "strided", 16, 256, a, 4);
        printf("    stride %2u: %8llu cycles (%.2fx stride 1)\n", stride, (unsigned long long)c[k],
               (double)c[k] / (double)c[0]);
        if (k) CHECK(c[k] >= c[k - 1]);
        if (k == 5) CHECK(c[k] == cycles(d, "strided", 16, 256, a, 4)); /* deterministic */
    }
    /* 32 lines a warp against 1: bound by the SM's port to L2 (issue 32: every load also waits for
     * the HBM's latency now, which stride 1 pays too, so the ratio fell from 12.6x to about 5x) */
    CHECK(c[5] > 4 * c[0]);
    CHECK(c[2] > c[0]);     /* 4 lines against 1 */
}

/* The cycles of kernel(out, arg, 32 reps) on 4 blocks of 256 with arg = a and with arg = b */
static void two_runs(mh_emu *d, const char *kernel, uint64_t out, unsigned a, unsigned b, uint64_t c[2])
{
    unsigned reps = 32, v[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        mh_emu_arg args[] = {{&out, 8}, {&v[i], 4}, {&reps, 4}};
        c[i] = cycles(d, kernel, 4, 256, args, 3);
    }
}

/* Shared-memory atomics: lanes on one word serialise, one wavefront a lane (timing only: the
 * counters' wavefronts are Nsight Compute's, which counts the request's banks). */
static void shared_atomics(mh_emu *d)
{
    uint64_t out, c[2];
    mh_error e;
    CHECK(mh_emu_alloc(d, 4 * 32 * 4, &out, &e) == 0);
    two_runs(d, "shared_hist", out, 0, 1, c); /* spread 0: one word; 1: 32 words in 32 banks */
    printf("  shared atomicAdd, 8 warps a block: %llu cycles with a warp's lanes on one word, %llu on 32 banks (%.2fx)\n",
           (unsigned long long)c[0], (unsigned long long)c[1], (double)c[0] / (double)c[1]);
    CHECK(c[0] > 4 * c[1]);
    uint32_t bins[32];
    CHECK(mh_emu_read(d, out, bins, sizeof bins, &e) == 0);
    for (int i = 0; i < 32; i++) CHECK(bins[i] == 256); /* spread 1: 256 threads x 32 reps over 32 bins */
}

static void bank_conflicts(mh_emu *d)
{
    uint64_t out, c[2];
    mh_error e;
    CHECK(mh_emu_alloc(d, 4 * 256 * 4, &out, &e) == 0);
    two_runs(d, "column_read", out, 0, 1, c); /* pad 0: 32-way conflicts; 1: none */
    printf("  column read of a 32x32 tile: %llu cycles unpadded (32-way conflicts), %llu padded (%.2fx)\n",
           (unsigned long long)c[0], (unsigned long long)c[1], (double)c[0] / (double)c[1]);
    CHECK(c[0] > 4 * c[1]);
}

int main(int argc, char **argv)
{
    if (parse_ptx_file(&mod, argc > 1 ? argv[1] : ".", "tests/ptx/mem_time.ptx")) return 1;
    mh_error e;
    mh_emu_opts o = {.num_sms = 4};
    mh_emu *d = mh_emu_create(&o, &e);
    CHECK(d != NULL);
    strided(d);
    bank_conflicts(d);
    shared_atomics(d);
    mh_emu_destroy(d);
    mh_ptx_free(&mod);
    return check_report("test_emu_time");
}
