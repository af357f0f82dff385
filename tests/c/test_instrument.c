/* test_instrument.c - PTX instrumentation from markers: the golden rewrite,
 * modules without markers untouched, marker errors with their lines, and
 * instrumented kernels run on emu: same outputs, exact counts, an overflow
 * that reports exactly the entries needed, and the retry with that number. */
#include <math.h>
#include "check.h"
#include "dump_util.h"
#include "emu/emu.h"
#include "emu_util.h"
#include "instrument/instrument.h"
#include "emu/emu_counters.h"
#include "frontend/ptx.h"

static const char *src;

static char *slurp(const char *rel, size_t *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", src, rel);
    return read_file_all(path, n);
}

static int parse_file(mh_ptx_module *m, const char *rel) { return parse_ptx_file(m, src, rel); }

static void golden(void)
{
    mh_ptx_module m;
    mh_instrumented r;
    mh_error e;
    CHECK(parse_file(&m, "tests/golden/mini.ptx") == 0);
    CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) == 0);
    size_t n;
    char *want = slurp("tests/golden/mini.warp.ptx", &n);
    CHECK(want && r.len == n && memcmp(r.text, want, n) == 0);
    CHECK(r.markers == 2 && r.nkernels == 1 && mh_instrumented_has(&r, "mini"));
    CHECK(r.names.n == 1);
    CHECK_STR(r.names.v[0].name, "store");
    free(want);
    mh_instrumented_free(&r);
    mh_ptx_free(&m);

    /* instrumenting twice is refused: the reserved names are taken */
    CHECK(parse_file(&m, "tests/golden/mini.warp.ptx") == 0);
    CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "uses the prefix __mgpu, which the instrumentation reserves");
    mh_ptx_free(&m);

    /* no markers: nothing to do */
    CHECK(parse_file(&m, "tests/fixtures/mosaic-h200/copy_bounds_wg.ptx") == 0);
    CHECK(mh_instrument(&m, MH_SCOPE_WARPGROUP, &r, &e) == 0);
    CHECK(r.markers == 0 && r.nkernels == 0);
    mh_instrumented_free(&r);
    mh_ptx_free(&m);
}

static void errors(void)
{
    static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n"; /* 3 lines */
    static const struct { const char *body; int line; const char *msg; } cases[] = {
        {".visible .entry k()\n{\n// @mgpu end a\nret;\n}\n", 6, "end \"a\" without its begin"},
        {".visible .entry k()\n{\n// @mgpu begin a\n// @mgpu begin b\n// @mgpu end a\n// @mgpu end b\nret;\n}\n", 8,
         "end \"a\" does not close the innermost open region (open: [\"a\", \"b\"])"},
        {".visible .entry k()\n{\n// @mgpu begin a\n// @mgpu end a\n// @mgpu end a\nret;\n}\n", 8,
         "end \"a\" without its begin"},
        {".visible .entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\nld.param.u32 %r1, [n];\n"
         "setp.eq.u32 %p1, %r1, 0;\n@%p1 bra L;\n// @mgpu begin a\nL:\n// @mgpu end a\nret;\n}\n",
         13, "end \"a\" without its begin on some path"}, /* the exit tail ended "a" on the fall-through (issue 24) */
        {".visible .entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\nld.param.u32 %r1, [n];\n"
         "setp.eq.u32 %p1, %r1, 0;\n@%p1 bra L;\n// @mgpu begin a\nL:\nadd.u32 %r1, %r1, 1;\n@%p1 bra M;\nM:\nret;\n}\n",
         13, "paths into this line of k have different open regions"}, /* not an exit tail: a branch follows */
        {".func f()\n{\n// @mgpu begin a\nret;\n}\n.visible .entry k()\n{\ncall f;\nret;\n}\n", 7,
         "region \"a\" is still open where .func f returns: a .func's regions must end before it returns"},
        {".func f(.param .u32 x)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\nld.param.u32 %r1, [x];\nsetp.eq.u32 %p1, %r1, 0;\n"
         "// @mgpu begin a\n@%p1 ret;\n// @mgpu end a\nret;\n}\n", 11, "region \"a\" is still open where .func f returns"},
        {".visible .entry k()\n{\n// @mgpu start a\nret;\n}\n", 6, "bad marker"},
        {".visible .entry k()\n{\n// @mgpu begin\nret;\n}\n", 6, "marker without a region name"},
        /* a bad marker after good ones: the names found so far are freed (ASan's leak check) */
        {".visible .entry k()\n{\n// @mgpu begin a\n// @mgpu end a\n// @mgpu stop a\nret;\n}\n", 8, "bad marker"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", head, cases[i].body);
        mh_ptx_module m;
        mh_instrumented r;
        mh_error e;
        int rc = mh_ptx_parse(&m, text, strlen(text), "t.ptx", &e);
        CHECK(rc == 0);
        if (rc) { fprintf(stderr, "  case %zu: %s\n", i, e.message); continue; }
        CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) != 0);
        CHECK(e.code == MH_E_PTX_SYNTAX || e.code == MH_E_PTX_UNSUPPORTED);
        CHECK_CONTAINS(e.message, cases[i].msg);
        CHECK(e.line == cases[i].line);
        if (e.line != cases[i].line) fprintf(stderr, "  case %zu: line %lld, expected %d\n", i, (long long)e.line, cases[i].line);
        mh_ptx_free(&m);
    }
}

