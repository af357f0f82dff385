/* test_dump_mosaic.c - the Mosaic-compatible dump against a reference model:
 * a direct, non-streaming port of the semantics of JAX's ProfilerSpec.dump
 * (uint32 arithmetic, overhead estimate, +1 on non-increasing times,
 * synthetic ends for truncated traces, stable order by first ts), run on
 * many generated buffers: many blocks, both scopes, 1-3-D grids, nesting,
 * truncated traces, clock wrap, clocks that go back, zero steps.  Also the
 * exact error messages, and file input equal to memory input. */
#include "check.h"
#include "dump_util.h"

#include <fcntl.h>
#include <stdint.h>

/* ---- reference model -------------------------------------------------- */

typedef struct { uint64_t first_ts; json_t *events; } ref_trace;

static int ref_cmp(const void *a, const void *b)
{
    const ref_trace *x = a, *y = b;
    return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts); /* qsort is not stable: ties broken below */
}

static json_t *ref_event(const char *name, int end, uint32_t ts, uint64_t pid, uint64_t tid)
{
    return json_pack("{s:s, s:s, s:f, s:I, s:I}", "name", name, "ph", end ? "E" : "B", "ts", (double)ts / 1e3,
                     "pid", (json_int_t)pid, "tid", (json_int_t)tid);
}

/* Returns the trace JSON value or NULL with *code set. */
static json_t *reference(const mh_spec *s, const mh_names *names, const uint32_t *w, mh_code *code)
{
    uint64_t E = s->entries, T = s->num_traces;
    for (uint64_t t = 0; t < T; t++)
        if ((uint64_t)w[t * E + 2] + 3 > E) { *code = MH_E_INSUFFICIENT_SPACE; return NULL; }
    uint32_t min = 12;
    for (uint64_t t = 0; t < T; t++) {
        const uint32_t *tr = w + t * E + 3;
        uint32_t n = w[t * E + 2];
        for (uint32_t m = 1; 2 * m + 1 < n; m++) {
            uint32_t d = tr[2 * m + 1] - tr[2 * m - 1];
            if (d < min) min = d;
        }
    }
    uint32_t ovh = min - 1u; /* numpy uint32: wraps when min == 0 */
    ref_trace *traces = calloc(T, sizeof *traces);
    uint64_t nt = 0;
    for (uint64_t t = 0; t < T; t++) {
        const uint32_t *h = w + t * E, *tr = h + 3;
        uint32_t n = h[2];
        if (n % 2) { *code = MH_E_ODD_EVENTS; goto fail; }
        json_t *ev = json_array();
        uint32_t first = 0, last = 0;
        int have_last = 0;
        const char *stack[4096];
        int depth = 0;
        for (uint32_t i = 0; i < n; i += 2) {
            uint32_t tag = tr[i], time = tr[i + 1];
            if (i == 0) first = time;
            time -= first;
            time -= (i / 2) * ovh;
            const mh_name *nm = mh_names_get(names, tag & 0x7fffffffu);
            if (!nm) { json_decref(ev); *code = MH_E_BAD_TRACE; goto fail; }
            int end = (tag & 0x80000000u) != 0;
            if (have_last && last >= time) time = last + 1;
            last = time;
            have_last = 1;
            json_array_append_new(ev, ref_event(nm->name, end, h[0] + time, (uint64_t)h[1] + 1, t + 1));
        }
        if (json_array_size(ev) == 0) { json_decref(ev); continue; }
        for (size_t i = 0; i < json_array_size(ev); i++) {
            json_t *x = json_array_get(ev, i);
            if (!strcmp(json_string_value(json_object_get(x, "ph")), "B"))
                stack[depth++] = json_string_value(json_object_get(x, "name"));
            else if (depth-- == 0) { json_decref(ev); *code = MH_E_BAD_TRACE; goto fail; }
        }
        double last_ts = json_real_value(json_object_get(json_array_get(ev, json_array_size(ev) - 1), "ts"));
        while (depth--) {
            json_t *x = json_pack("{s:s, s:s, s:f, s:I, s:I}", "name", stack[depth], "ph", "E", "ts", last_ts,
                                  "pid", (json_int_t)h[1] + 1, "tid", (json_int_t)t + 1);
            json_array_append_new(ev, x);
        }
        traces[nt].first_ts = h[0] * 1ull * (T + 1) + t; /* order by start, then trace index: stable */
        traces[nt].events = ev;
        nt++;
    }
    qsort(traces, nt, sizeof *traces, ref_cmp);
    json_t *all = json_array();
    for (uint64_t i = 0; i < nt; i++) {
        json_array_extend(all, traces[i].events);
        json_decref(traces[i].events);
    }
    free(traces);
    return json_pack("{s:s, s:o}", "displayTimeUnit", "ns", "traceEvents", all);
fail:
    for (uint64_t i = 0; i < nt; i++) json_decref(traces[i].events);
    free(traces);
    return NULL;
}

