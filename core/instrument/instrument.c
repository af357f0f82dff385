/* instrument.c - marker rewriting (see instrument.h).  The rewrite is a set
 * of insertions into the original text at offsets the front end recorded,
 * so everything else in the module stays byte for byte as it was. */
#include "instrument/instrument.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t at;      /* insert before this offset */
    uint32_t prio;  /* at equal offsets: the order of the kinds of code (P_*) */
    size_t seq;     /* insertion order, for equal offsets and priorities */
    char *text;
    size_t len;
} edit;

typedef struct {
    edit *v;
    size_t n, cap;
    int oom;
} edits;

/* What may be inserted at one offset, in the order it runs: the count read back after a call
 * (that ends just there), a run's bounds check, its records, the count stored before a call, the
 * code at an exit, and the indentation put back before the original statement. */
enum { P_SYNC_AFTER, P_CHECK, P_RECORD, P_SYNC_BEFORE, P_EXIT, P_FILL };

static void add_edit(edits *E, size_t at, uint32_t prio, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_edit(edits *E, size_t at, uint32_t prio, const char *fmt, ...)
{
    if (E->oom) return;
    if (E->n == E->cap) {
        size_t c = E->cap ? E->cap * 2 : 32;
        edit *nv = realloc(E->v, c * sizeof *nv);
        if (!nv) { E->oom = 1; return; }
        E->v = nv;
        E->cap = c;
    }
    char buf[1024]; /* most edits fit: formatted once */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) { E->oom = 1; return; }
    if ((size_t)n < sizeof buf) memcpy(s, buf, (size_t)n + 1);
    else {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    E->v[E->n].at = at;
    E->v[E->n].prio = prio;
    E->v[E->n].seq = E->n;
    E->v[E->n].text = s;
    E->v[E->n].len = (size_t)n;
    E->n++;
}

static int by_offset(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    if (x->prio != y->prio) return x->prio < y->prio ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The markers are the front end's records (m->markers): the lexer read each
 * "// @mgpu" comment once, its kind, name, line and offsets. */
#define NAME_MAX_SHOWN 600 /* a name in a message: the messages are shorter than this anyway */
static int name_shown(const mh_ptx_marker *mk) { return (int)(mk->name_len < NAME_MAX_SHOWN ? mk->name_len : NAME_MAX_SHOWN); }
#define MK_NAME(m, mk) name_shown(mk), (m)->text + (mk)->name_off

/* Every marker must read "// @mgpu begin NAME" or "// @mgpu end NAME": the
 * first one that does not is the error, wherever it is. */
static int check_grammar(const mh_ptx_module *m, mh_error *e)
{
    for (size_t i = 0; i < m->nmarkers; i++) {
        const mh_ptx_marker *mk = &m->markers[i];
        if (mk->kind == MH_MARKER_BAD_VERB) {
            e->line = mk->line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: bad marker: expected \"// @mgpu begin NAME\" or \"// @mgpu end NAME\"",
                           m->path, mk->line);
        }
        if (mk->kind == MH_MARKER_NO_NAME) {
            e->line = mk->line;
            return mh_fail(e, MH_E_PTX_SYNTAX, "%.200s:%u: marker without a region name", m->path, mk->line);
        }
    }
    return 0;
}

/* Region names to ids: an open-addressing hash table over the names' bytes in
 * the module text, ids in order of first appearance (the names table's
 * order).  A linear search made a module with many names quadratic. */
typedef struct {
    const char *s;  /* NULL: empty slot */
    size_t len;
    uint32_t id;
} name_slot;

typedef struct {
    name_slot *v;
    size_t cap, n;  /* cap: a power of two, at most half full */
} name_index;

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static name_slot *name_find(const name_index *x, const char *s, size_t len)
{
    size_t i = (size_t)name_hash(s, len) & (x->cap - 1);
    while (x->v[i].s && (x->v[i].len != len || memcmp(x->v[i].s, s, len))) i = (i + 1) & (x->cap - 1);
    return &x->v[i];
}

static int name_index_grow(name_index *x)
{
    name_index y = {calloc(x->cap ? x->cap * 2 : 64, sizeof *y.v), x->cap ? x->cap * 2 : 64, x->n};
    if (!y.v) return -1;
    for (size_t i = 0; i < x->cap; i++)
        if (x->v[i].s) *name_find(&y, x->v[i].s, x->v[i].len) = x->v[i];
    free(x->v);
    *x = y;
    return 0;
}

/* The id of the name (len bytes at s, which must stay valid while the index lives: the module's
 * text or the probes'), added to t (and the index) when new. */
static int intern(mh_names *t, name_index *x, const char *s, size_t len, uint32_t *id, mh_error *e)
{
    if ((x->n + 1) * 2 > x->cap && name_index_grow(x)) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    name_slot *slot = name_find(x, s, len);
    if (slot->s) { *id = slot->id; return 0; }
    if (t->n >= MH_NAME_ID_MAX) return mh_fail(e, MH_E_PTX_UNSUPPORTED, "more than 2^31 region names");
    char *name = malloc(len + 1);
    if (!name) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    memcpy(name, s, len);
    name[len] = 0;
    *id = (uint32_t)t->n;
    int rc = mh_names_add(t, name, *id, e);
    free(name);
    if (rc) return rc;
    slot->s = s;
    slot->len = len;
    slot->id = *id;
    x->n++;
    return 0;
}

/* Line breaks in n bytes at s. */
static size_t count_newlines(const char *s, size_t n)
{
    size_t c = 0;
    for (const char *p = s, *end = s + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) c++;
    return c;
}

/* The line map of the rewrite: one record per insertion point (edits sorted
 * by offset; those at one offset merged). */
static int record_insertions(const char *orig, const edits *E, mh_instrumented *out, mh_error *e)
{
    out->inserted = calloc(E->n ? E->n : 1, sizeof *out->inserted);
    if (!out->inserted) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    size_t n = 0, scanned = 0;
    uint32_t line = 1;
    for (size_t i = 0; i < E->n; i++) {
        uint32_t nl = (uint32_t)count_newlines(E->v[i].text, E->v[i].len);
        if (n && E->v[i].at == E->v[i - 1].at) { /* more text at the same point */
            out->inserted[n - 1].newlines += nl;
            continue;
        }
        line += (uint32_t)count_newlines(orig + scanned, E->v[i].at - scanned);
        scanned = E->v[i].at;
        out->inserted[n].line = line;
        out->inserted[n].newlines = nl;
        /* original text on the line between the neighbouring insertion points and this one */
        size_t at = E->v[i].at, lo = n ? E->v[i - 1].at : 0, hi = at, b = at, a = at;
        for (size_t j = i + 1; j < E->n && hi == at; j++) hi = E->v[j].at;
        if (hi == at) hi = strlen(orig);
        while (b > lo && (orig[b - 1] == ' ' || orig[b - 1] == '\t')) b--;
        while (a < hi && (orig[a] == ' ' || orig[a] == '\t' || orig[a] == '\r')) a++;
        out->inserted[n].text_before = b > lo && orig[b - 1] != '\n';
        out->inserted[n].text_after = a < hi && orig[a] != '\n';
        n++;
    }
    out->ninserted = n;
    for (size_t i = 1; i < n; i++) out->inserted[i].before = out->inserted[i - 1].before + out->inserted[i - 1].newlines;
    return 0;
}

uint32_t mh_instrumented_line(const mh_instrumented *r, uint32_t line, int *added)
{
    if (added) *added = 0;
    /* the first insertion whose last rewritten line is at or after `line` (those
     * lines never decrease along the list): the line is in it, or before it */
    size_t lo = 0, hi = r->ninserted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mh_insertion *in = &r->inserted[mid];
        if (in->line + in->before + in->newlines < line) lo = mid + 1;
        else hi = mid;
    }
    if (lo == r->ninserted) /* after every insertion */
        return r->ninserted ? line - (r->inserted[lo - 1].before + r->inserted[lo - 1].newlines) : line;
    const mh_insertion *in = &r->inserted[lo];
    uint32_t start = in->line + in->before; /* the rewritten line the insertion begins on */
    if (line < start) return line - in->before;
    /* the first line keeps the original text before the insertion, the last one
     * the original text after it; lines between are all added */
    int original = (line == start && in->text_before) || (line == start + in->newlines && in->text_after);
    if (added) *added = !original;
    return in->line;
}

/* The registers every instrumented function gets. */
/* ---- the code added ------------------------------------------------------------------------
 * Registers: d0 the trace buffer (the header of trace 0), r0 entries per trace, r2 the trace's
 * index, p0 "this thread writes the trace", r8 the count (event words so far, also past the
 * capacity), d2 the trace's base + 4 x count (events go to [d2+12] on), p1 "this run of records
 * fits".  Only r8, d2, p0 and p1 live through the kernel: the start words are written in the
 * prologue, and the trace's base (d2 - 4 x count) and calibration record are computed again at
 * an exit. */
#define MGPU_REGS                              \
    "\t.reg .pred \t%%__mgpu_p<3>;\n"           \
    "\t.reg .b32 \t%%__mgpu_r<20>;\n"           \
    "\t.reg .b64 \t%%__mgpu_d<5>;\n"

/* Entry: d0 = the trace buffer, r0 = entries per trace. */
static const char PROLOGUE_HEAD[] =
    "\n\t// @mgpu: trace prologue (added by mgpu-harness)\n" MGPU_REGS
    "\tld.param.u64 \t%%__mgpu_d0, [__mgpu_trace];\n"
    "\tld.param.u32 \t%%__mgpu_r0, [__mgpu_entries];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d0, %%__mgpu_d0;\n";

/* r2 = this thread's trace index, p0 = it is the trace's writer (lane 0 of
 * the warp, thread 0 of the warpgroup: the lowest thread, also of a last,
 * partial one); a block has ceil(threads / scope) traces.  printf args:
 * scope - 1, lg, scope - 1, lg. */