/* Line `n` (from 1) of text as a string (static buffer); "" past the end. */
static const char *nth_line(const char *text, uint32_t n, char *buf, size_t size)
{
    const char *p = text;
    for (uint32_t l = 1; l < n && p; l++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return "";
    size_t len = strcspn(p, "\n");
    snprintf(buf, size, "%.*s", (int)(len < size - 1 ? len : size - 1), p);
    return buf;
}

/* The line map back from the rewritten text: every line the instrumentation
 * did not add is the original line it maps to (exactly, when no insertion
 * touches it), every added line is harness code, and every original line is
 * still there.  On every kernel module with markers, both scopes. */
static void line_map(void)
{
    static const char *files[] = {"ptx/tiled.ptx", "ptx/reduce.ptx", "ptx/persistent.ptx", "ptx/spin.ptx",
                                  "ptx/copy.ptx", "tests/golden/mini.ptx", "tests/ptx/llvm_tiled.ptx"};
    for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++)
        for (int scope = 0; scope < 2; scope++) {
            mh_ptx_module m;
            mh_instrumented r;
            mh_error e;
            if (parse_file(&m, files[fi])) { CHECK(0); continue; }
            CHECK(mh_instrument(&m, scope ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, &r, &e) == 0);
            uint32_t orig_lines = 1, lines = 1, bad = 0, seen_max = 0;
            for (const char *c = m.text; *c; c++) orig_lines += *c == '\n';
            for (const char *c = r.text; *c; c++) lines += *c == '\n';
            char *seen = calloc(orig_lines + 2, 1);
            for (uint32_t l = 1; l <= lines; l++) {
                int added;
                uint32_t o = mh_instrumented_line(&r, l, &added);
                char a[512], b[512];
                const char *now = nth_line(r.text, l, a, sizeof a), *was = nth_line(m.text, o, b, sizeof b);
                if (o < 1 || o > orig_lines) bad++;
                else if (added) bad += !strstr(now, "mgpu") && strspn(now, "\t ") != strlen(now);
                else {
                    seen[o] = 1;
                    /* an original line: the same text, or (where an insertion splits it) a part of it */
                    bad += strcmp(now, was) && !strstr(was, now) && !strstr(now, was) &&
                           strncmp(now, was, 8) && strncmp(now + strlen(now) - (strlen(now) > 8 ? 8 : 0),
                                                           was + strlen(was) - (strlen(was) > 8 ? 8 : 0), 8);
                }
                if (o > seen_max) seen_max = o;
            }
            uint32_t missing = 0;
            for (uint32_t o = 1; o <= orig_lines; o++) missing += !seen[o];
            CHECK(bad == 0 && missing == 0 && seen_max == orig_lines);
            if (bad || missing) fprintf(stderr, "  %s scope %d: %u bad, %u missing\n", files[fi], scope, bad, missing);
            free(seen);
            mh_instrumented_free(&r);
            mh_ptx_free(&m);
        }
}

/* PTX is text: a NUL byte (a cubin given as PTX, say) is refused with its line, before
 * anything takes offsets into the text with strlen */
