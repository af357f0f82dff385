/* test_probes.c - probes instead of markers (issue 15): the kernel probe, natural loops (a region
 * per iteration, per whole loop, nested, by header label), regions around instructions (a spin
 * wait's whole loop), ranges between labels or lines, the default kernel probe, together with
 * markers, on PTX nobody wrote for the harness (the JAX Mosaic GPU fixture, Triton-style LLVM
 * output) and on ptx/ and tests/ptx kernels: on emu the outputs equal the plain kernel's and
 * the counts are exact, the launch sized too small first and then with exactly what it
 * needed, in both scopes and both record layouts; ptxas accepts every rewrite (where it is
 * installed); bad probes are errors naming the probe and the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dump_util.h"
#include "emu/emu.h"
#include "emu_util.h"
#include "instrument/instrument.h"
#include "frontend/ptx.h"

static const char *src;
static char ptxas[600];

static int parse_file(mh_ptx_module *m, const char *rel) { return parse_ptx_file(m, src, rel); }

enum { MAX_PROBES = 6, MAX_COUNTS = 8 };

typedef struct { const char *name; uint64_t count; } want_count;

typedef struct {
    const char *file, *kernel;
    uint32_t grid, block, smem;
    const char *args;
    uint32_t timed; /* arguments (bits) whose buffers hold times: not compared */
    int strict;     /* emu's strict mode: the added code reads no register before writing it */
    mh_probe probes[MAX_PROBES];
    uint32_t nprobes;
    want_count want[MAX_COUNTS];    /* closed regions of all traces, scope warp */
    want_count want_wg[MAX_COUNTS]; /* and scope warpgroup */
} probe_case;

/* Runs c->kernel of m; out gets the buffers' words (timed ones zeroed). */
static int run(mh_emu *d, const mh_ptx_module *m, const probe_case *c, arg_set *a, uint64_t trace, unsigned entries,
               uint64_t calib, uint32_t *out, mh_error *e)
{
    emu_kernel k = {c->kernel, c->grid, c->block, c->smem, c->timed};
    return emu_run_args(d, m, &k, a, trace, entries, calib, out, e);
}

/* Writes text to a temporary file and runs ptxas on it for the module's target; 1 when it passes
 * (or there is no ptxas). */
static int ptxas_ok(const char *text, size_t len)
{
    if (!ptxas[0]) return 1;
    char path[] = "/tmp/mgpu_probes_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    const char *t = strstr(text, ".target");
    int a = t && !strncmp(t + 7 + strspn(t + 7, " \t"), "sm_90a", 6);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o /dev/null >/dev/null 2>&1", ptxas, a ? "sm_90a" : "sm_90", path);
    int rc = system(cmd);
    if (rc) {
        char keep[64];
        snprintf(keep, sizeof keep, "/tmp/mgpu_probes_failed.ptx");
        rename(path, keep);
        fprintf(stderr, "  ptxas refused the rewrite (kept in %s)\n", keep);
    } else unlink(path);
    return rc == 0;
}

/* One case in one scope and layout: plain run, instrumented run with 8 entries (too few: the
 * counts go on), then with exactly what it said, as the launch's retry does. */