/* ---- generator -------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static uint32_t below(uint32_t n) { return n ? rnd() % n : 0; }

static const uint32_t ids[] = {0, 1, 2, 3, 7, 100};
static const char *const id_names[] = {"Init", "load", "store", "step", "mma \"quoted\"", "caf\xc3\xa9"};

static void make_names(mh_names *t)
{
    mh_error e;
    mh_names_init(t);
    for (size_t i = 0; i < 6; i++) mh_names_add(t, id_names[i], ids[i], &e);
    mh_names_finish(t, &e);
}

/* Fills one trace: balanced nesting, optionally truncated. */
static void fill_trace(uint32_t *h, uint64_t E, int style)
{
    uint32_t cap = (uint32_t)((E - 3) / 2), nev = below(cap + 1);
    uint32_t clock = rnd(), stack[64];
    int depth = 0;
    int truncate = below(4) == 0;
    h[0] = below(8) == 0 ? 0xFFFFFF00u + below(0x200) : 1000000 + below(200); /* timer near wrap sometimes */
    h[1] = below(132);
    uint32_t k = 0;
    while (k < nev) {
        int can_open = depth < 64 && (nev - k) > (uint32_t)depth + (truncate ? 0 : 1);
        int open = depth == 0 || (can_open && below(2));
        if (!truncate && !can_open && depth == 0) break;
        uint32_t step = style == 0 ? 20 + below(400) : below(6) == 0 ? 0 : below(5) == 0 ? (uint32_t)-(int32_t)below(40) : 1 + below(30);
        clock += step;
        if (open) {
            uint32_t id = ids[below(6)];
            stack[depth++] = id;
            h[3 + 2 * k] = id;
        } else {
            h[3 + 2 * k] = stack[--depth] | 0x80000000u;
        }
        h[4 + 2 * k] = clock;
        k++;
        if (!truncate && depth == 0 && below(3) == 0) break;
    }
    if (!truncate) {
        while (depth && k < cap) {
            clock += 10 + below(10);
            h[3 + 2 * k] = stack[--depth] | 0x80000000u;
            h[4 + 2 * k] = clock;
            k++;
        }
        if (depth) k = 0; /* could not close: leave empty */
    }
    h[2] = 2 * k;
}

static void compare_one(const mh_spec *s, const mh_names *names, const uint32_t *w, const char *what)
{
    mh_error e;
    mh_code want = MH_OK;
    json_t *ref = reference(s, names, w, &want);
    char *got = dump_words(s, names, w, MH_DUMP_MOSAIC, 0, NULL, &e);
    if (!ref) {
        CHECK(got == NULL);
        CHECK(e.code == want);
        if (e.code != want) fprintf(stderr, "  %s: got %s, reference %s\n", what, mh_code_name(e.code), mh_code_name(want));
    } else {
        json_error_t je;
        json_t *g = got ? json_loads(got, 0, &je) : NULL;
        int eq = g && json_equal(g, ref);
        CHECK(eq);
        if (!eq) fprintf(stderr, "  %s differs from the reference (%s)\n", what, got ? "" : e.message);
        json_decref(g);
    }
    json_decref(ref);
    free(got);
}