static const char TRACE_SLOT[] =
    "\tmov.u32 \t%%__mgpu_r2, %%tid.x;\n"
    "\tmov.u32 \t%%__mgpu_r3, %%tid.y;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%tid.z;\n"
    "\tmov.u32 \t%%__mgpu_r5, %%ntid.x;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ntid.y;\n"
    "\tmov.u32 \t%%__mgpu_r7, %%ntid.z;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6, %%__mgpu_r3;\n"
    "\tmad.lo.s32 \t%%__mgpu_r2, %%__mgpu_r3, %%__mgpu_r5, %%__mgpu_r2;\n"
    "\tand.b32 \t%%__mgpu_r3, %%__mgpu_r2, %u;\n"
    "\tsetp.eq.u32 \t%%__mgpu_p0, %%__mgpu_r3, 0;\n"
    "\tshr.u32 \t%%__mgpu_r2, %%__mgpu_r2, %u;\n"
    "\tmul.lo.s32 \t%%__mgpu_r5, %%__mgpu_r5, %%__mgpu_r6;\n"
    "\tmul.lo.s32 \t%%__mgpu_r5, %%__mgpu_r5, %%__mgpu_r7;\n"
    "\tadd.s32 \t%%__mgpu_r5, %%__mgpu_r5, %u;\n"
    "\tshr.u32 \t%%__mgpu_r5, %%__mgpu_r5, %u;\n"
    "\tmov.u32 \t%%__mgpu_r3, %%ctaid.x;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.y;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.y;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmov.u32 \t%%__mgpu_r4, %%nctaid.z;\n"
    "\tmov.u32 \t%%__mgpu_r6, %%ctaid.z;\n"
    "\tmad.lo.s32 \t%%__mgpu_r3, %%__mgpu_r3, %%__mgpu_r4, %%__mgpu_r6;\n"
    "\tmad.lo.s32 \t%%__mgpu_r2, %%__mgpu_r3, %%__mgpu_r5, %%__mgpu_r2;\n";

/* Entry: the trace's base d1, its calibration record d4; the start readings
 * (%clock, %globaltimer_lo) go to the header's first word and the
 * calibration record now, so nothing of them stays live; count 0. */
static const char PROLOGUE_TAIL[] =
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tld.param.u64 \t%%__mgpu_d3, [__mgpu_calib];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d3, %%__mgpu_d3;\n"
    "\tmul.wide.u32 \t%%__mgpu_d4, %%__mgpu_r2, 16;\n"
    "\tadd.s64 \t%%__mgpu_d4, %%__mgpu_d3, %%__mgpu_d4;\n"
    "\tmov.u32 \t%%__mgpu_r12, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r9, %%globaltimer_lo;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d1], %%__mgpu_r9;\n"
    "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d4], {%%__mgpu_r12, %%__mgpu_r9};\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\tmov.u64 \t%%__mgpu_d2, %%__mgpu_d1;\n";

/* An entry that calls .funcs with markers leaves the trace buffer and its
 * size where they find them (every writer stores the same values). */
static const char PUBLISH[] =
    "\t@%%__mgpu_p0 st.global.u64 \t[__mgpu_g_trace], %%__mgpu_d0;\n"
    "\t@%%__mgpu_p0 st.global.u32 \t[__mgpu_g_entries], %%__mgpu_r0;\n";

/* The module variables for that, before the first function. */
static const char GLOBALS[] =
    "// @mgpu: the trace buffer and its entries per trace, for .funcs with markers (added by mgpu-harness)\n"
    ".global .align 8 .u64 __mgpu_g_trace;\n"
    ".global .align 4 .u32 __mgpu_g_entries;\n\n";

/* A .func with markers: the same registers from the module variables, and
 * the count from the trace's header word, where its callers leave it. */
static const char FUNC_HEAD[] =
    "\n\t// @mgpu: trace state of this .func (added by mgpu-harness)\n" MGPU_REGS
    "\tld.global.u64 \t%%__mgpu_d0, [__mgpu_g_trace];\n"
    "\tld.global.u32 \t%%__mgpu_r0, [__mgpu_g_entries];\n";
static const char FUNC_TAIL[] =
    "\tmul.wide.u32 \t%%__mgpu_d1, %%__mgpu_r2, %%__mgpu_r0;\n"
    "\tshl.b64 \t%%__mgpu_d1, %%__mgpu_d1, 2;\n"
    "\tadd.s64 \t%%__mgpu_d1, %%__mgpu_d0, %%__mgpu_d1;\n"
    "\tmov.u32 \t%%__mgpu_r8, 0;\n"
    "\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d1+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d1, %%__mgpu_d2;\n";

/* d3 = the trace's base, from d2 and the count. */
#define TRACE_BASE_D3                                         \
    "\tmul.wide.u32 \t%%__mgpu_d3, %%__mgpu_r8, 4;\n"         \
    "\tsub.s64 \t%%__mgpu_d3, %%__mgpu_d2, %%__mgpu_d3;\n"

/* Around a call to a function that records events: the count goes to the
 * header word before, and comes back (with d2) after. */
static const char SYNC_BEFORE[] = TRACE_BASE_D3 "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n\t";
static const char SYNC_AFTER[] =
    "\n" TRACE_BASE_D3
    "\t@%%__mgpu_p0 ld.global.u32 \t%%__mgpu_r8, [%%__mgpu_d3+8];\n"
    "\tmul.wide.u32 \t%%__mgpu_d2, %%__mgpu_r8, 4;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d3, %%__mgpu_d2;";

/* At a .func's returns: the count, for its caller. */
static const char FUNC_EXIT[] = "\t// @mgpu: the count back to the caller\n" TRACE_BASE_D3
                                "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n";

/* The start of a run of n records: the count and d2 move past the run at once (nothing reads
 * them before the run's end: it holds no call or exit), and the run fits when the count now +
 * 2 < entries, i.e. the count before + 2n + 3 <= entries (r15 = count + 2, r16 or r0 = entries).
 * printf args: n, plural, 2n, 8n. */
static const char CHECK_ENTRY[] =
    "\t// @mgpu: bounds check of the next %u record%s\n"
    "\tadd.s32 \t%%__mgpu_r8, %%__mgpu_r8, %u;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d2, %u;\n"
    "\tadd.s32 \t%%__mgpu_r15, %%__mgpu_r8, 2;\n"
    "\tld.param.u32 \t%%__mgpu_r16, [__mgpu_entries];\n"
    "\tsetp.lt.and.s32 \t%%__mgpu_p1, %%__mgpu_r15, %%__mgpu_r16, %%__mgpu_p0;\n";
static const char CHECK_FUNC[] =
    "\t// @mgpu: bounds check of the next %u record%s\n"
    "\tadd.s32 \t%%__mgpu_r8, %%__mgpu_r8, %u;\n"
    "\tadd.s64 \t%%__mgpu_d2, %%__mgpu_d2, %u;\n"
    "\tadd.s32 \t%%__mgpu_r15, %%__mgpu_r8, 2;\n"
    "\tsetp.lt.and.s32 \t%%__mgpu_p1, %%__mgpu_r15, %%__mgpu_r0, %%__mgpu_p0;\n";

/* Record k of a run of n: (tag, %clock) at [d2 + 12 + 8k - 8n] (d2 is past the run already)
 * when the run fits.  The aligned layout stores both words at once (the offset is 8-aligned
 * there); printf args: what, name, tag, tag, offset (the legacy layout: what, name, tag,
 * offset, tag, offset + 4). */
static const char RECORD_V2[] =
    "\t// @mgpu: record %s \"%s\" (tag 0x%08x)\n"
    "\tmov.u32 \t%%__mgpu_r11, %u;\n"
    "\tmov.u32 \t%%__mgpu_r10, %%clock;\n"
    "\t@%%__mgpu_p1 st.global.v2.u32 \t[%%__mgpu_d2+%d], {%%__mgpu_r11, %%__mgpu_r10};\n";
static const char RECORD_LEGACY[] =
    "\t// @mgpu: record %s \"%s\" (tag 0x%08x)\n"
    "\tmov.u32 \t%%__mgpu_r10, %%clock;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+%d], %u;\n"
    "\t@%%__mgpu_p1 st.global.u32 \t[%%__mgpu_d2+%d], %%__mgpu_r10;\n";

/* At an entry's exit: the header's SM id and count (at the trace's base + 4: 8-aligned in the
 * aligned layout) and the calibration's exit readings, the record found again from the slot. */
static const char HEADER_HEAD[] =
    "\t// @mgpu: trace header and clock calibration at exit\n"
    "\tmov.u32 \t%%__mgpu_r13, %%clock;\n"
    "\tmov.u32 \t%%__mgpu_r14, %%globaltimer_lo;\n"
    "\tmov.u32 \t%%__mgpu_r11, %%smid;\n" TRACE_BASE_D3;
static const char HEADER_V2[] = "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d3+4], {%%__mgpu_r11, %%__mgpu_r8};\n";
static const char HEADER_LEGACY[] = "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+4], %%__mgpu_r11;\n"
                                    "\t@%%__mgpu_p0 st.global.u32 \t[%%__mgpu_d3+8], %%__mgpu_r8;\n";
static const char HEADER_CALIB[] =
    "\tld.param.u64 \t%%__mgpu_d1, [__mgpu_calib];\n"
    "\tcvta.to.global.u64 \t%%__mgpu_d1, %%__mgpu_d1;\n"
    "\tmul.wide.u32 \t%%__mgpu_d4, %%__mgpu_r2, 16;\n"
    "\tadd.s64 \t%%__mgpu_d4, %%__mgpu_d1, %%__mgpu_d4;\n"
    "\t@%%__mgpu_p0 st.global.v2.u32 \t[%%__mgpu_d4+8], {%%__mgpu_r13, %%__mgpu_r14};\n";