static void run_case(const probe_case *c, mh_scope scope, int aligned)
{
    mh_error e;
    mh_emu_opts eo = {.strict = c->strict};
    mh_emu *d = mh_emu_create(&eo, &e);
    arg_set a;
    args_parse(&a, c->args);
    uint32_t out_words = 0;
    for (uint32_t i = 0; i < a.nargs; i++)
        if (a.size[i] == 8) mh_emu_alloc(d, a.words[i] * 4ull + 4, &a.buf[i], &e), out_words += a.words[i];
    uint32_t *plain_out = calloc(out_words + 1, 4), *out = calloc(out_words + 1, 4);
    mh_ptx_module plain, inst;
    mh_instrumented r;
    const char *tag = aligned ? "aligned" : "legacy";
    CHECK(parse_file(&plain, c->file) == 0);
    int rc = run(d, &plain, c, &a, 0, 0, 0, plain_out, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s %s (plain): %s\n", c->file, c->kernel, e.message);
    mh_instrument_opts o = {.scope = scope, .aligned = aligned, .probes = c->probes, .nprobes = c->nprobes};
    rc = rc ? rc : mh_instrument_with(&plain, &o, &r, &e);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s %s: %s\n", c->file, c->kernel, e.message);
        goto out_plain;
    }
    CHECK(r.probe_points > 0 && mh_instrumented_has(&r, c->kernel));
    CHECK(ptxas_ok(r.text, r.len));
    rc = mh_ptx_parse(&inst, r.text, r.len, c->file, &e);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s: the rewrite does not parse: %s\n", c->file, e.message);
        mh_instrumented_free(&r);
        goto out_plain;
    }
    mh_spec s;
    mh_spec_init(&s, c->grid, c->block, scope, 8);
    s.partial = 1;
    mh_spec_validate(&s, &e);
    uint64_t T = s.num_traces, need = 0;
    unsigned entries = 8;
    for (int attempt = 0; attempt < 2; attempt++) {
        uint64_t words = T * entries, alloc, cal;
        mh_emu_alloc(d, words * 4 + 8, &alloc, &e);
        mh_emu_alloc(d, T * MH_CALIB_WORDS * 4, &cal, &e);
        mh_emu_memset(d, alloc, 0, words * 4 + 8, &e);
        mh_emu_memset(d, cal, 0, T * MH_CALIB_WORDS * 4, &e);
        rc = run(d, &inst, c, &a, alloc + r.trace_shift, entries, cal, out, &e);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "  %s %s (%s, %s): %s\n", c->file, c->kernel, mh_scope_name(scope), tag, e.message);
            break;
        }
        CHECK(memcmp(out, plain_out, out_words * 4ull) == 0);
        uint32_t *w = malloc(words * 4 + 8);
        mh_emu_read(d, alloc + r.trace_shift, w, words * 4, &e);
        uint64_t most = 0;
        for (uint64_t t = 0; t < T; t++)
            if (w[t * entries + 2] > most) most = w[t * entries + 2];
        if (attempt == 0) {
            need = 3 + most;
            entries = (unsigned)mh_instrumented_entries(&r, need);
        } else {
            CHECK(3 + most == need); /* exact past the capacity */
            /* the regions: they nest in every trace (the default dump checks), and their counts */
            s.entries = entries;
            mh_spec_validate(&s, &e);
            mh_summary sum;
            mh_summary_init(&sum, &r.names, &e);
            char *json = dump_words(&s, &r.names, w, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, &sum, &e);
            CHECK(json != NULL);
            if (!json) fprintf(stderr, "  %s %s (%s, %s): dump: %s\n", c->file, c->kernel, mh_scope_name(scope), tag, e.message);
            const want_count *want = scope == MH_SCOPE_WARP ? c->want : c->want_wg;
            for (int k = 0; json && k < MAX_COUNTS && want[k].name; k++) {
                uint64_t got = UINT64_MAX;
                for (size_t q = 0; q < r.names.n; q++)
                    if (!strcmp(r.names.v[q].name, want[k].name)) got = mh_summary_row(&sum, q).count;
                CHECK(got == want[k].count);
                if (got != want[k].count)
                    fprintf(stderr, "  %s %s (%s, %s): %s: %llu regions, want %llu\n", c->file, c->kernel,
                            mh_scope_name(scope), tag, want[k].name, (unsigned long long)got,
                            (unsigned long long)want[k].count);
            }
            free(json);
            mh_summary_free(&sum);
        }
        free(w);
        mh_emu_free(d, alloc, &e);
        mh_emu_free(d, cal, &e);
    }
    mh_ptx_free(&inst);
    mh_instrumented_free(&r);
out_plain:
    mh_ptx_free(&plain);
    args_free(&a);
    free(plain_out);
    free(out);
    mh_emu_destroy(d);
}

#define KERNEL(n) {MH_PROBE_KERNEL, n, NULL, 0, NULL, NULL, NULL, 0, 0}
#define LOOP(n, l, per) {MH_PROBE_LOOP, n, l, per, NULL, NULL, NULL, 0, 0}
#define AROUND(n, a) {MH_PROBE_AROUND, n, NULL, 0, a, NULL, NULL, 0, 0}
#define RANGE(n, f, t) {MH_PROBE_RANGE, n, NULL, 0, NULL, f, t, 0, 0}
#define LINES(n, f, t) {MH_PROBE_RANGE, n, NULL, 0, NULL, NULL, NULL, f, t}