static void random_cases(const mh_names *names)
{
    for (int iter = 0; iter < 300; iter++) {
        mh_spec s;
        mh_error e;
        mh_scope scope = below(2) ? MH_SCOPE_WARP : MH_SCOPE_WARPGROUP;
        mh_spec_init(&s, 1 + below(9), (uint64_t)scope * (1 + below(4)), scope, 3 + below(40));
        if (below(3) == 0) { s.grid[1] = 1 + below(3); s.grid[2] = 1 + below(3); }
        CHECK(mh_spec_validate(&s, &e) == 0);
        uint32_t *w = calloc(s.words, 4);
        int style = iter % 2;
        for (uint64_t t = 0; t < s.num_traces; t++) fill_trace(w + t * s.entries, s.entries, style);
        if (iter % 10 == 3) w[below((uint32_t)s.num_traces) * s.entries + 2] = (uint32_t)s.entries; /* overflow */
        if (iter % 10 == 5) {                                                                      /* odd count */
            uint64_t t = below((uint32_t)s.num_traces);
            if (s.entries >= 4) w[t * s.entries + 2] = 1;
        }
        if (iter % 10 == 7) { /* unknown name id in some trace with events */
            for (uint64_t t = 0; t < s.num_traces; t++)
                if (w[t * s.entries + 2]) { w[t * s.entries + 3] = 55; break; }
        }
        char what[64];
        snprintf(what, sizeof what, "random case %d", iter);
        compare_one(&s, names, w, what);
        free(w);
    }
}

