/* test_ptx_markers.c - the marker records of the PTX front end: what the lexer
 * reads from each "// @mgpu" comment (kind, name, line, offsets), which
 * comments are markers and which are not (strings, block comments), a failed allocation of
 * the records reported as MH_E_NO_MEMORY by the parse (this test is linked with
 * --wrap=realloc to make one fail), and the instrumentation on a module with
 * many markers and names: every marker rewritten, names in order of first
 * appearance, and the line map's search agreeing with a walk of the list. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "emu_util.h"
#include "frontend/ptx.h"
#include "instrument/instrument.h"

/* ---- a realloc that fails once, on request ------------------------------ */

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static size_t fail_size; /* the next realloc of exactly this many bytes fails (0: none) */

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_size && n == fail_size) {
        fail_size = 0;
        return NULL;
    }
    return __real_realloc(p, n);
}

static const char *src;

static const char HEAD[] = ".version 8.0\n.target sm_90\n.address_size 64\n"; /* 3 lines */

/* The marker's name as a string (static buffer). */
static const char *name_of(const mh_ptx_module *m, const mh_ptx_marker *mk)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)mk->name_len, m->text + mk->name_off);
    return buf;
}

/* Offset of the n-th (from 0) occurrence of needle in text. */
static size_t nth_offset(const char *text, const char *needle, int n)
{
    const char *p = text;
    for (int i = 0; p && i <= n; i++) {
        p = strstr(i ? p + 1 : p, needle);
    }
    return p ? (size_t)(p - text) : SIZE_MAX;
}