static void cases(void)
{
    static const probe_case list[] = {
        /* alu_loop: nvcc unrolled the loop by 4 with a remainder loop, both with the header's source
         * line 12; iters = 22: 5 + 2 iterations per trace, two loops entered; with its marker "loop" */
        {"ptx/alu_loop.ptx", "alu_loop", 2, 64, 0, "z:128 u:22", 0, 1,
         {KERNEL("kernel"), LOOP("iter", NULL, 0), LOOP("whole", NULL, 1)}, 3,
         {{"kernel", 4}, {"loop", 4}, {"iter@12", 28}, {"whole@12", 8}},
         {{"kernel", 2}, {"loop", 2}, {"iter@12", 14}, {"whole@12", 4}}},
        /* one loop by its header's label */
        {"ptx/alu_loop.ptx", "alu_loop", 1, 32, 0, "z:32 u:22", 0, 0, {LOOP("main", "$L__BB0_3", 0)}, 1,
         {{"main@12", 5}}, {{"main@12", 5}}},
        /* tiled: the tile loop (5 tiles per block) and 2 bar.syncs per tile inside the markers' regions */
        {"ptx/tiled.ptx", "tiled_scale", 2, 64, 256, "f:640 z:640 u:640 g:2.0", 0, 0,
         {AROUND("sync", "bar.sync"), LOOP("tile", NULL, 0)}, 2,
         {{"sync", 40}, {"tile", 20}, {"load", 20}}, {{"sync", 20}, {"tile", 10}}},
        /* the JAX Mosaic GPU kernel, as JAX made it: its own trace buffer (argument 3) is written as
         * well; the kernel probe and its two bar.syncs, one trace per warpgroup */
        {"tests/fixtures/mosaic-h200/copy_bounds_wg.ptx", "body_mosaic_gpu_kernel", 8, 128, 128, "i:8192 z:8192 z:256",
         4, 0, {KERNEL("kernel"), AROUND("sync", "bar.sync")}, 2,
         {{"kernel", 32}, {"sync", 64}}, {{"kernel", 8}, {"sync", 16}}},
        /* Triton-style: the row loop (300 columns, 128 threads: lanes 0 of warps 0 and 1 take 3
         * columns, of warps 2 and 3 two: 10 iterations a block, warp scope; thread 0: 3), the tree of
         * bar.syncs (7 rounds), a range between labels, the kernel */
        {"tests/ptx/probes_triton.ptx", "row_sum", 3, 128, 512, "f:900 z:3 u:300 z:4 z:4", 0, 1,
         {KERNEL("kernel"), LOOP("row", NULL, 0), AROUND("sync", "bar.sync"), RANGE("tree", "$L__BB0_3", "$L__BB0_8")},
         4, {{"kernel", 12}, {"row@17", 30}, {"tree", 12}, {"sync", 96}, {"row@22", 84}},
         {{"kernel", 3}, {"row@17", 9}, {"tree", 3}, {"sync", 24}, {"row@22", 21}}},
        /* a range between lines */
        {"tests/ptx/probes_triton.ptx", "row_sum", 1, 128, 512, "f:300 z:1 u:300 z:4 z:4", 0, 0,
         {LINES("store", 82, 87)}, 1, {{"store", 4}}, {{"store", 1}}},
        /* spin waits: each mbarrier.try_wait is polled in a loop; the region is the loop: warp 1
         * waits for both phases (its lane 0 writes), warp 0 (thread 0, the warpgroup's writer) never */
        {"tests/ptx/mbarrier.ptx", "mbar_phases", 1, 64, 0, "z:128", 0, 1, {AROUND("wait", "mbarrier.try_wait")}, 1,
         {{"wait", 2}}, {{"wait", 0}}},
        /* named barriers, with the markers-free kernel */
        {"tests/ptx/named_barrier.ptx", "named_barriers", 1, 96, 0, "i:160 z:192 u:5", 0, 1,
         {KERNEL("kernel"), AROUND("bar", "bar.sync")}, 2, {{"kernel", 3}}, {{"kernel", 1}}},
        /* .func markers with the kernel probe around them (the markers' own outermost region is
         * named "kernel" too) */
        {"tests/ptx/func_markers.ptx", "func_markers", 1, 128, 0, "f:90 z:128 u:90 u:3", 0, 1, {KERNEL("entry")}, 1,
         {{"entry", 4}, {"kernel", 4}, {"outer", 11}, {"inner", 22}}, {{"entry", 1}, {"kernel", 1}, {"outer", 3}, {"inner", 6}}},
    };
    for (size_t i = 0; i < sizeof list / sizeof *list; i++)
        for (int k = 0; k < 4; k++) run_case(&list[i], k & 1 ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, k >> 1);
}

/* The kernel probe by default: an entry with neither markers nor probes gets it; one with
 * markers does not; a module without markers is still unchanged without it. */