#define RUN_MAX 32 /* records under one bounds check at most (a longer run is split) */

/* Whether `in` may run a function that records events (traced): a call to
 * one, or a call through a pointer (kept as text), which may call any. */
static int calls_traced(const mh_ptx_insn *in, const char *traced)
{
    int call = in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
    return call && (in->callee < 0 || traced[in->callee]);
}

/* An instruction after which the straight line ends: a branch, a call, an exit. */
static int ends_line(const mh_ptx_insn *in)
{
    return in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP ||
           in->op == MH_OP_CALL || (in->op == MH_OP_OPAQUE && (in->mods & MH_MOD_OPAQUE_CALL));
}

static int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int err_at(mh_error *e, const mh_ptx_module *m, uint32_t line, mh_code code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->line = line;
    return mh_fail(e, code, "%.200s:%u: %s", m->path, line, msg);
}

/* ---- record points -------------------------------------------------------------------------
 * Every marker (and, with probes, every probe's begin and end) is a point of one function's code:
 * before instruction `insn` on every path into it, after it on its fall-through, on the exit
 * path of an exit, or on the taken edge of a guarded branch (code reached through a trampoline
 * the branch is sent to).  The checks, the runs and the code all work on points. */
enum { PT_BEFORE, PT_AFTER, PT_EXIT, PT_EDGE }; /* PT_EDGE: on a guarded branch's taken edge */
#define SEQ_MARKER 0x40000000u /* markers' order at one place: after the probes' (see probe_seq) */

typedef struct {
    uint32_t insn;
    uint8_t where, end;
    uint32_t id;       /* region name */
    size_t at;         /* where its record goes in the text */
    uint32_t line;     /* for messages */
    uint32_t seq;      /* order among points at one place */
} point;

static int by_place(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->insn != y->insn) return x->insn < y->insn ? -1 : 1;
    if (x->where != y->where) return x->where < y->where ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static const char *pname(const mh_names *names, uint32_t id) { return mh_names_get(names, id)->name; }

/* Region stacks along the control flow of one function: every instruction must
 * be reached with the same stack of open regions from every path, and an
 * end must close the innermost open region.  (Compilers lay loops out with
 * the latch before the header, so the text order of markers proves nothing.) */
typedef struct { uint32_t *ids; uint32_t n; int set; } region_stack;

static int same_stack(const region_stack *a, const uint32_t *ids, uint32_t n)
{
    return a->n == n && (n == 0 || !memcmp(a->ids, ids, n * sizeof *ids));
}

static void describe_stack(const mh_names *names, const uint32_t *ids, uint32_t n, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s\"%s\"", i ? ", " : "", mh_names_get(names, ids[i])->name);
    if (o < len) snprintf(buf + o, len - o, "]");
}

/* Applies point p to the stack cur (depth *d). */
static int apply_point(const mh_ptx_module *m, const mh_ptx_func *f, const point *p, uint32_t *cur, uint32_t *d,
                       const mh_names *names, mh_error *e)
{
    char a[300];
    if (!p->end) {
        cur[(*d)++] = p->id;
        return 0;
    }
    if (*d == 0)
        return err_at(e, m, p->line, MH_E_PTX_SYNTAX, "end \"%.400s\" without its begin on some path (in %s)",
                      pname(names, p->id), f->name);
    if (cur[*d - 1] != p->id) {
        describe_stack(names, cur, *d, a, sizeof a);
        return err_at(e, m, p->line, MH_E_PTX_SYNTAX,
                      "end \"%.200s\" does not close the innermost open region (open: %s): regions must nest and "
                      "end once", pname(names, p->id), a);
    }
    (*d)--;
    return 0;
}

/* pts: the function's points sorted by place (by_place). */
static int check_flow(const mh_ptx_module *m, const mh_ptx_func *f, const point *pts, size_t npts,
                      const mh_names *names, int must_close, mh_error *e)
{
    uint32_t n = f->ncode;
    region_stack *st = calloc(n ? n : 1, sizeof *st);
    uint32_t *work = malloc((n ? n : 1) * sizeof *work), *first = malloc(((size_t)n + 1) * sizeof *first);
    uint32_t *cur = malloc((npts + 1) * sizeof *cur), *tmp = malloc((npts + 1) * sizeof *tmp);
    uint32_t *tmp2 = malloc((npts + 1) * sizeof *tmp2);
    char a[300], b[300];
    int rc = 0;
    if (!st || !work || !first || !cur || !tmp || !tmp2) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); goto done; }
    /* first[i]: the first point at instruction i (points sorted by instruction) */
    for (uint32_t i = 0, k = 0; i <= n; i++) {
        while (k < npts && pts[k].insn < i) k++;
        first[i] = (uint32_t)k;
    }
    if (!n) goto done;
    uint32_t nwork = 0;
    st[0].set = 1;
    work[nwork++] = 0;
    while (nwork && !rc) {
        uint32_t i = work[--nwork], depth = st[i].n;
        if (depth) memcpy(cur, st[i].ids, depth * sizeof *cur);
        uint32_t k = first[i], kend = first[i + 1];
        for (; !rc && k < kend && pts[k].where == PT_BEFORE; k++) rc = apply_point(m, f, &pts[k], cur, &depth, names, e);
        /* the fall-through gets the points after the instruction too (tmp, fall_depth) */
        uint32_t fall_depth = depth;
        if (depth) memcpy(tmp, cur, depth * sizeof *cur);
        for (; !rc && k < kend && pts[k].where == PT_AFTER; k++) rc = apply_point(m, f, &pts[k], tmp, &fall_depth, names, e);
        /* the exit path's points: checked on a copy, they lead nowhere; the taken edge's go to
         * the branch target (taken, taken_depth) */
        uint32_t taken_depth = depth;
        if (!rc && k < kend) {
            uint32_t dx = depth;
            if (depth) memcpy(tmp2, cur, depth * sizeof *cur);
            for (; !rc && k < kend && pts[k].where == PT_EXIT; k++) rc = apply_point(m, f, &pts[k], tmp2, &dx, names, e);
            if (depth) memcpy(tmp2, cur, depth * sizeof *cur);
            for (; !rc && k < kend; k++) rc = apply_point(m, f, &pts[k], tmp2, &taken_depth, names, e);
        }
        int has_edge = first[i] < kend && pts[kend - 1].where == PT_EDGE;
        if (rc) break;
        const mh_ptx_insn *in = &f->code[i];
        if (must_close && depth && (in->op == MH_OP_RET || in->op == MH_OP_EXIT)) {
            /* a .func's regions end inside it: its caller's own regions must nest around the call */
            rc = err_at(e, m, in->line, MH_E_PTX_SYNTAX, "region \"%s\" is still open where .func %s returns: a "
                        ".func's regions must end before it returns", mh_names_get(names, cur[depth - 1])->name,
                        f->name);
            break;
        }
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        struct { uint32_t to; const uint32_t *ids; uint32_t n; } succ[2];
        uint32_t ns = 0;
        if (in->op == MH_OP_BRA)
            succ[ns].to = in->o[0].reg, succ[ns].ids = has_edge ? tmp2 : cur, succ[ns++].n = has_edge ? taken_depth : depth;
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n)
            succ[ns].to = i + 1, succ[ns].ids = tmp, succ[ns++].n = fall_depth;
        for (uint32_t s2 = 0; s2 < ns && !rc; s2++) {
            region_stack *t = &st[succ[s2].to];
            uint32_t dd = succ[s2].n;
            if (!t->set) {
                t->ids = malloc((dd ? dd : 1) * sizeof *t->ids);
                if (!t->ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                if (dd) memcpy(t->ids, succ[s2].ids, dd * sizeof *t->ids);
                t->n = dd;
                t->set = 1;
                work[nwork++] = succ[s2].to;
            } else if (!same_stack(t, succ[s2].ids, dd)) {
                describe_stack(names, t->ids, t->n, a, sizeof a);
                describe_stack(names, succ[s2].ids, dd, b, sizeof b);
                rc = err_at(e, m, f->code[succ[s2].to].line, MH_E_PTX_SYNTAX,
                            "paths into this line of %s have different open regions (%s and %s): a region begins or "
                            "ends on one branch only", f->name, a, b);
            }
        }
    }
done:
    for (uint32_t i = 0; st && i < n; i++) free(st[i].ids);
    free(st);
    free(work);
    free(first);
    free(cur);
    free(tmp);
    free(tmp2);
    return rc;
}

/* Where instruction i's text begins (the synthetic final ret: at the body's close). */
static size_t insn_at(const mh_ptx_func *f, uint32_t i)
{
    const mh_ptx_insn *in = &f->code[i];
    return in->text_off == 0 && in->text_end == 0 ? f->body_close : in->text_off;
}

/* The code of one function's points: runs of records, each under one bounds check.  A run is
 * at most RUN_MAX points of one straight line of code (no label that is a branch target, no
 * branch, call or exit between them); its check goes where that line begins, or right after
 * the previous run of the line, so it overlaps the code before the first record.  Points on
 * the exit path of a guarded exit are a run of their own in front of its header (exit_code).
 * seg: each instruction's line number; lone: the line number given to points outside any
 * (after a call, on a guarded exit path), which then run alone. */
typedef struct {
    edits *E;
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    const mh_names *names;
    int aligned, entry;
} emit_ctx;

static void emit_check(const emit_ctx *c, size_t at, uint32_t prio, uint32_t count)
{
    add_edit(c->E, at, prio, c->entry ? CHECK_ENTRY : CHECK_FUNC, count, count == 1 ? "" : "s", 2 * count, 8 * count);
}