static void exact_errors(const mh_names *names)
{
    mh_spec s;
    mh_error e;
    uint32_t w[2 * 16] = {0};
    mh_spec_init(&s, 1, 64, MH_SCOPE_WARP, 16);
    mh_spec_validate(&s, &e);

    w[2] = 14; /* needs 17 entries */
    char *out = dump_words(&s, names, w, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_INSUFFICIENT_SPACE);
    CHECK_STR(e.message, "Insufficient space to capture a full trace");
    CHECK(e.required == 17 && e.capacity == 16 && e.trace == 0);

    out = dump_words(&s, names, w, MH_DUMP_DEFAULT, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_INSUFFICIENT_SPACE && e.required == 17);
    CHECK_CONTAINS(e.message, "1 of 2 traces");
    CHECK_CONTAINS(e.message, "trace 0 (block 0 \xc2\xb7 warp 0) needed the most, 17 entries");
    CHECK_CONTAINS(e.message, "1 more than it had");
    CHECK_CONTAINS(e.message, "entries_per_warpgroup >= 17");

    w[2] = 0;
    w[16 + 2] = 3;
    out = dump_words(&s, names, w, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_ODD_EVENTS && e.trace == 1);
    CHECK_STR(e.message, "Profiler collected an odd number of trace events. This likely indicates memory corruption "
                         "due to insufficient profiling space. Try again with a larger profiling space.");

    /* unbalanced end */
    w[16 + 2] = 2;
    w[16 + 3] = 0x80000001u;
    out = dump_words(&s, names, w, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_BAD_TRACE);
    CHECK_CONTAINS(e.message, "trace 1 (block 0 \xc2\xb7 warp 1): event 0 ends \"load\" but no region is open");

    /* unknown id */
    w[16 + 3] = 42;
    out = dump_words(&s, names, w, MH_DUMP_DEFAULT, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_BAD_TRACE);
    CHECK_CONTAINS(e.message, "unknown name id 42");

    /* mismatched end: accepted by Mosaic's dump (it pops blindly), an error in the default mode */
    uint32_t m[16] = {0, 0, 4, 1, 100, 0x80000002u, 200};
    mh_spec_init(&s, 1, 32, MH_SCOPE_WARP, 16);
    mh_spec_validate(&s, &e);
    out = dump_words(&s, names, m, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(out != NULL);
    free(out);
    out = dump_words(&s, names, m, MH_DUMP_DEFAULT, 0, NULL, &e);
    CHECK(!out && e.code == MH_E_BAD_TRACE);
    CHECK_CONTAINS(e.message, "ends \"store\" but the innermost open region is \"load\"");
}

/* A buffer file (several chunks, traces out of order) gives the same bytes
 * as the same words in memory; .npy too. */
static void file_equals_memory(const mh_names *names)
{
    mh_spec s;
    mh_error e;
    mh_spec_init(&s, 1024, 512, MH_SCOPE_WARP, 21); /* 16384 traces, 1.4 MB: two chunks */
    mh_spec_validate(&s, &e);
    uint32_t *w = calloc(s.words, 4);
    for (uint64_t t = 0; t < s.num_traces; t++) fill_trace(w + t * s.entries, s.entries, 0);
    char *mem = dump_words(&s, names, w, MH_DUMP_MOSAIC, 0, NULL, &e);
    CHECK(mem != NULL);

    char path[] = "/tmp/mh_test_buf_XXXXXX";
    int fd = mkstemp(path);
    CHECK(write(fd, w, s.bytes) == (ssize_t)s.bytes);
    close(fd);
    mh_tracebuf b;
    CHECK(mh_tracebuf_open(&b, path, &e) == 0);
    CHECK(mh_tracebuf_bind(&b, &s, &e) == 0);
    char *file = dump_to_string(&s, names, &b, MH_DUMP_MOSAIC, 0, NULL, NULL, &e);
    mh_tracebuf_close(&b);
    CHECK(mem && file && strcmp(mem, file) == 0);
    free(file);

    /* the same words as .npy, shape (traces, entries) */
    char npy_path[] = "/tmp/mh_test_npy_XXXXXX";
    fd = mkstemp(npy_path);
    char dict[128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<u4', 'fortran_order': False, 'shape': (%llu, %llu), }",
                      (unsigned long long)s.num_traces, (unsigned long long)s.entries);
    while ((10 + dl + 1) % 64) dict[dl++] = ' ';
    dict[dl++] = '\n';
    unsigned char hdr[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)dl, 0};
    CHECK(write(fd, hdr, 10) == 10 && write(fd, dict, (size_t)dl) == dl);
    CHECK(write(fd, w, s.bytes) == (ssize_t)s.bytes);
    close(fd);
    CHECK(mh_tracebuf_open(&b, npy_path, &e) == 0);
    CHECK(mh_tracebuf_bind(&b, &s, &e) == 0);
    file = dump_to_string(&s, names, &b, MH_DUMP_MOSAIC, 0, NULL, NULL, &e);
    mh_tracebuf_close(&b);
    CHECK(mem && file && strcmp(mem, file) == 0);
    free(file);

    /* big-endian .npy ('>u4'): words swapped on read */
    fd = open(npy_path, O_WRONLY | O_TRUNC);
    dict[11] = '>'; /* {'descr': '<u4' -> '>u4' */
    CHECK(write(fd, hdr, 10) == 10 && write(fd, dict, (size_t)dl) == dl);
    uint32_t *be = malloc(s.bytes);
    for (uint64_t i = 0; i < s.words; i++) be[i] = __builtin_bswap32(w[i]);
    CHECK(write(fd, be, s.bytes) == (ssize_t)s.bytes);
    free(be);
    close(fd);
    CHECK(mh_tracebuf_open(&b, npy_path, &e) == 0 && b.swap);
    CHECK(mh_tracebuf_bind(&b, &s, &e) == 0);
    file = dump_to_string(&s, names, &b, MH_DUMP_MOSAIC, 0, NULL, NULL, &e);
    mh_tracebuf_close(&b);
    CHECK(mem && file && strcmp(mem, file) == 0);
    free(file);

    /* wrong size: one word short, and not a multiple of 4 */
    CHECK(truncate(path, (off_t)s.bytes - 4) == 0);
    CHECK(mh_tracebuf_open(&b, path, &e) == 0);
    CHECK(mh_tracebuf_bind(&b, &s, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "has 344063 words but the meta describes 16384 traces x 21 entries = 344064 words");
    mh_tracebuf_close(&b);
    CHECK(truncate(path, (off_t)s.bytes - 2) == 0);
    CHECK(mh_tracebuf_open(&b, path, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "not a multiple of 4");
    CHECK(mh_tracebuf_open(&b, "/nonexistent/buf.bin", &e) == MH_E_IO);
    CHECK_CONTAINS(e.message, "/nonexistent/buf.bin: cannot open");
    unlink(path);
    unlink(npy_path);
    free(mem);
    free(w);
}

int main(void)
{
    mh_names names;
    make_names(&names);
    random_cases(&names);
    exact_errors(&names);
    file_equals_memory(&names);
    mh_names_free(&names);
    return check_report("test_dump_mosaic");
}