static void nul_byte(void)
{
    static const char text[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n// @mgpu "
                               "begin a\n\0\n// @mgpu end a\nret;\n}\n";
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, text, sizeof text - 1, "nul.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK(e.line == 7);
    CHECK_CONTAINS(e.message, "nul.ptx:7: a NUL byte at offset 83: PTX is text");
    /* an instruction kept as text (cluster barriers) instruments; control flow with a modifier the front
     * end does not know is refused, as the instrumentation follows it */
    static const char cluster[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                  "// @mgpu begin a\nbarrier.cluster.arrive.release.aligned;\n"
                                  "barrier.cluster.wait.acquire.aligned;\n// @mgpu end a\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, cluster, sizeof cluster - 1, "cl.ptx", &e) == 0);
    mh_instrumented r;
    CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) == 0 && r.markers == 2);
    mh_instrumented_free(&r);
    mh_ptx_free(&m);
    static const char weird_ret[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret.weird;\n}\n";
    CHECK(mh_ptx_parse(&m, weird_ret, sizeof weird_ret - 1, "w.ptx", &e) == MH_E_PTX_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "w.ptx:6: 'ret.weird': modifier '.weird' is not supported");
    /* a marker inside a statement (decoded or kept as text) would get code inserted into it */
    static const char split[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                ".reg .b32 %r<2>;\nadd.s32 %r1,\n// @mgpu begin a\n%r1, 1;\n// @mgpu end a\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, split, sizeof split - 1, "split.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "split.ptx:8: a marker inside the statement that starts on line 7");
    static const char split2[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                 "wmma.mystery.sync {%r1,\n// @mgpu begin a\n%r2};\n// @mgpu end a\nret;\n}\n";
    CHECK(mh_ptx_parse(&m, split2, sizeof split2 - 1, "split2.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK_CONTAINS(e.message, "split2.ptx:7: a marker inside the statement that starts on line 6");
}

typedef struct {
    mh_ptx_module plain, inst;
    mh_instrumented r;
} kernel_pair;

static int load_pair(kernel_pair *k, const char *rel, mh_scope scope)
{
    mh_error e;
    if (parse_file(&k->plain, rel)) return -1;
    if (mh_instrument(&k->plain, scope, &k->r, &e)) { fprintf(stderr, "  %s\n", e.message); return -1; }
    if (mh_ptx_parse(&k->inst, k->r.text, k->r.len, rel, &e)) { fprintf(stderr, "  %s\n", e.message); return -1; }
    return 0;
}

static void free_pair(kernel_pair *k)
{
    mh_ptx_free(&k->plain);
    mh_ptx_free(&k->inst);
    mh_instrumented_free(&k->r);
}

/* reduce: same result instrumented; every warp's writer records load and tree once. */
static void reduce_on_emu(void)
{
    kernel_pair k;
    CHECK(load_pair(&k, "ptx/reduce.ptx", MH_SCOPE_WARP) == 0);
    mh_error e;
    mh_emu *d = mh_emu_create(NULL, &e);
    enum { N = 3000, G = 3, B = 128, TR = G * B / 32, E = 16 };
    float in[N], out1[G], out2[G];
    for (int i = 0; i < N; i++) in[i] = (float)(i % 13);
    uint64_t din, dout, dtr, dcal;
    mh_emu_alloc(d, sizeof in, &din, &e);
    mh_emu_alloc(d, sizeof out1, &dout, &e);
    mh_emu_alloc(d, TR * E * 4, &dtr, &e);
    mh_emu_alloc(d, TR * MH_CALIB_WORDS * 4, &dcal, &e);
    mh_emu_write(d, din, in, sizeof in, &e);
    unsigned n = N, entries = E;
    mh_emu_arg args[] = {{&din, 8}, {&dout, 8}, {&n, 4}, {&dtr, 8}, {&entries, 4}, {&dcal, 8}};
    mh_emu_launch l = {{G, 1, 1}, {B, 1, 1}, B * 4, args, 3, 0};
    CHECK(mh_emu_run(d, &k.plain, "reduce_sum_f32", &l, NULL, &e) == 0);
    mh_emu_read(d, dout, out1, sizeof out1, &e);
    l.nargs = 6;
    int rc = mh_emu_run(d, &k.inst, "reduce_sum_f32", &l, NULL, &e);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  %s\n", e.message);
    mh_emu_read(d, dout, out2, sizeof out2, &e);
    CHECK(memcmp(out1, out2, sizeof out1) == 0);
    uint32_t tr[TR * E];
    mh_emu_read(d, dtr, tr, sizeof tr, &e);
    for (int t = 0; t < TR; t++) {
        CHECK(tr[t * E + 2] == 8);                /* 4 events */
        CHECK(tr[t * E + 1] == (uint32_t)(t / 4)); /* block b on SM b */
        CHECK(tr[t * E + 3] == 0 && tr[t * E + 5] == 0x80000000u && tr[t * E + 7] == 1 && tr[t * E + 9] == 0x80000001u);
    }
    mh_spec s;
    mh_spec_init(&s, G, B, MH_SCOPE_WARP, E);
    mh_spec_validate(&s, &e);
    mh_summary sum;
    mh_summary_init(&sum, &k.r.names, &e);
    char *json = dump_words(&s, &k.r.names, tr, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, &sum, &e);
    CHECK(json != NULL);
    CHECK(mh_summary_row(&sum, 0).count == TR && mh_summary_row(&sum, 1).count == TR);
    free(json);
    mh_summary_free(&sum);
    mh_emu_destroy(d);
    free_pair(&k);
}

/* tiled: 5 tiles per block x 8 events: 83 entries needed; given 20, the dump
 * says 83 exactly, and the run with 83 records everything. */
static void overflow_and_retry(void)
{
    kernel_pair k;
    CHECK(load_pair(&k, "ptx/tiled.ptx", MH_SCOPE_WARP) == 0);
    mh_error e;
    mh_emu *d = mh_emu_create(NULL, &e);
    /* 8 warps a block: two per sub-partition of emu's SM, so that each trace is long enough (~1 us)
     * for the 1 us timer step below (with 2 warps a block they ran side by side in 0.75 us) */
    enum { G = 2, B = 256, TILES = 10, N = B * TILES, TR = G * B / 32 };
    float a[N], c1[N], c2[N], alpha = 3.0f;
    for (int i = 0; i < N; i++) a[i] = (float)i;
    uint64_t da, dc, dtr, dcal;
    mh_emu_alloc(d, sizeof a, &da, &e);
    mh_emu_alloc(d, sizeof c1, &dc, &e);
    mh_emu_write(d, da, a, sizeof a, &e);
    unsigned n = N, entries = 20;
    mh_emu_alloc(d, TR * 83 * 4, &dtr, &e);
    mh_emu_alloc(d, TR * MH_CALIB_WORDS * 4, &dcal, &e);
    mh_emu_arg args[] = {{&da, 8}, {&dc, 8}, {&n, 4}, {&alpha, 4}, {&dtr, 8}, {&entries, 4}, {&dcal, 8}};
    mh_emu_launch l = {{G, 1, 1}, {B, 1, 1}, B * 4, args, 4, 0};
    CHECK(mh_emu_run(d, &k.plain, "tiled_scale", &l, NULL, &e) == 0);
    mh_emu_read(d, dc, c1, sizeof c1, &e);

    mh_spec s;
    uint32_t tr[TR * 83];
    l.nargs = 7;
    /* too small: the stores stop at the capacity, the count goes on */
    CHECK(mh_emu_run(d, &k.inst, "tiled_scale", &l, NULL, &e) == 0);
    mh_emu_read(d, dc, c2, sizeof c2, &e);
    CHECK(memcmp(c1, c2, sizeof c1) == 0);
    mh_emu_read(d, dtr, tr, TR * 20 * 4, &e);
    mh_spec_init(&s, G, B, MH_SCOPE_WARP, 20);
    mh_spec_validate(&s, &e);
    char *json = dump_words(&s, &k.r.names, tr, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, NULL, &e);
    CHECK(json == NULL && e.code == MH_E_INSUFFICIENT_SPACE);
    CHECK(e.required == 3 + 2 * 8 * (TILES / G) && e.capacity == 20);
    fprintf(stderr, "  tiled, 20 entries: %s\n", e.message);

    /* retry with exactly what was required */
    entries = (unsigned)e.required;
    CHECK(mh_emu_run(d, &k.inst, "tiled_scale", &l, NULL, &e) == 0);
    mh_emu_read(d, dtr, tr, TR * entries * 4, &e);
    mh_spec_init(&s, G, B, MH_SCOPE_WARP, entries);
    mh_spec_validate(&s, &e);
    mh_summary sum;
    mh_summary_init(&sum, &k.r.names, &e);
    json = dump_words(&s, &k.r.names, tr, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, &sum, &e);
    CHECK(json != NULL);
    for (size_t i = 0; i < k.r.names.n; i++) CHECK(mh_summary_row(&sum, i).count == TR * TILES / G);
    free(json);
    mh_summary_free(&sum);

    /* the calibration words measure the (virtual) SM clock: 1.5 GHz on emu,
     * here given no rate at all */
    uint32_t cal[TR * MH_CALIB_WORDS];
    mh_emu_read(d, dcal, cal, sizeof cal, &e);
    for (int t = 0; t < TR; t++) CHECK(cal[t * 4 + 1] == tr[t * entries] && cal[t * 4 + 2] > cal[t * 4]);
    mh_tracebuf b;
    mh_tracebuf_memory(&b, tr, s.words);
    mh_tracebuf_bind(&b, &s, &e);
    mh_dump_opts o = {.mode = MH_DUMP_DEFAULT, .clock_ghz = 0, .calib = cal};
    mh_dump_stats st;
    char *text = dump_opts_to_string(&s, &k.r.names, &b, &o, &st, &e);
    CHECK(text != NULL);
    CHECK(fabs(st.clock_ghz_measured - mh_emu_model_find(NULL)->clock_ghz) / mh_emu_model_find(NULL)->clock_ghz < 0.01);
    CHECK(st.calib_traces == TR);
    fprintf(stderr, "  measured clock %.4f GHz from %llu traces (emu's virtual clock: %.1f)\n", st.clock_ghz_measured,
            (unsigned long long)st.calib_traces, mh_emu_model_find(NULL)->clock_ghz);
    CHECK_CONTAINS(text, "\"clock\":\"measured from %clock and %globaltimer at the start and exit of 16 traces "
                         "(timer step 1 ns: within ");
    free(text);
    CHECK(st.clock_measured_used && st.timer_step_ns == 1 && st.clock_bound < 0.005);

    /* a timer that steps by 1 us (as on some GPUs) against traces of a few us:
     * the measurement could be far off, so a given rate wins, and says why */
    for (int t = 0; t < TR; t++) {
        cal[t * 4 + 1] -= cal[t * 4 + 1] % 1000;
        cal[t * 4 + 3] -= cal[t * 4 + 3] % 1000;
    }
    o.clock_ghz = 1.98;
    mh_tracebuf_memory(&b, tr, s.words);
    mh_tracebuf_bind(&b, &s, &e);
    text = dump_opts_to_string(&s, &k.r.names, &b, &o, &st, &e);
    CHECK(text != NULL);
    /* (the step found is the coarsest the words share: 1000 ns at emu's old 1.5 GHz clock, a
     * multiple of it at the device model's clock since issue 32, where these traces' words happen to
     * share 5000) */
    CHECK(st.timer_step_ns >= 1000 && st.timer_step_ns % 1000 == 0 && st.clock_bound > 0.005 && !st.clock_measured_used);
    CHECK_CONTAINS(text, "\"clock_ghz\":1.98,\"clock\":\"given; the calibration read ");
    CHECK_CONTAINS(text, "too short for the timer's ");
    free(text);
    /* with no rate given, the coarse measurement is still better than cycles */
    o.clock_ghz = 0;
    mh_tracebuf_memory(&b, tr, s.words);
    mh_tracebuf_bind(&b, &s, &e);
    text = dump_opts_to_string(&s, &k.r.names, &b, &o, &st, &e);
    CHECK(text != NULL);
    CHECK(st.clock_measured_used && st.timer_step_ns >= 1000 && st.timer_step_ns % 1000 == 0);
    CHECK_CONTAINS(text, "(timer step ");
    free(text);
    mh_emu_destroy(d);
    free_pair(&k);
}

/* Blocks whose thread count is not a multiple of the scope (issue 12): the
 * last, partial warp or warpgroup has a trace of its own, written by its
 * lowest thread; ceil(threads / scope) traces per block, the outputs those of
 * the plain kernel, exact counts in every trace, nothing written past the
 * buffer.  copy_f32x4: one region per thread (begin, end: 4 words). */
static void partial_blocks(void)
{
    static const struct { uint32_t block[3]; mh_scope scope; uint32_t per_block; } cases[] = {
        {{100, 1, 1}, MH_SCOPE_WARP, 4},      {{100, 1, 1}, MH_SCOPE_WARPGROUP, 1},
        {{10, 10, 1}, MH_SCOPE_WARP, 4},      {{200, 1, 1}, MH_SCOPE_WARPGROUP, 2},
        {{33, 1, 1}, MH_SCOPE_WARP, 2},       {{5, 3, 7}, MH_SCOPE_WARPGROUP, 1},
        {{1, 1, 1}, MH_SCOPE_WARP, 1},        {{96, 1, 1}, MH_SCOPE_WARP, 3},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        kernel_pair k;
        CHECK(load_pair(&k, "ptx/copy.ptx", cases[ci].scope) == 0);
        mh_error e;
        mh_emu *d = mh_emu_create(NULL, &e);
        enum { G = 3, E = 8, GUARD = 64 };
        uint32_t threads = cases[ci].block[0] * cases[ci].block[1] * cases[ci].block[2];
        unsigned n4 = G * threads * 2 + 7;
        mh_spec s;
        mh_spec_init(&s, G, 1, cases[ci].scope, E);
        for (int i = 0; i < 3; i++) s.block[i] = cases[ci].block[i];
        CHECK(mh_spec_validate(&s, &e) != 0 || threads % cases[ci].scope == 0); /* refused unless partial */
        s.partial = 1;
        CHECK(mh_spec_validate(&s, &e) == 0);
        CHECK(s.traces_per_block == cases[ci].per_block);
        uint32_t TR = (uint32_t)s.num_traces;
        float *in = malloc(n4 * 16), *o1 = calloc(n4, 16), *o2 = calloc(n4, 16);
        for (unsigned i = 0; i < n4 * 4; i++) in[i] = (float)i * 0.5f;
        uint64_t din, dout, dtr, dcal;
        mh_emu_alloc(d, n4 * 16, &din, &e);
        mh_emu_alloc(d, n4 * 16, &dout, &e);
        mh_emu_alloc(d, (TR * E + GUARD) * 4, &dtr, &e);
        mh_emu_alloc(d, (TR * MH_CALIB_WORDS + GUARD) * 4, &dcal, &e);
        mh_emu_write(d, din, in, n4 * 16, &e);
        mh_emu_memset(d, dtr, 0, (TR * E + GUARD) * 4, &e);
        mh_emu_memset(d, dcal, 0, (TR * MH_CALIB_WORDS + GUARD) * 4, &e);
        unsigned entries = E;
        mh_emu_arg args[] = {{&din, 8}, {&dout, 8}, {&n4, 4}, {&dtr, 8}, {&entries, 4}, {&dcal, 8}};
        mh_emu_launch l = {{G, 1, 1}, {cases[ci].block[0], cases[ci].block[1], cases[ci].block[2]}, 0, args, 3, 0};
        CHECK(mh_emu_run(d, &k.plain, "copy_f32x4", &l, NULL, &e) == 0);
        mh_emu_read(d, dout, o1, n4 * 16, &e);
        mh_emu_memset(d, dout, 0, n4 * 16, &e);
        l.nargs = 6;
        int rc = mh_emu_run(d, &k.inst, "copy_f32x4", &l, NULL, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  case %zu: %s\n", ci, e.message);
        mh_emu_read(d, dout, o2, n4 * 16, &e);
        CHECK(memcmp(o1, o2, n4 * 16) == 0);
        uint32_t *tr = malloc((TR * E + GUARD) * 4), *cal = malloc((TR * MH_CALIB_WORDS + GUARD) * 4);
        mh_emu_read(d, dtr, tr, (TR * E + GUARD) * 4, &e);
        mh_emu_read(d, dcal, cal, (TR * MH_CALIB_WORDS + GUARD) * 4, &e);
        int bad = 0;
        for (uint32_t t = 0; t < TR; t++) {
            const uint32_t *w = tr + (size_t)t * E;
            bad += w[2] != 4 || w[1] != t / cases[ci].per_block || w[3] != 0 || w[5] != MH_EXIT_BIT || w[6] < w[4];
            bad += cal[t * 4 + 2] <= cal[t * 4] || cal[t * 4 + 1] != w[0];
        }
        for (uint32_t i = 0; i < GUARD; i++) bad += tr[TR * E + i] != 0 || cal[TR * MH_CALIB_WORDS + i] != 0;
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  case %zu: %d bad words\n", ci, bad);
        mh_summary sum;
        mh_summary_init(&sum, &k.r.names, &e);
        char *json = dump_words(&s, &k.r.names, tr, MH_DUMP_DEFAULT, mh_emu_model_find(NULL)->clock_ghz, &sum, &e);
        CHECK(json != NULL && mh_summary_row(&sum, 0).count == TR);
        free(json);
        mh_summary_free(&sum);
        free(tr);
        free(cal);
        free(in);
        free(o1);
        free(o2);
        mh_emu_destroy(d);
        free_pair(&k);
    }
}

/* ---- the two record layouts on emu (issue 17) ------------------------------------------------
 * Every kernel of ptx/ and tests/ptx with markers that emu runs, both scopes, instrumented with
 * the legacy records (two st.global.u32) and the aligned ones (one st.global.v2.u32: the kernel
 * is handed an 8-aligned allocation + 4 and an even entries): each launched first with 8 entries
 * (too few), then with exactly what it said it needed, as the launch's retry does.  The outputs
 * equal the plain kernel's, the first attempt's counts equal the second's (exact past the
 * capacity), and both layouts give the same traces: counts, tags in order, SM ids, and for
 * each trace increasing clocks and calibration words; nothing is written outside a trace
 * buffer. */
typedef struct {
    const char *file, *kernel;
    uint32_t grid, block, smem;
    const char *args; /* f:N floats, i:N ints, z:N zero words (buffers); u:V u32, g:V f32 (values) */
    uint32_t timed;   /* arguments (bits) whose buffer holds times (%clock, %globaltimer) or what timing decides
                       * (which block took which item of a work queue): not compared */
} layout_case;

enum { GUARD_WORDS = 16 };

/* Runs `kernel` of module m with the arguments reset to their initial values, the trace (when
 * tr) at trace_addr with `entries`; out: the buffers' words after the run, concatenated. */
static int run_case(mh_emu *d, const mh_ptx_module *m, const layout_case *c, arg_set *a, uint64_t trace_addr,
                    unsigned entries, uint64_t calib, uint32_t *out, mh_error *e)
{
    emu_kernel k = {c->kernel, c->grid, c->block, c->smem, c->timed};
    return emu_run_args(d, m, &k, a, trace_addr, entries, calib, out, e);
}

typedef struct {
    uint32_t count, smid;
    uint32_t *tags; /* count / 2 */
} trace_summary;

/* The run of one layout: traces[num_traces] (the second attempt), *required (the first's). */
static int run_layout(mh_emu *d, const layout_case *c, mh_scope scope, int aligned, arg_set *a,
                      const uint32_t *plain_out, uint32_t out_words, trace_summary **traces, uint64_t *ntraces)
{
    kernel_pair k;
    mh_error e;
    memset(&k, 0, sizeof k);
    if (parse_file(&k.plain, c->file)) return -1;
    mh_instrument_opts o = {.scope = scope, .aligned = aligned};
    if (mh_instrument_with(&k.plain, &o, &k.r, &e) || mh_ptx_parse(&k.inst, k.r.text, k.r.len, c->file, &e)) {
        fprintf(stderr, "  %s: %s\n", c->file, e.message);
        return -1;
    }
    CHECK(k.r.aligned == aligned && k.r.trace_shift == (aligned ? MH_TRACE_SHIFT : 0u));
    mh_spec s;
    mh_spec_init(&s, c->grid, c->block, scope, 8);
    s.partial = 1;
    mh_spec_validate(&s, &e);
    uint64_t T = s.num_traces, need = 0;
    uint32_t *out = calloc(out_words ? out_words : 1, 4);
    int rc = 0;
    unsigned entries = (unsigned)mh_instrumented_entries(&k.r, 8);
    CHECK(entries == 8);
    for (int attempt = 0; attempt < 2 && !rc; attempt++) {
        uint64_t words = T * entries + GUARD_WORDS, alloc, cal;
        mh_emu_alloc(d, words * 4 + 8, &alloc, &e);
        mh_emu_alloc(d, (T * MH_CALIB_WORDS + GUARD_WORDS) * 4, &cal, &e);
        mh_emu_memset(d, alloc, 0xee, words * 4 + 8, &e);
        mh_emu_memset(d, cal, 0, (T * MH_CALIB_WORDS + GUARD_WORDS) * 4, &e);
        CHECK(alloc % 8 == 0);
        uint64_t trace = alloc + k.r.trace_shift; /* where the dump's words begin */
        mh_emu_memset(d, trace, 0, T * entries * 4, &e);
        rc = run_case(d, &k.inst, c, a, trace, entries, cal, out, &e);
        if (rc) { fprintf(stderr, "  %s %s (%s, %s): %s\n", c->file, c->kernel, mh_scope_name(scope), aligned ? "aligned" : "legacy", e.message); break; }
        CHECK(memcmp(out, plain_out, out_words * 4ull) == 0);
        for (uint32_t q = 0, shown = 0; q < out_words && shown < 3; q++)
            if (out[q] != plain_out[q])
                fprintf(stderr, "  %s %s (%s, %s): output word %u is 0x%x, plain 0x%x\n", c->file, c->kernel,
                        mh_scope_name(scope), aligned ? "aligned" : "legacy", q, out[q], plain_out[q]), shown++;
        uint32_t *w = malloc(words * 4 + 8), *cw = malloc((T * MH_CALIB_WORDS + GUARD_WORDS) * 4);
        mh_emu_read(d, alloc, w, words * 4 + 8, &e);
        mh_emu_read(d, cal, cw, (T * MH_CALIB_WORDS + GUARD_WORDS) * 4, &e);
        const uint32_t *tw = w + k.r.trace_shift / 4;
        int bad = 0;
        for (uint32_t q = 0; q < k.r.trace_shift / 4; q++) bad += w[q] != 0xeeeeeeeeu; /* before the buffer */
        for (uint64_t q = T * entries; q < T * entries + GUARD_WORDS; q++) bad += tw[q] != 0xeeeeeeeeu; /* after it */
        for (uint64_t q = T * MH_CALIB_WORDS; q < T * MH_CALIB_WORDS + GUARD_WORDS; q++) bad += cw[q] != 0;
        uint64_t most = 0;
        for (uint64_t t = 0; t < T; t++) {
            const uint32_t *h = tw + t * entries;
            if (h[2] > most) most = h[2];
            if (attempt == 0) continue;
            trace_summary *ts = &(*traces)[t];
            if (aligned) { /* the same as the legacy layout's */
                bad += ts->count != h[2] || ts->smid != h[1];
                for (uint32_t ev = 0; ev < h[2] / 2 && ev < ts->count / 2; ev++) bad += ts->tags[ev] != h[3 + 2 * ev];
            } else {
                ts->count = h[2];
                ts->smid = h[1];
                ts->tags = malloc((h[2] / 2 + 1) * 4);
                for (uint32_t ev = 0; ev < h[2] / 2; ev++) ts->tags[ev] = h[3 + 2 * ev];
            }
            for (uint32_t ev = 1; ev < h[2] / 2; ev++) bad += h[4 + 2 * ev] < h[2 + 2 * ev]; /* clocks go up */
            if (h[2]) bad += cw[t * 4 + 1] != h[0] || cw[t * 4 + 2] <= cw[t * 4] || (h[2] && h[4] < cw[t * 4]);
        }
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  %s %s (%s, %s, attempt %d): %d bad words\n", c->file, c->kernel, mh_scope_name(scope),
                         aligned ? "aligned" : "legacy", attempt + 1, bad);
        if (attempt == 0) {
            need = 3 + most;
            entries = (unsigned)mh_instrumented_entries(&k.r, need);
            CHECK(entries == (aligned ? (need + 1) & ~1u : need));
            if (!*traces) *traces = calloc(T, sizeof **traces);
            *ntraces = T;
        } else CHECK(3 + most == need); /* the count was exact */
        free(w);
        free(cw);
        mh_emu_free(d, alloc, &e);
        mh_emu_free(d, cal, &e);
    }
    free(out);
    free_pair(&k);
    return rc;
}

static void layouts(void)
{
    static const layout_case cases[] = {
        {"ptx/tiled.ptx", "tiled_scale", 2, 128, 512, "f:1280 z:1280 u:1280 g:2.0", 0},
        {"ptx/tiled.ptx", "tiled_scale_work", 2, 128, 512, "f:1280 z:1280 u:1280 g:0.5 u:3", 0},
        {"ptx/reduce.ptx", "reduce_sum_f32", 3, 128, 512, "f:3000 z:3 u:3000", 0},
        {"ptx/copy.ptx", "copy_f32x4", 3, 128, 0, "f:4000 z:4000 u:1000", 0},
        {"ptx/alu_loop.ptx", "alu_loop", 2, 128, 0, "z:256 u:20", 0},
        {"ptx/persistent.ptx", "persistent_rows", 2, 128, 0, "i:1024 z:16 z:1 z:2 u:16 u:64", 1u << 3},
        {"ptx/record_cost.ptx", "marker_records", 1, 128, 0, "z:1 u:40", 1},
        {"ptx/spin.ptx", "spin", 2, 128, 0, "i:2 u:2 u:3 u:0 z:4", 1u << 4},
        {"tests/ptx/func_markers.ptx", "func_markers", 1, 128, 0, "f:90 z:128 u:90 u:3", 0},
        {"tests/ptx/func_markers.ptx", "no_own_markers", 1, 128, 0, "f:90 z:128 u:90", 0},
        {"tests/ptx/llvm_tiled.ptx", "llvm_tiled", 3, 128, 512, "f:1000 z:1000 z:64 u:1000 g:2.0", 0},
        {"tests/ptx/triton_style.ptx", "vec_add", 2, 128, 0, "f:1000 f:1000 z:1000 u:1000", 0},
        {"tests/ptx/tiled_debug.ptx", "tiled_scale_work", 3, 128, 512, "f:1280 z:1280 u:1280 g:0.5 u:7", 0},
        {"tests/ptx/side_effects.ptx", "atomic_sum", 2, 128, 0, "f:1000 z:1 u:1000", 0},
        {"tests/ptx/side_effects.ptx", "scale_in_place", 2, 128, 0, "f:1000 g:2.0 g:1.0 u:1000", 0},
        {"tests/ptx/features.ptx", "k_redux", 1, 128, 0, "i:128 z:129", 0},
        {"tests/ptx/features.ptx", "k_cg", 1, 128, 0, "f:128 z:8", 0},
        {"tests/ptx/features.ptx", "k_atomics", 1, 128, 0, "z:2 z:256", 2},
        {"tests/ptx/features.ptx", "k_half", 1, 128, 0, "z:64 z:64", 0},
    };
    mh_error e;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const layout_case *c = &cases[ci];
        mh_emu *d = mh_emu_create(NULL, &e);
        arg_set a;
        args_parse(&a, c->args);
        uint32_t out_words = 0;
        for (uint32_t i = 0; i < a.nargs; i++)
            if (a.size[i] == 8) mh_emu_alloc(d, a.words[i] * 4ull, &a.buf[i], &e), out_words += a.words[i];
        uint32_t *plain_out = calloc(out_words ? out_words : 1, 4);
        mh_ptx_module plain;
        CHECK(parse_file(&plain, c->file) == 0);
        int rc = run_case(d, &plain, c, &a, 0, 0, 0, plain_out, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  %s %s (plain): %s\n", c->file, c->kernel, e.message);
        mh_ptx_free(&plain);
        for (int sc = 0; !rc && sc < 2; sc++) {
            trace_summary *traces = NULL;
            uint64_t T = 0, events = 0;
            mh_scope scope = sc ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP;
            for (int aligned = 0; aligned < 2; aligned++)
                CHECK(run_layout(d, c, scope, aligned, &a, plain_out, out_words, &traces, &T) == 0);
            for (uint64_t t = 0; traces && t < T; t++) {
                events += traces[t].count / 2;
                free(traces[t].tags);
            }
            CHECK(events > 0);
            free(traces);
        }
        free(plain_out);
        args_free(&a);
        mh_emu_destroy(d);
    }
}

/* test_instrument SRC --emit DIR [FILE.ptx...]: writes DIR/NAME.SCOPE[.aligned].ptx, each module
 * instrumented in both scopes and both record layouts, for ptxas (tests/ptxas_check.sh) and
 * the SASS scripts (scripts/sass/); FILE defaults to the modules of ptxas_check.sh. */
static int emit(const char *dir, int nfiles, char **files)
{
    static const char *defaults[] = {"ptx/alu_loop.ptx", "ptx/copy.ptx", "ptx/persistent.ptx", "ptx/record_cost.ptx",
                                     "ptx/reduce.ptx", "ptx/spin.ptx", "ptx/tiled.ptx", "tests/golden/mini.ptx",
                                     "tests/ptx/llvm_tiled.ptx", "tests/ptx/tiled_debug.ptx",
                                     "tests/ptx/struct_param.ptx", "tests/ptx/features.ptx",
                                     "tests/ptx/triton_style.ptx", "tests/ptx/func_markers.ptx", "tests/ptx/fptr.ptx",
                                     "tests/ptx/cccl.ptx", "tests/ptx/hopper.ptx"};
    int n = nfiles ? nfiles : (int)(sizeof defaults / sizeof *defaults), bad = 0;
    for (int i = 0; i < n; i++) {
        const char *rel = nfiles ? files[i] : defaults[i];
        mh_ptx_module m;
        if (parse_file(&m, rel)) { bad++; continue; }
        for (int k = 0; k < 4; k++) {
            mh_instrument_opts o = {.scope = k & 1 ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, .aligned = k >> 1};
            mh_instrumented r;
            mh_error e;
            if (mh_instrument_with(&m, &o, &r, &e)) { fprintf(stderr, "%s: %s\n", rel, e.message); bad++; continue; }
            const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
            char path[1024];
            snprintf(path, sizeof path, "%s/%.*s.%s%s.ptx", dir, (int)(strlen(base) - 4), base, mh_scope_name(o.scope),
                     o.aligned ? ".aligned" : "");
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(r.text, 1, r.len, f) != r.len || fclose(f)) { perror(path); bad++; }
            mh_instrumented_free(&r);
        }
        mh_ptx_free(&m);
    }
    return bad ? 1 : 0;
}

/* emu's counters tell the instrumentation's code from the user's by mh_ct_kind (issue 24):
 * what it calls the user's in a rewritten module is the original module's code, instruction for
 * instruction (markers, probes of every kind, both scopes, both record layouts). */
static void added_code_is_told(void)
{
    static const char *const files[] = {"ptx/tiled.ptx", "ptx/reduce.ptx", "tests/ptx/early_return.ptx",
                                        "tests/ptx/func_markers.ptx", "tests/ptx/probes_triton.ptx"};
    mh_probe probes[] = {
        {.kind = MH_PROBE_KERNEL, .name = "k"},
        {.kind = MH_PROBE_LOOP, .name = "l"},
        {.kind = MH_PROBE_AROUND, .name = "ld", .around = "ld.global"},
    };
    for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++)
        for (int variant = 0; variant < 4; variant++) {
            mh_ptx_module m, inst;
            mh_instrumented r;
            mh_error e;
            CHECK(parse_file(&m, files[fi]) == 0);
            int use_probes = variant >= 2 && fi == 4; /* probes_triton.ptx has loops and global loads */
            mh_instrument_opts o = {.scope = variant & 1 ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, .aligned = variant & 1,
                                    .probes = use_probes ? probes : NULL, .nprobes = use_probes ? 3 : 0,
                                    .kernel_probe = 1};
            int rc = mh_instrument_with(&m, &o, &r, &e);
            CHECK(rc == 0);
            if (rc) { fprintf(stderr, "  %s: %s\n", files[fi], e.message); mh_ptx_free(&m); continue; }
            CHECK(mh_ptx_parse(&inst, r.text, r.len, "inst.ptx", &e) == 0);
            CHECK(inst.nfuncs == m.nfuncs);
            for (uint32_t f = 0; f < m.nfuncs && f < inst.nfuncs; f++) {
                const mh_ptx_func *a = &m.funcs[f], *b = &inst.funcs[f];
                uint32_t j = 0, bad = 0;
                for (uint32_t i = 0; i < b->ncode; i++) {
                    int kind = mh_ct_kind(r.text, &b->code[i]);
                    if (kind != MH_CT_USER) continue;
                    if (j >= a->ncode || a->code[j].op != b->code[i].op) bad++;
                    j++;
                }
                CHECK(bad == 0 && j == a->ncode);
                if (bad || j != a->ncode)
                    fprintf(stderr, "  %s variant %d, %s: %u user instructions (%u differ), the original has %u\n",
                            files[fi], variant, a->name, j, bad, a->ncode);
            }
            mh_ptx_free(&inst);
            mh_instrumented_free(&r);
            mh_ptx_free(&m);
        }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    src = argv[1];
    if (argc >= 4 && !strcmp(argv[2], "--emit")) return emit(argv[3], argc - 4, argv + 4);
    golden();
    errors();
    nul_byte();
    line_map();
    reduce_on_emu();
    overflow_and_retry();
    partial_blocks();
    layouts();
    added_code_is_told();
    return check_report("test_instrument");
}