static void emit_record(const emit_ctx *c, const point *p, uint32_t k, uint32_t count, uint32_t prio)
{
    uint32_t tag = p->id | (p->end ? MH_EXIT_BIT : 0);
    int off = 12 + 8 * (int)k - 8 * (int)count;
    const char *what = p->end ? "end" : "begin", *name = pname(c->names, p->id);
    if (c->aligned) add_edit(c->E, p->at, prio, RECORD_V2, what, name, tag, tag, off);
    else add_edit(c->E, p->at, prio, RECORD_LEGACY, what, name, tag, off, tag, off + 4);
}

/* The runs of pts[0 .. n) (sorted by place, none on a guarded exit's path). */
static int emit_runs(const emit_ctx *c, const point *pts, size_t n, mh_error *e)
{
    const mh_ptx_func *f = c->f;
    uint32_t *seg = malloc((f->ncode ? f->ncode : 1) * sizeof *seg);
    uint32_t *seg_first = malloc(((size_t)f->ncode + 1) * sizeof *seg_first);
    char *target = calloc(f->ncode ? f->ncode : 1, 1);
    if (!seg || !seg_first || !target) {
        free(seg);
        free(seg_first);
        free(target);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < f->ncode; i++)
        if (f->code[i].op == MH_OP_BRA && f->code[i].o[0].reg < f->ncode) target[f->code[i].o[0].reg] = 1;
    uint32_t ns = 0;
    for (uint32_t i = 0; i < f->ncode; i++) {
        if (i == 0 || target[i] || ends_line(&f->code[i - 1])) seg_first[ns++] = i;
        seg[i] = ns - 1;
    }
    uint32_t prev = UINT32_MAX; /* the line of the previous run (UINT32_MAX: none or alone) */
    for (size_t i = 0; i < n;) {
        /* a point after a call stands alone: its line begins after the call */
        int alone = pts[i].where == PT_AFTER && ends_line(&f->code[pts[i].insn]);
        uint32_t s = alone ? UINT32_MAX : seg[pts[i].insn];
        size_t j = i + 1;
        while (!alone && j < n && j - i < RUN_MAX && seg[pts[j].insn] == s &&
               !(pts[j].where == PT_AFTER && ends_line(&f->code[pts[j].insn])))
            j++;
        uint32_t count = (uint32_t)(j - i);
        if (alone) emit_check(c, pts[i].at, P_RECORD, count);
        else if (s != prev) emit_check(c, insn_at(f, seg_first[s]), P_CHECK, count); /* where the line begins */
        else emit_check(c, pts[i - 1].at, P_RECORD, count);                         /* after the previous run */
        for (size_t k = i; k < j; k++) emit_record(c, &pts[k], (uint32_t)(k - i), count, P_RECORD);
        prev = s;
        i = j;
    }
    free(seg);
    free(seg_first);
    free(target);
    return 0;
}

/* The code at an exit instruction i of f, after the exit path's own points xp[0 .. nx) for a
 * guarded exit.  A .func stores its count back (FUNC_EXIT) there; an entry branches to its one
 * exit block (exit_block), which writes the header: its ~35 instructions are in the code once,
 * whatever the number of exits (the original exit instruction stays, unreachable, so the
 * module's text is kept). */
static void exit_code(const emit_ctx *c, uint32_t i, const point *xp, size_t nx, size_t exit_label, size_t *label)
{
    const mh_ptx_insn *in = &c->f->code[i];
    size_t at = in->text_off;
    const char *g = in->guard >= 0 ? c->m->reg_name[in->guard] : "";
    if (in->guard >= 0 && (nx || !c->entry)) {
        add_edit(c->E, at, P_EXIT, "@%s%s bra \t$__mgpu_skip%zu;\n", in->guard_neg ? "" : "!", g, *label);
        for (size_t k = 0; k < nx; k += RUN_MAX) {
            uint32_t count = (uint32_t)(nx - k < RUN_MAX ? nx - k : RUN_MAX);
            emit_check(c, at, P_EXIT, count);
            for (uint32_t q = 0; q < count; q++) {
                point p = xp[k + q];
                p.at = at;
                emit_record(c, &p, q, count, P_EXIT);
            }
        }
        if (c->entry) add_edit(c->E, at, P_EXIT, "\tbra \t$__mgpu_exit%zu;\n", exit_label);
        else add_edit(c->E, at, P_EXIT, FUNC_EXIT);
        add_edit(c->E, at, P_FILL, "$__mgpu_skip%zu:\n\t", *label);
        (*label)++;
    } else if (in->guard >= 0) /* an entry's guarded exit without points of its own */
        add_edit(c->E, at, P_EXIT, "@%s%s bra \t$__mgpu_exit%zu;\n\t", in->guard_neg ? "!" : "", g, exit_label);
    else if (c->entry) add_edit(c->E, at, P_EXIT, "bra \t$__mgpu_exit%zu;\n\t", exit_label);
    else {
        add_edit(c->E, at, P_EXIT, FUNC_EXIT);
        add_edit(c->E, at, P_FILL, "\t");
    }
}

/* An entry's exit block, at the end of its body (reached by falling off the end too): the
 * header's SM id and count, the calibration's exit readings, exit. */
static void exit_block(const emit_ctx *c, size_t exit_label, unsigned scope)
{
    size_t at = c->f->body_close;
    unsigned lg = scope == MH_SCOPE_WARP ? 5 : 7;
    add_edit(c->E, at, P_EXIT, "$__mgpu_exit%zu:\n", exit_label);
    add_edit(c->E, at, P_EXIT, HEADER_HEAD);
    add_edit(c->E, at, P_EXIT, c->aligned ? HEADER_V2 : HEADER_LEGACY);
    add_edit(c->E, at, P_EXIT, TRACE_SLOT, scope - 1, lg, scope - 1, lg);
    add_edit(c->E, at, P_EXIT, HEADER_CALIB);
    add_edit(c->E, at, P_EXIT, "\texit; \t// @mgpu: the kernel ends here\n");
}

/* A defined function's body, [open, close) in the text. */
typedef struct { uint32_t open, close, func; } body;

static int by_open(const void *a, const void *b)
{
    uint32_t x = ((const body *)a)->open, y = ((const body *)b)->open;
    return (x > y) - (x < y);
}

/* The marker (an index into mk, sorted by offset) at offset off, or nmk. */
static size_t marker_at(const mh_ptx_marker *mk, size_t nmk, size_t off)
{
    size_t lo = 0, hi = nmk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mk[mid].off == off) return mid;
        if (mk[mid].off < off) lo = mid + 1; else hi = mid;
    }
    return nmk;
}

/* The points of function f's markers fmk[0 .. fn) (names ids[]), appended to *pts. */
static int marker_points(const mh_ptx_module *m, const mh_ptx_func *f, const mh_ptx_marker *fmk, size_t fn,
                         const uint32_t *ids, point **pts, size_t *npts, size_t *cap, mh_error *e)
{
    uint32_t *at = malloc((fn ? fn : 1) * sizeof *at);
    if (!at) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    /* each marker's instruction: the front end's MH_OP_NOP at the comment */
    for (size_t k = 0; k < fn; k++) at[k] = UINT32_MAX;
    for (uint32_t i = 0; i < f->ncode; i++) {
        if (!(f->code[i].mods & MH_MOD_MARKER)) continue;
        size_t k = marker_at(fmk, fn, f->code[i].text_off);
        if (k < fn) at[k] = i;
    }
    int rc = 0;
    for (size_t k = 0; k < fn && !rc; k++) {
        if (at[k] == UINT32_MAX) {
            rc = err_at(e, m, fmk[k].line, MH_E_PTX_SYNTAX, "marker \"%.*s\" is not between two statements",
                        MK_NAME(m, &fmk[k]));
            break;
        }
        if (*npts == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            point *nv = realloc(*pts, nc * sizeof *nv);
            if (!nv) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
            *pts = nv;
            *cap = nc;
        }
        (*pts)[(*npts)++] = (point){at[k], PT_BEFORE, fmk[k].kind == MH_MARKER_END, ids[k],
                                    fmk[k].eol + (m->text[fmk[k].eol] == '\n'), fmk[k].line,
                                    SEQ_MARKER + (uint32_t)k};
    }
    free(at);
    return rc;
}

/* ---- probes (issue 15) -----------------------------------------------------------------------
 * Each probe becomes points of an entry's code, from its control-flow graph at instruction
 * level: dominators (Cooper, Harvey and Kennedy's iteration over the reverse postorder) and
 * natural loops (a back edge u -> h where h dominates u; the loop is h and what reaches u
 * without passing h; loops with one header are one loop).  A region ends on an edge: a
 * branch's only edge (before it), a fall-through (after the instruction), or a guarded
 * branch's taken edge (PT_EDGE: the branch is sent to a trampoline that records and branches
 * on). */

/* The order of points at one place: probes' ends, innermost first, then their begins,
 * outermost first (rank: larger is further in), then markers in text order (SEQ_MARKER on): a
 * loop's iteration begins before a marker at its header and ends after one at its latch. */
#define RANK_MAX 0xffffu
enum { RANK_KERNEL = 0, RANK_RANGE = 1, RANK_AROUND = 10000 };
static uint32_t probe_seq(int end, uint32_t rank) { return end ? RANK_MAX - rank : RANK_MAX + 1 + rank; }

typedef struct {
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    uint32_t n;
    uint32_t (*succ)[2];  /* UINT32_MAX: none */
    uint32_t *pred_at, *preds;
    uint32_t *rpo, *order, nreach; /* order[i]: i's place in rpo (UINT32_MAX: unreachable) */
    uint32_t *idom;
} cfg;

static void cfg_free(cfg *g)
{
    free(g->succ);
    free(g->pred_at);
    free(g->preds);
    free(g->rpo);
    free(g->order);
    free(g->idom);
}