static void records(void)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".file 1 \"// @mgpu begin in_a_string\"\n"      /* 4: a string, not a comment */
        "// @mgpu begin module_level\n"                  /* 5: recorded (the instrumentation refuses it) */
        ".visible .entry k()\n{\n"                        /* 6, 7 */
        "/* // @mgpu begin in_a_block_comment\n*/\n"      /* 8, 9 */
        "//@mgpu begin  a b \r\n"                         /* 10: name "a b" (white space trimmed) */
        "L1:\n// @mgpu end\ta b\n\n"                       /* 11-13: after a label (one between a label and
                                                          * its ':' is refused: test_ptx_limits) */
        "\t// @mgpux y\n"                                  /* 14: bad verb */
        "// @mgpu beginx y\n"                              /* 15: bad verb (not the word begin) */
        "// @mgpu begin   \n"                              /* 16: no name */
        "// @mgpu: a note\n"                               /* 17: bad verb (what the rewrite's own comments are) */
        "// not a marker @mgpu begin z\n"                  /* 18 */
        "ret;\n}\n"                                        /* 19, 20 */
        "// @mgpu end last";                               /* 21: no newline after it */
    mh_ptx_module m;
    mh_error e;
    CHECK(mh_ptx_parse(&m, text, sizeof text - 1, "r.ptx", &e) == 0);
    static const struct { uint32_t line; int kind; const char *name; const char *at; int nth; } want[] = {
        {5, MH_MARKER_BEGIN, "module_level", "// @mgpu begin module_level", 0},
        {10, MH_MARKER_BEGIN, "a b", "//@mgpu begin  a b", 0},
        {12, MH_MARKER_END, "a b", "// @mgpu end\ta b", 0},
        {14, MH_MARKER_BAD_VERB, "", "// @mgpux", 0},
        {15, MH_MARKER_BAD_VERB, "", "// @mgpu beginx", 0},
        {16, MH_MARKER_NO_NAME, "", "// @mgpu begin   \n", 0},
        {17, MH_MARKER_BAD_VERB, "", "// @mgpu: a note", 0},
        {21, MH_MARKER_END, "last", "// @mgpu end last", 0},
    };
    size_t n = sizeof want / sizeof *want;
    CHECK(m.nmarkers == n);
    for (size_t i = 0; i < n && i < m.nmarkers; i++) {
        const mh_ptx_marker *mk = &m.markers[i];
        size_t off = nth_offset(m.text, want[i].at, want[i].nth);
        CHECK(mk->line == want[i].line);
        CHECK(mk->kind == want[i].kind);
        CHECK_STR(name_of(&m, mk), want[i].name);
        CHECK(mk->off == off);
        /* eol: the line's '\n', or the end of the text */
        const char *nl = strchr(m.text + off, '\n');
        CHECK(mk->eol == (nl ? (size_t)(nl - m.text) : sizeof text - 1));
        if (i) CHECK(mk->off > m.markers[i - 1].off);
        if (mk->line != want[i].line || mk->kind != want[i].kind)
            fprintf(stderr, "  marker %zu: line %u kind %d\n", i, mk->line, mk->kind);
    }
    /* the parser's pseudo-instructions: one per marker inside the body, at the comment */
    const mh_ptx_func *f = mh_ptx_find(&m, "k");
    uint32_t placed = 0;
    for (uint32_t i = 0; f && i < f->ncode; i++)
        if (f->code[i].mods & MH_MOD_MARKER) {
            CHECK(f->code[i].text_off == m.markers[1 + placed].off);
            CHECK(f->code[i].line == m.markers[1 + placed].line);
            placed++;
        }
    CHECK(placed == 6);
    /* the instrumentation reports the first malformed one, wherever it is */
    mh_instrumented r;
    CHECK(mh_instrument(&m, MH_SCOPE_WARP, &r, &e) == MH_E_PTX_SYNTAX);
    CHECK(e.line == 14);
    CHECK_CONTAINS(e.message, "r.ptx:14: bad marker: expected \"// @mgpu begin NAME\" or \"// @mgpu end NAME\"");
    mh_ptx_free(&m);
    CHECK(m.markers == NULL && m.nmarkers == 0);

    /* a module that fails to parse keeps nothing */
    static const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                              "// @mgpu begin a\nret;\n";
    CHECK(mh_ptx_parse(&m, bad, sizeof bad - 1, "b.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK(m.markers == NULL && m.nmarkers == 0);
    /* a marker the look-ahead for a label reads (after "ret"), forgotten and read again as
     * the instruction is parsed: inside it, reported once, at its line */
    static const char inside[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                                 "ret\n// @mgpu end a\n;\n}\n";
    CHECK(mh_ptx_parse(&m, inside, sizeof inside - 1, "i.ptx", &e) == MH_E_PTX_SYNTAX);
    CHECK(e.line == 7);
    CHECK_CONTAINS(e.message, "i.ptx:7: a marker inside the statement that starts on line 6");
}

/* A kernel with `pairs` begin/end pairs around an add, names "r<i % names>"
 * (names 0: all distinct); malloc'd. */
static char *many_markers(int pairs, int names)
{
    size_t cap = (size_t)pairs * 80 + 512, o = 0;
    char *t = malloc(cap);
    if (!t) return NULL;
    o += (size_t)snprintf(t + o, cap - o, "%s.visible .entry k(.param .u64 p)\n{\n.reg .b32 %%r<2>;\nmov.u32 %%r1, 0;\n",
                          HEAD);
    for (int i = 0; i < pairs; i++) {
        int id = names ? i % names : i;
        o += (size_t)snprintf(t + o, cap - o, "// @mgpu begin r%d\nadd.s32 %%r1, %%r1, 1;\n// @mgpu end r%d\n", id, id);
    }
    snprintf(t + o, cap - o, "ret;\n}\n");
    return t;
}

static void out_of_memory(void)
{
    /* 18 markers: the records grow from 16 to 32 at the 17th */
    char *t = many_markers(9, 1);
    mh_ptx_module m;
    mh_error e;
    fail_size = 32 * sizeof(mh_ptx_marker);
    int rc = mh_ptx_parse(&m, t, strlen(t), "oom.ptx", &e);
    CHECK(fail_size == 0); /* it was asked for */
    CHECK(rc == MH_E_NO_MEMORY && e.code == MH_E_NO_MEMORY);
    CHECK(e.line == 32); /* the 17th marker: pair 8's begin (pair i begins on line 8 + 3 i) */
    CHECK_CONTAINS(e.message, "oom.ptx:32: out of memory for the marker records");
    CHECK(m.markers == NULL && m.nfuncs == 0);
    fail_size = 0;
    /* and without the failure, all 18 are there */
    CHECK(mh_ptx_parse(&m, t, strlen(t), "oom.ptx", &e) == 0);
    CHECK(m.nmarkers == 18);
    mh_ptx_free(&m);
    free(t);
}

/* mh_instrumented_line as a walk of the insertion list, to check its search against. */
static uint32_t line_by_walk(const mh_instrumented *r, uint32_t line, int *added)
{
    uint32_t delta = 0;
    *added = 0;
    for (size_t i = 0; i < r->ninserted; i++) {
        const mh_insertion *in = &r->inserted[i];
        uint32_t first = in->line + delta, last = first + in->newlines;
        if (line < first) break;
        if (line <= last) {
            *added = !((line == first && in->text_before) || (line == last && in->text_after));
            return in->line;
        }
        delta += in->newlines;
    }
    return line - delta;
}

/* Every line (every step-th one and those around the ends: the walk is slow on a large module). */
static void check_line_map(const mh_instrumented *r, uint32_t step, const char *what)
{
    uint32_t lines = 1, bad = 0;
    for (size_t i = 0; i < r->len; i++) lines += r->text[i] == '\n';
    for (uint32_t l = 0; l <= lines + 2; l += l < 300 || l + 300 > lines ? 1 : step) {
        int a1, a2;
        uint32_t o1 = mh_instrumented_line(r, l, &a1), o2 = line_by_walk(r, l, &a2);
        bad += o1 != o2 || a1 != a2;
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "  %s: %u lines map differently\n", what, bad);
}

static void many(void)
{
    for (int variant = 0; variant < 2; variant++) {
        int pairs = 20000, names = variant ? 0 : 7;
        char *t = many_markers(pairs, names);
        mh_ptx_module m;
        mh_instrumented r;
        mh_error e;
        CHECK(t && mh_ptx_parse(&m, t, strlen(t), "many.ptx", &e) == 0);
        CHECK(m.nmarkers == (size_t)pairs * 2);
        int rc = mh_instrument(&m, MH_SCOPE_WARP, &r, &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  %s\n", e.message);
        CHECK(r.markers == (uint32_t)pairs * 2 && r.nkernels == 1);
        CHECK(r.names.n == (size_t)(names ? names : pairs));
        /* ids in order of first appearance */
        int ok = 1;
        for (size_t i = 0; i < r.names.n; i++) {
            char want[32];
            snprintf(want, sizeof want, "r%zu", i);
            ok &= r.names.v[i].id == i && !strcmp(r.names.v[i].name, want);
        }
        CHECK(ok);
        /* each record carries its tag: begin of r5 is 5, its end 5 | bit 31 */
        char want[96];
        snprintf(want, sizeof want, "// @mgpu: record end \"r5\" (tag 0x%08x)", 5u | MH_EXIT_BIT);
        CHECK_CONTAINS(r.text, want);
        check_line_map(&r, 97, names ? "many, 7 names" : "many, distinct names");
        /* the rewrite parses again, with the rewrite's own comments as (bad-verb) records */
        mh_ptx_module again;
        CHECK(mh_ptx_parse(&again, r.text, r.len, "many.ptx", &e) == 0);
        size_t bad_verb = 0;
        for (size_t i = 0; i < again.nmarkers; i++) bad_verb += again.markers[i].kind == MH_MARKER_BAD_VERB;
        CHECK(again.nmarkers == bad_verb + (size_t)pairs * 2);
        mh_ptx_free(&again);
        mh_instrumented_free(&r);
        mh_ptx_free(&m);
        free(t);
    }
    /* the line map's search on the shipped kernels, both scopes */
    static const char *files[] = {"ptx/tiled.ptx", "ptx/reduce.ptx", "ptx/persistent.ptx", "tests/golden/mini.ptx",
                                  "tests/ptx/func_markers.ptx", "tests/ptx/llvm_tiled.ptx"};
    for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++)
        for (int scope = 0; scope < 2; scope++) {
            mh_ptx_module m;
            mh_instrumented r;
            mh_error e;
            CHECK(parse_ptx_file(&m, src, files[fi]) == 0);
            CHECK(mh_instrument(&m, scope ? MH_SCOPE_WARPGROUP : MH_SCOPE_WARP, &r, &e) == 0 && r.markers > 0);
            check_line_map(&r, 1, files[fi]);
            mh_instrumented_free(&r);
            mh_ptx_free(&m);
        }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    src = argv[1];
    records();
    out_of_memory();
    many();
    return check_report("test_ptx_markers");
}