static void default_probe(void)
{
    mh_ptx_module m;
    mh_instrumented r;
    mh_error e;
    CHECK(parse_file(&m, "tests/ptx/probes_triton.ptx") == 0);
    CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) == 0);
    CHECK(r.markers == 0 && r.probe_points == 0 && r.nkernels == 0 && !strcmp(r.text, m.text));
    mh_instrumented_free(&r);
    mh_instrument_opts o = {.scope = MH_SCOPE_WARP, .kernel_probe = 1};
    CHECK(mh_instrument_with(&m, &o, &r, &e) == 0);
    CHECK(r.nkernels == 1 && r.probe_points == 2 && r.names.n == 1 && !strcmp(r.names.v[0].name, "kernel"));
    CHECK(ptxas_ok(r.text, r.len));
    mh_instrumented_free(&r);
    mh_ptx_free(&m);
    CHECK(parse_file(&m, "ptx/copy.ptx") == 0);
    CHECK(mh_instrument_with(&m, &o, &r, &e) == 0);
    CHECK(r.probe_points == 0 && r.markers == 2 && r.names.n == 1);
    mh_instrumented_free(&r);
    mh_ptx_free(&m);
    /* and it runs: one region per trace */
    probe_case c = {"tests/ptx/probes_triton.ptx", "row_sum", 2, 128, 512, "f:600 z:2 u:300 z:4 z:4", 0, 1,
                    {KERNEL("kernel")}, 1, {{"kernel", 8}}, {{"kernel", 2}}};
    run_case(&c, MH_SCOPE_WARP, 0);
    run_case(&c, MH_SCOPE_WARPGROUP, 1);
}

/* Bad probes: errors before anything runs, naming the probe and why. */
static void errors(void)
{
    static const struct { const char *file; mh_probe p; const char *msg; } bad[] = {
        {"ptx/alu_loop.ptx", AROUND("w", "wgmma.wait_group"), "probe \"w\": around = \"wgmma.wait_group\" matches nothing in any kernel"},
        {"ptx/copy.ptx", LOOP("x", "$L__BB0_1", 0), "matches nothing"},
        {"ptx/alu_loop.ptx", LOOP("x", "$L__BB0_4", 0), "probe \"x\": label $L__BB0_4 of alu_loop is not the header of a loop"},
        {"tests/ptx/probes_triton.ptx", RANGE("r", "$L__BB0_8", "$L__BB0_3"), "probe \"r\": from $L__BB0_8 does not dominate its to $L__BB0_3"},
        {"tests/ptx/probes_triton.ptx", RANGE("r", "$L__BB0_1", "$L__BB0_3"), "does not dominate"},
        {"tests/ptx/probes_triton.ptx", AROUND("b", "bra"), "probe \"b\": around = \"bra\" matches a branch or exit of row_sum"},
        /* a range that would not nest with the markers: from inside "load" to inside "compute" */
        {"ptx/tiled.ptx", LINES("cross", 83, 96), "does not close the innermost open region"},
        {"tests/ptx/probes_triton.ptx", RANGE("r", "$L__BB9_9", "$L__BB0_3"), "matches nothing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mh_ptx_module m;
        mh_instrumented r;
        mh_error e;
        if (parse_file(&m, bad[i].file)) { CHECK(0); continue; }
        mh_instrument_opts o = {.scope = MH_SCOPE_WARP, .probes = &bad[i].p, .nprobes = 1};
        int rc = mh_instrument_with(&m, &o, &r, &e);
        CHECK(rc != 0);
        if (!rc) { fprintf(stderr, "  case %zu: accepted\n", i); mh_instrumented_free(&r); }
        else {
            CHECK_CONTAINS(e.message, bad[i].msg);
            CHECK(e.code == MH_E_BAD_ARGUMENT || e.code == MH_E_PTX_SYNTAX);
        }
        mh_ptx_free(&m);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    src = argv[1];
    const char *p = getenv("PATH");
    for (const char *d = p; d && *d && !ptxas[0];) {
        size_t n = strcspn(d, ":");
        snprintf(ptxas, sizeof ptxas, "%.*s/ptxas", (int)n, d);
        FILE *f = fopen(ptxas, "rb");
        if (f) fclose(f); else ptxas[0] = 0;
        d += n + (d[n] == ':');
    }
    if (!ptxas[0]) {
        FILE *f = fopen("/usr/local/cuda/bin/ptxas", "rb");
        if (f) fclose(f), snprintf(ptxas, sizeof ptxas, "/usr/local/cuda/bin/ptxas");
    }
    fprintf(stderr, "  ptxas: %s\n", ptxas[0] ? ptxas : "none (the rewrites are not compiled)");
    cases();
    default_probe();
    errors();
    return check_report("test_probes");
}