static int cfg_build(cfg *g, const mh_ptx_module *m, const mh_ptx_func *f, mh_error *e)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    g->f = f;
    uint32_t n = g->n = f->ncode;
    g->succ = malloc((n ? n : 1) * sizeof *g->succ);
    g->pred_at = calloc((size_t)n + 2, sizeof *g->pred_at);
    g->preds = malloc(((size_t)n * 2 + 1) * sizeof *g->preds);
    g->rpo = malloc((n ? n : 1) * sizeof *g->rpo);
    g->order = malloc((n ? n : 1) * sizeof *g->order);
    g->idom = malloc((n ? n : 1) * sizeof *g->idom);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack), *next = calloc(n ? n : 1, sizeof *next);
    if (!g->succ || !g->pred_at || !g->preds || !g->rpo || !g->order || !g->idom || !stack || !next) {
        free(stack);
        free(next);
        cfg_free(g);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        const mh_ptx_insn *in = &f->code[i];
        int uncond_exit = (in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) && in->guard < 0;
        g->succ[i][0] = g->succ[i][1] = UINT32_MAX;
        uint32_t k = 0;
        if (in->op == MH_OP_BRA) g->succ[i][k++] = in->o[0].reg;
        if (!uncond_exit && !(in->op == MH_OP_BRA && in->guard < 0) && i + 1 < n &&
            !(k && g->succ[i][0] == i + 1))
            g->succ[i][k++] = i + 1;
        for (uint32_t j = 0; j < k; j++) g->pred_at[g->succ[i][j] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) g->pred_at[i + 1] += g->pred_at[i];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < 2; j++)
            if (g->succ[i][j] != UINT32_MAX) {
                uint32_t v = g->succ[i][j];
                g->preds[g->pred_at[v] + next[v]++] = i;
            }
    /* postorder by an iterative DFS from 0, then reversed */
    for (uint32_t i = 0; i < n; i++) g->order[i] = UINT32_MAX, next[i] = 0;
    uint32_t sp = 0, npost = 0;
    if (n) {
        stack[sp++] = 0;
        g->order[0] = 0; /* on the stack */
    }
    while (sp) {
        uint32_t u = stack[sp - 1];
        if (next[u] < 2) {
            uint32_t v = g->succ[u][next[u]++];
            if (v != UINT32_MAX && g->order[v] == UINT32_MAX) {
                g->order[v] = 0;
                stack[sp++] = v;
            }
            continue;
        }
        g->rpo[npost++] = u;
        sp--;
    }
    for (uint32_t i = 0; i < npost / 2; i++) {
        uint32_t t = g->rpo[i];
        g->rpo[i] = g->rpo[npost - 1 - i];
        g->rpo[npost - 1 - i] = t;
    }
    g->nreach = npost;
    for (uint32_t i = 0; i < n; i++) g->order[i] = UINT32_MAX, g->idom[i] = UINT32_MAX;
    for (uint32_t i = 0; i < npost; i++) g->order[g->rpo[i]] = i;
    if (n) g->idom[0] = 0;
    for (int changed = 1; changed && n;) {
        changed = 0;
        for (uint32_t r = 1; r < npost; r++) {
            uint32_t b = g->rpo[r], nd = UINT32_MAX;
            for (uint32_t q = g->pred_at[b]; q < g->pred_at[b + 1]; q++) {
                uint32_t p = g->preds[q];
                if (g->idom[p] == UINT32_MAX) continue;
                if (nd == UINT32_MAX) { nd = p; continue; }
                uint32_t x = p, y = nd;
                while (x != y) {
                    while (g->order[x] > g->order[y]) x = g->idom[x];
                    while (g->order[y] > g->order[x]) y = g->idom[y];
                }
                nd = x;
            }
            if (nd != UINT32_MAX && g->idom[b] != nd) g->idom[b] = nd, changed = 1;
        }
    }
    free(stack);
    free(next);
    return 0;
}

static int dominates(const cfg *g, uint32_t a, uint32_t b)
{
    if (g->order[a] == UINT32_MAX || g->order[b] == UINT32_MAX) return 0;
    while (b != a && b != 0) b = g->idom[b];
    return b == a;
}

typedef struct {
    uint32_t header;
    uint32_t *body, nbody; /* sorted */
    uint32_t depth;        /* loops whose body holds the header, this one included */
} nat_loop;

static int in_loop(const nat_loop *l, uint32_t v)
{
    uint32_t lo = 0, hi = l->nbody;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->body[mid] == v) return 1;
        if (l->body[mid] < v) lo = mid + 1; else hi = mid;
    }
    return 0;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void loops_free(nat_loop *L, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) free(L[i].body);
    free(L);
}

/* The natural loops of g, in order of their headers. */
static int find_loops(const cfg *g, nat_loop **out, uint32_t *nout, mh_error *e)
{
    uint32_t n = g->n, nl = 0;
    nat_loop *L = NULL;
    uint32_t *stamp = malloc((n ? n : 1) * sizeof *stamp), *work = malloc((n ? n : 1) * sizeof *work);
    int *loop_of = malloc((n ? n : 1) * sizeof *loop_of);
    int rc = 0;
    if (!stamp || !work || !loop_of) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; !rc && i < n; i++) stamp[i] = UINT32_MAX, loop_of[i] = -1;
    for (uint32_t r = 0; !rc && r < g->nreach; r++) {
        uint32_t u = g->rpo[r];
        for (uint32_t j = 0; !rc && j < 2; j++) {
            uint32_t h = g->succ[u][j];
            if (h == UINT32_MAX || !dominates(g, h, u)) continue;
            /* a back edge u -> h: h's loop gets what reaches u without passing h */
            if (loop_of[h] < 0) {
                nat_loop *nv = realloc(L, (nl + 1) * sizeof *nv);
                if (!nv) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                L = nv;
                L[nl] = (nat_loop){h, NULL, 0, 0};
                loop_of[h] = (int)nl++;
            }
            nat_loop *l = &L[loop_of[h]];
            uint32_t id = (uint32_t)loop_of[h], nw = 0;
            for (uint32_t q = 0; q < l->nbody; q++) stamp[l->body[q]] = id;
            uint32_t cap = l->nbody + 16;
            uint32_t *nb = realloc(l->body, cap * sizeof *nb);
            if (!nb) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
            l->body = nb;
            if (stamp[h] != id) stamp[h] = id, l->body[l->nbody++] = h;
            if (stamp[u] != id) stamp[u] = id, l->body[l->nbody++] = u, work[nw++] = u;
            while (nw && !rc) {
                uint32_t v = work[--nw];
                for (uint32_t q = g->pred_at[v]; q < g->pred_at[v + 1]; q++) {
                    uint32_t p = g->preds[q];
                    if (stamp[p] == id || g->order[p] == UINT32_MAX) continue;
                    stamp[p] = id;
                    if (l->nbody == cap) {
                        cap *= 2;
                        nb = realloc(l->body, cap * sizeof *nb);
                        if (!nb) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
                        l->body = nb;
                    }
                    l->body[l->nbody++] = p;
                    work[nw++] = p;
                }
            }
            /* stamps of this loop stay: the next back edge to h adds to the same body (ids are
             * unique per loop, so another loop's stamps never collide) */
        }
    }
    for (uint32_t i = 0; !rc && i < nl; i++) qsort(L[i].body, L[i].nbody, sizeof *L[i].body, by_u32);
    for (uint32_t i = 0; !rc && i < nl; i++)
        for (uint32_t j = 0; j < nl; j++) L[j].depth += in_loop(&L[i], L[j].header);
    if (!rc && nl > 1) {
        /* in order of their headers */
        for (uint32_t i = 1; i < nl; i++)
            for (uint32_t j = i; j > 0 && L[j - 1].header > L[j].header; j--) {
                nat_loop t = L[j];
                L[j] = L[j - 1];
                L[j - 1] = t;
            }
    }
    free(stamp);
    free(work);
    free(loop_of);
    if (rc) {
        loops_free(L, nl);
        return rc;
    }
    *out = L;
    *nout = nl;
    return 0;
}

/* What probe_points collects for one entry. */
typedef struct {
    const mh_ptx_module *m;
    const mh_ptx_func *f;
    cfg g;
    nat_loop *loops;
    uint32_t nloops;
    point *pts;
    size_t n, cap;
    mh_names *names;
    name_index *index;
    char ***strings;  /* names made here (NAME@LINE), kept until the index is gone */
    size_t *nstrings;
    uint32_t *locs, *loc_lines, nlocs; /* .loc directives of the body: offsets and lines */
} probe_ctx;

static int add_point(probe_ctx *c, uint32_t insn, uint8_t where, int end, uint32_t id, uint32_t rank, mh_error *e)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        point *nv = realloc(c->pts, nc * sizeof *nv);
        if (!nv) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        c->pts = nv;
        c->cap = nc;
    }
    const mh_ptx_insn *in = &c->f->code[insn];
    size_t at = where == PT_AFTER ? in->text_end : insn_at(c->f, insn);
    c->pts[c->n++] = (point){insn, where, (uint8_t)(end != 0), id, at, in->line ? in->line : c->f->line,
                             probe_seq(end, rank)};
    return 0;
}

/* A region (id, rank) that ends on the edge u -> v. */
static int end_on_edge(probe_ctx *c, uint32_t u, uint32_t v, uint32_t id, uint32_t rank, mh_error *e)
{
    const mh_ptx_insn *in = &c->f->code[u];
    if (in->op == MH_OP_BRA && v == (uint32_t)in->o[0].reg && v != u + 1)
        return add_point(c, u, in->guard >= 0 ? PT_EDGE : PT_BEFORE, 1, id, rank, e);
    return add_point(c, u, PT_AFTER, 1, id, rank, e);
}

static int begin_on_edge(probe_ctx *c, uint32_t u, uint32_t v, uint32_t id, uint32_t rank, mh_error *e)
{
    const mh_ptx_insn *in = &c->f->code[u];
    if (in->op == MH_OP_BRA && v == (uint32_t)in->o[0].reg && v != u + 1)
        return add_point(c, u, in->guard >= 0 ? PT_EDGE : PT_BEFORE, 0, id, rank, e);
    return add_point(c, u, PT_AFTER, 0, id, rank, e);
}

static int name_id(probe_ctx *c, const char *s, size_t len, uint32_t *id, mh_error *e)
{
    return intern(c->names, c->index, s, len, id, e);
}

/* The id of a made name (kept in c->strings while the index points into it). */
static int made_name_id(probe_ctx *c, const char *fmt, const char *a, uint32_t b, uint32_t *id, mh_error *e)
{
    int len = snprintf(NULL, 0, fmt, a, b);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    char **nv = s ? realloc(*c->strings, (*c->nstrings + 1) * sizeof *nv) : NULL;
    if (!nv) {
        free(s);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    *c->strings = nv;
    snprintf(s, (size_t)len + 1, fmt, a, b);
    nv[(*c->nstrings)++] = s;
    return name_id(c, s, (size_t)len, id, e);
}

/* The source line of instruction i: the last .loc before it in the body, else 0. */
static uint32_t source_line(const probe_ctx *c, uint32_t i)
{
    size_t off = insn_at(c->f, i);
    uint32_t lo = 0, hi = c->nlocs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->locs[mid] < off) lo = mid + 1; else hi = mid;
    }
    return lo ? c->loc_lines[lo - 1] : 0;
}

static int scan_locs(probe_ctx *c, mh_error *e)
{
    const char *t = c->m->text;
    uint32_t cap = 0;
    for (size_t p = c->f->body_open; p + 5 < c->f->body_close; p++) {
        if (memcmp(t + p, ".loc", 4) || !(t[p + 4] == ' ' || t[p + 4] == '\t') || (p && !isspace((unsigned char)t[p - 1])))
            continue;
        /* .loc FILE LINE COL */
        const char *q = t + p + 4;
        char *endp;
        strtoul(q, &endp, 10);
        if (endp == q) continue;
        unsigned long line = strtoul(endp, &endp, 10);
        if (c->nlocs == cap) {
            cap = cap ? cap * 2 : 64;
            uint32_t *a = realloc(c->locs, cap * sizeof *a), *b = a ? realloc(c->loc_lines, cap * sizeof *b) : NULL;
            if (a) c->locs = a;
            if (b) c->loc_lines = b;
            if (!a || !b) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        }
        c->locs[c->nlocs] = (uint32_t)p;
        c->loc_lines[c->nlocs++] = (uint32_t)line;
    }
    return 0;
}

/* The instruction at label `name` of the body (the first after "name:"), or UINT32_MAX. */
static uint32_t label_insn(const probe_ctx *c, const char *name)
{
    const char *t = c->m->text;
    size_t len = strlen(name);
    if (!len) return UINT32_MAX;
    for (size_t p = c->f->body_open; p + len < c->f->body_close; p++) {
        if (memcmp(t + p, name, len) || t[p + len] != ':') continue;
        char before = p > c->f->body_open ? t[p - 1] : '\n';
        if (!(before == '\n' || before == ' ' || before == '\t' || before == '{' || before == ';' || before == '}')) continue;
        for (uint32_t i = 0; i < c->f->ncode; i++)
            if (insn_at(c->f, i) > p) return i;
        return c->f->ncode ? c->f->ncode - 1 : UINT32_MAX;
    }
    return UINT32_MAX;
}

/* Whether instruction i's mnemonic starts with prefix, up to a '.' or its end. */
static int mnemonic_is(const mh_ptx_module *m, const mh_ptx_insn *in, const char *prefix)
{
    if (in->text_off == 0 && in->text_end == 0) return 0;
    const char *p = m->text + in->text_off, *end = m->text + in->text_end;
    if (*p == '@') {
        while (p < end && !isspace((unsigned char)*p)) p++;
        while (p < end && isspace((unsigned char)*p)) p++;
    }
    size_t len = strlen(prefix);
    if ((size_t)(end - p) < len || memcmp(p, prefix, len)) return 0;
    char next = p + len < end ? p[len] : ' ';
    return next == '.' || isspace((unsigned char)next) || next == ';' || prefix[len - 1] == '.';
}

/* Records: a region per iteration of loop l (or per whole loop), named id. */
static int loop_region(probe_ctx *c, const nat_loop *l, uint32_t id, int whole, uint32_t rank, const char *pn,
                       mh_error *e)
{
    const mh_ptx_func *f = c->f;
    int rc = 0;
    if (whole) {
        if (l->header == 0)
            return err_at(e, c->m, f->code[0].line, MH_E_PTX_UNSUPPORTED, "probe \"%.100s\": the loop of %s starts at "
                          "its first instruction, so it has no way in to record its begin on", pn, f->name);
        for (uint32_t q = c->g.pred_at[l->header]; !rc && q < c->g.pred_at[l->header + 1]; q++) {
            uint32_t u = c->g.preds[q];
            if (!in_loop(l, u) && c->g.order[u] != UINT32_MAX) rc = begin_on_edge(c, u, l->header, id, rank, e);
        }
    } else rc = add_point(c, l->header, PT_BEFORE, 0, id, rank, e);
    for (uint32_t b = 0; !rc && b < l->nbody; b++) {
        uint32_t u = l->body[b];
        const mh_ptx_insn *in = &f->code[u];
        for (uint32_t j = 0; !rc && j < 2; j++) {
            uint32_t v = c->g.succ[u][j];
            if (v == UINT32_MAX) continue;
            if (!in_loop(l, v) || (!whole && v == l->header)) rc = end_on_edge(c, u, v, id, rank, e);
        }
        /* a guarded exit inside the loop leaves it on its exit path */
        if (!rc && (in->op == MH_OP_RET || in->op == MH_OP_EXIT) && in->guard >= 0)
            rc = add_point(c, u, PT_EXIT, 1, id, rank, e);
    }
    return rc;
}

/* The points of every probe in entry f, appended to c->pts; *matched[k] set for the probes
 * that matched something here. */
static int probe_points(probe_ctx *c, const mh_probe *probes, uint32_t np, char *matched, int kernel_default,
                        mh_error *e)
{
    const mh_ptx_module *m = c->m;
    const mh_ptx_func *f = c->f;
    int rc = 0;
    for (uint32_t k = 0; !rc && k < np + (kernel_default != 0); k++) {
        static const mh_probe kernel_probe = {MH_PROBE_KERNEL, "kernel", NULL, 0, NULL, NULL, NULL, 0, 0};
        const mh_probe *p = k < np ? &probes[k] : &kernel_probe;
        const char *pn = p->name;
        uint32_t id;
        switch (p->kind) {
        case MH_PROBE_KERNEL:
            rc = name_id(c, pn, strlen(pn), &id, e);
            if (!rc) rc = add_point(c, 0, PT_BEFORE, 0, id, RANK_KERNEL, e);
            for (uint32_t i = 0; !rc && i < f->ncode; i++) {
                const mh_ptx_insn *in = &f->code[i];
                int synthetic = in->text_off == 0 && in->text_end == 0;
                if ((in->op != MH_OP_RET && in->op != MH_OP_EXIT) || (synthetic && c->g.order[i] == UINT32_MAX)) continue;
                rc = add_point(c, i, PT_EXIT, 1, id, RANK_KERNEL, e);
            }
            if (k < np) matched[k] = 1;
            break;
        case MH_PROBE_LOOP:
            for (uint32_t li = 0; !rc && li < c->nloops; li++) {
                const nat_loop *l = &c->loops[li];
                if (p->loop && label_insn(c, p->loop) != l->header) continue;
                uint32_t line = source_line(c, l->header);
                rc = made_name_id(c, "%s@%u", pn, line ? line : f->code[l->header].line, &id, e);
                if (!rc) rc = loop_region(c, l, id, p->per_loop, 10 * l->depth + (p->per_loop ? 2 : 5), pn, e);
                matched[k] = 1;
            }
            if (!rc && p->loop && !matched[k] && label_insn(c, p->loop) != UINT32_MAX)
                rc = err_at(e, m, f->code[label_insn(c, p->loop)].line, MH_E_BAD_ARGUMENT, "probe \"%.100s\": label "
                            "%.100s of %s is not the header of a loop", pn, p->loop, f->name);
            break;
        case MH_PROBE_AROUND: {
            int spin = !strncmp(p->around, "mbarrier.try_wait", 17) || !strncmp(p->around, "mbarrier.test_wait", 18) ||
                       !strcmp(p->around, "mbarrier");
            char *done = c->nloops ? calloc(c->nloops, 1) : NULL;
            if (c->nloops && !done) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            rc = name_id(c, pn, strlen(pn), &id, e);
            for (uint32_t i = 0; !rc && i < f->ncode; i++) {
                const mh_ptx_insn *in = &f->code[i];
                if ((in->mods & MH_MOD_MARKER) || !mnemonic_is(m, in, p->around)) continue;
                matched[k] = 1;
                if (in->op == MH_OP_BRA || in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_TRAP) {
                    rc = err_at(e, m, in->line, MH_E_BAD_ARGUMENT, "probe \"%.100s\": around = \"%.100s\" matches a "
                                "branch or exit of %s: a region cannot go around one", pn, p->around, f->name);
                    break;
                }
                int waits = spin && (mnemonic_is(m, in, "mbarrier.try_wait") || mnemonic_is(m, in, "mbarrier.test_wait"));
                uint32_t best = UINT32_MAX;
                for (uint32_t li = 0; waits && li < c->nloops; li++)
                    if (in_loop(&c->loops[li], i) && (best == UINT32_MAX || c->loops[li].depth > c->loops[best].depth))
                        best = li;
                if (best != UINT32_MAX) { /* the wait is polled: the region is the loop */
                    if (!done[best]) rc = loop_region(c, &c->loops[best], id, 1, 10 * c->loops[best].depth + 2, pn, e);
                    done[best] = 1;
                    continue;
                }
                rc = add_point(c, i, PT_BEFORE, 0, id, RANK_AROUND, e);
                if (!rc) rc = add_point(c, i, PT_AFTER, 1, id, RANK_AROUND, e);
            }
            free(done);
            break;
        }
        case MH_PROBE_RANGE: {
            uint32_t a = UINT32_MAX, b = UINT32_MAX;
            if (p->from) a = label_insn(c, p->from);
            else
                for (uint32_t i = 0; i < f->ncode && a == UINT32_MAX; i++)
                    if (f->code[i].line >= p->from_line && !(f->code[i].text_off == 0 && f->code[i].text_end == 0)) a = i;
            if (p->to) b = label_insn(c, p->to);
            else
                for (uint32_t i = 0; i < f->ncode && b == UINT32_MAX; i++)
                    if (f->code[i].line > p->to_line || (f->code[i].text_off == 0 && f->code[i].text_end == 0)) b = i;
            if (a == UINT32_MAX || b == UINT32_MAX) break; /* not in this entry */
            if (!p->from && (f->code[a].line > p->to_line || (f->code[a].text_off == 0 && f->code[a].text_end == 0)))
                break; /* nothing of the lines is in this entry */
            matched[k] = 1;
            char fa[120], tb[120];
            if (p->from) snprintf(fa, sizeof fa, "%.100s", p->from); else snprintf(fa, sizeof fa, "line %u", p->from_line);
            if (p->to) snprintf(tb, sizeof tb, "%.100s", p->to); else snprintf(tb, sizeof tb, "line %u", p->to_line);
            if (a == b || !dominates(&c->g, a, b)) {
                rc = err_at(e, m, f->code[b].line ? f->code[b].line : f->line, MH_E_BAD_ARGUMENT,
                            "probe \"%.100s\": from %s does not dominate its to %s in %s: some path reaches the to "
                            "without passing the from", pn, fa, tb, f->name);
                break;
            }
            rc = name_id(c, pn, strlen(pn), &id, e);
            if (!rc) rc = add_point(c, a, PT_BEFORE, 0, id, RANK_RANGE, e);
            if (!rc) rc = add_point(c, b, PT_BEFORE, 1, id, RANK_RANGE, e);
            break;
        }
        }
    }
    return rc;
}

/* The text of branch i's target label (the last word before its ';'). */
static void branch_target(const mh_ptx_module *m, const mh_ptx_insn *in, const char **s, int *len)
{
    const char *b = m->text + in->text_off, *p = m->text + in->text_end;
    while (p > b && (p[-1] == ';' || isspace((unsigned char)p[-1]))) p--;
    const char *q = p;
    while (q > b && !isspace((unsigned char)q[-1]) && q[-1] != ',') q--;
    *s = q;
    *len = (int)(p - q);
}

/* The taken edges of guarded branches with points: before the branch, the same guard sends
 * control to a trampoline after the exit block, which records and branches to the target. */
static void trampolines(const emit_ctx *c, const point *pts, size_t n, size_t *label)
{
    for (size_t i = 0; i < n;) {
        if (pts[i].where != PT_EDGE) { i++; continue; }
        size_t j = i;
        while (j < n && pts[j].insn == pts[i].insn && pts[j].where == PT_EDGE) j++;
        const mh_ptx_insn *in = &c->f->code[pts[i].insn];
        const char *t;
        int tl;
        branch_target(c->m, in, &t, &tl);
        add_edit(c->E, in->text_off, P_SYNC_BEFORE, "@%s%s bra \t$__mgpu_edge%zu;\n\t", in->guard_neg ? "!" : "",
                 c->m->reg_name[in->guard], *label);
        size_t at = c->f->body_close;
        add_edit(c->E, at, P_EXIT, "$__mgpu_edge%zu:\t// @mgpu: the edge to %.*s\n", *label, tl, t);
        for (size_t k = i; k < j; k += RUN_MAX) {
            uint32_t count = (uint32_t)(j - k < RUN_MAX ? j - k : RUN_MAX);
            emit_check(c, at, P_EXIT, count);
            for (uint32_t q = 0; q < count; q++) {
                point p = pts[k + q];
                p.at = at;
                emit_record(c, &p, q, count, P_EXIT);
            }
        }
        add_edit(c->E, at, P_EXIT, "\tbra \t%.*s;\n", tl, t);
        (*label)++;
        i = j;
    }
}

int mh_instrument(const mh_ptx_module *m, mh_scope scope, mh_instrumented *out, mh_error *e)
{
    mh_instrument_opts o = {.scope = scope};
    return mh_instrument_with(m, &o, out, e);
}

int mh_instrument_with(const mh_ptx_module *m, const mh_instrument_opts *opts, mh_instrumented *out, mh_error *e)
{
    memset(out, 0, sizeof *out);
    mh_names_init(&out->names);
    mh_error_clear(e);
    mh_scope scope = opts->scope;
    if (scope != MH_SCOPE_WARP && scope != MH_SCOPE_WARPGROUP)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "scope must be warp or warpgroup");
    unsigned lg = scope == MH_SCOPE_WARP ? 5 : 7;
    out->aligned = opts->aligned != 0;
    out->trace_shift = out->aligned ? MH_TRACE_SHIFT : 0;
    const mh_ptx_marker *mk = m->markers;
    size_t nmk = m->nmarkers;
    edits E = {0};
    name_index index = {0};
    /* the added registers, labels and parameters are named __mgpu*: a module
     * that uses such names itself could collide, so it is refused */
    for (uint32_t i = 0; i < m->nregs; i++)
        if (!strncmp(m->reg_name[i], "%__mgpu", 7) || !strncmp(m->reg_name[i], "__mgpu", 6))
            return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: register %s uses the prefix __mgpu, which the instrumentation "
                           "reserves", m->path, m->reg_name[i]);
    for (uint32_t fi = 0; fi < m->nfuncs; fi++)
        for (uint32_t k = 0; k < m->funcs[fi].nparams; k++)
            if (!strncmp(m->funcs[fi].params[k].name, "__mgpu", 6))
                return mh_fail(e, MH_E_PTX_UNSUPPORTED, "%s: parameter %s of %s uses the prefix __mgpu, which the "
                               "instrumentation reserves (is this module instrumented already?)", m->path,
                               m->funcs[fi].params[k].name, m->funcs[fi].name);
    int rc = check_grammar(m, e);
    if (rc) return rc;

    /* each marker belongs to a function body: the markers and the bodies (which
     * do not overlap) in text order, side by side; a function's markers are a
     * run of the list, from first[fi], count[fi] long */
    size_t nf = m->nfuncs ? m->nfuncs : 1;
    int *owner = calloc(nmk ? nmk : 1, sizeof *owner);
    body *bodies = malloc(nf * sizeof *bodies);
    uint32_t nbodies = 0;
    size_t *first = malloc(nf * sizeof *first), *count = calloc(nf, sizeof *count);
    char *marked = calloc(nf, 1), *traced = calloc(nf, 1);
    point *pts = NULL;
    size_t npts = 0, cap = 0;
    if (!owner || !bodies || !first || !count || !marked || !traced) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t fi = 0; !rc && fi < m->nfuncs; fi++) {
        first[fi] = nmk;
        const mh_ptx_func *f = &m->funcs[fi];
        if (f->defined) bodies[nbodies++] = (body){f->body_open, f->body_close, fi};
    }
    if (!rc && nmk && nbodies > 1) qsort(bodies, nbodies, sizeof *bodies, by_open); /* (parsed in text order) */
    for (size_t i = 0, b = 0; i < nmk && !rc; i++) {
        while (b < nbodies && bodies[b].close <= mk[i].off) b++;
        owner[i] = b < nbodies && bodies[b].open <= mk[i].off ? (int)bodies[b].func : -1;
        if (owner[i] < 0) {
            rc = err_at(e, m, mk[i].line, MH_E_PTX_SYNTAX, "marker \"%.*s\" outside any function body",
                        MK_NAME(m, &mk[i]));
            break;
        }
        marked[owner[i]] = traced[owner[i]] = 1;
        if (!count[owner[i]]++) first[owner[i]] = i;
    }
    /* traced: records events itself or calls (transitively) a function that does */
    int func_records = 0;
    for (uint32_t fi = 0; !rc && fi < m->nfuncs; fi++) func_records |= marked[fi] && !m->funcs[fi].is_entry;
    for (int changed = func_records; changed && !rc;) {
        changed = 0;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
            const mh_ptx_func *f = &m->funcs[fi];
            for (uint32_t i = 0; !traced[fi] && f->defined && i < f->ncode; i++)
                if (calls_traced(&f->code[i], traced)) traced[fi] = 1, changed = 1;
        }
    }
    if (!rc && func_records) {
        /* the module variables the .funcs read, before the first function */
        uint32_t first_line = UINT32_MAX;
        for (uint32_t fi = 0; fi < m->nfuncs; fi++)
            if (m->funcs[fi].line < first_line) first_line = m->funcs[fi].line;
        size_t at = 0;
        for (uint32_t l = 1; l < first_line && m->text[at]; at++) l += m->text[at] == '\n';
        add_edit(&E, at, P_SYNC_AFTER, GLOBALS);
    }

    /* the probes' points of each entry (before the markers' names: their ids come first) */
    point **fpts = calloc(nf, sizeof *fpts);
    size_t *fnpts = calloc(nf, sizeof *fnpts);
    char **made = NULL;
    size_t nmade = 0;
    char *matched = calloc(opts->nprobes + 1, 1);
    if (!rc && (!fpts || !fnpts || !matched)) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    for (uint32_t fi = 0; !rc && (opts->nprobes || opts->kernel_probe) && fi < m->nfuncs; fi++) {
        const mh_ptx_func *f = &m->funcs[fi];
        if (!f->is_entry || !f->defined) continue;
        probe_ctx c = {.m = m, .f = f, .names = &out->names, .index = &index, .strings = &made, .nstrings = &nmade};
        rc = cfg_build(&c.g, m, f, e);
        if (rc) break;
        rc = find_loops(&c.g, &c.loops, &c.nloops, e);
        if (!rc) rc = scan_locs(&c, e);
        if (!rc) rc = probe_points(&c, opts->probes, opts->nprobes, matched, 0, e);
        if (!rc && !c.n && opts->kernel_probe && !traced[fi]) rc = probe_points(&c, NULL, 0, matched, 1, e);
        fpts[fi] = c.pts;
        fnpts[fi] = c.n;
        if (c.n) traced[fi] = 1;
        cfg_free(&c.g);
        loops_free(c.loops, c.nloops);
        free(c.locs);
        free(c.loc_lines);
    }
    for (uint32_t k = 0; !rc && k < opts->nprobes; k++) {
        const mh_probe *p = &opts->probes[k];
        if (matched[k]) continue;
        char what[260];
        if (p->kind == MH_PROBE_AROUND) snprintf(what, sizeof what, "around = \"%.200s\"", p->around);
        else if (p->kind == MH_PROBE_LOOP) snprintf(what, sizeof what, "loop%s%.200s", p->loop ? " = " : " (no natural loop)", p->loop ? p->loop : "");
        else if (p->from || p->to) snprintf(what, sizeof what, "from %.100s to %.100s (labels of one kernel)", p->from ? p->from : "(a line)", p->to ? p->to : "(a line)");
        else snprintf(what, sizeof what, "from line %u to line %u", p->from_line, p->to_line);
        rc = mh_fail(e, MH_E_BAD_ARGUMENT, "%s: probe \"%.100s\": %s matches nothing in any kernel", m->path, p->name, what);
    }

    size_t label = 0;
    for (uint32_t fi = 0; fi < m->nfuncs && !rc; fi++) {
        const mh_ptx_func *f = &m->funcs[fi];
        if (!traced[fi] || !f->defined || (!f->is_entry && !marked[fi])) continue;
        size_t fn = count[fi];
        const mh_ptx_marker *fmk = fn ? mk + first[fi] : NULL;
        uint32_t *ids = malloc((fn ? fn : 1) * sizeof *ids);
        if (!ids) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
        for (size_t i = 0; i < fn && !rc; i++)
            rc = intern(&out->names, &index, m->text + fmk[i].name_off, fmk[i].name_len, &ids[i], e);
        if (!rc) rc = mh_names_finish(&out->names, e);
        npts = 0;
        if (!rc && fnpts[fi] > cap) {
            point *nv = realloc(pts, fnpts[fi] * sizeof *nv);
            if (!nv) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            else pts = nv, cap = fnpts[fi];
        }
        if (!rc && fnpts[fi]) memcpy(pts, fpts[fi], fnpts[fi] * sizeof *pts);
        npts = fnpts[fi];
        out->probe_points += (uint32_t)npts;
        if (!rc) rc = marker_points(m, f, fmk, fn, ids, &pts, &npts, &cap, e);
        free(ids);
        if (!rc && npts > 1) qsort(pts, npts, sizeof *pts, by_place);
        if (!rc) rc = check_flow(m, f, pts, npts, &out->names, !f->is_entry, e);
        if (rc) break;
        emit_ctx c = {&E, m, f, &out->names, out->aligned, f->is_entry};
        if (f->is_entry) {
            /* parameters */
            if (f->params_close) {
                size_t at = f->params_close;
                while (f->nparams && at > 0 && isspace((unsigned char)m->text[at - 1])) at--; /* after the last parameter */
                add_edit(&E, at, P_SYNC_AFTER, f->nparams ? ",\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib"
                                            : "\n\t.param .u64 __mgpu_trace,\n\t.param .u32 __mgpu_entries,\n\t.param .u64 __mgpu_calib\n");
            } else {
                rc = err_at(e, m, f->line, MH_E_PTX_UNSUPPORTED, "%s has no parameter list to extend", f->name);
                break;
            }
            add_edit(&E, f->body_open, P_SYNC_AFTER, PROLOGUE_HEAD);
            add_edit(&E, f->body_open, P_SYNC_AFTER, TRACE_SLOT, (unsigned)scope - 1, lg, (unsigned)scope - 1, lg);
            add_edit(&E, f->body_open, P_SYNC_AFTER, PROLOGUE_TAIL);
            if (func_records) add_edit(&E, f->body_open, P_SYNC_AFTER, PUBLISH);
        } else {
            add_edit(&E, f->body_open, P_SYNC_AFTER, FUNC_HEAD);
            add_edit(&E, f->body_open, P_SYNC_AFTER, TRACE_SLOT, (unsigned)scope - 1, lg, (unsigned)scope - 1, lg);
            add_edit(&E, f->body_open, P_SYNC_AFTER, FUNC_TAIL);
        }
        /* the records, in runs (the points on guarded exits' paths go with those exits) */
        size_t nrun = 0;
        point *run_pts = malloc((npts ? npts : 1) * sizeof *run_pts);
        if (!run_pts) { rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory"); break; }
        nrun = 0;
        for (size_t i = 0; i < npts; i++)
            if (!(pts[i].where == PT_EXIT && f->code[pts[i].insn].guard >= 0) && pts[i].where != PT_EDGE)
                run_pts[nrun++] = pts[i];
        rc = emit_runs(&c, run_pts, nrun, e);
        free(run_pts);
        out->markers += (uint32_t)fn;
        /* calls to functions that record events: the count through the header */
        for (uint32_t i = 0; !rc && func_records && i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (!calls_traced(in, traced)) continue;
            add_edit(&E, in->text_off, P_SYNC_BEFORE, SYNC_BEFORE);
            add_edit(&E, in->text_end, P_SYNC_AFTER, SYNC_AFTER);
        }
        /* the header (an entry: in its exit block) or the count (a .func) at every exit */
        int ends_with_exit = 0;
        size_t k = 0, exit_label = label++;
        for (uint32_t i = 0; !rc && i < f->ncode; i++) {
            const mh_ptx_insn *in = &f->code[i];
            if (in->text_off == 0 && in->text_end == 0) continue; /* the synthetic final ret */
            ends_with_exit = in->op == MH_OP_RET || in->op == MH_OP_EXIT || in->op == MH_OP_BRA || in->op == MH_OP_TRAP;
            if (in->op != MH_OP_RET && in->op != MH_OP_EXIT) continue;
            while (k < npts && pts[k].insn < i) k++;
            size_t x = k;
            while (x < npts && pts[x].insn == i && pts[x].where != PT_EXIT) x++;
            size_t xe = x;
            while (xe < npts && pts[xe].insn == i) xe++;
            exit_code(&c, i, pts + x, in->guard >= 0 ? xe - x : 0, exit_label, &label);
        }
        if (!rc && f->is_entry) {
            exit_block(&c, exit_label, (unsigned)scope);
            trampolines(&c, pts, npts, &label);
        }
        else if (!rc && !ends_with_exit) add_edit(&E, f->body_close, P_EXIT, FUNC_EXIT);
        if (rc) break;
        if (!f->is_entry) {
            out->nfuncs++;
            continue;
        }
        char **nk = realloc(out->kernels, (out->nkernels + 1) * sizeof *nk);
        if (!nk || !(nk[out->nkernels] = strdup(f->name))) {
            if (nk) out->kernels = nk;
            rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
            break;
        }
        out->kernels = nk;
        out->nkernels++;
    }
    free(pts);
    for (uint32_t fi = 0; fpts && fi < m->nfuncs; fi++) free(fpts[fi]);
    free(fpts);
    free(fnpts);
    free(matched);
    free(owner);
    free(bodies);
    free(first);
    free(count);
    free(marked);
    free(traced);
    free(index.v);
    for (size_t i = 0; i < nmade; i++) free(made[i]);
    free(made);
    if (!rc && nmk && !out->nkernels)
        rc = mh_fail(e, MH_E_PTX_SYNTAX, "%s: markers found but no kernel to instrument", m->path);
    if (!rc && E.oom) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    if (!rc) rc = mh_names_finish(&out->names, e);

    if (!rc) {
        /* splice */
        size_t len = strlen(m->text), total = len;
        if (E.n > 1) qsort(E.v, E.n, sizeof *E.v, by_offset);
        for (size_t i = 0; i < E.n; i++) total += E.v[i].len;
        out->text = malloc(total + 1);
        if (!out->text) rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        else {
            size_t at = 0, o = 0;
            for (size_t i = 0; i < E.n; i++) {
                memcpy(out->text + o, m->text + at, E.v[i].at - at);
                o += E.v[i].at - at;
                at = E.v[i].at;
                memcpy(out->text + o, E.v[i].text, E.v[i].len);
                o += E.v[i].len;
            }
            memcpy(out->text + o, m->text + at, len - at);
            o += len - at;
            out->text[o] = 0;
            out->len = o;
            rc = record_insertions(m->text, &E, out, e);
        }
    }
    for (size_t i = 0; i < E.n; i++) free(E.v[i].text);
    free(E.v);
    if (rc) mh_instrumented_free(out);
    return rc;
}

void mh_instrumented_free(mh_instrumented *r)
{
    free(r->text);
    free(r->inserted);
    mh_names_free(&r->names);
    for (uint32_t i = 0; i < r->nkernels; i++) free(r->kernels[i]);
    free(r->kernels);
    memset(r, 0, sizeof *r);
}

int mh_instrumented_has(const mh_instrumented *r, const char *kernel)
{
    for (uint32_t i = 0; i < r->nkernels; i++)
        if (!strcmp(r->kernels[i], kernel)) return 1;
    return 0;
}

uint64_t mh_instrumented_entries(const mh_instrumented *r, uint64_t entries)
{
    return r->aligned && (entries & 1) ? entries + 1 : entries;
}
